//! Rules on buttons, select menus, forms, `update` and handlers (B417–B425):
//! every setting is one the part takes, written in its form and within
//! the platform's limits; a message holds at most five rows; every
//! component and form names a handler the file has (and every handler is
//! named); a form is shown only where the platform takes one; `update`
//! only where there is a message to edit. As for replies, only the text
//! written in the file is held here; what a `{…}` fills in is kept to the
//! limits at run time (`message::component`).

use std::collections::HashMap;

use crate::base::diagnostics::{did_you_mean, Code, Diagnostic, Findings};
use crate::base::source::Span;
use crate::discord::limits;
use crate::language::ast::{
    Component, ComponentKind, File, Form, Ident, MenuChoice, Node, Reply, ReplyItem, Setting, SettingValue, Template,
    Tree, TreeKind,
};
use crate::language::vocab::{self, SettingForm, SettingSpec};

pub fn check(file: &File, out: &mut Findings) {
    let handlers: HashMap<&str, &Tree> =
        file.trees().filter(|t| t.kind == TreeKind::Handler).map(|t| (t.name.name.as_str(), t)).collect();
    let mut named: HashMap<&str, Span> = HashMap::new();
    let form_handlers =
        if handlers.is_empty() { Default::default() } else { crate::language::model::form_fields(file) };
    // One walk of each tree does it all (a tree of a million nodes is
    // walked once here).
    for tree in file.trees() {
        if let Some(c) = &tree.cooldown {
            let within = format!("{} `{}`", tree.kind.as_str(), tree.name.name);
            settings(std::slice::from_ref(c), vocab::TREE_SETTINGS, &within, out);
        }
        let shown_by_form = tree.kind == TreeKind::Handler && form_handlers.contains_key(tree.name.name.as_str());
        let mut walk =
            Placement { tree, shown_by_form, handlers: &handlers, named: &mut named, loops: 0, out: &mut *out };
        walk.walk(&tree.body, State::default());
    }
    let mut unnamed: Vec<&&Tree> = handlers.values().filter(|t| !named.contains_key(t.name.name.as_str())).collect();
    unnamed.sort_by_key(|t| t.span.start);
    for tree in unnamed {
        out.push(
            Diagnostic::new(
                Code::UnusedHandler,
                format!("no button, select menu or form runs handler `{}`", tree.name.name),
            )
            .label(tree.name.span, "never run")
            .help(format!(
                "name it in a component (`button {0} {{ label \"…\" }}`) or a form (`form {0} {{ … }}`), or remove it",
                tree.name.name
            )),
        );
    }
}

/// B421 for a handler the file does not have.
fn handler_exists(name: &Ident, handlers: &HashMap<&str, &Tree>, out: &mut Findings) {
    if handlers.contains_key(name.name.as_str()) {
        return;
    }
    let suggestion = did_you_mean(&name.name, handlers.keys().copied());
    let help = match suggestion {
        Some(s) => format!("did you mean `{s}`?"),
        None => format!("add `handler {} {{ … }}` to the file: it runs when this is used", name.name),
    };
    out.push(
        Diagnostic::new(Code::UnknownHandler, format!("there is no handler `{}`", name.name))
            .label(name.span, "not a handler of this file")
            .help(help)
            .maybe_fixes(suggestion.map(|s| (format!("write `{s}`"), name.span, s.to_string()))),
    );
}

/// A reply's or an update's components: each one's settings, the rows
/// they make, and their ids.
fn reply(r: &Reply, tree: &Tree, out: &mut Findings) {
    if r.update {
        update(r, tree, out);
    }
    let kinds: Vec<bool> = r.components().map(|c| c.kind == ComponentKind::Button).collect();
    let rows = crate::discord::limits::rows(&kinds);
    for (place, c) in r.components().enumerate() {
        match c.kind {
            ComponentKind::Button => button(c, out),
            ComponentKind::Select => select(c, out),
        }
        // (A layout message's components count toward its 40: `layout`.)
        if !r.is_layout() && rows[place] == limits::ROWS && (place == 0 || rows[place - 1] < limits::ROWS) {
            let span = c.span;
            out.push(
                Diagnostic::new(Code::TooManyComponents, "a message holds at most 5 rows of components")
                    .label(span, "this one needs a 6th row")
                    .help("buttons fill rows of 5 in order, and a select menu takes a row of its own; send the rest in another reply"),
            );
        }
        custom_id(c, out);
    }
}

/// `update` edits the message a component is on: only a handler has one,
/// and an edit cannot change who sees the message.
fn update(r: &Reply, tree: &Tree, out: &mut Findings) {
    if tree.kind != TreeKind::Handler {
        out.push(
            Diagnostic::new(Code::MisplacedUpdate, format!("`update` in {} `{}`", tree.kind.as_str(), tree.name.name))
                .label(r.span, "there is no message to update here")
                .help("`update` edits the message whose button or menu ran a handler; here, send a new message with `reply`"),
        );
    }
    for item in &r.items {
        if let ReplyItem::Ephemeral(span) = item {
            out.push(
                Diagnostic::new(Code::MisplacedUpdate, "an `update` cannot be ephemeral")
                    .label(*span, "an edit keeps who sees the message")
                    .help("remove `ephemeral`; to answer only the user, `reply { ephemeral … }` instead"),
            );
        }
    }
}

fn button(c: &Component, out: &mut Findings) {
    settings(&c.settings, vocab::BUTTON_SETTINGS, "a button", out);
    if let Some(sku) = crate::language::ast::setting(&c.settings, "sku") {
        return premium(c, sku, out);
    }
    let url = crate::language::ast::setting(&c.settings, "url");
    let styles = one_of(&c.settings, vocab::BUTTON_STYLES, ("a button has one style", "style"), out);
    match (&c.handler, url) {
        (None, None) => out.push(
            Diagnostic::new(Code::LinkOrHandler, "this button runs no handler and opens no link")
                .label(c.keyword, "nothing happens when it is clicked")
                .help("name the handler it runs, `button vote { … }`, or give it a `url \"https://…\"`"),
        ),
        (Some(h), Some(url)) => out.push(
            Diagnostic::new(Code::LinkOrHandler, "a link button runs no handler")
                .label(url.span, "this makes it a link")
                .related(h.span, "so this handler would never run")
                .help("remove the `url` to run the handler, or the handler's name to open the link"),
        ),
        (None, Some(url)) => {
            let gate = |s: &Setting| matches!(s.key.name.as_str(), "max_clicks" | vocab::COOLDOWN | vocab::EXPIRES);
            let extra =
                c.settings.iter().find(|s| s.key.name == "value" || gate(s) || styles.iter().any(|t| t.span == s.span));
            if let Some(extra) = extra {
                out.push(
                    Diagnostic::new(Code::LinkOrHandler, format!("a link button takes no `{}`", extra.key.name))
                        .label(extra.span, "not sent with a link")
                        .related(url.span, "a link, by this")
                        .help("a link button is always grey, carries no value, and its click opens the link without reaching the bot; remove it"),
                );
            }
        }
        (Some(_), None) => {}
    }
    let all_known = c.settings.iter().all(|s| vocab::BUTTON_SETTINGS.iter().any(|spec| spec.name == s.key.name));
    let shown = ["label", "emoji"].iter().any(|k| crate::language::ast::setting(&c.settings, k).is_some());
    // (A misspelt `label` is said once, as the setting it is not.)
    if !shown && all_known {
        out.push(
            Diagnostic::new(Code::BadSetting, "this button shows nothing")
                .label(c.keyword, "no `label` and no `emoji`")
                .help("give it a `label \"…\"`"),
        );
    }
}

/// A premium button (`sku`): it buys the SKU, and is nothing else; the
/// platform draws it (no handler, label, emoji, link, value or style).
fn premium(c: &Component, sku: &Setting, out: &mut Findings) {
    if let Some(h) = &c.handler {
        out.push(
            Diagnostic::new(Code::LinkOrHandler, "a premium button runs no handler")
                .label(h.span, "this handler would never run")
                .related(sku.span, "a premium button, by this")
                .help("the platform answers a premium button's click with its store; remove the handler"),
        );
    }
    if let Some(extra) = c.settings.iter().find(|s| !matches!(s.key.name.as_str(), "sku" | "disabled")) {
        out.push(
            Diagnostic::new(Code::LinkOrHandler, format!("a premium button takes no `{}`", extra.key.name))
                .label(extra.span, "not sent with a premium button")
                .related(sku.span, "a premium button, by this")
                .help("the platform draws a premium button from its SKU: its name, price and icon; remove it"),
        );
    }
    if let Some(SettingValue::Text(t)) = &sku.value {
        if let Some(text) = t.as_literal().filter(|id| !crate::discord::is_snowflake(id.trim())) {
            let shown = crate::base::display::one_line(&text);
            out.push(
                Diagnostic::new(Code::BadSetting, "`sku` takes the id of one of the app's SKUs")
                    .label(t.span, format!("`{shown}` is no id"))
                    .help("the developer portal lists the app's SKUs under Monetization, each with its id"),
            );
        }
    }
}

/// The settings of `settings` that are among `words` (a button's styles, a
/// menu's kinds), and B418 when there are two: a part takes one of them.
fn one_of<'s>(
    settings: &'s [Setting],
    words: &[&str],
    (message, what): (&str, &str),
    out: &mut Findings,
) -> Vec<&'s Setting> {
    let found: Vec<&Setting> = settings.iter().filter(|s| words.contains(&s.key.name.as_str())).collect();
    if let [first, second, ..] = found.as_slice() {
        let listed: Vec<String> = words.iter().map(|w| format!("`{w}`")).collect();
        let (last, rest) = listed.split_last().expect("a list of words");
        out.push(
            Diagnostic::new(Code::BadSetting, message.to_string())
                .label(second.span, format!("a second {what}"))
                .related(first.span, "the first")
                .help(format!("keep one of {} and {last}", rest.join(", "))),
        );
    }
    found
}

fn select(c: &Component, out: &mut Findings) {
    settings(&c.settings, vocab::SELECT_SETTINGS, "a select menu", out);
    let what = ("a select menu chooses among one kind of thing", "kind");
    let kinds = one_of(&c.settings, vocab::SELECT_KINDS, what, out);
    let number = |key: &str| match crate::language::ast::setting(&c.settings, key).and_then(|s| s.value.as_ref()) {
        Some(SettingValue::Number(n, span)) => n.parse::<usize>().ok().map(|n| (n, *span)),
        _ => None,
    };
    let (min, max) = (number("min"), number("max"));
    if let (Some((least, span)), None) = (min, max) {
        if least > 1 && kinds.is_empty() {
            out.push(
                Diagnostic::new(
                    Code::BadSetting,
                    format!("`min {least}` with no `max`: the platform's `max` is then 1"),
                )
                .label(span, "more than can be chosen")
                .help(format!("write `max {least}` (or more) beside it")),
            );
        }
    }
    if let (Some((least, _)), Some((most, span))) = (min, max) {
        if least > most {
            out.push(
                Diagnostic::new(Code::BadSetting, format!("`min {least}` is more than `max {most}`"))
                    .label(span, "fewer than the least")
                    .help("a user must be able to choose: make `max` at least `min`"),
            );
        }
    }
    menu_extras(c, kinds.first().map(|k| k.key.name.as_str()), out);
    if let Some(kind) = kinds.first() {
        if let Some(choice) = c.choices.first() {
            out.push(
                Diagnostic::new(Code::BadSetting, format!("a select menu of `{}` takes no choices", kind.key.name))
                    .label(choice.span, "a choice written in the file")
                    .related(kind.span, "the platform lists these itself")
                    .help(format!("remove the choices, or `{}` to choose among them", kind.key.name)),
            );
        }
        return;
    }
    choices(c, min, max, out);
}

/// A menu's `defaults` and `types`: only where its kind takes them, each
/// written one it lists (B418).
fn menu_extras(c: &Component, kind: Option<&str>, out: &mut Findings) {
    let wrong = |s: &Setting, message: String, help: &str| {
        Diagnostic::new(Code::BadSetting, message).label(s.span, "not this menu's").help(help.to_string())
    };
    if let Some(s) = crate::language::ast::setting(&c.settings, "defaults") {
        match (kind, &s.value) {
            (None, _) => out.push(wrong(
                s,
                "a menu of choices takes no `defaults`".into(),
                "mark a choice `default` instead: `choice \"Red\" \"red\" { default }`",
            )),
            (Some(of), Some(SettingValue::Text(t))) => {
                let text = t.as_literal().unwrap_or_default();
                let bad = text
                    .split([' ', ','])
                    .filter(|w| !w.is_empty())
                    .find(|w| crate::discord::outgoing::default_value(w, of).is_none());
                if let (Some(bad), false) = (bad, t.as_literal().is_none()) {
                    let message = format!("`{bad}` is not one of what a menu of `{of}` lists");
                    out.push(wrong(s, message, "write ids, or mentions of its kind: `<@id>`, `<@&id>`, `<#id>`"));
                }
            }
            _ => {}
        }
    }
    if let Some(s) = crate::language::ast::setting(&c.settings, "types") {
        if kind != Some("channels") {
            out.push(wrong(s, "only a menu of channels takes `types`".into(), "add `channels`, or remove `types`"));
        } else if let Some(SettingValue::Text(t)) = &s.value {
            let text = t.as_literal().unwrap_or_default();
            let known = |w: &&str| crate::discord::registration::CHANNEL_TYPES.iter().any(|(k, _)| k == w);
            if let Some(bad) = text.split([' ', ',']).filter(|w| !w.is_empty()).find(|w| !known(w)) {
                let words: Vec<&str> = crate::discord::registration::CHANNEL_TYPES.iter().map(|(k, _)| *k).collect();
                let help = format!("the kinds are {}", words.join(", "));
                out.push(wrong(s, format!("`{bad}` is not a kind of channel"), &help));
            }
        }
    }
}

/// A menu's written choices: some, at most 25, each value once, and no
/// `max` above their count.
fn choices(c: &Component, min: Option<(usize, Span)>, max: Option<(usize, Span)>, out: &mut Findings) {
    if c.choices.is_empty() {
        out.push(
            Diagnostic::new(Code::TooManyComponents, "this select menu has no choices")
                .label(c.keyword, "nothing to choose")
                .help("add `choice \"Label\" \"value\"` lines, or make it a menu of `users`, `roles` or `channels`"),
        );
    }
    if let Some(extra) = c.choices.get(limits::MENU_CHOICES) {
        out.push(
            Diagnostic::new(Code::TooManyComponents, "a select menu has at most 25 choices")
                .label(extra.span, "the 26th")
                .help("split the choices over two menus"),
        );
    }
    // (A `for` of choices has as many as its list, known at run time.)
    let written = !c.choices.is_empty() && c.choices.iter().all(|c| c.each.is_none());
    // `min` or `max` above the choices written: the platform refuses it.
    let n = c.choices.len();
    for (word, bound, help) in [("min", min, ", or add choices"), ("max", max, "")] {
        if let Some((count, span)) = bound.filter(|(count, _)| written && *count > n) {
            out.push(
                Diagnostic::new(Code::BadSetting, format!("`{word} {count}` is more than this menu's {n} choices"))
                    .label(span, "more than can be chosen")
                    .help(format!("make it `{word} {n}` at most{help}")),
            );
        }
    }
    let mut values: HashMap<String, Span> = HashMap::new();
    for choice in &c.choices {
        menu_choice(choice, out);
        let Some(value) = choice.value.as_literal() else { continue };
        if let Some(l) = &choice.each {
            out.push(
                Diagnostic::new(
                    Code::BadSetting,
                    format!("every choice of the loop over `{}` has the value `{value}`", l.item.name),
                )
                .label(choice.value.span, "the same for every element")
                .help(format!(
                    "read the value from the element, like `\"{{{}[id]}}\"`: the handler tells the choices apart by it",
                    l.item.name
                )),
            );
            continue;
        }
        if let Some(first) = values.insert(value.clone(), choice.value.span) {
            out.push(
                Diagnostic::new(Code::BadSetting, format!("two choices have the value `{value}`"))
                    .label(choice.value.span, "again here")
                    .related(first, "first here")
                    .help("every choice of a menu needs its own value: the handler tells them apart by it"),
            );
        }
    }
}

fn menu_choice(choice: &MenuChoice, out: &mut Findings) {
    length(&choice.label, limits::CHOICE_TEXT, "a choice's label", out);
    length(&choice.value, limits::CHOICE_TEXT, "a choice's value", out);
    settings(&choice.settings, vocab::CHOICE_SETTINGS, "a choice", out);
}

/// B425 when the id of a component cannot fit the platform's 100
/// characters, with only what is written (a `{…}` is measured at run time).
fn custom_id(c: &Component, out: &mut Findings) {
    let Some(handler) = &c.handler else { return };
    let value = match crate::language::ast::setting(&c.settings, "value").and_then(|s| s.value.as_ref()) {
        Some(SettingValue::Text(t)) => Some(t),
        _ => None,
    };
    let written = value.map_or(0, written);
    let key = "0".repeat(crate::discord::custom_id::COMPONENT_KEY);
    let n = crate::discord::custom_id::custom_id(&handler.name, &key, "").chars().count() + written;
    if n > limits::CUSTOM_ID {
        out.push(
            Diagnostic::new(
                Code::CustomIdTooLong,
                format!("this component's id would be {n} characters; the platform takes 100"),
            )
            .label(value.map_or(handler.span, |v| v.span), format!("{n} characters with the handler's name"))
            .help(
                "the id carries the handler's name and the `value`: shorten either, and keep longer state in a `var`",
            ),
        );
    }
}

fn form(f: &Form, out: &mut Findings) {
    settings(&f.settings, vocab::FORM_SETTINGS, "a form", out);
    if crate::language::ast::setting(&f.settings, "title").is_none() {
        out.push(
            Diagnostic::new(Code::BadSetting, "this form has no title")
                .label(f.handler.span, "the platform needs one")
                .help("give it a `title \"…\"` (at most 45 characters)"),
        );
    }
    if f.inputs.is_empty() {
        out.push(
            Diagnostic::new(Code::TooManyComponents, "this form has no inputs")
                .label(f.span, "nothing to fill in")
                .help("add `input name { label \"…\" }`: the handler reads it as `{field_name}`"),
        );
    }
    let mut parts: Vec<Span> = f.inputs.iter().map(|i| i.span).chain(f.texts.iter().map(ReplyItem::span)).collect();
    parts.sort_by_key(|s| s.start);
    if let Some(extra) = parts.get(limits::INPUTS) {
        out.push(
            Diagnostic::new(Code::TooManyComponents, "a form has at most 5 inputs and texts")
                .label(*extra, "the 6th")
                .help("ask for the rest in a second form, from the handler's answer"),
        );
    }
    for t in &f.texts {
        match t {
            ReplyItem::Text { value, .. } => {
                let help = "a form's text takes at most 4,000 characters";
                super::text::length_with(value, limits::LAYOUT_TEXT, "a form's text", help, out);
            }
            other => out.push(
                Diagnostic::new(Code::BadLayout, "a form's texts have no translations")
                    .label(other.span(), "this translation")
                    .help("a form shows its texts as written: write the text once, with `{…}` for what changes"),
            ),
        }
    }
    let mut names: HashMap<&str, Span> = HashMap::new();
    for input in &f.inputs {
        if let Some(first) = names.insert(input.name.name.as_str(), input.name.span) {
            out.push(
                Diagnostic::new(Code::DuplicateDeclaration, format!("input `{}` is declared twice", input.name.name))
                    .label(input.name.span, "declared again here")
                    .related(first, "first declared here")
                    .help("give each input its own name: the handler reads each as `{field_<name>}`"),
            );
        }
        settings(&input.settings, vocab::INPUT_SETTINGS, "an input", out);
        input_kind(input, out);
        if crate::language::ast::setting(&input.settings, "label").is_none() {
            out.push(
                Diagnostic::new(Code::BadSetting, format!("input `{}` has no label", input.name.name))
                    .label(input.name.span, "the platform needs one")
                    .help("give it a `label \"…\"` (at most 45 characters)"),
            );
        }
    }
}

/// A form's input as its kind takes it: one kind, the settings of that
/// kind, `min` and `max` within what it counts, choices where it has them
/// (B417, B418, B419).
fn input_kind(input: &crate::language::ast::Input, out: &mut Findings) {
    let words: Vec<&str> = vocab::InputKind::WORDS.iter().map(|(w, _)| *w).collect();
    one_of(&input.settings, &words, ("an input is of one kind", "kind"), out);
    let kind = input.kind();
    for s in input.settings.iter().filter(|s| !kind.takes(&s.key.name)) {
        // (A word no input takes is B417 of `settings` already, and a
        // second kind's word is `one_of`'s.)
        let second_kind = words.contains(&s.key.name.as_str());
        if !second_kind && vocab::INPUT_SETTINGS.iter().any(|spec| spec.name == s.key.name.as_str()) {
            out.push(
                Diagnostic::new(Code::UnknownSetting, format!("{} takes no `{}`", kind.describe(), s.key.name))
                    .label(s.key.span, "not one of its settings")
                    .help(kind_help(kind)),
            );
        }
    }
    let (most, choices) = kind.most();
    for key in ["min", "max"].into_iter().filter(|_| kind.takes("max")) {
        let Some(s) = crate::language::ast::setting(&input.settings, key) else { continue };
        let Some(SettingValue::Number(n, span)) = &s.value else { continue };
        if n.parse::<u32>().is_ok_and(|n| n > most) {
            out.push(
                Diagnostic::new(Code::BadSetting, format!("`{key}` of {} is at most {most}", kind.describe()))
                    .label(*span, "more than it takes")
                    .help(kind_help(kind)),
            );
        }
    }
    upload_types(input, out);
    let written = input.choices.iter().filter(|c| c.each.is_none()).count();
    let looped = input.choices.iter().any(|c| c.each.is_some());
    if choices == 0 {
        if let Some(c) = input.choices.first() {
            out.push(
                Diagnostic::new(Code::BadSetting, format!("{} takes no choices", kind.describe()))
                    .label(c.span, "a choice")
                    .help("remove the choices, or its kind word: an input with choices is a menu of them"),
            );
        }
    } else if written > choices {
        out.push(
            Diagnostic::new(Code::TooManyComponents, format!("{} shows at most {choices} choices", kind.describe()))
                .label(input.choices[choices].span, format!("choice {}", choices + 1))
                .help("offer fewer, or a menu (25 choices)"),
        );
    } else if !looped && written < kind.fewest_choices() {
        out.push(
            Diagnostic::new(
                Code::TooManyComponents,
                format!("{} needs at least {} choices", kind.describe(), kind.fewest_choices()),
            )
            .label(input.name.span, format!("{written} here"))
            .help("add `choice \"Label\" \"value\"` lines"),
        );
    }
}

/// An upload's written `types`: each a group or an extension, at most 10.
fn upload_types(input: &crate::language::ast::Input, out: &mut Findings) {
    let Some(s) = crate::language::ast::setting(&input.settings, "types") else { return };
    let Some(SettingValue::Text(t)) = &s.value else { return };
    let Some(text) = t.as_literal() else { return };
    let Err(problem) = crate::discord::outgoing::file_types(&text) else { return };
    out.push(
        Diagnostic::new(Code::BadSetting, problem)
            .label(t.span, "these types")
            .help("write `image`, `video`, `audio` or extensions with their dot, `\"image .pdf\"`"),
    );
}

/// What an input of `kind` takes, for a help line.
fn kind_help(kind: vocab::InputKind) -> String {
    let takes: Vec<String> = vocab::INPUT_SETTINGS
        .iter()
        .filter(|s| kind.takes(s.name) && !vocab::InputKind::WORDS.iter().any(|(w, _)| *w == s.name))
        .map(|s| format!("`{}`", s.name))
        .collect();
    let (most, _) = kind.most();
    let counts = if kind.takes("max") { format!("; its `min` and `max` count up to {most}") } else { String::new() };
    format!("{} takes {}{counts}", kind.describe(), takes.join(", "))
}

/// Each setting is one the part takes, written once, in its form.
pub(super) fn settings(list: &[Setting], specs: &[SettingSpec], within: &str, out: &mut Findings) {
    let mut seen: HashMap<&str, Span> = HashMap::new();
    for s in list {
        let name = s.key.name.as_str();
        let Some(spec) = specs.iter().find(|spec| spec.name == name) else {
            let suggestion = did_you_mean(name, specs.iter().map(|spec| spec.name));
            let names = specs.iter().map(|spec| format!("`{}`", spec.name)).collect::<Vec<_>>().join(", ");
            out.push(
                Diagnostic::new(Code::UnknownSetting, format!("`{name}` is not a setting of {within}"))
                    .label(s.key.span, "not one it takes")
                    .help(match suggestion {
                        Some(k) => format!("did you mean `{k}`?"),
                        None => format!("{within} takes {names}"),
                    })
                    .maybe_fixes(suggestion.map(|k| (format!("write `{k}`"), s.key.span, k.to_string()))),
            );
            continue;
        };
        if let Some(first) = seen.insert(name, s.span) {
            out.push(
                Diagnostic::new(Code::ReplyPartTwice, format!("`{name}` is written twice in {within}"))
                    .label(s.span, "written again here")
                    .related(first, "first here")
                    .help("keep one of them"),
            );
        }
        value_form(s, spec, out);
    }
}

/// B418 for a value of the wrong form, B410 for written text too long.
fn value_form(s: &Setting, spec: &SettingSpec, out: &mut Findings) {
    let name = spec.name;
    let wrong = |want: &str, span: Span| {
        Diagnostic::new(Code::BadSetting, format!("`{name}` takes {want}"))
            .label(span, "not that")
            .help(format!("{name}: {}", spec.about))
    };
    match (spec.form, &s.value) {
        (SettingForm::Flag, None) => {}
        (SettingForm::Flag, Some(v)) => out.push(wrong("no value: the word alone says it", v.span())),
        (SettingForm::Text(max), Some(SettingValue::Text(t))) => length(t, max, &format!("`{name}`"), out),
        (SettingForm::Url(max), Some(SettingValue::Text(t))) => {
            if let Some(text) = t.as_literal().filter(|u| !vocab::is_web_url(u.trim())) {
                let shown = crate::base::display::one_line(&text);
                out.push(wrong("an http or https URL", t.span).label(t.span, format!("`{shown}` is not one")));
            }
            length(t, max, &format!("`{name}`"), out);
        }
        (SettingForm::Emoji, Some(SettingValue::Text(t))) => {
            let Some(text) = t.as_literal() else { return };
            if let Err(problem) = crate::discord::emoji::judge(&text) {
                let help = match &problem {
                    crate::discord::emoji::Problem::Shortcode(e) => format!("did you mean `emoji \"{e}\"`?"),
                    _ => format!("{name}: {}", spec.about),
                };
                out.push(
                    Diagnostic::new(Code::BadSetting, format!("`{name}` takes an emoji the platform accepts"))
                        .label(t.span, problem.describe(&text))
                        .help(help),
                );
            }
        }
        (SettingForm::Color, Some(SettingValue::Text(t))) => {
            if let Some(text) = t.as_literal().filter(|c| vocab::parse_color(c).is_none()) {
                let shown = crate::base::display::one_line(&text);
                out.push(
                    Diagnostic::new(
                        Code::BadSetting,
                        format!("`{name}` takes a colour: `#RRGGBB`, or its number up to 16777215"),
                    )
                    .label(t.span, format!("`{shown}` is not one"))
                    .help("write the colour in hex, as `#3366FF`; blkc does not guess colours from names"),
                );
            }
        }
        (SettingForm::Hours(most), Some(SettingValue::Text(t))) => {
            if let Some(Err(why)) = t.as_literal().map(|text| vocab::parse_hours(&text, most)) {
                out.push(wrong("whole hours: `\"1h\"` to `\"32d\"`", t.span).help(why));
            }
        }
        (SettingForm::Hours(_), _) => {
            out.push(wrong("a string of whole hours: `\"1d\"`", s.value.as_ref().map_or(s.span, SettingValue::span)))
        }
        (SettingForm::Text(_) | SettingForm::Url(_) | SettingForm::Emoji | SettingForm::Color, _) => {
            out.push(wrong("a string: `NAME \"…\"`", s.value.as_ref().map_or(s.span, SettingValue::span)))
        }
        (SettingForm::Number(least, most), Some(SettingValue::Number(n, span))) => {
            if !n.parse::<u32>().is_ok_and(|n| (least..=most).contains(&n)) {
                out.push(wrong(&format!("a whole number from {least} to {most}"), *span));
            }
        }
        (SettingForm::Number(least, most), _) => out.push(wrong(
            &format!("a whole number from {least} to {most}"),
            s.value.as_ref().map_or(s.span, SettingValue::span),
        )),
        (SettingForm::Duration, value) => duration(s, value.as_ref(), &wrong, out),
        (SettingForm::Lasting(most), Some(value)) => lasting(value, most, &wrong, out),
        (SettingForm::Lasting(_), None) => out.push(wrong("a length of time: `expires \"10m\"`", s.span)),
    }
    if let (Some(scope), false) = (&s.scope, spec.form == SettingForm::Duration) {
        out.push(wrong("no `per`: only a cooldown is kept per user, server or channel", scope.span));
    }
}

/// A length of time a component lasts (`expires`): written out, from a
/// second to `most` seconds.
fn lasting(value: &SettingValue, most: u64, wrong: &dyn Fn(&str, Span) -> Diagnostic, out: &mut Findings) {
    let lasting = match value {
        SettingValue::Number(n, _) => Some(n.parse::<u64>().map_err(|e| e.to_string())),
        SettingValue::Text(t) => t.as_literal().map(|text| vocab::parse_duration(&text)),
    };
    let span = value.span();
    match lasting {
        None => out.push(wrong("a length of time written out (a click is held to it before anything runs)", span)),
        Some(Ok(n)) if n > most => out.push(wrong(&format!("at most {} days", most / 86_400), span)),
        Some(Ok(0) | Err(_)) => out.push(wrong("a length of time: `\"10m\"`, `\"2h\"`, `\"1d\"`", span)),
        Some(Ok(_)) => {}
    }
}

/// A cooldown's length (written, not a template: it is known before any
/// run) and the scope its `per` names.
fn duration(s: &Setting, value: Option<&SettingValue>, wrong: &dyn Fn(&str, Span) -> Diagnostic, out: &mut Findings) {
    let written = match value {
        Some(SettingValue::Number(n, span)) => Some((n.to_string(), *span)),
        Some(SettingValue::Text(t)) => t.as_literal().map(|text| (text.to_string(), t.span)),
        None => None,
    };
    match written {
        Some((text, span)) => {
            if let Err(want) = vocab::parse_duration(&text) {
                out.push(wrong(&want, span));
            }
        }
        None => out.push(wrong(
            "a length of time written out: a number of seconds, or a string like \"5m\" with no `{…}`",
            value.map_or(s.span, SettingValue::span),
        )),
    }
    if let Some(scope) = &s.scope {
        if vocab::VarScope::parse(&scope.name).is_none() {
            out.push(
                wrong("`per user`, `per server` or `per channel`", scope.span).maybe_fixes(
                    did_you_mean(&scope.name, ["user", "server", "channel"])
                        .map(|w| (format!("write `{w}`"), scope.span, w.to_string())),
                ),
            );
        }
    }
}

/// UTF-16 units of a template's written text (its `{…}` not counted).
fn written(t: &Template) -> usize {
    super::text::written(t)
}

fn length(t: &Template, max: usize, what: &str, out: &mut Findings) {
    super::text::length_with(t, max, what, "shorten it: the platform refuses longer text", out);
}

/// What has happened on a path through a tree, for where a form may go.
#[derive(Debug, Clone, Copy, Default)]
struct State {
    /// A reply, an update or a form has answered.
    answered: bool,
    /// A request has been sent (its wait may pass the 3 seconds a form
    /// must come within).
    requested: bool,
    /// A form was shown (nothing may answer after it).
    form: Option<Span>,
}

impl State {
    fn join(self, other: State) -> State {
        State {
            answered: self.answered || other.answered,
            requested: self.requested || other.requested,
            form: self.form.or(other.form),
        }
    }
}

/// B423: a form is the first and only answer of its run, shown within the
/// platform's 3 seconds: never in an event, never after a reply or a
/// request, never as the answer to a form.
struct Placement<'t, 'o> {
    tree: &'t Tree,
    shown_by_form: bool,
    handlers: &'o HashMap<&'t str, &'t Tree>,
    /// Every handler a component or form names, where first.
    named: &'o mut HashMap<&'t str, Span>,
    /// How many loops enclose the node being walked.
    loops: usize,
    out: &'o mut Findings,
}

impl<'t> Placement<'t, '_> {
    /// A handler named here: it must exist, and it is run.
    fn names(&mut self, handler: &'t Ident) {
        self.named.entry(handler.name.as_str()).or_insert(handler.span);
        handler_exists(handler, self.handlers, self.out);
    }

    fn walk(&mut self, nodes: &'t [Node], mut state: State) -> State {
        for node in nodes {
            match node {
                Node::Api(_) => state.requested = true,
                Node::Reply(r) => {
                    reply(r, self.tree, self.out);
                    r.components().filter_map(|c| c.handler.as_ref()).for_each(|h| self.names(h));
                    if let Some(form) = state.form {
                        self.out.push(
                            Diagnostic::new(
                                Code::MisplacedForm,
                                format!("nothing can answer after a form: this `{}`", r.keyword()),
                            )
                            .label(r.span, "after the form")
                            .related(form, "the form answers the interaction")
                            .help("the form's handler answers, when the user sends the form: reply there"),
                        );
                    }
                    state.answered = true;
                }
                Node::Form(f) => {
                    self.names(&f.handler);
                    form(f, self.out);
                    self.form(f, state);
                    state.answered = true;
                    state.form = Some(f.span);
                }
                Node::If(i) => {
                    let mut after: Option<State> = None;
                    for branch in i.links.iter().map(|l| &l.then.body).chain(i.otherwise.iter().map(|b| &b.body)) {
                        let s = self.walk(branch, state);
                        after = Some(after.map_or(s, |a| a.join(s)));
                    }
                    state = state.join(after.unwrap_or(state));
                }
                // Their bodies run once, where they stand.
                Node::With(w) => state = self.walk(&w.body.body, state),
                Node::Together(b, _) => state = self.walk(&b.body, state),
                // Run later, in a run of its own: it answers no one here.
                Node::Later(l) => _ = self.walk(&l.body.body, state),
                Node::Await(a) => a.bodies().for_each(|b| _ = self.walk(&b.body, state)),
                Node::For(f) => {
                    // Its body runs any number of times, maybe none.
                    self.loops += 1;
                    let after = self.walk(&f.body.body, state);
                    self.loops -= 1;
                    state = state.join(after);
                }
                Node::Action(a) => {
                    state.requested = true;
                    if let Some(m) = &a.message {
                        reply(m, self.tree, self.out);
                        for c in m.components() {
                            if let Some(h) = &c.handler {
                                self.names(h);
                            }
                        }
                    }
                }
                Node::Choice(c) if self.tree.kind != TreeKind::Autocomplete => {
                    self.out.push(super::subcommands::misplaced_choice(self.tree, c));
                }
                Node::Save(_)
                | Node::SaveField(_)
                | Node::Sub(_)
                | Node::Choice(_)
                | Node::Option(_)
                | Node::Register(_)
                | Node::Guard(_)
                | Node::Text(..)
                | Node::Stop(_)
                | Node::Cancel(_)
                | Node::Failed(..) => {}
            }
        }
        state
    }

    fn form(&mut self, f: &Form, state: State) {
        let why = if self.loops > 0 {
            Some((
                "a form inside a loop would be shown once per element, and only the first can answer",
                "show the form outside the loop",
            ))
        } else if self.tree.kind == TreeKind::Event {
            Some(("an event has no one to show a form to", "show it from a command or a button's handler"))
        } else if self.shown_by_form {
            Some((
                "the platform does not answer a form with a form",
                "ask for more with a button in the reply, whose handler shows the next form",
            ))
        } else if state.answered {
            Some(("a form must be the first answer", "show the form before any `reply`, or from a button"))
        } else if state.requested {
            Some((
                "a form must come within the platform's 3 seconds, and a request before it may take longer",
                "show the form first, and send the request in the form's handler",
            ))
        } else {
            None
        };
        if let Some((label, help)) = why {
            self.out.push(
                Diagnostic::new(
                    Code::MisplacedForm,
                    format!("a form cannot be shown here, in {} `{}`", self.tree.kind.as_str(), self.tree.name.name),
                )
                .label(f.span, label)
                .help(help),
            );
        }
    }
}
