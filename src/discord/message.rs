//! What blkc sends the platform, in `twilight-model`'s types: a message
//! (an interaction's answer, its edit, a follow-up, a channel message) and
//! the answers to an interaction's HTTP exchange.

use twilight_model::channel::message::{AllowedMentions, MessageFlags};
use twilight_model::http::interaction::{InteractionResponse, InteractionResponseData, InteractionResponseType};
use twilight_model::id::Id;

use crate::message::Message;

/// A message's body, the same for an answer's `data`, an edit, a
/// follow-up and a channel message.
pub fn body(message: &Message) -> InteractionResponseData {
    InteractionResponseData {
        content: Some(message.content.clone()),
        allowed_mentions: Some(allowed_mentions(&message.mentions)),
        flags: message.ephemeral.then_some(MessageFlags::EPHEMERAL),
        ..InteractionResponseData::default()
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

/// "Thinking…": the message comes later, as an edit of this answer.
pub fn deferred() -> InteractionResponse {
    InteractionResponse { kind: InteractionResponseType::DeferredChannelMessageWithSource, data: None }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_message_pings_only_its_users_and_an_ephemeral_one_has_its_flag() {
        let m = Message { content: "hi @everyone".into(), ephemeral: true, mentions: vec!["1001".into(), "x".into()] };
        let wire = serde_json::to_value(answer(&m)).unwrap();
        assert_eq!(
            wire,
            json!({ "type": 4, "data": {
                "allowed_mentions": { "parse": [], "users": ["1001"] },
                "content": "hi @everyone",
                "flags": 64
            }})
        );
        assert_eq!(serde_json::to_value(deferred()).unwrap(), json!({ "type": 5 }));
        assert_eq!(serde_json::to_value(pong()).unwrap(), json!({ "type": 1 }));
        let plain = serde_json::to_value(body(&Message::new("x", &[]))).unwrap();
        assert_eq!(plain, json!({ "allowed_mentions": { "parse": [] }, "content": "x" }));
    }
}
