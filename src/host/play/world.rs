//! The world `blkc play` stands in for: its two servers and their
//! channels, the bot, the dispatches that greet a shard (READY and a
//! GUILD_CREATE per server), and the events the page can fire.

use serde_json::{json, Value};

/// A server `play`'s bot is in, with its one channel, `#general`.
pub struct Server {
    pub id: &'static str,
    pub name: &'static str,
    pub channel: &'static str,
}

/// The servers the bot is in: the page plays in either (a server's
/// variables are its own).
pub const SERVERS: [Server; 2] = [
    Server { id: "1400000000000000001", name: "Play server", channel: "1400000000000000002" },
    Server { id: "1400000000000000003", name: "Second server", channel: "1400000000000000004" },
];
/// The server and channel the page plays in unless told otherwise.
pub const SERVER: &str = SERVERS[0].id;
pub const CHANNEL: &str = SERVERS[0].channel;
/// The sequence of the last dispatch a session starts with (READY, and
/// each server's GUILD_CREATE): the page's events come after it.
pub const GREETED: u64 = 1 + SERVERS.len() as u64;
/// The bot's own user.
pub const BOT: &str = "1400000000000000000";

/// What `GET /gateway/bot` answers: this Gateway, one shard.
pub fn bot_info(url: &str) -> Value {
    json!({ "url": url, "shards": 1,
            "session_start_limit": { "total": 1000, "remaining": 1000, "reset_after": 0, "max_concurrency": 1 } })
}

/// The dispatch an event of `kind` comes as, and its data as the platform
/// sends it, from what the page gave (`given`: the user, the text, the
/// emoji, a name), in one of `play`'s servers (the first unless it names
/// another) and a channel (the server's own unless it names one).
pub fn dispatch(kind: &str, given: &Value, id: &str) -> Option<(&'static str, Value)> {
    let wire = crate::discord::intents::EVENTS.iter().find(|e| e.kind == kind)?;
    let text = |k: &str, default: &str| given[k].as_str().filter(|s| !s.is_empty()).unwrap_or(default).to_string();
    let user = json!({ "id": text("user_id", "1001"), "username": text("user_name", "you"), "global_name": text("user_name", "you") });
    let server = SERVERS.iter().find(|g| given["server_id"] == g.id).unwrap_or(&SERVERS[0]);
    let (channel, guild) = (text("channel_id", server.channel), server.id);
    let d = match wire.dispatch {
        "GUILD_MEMBER_ADD" | "GUILD_MEMBER_REMOVE" => json!({ "guild_id": guild, "user": user, "roles": [] }),
        "MESSAGE_CREATE" | "MESSAGE_UPDATE" => json!({
            "id": id, "channel_id": channel, "guild_id": guild, "author": user,
            "member": { "roles": [] }, "content": text("content", "hello"),
        }),
        "MESSAGE_DELETE" => json!({ "id": text("message_id", id), "channel_id": channel, "guild_id": guild }),
        "MESSAGE_REACTION_ADD" | "MESSAGE_REACTION_REMOVE" => json!({
            "user_id": user["id"], "channel_id": channel, "message_id": text("message_id", id), "guild_id": guild,
            "member": { "user": user }, "emoji": { "id": null, "name": text("emoji", "👍") },
        }),
        "CHANNEL_CREATE" | "CHANNEL_DELETE" => {
            json!({ "id": id, "guild_id": guild, "name": text("channel_name", "new-channel"), "type": 0 })
        }
        "GUILD_ROLE_CREATE" => {
            json!({ "guild_id": guild, "role": { "id": id, "name": text("role_name", "New role") } })
        }
        _ => return None,
    };
    Some((wire.dispatch, d))
}
