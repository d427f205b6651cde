//! What the chat platform accepts of a command: option types, names,
//! descriptions, choices and the registration limits (docs/serve.md).
//!
//! The same rules decide what `blkc deploy` may register: it refuses a file
//! with any of these findings, and adds [`missing_descriptions`](crate::language::registration::missing_descriptions), which only
//! registration needs.

use crate::base::diagnostics::{did_you_mean, Code, Diagnostic, Findings};
use crate::base::source::Span;
use crate::discord::limits;
use crate::discord::options::OptionType;
use crate::discord::registration as reg;
use crate::discord::{intents, names};
use crate::language::ast::{Choice, ChoiceValue, Choices, File, Ident, Node, OptionDecl, Tree, TreeKind};
use crate::language::registration::uses;

pub fn check(file: &File, out: &mut Findings) {
    let commands: Vec<&Tree> = file.written().filter(|t| t.kind == TreeKind::Command && t.menu.is_none()).collect();
    menus(file, out);
    if let Some(extra) = commands.get(limits::COMMANDS) {
        out.push(
            Diagnostic::new(
                Code::TooManyCommands,
                format!("{} commands, where the platform registers at most {}", commands.len(), limits::COMMANDS),
            )
            .label(extra.name.span, format!("command {} of the file", limits::COMMANDS + 1))
            .help("split the bot into two applications, or fold related commands into one with a `choices` option"),
        );
    }
    for tree in commands {
        command(tree, out);
    }
    privileged_intents(file, out);
}

/// Context-menu commands: in the menu of a user or of a message, named in
/// 1 to 32 characters (any case, blanks allowed), with no description and
/// no options, and at most [`limits::MENU_COMMANDS`] in each menu.
fn menus(file: &File, out: &mut Findings) {
    let mut counts = [0usize; 2];
    for tree in file.written().filter(|t| t.kind == TreeKind::Command) {
        let Some(menu) = &tree.menu else { continue };
        let name = &tree.name.name;
        let target = menu.target.name.as_str();
        match reg::MENUS.iter().position(|(word, ..)| *word == target) {
            Some(i) => {
                counts[i] += 1;
                if counts[i] == limits::MENU_COMMANDS + 1 {
                    out.push(
                        Diagnostic::new(
                            Code::TooManyCommands,
                            format!("more than {} commands in the menu of a {target}", limits::MENU_COMMANDS),
                        )
                        .label(tree.name.span, format!("command {} for {target}", limits::MENU_COMMANDS + 1))
                        .help(format!(
                            "the platform takes at most {} commands in each menu: fold two into one",
                            limits::MENU_COMMANDS
                        )),
                    );
                }
            }
            None => {
                let meant = did_you_mean(target, reg::MENUS.iter().map(|(w, ..)| *w));
                let diag = Diagnostic::new(Code::UnknownRegisterWord, format!("no menu is called `{target}`"))
                    .label(menu.target.span, "not a menu the platform has");
                out.push(diag.meant(menu.target.span, meant, "a context-menu command is `for user` or `for message`"));
            }
        }
        if !names::is_valid_menu(name) {
            let length = name.chars().count();
            let problem = if (1..=names::MAX).contains(&length) {
                "has a blank at its start or its end".to_string()
            } else {
                format!("has {length} characters, where the platform allows 1 to {}", names::MAX)
            };
            out.push(
                Diagnostic::new(Code::PlatformName, format!("the name of context-menu command `{name}` {problem}"))
                .label(tree.name.span, "this name")
                .help(format!("a context-menu command's name is 1 to {} characters, capitals and blanks allowed, with no blank at either end", names::MAX)),
            );
        }
        if let Some(d) = &tree.description {
            out.push(
                Diagnostic::new(Code::MisplacedRegister, format!("context-menu command `{name}` has a description"))
                    .label(d.span, "the platform shows none")
                    .help("leave it out: a context-menu command is its name in the menu"),
            );
        }
        for n in &tree.body {
            if let Node::Option(o) = n {
                out.push(
                    Diagnostic::new(Code::MisplacedRegister, format!("context-menu command `{name}` has an option"))
                        .label(o.span, "the platform asks for none")
                        .help(format!("it is given its target instead: `{{target_{target}_id}}` and the rest of `target_{target}_…`")),
                );
            }
        }
    }
}

/// Event trees that need a privileged Gateway intent: the portal must
/// allow it, or the Gateway refuses the bot (close code 4014).
fn privileged_intents(file: &File, out: &mut Findings) {
    for tree in file.trees().filter(|t| t.kind == TreeKind::Event && t.schedule.is_none()) {
        let content = crate::language::registration::reads_content(tree);
        let bits = intents::of_event(&tree.name.name)
            | if content.is_some() { intents::Intents::MESSAGE_CONTENT } else { intents::Intents::empty() };
        for (name, switch) in intents::privileged(bits) {
            let why = if let (Some(var), "MESSAGE_CONTENT") = (content, name) {
                format!("event `{}` reads `{var}`, which needs the privileged {name} intent", tree.name.name)
            } else {
                format!("`{}` events need the privileged {name} intent", tree.name.name)
            };
            out.push(
                Diagnostic::new(Code::PrivilegedIntent, why).label(tree.name.span, "this event").help(format!(
                    "enable {switch} in the developer portal (Bot, Privileged Gateway Intents), or `blkc serve` is refused with close code 4014"
                )),
            );
        }
    }
}

fn command(tree: &Tree, out: &mut Findings) {
    super::register::name("command", &tree.name.name, tree.name.span, &[], out);
    if let Some(d) = &tree.description {
        super::register::description("command", &tree.name.name, &d.value, d.span, out);
    }
    options_or_subs(tree, out);
    let size = text_size(tree);
    if size > limits::COMMAND_TEXT {
        out.push(
            Diagnostic::new(
                Code::CommandTooLong,
                format!(
                    "command `{}` has {size} characters of names, descriptions and choices, where the platform allows {}",
                    tree.name.name,
                    limits::COMMAND_TEXT
                ),
            )
            .label(tree.name.span, "this command")
            .help("shorten the descriptions and choice names, or split the command in two"),
        );
    }
}

/// A command's (or a group's) subcommands and groups, each named and
/// described as the platform takes it, 25 at most; or its options.
fn options_or_subs(tree: &Tree, out: &mut Findings) {
    if !tree.has_subs() {
        return options(tree, out);
    }
    let subs: Vec<&crate::language::ast::Sub> = tree.subs().collect();
    if let Some(extra) = subs.get(limits::OPTIONS) {
        out.push(
            Diagnostic::new(
                Code::TooManyOptions,
                format!(
                    "`{}` has {} subcommands and groups, where the platform allows {}",
                    tree.name.name,
                    subs.len(),
                    limits::OPTIONS
                ),
            )
            .label(extra.word.span, format!("number {}", limits::OPTIONS + 1))
            .help("fold some into groups, or split the command in two"),
        );
    }
    for s in subs {
        super::register::name(s.keyword(), &s.word.name, s.word.span, &[], out);
        if let Some(d) = &s.tree.description {
            super::register::description(s.keyword(), &s.tree.name.name, &d.value, d.span, out);
        }
        options_or_subs(&s.tree, out);
    }
}

/// A command's or a subcommand's options: at most 25, the required ones
/// first, each named, described and bounded as the platform takes it.
fn options(tree: &Tree, out: &mut Findings) {
    let options: Vec<&OptionDecl> = tree.options().collect();
    if let Some(extra) = options.get(limits::OPTIONS) {
        out.push(
            Diagnostic::new(
                Code::TooManyOptions,
                format!(
                    "command `{}` has {} options, where the platform allows {}",
                    tree.name.name,
                    options.len(),
                    limits::OPTIONS
                ),
            )
            .label(extra.name.span, format!("option {}", limits::OPTIONS + 1))
            .help("ask for fewer things at once, or split the command in two"),
        );
    }
    let mut optional: Option<&OptionDecl> = None;
    for o in &options {
        let taken = options.iter().any(|other| other.name.name == o.name.name.to_lowercase());
        // `{option_Sides}` is renamed with the option; a lower-case name
        // another option has already makes the fix a guess.
        let reads = if taken { None } else { Some(uses(&tree.body, &format!("option_{}", o.name.name))) };
        option(o, reads.as_deref(), out);
        bounds(o, out);
        match (o.required, optional) {
            (Some(required), Some(before)) => out.push(
                Diagnostic::new(
                    Code::RequiredAfterOptional,
                    format!("required option `{}` after optional option `{}`", o.name.name, before.name.name),
                )
                .label(required, "required here")
                .related(before.name.span, "this option is optional")
                .help("move the required options above the optional ones: the platform asks for them first"),
            ),
            (None, None) => optional = Some(o),
            _ => {}
        }
    }
}

/// The characters the platform counts toward a command's limit: the names,
/// descriptions, and choice names and values of the command, its
/// subcommands and groups, and their options.
fn text_size(tree: &Tree) -> usize {
    let chars = |s: &str| s.chars().count();
    // A name and a description count as their longest localization (a
    // subcommand's name is its own word).
    let own = tree.name.name.rsplit(' ').next().unwrap_or_default();
    let (name, description) = (chars(own), tree.description.as_ref().map_or(0, |d| chars(&d.value)));
    let (name, description) = super::register::longest(tree, None, name, description);
    let mut size = name + description;
    if tree.has_subs() {
        return size + tree.subs().map(|s| text_size(&s.tree)).sum::<usize>();
    }
    for o in tree.options() {
        let (name, description) = (chars(&o.name.name), o.description.as_ref().map_or(0, |d| chars(&d.value)));
        let (name, description) = super::register::longest(tree, Some(&o.name.name), name, description);
        size += name + description;
        for c in o.choices.iter().flat_map(|c| &c.entries) {
            size += chars(&c.name.name) + chars(c.value.as_str());
        }
    }
    size
}

fn option(o: &OptionDecl, reads: Option<&[Span]>, out: &mut Findings) {
    super::register::name("option", &o.name.name, o.name.span, reads.unwrap_or_default(), out);
    if let Some(d) = &o.description {
        super::register::description("option", &o.name.name, &d.value, d.span, out);
    }
    if let Some(kind) = o.kind.as_ref().filter(|k| OptionType::parse(&k.name).is_none()) {
        unknown_type(kind, out);
    }
    if let Some(choices) = &o.choices {
        option_choices(o, choices, out);
    }
}

/// An option's type word that names no type: did-you-mean, or the words
/// other languages use for the same types.
fn unknown_type(kind: &Ident, out: &mut Findings) {
    let types = OptionType::ALL.iter().map(|t| t.as_str());
    let word = kind.name.to_ascii_lowercase();
    let alias = match word.as_str() {
        "int" | "i64" | "long" => Some("integer"),
        "float" | "double" | "decimal" | "f64" => Some("number"),
        "bool" => Some("boolean"),
        "str" | "text" => Some("string"),
        "member" => Some("user"),
        "file" => Some("attachment"),
        _ => None,
    };
    let help = match alias.or_else(|| did_you_mean(&word, types)) {
        Some(t) => format!("did you mean `{t}`?"),
        None => format!(
            "the types are {}",
            OptionType::ALL.iter().map(|t| format!("`{}`", t.as_str())).collect::<Vec<_>>().join(", ")
        ),
    };
    out.push(
        Diagnostic::new(Code::UnknownOptionType, format!("`{}` is not an option type", kind.name))
            .label(kind.span, "not a type")
            .help(help),
    );
}

/// An option's `choices`: allowed for its type, 1 to 25 of them, each
/// named once and of the option's type.
fn option_choices(o: &OptionDecl, choices: &Choices, out: &mut Findings) {
    let kind = o.option_type();
    if !kind.takes_choices() {
        out.push(
            Diagnostic::new(Code::ChoiceMismatch, format!("a {} option cannot have choices", kind.as_str()))
                .label(choices.keyword, "choices here")
                .help("only `string`, `integer` and `number` options have choices; remove them or change the type"),
        );
        return;
    }
    if let Some(extra) = choices.entries.get(limits::CHOICES) {
        out.push(
            Diagnostic::new(
                Code::TooManyChoices,
                format!(
                    "option `{}` has {} choices, where the platform allows {}",
                    o.name.name,
                    choices.entries.len(),
                    limits::CHOICES
                ),
            )
            .label(extra.span, format!("choice {}", limits::CHOICES + 1))
            .help("keep the 25 most used, or let the user type the value"),
        );
    }
    if choices.entries.is_empty() {
        out.push(
            Diagnostic::new(Code::ChoiceMismatch, format!("option `{}` has an empty `choices`", o.name.name))
                .label(choices.span, "no choices")
                .help("give at least one choice, or remove `choices`"),
        );
    }
    let mut seen = std::collections::HashMap::new();
    for c in &choices.entries {
        choice(kind, c, out);
        if let Some(first) = seen.insert(c.name.name.as_str(), c.name.span) {
            out.push(
                Diagnostic::new(Code::ChoiceMismatch, format!("choice `{}` is given twice", c.name.name))
                    .label(c.name.span, "given again here")
                    .related(first, "first given here")
                    .help("the user could not tell the two apart; rename or remove one"),
            );
        }
    }
}

/// A choice's name, and its value against the option's type.
fn choice(kind: OptionType, c: &Choice, out: &mut Findings) {
    let length = c.name.name.chars().count();
    if length == 0 || length > limits::CHOICE_TEXT {
        out.push(
            Diagnostic::new(
                Code::ChoiceMismatch,
                format!(
                    "a choice's name has {length} characters, where the platform wants 1 to {}",
                    limits::CHOICE_TEXT
                ),
            )
            .label(c.name.span, "this name")
            .help("the name is what the user sees in the list; keep it short"),
        );
    }
    let problem = match (&c.value, kind) {
        (ChoiceValue::Text(t), OptionType::String) => {
            let n = t.value.chars().count();
            (n == 0 || n > limits::CHOICE_TEXT)
                .then(|| format!("has {n} characters, where the platform wants 1 to 100"))
        }
        (ChoiceValue::Number(..), OptionType::String) => Some("is a number, and the option is a string".into()),
        (ChoiceValue::Text(_), _) => Some(format!("is text, and the option is {}", article(kind))),
        (ChoiceValue::Number(n, _), OptionType::Integer) if crate::discord::options::parse_integer(n).is_none() => {
            Some("is not a whole number between -(2^53 - 1) and 2^53 - 1".into())
        }
        (ChoiceValue::Number(n, _), OptionType::Number) if !crate::discord::options::is_option_number(n) => {
            Some("is beyond the platform's ±2^53 (9007199254740992)".into())
        }
        (ChoiceValue::Number(..), _) => None,
    };
    if let Some(problem) = problem {
        out.push(
            Diagnostic::new(Code::ChoiceMismatch, format!("the value of choice `{}` {problem}", c.name.name))
                .label(c.value.span(), "this value")
                .help(format!("a choice of {} option takes {}", article(kind), kind.describe())),
        );
    }
}

fn article(kind: OptionType) -> String {
    match kind {
        OptionType::Integer => "an integer".into(),
        _ => format!("a {}", kind.as_str()),
    }
}

/// B427: an option's `min` and `max`: on a text option its length (whole,
/// 0 to 6,000; `max` from 1), on a number option its value (within the
/// type's range), on no other type; once each, and `min` not above `max`.
fn bounds(o: &OptionDecl, out: &mut Findings) {
    let kind = o.option_type();
    let bad = |b: &crate::language::ast::OptionBound, message: String, help: &str| {
        Diagnostic::new(Code::BadOptionBound, message).label(b.span, "refused by the platform").help(help.to_string())
    };
    let word = |b: &crate::language::ast::OptionBound| if b.max { "max" } else { "min" };
    for (i, b) in o.bounds.iter().enumerate() {
        if o.bounds[..i].iter().any(|a| a.max == b.max) {
            out.push(bad(b, format!("`{}` is given twice", word(b)), "keep one"));
            continue;
        }
        let refusal = match kind {
            OptionType::String => match b.value.parse::<u32>() {
                Ok(n) if n <= limits::OPTION_LENGTH && (n >= 1 || !b.max) => None,
                _ => Some((
                    "a length: a whole number from 0 to 6,000 (`max` from 1)",
                    "a text option's bounds are its length: `min 2 max 32` takes 2 to 32 characters",
                )),
            },
            OptionType::Integer if crate::discord::options::parse_integer(&b.value).is_none() => Some((
                "a whole number between -(2^53 - 1) and 2^53 - 1",
                "an integer option's bounds are whole numbers, like `min 1 max 10`",
            )),
            OptionType::Number if !crate::discord::options::is_option_number(&b.value) => {
                Some(("a number between -2^53 and 2^53", "a number option's bounds are numbers, like `min 0 max 2.5`"))
            }
            OptionType::Integer | OptionType::Number => None,
            other => {
                let help = format!(
                    "a `{}` option has no bounds; `min` and `max` bound a number's value or a text's length",
                    other.as_str()
                );
                out.push(bad(
                    b,
                    format!("option `{}` is {}: it takes no `{}`", o.name.name, other.as_str(), word(b)),
                    &help,
                ));
                continue;
            }
        };
        if let Some((what, help)) = refusal {
            out.push(bad(b, format!("`{} {}` of option `{}` is not {what}", word(b), b.value, o.name.name), help));
        }
    }
    let value =
        |max: bool| o.bounds.iter().find(|b| b.max == max).and_then(|b| Some((b, b.value.parse::<f64>().ok()?)));
    if let (Some((_, min)), Some((b, max))) = (value(false), value(true)) {
        if min > max {
            out.push(bad(
                b,
                format!("option `{}`'s `max {}` is below its `min`", o.name.name, b.value),
                "swap them, or write the bounds you meant",
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::base::source::SourceFile;
    use crate::discord::intents::Intents;

    #[test]
    fn a_file_asks_for_the_intents_its_events_need_and_no_more() {
        let intents = |text: &str| {
            crate::language::registration::intents(
                &crate::language::load::check_source(SourceFile::new("bot.blk", text)).ast,
            )
        };
        assert_eq!(intents("command c \"C\" { reply \"x\" }\n"), Intents::empty());
        assert_eq!(
            intents("event member_join { reply \"hi {user_name}\" }\n"),
            Intents::GUILDS | Intents::GUILD_MEMBERS
        );
        assert_eq!(
            intents("event message_create { reply \"seen {message_id}\" }\n"),
            Intents::GUILDS | Intents::GUILD_MESSAGES
        );
        let reads = "event message_create {\n    if \"{message_content}\" == \"!ping\" { reply \"pong\" }\n}\n";
        assert_eq!(intents(reads), Intents::GUILDS | Intents::GUILD_MESSAGES | Intents::MESSAGE_CONTENT);
    }

    /// A level holds at most 25 subcommands and groups (B403), and the
    /// 8,000 characters count every level's names, descriptions and options.
    #[test]
    fn subcommands_count_toward_each_level_s_25_and_the_command_s_8000() {
        use crate::base::diagnostics::Code;
        let codes = |text: &str| -> Vec<Code> {
            crate::language::load::check_source(SourceFile::new("bot.blk", text))
                .diagnostics
                .iter()
                .map(|d| d.code)
                .collect()
        };
        let subs = |n: usize, description: &str| {
            let each = (0..n).map(|i| format!("    subcommand s{i} \"{description}\" {{ reply \"x\" }}\n"));
            format!("command c \"C\" {{\n{}}}\n", each.collect::<String>())
        };
        assert_eq!(codes(&subs(25, "D")), []);
        assert_eq!(codes(&subs(26, "D")), [Code::TooManyOptions]);
        let grouped = format!("command c \"C\" {{\n    group g \"G\" {{\n{}    }}\n}}\n", {
            (0..26).map(|i| format!("        subcommand s{i} \"D\" {{ reply \"x\" }}\n")).collect::<String>()
        });
        assert_eq!(codes(&grouped), [Code::TooManyOptions]);
        // 25 subcommands of 100-character descriptions, each with three
        // options of as much: past 8,000 only counted together.
        let long = "d".repeat(100);
        let options = (0..3).map(|i| format!("option o{i} \"{long}\" ")).collect::<String>();
        let heavy = subs(25, &long).replace("{ reply", &format!("{{ {options}reply"));
        assert_eq!(codes(&heavy), [Code::CommandTooLong]);
    }

    #[test]
    fn options_choices_and_types_become_the_platform_s_payload() {
        let checked = crate::language::load::check_source(SourceFile::new(
            "bot.blk",
            "command roll \"Roll dice\" {\n    option sides \"Sides\" integer required choices { Six = 6, Twenty = 20 }\n    \
             option who \"For whom\" user\n    reply \"{option_sides}\"\n}\nevent member_join { reply \"hi\" }\n",
        ));
        assert!(!checked.has_errors(), "{:?}", checked.diagnostics);
        let payload = serde_json::to_value(crate::language::registration::registration(&checked.ast).unwrap()).unwrap();
        assert_eq!(
            payload,
            serde_json::json!([{
                "type": 1, "name": "roll", "description": "Roll dice",
                "options": [
                    { "type": 4, "name": "sides", "description": "Sides", "required": true,
                      "choices": [{ "name": "Six", "value": 6 }, { "name": "Twenty", "value": 20 }] },
                    { "type": 6, "name": "who", "description": "For whom", "required": false }
                ]
            }])
        );
        let bare = crate::language::load::check_source(SourceFile::new(
            "bot.blk",
            "command ping {\n    option x\n    reply \"pong\"\n}\n",
        ));
        let missing = crate::language::registration::registration(&bare.ast).unwrap_err();
        assert_eq!(missing.len(), 2);
        assert!(missing.iter().all(|d| d.code == crate::base::diagnostics::Code::MissingDescription));
    }
}
