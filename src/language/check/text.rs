//! Text written in a file, held to the platform's lengths: the one count
//! (UTF-16 units, as the platform counts) and the one B410 every part of a
//! message uses (replies, embeds, components, layouts).

use crate::base::diagnostics::{Code, Diagnostic, Findings};
use crate::language::ast::Template;

/// UTF-16 units of a template's written text (its `{…}` not counted).
pub(super) fn written(t: &Template) -> usize {
    t.parts
        .iter()
        .map(|p| match p {
            crate::language::ast::Part::Lit(s, _) => s.encode_utf16().count(),
            _ => 0,
        })
        .sum()
}

/// B410 for written text over `max` characters, with its help.
pub(super) fn length_with(t: &Template, max: usize, what: &str, help: &str, out: &mut Findings) {
    let n = written(t);
    if n > max {
        out.push(
            Diagnostic::new(Code::TextTooLong, format!("{what} is {n} characters; the platform takes {max}"))
                .label(t.span, format!("{n} characters"))
                .help(help.to_string()),
        );
    }
}
