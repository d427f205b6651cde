//! What pest could not read, in the terms the syntax-error report and the
//! mistake recognisers share: where reading stopped, and the kinds of token
//! that could have come there.

use crate::base::source::Span;
use crate::language::vocab::Keyword;

/// What pest could not read: where (the furthest point any rule reached),
/// what would have been read there, and what stands there instead.
pub(super) struct Failure<'t> {
    /// The text up to the end of the parsed range.
    pub text: &'t str,
    /// Where the item that failed starts.
    pub item: usize,
    /// Where reading stopped.
    pub at: usize,
    /// What could have come at `at`, in words (`` `{` ``, "a string").
    pub expected: Vec<&'static str>,
    /// The keywords among them, for did-you-mean.
    pub keywords: Vec<&'static str>,
    /// The tokens pest tried at `at`, by kind (`=`, `{`, a string, `reply`, …).
    pub tokens: Vec<Expected>,
    /// What stands at `at`, in words, and its span.
    pub found: String,
    pub found_span: Span,
}

impl Failure<'_> {
    /// Whether pest tried a token of this kind at the failure.
    pub fn expects(&self, token: Expected) -> bool {
        self.tokens.contains(&token)
    }

    pub fn expects_keyword(&self, k: Keyword) -> bool {
        self.expects(Expected::Keyword(k))
    }

    pub fn expects_punct(&self, p: &str) -> bool {
        self.tokens.iter().any(|t| matches!(t, Expected::Punct(q) if *q == p))
    }

    /// The text of the found token (a word, one character, or nothing).
    pub fn found_text(&self) -> &str {
        &self.text[self.found_span.range()]
    }
}

/// A token pest tried where reading stopped, as a kind of token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expected {
    Keyword(Keyword),
    /// Punctuation or an operator: `{` `}` `[` `]` `=` `,` `==` `contains` …
    Punct(&'static str),
    /// A string (its opening `"`).
    Str,
    /// A name (its first letter or `_`).
    Name,
    /// A number (its `-` or first digit).
    Number,
    /// An unquoted response reference (its `api_`).
    Reference,
    /// A blank or a comment (pest tries whitespace between any two tokens).
    Trivia,
}

/// The punctuation and operators of the grammar.
const PUNCTUATION: &[&str] = &[
    "{", "}", "[", "]", "=", ",", "==", "!=", "<", "<=", ">", ">=", "contains", "starts", "ends", "(", ")", "*", "/",
    "%",
];

impl Expected {
    /// The kind of one of pest's tokens (as pest prints it); `None` for a
    /// token the grammar does not have (the unit test below reads every
    /// literal of the grammar, so a new one cannot be forgotten).
    pub fn of(token: &str) -> Option<Expected> {
        Some(match token {
            // A string's quote, or an escape inside one.
            "\"" | "\\" => Expected::Str,
            "_" | "'" => Expected::Name,
            "api_" => Expected::Reference,
            "-" | "0" | "." | "e" | "E" | "+" => Expected::Number,
            " " | "    " | "\t" | "\n" | "\r" | "BUILTIN_RULE" => Expected::Trivia,
            // The blanks, a comment's `#`, and a key's `-` and `.`, as ranges (matched
            // in place, where a string is compared by memcmp).
            " .. " | "\t..\n" | "\r..\r" | "#..#" => Expected::Trivia,
            "-..." => Expected::Number,
            // A range of characters, written `a..z` by pest.
            t if t.len() == 4 && t.is_char_boundary(1) && &t[1..3] == ".." => {
                if t.as_bytes()[0].is_ascii_digit() {
                    Expected::Number
                } else {
                    Expected::Name
                }
            }
            t => match Keyword::parse(t) {
                Some(k) => Expected::Keyword(k),
                None => Expected::Punct(PUNCTUATION.iter().find(|p| **p == t)?),
            },
        })
    }
}

/// The innermost `{` still open at `at`, outside strings and comments.
pub fn innermost_open_brace(text: &str, from: usize, at: usize) -> Option<usize> {
    super::lexer::open_braces(text, from, at).pop()
}
