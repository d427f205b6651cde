//! The platform's rule for the name of a slash command, a subcommand, a
//! group and an option: the published pattern, held here once. The grammar's
//! `name` leaf takes the same characters (any length, any case); the checker
//! asks [`problem`] of each name, and the template scanner reads
//! `{option_<name>}` with [`is_name_char`].

use std::sync::LazyLock;

use regex::Regex;

/// The platform's pattern, as its API reference writes it; it also asks
/// for lower case wherever a character has one.
pub const PATTERN: &str = r"^[-_'\p{L}\p{N}\p{sc=Deva}\p{sc=Thai}]{1,32}$";

/// The most characters (not bytes) a name has.
pub const MAX: usize = 32;

static WHOLE: LazyLock<Regex> = LazyLock::new(|| Regex::new(PATTERN).expect("the platform's pattern compiles"));
static ONE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[-_'\p{L}\p{N}\p{sc=Deva}\p{sc=Thai}]$").expect("a character class compiles"));

/// Whether `c` may be in a name.
pub fn is_name_char(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '\'');
    }
    ONE.is_match(c.encode_utf8(&mut [0; 4]))
}

/// What the platform would refuse in a name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// More than [`MAX`] characters (the count).
    Long(usize),
    /// A character the pattern has not (the first one).
    Char(char),
    /// A character with a lower case of its own (the first one).
    Capital(char),
}

/// The first thing the platform would refuse in `name`, if any.
pub fn problem(name: &str) -> Option<Problem> {
    if let Some(c) = name.chars().find(|&c| !is_name_char(c)) {
        return Some(Problem::Char(c));
    }
    let length = name.chars().count();
    if length > MAX {
        return Some(Problem::Long(length));
    }
    if let Some(c) = name.chars().find(|&c| has_lower(c)) {
        return Some(Problem::Capital(c));
    }
    debug_assert!(WHOLE.is_match(name) || name.is_empty());
    None
}

/// Whether `name` is one the platform registers as it is.
pub fn is_valid(name: &str) -> bool {
    problem(name).is_none() && WHOLE.is_match(name)
}

/// Whether `c` has a lower case other than itself (`A`, `É`, `Ж`; not
/// `日` or `न`).
fn has_lower(c: char) -> bool {
    let mut lower = c.to_lowercase();
    !(lower.next() == Some(c) && lower.next().is_none())
}

/// Whether `name` is a context-menu command's name: 1 to [`MAX`]
/// characters, capitals and blanks allowed, none at either end (the
/// platform's client shows it as written; blkc keeps blanks from its ends).
pub fn is_valid_menu(name: &str) -> bool {
    (1..=MAX).contains(&name.chars().count()) && name.trim() == name
}

/// Whether `text` is `option_` and a name: the variable an option's value
/// is read through (`{option_my-opt}`, `{option_année}`). A name of ASCII
/// letters, digits and `_` is a plain variable name already.
pub fn is_option_variable(text: &str) -> bool {
    text.strip_prefix("option_").is_some_and(|name| !name.is_empty() && name.chars().all(is_name_char))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_in_every_script_the_platform_takes() {
        for name in ["ping-pong", "8ball", "café", "привет", "日本語", "नमस्ते", "don't", "my_opt", "สวัสดี", "٣"]
        {
            assert!(is_valid(name), "{name}");
        }
    }

    #[test]
    fn what_the_platform_refuses() {
        assert_eq!(problem("Café"), Some(Problem::Capital('C')));
        assert_eq!(problem("Привет"), Some(Problem::Capital('П')));
        assert_eq!(problem("ping pong"), Some(Problem::Char(' ')));
        assert_eq!(problem("a.b"), Some(Problem::Char('.')));
        assert_eq!(problem("🙂"), Some(Problem::Char('🙂')));
        assert_eq!(problem(&"é".repeat(33)), Some(Problem::Long(33)));
        assert_eq!(problem(&"é".repeat(32)), None);
        assert!(!is_valid(""));
    }

    #[test]
    fn the_pattern_and_the_character_test_agree() {
        // Every character of the first planes: the fast ASCII path and the
        // class agree with the published pattern on a one-character name.
        for c in (0..0x3_0000).filter_map(char::from_u32) {
            let whole = WHOLE.is_match(c.encode_utf8(&mut [0; 4]));
            assert_eq!(is_name_char(c), whole, "{c:?}");
        }
    }

    #[test]
    fn an_option_s_variable() {
        assert!(is_option_variable("option_my-opt"));
        assert!(is_option_variable("option_année"));
        assert!(!is_option_variable("option_"));
        assert!(!is_option_variable("option_a b"));
        assert!(!is_option_variable("user_name"));
    }
}
