//! A message as blkc sends it, in blkc's own terms: text, embeds,
//! components, a form or choices ([`Message`], [`Outgoing`]), and how
//! each is held to the platform's limits (cut, split into pieces). The
//! runner builds them (`language::message`); `discord::message` writes
//! them in the platform's wire form.

use crate::discord::limits;

/// One message.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Message {
    pub content: String,
    /// Only the user who triggered it sees it (an interaction's answer).
    pub ephemeral: bool,
    /// Whom it may ping: these users and no one else. Never roles,
    /// `@everyone` or `@here`, whatever the content holds, so that text a
    /// chat user supplied can never ping anyone the command did not name.
    pub mentions: Vec<String>,
    /// At most [`limits::EMBEDS`], each within the platform's limits
    /// (`language::message::embed` makes them so).
    pub embeds: Vec<Embed>,
    /// Buttons and select menus, in order (laid out in rows by
    /// [`limits::rows`]).
    pub components: Vec<Component>,
    /// An edit of the message a component is on, not a new message.
    pub update: bool,
    /// A layout message's parts (then `content` is empty, `embeds` and
    /// `components` are none: the parts hold its texts and components).
    pub layout: Vec<Block>,
    /// A poll the message carries.
    pub poll: Option<Poll>,
    /// The files it carries (at most [`limits::FILES`], each within
    /// [`limits::UPLOAD_BYTES`]): sent as multipart, the message's body in
    /// `payload_json` (`discord::message::files`).
    pub files: Vec<File>,
}

/// A file a message carries: its name (what `attachment://` names), its
/// media type, its description (alt text), whether it is hidden as a
/// spoiler, and its bytes.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct File {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub spoiler: bool,
    /// (Written out as its `size` in bytes.)
    #[serde(rename = "size", serialize_with = "length")]
    pub bytes: std::sync::Arc<[u8]>,
}

fn length<S: serde::Serializer>(bytes: &std::sync::Arc<[u8]>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(bytes.len() as u64)
}

/// A poll as it is sent: its question and answers kept to their lengths.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Poll {
    pub question: String,
    pub answers: Vec<PollAnswer>,
    /// How long it is open, in hours (1 to [`limits::POLL_HOURS`]).
    pub hours: u32,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub multiple: bool,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PollAnswer {
    pub text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub emoji: Option<String>,
}

/// A part of a layout message (the platform's "components v2"), as it is
/// sent: every text filled in and kept to its limit.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(tag = "part", rename_all = "lowercase")]
pub enum Block {
    /// A Text Display: markdown, at most [`limits::LAYOUT_TEXT`].
    Text {
        text: String,
    },
    /// Buttons and menus that stand together, laid in rows by [`rows`].
    Components {
        components: Vec<Component>,
    },
    Container {
        #[serde(skip_serializing_if = "Option::is_none")]
        accent: Option<u32>,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        spoiler: bool,
        parts: Vec<Block>,
    },
    /// One to three texts beside a thumbnail or a button.
    Section {
        texts: Vec<String>,
        accessory: Accessory,
    },
    Separator {
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        large: bool,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        invisible: bool,
    },
    Gallery {
        media: Vec<Media>,
    },
    /// A file the message carries, shown where it stands (by its name).
    File {
        name: String,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        spoiler: bool,
    },
}

/// What stands beside a section's texts.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Accessory {
    Thumbnail(Media),
    /// A button (the platform takes no menu there).
    Component(Component),
}

/// An image by its address: a thumbnail, or one of a gallery's.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct Media {
    pub url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub spoiler: bool,
}

impl Message {
    /// Every button and menu of the message, those in its layout too.
    pub fn components_mut(&mut self) -> Vec<&mut Component> {
        fn of<'a>(blocks: &'a mut [Block], out: &mut Vec<&'a mut Component>) {
            for b in blocks {
                match b {
                    Block::Components { components } => out.extend(components.iter_mut()),
                    Block::Container { parts, .. } => of(parts, out),
                    Block::Section { accessory: Accessory::Component(c), .. } => out.push(c),
                    _ => {}
                }
            }
        }
        let mut out: Vec<&mut Component> = self.components.iter_mut().collect();
        of(&mut self.layout, &mut out);
        out
    }
}

/// What a run says: a message, or a form to fill in; or, for a
/// component whose handler said nothing, nothing (its message stays).
#[derive(Debug, Clone, PartialEq)]
pub enum Outgoing {
    Message(Message),
    Form(Form),
    Nothing,
    /// An autocomplete's answer: the choices offered as the user types.
    Choices(Vec<Choice>),
}

/// A choice an autocomplete offers: its name (1 to 100 characters) and its
/// value, of the option's type.
#[derive(Debug, Clone, PartialEq)]
pub struct Choice {
    pub name: String,
    pub value: ChoiceValue,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ChoiceValue {
    Text(String),
    Integer(i64),
    Number(f64),
}

/// A button or a select menu as it is sent: every text filled in and kept
/// to its limit.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Component {
    Button(Button),
    Select(Select),
}

#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct Button {
    /// `primary`, `secondary`, `success`, `danger`, or `link`.
    pub style: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub emoji: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The handler it runs and the id that says so (none: a link).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub handler: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub custom_id: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub disabled: bool,
    /// A premium button's SKU (then it has no label, emoji, url or id).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sku: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct Select {
    /// `choices` (written in the file), `users`, `roles`, `mentionables`
    /// or `channels`.
    pub of: &'static str,
    pub handler: String,
    pub custom_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placeholder: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max: Option<u32>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub disabled: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<MenuChoice>,
    /// A menu of users, roles, mentionables or channels: who or what is
    /// chosen when it is shown (an id, and `user`, `role` or `channel`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub defaults: Vec<(String, &'static str)>,
    /// A menu of channels: the kinds it lists (`registration::CHANNEL_TYPES`'s words).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub channel_types: Vec<&'static str>,
}

/// One of a menu's `defaults`, as a menu of `of` (`users`, `roles`,
/// `mentionables`, `channels`) takes it: an id, or a mention of the kind
/// it lists (`<@id>`, `<@&id>`, `<#id>`); none for anything else.
pub fn default_value(token: &str, of: &str) -> Option<(String, &'static str)> {
    let token = token.trim();
    let (id, kind) = if let Some(id) = token.strip_prefix("<@&").and_then(|t| t.strip_suffix('>')) {
        (id, "role")
    } else if let Some(id) = token.strip_prefix("<#").and_then(|t| t.strip_suffix('>')) {
        (id, "channel")
    } else if let Some(id) = token.strip_prefix("<@").and_then(|t| t.strip_suffix('>')) {
        (id.trim_start_matches('!'), "user")
    } else {
        let kind = match of {
            "roles" => "role",
            "channels" => "channel",
            _ => "user",
        };
        (token, kind)
    };
    let fits = match of {
        "users" => kind == "user",
        "roles" => kind == "role",
        "channels" => kind == "channel",
        "mentionables" => kind != "channel",
        _ => false,
    };
    (fits && crate::discord::is_snowflake(id)).then(|| (id.to_string(), kind))
}

#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct MenuChoice {
    pub label: String,
    pub value: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub emoji: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub default: bool,
}

/// What a form's input is: its word (`users`, `upload`, `radio`, …), or
/// without one a menu when it has choices, else text. The one rule the
/// checker, the plan and the wire read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InputKind {
    Text,
    Menu,
    Users,
    Roles,
    Mentionables,
    Channels,
    Upload,
    Radio,
    Checkboxes,
    Checkbox,
}

impl InputKind {
    /// The words that make an input of a kind, in the order tried.
    pub const WORDS: &'static [(&'static str, InputKind)] = &[
        ("users", InputKind::Users),
        ("roles", InputKind::Roles),
        ("mentionables", InputKind::Mentionables),
        ("channels", InputKind::Channels),
        ("upload", InputKind::Upload),
        ("radio", InputKind::Radio),
        ("checkboxes", InputKind::Checkboxes),
        ("checkbox", InputKind::Checkbox),
    ];

    /// The kind of an input given which words it has and whether it has
    /// choices.
    pub fn of(has: impl Fn(&str) -> bool, choices: bool) -> InputKind {
        match InputKind::WORDS.iter().find(|(w, _)| has(w)) {
            Some((_, kind)) => *kind,
            None if choices => InputKind::Menu,
            None => InputKind::Text,
        }
    }

    /// As a message says it.
    pub fn describe(self) -> &'static str {
        match self {
            InputKind::Text => "a text input",
            InputKind::Menu => "a menu of choices",
            InputKind::Users => "a menu of members",
            InputKind::Roles => "a menu of roles",
            InputKind::Mentionables => "a menu of members and roles",
            InputKind::Channels => "a menu of channels",
            InputKind::Upload => "an upload",
            InputKind::Radio => "a radio group",
            InputKind::Checkboxes => "a group of checkboxes",
            InputKind::Checkbox => "a checkbox",
        }
    }

    /// Whether it takes `setting` (every kind takes its word, `label`,
    /// `description`, and but a checkbox `optional`).
    pub fn takes(self, setting: &str) -> bool {
        let own: &[&str] = match self {
            InputKind::Text => &["paragraph", "placeholder", "value", "min", "max"],
            InputKind::Menu | InputKind::Users | InputKind::Roles | InputKind::Mentionables | InputKind::Channels => {
                &["placeholder", "min", "max"]
            }
            InputKind::Upload => &["min", "max", "types"],
            InputKind::Radio => &[],
            InputKind::Checkboxes => &["min", "max"],
            InputKind::Checkbox => &["default"],
        };
        matches!(setting, "label" | "description")
            || (setting == "optional" && self != InputKind::Checkbox)
            || InputKind::WORDS.iter().any(|(w, k)| *w == setting && *k == self)
            || own.contains(&setting)
    }

    /// The most its `min` and `max` count (characters, choices or files),
    /// and how many choices it takes: none where it takes none.
    pub fn most(self) -> (u32, usize) {
        match self {
            InputKind::Text => (limits::INPUT_TEXT, 0),
            InputKind::Menu => (limits::MENU_CHOICES as u32, limits::MENU_CHOICES),
            InputKind::Users | InputKind::Roles | InputKind::Mentionables | InputKind::Channels => {
                (limits::MENU_CHOICES as u32, 0)
            }
            InputKind::Upload => (limits::UPLOAD_FILES, 0),
            InputKind::Radio => (0, limits::GROUP_CHOICES),
            InputKind::Checkboxes => (limits::GROUP_CHOICES as u32, limits::GROUP_CHOICES),
            InputKind::Checkbox => (0, 0),
        }
    }

    /// The fewest choices it takes (a radio group two, others one).
    pub fn fewest_choices(self) -> usize {
        if self == InputKind::Radio {
            2
        } else {
            1
        }
    }

    /// The component type the platform gives it.
    pub fn wire_type(self) -> u8 {
        match self {
            InputKind::Text => 4,
            InputKind::Menu => 3,
            InputKind::Users => 5,
            InputKind::Roles => 6,
            InputKind::Mentionables => 7,
            InputKind::Channels => 8,
            InputKind::Upload => 19,
            InputKind::Radio => 21,
            InputKind::Checkboxes => 22,
            InputKind::Checkbox => 23,
        }
    }
}

/// The groups of files an upload filters for by name (the platform's
/// "File Type Filtering"); any other type is a dot-prefixed extension.
pub const FILE_GROUPS: &[&str] = &["image", "video", "audio"];

/// A kind of file as an upload's `file_types` takes it: a group, or an
/// extension with its dot, lowercase (the platform normalises it so);
/// none for anything else.
pub fn file_type(word: &str) -> Option<String> {
    let word = word.trim().to_lowercase();
    let extension =
        word.strip_prefix('.').is_some_and(|e| !e.is_empty() && e.bytes().all(|b| b.is_ascii_alphanumeric()));
    (FILE_GROUPS.contains(&word.as_str()) || extension).then_some(word)
}

/// The kinds of file a `types "image .pdf"` filters for (an upload's, an
/// attachment option's): each a group or an extension (`file_type`), at
/// most [`limits::UPLOAD_TYPES`]; else why not.
pub fn file_types(text: &str) -> Result<Vec<String>, String> {
    let words: Vec<&str> = text.split([' ', ',']).filter(|w| !w.is_empty()).collect();
    if let Some(wrong) = words.iter().find(|w| file_type(w).is_none()) {
        return Err(format!("`{wrong}` is not a kind of file the platform filters for"));
    }
    if words.len() > limits::UPLOAD_TYPES {
        return Err(format!("a filter holds at most {} kinds of file, not {}", limits::UPLOAD_TYPES, words.len()));
    }
    Ok(words.iter().filter_map(|w| file_type(w)).collect())
}

/// A form as it is shown.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct Form {
    pub handler: String,
    pub custom_id: String,
    pub title: String,
    pub inputs: Vec<TextInput>,
    /// Its texts, each with the place among the inputs it stands before.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub texts: Vec<(usize, String)>,
}

/// An input of a form, of any kind (the name is the older one's: text).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TextInput {
    /// The input's name: the handler reads it as `{field_<name>}`.
    pub name: String,
    pub kind: InputKind,
    pub label: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<MenuChoice>,
    /// An upload's kinds of file (`image`, `.pdf`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub types: Vec<String>,
    /// A checkbox shown ticked.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub default: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub paragraph: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placeholder: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max: Option<u32>,
    pub required: bool,
}

/// The rows of a message's components, as the platform takes them:
/// buttons 5 to a row in order, each select menu a row of its own.
pub fn rows(components: &[Component]) -> Vec<&[Component]> {
    let kinds: Vec<bool> = components.iter().map(|c| matches!(c, Component::Button(_))).collect();
    let place = crate::discord::limits::rows(&kinds);
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..=components.len() {
        if i == components.len() || place[i] != place[start] {
            out.push(&components[start..i]);
            start = i;
        }
    }
    out
}

/// An embed as it is sent: every part filled in, cut to its limit, and
/// left out when it is not of its form (a URL, a colour, a time).
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct Embed {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub color: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub footer: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub author_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub author_icon: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub footer_icon: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thumbnail: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<EmbedField>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct EmbedField {
    pub name: String,
    pub value: String,
    pub inline: bool,
}

/// The mark left where a value was cut to its part's limit.
pub const CUT: &str = "…";

/// Cuts `text` to at most `max` UTF-16 units, ending with [`CUT`]; whether
/// it had to.
pub(crate) fn fit(text: &mut String, max: usize) -> bool {
    if units(text) <= max {
        return false;
    }
    let keep = max - units(CUT);
    let mut used = 0;
    let end = text
        .char_indices()
        .find(|(_, c)| {
            used += c.len_utf16();
            used > keep
        })
        .map_or(text.len(), |(i, _)| i);
    text.truncate(end);
    text.push_str(CUT);
    true
}

/// The characters of an embed that count toward a message's 6,000.
pub fn embed_units(e: &Embed) -> usize {
    let texts = [&e.title, &e.description, &e.footer, &e.author];
    texts.iter().filter_map(|t| t.as_deref()).map(units).sum::<usize>()
        + e.fields.iter().map(|f| units(&f.name) + units(&f.value)).sum::<usize>()
}

/// Keeps a message's embeds within 6,000 characters together, whatever
/// filled them: the descriptions give way first, then the fields' values,
/// the footers, the authors, the fields' names and the titles, the last
/// embed's (and field's) first; whether any was cut. Every text keeps at
/// least its mark, and 10 embeds of 25 fields each are well under 6,000
/// marks, so it always fits.
pub fn fit_embeds(embeds: &mut [Embed]) -> bool {
    let mut total: usize = embeds.iter().map(embed_units).sum();
    let mut cut = false;
    for pass in 0..6 {
        for e in embeds.iter_mut().rev() {
            let slots: Vec<&mut String> = match pass {
                0 => e.description.iter_mut().collect(),
                1 => e.fields.iter_mut().rev().map(|f| &mut f.value).collect(),
                2 => e.footer.iter_mut().collect(),
                3 => e.author.iter_mut().collect(),
                4 => e.fields.iter_mut().rev().map(|f| &mut f.name).collect(),
                _ => e.title.iter_mut().collect(),
            };
            for text in slots {
                if total <= limits::EMBED_TOTAL {
                    return cut;
                }
                let before = units(text);
                let keep = before.saturating_sub(total - limits::EMBED_TOTAL).max(units(CUT));
                if fit(text, keep) {
                    total = total - before + units(text);
                    cut = true;
                }
            }
        }
    }
    cut
}

/// A value as a warning quotes it: at most 40 characters.
pub(crate) fn short(text: &str) -> String {
    let mut t: String = text.chars().take(40).collect();
    if t.len() < text.len() {
        t.push_str(CUT);
    }
    t
}

impl Message {
    /// A message that may ping `users`.
    pub fn new(content: impl Into<String>, users: &[String]) -> Message {
        Message { content: content.into(), mentions: users.to_vec(), ..Message::default() }
    }

    /// blkc's own word to the user who triggered a command (busy, failed,
    /// done): seen by them only, pinging no one.
    pub fn notice(content: &str) -> Message {
        Message { content: content.to_string(), ephemeral: true, ..Message::default() }
    }
}

/// The most messages one `reply` becomes; a longer reply is cut, with a mark.
pub const MAX_PIECES: usize = 5;

/// What a failed run tells the chat user: nothing of the file, the secrets
/// or the failure (the operator's log has the diagnostic).
pub const FAILED: &str =
    "Sorry, something went wrong running this command. The bot's operator can see what in the log.";
pub const BUSY: &str = "The bot is busy right now. Please try again in a moment.";
pub const UNKNOWN: &str = "This command is not available right now.";
/// What a click on a component whose handler the file no longer has gets.
pub const STALE: &str = "This no longer does anything: the bot has changed since this message was sent.";
/// What a command that replies nothing answers, so the user is not left waiting.
pub const DONE: &str = "Done.";

/// The platform counts a message's length in UTF-16 units, as JavaScript does.
pub(crate) fn units(s: &str) -> usize {
    s.encode_utf16().count()
}

/// Cuts a message's text to the platform's length, with a mark; whether
/// it had to (an update is one message: it cannot be split).
pub fn fit_message(text: &mut String) -> bool {
    fit(text, limits::MESSAGE)
}

/// A reply's text as the messages it is sent in, and a warning for the log
/// when it did not fit in one (or was empty).
pub fn pieces(text: &str) -> (Vec<String>, Option<String>) {
    if text.trim().is_empty() {
        return (vec!["(empty reply)".into()], Some("a reply rendered empty; `(empty reply)` was sent".into()));
    }
    if units(text) <= limits::MESSAGE {
        return (vec![text.to_string()], None);
    }
    let total = units(text);
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() && out.len() < MAX_PIECES {
        if units(rest) <= limits::MESSAGE {
            out.push(rest.to_string());
            rest = "";
            break;
        }
        let end = split_point(rest, limits::MESSAGE);
        // A piece of blanks only is no message (the platform refuses empty
        // content): what is blank between two pieces is left out.
        if !rest[..end].trim().is_empty() {
            out.push(rest[..end].to_string());
        }
        rest = rest[end..].trim_start();
    }
    if rest.is_empty() {
        let warning = format!("a reply of {total} characters was sent as {} messages", out.len());
        return (out, Some(warning));
    }
    let mark = format!("\n… (cut: the reply was {total} characters)");
    if let Some(last) = out.last_mut() {
        let keep = split_point(last, limits::MESSAGE - units(&mark));
        last.truncate(keep);
        last.push_str(&mark);
    }
    let warning = format!("a reply of {total} characters was cut after {MAX_PIECES} messages");
    (out, Some(warning))
}

/// Where to end a piece of at most `max` units: after the last line break
/// in the second half of the window, else the last blank, else at `max`.
pub(crate) fn split_point(text: &str, max: usize) -> usize {
    let mut end = 0;
    let mut used = 0;
    for (i, c) in text.char_indices() {
        used += c.len_utf16();
        if used > max {
            break;
        }
        end = i + c.len_utf8();
    }
    let window = &text[..end];
    let half = end / 2;
    match window.rfind('\n').filter(|&i| i >= half).or_else(|| window.rfind(' ').filter(|&i| i >= half)) {
        Some(i) => i + 1,
        None => end,
    }
}
