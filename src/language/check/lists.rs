//! List variables: `append`, `remove` and `remove at` change a list, and a
//! loop over a custom variable runs over one; a variable whose declared
//! default is something else cannot be either (B149).

use crate::base::diagnostics::{Code, Diagnostic, Findings};
use crate::base::source::Span;
use crate::language::ast::visit::{each_loop, each_whole_save};
use crate::language::ast::{File, Item, LoopSource, SaveOp, Value, VarDecl};

pub fn check(file: &File, out: &mut Findings) {
    let declared = |name: &str| {
        file.items.iter().find_map(|item| match item {
            Item::Var(v) if v.name.name == name => Some(v),
            _ => None,
        })
    };
    for tree in file.trees() {
        each_whole_save(&tree.body, &mut |s| {
            if matches!(s.op, SaveOp::Append | SaveOp::Remove | SaveOp::RemoveAt) {
                if let Some(var) = declared(&s.name.name).filter(|v| !holds_list(v)) {
                    out.push(not_a_list(var, s.op.as_str(), s.span()));
                }
            }
        });
        each_loop(&tree.body, &mut |l| {
            let LoopSource::Name(name) = &l.source else { return };
            if let Some(var) = declared(&name.name).filter(|v| !holds_list(v)) {
                out.push(not_a_list(var, "for", name.span));
            }
        });
    }
}

/// Whether a declared variable starts as a list: a default that is a list
/// or `null`, or none (nothing saved is an empty list).
fn holds_list(var: &VarDecl) -> bool {
    matches!(var.default, None | Some(Value::Array(..)) | Some(Value::Null(_)))
}

fn not_a_list(var: &VarDecl, what: &str, span: Span) -> Diagnostic {
    let name = var.name.name.as_str();
    let default_span = var.default.as_ref().map_or(var.span, Value::span);
    Diagnostic::new(Code::NotAListVariable, format!("`{what}` needs a list, and `{name}` starts as something else"))
        .label(span, "a list is needed here")
        .related(default_span, "declared with this default")
        .help(format!("declare it as a list, `var {name} = []`, or keep the list in a variable of its own"))
}
