//! A reply's texts in other languages, `text fr "Bonjour !"`: each names a
//! locale of the platform or a language of one (`fr`, `pt-BR`, `es`; B428
//! otherwise), once a reply (B414), and a reply translated into some of
//! the languages the file uses and not into another is a warning (B166):
//! its users would read the fallback `text` where the others read theirs.

use crate::base::diagnostics::{did_you_mean, Code, Diagnostic, Findings};
use crate::discord::registration::LOCALES;
use crate::language::ast::visit;
use crate::language::ast::{File, Reply};

/// Whether `word` names a locale of the platform, or the language of one.
pub fn is_locale(word: &str) -> bool {
    LOCALES.iter().any(|(l, _)| *l == word || l.split('-').next() == Some(word))
}

pub fn check(file: &File, out: &mut Findings) {
    let mut translated: Vec<&Reply> = Vec::new();
    for tree in file.trees() {
        visit::each_reply(&tree.body, &mut |r| {
            if r.translations().next().is_some() {
                translated.push(r);
            }
        });
    }
    let mut languages: Vec<&str> = Vec::new();
    for r in &translated {
        let mut seen: Vec<&str> = Vec::new();
        for t in r.translations() {
            let word = t.locale.name.as_str();
            if !is_locale(word) {
                let meant = did_you_mean(word, LOCALES.iter().map(|(l, _)| *l));
                out.push(
                    Diagnostic::new(Code::UnknownRegisterWord, format!("`{word}` is not a locale of the platform"))
                        .label(t.locale.span, "not a locale")
                        .maybe_fixes(meant.map(|m| (format!("write `{m}`"), t.locale.span, m.to_string())))
                        .help("a locale as the platform names it (`fr`, `de`, `pt-BR`, `zh-CN`), or a language alone for all its locales (`es`, `en`)"),
                );
            } else if seen.contains(&word) {
                out.push(
                    Diagnostic::new(Code::ReplyPartTwice, format!("the reply's `{word}` text is written twice"))
                        .label(t.span, "a second one")
                        .help("keep one text a language"),
                );
            }
            seen.push(word);
            if !languages.contains(&word) && is_locale(word) {
                languages.push(word);
            }
        }
    }
    for r in &translated {
        // (`pt` covers `pt-BR`: its users read the language's text.)
        let has = |l: &str| r.translations().any(|t| t.locale.name == l || l.split('-').next() == Some(&t.locale.name));
        let missing: Vec<&str> = languages.iter().copied().filter(|l| !has(l)).collect();
        if missing.is_empty() {
            continue;
        }
        let list = missing.iter().map(|l| format!("`{l}`")).collect::<Vec<_>>().join(", ");
        out.push(
            Diagnostic::new(Code::MissingTranslation, format!("this reply has no text in {list}"))
                .label(r.span, "translated into other languages only")
                .help(format!(
                    "add `text {} \"…\"`: the file's other replies are in it, and its users read this one's fallback `text`",
                    missing[0]
                )),
        );
    }
}
