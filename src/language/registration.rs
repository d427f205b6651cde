//! What a file asks of the platform, computed from its tree: the
//! registration payload of its commands (`blkc deploy`, `serve`, `play`)
//! and the Gateway intents its events need. The checks that the platform
//! would accept them are in `check/platform.rs` and `check/register.rs`.

use std::collections::BTreeMap;

use crate::base::diagnostics::{Code, Diagnostic};
use crate::base::source::Span;
use crate::discord::intents;
use crate::discord::options::OptionType;
use crate::discord::registration as reg;
use crate::language::ast::visit::{self, Site};
use crate::language::ast::{Choice, ChoiceValue, File, Ident, Locale, Node, OptionDecl, Register, Tree, TreeKind};

/// The Gateway intents the file's event trees need: each kind's own, and
/// MESSAGE_CONTENT only for a tree that reads a variable only it fills.
pub fn intents(file: &File) -> intents::Intents {
    let events = intents::needed(
        file.trees().filter(|t| t.kind == TreeKind::Event).map(|t| (t.name.name.as_str(), reads_content(t).is_some())),
    );
    if awaits(file) {
        events | intents::ANSWERS
    } else {
        events
    }
}

/// Whether a tree of the file waits for a member's message (`await`).
pub fn awaits(file: &File) -> bool {
    fn any(nodes: &[Node]) -> bool {
        nodes.iter().any(|n| match n {
            Node::Await(_) => true,
            Node::Later(l) => any(&l.body.body),
            other => other.branches().into_iter().any(any),
        })
    }
    file.trees().any(|t| any(&t.body))
}

/// The variable an event tree reads that the platform fills only with the
/// privileged MESSAGE_CONTENT intent, if any.
pub fn reads_content(tree: &Tree) -> Option<&'static str> {
    let kind = crate::discord::events::event(&tree.name.name)?;
    kind.content_vars().iter().copied().find(|v| reads(&tree.body, v))
}

/// The permissions the bot needs in a server for the file's actions
/// (`discord::actions`, given how each is written), each with the actions
/// that need it, in the platform's order of the permissions.
pub fn permissions(file: &File) -> Vec<(twilight_model::guild::Permissions, Vec<&'static str>)> {
    use crate::discord::actions::{self, Verb};
    use crate::language::ast::{ActionValue, ReplyItem};
    let mut needed: Vec<(twilight_model::guild::Permissions, Vec<&'static str>)> = Vec::new();
    for tree in file.trees().filter(|t| t.parts.actions) {
        visit::each_action(&tree.body, &mut |a| {
            let Ok(verb) = Verb::parse(&a.verb.name, a.kind.as_ref().map(|k| k.name.as_str())) else { return };
            let embeds = a.message.as_ref().is_some_and(|m| m.items.iter().any(|i| matches!(i, ReplyItem::Embed(_))));
            let own = matches!(&a.subject, Some(ActionValue::Name(_)));
            let mut p = actions::permissions(
                verb,
                a.arg("private").is_some(),
                a.arg("visible").is_some(),
                embeds,
                a.arg("reply_to").is_some(),
            );
            // A message the bot sent itself is deleted without Manage Messages.
            if own && verb == Verb::DeleteMessage {
                p.remove(twilight_model::guild::Permissions::MANAGE_MESSAGES);
            }
            for (_, bit) in p.iter_names() {
                match needed.iter_mut().find(|(b, _)| *b == bit) {
                    Some((_, by)) if !by.contains(&verb.spec().written) => by.push(verb.spec().written),
                    Some(_) => {}
                    None => needed.push((bit, vec![verb.spec().written])),
                }
            }
        });
    }
    needed.sort_by_key(|(bit, _)| bit.bits());
    needed
}

/// Whether `nodes` read the variable `name` anywhere.
pub fn reads(nodes: &[Node], name: &str) -> bool {
    !uses(nodes, name).is_empty()
}

/// Where `nodes` read variable `name`, in source order.
pub(crate) fn uses(nodes: &[Node], name: &str) -> Vec<Span> {
    struct Uses<'n> {
        name: &'n str,
        found: Vec<Span>,
    }
    impl<'a> visit::Visitor<'a> for Uses<'_> {
        fn named(&mut self, ident: &'a Ident, _site: Site) {
            if ident.name == self.name {
                self.found.push(ident.span);
            }
        }
    }
    let mut r = Uses { name, found: Vec::new() };
    visit::walk_nodes(&mut r, nodes);
    r.found
}

/// Commands, subcommands, groups and options without a description: the
/// platform registers none (`blkc deploy` refuses the file; `run` and
/// `serve` need none).
pub fn missing_descriptions(file: &File) -> Vec<Diagnostic> {
    fn level(tree: &Tree, what: &str, out: &mut Vec<Diagnostic>) {
        let word = tree.name.name.rsplit(' ').next().unwrap_or_default();
        if tree.description.is_none() {
            out.push(
                Diagnostic::new(Code::MissingDescription, format!("{what} `{}` has no description", tree.name.name))
                    .label(tree.name.span, "no description")
                    .help(format!("write one after the name: `{what} {word} \"What it does\" {{`")),
            );
        }
        for s in tree.subs().filter(|_| tree.has_subs()) {
            level(&s.tree, s.keyword(), out);
        }
        for o in tree.options().filter(|o| o.description.is_none()) {
            out.push(
                Diagnostic::new(
                    Code::MissingDescription,
                    format!("option `{}` of {what} `{}` has no description", o.name.name, tree.name.name),
                )
                .label(o.name.span, "no description")
                .help(format!("write one after the name: `option {} \"What to give\"`", o.name.name)),
            );
        }
    }
    let mut out = Vec::new();
    for tree in file.written().filter(|t| t.kind == TreeKind::Command && t.menu.is_none()) {
        level(tree, "command", &mut out);
    }
    out
}

/// The registration payload of every command of `file` (`blkc deploy`),
/// or the diagnostics of what the platform would not register: the rules
/// above are errors already; a missing description (B409) is found here.
pub fn registration(file: &File) -> Result<Vec<reg::Command>, Vec<Diagnostic>> {
    let missing = missing_descriptions(file);
    if !missing.is_empty() {
        return Err(missing);
    }
    let commands = file.written().filter(|t| t.kind == TreeKind::Command).map(|tree| {
        let extra = extra(tree);
        match tree.menu_target().and_then(|t| reg::MENUS.iter().find(|(w, ..)| *w == t)) {
            Some((_, kind, _)) => reg::menu(*kind, &tree.name.name, extra),
            None => reg::slash(&tree.name.name, &text(&tree.description), level_payload(tree), extra),
        }
    });
    Ok(commands.collect())
}

pub(crate) fn text(d: &Option<crate::language::ast::Text>) -> String {
    d.as_ref().map_or(String::new(), |d| d.value.to_string())
}

/// A command's or a subcommand's options, or a command's or a group's
/// subcommands and groups (each with its own, and its locales).
pub(crate) fn level_payload(tree: &Tree) -> Vec<reg::CommandOption> {
    use twilight_model::application::command::CommandOptionType;
    if tree.has_subs() {
        let sub = |s: &crate::language::ast::Sub| reg::CommandOption {
            kind: if s.group { CommandOptionType::SubCommandGroup } else { CommandOptionType::SubCommand },
            name: s.word.name.to_string(),
            description: text(&s.tree.description),
            required: None,
            choices: None,
            autocomplete: None,
            options: Some(level_payload(&s.tree)).filter(|o| !o.is_empty()),
            bounds: reg::Bounds::default(),
            channel_types: None,
            file_types: None,
            locales: extra(&s.tree).locales,
        };
        return tree.subs().map(sub).collect();
    }
    tree.options()
        .map(|o| {
            let kind = o.option_type();
            let (channel_types, locales) = option_extra(tree, o);
            reg::CommandOption {
                kind: reg::option_type(kind),
                name: o.name.name.to_string(),
                description: text(&o.description),
                required: Some(o.required.is_some()),
                choices: o.choices.as_ref().map(|choices| {
                    let choice = |c: &Choice| reg::Choice {
                        name: c.name.name.to_string(),
                        value: choice_value(kind, &c.value),
                        name_localizations: choice_names(tree, &c.name.name),
                    };
                    choices.entries.iter().map(choice).collect()
                }),
                autocomplete: o.autocomplete.as_ref().map(|_| true),
                options: None,
                bounds: reg::Bounds::of(kind, o.bounds.iter().map(|b| (b.max, b.value.as_str()))),
                channel_types,
                file_types: o
                    .file_types
                    .as_ref()
                    .and_then(|(_, t)| crate::discord::outgoing::file_types(&t.value).ok()),
                locales,
            }
        })
        .collect()
}

/// A choice's value as the platform wants it: text for a string option, a
/// JSON number (exactly as written) for the others.
pub(crate) fn choice_value(kind: OptionType, value: &ChoiceValue) -> reg::ChoiceValue {
    match (kind, value) {
        (OptionType::String, v) => reg::ChoiceValue::Text(v.as_str().to_string()),
        (_, ChoiceValue::Number(n, _)) => {
            reg::ChoiceValue::number(n).unwrap_or_else(|| reg::ChoiceValue::Text(n.to_string()))
        }
        (_, ChoiceValue::Text(t)) => reg::ChoiceValue::Text(t.value.to_string()),
    }
}

pub(crate) fn registers(tree: &Tree) -> impl Iterator<Item = &Register> {
    tree.body.iter().filter_map(|n| match n {
        Node::Register(r) => Some(&**r),
        _ => None,
    })
}

pub(crate) fn options(tree: &Tree) -> impl Iterator<Item = &OptionDecl> {
    tree.body.iter().filter_map(|n| match n {
        Node::Option(o) => Some(&**o),
        _ => None,
    })
}

pub(crate) fn locales(tree: &Tree) -> impl Iterator<Item = &Locale> {
    registers(tree).filter_map(|r| match r {
        Register::Locale(l) => Some(l),
        _ => None,
    })
}

pub(crate) fn find<T: Copy>(table: &[(&str, T, &str)], word: &str) -> Option<T> {
    table.iter().find(|(w, ..)| *w == word).map(|(_, t, _)| *t)
}

/// The command's registration besides its options (a checked tree: an
/// unknown word is an error already, and is left out here).
pub fn extra(tree: &Tree) -> reg::Extra {
    let mut extra = reg::Extra::default();
    for r in registers(tree) {
        match r {
            Register::Permissions(w) => {
                let bits = w.words.iter().filter_map(|x| reg::permission(&x.name));
                extra
                    .default_member_permissions
                    .get_or_insert(twilight_model::guild::Permissions::empty())
                    .extend(bits);
            }
            Register::Contexts(w) => {
                extra.contexts = Some(w.words.iter().filter_map(|x| find(reg::CONTEXTS, &x.name)).collect());
            }
            Register::Installs(w) => {
                extra.integration_types = Some(w.words.iter().filter_map(|x| find(reg::INSTALLS, &x.name)).collect());
            }
            Register::Nsfw(_) => extra.nsfw = Some(true),
            Register::Locale(_) => {}
        }
    }
    extra.locales = localizations(locales(tree).map(|l| (l, Some(&l.name), l.description.as_ref())));
    extra
}

/// A choice's name in each of the tree's `locale`s that gives one.
fn choice_names(tree: &Tree, written: &str) -> Option<BTreeMap<String, String>> {
    let names: BTreeMap<String, String> = locales(tree)
        .filter_map(|l| {
            let (_, name) = l.choices.iter().find(|(w, _)| w.value.as_str() == written)?;
            Some((l.locale.name.to_string(), name.value.to_string()))
        })
        .collect();
    (!names.is_empty()).then_some(names)
}

/// An option's kinds of channel and localizations.
pub fn option_extra(
    tree: &Tree,
    o: &OptionDecl,
) -> (Option<Vec<twilight_model::channel::ChannelType>>, reg::Localizations) {
    let channels = o.channels.as_ref().map(|w| {
        w.words
            .iter()
            .filter_map(|x| reg::CHANNEL_TYPES.iter().find(|(k, _)| *k == x.name.as_str()).map(|(_, t)| *t))
            .collect()
    });
    let each = locales(tree).filter_map(|l| {
        let lo = l.options.iter().find(|lo| lo.option.name == o.name.name)?;
        Some((l, Some(&lo.name), lo.description.as_ref()))
    });
    (channels, localizations(each))
}

pub(crate) fn localizations<'a>(
    each: impl Iterator<Item = (&'a Locale, Option<&'a crate::language::ast::Text>, Option<&'a crate::language::ast::Text>)>,
) -> reg::Localizations {
    let (mut names, mut descriptions) = (BTreeMap::new(), BTreeMap::new());
    for (l, name, description) in each {
        let code = l.locale.name.to_string();
        if let Some(n) = name {
            names.entry(code.clone()).or_insert_with(|| n.value.to_string());
        }
        if let Some(d) = description {
            descriptions.entry(code).or_insert_with(|| d.value.to_string());
        }
    }
    reg::Localizations {
        name_localizations: (!names.is_empty()).then_some(names),
        description_localizations: (!descriptions.is_empty()).then_some(descriptions),
    }
}
