//! AST to diagnostics: every static rule, all findings reported together.
//!
//! One file per group of rules; each takes the [`Scope`] it needs and pushes
//! onto one list. Nothing here sends a request or reads the network.

mod arith;
mod components;
mod declarations;
mod guards;
mod lists;
mod loops;
pub mod platform;
pub mod references;
pub mod register;
mod replies;
mod request;
pub mod samples;
mod schedule;
mod scopes;
mod secrets;
mod subcommands;
pub mod url;

use rustc_hash::FxHashMap as HashMap;

use crate::base::diagnostics::Findings;
use crate::language::ast::{each_block, ApiBlock, File, Item, Tree};
use crate::language::policy::Platform;

/// What a whole file declares, shared by the rules.
pub struct Scope<'a> {
    pub file: &'a File,
    /// Every api block of every tree, by name, with its tree.
    pub blocks: HashMap<&'a str, Vec<(&'a Tree, &'a ApiBlock)>>,
    /// The chat platform's API: where `{bot_token}` belongs.
    pub platform: Platform,
    pub samples: &'a crate::language::model::Samples,
    pub model: &'a crate::language::model::Model,
    /// The custom variables a run can find with a value.
    pub first_values: arith::FirstValues<'a>,
}

impl<'a> Scope<'a> {
    fn new(file: &'a File, model: &'a crate::language::model::Model) -> Scope<'a> {
        let mut blocks: HashMap<&str, Vec<_>> = HashMap::default();
        let mut platform = None;
        for item in &file.items {
            match item {
                Item::Platform(p) if platform.is_none() => platform = Platform::parse(&p.url.value),
                Item::Var(_) | Item::Platform(_) | Item::Tree(_) => {}
            }
        }
        // By the tree that runs them (a subcommand, an autocomplete).
        for tree in file.trees() {
            each_block(&tree.body, &mut |block| {
                blocks.entry(block.name.name.as_str()).or_default().push((tree, block));
            });
        }
        Scope {
            file,
            blocks,
            platform: platform.unwrap_or_else(Platform::default_platform),
            samples: &model.samples,
            model,
            first_values: arith::FirstValues::of(file),
        }
    }
}

/// Runs every rule on a parsed file and returns the findings, sorted by
/// position. Response paths are checked against the blocks' samples when
/// `samples` can read them.
pub fn check(file: &File, model: &crate::language::model::Model) -> Findings {
    let scope = Scope::new(file, model);
    let mut out = Findings::new();
    declarations::check(&scope, &mut out);
    platform::check(file, &mut out);
    register::check(file, &mut out);
    guards::check(file, &mut out);
    subcommands::check(file, &mut out);
    scopes::check(file, &mut out);
    components::check(file, &mut out);
    lists::check(file, &mut out);
    schedule::check(file, &mut out);
    // The model holds one entry per tree, in the file's order.
    for (tree, tree_model) in file.trees().zip(&model.trees) {
        request::check_tree(&scope, tree, &mut out);
        arith::check_tree(&scope, tree, &mut out);
        references::check_tree(&scope, tree, tree_model, &mut out);
        secrets::check_tree(&scope, tree, &mut out);
        replies::check_tree(tree, &mut out);
        loops::check_placement(tree, &mut out);
    }
    out
}
