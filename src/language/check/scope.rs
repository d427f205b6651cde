//! What every check of a tree reads: the file, its blocks by name, the
//! platform it talks to, the samples, and which variables
//! can have a first value.

use std::collections::HashSet;

use rustc_hash::FxHashMap as HashMap;

use crate::language::ast::visit::each_block;
use crate::language::ast::visit::{self, Visitor};
use crate::language::ast::{ApiBlock, Expr, File, Item, Part, Save, Tree, Value, Var};
use crate::language::policy::Platform;

/// The file and what is known of it, for the checks of each tree.
pub struct Scope<'a> {
    pub file: &'a File,
    /// Every api block of every tree, by name, with its tree.
    pub blocks: HashMap<&'a str, Vec<(&'a Tree, &'a ApiBlock)>>,
    /// The chat platform's API: where `{bot_token}` belongs.
    pub platform: Platform,
    pub samples: &'a crate::language::model::Samples,
    /// The custom variables a run can find with a value.
    pub first_values: FirstValues<'a>,
}

impl<'a> Scope<'a> {
    pub(super) fn new(file: &'a File, model: &'a crate::language::model::Model) -> Scope<'a> {
        let mut blocks: HashMap<&str, Vec<_>> = HashMap::default();
        let mut platform = None;
        for item in &file.items {
            match item {
                Item::Platform(p) if platform.is_none() => platform = Platform::parse(&p.url.value),
                Item::Var(_) | Item::Platform(_) | Item::Include(_) | Item::Tree(_) | Item::Failed(..) => {}
            }
        }
        // By the tree that runs them (a subcommand, an autocomplete).
        for tree in file.trees() {
            if let Some(block) = tree.received() {
                blocks.entry(block.name.name.as_str()).or_default().push((tree, block));
            }
            each_block(&tree.body, &mut |block| {
                blocks.entry(block.name.name.as_str()).or_default().push((tree, block));
            });
        }
        Scope {
            file,
            blocks,
            platform: platform.unwrap_or_else(Platform::default_platform),
            samples: &model.samples,
            first_values: FirstValues::of(file),
        }
    }
}

/// Runs every rule on a parsed file and returns the findings, sorted by
/// position. Response paths are checked against the blocks' samples when
/// `samples` can read them.
/// The custom variables of a file that a run can find with a value: those
/// declared with `var`, and those some `save` gives a value without
/// reading them first (`save visits = 0`).
#[derive(Debug, Default)]
pub struct FirstValues<'a> {
    declared: HashSet<&'a str>,
    started: HashSet<&'a str>,
}

impl<'a> FirstValues<'a> {
    pub fn of(file: &'a File) -> FirstValues<'a> {
        struct Saves<'a, 'f>(&'f mut HashSet<&'a str>);
        impl<'a> Visitor<'a> for Saves<'a, '_> {
            fn save(&mut self, s: &'a Save) {
                if !reads(&s.value, &s.name.name) {
                    self.0.insert(&s.name.name);
                }
            }
        }
        let mut first = FirstValues::default();
        for item in &file.items {
            match item {
                Item::Var(v) => {
                    first.declared.insert(&v.name.name);
                }
                Item::Tree(t) => visit::walk_nodes(&mut Saves(&mut first.started), &t.body),
                Item::Failed(b, _) => visit::walk_nodes(&mut Saves(&mut first.started), &b.body),
                Item::Platform(_) | Item::Include(_) => {}
            }
        }
        first
    }

    pub(super) fn has(&self, name: &str) -> bool {
        self.declared.contains(name) || self.started.contains(name)
    }
}

/// Whether `value` reads variable `name`, in a template or a calculation.
fn reads(value: &Value, name: &str) -> bool {
    fn expr(e: &Expr, name: &str) -> bool {
        match e {
            Expr::Var(i) => i.name == name,
            Expr::Value(v) => reads(v, name),
            Expr::Binary(b) => expr(&b.left, name) || expr(&b.right, name),
            Expr::Group(inner, _) => expr(inner, name),
        }
    }
    match value {
        Value::Str(t) => t.parts.iter().any(|p| matches!(p, Part::Var(Var::Named(i)) if i.name == name)),
        Value::Arith(e) => expr(e, name),
        Value::Object(entries, _) => entries.iter().any(|e| reads(&e.value, name)),
        Value::Array(items, _) => items.iter().any(|v| reads(v, name)),
        Value::Var(i) => i.name == name,
        Value::Number(..) | Value::Bool(..) | Value::Null(_) | Value::Ref(_) | Value::Element(_) => false,
    }
}
