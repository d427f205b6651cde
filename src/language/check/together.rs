//! `with user option_to { … }` and `together { … }` (docs/language.md,
//! "Other members' values"): a `with` names a scope (B141 otherwise), and
//! a `together` holds only what its transaction can undo: saves, and the
//! `if`s, `with`s and `together`s around them (B165 otherwise: a reply or
//! a request cannot be taken back when a later save fails).

use crate::base::diagnostics::{Code, Diagnostic, Findings};
use crate::base::source::Span;
use crate::language::ast::{File, Node};
use crate::language::vocab::VarScope;

pub fn check(file: &File, out: &mut Findings) {
    for tree in file.trees() {
        walk(&tree.body, None, out);
        each_with(&tree.body, &mut |w| typed_place(&tree.body, w, out));
    }
}

/// Every `with` of `nodes`, in every branch.
fn each_with<'a>(nodes: &'a [Node], f: &mut impl FnMut(&'a crate::language::ast::WithNode)) {
    for node in nodes {
        if let Node::With(w) = node {
            f(w);
        }
        node.branches().into_iter().for_each(|b| each_with(b, f));
    }
}

/// B167: `with server WHO` or `with channel WHO` where WHO is what a user
/// types (a text option, a form field, a select's value, a message): ids
/// of servers and channels are the platform's, across servers, so a typed
/// one would reach another server's values. A `channel` option is the
/// platform's choice among the server's channels, and stays allowed.
fn typed_place(body: &[Node], w: &crate::language::ast::WithNode, out: &mut Findings) {
    let scope = VarScope::parse(&w.scope.name);
    if !matches!(scope, Some(VarScope::Server | VarScope::Channel)) {
        return;
    }
    let name = w.whose.name.as_str();
    let channel_option = name.strip_prefix("option_").is_some_and(|o| {
        body.iter().any(|n| {
            matches!(n, Node::Option(d) if d.name.name == o
                && d.option_type() == crate::discord::options::OptionType::Channel)
        })
    });
    let typed = name.starts_with("option_")
        || name.starts_with("field_")
        || matches!(name, "value" | "values" | "typed_text" | "message_content");
    if typed && !(scope == Some(VarScope::Channel) && channel_option) {
        out.push(
            Diagnostic::new(
                Code::TypedPlace,
                format!("`{name}` is what a user gives: it cannot name whose {} values these are", w.scope.name),
            )
            .label(w.whose.span, "a value a user chooses")
            .help(format!(
                "a {0} id a user typed could be another server's: name the {0} with a trigger variable (`{0}_id`){1}",
                w.scope.name,
                if scope == Some(VarScope::Channel) {
                    ", or an option of type `channel`, which the platform fills with one of this server's channels"
                } else {
                    ""
                }
            )),
        );
    }
}

/// `inside`: the `together` the nodes are in, if any.
fn walk(nodes: &[Node], inside: Option<Span>, out: &mut Findings) {
    for node in nodes {
        match node {
            Node::With(w) => {
                if VarScope::parse(&w.scope.name).is_none() {
                    out.push(
                        Diagnostic::new(Code::UnknownScope, format!("`{}` is not a scope", w.scope.name))
                            .label(w.scope.span, "not a scope")
                            .maybe_fixes(
                                crate::base::diagnostics::did_you_mean(&w.scope.name, ["user", "server", "channel"])
                                    .map(|m| (format!("write `{m}`"), w.scope.span, m.to_string())),
                            )
                            .help("`with user …`, `with server …` or `with channel …`: whose values the variables kept `per user`, `per server` or `per channel` read and save inside"),
                    );
                }
                walk(&w.body.body, inside, out);
            }
            Node::Together(b, span) => walk(&b.body, Some(inside.unwrap_or(*span)), out),
            Node::If(i) => {
                for link in &i.links {
                    walk(&link.then.body, inside, out);
                }
                if let Some(otherwise) = &i.otherwise {
                    walk(&otherwise.body, inside, out);
                }
            }
            Node::Save(_) | Node::SaveField(_) => {}
            other => {
                if let Some(together) = inside {
                    out.push(
                        Diagnostic::new(Code::NotUndoable, "a `together` holds only saves")
                            .label(other.span(), "this cannot be taken back")
                            .related(together, "its saves are made all or none")
                            .help("move it after the `together`: when one of its saves fails, nothing of it is saved, but a reply, a request or an action would already be out"),
                    );
                }
                for_nested(other, inside, out);
            }
        }
    }
}

/// The nodes inside a loop, which may hold `with` and `together` too.
fn for_nested(node: &Node, inside: Option<Span>, out: &mut Findings) {
    if let Node::For(f) = node {
        walk(&f.body.body, inside, out);
    }
}
