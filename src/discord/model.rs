//! What the platform sends, typed: an interaction, a Gateway frame and the
//! dispatches blkc reads, and the platform's answers.
//!
//! Everything here is untrusted. Each struct names only the fields blkc
//! uses; the rest of a payload is skipped as it is read, never held (a
//! GUILD_CREATE of several MiB costs the few fields the cache keeps). A
//! field of an unexpected type reads as absent rather than failing the
//! whole payload, as the untyped reads before it did: the platform adds and
//! changes fields, and one odd field must not silence an event.

use serde::de::{DeserializeOwned, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value as Json;

pub use twilight_model::application::command::{CommandOptionType, CommandType};
pub use twilight_model::application::interaction::InteractionType;
pub use twilight_model::channel::message::component::ComponentType;
pub use twilight_model::gateway::OpCode;

/// A field read leniently: a value of another type is `None`.
fn lenient<'de, D: Deserializer<'de>, T: DeserializeOwned>(d: D) -> Result<Option<T>, D::Error> {
    Ok(T::deserialize(Json::deserialize(d)?).ok())
}

/// An id or other text: a string, or a number as written.
fn text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match Json::deserialize(d)? {
        Json::String(s) => Some(s),
        Json::Number(n) => Some(n.to_string()),
        _ => None,
    })
}

/// A field that may be there as `null`: `Some(None)` then, `None` when absent.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<String>>, D::Error> {
    text(d).map(Some)
}

/// A user, as an interaction or a dispatch carries one.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct User {
    #[serde(deserialize_with = "text")]
    pub id: Option<String>,
    #[serde(deserialize_with = "text")]
    pub username: Option<String>,
    #[serde(deserialize_with = "text")]
    pub global_name: Option<String>,
}

/// A server member: the user, and their nickname in that server.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct Member {
    #[serde(deserialize_with = "lenient")]
    pub user: Option<User>,
    #[serde(deserialize_with = "text")]
    pub nick: Option<String>,
    /// The member's roles' ids (in an interaction).
    #[serde(deserialize_with = "lenient")]
    pub roles: Option<Vec<String>>,
    /// The member's permissions in the channel, as the platform computed
    /// them: a decimal string of bits (in an interaction).
    #[serde(deserialize_with = "text")]
    pub permissions: Option<String>,
}

/// A user's name as shown: the server nickname, else the display name,
/// else the user name (the one rule, for commands and events alike).
pub fn display_name(user: Option<&User>, member: Option<&Member>) -> String {
    member
        .and_then(|m| m.nick.clone())
        .or_else(|| user.and_then(|u| u.global_name.clone()))
        .or_else(|| user.and_then(|u| u.username.clone()))
        .unwrap_or_default()
}

/// An interaction, once its signature holds.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct Interaction {
    /// The platform's interaction type, as sent ([`Interaction::kind`]).
    #[serde(rename = "type", deserialize_with = "lenient")]
    pub type_code: Option<u8>,
    #[serde(deserialize_with = "text")]
    pub id: Option<String>,
    #[serde(deserialize_with = "text")]
    pub application_id: Option<String>,
    /// A credential for 15 minutes: never logged.
    #[serde(deserialize_with = "text")]
    pub token: Option<String>,
    #[serde(deserialize_with = "text")]
    pub guild_id: Option<String>,
    #[serde(deserialize_with = "text")]
    pub channel_id: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub channel: Option<NamedChannel>,
    /// In a server.
    #[serde(deserialize_with = "lenient")]
    pub member: Option<Member>,
    /// In a direct message.
    #[serde(deserialize_with = "lenient")]
    pub user: Option<User>,
    pub data: Option<CommandData>,
    /// The message a component is on (a click, a choice, or a form shown
    /// from one).
    #[serde(deserialize_with = "lenient")]
    pub message: Option<MessageRef>,
    /// The language the user's client is set to (`fr`, `pt-BR`).
    #[serde(deserialize_with = "text", skip_serializing_if = "Option::is_none")]
    pub locale: Option<String>,
    /// The server's preferred language (in a server only).
    #[serde(deserialize_with = "text", skip_serializing_if = "Option::is_none")]
    pub guild_locale: Option<String>,
}

/// A message as an interaction names it.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct MessageRef {
    #[serde(deserialize_with = "text")]
    pub id: Option<String>,
    /// Its rows of components, as the platform has them (a button
    /// disabled after its last click is disabled in these).
    #[serde(deserialize_with = "lenient")]
    pub components: Option<Vec<twilight_model::channel::message::Component>>,
    #[serde(deserialize_with = "lenient")]
    pub flags: Option<u64>,
    /// When it was sent (ISO 8601, as the platform writes it).
    #[serde(deserialize_with = "text", skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
}

impl MessageRef {
    /// When it was sent, in milliseconds since 1970; none when the time
    /// is not one.
    pub fn sent_ms(&self) -> Option<i64> {
        let t = self.timestamp.as_deref()?;
        let at = time::OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339).ok()?;
        i64::try_from(at.unix_timestamp_nanos() / 1_000_000).ok()
    }

    /// Only the user it answered sees it: it cannot be edited with the
    /// bot token.
    pub fn ephemeral(&self) -> bool {
        use twilight_model::channel::message::MessageFlags;
        self.flags.is_some_and(|f| MessageFlags::from_bits_truncate(f).contains(MessageFlags::EPHEMERAL))
    }
}

/// A channel as an interaction names it.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct NamedChannel {
    #[serde(deserialize_with = "text")]
    pub name: Option<String>,
}

/// What an interaction says: a command's name and options; a component's
/// id and the values chosen; a form's id and what was typed.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct CommandData {
    #[serde(deserialize_with = "text")]
    pub name: Option<String>,
    pub options: Vec<CommandOption>,
    #[serde(deserialize_with = "text")]
    pub custom_id: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub values: Option<Vec<String>>,
    /// A component's type: 2 a button, 3 a menu of choices, 5 to 8 menus
    /// of users, roles, mentionables and channels.
    #[serde(deserialize_with = "lenient")]
    pub component_type: Option<u8>,
    /// A form's rows, as sent (read by [`Interaction::form_fields`]).
    #[serde(deserialize_with = "lenient")]
    pub components: Option<Json>,
    /// A command's type: 1 a slash command, 2 one in a user's menu, 3 one
    /// in a message's.
    #[serde(rename = "type", deserialize_with = "lenient")]
    pub command_type: Option<u8>,
    /// A context-menu command's user or message.
    #[serde(deserialize_with = "text")]
    pub target_id: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub resolved: Option<Resolved>,
}

/// The users, members and messages an interaction names, by id.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct Resolved {
    #[serde(deserialize_with = "lenient")]
    pub users: Option<std::collections::HashMap<String, User>>,
    #[serde(deserialize_with = "lenient")]
    pub members: Option<std::collections::HashMap<String, Member>>,
    #[serde(deserialize_with = "lenient")]
    pub messages: Option<std::collections::HashMap<String, TargetMessage>>,
    #[serde(deserialize_with = "lenient")]
    pub attachments: Option<std::collections::HashMap<String, Attachment>>,
}

/// A file a user gave as an attachment option: where the platform keeps
/// it, its name, type and size.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(default)]
pub struct Attachment {
    #[serde(deserialize_with = "text")]
    pub url: Option<String>,
    #[serde(deserialize_with = "text")]
    pub filename: Option<String>,
    #[serde(deserialize_with = "text")]
    pub content_type: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub size: Option<u64>,
}

/// Where the platform keeps a file a member uploaded, as its resolved
/// attachment says: the address play's stand-in and the conversation
/// tests give the files they make up.
pub fn attachment_url(id: &str, filename: &str) -> String {
    format!("https://{}/attachments/0/{id}/{}", ATTACHMENT_HOSTS[0], crate::base::urls::encode_value(filename))
}

/// The hosts the platform serves attachments from: a file part of an
/// attachment option is fetched from one of them (over https), or from the
/// platform's own origin (a stand-in's).
pub const ATTACHMENT_HOSTS: &[&str] = &["cdn.discordapp.com", "media.discordapp.net"];

/// A message a message command was chosen on.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct TargetMessage {
    #[serde(deserialize_with = "text")]
    pub content: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub author: Option<User>,
}

/// What a context-menu command was chosen on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A user: their id and their name as shown (the server nickname the
    /// interaction gives, else their display name).
    User { id: String, name: String },
    /// A message: its id, its text, and its author's id and name.
    Message { id: String, content: String, author_id: String, author_name: String },
}

/// The most form fields read from one submission (a form has at most 5).
const FORM_FIELDS: usize = 25;

/// One option a chat user gave.
#[derive(Debug, Deserialize, Serialize)]
pub struct CommandOption {
    pub name: String,
    pub value: Option<Box<RawValue>>,
    /// 1 a subcommand, 2 a group (which hold `options`); the others are
    /// values' types.
    #[serde(default, rename = "type", deserialize_with = "lenient")]
    pub kind: Option<u8>,
    #[serde(default, deserialize_with = "lenient")]
    pub options: Option<Vec<CommandOption>>,
    /// The option the user is typing, in an autocomplete interaction.
    #[serde(default, deserialize_with = "lenient")]
    pub focused: Option<bool>,
}

/// An option's value, as the platform sent it.
#[derive(Debug, Clone, PartialEq)]
pub enum OptionValue {
    Text(String),
    /// A number, exactly as written (`2.50` stays `2.50`).
    Number(String),
    Bool(bool),
    /// Anything else (an object, a list, `null`).
    Other,
}

impl CommandOption {
    pub fn value(&self) -> Option<OptionValue> {
        let raw = self.value.as_ref()?.get();
        Some(match raw.as_bytes().first() {
            Some(b'"') => serde_json::from_str(raw).map_or(OptionValue::Other, OptionValue::Text),
            Some(b't') => OptionValue::Bool(true),
            Some(b'f') => OptionValue::Bool(false),
            Some(b'-' | b'0'..=b'9') => OptionValue::Number(raw.to_string()),
            _ => OptionValue::Other,
        })
    }
}

/// Whether `text` is a JSON object (and not a list, which serde would read
/// into a struct field by field).
fn is_object(text: &[u8]) -> bool {
    text.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{')
}

/// Why a body is not an interaction.
#[derive(Debug)]
pub struct NotAnInteraction(pub String);

impl std::fmt::Display for NotAnInteraction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl Interaction {
    /// A signed body as an interaction: a JSON object.
    pub fn from_slice(body: &[u8]) -> Result<Interaction, NotAnInteraction> {
        if !is_object(body) {
            return Err(NotAnInteraction("an interaction is a JSON object".into()));
        }
        serde_json::from_slice(body).map_err(|e| NotAnInteraction(e.to_string()))
    }

    /// The interaction's type, or the code of one blkc does not know.
    pub fn kind(&self) -> Result<InteractionType, u8> {
        let code = self.type_code.unwrap_or(0);
        InteractionType::try_from(code).map_err(|_| code)
    }

    /// The user who triggered it, in a server or a direct message.
    pub fn user(&self) -> Option<&User> {
        self.member.as_ref().and_then(|m| m.user.as_ref()).or(self.user.as_ref())
    }

    pub fn user_id(&self) -> &str {
        self.user().and_then(|u| u.id.as_deref()).unwrap_or_default()
    }

    pub fn id(&self) -> &str {
        self.id.as_deref().unwrap_or_default()
    }

    pub fn token(&self) -> &str {
        self.token.as_deref().unwrap_or_default()
    }

    pub fn application_id(&self) -> &str {
        self.application_id.as_deref().unwrap_or_default()
    }

    /// The command's whole name: with its group's and its subcommand's
    /// (`settings role add`), as the platform nests them.
    pub fn command(&self) -> String {
        self.leaf().0
    }

    /// The command's name with the subcommand's and group's it holds, and
    /// the options given to the innermost. A level whose name the
    /// platform would not register (a blank in it could pass for two
    /// levels) names no command: the name is then empty.
    fn leaf(&self) -> (String, &[CommandOption]) {
        let Some(data) = self.data.as_ref() else { return (String::new(), &[]) };
        let mut name = data.name.clone().unwrap_or_default();
        let mut options = data.options.as_slice();
        // A command, a group, a subcommand: two levels at most.
        for _ in 0..2 {
            let [o] = options else { break };
            let levels = [CommandOptionType::SubCommand, CommandOptionType::SubCommandGroup];
            if !levels.iter().any(|level| o.kind == Some(*level as u8)) {
                break;
            }
            if !super::names::is_valid(&o.name) {
                return (String::new(), &[]);
            }
            name.push(' ');
            name.push_str(&o.name);
            options = o.options.as_deref().unwrap_or_default();
        }
        (name, options)
    }

    /// The option being typed, in an autocomplete interaction.
    pub fn focused(&self) -> Option<&CommandOption> {
        self.options().iter().find(|o| o.focused == Some(true))
    }

    /// A context-menu command's menu: `user` or `message` (`None` for a
    /// slash command, and for anything else).
    pub fn menu(&self) -> Option<&'static str> {
        match CommandType::from(self.data.as_ref()?.command_type?) {
            CommandType::User => Some("user"),
            CommandType::Message => Some("message"),
            _ => None,
        }
    }

    /// What a context-menu command was chosen on, as `resolved` has it;
    /// `None` when the interaction does not say, or names it by anything
    /// but a snowflake (an id goes into variables a request may read).
    pub fn target(&self) -> Option<Target> {
        let data = self.data.as_ref()?;
        let id = data.target_id.clone().filter(|id| super::is_snowflake(id))?;
        let resolved = data.resolved.as_ref()?;
        match self.menu()? {
            "user" => {
                let user = resolved.users.as_ref()?.get(&id)?;
                let member = resolved.members.as_ref().and_then(|m| m.get(&id));
                Some(Target::User { name: display_name(Some(user), member), id })
            }
            _ => {
                let message = resolved.messages.as_ref()?.get(&id)?;
                let author = message.author.as_ref();
                Some(Target::Message {
                    id,
                    content: message.content.clone().unwrap_or_default(),
                    author_id: author
                        .and_then(|a| a.id.clone())
                        .filter(|id| super::is_snowflake(id))
                        .unwrap_or_default(),
                    author_name: display_name(author, None),
                })
            }
        }
    }

    /// The attachment the interaction gives by `id` (an attachment
    /// option's value).
    pub fn attachment(&self, id: &str) -> Option<&Attachment> {
        self.data.as_ref()?.resolved.as_ref()?.attachments.as_ref()?.get(id)
    }

    /// The options given to the command, or to its subcommand.
    pub fn options(&self) -> &[CommandOption] {
        self.leaf().1
    }

    /// The user's name as shown.
    pub fn user_name(&self) -> String {
        display_name(self.user(), self.member.as_ref())
    }

    /// A component's or a form's id.
    pub fn custom_id(&self) -> &str {
        self.data.as_ref().and_then(|d| d.custom_id.as_deref()).unwrap_or_default()
    }

    /// The values a select menu's user chose (a button has none).
    pub fn values(&self) -> &[String] {
        self.data.as_ref().and_then(|d| d.values.as_deref()).unwrap_or_default()
    }

    /// The users a menu of users (or of mentionables) had chosen: ids only,
    /// at most 25 (a menu's most).
    pub fn chosen_users(&self) -> Vec<String> {
        let kind = self.data.as_ref().and_then(|d| d.component_type);
        if !matches!(kind, Some(5 | 7)) {
            return Vec::new();
        }
        let snowflake = |v: &&String| !v.is_empty() && v.len() <= 20 && v.bytes().all(|b| b.is_ascii_digit());
        self.values().iter().filter(snowflake).take(25).cloned().collect()
    }

    /// The component clicked, as its message shows it: the one whose id is
    /// this interaction's, in the message's rows (`None` when the message
    /// has none such: a forged or stale click).
    pub fn clicked_on_message(&self) -> Option<&twilight_model::channel::message::Component> {
        use twilight_model::channel::message::Component;
        // (A row holds them, or in a layout message a container's row or
        // a section beside its text: never deeper than the platform nests.)
        fn find<'c>(components: &'c [Component], id: &str, depth: usize) -> Option<&'c Component> {
            components.iter().find_map(|c| match c {
                Component::ActionRow(row) if depth < 3 => find(&row.components, id, depth + 1),
                Component::Container(b) if depth == 0 => find(&b.components, id, 1),
                Component::Section(s) if depth < 2 => find(std::slice::from_ref(&*s.accessory), id, depth + 1),
                Component::Button(b) if b.custom_id.as_deref() == Some(id) => Some(c),
                Component::SelectMenu(m) if m.custom_id == id => Some(c),
                _ => None,
            })
        }
        let id = self.custom_id();
        find(self.message.as_ref()?.components.as_deref()?, id, 0)
    }

    /// A component's type, as the interaction says (2 a button, 3 a menu of
    /// choices, 5 to 8 menus of users, roles, mentionables and channels).
    pub fn component_type(&self) -> Option<ComponentType> {
        self.data.as_ref().and_then(|d| d.component_type).map(ComponentType::from)
    }

    /// The id of the message a component is on.
    pub fn message_id(&self) -> Option<&str> {
        self.message.as_ref().and_then(|m| m.id.as_deref())
    }

    /// A submitted form's fields: each input's id and what it holds (a text
    /// input's or a radio group's `value`, a checkbox's `true` or `false`, a
    /// menu's, a group's or an upload's `values`), found in its rows
    /// (`{type 1, components: [{custom_id, value}]}`) or labels (`{type 18,
    /// component: {…}}`), at most [`FORM_FIELDS`], a list at most 25 long.
    pub fn form_fields(&self) -> Vec<(String, FormValue)> {
        fn walk(v: &Json, depth: usize, out: &mut Vec<(String, FormValue)>) {
            if depth > 4 || out.len() >= FORM_FIELDS {
                return;
            }
            match v {
                Json::Array(items) => items.iter().for_each(|i| walk(i, depth + 1, out)),
                Json::Object(o) => {
                    let given = match (o.get("value"), o.get("values")) {
                        (Some(Json::String(value)), _) => Some(FormValue::Text(value.clone())),
                        (Some(Json::Bool(ticked)), _) => Some(FormValue::Ticked(*ticked)),
                        (Some(Json::Null), _) => Some(FormValue::Text(String::new())),
                        (_, Some(Json::Array(values))) => Some(FormValue::List(
                            values.iter().take(25).map(|v| v.as_str().unwrap_or_default().to_string()).collect(),
                        )),
                        _ => None,
                    };
                    if let (Some(Json::String(id)), Some(given)) = (o.get("custom_id"), given) {
                        out.push((id.clone(), given));
                    }
                    for key in ["components", "component"] {
                        if let Some(inner) = o.get(key) {
                            walk(inner, depth + 1, out);
                        }
                    }
                }
                _ => {}
            }
        }
        let mut out = Vec::new();
        if let Some(rows) = self.data.as_ref().and_then(|d| d.components.as_ref()) {
            walk(rows, 0, &mut out);
        }
        out
    }
}

/// What a form's input holds when it is sent.
#[derive(Debug, Clone, PartialEq)]
pub enum FormValue {
    /// A text input's text, a radio group's choice (empty: none).
    Text(String),
    /// A checkbox's.
    Ticked(bool),
    /// A menu's or a group's choices, an upload's files' ids.
    List(Vec<String>),
}

/// A Gateway message, with its `d` left as text until its `op` and `t`
/// say what it is.
#[derive(Debug, Deserialize)]
pub struct Frame<'a> {
    #[serde(default, deserialize_with = "lenient")]
    pub op: Option<u8>,
    #[serde(default, deserialize_with = "lenient")]
    pub s: Option<u64>,
    #[serde(default, deserialize_with = "text")]
    pub t: Option<String>,
    #[serde(borrow, default)]
    pub d: Option<&'a RawValue>,
}

impl Frame<'_> {
    pub fn op(&self) -> Option<OpCode> {
        OpCode::from(self.op?)
    }

    /// HELLO's heartbeat interval, in milliseconds.
    pub fn heartbeat_interval(&self) -> Option<u64> {
        #[derive(Deserialize)]
        struct Hello {
            heartbeat_interval: u64,
        }
        serde_json::from_str::<Hello>(self.d?.get()).ok().map(|h| h.heartbeat_interval)
    }

    /// INVALID_SESSION's flag: whether the session can be resumed.
    pub fn resumable(&self) -> bool {
        self.d.and_then(|d| serde_json::from_str::<bool>(d.get()).ok()).unwrap_or(false)
    }
}

/// A Gateway message as the platform sends it: what `blkc play`'s stand-in
/// writes, typed with the structs serve reads it into ([`Frame`] and the
/// dispatches' own).
#[derive(Debug, Serialize)]
pub struct Sent<'a, D: Serialize> {
    pub op: OpCode,
    pub s: Option<u64>,
    pub t: Option<&'a str>,
    pub d: D,
}

impl<D: Serialize> Sent<'_, D> {
    /// A message of `op` with data and no sequence (HELLO, a heartbeat's ACK).
    pub fn op(op: OpCode, d: D) -> Sent<'static, D> {
        Sent { op, s: None, t: None, d }
    }
}

impl<'a, D: Serialize> Sent<'a, D> {
    /// Dispatch `t`, number `s`.
    pub fn dispatch(t: &'a str, s: Option<u64>, d: D) -> Sent<'a, D> {
        Sent { op: OpCode::Dispatch, s, t: Some(t), d }
    }
}

/// READY.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct Ready {
    #[serde(deserialize_with = "lenient")]
    pub user: Option<User>,
    #[serde(deserialize_with = "text")]
    pub session_id: Option<String>,
    #[serde(deserialize_with = "text")]
    pub resume_gateway_url: Option<String>,
    /// The servers the bot is in, each unavailable until its GUILD_CREATE:
    /// how many, and the ids of the first [`MAX_READY_IDS`] (a GUILD_CREATE
    /// of one of them is the bot connecting, not the bot added).
    pub guilds: GuildList,
}

/// The most server ids kept of READY (a shard holds 2,500 at most).
pub const MAX_READY_IDS: usize = 10_000;

/// READY's servers: their count, and the first ids.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct GuildList {
    pub count: usize,
    pub ids: Vec<String>,
}

impl Serialize for GuildList {
    /// As READY lists them: each unavailable until its GUILD_CREATE.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq as _;
        let mut seq = s.serialize_seq(Some(self.ids.len()))?;
        for id in &self.ids {
            seq.serialize_element(&serde_json::json!({ "id": id, "unavailable": true }))?;
        }
        seq.end()
    }
}

impl<'de> Deserialize<'de> for GuildList {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<GuildList, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = GuildList;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a list of servers")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<GuildList, A::Error> {
                let mut out = GuildList::default();
                while let Some(g) = seq.next_element::<Json>()? {
                    out.count += 1;
                    if out.ids.len() < MAX_READY_IDS {
                        out.ids.extend(g.get("id").and_then(Json::as_str).map(str::to_string));
                    }
                }
                Ok(out)
            }
            fn visit_unit<E>(self) -> Result<GuildList, E> {
                Ok(GuildList::default())
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<GuildList, A::Error> {
                while map.next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?.is_some() {}
                Ok(GuildList::default())
            }
        }
        d.deserialize_any(Visit)
    }
}

/// GUILD_CREATE and GUILD_UPDATE, as far as the cache keeps them: the
/// largest messages the Gateway sends, read for five fields and the
/// channels' names (at most `max_channels`; the rest skipped).
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct Guild {
    #[serde(deserialize_with = "text")]
    pub id: Option<String>,
    #[serde(deserialize_with = "text")]
    pub name: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub member_count: Option<i64>,
    /// `Some(None)`: the server has no system channel (any more).
    #[serde(deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub system_channel_id: Option<Option<String>>,
    #[serde(deserialize_with = "lenient")]
    pub unavailable: Option<bool>,
    #[serde(deserialize_with = "channels")]
    pub channels: Vec<Channel>,
    /// Its members, as far as the Gateway sends them (the first
    /// [`MAX_LISTED`]): their roles, nickname, boost and timeout.
    #[serde(deserialize_with = "listed", skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<Json>,
    /// Who is in which voice channel (the first [`MAX_LISTED`]).
    #[serde(deserialize_with = "listed", skip_serializing_if = "Vec::is_empty")]
    pub voice_states: Vec<Json>,
    /// Its roles (the first [`MAX_LISTED`]), for their names.
    #[serde(deserialize_with = "listed", skip_serializing_if = "Vec::is_empty")]
    pub roles: Vec<Json>,
    #[serde(deserialize_with = "listed", skip_serializing_if = "Vec::is_empty")]
    pub emojis: Vec<Json>,
}

/// The most entries read of a server's members, voice states, roles or
/// emojis (the rest skipped as read).
pub const MAX_LISTED: usize = 1000;

/// The first [`MAX_LISTED`] objects of a list, each as JSON.
fn listed<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Json>, D::Error> {
    struct Listed;
    impl<'de> serde::de::Visitor<'de> for Listed {
        type Value = Vec<Json>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a list")
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<Json>, A::Error> {
            let mut out = Vec::new();
            while out.len() < MAX_LISTED {
                match seq.next_element::<Json>()? {
                    Some(v) if v.is_object() => out.push(v),
                    Some(_) => {}
                    None => return Ok(out),
                }
            }
            while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
            Ok(out)
        }
        fn visit_unit<E>(self) -> Result<Vec<Json>, E> {
            Ok(Vec::new())
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Vec<Json>, A::Error> {
            while map.next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?.is_some() {}
            Ok(Vec::new())
        }
    }
    d.deserialize_any(Listed)
}

/// The most channels read of one server (the platform allows 500).
pub const MAX_CHANNELS: usize = 1000;

/// A server's channels, the first [`MAX_CHANNELS`] kept.
fn channels<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Channel>, D::Error> {
    struct Channels;
    impl<'de> serde::de::Visitor<'de> for Channels {
        type Value = Vec<Channel>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a list of channels")
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<Channel>, A::Error> {
            let mut out = Vec::new();
            while out.len() < MAX_CHANNELS {
                match seq.next_element::<Json>()? {
                    Some(c) => out.extend(Channel::deserialize(c).ok()),
                    None => return Ok(out),
                }
            }
            while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
            Ok(out)
        }
        fn visit_unit<E>(self) -> Result<Vec<Channel>, E> {
            Ok(Vec::new())
        }
    }
    d.deserialize_any(Channels)
}

/// A channel: CHANNEL_CREATE, _UPDATE and _DELETE, and a server's list.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct Channel {
    #[serde(deserialize_with = "text")]
    pub id: Option<String>,
    #[serde(deserialize_with = "text")]
    pub name: Option<String>,
    #[serde(deserialize_with = "text")]
    pub guild_id: Option<String>,
}

/// A dispatch blkc reads: those the cache keeps and those an event tree
/// can run on. Others (typing, member chunks) are never parsed.
#[derive(Debug)]
pub enum Dispatch {
    Ready(Ready),
    Resumed,
    GuildCreate(Guild),
    GuildUpdate(Guild),
    GuildDelete(Guild),
    /// Any other dispatch an event kind runs on: its name, and of its data
    /// only the top-level fields blkc reads (`discord::events::fields`).
    Event(&'static str, Fields),
    /// An interaction delivered over the Gateway (the application has no
    /// Interactions Endpoint URL).
    InteractionCreate(Box<Interaction>),
}

/// The fields of a dispatch's data that blkc reads, by name.
pub type Fields = serde_json::Map<String, Json>;

impl Dispatch {
    /// Dispatch `t` with data `raw`; `None` for one blkc does not read
    /// (its data is never parsed), or whose data is not an object.
    pub fn parse(t: &str, raw: &str) -> Option<Dispatch> {
        fn read<T: DeserializeOwned>(raw: &str) -> Option<T> {
            is_object(raw.as_bytes()).then(|| serde_json::from_str(raw).ok()).flatten()
        }
        Some(match t {
            "READY" => Dispatch::Ready(read(raw)?),
            "RESUMED" => Dispatch::Resumed,
            "INTERACTION_CREATE" => {
                Dispatch::InteractionCreate(Box::new(Interaction::from_slice(raw.as_bytes()).ok()?))
            }
            "GUILD_CREATE" => Dispatch::GuildCreate(read(raw)?),
            "GUILD_UPDATE" => Dispatch::GuildUpdate(read(raw)?),
            "GUILD_DELETE" => Dispatch::GuildDelete(read(raw)?),
            _ => {
                let (t, wanted) = super::events::fields(t)?;
                Dispatch::Event(t, pick(raw, wanted)?)
            }
        })
    }

    /// What identifies this occurrence across the sessions that receive
    /// it, where the platform gives it an identity of its own: a message's,
    /// channel's, thread's, role's, invite's, scheduled event's or
    /// entitlement's id, a session's, a member's join. `None`: it is known
    /// only by its payload.
    pub fn own_identity(&self) -> Option<String> {
        let text = |f: &Fields, k: &str| f.get(k).and_then(Json::as_str).map(str::to_string);
        match self {
            Dispatch::Ready(r) => r.session_id.clone(),
            Dispatch::Event(t, f) => match *t {
                "MESSAGE_CREATE"
                | "MESSAGE_DELETE"
                | "CHANNEL_CREATE"
                | "CHANNEL_DELETE"
                | "THREAD_CREATE"
                | "THREAD_DELETE"
                | "GUILD_SCHEDULED_EVENT_CREATE"
                | "GUILD_SCHEDULED_EVENT_DELETE"
                | "ENTITLEMENT_CREATE"
                | "ENTITLEMENT_DELETE" => text(f, "id"),
                "INVITE_CREATE" | "INVITE_DELETE" => text(f, "code"),
                "GUILD_ROLE_CREATE" => f.get("role")?.get("id")?.as_str().map(str::to_string),
                "GUILD_ROLE_DELETE" => text(f, "role_id"),
                "GUILD_MEMBER_ADD" => {
                    let user = f.get("user")?.get("id")?.as_str()?;
                    let at = text(f, "joined_at")?;
                    Some(format!("{}:{user}:{at}", text(f, "guild_id").unwrap_or_default()))
                }
                _ => None,
            },
            _ => None,
        }
    }
}

/// Of a JSON object, the top-level fields named `wanted`, each read as
/// JSON; the rest skipped as read. `None` when it is not an object.
fn pick(raw: &str, wanted: &[&str]) -> Option<Fields> {
    if !is_object(raw.as_bytes()) {
        return None;
    }
    let all: std::collections::HashMap<std::borrow::Cow<'_, str>, &RawValue> = serde_json::from_str(raw).ok()?;
    let mut out = Fields::new();
    for k in wanted {
        if let Some(v) = all.get(*k).and_then(|v| serde_json::from_str::<Json>(v.get()).ok()) {
            out.insert((*k).to_string(), v);
        }
    }
    Some(out)
}

/// What `GET /gateway/bot` answers.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct GatewayBot {
    #[serde(deserialize_with = "text")]
    pub url: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub shards: Option<u64>,
    #[serde(deserialize_with = "lenient")]
    pub session_start_limit: Option<SessionStartLimit>,
}

#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[serde(default)]
pub struct SessionStartLimit {
    #[serde(deserialize_with = "lenient")]
    pub remaining: Option<u64>,
    #[serde(deserialize_with = "lenient")]
    pub reset_after: Option<u64>,
    #[serde(deserialize_with = "lenient")]
    pub max_concurrency: Option<u64>,
}

/// The body of an error the platform answers.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct ErrorBody {
    /// The platform's JSON error code (`50013`: Missing Permissions).
    #[serde(deserialize_with = "lenient")]
    pub code: Option<u64>,
    #[serde(deserialize_with = "text")]
    pub message: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_field_of_another_type_reads_as_absent_and_the_rest_still_reads() {
        let i: Interaction = serde_json::from_str(
            r#"{"type":2,"id":123,"token":"t","member":{"user":{"id":"5","username":7},"nick":["x"]},
                "channel":"oops","data":{"name":"roll","options":[{"name":"n","value":2.50},{"name":"s","value":"hi"},
                {"name":"b","value":true},{"name":"o","value":{"x":1}}]}}"#,
        )
        .unwrap();
        assert_eq!(
            (i.kind(), i.id(), i.user_id(), i.command().as_str()),
            (Ok(InteractionType::ApplicationCommand), "123", "5", "roll")
        );
        assert_eq!(i.user_name(), "7");
        assert!(i.channel.is_none());
        let values: Vec<Option<OptionValue>> = i.options().iter().map(CommandOption::value).collect();
        assert_eq!(
            values,
            [
                Some(OptionValue::Number("2.50".into())),
                Some(OptionValue::Text("hi".into())),
                Some(OptionValue::Bool(true)),
                Some(OptionValue::Other)
            ]
        );
        let odd: Interaction = serde_json::from_str(r#"{"type":99}"#).unwrap();
        assert_eq!(odd.kind(), Err(99));
    }

    #[test]
    fn a_server_is_read_for_what_the_cache_keeps_and_its_channels_within_the_bound() {
        let channels: Vec<String> =
            (0..MAX_CHANNELS + 5).map(|i| format!(r#"{{"id":"{i}","name":"c{i}","topic":"t"}}"#)).collect();
        let raw = format!(
            r#"{{"id":"7","name":"Home","member_count":3,"system_channel_id":null,"members":[{{"x":1}}],"channels":[{}]}}"#,
            channels.join(",")
        );
        let Some(Dispatch::GuildCreate(g)) = Dispatch::parse("GUILD_CREATE", &raw) else { panic!() };
        assert_eq!((g.id.as_deref(), g.name.as_deref(), g.member_count), (Some("7"), Some("Home"), Some(3)));
        assert_eq!(g.system_channel_id, Some(None));
        assert_eq!(g.channels.len(), MAX_CHANNELS);
        assert!(Dispatch::parse("TYPING_START", "{}").is_none());
        assert!(
            matches!(Dispatch::parse("PRESENCE_UPDATE", r#"{"status":"idle","x":[1]}"#), Some(Dispatch::Event("PRESENCE_UPDATE", f)) if f.len() == 1)
        );
        assert!(Dispatch::parse("MESSAGE_CREATE", "null").is_none());
        assert!(Dispatch::parse("MESSAGE_CREATE", "[1]").is_none());
        assert!(Interaction::from_slice(b" [1, 2, 3]").is_err());
        let Some(Dispatch::Ready(r)) = Dispatch::parse("READY", r#"{"guilds":[{"id":"1"},{"id":"2"}]}"#) else {
            panic!()
        };
        assert_eq!((r.guilds.count, r.guilds.ids.len()), (2, 2));
    }
}
