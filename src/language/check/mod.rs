//! AST to diagnostics: every static rule, all findings reported together.
//!
//! One file per group of rules; each takes the [`scope::Scope`] it needs and pushes
//! onto one list. Nothing here sends a request or reads the network.

mod actions;
mod arith;
mod bodies;
mod components;
mod declarations;
mod fields;
mod files;
mod guards;
mod later;
mod layout;
mod lists;
mod loops;
pub(crate) mod platform;
pub(crate) mod references;
pub(crate) mod register;
mod replies;
mod request;
pub(crate) mod samples;
mod schedule;
mod scope;
mod scopes;
mod secrets;
mod subcommands;
mod text;
mod together;
mod translations;
pub(crate) mod url;
mod webhook;

use crate::base::diagnostics::Findings;
use crate::language::ast::File;

/// What a whole file declares, shared by the rules.
pub fn check(file: &File, model: &crate::language::model::Model) -> Findings {
    let scope = scope::Scope::new(file, model);
    let mut out = Findings::new();
    declarations::check(&scope, &mut out);
    platform::check(file, &mut out);
    register::check(file, &mut out);
    guards::check(file, &mut out);
    subcommands::check(file, &mut out);
    scopes::check(file, &mut out);
    components::check(file, &mut out);
    lists::check(file, &mut out);
    together::check(file, &mut out);
    later::check(file, &mut out);
    translations::check(file, &mut out);
    schedule::check(file, &mut out);
    webhook::check(file, &mut out);
    actions::check(file, &mut out);
    bodies::check_file_failed(&scope, file, &mut out);
    // The model holds one entry per tree, in the file's order.
    for (tree, tree_model) in file.trees().zip(&model.trees) {
        request::check_tree(&scope, tree, &mut out);
        arith::check_tree(&scope, tree, &mut out);
        references::check_tree(&scope, tree, tree_model, &mut out);
        secrets::check_tree(&scope, tree, &mut out);
        replies::check_tree(tree, &mut out);
        loops::check_placement(tree, &mut out);
        loops::requests_every_run(tree, &mut out);
    }
    out
}
