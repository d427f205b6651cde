//! Work that waits (`after "10m" { … }`, docs/language.md "Work that
//! waits"): its body runs later in a run of its own, which has the
//! variables of the run that kept it and nothing else of it. B168: a step
//! only that run could take (a form, an update, a private reply, a choice,
//! an option, a `require`, a `failed`), or a response, a loop's element or
//! a joined text read from outside the body. B141: a scope other than
//! `user` or `server`.

use crate::base::diagnostics::{did_you_mean, Code, Diagnostic, Findings};
use crate::base::source::Span;
use crate::language::ast::visit::{self, Site, Visitor};
use crate::language::ast::{File, Ident, Node, ReplyItem};

pub fn check(file: &File, out: &mut Findings) {
    for tree in file.trees() {
        // A webhook event's request is a block run before the tree's nodes.
        let mut outside: Outside = tree.webhook.iter().map(|w| (w.block.name.name.to_string(), w.span)).collect();
        walk(&tree.body, &mut outside, out);
        owner_known(tree, &tree.body, out);
    }
    let customs: Vec<&str> = file
        .items
        .iter()
        .filter_map(|i| if let crate::language::ast::Item::Var(v) = i { Some(v.name.name.as_str()) } else { None })
        .collect();
    file.trees().for_each(|t| answer_names(&t.body, &customs, out));
}

/// B133: an `await`'s answer named like a variable blkc provides or a
/// custom variable, which it would hide.
fn answer_names(nodes: &[Node], customs: &[&str], out: &mut Findings) {
    for node in nodes {
        match node {
            Node::Await(a) => {
                if customs.contains(&a.name.name.as_str()) {
                    out.push(
                        Diagnostic::new(
                            Code::ShadowedVariable,
                            format!("`as {}` takes the name of a custom variable", a.name.name),
                        )
                        .label(a.name.span, format!("`{{{}}}` is already a custom variable", a.name.name))
                        .help(format!("choose another name for the answer, like `{}_answer`", a.name.name)),
                    );
                } else {
                    super::declarations::check_shadowing(&a.name, "as", out);
                }
                std::iter::once(&a.body).chain(&a.timeout).for_each(|b| answer_names(&b.body, customs, out));
            }
            Node::Later(l) => answer_names(&l.body.body, customs, out),
            other => other.branches().into_iter().for_each(|b| answer_names(b, customs, out)),
        }
    }
}

/// What the nodes outside an `after`'s body make that the body may not
/// read: blocks, loop elements, joined texts (each with its span).
type Outside = Vec<(String, Span)>;

fn walk(nodes: &[Node], outside: &mut Outside, out: &mut Findings) {
    for node in nodes {
        match node {
            Node::Later(l) => {
                scope(l.scope.as_ref(), out);
                kept(&l.body.body, (l.head, "an `after`"), outside, out);
            }
            Node::Await(a) => {
                for body in std::iter::once(&a.body).chain(&a.timeout) {
                    kept(&body.body, (a.head, "an `await`"), outside, out);
                }
            }
            Node::Cancel(c) => scope(c.scope.as_ref(), out),
            Node::Api(b) => outside.push((b.name.name.to_string(), b.span)),
            Node::For(f) => {
                outside.push((f.item.name.to_string(), f.item.span));
                if let Some(j) = &f.join {
                    outside.push((j.into.name.to_string(), j.into.span));
                }
                walk(&f.body.body, outside, out);
            }
            other => other.branches().into_iter().for_each(|b| walk(b, outside, out)),
        }
    }
}

/// A body kept to run later (`head`, what it is), read in a run of its
/// own: what it reads of the run outside (`outside`), and what it holds.
fn kept(body: &[Node], head: (Span, &'static str), outside: &Outside, out: &mut Findings) {
    let mut reads = Reads { outside: outside.clone(), out, inner: Vec::new(), what: head.1 };
    visit::walk_nodes(&mut reads, body);
    held(body, head, out);
    // Inside, its own blocks and loops are its own.
    walk(body, &mut Vec::new(), out);
}

/// B142: work kept per user (the default) in a tree whose trigger has no
/// user, or per server in one with no server (a timed event, a webhook);
/// an `await` where there is no user or no channel to wait in.
fn owner_known(tree: &crate::language::ast::Tree, nodes: &[Node], out: &mut Findings) {
    let provided = crate::language::model::trigger_variables(tree);
    for node in nodes {
        let (scope, span) = match node {
            Node::Later(l) => (l.scope.as_ref(), l.head),
            Node::Cancel(c) => (c.scope.as_ref(), c.span),
            Node::Await(a) => {
                for body in std::iter::once(&a.body).chain(&a.timeout) {
                    owner_known(tree, &body.body, out);
                }
                let Some(needed) = ["user_id", "channel_id"].into_iter().find(|v| !provided.contains(v)) else {
                    continue;
                };
                out.push(
                    Diagnostic::new(
                        Code::ScopeNotInTree,
                        format!(
                            "an `await` waits for a member's message in a channel, and `{}` {}s have no `{needed}`",
                            tree.name.name,
                            tree.kind.as_str()
                        ),
                    )
                    .label(a.head, "waits here")
                    .related(
                        tree.name.span,
                        format!("this {} gives no {}", tree.kind.as_str(), &needed[..needed.len() - 3]),
                    )
                    .help("await in a command, a handler, or an event with a member and a channel (`message_create`)"),
                );
                continue;
            }
            _ => {
                node.branches().into_iter().for_each(|b| owner_known(tree, b, out));
                continue;
            }
        };
        let needed = if scope.is_some_and(|s| s.name == "server") { "server_id" } else { "user_id" };
        if !provided.contains(&needed) {
            out.push(
                Diagnostic::new(
                    Code::ScopeNotInTree,
                    format!("work that waits is kept for its owner, and `{}` {}s have no `{needed}`", tree.name.name, tree.kind.as_str()),
                )
                .label(span, "kept here")
                .related(tree.name.span, format!("this {} gives no {}", tree.kind.as_str(), &needed[..needed.len() - 3]))
                .help("write `per server` where the trigger has a server; a timed event or a webhook keeps no work that waits (a timed event runs again on its own)"),
            );
        }
        if let Node::Later(l) = node {
            owner_known(tree, &l.body.body, out);
        }
    }
}

/// B141: `per` names a scope work can be kept for.
fn scope(scope: Option<&Ident>, out: &mut Findings) {
    let Some(scope) = scope.filter(|s| !matches!(s.name.as_str(), "user" | "server")) else { return };
    out.push(
        Diagnostic::new(Code::UnknownScope, format!("work that waits is not kept per `{}`", scope.name))
            .label(scope.span, "not `user` or `server`")
            .maybe_fixes(
                did_you_mean(&scope.name, ["user", "server"]).map(|m| (format!("write `{m}`"), scope.span, m.to_string())),
            )
            .help("`per user` (the default: the user's own, listed in their `{waiting}`) or `per server` (any member's `cancel` of the key reaches it)"),
    );
}

/// B168: the steps the body of an `after` (an `await`) cannot take, in
/// any branch.
fn held(nodes: &[Node], head: (Span, &'static str), out: &mut Findings) {
    for node in nodes {
        let why = match node {
            Node::Form(_) => Some("a form answers an interaction, which is long answered when this runs"),
            Node::Reply(r) if r.keyword() == "update" => Some("there is no clicked message to update when this runs"),
            Node::Reply(r) if r.items.iter().any(|i| matches!(i, ReplyItem::Ephemeral(_))) => {
                Some("a private reply answers an interaction; this reply is posted in the channel")
            }
            Node::Choice(_) => Some("choices answer a keystroke, which is long gone when this runs"),
            Node::Option(_) | Node::Register(_) | Node::Guard(_) | Node::Sub(_) => {
                Some("this belongs to the command's head, not to work that waits")
            }
            Node::Failed(..) => Some("a `failed` belongs at the top of a tree; the tree's runs here too"),
            _ => None,
        };
        if let Some(why) = why {
            out.push(
                Diagnostic::new(Code::MisplacedInLater, format!("{}'s body cannot hold this", head.1))
                    .label(node.span(), why)
                    .related(head.0, "runs later, in a run of its own")
                    .help(format!(
                        "move it out of {}; to reach the user in private later, `dm \"{{user_id}}\" \"…\"`",
                        head.1
                    )),
            );
        }
        node.branches().into_iter().for_each(|b| held(b, head, out));
    }
}

/// The body's reads of what the run outside made.
struct Reads<'o> {
    outside: Outside,
    out: &'o mut Findings,
    /// What the body itself made, read freely.
    inner: Vec<String>,
    /// What keeps it: "an `after`", "an `await`".
    what: &'static str,
}

impl Reads<'_> {
    /// The variables whose values are keys of a path.
    fn keys(&mut self, segments: &[crate::language::ast::Segment]) {
        for seg in segments {
            if let Some(name) = crate::base::path::key_variable(&seg.text) {
                self.read(name, seg.span);
            }
        }
    }

    fn read(&mut self, name: &str, span: Span) {
        if self.inner.iter().any(|n| n == name) {
            return;
        }
        let made = name.strip_prefix("api_").unwrap_or(name);
        let Some((_, at)) = self.outside.iter().rev().find(|(n, _)| n == made || n == name) else { return };
        self.out.push(
            Diagnostic::new(Code::MisplacedInLater, format!("`{name}` is the run's that keeps this work, not kept with it"))
                .label(span, "read later, when it is gone")
                .related(*at, format!("made here, before {}", self.what))
                .help("the body has the run's variables (its options, `user_id`, `channel_id`…) and the custom variables as they are when it runs: save what it needs in a custom variable first, or make the request inside the body"),
        );
    }
}

impl<'a> Visitor<'a> for Reads<'_> {
    fn reference(&mut self, r: &'a crate::language::ast::Reference, _site: Site, _in_text: bool) {
        self.read(&format!("api_{}", r.block.name), r.span);
        self.keys(&r.segments);
    }

    fn element(&mut self, e: &'a crate::language::ast::ElementRef, _site: Site, _in_text: bool) {
        self.read(&e.item.name, e.span);
        self.keys(&e.segments);
    }

    fn named(&mut self, name: &'a Ident, _site: Site) {
        self.read(&name.name, name.span);
    }

    fn save_field(&mut self, f: &'a crate::language::ast::SaveField) {
        self.keys(&f.path);
        self.save(&f.save);
    }

    fn block(&mut self, b: &'a crate::language::ast::ApiBlock) {
        self.inner.push(format!("api_{}", b.name.name));
        visit::walk_block(self, b);
    }

    fn for_loop(&mut self, f: &'a crate::language::ast::ForNode) {
        self.inner.push(f.item.name.to_string());
        if let Some(j) = &f.join {
            self.inner.push(j.into.name.to_string());
        }
        visit::walk_for(self, f);
    }
}
