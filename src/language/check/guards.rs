//! `require roles|channels|permissions …`: who may run a command or a
//! handler, and where. A guard is decided before the run, from the
//! interaction's member and channel, so its ids are written or secrets'
//! slots, never what a run computes (B430); its permissions are the
//! platform's words (B428).

use crate::base::diagnostics::{did_you_mean, Code, Diagnostic, Findings};
use crate::discord::registration as reg;
use crate::language::ast::{File, Guard, GuardValue, Node, Part, Template, TreeKind};

/// The words after `require`, and what each holds.
const KINDS: &[(&str, &str)] = &[
    ("roles", "a member with any of these roles"),
    ("channels", "in any of these channels"),
    ("permissions", "a member with all of these permissions"),
];

pub fn check(file: &File, out: &mut Findings) {
    // Each level of a command with subcommands: its lines hold for each
    // subcommand under it.
    let autocompletes = file.trees().filter(|t| t.kind == TreeKind::Autocomplete);
    let levels = file.every_level().into_iter().map(|(t, _)| t).chain(autocompletes);
    for tree in levels {
        let allowed = matches!(tree.kind, TreeKind::Command | TreeKind::Handler);
        let mut seen: Vec<(&str, crate::base::source::Span)> = Vec::new();
        for node in &tree.body {
            let Node::Guard(g) = node else { continue };
            if !allowed {
                let (what, why) = match tree.kind {
                    TreeKind::Autocomplete => (
                        "`require` in an autocomplete",
                        "the command's own `require` lines hold for its autocomplete too: write it in the command",
                    ),
                    _ => (
                        "`require` in an event",
                        "an event has no member who used it: only a command or a handler can require something of one",
                    ),
                };
                out.push(bad(g.span, what, why));
                continue;
            }
            if let Some((_, first)) = seen.iter().find(|(w, _)| *w == g.what.name.as_str()) {
                out.push(
                    bad(
                        g.span,
                        &format!("`require {}` twice", g.what.name),
                        "list every value on one line: `require roles \"…\", \"…\"`",
                    )
                    .related(*first, "the first"),
                );
                continue;
            }
            seen.push((g.what.name.as_str(), g.span));
            guard(g, out);
        }
        crate::language::ast::visit::each_in_branch(&tree.body, &mut |n| {
            if let Node::Guard(g) = n {
                let help = "move it to the top of the command or handler: it is decided before the run starts";
                out.push(bad(g.span, "`require` inside an `if` or a `for`", help));
            }
        });
    }
}

fn guard(g: &Guard, out: &mut Findings) {
    let what = g.what.name.as_str();
    if !KINDS.iter().any(|(k, _)| *k == what) {
        // `role`, `channel`, `permission`: the plural is the word.
        let plural = format!("{what}s");
        let kinds = KINDS.iter().map(|(k, _)| *k);
        let meant = kinds.clone().find(|k| *k == plural).or_else(|| did_you_mean(what, kinds));
        let diag = Diagnostic::new(
            Code::BadGuard,
            format!("`require {what}`: blkc can require roles, channels or permissions"),
        )
        .label(g.what.span, "here");
        out.push(diag.meant(
            g.what.span,
            meant,
            "write `require roles \"…\"`, `require channels \"…\"` or `require permissions …`",
        ));
        return;
    }
    for value in &g.values {
        match (what, value) {
            ("permissions", GuardValue::Word(w)) if reg::permission(&w.name).is_none() => {
                let known = reg::permission_words();
                let diag = Diagnostic::new(Code::UnknownRegisterWord, format!("no permission is called `{}`", w.name))
                    .label(w.span, "not a permission the platform knows");
                let meant = did_you_mean(&w.name, known.iter().map(String::as_str));
                let help = "a permission is the platform's name in lower case: `manage_messages`, `ban_members` …";
                out.push(diag.meant(w.span, meant, help));
            }
            ("permissions", GuardValue::Word(_)) => {}
            ("permissions", GuardValue::Text(t)) => out.push(bad(
                t.span,
                "a permission is a word, not a string",
                "write the platform's name in lower case, without quotes: `require permissions manage_messages`",
            )),
            (_, GuardValue::Word(w)) => out.push(bad(
                w.span,
                &format!("`{}` is not an id: a role or a channel is its id, in quotes", w.name),
                "write its id (right-click it, Copy ID), or a secret's slot: `require roles \"<MOD_ROLE>\"`",
            )),
            (_, GuardValue::Text(t)) => id(t, out),
        }
    }
}

/// A role's or a channel's id: digits as written, or secrets' slots (whose
/// value serve checks when it starts).
fn id(t: &Template, out: &mut Findings) {
    let computed = t.parts.iter().any(|p| !matches!(p, Part::Lit(..) | Part::Secret(..)));
    if computed {
        out.push(bad(
            t.span,
            "a `require` id is read before the run: it can be written or a secret, not a variable",
            "write the id, or keep it in a secret: `require roles \"<MOD_ROLE>\"`",
        ));
        return;
    }
    let written: String =
        t.parts.iter().filter_map(|p| if let Part::Lit(s, _) = p { Some(s.as_str()) } else { None }).collect();
    let only_text = t.parts.iter().all(|p| matches!(p, Part::Lit(..)));
    if only_text && !crate::discord::is_snowflake(&written) {
        out.push(bad(
            t.span,
            &format!("`{}` is not an id", crate::base::display::one_line(&written)),
            "a role's or a channel's id is its digits (right-click it, Copy ID): a name can change, an id cannot",
        ));
    }
}

fn bad(span: crate::base::source::Span, message: &str, help: &str) -> Diagnostic {
    Diagnostic::new(Code::BadGuard, message.to_string()).label(span, "here").help(help.to_string())
}
