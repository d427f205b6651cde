//! A custom variable's fields and elements, read as a loop's element is:
//! `{settings[mode]}`, `{settings[limits.daily]}`, `{queue[0]}`,
//! `{queue[-1]}` (the last). Each segment is well formed (B114; an index
//! may count from the end here), and a path the declared default's shape
//! does not have is a warning with a did-you-mean (B164): a save may have
//! added the field since, but most often the name is mistyped.

use crate::base::diagnostics::{did_you_mean, Code, Diagnostic, Findings};
use crate::base::path::{self, MissKind};
use crate::language::ast::{ElementRef, File, Item};

/// Whether a `save NAME[path]` of the file writes `read`, a place on the
/// way to it (`save queue[0] = { who = … }` makes `queue[0.who]`), or a
/// place inside it.
fn saved_there(file: &File, name: &str, read: &[crate::language::ast::Segment]) -> bool {
    struct Fields<'a, 'r> {
        name: &'a str,
        read: &'r [crate::language::ast::Segment],
        found: bool,
    }
    impl<'a> crate::language::ast::visit::Visitor<'a> for Fields<'_, '_> {
        fn save_field(&mut self, f: &'a crate::language::ast::SaveField) {
            // Either path on the way to the other.
            let prefix = f.path.iter().zip(self.read).all(|(a, b)| a.text == b.text);
            self.found |= f.save.name.name == self.name && prefix;
        }
    }
    let mut fields = Fields { name, read, found: false };
    for tree in file.trees() {
        crate::language::ast::visit::walk_nodes(&mut fields, &tree.body);
    }
    fields.found
}

/// B114 and B164 for `name[path]` where `name` is a custom variable.
pub fn check_path(file: &File, e: &ElementRef, out: &mut Findings) {
    let name = e.item.name.as_str();
    for seg in &e.segments {
        let negative = seg.text.strip_prefix('-').is_some_and(|n| path::index(n).is_some_and(|n| n > 0));
        match path::check_key(&seg.text) {
            Ok(()) => {}
            Err(path::SegmentError::Negative) if negative => {}
            Err(why) => {
                let (message, label, help) = why.text(&seg.text, name);
                out.push(Diagnostic::new(Code::MalformedPath, message).label(seg.span, label).help(help));
                return;
            }
        }
    }
    let declared = file.items.iter().find_map(|item| match item {
        Item::Var(v) if v.name.name == name => v.default.as_ref(),
        _ => None,
    });
    let Some(default) = declared.map(|d| d.fixed()) else { return };
    // A key read from a variable (`{votes[{user_id}]}`) is known only when it runs.
    let segments = path::until_variable(&e.segments);
    let Err(miss) = path::walk(&default, segments) else { return };
    // An empty object or list declares no shape (a map, a queue), and a
    // list grows: only a shape the default writes out is checked.
    let at_level = path::walk(&default, &segments[..miss.at]).ok();
    let shaped = match at_level {
        Some(serde_json::Value::Object(map)) => !map.is_empty(),
        Some(serde_json::Value::Array(_)) => false,
        _ => true,
    };
    if !shaped || matches!(miss.kind, MissKind::OutOfRange { .. }) || saved_there(file, name, &segments[..=miss.at]) {
        return;
    }
    let at = &segments[miss.at];
    let suggestion = match miss.kind {
        MissKind::NoKey => {
            did_you_mean(&at.text, miss.keys.iter().map(String::as_str)).filter(|k| path::addressable(k))
        }
        _ => None,
    };
    let whole = |p: &str| {
        let inner = p.strip_prefix(name).map_or(p, |rest| rest.trim_start_matches('.'));
        format!("{name}[{inner}]")
    };
    out.push(
        Diagnostic::new(Code::FieldNotInDefault, miss.message_from(name, segments))
            .label(at.span, miss.label())
            .help(miss.help_from(name, &whole, segments))
            .note(format!("checked against the default `var {name}` declares; a save may add fields it does not have"))
            .maybe_fixes(suggestion.map(|k| (format!("write `{k}`"), at.span, k.to_string()))),
    );
}
