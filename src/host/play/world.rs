//! The world `blkc play` stands in for: its two servers and their
//! channels, the bot, the dispatches that greet a shard (READY and a
//! GUILD_CREATE per server), and the events the page can fire.

use serde_json::Value;

use crate::discord::model::{
    Channel, Emoji, GatewayBot, Guild, Member, MemberEvent, Message, Reaction, Role, RoleEvent, SessionStartLimit, User,
};

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

/// What `GET /gateway/bot` answers: this Gateway, one shard, a full day
/// of session starts.
pub fn bot_info(url: &str) -> GatewayBot {
    let limit = SessionStartLimit { remaining: Some(1000), reset_after: Some(0), max_concurrency: Some(1) };
    GatewayBot { url: Some(url.to_string()), shards: Some(1), session_start_limit: Some(limit) }
}

/// What an event fired from the page or a test may give (each kind reads
/// those it has: a message's `content`, a reaction's `emoji`…).
pub const EVENT_FIELDS: &[&str] =
    &["user_name", "user_id", "server_id", "channel_id", "content", "message_id", "emoji", "channel_name", "role_name"];

/// The dispatch an event of `kind` comes as, and its data as the platform
/// sends it, from what the page gave (`given`: the user, the text, the
/// emoji, a name), in one of `play`'s servers (the first unless it names
/// another) and a channel (the server's own unless it names one).
pub fn dispatch(kind: &str, given: &Value, id: &str) -> Option<(&'static str, Value)> {
    let wire = crate::discord::intents::EVENTS.iter().find(|e| e.kind == kind)?;
    let text =
        |k: &str, default: &str| Some(given[k].as_str().filter(|s| !s.is_empty()).unwrap_or(default).to_string());
    let name = text("user_name", "you");
    let user = User { id: text("user_id", "1001"), username: name.clone(), global_name: name };
    let server = SERVERS.iter().find(|g| given["server_id"] == g.id).unwrap_or(&SERVERS[0]);
    let (channel, guild) = (text("channel_id", server.channel), Some(server.id.to_string()));
    let member = |user: Option<User>| Some(Member { user, roles: Some(Vec::new()), ..Member::default() });
    let typed = match wire.dispatch {
        "GUILD_MEMBER_ADD" | "GUILD_MEMBER_REMOVE" => {
            serde_json::to_value(MemberEvent { guild_id: guild, user: Some(user), ..MemberEvent::default() })
        }
        "MESSAGE_CREATE" | "MESSAGE_UPDATE" => serde_json::to_value(Message {
            id: Some(id.to_string()),
            channel_id: channel,
            guild_id: guild,
            author: Some(user),
            member: member(None),
            content: text("content", "hello"),
        }),
        "MESSAGE_DELETE" => serde_json::to_value(Message {
            id: text("message_id", id),
            channel_id: channel,
            guild_id: guild,
            ..Message::default()
        }),
        "MESSAGE_REACTION_ADD" | "MESSAGE_REACTION_REMOVE" => serde_json::to_value(Reaction {
            user_id: user.id.clone(),
            channel_id: channel,
            message_id: text("message_id", id),
            guild_id: guild,
            member: member(Some(user)),
            emoji: Some(Emoji { id: None, name: text("emoji", "👍") }),
        }),
        "CHANNEL_CREATE" | "CHANNEL_DELETE" => serde_json::to_value(Channel {
            id: Some(id.to_string()),
            name: text("channel_name", "new-channel"),
            guild_id: guild,
        }),
        "GUILD_ROLE_CREATE" => serde_json::to_value(RoleEvent {
            guild_id: guild,
            role: Some(Role { id: Some(id.to_string()), name: text("role_name", "New role") }),
        }),
        _ => return None,
    };
    Some((wire.dispatch, typed.ok()?))
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
    }
}
