//! The event kinds of the language, as the platform delivers them: the one
//! table that says which dispatch triggers which event tree, which intent
//! it needs, where its replies go and which variables its run is given.
//! The checker (unknown kinds, each kind's variables, B138), the intents a
//! file asks for, `blkc serve` (what a dispatch runs), `blkc play` (what
//! the page fires), the language server and docs/language.md's table all
//! read it.

use serde_json::Value as Json;
use twilight_model::gateway::Intents;

/// Where an event's `reply` goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply {
    /// Nowhere: the run is told so (a log channel is `send to`).
    Nowhere,
    /// The channel the event happened in (`channel_id`).
    Channel,
    /// The server's system channel, where the platform posts its own
    /// welcome and boost messages (`channel_id`).
    System,
    /// The thread the event is about (`thread_id`).
    Thread,
    /// The direct message the user wrote in.
    Dm,
}

impl Reply {
    /// Where a reply goes, in words (docs, hovers, `blkc run`).
    pub fn words(self) -> &'static str {
        match self {
            Reply::Nowhere => "nowhere (use `send to`)",
            Reply::Channel => "the event's channel",
            Reply::System => "the server's system channel",
            Reply::Thread => "the thread",
            Reply::Dm => "the direct message",
        }
    }
}

/// One event kind of the language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    /// The kind as a file names it (`member_join`).
    pub kind: &'static str,
    /// The dispatch that triggers it (`GUILD_MEMBER_ADD`); several kinds
    /// may share one, told apart by what it says and what the cache knew.
    pub dispatch: &'static str,
    /// The intent that has the Gateway send it.
    pub intent: Intents,
    pub reply: Reply,
    /// Exactly the variables its run is given.
    pub vars: &'static [&'static str],
    /// What happened, in words.
    pub about: &'static str,
}

impl Event {
    /// The variables of this kind that the platform fills only with the
    /// privileged MESSAGE_CONTENT intent (a DM's text comes without it).
    pub fn content_vars(&self) -> &'static [&'static str] {
        match self.kind {
            "dm_message" => &[],
            "automod_action" => &["message_content", "matched_content"],
            _ if self.vars.contains(&"message_content") => &["message_content", "old_message_content"],
            _ => &[],
        }
    }
}

macro_rules! events {
    ($( $kind:literal $dispatch:literal $intent:ident $reply:ident [$($var:literal),* $(,)?] $about:literal; )*) => {
        /// Every event kind blkc runs.
        pub const EVENTS: &[Event] = &[$(Event {
            kind: $kind,
            dispatch: $dispatch,
            intent: intent!($intent),
            reply: Reply::$reply,
            vars: &[$($var),*],
            about: $about,
        }),*];
    };
}

macro_rules! intent {
    (NONE) => {
        Intents::empty()
    };
    ($i:ident) => {
        Intents::$i
    };
}

events! {
    "member_join" "GUILD_MEMBER_ADD" GUILD_MEMBERS System
        ["user_id", "user_name", "user_mention", "server_id", "server_name", "member_count", "channel_id", "channel_name"]
        "a member joined the server";
    "member_leave" "GUILD_MEMBER_REMOVE" GUILD_MEMBERS Nowhere
        ["user_id", "user_name", "server_id", "server_name", "member_count"]
        "a member left, or was kicked or banned";
    "member_update" "GUILD_MEMBER_UPDATE" GUILD_MEMBERS Nowhere
        ["user_id", "user_name", "user_mention", "server_id", "server_name", "roles", "roles_added", "roles_removed",
         "nickname", "old_nickname", "timeout_until", "boosting_since"]
        "a member's roles, nickname, timeout or boost changed";
    "boost" "GUILD_MEMBER_UPDATE" GUILD_MEMBERS System
        ["user_id", "user_name", "user_mention", "server_id", "server_name", "boosting_since", "channel_id", "channel_name"]
        "a member started boosting the server";
    "boost_end" "GUILD_MEMBER_UPDATE" GUILD_MEMBERS Nowhere
        ["user_id", "user_name", "user_mention", "server_id", "server_name"]
        "a member stopped boosting the server";
    "member_timeout" "GUILD_MEMBER_UPDATE" GUILD_MEMBERS Nowhere
        ["user_id", "user_name", "user_mention", "server_id", "server_name", "timeout_until"]
        "a member was timed out (or their timeout changed)";
    "member_timeout_end" "GUILD_MEMBER_UPDATE" GUILD_MEMBERS Nowhere
        ["user_id", "user_name", "user_mention", "server_id", "server_name"]
        "a member's timeout was lifted";
    "ban_add" "GUILD_BAN_ADD" GUILD_MODERATION Nowhere
        ["user_id", "user_name", "user_mention", "server_id", "server_name"]
        "a user was banned";
    "ban_remove" "GUILD_BAN_REMOVE" GUILD_MODERATION Nowhere
        ["user_id", "user_name", "user_mention", "server_id", "server_name"]
        "a user was unbanned";
    "voice_join" "VOICE_STATE_UPDATE" GUILD_VOICE_STATES Channel
        ["user_id", "user_name", "user_mention", "server_id", "server_name", "channel_id", "channel_name"]
        "a member joined a voice channel";
    "voice_leave" "VOICE_STATE_UPDATE" GUILD_VOICE_STATES Channel
        ["user_id", "user_name", "user_mention", "server_id", "server_name", "channel_id", "channel_name"]
        "a member left a voice channel (`channel_id`: the one left)";
    "voice_move" "VOICE_STATE_UPDATE" GUILD_VOICE_STATES Channel
        ["user_id", "user_name", "user_mention", "server_id", "server_name", "channel_id", "channel_name",
         "old_channel_id", "old_channel_name"]
        "a member moved from one voice channel to another";
    "message_create" "MESSAGE_CREATE" GUILD_MESSAGES Channel
        ["user_id", "user_name", "user_mention", "channel_id", "channel_name", "server_id", "server_name", "message_id",
         "message_content"]
        "a message was sent in a server";
    "dm_message" "MESSAGE_CREATE" DIRECT_MESSAGES Dm
        ["user_id", "user_name", "user_mention", "channel_id", "message_id", "message_content"]
        "a user sent the bot a direct message";
    "message_update" "MESSAGE_UPDATE" GUILD_MESSAGES Channel
        ["user_id", "user_name", "channel_id", "channel_name", "server_id", "message_id", "message_content",
         "old_message_content"]
        "a message was edited";
    "message_delete" "MESSAGE_DELETE" GUILD_MESSAGES Channel
        ["channel_id", "channel_name", "server_id", "message_id", "user_id", "user_name", "message_content"]
        "a message was deleted";
    "message_bulk_delete" "MESSAGE_DELETE_BULK" GUILD_MESSAGES Channel
        ["channel_id", "channel_name", "server_id", "server_name", "message_count", "message_ids"]
        "many messages were deleted at once (a purge)";
    "reaction_add" "MESSAGE_REACTION_ADD" GUILD_MESSAGE_REACTIONS Channel
        ["user_id", "user_name", "user_mention", "channel_id", "server_id", "message_id", "emoji"]
        "a reaction was added to a message";
    "reaction_remove" "MESSAGE_REACTION_REMOVE" GUILD_MESSAGE_REACTIONS Channel
        ["user_id", "user_name", "channel_id", "server_id", "message_id", "emoji"]
        "a reaction was removed";
    "channel_create" "CHANNEL_CREATE" GUILDS Channel
        ["channel_id", "channel_name", "server_id", "server_name"]
        "a channel was created";
    "channel_update" "CHANNEL_UPDATE" GUILDS Nowhere
        ["channel_id", "channel_name", "old_channel_name", "server_id", "server_name"]
        "a channel was changed";
    "channel_delete" "CHANNEL_DELETE" GUILDS Nowhere
        ["channel_id", "channel_name", "server_id", "server_name"]
        "a channel was deleted";
    "thread_create" "THREAD_CREATE" GUILDS Thread
        ["thread_id", "thread_name", "channel_id", "channel_name", "server_id", "server_name", "user_id", "user_mention"]
        "a thread or forum post was created";
    "thread_update" "THREAD_UPDATE" GUILDS Nowhere
        ["thread_id", "thread_name", "old_thread_name", "channel_id", "channel_name", "server_id", "server_name",
         "thread_archived", "thread_locked"]
        "a thread was renamed, archived, locked or reopened";
    "thread_delete" "THREAD_DELETE" GUILDS Nowhere
        ["thread_id", "thread_name", "channel_id", "channel_name", "server_id", "server_name"]
        "a thread was deleted";
    "thread_members" "THREAD_MEMBERS_UPDATE" GUILD_MEMBERS Thread
        ["thread_id", "thread_name", "server_id", "server_name", "member_count", "users_added", "users_removed"]
        "members were added to or removed from a thread";
    "invite_create" "INVITE_CREATE" GUILD_INVITES Nowhere
        ["invite_code", "invite_url", "invite_max_uses", "invite_max_age", "invite_expires_at", "channel_id",
         "channel_name", "server_id", "server_name", "user_id", "user_name", "user_mention"]
        "an invite was created (`user_…`: who made it)";
    "invite_delete" "INVITE_DELETE" GUILD_INVITES Nowhere
        ["invite_code", "channel_id", "channel_name", "server_id", "server_name"]
        "an invite was deleted";
    "role_create" "GUILD_ROLE_CREATE" GUILDS Nowhere
        ["role_id", "role_name", "server_id", "server_name"]
        "a role was created";
    "role_update" "GUILD_ROLE_UPDATE" GUILDS Nowhere
        ["role_id", "role_name", "old_role_name", "role_mention", "server_id", "server_name"]
        "a role was changed";
    "role_delete" "GUILD_ROLE_DELETE" GUILDS Nowhere
        ["role_id", "role_name", "server_id", "server_name"]
        "a role was deleted";
    "emojis_update" "GUILD_EMOJIS_UPDATE" GUILD_EMOJIS_AND_STICKERS Nowhere
        ["server_id", "server_name", "emoji_count", "emojis_added", "emojis_removed"]
        "the server's emojis changed";
    "stickers_update" "GUILD_STICKERS_UPDATE" GUILD_EMOJIS_AND_STICKERS Nowhere
        ["server_id", "server_name", "sticker_count", "stickers"]
        "the server's stickers changed";
    "scheduled_event_create" "GUILD_SCHEDULED_EVENT_CREATE" GUILD_SCHEDULED_EVENTS Nowhere
        ["event_id", "event_name", "event_description", "event_start", "event_end", "event_status", "event_location",
         "event_url", "channel_id", "channel_name", "server_id", "server_name", "user_id", "user_mention"]
        "a scheduled event was created (`user_…`: who made it)";
    "scheduled_event_update" "GUILD_SCHEDULED_EVENT_UPDATE" GUILD_SCHEDULED_EVENTS Nowhere
        ["event_id", "event_name", "event_description", "event_start", "event_end", "event_status", "event_location",
         "event_url", "channel_id", "channel_name", "server_id", "server_name"]
        "a scheduled event changed, started or ended";
    "scheduled_event_delete" "GUILD_SCHEDULED_EVENT_DELETE" GUILD_SCHEDULED_EVENTS Nowhere
        ["event_id", "event_name", "event_description", "event_start", "event_end", "event_status", "event_location",
         "event_url", "channel_id", "channel_name", "server_id", "server_name"]
        "a scheduled event was cancelled";
    "scheduled_event_user_add" "GUILD_SCHEDULED_EVENT_USER_ADD" GUILD_SCHEDULED_EVENTS Nowhere
        ["event_id", "event_name", "user_id", "user_mention", "server_id", "server_name"]
        "a user said they are interested in a scheduled event";
    "scheduled_event_user_remove" "GUILD_SCHEDULED_EVENT_USER_REMOVE" GUILD_SCHEDULED_EVENTS Nowhere
        ["event_id", "event_name", "user_id", "user_mention", "server_id", "server_name"]
        "a user is no longer interested in a scheduled event";
    "automod_action" "AUTO_MODERATION_ACTION_EXECUTION" AUTO_MODERATION_EXECUTION Nowhere
        ["rule_id", "rule_trigger", "automod_action", "user_id", "user_mention", "channel_id", "channel_name",
         "server_id", "server_name", "message_id", "message_content", "matched_keyword", "matched_content"]
        "AutoMod blocked a message, sent an alert or timed a member out";
    "poll_vote_add" "MESSAGE_POLL_VOTE_ADD" GUILD_MESSAGE_POLLS Channel
        ["user_id", "user_mention", "channel_id", "channel_name", "server_id", "message_id", "answer_id"]
        "a user voted in a poll";
    "poll_vote_remove" "MESSAGE_POLL_VOTE_REMOVE" GUILD_MESSAGE_POLLS Channel
        ["user_id", "user_mention", "channel_id", "channel_name", "server_id", "message_id", "answer_id"]
        "a user took back a vote in a poll";
    "guild_join" "GUILD_CREATE" GUILDS System
        ["server_id", "server_name", "member_count", "channel_id", "channel_name"]
        "the bot was added to a server";
    "guild_leave" "GUILD_DELETE" GUILDS Nowhere
        ["server_id", "server_name"]
        "the bot was removed from a server (or the server was deleted)";
    "entitlement_create" "ENTITLEMENT_CREATE" NONE Nowhere
        ["entitlement_id", "sku_id", "entitlement_type", "user_id", "user_mention", "server_id", "starts_at", "ends_at"]
        "a user or server bought the app's premium offering";
    "entitlement_update" "ENTITLEMENT_UPDATE" NONE Nowhere
        ["entitlement_id", "sku_id", "entitlement_type", "user_id", "user_mention", "server_id", "starts_at", "ends_at"]
        "an entitlement changed (a subscription ends: `ends_at`)";
    "entitlement_delete" "ENTITLEMENT_DELETE" NONE Nowhere
        ["entitlement_id", "sku_id", "entitlement_type", "user_id", "user_mention", "server_id", "starts_at", "ends_at"]
        "an entitlement was removed (a refund)";
    "presence_update" "PRESENCE_UPDATE" GUILD_PRESENCES Nowhere
        ["user_id", "user_mention", "server_id", "server_name", "status", "activity", "activity_type"]
        "a member's status or activity changed";
    "ready" "READY" NONE Nowhere
        ["bot_id", "bot_name", "server_count"]
        "the bot connected to the Gateway";
}

/// What each event variable holds (one meaning wherever it appears).
pub const VARIABLES: &[(&str, &str)] = &[
    ("user_id", "the id of the user the event is about"),
    ("user_name", "their name as the server shows it (nickname, display name or username)"),
    ("user_mention", "their mention, `<@id>` (a reply may ping them)"),
    ("server_id", "the server's id"),
    ("server_name", "the server's name"),
    ("member_count", "how many members the server (or the thread) has"),
    ("channel_id", "the channel's id (where a reply goes, when it goes to a channel)"),
    ("channel_name", "the channel's name, without `#`"),
    ("message_id", "the message's id"),
    ("message_content", "the message's text (needs the privileged MESSAGE_CONTENT intent in a server)"),
    ("old_message_content", "the text before the edit, if this process saw the message (else empty)"),
    ("message_count", "how many messages were deleted"),
    ("message_ids", "their ids, joined by `, `"),
    ("emoji", "the emoji, as a message writes it (`👍`, `<:name:id>`)"),
    ("roles", "the member's roles now, as role mentions joined by `, `"),
    ("roles_added", "the roles the member was given, as role mentions joined by `, ` (empty if none, or if the member was not seen before)"),
    ("roles_removed", "the roles taken from the member, likewise"),
    ("nickname", "the member's nickname now (empty: none)"),
    ("old_nickname", "their nickname before, if this process knew it"),
    ("timeout_until", "when the member's timeout ends (RFC 3339; empty: not timed out)"),
    ("boosting_since", "since when the member boosts the server (RFC 3339; empty: not boosting)"),
    ("old_channel_id", "the voice channel the member left"),
    ("old_channel_name", "its name, or the channel's name before the change"),
    ("thread_id", "the thread's id"),
    ("thread_name", "the thread's name"),
    ("old_thread_name", "its name before, if this process knew it"),
    ("thread_archived", "`true` or `false`"),
    ("thread_locked", "`true` or `false`"),
    ("users_added", "the members added to the thread, as mentions joined by `, `"),
    ("users_removed", "those removed, likewise"),
    ("invite_code", "the invite's code"),
    ("invite_url", "the invite's link, `https://discord.gg/CODE`"),
    ("invite_max_uses", "how many times it may be used (0: without limit)"),
    ("invite_max_age", "how many seconds it lasts (0: for ever)"),
    ("invite_expires_at", "when it expires (RFC 3339; empty: never)"),
    ("role_id", "the role's id"),
    ("role_name", "the role's name"),
    ("role_mention", "the role's mention, `<@&id>` (it never pings)"),
    ("old_role_name", "its name before, if this process knew it"),
    ("emoji_count", "how many emojis the server has now"),
    ("emojis_added", "the emojis added, as messages write them, joined by ` `"),
    ("emojis_removed", "the names of those removed, joined by `, `"),
    ("sticker_count", "how many stickers the server has now"),
    ("stickers", "their names, joined by `, `"),
    ("event_id", "the scheduled event's id"),
    ("event_name", "its name"),
    ("event_description", "its description"),
    ("event_start", "when it starts (RFC 3339)"),
    ("event_end", "when it ends (RFC 3339; empty: not said)"),
    ("event_status", "`scheduled`, `active`, `completed` or `canceled`"),
    ("event_location", "where it happens, for an event outside the server's channels"),
    ("event_url", "its link"),
    ("rule_id", "the AutoMod rule's id"),
    ("rule_trigger", "what the rule looks for: `keyword`, `spam`, `keyword_preset`, `mention_spam` or `member_profile`"),
    ("automod_action", "what AutoMod did: `block_message`, `send_alert_message`, `timeout` or `block_member_interaction`"),
    ("matched_keyword", "the rule's word or phrase that matched"),
    ("matched_content", "the part of the text that matched (needs MESSAGE_CONTENT)"),
    ("answer_id", "the number of the poll answer voted for"),
    ("entitlement_id", "the entitlement's id"),
    ("sku_id", "the SKU bought"),
    ("entitlement_type", "`purchase`, `premium_subscription`, `developer_gift`, `test_mode_purchase`, `free_purchase`, `user_gift`, `premium_purchase` or `application_subscription`"),
    ("starts_at", "when it starts (RFC 3339; empty: not said)"),
    ("ends_at", "when it ends (RFC 3339; empty: not said)"),
    ("status", "`online`, `idle`, `dnd` or `offline`"),
    ("activity", "what the member is doing (a game's name, a custom status; empty: nothing)"),
    ("activity_type", "`playing`, `streaming`, `listening`, `watching`, `custom` or `competing` (empty: none)"),
    ("bot_id", "the bot's user id"),
    ("bot_name", "the bot's username"),
    ("server_count", "how many servers the bot is in"),
];

/// Of each dispatch an event kind runs on (the servers' own, GUILD_CREATE
/// and GUILD_DELETE, are read as the cache's), the top-level fields blkc
/// reads; the rest of its data is skipped as read.
const FIELDS: &[(&[&str], &[&str])] = &[
    (
        &["GUILD_MEMBER_ADD", "GUILD_MEMBER_UPDATE"],
        &["guild_id", "user", "nick", "joined_at", "roles", "premium_since", "communication_disabled_until"],
    ),
    (&["GUILD_MEMBER_REMOVE", "GUILD_BAN_ADD", "GUILD_BAN_REMOVE"], &["guild_id", "user"]),
    (&["VOICE_STATE_UPDATE"], &["guild_id", "channel_id", "user_id", "member"]),
    (&["MESSAGE_CREATE", "MESSAGE_UPDATE"], &["id", "channel_id", "guild_id", "author", "member", "content"]),
    (&["MESSAGE_DELETE"], &["id", "channel_id", "guild_id"]),
    (&["MESSAGE_DELETE_BULK"], &["ids", "channel_id", "guild_id"]),
    (
        &["MESSAGE_REACTION_ADD", "MESSAGE_REACTION_REMOVE"],
        &["user_id", "channel_id", "message_id", "guild_id", "member", "emoji"],
    ),
    (&["CHANNEL_CREATE", "CHANNEL_UPDATE", "CHANNEL_DELETE"], &["id", "name", "guild_id", "parent_id"]),
    (
        &["THREAD_CREATE", "THREAD_UPDATE", "THREAD_DELETE"],
        &["id", "name", "guild_id", "parent_id", "owner_id", "newly_created", "thread_metadata"],
    ),
    (&["THREAD_MEMBERS_UPDATE"], &["id", "guild_id", "member_count", "added_members", "removed_member_ids"]),
    (&["INVITE_CREATE"], &["code", "channel_id", "guild_id", "inviter", "max_age", "max_uses", "expires_at"]),
    (&["INVITE_DELETE"], &["code", "channel_id", "guild_id"]),
    (&["GUILD_ROLE_CREATE", "GUILD_ROLE_UPDATE"], &["guild_id", "role"]),
    (&["GUILD_ROLE_DELETE"], &["guild_id", "role_id"]),
    (&["GUILD_EMOJIS_UPDATE"], &["guild_id", "emojis"]),
    (&["GUILD_STICKERS_UPDATE"], &["guild_id", "stickers"]),
    (
        &["GUILD_SCHEDULED_EVENT_CREATE", "GUILD_SCHEDULED_EVENT_UPDATE", "GUILD_SCHEDULED_EVENT_DELETE"],
        &[
            "id",
            "guild_id",
            "channel_id",
            "creator_id",
            "name",
            "description",
            "scheduled_start_time",
            "scheduled_end_time",
            "status",
            "entity_metadata",
        ],
    ),
    (
        &["GUILD_SCHEDULED_EVENT_USER_ADD", "GUILD_SCHEDULED_EVENT_USER_REMOVE"],
        &["guild_scheduled_event_id", "user_id", "guild_id"],
    ),
    (
        &["AUTO_MODERATION_ACTION_EXECUTION"],
        &[
            "guild_id",
            "action",
            "rule_id",
            "rule_trigger_type",
            "user_id",
            "channel_id",
            "message_id",
            "content",
            "matched_keyword",
            "matched_content",
        ],
    ),
    (
        &["MESSAGE_POLL_VOTE_ADD", "MESSAGE_POLL_VOTE_REMOVE"],
        &["user_id", "channel_id", "message_id", "guild_id", "answer_id"],
    ),
    (
        &["ENTITLEMENT_CREATE", "ENTITLEMENT_UPDATE", "ENTITLEMENT_DELETE"],
        &["id", "sku_id", "user_id", "guild_id", "type", "starts_at", "ends_at"],
    ),
    (&["PRESENCE_UPDATE"], &["user", "guild_id", "status", "activities"]),
];

/// Dispatch `t`'s name as blkc spells it, and the fields read of it;
/// `None` for one no event kind runs on.
pub fn fields(t: &str) -> Option<(&'static str, &'static [&'static str])> {
    FIELDS.iter().find_map(|(ts, f)| ts.iter().find(|x| **x == t).map(|x| (*x, *f)))
}

/// The kind `kind`.
pub fn event(kind: &str) -> Option<&'static Event> {
    EVENTS.iter().find(|e| e.kind == kind)
}

/// The kinds dispatch `t` may trigger.
pub fn of_dispatch(t: &str) -> impl Iterator<Item = &'static Event> + '_ {
    EVENTS.iter().filter(move |e| e.dispatch == t)
}

/// Whether `name` is a variable of some event kind (asked of every custom
/// variable's name: a set, not a walk of every kind's list).
pub fn is_variable(name: &str) -> bool {
    static ALL: std::sync::LazyLock<rustc_hash::FxHashSet<&'static str>> =
        std::sync::LazyLock::new(|| EVENTS.iter().flat_map(|e| e.vars.iter().copied()).collect());
    ALL.contains(name)
}

/// What an event variable holds, in words.
pub fn describe(var: &str) -> Option<&'static str> {
    VARIABLES.iter().find(|(n, _)| *n == var).map(|(_, d)| *d)
}

/// A dispatch of each kind in the platform's documented shape, with
/// `{…}` where a sample's values go (`sample`).
const SAMPLES: &str = include_str!("dispatches.json");

/// The values a sample takes unless given others.
pub const SAMPLE_DEFAULTS: &[(&str, &str)] = &[
    ("user_id", "1001"),
    ("user_name", "ada"),
    ("server_id", "1"),
    ("server_name", "New server"),
    ("channel_id", "5"),
    ("other_channel_id", "6"),
    ("channel_name", "new-channel"),
    ("message_id", "77"),
    ("content", "hello"),
    ("emoji", "👍"),
    ("role_id", "8"),
    ("other_role_id", "9"),
    ("role_name", "New role"),
    ("thread_id", "30"),
    ("thread_name", "A thread"),
    ("event_id", "40"),
    ("event_name", "Game night"),
    ("emoji_id", "50"),
    ("emoji_name", "party"),
    ("dm_channel_id", "60"),
    ("new_server_id", "70"),
    ("new_channel_id", "71"),
    ("bot_id", "9"),
    ("bot_name", "bot"),
    ("id", "80"),
];

/// A dispatch of event kind `kind` as the platform sends it: its name, its
/// data, and what a GUILD_UPDATE tells the cache first (`null`: nothing),
/// for the kinds computed against it (a boost ending needs a boost
/// before). `given` fills the `{…}` it names (a user, a text, a channel);
/// the rest take [`SAMPLE_DEFAULTS`], `{now}` the time now and `{soon}`
/// ten minutes on. Read by `blkc play`'s "Fire an event", conversation
/// tests' `event` steps, and the tests of every kind.
pub fn sample(kind: &str, given: &dyn Fn(&str) -> Option<String>) -> Option<(&'static str, Json, Json)> {
    let all: Json = serde_json::from_str(SAMPLES).ok()?;
    let entry = all.get(kind)?;
    let t = event(kind)?.dispatch;
    let fill = |name: &str| -> String {
        let now = time::OffsetDateTime::now_utc();
        let at = |t: time::OffsetDateTime| t.format(&time::format_description::well_known::Rfc3339).unwrap_or_default();
        match name {
            "now" => at(now),
            "soon" => at(now + time::Duration::minutes(10)),
            _ => given(name)
                .or_else(|| SAMPLE_DEFAULTS.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string()))
                .unwrap_or_default(),
        }
    };
    let d = filled(entry.get("d")?, &fill);
    let prime = entry.get("prime").map_or(Json::Null, |p| filled(p, &fill));
    Some((t, d, prime))
}

/// The values a sample of `kind` takes (`{user_id}`, `{content}`…), in
/// the order it names them: what `play`'s page lets one edit.
pub fn sample_fields(kind: &str) -> Vec<&'static str> {
    let mut named: Vec<&'static str> = Vec::new();
    if let Some((_, d, prime)) = sample(kind, &|k| Some(format!("\u{0}{k}"))) {
        let mut walk = |v: &Json| {
            each_string(v, &mut |s| {
                if let Some(k) = s.strip_prefix('\u{0}') {
                    if let Some((name, _)) = SAMPLE_DEFAULTS.iter().find(|(n, _)| *n == k) {
                        if !named.contains(name) {
                            named.push(name);
                        }
                    }
                }
            })
        };
        walk(&prime);
        walk(&d);
    }
    named
}

fn each_string(v: &Json, f: &mut dyn FnMut(&str)) {
    match v {
        Json::String(s) => f(s),
        Json::Array(a) => a.iter().for_each(|x| each_string(x, f)),
        Json::Object(o) => o.values().for_each(|x| each_string(x, f)),
        _ => {}
    }
}

/// `v` with each string that is a whole `{name}` made `fill(name)`.
fn filled(v: &Json, fill: &dyn Fn(&str) -> String) -> Json {
    match v {
        Json::String(s) => match s.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
            Some(name) if name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_') => Json::String(fill(name)),
            _ => v.clone(),
        },
        Json::Array(a) => Json::Array(a.iter().map(|x| filled(x, fill)).collect()),
        Json::Object(o) => Json::Object(o.iter().map(|(k, x)| (k.clone(), filled(x, fill))).collect()),
        _ => v.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_named_once_and_every_variable_is_described() {
        let mut kinds: Vec<&str> = EVENTS.iter().map(|e| e.kind).collect();
        kinds.sort_unstable();
        kinds.dedup();
        assert_eq!(kinds.len(), EVENTS.len());
        for e in EVENTS {
            for v in e.vars {
                assert!(describe(v).is_some(), "`{v}` of `{}` has no description", e.kind);
            }
            for v in e.content_vars() {
                assert!(!e.vars.contains(v) || describe(v).is_some());
            }
        }
        assert!(EVENTS.len() >= 45, "{}", EVENTS.len());
        // Every kind has its sample, of its own dispatch.
        for e in EVENTS {
            let (t, d, _) = sample(e.kind, &|_| None).unwrap_or_else(|| panic!("no sample of `{}`", e.kind));
            assert_eq!(t, e.dispatch);
            assert!(d.is_object());
        }
        assert_eq!(
            sample_fields("reaction_add"),
            ["user_id", "channel_id", "message_id", "server_id", "user_name", "emoji"]
        );
        // Every dispatch a kind runs on is read: its fields, or the cache's.
        for e in EVENTS {
            let cache = ["READY", "GUILD_CREATE", "GUILD_DELETE"].contains(&e.dispatch);
            assert!(cache || fields(e.dispatch).is_some(), "{} is never read", e.dispatch);
        }
    }
}
