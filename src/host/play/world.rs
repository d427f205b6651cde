//! The world `blkc play` stands in for: its two servers and their
//! channels, the bot, the dispatches that greet a shard (READY and a
//! GUILD_CREATE per server), and the events the page can fire.

use serde_json::Value;

use crate::discord::model::{Channel, GatewayBot, Guild, SessionStartLimit};

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
/// The page's member, unless told otherwise.
pub const MEMBER: &str = "1001";
/// The bot's own user.
pub const BOT: &str = "1400000000000000000";

/// What `GET /gateway/bot` answers: this Gateway, one shard, a full day
/// of session starts.
pub fn bot_info(url: &str) -> GatewayBot {
    let limit = SessionStartLimit { remaining: Some(1000), reset_after: Some(0), max_concurrency: Some(1) };
    GatewayBot { url: Some(url.to_string()), shards: Some(1), session_start_limit: Some(limit) }
}

/// What an event fired from the page or a test may give (each kind reads
/// those its dispatch has: a message's `content`, a reaction's `emoji`…):
/// the values of the platform layer's samples (`discord::events::sample`).
/// A webhook event is given its `body` (JSON text; its sample otherwise).
pub fn event_fields() -> Vec<&'static str> {
    let mut fields: Vec<&'static str> = crate::discord::events::SAMPLE_DEFAULTS.iter().map(|(k, _)| *k).collect();
    fields.push("body");
    // (A poll vote's answer, a number.)
    fields.push("answer_id");
    fields
}

/// The direct-message channel between the page's user and the bot.
pub const DM_CHANNEL: &str = "1400000000000000009";

/// The dispatch an event of `kind` comes as, and its data as the platform
/// sends it, from what the page gave (`given`: the user, the text, the
/// emoji, a name), in one of `play`'s servers (the first unless it names
/// another) and a channel (the server's own unless it names one); and what
/// a GUILD_UPDATE tells serve's cache first (`null`: nothing).
pub fn dispatch(kind: &str, given: &Value, id: &str) -> Option<(&'static str, Value, Value)> {
    let server = SERVERS.iter().find(|g| given["server_id"] == g.id).unwrap_or(&SERVERS[0]);
    let value = |k: &str| -> Option<String> {
        let own = given[k].as_str().filter(|s| !s.is_empty()).map(str::to_string);
        own.or_else(|| match k {
            "server_id" => Some(server.id.to_string()),
            "server_name" => Some(server.name.to_string()),
            "channel_id" => Some(server.channel.to_string()),
            "dm_channel_id" => Some(DM_CHANNEL.to_string()),
            "user_name" => Some("you".to_string()),
            "bot_id" => Some(BOT.to_string()),
            "id" | "message_id" | "thread_id" | "event_id" | "new_server_id" => Some(id.to_string()),
            _ => None,
        })
    };
    let (t, mut d, prime) = crate::discord::events::sample(kind, &value)?;
    // A poll vote's answer, as given (a number, as the platform sends it).
    let answer = given["answer_id"].as_u64().or_else(|| given["answer_id"].as_str().and_then(|a| a.parse().ok()));
    if let (Some(answer), true) = (answer, d.get("answer_id").is_some()) {
        d["answer_id"] = Value::from(answer);
    }
    let prime = match prime {
        Value::Object(mut p) => {
            p.insert("id".into(), Value::String(server.id.to_string()));
            Value::Object(p)
        }
        _ => Value::Null,
    };
    Some((t, d, prime))
}

/// A server's GUILD_CREATE: its name, two members, and `#general`, its
/// system channel.
pub fn guild(server: &Server) -> Guild {
    let general = Channel { id: Some(server.channel.to_string()), name: Some("general".to_string()), guild_id: None };
    Guild {
        id: Some(server.id.to_string()),
        name: Some(server.name.to_string()),
        member_count: Some(2),
        system_channel_id: Some(Some(server.channel.to_string())),
        unavailable: None,
        channels: vec![general],
        ..Guild::default()
    }
}
