//! What blkc sends the platform, in `twilight-model`'s types: a message
//! (an interaction's answer, its edit, a follow-up, a channel message) and
//! the answers to an interaction's HTTP exchange.

use twilight_model::channel::message::embed::{EmbedAuthor, EmbedField, EmbedFooter, EmbedImage, EmbedThumbnail};
use twilight_model::channel::message::{AllowedMentions, Embed, MessageFlags};
use twilight_model::http::interaction::{InteractionResponse, InteractionResponseData, InteractionResponseType};
use twilight_model::id::Id;

use crate::message::Message;

/// A message's body, the same for an answer's `data`, an edit, a
/// follow-up and a channel message.
pub fn body(message: &Message) -> InteractionResponseData {
    InteractionResponseData {
        content: (!message.content.is_empty() || message.embeds.is_empty()).then(|| message.content.clone()),
        allowed_mentions: Some(allowed_mentions(&message.mentions)),
        flags: message.ephemeral.then_some(MessageFlags::EPHEMERAL),
        embeds: (!message.embeds.is_empty()).then(|| message.embeds.iter().map(embed).collect()),
        ..InteractionResponseData::default()
    }
}

/// A time `message::embed` wrote in UTC, as twilight holds one (its own
/// parser reads only `+00:00` offsets, and drops any other).
fn timestamp(utc: &str) -> Option<twilight_model::util::Timestamp> {
    use time::format_description::well_known::Rfc3339;
    let at = time::OffsetDateTime::parse(utc, &Rfc3339).ok()?;
    twilight_model::util::Timestamp::from_micros((at.unix_timestamp_nanos() / 1000) as i64).ok()
}

/// An embed in the platform's form (`crate::message::embed` has already
/// kept it within the platform's limits and forms).
fn embed(e: &crate::message::Embed) -> Embed {
    let url = |u: &Option<String>| u.clone();
    Embed {
        author: e.author.clone().map(|name| EmbedAuthor { icon_url: None, name, proxy_icon_url: None, url: None }),
        color: e.color,
        description: e.description.clone(),
        fields: e
            .fields
            .iter()
            .map(|f| EmbedField { inline: f.inline, name: f.name.clone(), value: f.value.clone() })
            .collect(),
        flags: None,
        footer: e.footer.clone().map(|text| EmbedFooter { icon_url: None, proxy_icon_url: None, text }),
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
    InteractionResponse { kind: InteractionResponseType::ChannelMessageWithSource, data: Some(body(message)) }
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
            embeds: Vec::new(),
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
