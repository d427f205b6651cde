//! The Gateway intents a file needs, from its event kinds: the one place
//! that maps events to intents, read by `blkc serve` (what it identifies
//! with), `blkc check` (the hint about privileged intents) and
//! `blkc deploy --dry-run` (what it prints).

use crate::ast::visit::{self, Site};
use crate::ast::{File, Ident, TreeKind};

pub const GUILDS: u64 = 1 << 0;
pub const GUILD_MEMBERS: u64 = 1 << 1;
pub const GUILD_MESSAGES: u64 = 1 << 9;
pub const GUILD_MESSAGE_REACTIONS: u64 = 1 << 10;
pub const MESSAGE_CONTENT: u64 = 1 << 15;

/// Each intent blkc asks for: its bit, its name, and for a privileged one
/// the portal's switch that allows it.
pub const INTENTS: &[(u64, &str, Option<&str>)] = &[
    (GUILDS, "GUILDS", None),
    (GUILD_MEMBERS, "GUILD_MEMBERS", Some("Server Members Intent")),
    (GUILD_MESSAGES, "GUILD_MESSAGES", None),
    (GUILD_MESSAGE_REACTIONS, "GUILD_MESSAGE_REACTIONS", None),
    (MESSAGE_CONTENT, "MESSAGE_CONTENT", Some("Message Content Intent")),
];

/// The intent an event kind needs (`ready` needs none of its own).
pub fn of_event(kind: &str) -> u64 {
    match kind {
        "member_join" | "member_leave" => GUILD_MEMBERS,
        "message_create" | "message_update" | "message_delete" => GUILD_MESSAGES,
        "reaction_add" | "reaction_remove" => GUILD_MESSAGE_REACTIONS,
        "channel_create" | "channel_delete" | "role_create" => GUILDS,
        _ => 0,
    }
}

/// What the file's event trees need, and no more: GUILDS always (the
/// server names, member counts and channels that trigger variables read
/// come from it), each kind's own, and MESSAGE_CONTENT only when a tree
/// reads `message_content`. Zero when the file has no event.
pub fn needed(file: &File) -> u64 {
    let mut bits = 0;
    for tree in file.trees().filter(|t| t.kind == TreeKind::Event) {
        bits |= GUILDS | of_event(&tree.name.name);
        if reads(&tree.body, "message_content") {
            bits |= MESSAGE_CONTENT;
        }
    }
    bits
}

/// Whether `nodes` read the variable `name` anywhere.
pub fn reads(nodes: &[crate::ast::Node], name: &str) -> bool {
    struct Reads<'n> {
        name: &'n str,
        found: bool,
    }
    impl<'a> visit::Visitor<'a> for Reads<'_> {
        fn named(&mut self, ident: &'a Ident, _site: Site) {
            self.found |= ident.name == self.name;
        }
    }
    let mut r = Reads { name, found: false };
    visit::walk_nodes(&mut r, nodes);
    r.found
}

/// `GUILDS | GUILD_MEMBERS`, for messages.
pub fn names(bits: u64) -> String {
    let names: Vec<&str> = INTENTS.iter().filter(|(b, _, _)| bits & b != 0).map(|(_, n, _)| *n).collect();
    if names.is_empty() {
        "none".into()
    } else {
        names.join(" | ")
    }
}

/// The portal switches the privileged intents of `bits` need.
pub fn privileged(bits: u64) -> Vec<(&'static str, &'static str)> {
    INTENTS
        .iter()
        .filter(|(b, _, p)| bits & b != 0 && p.is_some())
        .map(|(_, n, p)| (*n, p.unwrap_or_default()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceFile;

    #[test]
    fn a_file_asks_for_the_intents_its_events_need_and_no_more() {
        let intents = |text: &str| needed(&crate::check_source(SourceFile::new("bot.blk", text)).ast);
        assert_eq!(intents("command c \"C\" { reply \"x\" }\n"), 0);
        assert_eq!(intents("event member_join { reply \"hi {user_name}\" }\n"), GUILDS | GUILD_MEMBERS);
        assert_eq!(intents("event message_create { reply \"seen {message_id}\" }\n"), GUILDS | GUILD_MESSAGES);
        let reads = "event message_create {\n    if \"{message_content}\" == \"!ping\" { reply \"pong\" }\n}\n";
        assert_eq!(intents(reads), GUILDS | GUILD_MESSAGES | MESSAGE_CONTENT);
        assert_eq!(names(GUILDS | MESSAGE_CONTENT), "GUILDS | MESSAGE_CONTENT");
        assert_eq!(privileged(GUILDS | GUILD_MEMBERS), [("GUILD_MEMBERS", "Server Members Intent")]);
    }
}
