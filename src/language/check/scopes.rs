//! Scoped variables: the scope's word (B141), and that every tree reading
//! or saving one has the id its scope needs (B142): a `per user` variable
//! means nothing in a `channel_create` event, which has no user.

use std::collections::HashMap;

use crate::base::diagnostics::{did_you_mean, Code, Diagnostic, Findings};
use crate::language::ast::visit::{self, Site, Visitor};
use crate::language::ast::{File, Ident, Item, Tree};
use crate::language::vocab::VarScope;

/// B169: `expires "…"` that is no duration.
fn expires(e: &crate::language::ast::Text, out: &mut Findings) {
    if let Err(why) = crate::language::vocab::parse_duration(&e.value) {
        out.push(
            Diagnostic::new(Code::BadExpiry, format!("`expires` takes a duration: {why}"))
                .label(e.span, "not a duration")
                .help("write how long a saved value lasts: `expires \"10m\"`, `expires \"2h30m\"`, `expires \"1d\"` (up to 366 days)"),
        );
    }
}

pub fn check(file: &File, out: &mut Findings) {
    let mut scoped: HashMap<&str, VarScope> = HashMap::new();
    for item in &file.items {
        let Item::Var(v) = item else { continue };
        if let Some(e) = &v.expires {
            expires(e, out);
        }
        let Some(word) = &v.scope else { continue };
        match VarScope::parse(&word.name) {
            Some(scope) => {
                scoped.insert(v.name.name.as_str(), scope);
            }
            None => {
                let words = VarScope::WORDS.iter().map(|s| s.as_str());
                let help = match did_you_mean(&word.name, words) {
                    Some(s) => format!("did you mean `per {s}`?"),
                    None => "a variable is kept `per user` (in each server), `per server` or `per channel`; leave `per …` out for one value".into(),
                };
                out.push(
                    Diagnostic::new(Code::UnknownScope, format!("`{}` is not a scope", word.name))
                        .label(word.span, "not a scope")
                        .help(help),
                );
            }
        }
    }
    if scoped.is_empty() {
        return;
    }
    for tree in file.trees() {
        let provided = crate::language::model::trigger_variables(tree);
        let mut uses: Vec<&Ident> = Vec::new();
        crate::language::ast::visit::each_save(&tree.body, &mut |s| uses.push(&s.name));
        let mut reads = Reads { uses: Vec::new() };
        visit::walk_nodes(&mut reads, &tree.body);
        uses.extend(reads.uses);
        uses.sort_by_key(|i| i.span.start);
        let mut told = std::collections::HashSet::new();
        for ident in uses {
            let Some(scope) = scoped.get(ident.name.as_str()) else { continue };
            let Some(needed) = scope.needs() else { continue };
            if provided.contains(&needed) || !told.insert(ident.name.as_str()) {
                continue;
            }
            out.push(not_in_tree(tree, ident, *scope, needed));
        }
    }
}

fn not_in_tree(tree: &Tree, ident: &Ident, scope: VarScope, needed: &str) -> Diagnostic {
    Diagnostic::new(
        Code::ScopeNotInTree,
        format!(
            "`{}` is kept per {}, and `{}` {}s have no `{needed}`",
            ident.name,
            scope.as_str(),
            tree.name.name,
            tree.kind.as_str()
        ),
    )
    .label(ident.span, "used here")
    .related(tree.name.span, format!("this {} gives no {}", tree.kind.as_str(), scope.as_str()))
    .help("use the variable only where its scope's id is known, or keep a global variable for this tree")
}

struct Reads<'a> {
    uses: Vec<&'a Ident>,
}

impl<'a> Visitor<'a> for Reads<'a> {
    fn named(&mut self, name: &'a Ident, _site: Site) {
        self.uses.push(name);
    }
}
