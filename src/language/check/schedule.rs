//! Timed events: the schedule reads (src/language/schedule.rs says how), only an
//! event has one, and its channel is a value known before any run: an id,
//! a secret slot, or a custom variable kept for the whole bot (B151).

use crate::base::diagnostics::{Code, Diagnostic, Findings};
use crate::language::ast::{File, Item, Part, Schedule, Tree, TreeKind, Var};

pub fn check(file: &File, out: &mut Findings) {
    for tree in file.trees() {
        let Some(s) = &tree.schedule else { continue };
        if tree.kind != TreeKind::Event {
            out.push(
                Diagnostic::new(Code::BadSchedule, format!("a {} does not run on a schedule", tree.kind.as_str()))
                    .label(s.keyword, "only an event has a schedule")
                    .help(format!(
                        "write the timed tree as an event: `event {} {} …`",
                        tree.name.name,
                        s.written.as_str()
                    )),
            );
            continue;
        }
        if crate::language::vocab::event_variables(&tree.name.name).is_some() {
            out.push(
                Diagnostic::new(Code::BadSchedule, format!("`{}` is an event kind the platform sends", tree.name.name))
                    .label(tree.name.span, "a timed event's name is its own")
                    .help("give the timed event a name of its own (`event daily_news every …`); an event of that kind has no schedule"),
            );
        }
        when(s, out);
        channel(file, tree, s, out);
    }
}

fn when(s: &Schedule, out: &mut Findings) {
    let zone = s.zone.as_ref().map(|z| z.value.as_str());
    if let Err(refusal) = crate::language::schedule::read(s.written, &s.when.value, zone) {
        let span = match (&s.zone, refusal.in_zone) {
            (Some(z), true) => z.span,
            _ => s.when.span,
        };
        out.push(Diagnostic::new(Code::BadSchedule, refusal.message).label(span, "not understood").help(refusal.help));
    }
}

/// The channel: literal digits, `<SLOT>`s and custom variables of no scope.
fn channel(file: &File, tree: &Tree, s: &Schedule, out: &mut Findings) {
    let global =
        |name: &str| file.items.iter().any(|i| matches!(i, Item::Var(v) if v.name.name == name && v.scope.is_none()));
    for part in &s.channel.parts {
        let bad = match part {
            Part::Lit(text, span) if !text.bytes().all(|b| b.is_ascii_digit()) => {
                Some((*span, "a channel's id is digits"))
            }
            Part::Var(Var::Named(n)) if !global(&n.name) => Some((
                n.span,
                "only a custom variable kept for the whole bot (`var NAME`, no `per`) is known before the run",
            )),
            Part::Var(Var::Named(_)) | Part::Lit(..) | Part::Secret(_) => None,
            Part::Var(v) => Some((v.span(), "no response, element or bot token exists before the run")),
        };
        if let Some((span, why)) = bad {
            out.push(
                Diagnostic::new(Code::BadSchedule, format!("event `{}`'s channel cannot be read here", tree.name.name))
                    .label(span, why)
                    .help("name the channel by its id (`\"123456789012345678\"`), a secret slot (`\"<NEWS_CHANNEL>\"`) or a custom variable (`\"{news_channel}\"`)"),
            );
        }
    }
}
