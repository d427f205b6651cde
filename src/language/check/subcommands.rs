//! Where subcommands, groups, `autocomplete` and `choice` may stand (B431,
//! B432). The platform takes a command's subcommands, or groups of them
//! one level deep, in place of its options; the command itself then runs
//! nothing. An option's `autocomplete` is a tree that only offers choices.
//! The limits and names of each level are `platform`'s.

use crate::base::diagnostics::{Code, Diagnostic, Findings};
use crate::discord::options::OptionType;
use crate::language::ast::visit::each_in_branch;
use crate::language::ast::{ChoiceNode, File, Node, OptionDecl, Sub, Tree, TreeKind};

pub fn check(file: &File, out: &mut Findings) {
    for (tree, sub) in file.every_level() {
        level(tree, sub, out);
        each_in_branch(&tree.body, &mut |n| {
            if let Node::Sub(s) = n {
                let help = "a command's subcommands are registered with it: write them at the top of the command";
                out.push(misplaced(s, format!("`{}` inside an `if` or a `for`", s.keyword()), help));
            }
        });
        for o in tree.options() {
            autocomplete(o, out);
        }
    }
}

/// B432 for a `choice` anywhere but in an autocomplete tree (found by the
/// one walk of each tree, `components`'s).
pub(super) fn misplaced_choice(tree: &Tree, c: &ChoiceNode) -> Diagnostic {
    Diagnostic::new(Code::BadAutocomplete, format!("`choice` in {} `{}`", tree.kind.as_str(), tree.name.name))
        .label(c.span, "offered to no one")
        .help("a `choice` is what an option's `autocomplete { … }` offers; a select menu's choices are in its braces")
}

/// A tree's subcommands and groups: where they stand, and what stands
/// beside them.
fn level(tree: &Tree, held_by: Option<&Sub>, out: &mut Findings) {
    let subs: Vec<&Sub> = tree.subs().collect();
    let command = tree.kind == TreeKind::Command && tree.menu.is_none();
    let what = match held_by {
        None => format!("{} `{}`", tree.kind.as_str(), tree.name.name),
        Some(s) => format!("{} `{}`", s.keyword(), tree.name.name),
    };
    if let Some(s) = held_by.filter(|s| s.group && subs.is_empty()) {
        out.push(
            Diagnostic::new(Code::MisplacedSubcommand, format!("group `{}` has no subcommand", tree.name.name))
                .label(s.word.span, "an empty group")
                .help("a group holds subcommands: write `subcommand NAME \"…\" { … }` in it, or leave the group out"),
        );
    }
    if subs.is_empty() {
        return;
    }
    for (i, s) in subs.iter().enumerate() {
        if let Some(first) = subs[..i].iter().find(|f| f.word.name == s.word.name) {
            out.push(
                Diagnostic::new(Code::DuplicateTree, format!("{what} has two `{}`", s.word.name))
                    .label(s.word.span, "named again here")
                    .related(first.word.span, "first named here")
                    .help("the platform tells subcommands and groups apart by name: rename one, or merge the two"),
            );
        }
        let refusal = match (command, held_by) {
            (false, _) if tree.menu.is_some() => {
                Some(("a context-menu command has no subcommands", "make it a slash command, or leave them out"))
            }
            (false, _) => Some((
                "only a command has subcommands",
                "write the subcommand in a `command`; an event or a handler runs one tree",
            )),
            (true, Some(h)) if !h.group => Some((
                "a subcommand has no subcommands of its own",
                "make the outer one a `group`: the platform takes a command, its groups, and their subcommands",
            )),
            (true, Some(_)) if s.group => Some((
                "a group holds subcommands, not groups",
                "the platform takes one level of groups: write `subcommand` here",
            )),
            _ => None,
        };
        if let Some((label, help)) = refusal {
            out.push(misplaced(s, format!("`{}` in {what}", s.keyword()), help).label(s.keyword, label));
        }
    }
    if let (Some(c), true) = (&tree.cooldown, command) {
        out.push(
            Diagnostic::new(Code::MisplacedSubcommand, format!("a `cooldown` on {what}, which has subcommands"))
                .label(c.span, "it runs only its subcommands")
                .help("put the cooldown on each subcommand that needs one: `subcommand NAME \"…\" cooldown \"10s\" { … }`"),
        );
    }
    // (Beside subcommands refused, nothing more is said.)
    if command && held_by.is_none_or(|h| h.group) {
        beside(tree, &what, out);
    }
}

/// What stands beside subcommands: the registration lines, `require`
/// lines and locales; never an option, and nothing that runs.
fn beside(tree: &Tree, what: &str, out: &mut Findings) {
    let first = tree.subs().next().map(|s| s.word.span);
    for n in &tree.body {
        let (label, help) = match n {
            Node::Sub(_) | Node::Register(_) | Node::Guard(_) => continue,
            Node::Option(_) => (
                "an option beside subcommands",
                "the platform takes options or subcommands, not both: move the option into each subcommand that asks for it",
            ),
            _ => (
                "run by no one",
                "a command with subcommands runs only them: move this into the subcommand it belongs to",
            ),
        };
        let mut diag = Diagnostic::new(
            Code::MisplacedSubcommand,
            format!("{what} has subcommands, and {} beside them", article(n)),
        )
        .label(n.span(), label)
        .help(help);
        if let Some(first) = first {
            diag = diag.related(first, "its first subcommand");
        }
        out.push(diag);
    }
}

fn article(n: &Node) -> &'static str {
    match n {
        Node::Option(_) => "an option",
        Node::Api(_) => "an api block",
        Node::Reply(r) if r.keyword() == "update" => "an update",
        Node::Reply(_) => "a reply",
        Node::Form(_) => "a form",
        Node::Save(_) | Node::SaveField(_) => "a save",
        Node::With(_) => "a `with`",
        Node::Together(..) => "a `together`",
        Node::Later(l) if l.at => "an `at`",
        Node::Later(_) => "an `after`",
        Node::Cancel(_) => "a `cancel`",
        Node::Await(_) => "an `await`",
        Node::If(_) => "an `if`",
        Node::For(_) => "a `for`",
        Node::Text(..) => "a `text`",
        Node::Stop(_) => "a `stop`",
        Node::Failed(..) => "a `failed`",
        Node::Choice(_) => "a `choice`",
        Node::Action(_) => "an action",
        Node::Sub(_) | Node::Register(_) | Node::Guard(_) => "a line",
    }
}

fn misplaced(s: &Sub, message: String, help: &str) -> Diagnostic {
    Diagnostic::new(Code::MisplacedSubcommand, message).label(s.word.span, "this one").help(help.to_string())
}

/// An option's `autocomplete`: on a text or number option, a tree that
/// offers choices and does nothing else.
fn autocomplete(o: &OptionDecl, out: &mut Findings) {
    let Some(a) = &o.autocomplete else { return };
    if let Some(choices) = &o.choices {
        out.push(
            Diagnostic::new(
                Code::BadAutocomplete,
                format!("option `{}` has both `choices` and `autocomplete`", o.name.name),
            )
            .label(a.keyword, "offered as the user types")
            .related(choices.keyword, "a fixed list")
            .help("the platform takes one or the other: keep `choices` for a list that never changes, or offer them from the autocomplete with `choice` lines"),
        );
    }
    let kind = o.option_type();
    if !matches!(kind, OptionType::String | OptionType::Integer | OptionType::Number) {
        out.push(
            Diagnostic::new(
                Code::BadAutocomplete,
                format!("option `{}` is {}: it takes no `autocomplete`", o.name.name, kind.as_str()),
            )
            .label(a.keyword, "the platform completes only text and numbers")
            .help("a `user`, `channel`, `role` or `boolean` option is chosen from the platform's own list; leave `autocomplete` out"),
        );
    }
    let mut offers = false;
    let mut each = |n: &Node| {
        match n {
        Node::Choice(_) => offers = true,
        Node::Api(_) | Node::If(_) | Node::For(_) | Node::Stop(_) | Node::Text(..) => {}
        other => out.push(
            Diagnostic::new(
                Code::BadAutocomplete,
                format!("{} in the autocomplete of option `{}`", article(other), o.name.name),
            )
            .label(other.span(), "an autocomplete only offers choices")
            .help("it runs at each keystroke and answers with choices: it may read APIs, test and loop, never reply, show a form, save or register"),
        ),
    }
    };
    a.tree.body.iter().for_each(&mut each);
    each_in_branch(&a.tree.body, &mut each);
    if !offers {
        out.push(
            Diagnostic::new(
                Code::BadAutocomplete,
                format!("the autocomplete of option `{}` offers no choice", o.name.name),
            )
            .label(a.keyword, "nothing offered")
            .help("offer choices with `choice \"Shown\" \"value\"`, one a line or in a `for` over a response"),
        );
    }
}
