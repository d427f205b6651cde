//! What blkc sends the platform, in `twilight-model`'s types: a message
//! (an interaction's answer, its edit, a follow-up, a channel message) and
//! the answers to an interaction's HTTP exchange.

use twilight_model::channel::message::embed::{EmbedAuthor, EmbedField, EmbedFooter, EmbedImage, EmbedThumbnail};
use twilight_model::channel::message::{AllowedMentions, Embed, MessageFlags};
use twilight_model::http::interaction::{InteractionResponse, InteractionResponseData, InteractionResponseType};
use twilight_model::id::Id;

use crate::discord::outgoing::{Message, Outgoing};
use twilight_model::channel::message::component::{
    ActionRow, Button, ButtonStyle, Component, SelectMenu, SelectMenuOption, SelectMenuType,
};
use twilight_model::channel::message::EmojiReactionType;

/// A message's body, the same for an answer's `data`, an edit, a
/// follow-up and a channel message.
pub fn body(message: &Message) -> InteractionResponseData {
    if !message.layout.is_empty() {
        return layout_body(message);
    }
    InteractionResponseData {
        // An update without text leaves the message's text as it is.
        content: (!message.content.is_empty() || (message.embeds.is_empty() && !message.update))
            .then(|| message.content.clone()),
        allowed_mentions: Some(allowed_mentions(&message.mentions)),
        flags: message.ephemeral.then_some(MessageFlags::EPHEMERAL),
        embeds: (!message.embeds.is_empty()).then(|| message.embeds.iter().map(embed).collect()),
        components: (!message.components.is_empty()).then(|| components(&message.components)),
        ..InteractionResponseData::default()
    }
}

/// A layout message's body: its parts alone, with the flag that says so
/// (the platform refuses `content` or `embeds` beside it). An update sets
/// the flag on the message it edits and empties its embeds; its content is
/// emptied by the caller's route (`null` in the edit: [`LAYOUT_EDIT_NULLS`]).
fn layout_body(message: &Message) -> InteractionResponseData {
    let mut flags = MessageFlags::IS_COMPONENTS_V2;
    if message.ephemeral {
        flags |= MessageFlags::EPHEMERAL;
    }
    InteractionResponseData {
        allowed_mentions: Some(allowed_mentions(&message.mentions)),
        flags: Some(flags),
        embeds: message.update.then(Vec::new),
        components: Some(blocks(&message.layout)),
        ..InteractionResponseData::default()
    }
}

/// The parts of a layout message in the platform's form: components that
/// stand together in rows, each part its component.
fn blocks(list: &[crate::discord::outgoing::Block]) -> Vec<Component> {
    use crate::discord::outgoing::{Accessory, Block};
    use twilight_model::channel::message::component::{
        Container, MediaGallery, MediaGalleryItem, Section, Separator, SeparatorSpacingSize, TextDisplay,
    };
    let text = |content: &String| Component::TextDisplay(TextDisplay { content: content.clone(), id: None });
    let mut out = Vec::new();
    for block in list {
        match block {
            Block::Text { text: t } => out.push(text(t)),
            Block::Components { components: c } => out.extend(components(c)),
            Block::Container { accent, spoiler, parts } => out.push(Component::Container(Container {
                accent_color: accent.map(Some),
                components: blocks(parts),
                id: None,
                spoiler: spoiler.then_some(true),
            })),
            Block::Section { texts, accessory } => out.push(Component::Section(Section {
                accessory: Box::new(match accessory {
                    Accessory::Thumbnail(m) => thumbnail(m),
                    Accessory::Component(c) => component(c),
                }),
                components: texts.iter().map(text).collect(),
                id: None,
            })),
            Block::Separator { large, invisible } => out.push(Component::Separator(Separator {
                divider: invisible.then_some(false),
                id: None,
                spacing: large.then_some(SeparatorSpacingSize::Large),
            })),
            Block::File { name, spoiler } => {
                out.push(Component::File(twilight_model::channel::message::component::FileDisplay {
                    file: unfurled(&format!("attachment://{name}")),
                    id: None,
                    spoiler: spoiler.then_some(true),
                }))
            }
            Block::Gallery { media } => out.push(Component::MediaGallery(MediaGallery {
                id: None,
                items: media
                    .iter()
                    .map(|m| MediaGalleryItem {
                        description: m.description.clone(),
                        media: unfurled(&m.url),
                        spoiler: m.spoiler.then_some(true),
                    })
                    .collect(),
            })),
        }
    }
    out
}

fn thumbnail(m: &crate::discord::outgoing::Media) -> Component {
    Component::Thumbnail(twilight_model::channel::message::component::Thumbnail {
        description: m.description.clone().map(Some),
        id: None,
        media: unfurled(&m.url),
        spoiler: m.spoiler.then_some(true),
    })
}

/// An image's address as the platform takes one (it fills in the rest).
fn unfurled(url: &str) -> twilight_model::channel::message::component::UnfurledMediaItem {
    twilight_model::channel::message::component::UnfurledMediaItem {
        content_type: None,
        height: None,
        proxy_url: None,
        url: url.to_string(),
        width: None,
    }
}

/// Components in their rows (`message::rows` lays them out).
fn components(list: &[crate::discord::outgoing::Component]) -> Vec<Component> {
    crate::discord::outgoing::rows(list)
        .into_iter()
        .map(|row| Component::ActionRow(ActionRow { id: None, components: row.iter().map(component).collect() }))
        .collect()
}

fn component(c: &crate::discord::outgoing::Component) -> Component {
    use crate::discord::outgoing::Component as C;
    match c {
        C::Button(b) => Component::Button(Button {
            custom_id: b.custom_id.clone(),
            disabled: b.disabled,
            emoji: b.emoji.as_deref().map(emoji),
            id: None,
            label: b.label.clone(),
            sku_id: b.sku.as_deref().and_then(|s| s.parse::<u64>().ok()).and_then(Id::new_checked),
            style: match b.style {
                "secondary" => ButtonStyle::Secondary,
                "success" => ButtonStyle::Success,
                "danger" => ButtonStyle::Danger,
                "link" => ButtonStyle::Link,
                "premium" => ButtonStyle::Premium,
                _ => ButtonStyle::Primary,
            },
            url: b.url.clone(),
        }),
        C::Select(m) => Component::SelectMenu(SelectMenu {
            channel_types: (!m.channel_types.is_empty()).then(|| {
                let known = crate::discord::registration::CHANNEL_TYPES;
                m.channel_types.iter().filter_map(|w| known.iter().find(|(k, _)| k == w).map(|(_, t)| *t)).collect()
            }),
            custom_id: m.custom_id.clone(),
            default_values: (!m.defaults.is_empty())
                .then(|| m.defaults.iter().filter_map(|(id, kind)| default(id, kind)).collect()),
            disabled: m.disabled,
            id: None,
            kind: match m.of {
                "users" => SelectMenuType::User,
                "roles" => SelectMenuType::Role,
                "mentionables" => SelectMenuType::Mentionable,
                "channels" => SelectMenuType::Channel,
                _ => SelectMenuType::Text,
            },
            max_values: m.max.map(|n| n.min(25) as u8),
            min_values: m.min.map(|n| n.min(25) as u8),
            options: (m.of == "choices").then(|| {
                m.choices
                    .iter()
                    .map(|o| SelectMenuOption {
                        default: o.default,
                        description: o.description.clone(),
                        emoji: o.emoji.as_deref().map(emoji),
                        label: o.label.clone(),
                        value: o.value.clone(),
                    })
                    .collect()
            }),
            placeholder: m.placeholder.clone(),
            required: None,
        }),
    }
}

/// A menu's default value of `kind` (`user`, `role`, `channel`).
fn default(id: &str, kind: &str) -> Option<twilight_model::channel::message::component::SelectDefaultValue> {
    use twilight_model::channel::message::component::SelectDefaultValue as D;
    let id = id.parse::<u64>().ok()?;
    Some(match kind {
        "role" => D::Role(Id::new_checked(id)?),
        "channel" => D::Channel(Id::new_checked(id)?),
        _ => D::User(Id::new_checked(id)?),
    })
}

/// An emoji as written: a server's `<:name:id>` (`<a:…>` animated), else
/// the text itself (a Unicode emoji).
fn emoji(text: &str) -> EmojiReactionType {
    let custom = text.strip_prefix('<').and_then(|t| t.strip_suffix('>')).and_then(|t| {
        let (animated, t) = match t.strip_prefix("a:") {
            Some(rest) => (true, rest),
            None => (false, t.strip_prefix(':')?),
        };
        let (name, id) = t.rsplit_once(':')?;
        let id = id.parse::<u64>().ok().and_then(Id::new_checked)?;
        Some(EmojiReactionType::Custom { animated, id, name: Some(name.to_string()) })
    });
    custom.unwrap_or_else(|| EmojiReactionType::Unicode { name: text.to_string() })
}

/// A form, as the answer that shows it (`MODAL`): its texts and inputs in
/// order, each input in a Label with its label and description, of its
/// kind's component (written out: twilight's types have no radio group).
pub fn modal(form: &crate::discord::outgoing::Form) -> serde_json::Value {
    use serde_json::json;
    let text = |t: &String| json!({ "type": 10, "content": t });
    let mut components = Vec::new();
    for (place, input) in form.inputs.iter().enumerate() {
        components.extend(form.texts.iter().filter(|(at, _)| *at == place).map(|(_, t)| text(t)));
        let mut label = json!({ "type": 18, "label": input.label, "component": form_input(input) });
        if let Some(d) = &input.description {
            label["description"] = json!(d);
        }
        components.push(label);
    }
    components.extend(form.texts.iter().filter(|(at, _)| *at >= form.inputs.len()).map(|(_, t)| text(t)));
    json!({ "type": 9, "data": { "custom_id": form.custom_id, "title": form.title, "components": components } })
}

/// A form's choices, as a menu's, a radio group's or a checkbox group's
/// options (only a menu's show emoji).
fn options(i: &crate::discord::outgoing::TextInput, with_emoji: bool) -> serde_json::Value {
    use serde_json::{json, Value};
    let list: Vec<Value> = i
        .choices
        .iter()
        .map(|o| {
            let mut v = json!({ "label": o.label, "value": o.value });
            if let Some(d) = &o.description {
                v["description"] = json!(d);
            }
            if let (true, Some(e)) = (with_emoji, &o.emoji) {
                v["emoji"] = serde_json::to_value(emoji(e)).unwrap_or(Value::Null);
            }
            if o.default {
                v["default"] = json!(true);
            }
            v
        })
        .collect();
    json!(list)
}

/// An input's component in a form's Label.
fn form_input(i: &crate::discord::outgoing::TextInput) -> serde_json::Value {
    use crate::discord::outgoing::InputKind;
    use serde_json::{json, Map, Value};
    let mut c = Map::new();
    c.insert("type".into(), json!(i.kind.wire_type()));
    c.insert("custom_id".into(), json!(i.name));
    let mut put = |k: &str, v: Option<Value>| {
        if let Some(v) = v {
            c.insert(k.into(), v);
        }
    };
    let (min, max) = (i.min.map(|n| json!(n)), i.max.map(|n| json!(n)));
    let placeholder = i.placeholder.as_ref().map(|p| json!(p));
    match i.kind {
        InputKind::Text => {
            put("style", Some(json!(if i.paragraph { 2 } else { 1 })));
            put("min_length", min);
            put("max_length", max);
            put("placeholder", placeholder);
            put("value", i.value.as_ref().map(|v| json!(v)));
        }
        InputKind::Menu | InputKind::Users | InputKind::Roles | InputKind::Mentionables | InputKind::Channels => {
            put("placeholder", placeholder);
            put("min_values", min);
            put("max_values", max);
            put("options", (i.kind == InputKind::Menu).then(|| options(i, true)));
        }
        InputKind::Upload => {
            put("min_values", min);
            put("max_values", max);
            put("file_types", (!i.types.is_empty()).then(|| json!(i.types)));
        }
        InputKind::Radio => put("options", Some(options(i, false))),
        InputKind::Checkboxes => {
            put("options", Some(options(i, false)));
            put("min_values", min);
            put("max_values", max);
        }
        InputKind::Checkbox => put("default", i.default.then(|| json!(true))),
    }
    if i.kind != InputKind::Checkbox {
        put("required", Some(json!(i.required)));
    }
    Value::Object(c)
}

/// A time `message::embed` wrote in UTC, as twilight holds one (its own
/// parser reads only `+00:00` offsets, and drops any other).
fn timestamp(utc: &str) -> Option<twilight_model::util::Timestamp> {
    use time::format_description::well_known::Rfc3339;
    let at = time::OffsetDateTime::parse(utc, &Rfc3339).ok()?;
    twilight_model::util::Timestamp::from_micros((at.unix_timestamp_nanos() / 1000) as i64).ok()
}

/// An embed in the platform's form (`crate::language::message::embed` has already
/// kept it within the platform's limits and forms).
pub(crate) fn embed(e: &crate::discord::outgoing::Embed) -> Embed {
    let url = |u: &Option<String>| u.clone();
    Embed {
        // (An author's link and icon, and a footer's icon, go with them.)
        author: e.author.clone().map(|name| EmbedAuthor {
            icon_url: e.author_icon.clone(),
            name,
            proxy_icon_url: None,
            url: e.author_url.clone(),
        }),
        color: e.color,
        description: e.description.clone(),
        fields: e
            .fields
            .iter()
            .map(|f| EmbedField { inline: f.inline, name: f.name.clone(), value: f.value.clone() })
            .collect(),
        flags: None,
        footer: e.footer.clone().map(|text| EmbedFooter {
            icon_url: e.footer_icon.clone(),
            proxy_icon_url: None,
            text,
        }),
        image: url(&e.image).map(|url| EmbedImage {
            height: None,
            proxy_url: None,
            url,
            width: None,
            content_type: None,
            placeholder: None,
            placeholder_version: None,
            flags: None,
        }),
        kind: "rich".to_string(),
        provider: None,
        thumbnail: url(&e.thumbnail).map(|url| EmbedThumbnail { height: None, proxy_url: None, url, width: None }),
        timestamp: e.timestamp.as_deref().and_then(timestamp),
        title: e.title.clone(),
        url: e.url.clone(),
        video: None,
    }
}

/// `allowed_mentions` for a message that may mention `users` and no one
/// else: nothing parsed from the text, only these ids (at most 100, the
/// platform's limit; anything not an id is left out).
pub fn allowed_mentions(users: &[String]) -> AllowedMentions {
    let users = users.iter().filter_map(|u| u.parse::<u64>().ok().and_then(Id::new_checked)).take(100).collect();
    AllowedMentions { parse: Vec::new(), replied_user: false, roles: Vec::new(), users }
}

/// The answer to a PING.
pub fn pong() -> InteractionResponse {
    InteractionResponse { kind: InteractionResponseType::Pong, data: None }
}

/// A message as the first answer to a command.
pub fn answer(message: &Message) -> InteractionResponse {
    let kind = if message.update {
        InteractionResponseType::UpdateMessage
    } else {
        InteractionResponseType::ChannelMessageWithSource
    };
    let mut data = body(message);
    if message.update {
        data.flags = edit_flags(data.flags);
    }
    InteractionResponse { kind, data: Some(data) }
}

/// The flags an edit carries: it keeps the message's privacy and may carry
/// no flag of it, but makes it a layout message (the platform takes that
/// flag in an edit, and never takes it back).
pub fn edit_flags(flags: Option<MessageFlags>) -> Option<MessageFlags> {
    flags.filter(|f| f.contains(MessageFlags::IS_COMPONENTS_V2)).map(|_| MessageFlags::IS_COMPONENTS_V2)
}

/// A message's body as it goes on the wire where twilight's type cannot
/// say it: with its poll (in the shape the platform creates one from), or,
/// for an update that makes a message a layout one, its `content` emptied
/// with `null` as the platform asks; none for any other. `body` is the
/// typed body or answer (the message's fields go in its `data` if it has
/// one).
pub fn wire<T: serde::Serialize>(body: &T, message: &Message) -> Option<serde_json::Value> {
    let layout_update = message.update && !message.layout.is_empty();
    if message.poll.is_none() && !layout_update && message.files.is_empty() {
        return None;
    }
    let mut wire = serde_json::to_value(body).ok()?;
    let slot = match wire.get("data").is_some() {
        true => &mut wire["data"],
        false => &mut wire,
    };
    let fields = slot.as_object_mut()?;
    if layout_update {
        fields.insert("content".into(), serde_json::Value::Null);
    }
    if let Some(p) = &message.poll {
        fields.insert("poll".into(), poll(p));
    }
    if !message.files.is_empty() {
        fields.insert("attachments".into(), attachments(&message.files));
    }
    Some(wire)
}

/// The files of a message as its body lists them: each by its place
/// (`files[n]` in the multipart body), its name, description and whether
/// it is a spoiler.
fn attachments(files: &[crate::discord::outgoing::File]) -> serde_json::Value {
    let listed = files.iter().enumerate().map(|(n, f)| {
        let mut a = serde_json::json!({ "id": n.to_string(), "filename": f.name });
        if let Some(d) = &f.description {
            a["description"] = d.clone().into();
        }
        if f.spoiler {
            a["is_spoiler"] = true.into();
        }
        a
    });
    serde_json::Value::Array(listed.collect())
}

/// A message's body with its files, as the platform takes an upload: a
/// multipart/form-data body of its JSON as `payload_json` and each file as
/// `files[n]` (named by its place in `attachments`), and its
/// `Content-Type`. One encoder writes it and an API block's multipart body
/// (`base::multipart`).
pub fn with_files(json: &[u8], files: &[crate::discord::outgoing::File]) -> Result<(Vec<u8>, String), String> {
    use crate::base::multipart::Part;
    let mut parts = vec![Part {
        name: "payload_json".into(),
        filename: None,
        media_type: Some("application/json".into()),
        bytes: json.to_vec().into(),
    }];
    parts.extend(files.iter().enumerate().map(|(n, f)| Part {
        name: format!("files[{n}]"),
        filename: Some(f.name.clone()),
        media_type: Some(f.media_type.clone().unwrap_or_else(|| "application/octet-stream".into())),
        bytes: f.bytes.clone(),
    }));
    crate::base::multipart::encode(&parts).map_err(|(n, why)| match parts.get(n) {
        Some(p) => format!("file `{}`: {why}", p.filename.as_deref().unwrap_or(&p.name)),
        None => why,
    })
}

/// A poll as the platform creates one.
fn poll(p: &crate::discord::outgoing::Poll) -> serde_json::Value {
    use serde_json::json;
    let answers: Vec<serde_json::Value> = p
        .answers
        .iter()
        .map(|a| {
            let mut media = json!({ "text": a.text });
            if let Some(e) = &a.emoji {
                media["emoji"] = match emoji(e) {
                    EmojiReactionType::Custom { id, .. } => json!({ "id": id.to_string() }),
                    EmojiReactionType::Unicode { name } => json!({ "name": name }),
                };
            }
            json!({ "poll_media": media })
        })
        .collect();
    json!({ "question": { "text": p.question }, "answers": answers, "duration": p.hours, "allow_multiselect": p.multiple })
}

/// An interaction's first answer as it goes on the wire: of twilight's
/// type, or written out where that type cannot say it (a form's inputs of
/// today's kinds, a layout update's `content: null`).
#[derive(Debug, serde::Serialize)]
#[serde(untagged)]
pub enum Answer {
    Typed(Box<InteractionResponse>),
    Wire(serde_json::Value),
}

impl From<InteractionResponse> for Answer {
    fn from(answer: InteractionResponse) -> Answer {
        Answer::Typed(Box::new(answer))
    }
}

/// What a run said first, as the answer: a message (new, or an update of
/// the component's), or a form.
pub fn first_answer(said: &Outgoing) -> Answer {
    match said {
        // Files go up with an edit of a "thinking" answer: the answer to the
        // platform's request is JSON, never an upload.
        Outgoing::Message(m) if !m.files.is_empty() && !m.update => deferred(m.ephemeral).into(),
        Outgoing::Message(m) => {
            let typed = answer(m);
            match wire(&typed, m) {
                Some(wire) => Answer::Wire(wire),
                None => typed.into(),
            }
        }
        Outgoing::Form(f) => Answer::Wire(modal(f)),
        Outgoing::Nothing => deferred_update().into(),
        Outgoing::Choices(choices) => autocomplete(choices).into(),
    }
}

/// An autocomplete's answer: its choices (none, when it had none to give
/// in time).
pub fn autocomplete(choices: &[crate::discord::outgoing::Choice]) -> InteractionResponse {
    use crate::discord::outgoing::ChoiceValue;
    use twilight_model::application::command::{CommandOptionChoice, CommandOptionChoiceValue as V};
    let choices = choices
        .iter()
        .map(|c| CommandOptionChoice {
            name: c.name.clone(),
            name_localizations: None,
            value: match &c.value {
                ChoiceValue::Text(t) => V::String(t.clone()),
                ChoiceValue::Integer(i) => V::Integer(*i),
                ChoiceValue::Number(n) => V::Number(*n),
            },
        })
        .collect();
    let data = InteractionResponseData { choices: Some(choices), ..InteractionResponseData::default() };
    InteractionResponse { kind: InteractionResponseType::ApplicationCommandAutocompleteResult, data: Some(data) }
}

/// A component's answer when its handler said nothing (or will edit the
/// message later): the message stays as it is.
pub fn deferred_update() -> InteractionResponse {
    InteractionResponse { kind: InteractionResponseType::DeferredUpdateMessage, data: None }
}

/// "Thinking…": the message comes later, as an edit of this answer;
/// `private` when only the user is to see it (the platform keeps an
/// answer's privacy from its deferral).
pub fn deferred(private: bool) -> InteractionResponse {
    let data = private.then(|| InteractionResponseData {
        flags: Some(MessageFlags::EPHEMERAL),
        ..InteractionResponseData::default()
    });
    InteractionResponse { kind: InteractionResponseType::DeferredChannelMessageWithSource, data }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_message_pings_only_its_users_and_an_ephemeral_one_has_its_flag() {
        let m = Message {
            content: "hi @everyone".into(),
            ephemeral: true,
            mentions: vec!["1001".into(), "x".into()],
            ..Message::default()
        };
        let wire = serde_json::to_value(answer(&m)).unwrap();
        assert_eq!(
            wire,
            json!({ "type": 4, "data": {
                "allowed_mentions": { "parse": [], "users": ["1001"] },
                "content": "hi @everyone",
                "flags": 64
            }})
        );
        assert_eq!(serde_json::to_value(deferred(false)).unwrap(), json!({ "type": 5 }));
        assert_eq!(serde_json::to_value(deferred(true)).unwrap(), json!({ "type": 5, "data": { "flags": 64 } }));
        assert_eq!(serde_json::to_value(pong()).unwrap(), json!({ "type": 1 }));
        let plain = serde_json::to_value(body(&Message::new("x", &[]))).unwrap();
        assert_eq!(plain, json!({ "allowed_mentions": { "parse": [] }, "content": "x" }));
    }
}

/// Disables the button whose id is `custom_id` in `rows`: whether it was
/// there.
pub fn disable(rows: &mut [Component], custom_id: &str) -> bool {
    let mut found = false;
    for c in rows {
        for b in buttons_in(c) {
            if b.custom_id.as_deref() == Some(custom_id) {
                b.disabled = true;
                found = true;
            }
        }
    }
    found
}

/// The buttons of a message's top-level component: a row's, or in a
/// layout message a container's rows and sections' and a section's
/// button beside its text (the platform nests no deeper).
fn buttons_in(c: &mut Component) -> Vec<&mut Button> {
    fn of<'a>(c: &'a mut Component, depth: usize, out: &mut Vec<&'a mut Button>) {
        match c {
            Component::Button(b) => out.push(b),
            Component::ActionRow(row) if depth < 3 => row.components.iter_mut().for_each(|c| of(c, depth + 1, out)),
            Component::Container(box_) if depth == 0 => box_.components.iter_mut().for_each(|c| of(c, 1, out)),
            Component::Section(s) if depth < 2 => of(&mut s.accessory, depth + 1, out),
            _ => {}
        }
    }
    let mut out = Vec::new();
    of(c, 0, &mut out);
    out
}

#[cfg(test)]
mod disable_tests {
    use super::*;

    #[test]
    fn a_button_is_disabled_in_the_rows_a_message_has() {
        let rows = serde_json::json!([{ "type": 1, "components": [
            { "type": 2, "style": 1, "label": "Take", "custom_id": "blk2:take:0:" },
            { "type": 2, "style": 5, "label": "Rules", "url": "https://example.com" },
        ] }]);
        let mut rows: Vec<Component> = serde_json::from_value(rows).unwrap();
        assert!(disable(&mut rows, "blk2:take:0:"));
        assert!(!disable(&mut rows, "blk2:other:1:"));
        let back = serde_json::to_value(&rows).unwrap();
        assert_eq!(back[0]["components"][0]["disabled"], true, "{back}");
        assert!(back[0]["components"][1]["disabled"] != true, "{back}");
    }
}
