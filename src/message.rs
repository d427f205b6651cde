//! A message to the chat, as blkc means it, whatever the platform: its
//! content, who sees it, and whom it may ping. A reply's text becomes one
//! or more of these; the platform module writes them in its wire format
//! (`discord::message`). Rich messages (embeds, components) are added here,
//! and there, and nowhere else.

use crate::vocab::limits;

/// One message.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Message {
    pub content: String,
    /// Only the user who triggered it sees it (an interaction's answer).
    pub ephemeral: bool,
    /// Whom it may ping: these users and no one else. Never roles,
    /// `@everyone` or `@here`, whatever the content holds, so that text a
    /// chat user supplied can never ping anyone the command did not name.
    pub mentions: Vec<String>,
}

impl Message {
    /// A message that may ping `users`.
    pub fn new(content: impl Into<String>, users: &[String]) -> Message {
        Message { content: content.into(), ephemeral: false, mentions: users.to_vec() }
    }

    /// blkc's own word to the user who triggered a command (busy, failed,
    /// done): seen by them only, pinging no one.
    pub fn notice(content: &str) -> Message {
        Message { content: content.to_string(), ephemeral: true, mentions: Vec::new() }
    }
}

/// The most messages one `reply` becomes; a longer reply is cut, with a mark.
pub const MAX_PIECES: usize = 5;

/// What a failed run tells the chat user: nothing of the file, the secrets
/// or the failure (the operator's log has the diagnostic).
pub const FAILED: &str =
    "Sorry, something went wrong running this command. The bot's operator can see what in the log.";
pub const BUSY: &str = "The bot is busy right now. Please try again in a moment.";
pub const UNKNOWN: &str = "This command is not available right now.";
/// What a command that replies nothing answers, so the user is not left waiting.
pub const DONE: &str = "Done.";

/// The platform counts a message's length in UTF-16 units, as JavaScript does.
fn units(s: &str) -> usize {
    s.encode_utf16().count()
}

/// A reply's text as the messages it is sent in, and a warning for the log
/// when it did not fit in one (or was empty).
pub fn pieces(text: &str) -> (Vec<String>, Option<String>) {
    if text.trim().is_empty() {
        return (vec!["(empty reply)".into()], Some("a reply rendered empty; `(empty reply)` was sent".into()));
    }
    if units(text) <= limits::MESSAGE {
        return (vec![text.to_string()], None);
    }
    let total = units(text);
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() && out.len() < MAX_PIECES {
        if units(rest) <= limits::MESSAGE {
            out.push(rest.to_string());
            rest = "";
            break;
        }
        let end = split_point(rest, limits::MESSAGE);
        // A piece of blanks only is no message (the platform refuses empty
        // content): what is blank between two pieces is left out.
        if !rest[..end].trim().is_empty() {
            out.push(rest[..end].to_string());
        }
        rest = rest[end..].trim_start();
    }
    if rest.is_empty() {
        let warning = format!("a reply of {total} characters was sent as {} messages", out.len());
        return (out, Some(warning));
    }
    let mark = format!("\n… (cut: the reply was {total} characters)");
    if let Some(last) = out.last_mut() {
        let keep = split_point(last, limits::MESSAGE - units(&mark));
        last.truncate(keep);
        last.push_str(&mark);
    }
    let warning = format!("a reply of {total} characters was cut after {MAX_PIECES} messages");
    (out, Some(warning))
}

/// Where to end a piece of at most `max` units: after the last line break
/// in the second half of the window, else the last blank, else at `max`.
fn split_point(text: &str, max: usize) -> usize {
    let mut end = 0;
    let mut used = 0;
    for (i, c) in text.char_indices() {
        used += c.len_utf16();
        if used > max {
            break;
        }
        end = i + c.len_utf8();
    }
    let window = &text[..end];
    let half = end / 2;
    match window.rfind('\n').filter(|&i| i >= half).or_else(|| window.rfind(' ').filter(|&i| i >= half)) {
        Some(i) => i + 1,
        None => end,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_reply_is_split_at_lines_and_a_very_long_one_cut_with_a_mark() {
        let (one, warning) = pieces("hello");
        assert_eq!((one, warning), (vec!["hello".to_string()], None));
        let text = "line of text\n".repeat(300); // 3,900 characters
        let (parts, warning) = pieces(&text);
        assert_eq!(parts.len(), 2);
        assert!(parts.iter().all(|p| units(p) <= 2000));
        assert_eq!(parts.concat().replace('\n', ""), text.replace('\n', ""));
        assert!(warning.unwrap().contains("2 messages"));
        let (parts, warning) = pieces(&"x".repeat(20_000));
        assert_eq!(parts.len(), MAX_PIECES);
        assert!(parts.iter().all(|p| units(p) <= 2000));
        assert!(parts.last().unwrap().ends_with("(cut: the reply was 20000 characters)"));
        assert!(warning.unwrap().contains("cut"));
        // Characters outside the BMP count twice, as the platform counts them.
        let (parts, _) = pieces(&"😀".repeat(1500));
        assert!(parts.len() == 2 && parts.iter().all(|p| units(p) <= 2000));
        assert_eq!(pieces("  ").0, ["(empty reply)"]);
        // Blanks that fill a piece are not sent as a message of their own.
        let (parts, _) = pieces(&format!("{}x", " ".repeat(4000)));
        assert_eq!(parts, ["x"]);
        let (parts, _) = pieces(&format!("a{}b", "\n".repeat(4100)));
        assert!(parts.iter().all(|p| !p.trim().is_empty()), "{parts:?}");
    }
}
