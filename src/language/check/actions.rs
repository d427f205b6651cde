//! Rules on actions (docs/language.md, "Actions"): each written with the
//! words `discord::actions` gives its verb (B159), every value written
//! whole an id, a mention, a name or an earlier action of what it acts on
//! (B160) and within the platform's limits (B159), and none in a command
//! that can run where the bot is in no server (B161).

use crate::base::diagnostics::{did_you_mean, Code, Diagnostic, Findings};
use crate::discord::actions::{self, Message, Slot, Spec, Verb};
use crate::language::ast::visit::{self, Visitor};
use crate::language::ast::{Action, ActionValue, File, Node, Register, ReplyItem, Tree, TreeKind};

pub fn check(file: &File, out: &mut Findings) {
    for tree in file.trees().filter(|t| t.parts.actions) {
        let mut earlier: Vec<(&str, Verb)> = Vec::new();
        let mut blocks = Vec::new();
        visit::each_block(&tree.body, &mut |b| blocks.push(b.name.name.as_str()));
        let here = crate::language::model::trigger_variables(tree).contains(&"channel_id");
        visit::each_action(&tree.body, &mut |a| {
            action(a, Context { tree, here, earlier: &earlier, blocks: &blocks }, out);
            if let (Some(name), Ok(verb)) = (a.name(), verb_of(a)) {
                earlier.push((name.name.as_str(), verb));
            }
        });
    }
    for tree in file.written().filter(|t| matches!(t.kind, TreeKind::Command | TreeKind::Event) && t.parts.actions) {
        without_server(tree, out);
    }
}

#[derive(Clone, Copy)]
struct Context<'a> {
    tree: &'a Tree,
    /// The tree's runs have a channel of their own (`in` may be left out).
    here: bool,
    /// The actions with `as NAME` before this one, with their verbs.
    earlier: &'a [(&'a str, Verb)],
    blocks: &'a [&'a str],
}

fn verb_of(a: &Action) -> Result<Verb, &'static [&'static str]> {
    Verb::parse(&a.verb.name, a.kind.as_ref().map(|k| k.name.as_str()))
}

fn bad(message: String, span: crate::base::source::Span, label: &str, help: String) -> Diagnostic {
    Diagnostic::new(Code::BadAction, message).label(span, label.to_string()).help(help)
}

fn action(a: &Action, cx: Context<'_>, out: &mut Findings) {
    let spec = match verb_of(a) {
        Ok(verb) => verb.spec(),
        Err(kinds) => {
            let (span, label) = match &a.kind {
                Some(k) => (k.span, "not a kind this verb takes"),
                None => (a.verb.span, "of what?"),
            };
            let list = kinds.iter().map(|k| format!("`{} {k}`", a.verb.name)).collect::<Vec<_>>().join(" or ");
            let help = if list.is_empty() {
                format!(
                    "`{}` acts on no kind of thing: leave `{}` out",
                    a.verb.name,
                    a.kind.as_ref().map_or("", |k| k.name.as_str())
                )
            } else {
                format!("write {list}")
            };
            out.push(bad(format!("`{}` needs to say what it acts on", a.verb.name), span, label, help));
            return;
        }
    };
    subject(a, spec, cx, out);
    words(a, spec, cx, out);
    message(a, spec, out);
    channel_known(a, spec, cx, out);
    if let Some(name) = a.name() {
        let taken = cx.blocks.contains(&name.name.as_str()) || cx.earlier.iter().any(|(n, _)| *n == name.name.as_str());
        if taken {
            out.push(bad(
                format!("`{}` is already the name of a block or an action of this tree", name.name),
                name.span,
                "named twice",
                "give each block and action of a tree its own name: `api_NAME[…]` reads one".to_string(),
            ));
        }
    }
}

/// What the action acts on: given when it takes one, judged when written whole.
fn subject(a: &Action, spec: &Spec, cx: Context<'_>, out: &mut Findings) {
    match (&a.subject, spec.subject) {
        (None, Some((_, what))) => out.push(bad(
            format!("`{}` needs {what}", spec.written),
            a.verb.span,
            "acts on nothing",
            format!("write it after `{}`: {}", spec.written, example(spec)),
        )),
        (Some(v), None) => out.push(bad(
            format!("`{}` takes no value before its words", spec.written),
            v.span(),
            "not taken",
            format!("write it after one of its words: {}", example(spec)),
        )),
        (Some(v), Some((slot, what))) => value(v, slot, what, spec, cx, out),
        (None, None) => {}
    }
}

/// How the action is written, for a help line.
fn example(spec: &Spec) -> &'static str {
    match spec.verb {
        Verb::Send => "`send to \"#mod-log\" \"…\"`",
        Verb::Dm => "`dm \"{user_id}\" \"…\"`",
        Verb::React => "`react \"👍\" to \"{message_id}\"`",
        Verb::GiveRole => "`give role \"@Members\" to \"{user_id}\"`",
        Verb::TakeRole => "`take role \"@Members\" from \"{user_id}\"`",
        Verb::Timeout => "`timeout \"{option_member}\" for \"10m\"` (or `off`)",
        Verb::Kick => "`kick \"{option_member}\" reason \"…\"`",
        Verb::Ban => "`ban \"{option_member}\" delete_messages \"1d\" reason \"…\"`",
        Verb::Unban => "`unban \"{option_user}\"`",
        Verb::Nickname => "`nickname \"{option_member}\" to \"…\"`",
        Verb::CreateThread => "`create thread name \"…\" from \"{message_id}\"`",
        Verb::CreateChannel => "`create channel name \"ticket-{user_name}\" private visible \"{user_id}\"`",
        Verb::DeleteMessage => "`delete message \"{message_id}\" after \"10s\"`",
        Verb::DeleteChannel => "`delete channel \"{channel_id}\"`",
        Verb::Pin => "`pin \"{message_id}\"`",
        Verb::Unpin => "`unpin \"{message_id}\"`",
        Verb::Purge => "`purge 20 in \"{channel_id}\"`",
        Verb::Edit => "`edit log { text \"…\" }`",
        Verb::EndPoll => "`end poll \"{poll_message}\" as ended`",
    }
}

/// Its words: each one it takes, once, with as many values as it takes;
/// the ones it needs all there.
fn words(a: &Action, spec: &Spec, cx: Context<'_>, out: &mut Findings) {
    let mut seen: Vec<&str> = Vec::new();
    for arg in &a.args {
        let word = arg.word.name.as_str();
        let Some(w) = spec.word(word) else {
            let known = spec.words.iter().map(|w| w.word);
            let help = match did_you_mean(word, known.clone()) {
                Some(s) => format!("did you mean `{s}`?"),
                None if spec.words.is_empty() => format!("`{}` takes no words", spec.written),
                None => format!(
                    "`{}` takes {}",
                    spec.written,
                    known.map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
                ),
            };
            out.push(bad(format!("`{}` takes no `{word}`", spec.written), arg.word.span, "not one of its words", help));
            continue;
        };
        if seen.contains(&word) {
            out.push(bad(format!("`{word}` is written twice"), arg.word.span, "again", "write it once".to_string()));
        }
        seen.push(word);
        let (flag, name) = (w.slot == Slot::Flag, w.slot == Slot::Name);
        let count = arg.values.len();
        if flag && count > 0 || !flag && count == 0 || count > 1 && !w.list && !name {
            let help = match (flag, w.list) {
                (true, _) => format!("`{word}` is a word alone: `{} … {word}`", spec.written),
                (false, true) => format!("`{word}` takes one value or more, separated by commas"),
                (false, false) => format!("`{word}` takes one value"),
            };
            out.push(bad(format!("`{word}` has {count} values"), arg.span, "here", help));
            continue;
        }
        if !name {
            for v in &arg.values {
                value(v, w.slot, noun(word, w.slot), spec, cx, out);
            }
        }
    }
    for w in spec.words.iter().filter(|w| w.required && !seen.contains(&w.word)) {
        out.push(bad(
            format!("`{}` needs `{}`", spec.written, w.word),
            a.verb.span,
            "missing a word",
            format!("for example {}", example(spec)),
        ));
    }
    if spec.verb == Verb::Timeout && seen.contains(&"for") == seen.contains(&"off") {
        // `timeout "5s"` outside a block: meant as the block's time-out.
        let written = a.subject.as_ref().and_then(ActionValue::template).and_then(|t| t.as_literal());
        let block_s = written.is_some_and(|w| crate::language::vocab::parse_duration(&w).is_ok()) && a.args.is_empty();
        let help = match block_s {
            true => "a request's time-out is a line inside its `api` block (`timeout \"5s\"`); here, `timeout` times a member out: `timeout \"{option_member}\" for \"10m\"`",
            false => "`timeout \"{option_member}\" for \"10m\"` times a member out; `timeout \"…\" off` lifts it",
        };
        out.push(bad(
            "`timeout` needs either `for` a duration or `off`".to_string(),
            a.verb.span,
            "how long?",
            help.to_string(),
        ));
    }
}

/// What a word's value is called in a message: `the channel`, `the
/// timeout`.
fn noun(word: &str, slot: Slot) -> &'static str {
    match (word, slot) {
        (_, Slot::Member) => "the member",
        (_, Slot::Role) => "the role",
        ("category", Slot::Channel) => "the category",
        (_, Slot::Channel) => "the channel",
        (_, Slot::Message) => "the message",
        (_, Slot::Who) => "who may see it",
        ("for", _) => "a timeout",
        ("delete_messages", _) => "deleting a banned user's messages",
        ("after", _) => "a wait before deleting",
        ("to", _) => "the nickname",
        ("name", _) => "the name",
        ("topic", _) => "the topic",
        ("reason", _) => "the reason",
        ("tags", _) => "a tag",
        _ => "the value",
    }
}

/// A value of slot `slot`: judged when written whole (a template with a
/// variable is judged when filled, at run time: B334).
fn value(v: &ActionValue, slot: Slot, what: &str, spec: &Spec, cx: Context<'_>, out: &mut Findings) {
    let text = match v {
        ActionValue::Name(n) => {
            let sends = cx.earlier.iter().find(|(e, _)| *e == n.name.as_str()).map(|(_, verb)| verb.spec().message);
            let fine = slot == Slot::Message && matches!(sends, Some(Message::Required));
            if !fine {
                let help = match slot {
                    Slot::Message => {
                        "name an earlier `send`, `dm` or `edit` of this tree by its `as NAME`, or give the message's id"
                    }
                    _ => "a name stands only for a message an earlier action sent; give an id, a mention or a name in quotes",
                };
                let d = Diagnostic::new(
                    Code::ActionTarget,
                    format!("`{}`: no earlier action `{}` sent a message", spec.written, n.name),
                )
                .label(n.span, "not an action's message")
                .help(help.to_string());
                out.push(d);
            }
            return;
        }
        ActionValue::Number(n, span) => (n.to_string(), *span),
        ActionValue::Text(t) => match t.as_literal() {
            Some(text) => (text, t.span),
            None => {
                text_length(t, slot, what, spec, out);
                return;
            }
        },
    };
    literal(&text.0, text.1, slot, what, spec, out);
}

/// A template's written text past a text slot's limit.
fn text_length(t: &crate::language::ast::Template, slot: Slot, what: &str, spec: &Spec, out: &mut Findings) {
    if let Slot::Text { max, .. } = slot {
        let written: usize = t
            .parts
            .iter()
            .map(|p| match p {
                crate::language::ast::Part::Lit(s, _) => s.chars().count(),
                _ => 0,
            })
            .sum();
        if written > max {
            out.push(bad(
                format!("`{}`: {what} is longer than {max} characters", spec.written),
                t.span,
                "too long",
                format!("the platform takes at most {max}; shorten it"),
            ));
        }
    }
}

fn literal(text: &str, span: crate::base::source::Span, slot: Slot, what: &str, spec: &Spec, out: &mut Findings) {
    let written = spec.written;
    let limit = |message: String, help: String| bad(message, span, "past the platform's limit", help);
    match slot {
        Slot::Member | Slot::Role | Slot::Channel | Slot::Message | Slot::Who => {
            if let Err(expected) = actions::target(slot, text) {
                let shown = crate::base::display::one_line(text);
                let sigil = match slot {
                    Slot::Channel if !text.starts_with('#') && !text.is_empty() => Some(format!("#{text}")),
                    Slot::Role if !text.starts_with('@') && !text.is_empty() => Some(format!("@{text}")),
                    _ => None,
                };
                let mut d =
                    Diagnostic::new(Code::ActionTarget, format!("`{written}`: {what} `{shown}` is not {expected}"))
                        .label(span, "not an id, a mention or a name")
                        .help(match &sigil {
                            Some(s) => format!("a name is written with its sign: `\"{s}\"`"),
                            None => format!("give {expected}, or a variable that holds one"),
                        });
                if let Some(s) = sigil {
                    d = d.maybe_fixes(Some((format!("write `\"{s}\"`"), span, format!("\"{s}\""))));
                }
                out.push(d);
            }
        }
        Slot::Emoji => {
            if let Err(problem) = crate::discord::emoji::judge(text.trim()) {
                out.push(
                    Diagnostic::new(Code::ActionTarget, format!("`{written}`: {}", problem.describe(text)))
                        .label(span, "not an emoji the platform takes")
                        .help("write the emoji itself (`👍`), or a server's as `<:name:id>`"),
                );
            }
        }
        Slot::Duration { max_secs } => match crate::language::vocab::action_duration(text) {
            Ok(s) if s <= max_secs => {}
            Ok(_) => out.push(limit(
                format!("`{written}`: `{text}` is longer than the platform allows for {what}"),
                format!("at most {}", crate::language::vocab::describe_wait(max_secs * 1000)),
            )),
            Err(why) => out.push(bad(
                format!("`{written}`: `{text}` is not a duration ({what})"),
                span,
                "not a duration",
                format!("{why}; write one like `\"10m\"`, `\"1h30m\"` or `\"7d\"`"),
            )),
        },
        Slot::Count { max } => match text.trim().parse::<u64>() {
            Ok(n) if (1..=max).contains(&n) => {}
            _ => out.push(limit(
                format!("`{written}`: `{text}` is not a number of messages from 1 to {max}"),
                format!("give a whole number from 1 to {max}"),
            )),
        },
        Slot::Text { min, max } => {
            let n = text.chars().count();
            if n < min || n > max {
                out.push(limit(
                    format!("`{written}`: {what} is {n} characters; the platform takes {min} to {max}"),
                    "shorten it, or give it".to_string(),
                ));
            }
        }
        Slot::Tag | Slot::Flag | Slot::Name => {}
    }
}

/// Its message: given when it sends one, none otherwise, never ephemeral.
fn message(a: &Action, spec: &Spec, out: &mut Findings) {
    match (&a.message, spec.message) {
        (None, Message::Required) => out.push(bad(
            format!("`{}` needs the message it sends", spec.written),
            a.span,
            "no message",
            format!("end it with a text or a block: {}", example(spec)),
        )),
        (Some(m), Message::No) => out.push(bad(
            format!("`{}` sends no message", spec.written),
            m.span,
            "not sent",
            "leave it out; to say something too, add a `reply` or a `send` after it".to_string(),
        )),
        (Some(m), _) => {
            for item in &m.items {
                if let ReplyItem::Ephemeral(span) = item {
                    out.push(bad(
                        format!("the message of `{}` cannot be ephemeral", spec.written),
                        *span,
                        "only an answer to a command can be",
                        "remove `ephemeral`: a message sent to a channel or a user is seen by whoever can read it"
                            .to_string(),
                    ));
                }
            }
        }
        (None, _) => {}
    }
}

/// An action on a channel with no `in` acts in the run's own: a tree whose
/// runs have none must say which.
fn channel_known(a: &Action, spec: &Spec, cx: Context<'_>, out: &mut Findings) {
    let takes_in = spec.word("in").is_some();
    let named = matches!(&a.subject, Some(ActionValue::Name(_)))
        || a.arg("to").is_some_and(|t| matches!(t.values.first(), Some(ActionValue::Name(_))));
    let from = a.arg("from").is_some_and(|f| matches!(f.values.first(), Some(ActionValue::Name(_))));
    if takes_in && a.arg("in").is_none() && !cx.here && !named && !from {
        out.push(
            Diagnostic::new(
                Code::ActionTarget,
                format!(
                    "`{}` in {} `{}`, which has no channel of its own",
                    spec.written,
                    cx.tree.kind.as_str(),
                    cx.tree.name.name
                ),
            )
            .label(a.span, "in which channel?")
            .help(format!("say which with `in`: `{} … in \"#general\"`", spec.written)),
        );
    }
}

/// `send` to a channel given by its id, a secret or a variable, not by its
/// `#name` (a name is looked up in the run's server): it needs no server
/// of the run's own.
fn sends_to_a_channel_by_id(a: &Action, verb: Verb) -> bool {
    let to = a.arg("to").and_then(|t| t.values.first());
    verb == Verb::Send
        && matches!(to, Some(ActionValue::Text(t)) if !matches!(t.parts.first(), Some(crate::language::ast::Part::Lit(s, _)) if s.starts_with('#')))
}

/// B161: a command that can run where the bot is in no server, or an
/// event that happens outside any server (a direct message), holds an
/// action on a server.
fn without_server(tree: &Tree, out: &mut Findings) {
    let mut elsewhere: Option<(crate::base::source::Span, String)> = None;
    for node in &tree.body {
        let Node::Register(r) = node else { continue };
        let (words, outside): (_, &[&str]) = match &**r {
            Register::Installs(w) => (w, &["user"]),
            Register::Contexts(w) => (w, &["bot_dm", "private_channel"]),
            _ => continue,
        };
        if let Some(word) = words.words.iter().find(|w| outside.contains(&w.name.as_str())) {
            elsewhere.get_or_insert((word.span, format!("`{}` lets it run there", word.name)));
        }
    }
    let serverless = tree.kind == TreeKind::Event
        && tree.schedule.is_none()
        && crate::language::vocab::event_variables(&tree.name.name).is_some_and(|v| !v.contains(&"server_id"));
    if serverless {
        elsewhere = Some((tree.name.span, format!("`{}` happens outside any server", tree.name.name)));
    }
    let Some((at, why)) = elsewhere else { return };
    struct Found<'a>(Vec<&'a Action>);
    impl<'a> Visitor<'a> for Found<'a> {
        fn action(&mut self, a: &'a Action) {
            self.0.push(a);
        }
    }
    let mut found = Found(Vec::new());
    visit::walk_nodes(&mut found, &tree.body);
    for a in found.0 {
        let Ok(verb) = verb_of(a) else { continue };
        if !verb.spec().in_server || (serverless && sends_to_a_channel_by_id(a, verb)) {
            continue;
        }
        out.push(
            Diagnostic::new(
                Code::ActionWithoutServer,
                format!("`{}` in {} `{}`, which can run where the bot is in no server", verb.spec().written, tree.kind.as_str(), tree.name.name),
            )
            .label(a.span, "the platform refuses it there")
            .related(at, why.clone())
            .help(if serverless {
                "a direct message has no server, roles or members: only `dm`, and `send` to a channel given by its id or a secret (`send to \"<STAFF_CHANNEL>\" …`), work there"
            } else {
                "keep the command to servers the bot is in (`installs server`, `contexts server`), or leave the action out: only `dm` works everywhere"
            }),
        );
    }
}
