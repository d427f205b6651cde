//! Gateway intents: what a file's event kinds (`discord::events`) ask of
//! the Gateway, and their names, read by `blkc serve` (what it identifies
//! with), `blkc check` (the hint about privileged intents) and `blkc
//! deploy --dry-run` (what it prints).

pub use twilight_model::gateway::Intents;

/// The intent an event kind needs (`ready` needs none of its own).
pub fn of_event(kind: &str) -> Intents {
    super::events::event(kind).map_or(Intents::empty(), |e| e.intent)
}

/// What event trees of `kinds` need, and no more: GUILDS always (the
/// server names, member counts and channels that trigger variables read
/// come from it), each kind's own, and MESSAGE_CONTENT when a tree reads
/// a variable only that intent fills (`Event::content_vars`). Empty when there is no event tree.
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

/// What a wait for a member's next message (`await message`) needs: the
/// messages of servers and of private channels, and their text.
pub const ANSWERS: Intents =
    Intents::GUILDS.union(Intents::GUILD_MESSAGES).union(Intents::DIRECT_MESSAGES).union(Intents::MESSAGE_CONTENT);

/// Each intent blkc asks for, and for a privileged one the portal's switch
/// that allows it.
const NAMES: &[(Intents, &str, Option<&str>)] = &[
    (Intents::GUILDS, "GUILDS", None),
    (Intents::GUILD_MEMBERS, "GUILD_MEMBERS", Some("Server Members Intent")),
    (Intents::GUILD_MODERATION, "GUILD_MODERATION", None),
    (Intents::GUILD_EMOJIS_AND_STICKERS, "GUILD_EXPRESSIONS", None),
    (Intents::GUILD_INVITES, "GUILD_INVITES", None),
    (Intents::GUILD_VOICE_STATES, "GUILD_VOICE_STATES", None),
    (Intents::GUILD_PRESENCES, "GUILD_PRESENCES", Some("Presence Intent")),
    (Intents::GUILD_MESSAGES, "GUILD_MESSAGES", None),
    (Intents::GUILD_MESSAGE_REACTIONS, "GUILD_MESSAGE_REACTIONS", None),
    (Intents::DIRECT_MESSAGES, "DIRECT_MESSAGES", None),
    (Intents::MESSAGE_CONTENT, "MESSAGE_CONTENT", Some("Message Content Intent")),
    (Intents::GUILD_SCHEDULED_EVENTS, "GUILD_SCHEDULED_EVENTS", None),
    (Intents::AUTO_MODERATION_EXECUTION, "AUTO_MODERATION_EXECUTION", None),
    (Intents::GUILD_MESSAGE_POLLS, "GUILD_MESSAGE_POLLS", None),
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
}
