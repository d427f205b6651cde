//! Gateway dispatches made into event runs: which event tree a dispatch
//! triggers and its trigger variables, from the payload and from a small
//! cache of what GUILD_CREATE said (server names, member counts, system
//! channels, channel names), kept current from the events that change it.
//! Everything here came from the platform: untrusted, only ever values.

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::Value as Json;

/// The most channels kept of one server (the platform allows 500).
pub const MAX_CHANNELS: usize = 1000;
/// The most servers kept by one process (2,500 a shard at most).
pub const MAX_GUILDS: usize = MAX_AUTO_GUILDS;
const MAX_AUTO_GUILDS: usize = 2500 * super::gateway::MAX_AUTO_SHARDS as usize;
/// The longest name kept (the platform's names are at most 100).
const MAX_NAME: usize = 100;

/// Whether a dispatch's data is read at all: those the cache keeps and
/// those an event tree can run on. Others (presences, typing, member
/// chunks) are never parsed.
pub fn wanted(t: &str) -> bool {
    kind_of(t).is_some() || matches!(t, "GUILD_CREATE" | "GUILD_UPDATE" | "GUILD_DELETE" | "CHANNEL_UPDATE" | "RESUMED")
}

/// A dispatch's data, read as far as blkc uses it: a server's (the largest
/// message the Gateway sends) only for what the cache keeps, so what the
/// platform sends beyond that is skipped, not held; others whole, when
/// [`wanted`]; `null` otherwise.
pub fn payload(t: &str, raw: &str) -> Json {
    #[derive(serde::Deserialize)]
    struct Channel {
        id: Option<Json>,
        name: Option<Json>,
    }
    #[derive(serde::Deserialize)]
    struct Server {
        id: Option<Json>,
        name: Option<Json>,
        member_count: Option<Json>,
        system_channel_id: Option<Json>,
        unavailable: Option<Json>,
        #[serde(default)]
        channels: Vec<Channel>,
    }
    match t {
        "GUILD_CREATE" | "GUILD_UPDATE" => {
            let Ok(server) = serde_json::from_str::<Server>(raw) else { return Json::Null };
            let mut out = serde_json::Map::new();
            for (key, value) in [
                ("id", server.id),
                ("name", server.name),
                ("member_count", server.member_count),
                ("system_channel_id", server.system_channel_id),
                ("unavailable", server.unavailable),
            ] {
                if let Some(v) = value {
                    out.insert(key.into(), v);
                }
            }
            let channels = server
                .channels
                .into_iter()
                .take(MAX_CHANNELS)
                .map(|c| serde_json::json!({ "id": c.id, "name": c.name }))
                .collect();
            out.insert("channels".into(), Json::Array(channels));
            Json::Object(out)
        }
        _ if wanted(t) => serde_json::from_str(raw).unwrap_or(Json::Null),
        _ => Json::Null,
    }
}

/// A name as kept: at most [`MAX_NAME`] characters.
fn kept_name(name: String) -> String {
    if name.chars().count() <= MAX_NAME {
        name
    } else {
        name.chars().take(MAX_NAME).collect()
    }
}

/// What the Gateway told of each server, and who the bot is.
#[derive(Debug, Default)]
pub struct Cache {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    guilds: HashMap<String, Guild>,
    bot_id: Option<String>,
}

#[derive(Debug, Default, Clone)]
struct Guild {
    name: String,
    member_count: i64,
    system_channel: Option<String>,
    channels: HashMap<String, String>,
}

/// An event run to make: its tree's kind, its variables, where its
/// replies go, and whom they may mention.
#[derive(Debug, Clone, PartialEq)]
pub struct EventRun {
    pub kind: &'static str,
    pub vars: Vec<(String, String)>,
    pub channel: Option<String>,
    pub mention: Option<String>,
}

/// The event kind of a dispatch's name, for those with event trees.
pub fn kind_of(t: &str) -> Option<&'static str> {
    Some(match t {
        "GUILD_MEMBER_ADD" => "member_join",
        "GUILD_MEMBER_REMOVE" => "member_leave",
        "MESSAGE_CREATE" => "message_create",
        "MESSAGE_UPDATE" => "message_update",
        "MESSAGE_DELETE" => "message_delete",
        "MESSAGE_REACTION_ADD" => "reaction_add",
        "MESSAGE_REACTION_REMOVE" => "reaction_remove",
        "CHANNEL_CREATE" => "channel_create",
        "CHANNEL_DELETE" => "channel_delete",
        "GUILD_ROLE_CREATE" => "role_create",
        "READY" => "ready",
        _ => return None,
    })
}

/// How long a delivery with an identity of its own (a message's id, a
/// member's join time) counts as seen: a process that takes it again
/// within this, from another shard's session, lets it be.
pub const SEEN_WITH_ID: std::time::Duration = std::time::Duration::from_secs(6 * 60);
/// How long one without (a reaction, a member leaving): these are known by
/// their payload alone, and a user may do the same thing again, so only a
/// delivery this close to the first is taken for the same.
pub const SEEN_BY_PAYLOAD: std::time::Duration = std::time::Duration::from_secs(5);

/// What identifies one occurrence of dispatch `t` across processes, and
/// how long it counts as seen: its own id where the platform gives one,
/// else a digest of its payload (the same bytes reach every session).
pub fn occurrence(t: &str, d: &Json) -> (String, std::time::Duration) {
    let own = match t {
        "MESSAGE_CREATE" | "MESSAGE_DELETE" | "CHANNEL_CREATE" | "CHANNEL_DELETE" => text(d, "id"),
        "GUILD_ROLE_CREATE" => d.get("role").and_then(|r| text(r, "id")),
        "READY" => text(d, "session_id"),
        "GUILD_MEMBER_ADD" => match (d.get("user").and_then(|u| text(u, "id")), text(d, "joined_at")) {
            (Some(user), Some(at)) => Some(format!("{}:{user}:{at}", text(d, "guild_id").unwrap_or_default())),
            _ => None,
        },
        _ => None,
    };
    match own {
        Some(id) => (crate::store::delivery_key(&format!("event:{t}"), &id), SEEN_WITH_ID),
        None => {
            // An edit's payload carries its time: one the same is the same edit.
            let keep = if t == "MESSAGE_UPDATE" { SEEN_WITH_ID } else { SEEN_BY_PAYLOAD };
            (crate::store::delivery_key(&format!("event:{t}"), &d.to_string()), keep)
        }
    }
}

fn text(v: &Json, key: &str) -> Option<String> {
    match v.get(key)? {
        Json::String(s) => Some(s.clone()),
        Json::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// A user's name as shown: the server nickname, else the display name,
/// else the user name.
fn display_name(user: Option<&Json>, member: Option<&Json>) -> String {
    member
        .and_then(|m| text(m, "nick"))
        .or_else(|| user.and_then(|u| text(u, "global_name")))
        .or_else(|| user.and_then(|u| text(u, "username")))
        .unwrap_or_default()
}

impl Cache {
    /// A server's name and a channel's, as the Gateway last told them
    /// (for commands, whose interactions do not carry them).
    pub fn names(&self, server: &str, channel: &str) -> (Option<String>, Option<String>) {
        let s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let guild = s.guilds.get(server);
        (guild.map(|g| g.name.clone()).filter(|n| !n.is_empty()), guild.and_then(|g| g.channels.get(channel).cloned()))
    }

    pub fn bot_id(&self) -> Option<String> {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).bot_id.clone()
    }

    /// Takes in a dispatch: updates the cache, and says which run it makes
    /// (`None`: no tree's business, or the bot's own message).
    pub fn dispatch(&self, t: &str, d: &Json) -> Option<EventRun> {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let guild_id = text(d, "guild_id");
        match t {
            "READY" => {
                let user = d.get("user");
                s.bot_id = user.and_then(|u| text(u, "id"));
                let servers = d.get("guilds").and_then(Json::as_array).map_or(0, Vec::len);
                let vars = vec![
                    ("bot_id".into(), s.bot_id.clone().unwrap_or_default()),
                    ("bot_name".into(), user.and_then(|u| text(u, "username")).unwrap_or_default()),
                    ("server_count".into(), servers.to_string()),
                ];
                return Some(EventRun { kind: "ready", vars, channel: None, mention: None });
            }
            "GUILD_CREATE" | "GUILD_UPDATE" => {
                take_server(&mut s, d);
                return None;
            }
            "GUILD_DELETE" => {
                // An outage marks a server unavailable; only a real removal forgets it.
                if d.get("unavailable").and_then(Json::as_bool) != Some(true) {
                    s.guilds.remove(&text(d, "id")?);
                }
                return None;
            }
            "CHANNEL_CREATE" | "CHANNEL_UPDATE" => {
                if let (Some(g), Some(id), Some(name)) = (&guild_id, text(d, "id"), text(d, "name")) {
                    if let Some(guild) = s.guilds.get_mut(g) {
                        if guild.channels.len() < MAX_CHANNELS || guild.channels.contains_key(&id) {
                            guild.channels.insert(id, kept_name(name));
                        }
                    }
                }
            }
            "GUILD_MEMBER_ADD" => {
                if let Some(guild) = guild_id.as_ref().and_then(|g| s.guilds.get_mut(g)) {
                    guild.member_count = guild.member_count.saturating_add(1);
                }
            }
            "GUILD_MEMBER_REMOVE" => {
                if let Some(guild) = guild_id.as_ref().and_then(|g| s.guilds.get_mut(g)) {
                    guild.member_count = (guild.member_count - 1).max(0);
                }
            }
            _ => {}
        }
        let kind = kind_of(t)?;
        let guild = guild_id.as_ref().and_then(|g| s.guilds.get(g)).cloned().unwrap_or_default();
        let channel_id = text(d, "channel_id");
        let channel_name =
            |id: &Option<String>| id.as_ref().and_then(|c| guild.channels.get(c)).cloned().unwrap_or_default();
        let mut vars: Vec<(String, String)> = Vec::new();
        let mut put = |k: &str, v: String| vars.push((k.to_string(), v));
        let server = guild_id.clone().unwrap_or_default();
        let mut channel = channel_id.clone();
        let mut mention = None;
        match kind {
            "member_join" | "member_leave" => {
                let user = d.get("user");
                let id = user.and_then(|u| text(u, "id")).unwrap_or_default();
                put("user_id", id.clone());
                put("user_name", display_name(user, Some(d)));
                put("user_mention", format!("<@{id}>"));
                put("server_id", server);
                put("server_name", guild.name.clone());
                put("member_count", guild.member_count.to_string());
                if kind == "member_join" {
                    // Welcome messages go to the server's system channel.
                    channel = guild.system_channel.clone();
                    put("channel_id", channel.clone().unwrap_or_default());
                    put("channel_name", channel_name(&channel));
                } else {
                    channel = None;
                }
                mention = Some(id).filter(|i| !i.is_empty());
            }
            "message_create" | "message_update" => {
                let author = d.get("author");
                let id = author.and_then(|u| text(u, "id")).unwrap_or_default();
                // The bot's own messages trigger nothing: no reply loops.
                if kind == "message_create" && (s.bot_id.as_deref() == Some(id.as_str()) || id.is_empty()) {
                    return None;
                }
                put("user_id", id.clone());
                put("user_name", display_name(author, d.get("member")));
                put("user_mention", format!("<@{id}>"));
                put("channel_id", channel_id.clone().unwrap_or_default());
                put("channel_name", channel_name(&channel_id));
                put("server_id", server);
                put("server_name", guild.name.clone());
                put("message_id", text(d, "id").unwrap_or_default());
                put("message_content", text(d, "content").unwrap_or_default());
                mention = Some(id).filter(|i| !i.is_empty());
            }
            "message_delete" => {
                put("channel_id", channel_id.clone().unwrap_or_default());
                put("channel_name", channel_name(&channel_id));
                put("server_id", server);
                put("message_id", text(d, "id").unwrap_or_default());
            }
            "reaction_add" | "reaction_remove" => {
                let id = text(d, "user_id").unwrap_or_default();
                let member = d.get("member");
                put("user_id", id.clone());
                put("user_name", display_name(member.and_then(|m| m.get("user")), member));
                put("user_mention", format!("<@{id}>"));
                put("channel_id", channel_id.clone().unwrap_or_default());
                put("server_id", server);
                put("message_id", text(d, "message_id").unwrap_or_default());
                let emoji = d.get("emoji");
                let name = emoji.and_then(|e| text(e, "name")).unwrap_or_default();
                put(
                    "emoji",
                    match emoji.and_then(|e| text(e, "id")) {
                        Some(id) => format!("<:{name}:{id}>"),
                        None => name,
                    },
                );
                mention = Some(id).filter(|i| !i.is_empty());
            }
            "channel_create" | "channel_delete" => {
                let id = text(d, "id");
                put("channel_id", id.clone().unwrap_or_default());
                put("channel_name", text(d, "name").unwrap_or_default());
                put("server_id", server);
                put("server_name", guild.name.clone());
                channel = id.filter(|_| kind == "channel_create");
            }
            "role_create" => {
                let role = d.get("role");
                put("role_id", role.and_then(|r| text(r, "id")).unwrap_or_default());
                put("role_name", role.and_then(|r| text(r, "name")).unwrap_or_default());
                put("server_id", server);
                put("server_name", guild.name.clone());
                channel = None;
            }
            _ => return None,
        }
        // A reply goes to `/channels/{channel}/messages` with the bot token:
        // only a snowflake may stand there.
        if channel.as_deref().is_some_and(|c| !super::platform::is_snowflake(c)) {
            channel = None;
        }
        if t == "CHANNEL_DELETE" {
            if let (Some(g), Some(id)) = (&guild_id, text(d, "id")) {
                if let Some(guild) = s.guilds.get_mut(g) {
                    guild.channels.remove(&id);
                }
            }
        }
        Some(EventRun { kind, vars, channel, mention })
    }
}

/// What GUILD_CREATE or GUILD_UPDATE says of a server, into the cache,
/// within its bounds.
fn take_server(s: &mut State, d: &Json) -> Option<()> {
    let id = text(d, "id")?;
    if !s.guilds.contains_key(&id) && s.guilds.len() >= MAX_GUILDS {
        return None;
    }
    let guild = s.guilds.entry(id).or_default();
    if let Some(name) = text(d, "name") {
        guild.name = kept_name(name);
    }
    if let Some(n) = d.get("member_count").and_then(Json::as_i64) {
        guild.member_count = n;
    }
    if d.get("system_channel_id").is_some() {
        guild.system_channel = text(d, "system_channel_id");
    }
    for c in d.get("channels").and_then(Json::as_array).into_iter().flatten() {
        if guild.channels.len() >= MAX_CHANNELS {
            break;
        }
        if let (Some(id), Some(name)) = (text(c, "id"), text(c, "name")) {
            guild.channels.insert(id, kept_name(name));
        }
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn var<'a>(run: &'a EventRun, name: &str) -> &'a str {
        run.vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str()).unwrap_or("<none>")
    }

    #[test]
    fn an_occurrence_is_known_by_its_own_id_or_else_by_its_payload_for_a_moment() {
        let message = json!({ "id": "5", "channel_id": "9", "content": "hi" });
        let (key, keep) = occurrence("MESSAGE_CREATE", &message);
        assert_eq!((key.as_str(), keep), ("event:MESSAGE_CREATE:5", SEEN_WITH_ID));
        // Another id is another message, whatever it says.
        assert_ne!(occurrence("MESSAGE_CREATE", &json!({ "id": "6", "content": "hi" })).0, key);
        assert_eq!(occurrence("MESSAGE_DELETE", &message).0, "event:MESSAGE_DELETE:5");
        let join = json!({ "guild_id": "7", "user": { "id": "1" }, "joined_at": "2026-01-01T00:00:00Z" });
        assert_eq!(occurrence("GUILD_MEMBER_ADD", &join).0, "event:GUILD_MEMBER_ADD:7:1:2026-01-01T00:00:00Z");
        // Rejoining is another occurrence.
        let mut again = join.clone();
        again["joined_at"] = json!("2026-01-02T00:00:00Z");
        assert_ne!(occurrence("GUILD_MEMBER_ADD", &again).0, occurrence("GUILD_MEMBER_ADD", &join).0);
        // A reaction has no id of its own: its payload, for a moment only.
        let reaction = json!({ "user_id": "1", "message_id": "5", "emoji": { "name": "x" } });
        let (key, keep) = occurrence("MESSAGE_REACTION_ADD", &reaction);
        assert_eq!(keep, SEEN_BY_PAYLOAD);
        assert_eq!(key, occurrence("MESSAGE_REACTION_ADD", &reaction.clone()).0);
        assert_ne!(key, occurrence("MESSAGE_REACTION_REMOVE", &reaction).0);
        let other = json!({ "user_id": "2", "message_id": "5", "emoji": { "name": "x" } });
        assert_ne!(key, occurrence("MESSAGE_REACTION_ADD", &other).0);
        // An edit is known by all it says (its edit time among it).
        let edit = json!({ "id": "5", "content": "hi!", "edited_timestamp": "2026-01-01T00:00:01Z" });
        assert_eq!(occurrence("MESSAGE_UPDATE", &edit).1, SEEN_WITH_ID);
        assert!(SEEN_BY_PAYLOAD < SEEN_WITH_ID);
        // An identity of any length makes a short key, still its own.
        let long = json!({ "id": "9".repeat(1_000_000) });
        let (key, keep) = occurrence("MESSAGE_CREATE", &long);
        assert!(key.len() < 100 && keep == SEEN_WITH_ID, "{}", key.len());
        assert_ne!(key, occurrence("MESSAGE_CREATE", &json!({ "id": "9".repeat(999_999) })).0);
    }

    #[test]
    fn the_cache_fills_trigger_variables_and_follows_changes() {
        let cache = Cache::default();
        let ready =
            cache.dispatch("READY", &json!({ "user": { "id": "9", "username": "bot" }, "guilds": [{ "id": "1" }] }));
        assert_eq!(var(ready.as_ref().unwrap(), "server_count"), "1");
        let guild = json!({ "id": "1", "name": "Home", "member_count": 41, "system_channel_id": "5", "channels": [{ "id": "5", "name": "welcome" }] });
        assert_eq!(cache.dispatch("GUILD_CREATE", &guild), None);
        let join = cache
            .dispatch(
                "GUILD_MEMBER_ADD",
                &json!({ "guild_id": "1", "user": { "id": "7", "username": "ada" }, "nick": "Ada L." }),
            )
            .unwrap();
        assert_eq!(join.kind, "member_join");
        assert_eq!(
            (var(&join, "member_count"), var(&join, "server_name"), var(&join, "user_name")),
            ("42", "Home", "Ada L.")
        );
        assert_eq!((join.channel.as_deref(), var(&join, "channel_name")), (Some("5"), "welcome"));
        cache.dispatch("CHANNEL_UPDATE", &json!({ "guild_id": "1", "id": "5", "name": "hello" }));
        let message = json!({ "guild_id": "1", "channel_id": "5", "id": "77", "content": "hi", "author": { "id": "7", "username": "ada" } });
        let run = cache.dispatch("MESSAGE_CREATE", &message).unwrap();
        assert_eq!((var(&run, "channel_name"), var(&run, "message_content")), ("hello", "hi"));
        // The bot's own message: nothing.
        let own = json!({ "guild_id": "1", "channel_id": "5", "id": "78", "content": "hi", "author": { "id": "9" } });
        assert_eq!(cache.dispatch("MESSAGE_CREATE", &own), None);
        let leave = cache.dispatch("GUILD_MEMBER_REMOVE", &json!({ "guild_id": "1", "user": { "id": "7" } })).unwrap();
        assert_eq!((var(&leave, "member_count"), leave.channel.clone()), ("41", None));
        assert_eq!(cache.dispatch("TYPING_START", &json!({})), None);
    }
}
