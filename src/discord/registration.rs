//! The commands' registration payload (`PUT …/commands`, a bulk
//! overwrite), typed with `twilight-model`'s command and option types.
//! The checker builds it from a file (`check::platform::registration`).

use serde::Serialize;
use serde_json::value::RawValue;
use twilight_model::application::command::{CommandOptionType, CommandType};

use crate::vocab::OptionType;

/// One slash command to register.
#[derive(Debug, Clone, Serialize)]
pub struct Command {
    #[serde(rename = "type")]
    pub kind: CommandType,
    pub name: String,
    pub description: String,
    pub options: Vec<CommandOption>,
}

/// One of a command's options.
#[derive(Debug, Clone, Serialize)]
pub struct CommandOption {
    #[serde(rename = "type")]
    pub kind: CommandOptionType,
    pub name: String,
    pub description: String,
    pub required: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub choices: Option<Vec<Choice>>,
}

/// A choice: its name, and its value as the option's type wants it.
#[derive(Debug, Clone, Serialize)]
pub struct Choice {
    pub name: String,
    pub value: ChoiceValue,
}

#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum ChoiceValue {
    Text(String),
    /// A number exactly as written (`2.50` is registered as `2.50`).
    Number(Box<RawValue>),
}

impl ChoiceValue {
    /// A number as written; `None` if it is not a JSON number.
    pub fn number(written: &str) -> Option<ChoiceValue> {
        crate::vocab::is_json_number(written)
            .then(|| RawValue::from_string(written.to_string()).ok().map(ChoiceValue::Number))
            .flatten()
    }
}

/// The platform's type of an option of the language's type.
pub fn option_type(t: OptionType) -> CommandOptionType {
    match t {
        OptionType::String => CommandOptionType::String,
        OptionType::Integer => CommandOptionType::Integer,
        OptionType::Boolean => CommandOptionType::Boolean,
        OptionType::User => CommandOptionType::User,
        OptionType::Channel => CommandOptionType::Channel,
        OptionType::Role => CommandOptionType::Role,
        OptionType::Mentionable => CommandOptionType::Mentionable,
        OptionType::Number => CommandOptionType::Number,
        OptionType::Attachment => CommandOptionType::Attachment,
    }
}

/// A slash command (`type` 1).
pub fn slash(name: &str, description: &str, options: Vec<CommandOption>) -> Command {
    Command { kind: CommandType::ChatInput, name: name.into(), description: description.into(), options }
}
