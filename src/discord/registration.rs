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

/// What a deploy would change on the platform: the commands it adds,
/// changes (with what about them) and removes, against those registered.
#[derive(Debug, Default, PartialEq)]
pub struct Changes {
    pub added: Vec<String>,
    pub changed: Vec<(String, Vec<&'static str>)>,
    pub removed: Vec<String>,
    pub unchanged: Vec<String>,
}

impl Changes {
    /// Compares the commands to register with those registered now (as the
    /// platform lists them: `GET …/commands`).
    pub fn between(wanted: &[Command], registered: &[Registered]) -> Changes {
        let mut out = Changes::default();
        for w in wanted {
            match registered.iter().find(|r| r.name == w.name && r.kind == w.kind) {
                None => out.added.push(w.name.clone()),
                Some(r) => {
                    let mut what = Vec::new();
                    if r.description != w.description {
                        what.push("description");
                    }
                    if !same_options(&w.options, &r.options) {
                        what.push("options");
                    }
                    if what.is_empty() {
                        out.unchanged.push(w.name.clone());
                    } else {
                        out.changed.push((w.name.clone(), what));
                    }
                }
            }
        }
        for r in registered {
            if !wanted.iter().any(|w| w.name == r.name && w.kind == r.kind) {
                out.removed.push(r.name.clone());
            }
        }
        out
    }

    /// One line: `1 added (/a), 1 changed (/b: options), 1 removed (/c), 2 unchanged`.
    pub fn summary(&self) -> String {
        // Removed names are the platform's: shown on one line, escaped.
        let names =
            |v: &[String]| v.iter().map(|n| format!("/{}", crate::display::one_line(n))).collect::<Vec<_>>().join(", ");
        let mut parts = Vec::new();
        if !self.added.is_empty() {
            parts.push(format!("{} added ({})", self.added.len(), names(&self.added)));
        }
        if !self.changed.is_empty() {
            let each: Vec<String> = self.changed.iter().map(|(n, what)| format!("/{n}: {}", what.join(", "))).collect();
            parts.push(format!("{} changed ({})", self.changed.len(), each.join("; ")));
        }
        if !self.removed.is_empty() {
            parts.push(format!("{} removed ({})", self.removed.len(), names(&self.removed)));
        }
        if !self.unchanged.is_empty() {
            parts.push(format!("{} unchanged", self.unchanged.len()));
        }
        if parts.is_empty() {
            return "nothing registered, nothing to register".into();
        }
        parts.join(", ")
    }
}

/// A command as the platform lists it (twilight-model's type).
pub type Registered = twilight_model::application::command::Command;

fn same_options(wanted: &[CommandOption], registered: &[twilight_model::application::command::CommandOption]) -> bool {
    wanted.len() == registered.len()
        && wanted.iter().zip(registered).all(|(w, r)| {
            // What blkc never sets must be unset there too, or the deploy changes it.
            let extras = r.autocomplete.unwrap_or(false)
                || r.channel_types.as_ref().is_some_and(|c| !c.is_empty())
                || r.options.as_ref().is_some_and(|o| !o.is_empty())
                || r.min_value.is_some()
                || r.max_value.is_some()
                || r.min_length.is_some()
                || r.max_length.is_some();
            w.kind == r.kind
                && w.name == r.name
                && w.description == r.description
                && w.required == r.required.unwrap_or(false)
                && same_choices(w.choices.as_deref().unwrap_or_default(), r.choices.as_deref().unwrap_or_default())
                && !extras
        })
}

fn same_choices(wanted: &[Choice], registered: &[twilight_model::application::command::CommandOptionChoice]) -> bool {
    use twilight_model::application::command::CommandOptionChoiceValue as V;
    wanted.len() == registered.len()
        && wanted.iter().zip(registered).all(|(w, r)| {
            w.name == r.name
                && match (&w.value, &r.value) {
                    (ChoiceValue::Text(a), V::String(b)) => a == b,
                    (ChoiceValue::Number(a), V::Integer(b)) => a.get().parse::<i64>().ok() == Some(*b),
                    (ChoiceValue::Number(a), V::Number(b)) => a.get().parse::<f64>().ok() == Some(*b),
                    _ => false,
                }
        })
}
