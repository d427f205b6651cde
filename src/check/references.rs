//! Rules on what templates read: response references (which block, whether
//! it has run, the path's form) and named variables.

use rustc_hash::FxHashSet as HashSet;

use super::{samples, Scope};
use crate::ast::{ApiBlock, Else, IfNode, Node, Part, Reference, Save, Template, Tree, TreeKind, Value, Var};
use crate::diagnostics::{did_you_mean, Code, Diagnostic};
use crate::path::{self, Root};
use crate::vocab;

/// Calls `f` on every `save` of a node list, in every branch.
pub fn each_save<'a>(nodes: &'a [Node], f: &mut impl FnMut(&'a Save)) {
    for node in nodes {
        match node {
            Node::Save(s) => f(s),
            Node::If(i) => {
                let mut next: Option<&IfNode> = Some(i);
                while let Some(node) = next {
                    each_save(&node.then.body, f);
                    next = match &node.otherwise {
                        Some(Else::If(i)) => Some(i),
                        Some(Else::Branch(b)) => {
                            each_save(&b.body, f);
                            None
                        }
                        None => None,
                    };
                }
            }
            _ => {}
        }
    }
}

/// Calls `f` on every variable of a template.
pub fn template_vars<'a>(t: &'a Template, f: &mut impl FnMut(&'a Var)) {
    for part in &t.parts {
        if let Part::Var(v) = part {
            f(v);
        }
    }
}

/// Calls `f` on every template of a value, and `r` on every unquoted reference.
pub fn value_parts<'a>(v: &'a Value, t: &mut impl FnMut(&'a Template), r: &mut impl FnMut(&'a Reference)) {
    match v {
        Value::Str(s) => t(s),
        Value::Ref(re) => r(re),
        Value::Object(entries, _) => entries.iter().for_each(|e| value_parts(&e.value, t, r)),
        Value::Array(items, _) => items.iter().for_each(|i| value_parts(i, t, r)),
        Value::Number(..) | Value::Bool(..) | Value::Null(_) => {}
    }
}

/// Calls `f` on every template of a block's fields.
pub fn block_templates<'a>(block: &'a ApiBlock, f: &mut impl FnMut(&'a Template), r: &mut impl FnMut(&'a Reference)) {
    if let Some(url) = block.url() {
        f(url);
    }
    block.params().iter().for_each(|p| f(&p.value));
    block.headers().iter().for_each(|h| f(&h.value));
    if let Some((entries, _)) = block.body() {
        entries.iter().for_each(|e| value_parts(&e.value, f, r));
    }
}

struct Walk<'s, 'a> {
    scope: &'s Scope<'a>,
    tree: &'a Tree,
    variables: Vec<&'a str>,
    out: &'s mut Vec<Diagnostic>,
    /// Blocks read with a path into their response (they would gain from a sample).
    read_into: HashSet<&'a str>,
    /// Blocks whose status, in the current branch, may not be a success.
    unsure: HashSet<&'a str>,
    /// This tree's blocks by name (the first, when a name is used twice).
    own_blocks: rustc_hash::FxHashMap<&'a str, &'a ApiBlock>,
}

/// For `if api_b[status] OP N`: the block, and which branch is the error
/// side, where the response may not have the sample's shape: `(then, else)`.
/// `== 404` makes the `then` branch the error side; `== 200` the `else`.
fn status_test(c: &crate::ast::Condition) -> Option<(&str, bool, bool)> {
    use crate::ast::CompareOp as Op;
    let (op, _, right) = c.test.as_ref()?;
    let (Value::Ref(r), Value::Number(n, _)) = (&c.left, right) else { return None };
    if r.root.name != "status" {
        return None;
    }
    let n: f64 = n.parse().ok()?;
    let ok = (200.0..300.0).contains(&n);
    let (then_error, else_error) = match op {
        Op::Eq => (!ok, ok),
        Op::Ne => (ok, !ok),
        Op::Lt | Op::Le => (false, true),
        Op::Gt | Op::Ge => (true, false),
        Op::Contains => return None,
    };
    Some((r.block.name.as_str(), then_error, else_error))
}

pub fn check_tree(scope: &Scope<'_>, tree: &Tree, out: &mut Vec<Diagnostic>) {
    let options: Vec<&str> = tree
        .body
        .iter()
        .filter_map(|n| match n {
            Node::Option(o) => Some(o.name.name.as_str()),
            _ => None,
        })
        .collect();
    let mut variables = scope.variables_of(tree);
    let option_vars: Vec<String> = options.iter().map(|o| format!("option_{o}")).collect();
    variables.sort_unstable();
    let mut own_blocks = rustc_hash::FxHashMap::default();
    crate::ast::each_block(&tree.body, &mut |b| {
        own_blocks.entry(b.name.name.as_str()).or_insert(b);
    });
    let mut walk =
        Walk { scope, tree, variables, out, read_into: HashSet::default(), unsure: HashSet::default(), own_blocks };
    let option_refs: Vec<&str> = option_vars.iter().map(String::as_str).collect();
    walk.nodes(&tree.body, &mut HashSet::default(), &option_refs);
    let read_into = std::mem::take(&mut walk.read_into);
    if scope.samples.enabled() {
        crate::ast::each_block(&tree.body, &mut |block| match block.sample() {
            Some(field) => {
                if let Some(loaded) = samples::sample_of(scope.samples, block) {
                    if let Err(why) = loaded.as_ref() {
                        walk.out.push(samples::unreadable(block, field, why));
                    }
                }
            }
            None if read_into.contains(block.name.name.as_str()) => walk.out.push(samples::no_sample(block)),
            None => {}
        });
    }
}

impl<'a> Walk<'_, 'a> {
    /// Walks nodes in order; `ran` holds the blocks that have run on every
    /// path to the current node.
    fn nodes(&mut self, nodes: &'a [Node], ran: &mut HashSet<&'a str>, option_vars: &[&str]) {
        for node in nodes {
            match node {
                Node::Api(block) => {
                    let mut templates = Vec::new();
                    let mut refs = Vec::new();
                    block_templates(block, &mut |t| templates.push(t), &mut |r| refs.push(r));
                    for t in templates {
                        self.template(t, ran, option_vars, Some(block));
                    }
                    for r in refs {
                        self.reference(r, ran, Some(block), false);
                    }
                    ran.insert(block.name.name.as_str());
                }
                Node::Reply(reply) => self.template(&reply.text, ran, option_vars, None),
                Node::Save(save) => self.value(&save.value, ran, option_vars),
                Node::Option(_) => {}
                Node::If(node) => self.if_node(node, ran, option_vars),
            }
        }
    }

    fn if_node(&mut self, node: &'a IfNode, ran: &mut HashSet<&'a str>, option_vars: &[&str]) {
        self.value(&node.condition.left, ran, option_vars);
        if let Some((_, _, right)) = &node.condition.test {
            self.value(right, ran, option_vars);
        }
        // A sample records a success: inside a branch that a status test does
        // not show to be one, the block's paths are not checked against it.
        let status_test = status_test(&node.condition);
        let unsure_then = status_test.filter(|t| t.1).map(|t| t.0);
        let unsure_else = status_test.filter(|t| t.2).map(|t| t.0);
        let mut then = ran.clone();
        let added = unsure_then.is_some_and(|b| self.unsure.insert(b));
        self.nodes(&node.then.body, &mut then, option_vars);
        if added {
            self.unsure.remove(unsure_then.unwrap_or_default());
        }
        let mut otherwise = ran.clone();
        let added = unsure_else.is_some_and(|b| self.unsure.insert(b));
        match &node.otherwise {
            Some(Else::If(i)) => self.if_node(i, &mut otherwise, option_vars),
            Some(Else::Branch(b)) => self.nodes(&b.body, &mut otherwise, option_vars),
            None => {}
        }
        if added {
            self.unsure.remove(unsure_else.unwrap_or_default());
        }
        // A block has run after the `if` when it ran on both sides.
        ran.extend(then.intersection(&otherwise).copied().collect::<Vec<_>>());
    }

    fn value(&mut self, value: &'a Value, ran: &HashSet<&'a str>, option_vars: &[&str]) {
        let mut templates = Vec::new();
        let mut refs = Vec::new();
        value_parts(value, &mut |t| templates.push(t), &mut |r| refs.push(r));
        for t in templates {
            self.template(t, ran, option_vars, None);
        }
        for r in refs {
            self.reference(r, ran, None, false);
        }
    }

    fn template(&mut self, t: &'a Template, ran: &HashSet<&'a str>, option_vars: &[&str], inside: Option<&ApiBlock>) {
        let mut vars = Vec::new();
        template_vars(t, &mut |v| vars.push(v));
        for var in vars {
            match var {
                Var::Ref(r) => self.reference(r, ran, inside, true),
                Var::Named(name) => self.named(name, option_vars),
                Var::BotToken(_) => {}
            }
        }
    }

    fn named(&mut self, name: &crate::ast::Ident, option_vars: &[&str]) {
        let n = name.name.as_str();
        if self.variables.binary_search(&n).is_ok() || option_vars.contains(&n) {
            return;
        }
        let mut diag = Diagnostic::new(Code::UnknownVariable, format!("unknown variable `{{{n}}}`"))
            .label(name.span, "not defined here");
        let candidates = self.variables.iter().copied().chain(option_vars.iter().copied()).chain(["bot_token"]);
        let suggestion = did_you_mean(n, candidates);
        diag = if let Some(block) = n.strip_prefix("api_").filter(|b| self.scope.blocks.contains_key(b)) {
            diag.help(format!(
                "a response is read with a path: `{{api_{block}[response]}}` or `{{api_{block}[response.key]}}`"
            ))
        } else if let Some(s) = suggestion {
            diag.help(format!("did you mean `{{{s}}}`?"))
        } else if let Some(option) = n.strip_prefix("option_") {
            match self.tree.kind {
                TreeKind::Command => diag.help(format!("declare the option in this command: `option {option} \"…\"`")),
                TreeKind::Event => diag.help("events have no options; use the event's trigger variables"),
            }
        } else if let Some((kind, _)) = vocab::EVENTS.iter().find(|(_, vars)| vars.contains(&n)) {
            diag.help(format!(
                "`{{{n}}}` is provided by `{kind}` events, not by {} `{}`",
                self.tree.kind.as_str(),
                self.tree.name.name
            ))
        } else {
            diag.help(format!(
                "declare a custom variable with `var {n}`, or use one of this {}'s variables (see `blkc explain B115`)",
                self.tree.kind.as_str()
            ))
        };
        self.out.push(diag);
    }

    fn reference(&mut self, r: &'a Reference, ran: &HashSet<&'a str>, inside: Option<&ApiBlock>, in_text: bool) {
        check_path(r, self.out);
        let name = r.block.name.as_str();
        let defs = self.scope.blocks.get(name).map(Vec::as_slice).unwrap_or(&[]);
        let here = self.own_blocks.get(name).copied();
        if let Some(block) = here {
            if !r.segments.is_empty() && r.root.name == "response" {
                self.read_into.insert(block.name.name.as_str());
            }
            if let Some(loaded) = samples::sample_of(self.scope.samples, block).filter(|_| !self.unsure.contains(name))
            {
                if let Ok(sample) = loaded.as_ref() {
                    samples::check_path(block, sample, r, in_text, self.out);
                }
            }
        }
        if ran.contains(name) {
            return;
        }
        if let Some(block) = here {
            let diag = if inside.is_some_and(|b| std::ptr::eq(b, block)) {
                Diagnostic::new(Code::NotRunBefore, format!("block `{name}` reads its own response"))
                    .label(r.span, "read while the request is being built")
                    .help("a block's response exists only after its request is sent; read it in a later node")
            } else {
                Diagnostic::new(Code::NotRunBefore, format!("block `{name}` may not have run when this is read"))
                    .label(r.span, "read here")
                    .related(block.name.span, "the block is defined here")
                    .help(format!(
                        "move block `{name}` before this node, outside any branch, or into every branch that leads here"
                    ))
            };
            self.out.push(diag);
            return;
        }
        if let Some((tree, block)) = defs.first() {
            self.out.push(
                Diagnostic::new(
                    Code::CrossTreeReference,
                    format!("block `{name}` belongs to {} `{}`", tree.kind.as_str(), tree.name.name),
                )
                .label(r.span, format!("read in {} `{}`", self.tree.kind.as_str(), self.tree.name.name))
                .related(block.name.span, "the block is defined here")
                .help(format!(
                    "response data never crosses commands or events; keep what you need with `save my_value = {}` in {} `{}` and read `{{my_value}}` here",
                    reference_text(r),
                    tree.kind.as_str(),
                    tree.name.name
                )),
            );
            return;
        }
        let mut here = Vec::new();
        crate::ast::each_block(&self.tree.body, &mut |b| here.push(b.name.name.as_str()));
        let help = match did_you_mean(name, here.iter().copied()) {
            Some(s) => format!("did you mean `api_{s}`?"),
            None if here.is_empty() => {
                format!("this {} has no api blocks", self.tree.kind.as_str())
            }
            None => format!(
                "the blocks of this {} are {}",
                self.tree.kind.as_str(),
                here.iter().map(|b| format!("`{b}`")).collect::<Vec<_>>().join(", ")
            ),
        };
        self.out.push(
            Diagnostic::new(Code::UnknownBlock, format!("no block named `{name}`"))
                .label(r.block.span, "unknown block")
                .help(help),
        );
    }
}

fn reference_text(r: &Reference) -> String {
    format!("api_{}[{}]", r.block.name, r.path_text())
}

/// The form of a path: `response` then one segment per level, or `status`
/// (the rules are [`path::root`] and [`path::check_segment`]).
fn check_path(r: &Reference, out: &mut Vec<Diagnostic>) {
    let root = r.root.name.as_str();
    match path::root(root) {
        Some(Root::Response) => {}
        Some(Root::Status) => {
            if let Some(first) = r.segments.first() {
                let last = r.segments.last().map_or(first.span, |s| s.span);
                out.push(
                    Diagnostic::new(Code::MalformedPath, "`status` has no fields")
                        .label(first.span.to(last), "nothing to read here")
                        .help(format!("write `api_{}[status]` for the status code", r.block.name)),
                );
            }
            return;
        }
        None => {
            let help = match did_you_mean(root, path::ROOTS) {
                Some(s) => format!("did you mean `{s}`?"),
                None => format!(
                    "a path starts with `response`, like `api_{}[response.{}]`",
                    r.block.name,
                    if root.is_empty() { "key" } else { root }
                ),
            };
            out.push(
                Diagnostic::new(Code::MalformedPath, format!("a response path starts with `response`, not `{root}`"))
                    .label(r.root.span, "expected `response` or `status`")
                    .help(help),
            );
            return;
        }
    }
    for (i, seg) in r.segments.iter().enumerate() {
        if let Err(e) = path::check_segment(&seg.text) {
            let parent = path::display(r.segments[..i].iter().map(|s| s.text.as_str()));
            let (message, label, help) = e.text(&seg.text, &parent);
            out.push(Diagnostic::new(Code::MalformedPath, message).label(seg.span, label).help(help));
        }
    }
}

/// Calls `f` on every response reference of a node list, in every branch.
pub fn each_reference<'a>(nodes: &'a [Node], f: &mut impl FnMut(&'a Reference)) {
    let template = |t: &'a Template, f: &mut dyn FnMut(&'a Reference)| {
        template_vars(t, &mut |v| {
            if let Var::Ref(r) = v {
                f(r);
            }
        })
    };
    for node in nodes {
        match node {
            Node::Api(b) => {
                let mut templates = Vec::new();
                block_templates(b, &mut |t| templates.push(t), &mut |r| f(r));
                templates.into_iter().for_each(|t| template(t, f));
            }
            Node::Reply(r) => template(&r.text, f),
            Node::Save(s) => {
                let mut templates = Vec::new();
                value_parts(&s.value, &mut |t| templates.push(t), &mut |r| f(r));
                templates.into_iter().for_each(|t| template(t, f));
            }
            Node::If(i) => {
                let mut next: Option<&'a IfNode> = Some(i);
                while let Some(n) = next {
                    let mut templates = Vec::new();
                    value_parts(&n.condition.left, &mut |t| templates.push(t), &mut |r| f(r));
                    if let Some((_, _, right)) = &n.condition.test {
                        value_parts(right, &mut |t| templates.push(t), &mut |r| f(r));
                    }
                    templates.into_iter().for_each(|t| template(t, f));
                    each_reference(&n.then.body, f);
                    next = match &n.otherwise {
                        Some(Else::If(e)) => Some(e),
                        Some(Else::Branch(b)) => {
                            each_reference(&b.body, f);
                            None
                        }
                        None => None,
                    };
                }
            }
            Node::Option(_) => {}
        }
    }
}
