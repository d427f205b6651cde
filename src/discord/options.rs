//! The platform's vocabulary of commands: the API's default base URL, the
//! types of a command's options, and the numbers an option may hold.

/// The chat platform's API, where `{bot_token}` may go unless a file says
/// otherwise with `platform "…"`: at the version the Gateway is opened
/// with (an unversioned call reaches the platform's old default).
pub const DEFAULT_PLATFORM: &str = "https://discord.com/api/v10";

/// The type of an `option`: what the chat user gives, and the platform's
/// number for it (its `ApplicationCommandOptionType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OptionType {
    String,
    Integer,
    Number,
    Boolean,
    User,
    Channel,
    Role,
    Mentionable,
    Attachment,
}

impl OptionType {
    pub const ALL: &'static [OptionType] = &[
        OptionType::String,
        OptionType::Integer,
        OptionType::Number,
        OptionType::Boolean,
        OptionType::User,
        OptionType::Channel,
        OptionType::Role,
        OptionType::Mentionable,
        OptionType::Attachment,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            OptionType::String => "string",
            OptionType::Integer => "integer",
            OptionType::Number => "number",
            OptionType::Boolean => "boolean",
            OptionType::User => "user",
            OptionType::Channel => "channel",
            OptionType::Role => "role",
            OptionType::Mentionable => "mentionable",
            OptionType::Attachment => "attachment",
        }
    }

    pub fn parse(word: &str) -> Option<OptionType> {
        OptionType::ALL.iter().copied().find(|t| t.as_str() == word)
    }

    /// What the type holds, for hover and messages.
    pub fn describe(self) -> &'static str {
        match self {
            OptionType::String => "text the user types",
            OptionType::Integer => "a whole number between -(2^53 - 1) and 2^53 - 1",
            OptionType::Number => "a number, decimals allowed",
            OptionType::Boolean => "`true` or `false`",
            OptionType::User => "a user of the server: the value is the user's ID",
            OptionType::Channel => "a channel of the server: the value is the channel's ID",
            OptionType::Role => "a role of the server: the value is the role's ID",
            OptionType::Mentionable => "a user or a role: the value is its ID",
            OptionType::Attachment => "a file the user uploads: the value is the attachment's ID",
        }
    }

    /// Whether the platform lets the type have `choices`.
    pub fn takes_choices(self) -> bool {
        matches!(self, OptionType::String | OptionType::Integer | OptionType::Number)
    }

    /// Checks a value given as text (`--var`, or an interaction's value made
    /// text) against the type; the error says what was expected.
    pub fn accepts(self, value: &str) -> Result<(), Expected> {
        let snowflake = |v: &str| !v.is_empty() && v.len() <= 20 && v.bytes().all(|b| b.is_ascii_digit());
        let ok = match self {
            OptionType::String => true,
            OptionType::Integer => parse_integer(value).is_some(),
            OptionType::Number => is_option_number(value),
            OptionType::Boolean => matches!(value, "true" | "false"),
            _ => snowflake(value),
        };
        if ok {
            Ok(())
        } else {
            Err(Expected(self))
        }
    }
}

pub const MAX_OPTION_INTEGER: i64 = (1 << 53) - 1;
/// The largest magnitude of a number option (the platform's: 2^53).
pub const MAX_OPTION_NUMBER: f64 = 9_007_199_254_740_992.0;

/// A number option's value or choice: JSON's number syntax, within ±2^53.
pub fn is_option_number(value: &str) -> bool {
    crate::base::values::is_json_number(value) && value.parse::<f64>().is_ok_and(|n| n.abs() <= MAX_OPTION_NUMBER)
}

/// An integer option's value: digits with an optional `-`, within
/// ±(2^53 - 1).
pub fn parse_integer(value: &str) -> Option<i64> {
    let digits = value.strip_prefix('-').unwrap_or(value);
    if digits.is_empty() || digits.len() > 16 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: i64 = value.parse().ok()?;
    (n.abs() <= MAX_OPTION_INTEGER).then_some(n)
}

/// A value that is not of an option's type: what the type expected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expected(pub OptionType);

impl std::fmt::Display for Expected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "expected {}", self.0.describe())
    }
}

impl std::error::Error for Expected {}
