//! Untrusted text (a chat user's values, a server's answers) shown on a
//! terminal or to a line-oriented reader. A value may hold line breaks to
//! forge a line of output, terminal escapes (`ESC ]`, which can retitle a
//! window or hide text), a carriage return that writes over a line, or
//! bidirectional controls that reorder what is seen. Every printer of such
//! text goes through here.

/// Whether `c` must not reach a terminal as itself: every control
/// character (C0 but the tab, DEL, C1 with U+0085) and the characters that
/// break or reorder lines (U+2028, U+2029, the bidirectional controls).
pub fn is_unsafe(c: char) -> bool {
    (c.is_control() && c != '\t')
        || matches!(c, '\u{2028}' | '\u{2029}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn push_escaped(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        c => out.push_str(&c.escape_unicode().to_string()),
    }
}

/// The text on one line: line breaks, tabs and every unsafe character
/// written as escapes (`\n`, `\u{1b}`), for a table cell or a header.
pub fn one_line(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\t' => out.push_str("\\t"),
            c if is_unsafe(c) => push_escaped(&mut out, c),
            c => out.push(c),
        }
    }
    out
}

/// How a further line of a multi-line text is set off: a new item (a
/// reply) always begins at the start of a line, its further lines never do.
pub const CONTINUATION: &str = "  ";

/// A text of several lines, readable as such and unmistakable: each line
/// break is kept and the next line indented by [`CONTINUATION`] (so no
/// value can begin a line of its own), and every other unsafe character is
/// escaped.
pub fn lines(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' => {
                out.push('\n');
                out.push_str(CONTINUATION);
            }
            c if is_unsafe(c) => push_escaped(&mut out, c),
            c => out.push(c),
        }
    }
    out
}

/// A count with its thousands grouped, as the messages write numbers:
/// `20000` is `20,000`.
pub fn count(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts_group_thousands() {
        for (n, text) in [(0, "0"), (999, "999"), (1000, "1,000"), (20000, "20,000"), (1234567, "1,234,567")] {
            assert_eq!(count(n), text);
        }
    }

    use super::*;

    #[test]
    fn no_value_can_forge_a_line_or_reach_the_terminal() {
        assert_eq!(one_line("a\nb\tc\u{1b}]0;x\u{7}"), "a\\nb\\tc\\u{1b}]0;x\\u{7}");
        let forged = "you said hi\nWON\r\u{1b}]0;title\u{7}\u{85}x\u{202e}y";
        assert_eq!(lines(forged), "you said hi\n  WON\\r\\u{1b}]0;title\\u{7}\\u{85}x\\u{202e}y");
        assert_eq!(lines("plain text, tabs\tkept"), "plain text, tabs\tkept");
        for shown in [one_line(forged), lines(forged)] {
            assert!(!shown.chars().any(|c| is_unsafe(c) && c != '\n'), "{shown:?}");
            assert!(shown.split('\n').skip(1).all(|l| l.starts_with(CONTINUATION)));
        }
    }
}
