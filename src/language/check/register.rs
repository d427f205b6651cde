//! What a command registers besides its options: `permissions`,
//! `contexts`, `installs`, `nsfw` and `locale` lines at the top of its
//! tree, and a `channel` option's `in`. The words are the platform's
//! (the tables of [`crate::discord::registration`]); this module reads
//! them (B428, B429, and B401/B402 for localized names and descriptions),
//! and builds their part of the registration payload.

use crate::base::diagnostics::{did_you_mean, Code, Confidence, Diagnostic, Edit, Findings};
use crate::base::source::Span;
use crate::discord::limits;
use crate::discord::names;
use crate::discord::options::OptionType;
use crate::discord::registration as reg;
use crate::language::ast::{File, Locale, Node, OptionDecl, Register, Tree, TreeKind, Words};
use crate::language::registration::{find, locales, options, registers};

pub fn check(file: &File, out: &mut Findings) {
    let autocompletes = file.trees().filter(|t| t.kind == TreeKind::Autocomplete);
    let levels = file.every_level().into_iter().chain(autocompletes.map(|t| (t, None)));
    for (tree, sub) in levels {
        let command = tree.kind == TreeKind::Command;
        if let (true, Some(sub)) = (command, sub) {
            // A subcommand or a group has a name and a description of its
            // own to translate; the rest is the whole command's.
            let whole = |n: &&Node| matches!(n, Node::Register(r) if !matches!(**r, Register::Locale(_)));
            for n in tree.body.iter().filter(whole) {
                let help = "it is registered for the whole command: move it to the top of the command";
                misplaced(n, &format!("in a {}", sub.keyword()), help, out);
            }
            self::command(tree, false, out);
        } else if command {
            self::command(tree, true, out);
        } else {
            let top = tree.body.iter().filter(|n| matches!(n, Node::Register(_)));
            top.for_each(|n| {
                misplaced(
                    n,
                    "in an event, a handler or an autocomplete",
                    "only a command is registered: move it into one, or leave it out",
                    out,
                )
            });
        }
        crate::language::ast::visit::each_in_branch(&tree.body, &mut |n| {
            let help = "move it to the top of the command, beside its options: it is registered once, not run";
            misplaced(n, "inside an `if` or a `for`", help, out);
        });
    }
}

/// B429: a registration line anywhere but at the top of a command.
fn misplaced(node: &Node, label: &str, help: &str, out: &mut Findings) {
    if let Node::Register(r) = node {
        out.push(
            Diagnostic::new(Code::MisplacedRegister, format!("`{}` {label}", r.keyword()))
                .label(r.span(), "registered with the command, never run")
                .help(help.to_string()),
        );
    }
}

/// A command's lines (`whole`), or a subcommand's or group's locales.
fn command(tree: &Tree, whole: bool, out: &mut Findings) {
    let mut seen: Vec<((bool, &str), Span)> = Vec::new();
    let options: Vec<&OptionDecl> = options(tree).collect();
    // (In a subcommand or a group, only its locales: the rest is said
    // misplaced by `check`.)
    for r in registers(tree).filter(|r| whole || matches!(r, Register::Locale(_))) {
        // (A locale by its language: `locale nsfw …` is no second `nsfw`.)
        let key = match r {
            Register::Locale(l) => (true, l.locale.name.as_str()),
            other => (false, other.keyword()),
        };
        if let Some((_, first)) = seen.iter().find(|(k, _)| *k == key) {
            let what = match r {
                Register::Locale(l) => format!("`locale {}`", l.locale.name),
                other => format!("`{}`", other.keyword()),
            };
            out.push(
                Diagnostic::new(Code::MisplacedRegister, format!("{what} twice in command `{}`", tree.name.name))
                    .label(r.span(), "the second")
                    .related(*first, "the first")
                    .help("write it once: the platform takes one of each"),
            );
            continue;
        }
        seen.push((key, r.span()));
        match r {
            Register::Permissions(w) => {
                let known = reg::permission_words();
                words(w, "permission", |word| reg::permission(word).is_some(), known.iter().map(String::as_str), out)
            }
            Register::Contexts(w) => {
                words(w, "context", |x| find(reg::CONTEXTS, x).is_some(), names(reg::CONTEXTS), out)
            }
            Register::Installs(w) => {
                words(w, "install", |x| find(reg::INSTALLS, x).is_some(), names(reg::INSTALLS), out)
            }
            Register::Nsfw(_) => {}
            Register::Locale(l) => locale(tree, l, &options, out),
        }
    }
    for o in options {
        if let Some(w) = &o.channels {
            channels(o, w, out);
        }
        if let Some((keyword, types)) = &o.file_types {
            file_types(o, *keyword, types, out);
        }
    }
}

/// An option's `types`: on an `attachment` option, each a group or an
/// extension, at most 10 (`outgoing::file_types`, an upload's rule too).
fn file_types(
    o: &OptionDecl,
    keyword: crate::base::source::Span,
    types: &crate::language::ast::Text,
    out: &mut Findings,
) {
    if o.option_type() != OptionType::Attachment {
        out.push(
            Diagnostic::new(
                Code::MisplacedRegister,
                format!("`types` on option `{}`, which is not an attachment", o.name.name),
            )
            .label(keyword, "kinds of file")
            .help("`types \"image .pdf\"` is for an `attachment` option: write its type `attachment`, or leave out `types`"),
        );
        return;
    }
    if let Err(problem) = crate::discord::outgoing::file_types(&types.value) {
        out.push(
            Diagnostic::new(Code::UnknownRegisterWord, problem)
                .label(types.span, "these kinds of file")
                .help("write `image`, `video`, `audio` or extensions with their dot: `types \"image .pdf\"`"),
        );
    }
}

/// B428 for a word the list does not know (with did-you-mean), B429 for
/// one written twice.
fn words<'a>(
    w: &Words,
    what: &str,
    known: impl Fn(&str) -> bool,
    candidates: impl Iterator<Item = &'a str> + Clone,
    out: &mut Findings,
) {
    for (i, word) in w.words.iter().enumerate() {
        if let Some(first) = w.words[..i].iter().find(|x| x.name == word.name) {
            out.push(
                Diagnostic::new(Code::MisplacedRegister, format!("{what} `{}` named twice", word.name))
                    .label(word.span, "the second")
                    .related(first.span, "the first")
                    .help("leave out the second"),
            );
        } else if !known(&word.name) {
            let diag = Diagnostic::new(Code::UnknownRegisterWord, format!("no {what} is called `{}`", word.name))
                .label(word.span, format!("not a {what} the platform knows"));
            // The platform's own names for them (`guild`, `guild_install`).
            let alias = ALIASES.iter().find(|(a, _)| *a == word.name.as_str()).map(|(_, w)| *w);
            let alias = alias.filter(|w| candidates.clone().any(|c| c == *w));
            let meant = alias.or_else(|| did_you_mean(&word.name, candidates.clone()));
            let all = format!("the {what}s are: {}", candidates.clone().collect::<Vec<_>>().join(", "));
            out.push(diag.meant(word.span, meant, all));
        }
    }
}

/// What the platform's documentation calls some words of the lists.
const ALIASES: &[(&str, &str)] = &[
    ("guild", "server"),
    ("guild_install", "server"),
    ("user_install", "user"),
    ("dm", "bot_dm"),
    ("guild_text", "text"),
    ("guild_voice", "voice"),
    ("guild_forum", "forum"),
    ("manage_server", "manage_guild"),
];

/// `in …` on a `channel` option: the kinds of channel; on any other type,
/// B429.
fn channels(o: &OptionDecl, w: &Words, out: &mut Findings) {
    if o.option_type() != OptionType::Channel {
        out.push(
            Diagnostic::new(
                Code::MisplacedRegister,
                format!("`in` on option `{}`, which is not a channel", o.name.name),
            )
            .label(w.span, "kinds of channel")
            .help("`in text, forum` is for a `channel` option: write its type `channel`, or leave out `in`"),
        );
        return;
    }
    let kinds = reg::CHANNEL_TYPES.iter().map(|(w, _)| *w);
    words(w, "kind of channel", |x| kinds.clone().any(|k| k == x), kinds.clone(), out);
}

/// A `locale`: a language the platform has, a name and descriptions it
/// takes, and options the command has, once each.
fn locale(tree: &Tree, l: &Locale, options: &[&OptionDecl], out: &mut Findings) {
    let code = &l.locale;
    if !reg::LOCALES.iter().any(|(c, _)| *c == code.name.as_str()) {
        let codes = reg::LOCALES.iter().map(|(c, _)| *c);
        let diag = Diagnostic::new(Code::UnknownRegisterWord, format!("no locale is called `{}`", code.name))
            .label(code.span, "not one of the platform's locales");
        // `fr-FR` for `fr`, `pt-br` for `pt-BR`.
        let language = code.name.split('-').next().unwrap_or_default();
        let close = codes.clone().find(|c| c.eq_ignore_ascii_case(&code.name) || *c == language);
        let meant = close.or_else(|| did_you_mean(&code.name, codes.clone()));
        let all = format!("the platform's locales are: {}", codes.collect::<Vec<_>>().join(", "));
        out.push(diag.meant(code.span, meant, all));
    }
    if let (Some(_), Some(span)) =
        (&tree.menu, l.description.as_ref().map(|d| d.span).or(l.options.first().map(|o| o.span)))
    {
        out.push(
            Diagnostic::new(
                Code::MisplacedRegister,
                format!("context-menu command `{}` has no description or options to translate", tree.name.name),
            )
            .label(span, "nothing of the command's to translate")
            .help(format!("a context-menu command's locale is its name alone: `locale {} \"…\"`", code.name)),
        );
    }
    let what = |of: &str| format!("{of} in `{}`", code.name);
    // (A context-menu command's name, in any language, is any 1 to 32
    // characters: the checker of menus says so of the name itself.)
    if tree.menu.is_none() {
        name(&what("command"), &l.name.value, l.name.span, &[], out);
    } else if !crate::discord::names::is_valid_menu(&l.name.value) {
        let length = l.name.value.chars().count();
        out.push(
            Diagnostic::new(
                Code::PlatformName,
                format!("the name of a context-menu command in `{}` has {length} characters", code.name),
            )
            .label(l.name.span, "this name")
            .help("a context-menu command's name is 1 to 32 characters, in any language"),
        );
    }
    if let Some(d) = &l.description {
        description(&what("command"), &tree.name.name, &d.value, d.span, out);
    }
    translated_options(tree, l, options, out);
    translated_choices(tree, l, options, out);
}

/// A `locale`'s choices: each the name of a choice of the command's
/// options, with a name of 1 to 100 characters.
fn translated_choices(tree: &Tree, l: &Locale, options: &[&OptionDecl], out: &mut Findings) {
    let names: Vec<&str> = options
        .iter()
        .filter_map(|o| o.choices.as_ref())
        .flat_map(|c| c.entries.iter().map(|e| e.name.name.as_str()))
        .collect();
    for (written, translated) in &l.choices {
        if !names.contains(&written.value.as_str()) {
            let diag = Diagnostic::new(
                Code::UnknownRegisterWord,
                format!("command `{}` has no choice `{}`", tree.name.name, written.value),
            )
            .label(written.span, "no option's choice is named so");
            let meant = did_you_mean(&written.value, names.iter().copied());
            let help = "a locale's `\"Choice\" \"Name\"` translates a choice of the command's options, by its name";
            out.push(diag.meant(written.span, meant, help));
        }
        let n = translated.value.chars().count();
        if n == 0 || n > crate::discord::limits::CHOICE_TEXT {
            out.push(
                Diagnostic::new(Code::TextTooLong, format!("a choice's name in `{}` is {n} characters", l.locale.name))
                    .label(translated.span, "this name")
                    .help("a choice's name is 1 to 100 characters, in any language"),
            );
        }
    }
}

/// A `locale`'s options: each one the command has, once, with a name and
/// a description the platform takes.
fn translated_options(tree: &Tree, l: &Locale, options: &[&OptionDecl], out: &mut Findings) {
    let code = &l.locale;
    let what = |of: &str| format!("{of} in `{}`", code.name);
    for (i, lo) in l.options.iter().enumerate() {
        if let Some(first) = l.options[..i].iter().find(|x| x.option.name == lo.option.name) {
            out.push(
                Diagnostic::new(
                    Code::MisplacedRegister,
                    format!("option `{}` twice in `locale {}`", lo.option.name, code.name),
                )
                .label(lo.option.span, "the second")
                .related(first.option.span, "the first")
                .help("write each option once in a locale"),
            );
            continue;
        }
        if !options.iter().any(|o| o.name.name == lo.option.name) {
            let names = options.iter().map(|o| o.name.name.as_str());
            let diag = Diagnostic::new(
                Code::UnknownRegisterWord,
                format!("command `{}` has no option `{}`", tree.name.name, lo.option.name),
            )
            .label(lo.option.span, "no such option");
            let meant = did_you_mean(&lo.option.name, names);
            let help = "a locale's braces translate the command's options, each by its own name";
            out.push(diag.meant(lo.option.span, meant, help));
            continue;
        }
        name(&what("option"), &lo.name.value, lo.name.span, &[], out);
        if let Some(d) = &lo.description {
            description(&what("option"), &lo.option.name, &d.value, d.span, out);
        }
    }
}

fn names<T>(table: &'static [(&'static str, T, &'static str)]) -> impl Iterator<Item = &'static str> + Clone {
    table.iter().map(|(w, ..)| *w)
}

/// The characters of a name and a description as the platform counts
/// them toward a command's 8,000: the longest of the default and its
/// localizations, each. `option` is `None` for the command's own.
pub fn longest(tree: &Tree, option: Option<&str>, name: usize, description: usize) -> (usize, usize) {
    let chars = |t: Option<&crate::language::ast::Text>| t.map_or(0, |t| t.value.chars().count());
    locales(tree).fold((name, description), |(n, d), l| {
        let (ln, ld) = match option {
            None => (chars(Some(&l.name)), chars(l.description.as_ref())),
            Some(o) => match l.options.iter().find(|lo| lo.option.name == o) {
                Some(lo) => (chars(Some(&lo.name)), chars(lo.description.as_ref())),
                None => (0, 0),
            },
        };
        (n.max(ln), d.max(ld))
    })
}

/// A command's or an option's name, by the platform's rule
/// ([`names::problem`]). A name with capitals gets the fix that writes it
/// in lower case, with `reads` (where the tree reads the option's
/// `option_<name>`) renamed too.
pub(super) fn name(what: &str, name: &str, span: Span, reads: &[Span], out: &mut Findings) {
    let Some(problem) = names::problem(name) else { return };
    let lower = name.to_lowercase();
    let (problem, fix) = match problem {
        names::Problem::Long(length) => (
            format!("has {length} characters, where the platform allows {}", names::MAX),
            format!("shorten it to {} characters or fewer", names::MAX),
        ),
        names::Problem::Char(c) => (
            format!("has {}, which the platform refuses in a name", shown(c)),
            "leave it out, or write `-` or `_` in its place".to_string(),
        ),
        names::Problem::Capital(c) => {
            (format!("has the capital letter `{c}`, which the platform refuses"), format!("write it `{lower}`"))
        }
    };
    let mut diag = Diagnostic::new(Code::PlatformName, format!("the name of {what} `{name}` {problem}"))
        .label(span, "this name")
        .help(format!(
            "{fix}: a name is 1 to {} letters or digits of any script, `-`, `_` and `'`, in lower case",
            names::MAX
        ));
    if lower.chars().count() <= names::MAX && names::is_valid(&lower) {
        let mut edits = vec![Edit { span, replacement: lower.clone() }];
        edits.extend(reads.iter().map(|&at| Edit { span: at, replacement: format!("option_{lower}") }));
        let how = match reads.len() {
            0 => format!("write `{lower}`"),
            1 => format!("write `{lower}`, and `option_{lower}` where it is read"),
            n => format!("write `{lower}`, and `option_{lower}` in the {n} places it is read"),
        };
        diag = diag.suggest_edits(how, edits, Confidence::Certain);
    }
    out.push(diag);
}

pub(super) fn description(what: &str, name: &str, text: &str, span: Span, out: &mut Findings) {
    let length = text.chars().count();
    if length == 0 || length > limits::DESCRIPTION {
        out.push(
            Diagnostic::new(
                Code::DescriptionLength,
                format!(
                    "the description of {what} `{name}` has {length} characters, where the platform wants 1 to {}",
                    limits::DESCRIPTION
                ),
            )
            .label(span, "this description")
            .help("the user reads it in the command list; say in a few words what it does"),
        );
    }
}

/// A character as a message shows it: a blank or an invisible one by its
/// code point.
pub(super) fn shown(c: char) -> String {
    if c.is_whitespace() || c.is_control() {
        format!("U+{:04X}", u32::from(c))
    } else {
        format!("`{c}`")
    }
}
