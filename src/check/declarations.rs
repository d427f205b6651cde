//! Rules on what a file declares: trees, events, custom variables, the
//! platform, and options.

use rustc_hash::FxHashMap as HashMap;

use super::Scope;
use crate::ast::{Else, IfNode, Item, Node, TreeKind};
use crate::diagnostics::{did_you_mean, Code, Diagnostic};
use crate::source::Span;
use crate::vocab;

pub fn check(scope: &Scope<'_>, out: &mut Vec<Diagnostic>) {
    let mut trees: HashMap<(TreeKind, &str), Span> = HashMap::default();
    let mut vars: HashMap<&str, Span> = HashMap::default();
    let mut platform: Option<Span> = None;
    for item in &scope.file.items {
        match item {
            Item::Tree(tree) => {
                let name = tree.name.name.as_str();
                let kind = tree.kind.as_str();
                if let Some(first) = trees.insert((tree.kind, name), tree.name.span) {
                    out.push(
                        Diagnostic::new(Code::DuplicateTree, format!("{kind} `{name}` is defined twice"))
                            .label(tree.name.span, "defined again here")
                            .related(first, "first defined here")
                            .help(format!("merge the two into one {kind}, or rename one of them")),
                    );
                }
                if tree.kind == TreeKind::Event && vocab::event_variables(name).is_none() {
                    let kinds = vocab::EVENTS.iter().map(|(k, _)| *k);
                    let help = match did_you_mean(name, kinds) {
                        Some(k) => format!("did you mean `{k}`?"),
                        None => format!(
                            "the event kinds are {}",
                            vocab::EVENTS.iter().map(|(k, _)| format!("`{k}`")).collect::<Vec<_>>().join(", ")
                        ),
                    };
                    out.push(
                        Diagnostic::new(Code::UnknownEvent, format!("`{name}` is not an event kind"))
                            .label(tree.name.span, "unknown event")
                            .help(help),
                    );
                }
                check_options(tree.kind, &tree.body, true, &mut HashMap::default(), out);
            }
            Item::Var(var) => {
                let name = var.name.name.as_str();
                if let Some(first) = vars.insert(name, var.name.span) {
                    out.push(
                        Diagnostic::new(
                            Code::DuplicateDeclaration,
                            format!("custom variable `{name}` is declared twice"),
                        )
                        .label(var.name.span, "declared again here")
                        .related(first, "first declared here")
                        .help("remove one of the declarations"),
                    );
                }
            }
            Item::Platform(p) => {
                if let Some(first) = platform.replace(p.span) {
                    out.push(
                        Diagnostic::new(Code::DuplicateDeclaration, "`platform` is declared twice")
                            .label(p.span, "declared again here")
                            .related(first, "first declared here")
                            .help("a file talks to one chat platform: keep one `platform` line"),
                    );
                }
                let parsed = crate::policy::Platform::parse(&p.url.value);
                if parsed.is_none() {
                    out.push(
                        Diagnostic::new(
                            Code::InvalidUrl,
                            format!("platform `{}` is not an absolute http(s) URL", p.url.value),
                        )
                        .label(p.url.span, "not an http(s) URL")
                        .help(format!(
                            "write the platform's API base URL, like `platform \"{}\"`",
                            vocab::DEFAULT_PLATFORM
                        )),
                    );
                }
            }
        }
    }
}

/// Options belong at the top level of a command, once each.
fn check_options<'a>(
    kind: TreeKind,
    nodes: &'a [Node],
    top: bool,
    seen: &mut HashMap<&'a str, Span>,
    out: &mut Vec<Diagnostic>,
) {
    for node in nodes {
        match node {
            Node::Option(opt) => {
                let name = opt.name.name.as_str();
                if kind == TreeKind::Event {
                    out.push(
                        Diagnostic::new(Code::MisplacedOption, format!("option `{name}` in an event"))
                            .label(opt.span, "events have no options")
                            .help("options are what a user types after a command; an event's data comes from its trigger variables"),
                    );
                } else if !top {
                    out.push(
                        Diagnostic::new(Code::MisplacedOption, format!("option `{name}` inside a branch"))
                            .label(opt.span, "declared inside a branch")
                            .help("declare options at the top of the command, before its other nodes"),
                    );
                } else if let Some(first) = seen.insert(name, opt.name.span) {
                    out.push(
                        Diagnostic::new(Code::DuplicateDeclaration, format!("option `{name}` is declared twice"))
                            .label(opt.name.span, "declared again here")
                            .related(first, "first declared here")
                            .help("remove one of the declarations"),
                    );
                }
            }
            Node::If(i) => check_options_in_if(kind, i, seen, out),
            _ => {}
        }
    }
}

fn check_options_in_if<'a>(
    kind: TreeKind,
    node: &'a IfNode,
    seen: &mut HashMap<&'a str, Span>,
    out: &mut Vec<Diagnostic>,
) {
    check_options(kind, &node.then.body, false, seen, out);
    match &node.otherwise {
        Some(Else::If(i)) => check_options_in_if(kind, i, seen, out),
        Some(Else::Branch(b)) => check_options(kind, &b.body, false, seen, out),
        None => {}
    }
}
