//! Webhook events (B163): only an event is one, its name is its own, its
//! head reads (`language::webhook`), and no two listen on one path.

use crate::base::diagnostics::{Code, Diagnostic, Findings};
use crate::language::ast::{File, TreeKind, Webhook};

pub fn check(file: &File, out: &mut Findings) {
    let mut paths: Vec<(&str, crate::base::source::Span)> = Vec::new();
    for tree in file.trees() {
        let Some(w) = &tree.webhook else { continue };
        if tree.kind != TreeKind::Event {
            out.push(
                Diagnostic::new(Code::BadWebhook, format!("a {} is not triggered by a webhook", tree.kind.as_str()))
                    .label(w.keyword, "only an event is")
                    .help(format!("write it as an event: `event {} webhook …`", tree.name.name)),
            );
            continue;
        }
        if crate::language::vocab::event_variables(&tree.name.name).is_some() {
            out.push(
                Diagnostic::new(Code::BadWebhook, format!("`{}` is an event kind the platform sends", tree.name.name))
                    .label(tree.name.span, "a webhook event's name is its own")
                    .help("give the webhook event a name of its own (`event deploy webhook …`)"),
            );
        }
        if let Err(found) = crate::language::webhook::read(w) {
            out.extend(found);
        }
        let p = w.path.value.as_str();
        match paths.iter().find(|(q, _)| *q == p) {
            Some((_, first)) => out.push(
                Diagnostic::new(Code::BadWebhook, format!("two webhook events listen on `{p}`"))
                    .label(w.path.span, "again")
                    .related(*first, "first here")
                    .help("give each its own path: a POST runs the one event its path names"),
            ),
            None => paths.push((p, w.path.span)),
        }
        own_block(tree, w, out);
    }
}

/// A block of the tree named as the request it received.
fn own_block(tree: &crate::language::ast::Tree, w: &Webhook, out: &mut Findings) {
    crate::language::ast::visit::each_block(&tree.body, &mut |b| {
        if b.name.name == Webhook::BLOCK {
            out.push(
                Diagnostic::new(Code::DuplicateBlock, "a block named `webhook` in a webhook event")
                    .label(b.name.span, "this block")
                    .related(w.keyword, "the request received is read as `api_webhook`")
                    .help("rename the block: `{api_webhook[…]}` reads the request that triggered the event"),
            );
        }
    });
}
