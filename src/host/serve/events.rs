//! Gateway dispatches made into event runs: which event tree a dispatch
//! triggers and its trigger variables, from the typed payload and from a
//! small cache of what GUILD_CREATE said (server names, member counts,
//! system channels, channel names), kept current from the events that
//! change it. Everything here came from the platform: untrusted, only ever
//! values.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use crate::discord::model::{
    display_name, Dispatch, Guild as GuildWire, Member, MemberEvent, Message as MessageWire, Reaction,
};
use crate::discord::{intents, is_snowflake};

/// The most channels kept of one server (the platform allows 500).
pub const MAX_CHANNELS: usize = crate::discord::model::MAX_CHANNELS;
/// The most servers kept by one process (2,500 a shard at most).
pub const MAX_GUILDS: usize = 2500 * crate::discord::gateway::MAX_AUTO_SHARDS as usize;
/// The longest name kept (the platform's names are at most 100).
const MAX_NAME: usize = 100;

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

impl EventRun {
    pub fn var(&self, name: &str) -> &str {
        self.vars.iter().find(|(k, _)| k == name).map_or("", |(_, v)| v.as_str())
    }
}

/// How long a delivery with an identity of its own (a message's id, a
/// member's join time) counts as seen: a process that takes it again
/// within this, from another shard's session, lets it be.
pub const SEEN_WITH_ID: Duration = Duration::from_secs(6 * 60);
/// How long one without (a reaction, a member leaving): these are known by
/// their payload alone, and a user may do the same thing again, so only a
/// delivery this close to the first is taken for the same.
pub const SEEN_BY_PAYLOAD: Duration = Duration::from_secs(5);

/// What identifies one occurrence of dispatch `t` across processes, and
/// how long it counts as seen: its own id where the platform gives one,
/// else its payload as sent (the same bytes reach every session).
pub fn occurrence(t: &str, event: &Dispatch, raw: &str) -> (String, Duration) {
    match event.own_identity() {
        Some(id) => (crate::run::store::delivery_key(&format!("event:{t}"), &id), SEEN_WITH_ID),
        None => {
            // An edit's payload carries its time: one the same is the same edit.
            let keep = if t == "MESSAGE_UPDATE" { SEEN_WITH_ID } else { SEEN_BY_PAYLOAD };
            (crate::run::store::delivery_key(&format!("event:{t}"), raw), keep)
        }
    }
}

/// The variables of an event, in the order `vocab` lists them.
struct Vars(Vec<(String, String)>);

impl Vars {
    fn put(&mut self, k: &str, v: impl Into<String>) {
        self.0.push((k.to_string(), v.into()));
    }
}

impl Cache {
    /// A server's name and a channel's, as the Gateway last told them
    /// (for commands, whose interactions do not carry them).
    pub fn names(&self, server: &str, channel: &str) -> (Option<String>, Option<String>) {
        let s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let guild = s.guilds.get(server);
        (guild.map(|g| g.name.clone()).filter(|n| !n.is_empty()), guild.and_then(|g| g.channels.get(channel).cloned()))
    }

    /// Takes in a dispatch: updates the cache, and says which run it makes
    /// (`None`: no tree's business, or the bot's own message).
    pub fn dispatch(&self, t: &str, event: &Dispatch) -> Option<EventRun> {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.update(event);
        let kind = intents::kind_of(t)?;
        let mut run = s.run(kind, event)?;
        // A reply goes to `/channels/{channel}/messages` with the bot token:
        // only a snowflake may stand there.
        if run.channel.as_deref().is_some_and(|c| !is_snowflake(c)) {
            run.channel = None;
        }
        if let Dispatch::ChannelDelete(c) = event {
            if let (Some(g), Some(id)) = (&c.guild_id, &c.id) {
                if let Some(guild) = s.guilds.get_mut(g) {
                    guild.channels.remove(id);
                }
            }
        }
        Some(run)
    }
}

impl State {
    /// What a dispatch changes in the cache.
    fn update(&mut self, event: &Dispatch) {
        match event {
            Dispatch::Ready(r) => self.bot_id = r.user.as_ref().and_then(|u| u.id.clone()),
            Dispatch::GuildCreate(g) | Dispatch::GuildUpdate(g) => self.take_server(g),
            // An outage marks a server unavailable; only a real removal forgets it.
            Dispatch::GuildDelete(g) if g.unavailable != Some(true) => {
                if let Some(id) = &g.id {
                    self.guilds.remove(id);
                }
            }
            Dispatch::ChannelCreate(c) | Dispatch::ChannelUpdate(c) => {
                if let (Some(g), Some(id), Some(name)) = (&c.guild_id, &c.id, &c.name) {
                    if let Some(guild) = self.guilds.get_mut(g) {
                        if guild.channels.len() < MAX_CHANNELS || guild.channels.contains_key(id) {
                            guild.channels.insert(id.clone(), kept_name(name.clone()));
                        }
                    }
                }
            }
            Dispatch::MemberAdd(m) => {
                if let Some(guild) = m.guild_id.as_ref().and_then(|g| self.guilds.get_mut(g)) {
                    guild.member_count = guild.member_count.saturating_add(1);
                }
            }
            Dispatch::MemberRemove(m) => {
                if let Some(guild) = m.guild_id.as_ref().and_then(|g| self.guilds.get_mut(g)) {
                    guild.member_count = (guild.member_count - 1).max(0);
                }
            }
            _ => {}
        }
    }

    /// What GUILD_CREATE or GUILD_UPDATE says of a server, into the cache,
    /// within its bounds.
    fn take_server(&mut self, d: &GuildWire) {
        let Some(id) = d.id.clone() else { return };
        if !self.guilds.contains_key(&id) && self.guilds.len() >= MAX_GUILDS {
            return;
        }
        let guild = self.guilds.entry(id).or_default();
        if let Some(name) = &d.name {
            guild.name = kept_name(name.clone());
        }
        if let Some(n) = d.member_count {
            guild.member_count = n;
        }
        if let Some(system) = &d.system_channel_id {
            guild.system_channel = system.clone();
        }
        for c in &d.channels {
            if guild.channels.len() >= MAX_CHANNELS {
                break;
            }
            if let (Some(id), Some(name)) = (&c.id, &c.name) {
                guild.channels.insert(id.clone(), kept_name(name.clone()));
            }
        }
    }

    /// The run of event `kind`: exactly the variables `vocab` promises it.
    fn run(&self, kind: &'static str, event: &Dispatch) -> Option<EventRun> {
        let mut v = Vars(Vec::new());
        let (channel, mention) = match event {
            Dispatch::Ready(r) => {
                v.put("bot_id", self.bot_id.clone().unwrap_or_default());
                v.put("bot_name", r.user.as_ref().and_then(|u| u.username.clone()).unwrap_or_default());
                v.put("server_count", r.guilds.to_string());
                (None, None)
            }
            Dispatch::MemberAdd(m) | Dispatch::MemberRemove(m) => self.member(kind == "member_join", m, &mut v),
            Dispatch::MessageCreate(m) | Dispatch::MessageUpdate(m) => {
                self.message(kind == "message_create", m, &mut v)?
            }
            Dispatch::MessageDelete(m) => {
                let guild = self.guild(&m.guild_id);
                v.put("channel_id", m.channel_id.clone().unwrap_or_default());
                v.put("channel_name", guild.channel_name(&m.channel_id));
                v.put("server_id", m.guild_id.clone().unwrap_or_default());
                v.put("message_id", m.id.clone().unwrap_or_default());
                (m.channel_id.clone(), None)
            }
            Dispatch::ReactionAdd(r) | Dispatch::ReactionRemove(r) => reaction(kind == "reaction_add", r, &mut v),
            Dispatch::ChannelCreate(c) | Dispatch::ChannelDelete(c) => {
                v.put("channel_id", c.id.clone().unwrap_or_default());
                v.put("channel_name", c.name.clone().unwrap_or_default());
                v.put("server_id", c.guild_id.clone().unwrap_or_default());
                v.put("server_name", self.guild(&c.guild_id).name);
                (c.id.clone().filter(|_| kind == "channel_create"), None)
            }
            Dispatch::RoleCreate(r) => {
                let role = r.role.clone().unwrap_or_default();
                v.put("role_id", role.id.unwrap_or_default());
                v.put("role_name", role.name.unwrap_or_default());
                v.put("server_id", r.guild_id.clone().unwrap_or_default());
                v.put("server_name", self.guild(&r.guild_id).name);
                (None, None)
            }
            _ => return None,
        };
        Some(EventRun { kind, vars: v.0, channel, mention: mention.filter(|i| !i.is_empty()) })
    }

    /// What the cache knows of server `id` (nothing: empty names).
    fn guild(&self, id: &Option<String>) -> Guild {
        id.as_ref().and_then(|g| self.guilds.get(g)).cloned().unwrap_or_default()
    }

    /// A member joined (`join`) or left: welcome messages go to the
    /// server's system channel.
    fn member(&self, join: bool, m: &MemberEvent, v: &mut Vars) -> (Option<String>, Option<String>) {
        let guild = self.guild(&m.guild_id);
        let id = m.user.as_ref().and_then(|u| u.id.clone()).unwrap_or_default();
        let member = Member { user: None, nick: m.nick.clone(), ..Member::default() };
        v.put("user_id", id.clone());
        v.put("user_name", display_name(m.user.as_ref(), Some(&member)));
        if join {
            v.put("user_mention", crate::discord::user_mention(&id));
        }
        v.put("server_id", m.guild_id.clone().unwrap_or_default());
        v.put("server_name", guild.name.clone());
        v.put("member_count", guild.member_count.to_string());
        let channel = guild.system_channel.clone().filter(|_| join);
        if join {
            v.put("channel_id", channel.clone().unwrap_or_default());
            v.put("channel_name", guild.channel_name(&channel));
        }
        (channel, Some(id))
    }

    /// A message created (`create`) or edited; `None` for the bot's own
    /// messages, which trigger nothing (no reply loops).
    fn message(&self, create: bool, m: &MessageWire, v: &mut Vars) -> Option<(Option<String>, Option<String>)> {
        let guild = self.guild(&m.guild_id);
        let id = m.author.as_ref().and_then(|u| u.id.clone()).unwrap_or_default();
        if create && (self.bot_id.as_deref() == Some(id.as_str()) || id.is_empty()) {
            return None;
        }
        v.put("user_id", id.clone());
        v.put("user_name", display_name(m.author.as_ref(), m.member.as_ref()));
        if create {
            v.put("user_mention", crate::discord::user_mention(&id));
        }
        v.put("channel_id", m.channel_id.clone().unwrap_or_default());
        v.put("channel_name", guild.channel_name(&m.channel_id));
        v.put("server_id", m.guild_id.clone().unwrap_or_default());
        if create {
            v.put("server_name", guild.name.clone());
        }
        v.put("message_id", m.id.clone().unwrap_or_default());
        v.put("message_content", m.content.clone().unwrap_or_default());
        Some((m.channel_id.clone(), Some(id)))
    }
}

/// A reaction added (`add`) or removed.
fn reaction(add: bool, r: &Reaction, v: &mut Vars) -> (Option<String>, Option<String>) {
    let id = r.user_id.clone().unwrap_or_default();
    let member = r.member.as_ref();
    v.put("user_id", id.clone());
    v.put("user_name", display_name(member.and_then(|m| m.user.as_ref()), member));
    if add {
        v.put("user_mention", crate::discord::user_mention(&id));
    }
    v.put("channel_id", r.channel_id.clone().unwrap_or_default());
    v.put("server_id", r.guild_id.clone().unwrap_or_default());
    v.put("message_id", r.message_id.clone().unwrap_or_default());
    v.put("emoji", r.emoji.as_ref().map_or(String::new(), |e| e.written()));
    (r.channel_id.clone(), Some(id))
}

impl Guild {
    fn channel_name(&self, id: &Option<String>) -> String {
        id.as_ref().and_then(|c| self.channels.get(c)).cloned().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn dispatch(cache: &Cache, t: &str, d: serde_json::Value) -> Option<EventRun> {
        let event = Dispatch::parse(t, &d.to_string())?;
        cache.dispatch(t, &event)
    }

    fn key(t: &str, d: serde_json::Value) -> (String, Duration) {
        let raw = d.to_string();
        occurrence(t, &Dispatch::parse(t, &raw).unwrap(), &raw)
    }

    #[test]
    fn an_occurrence_is_known_by_its_own_id_or_else_by_its_payload_for_a_moment() {
        let message = json!({ "id": "5", "channel_id": "9", "content": "hi" });
        let (k, keep) = key("MESSAGE_CREATE", message.clone());
        assert_eq!((k.as_str(), keep), ("event:MESSAGE_CREATE:5", SEEN_WITH_ID));
        // Another id is another message, whatever it says.
        assert_ne!(key("MESSAGE_CREATE", json!({ "id": "6", "content": "hi" })).0, k);
        assert_eq!(key("MESSAGE_DELETE", message).0, "event:MESSAGE_DELETE:5");
        let join = json!({ "guild_id": "7", "user": { "id": "1" }, "joined_at": "2026-01-01T00:00:00Z" });
        assert_eq!(key("GUILD_MEMBER_ADD", join.clone()).0, "event:GUILD_MEMBER_ADD:7:1:2026-01-01T00:00:00Z");
        // Rejoining is another occurrence.
        let mut again = join.clone();
        again["joined_at"] = json!("2026-01-02T00:00:00Z");
        assert_ne!(key("GUILD_MEMBER_ADD", again).0, key("GUILD_MEMBER_ADD", join).0);
        // A reaction has no id of its own: its payload, for a moment only.
        let reaction = json!({ "user_id": "1", "message_id": "5", "emoji": { "name": "x" } });
        let (k, keep) = key("MESSAGE_REACTION_ADD", reaction.clone());
        assert_eq!(keep, SEEN_BY_PAYLOAD);
        assert_eq!(k, key("MESSAGE_REACTION_ADD", reaction.clone()).0);
        assert_ne!(k, key("MESSAGE_REACTION_REMOVE", reaction).0);
        let other = json!({ "user_id": "2", "message_id": "5", "emoji": { "name": "x" } });
        assert_ne!(k, key("MESSAGE_REACTION_ADD", other).0);
        // An edit is known by all it says (its edit time among it).
        let edit = json!({ "id": "5", "content": "hi!", "edited_timestamp": "2026-01-01T00:00:01Z" });
        assert_eq!(key("MESSAGE_UPDATE", edit).1, SEEN_WITH_ID);
        // An identity of any length makes a short key, still its own.
        let (k, keep) = key("MESSAGE_CREATE", json!({ "id": "9".repeat(1_000_000) }));
        assert!(k.len() < 100 && keep == SEEN_WITH_ID, "{}", k.len());
        assert_ne!(k, key("MESSAGE_CREATE", json!({ "id": "9".repeat(999_999) })).0);
    }

    #[test]
    fn the_cache_fills_trigger_variables_and_follows_changes() {
        let cache = Cache::default();
        let ready =
            dispatch(&cache, "READY", json!({ "user": { "id": "9", "username": "bot" }, "guilds": [{ "id": "1" }] }));
        assert_eq!(ready.unwrap().var("server_count"), "1");
        let guild = json!({ "id": "1", "name": "Home", "member_count": 41, "system_channel_id": "5", "channels": [{ "id": "5", "name": "welcome" }] });
        assert_eq!(dispatch(&cache, "GUILD_CREATE", guild), None);
        let join = json!({ "guild_id": "1", "user": { "id": "7", "username": "ada" }, "nick": "Ada L." });
        let join = dispatch(&cache, "GUILD_MEMBER_ADD", join).unwrap();
        assert_eq!(join.kind, "member_join");
        assert_eq!(
            (join.var("member_count"), join.var("server_name"), join.var("user_name")),
            ("42", "Home", "Ada L.")
        );
        assert_eq!((join.channel.as_deref(), join.var("channel_name")), (Some("5"), "welcome"));
        dispatch(&cache, "CHANNEL_UPDATE", json!({ "guild_id": "1", "id": "5", "name": "hello" }));
        let message = json!({ "guild_id": "1", "channel_id": "5", "id": "77", "content": "hi", "author": { "id": "7", "username": "ada" } });
        let run = dispatch(&cache, "MESSAGE_CREATE", message).unwrap();
        assert_eq!((run.var("channel_name"), run.var("message_content")), ("hello", "hi"));
        // The bot's own message: nothing.
        let own = json!({ "guild_id": "1", "channel_id": "5", "id": "78", "content": "hi", "author": { "id": "9" } });
        assert_eq!(dispatch(&cache, "MESSAGE_CREATE", own), None);
        let leave = dispatch(&cache, "GUILD_MEMBER_REMOVE", json!({ "guild_id": "1", "user": { "id": "7" } })).unwrap();
        assert_eq!((leave.var("member_count"), leave.channel.clone()), ("41", None));
        assert_eq!(dispatch(&cache, "TYPING_START", json!({})), None);
    }

    /// A dispatch of every kind, as the platform sends it (fields blkc
    /// does not read among them).
    fn sample(kind: &str) -> (&'static str, serde_json::Value) {
        let user = json!({ "id": "7", "username": "ada", "global_name": "Ada", "discriminator": "0", "avatar": null });
        let member = json!({ "user": user, "nick": null, "roles": [], "joined_at": "2026-01-01T00:00:00Z", "deaf": false, "mute": false });
        let message = json!({ "id": "77", "channel_id": "5", "guild_id": "1", "author": user, "member": member,
            "content": "hi", "timestamp": "2026-01-01T00:00:00Z", "tts": false, "mention_everyone": false,
            "mentions": [], "mention_roles": [], "attachments": [], "embeds": [], "pinned": false, "type": 0 });
        let reaction = json!({ "user_id": "7", "channel_id": "5", "message_id": "77", "guild_id": "1", "member": member,
            "emoji": { "id": null, "name": "👍" }, "burst": false, "type": 0 });
        let channel = json!({ "id": "6", "type": 0, "guild_id": "1", "name": "new", "position": 3 });
        match kind {
            "member_join" => ("GUILD_MEMBER_ADD", {
                let mut m = member.clone();
                m["guild_id"] = json!("1");
                m
            }),
            "member_leave" => ("GUILD_MEMBER_REMOVE", json!({ "guild_id": "1", "user": user })),
            "message_create" => ("MESSAGE_CREATE", message),
            "message_update" => ("MESSAGE_UPDATE", message),
            "message_delete" => ("MESSAGE_DELETE", json!({ "id": "77", "channel_id": "5", "guild_id": "1" })),
            "reaction_add" => ("MESSAGE_REACTION_ADD", reaction),
            "reaction_remove" => ("MESSAGE_REACTION_REMOVE", reaction),
            "channel_create" => ("CHANNEL_CREATE", channel),
            "channel_delete" => ("CHANNEL_DELETE", channel),
            "role_create" => {
                ("GUILD_ROLE_CREATE", json!({ "guild_id": "1", "role": { "id": "8", "name": "mods", "color": 0 } }))
            }
            "ready" => (
                "READY",
                json!({ "v": 10, "user": user, "guilds": [], "session_id": "s", "resume_gateway_url": "wss://x" }),
            ),
            other => panic!("no sample of `{other}`"),
        }
    }

    #[test]
    fn every_event_kind_gets_exactly_the_variables_the_language_promises() {
        for (kind, promised) in crate::language::vocab::EVENTS {
            let cache = Cache::default();
            dispatch(
                &cache,
                "GUILD_CREATE",
                json!({ "id": "1", "name": "Home", "member_count": 2, "system_channel_id": "5",
                "channels": [{ "id": "5", "name": "welcome" }] }),
            );
            let (t, d) = sample(kind);
            let run = dispatch(&cache, t, d).unwrap_or_else(|| panic!("`{kind}` made no run"));
            assert_eq!(run.kind, *kind);
            let filled: Vec<&str> = run.vars.iter().map(|(k, _)| k.as_str()).collect();
            let mut promised_sorted: Vec<&str> = promised.to_vec();
            promised_sorted.sort_unstable();
            let mut filled_sorted = filled.clone();
            filled_sorted.sort_unstable();
            assert_eq!(filled_sorted, promised_sorted, "`{kind}` fills {filled:?}");
            assert!(
                run.vars
                    .iter()
                    .filter(|(k, _)| k != "user_name" && k != "emoji")
                    .all(|(_, v)| !v.is_empty() || *kind == "ready"),
                "{kind}: {:?}",
                run.vars
            );
        }
    }
}
