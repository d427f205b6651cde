//! An interaction, once its signature holds: what the platform sent, and
//! the run's inputs made from it. Everything here came from a chat user or
//! the platform, so it is untrusted: it only ever becomes values.

use serde::Deserialize;
use serde_json::Value as Json;

use crate::plan::Tree;

/// The parts of an interaction blkc reads (the platform's `Interaction`).
#[derive(Debug, Deserialize)]
pub struct Interaction {
    #[serde(rename = "type")]
    pub kind: u8,
    #[serde(default)]
    pub id: String,
    #[serde(default)]
    pub application_id: String,
    /// A credential for 15 minutes: never logged.
    #[serde(default)]
    pub token: String,
    pub guild_id: Option<String>,
    pub channel_id: Option<String>,
    pub channel: Option<Channel>,
    /// In a server.
    pub member: Option<Member>,
    /// In a direct message.
    pub user: Option<User>,
    pub data: Option<CommandData>,
}

pub const PING: u8 = 1;
pub const APPLICATION_COMMAND: u8 = 2;

#[derive(Debug, Deserialize)]
pub struct Channel {
    pub name: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct Member {
    pub user: Option<User>,
    pub nick: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct User {
    pub id: String,
    #[serde(default)]
    pub username: String,
    pub global_name: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct CommandData {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub options: Vec<OptionValue>,
}

#[derive(Debug, Deserialize)]
pub struct OptionValue {
    pub name: String,
    #[serde(rename = "type", default)]
    pub kind: u8,
    pub value: Option<Json>,
}

impl Interaction {
    /// The user who triggered it, in a server or a direct message.
    pub fn user(&self) -> Option<&User> {
        self.member.as_ref().and_then(|m| m.user.as_ref()).or(self.user.as_ref())
    }

    pub fn command(&self) -> &str {
        self.data.as_ref().map_or("", |d| d.name.as_str())
    }
}

/// The trigger variables and options of a command's run, or why the
/// interaction does not fit the command (said to the operator's log only).
pub fn variables(interaction: &Interaction, tree: &Tree) -> Result<Vec<(String, String)>, String> {
    let mut vars = Vec::new();
    if let Some(user) = interaction.user() {
        let nick = interaction.member.as_ref().and_then(|m| m.nick.clone());
        let name = nick.or_else(|| user.global_name.clone()).unwrap_or_else(|| user.username.clone());
        vars.push(("user_id".into(), user.id.clone()));
        vars.push(("user_name".into(), name));
        vars.push(("user_mention".into(), format!("<@{}>", user.id)));
    }
    vars.push(("server_id".into(), interaction.guild_id.clone().unwrap_or_default()));
    vars.push(("channel_id".into(), interaction.channel_id.clone().unwrap_or_default()));
    let channel_name = interaction.channel.as_ref().and_then(|c| c.name.clone()).unwrap_or_default();
    vars.push(("channel_name".into(), channel_name));
    let given = interaction.data.as_ref().map_or(&[][..], |d| d.options.as_slice());
    for option in &tree.options {
        let variable = format!("option_{}", option.name);
        let value = match given.iter().find(|o| o.name == option.name).and_then(|o| o.value.as_ref()) {
            Some(Json::String(s)) => s.clone(),
            Some(v @ (Json::Number(_) | Json::Bool(_))) => v.to_string(),
            Some(_) => {
                return Err(format!("option `{}` has a value that is not text, a number or a boolean", option.name))
            }
            // An optional option the user left out is empty.
            None if !option.required => String::new(),
            None => return Err(format!("required option `{}` was not given", option.name)),
        };
        if !value.is_empty() || option.required {
            tree.check_option_value(&variable, &value)?;
        }
        vars.push((variable, value));
    }
    Ok(vars)
}

/// The IDs a reply may mention: the user who triggered the command and the
/// users the command's `user` and `mentionable` options name. Never roles,
/// `@everyone` or `@here`, whatever the text holds.
pub fn mentionable_users(interaction: &Interaction, tree: &Tree, vars: &[(String, String)]) -> Vec<String> {
    use crate::vocab::OptionType;
    let mut ids: Vec<String> = interaction.user().map(|u| u.id.clone()).into_iter().collect();
    for option in tree.options.iter().filter(|o| matches!(o.kind, OptionType::User | OptionType::Mentionable)) {
        let variable = format!("option_{}", option.name);
        if let Some((_, id)) = vars.iter().find(|(k, v)| *k == variable && !v.is_empty()) {
            ids.push(id.clone());
        }
    }
    ids.sort();
    ids.dedup();
    // The platform takes at most 100.
    ids.truncate(100);
    ids
}
