//! Rules on what a file declares: trees, events, custom variables, the
//! platform, and options.

use rustc_hash::FxHashMap as HashMap;

use super::scope::Scope;
use crate::base::diagnostics::{did_you_mean, Code, Diagnostic, Findings};
use crate::base::source::Span;
use crate::language::ast::visit::{self, Visitor};
use crate::language::ast::{ApiBlock, Condition, Item, Node, OptionDecl, Reply, Save, TreeKind};
use crate::language::vocab;

pub fn check(scope: &Scope<'_>, out: &mut Findings) {
    // (A context-menu command is known by its menu too: a user command and
    // a message command may share a name.)
    let mut trees: HashMap<(TreeKind, Option<&str>, &str), Span> = HashMap::default();
    let mut vars: HashMap<&str, Span> = HashMap::default();
    let mut platform: Option<Span> = None;
    for item in &scope.file.items {
        match item {
            Item::Tree(tree) => {
                let name = tree.name.name.as_str();
                let kind = tree.kind.as_str();
                if let Some(first) = trees.insert((tree.kind, tree.menu_target(), name), tree.name.span) {
                    out.push(
                        Diagnostic::new(Code::DuplicateTree, format!("{kind} `{name}` is defined twice"))
                            .label(tree.name.span, "defined again here")
                            .related(first, "first defined here")
                            .help(format!("merge the two into one {kind}, or rename one of them")),
                    );
                }
                // A timed event's name is its own; another event's is its kind.
                if tree.kind == TreeKind::Event
                    && tree.schedule.is_none()
                    && tree.webhook.is_none()
                    && vocab::event_variables(name).is_none()
                {
                    let (help, suggestion) = unknown_event_help(name);
                    out.push(
                        Diagnostic::new(Code::UnknownEvent, format!("`{name}` is not an event kind"))
                            .label(tree.name.span, "unknown event")
                            .help(help)
                            .maybe_fixes(suggestion.map(|k| (format!("write `{k}`"), tree.name.span, k.to_string()))),
                    );
                }
                crate::language::ast::visit::each_save(&tree.body, &mut |save| {
                    check_shadowing(&save.name, "save", out)
                });
            }
            Item::Var(var) => {
                check_shadowing(&var.name, "var", out);
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
            // (The file's `failed`, once: check::bodies.)
            Item::Failed(..) => {}
            // (Read by the loader, which reports its own: load::includes.)
            Item::Include(_) => {}
            Item::Platform(p) => {
                if let Some(first) = platform.replace(p.span) {
                    out.push(
                        Diagnostic::new(Code::DuplicateDeclaration, "`platform` is declared twice")
                            .label(p.span, "declared again here")
                            .related(first, "first declared here")
                            .help("a file talks to one chat platform: keep one `platform` line"),
                    );
                }
                platform_url(p, out);
            }
        }
    }
    // (Each tree that runs: a subcommand's options are its own; those of
    // a command with subcommands are B431's.)
    for tree in scope.file.trees() {
        check_options(tree.kind, &tree.body, out);
    }
}

/// A `platform` line's URL: an absolute http(s) URL, and Discord's API at
/// a version (B426).
/// What to say of an event kind that is not one: the kind it is close to,
/// the kinds a platform dispatch's name (`voice_state_update`) comes as, or
/// every kind; and the kind to write instead, when there is one.
fn unknown_event_help(name: &str) -> (String, Option<&'static str>) {
    let dispatch = name.to_ascii_uppercase();
    let of: Vec<&str> = crate::discord::events::of_dispatch(&dispatch).map(|e| e.kind).collect();
    if !of.is_empty() {
        let kinds: Vec<String> = of.iter().map(|k| format!("`{k}`")).collect();
        let only = if of.len() == 1 { Some(of[0]) } else { None };
        return (format!("the platform's {dispatch} comes as {}", kinds.join(", ")), only);
    }
    match did_you_mean(name, vocab::EVENTS.iter().map(|e| e.kind)) {
        Some(k) => (format!("did you mean `{k}`?"), Some(k)),
        None => (
            format!(
                "the event kinds are {} (docs/language.md, \"Event kinds\")",
                vocab::EVENTS.iter().map(|e| format!("`{}`", e.kind)).collect::<Vec<_>>().join(", ")
            ),
            None,
        ),
    }
}

fn platform_url(p: &crate::language::ast::Platform, out: &mut Findings) {
    match crate::language::policy::Platform::parse(&p.url.value) {
        None => out.push(
            Diagnostic::new(Code::InvalidUrl, format!("platform `{}` is not an absolute http(s) URL", p.url.value))
                .label(p.url.span, "not an http(s) URL")
                .help(format!(
                    "write the platform's API base URL, like `platform \"{}\"`",
                    crate::discord::options::DEFAULT_PLATFORM
                )),
        ),
        Some(parsed) if parsed.is_unversioned_discord() => out.push(
            Diagnostic::new(
                Code::UnversionedPlatform,
                format!("platform `{}` calls the platform's API without a version", p.url.value),
            )
            .label(p.url.span, "no `/v10` in the path")
            .help(format!(
                "an unversioned call reaches the platform's old default version: write `platform \"{}\"`",
                crate::discord::options::DEFAULT_PLATFORM
            )),
        ),
        Some(_) => {}
    }
}

/// Options belong at the top level of a command, once each.
struct Options<'o, 'a> {
    kind: TreeKind,
    /// How many branches deep the walk is (0: the tree's own nodes).
    depth: usize,
    seen: HashMap<&'a str, Span>,
    out: &'o mut Findings,
}

impl<'a> Visitor<'a> for Options<'_, 'a> {
    fn block(&mut self, _: &'a ApiBlock) {}
    fn reply(&mut self, _: &'a Reply) {}
    fn save(&mut self, _: &'a Save) {}
    fn condition(&mut self, _: &'a Condition) {}

    fn branch(&mut self, nodes: &'a [Node]) {
        self.depth += 1;
        visit::walk_nodes(self, nodes);
        self.depth -= 1;
    }

    fn option(&mut self, opt: &'a OptionDecl) {
        let name = opt.name.name.as_str();
        if self.kind == TreeKind::Event {
            self.out.push(
                Diagnostic::new(Code::MisplacedOption, format!("option `{name}` in an event"))
                    .label(opt.span, "events have no options")
                    .help("options are what a user types after a command; an event's data comes from its trigger variables"),
            );
        } else if self.kind == TreeKind::Handler {
            self.out.push(
                Diagnostic::new(Code::MisplacedOption, format!("option `{name}` in a handler"))
                    .label(opt.span, "handlers have no options")
                    .help("a handler is given what was clicked or chosen (`{value}`, `{values}`) and a form's inputs (`{field_<input>}`); ask for more with a `form`"),
            );
        } else if self.kind == TreeKind::Autocomplete {
            self.out.push(
                Diagnostic::new(Code::MisplacedOption, format!("option `{name}` in an autocomplete"))
                    .label(opt.span, "an autocomplete has no options of its own")
                    .help("it reads its command's options as typed so far: declare the option in the command"),
            );
        } else if self.depth > 0 {
            self.out.push(
                Diagnostic::new(Code::MisplacedOption, format!("option `{name}` inside a branch"))
                    .label(opt.span, "declared inside a branch")
                    .help("declare options at the top of the command, before its other nodes"),
            );
        } else if let Some(first) = self.seen.insert(name, opt.name.span) {
            self.out.push(
                Diagnostic::new(Code::DuplicateDeclaration, format!("option `{name}` is declared twice"))
                    .label(opt.name.span, "declared again here")
                    .related(first, "first declared here")
                    .help("remove one of the declarations"),
            );
        }
    }
}

fn check_options(kind: TreeKind, nodes: &[Node], out: &mut Findings) {
    visit::walk_nodes(&mut Options { kind, depth: 0, seen: HashMap::default(), out }, nodes);
}

/// What a custom variable may not be called: a trigger variable of any
/// command or event, an option's variable, the token, or a root of a path.
pub(super) fn shadowed(name: &str) -> Option<&'static str> {
    if vocab::COMMAND_VARIABLES.contains(&name)
        || vocab::WORLD_VARIABLES.contains(&name)
        || vocab::HANDLER_VARIABLES.contains(&name)
        || vocab::AUTOCOMPLETE_VARIABLES.contains(&name)
        || vocab::MENU_VARIABLES.iter().any(|(_, vars)| vars.contains(&name))
        || crate::discord::events::is_variable(name)
    {
        return Some("a trigger variable");
    }
    match name {
        "bot_token" => Some("the bot token"),
        "response" | "status" => Some("a word of response paths"),
        _ if name.starts_with("option_") => Some("an option's variable"),
        _ if name.starts_with("field_") => Some("a form input's variable"),
        _ if name.starts_with("api_") => Some("a response reference"),
        _ => None,
    }
}

/// A custom variable named like a variable blkc provides would be read
/// instead of it, or never: refused.
pub(super) fn check_shadowing(name: &crate::language::ast::Ident, keyword: &str, out: &mut Findings) {
    let Some(what) = shadowed(&name.name) else { return };
    out.push(
        Diagnostic::new(Code::ShadowedVariable, format!("`{keyword} {}` takes the name of {what}", name.name))
            .label(name.span, format!("`{{{}}}` is already {what}", name.name))
            .help(format!(
                "choose another name, like `my_{}`",
                name.name.trim_start_matches("option_").trim_start_matches("api_")
            )),
    );
}
