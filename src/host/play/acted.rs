//! The platform's actions as `play`'s stand-in answers them: what a run's
//! `send`, `dm`, `give role`, `kick`, `create channel`, `purge` … ask of
//! the platform, kept in a small world (each server's channels, roles and
//! members, the messages the bot sent, direct-message channels, bans), so
//! that later calls see what earlier ones did, and answered with the
//! platform's objects or its refusals. Two members of the world are as a
//! real server has them: the owner, above the bot's role (acting on them
//! is refused with 50013, as the platform refuses it), and a member who
//! takes no direct message (50007).

use std::collections::HashMap;

use serde_json::{json, Value};

use super::world::{self, SERVERS};

/// The server's owner: the bot's role is below theirs.
pub const OWNER: &str = "1400000000000000900";
/// A member who closed their direct messages.
pub const CLOSED_DMS: &str = "1400000000000000901";

/// The roles each of play's servers has, by id and name (the bot's own
/// role is above them all).
pub const ROLES: &[(&str, &str)] = &[
    ("1400000000000000801", "Members"),
    ("1400000000000000802", "Moderators"),
    ("1400000000000000803", "Regulars"),
    ("1400000000000000804", "Support"),
];

/// A channel the world knows: a server's own, or one a run made.
#[derive(Debug, Clone)]
struct Channel {
    id: String,
    server: String,
    name: String,
    kind: u64,
    parent: Option<String>,
    topic: Option<String>,
    overwrites: Value,
}

/// A message the bot sent, for reading back (`purge` reads a channel's).
#[derive(Debug, Clone)]
struct Sent {
    id: String,
    channel: String,
    body: Value,
}

/// What the actions of runs changed, as the stand-in keeps it.
#[derive(Debug, Default)]
pub struct Acted {
    channels: Vec<Channel>,
    /// Each member's roles, by (server, user).
    roles: HashMap<(String, String), Vec<String>>,
    /// Direct-message channels, by channel id: the user.
    dms: HashMap<String, String>,
    sent: Vec<Sent>,
    bans: Vec<(String, String)>,
    /// The votes of polls: (message, answer, user).
    votes: Vec<(String, u64, String)>,
}

/// The most messages and channels kept (a long play stays bounded).
const KEPT: usize = 5_000;

/// What an action's call is answered: a status and a body (none: 204).
pub type Answer = (u16, Value);

fn refused(status: u16, code: u64, message: &str) -> Answer {
    (status, json!({ "message": message, "code": code }))
}

impl Acted {
    /// The user a direct-message channel is with, if `channel` is one.
    pub fn dm_user(&self, channel: &str) -> Option<String> {
        self.dms.get(channel).cloned()
    }

    /// The channels of `server` (its `#general` first) as the platform
    /// lists them.
    fn channels_of(&self, server: &str) -> Vec<Value> {
        let own = SERVERS
            .iter()
            .filter(|s| s.id == server)
            .map(|s| json!({ "id": s.channel, "name": "general", "type": 0, "guild_id": s.id, "position": 0 }));
        own.chain(self.channels.iter().filter(|c| c.server == server).map(channel)).collect()
    }

    /// Answers a call of an action with the bot token: `method` on
    /// `route` (below the API's base, without its query), `query`, `body`.
    /// `None`: not an action's route (the caller answers it).
    pub fn answer(
        &mut self,
        method: &str,
        route: &str,
        query: &str,
        body: &Value,
        id: &mut dyn FnMut() -> String,
    ) -> Option<Answer> {
        let parts: Vec<&str> = route.trim_start_matches('/').split('/').collect();
        Some(match (method, parts.as_slice()) {
            ("GET", ["guilds", server, "channels"]) => (200, json!(self.channels_of(server))),
            ("GET", ["guilds", _, "roles"]) => {
                (200, json!(ROLES.iter().map(|(id, name)| json!({ "id": id, "name": name })).collect::<Vec<_>>()))
            }
            ("POST", ["users", "@me", "channels"]) => self.open_dm(body),
            ("POST", ["channels", channel, "messages"]) => self.message(channel, body, id()),
            ("GET", ["channels", channel, "messages"]) => (200, self.read(channel, query)),
            ("POST", ["channels", _, "messages", "bulk-delete"]) => self.bulk_delete(body),
            ("DELETE", ["channels", _, "messages", message]) => {
                self.sent.retain(|m| m.id != *message);
                (204, Value::Null)
            }
            ("PUT" | "DELETE", ["channels", _, "messages", _, "reactions", _, "@me"]) => (204, Value::Null),
            ("PUT" | "DELETE", ["channels", _, "messages", "pins", _]) => (204, Value::Null),
            ("POST", ["channels", _, "polls", message, "expire"]) => self.end_poll(message),
            ("GET", ["channels", channel]) => match self.find(channel) {
                Some(c) => (200, c),
                None => refused(404, 10003, "Unknown Channel"),
            },
            ("DELETE", ["channels", channel]) => self.delete_channel(channel),
            ("POST", ["guilds", server, "channels"]) => self.create_channel(server, body, id()),
            ("POST", ["channels", channel, "threads"]) => self.thread(channel, None, body, id()),
            ("POST", ["channels", channel, "messages", message, "threads"]) => {
                self.thread(channel, Some(message), body, id())
            }
            ("PUT" | "DELETE", ["guilds", server, "members", user, "roles", role]) => {
                self.role(method, server, user, role)
            }
            ("PATCH", ["guilds", server, "members", user]) => self.member(server, user, body),
            ("DELETE", ["guilds", _, "members", user]) | ("PUT", ["guilds", _, "bans", user]) if *user == OWNER => {
                refused(403, 50013, "Missing Permissions")
            }
            ("DELETE", ["guilds", _, "members", _]) => (204, Value::Null),
            ("PUT", ["guilds", server, "bans", user]) => {
                self.bans.push((server.to_string(), user.to_string()));
                (204, Value::Null)
            }
            ("DELETE", ["guilds", server, "bans", user]) => {
                let before = self.bans.len();
                self.bans.retain(|(s, u)| !(s == server && u == user));
                if self.bans.len() == before {
                    refused(404, 10026, "Unknown Ban")
                } else {
                    (204, Value::Null)
                }
            }
            _ => return None,
        })
    }

    /// A vote given (`add`) or taken back in a poll, as the page's member
    /// or a test's cast it.
    pub fn vote(&mut self, message: &str, answer: u64, user: &str, add: bool) {
        self.votes.retain(|(m, a, u)| !(m == message && *a == answer && u == user));
        if add {
            self.votes.push((message.to_string(), answer, user.to_string()));
            if self.votes.len() > KEPT {
                self.votes.remove(0);
            }
        }
    }

    /// A poll ended now: its message, with the results the platform gives
    /// (each answer's votes, final).
    fn end_poll(&mut self, message: &str) -> Answer {
        let votes = &self.votes;
        let Some(sent) = self.sent.iter_mut().find(|m| m.id == message && m.body["poll"].is_object()) else {
            return refused(404, 10008, "Unknown Message");
        };
        let answers = sent.body["poll"]["answers"].as_array().map_or(0, Vec::len) as u64;
        let counts: Vec<Value> = (1..=answers)
            .map(|id| {
                let count = votes.iter().filter(|(m, a, _)| m == message && *a == id).count();
                json!({ "id": id, "count": count, "me_voted": false })
            })
            .collect();
        sent.body["poll"]["results"] = json!({ "is_finalized": true, "answer_counts": counts });
        (200, sent.body.clone())
    }

    fn open_dm(&mut self, body: &Value) -> Answer {
        let Some(user) = body["recipient_id"].as_str().filter(|u| crate::discord::is_snowflake(u)) else {
            return refused(400, 50035, "Invalid Form Body");
        };
        // One channel a user, its id made from theirs (stable across calls).
        let id = format!("{}", 1_450_000_000_000_000_000u64 + user.parse::<u64>().unwrap_or(0) % 1_000_000_000);
        self.dms.insert(id.clone(), user.to_string());
        (200, json!({ "id": id, "type": 1, "recipients": [{ "id": user }] }))
    }

    fn message(&mut self, channel: &str, body: &Value, id: String) -> Answer {
        if self.dms.get(channel).is_some_and(|u| u == CLOSED_DMS) {
            return refused(403, 50007, "Cannot send messages to this user");
        }
        let mut message = if body.is_object() { body.clone() } else { json!({}) };
        message["id"] = json!(id);
        message["channel_id"] = json!(channel);
        message["author"] = json!({ "id": world::BOT, "username": "bot", "bot": true });
        self.sent.push(Sent { id: id.clone(), channel: channel.to_string(), body: message.clone() });
        if self.sent.len() > KEPT {
            self.sent.remove(0);
        }
        (200, message)
    }

    /// A channel's messages, newest first, as many as `limit` asks (before
    /// the id `before` gives).
    fn read(&self, channel: &str, query: &str) -> Value {
        let arg = |k: &str| form_urlencoded::parse(query.as_bytes()).find(|(n, _)| n == k).map(|(_, v)| v.into_owned());
        let limit = arg("limit").and_then(|l| l.parse::<usize>().ok()).unwrap_or(50).min(100);
        let before = arg("before").and_then(|b| b.parse::<u64>().ok()).unwrap_or(u64::MAX);
        let newest = self.sent.iter().rev().filter(|m| m.channel == channel);
        let listed = newest.filter(|m| m.id.parse::<u64>().unwrap_or(0) < before).take(limit);
        json!(listed.map(|m| m.body.clone()).collect::<Vec<_>>())
    }

    /// A bulk delete as the platform takes one: 2 to 100 ids, none twice.
    fn bulk_delete(&mut self, body: &Value) -> Answer {
        let ids: Vec<&str> = body["messages"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
        let unique: std::collections::HashSet<&&str> = ids.iter().collect();
        if !(2..=100).contains(&ids.len()) || unique.len() != ids.len() {
            return refused(400, 50035, "Invalid Form Body");
        }
        self.sent.retain(|m| !ids.contains(&m.id.as_str()));
        (204, Value::Null)
    }

    fn find(&self, channel: &str) -> Option<Value> {
        SERVERS
            .iter()
            .find(|s| s.channel == channel)
            .map(|s| json!({ "id": s.channel, "name": "general", "type": 0, "guild_id": s.id }))
            .or_else(|| self.channels.iter().find(|c| c.id == channel).map(channel_json))
    }

    fn create_channel(&mut self, server: &str, body: &Value, id: String) -> Answer {
        let name = body["name"].as_str().unwrap_or_default();
        if name.is_empty() || name.chars().count() > 100 || !SERVERS.iter().any(|s| s.id == server) {
            return refused(400, 50035, "Invalid Form Body");
        }
        let made = Channel {
            id,
            server: server.to_string(),
            // The platform keeps a text channel's name lower-case, with dashes.
            name: name.to_lowercase().replace(' ', "-"),
            kind: body["type"].as_u64().unwrap_or(0),
            parent: body["parent_id"].as_str().map(str::to_string),
            topic: body["topic"].as_str().map(str::to_string),
            overwrites: body["permission_overwrites"].clone(),
        };
        let answer = channel_json(&made);
        self.keep(made);
        (201, answer)
    }

    fn thread(&mut self, parent: &str, from: Option<&str>, body: &Value, id: String) -> Answer {
        let Some(server) = self.find(parent).and_then(|c| c["guild_id"].as_str().map(str::to_string)) else {
            return refused(404, 10003, "Unknown Channel");
        };
        let kind = if from.is_some() { 11 } else { body["type"].as_u64().unwrap_or(11) };
        let made = Channel {
            id: id.clone(),
            server,
            name: body["name"].as_str().unwrap_or("thread").to_string(),
            kind,
            parent: Some(parent.to_string()),
            topic: None,
            overwrites: Value::Null,
        };
        let mut answer = channel_json(&made);
        self.keep(made);
        if body["message"].is_object() {
            let (_, message) = self.message(&id, &body["message"], format!("{}", id.parse::<u64>().unwrap_or(0) + 1));
            answer["message"] = message;
        }
        (201, answer)
    }

    fn keep(&mut self, made: Channel) {
        self.channels.push(made);
        if self.channels.len() > KEPT {
            self.channels.remove(0);
        }
    }

    fn delete_channel(&mut self, channel: &str) -> Answer {
        if SERVERS.iter().any(|s| s.channel == channel) {
            // A server's own channel stays: play's page needs it.
            return refused(403, 50013, "Missing Permissions");
        }
        match self.channels.iter().position(|c| c.id == channel) {
            Some(i) => {
                let gone = self.channels.remove(i);
                self.sent.retain(|m| m.channel != channel);
                (200, channel_json(&gone))
            }
            None => refused(404, 10003, "Unknown Channel"),
        }
    }

    fn role(&mut self, method: &str, server: &str, user: &str, role: &str) -> Answer {
        if user == OWNER {
            return refused(403, 50013, "Missing Permissions");
        }
        if !ROLES.iter().any(|(id, _)| *id == role) {
            return refused(404, 10011, "Unknown Role");
        }
        let roles = self.roles.entry((server.to_string(), user.to_string())).or_default();
        roles.retain(|r| r != role);
        if method == "PUT" {
            roles.push(role.to_string());
        }
        (204, Value::Null)
    }

    fn member(&mut self, server: &str, user: &str, body: &Value) -> Answer {
        if user == OWNER {
            return refused(403, 50013, "Missing Permissions");
        }
        let roles = self.roles.get(&(server.to_string(), user.to_string())).cloned().unwrap_or_default();
        let mut member = json!({ "user": { "id": user }, "roles": roles });
        for key in ["nick", "communication_disabled_until"] {
            if let Some(v) = body.get(key) {
                member[key] = v.clone();
            }
        }
        (200, member)
    }

    /// A channel's name: a server's `general`, or one a run made.
    pub fn channel_name(&self, channel: &str) -> Option<String> {
        self.find(channel).and_then(|c| c["name"].as_str().map(str::to_string))
    }

    /// The roles of `user` in `server` that runs gave.
    pub fn roles_of(&self, server: &str, user: &str) -> Vec<String> {
        self.roles.get(&(server.to_string(), user.to_string())).cloned().unwrap_or_default()
    }
}

fn channel(c: &Channel) -> Value {
    channel_json(c)
}

fn channel_json(c: &Channel) -> Value {
    let mut v = json!({ "id": c.id, "name": c.name, "type": c.kind, "guild_id": c.server });
    if let Some(p) = &c.parent {
        v["parent_id"] = json!(p);
    }
    if let Some(t) = &c.topic {
        v["topic"] = json!(t);
    }
    if !c.overwrites.is_null() {
        v["permission_overwrites"] = c.overwrites.clone();
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids() -> impl FnMut() -> String {
        let mut n = 0u64;
        move || {
            n += 1;
            (1_400_000_000_000_100_000u64 + n).to_string()
        }
    }

    #[test]
    fn what_one_action_makes_the_next_one_sees() {
        let (mut acted, mut id) = (Acted::default(), ids());
        let server = SERVERS[0].id;
        let (status, made) = acted
            .answer(
                "POST",
                &format!("/guilds/{server}/channels"),
                "",
                &json!({ "name": "Ticket Ann", "type": 0 }),
                &mut id,
            )
            .unwrap();
        assert_eq!((status, made["name"].as_str()), (201, Some("ticket-ann")));
        let channel = made["id"].as_str().unwrap().to_string();
        let (status, _) = acted
            .answer("POST", &format!("/channels/{channel}/messages"), "", &json!({ "content": "hi" }), &mut id)
            .unwrap();
        assert_eq!(status, 200);
        let (_, listed) =
            acted.answer("GET", &format!("/channels/{channel}/messages"), "limit=10", &Value::Null, &mut id).unwrap();
        assert_eq!(listed.as_array().unwrap().len(), 1);
        assert_eq!(acted.answer("DELETE", &format!("/channels/{channel}"), "", &Value::Null, &mut id).unwrap().0, 200);
        let (status, _) = acted.answer("GET", &format!("/channels/{channel}"), "", &Value::Null, &mut id).unwrap();
        assert_eq!(status, 404);
    }

    #[test]
    fn the_owner_and_a_closed_inbox_are_refused_as_the_platform_refuses_them() {
        let (mut acted, mut id) = (Acted::default(), ids());
        let server = SERVERS[0].id;
        let kick =
            acted.answer("DELETE", &format!("/guilds/{server}/members/{OWNER}"), "", &Value::Null, &mut id).unwrap();
        assert_eq!((kick.0, kick.1["code"].as_u64()), (403, Some(50013)));
        let (_, dm) =
            acted.answer("POST", "/users/@me/channels", "", &json!({ "recipient_id": CLOSED_DMS }), &mut id).unwrap();
        let dm = dm["id"].as_str().unwrap().to_string();
        let sent = acted
            .answer("POST", &format!("/channels/{dm}/messages"), "", &json!({ "content": "hi" }), &mut id)
            .unwrap();
        assert_eq!((sent.0, sent.1["code"].as_u64()), (403, Some(50007)));
        let one = acted
            .answer("POST", "/channels/1/messages/bulk-delete", "", &json!({ "messages": ["1"] }), &mut id)
            .unwrap();
        assert_eq!(one.0, 400);
    }
}
