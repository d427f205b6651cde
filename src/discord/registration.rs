//! The commands' registration payload (`PUT …/commands`, a bulk
//! overwrite), typed with `twilight-model`'s command and option types.
//! `language::registration` builds it from a file.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;
use twilight_model::application::command::{CommandOptionType, CommandType};
use twilight_model::application::interaction::InteractionContextType;
use twilight_model::channel::ChannelType;
use twilight_model::guild::Permissions;
use twilight_model::oauth::ApplicationIntegrationType;

use crate::discord::options::OptionType;

/// One slash command to register.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Command {
    #[serde(rename = "type")]
    pub kind: CommandType,
    pub name: String,
    pub description: String,
    pub options: Vec<CommandOption>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// What a command registers besides its options (each left out when the
/// file says nothing of it, and the platform's default holds).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Extra {
    /// Who may use it by default: the permissions' bits, as the decimal
    /// string the platform wants.
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "bits")]
    pub default_member_permissions: Option<Permissions>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub contexts: Option<Vec<InteractionContextType>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub integration_types: Option<Vec<ApplicationIntegrationType>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nsfw: Option<bool>,
    #[serde(flatten)]
    pub locales: Localizations,
}

/// A command's or an option's name and description by locale.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Localizations {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name_localizations: Option<BTreeMap<String, String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description_localizations: Option<BTreeMap<String, String>>,
}

impl Localizations {
    /// Whether a registered command's or option's localizations are these
    /// (none and an empty map are the same).
    fn same(&self, names: Option<&HashMap<String, String>>, descriptions: Option<&HashMap<String, String>>) -> bool {
        fn equal(ours: Option<&BTreeMap<String, String>>, theirs: Option<&HashMap<String, String>>) -> bool {
            let (ours_len, theirs_len) = (ours.map_or(0, BTreeMap::len), theirs.map_or(0, HashMap::len));
            ours_len == theirs_len && ours.into_iter().flatten().all(|(k, v)| theirs.and_then(|t| t.get(k)) == Some(v))
        }
        equal(self.name_localizations.as_ref(), names) && equal(self.description_localizations.as_ref(), descriptions)
    }
}

impl Extra {
    /// What of these differs from a registered command's, by name. A field
    /// blkc leaves out is the platform's default: absent, or as the platform
    /// lists a default (`nsfw: false`).
    fn changed(&self, r: &twilight_model::application::command::Command) -> Vec<&'static str> {
        let mut what = Vec::new();
        if self.default_member_permissions != r.default_member_permissions {
            what.push("permissions");
        }
        // Left out, each is the platform's default, as it lists it: no
        // contexts (every one), installs in a server only. A line taken out
        // of the file is a change back to that.
        let (contexts, theirs) = (self.contexts.as_deref().unwrap_or_default(), r.contexts.as_deref());
        if contexts != theirs.unwrap_or_default() {
            what.push("contexts");
        }
        let server = [ApplicationIntegrationType::GuildInstall];
        let installs = |t: &Option<Vec<ApplicationIntegrationType>>| t.clone().unwrap_or(server.to_vec());
        if installs(&self.integration_types) != installs(&r.integration_types) {
            what.push("installs");
        }
        if self.nsfw.unwrap_or(false) != r.nsfw.unwrap_or(false) {
            what.push("nsfw");
        }
        if !self.locales.same(r.name_localizations.as_ref(), r.description_localizations.as_ref()) {
            what.push("locales");
        }
        what
    }
}

fn bits<S: serde::Serializer>(permissions: &Option<Permissions>, out: S) -> Result<S::Ok, S::Error> {
    match permissions {
        Some(p) => out.serialize_str(&p.bits().to_string()),
        None => out.serialize_none(),
    }
}

/// The words of `contexts`: where a command can be used.
pub const CONTEXTS: &[(&str, InteractionContextType, &str)] = &[
    ("server", InteractionContextType::Guild, "in a server's channels"),
    ("bot_dm", InteractionContextType::BotDm, "in a direct message with the bot"),
    ("private_channel", InteractionContextType::PrivateChannel, "in other direct and group messages (a user install)"),
];

/// The words of `installs`: the installations that offer a command.
pub const INSTALLS: &[(&str, ApplicationIntegrationType, &str)] = &[
    ("server", ApplicationIntegrationType::GuildInstall, "when the bot is added to a server"),
    ("user", ApplicationIntegrationType::UserInstall, "when a user adds the app to their account"),
];

/// The words of an option's `in`: the kinds of channel.
pub const CHANNEL_TYPES: &[(&str, ChannelType)] = &[
    ("text", ChannelType::GuildText),
    ("voice", ChannelType::GuildVoice),
    ("category", ChannelType::GuildCategory),
    ("announcement", ChannelType::GuildAnnouncement),
    ("announcement_thread", ChannelType::AnnouncementThread),
    ("public_thread", ChannelType::PublicThread),
    ("private_thread", ChannelType::PrivateThread),
    ("stage", ChannelType::GuildStageVoice),
    ("directory", ChannelType::GuildDirectory),
    ("forum", ChannelType::GuildForum),
    ("media", ChannelType::GuildMedia),
    ("dm", ChannelType::Private),
    ("group_dm", ChannelType::Group),
];

/// The platform's locales, with the language each names.
pub const LOCALES: &[(&str, &str)] = &[
    ("id", "Indonesian"),
    ("da", "Danish"),
    ("de", "German"),
    ("en-GB", "English, UK"),
    ("en-US", "English, US"),
    ("es-ES", "Spanish"),
    ("es-419", "Spanish, Latin America"),
    ("fr", "French"),
    ("hr", "Croatian"),
    ("it", "Italian"),
    ("lt", "Lithuanian"),
    ("hu", "Hungarian"),
    ("nl", "Dutch"),
    ("no", "Norwegian"),
    ("pl", "Polish"),
    ("pt-BR", "Portuguese, Brazilian"),
    ("ro", "Romanian, Romania"),
    ("fi", "Finnish"),
    ("sv-SE", "Swedish"),
    ("vi", "Vietnamese"),
    ("tr", "Turkish"),
    ("cs", "Czech"),
    ("el", "Greek"),
    ("bg", "Bulgarian"),
    ("ru", "Russian"),
    ("uk", "Ukrainian"),
    ("hi", "Hindi"),
    ("th", "Thai"),
    ("zh-CN", "Chinese, China"),
    ("ja", "Japanese"),
    ("zh-TW", "Chinese, Taiwan"),
    ("ko", "Korean"),
];

/// A permission by its word: the platform's name in lower case
/// (`ban_members`, `manage_guild`), as twilight-model names its flags.
pub fn permission(word: &str) -> Option<Permissions> {
    if word.bytes().any(|b| b.is_ascii_uppercase()) {
        return None;
    }
    Permissions::from_name(&word.to_ascii_uppercase())
}

/// A member's permissions as a person writes them: the platform's names in
/// lower case (`kick_members, ban_members`) or bits (`8`), or both, split
/// by commas or spaces; a word that is neither is said, with the name it
/// most likely meant.
pub fn permission_bits(text: &str) -> Result<u64, String> {
    let mut bits = 0u64;
    for word in text.split([',', ' ']).filter(|w| !w.is_empty()) {
        bits |= match word.parse::<u64>() {
            Ok(n) => n,
            Err(_) => match permission(word) {
                Some(p) => p.bits(),
                None => {
                    let words = permission_words();
                    let meant = crate::base::diagnostics::did_you_mean(word, words.iter().map(String::as_str));
                    let hint = meant.map(|m| format!("; did you mean `{m}`?")).unwrap_or_default();
                    return Err(format!("no permission is called `{word}`{hint}"));
                }
            },
        };
    }
    Ok(bits)
}

/// Every permission's word, for did-you-mean and completion.
pub fn permission_words() -> Vec<String> {
    use bitflags::Flags;
    Permissions::FLAGS.iter().map(|f| f.name().to_ascii_lowercase()).collect()
}

/// One of a command's options.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CommandOption {
    #[serde(rename = "type")]
    pub kind: CommandOptionType,
    pub name: String,
    pub description: String,
    /// Whether the user must give it (none for a subcommand or a group).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub choices: Option<Vec<Choice>>,
    /// Whether its choices are offered as the user types (`autocomplete`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub autocomplete: Option<bool>,
    /// A subcommand's options, or a group's subcommands.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub options: Option<Vec<CommandOption>>,
    #[serde(flatten)]
    pub bounds: Bounds,
    /// A `channel` option's kinds of channel (`in text, forum`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub channel_types: Option<Vec<ChannelType>>,
    /// An `attachment` option's kinds of file (`types "image .pdf"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_types: Option<Vec<String>>,
    #[serde(flatten)]
    pub locales: Localizations,
}

/// An option's `min`/`max`: a number's `min_value`/`max_value` (exactly as
/// written), a text's `min_length`/`max_length`.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Bounds {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_value: Option<serde_json::Number>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_value: Option<serde_json::Number>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u16>,
}

impl Bounds {
    /// A checked option's bounds (`(is max, as written)`), as its type
    /// sends them.
    pub fn of<'a>(kind: OptionType, bounds: impl Iterator<Item = (bool, &'a str)>) -> Bounds {
        let mut out = Bounds::default();
        for (max, written) in bounds {
            match kind {
                OptionType::String => {
                    let n = written.parse::<u16>().ok();
                    if max {
                        out.max_length = n
                    } else {
                        out.min_length = n
                    }
                }
                _ => {
                    let n = written.parse::<serde_json::Number>().ok();
                    if max {
                        out.max_value = n
                    } else {
                        out.min_value = n
                    }
                }
            }
        }
        out
    }

    /// Whether a registered option has these bounds: its lengths, and its
    /// values (`registered`, as [`read`] took them out) as numbers.
    fn same(
        &self,
        r: &twilight_model::application::command::CommandOption,
        registered: Option<&(Option<serde_json::Number>, Option<serde_json::Number>)>,
    ) -> bool {
        let value = |ours: &Option<serde_json::Number>, theirs: Option<&serde_json::Number>| match (ours, theirs) {
            (None, None) => true,
            (Some(a), Some(b)) => {
                let (a, b) = (serde_json::Value::String(a.to_string()), serde_json::Value::String(b.to_string()));
                crate::base::values::order(&a, &b).is_eq()
            }
            _ => false,
        };
        let (min, max) = registered.map_or((None, None), |(a, b)| (a.as_ref(), b.as_ref()));
        value(&self.min_value, min)
            && value(&self.max_value, max)
            && self.min_length == r.min_length
            && self.max_length == r.max_length
    }
}

/// A choice: its name, and its value as the option's type wants it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Choice {
    pub name: String,
    pub value: ChoiceValue,
    /// Its name in other languages (`locale fr … { "Red" "Rouge" }`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name_localizations: Option<BTreeMap<String, String>>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(untagged)]
pub enum ChoiceValue {
    Text(String),
    /// A number exactly as written (`2.50` is registered as `2.50`: the
    /// JSON reader keeps a number's digits).
    Number(serde_json::Number),
}

impl ChoiceValue {
    /// A number as written; `None` if it is not a JSON number.
    pub fn number(written: &str) -> Option<ChoiceValue> {
        crate::base::values::is_json_number(written)
            .then(|| written.parse::<serde_json::Number>().ok().map(ChoiceValue::Number))
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
pub fn slash(name: &str, description: &str, options: Vec<CommandOption>, extra: Extra) -> Command {
    Command { kind: CommandType::ChatInput, name: name.into(), description: description.into(), options, extra }
}

/// The menus a context-menu command can be in: its word, its type, and
/// what the word means.
pub const MENUS: &[(&str, CommandType, &str)] = &[
    ("user", CommandType::User, "in the menu of a user (Apps)"),
    ("message", CommandType::Message, "in the menu of a message (Apps)"),
];

/// How a command is named in what `blkc deploy` says: `/name` for a slash
/// command, `Name (user menu)` for a context-menu one (on one line: a
/// registered name is the platform's).
pub fn shown(kind: CommandType, name: &str) -> String {
    let name = crate::base::display::one_line(name);
    match kind {
        CommandType::User => format!("{name} (user menu)"),
        CommandType::Message => format!("{name} (message menu)"),
        _ => format!("/{name}"),
    }
}

/// A context-menu command (`type` 2 or 3): a name, no description, no
/// options.
pub fn menu(kind: CommandType, name: &str, extra: Extra) -> Command {
    Command { kind, name: name.into(), description: String::new(), options: Vec::new(), extra }
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
                None => out.added.push(shown(w.kind, &w.name)),
                Some(r) => {
                    let mut what = Vec::new();
                    if r.description != w.description {
                        what.push("description");
                    }
                    if !same_options(&w.options, &r.options, (&r.bounds, &r.file_types), "") {
                        what.push("options");
                    }
                    what.extend(w.extra.changed(r));
                    if what.is_empty() {
                        out.unchanged.push(shown(w.kind, &w.name));
                    } else {
                        out.changed.push((shown(w.kind, &w.name), what));
                    }
                }
            }
        }
        for r in registered {
            if !wanted.iter().any(|w| w.name == r.name && w.kind == r.kind) {
                out.removed.push(shown(r.kind, &r.name));
            }
        }
        out
    }

    /// One line: `1 added (/a), 1 changed (/b: options), 1 removed (/c), 2 unchanged`.
    pub fn summary(&self) -> String {
        // (Each name as [`shown`] made it: a registered one on one line.)
        let names = |v: &[String]| v.join(", ");
        let mut parts = Vec::new();
        if !self.added.is_empty() {
            parts.push(format!("{} added ({})", self.added.len(), names(&self.added)));
        }
        if !self.changed.is_empty() {
            let each: Vec<String> = self.changed.iter().map(|(n, what)| format!("{n}: {}", what.join(", "))).collect();
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

/// A command as the platform lists it: twilight-model's type, and its
/// options' numbers as the platform wrote them.
///
/// twilight reads an option's `min_value`/`max_value` and a choice's
/// value through untagged enums, which cannot read a number once
/// serde_json keeps numbers exactly (`arbitrary_precision`, which blkc
/// needs for 18-digit ids and exact decimals): a registered `number` choice
/// of `0.5` made every later deploy fail to read the list. [`read`] takes
/// those numbers out first: the bounds into [`Registered::bounds`], and a
/// choice's number as its text.
#[derive(Debug, Clone)]
pub struct Registered {
    pub command: twilight_model::application::command::Command,
    /// Each top-level option's `min_value` and `max_value`, as written.
    pub bounds: Bounded,
    /// Each option's `file_types` (twilight's option has no such field),
    /// by the option's path as [`Bounded`]'s.
    pub file_types: HashMap<String, Vec<String>>,
}

/// Each option's `min_value` and `max_value` as the platform wrote them,
/// by the option's path (`show/count` for option `count` of subcommand
/// `show`).
pub type Bounded = HashMap<String, (Option<serde_json::Number>, Option<serde_json::Number>)>;

impl std::ops::Deref for Registered {
    type Target = twilight_model::application::command::Command;
    fn deref(&self) -> &Self::Target {
        &self.command
    }
}

/// Reads the platform's list of registered commands (see [`Registered`]).
pub fn read(bytes: &[u8]) -> Result<Vec<Registered>, serde_json::Error> {
    use serde_json::Value;
    let list: Vec<Value> = serde_json::from_slice(bytes)?;
    let mut out = Vec::with_capacity(list.len());
    for mut command in list {
        let mut bounds = Bounded::new();
        numbers_taken(&mut command, "", &mut bounds);
        let mut file_types = HashMap::new();
        file_types_of(&command, "", &mut file_types);
        out.push(Registered { command: serde_json::from_value(command)?, bounds, file_types });
    }
    Ok(out)
}

/// The numbers of a command's options (at every level) that twilight
/// reads through untagged enums: their bounds taken out into `bounds`,
/// their choices' values turned to text.
fn numbers_taken(holder: &mut serde_json::Value, prefix: &str, bounds: &mut Bounded) {
    use serde_json::Value;
    let Some(options) = holder.get_mut("options").and_then(Value::as_array_mut) else { return };
    for option in options {
        let path = format!("{prefix}{}", option.get("name").and_then(Value::as_str).unwrap_or_default());
        let mut take = |key: &str| match option.as_object_mut().and_then(|o| o.remove(key)) {
            Some(Value::Number(n)) => Some(n),
            _ => None,
        };
        let taken = (take("min_value"), take("max_value"));
        if taken != (None, None) {
            bounds.insert(path.clone(), taken);
        }
        if let Some(choices) = option.get_mut("choices").and_then(Value::as_array_mut) {
            for choice in choices {
                if let Some(value) = choice.get_mut("value").filter(|v| v.is_number()) {
                    *value = Value::String(value.to_string());
                }
            }
        }
        numbers_taken(option, &format!("{path}/"), bounds);
    }
}

/// The `file_types` of a command's options at every level, by path.
fn file_types_of(holder: &serde_json::Value, prefix: &str, out: &mut HashMap<String, Vec<String>>) {
    for option in holder.get("options").and_then(serde_json::Value::as_array).into_iter().flatten() {
        let path = format!("{prefix}{}", option.get("name").and_then(serde_json::Value::as_str).unwrap_or_default());
        if let Some(types) = option.get("file_types").and_then(serde_json::Value::as_array) {
            out.insert(path.clone(), types.iter().filter_map(|t| t.as_str().map(str::to_lowercase)).collect());
        }
        file_types_of(option, &format!("{path}/"), out);
    }
}

/// Whether the options (or subcommands) to register are those registered,
/// at every level; `prefix` is their path's (`show/`).
fn same_options(
    wanted: &[CommandOption],
    registered: &[twilight_model::application::command::CommandOption],
    (bounds, file_types): (&Bounded, &HashMap<String, Vec<String>>),
    prefix: &str,
) -> bool {
    wanted.len() == registered.len()
        && wanted.iter().zip(registered).all(|(w, r)| {
            let path = format!("{prefix}{}", w.name);
            let channels =
                w.channel_types.as_deref().unwrap_or_default() == r.channel_types.as_deref().unwrap_or_default();
            let empty = Vec::new();
            let (ours, theirs) = (w.options.as_ref().unwrap_or(&empty), r.options.as_deref().unwrap_or_default());
            w.kind == r.kind
                && w.name == r.name
                && w.description == r.description
                && w.required.unwrap_or(false) == r.required.unwrap_or(false)
                && w.autocomplete.unwrap_or(false) == r.autocomplete.unwrap_or(false)
                && same_choices(w.choices.as_deref().unwrap_or_default(), r.choices.as_deref().unwrap_or_default())
                && w.bounds.same(r, bounds.get(&path))
                && w.file_types.as_deref().unwrap_or_default()
                    == file_types.get(&path).map(Vec::as_slice).unwrap_or_default()
                && channels
                && w.locales.same(r.name_localizations.as_ref(), r.description_localizations.as_ref())
                && same_options(ours, theirs, (bounds, file_types), &format!("{path}/"))
        })
}

fn same_choices(wanted: &[Choice], registered: &[twilight_model::application::command::CommandOptionChoice]) -> bool {
    use twilight_model::application::command::CommandOptionChoiceValue as V;
    wanted.len() == registered.len()
        && wanted.iter().zip(registered).all(|(w, r)| {
            w.name == r.name
                && w.name_localizations.clone().unwrap_or_default()
                    == r.name_localizations.clone().map(|m| m.into_iter().collect()).unwrap_or_default()
                && match (&w.value, &r.value) {
                    (ChoiceValue::Text(a), V::String(b)) => a == b,
                    (ChoiceValue::Number(a), V::Integer(b)) => a.to_string().parse::<i64>().ok() == Some(*b),
                    (ChoiceValue::Number(a), V::Number(b)) => a.to_string().parse::<f64>().ok() == Some(*b),
                    // A number as [`read`] gave it: its text.
                    (ChoiceValue::Number(a), V::String(b)) => {
                        let (a, b) = (serde_json::Value::String(a.to_string()), serde_json::Value::String(b.clone()));
                        crate::base::values::order(&a, &b).is_eq()
                            && crate::base::values::is_json_number(b.as_str().unwrap_or(""))
                    }
                    _ => false,
                }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As the platform lists them: numbers that serde_json keeps exactly
    /// and twilight reads through untagged enums.
    const LISTED: &str = r#"[{"id":"1","application_id":"2","version":"1","type":1,"name":"roll","description":"Roll",
        "options":[{"type":10,"name":"r","description":"x","min_value":-0.5,"max_value":2.5,
                    "choices":[{"name":"Half","value":0.5}]},
                   {"type":4,"name":"n","description":"y","min_value":2,"max_value":120}]}]"#;

    #[test]
    fn a_registered_list_with_number_choices_and_bounds_is_read_and_compared() {
        let listed = read(LISTED.as_bytes()).unwrap();
        assert_eq!(listed[0].name, "roll");
        assert_eq!(listed[0].bounds["r"].0.as_ref().map(ToString::to_string).as_deref(), Some("-0.5"));
        let number = |t: &str| ChoiceValue::number(t).unwrap();
        let option = |kind, name: &str, bounds: Bounds, choices| CommandOption {
            kind,
            name: name.into(),
            description: if name == "r" { "x".into() } else { "y".into() },
            required: Some(false),
            choices,
            autocomplete: None,
            options: None,
            bounds,
            channel_types: None,
            file_types: None,
            locales: Localizations::default(),
        };
        let wanted = |max: &str| {
            let r = Bounds::of(OptionType::Number, [(false, "-0.5"), (true, "2.5")].into_iter());
            let n = Bounds::of(OptionType::Integer, [(false, "2"), (true, max)].into_iter());
            let half = vec![Choice { name: "Half".into(), value: number("0.50"), name_localizations: None }];
            slash(
                "roll",
                "Roll",
                vec![
                    option(CommandOptionType::Number, "r", r, Some(half)),
                    option(CommandOptionType::Integer, "n", n, None),
                ],
                Extra::default(),
            )
        };
        assert_eq!(Changes::between(&[wanted("120")], &listed).unchanged, ["/roll"]);
        assert_eq!(Changes::between(&[wanted("100")], &listed).changed, [("/roll".to_string(), vec!["options"])]);
    }

    #[test]
    fn permissions_are_read_by_name_or_bits_and_a_wrong_name_is_said() {
        assert_eq!(permission_bits("kick_members, ban_members"), Ok((1 << 1) | (1 << 2)));
        assert_eq!(permission_bits("8 kick_members"), Ok(8 | (1 << 1)));
        assert_eq!(permission_bits(""), Ok(0));
        let wrong = permission_bits("kick_memberz").unwrap_err();
        assert!(wrong.contains("`kick_memberz`") && wrong.contains("did you mean `kick_members`?"), "{wrong}");
        assert!(permission_bits("KICK_MEMBERS").is_err(), "the names are written in lower case");
    }

    /// An attachment option's kinds of file, which twilight's registered
    /// option does not hold, are read from the list and compared.
    #[test]
    fn an_attachment_option_s_file_types_are_compared_with_those_registered() {
        let listed = r#"[{"id":"1","application_id":"2","version":"1","type":1,"name":"up","description":"Up",
            "options":[{"type":11,"name":"doc","description":"A file","file_types":["image",".PDF"]}]}]"#;
        let listed = read(listed.as_bytes()).unwrap();
        assert_eq!(listed[0].file_types["doc"], ["image", ".pdf"]);
        let wanted = |types: Option<Vec<String>>| {
            let doc = CommandOption {
                kind: CommandOptionType::Attachment,
                name: "doc".into(),
                description: "A file".into(),
                required: Some(false),
                choices: None,
                autocomplete: None,
                options: None,
                bounds: Bounds::default(),
                channel_types: None,
                file_types: types,
                locales: Localizations::default(),
            };
            slash("up", "Up", vec![doc], Extra::default())
        };
        let types = |t: &[&str]| Some(t.iter().map(|s| s.to_string()).collect());
        assert_eq!(Changes::between(&[wanted(types(&["image", ".pdf"]))], &listed).unchanged, ["/up"]);
        let changed = Changes::between(&[wanted(types(&["image"]))], &listed).changed;
        assert_eq!(changed, [("/up".to_string(), vec!["options"])]);
        assert_eq!(Changes::between(&[wanted(None)], &listed).changed.len(), 1, "a filter taken away is a change");
    }
}
