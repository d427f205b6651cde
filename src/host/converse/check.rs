//! What a test file names, checked against its bot before anything runs
//! (B501, B502): its commands and their options, events, timed events,
//! request blocks, variables and the members' words. What can be known
//! only as the conversation goes (a button's label, a form's field) is
//! the runner's to say (B503).

use crate::base::diagnostics::{did_you_mean, Code, Diagnostic};
use crate::language::model::Checked;
use crate::language::plan::{Plan, TreeKind};

use super::syntax::{Expect, StepKind, TestFile, Word};

/// The test file's problems with its bot.
pub fn check(file: &TestFile, checked: &Checked, plan: &Plan) -> Vec<Diagnostic> {
    let bot = Bot::of(checked, plan);
    let mut out = Vec::new();
    for (name, _) in &file.secrets {
        if !checked.source.text.contains(&format!("<{}>", name.text)) {
            out.push(
                Diagnostic::new(Code::UnknownInTest, format!("the bot has no secret `<{}>`", name.text))
                    .label(name.span, "no such secret slot")
                    .help("a `secret` line gives a value to a `<NAME>` slot the bot's file writes"),
            );
        }
    }
    for test in &file.tests {
        if let Some(twin) = file.tests.iter().find(|t| t.name == test.name && t.span != test.span) {
            if twin.span.start < test.span.start {
                out.push(
                    Diagnostic::new(Code::BadTestStep, format!("a second test named {:?}", test.name))
                        .label(test.named, "this test")
                        .related(twin.named, "the first")
                        .help("each test has its own name: a report, a filter and `--update` find a test by it"),
                );
            }
        }
        let mut acted = false;
        for step in &test.steps {
            bot.step(&step.kind, &mut out);
            match &step.kind {
                StepKind::Expect(_) if !acted => {
                    acted = true;
                    out.push(
                        Diagnostic::new(Code::BadTestStep, "an expectation before any step")
                            .label(step.span, "the bot has done nothing yet")
                            .help("an expectation is about what the bot did in the step before it: a command, a click, a choice, a form, an event or a tick"),
                    );
                }
                StepKind::As(_) | StepKind::Wait { .. } | StepKind::Respond { .. } | StepKind::Expect(_) => {}
                _ => acted = true,
            }
        }
    }
    out
}

/// The names a test may use, from the bot's plan and model.
struct Bot<'a> {
    plan: &'a Plan,
    commands: Vec<&'a str>,
    events: Vec<&'a str>,
    timers: Vec<&'a str>,
    blocks: Vec<&'a str>,
    variables: Vec<&'a str>,
    handlers: Vec<&'a str>,
    /// The actions the bot takes, as written (`give role`).
    actions: Vec<&'static str>,
    offered: Offered,
}

/// What the bot's replies and forms offer, as written: the labels of its
/// buttons, the labels and values of its select menus' choices, its forms'
/// fields; and whether some label is made at run time (a template with a
/// variable, a loop's choices), when a click's label cannot be known
/// before the conversation.
#[derive(Debug, Default)]
pub struct Offered {
    pub buttons: Vec<String>,
    pub buttons_made: bool,
    pub choices: Vec<String>,
    pub choices_made: bool,
    pub fields: Vec<String>,
}

impl Offered {
    /// What `plan`'s replies and forms offer.
    pub fn of(plan: &Plan) -> Offered {
        use crate::language::plan::{find_setting, fixed_text, ComponentKind, Step};
        fn walk(steps: &[Step], out: &mut Offered) {
            let none = std::collections::HashMap::new();
            for step in steps {
                match step {
                    Step::Reply { components, .. } => {
                        for c in components {
                            if c.kind == ComponentKind::Button {
                                let label = find_setting(&c.settings, "label").and_then(|s| s.text.as_ref());
                                match label.and_then(|t| fixed_text(t, &none)) {
                                    Some(label) => out.buttons.push(label),
                                    None => out.buttons_made |= label.is_some(),
                                }
                                continue;
                            }
                            for choice in &c.choices {
                                let texts = [fixed_text(&choice.label, &none), fixed_text(&choice.value, &none)];
                                out.choices_made |= choice.each.is_some() || texts.iter().any(Option::is_none);
                                out.choices.extend(texts.into_iter().flatten());
                            }
                        }
                    }
                    Step::Form(form) => out.fields.extend(form.inputs.iter().map(|i| i.name.clone())),
                    _ => {}
                }
                for nested in step.nested() {
                    walk(nested, out);
                }
            }
        }
        let mut out = Offered::default();
        for tree in &plan.trees {
            walk(&tree.steps, &mut out);
        }
        for list in [&mut out.buttons, &mut out.choices, &mut out.fields] {
            list.sort();
            list.dedup();
        }
        out
    }
}

impl<'a> Bot<'a> {
    fn of(checked: &'a Checked, plan: &'a Plan) -> Bot<'a> {
        let named = |kind: TreeKind, timed: bool| -> Vec<&'a str> {
            plan.trees
                .iter()
                .filter(|t| t.kind == kind && t.timer.is_some() == timed && t.menu.is_none())
                .map(|t| t.name.as_str())
                .collect()
        };
        let mut blocks: Vec<&str> = checked
            .model
            .trees
            .iter()
            .flat_map(|t| t.blocks.iter().filter(|b| !b.action).map(|b| b.name.as_str()))
            .collect();
        blocks.sort_unstable();
        blocks.dedup();
        Bot {
            plan,
            commands: named(TreeKind::Command, false),
            events: named(TreeKind::Event, false),
            timers: named(TreeKind::Event, true),
            blocks,
            variables: plan.variables.iter().map(|v| v.name.as_str()).collect(),
            handlers: named(TreeKind::Handler, false),
            actions: actions_of(plan),
            offered: Offered::of(plan),
        }
    }

    fn step(&self, step: &StepKind, out: &mut Vec<Diagnostic>) {
        use super::syntax::Click;
        match step {
            StepKind::As(member) => {
                let locales: Vec<&str> = crate::discord::registration::LOCALES.iter().map(|(code, _)| *code).collect();
                for (_, values) in member.fields.iter().filter(|(w, _)| w.text == "locale") {
                    for v in values {
                        let help = "a locale is one of the platform's: `en-US`, `fr`, `pt-BR`, `ja`…";
                        not_one(&locales, v, "a locale of the platform's", help, out);
                    }
                }
                let permissions = member.fields.iter().filter(|(w, _)| w.text == "permissions");
                for v in permissions.flat_map(|(_, values)| values).filter(|v| !is_number(&v.text)) {
                    if crate::discord::registration::permission(&v.text).is_none() {
                        let words = crate::discord::registration::permission_words();
                        let meant = did_you_mean(&v.text, words.iter().map(String::as_str));
                        out.push(unknown("permission", v, meant, "a permission is a word of the platform's (`manage_messages`, `kick_members`) or their bits as a number"));
                    }
                }
            }
            StepKind::Command { path, args } => self.command(path, args, out),
            StepKind::Menu { name, menu, args } => self.menu(name, menu, args, out),
            StepKind::Type { path, option, .. } => self.typing(path, option, out),
            StepKind::Click(Click::Handler(h)) => {
                known(&self.handlers, h, "handler", "a click names a handler of the bot's file", out);
            }
            StepKind::Click(Click::Label(label)) if !self.offered.buttons_made => {
                let buttons: Vec<&str> = self.offered.buttons.iter().map(String::as_str).collect();
                let help = "a click names a button by the label the bot's file gives it";
                not_one(&buttons, label, "the label of a button of the bot's", help, out);
            }
            StepKind::Choose(labels) if !self.offered.choices_made => {
                let choices: Vec<&str> = self.offered.choices.iter().map(String::as_str).collect();
                for label in labels {
                    let help = "a choice is named by its label or its value, as the bot's select menu gives it";
                    not_one(&choices, label, "a choice of a select menu of the bot's", help, out);
                }
            }
            StepKind::Submit(fields) => {
                let all: Vec<&str> = self.offered.fields.iter().map(String::as_str).collect();
                for (field, _) in fields {
                    let help = "a form's field is named by the id its `input` gives it";
                    not_one(&all, field, "a field of a form of the bot's", help, out);
                }
            }
            StepKind::Event { kind, args } => {
                let fields = crate::host::play::world::event_fields();
                for (key, _) in args.iter().filter(|(k, _)| !k.text.starts_with("header_")) {
                    let help = format!("an event is given {} (and a webhook's `header_NAME`)", fields.join(", "));
                    not_one(&fields, key, "a field of an event", &help, out);
                }
                let help = match self.timers.contains(&kind.text.as_str()) {
                    true => format!("`{}` is a timed event: `tick {}` runs it", kind.text, kind.text),
                    false => "an event step fires an event the bot's file has a tree for".to_string(),
                };
                known(&self.events, kind, "event", &help, out);
            }
            StepKind::Tick(name) => {
                let help = match self.events.contains(&name.text.as_str()) {
                    true => format!("`{}` is an event: `event {}` fires it", name.text, name.text),
                    false => "`tick` runs a timed event (`event NAME every …`) now".to_string(),
                };
                known(&self.timers, name, "timed event", &help, out);
            }
            StepKind::Respond { block, .. } | StepKind::Expect(Expect::Request { block, .. }) => {
                known(&self.blocks, block, "request block", "name an `api` block of the bot's file", out);
            }
            StepKind::Expect(Expect::Action { action, .. }) => {
                let help = "`expect action` names an action the bot's file takes, as written: `kick`, `give role`";
                known(&self.actions, action, "action", help, out);
            }
            StepKind::Expect(Expect::Saved { name, .. }) => {
                let help = "`expect saved` names a variable the file declares with `var`";
                known(&self.variables, name, "variable", help, out);
            }
            _ => {}
        }
    }

    /// A context-menu command the file has in `menu`, and what it was
    /// chosen on in the words a test gives it.
    fn menu(&self, name: &Word, menu: &str, args: &[(Word, serde_json::Value)], out: &mut Vec<Diagnostic>) {
        let found = self
            .plan
            .trees
            .iter()
            .any(|t| t.kind == TreeKind::Command && t.name == name.text && t.menu.as_deref() == Some(menu));
        if !found {
            let names: Vec<&str> =
                self.plan.trees.iter().filter(|t| t.menu.as_deref() == Some(menu)).map(|t| t.name.as_str()).collect();
            known(
                &names,
                name,
                &format!("{menu} command"),
                &format!("a `command \"…\" for {menu}` of the bot's file"),
                out,
            );
        }
        let fields = super::conversation::menu_fields(menu);
        for (key, _) in args {
            let help = format!("a {menu} is given by {}", fields.join(", "));
            not_one(fields, key, &format!("a field of the {menu} a command is chosen on"), &help, out);
        }
    }

    /// An option that completes: its command, and its `autocomplete`.
    fn typing(&self, path: &[Word], option: &Word, out: &mut Vec<Diagnostic>) {
        // (Its required options are not given yet while typing.)
        if self.command_tree(path, out).is_none() {
            return;
        }
        let name = path.iter().map(|w| w.text.as_str()).collect::<Vec<_>>().join(" ");
        let completing: Vec<&str> = self
            .plan
            .trees
            .iter()
            .filter_map(|t| {
                let rest = t.name.strip_prefix(name.as_str())?.strip_prefix(' ')?;
                (t.kind == TreeKind::Autocomplete).then_some(rest)
            })
            .collect();
        let help = format!("an option of `/{name}` with an `autocomplete {{ … }}` tree");
        not_one(&completing, option, &format!("an option of `/{name}` that completes as it is typed"), &help, out);
    }

    /// The command a test names by its whole name, or B501.
    fn command_tree(&self, path: &[Word], out: &mut Vec<Diagnostic>) -> Option<&'a crate::language::plan::Tree> {
        let first = path.first()?;
        let name = path.iter().map(|w| w.text.as_str()).collect::<Vec<_>>().join(" ");
        let span = first.span.to(path[path.len() - 1].span);
        let found = self
            .plan
            .trees
            .iter()
            .find(|t| t.kind == TreeKind::Command && t.name == name && t.menu.is_none() && t.timer.is_none());
        if found.is_none() {
            let meant = did_you_mean(&name, self.commands.iter().copied());
            let help = match self.commands.iter().find(|c| c.starts_with(&format!("{} ", first.text))) {
                Some(sub) => format!("the command has subcommands: write one after its name, as `command {sub}`"),
                None => "a test runs a slash command of the bot's file by its whole name".to_string(),
            };
            out.push(unknown("command", &Word { text: name, span }, meant, &help));
        }
        found
    }

    fn command(&self, path: &[Word], args: &[(Word, serde_json::Value)], out: &mut Vec<Diagnostic>) {
        let Some(tree) = self.command_tree(path, out) else { return };
        let span = path[0].span.to(path[path.len() - 1].span);
        for (key, _) in args {
            if !tree.options.iter().any(|o| o.name == key.text) {
                let meant = did_you_mean(&key.text, tree.options.iter().map(|o| o.name.as_str()));
                out.push(unknown("option", key, meant, &format!("`/{}` has no such option", tree.name)));
            }
        }
        for option in tree.options.iter().filter(|o| o.required) {
            if !args.iter().any(|(k, _)| k.text == option.name) {
                out.push(
                    Diagnostic::new(
                        Code::UnknownInTest,
                        format!("`/{}` needs its option `{}`", tree.name, option.name),
                    )
                    .label(span, "the command")
                    .help(format!(
                        "the platform's client does not send it without: give it, as `command {} {{ {} = … }}`",
                        tree.name, option.name
                    )),
                );
            }
        }
    }
}

/// The actions `plan` takes, as written, each once.
fn actions_of(plan: &Plan) -> Vec<&'static str> {
    fn walk(steps: &[crate::language::plan::Step], out: &mut Vec<&'static str>) {
        for step in steps {
            if let crate::language::plan::Step::Action(a) = step {
                out.push(a.verb.spec().written);
            }
            step.nested().into_iter().for_each(|s| walk(s, out));
        }
    }
    let mut out = Vec::new();
    for tree in &plan.trees {
        walk(&tree.steps, &mut out);
    }
    out.sort_unstable();
    out.dedup();
    out
}

fn is_number(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

/// B501 unless `word` is one of `names`.
fn known(names: &[&str], word: &Word, what: &str, help: &str, out: &mut Vec<Diagnostic>) {
    if !names.contains(&word.text.as_str()) {
        let meant = did_you_mean(&word.text, names.iter().copied());
        out.push(unknown(what, word, meant, help));
    }
}

/// B501 unless `word` is one of `names`: it is not `what` (with its article).
fn not_one(names: &[&str], word: &Word, what: &str, help: &str, out: &mut Vec<Diagnostic>) {
    if !names.contains(&word.text.as_str()) {
        let meant = did_you_mean(&word.text, names.iter().copied());
        let diag = Diagnostic::new(Code::UnknownInTest, format!("`{}` is not {what}", word.text))
            .label(word.span, "not known here");
        out.push(meant_for(diag, word, meant, help));
    }
}

/// B501: the bot has no `what` called `word`.
fn unknown(what: &str, word: &Word, meant: Option<&str>, otherwise: &str) -> Diagnostic {
    let diag = Diagnostic::new(Code::UnknownInTest, format!("the bot has no {what} `{}`", word.text))
        .label(word.span, format!("no such {what}"));
    meant_for(diag, word, meant, otherwise)
}

/// The did-you-mean of `word`, with the edit that writes it as the word is
/// written: a string (its span longer than its text: the quotes) quoted.
fn meant_for(diag: Diagnostic, word: &Word, meant: Option<&str>, otherwise: &str) -> Diagnostic {
    match meant {
        Some(m) if word.span.len() > word.text.len() => {
            let quoted = serde_json::Value::String(m.to_string()).to_string();
            diag.help(format!("did you mean {quoted}?")).fix(format!("write {quoted}"), word.span, quoted)
        }
        _ => diag.meant(word.span, meant, otherwise),
    }
}
