//! Gateway dispatches made into event runs: which event trees a dispatch
//! triggers (`discord::events`, the one table of kinds) and their trigger
//! variables, from the dispatch's fields and from a bounded cache of what
//! the Gateway said before: each server's name, member count, system
//! channel, channels, threads, roles, emojis and scheduled events, and of
//! its members their roles, nickname, boost and timeout, who is in which
//! voice channel, and the last messages' text. What changed (roles added,
//! an old nickname, an edit's old text, a boost started, a move between
//! voice channels) is computed against it. Everything here came from the
//! platform: untrusted, only ever values.

use std::collections::{HashMap, HashSet, VecDeque};
use std::hash::Hash;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::Value as Json;

use crate::discord::events::{self, Event, Reply};
use crate::discord::is_snowflake;
use crate::discord::model::{Dispatch, Fields, Guild as GuildWire, Ready};

/// The most channels (threads among them) kept of one server (the platform
/// allows 500 channels, and threads come and go).
pub const MAX_CHANNELS: usize = crate::discord::model::MAX_CHANNELS;
/// The most servers kept by one process (2,500 a shard at most).
pub const MAX_GUILDS: usize = 2500 * crate::discord::gateway::MAX_AUTO_SHARDS as usize;
/// The most members whose roles, nickname, boost and timeout are kept,
/// across servers; the longest unseen are forgotten first.
pub const MAX_MEMBERS: usize = 100_000;
/// The most voice states kept, across servers.
pub const MAX_VOICE: usize = 100_000;
/// The most messages whose text is kept (for an edit's old text and a
/// deleted message's), across channels.
pub const MAX_MESSAGES: usize = 10_000;
/// The most characters kept of a message (the platform's longest).
pub const MAX_CONTENT: usize = 4_000;
/// The most roles, emojis or scheduled events kept of one server.
const MAX_PER_SERVER: usize = 1_000;
/// The most roles kept of one member (a server has at most 250).
const MAX_MEMBER_ROLES: usize = 250;
/// The longest name kept (the platform's names are at most 100).
const MAX_NAME: usize = 100;

/// Text as kept: at most `max` characters.
fn kept(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

/// A map that holds at most `cap` entries: past it, the entry put in
/// longest ago goes. Every cache a stranger can grow is one of these.
#[derive(Debug)]
struct Bounded<K, V> {
    map: HashMap<K, (V, u64)>,
    order: VecDeque<(K, u64)>,
    next: u64,
    cap: usize,
}

impl<K: Hash + Eq + Clone, V> Bounded<K, V> {
    fn new(cap: usize) -> Self {
        Bounded { map: HashMap::new(), order: VecDeque::new(), next: 0, cap }
    }

    fn get(&self, k: &K) -> Option<&V> {
        self.map.get(k).map(|(v, _)| v)
    }

    /// Puts `v` at `k`; what was there.
    fn put(&mut self, k: K, v: V) -> Option<V> {
        if let Some((old, _)) = self.map.get_mut(&k) {
            return Some(std::mem::replace(old, v));
        }
        while self.map.len() >= self.cap {
            let Some((oldest, at)) = self.order.pop_front() else { break };
            if self.map.get(&oldest).is_some_and(|(_, a)| *a == at) {
                self.map.remove(&oldest);
            }
        }
        self.next += 1;
        self.map.insert(k.clone(), (v, self.next));
        self.order.push_back((k, self.next));
        // Entries removed leave their place in the order: dropped at twice the bound.
        if self.order.len() > 2 * self.cap + 16 {
            let map = &self.map;
            self.order.retain(|(k, at)| map.get(k).is_some_and(|(_, a)| a == at));
        }
        None
    }

    fn remove(&mut self, k: &K) -> Option<V> {
        self.map.remove(k).map(|(v, _)| v)
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.map.len()
    }
}

/// What the Gateway told, and who the bot is.
#[derive(Debug)]
pub struct Cache {
    state: Mutex<State>,
}

impl Default for Cache {
    fn default() -> Self {
        Cache { state: Mutex::new(State::default()) }
    }
}

#[derive(Debug)]
struct State {
    guilds: HashMap<String, Guild>,
    bot_id: Option<String>,
    /// Servers READY said the bot is in (or an outage took away) whose
    /// GUILD_CREATE has not come: their GUILD_CREATE is no `guild_join`.
    expected: HashSet<String>,
    members: Bounded<(String, String), MemberState>,
    voice: Bounded<(String, String), String>,
    messages: Bounded<String, Kept>,
}

impl Default for State {
    fn default() -> Self {
        State {
            guilds: HashMap::new(),
            bot_id: None,
            expected: HashSet::new(),
            members: Bounded::new(MAX_MEMBERS),
            voice: Bounded::new(MAX_VOICE),
            messages: Bounded::new(MAX_MESSAGES),
        }
    }
}

#[derive(Debug, Default, Clone)]
struct Guild {
    name: String,
    member_count: i64,
    system_channel: Option<String>,
    channels: HashMap<String, String>,
    roles: HashMap<String, String>,
    /// Each emoji's name and how a message writes it.
    emojis: HashMap<String, (String, String)>,
    scheduled: HashMap<String, String>,
}

/// What is kept of a member.
#[derive(Debug, Default, Clone, PartialEq)]
struct MemberState {
    roles: Vec<String>,
    nick: Option<String>,
    timeout: Option<String>,
    boost: Option<String>,
}

/// What is kept of a message.
#[derive(Debug, Default, Clone)]
struct Kept {
    author: String,
    author_name: String,
    content: String,
}

/// What a dispatch changed that its runs read: the state before it.
#[derive(Debug, Default)]
struct Before {
    member: Option<MemberState>,
    voice: Option<String>,
    message: Option<Kept>,
    /// A channel's, thread's or role's name before the change.
    name: Option<String>,
    emojis: HashMap<String, (String, String)>,
    /// The server's name, for a server the bot left.
    server_name: Option<String>,
    /// A GUILD_CREATE that is the bot added to the server.
    joined: bool,
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

/// What identifies the run of `kind` of one occurrence of dispatch `t`
/// across processes, and how long it counts as seen: the dispatch's own
/// id where the platform gives one, else its payload as sent (the same
/// bytes reach every session).
pub fn occurrence(t: &str, kind: &str, event: &Dispatch, raw: &str) -> (String, Duration) {
    let what = if events::of_dispatch(t).count() > 1 { format!("event:{t}:{kind}") } else { format!("event:{t}") };
    match event.own_identity() {
        Some(id) => (crate::run::store::delivery_key(&what, &id), SEEN_WITH_ID),
        None => {
            // An edit's payload carries its time: one the same is the same edit.
            let keep = if t == "MESSAGE_UPDATE" { SEEN_WITH_ID } else { SEEN_BY_PAYLOAD };
            (crate::run::store::delivery_key(&what, raw), keep)
        }
    }
}

/// A field as text: a string, or a number or boolean as written.
fn text(v: Option<&Json>) -> String {
    match v {
        Some(Json::String(s)) => s.clone(),
        Some(Json::Number(n)) => n.to_string(),
        Some(Json::Bool(b)) => b.to_string(),
        _ => String::new(),
    }
}

/// Field `path` (a JSON pointer) of a dispatch's fields.
fn at<'f>(f: &'f Fields, path: &str) -> Option<&'f Json> {
    let path = path.strip_prefix('/')?;
    let (first, rest) = path.split_once('/').map_or((path, None), |(a, b)| (a, Some(b)));
    let v = f.get(first)?;
    match rest {
        None => Some(v),
        Some(rest) => v.pointer(&format!("/{rest}")),
    }
}

/// Whether an RFC 3339 time is after now (a timeout not yet over).
fn in_future(time: &str) -> bool {
    use time::format_description::well_known::Rfc3339;
    time::OffsetDateTime::parse(time, &Rfc3339).is_ok_and(|t| t > time::OffsetDateTime::now_utc())
}

/// Whether an RFC 3339 time is within two minutes before now (a boost
/// that just started, when the member was not seen before).
fn just_now(time: &str) -> bool {
    use time::format_description::well_known::Rfc3339;
    let now = time::OffsetDateTime::now_utc();
    time::OffsetDateTime::parse(time, &Rfc3339)
        .is_ok_and(|t| t <= now + time::Duration::seconds(5) && now - t < time::Duration::minutes(2))
}

impl Cache {
    /// A server's name and a channel's, as the Gateway last told them
    /// (for commands, whose interactions do not carry them).
    pub fn names(&self, server: &str, channel: &str) -> (Option<String>, Option<String>) {
        let s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let guild = s.guilds.get(server);
        (guild.map(|g| g.name.clone()).filter(|n| !n.is_empty()), guild.and_then(|g| g.channels.get(channel).cloned()))
    }

    /// Takes in a dispatch: updates the cache, and says which runs it
    /// makes (none: no tree's business, or the bot's own message).
    pub fn dispatch(&self, t: &str, event: &Dispatch) -> Vec<EventRun> {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let (fields, before) = s.update(event);
        let mut runs = Vec::new();
        for e in events::of_dispatch(t) {
            if !s.fires(e, &fields, &before) {
                continue;
            }
            let ctx = Ctx { e, f: &fields, before: &before, s: &s, ready: ready(event) };
            runs.push(ctx.run());
        }
        runs
    }

    /// How many members, voice states and messages are kept (for the tests
    /// that hold them to their bounds).
    #[cfg(test)]
    pub fn kept(&self) -> (usize, usize, usize) {
        let s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        (s.members.len(), s.voice.len(), s.messages.len())
    }
}

fn ready(event: &Dispatch) -> Option<&Ready> {
    match event {
        Dispatch::Ready(r) => Some(r),
        _ => None,
    }
}

impl State {
    /// What a dispatch changes in the cache: its fields (a server's own
    /// dispatches as a `guild_id`), and what the runs read of before.
    fn update(&mut self, event: &Dispatch) -> (Fields, Before) {
        let mut before = Before::default();
        let f = match event {
            Dispatch::Ready(r) => {
                self.bot_id = r.user.as_ref().and_then(|u| u.id.clone());
                self.expected.extend(r.guilds.ids.iter().filter(|id| !self.guilds.contains_key(*id)).cloned());
                Fields::new()
            }
            Dispatch::GuildCreate(g) | Dispatch::GuildUpdate(g) => {
                if let (Dispatch::GuildCreate(_), Some(id)) = (event, &g.id) {
                    before.joined = !self.expected.remove(id) && !self.guilds.contains_key(id);
                }
                self.take_server(g);
                guild_fields(g)
            }
            Dispatch::GuildDelete(g) => {
                let id = g.id.clone().unwrap_or_default();
                if g.unavailable == Some(true) {
                    // An outage: the server comes back as a GUILD_CREATE, no join.
                    self.expected.insert(id);
                } else if let Some(gone) = self.guilds.remove(&id) {
                    before.server_name = Some(gone.name);
                }
                guild_fields(g)
            }
            Dispatch::Event(t, f) => {
                self.take(t, f, &mut before);
                f.clone()
            }
            Dispatch::Resumed | Dispatch::InteractionCreate(_) => Fields::new(),
        };
        (f, before)
    }

    /// What GUILD_CREATE or GUILD_UPDATE says of a server, into the cache,
    /// within its bounds.
    fn take_server(&mut self, d: &GuildWire) {
        let Some(id) = d.id.clone() else { return };
        if !self.guilds.contains_key(&id) && self.guilds.len() >= MAX_GUILDS {
            return;
        }
        let guild = self.guilds.entry(id.clone()).or_default();
        if let Some(name) = &d.name {
            guild.name = kept(name, MAX_NAME);
        }
        if let Some(n) = d.member_count {
            guild.member_count = n;
        }
        if let Some(system) = &d.system_channel_id {
            guild.system_channel = system.clone();
        }
        for c in &d.channels {
            if let (Some(cid), Some(name)) = (&c.id, &c.name) {
                put_bounded(&mut guild.channels, cid, kept(name, MAX_NAME), MAX_CHANNELS);
            }
        }
        for r in &d.roles {
            let (rid, name) = (text(r.get("id")), text(r.get("name")));
            put_bounded(&mut guild.roles, &rid, kept(&name, MAX_NAME), MAX_PER_SERVER);
        }
        if !d.emojis.is_empty() {
            guild.emojis = emoji_map(d.emojis.iter());
        }
        for m in &d.members {
            let user = text(m.pointer("/user/id"));
            if !user.is_empty() {
                self.members.put((id.clone(), user), MemberState::of(m));
            }
        }
        for v in &d.voice_states {
            let (user, channel) = (text(v.get("user_id")), text(v.get("channel_id")));
            if !user.is_empty() && !channel.is_empty() {
                self.voice.put((id.clone(), user), channel);
            }
        }
    }

    /// What an event dispatch changes in the cache; what was there before
    /// into `before`.
    fn take(&mut self, t: &str, f: &Fields, before: &mut Before) {
        let guild_id = text(f.get("guild_id"));
        let user = text(at(f, "/user/id").or(f.get("user_id")));
        let key = (guild_id.clone(), user);
        match t {
            "GUILD_MEMBER_ADD" | "GUILD_MEMBER_UPDATE" => {
                if t == "GUILD_MEMBER_ADD" {
                    self.guild_mut(&guild_id, |g| g.member_count = g.member_count.saturating_add(1));
                }
                before.member = self.members.put(key, MemberState::of_fields(f));
            }
            "GUILD_MEMBER_REMOVE" => {
                self.guild_mut(&guild_id, |g| g.member_count = (g.member_count - 1).max(0));
                self.members.remove(&key);
                self.voice.remove(&key);
            }
            "VOICE_STATE_UPDATE" => {
                let channel = text(f.get("channel_id"));
                before.voice = if channel.is_empty() { self.voice.remove(&key) } else { self.voice.put(key, channel) };
            }
            "MESSAGE_CREATE" | "MESSAGE_UPDATE" | "MESSAGE_DELETE" => self.take_message(t, f, before),
            "MESSAGE_DELETE_BULK" => {
                for id in f.get("ids").and_then(Json::as_array).into_iter().flatten() {
                    self.messages.remove(&text(Some(id)));
                }
            }
            _ => self.take_server_part(t, f, &guild_id, before),
        }
    }

    /// A message: its text kept, for its edit and its deletion.
    fn take_message(&mut self, t: &str, f: &Fields, before: &mut Before) {
        let id = text(f.get("id"));
        if t == "MESSAGE_DELETE" {
            before.message = self.messages.remove(&id);
            return;
        }
        let Some(content) = f.get("content").and_then(Json::as_str) else { return };
        let kept_now =
            Kept { author: text(at(f, "/author/id")), author_name: user_name(f), content: kept(content, MAX_CONTENT) };
        if t == "MESSAGE_UPDATE" {
            // An edit's payload may leave out its author: the first is kept.
            let old = self.messages.get(&id).cloned();
            let merged = match &old {
                Some(o) if kept_now.author.is_empty() => Kept { content: kept_now.content, ..o.clone() },
                _ => kept_now,
            };
            before.message = old;
            self.messages.put(id, merged);
        } else {
            self.messages.put(id, kept_now);
        }
    }

    /// Channels, threads, roles, emojis and scheduled events of a server.
    fn take_server_part(&mut self, t: &str, f: &Fields, guild_id: &str, before: &mut Before) {
        let Some(g) = self.guilds.get_mut(guild_id) else { return };
        let id = text(f.get("id"));
        match t {
            "CHANNEL_CREATE" | "CHANNEL_UPDATE" | "THREAD_CREATE" | "THREAD_UPDATE" => {
                let name = kept(&text(f.get("name")), MAX_NAME);
                if !id.is_empty() && !name.is_empty() {
                    before.name = put_bounded(&mut g.channels, &id, name, MAX_CHANNELS);
                }
            }
            "CHANNEL_DELETE" | "THREAD_DELETE" => before.name = g.channels.remove(&id),
            "GUILD_ROLE_CREATE" | "GUILD_ROLE_UPDATE" => {
                let (rid, name) = (text(at(f, "/role/id")), kept(&text(at(f, "/role/name")), MAX_NAME));
                before.name = put_bounded(&mut g.roles, &rid, name, MAX_PER_SERVER);
            }
            "GUILD_ROLE_DELETE" => before.name = g.roles.remove(&text(f.get("role_id"))),
            "GUILD_EMOJIS_UPDATE" => {
                let now = emoji_map(f.get("emojis").and_then(Json::as_array).into_iter().flatten());
                before.emojis = std::mem::replace(&mut g.emojis, now);
            }
            "GUILD_SCHEDULED_EVENT_CREATE" | "GUILD_SCHEDULED_EVENT_UPDATE" => {
                put_bounded(&mut g.scheduled, &id, kept(&text(f.get("name")), MAX_NAME), MAX_PER_SERVER);
            }
            "GUILD_SCHEDULED_EVENT_DELETE" => before.name = g.scheduled.remove(&id),
            _ => {}
        }
    }

    fn guild_mut(&mut self, id: &str, change: impl FnOnce(&mut Guild)) {
        if let Some(g) = self.guilds.get_mut(id) {
            change(g);
        }
    }

    /// Whether kind `e` of its dispatch happened, by what the dispatch
    /// says and what the cache knew.
    fn fires(&self, e: &Event, f: &Fields, before: &Before) -> bool {
        let member_now = || MemberState::of_fields(f);
        match e.kind {
            "message_create" | "dm_message" => {
                let author = text(at(f, "/author/id"));
                let dm = !f.contains_key("guild_id");
                (e.kind == "dm_message") == dm && !author.is_empty() && self.bot_id.as_deref() != Some(&author)
            }
            "boost" => {
                let now = member_now().boost;
                match &before.member {
                    Some(b) => b.boost.is_none() && now.is_some(),
                    None => now.is_some_and(|t| just_now(&t)),
                }
            }
            "boost_end" => before.member.as_ref().is_some_and(|b| b.boost.is_some()) && member_now().boost.is_none(),
            "member_timeout" => {
                let now = member_now().timeout.filter(|t| in_future(t));
                now.is_some() && before.member.as_ref().is_none_or(|b| b.timeout != now)
            }
            "member_timeout_end" => {
                let was = before.member.as_ref().and_then(|b| b.timeout.clone()).is_some_and(|t| in_future(&t));
                was && !member_now().timeout.is_some_and(|t| in_future(&t))
            }
            "voice_join" => before.voice.is_none() && f.get("channel_id").is_some_and(|c| !c.is_null()),
            "voice_leave" => f.get("channel_id").is_none_or(Json::is_null),
            "voice_move" => {
                let now = text(f.get("channel_id"));
                !now.is_empty() && before.voice.as_ref().is_some_and(|b| *b != now)
            }
            "thread_create" => f.get("newly_created").and_then(Json::as_bool) == Some(true),
            "guild_join" => before.joined,
            "guild_leave" => before.server_name.is_some(),
            _ => true,
        }
    }
}

/// Puts `name` at `id` unless the map is full; the name before.
fn put_bounded(map: &mut HashMap<String, String>, id: &str, name: String, max: usize) -> Option<String> {
    if id.is_empty() || (map.len() >= max && !map.contains_key(id)) {
        return map.get(id).cloned();
    }
    map.insert(id.to_string(), name)
}

/// A server's emojis by id: each one's name, and how a message writes it.
fn emoji_map<'a>(list: impl Iterator<Item = &'a Json>) -> HashMap<String, (String, String)> {
    let mut out = HashMap::new();
    for e in list.take(MAX_PER_SERVER) {
        let (id, name) = (text(e.get("id")), kept(&text(e.get("name")), MAX_NAME));
        let animated = e.get("animated").and_then(Json::as_bool) == Some(true);
        let written = format!("<{}:{name}:{id}>", if animated { "a" } else { "" });
        if !id.is_empty() {
            out.insert(id, (name, written));
        }
    }
    out
}

/// A server's own dispatch (GUILD_CREATE, _DELETE) as an event's fields.
fn guild_fields(g: &GuildWire) -> Fields {
    let mut f = Fields::new();
    f.insert("guild_id".into(), Json::String(g.id.clone().unwrap_or_default()));
    f
}

impl MemberState {
    /// A member as GUILD_CREATE lists it.
    fn of(m: &Json) -> MemberState {
        let f: Fields = m.as_object().cloned().unwrap_or_default();
        MemberState::of_fields(&f)
    }

    /// A member as GUILD_MEMBER_ADD and _UPDATE send it.
    fn of_fields(f: &Fields) -> MemberState {
        let some = |k: &str| Some(text(f.get(k))).filter(|s| !s.is_empty());
        let roles = f.get("roles").and_then(Json::as_array).into_iter().flatten();
        MemberState {
            roles: roles.map(|r| text(Some(r))).filter(|r| is_snowflake(r)).take(MAX_MEMBER_ROLES).collect(),
            nick: some("nick").map(|n| kept(&n, MAX_NAME)),
            timeout: some("communication_disabled_until"),
            boost: some("premium_since"),
        }
    }
}

/// The name of the user a dispatch is about, as the server shows it: the
/// member's nickname, else their display name, else their username.
fn user_name(f: &Fields) -> String {
    let nick = text(at(f, "/member/nick").or(f.get("nick")));
    if !nick.is_empty() {
        return nick;
    }
    let user = ["/user", "/author", "/inviter", "/member/user"].iter().find_map(|p| at(f, p).filter(|u| u.is_object()));
    let Some(user) = user else { return String::new() };
    let global = text(user.get("global_name"));
    if global.is_empty() {
        text(user.get("username"))
    } else {
        global
    }
}

/// What the runs of one dispatch read: the kind, the fields, the cache
/// (after the dispatch) and what it changed.
struct Ctx<'a> {
    e: &'static Event,
    f: &'a Fields,
    before: &'a Before,
    s: &'a State,
    ready: Option<&'a Ready>,
}

impl Ctx<'_> {
    /// The run: exactly the variables the kind promises, and where its
    /// replies go.
    fn run(&self) -> EventRun {
        let vars: Vec<(String, String)> = self.e.vars.iter().map(|v| (v.to_string(), self.var(v))).collect();
        let get = |name: &str| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
        // A reply goes to `/channels/{channel}/messages` with the bot token:
        // only a snowflake may stand there.
        let channel = match self.e.reply {
            Reply::Nowhere => None,
            Reply::Channel | Reply::System | Reply::Dm => get("channel_id"),
            Reply::Thread => get("thread_id"),
        }
        .filter(|c| is_snowflake(c));
        let mention = get("user_id").filter(|u| !u.is_empty());
        EventRun { kind: self.e.kind, vars, channel, mention }
    }

    fn text(&self, k: &str) -> String {
        text(self.f.get(k))
    }

    fn guild(&self) -> Option<&Guild> {
        self.s.guilds.get(&self.text("guild_id"))
    }

    fn channel_name(&self, id: &str) -> String {
        self.guild().and_then(|g| g.channels.get(id)).cloned().unwrap_or_default()
    }

    fn var(&self, name: &str) -> String {
        self.common(name)
            .or_else(|| self.message(name))
            .or_else(|| self.member(name))
            .or_else(|| self.server_part(name))
            .or_else(|| self.other(name))
            .unwrap_or_default()
    }

    /// Who, where: the variables most kinds have.
    fn common(&self, name: &str) -> Option<String> {
        let kind = self.e.kind;
        Some(match name {
            "user_id" => self.user_id(),
            "user_name" => match kind {
                "message_delete" => self.before.message.as_ref().map(|m| m.author_name.clone()).unwrap_or_default(),
                _ => user_name(self.f),
            },
            "user_mention" => Some(self.user_id())
                .filter(|u| !u.is_empty())
                .map_or(String::new(), |u| crate::discord::user_mention(&u)),
            "server_id" => self.text("guild_id"),
            "server_name" => match &self.before.server_name {
                Some(n) => n.clone(),
                None => self.guild().map(|g| g.name.clone()).unwrap_or_default(),
            },
            "member_count" if kind == "thread_members" => self.text("member_count"),
            "member_count" => self.guild().map_or(0, |g| g.member_count).to_string(),
            "channel_id" => self.channel_id(),
            "channel_name" if kind.starts_with("channel_") => self.text("name"),
            "channel_name" => self.channel_name(&self.channel_id()),
            "old_channel_id" => self.before.voice.clone().unwrap_or_default(),
            "old_channel_name" if kind == "channel_update" => self.before.name.clone().unwrap_or_default(),
            "old_channel_name" => self.channel_name(self.before.voice.as_deref().unwrap_or_default()),
            _ => return None,
        })
    }

    fn user_id(&self) -> String {
        if self.e.kind == "message_delete" {
            return self.before.message.as_ref().map(|m| m.author.clone()).unwrap_or_default();
        }
        let from = ["/user/id", "/author/id", "/user_id", "/inviter/id", "/owner_id", "/creator_id"];
        from.iter().map(|p| text(at(self.f, p))).find(|u| !u.is_empty()).unwrap_or_default()
    }

    /// The channel the event is about (where a reply goes, for most).
    fn channel_id(&self) -> String {
        match self.e.kind {
            "member_join" | "boost" | "guild_join" => {
                self.guild().and_then(|g| g.system_channel.clone()).unwrap_or_default()
            }
            "voice_leave" => self.before.voice.clone().unwrap_or_default(),
            k if k.starts_with("channel_") => self.text("id"),
            k if k.starts_with("thread_") => self.text("parent_id"),
            _ => self.text("channel_id"),
        }
    }

    fn message(&self, name: &str) -> Option<String> {
        let kind = self.e.kind;
        let kept = self.before.message.as_ref();
        let ids = || self.f.get("ids").and_then(Json::as_array).cloned().unwrap_or_default();
        Some(match name {
            "message_id" if kind.starts_with("message_") || kind == "dm_message" => self.text("id"),
            "message_id" => self.text("message_id"),
            "message_content" if kind == "message_delete" => kept.map(|m| m.content.clone()).unwrap_or_default(),
            "message_content" => self.text("content"),
            "old_message_content" => kept.map(|m| m.content.clone()).unwrap_or_default(),
            "message_count" => ids().len().to_string(),
            "message_ids" => ids().iter().map(|i| text(Some(i))).collect::<Vec<_>>().join(", "),
            "emoji" => {
                let (id, name) = (text(at(self.f, "/emoji/id")), text(at(self.f, "/emoji/name")));
                if id.is_empty() {
                    name
                } else {
                    format!("<:{name}:{id}>")
                }
            }
            _ => return None,
        })
    }

    /// What changed of a member.
    fn member(&self, name: &str) -> Option<String> {
        let now = MemberState::of_fields(self.f);
        let before = self.before.member.as_ref();
        let mentions =
            |roles: &mut dyn Iterator<Item = &String>| roles.map(|r| format!("<@&{r}>")).collect::<Vec<_>>().join(", ");
        Some(match name {
            "roles" => mentions(&mut now.roles.iter()),
            "roles_added" => {
                before.map_or(String::new(), |b| mentions(&mut now.roles.iter().filter(|r| !b.roles.contains(r))))
            }
            "roles_removed" => {
                before.map_or(String::new(), |b| mentions(&mut b.roles.iter().filter(|r| !now.roles.contains(r))))
            }
            "nickname" => now.nick.unwrap_or_default(),
            "old_nickname" => before.and_then(|b| b.nick.clone()).unwrap_or_default(),
            "timeout_until" => now.timeout.filter(|t| in_future(t)).unwrap_or_default(),
            "boosting_since" => now.boost.unwrap_or_default(),
            _ => return None,
        })
    }

    /// Threads, invites, roles, emojis, stickers.
    fn server_part(&self, name: &str) -> Option<String> {
        let flag =
            |k: &str| (at(self.f, &format!("/thread_metadata/{k}")).and_then(Json::as_bool) == Some(true)).to_string();
        let mentions = |list: Option<&Json>, id: &str| {
            let items = list.and_then(Json::as_array).into_iter().flatten();
            let ids = items.map(|m| if id.is_empty() { text(Some(m)) } else { text(m.get(id)) });
            ids.filter(|i| is_snowflake(i)).map(|i| crate::discord::user_mention(&i)).collect::<Vec<_>>().join(", ")
        };
        let now_emojis = || self.guild().map(|g| g.emojis.clone()).unwrap_or_default();
        Some(match name {
            "thread_id" => self.text("id"),
            "thread_name" if self.e.kind == "thread_delete" => self.before.name.clone().unwrap_or_default(),
            "thread_name" => {
                Some(self.text("name")).filter(|n| !n.is_empty()).unwrap_or_else(|| self.channel_name(&self.text("id")))
            }
            "old_thread_name" => self.before.name.clone().unwrap_or_default(),
            "thread_archived" => flag("archived"),
            "thread_locked" => flag("locked"),
            "users_added" => mentions(self.f.get("added_members"), "user_id"),
            "users_removed" => mentions(self.f.get("removed_member_ids"), ""),
            "invite_code" => self.text("code"),
            "invite_url" => format!("https://discord.gg/{}", self.text("code")),
            "invite_max_uses" => self.text("max_uses"),
            "invite_max_age" => self.text("max_age"),
            "invite_expires_at" => self.text("expires_at"),
            "role_id" => {
                Some(text(at(self.f, "/role/id"))).filter(|r| !r.is_empty()).unwrap_or_else(|| self.text("role_id"))
            }
            "role_name" if self.e.kind == "role_delete" => self.before.name.clone().unwrap_or_default(),
            "role_name" => text(at(self.f, "/role/name")),
            "role_mention" => format!("<@&{}>", text(at(self.f, "/role/id"))),
            "old_role_name" => self.before.name.clone().unwrap_or_default(),
            "emoji_count" => now_emojis().len().to_string(),
            "emojis_added" => {
                let now = now_emojis();
                let mut added: Vec<&(String, String)> =
                    now.iter().filter(|(id, _)| !self.before.emojis.contains_key(*id)).map(|(_, e)| e).collect();
                added.sort();
                added.iter().map(|(_, w)| w.as_str()).collect::<Vec<_>>().join(" ")
            }
            "emojis_removed" => {
                let now = now_emojis();
                let mut gone: Vec<&str> = self
                    .before
                    .emojis
                    .iter()
                    .filter(|(id, _)| !now.contains_key(*id))
                    .map(|(_, (n, _))| n.as_str())
                    .collect();
                gone.sort_unstable();
                gone.join(", ")
            }
            "sticker_count" | "stickers" => {
                let list = self.f.get("stickers").and_then(Json::as_array).cloned().unwrap_or_default();
                if name == "sticker_count" {
                    list.len().to_string()
                } else {
                    list.iter().map(|s| kept(&text(s.get("name")), MAX_NAME)).collect::<Vec<_>>().join(", ")
                }
            }
            _ => return None,
        })
    }

    /// Scheduled events, AutoMod, polls, entitlements, presences, READY.
    fn other(&self, name: &str) -> Option<String> {
        let word = |k: &str, words: &[&str]| {
            let n = at(self.f, k).and_then(Json::as_u64).unwrap_or(0) as usize;
            words.get(n).copied().unwrap_or_default().to_string()
        };
        let event_id =
            Some(self.text("id")).filter(|i| !i.is_empty()).unwrap_or_else(|| self.text("guild_scheduled_event_id"));
        let activity = at(self.f, "/activities/0");
        Some(match name {
            "event_id" => event_id,
            "event_name" if self.e.kind.starts_with("scheduled_event_user") => {
                self.guild().and_then(|g| g.scheduled.get(&event_id).cloned()).unwrap_or_default()
            }
            "event_name" => self.text("name"),
            "event_description" => self.text("description"),
            "event_start" => self.text("scheduled_start_time"),
            "event_end" => self.text("scheduled_end_time"),
            "event_status" => word("/status", &["", "scheduled", "active", "completed", "canceled"]),
            "event_location" => text(at(self.f, "/entity_metadata/location")),
            "event_url" => format!("https://discord.com/events/{}/{event_id}", self.text("guild_id")),
            "rule_id" => self.text("rule_id"),
            "rule_trigger" => word(
                "/rule_trigger_type",
                &["", "keyword", "", "spam", "keyword_preset", "mention_spam", "member_profile"],
            ),
            "automod_action" => word(
                "/action/type",
                &["", "block_message", "send_alert_message", "timeout", "block_member_interaction"],
            ),
            "matched_keyword" => self.text("matched_keyword"),
            "matched_content" => self.text("matched_content"),
            "answer_id" => self.text("answer_id"),
            "entitlement_id" => self.text("id"),
            "sku_id" => self.text("sku_id"),
            "entitlement_type" => word(
                "/type",
                &[
                    "",
                    "purchase",
                    "premium_subscription",
                    "developer_gift",
                    "test_mode_purchase",
                    "free_purchase",
                    "user_gift",
                    "premium_purchase",
                    "application_subscription",
                ],
            ),
            "starts_at" => self.text("starts_at"),
            "ends_at" => self.text("ends_at"),
            "status" => self.text("status"),
            "activity" => activity.map_or(String::new(), |a| {
                let custom = a.get("type").and_then(Json::as_u64) == Some(4);
                text(if custom { a.get("state") } else { a.get("name") })
            }),
            "activity_type" => activity.and_then(|a| a.get("type")).and_then(Json::as_u64).map_or(String::new(), |t| {
                ["playing", "streaming", "listening", "watching", "custom", "competing"]
                    .get(t as usize)
                    .copied()
                    .unwrap_or_default()
                    .to_string()
            }),
            "bot_id" => self.s.bot_id.clone().unwrap_or_default(),
            "bot_name" => self.ready.and_then(|r| r.user.as_ref()?.username.clone()).unwrap_or_default(),
            "server_count" => self.ready.map_or(0, |r| r.guilds.count).to_string(),
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn dispatch(cache: &Cache, t: &str, d: serde_json::Value) -> Vec<EventRun> {
        match Dispatch::parse(t, &d.to_string()) {
            Some(event) => cache.dispatch(t, &event),
            None => Vec::new(),
        }
    }

    fn one(cache: &Cache, t: &str, d: serde_json::Value) -> Option<EventRun> {
        let mut runs = dispatch(cache, t, d);
        assert!(runs.len() <= 1, "{runs:?}");
        runs.pop()
    }

    fn key(t: &str, d: serde_json::Value) -> (String, Duration) {
        let raw = d.to_string();
        let kind = events::of_dispatch(t).next().unwrap().kind;
        occurrence(t, kind, &Dispatch::parse(t, &raw).unwrap(), &raw)
    }

    #[test]
    fn an_occurrence_is_known_by_its_own_id_or_else_by_its_payload_for_a_moment() {
        let message = json!({ "id": "5", "channel_id": "9", "content": "hi" });
        let (k, keep) = key("MESSAGE_CREATE", message.clone());
        assert_eq!((k.as_str(), keep), ("event:MESSAGE_CREATE:message_create:5", SEEN_WITH_ID));
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
        assert!(k.len() < 150 && keep == SEEN_WITH_ID, "{}", k.len());
        assert_ne!(k, key("MESSAGE_CREATE", json!({ "id": "9".repeat(999_999) })).0);
        // Two kinds of one dispatch are two runs, each known on its own.
        let update = json!({ "guild_id": "7", "user": { "id": "1" }, "premium_since": "2026-01-01T00:00:00Z" });
        let raw = update.to_string();
        let event = Dispatch::parse("GUILD_MEMBER_UPDATE", &raw).unwrap();
        let a = occurrence("GUILD_MEMBER_UPDATE", "member_update", &event, &raw).0;
        assert_ne!(a, occurrence("GUILD_MEMBER_UPDATE", "boost", &event, &raw).0);
    }

    fn home(cache: &Cache) {
        dispatch(cache, "READY", json!({ "user": { "id": "9", "username": "bot" }, "guilds": [{ "id": "1" }] }));
        let guild = json!({ "id": "1", "name": "Home", "member_count": 41, "system_channel_id": "5",
            "channels": [{ "id": "5", "name": "welcome" }, { "id": "6", "name": "lounge" }],
            "roles": [{ "id": "8", "name": "mods" }, { "id": "9", "name": "vip" }] });
        assert!(dispatch(cache, "GUILD_CREATE", guild).is_empty());
    }

    #[test]
    fn the_cache_fills_trigger_variables_and_follows_changes() {
        let cache = Cache::default();
        let ready = json!({ "user": { "id": "9", "username": "bot" }, "guilds": [{ "id": "1", "unavailable": true }] });
        assert_eq!(one(&cache, "READY", ready).unwrap().var("server_count"), "1");
        // A server READY named: its GUILD_CREATE is the bot connecting, no join.
        home(&cache);
        assert_eq!(cache.names("1", "5"), (Some("Home".into()), Some("welcome".into())));
        let join = json!({ "guild_id": "1", "user": { "id": "7", "username": "ada" }, "nick": "Ada L." });
        let join = one(&cache, "GUILD_MEMBER_ADD", join).unwrap();
        assert_eq!(join.kind, "member_join");
        assert_eq!(
            (join.var("member_count"), join.var("server_name"), join.var("user_name")),
            ("42", "Home", "Ada L.")
        );
        assert_eq!((join.channel.as_deref(), join.var("channel_name")), (Some("5"), "welcome"));
        let renamed = one(&cache, "CHANNEL_UPDATE", json!({ "guild_id": "1", "id": "5", "name": "hello" })).unwrap();
        assert_eq!((renamed.var("channel_name"), renamed.var("old_channel_name")), ("hello", "welcome"));
        let message = json!({ "guild_id": "1", "channel_id": "5", "id": "77", "content": "hi", "author": { "id": "7", "username": "ada" } });
        let run = one(&cache, "MESSAGE_CREATE", message).unwrap();
        assert_eq!((run.var("channel_name"), run.var("message_content")), ("hello", "hi"));
        // An edit says what the text was; a deletion what it said, and who.
        let edit = json!({ "guild_id": "1", "channel_id": "5", "id": "77", "content": "hi!" });
        let edit = one(&cache, "MESSAGE_UPDATE", edit).unwrap();
        assert_eq!((edit.var("old_message_content"), edit.var("message_content")), ("hi", "hi!"));
        let gone = one(&cache, "MESSAGE_DELETE", json!({ "guild_id": "1", "channel_id": "5", "id": "77" })).unwrap();
        assert_eq!((gone.var("message_content"), gone.var("user_id"), gone.var("user_name")), ("hi!", "7", "ada"));
        // The bot's own message: nothing.
        let own = json!({ "guild_id": "1", "channel_id": "5", "id": "78", "content": "hi", "author": { "id": "9" } });
        assert!(dispatch(&cache, "MESSAGE_CREATE", own).is_empty());
        let leave = one(&cache, "GUILD_MEMBER_REMOVE", json!({ "guild_id": "1", "user": { "id": "7" } })).unwrap();
        assert_eq!((leave.var("member_count"), leave.channel.clone()), ("41", None));
        assert!(dispatch(&cache, "TYPING_START", json!({})).is_empty());
        // A server the bot was not in: joined; then removed.
        let added = one(&cache, "GUILD_CREATE", json!({ "id": "2", "name": "New", "system_channel_id": "3" })).unwrap();
        assert_eq!((added.kind, added.var("server_name"), added.channel.as_deref()), ("guild_join", "New", Some("3")));
        // An outage is no leave, and the server's return no join.
        assert!(dispatch(&cache, "GUILD_DELETE", json!({ "id": "2", "unavailable": true })).is_empty());
        assert!(dispatch(&cache, "GUILD_CREATE", json!({ "id": "2", "name": "New" })).is_empty());
        let left = one(&cache, "GUILD_DELETE", json!({ "id": "2" })).unwrap();
        assert_eq!((left.kind, left.var("server_name")), ("guild_leave", "New"));
    }

    #[test]
    fn what_changed_of_a_member_and_a_voice_state_is_computed_against_the_cache() {
        let cache = Cache::default();
        home(&cache);
        let member = |roles: serde_json::Value, extra: serde_json::Value| {
            let mut m = json!({ "guild_id": "1", "user": { "id": "7", "username": "ada" }, "roles": roles });
            m.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            m
        };
        one(&cache, "GUILD_MEMBER_ADD", member(json!(["8"]), json!({})));
        let runs = dispatch(&cache, "GUILD_MEMBER_UPDATE", member(json!(["9"]), json!({ "nick": "Ada" })));
        let kinds: Vec<&str> = runs.iter().map(|r| r.kind).collect();
        assert_eq!(kinds, ["member_update"]);
        let r = &runs[0];
        assert_eq!((r.var("roles_added"), r.var("roles_removed"), r.var("nickname")), ("<@&9>", "<@&8>", "Ada"));
        let soon = (time::OffsetDateTime::now_utc() + time::Duration::hours(1))
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap();
        let now = time::OffsetDateTime::now_utc().format(&time::format_description::well_known::Rfc3339).unwrap();
        let runs = dispatch(
            &cache,
            "GUILD_MEMBER_UPDATE",
            member(json!(["9"]), json!({ "communication_disabled_until": soon, "premium_since": now })),
        );
        let kinds: Vec<&str> = runs.iter().map(|r| r.kind).collect();
        assert_eq!(kinds, ["member_update", "boost", "member_timeout"]);
        assert_eq!((runs[0].var("roles_added"), runs[0].var("old_nickname")), ("", "Ada"));
        assert_eq!(runs[1].channel.as_deref(), Some("5"));
        let runs = dispatch(&cache, "GUILD_MEMBER_UPDATE", member(json!(["9"]), json!({})));
        let kinds: Vec<&str> = runs.iter().map(|r| r.kind).collect();
        assert_eq!(kinds, ["member_update", "boost_end", "member_timeout_end"]);
        // Voice: joined, moved, left (the channel left is where a reply goes).
        let voice = |c: serde_json::Value| json!({ "guild_id": "1", "user_id": "7", "channel_id": c });
        let kind = |r: Vec<EventRun>| r.iter().map(|r| (r.kind, r.var("channel_name").to_string())).collect::<Vec<_>>();
        assert_eq!(kind(dispatch(&cache, "VOICE_STATE_UPDATE", voice(json!("5")))), [("voice_join", "welcome".into())]);
        assert!(dispatch(&cache, "VOICE_STATE_UPDATE", voice(json!("5"))).is_empty(), "a mute is no move");
        let moved = one(&cache, "VOICE_STATE_UPDATE", voice(json!("6"))).unwrap();
        assert_eq!(
            (moved.kind, moved.var("old_channel_name"), moved.var("channel_name")),
            ("voice_move", "welcome", "lounge")
        );
        let left = one(&cache, "VOICE_STATE_UPDATE", voice(json!(null))).unwrap();
        assert_eq!((left.kind, left.var("channel_id"), left.channel.as_deref()), ("voice_leave", "6", Some("6")));
    }

    /// A dispatch of `kind` from its sample, the cache told first what
    /// the sample says it knew.
    fn sampled(cache: &Cache, kind: &str) -> Vec<EventRun> {
        let (t, d, prime) = events::sample(kind, &|_| None).unwrap();
        if let Some(prime) = prime.as_object() {
            let mut update = json!({ "id": "1" });
            update.as_object_mut().unwrap().extend(prime.clone());
            dispatch(cache, "GUILD_UPDATE", update);
        }
        dispatch(cache, t, d)
    }

    #[test]
    fn every_event_kind_gets_exactly_the_variables_the_language_promises() {
        // Variables a sample leaves empty, as the platform's would.
        let may_be_empty = [
            "old_message_content",
            "old_channel_name",
            "old_thread_name",
            "old_role_name",
            "old_nickname",
            "nickname",
            "event_end",
            "event_location",
            "ends_at",
            "timeout_until",
            "boosting_since",
            "roles_removed",
            "users_removed",
            "emojis_removed",
            "starts_at",
            "server_id",
            "server_name",
            "channel_name",
            "user_name",
            "message_content",
            "message_id",
            "user_id",
            "user_mention",
            "channel_id",
            "thread_name",
            "event_name",
            "role_name",
        ];
        for e in events::EVENTS {
            let cache = Cache::default();
            home(&cache);
            let runs = sampled(&cache, e.kind);
            let run =
                runs.iter().find(|r| r.kind == e.kind).unwrap_or_else(|| panic!("`{}` made no run: {runs:?}", e.kind));
            let filled: Vec<&str> = run.vars.iter().map(|(k, _)| k.as_str()).collect();
            assert_eq!(filled, e.vars, "`{}`", e.kind);
            let empty: Vec<&str> = run
                .vars
                .iter()
                .filter(|(k, v)| v.is_empty() && !may_be_empty.contains(&k.as_str()))
                .map(|(k, _)| k.as_str())
                .collect();
            assert!(empty.is_empty(), "{}: {empty:?} empty in {:?}", e.kind, run.vars);
            // Where its reply goes, as the table says.
            assert_eq!(run.channel.is_some(), e.reply != Reply::Nowhere, "{}: {:?}", e.kind, run.channel);
        }
    }

    #[test]
    fn the_cache_stays_within_its_bounds_under_a_flood() {
        let cache = Cache::default();
        home(&cache);
        for i in 0..(MAX_MEMBERS + 5_000) {
            let user = json!({ "id": (10_000 + i).to_string() });
            let update = json!({ "guild_id": "1", "user": user, "roles": ["8", "9"], "nick": "x".repeat(200) });
            let raw = update.to_string();
            let event = Dispatch::parse("GUILD_MEMBER_UPDATE", &raw).unwrap();
            cache.dispatch("GUILD_MEMBER_UPDATE", &event);
            if i % 3 == 0 {
                let voice = json!({ "guild_id": "1", "user_id": (10_000 + i).to_string(), "channel_id": "5" });
                cache.dispatch(
                    "VOICE_STATE_UPDATE",
                    &Dispatch::parse("VOICE_STATE_UPDATE", &voice.to_string()).unwrap(),
                );
            }
        }
        for i in 0..(MAX_MESSAGES + 100) {
            let m = json!({ "guild_id": "1", "channel_id": "5", "id": i.to_string(), "content": "y".repeat(5_000), "author": { "id": "7" } });
            cache.dispatch("MESSAGE_CREATE", &Dispatch::parse("MESSAGE_CREATE", &m.to_string()).unwrap());
        }
        let (members, voice, messages) = cache.kept();
        assert_eq!((members, messages), (MAX_MEMBERS, MAX_MESSAGES));
        assert!(voice <= MAX_VOICE);
        let s = cache.state.lock().unwrap();
        assert!(s.members.order.len() <= 2 * MAX_MEMBERS + 16);
        assert!(s.messages.map.values().all(|(m, _)| m.content.chars().count() <= MAX_CONTENT));
        assert!(s.members.map.values().all(|(m, _)| m.nick.as_ref().is_some_and(|n| n.chars().count() <= MAX_NAME)));
    }
}
