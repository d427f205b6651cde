//! Gateway intents and the dispatches behind each event kind: the one
//! table that says which dispatch triggers which event tree and which
//! intent it needs, read by `blkc serve` (what it identifies with and
//! what it runs), `blkc check` (the hint about privileged intents) and
//! `blkc deploy --dry-run` (what it prints).

pub use twilight_model::gateway::Intents;

/// One event kind of the language, as the platform delivers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventWire {
    /// The kind as a file names it (`member_join`).
    pub kind: &'static str,
    /// The dispatch that triggers it (`GUILD_MEMBER_ADD`).
    pub dispatch: &'static str,
    /// The intent that has the Gateway send it.
    pub intent: Intents,
}

/// Every event kind blkc runs, with its dispatch and intent.
pub const EVENTS: &[EventWire] = &[
    EventWire { kind: "member_join", dispatch: "GUILD_MEMBER_ADD", intent: Intents::GUILD_MEMBERS },
    EventWire { kind: "member_leave", dispatch: "GUILD_MEMBER_REMOVE", intent: Intents::GUILD_MEMBERS },
    EventWire { kind: "message_create", dispatch: "MESSAGE_CREATE", intent: Intents::GUILD_MESSAGES },
    EventWire { kind: "message_update", dispatch: "MESSAGE_UPDATE", intent: Intents::GUILD_MESSAGES },
    EventWire { kind: "message_delete", dispatch: "MESSAGE_DELETE", intent: Intents::GUILD_MESSAGES },
    EventWire { kind: "reaction_add", dispatch: "MESSAGE_REACTION_ADD", intent: Intents::GUILD_MESSAGE_REACTIONS },
    EventWire {
        kind: "reaction_remove",
        dispatch: "MESSAGE_REACTION_REMOVE",
        intent: Intents::GUILD_MESSAGE_REACTIONS,
    },
    EventWire { kind: "channel_create", dispatch: "CHANNEL_CREATE", intent: Intents::GUILDS },
    EventWire { kind: "channel_delete", dispatch: "CHANNEL_DELETE", intent: Intents::GUILDS },
    EventWire { kind: "role_create", dispatch: "GUILD_ROLE_CREATE", intent: Intents::GUILDS },
    // READY comes to every session; it needs no intent of its own.
    EventWire { kind: "ready", dispatch: "READY", intent: Intents::empty() },
];

/// The event kind a dispatch triggers, for those with event trees.
pub fn kind_of(dispatch: &str) -> Option<&'static str> {
    EVENTS.iter().find(|e| e.dispatch == dispatch).map(|e| e.kind)
}

/// The intent an event kind needs (`ready` needs none of its own).
pub fn of_event(kind: &str) -> Intents {
    EVENTS.iter().find(|e| e.kind == kind).map_or(Intents::empty(), |e| e.intent)
}

/// What event trees of `kinds` need, and no more: GUILDS always (the
/// server names, member counts and channels that trigger variables read
/// come from it), each kind's own, and MESSAGE_CONTENT when a tree reads
/// `message_content`. Empty when there is no event tree.
pub fn needed<'k>(kinds: impl IntoIterator<Item = (&'k str, bool)>) -> Intents {
    let mut bits = Intents::empty();
    for (kind, reads_content) in kinds {
        bits |= Intents::GUILDS | of_event(kind);
        if reads_content {
            bits |= Intents::MESSAGE_CONTENT;
        }
    }
    bits
}

/// Each intent blkc asks for, and for a privileged one the portal's switch
/// that allows it.
const NAMES: &[(Intents, &str, Option<&str>)] = &[
    (Intents::GUILDS, "GUILDS", None),
    (Intents::GUILD_MEMBERS, "GUILD_MEMBERS", Some("Server Members Intent")),
    (Intents::GUILD_MESSAGES, "GUILD_MESSAGES", None),
    (Intents::GUILD_MESSAGE_REACTIONS, "GUILD_MESSAGE_REACTIONS", None),
    (Intents::MESSAGE_CONTENT, "MESSAGE_CONTENT", Some("Message Content Intent")),
];

/// `GUILDS | GUILD_MEMBERS`, for messages.
pub fn names(bits: Intents) -> String {
    let names: Vec<&str> = NAMES.iter().filter(|(b, _, _)| bits.contains(*b)).map(|(_, n, _)| *n).collect();
    if names.is_empty() {
        "none".into()
    } else {
        names.join(" | ")
    }
}

/// The portal switches the privileged intents of `bits` need.
pub fn privileged(bits: Intents) -> Vec<(&'static str, &'static str)> {
    NAMES.iter().filter_map(|(b, n, p)| Some((*n, (*p)?)).filter(|_| bits.contains(*b))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_asks_for_the_intents_its_events_need_and_no_more() {
        assert_eq!(needed([]), Intents::empty());
        assert_eq!(needed([("member_join", false)]), Intents::GUILDS | Intents::GUILD_MEMBERS);
        assert_eq!(needed([("message_create", false)]), Intents::GUILDS | Intents::GUILD_MESSAGES);
        assert_eq!(
            needed([("message_create", true)]),
            Intents::GUILDS | Intents::GUILD_MESSAGES | Intents::MESSAGE_CONTENT
        );
        assert_eq!(names(Intents::GUILDS | Intents::MESSAGE_CONTENT), "GUILDS | MESSAGE_CONTENT");
        assert_eq!(privileged(Intents::GUILDS | Intents::GUILD_MEMBERS), [("GUILD_MEMBERS", "Server Members Intent")]);
        assert_eq!(Intents::GUILD_MEMBERS.bits(), 1 << 1);
        assert_eq!(Intents::MESSAGE_CONTENT.bits(), 1 << 15);
    }

    #[test]
    fn every_event_kind_of_the_language_has_its_dispatch_and_no_other() {
        let language: Vec<&str> = crate::language::vocab::EVENTS.iter().map(|(k, _)| *k).collect();
        let wire: Vec<&str> = EVENTS.iter().map(|e| e.kind).collect();
        assert_eq!(language, wire);
        for e in EVENTS {
            assert_eq!(kind_of(e.dispatch), Some(e.kind));
        }
    }
}
