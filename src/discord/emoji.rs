//! The one rule of an emoji blkc sends on a button or a choice: exactly
//! what the platform accepts, a Unicode emoji or a server's custom emoji
//! `<:name:id>` (`<a:name:id>` animated), its name 2 to 32 letters, digits
//! or underscores and its id a snowflake. The platform refuses anything
//! else with "Invalid emoji", and the whole message with it. The checker
//! (B413 on a written one) and the run (a filled-in one left out, with a
//! warning) both ask [`judge`].

/// What is wrong with an emoji as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// A shortcode (`:thumbsup:`, or `thumbsup`): the platform takes the
    /// emoji itself, given here.
    Shortcode(&'static str),
    /// A custom emoji whose name or id the platform would refuse: why.
    Custom(&'static str),
    /// Not an emoji at all.
    NotOne,
}

/// Whether the platform takes `text` as an emoji.
pub fn judge(text: &str) -> Result<(), Problem> {
    if let Some(inner) = text.strip_prefix('<').and_then(|t| t.strip_suffix('>')) {
        return custom(inner);
    }
    if emojis::get(text).is_some() {
        return Ok(());
    }
    let code = text.strip_prefix(':').and_then(|t| t.strip_suffix(':')).unwrap_or(text);
    match emojis::get_by_shortcode(code) {
        Some(e) => Err(Problem::Shortcode(e.as_str())),
        None => Err(Problem::NotOne),
    }
}

/// `:name:id` or `a:name:id`, as inside `<…>`.
fn custom(inner: &str) -> Result<(), Problem> {
    let rest = inner.strip_prefix("a:").or_else(|| inner.strip_prefix(':')).ok_or(Problem::NotOne)?;
    let (name, id) = rest.rsplit_once(':').ok_or(Problem::Custom("it has no id: `<:name:id>`"))?;
    if !super::is_snowflake(id) || id.parse::<u64>().map_or(true, |n| n == 0) {
        return Err(Problem::Custom("its id is not a number the platform makes"));
    }
    if !(2..=32).contains(&name.len()) {
        return Err(Problem::Custom("its name is not 2 to 32 characters"));
    }
    if !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return Err(Problem::Custom("its name has a character other than letters, digits and `_`"));
    }
    Ok(())
}

impl Problem {
    /// In words, for a diagnostic or a run's warning.
    pub fn describe(&self, text: &str) -> String {
        let shown = crate::base::display::one_line(&text.chars().take(40).collect::<String>());
        match self {
            Problem::Shortcode(e) => format!("`{shown}` is a shortcode; the platform takes the emoji itself: `{e}`"),
            Problem::Custom(why) => format!("`{shown}` is not a server's emoji the platform takes: {why}"),
            Problem::NotOne => format!("`{shown}` is not an emoji"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exactly_what_the_platform_takes() {
        for ok in ["👍", "🟦", "👍🏽", "❤️", "<:blob:123456789012345678>", "<a:party_2:1>"] {
            assert_eq!(judge(ok), Ok(()), "{ok}");
        }
        assert_eq!(judge(":thumbsup:"), Err(Problem::Shortcode("👍")));
        assert_eq!(judge("thumbsup"), Err(Problem::Shortcode("👍")));
        assert!(matches!(judge("<:blob:abc>"), Err(Problem::Custom(_))));
        assert!(matches!(judge(&format!("<:{}:1>", "x".repeat(33))), Err(Problem::Custom(_))));
        assert!(matches!(judge("<:b:1>"), Err(Problem::Custom(_))));
        assert!(matches!(judge("<:bl-ob:1>"), Err(Problem::Custom(_))));
        assert_eq!(judge("yes"), Err(Problem::NotOne));
        assert_eq!(judge(""), Err(Problem::NotOne));
        assert_eq!(judge("👍👍"), Err(Problem::NotOne));
    }
}
