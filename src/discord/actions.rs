//! The platform's actions a tree can take (docs/language.md, "Actions"):
//! for each, the words it is written with, what each value must be, the
//! route and method it sends, the permissions the bot needs for it, and
//! the platform's limits on it. The checker reads this table to judge an
//! action as written, the plan to lower it, and the runner to judge each
//! value once filled and to build the request: one table, every reader.

use twilight_model::guild::Permissions;

/// An action, by its verb and the kind of thing it acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verb {
    Send,
    Dm,
    React,
    GiveRole,
    TakeRole,
    Timeout,
    Kick,
    Ban,
    Unban,
    Nickname,
    CreateThread,
    CreateChannel,
    DeleteMessage,
    DeleteChannel,
    Pin,
    Unpin,
    Purge,
    Edit,
    EndPoll,
}

/// What a value of an action names, and how it is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Slot {
    /// A user id or a mention (`<@id>`).
    Member,
    /// A role id, a mention (`<@&id>`) or `@Name`, a role of the server.
    Role,
    /// A channel id, a mention (`<#id>`) or `#name`, a channel of the server.
    Channel,
    /// A message id, or the name of an earlier action that sent one.
    Message,
    /// A member or a role: who a new channel is visible to.
    Who,
    /// A Unicode emoji, or a server's own (`<:name:id>`, `name:id`).
    Emoji,
    /// A duration: `"10m"`, `"1h30m"`, `"7d"`.
    Duration { max_secs: u64 },
    /// A whole number from 1 to `max`.
    Count { max: u64 },
    /// Text of at most `max` characters (at least `min`).
    Text { min: usize, max: usize },
    /// A forum tag: its id or its name.
    Tag,
    /// A word with no value.
    Flag,
    /// `as NAME`.
    Name,
}

/// Whether an action takes a message, and whether it must.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Message {
    No,
    Optional,
    Required,
}

/// The longest audit-log reason the platform keeps (`X-Audit-Log-Reason`).
pub const MAX_REASON: usize = 512;
/// How long a timeout may last: 28 days.
pub const MAX_TIMEOUT_SECS: u64 = 28 * 86_400;
/// How far back a ban deletes a member's messages: 7 days.
pub const MAX_BAN_DELETE_SECS: u64 = 7 * 86_400;
/// How many messages one `purge` deletes at most (in calls of 100).
pub const MAX_PURGE: u64 = 500;
/// How many ids one bulk delete takes, and the fewest.
pub const BULK_DELETE_MAX: usize = 100;
/// How old a message may be for a bulk delete: 14 days.
pub const BULK_DELETE_AGE_MS: u64 = 14 * 86_400 * 1000;
/// How long `delete message … after` may wait.
pub const MAX_DELETE_AFTER_SECS: u64 = 15 * 60;

/// One action: how it is written and what it needs.
#[derive(Debug)]
pub struct Spec {
    pub verb: Verb,
    /// As written: `give role`.
    pub written: &'static str,
    /// What its subject (the value after the verb) is, if it takes one;
    /// whether it must be written.
    pub subject: Option<(Slot, &'static str)>,
    /// The words it takes: the word, what its values are, whether it must
    /// be written, whether it takes a list.
    pub words: &'static [Word],
    pub message: Message,
    /// The platform answers with an object (a message, a channel, a
    /// thread) that later nodes can read (`as NAME`).
    pub answers: bool,
    /// It may give an audit-log `reason`.
    pub reason: bool,
    /// The bot's permissions it needs in the server.
    pub permissions: Permissions,
    /// Needs a server (everything but a DM).
    pub in_server: bool,
    /// What it does, for messages and the docs.
    pub does: &'static str,
}

#[derive(Debug)]
pub struct Word {
    pub word: &'static str,
    pub slot: Slot,
    pub required: bool,
    pub list: bool,
}

const fn word(word: &'static str, slot: Slot, required: bool) -> Word {
    Word { word, slot, required, list: false }
}

const REASON: Word = word("reason", Slot::Text { min: 1, max: MAX_REASON }, false);
const AS: Word = word("as", Slot::Name, false);
const IN: Word = word("in", Slot::Channel, false);

macro_rules! perms {
    ($($p:ident)|*) => { Permissions::from_bits_truncate(0 $(| Permissions::$p.bits())*) };
}

pub const SPECS: &[Spec] = &[
    Spec {
        verb: Verb::Send,
        written: "send",
        subject: None,
        words: &[word("to", Slot::Channel, true), word("reply_to", Slot::Message, false), AS],
        message: Message::Required,
        answers: true,
        reason: false,
        permissions: perms!(VIEW_CHANNEL | SEND_MESSAGES),
        in_server: true,
        does: "sends a message to a channel",
    },
    Spec {
        verb: Verb::Dm,
        written: "dm",
        subject: Some((Slot::Member, "the user to message")),
        words: &[AS],
        message: Message::Required,
        answers: true,
        reason: false,
        permissions: Permissions::empty(),
        in_server: false,
        does: "sends a direct message to a user",
    },
    Spec {
        verb: Verb::React,
        written: "react",
        subject: Some((Slot::Emoji, "the emoji")),
        words: &[word("to", Slot::Message, true), IN],
        message: Message::No,
        answers: false,
        reason: false,
        permissions: perms!(VIEW_CHANNEL | ADD_REACTIONS | READ_MESSAGE_HISTORY),
        in_server: true,
        does: "reacts to a message with an emoji",
    },
    Spec {
        verb: Verb::GiveRole,
        written: "give role",
        subject: Some((Slot::Role, "the role")),
        words: &[word("to", Slot::Member, true), REASON],
        message: Message::No,
        answers: false,
        reason: true,
        permissions: perms!(MANAGE_ROLES),
        in_server: true,
        does: "gives a member a role",
    },
    Spec {
        verb: Verb::TakeRole,
        written: "take role",
        subject: Some((Slot::Role, "the role")),
        words: &[word("from", Slot::Member, true), REASON],
        message: Message::No,
        answers: false,
        reason: true,
        permissions: perms!(MANAGE_ROLES),
        in_server: true,
        does: "takes a role from a member",
    },
    Spec {
        verb: Verb::Timeout,
        written: "timeout",
        subject: Some((Slot::Member, "the member")),
        words: &[
            word("for", Slot::Duration { max_secs: MAX_TIMEOUT_SECS }, false),
            word("off", Slot::Flag, false),
            REASON,
        ],
        message: Message::No,
        answers: false,
        reason: true,
        permissions: perms!(MODERATE_MEMBERS),
        in_server: true,
        does: "times a member out, or lifts their timeout (`off`)",
    },
    Spec {
        verb: Verb::Kick,
        written: "kick",
        subject: Some((Slot::Member, "the member")),
        words: &[REASON],
        message: Message::No,
        answers: false,
        reason: true,
        permissions: perms!(KICK_MEMBERS),
        in_server: true,
        does: "removes a member from the server",
    },
    Spec {
        verb: Verb::Ban,
        written: "ban",
        subject: Some((Slot::Member, "the user")),
        words: &[word("delete_messages", Slot::Duration { max_secs: MAX_BAN_DELETE_SECS }, false), REASON],
        message: Message::No,
        answers: false,
        reason: true,
        permissions: perms!(BAN_MEMBERS),
        in_server: true,
        does: "bans a user from the server",
    },
    Spec {
        verb: Verb::Unban,
        written: "unban",
        subject: Some((Slot::Member, "the user")),
        words: &[REASON],
        message: Message::No,
        answers: false,
        reason: true,
        permissions: perms!(BAN_MEMBERS),
        in_server: true,
        does: "lifts a user's ban",
    },
    Spec {
        verb: Verb::Nickname,
        written: "nickname",
        subject: Some((Slot::Member, "the member")),
        words: &[word("to", Slot::Text { min: 0, max: 32 }, true), REASON],
        message: Message::No,
        answers: false,
        reason: true,
        permissions: perms!(MANAGE_NICKNAMES),
        in_server: true,
        does: "sets a member's nickname (`to \"\"` clears it)",
    },
    Spec {
        verb: Verb::CreateThread,
        written: "create thread",
        subject: None,
        words: &[
            word("name", Slot::Text { min: 1, max: 100 }, true),
            IN,
            word("from", Slot::Message, false),
            word("private", Slot::Flag, false),
            Word { word: "tags", slot: Slot::Tag, required: false, list: true },
            REASON,
            AS,
        ],
        message: Message::Optional,
        answers: true,
        reason: true,
        permissions: perms!(VIEW_CHANNEL | CREATE_PUBLIC_THREADS | SEND_MESSAGES_IN_THREADS),
        in_server: true,
        does: "starts a thread from a message or in a channel, or a forum post with its first message",
    },
    Spec {
        verb: Verb::CreateChannel,
        written: "create channel",
        subject: None,
        words: &[
            word("name", Slot::Text { min: 1, max: 100 }, true),
            word("category", Slot::Channel, false),
            word("topic", Slot::Text { min: 0, max: 1024 }, false),
            word("private", Slot::Flag, false),
            Word { word: "visible", slot: Slot::Who, required: false, list: true },
            REASON,
            AS,
        ],
        message: Message::No,
        answers: true,
        reason: true,
        permissions: perms!(VIEW_CHANNEL | MANAGE_CHANNELS),
        in_server: true,
        does: "creates a text channel",
    },
    Spec {
        verb: Verb::DeleteMessage,
        written: "delete message",
        subject: Some((Slot::Message, "the message")),
        words: &[IN, word("after", Slot::Duration { max_secs: MAX_DELETE_AFTER_SECS }, false), REASON],
        message: Message::No,
        answers: false,
        reason: true,
        permissions: perms!(MANAGE_MESSAGES),
        in_server: true,
        does: "deletes a message, now or after a while",
    },
    Spec {
        verb: Verb::DeleteChannel,
        written: "delete channel",
        subject: Some((Slot::Channel, "the channel")),
        words: &[REASON],
        message: Message::No,
        answers: false,
        reason: true,
        permissions: perms!(MANAGE_CHANNELS),
        in_server: true,
        does: "deletes a channel or a thread",
    },
    Spec {
        verb: Verb::Pin,
        written: "pin",
        subject: Some((Slot::Message, "the message")),
        words: &[IN, REASON],
        message: Message::No,
        answers: false,
        reason: true,
        permissions: perms!(VIEW_CHANNEL | PIN_MESSAGES),
        in_server: true,
        does: "pins a message",
    },
    Spec {
        verb: Verb::Unpin,
        written: "unpin",
        subject: Some((Slot::Message, "the message")),
        words: &[IN, REASON],
        message: Message::No,
        answers: false,
        reason: true,
        permissions: perms!(VIEW_CHANNEL | PIN_MESSAGES),
        in_server: true,
        does: "unpins a message",
    },
    Spec {
        verb: Verb::Purge,
        written: "purge",
        subject: Some((Slot::Count { max: MAX_PURGE }, "how many of the channel's last messages")),
        words: &[IN, REASON, AS],
        message: Message::No,
        answers: true,
        reason: true,
        permissions: perms!(VIEW_CHANNEL | MANAGE_MESSAGES | READ_MESSAGE_HISTORY),
        in_server: true,
        does: "deletes a channel's last messages (none older than 14 days)",
    },
    Spec {
        verb: Verb::Edit,
        written: "edit",
        subject: Some((Slot::Message, "the message")),
        words: &[IN, AS],
        message: Message::Required,
        answers: true,
        reason: false,
        permissions: Permissions::empty(),
        in_server: true,
        does: "edits a message the bot sent",
    },
    Spec {
        verb: Verb::EndPoll,
        written: "end poll",
        subject: Some((Slot::Message, "the message of the poll")),
        words: &[IN, AS],
        message: Message::No,
        answers: true,
        reason: false,
        permissions: Permissions::empty(),
        in_server: false,
        does: "ends a poll the bot sent now; its message, with the results, is the answer",
    },
];

impl Verb {
    /// The action written `verb` and `kind` (`give` `role`); `Err` with
    /// what the verb takes when the kind is missing or wrong.
    pub fn parse(verb: &str, kind: Option<&str>) -> Result<Verb, &'static [&'static str]> {
        Ok(match (verb, kind) {
            ("send", None) => Verb::Send,
            ("dm", None) => Verb::Dm,
            ("react", None) => Verb::React,
            ("give", Some("role")) => Verb::GiveRole,
            ("take", Some("role")) => Verb::TakeRole,
            ("timeout", None) => Verb::Timeout,
            ("kick", None) => Verb::Kick,
            ("ban", None) => Verb::Ban,
            ("unban", None) => Verb::Unban,
            ("nickname", None) => Verb::Nickname,
            ("create", Some("thread")) => Verb::CreateThread,
            ("create", Some("channel")) => Verb::CreateChannel,
            ("delete", Some("message")) => Verb::DeleteMessage,
            ("delete", Some("channel")) => Verb::DeleteChannel,
            ("pin", None) => Verb::Pin,
            ("unpin", None) => Verb::Unpin,
            ("purge", None) => Verb::Purge,
            ("edit", None) => Verb::Edit,
            ("end", Some("poll")) => Verb::EndPoll,
            ("give" | "take", _) => return Err(&["role"]),
            ("create", _) => return Err(&["thread", "channel"]),
            ("delete", _) => return Err(&["message", "channel"]),
            ("end", _) => return Err(&["poll"]),
            _ => return Err(&[]),
        })
    }

    pub fn spec(self) -> &'static Spec {
        SPECS.iter().find(|s| s.verb == self).unwrap_or(&SPECS[0])
    }
}

impl Spec {
    pub fn word(&self, word: &str) -> Option<&'static Word> {
        self.words.iter().find(|w| w.word == word)
    }
}

/// What a value names once read: an id, or a name the server is asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Id(String),
    /// `#name` or `@Name`: looked up among the server's channels or roles.
    Named(String),
}

/// Reads `text` as a value of `slot` names it (a member, a role, a
/// channel, a message, who may see a channel); `Err` with what it should
/// have been. The checker asks it of a value written whole, the runner of
/// every value once filled.
pub fn target(slot: Slot, text: &str) -> Result<Target, &'static str> {
    let text = text.trim();
    let inner = |open: &str| text.strip_prefix(open).and_then(|t| t.strip_suffix('>'));
    let id = |t: &str| super::is_snowflake(t).then(|| Target::Id(t.to_string()));
    let found = match slot {
        Slot::Member => id(text).or_else(|| inner("<@!").or_else(|| inner("<@")).and_then(id)),
        Slot::Role => id(text).or_else(|| inner("<@&").and_then(id)).or_else(|| named(text, '@')),
        Slot::Channel => id(text).or_else(|| inner("<#").and_then(id)).or_else(|| named(text, '#')),
        Slot::Message => id(text),
        Slot::Who => id(text)
            .or_else(|| inner("<@&").and_then(id))
            .or_else(|| inner("<@!").or_else(|| inner("<@")).and_then(id))
            .or_else(|| named(text, '@')),
        _ => None,
    };
    found.ok_or(match slot {
        Slot::Member => "a user id or a mention like `<@123…>`",
        Slot::Role => "a role id, a mention like `<@&123…>` or a name like `@Moderators`",
        Slot::Channel => "a channel id, a mention like `<#123…>` or a name like `#mod-log`",
        Slot::Message => "a message id",
        Slot::Who => "a user or role id, a mention, or a role's name like `@Support`",
        _ => "a value",
    })
}

/// `#name` (a channel) or `@Name` (a role): the name, when it is one.
fn named(text: &str, sigil: char) -> Option<Target> {
    let name = text.strip_prefix(sigil)?;
    let fine = !name.is_empty() && name.chars().count() <= 100 && !name.chars().any(|c| c.is_control() || c == '\u{0}');
    fine.then(|| Target::Named(name.to_string()))
}

/// An emoji as a reaction's route takes it, when the platform takes it
/// at all ([`super::emoji::judge`], the one rule of an emoji): a Unicode
/// emoji as itself, a server's own as `name:id`.
pub fn emoji(text: &str) -> Result<String, super::emoji::Problem> {
    let text = text.trim();
    super::emoji::judge(text)?;
    let inner = text.strip_prefix("<a:").or_else(|| text.strip_prefix("<:")).and_then(|t| t.strip_suffix('>'));
    Ok(inner.unwrap_or(text).to_string())
}

/// The time a snowflake was made, in milliseconds since 1970.
pub fn snowflake_ms(id: &str) -> Option<u64> {
    const EPOCH_MS: u64 = 1_420_070_400_000;
    id.parse::<u64>().ok().map(|n| (n >> 22) + EPOCH_MS)
}

/// The permissions `verb` needs, given how it is written: a thread that
/// is private, a channel that only some can see, a message with embeds.
pub fn permissions(verb: Verb, private: bool, overwrites: bool, embeds: bool, reply: bool) -> Permissions {
    let mut p = verb.spec().permissions;
    match verb {
        Verb::CreateThread if private => {
            p.remove(Permissions::CREATE_PUBLIC_THREADS);
            p |= Permissions::CREATE_PRIVATE_THREADS;
        }
        Verb::CreateChannel if private || overwrites => p |= Permissions::MANAGE_ROLES,
        _ => {}
    }
    if embeds && verb != Verb::Dm {
        p |= Permissions::EMBED_LINKS;
    }
    if reply {
        p |= Permissions::READ_MESSAGE_HISTORY;
    }
    p
}

/// The words a server's settings show for each permission of `p`
/// (`Manage Roles`), in the platform's order.
pub fn titles(p: Permissions) -> Vec<String> {
    p.iter_names().map(|(name, _)| title(name)).collect()
}

/// A permission's name as a server's settings show it: `MANAGE_ROLES` is
/// `Manage Roles`.
pub fn title(name: &str) -> String {
    let words = name.split('_').map(|w| {
        let w = w.to_ascii_lowercase();
        let mut chars = w.chars();
        chars.next().map_or(String::new(), |c| c.to_ascii_uppercase().to_string() + chars.as_str())
    });
    words.collect::<Vec<_>>().join(" ")
}

/// The link a server's owner opens to add the bot with `permissions`:
/// the platform's OAuth2 authorisation URL with the `bot` and
/// `applications.commands` scopes.
pub fn invite_url(application: &str, permissions: Permissions) -> String {
    format!(
        "https://discord.com/oauth2/authorize?client_id={application}&scope=bot+applications.commands&permissions={}",
        permissions.bits()
    )
}

/// What the platform's refusal of an action means, by its JSON error code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// 50013: the bot lacks a permission, or its highest role is not
    /// above the member's or role's it acts on.
    MissingPermissions,
    /// 50001: the bot cannot see the channel.
    MissingAccess,
    /// 50007: the user does not take direct messages from the bot.
    DmClosed,
    /// 10003, 10007, 10008, 10011, 10013, 10026: what it names is not there.
    Unknown(&'static str),
    /// 50034: a message too old for a bulk delete.
    TooOld,
    Other,
}

impl Refused {
    pub fn of(code: Option<u64>) -> Refused {
        match code {
            Some(50013) => Refused::MissingPermissions,
            Some(50001) => Refused::MissingAccess,
            Some(50007) => Refused::DmClosed,
            Some(10003) => Refused::Unknown("channel"),
            Some(10007) => Refused::Unknown("member"),
            Some(10008) => Refused::Unknown("message"),
            Some(10011) => Refused::Unknown("role"),
            Some(10013) => Refused::Unknown("user"),
            Some(10014) => Refused::Unknown("emoji"),
            Some(10026) => Refused::Unknown("ban"),
            Some(50034) => Refused::TooOld,
            _ => Refused::Other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_verb_has_one_spec_and_reads_back_from_its_words() {
        for spec in SPECS {
            let mut words = spec.written.split(' ');
            let (verb, kind) = (words.next().unwrap_or(""), words.next());
            assert_eq!(Verb::parse(verb, kind), Ok(spec.verb), "{}", spec.written);
            assert_eq!(SPECS.iter().filter(|s| s.verb == spec.verb).count(), 1);
            assert_eq!(spec.reason, spec.word("reason").is_some(), "{}", spec.written);
            assert_eq!(spec.answers, spec.word("as").is_some(), "{}", spec.written);
        }
        assert_eq!(Verb::parse("give", None), Err(&["role"][..]));
    }

    #[test]
    fn values_name_what_their_slot_takes() {
        let id = "123456789012345678";
        assert_eq!(target(Slot::Member, &format!("<@!{id}>")), Ok(Target::Id(id.into())));
        assert_eq!(target(Slot::Role, "@Moderators"), Ok(Target::Named("Moderators".into())));
        assert_eq!(target(Slot::Channel, "#mod-log"), Ok(Target::Named("mod-log".into())));
        assert_eq!(target(Slot::Channel, &format!("<#{id}>")), Ok(Target::Id(id.into())));
        for (slot, text) in [
            (Slot::Member, "@ann"),
            (Slot::Channel, "mod-log"),
            (Slot::Message, "../../guilds/1/bans/2"),
            (Slot::Role, "<@123>"),
            (Slot::Channel, "#"),
        ] {
            assert!(target(slot, text).is_err(), "{text}");
        }
        assert_eq!(emoji("👍").as_deref(), Ok("👍"));
        assert_eq!(emoji("<:blob:123456789012345678>").as_deref(), Ok("blob:123456789012345678"));
        assert!(emoji("thumbsup").is_err() && emoji("a/b").is_err());
    }

    #[test]
    fn permissions_follow_how_an_action_is_written() {
        let p = permissions(Verb::CreateThread, true, false, false, false);
        assert!(p.contains(Permissions::CREATE_PRIVATE_THREADS) && !p.contains(Permissions::CREATE_PUBLIC_THREADS));
        assert!(permissions(Verb::CreateChannel, true, false, false, false).contains(Permissions::MANAGE_ROLES));
        assert_eq!(titles(Permissions::MANAGE_ROLES | Permissions::KICK_MEMBERS), ["Kick Members", "Manage Roles"]);
        assert_eq!(
            invite_url("1400000000000000000", Permissions::KICK_MEMBERS),
            "https://discord.com/oauth2/authorize?client_id=1400000000000000000&scope=bot+applications.commands&permissions=2"
        );
    }
}
