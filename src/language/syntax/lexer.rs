//! The one reader of the text outside the grammar: spanned tokens.
//!
//! `grammar/blk.pest` defines the language and pest parses it; everything
//! else that needs to know what the text says at a place — the formatter's
//! comments and braces, the mistake recognisers, the syntax-error report,
//! the language server's cursor context, and the structure pre-scan that
//! runs before pest — reads this lexer's tokens (or, for the pre-scan, its
//! scanning primitives), so they cannot disagree about where a string, a
//! comment or an unquoted reference begins and ends.
//!
//! The lexer is lossless (the tokens cover every byte, in order) and
//! tolerant: an unclosed string or reference is still a token, marked
//! `closed: false`, and an unbalanced brace is just a `{` or `}` token.
//! It decides only the shape of the text, never whether it is valid: that
//! is the grammar's job.
//!
//! Its reading of strings, comments and references is the grammar's
//! (`string`, `WHITESPACE`'s `#…`, `reference`): a string runs to the next
//! unescaped `"` over any line; a comment from `#` to the line's end; a
//! reference from a word (not starting with a digit) directly followed by
//! `[` to its `]` (`api_x[response.a]`, or a loop element's `item[name]`), with at most one nested `[…]`, and neither a line break nor a
//! `"` inside — so a `#` inside a reference is a character, not a comment.
//! The property test in `tests/properties.rs` holds the two to that.

use crate::base::source::Span;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Spaces, tabs and carriage returns.
    Blank,
    /// One `\n`.
    Newline,
    /// `#` up to (not including) the end of its line.
    Comment,
    /// A run of letters, digits and `_` that does not start with a digit
    /// (a keyword, a name, a method, part of a key).
    Word,
    /// A run that starts with a digit: digits, letters, `_`, and `.` when a
    /// digit follows it (`12`, `1.5`, `3rd`).
    Number,
    /// A string literal with its quotes; `closed` is false when the file
    /// ends first. Its parts (text, `{…}`, `<SLOT>`) are read by
    /// `syntax::template`.
    Str { closed: bool },
    /// An unquoted response reference `api_x[response.a]`, or a loop
    /// element's path `item[name]`; `closed` is false
    /// when a line break, a `"`, a misplaced `[` or the file's end comes
    /// before its `]`.
    Reference { closed: bool },
    /// One ASCII punctuation character: `{ } [ ] = , : ; ( ) < > ! - .` …
    Punct,
    /// One character of anything else (a control character, a smart quote).
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    pub kind: Kind,
    pub span: Span,
}

impl Token {
    pub fn start(&self) -> usize {
        self.span.start as usize
    }

    pub fn end(&self) -> usize {
        self.span.end as usize
    }

    pub fn text<'t>(&self, source: &'t str) -> &'t str {
        &source[self.span.range()]
    }

    /// Whether this is the punctuation character `c`.
    pub fn is(&self, source: &str, c: u8) -> bool {
        self.kind == Kind::Punct && source.as_bytes()[self.start()] == c
    }

    /// Blanks, line breaks and comments: what the grammar skips.
    pub fn is_trivia(&self) -> bool {
        matches!(self.kind, Kind::Blank | Kind::Newline | Kind::Comment)
    }
}

/// The tokens of `text` from `from` (which must be a token boundary: the
/// start of the file, of an item, or of any token this lexer gave).
#[derive(Debug, Clone)]
pub struct Lexer<'t> {
    text: &'t str,
    pos: usize,
}

impl<'t> Lexer<'t> {
    pub fn new(text: &'t str) -> Lexer<'t> {
        Lexer { text, pos: 0 }
    }

    pub fn from(text: &'t str, from: usize) -> Lexer<'t> {
        Lexer { text, pos: from.min(text.len()) }
    }

    /// The tokens that are not blanks, line breaks or comments.
    pub fn significant(self) -> impl Iterator<Item = Token> + 't {
        self.filter(|t| !t.is_trivia())
    }
}

pub(crate) fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

impl Iterator for Lexer<'_> {
    type Item = Token;

    fn next(&mut self) -> Option<Token> {
        let bytes = self.text.as_bytes();
        let start = self.pos;
        let &b = bytes.get(start)?;
        let (kind, end) = match b {
            b' ' | b'\t' | b'\r' => {
                let n = bytes[start..].iter().take_while(|b| matches!(b, b' ' | b'\t' | b'\r')).count();
                (Kind::Blank, start + n)
            }
            b'\n' => (Kind::Newline, start + 1),
            b'#' => (Kind::Comment, comment_end(bytes, start)),
            b'"' => {
                let close = string_close(bytes, start);
                match close {
                    Some(c) => (Kind::Str { closed: true }, c + 1),
                    None => (Kind::Str { closed: false }, bytes.len()),
                }
            }
            b'0'..=b'9' => (Kind::Number, number_end(bytes, start)),
            _ if is_word_byte(b) => {
                let end = word_end(bytes, start);
                if bytes.get(end) == Some(&b'[') && !b.is_ascii_digit() {
                    let (end, closed) = reference_end(bytes, end);
                    (Kind::Reference { closed }, end)
                } else {
                    (Kind::Word, end)
                }
            }
            _ if b.is_ascii() && !b.is_ascii_control() => (Kind::Punct, start + 1),
            _ => {
                let len = self.text[start..].chars().next().map_or(1, char::len_utf8);
                (Kind::Other, start + len)
            }
        };
        self.pos = end;
        Some(Token { kind, span: Span::new(start, end) })
    }
}

// ── scanning primitives (the lexer's, and the structure pre-scan's) ─────

fn word_end(bytes: &[u8], start: usize) -> usize {
    start + bytes[start..].iter().take_while(|&&b| is_word_byte(b)).count()
}

fn number_end(bytes: &[u8], start: usize) -> usize {
    let mut end = word_end(bytes, start);
    while bytes.get(end) == Some(&b'.') && bytes.get(end + 1).is_some_and(u8::is_ascii_digit) {
        end = word_end(bytes, end + 1);
    }
    // `0api_x[response]` is the grammar's number `0` and then a reference,
    // as in a list whose commas are left out: before a `[`, the number ends
    // where the grammar's does, and what follows is a token of its own.
    if bytes.get(end) == Some(&b'[') {
        return grammar_number_end(bytes, start).min(end);
    }
    end
}

/// The end of the grammar's `number` at `start` (a digit): `0` or digits
/// without a leading zero, a fraction, an exponent.
fn grammar_number_end(bytes: &[u8], start: usize) -> usize {
    let digits = |from: usize| from + bytes[from..].iter().take_while(|b| b.is_ascii_digit()).count();
    let mut end = if bytes[start] == b'0' { start + 1 } else { digits(start) };
    if bytes.get(end) == Some(&b'.') && bytes.get(end + 1).is_some_and(u8::is_ascii_digit) {
        end = digits(end + 1);
    }
    if matches!(bytes.get(end), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(bytes.get(end + 1), Some(b'+' | b'-')));
        if bytes.get(end + 1 + sign).is_some_and(u8::is_ascii_digit) {
            end = digits(end + 1 + sign);
        }
    }
    end
}

/// At a `#`: the end of the comment (its line's `\n`, not included).
pub(crate) fn comment_end(bytes: &[u8], start: usize) -> usize {
    memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |j| start + j)
}

/// At a `"`: the offset of the closing quote, if the file has one.
pub(crate) fn string_close(bytes: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    loop {
        let j = memchr::memchr2(b'"', b'\\', &bytes[i.min(bytes.len())..])? + i;
        if bytes[j] == b'"' {
            return Some(j);
        }
        i = j + 2;
    }
}

/// At the `[` that opens a reference: where the reference ends, and
/// whether it is closed (the grammar's `reference` and `ref_index`).
pub(crate) fn reference_end(bytes: &[u8], open: usize) -> (usize, bool) {
    let mut i = open + 1;
    let mut nested = false;
    while let Some(&b) = bytes.get(i) {
        match b {
            b']' if nested => nested = false,
            b']' => return (i + 1, true),
            b'[' if !nested => nested = true,
            b'[' | b'\n' | b'"' => return (i, false),
            _ => {}
        }
        i += 1;
    }
    (i, false)
}

/// Whether the `[` at `i` opens a reference (`api_x[…]`, or a loop
/// element's `item[…]`): a run of word characters not starting with a digit
/// is just before it (as the lexer's word before a `[`).
pub(crate) fn opens_reference(bytes: &[u8], i: usize) -> bool {
    let mut name_start = bytes[..i].iter().rposition(|b| !is_word_byte(*b)).map_or(0, |p| p + 1);
    // A run that starts with a digit is the grammar's numbers first
    // (`0api_x[…]`, `1.5x[…]`): the name starts after them, if at all.
    while name_start < i && bytes[name_start].is_ascii_digit() {
        name_start = grammar_number_end(bytes, name_start);
    }
    name_start < i
}

// ── the text pest reads ──────────────────────────────────────────────────

/// A stretch of the file with its trivia squeezed out, for pest: each run
/// of blanks, line breaks and comments becomes nothing, or one space where
/// the tokens on either side could otherwise read as one (`a b`, `= =`,
/// `x -1`). The grammar reads any run of trivia the same, so the squeezed
/// text parses to the same pairs as the original, with less for pest's
/// whitespace rule to step over (docs/architecture.md). Offsets in it map
/// back to the file's with [`Squeezed::start`] and [`Squeezed::end`].
#[derive(Debug, Default)]
pub struct Squeezed {
    pub text: String,
    /// The file's offset of each byte of `text`, and of its end.
    file: Vec<u32>,
}

impl Squeezed {
    /// Squeezes `text[start..end]` (`start` a token boundary; the file is
    /// at most 4 GiB, as every span is).
    pub fn fill(&mut self, text: &str, start: usize, end: usize) {
        self.text.clear();
        self.file.clear();
        let bytes = &text.as_bytes()[..end];
        // `from` starts the stretch of tokens with nothing between them
        // being read; strings and references are stepped over whole, since
        // blanks and `#` inside them are theirs.
        let (mut from, mut i) = (start, start);
        while i < end {
            match bytes[i] {
                b' ' | b'\t' | b'\r' | b'\n' | b'#' => {
                    let next = skip_trivia(text, i).min(end);
                    self.copy(text, from, i);
                    if i > from && next < end && !apart(bytes[i - 1], bytes[next]) {
                        self.text.push(' ');
                        self.file.push(i as u32);
                    }
                    (from, i) = (next, next);
                }
                b'"' => i = string_close(bytes, i).map_or(end, |c| c + 1),
                b'[' if opens_reference(bytes, i) => i = reference_end(bytes, i).0,
                _ => i += 1,
            }
        }
        self.copy(text, from, end);
        self.file.push(end as u32);
    }

    fn copy(&mut self, text: &str, from: usize, to: usize) {
        self.text.push_str(&text[from..to]);
        self.file.extend(from as u32..to as u32);
    }

    /// The file's offset of the squeezed text's offset `at`, where a token
    /// (or a pair) starts.
    pub fn start(&self, at: usize) -> usize {
        self.file[at] as usize
    }

    /// The file's offset of the squeezed text's offset `at`, where a token
    /// (or a pair) ends: just after its last byte, not after the trivia
    /// that followed it.
    pub fn end(&self, at: usize) -> usize {
        // A blank before `at` is one put between two tokens (no token ends
        // with one): the pair ends at the token before it.
        let last = match at.checked_sub(1) {
            Some(last) if self.text.as_bytes()[last] == b' ' => last.checked_sub(1),
            last => last,
        };
        last.map_or(self.start(0), |last| self.file[last] as usize + 1)
    }
}

/// Whether two tokens, the first ending in `a` and the second starting
/// with `b`, read as the same two tokens when nothing is between them.
/// Braces, commas, parentheses and quotes end every token on their side;
/// `=` does too, unless the other side is a comparison's `=`, `!`, `<` or
/// `>` (`= =` is not `==`). Everything else keeps its space: a name and a
/// `[` would read as a reference, a `-` and a digit as a number.
fn apart(a: u8, b: u8) -> bool {
    let ends = |c: u8| matches!(c, b'{' | b'}' | b',' | b'"' | b'(' | b')');
    let compares = |c: u8| matches!(c, b'=' | b'!' | b'<' | b'>');
    ends(a) || ends(b) || (a == b'=' && !compares(b)) || (b == b'=' && !compares(a))
}

// ── questions asked of the tokens ────────────────────────────────────────

/// The first offset at or after `pos` that is not trivia (blanks, line
/// breaks, comments): what the lexer's trivia tokens cover, scanned without
/// making them (the parser calls it between items and nodes).
pub fn skip_trivia(text: &str, mut pos: usize) -> usize {
    let bytes = text.as_bytes();
    while let Some(&b) = bytes.get(pos) {
        match b {
            b' ' | b'\t' | b'\r' | b'\n' => pos += 1,
            b'#' => pos = comment_end(bytes, pos),
            _ => break,
        }
    }
    pos
}

/// The `{`s still open at `at` (outside strings, comments and references),
/// outermost first, lexing from `from`.
pub fn open_braces(text: &str, from: usize, at: usize) -> Vec<usize> {
    still_open(text, from, at, b'{', b'}')
}

/// The `open` punctuation still open at `at` (each closed by a later
/// `close`), outermost first, lexing from `from`: `{`/`}` or `[`/`]`.
pub fn still_open(text: &str, from: usize, at: usize, open: u8, close: u8) -> Vec<usize> {
    let mut stack = Vec::new();
    for t in Lexer::from(text, from) {
        if t.start() >= at {
            break;
        }
        if t.is(text, open) {
            stack.push(t.start());
        } else if t.is(text, close) {
            stack.pop();
        }
    }
    stack
}

/// The token that holds `offset` (the one it is inside or at the end of,
/// preferring one that is not trivia), lexing from `from`.
pub fn token_at(text: &str, from: usize, offset: usize) -> Option<Token> {
    let mut last = None;
    for t in Lexer::from(text, from) {
        if t.start() > offset {
            break;
        }
        if t.end() > offset || (t.end() == offset && !t.is_trivia()) {
            last = Some(t);
            if t.end() > offset {
                break;
            }
        }
    }
    last
}

/// The first token at or after `from` that is the punctuation `c`.
pub fn next_punct(text: &str, from: usize, c: u8) -> Option<usize> {
    Lexer::from(text, from).find(|t| t.is(text, c)).map(|t| t.start())
}

/// Walks the file once before pest sees it, outside strings, comments and
/// references: finds the first `{` or `[` nested deeper than `max_depth`
/// (so nothing recursive can overflow the stack), and the offsets just after
/// each `}` that closes a top-level item (where the file may be split for
/// threads). Unbalanced files give no split points. It jumps between the
/// bytes that matter with memchr (it runs on every file `check` reads), with
/// the lexer's primitives deciding what a string, comment or reference is.
pub fn structure(text: &str, max_depth: usize) -> Result<Vec<usize>, (usize, usize)> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut balanced = true;
    let mut splits = Vec::new();
    // The next of each group of bytes that matter; each search is redone
    // only once the scan has passed what it found (so a byte that is rare
    // in the file is not searched for again and again: linear time).
    let (mut next_open, mut next_close, mut next_paren) = (0, 0, 0);
    let mut i = 0;
    while i < bytes.len() {
        if next_open < i {
            next_open = memchr::memchr3(b'"', b'#', b'{', &bytes[i..]).map_or(usize::MAX, |j| i + j);
        }
        if next_close < i {
            next_close = memchr::memchr3(b'}', b'[', b']', &bytes[i..]).map_or(usize::MAX, |j| i + j);
        }
        // Parentheses group arithmetic; they nest like the rest.
        if next_paren < i {
            next_paren = memchr::memchr2(b'(', b')', &bytes[i..]).map_or(usize::MAX, |j| i + j);
        }
        i = next_open.min(next_close).min(next_paren);
        if i == usize::MAX {
            break;
        }
        match bytes[i] {
            b'#' => i = comment_end(bytes, i),
            b'"' => i = string_close(bytes, i).unwrap_or(bytes.len()),
            // A reference is one token: what is inside does not count, and
            // an unclosed one stops before what ended it.
            b'[' if opens_reference(bytes, i) => i = reference_end(bytes, i).0 - 1,
            b'{' | b'[' | b'(' => {
                depth += 1;
                if depth > max_depth {
                    return Err((i, depth));
                }
            }
            b'}' | b']' | b')' => {
                if depth == 0 {
                    balanced = false;
                } else {
                    depth -= 1;
                    if depth == 0 && bytes[i] == b'}' {
                        splits.push(i + 1);
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    if !balanced || depth != 0 {
        splits.clear();
    }
    Ok(splits)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<(Kind, &str)> {
        Lexer::new(text).map(|t| (t.kind, t.text(text))).collect()
    }

    #[test]
    fn tokens_cover_the_text() {
        let text = "command c { # hi\n  reply \"a {x} \\\" b\" api_x[response.a#b] 1.5 }\u{201c}";
        let tokens: Vec<Token> = Lexer::new(text).collect();
        let joined: String = tokens.iter().map(|t| t.text(text)).collect();
        assert_eq!(joined, text);
        assert!(kinds(text).contains(&(Kind::Reference { closed: true }, "api_x[response.a#b]")));
        assert!(kinds(text).contains(&(Kind::Comment, "# hi")));
        assert!(kinds(text).contains(&(Kind::Number, "1.5")));
        assert!(kinds(text).contains(&(Kind::Other, "\u{201c}")));
    }

    #[test]
    fn unclosed_things_are_still_tokens() {
        assert_eq!(
            kinds("reply \"abc"),
            vec![(Kind::Word, "reply"), (Kind::Blank, " "), (Kind::Str { closed: false }, "\"abc")]
        );
        assert_eq!(
            kinds("save a = api_x[response.a\n}"),
            vec![
                (Kind::Word, "save"),
                (Kind::Blank, " "),
                (Kind::Word, "a"),
                (Kind::Blank, " "),
                (Kind::Punct, "="),
                (Kind::Blank, " "),
                (Kind::Reference { closed: false }, "api_x[response.a"),
                (Kind::Newline, "\n"),
                (Kind::Punct, "}"),
            ]
        );
        assert_eq!(kinds("api_x[a[0]]")[0], (Kind::Reference { closed: true }, "api_x[a[0]]"));
        // A number right before a reference, as the grammar reads them.
        assert_eq!(kinds("0api_a[x]")[..2], [(Kind::Number, "0"), (Kind::Reference { closed: true }, "api_a[x]")]);
        assert_eq!(kinds("1.5e3ab[x]")[..2], [(Kind::Number, "1.5e3"), (Kind::Reference { closed: true }, "ab[x]")]);
        assert_eq!(kinds("5m")[0], (Kind::Number, "5m"));
        assert_eq!(kinds("api_x[a[[0]]")[0], (Kind::Reference { closed: false }, "api_x[a["));
    }

    #[test]
    fn skipping_trivia_is_the_lexer_s_trivia() {
        for text in ["  # a\n\t\r\n x", "#only", "", "x", " \n#\n# y\n  \"s\""] {
            let by_tokens = Lexer::new(text).find(|t| !t.is_trivia()).map_or(text.len(), |t| t.start());
            assert_eq!(skip_trivia(text, 0), by_tokens, "{text:?}");
        }
    }

    #[test]
    fn braces_are_counted_outside_strings_comments_and_references() {
        let text = "command c {\n  save a = api_x[response.#{]\n  reply \"{\" # {\n  if 1 == 1 {\n";
        assert_eq!(open_braces(text, 0, text.len()).len(), 2);
        assert_eq!(structure(text, 64), Ok(vec![]));
        let text = "command c { save a = api_x[response.#{] }\ncommand d { }";
        assert_eq!(structure(text, 64), Ok(vec![41, text.len()]));
    }

    #[test]
    fn squeezing_keeps_a_blank_only_where_two_tokens_would_read_as_one() {
        let squeeze = |text: &str| {
            let mut s = Squeezed::default();
            s.fill(text, 0, text.len());
            s.text
        };
        assert_eq!(squeeze("save v = a - b # {x}\n"), "save v=a - b");
        assert_eq!(squeeze("headers {\n  X - Api = \"a  # b\", Y-Z = 1\n}"), "headers{X - Api=\"a  # b\",Y-Z=1}");
        assert_eq!(squeeze("if a = = b { }"), "if a= =b{}");
        assert_eq!(squeeze("if a != b { }"), "if a !=b{}");
        assert_eq!(squeeze("if a ! = b { }"), "if a ! =b{}");
        assert_eq!(squeeze("save x = api_b [0]"), "save x=api_b [0]");
        assert_eq!(squeeze("save x = api_b[a #b]  \t\r\n"), "save x=api_b[a #b]");
        assert_eq!(squeeze("save x = - 1"), "save x=- 1");
        assert_eq!(squeeze("reply \"a\" \"b\""), "reply\"a\"\"b\"");
    }

    #[test]
    fn squeezed_offsets_map_back_to_the_file() {
        let text = "command c {\n    reply \"x\" # note\n}";
        let mut s = Squeezed::default();
        s.fill(text, 0, text.len());
        assert_eq!(s.text, "command c{reply\"x\"}");
        let reply = s.text.find("reply").unwrap();
        assert_eq!(s.start(reply), text.find("reply").unwrap());
        // A pair that ends after the blank kept between two tokens ends at
        // the first token; one that ends after trivia squeezed out, at the
        // token before it.
        assert_eq!(s.end("command ".len()), "command".len());
        assert_eq!(s.end("command c".len()), text.find(" {").unwrap());
        let string_end = s.text.find('}').unwrap();
        assert_eq!(s.end(string_end), text.find(" # note").unwrap());
        assert_eq!(s.end(s.text.len()), text.len());
    }

    #[test]
    fn the_reference_test_agrees_with_the_lexer() {
        for text in [
            "1.5api_x[a]",
            "1.api_x[a]",
            "xapi_x[a]",
            "api_x[a]",
            "a.api_x[a]",
            "12api_x[a]",
            "1.2.api_x[a]",
            "01x[a]",
            "0[a]",
            "1e5x[a]",
        ] {
            let open = text.find('[').unwrap();
            let lexed = Lexer::new(text).any(|t| matches!(t.kind, Kind::Reference { .. }));
            assert_eq!(opens_reference(text.as_bytes(), open), lexed, "{text}");
        }
    }
}
