//! List helpers in templates: `{queue|count}`, `{tags|join ', '}`,
//! `{api_s[response.items]|first 3|join}`. The one place that knows them:
//! their names, how a template writes them, and what they make of a value.
//! They do what a loop cannot say in a few words; anything more is a loop
//! (docs/language.md, "List helpers").

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use crate::base::diagnostics::{did_you_mean, Code, Diagnostic};
use crate::base::source::Span;

/// One helper after `|`, applied left to right.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Helper {
    /// The number of elements.
    Count,
    /// The first N elements, as a list.
    First(u32),
    /// The elements as text, with a separator between them (`, ` unless
    /// one is given).
    Join(String),
}

/// The helpers' names, as templates write them.
pub const NAMES: [&str; 3] = ["count", "first", "join"];

/// Each helper and what it gives, for the editor.
pub const ABOUT: [(&str, &str); 3] = [
    ("count", "the number of elements"),
    ("first", "`first N`: the first N elements, as a list"),
    ("join", "`join` or `join 'SEP'`: the elements as text, `, ` or SEP between them"),
];

/// The largest N of `first N` (a list variable holds at most as many).
const MAX_FIRST: u32 = crate::language::vocab::MAX_LIST as u32;

/// Where a `{…}`'s helpers start: after its reference or element path
/// (`api_x[…]`, `item[…]`, whose path ends at its first `]`) or its name.
/// `None` when it has none.
pub fn split(inner: &str) -> Option<usize> {
    let base_end = match inner.find('[') {
        Some(open) => open + inner[open..].find(']')? + 1,
        None => inner.find('|')?,
    };
    inner[base_end..].trim_start().starts_with('|').then_some(base_end)
}

/// Reads `|count|first 3|join ', '` (the text after the base, at byte
/// `start` of the file); a helper it cannot read is B150.
pub fn scan(text: &str, start: usize, diags: &mut Vec<Diagnostic>) -> Option<Vec<Helper>> {
    let mut helpers = Vec::new();
    let mut rest = text;
    loop {
        rest = rest.trim_start();
        if rest.is_empty() {
            return Some(helpers);
        }
        let at = start + text.len() - rest.len();
        let Some(after_bar) = rest.strip_prefix('|') else {
            diags.push(bad(
                at,
                rest,
                "a `|` before each helper",
                "write the helpers one after another: `{list|first 3|join}`",
            ));
            return None;
        };
        let after_bar = after_bar.trim_start();
        let word_len = after_bar.bytes().take_while(|b| b.is_ascii_alphanumeric() || *b == b'_').count();
        let (word, args) = after_bar.split_at(word_len);
        let here = start + text.len() - after_bar.len();
        let (helper, left) = match word {
            "count" => (Helper::Count, args),
            "first" => first(args, here, word_len, diags)?,
            "join" => join(args, here, word_len, diags)?,
            _ => {
                let span = Span::new(here, here + word_len.max(1));
                let mut d = Diagnostic::new(Code::BadHelper, format!("`{word}` is not a list helper"))
                    .label(span, "not a helper");
                // Other languages' words for the count of a list.
                let other = matches!(word, "length" | "lenght" | "len" | "size" | "size_of").then_some("count");
                let meant = did_you_mean(word, NAMES.iter().copied()).or(other);
                d = d.meant(span, meant, "the list helpers are `count`, `first N` and `join 'SEPARATOR'`");
                diags.push(d);
                return None;
            }
        };
        helpers.push(helper);
        rest = left;
    }
}

/// `first N`: a whole number from 1 to 10,000.
fn first<'t>(args: &'t str, at: usize, word_len: usize, diags: &mut Vec<Diagnostic>) -> Option<(Helper, &'t str)> {
    let digits = args.trim_start();
    let len = digits.bytes().take_while(u8::is_ascii_digit).count();
    match digits[..len].parse::<u32>() {
        Ok(n) if (1..=MAX_FIRST).contains(&n) => Some((Helper::First(n), &digits[len..])),
        _ => {
            let span = Span::new(at, at + word_len + (args.len() - digits.len()) + len);
            diags.push(
                Diagnostic::new(Code::BadHelper, "`first` needs how many: a whole number from 1 to 10,000")
                    .label(span, "no count")
                    .help("write how many elements to keep: `{list|first 5}`"),
            );
            None
        }
    }
}

/// `join` or `join 'SEP'`: the separator in single quotes, with `\n`, `\t`,
/// `\\` and `\'` (the string around it is in double quotes).
fn join<'t>(args: &'t str, at: usize, word_len: usize, diags: &mut Vec<Diagnostic>) -> Option<(Helper, &'t str)> {
    let trimmed = args.trim_start();
    let Some(quoted) = trimmed.strip_prefix('\'') else {
        return Some((Helper::Join(", ".to_string()), args));
    };
    let mut separator = String::new();
    let mut chars = quoted.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\'' => return Some((Helper::Join(separator), &quoted[i + 1..])),
            '\\' => match chars.next().map(|(_, c)| c) {
                Some('n') => separator.push('\n'),
                Some('t') => separator.push('\t'),
                Some(other) => separator.push(other),
                None => break,
            },
            c => separator.push(c),
        }
    }
    let span = Span::new(at, at + word_len + args.len());
    diags.push(
        Diagnostic::new(Code::BadHelper, "`join`'s separator has no closing `'`")
            .label(span, "not closed")
            .help("write the separator in single quotes: `{list|join ', '}` (a `}` cannot be in it)"),
    );
    None
}

fn bad(at: usize, rest: &str, what: &str, help: &str) -> Diagnostic {
    let len = rest.chars().next().map_or(1, char::len_utf8);
    Diagnostic::new(Code::BadHelper, format!("expected {what}"))
        .label(Span::new(at, at + len), "not a helper")
        .help(help.to_string())
}

/// What the helpers make of a value. A value that is not a list counts as
/// a list of that one value, and `null` (or a value that is missing) as an
/// empty list.
pub fn apply(value: Json, helpers: &[Helper]) -> Json {
    helpers.iter().fold(value, |value, helper| {
        let items = match value {
            Json::Array(items) => items,
            Json::Null => Vec::new(),
            one => vec![one],
        };
        match helper {
            Helper::Count => Json::from(items.len()),
            Helper::First(n) => Json::Array(items.into_iter().take(*n as usize).collect()),
            Helper::Join(separator) => {
                let mut text = String::new();
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        text.push_str(separator);
                    }
                    crate::base::values::push_value(&mut text, item);
                }
                Json::String(text)
            }
        }
    })
}

/// The helpers as a template writes them (for the formatter and the editor).
pub fn written(helpers: &[Helper]) -> String {
    let mut out = String::new();
    for helper in helpers {
        match helper {
            Helper::Count => out.push_str("|count"),
            Helper::First(n) => out.push_str(&format!("|first {n}")),
            Helper::Join(separator) if separator == ", " => out.push_str("|join"),
            Helper::Join(separator) => {
                let escaped =
                    separator.replace('\\', "\\\\").replace('\'', "\\'").replace('\n', "\\n").replace('\t', "\\t");
                out.push_str(&format!("|join '{escaped}'"));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(text: &str) -> Result<Vec<Helper>, String> {
        let mut diags = Vec::new();
        scan(text, 0, &mut diags).ok_or_else(|| diags[0].message.clone())
    }

    #[test]
    fn helpers_are_read_and_applied_left_to_right() {
        assert_eq!(read("|first 2| join ' | '"), Ok(vec![Helper::First(2), Helper::Join(" | ".into())]));
        assert_eq!(read("|join '\\n'|count"), Ok(vec![Helper::Join("\n".into()), Helper::Count]));
        let list = json!(["a", 2, { "k": "v" }, null]);
        assert_eq!(apply(list.clone(), &[Helper::Count]), json!(4));
        assert_eq!(apply(list.clone(), &[Helper::First(2), Helper::Join(", ".into())]), json!("a, 2"));
        assert_eq!(apply(list, &[Helper::Join("/".into())]), json!("a/2/{\"k\":\"v\"}/null"));
        assert_eq!(apply(json!(null), &[Helper::Count]), json!(0));
        assert_eq!(apply(json!("one"), &[Helper::Count]), json!(1));
        assert_eq!(apply(json!([1, 2, 3]), &[Helper::First(5)]), json!([1, 2, 3]));
    }

    #[test]
    fn a_helper_that_cannot_be_read_says_why() {
        assert!(read("|cuont").unwrap_err().contains("`cuont` is not a list helper"));
        assert!(read("|first").unwrap_err().contains("a whole number from 1"));
        assert!(read("|first 0").unwrap_err().contains("a whole number from 1"));
        assert!(read("|join ', ").unwrap_err().contains("no closing"));
        assert!(read("|count x").unwrap_err().contains("expected a `|`"));
        assert_eq!(split("queue|count"), Some(5));
        assert_eq!(split("api_x[response.a|b]"), None);
        assert_eq!(split("api_x[response.items] |join"), Some(21));
        assert_eq!(split("user_name"), None);
    }

    #[test]
    fn what_is_written_reads_back() {
        for text in ["|count", "|first 3|join", "|join ' | '", "|join '\\n'", "|join 'it\\'s'"] {
            let helpers = read(text).unwrap();
            assert_eq!(read(&written(&helpers)), Ok(helpers), "{text}");
        }
    }
}
