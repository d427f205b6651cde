//! Rules on what templates read: response references (which block, whether
//! it has run, the path's form) and named variables.

use rustc_hash::FxHashSet as HashSet;

use super::loops::{self, Frame, Frames};
use super::samples;
use super::scope::Scope;
use crate::base::diagnostics::{did_you_mean, Code, Confidence, Diagnostic, Edit, Findings};
use crate::base::path::{self, Root};
use crate::base::source::Span;
use crate::language::ast::visit::each_block;
use crate::language::ast::visit::{self, Site, Visitor};
use crate::language::ast::{
    ApiBlock, ElementRef, ForNode, Ident, IfNode, LoopSource, Reference, Reply, ReplyItem, Tree, TreeKind, Value,
};
use crate::language::model::{Flow, Origin};
use crate::language::vocab;

struct Walk<'s, 'a> {
    scope: &'s Scope<'a>,
    tree: &'a Tree,
    /// What the model knows of this tree (its variables).
    model: &'a crate::language::model::TreeModel,
    out: &'s mut Findings,
    /// The blocks that have run on every path to the current node.
    flow: Flow<'a>,
    /// The block whose fields are being walked.
    inside: Option<&'a ApiBlock>,
    /// Blocks read with a path into their response (they would gain from a sample).
    read_into: HashSet<&'a str>,
    /// Blocks whose status, in the current branch, may not be a success.
    unsure: HashSet<&'a str>,
    /// This tree's blocks by name (the first, when a name is used twice).
    own_blocks: rustc_hash::FxHashMap<&'a str, &'a ApiBlock>,
    /// This tree's actions with `as NAME`, by name (the first).
    own_actions: rustc_hash::FxHashMap<&'a str, &'a crate::language::ast::Action>,
    /// The loops around the node being walked.
    frames: Frames<'a>,
    /// Per enclosing loop, its literal limit (none: a value's, or none).
    runs: Vec<Option<u64>>,
    /// The names this tree's loops join texts into, with their loops.
    joins: rustc_hash::FxHashMap<&'a str, &'a ForNode>,
    /// How many `failed { … }` branches the node being walked is in (their
    /// failure's variables exist there).
    failing: usize,
    /// The answers' names of the `await`s whose first body is being walked.
    answers: Vec<&'a str>,
    /// The answers' names of all the tree's `await`s.
    tree_answers: HashSet<&'a str>,
}

/// The names the `await`s of `nodes` give their answers.
fn answers_of<'a>(nodes: &'a [crate::language::ast::Node], out: &mut HashSet<&'a str>) {
    use crate::language::ast::Node;
    for n in nodes {
        match n {
            Node::Await(a) => {
                out.insert(&a.name.name);
                a.bodies().for_each(|b| answers_of(&b.body, out));
            }
            Node::Later(l) => answers_of(&l.body.body, out),
            other => other.branches().into_iter().for_each(|b| answers_of(b, out)),
        }
    }
}

/// For `if api_b[status] OP N`: the block, and which branch is the error
/// side, where the response may not have the sample's shape: `(then, else)`.
/// `== 404` makes the `then` branch the error side; `== 200` the `else`.
fn status_test(c: &crate::language::ast::Condition) -> Option<(&str, bool, bool)> {
    use crate::language::ast::CompareOp as Op;
    let (op, _, right) = c.test.as_ref()?;
    let (Value::Ref(r), Value::Number(n, _)) = (&c.left, right) else { return None };
    if r.root() != Some(Root::Status) {
        return None;
    }
    let n: f64 = n.parse().ok()?;
    let ok = (200.0..300.0).contains(&n);
    let (then_error, else_error) = match op {
        Op::Eq => (!ok, ok),
        Op::Ne => (ok, !ok),
        Op::Lt | Op::Le => (false, true),
        Op::Gt | Op::Ge => (true, false),
        Op::Contains | Op::StartsWith | Op::EndsWith => return None,
    };
    Some((r.block.name.as_str(), then_error, else_error))
}

pub fn check_tree<'a>(
    scope: &Scope<'a>,
    tree: &'a Tree,
    model: &'a crate::language::model::TreeModel,
    out: &mut Findings,
) {
    let mut own_blocks = rustc_hash::FxHashMap::default();
    let mut blocks = Vec::new();
    // A webhook's request has run before the tree's first node.
    let received = tree.received();
    if let Some(b) = received {
        own_blocks.insert(b.name.name.as_str(), b);
        blocks.push(b);
    }
    each_block(&tree.body, &mut |b| {
        own_blocks.entry(b.name.name.as_str()).or_insert(b);
        blocks.push(b);
    });
    let mut flow = Flow::new(&blocks);
    if let Some(b) = received {
        flow.block_ran(&b.name.name, b.span.end);
    }
    let mut own_actions = rustc_hash::FxHashMap::default();
    let nodes: &[crate::language::ast::Node] = if tree.parts.actions { &tree.body } else { &[] };
    crate::language::ast::visit::each_action(nodes, &mut |a| {
        if let Some(name) = a.name() {
            flow.also(&name.name);
            own_actions.entry(name.name.as_str()).or_insert(a);
        }
    });
    let mut joins = rustc_hash::FxHashMap::default();
    crate::language::ast::visit::each_loop(&tree.body, &mut |node| {
        if let Some(j) = &node.join {
            flow.also(&j.into.name);
            joins.entry(j.into.name.as_str()).or_insert(node);
        }
    });
    let mut walk = Walk {
        scope,
        tree,
        model,
        out,
        flow,
        inside: None,
        read_into: HashSet::default(),
        unsure: HashSet::default(),
        own_blocks,
        own_actions,
        frames: Frames::default(),
        runs: Vec::new(),
        failing: 0,
        joins,
        answers: Vec::new(),
        tree_answers: HashSet::default(),
    };
    answers_of(&tree.body, &mut walk.tree_answers);
    visit::walk_nodes(&mut walk, &tree.body);
    let read_into = std::mem::take(&mut walk.read_into);
    if scope.samples.enabled() {
        let mut each = |block: &ApiBlock| match block.sample() {
            Some(field) => {
                if let Some(loaded) = samples::sample_of(scope.samples, block) {
                    if let Err(why) = loaded.as_ref() {
                        walk.out.push(samples::unreadable(block, field, why));
                    }
                }
            }
            None if read_into.contains(block.name.name.as_str()) => walk.out.push(samples::no_sample(block)),
            None => {}
        };
        received.into_iter().for_each(&mut each);
        each_block(&tree.body, &mut each);
    }
}

impl<'a> Visitor<'a> for Walk<'_, 'a> {
    fn block(&mut self, block: &'a ApiBlock) {
        self.check_file_parts(block);
        self.inside = Some(block);
        visit::walk_block(self, block);
        self.inside = None;
        self.flow.block_ran(&block.name.name, block.span.end);
        if !self.runs.is_empty() {
            if let Some(runs) = self.runs.iter().try_fold(1u64, |n, r| r.map(|r| n.saturating_mul(r))) {
                loops::too_many_requests(block, runs, self.out);
            }
        }
    }

    /// An action: its values and message, then its answer exists.
    fn action(&mut self, a: &'a crate::language::ast::Action) {
        visit::walk_action(self, a);
        if let Some(name) = a.name() {
            self.flow.block_ran(&name.name, a.span.end);
        }
    }

    /// A loop: its head read before it runs, then its body, which may run
    /// any number of times (what it runs has not run after it); its joined
    /// text exists after it.
    fn for_loop(&mut self, node: &'a ForNode) {
        self.enter_loop(node);
        self.branch(&node.body.body);
        self.leave_loop(node);
    }

    /// A reply's templates; a select's `for r in … { choice … }` reads its
    /// choice's inside its loop.
    fn reply(&mut self, r: &'a Reply) {
        self.reply_items(&r.items);
    }

    /// A form's templates; an input's `for r in … { choice … }` reads its
    /// choice's inside its loop, as a menu's.
    fn form(&mut self, f: &'a crate::language::ast::Form) {
        let texts = f.texts.iter().flat_map(ReplyItem::templates);
        for t in crate::language::ast::setting_templates(&f.settings).chain(texts) {
            self.template(t, Site::Reply);
        }
        for i in &f.inputs {
            for t in crate::language::ast::setting_templates(&i.settings) {
                self.template(t, Site::Reply);
            }
            self.choices(&i.choices);
        }
    }
    /// An `await`'s bodies run in runs of their own (nothing of this one
    /// has run there); in the first, its answer's text has its name.
    fn await_node(&mut self, a: &'a crate::language::ast::AwaitNode) {
        self.template(&a.wait, Site::Condition);
        for (k, body) in std::iter::once(&a.body).chain(&a.timeout).enumerate() {
            self.flow.aside_start(body.span.start);
            if k == 0 {
                self.answers.push(&a.name.name);
            }
            self.branch(&body.body);
            if k == 0 {
                self.answers.pop();
            }
            self.flow.aside_end(body.span.end);
        }
    }

    fn element(&mut self, e: &'a ElementRef, site: Site, in_text: bool) {
        self.check_keys(&e.segments, site);
        // A path no loop runs for reads a custom variable, if it names one.
        if self.frames.find(&e.item.name).is_none() && self.scope.first_values.has(&e.item.name) {
            return super::fields::check_path(self.scope.file, e, self.out);
        }
        self.frames.check_element(e, site, in_text, self.tree, self.out);
    }

    /// What runs when a block fails runs without its response, and ends
    /// the run: after the block, the block has run.
    /// A tree's `failed { … }`: no block is known to have run there.
    fn tree_failed(&mut self, b: &'a crate::language::ast::Branch) {
        self.flow.aside_start(b.span.start);
        self.failing += 1;
        self.branch(&b.body);
        self.failing -= 1;
        self.flow.aside_end(b.span.end);
    }

    fn failed(&mut self, _block: &'a ApiBlock, f: &'a crate::language::ast::Failed) {
        self.flow.chain_start();
        self.flow.branch_start(f.branch.span.start);
        self.failing += 1;
        self.branch(&f.branch.body);
        self.failing -= 1;
        self.flow.branch_end();
        self.flow.chain_end(false, f.branch.span.end);
    }

    /// A block has run after an `if` when it ran in every branch of it (a
    /// chain without a final `else` has an empty one).
    fn if_chain(&mut self, node: &'a IfNode) {
        self.flow.chain_start();
        // A sample records a success: inside a branch that a status test does
        // not show to be one, the block's paths are not checked against it.
        // The else side of a link is every later link and the final `else`.
        let mut unsure_else = Vec::new();
        for link in visit::chain(node) {
            self.flow.branch_start(link.then.span.start);
            self.condition(&link.condition);
            let test = status_test(&link.condition);
            let unsure_then = test.filter(|t| t.1).map(|t| t.0).filter(|b| self.unsure.insert(b));
            self.branch(&link.then.body);
            if let Some(b) = unsure_then {
                self.unsure.remove(b);
            }
            self.flow.branch_end();
            unsure_else.extend(test.filter(|t| t.2).map(|t| t.0).filter(|b| self.unsure.insert(b)));
        }
        let last = visit::final_else(node);
        if let Some(last) = last {
            self.flow.branch_start(last.span.start);
            self.branch(&last.body);
            self.flow.branch_end();
        }
        for b in unsure_else {
            self.unsure.remove(b);
        }
        self.flow.chain_end(last.is_some(), node.span.end);
    }

    fn reference(&mut self, r: &'a Reference, site: Site, in_text: bool) {
        self.check_keys(&r.segments, site);
        self.check_reference(r, site, in_text);
    }

    fn named(&mut self, name: &'a Ident, site: Site) {
        self.check_named(name, site);
    }

    fn save_field(&mut self, f: &'a crate::language::ast::SaveField) {
        self.check_keys(&f.path, Site::Save);
        self.save(&f.save);
    }
}

impl<'a> Walk<'_, 'a> {
    /// A reply's parts (a layout part's own parts within it).
    fn reply_items(&mut self, items: &'a [ReplyItem]) {
        for item in items {
            match item {
                ReplyItem::Component(c) => self.component(c),
                ReplyItem::File(f) => {
                    for t in item.templates() {
                        self.template(t, Site::Reply);
                    }
                    super::bodies::file_source(self.scope, self.tree, &f.source, "a message carries", self.out);
                    self.file_block_ran(&f.source, None);
                }
                ReplyItem::Layout(l) => {
                    let media = l.media.iter().flat_map(|m| {
                        std::iter::once(&m.url).chain(crate::language::ast::setting_templates(&m.settings))
                    });
                    for t in crate::language::ast::setting_templates(&l.settings).chain(media) {
                        self.template(t, Site::Reply);
                    }
                    self.reply_items(&l.items);
                }
                _ => {
                    for t in item.templates() {
                        self.template(t, Site::Reply);
                    }
                }
            }
        }
    }

    /// A component's settings, and its choices (within their loops).
    fn component(&mut self, c: &'a crate::language::ast::Component) {
        for t in crate::language::ast::setting_templates(&c.settings) {
            self.template(t, Site::Reply);
        }
        self.choices(&c.choices);
    }

    /// Choices of a menu or a form's input, each within its loop.
    fn choices(&mut self, choices: &'a [crate::language::ast::MenuChoice]) {
        for choice in choices {
            if let Some(l) = &choice.each {
                self.enter_loop(l);
            }
            for t in [&choice.label, &choice.value]
                .into_iter()
                .chain(crate::language::ast::setting_templates(&choice.settings))
            {
                self.template(t, Site::Reply);
            }
            if let Some(l) = &choice.each {
                self.leave_loop(l);
            }
        }
    }

    /// B153: `file api_x` in a multipart body sends the response of a block
    /// of this tree that has run on every path to here.
    fn check_file_parts(&mut self, block: &'a ApiBlock) {
        use crate::language::ast::{Body, PartValue};
        let Some((Body::Multipart(parts), _)) = block.body() else { return };
        for p in parts {
            let PartValue::File(file) = &p.value else { continue };
            self.file_block_ran(&file.source, Some(block.name.name.as_str()));
        }
    }

    /// B153: a file from `api_x` is the response of another block of this
    /// tree (not `sending`'s own) that has run on every path to here.
    fn file_block_ran(&mut self, source: &crate::language::ast::FileSource, sending: Option<&str>) {
        let crate::language::ast::FileSource::Name(name) = source else { return };
        // A form's upload: an input of a form this handler is given (only
        // an upload's variables have a `_name`).
        if name.name.starts_with("field_") {
            if !self.model.knows(&format!("{}_name", name.name)) {
                let message =
                    format!("`file {}` names no upload of a form this {} is given", name.name, self.tree.kind.as_str());
                let help = "a form's `input NAME { upload }` gives its handler the files as `file field_NAME`";
                self.out.push(Diagnostic::new(Code::BadBody, message).label(name.span, "no files to send").help(help));
            }
            return;
        }
        let Some(b) = name.name.strip_prefix("api_") else { return };
        let (message, help) = if !self.own_blocks.contains_key(b) || Some(b) == sending {
            (
                format!("`file {}` names no other block of this {}", name.name, self.tree.kind.as_str()),
                "a file sends the response of a block that runs before it in the same tree",
            )
        } else if !self.flow.has_run(b) {
            (
                format!("block `{b}` has not run on every path to here"),
                "move the block before this, out of any branch or loop, so its response exists when the file is sent",
            )
        } else {
            return;
        };
        self.out.push(Diagnostic::new(Code::BadBody, message).label(name.span, "no response to send").help(help));
    }

    /// A loop's head is read before it runs; its body may then run any
    /// number of times (what it runs has not run after it).
    fn enter_loop(&mut self, node: &'a ForNode) {
        visit::walk_loop_head(self, node);
        let model = self.model;
        loops::check_names(node, &self.frames, |n| model.knows(n), self.out);
        let limit = loops::literal_limit(node, self.out);
        let (elements, sample) = self.loop_elements(node);
        self.frames.0.push(Frame { node, elements, sample });
        if let Some(order) = &node.order {
            loops::check_order(node, order, &self.frames, self.tree, self.out);
        }
        self.runs.push(limit);
        self.flow.loop_start(node.body.span.start);
    }

    /// The loop ends: its joined text exists after it.
    fn leave_loop(&mut self, node: &'a ForNode) {
        self.flow.loop_end(node.span.end);
        self.frames.0.pop();
        self.runs.pop();
        if let Some(j) = &node.join {
            self.flow.block_ran(&j.into.name, node.span.end);
        }
    }

    /// The elements a sample shows the loop would run over, and which
    /// sample (none when no sample shows them).
    fn loop_elements(&mut self, node: &'a ForNode) -> (Vec<crate::base::data::Data>, Option<String>) {
        match &node.source {
            LoopSource::Ref(r) => {
                let name = r.block.name.as_str();
                let Some(block) = self.own_blocks.get(name).copied() else { return (Vec::new(), None) };
                if r.root() != Some(Root::Response) || self.unsure.contains(name) {
                    return (Vec::new(), None);
                }
                let Some(loaded) = samples::sample_of(self.scope.samples, block) else { return (Vec::new(), None) };
                let Ok(sample) = loaded.as_ref() else { return (Vec::new(), None) };
                let file = block.sample().map(|s| s.value.to_string());
                let note = format!("checked against the sample `{}`", file.as_deref().unwrap_or(""));
                (loops::sample_elements(sample, r, node, &note, self.out), file)
            }
            LoopSource::Element(e) => self.frames.elements_of(&e.item.name, Some(e)),
            LoopSource::Name(n)
                if n.name == "waiting"
                    && self.model.variable("waiting").is_some_and(|v| v.origin != Origin::Custom) =>
            {
                let sample = crate::language::vocab::WAITING_SAMPLE;
                let parsed = crate::base::data::Data::parse(sample.as_bytes()).ok().map(|p| p.data);
                (parsed.into_iter().collect(), Some("{waiting}".to_string()))
            }
            LoopSource::Name(n) => self.frames.elements_of(&n.name, None),
        }
    }

    /// B145: `{NAME}` of a loop's `join … into NAME` read where the loop
    /// has not run on every path.
    fn check_joined(&mut self, name: &Ident, node: &ForNode) {
        let n = name.name.as_str();
        if self.flow.has_run(n) {
            return;
        }
        let (message, help) = if node.span.start > name.span.start {
            (format!("`{{{n}}}` is read before the loop that joins it"), "move the read below the loop")
        } else {
            (
                format!("`{{{n}}}` is joined by a loop that may not have run here"),
                "the loop is in a branch or another loop: read the text there, or move the loop so it runs on every path to here",
            )
        };
        self.out.push(
            Diagnostic::new(Code::ElementOutsideLoop, message)
                .label(name.span, "no text joined yet")
                .related(node.item.span, "the loop joining it")
                .help(help),
        );
    }

    fn check_named(&mut self, name: &Ident, site: Site) {
        let n = name.name.as_str();
        if self.frames.knows(n) || self.answers.contains(&n) {
            return;
        }
        if site == Site::Loop {
            // `for x in NAME`: NAME must be an enclosing loop's element or
            // a custom variable (a list the bot keeps).
            let custom = matches!(self.model.variable(n), Some(v) if v.origin == Origin::Custom) || n == "waiting";
            if !custom {
                self.out.push(loops::source_outside_loop(name));
            }
            return;
        }
        if let Some(node) = self.joins.get(n).copied() {
            self.check_joined(name, node);
            return;
        }
        if self.failing > 0 && crate::language::vocab::FAILURE_VARIABLES.iter().any(|(v, _)| *v == n) {
            return;
        }
        if self.model.knows(n) {
            return;
        }
        // An option declared beside this subcommand is B431 already: the
        // one error says where it goes.
        if n.strip_prefix("option_").is_some_and(|o| self.beside_subcommands(o)) {
            return;
        }
        let diag = self.unknown(name, site);
        self.out.push(diag);
    }

    /// Whether the command this subcommand (or group) is in declares
    /// option `option` beside its subcommands.
    fn beside_subcommands(&self, option: &str) -> bool {
        use crate::language::ast::Node;
        let span = self.tree.span;
        let within = |body: &[Node]| body.iter().any(|n| matches!(n, Node::Sub(s) if s.tree.span == span));
        self.scope.file.every_level().into_iter().any(|(parent, _)| {
            let holds =
                within(&parent.body) || parent.body.iter().any(|n| matches!(n, Node::Sub(g) if within(&g.tree.body)));
            holds && parent.options().any(|o| o.name.name == option)
        })
    }

    /// The variables whose values are keys of a path (`{votes[{user_id}]}`)
    /// exist where the path is read.
    fn check_keys(&mut self, segments: &[crate::language::ast::Segment], site: Site) {
        for seg in segments {
            let Some(name) = path::key_variable(&seg.text) else { continue };
            let span = Span::new(seg.span.start as usize + 1, seg.span.end as usize - 1);
            self.check_named(&Ident { name: name.into(), span }, site);
        }
    }

    /// B115 for `{NAME}`, with the help that fits what it may be.
    fn unknown(&self, name: &Ident, site: Site) -> Diagnostic {
        let n = name.name.as_str();
        let diag = Diagnostic::new(Code::UnknownVariable, format!("unknown variable `{{{n}}}`"))
            .label(name.span, "not defined here");
        let candidates =
            self.model.variables.iter().map(|v| v.name.as_str()).chain(self.model.custom.iter().map(|c| &**c));
        let suggestion = did_you_mean(n, candidates);
        let capitals = n.bytes().any(|b| b.is_ascii_uppercase())
            && n.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
        let lower = n.to_ascii_lowercase();
        let key_like = ["key", "token", "secret", "password", "passwd"].iter().any(|w| lower.contains(w));
        if (capitals || key_like) && suggestion.is_none() {
            // `{WEATHER_KEY}`: a secret written as a variable.
            let slot = n.to_ascii_uppercase();
            let braces = Span::new(name.span.start as usize - 1, name.span.end as usize + 1);
            // In a header, in capitals, it can only be the key: certain.
            let confidence = if capitals && site == Site::Header { Confidence::Certain } else { Confidence::Maybe };
            diag.help(format!(
                "a secret is written as a slot, `<{slot}>`, and filled at run time (`BLKC_SECRET_{slot}` or \
                 `--secrets FILE`), never kept in the file; braces are for variables"
            ))
            .suggest_edits(
                format!("write the slot `<{slot}>`"),
                vec![Edit { span: braces, replacement: format!("<{slot}>") }],
                confidence,
            )
        } else if self.tree_answers.contains(n) {
            diag.help(format!(
                "`{{{n}}}` is the member's answer to an `await`: it exists in that `await`'s first block only"
            ))
        } else if let Some(block) = n.strip_prefix("api_").filter(|b| self.scope.blocks.contains_key(b)) {
            diag.help(format!(
                "a response is read with a path: `{{api_{block}[response]}}` or `{{api_{block}[response.key]}}`"
            ))
        } else if let Some(s) = suggestion {
            diag.help(format!("did you mean `{{{s}}}`?")).fix(format!("write `{s}`"), name.span, s)
        } else if let Some(option) = n.strip_prefix("option_") {
            match self.tree.kind {
                TreeKind::Command => diag.help(format!("declare the option in this command: `option {option} \"…\"`")),
                TreeKind::Event => diag.help("events have no options; use the event's trigger variables"),
                TreeKind::Handler => diag.help("handlers have no options; a form's inputs come as `{field_<input>}`"),
                TreeKind::Autocomplete => diag.help(format!(
                    "an autocomplete tree reads its command's options: declare `option {option} \"…\"` in the command"
                )),
            }
        } else if self.tree.kind != TreeKind::Handler && (matches!(n, "value" | "values") || n.starts_with("field_")) {
            diag.help(format!(
                "`{{{n}}}` is given to a `handler`, by the button, menu or form that runs it: read it in `handler NAME {{ … }}`, not in {} `{}`",
                self.tree.kind.as_str(),
                self.tree.name.name
            ))
        } else if let Some(kind) = vocab::EVENTS.iter().find(|e| e.vars.contains(&n)).map(|e| e.kind) {
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
        }
    }

    /// A reference to a block of this tree: walked through its sample; its
    /// `items` only when it follows pages.
    fn check_against_block(&mut self, r: &'a Reference, block: &'a ApiBlock, site: Site, in_text: bool) {
        let name = r.block.name.as_str();
        if !r.segments.is_empty() && r.root() == Some(Root::Response) {
            self.read_into.insert(block.name.name.as_str());
        }
        if r.root() == Some(Root::Items) && block.pages().is_none() {
            self.out.push(no_pages(r, block));
        }
        if r.root() == Some(Root::Headers) && self.scope.samples.enabled() {
            let recorded = block.sample().and_then(|s| self.scope.samples.headers(&s.value));
            if let (Some(recorded), [name]) = (recorded, r.segments.as_slice()) {
                samples::check_header(block, &recorded, name, self.out);
            }
        }
        if let Some(loaded) = samples::sample_of(self.scope.samples, block).filter(|_| !self.unsure.contains(name)) {
            if let Ok(sample) = loaded.as_ref() {
                samples::check_path(block, sample, r, in_text.then_some(site), self.out);
            }
        }
    }

    /// An action of this tree named `name` that has not run where `r`
    /// reads its answer (said, B113); whether `name` is such an action.
    fn action_not_run(&mut self, r: &'a Reference, name: &str) -> bool {
        let Some(action) = self.own_actions.get(name).copied() else { return false };
        let written = &action.verb.name;
        self.out.push(
            Diagnostic::new(Code::NotRunBefore, format!("action `{name}` may not have run when this is read"))
                .label(r.span, "read here")
                .related(action.span, format!("the `{written}` named `{name}`"))
                .help(format!(
                    "its answer exists once it has run on every path to here: read `api_{name}[…]` after it, in the same branch"
                )),
        );
        true
    }

    fn check_reference(&mut self, r: &'a Reference, site: Site, in_text: bool) {
        check_path(r, self.out);
        let name = r.block.name.as_str();
        let defs = self.scope.blocks.get(name).map(Vec::as_slice).unwrap_or(&[]);
        let here = self.own_blocks.get(name).copied();
        if let Some(block) = here {
            self.check_against_block(r, block, site, in_text);
        }
        if self.flow.has_run(name) {
            return;
        }
        if here.is_none() && self.action_not_run(r, name) {
            return;
        }
        if let Some(block) = here {
            let diag = if self.inside.is_some_and(|b| std::ptr::eq(b, block)) {
                Diagnostic::new(Code::NotRunBefore, format!("block `{name}` reads its own response"))
                    .label(r.span, "read while the request is being built")
                    .help("a block's response exists only after its request is sent; read it in a later node")
            } else {
                let help = if block.span.start > r.span.start {
                    format!("move block `{name}` above this node: a response exists only once its block has run")
                } else {
                    format!(
                        "block `{name}` is inside a branch, so it runs only when that branch does: read its response \
                         inside that branch, or move the block above the `if` so it runs on every path"
                    )
                };
                Diagnostic::new(Code::NotRunBefore, format!("block `{name}` may not have run when this is read"))
                    .label(r.span, "read here")
                    .related(block.name.span, "the block is defined here")
                    .help(help)
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
        each_block(&self.tree.body, &mut |b| here.push(b.name.name.as_str()));
        let suggestion = did_you_mean(name, here.iter().copied());
        let help = match suggestion {
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
                .help(help)
                .maybe_fixes(suggestion.map(|s| (format!("write `api_{s}`"), r.block.span, s.to_string()))),
        );
    }
}

/// A path whose first segment is not a root: `response][0][temp` (a
/// bracket per level), a misspelled root, or `response` left out.
fn root_mistake(r: &Reference) -> Diagnostic {
    let root = r.root.name.as_str();
    let block = &r.block.name;
    let whole = r.root.span.to(r.segments.last().map_or(r.root.span, |s| s.span));
    let written = r.path_text();
    if root.contains("][") {
        let dotted = written.replace("][", ".");
        if path::root(dotted.split('.').next().unwrap_or("")).is_some() {
            return Diagnostic::new(
                Code::MalformedPath,
                "each level of a path is written with a dot, in one pair of brackets",
            )
            .label(whole, "a bracket for every level")
            .help(format!("write `api_{block}[{dotted}]`"))
            .fix(format!("write `{dotted}`"), whole, dotted);
        }
    }
    let diag = Diagnostic::new(Code::MalformedPath, format!("a response path starts with `response`, not `{root}`"))
        .label(r.root.span, "expected `response`, `status` or `headers`");
    match did_you_mean(root, path::ROOTS) {
        Some(s) => diag.help(format!("did you mean `{s}`?")).fix(format!("write `{s}`"), r.root.span, s),
        None if root.is_empty() => {
            diag.help(format!("a path starts with `response`, like `api_{block}[response.key]`"))
        }
        None => {
            let fixed = format!("response.{written}");
            diag.help(format!("the response's fields come after `response.`: `api_{block}[{fixed}]`")).fix(
                "add `response.`",
                Span::new(r.root.span.start as usize, r.root.span.start as usize),
                "response.",
            )
        }
    }
}

/// B157: `api_x[items…]` of a block without `pages`.
fn no_pages(r: &Reference, block: &ApiBlock) -> Diagnostic {
    let name = r.block.name.as_str();
    Diagnostic::new(Code::BadPages, format!("block `{name}` has no `pages`: it has no items"))
        .label(r.root.span, "read here")
        .related(block.name.span, "the block")
        .help(format!(
            "`items` are the items of every page a block follows; give block `{name}` a `pages {{ items response.… }}`, or read `api_{name}[response…]`"
        ))
}

fn reference_text(r: &Reference) -> String {
    format!("api_{}[{}]", r.block.name, r.path_text())
}

/// The form of a path: `response` then one segment per level, or `status`
/// (the rules are [`path::root`] and [`path::check_segment`]).
fn check_path(r: &Reference, out: &mut Findings) {
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
        Some(Root::Items) => {}
        Some(Root::Headers) => {
            let whole = r.segments.first().map(|f| f.span.to(r.segments.last().map_or(f.span, |l| l.span)));
            let name: Vec<&str> = r.segments.iter().map(|s| s.text.as_str()).collect();
            let token = name.len() == 1
                && !name[0].is_empty()
                && name[0].chars().all(|c| c.is_ascii_alphanumeric() || "!#$%&'*+-^_`|~".contains(c));
            if !token {
                out.push(
                    Diagnostic::new(Code::MalformedPath, "`headers` is read by one header name")
                        .label(whole.unwrap_or(r.root.span), "not one header name")
                        .help(format!(
                            "write `api_{}[headers.NAME]`, like `headers.x-ratelimit-remaining` (names in any case)",
                            r.block.name
                        )),
                );
            }
            return;
        }
        None => {
            out.push(root_mistake(r));
            return;
        }
    }
    for (i, seg) in r.segments.iter().enumerate() {
        if let Err(e) = path::check_key(&seg.text) {
            let parent = path::display(r.segments[..i].iter().map(|s| s.text.as_str()));
            let fix = match &e {
                path::SegmentError::Brackets { key, index } => Some(format!("{key}.{index}")),
                _ => None,
            };
            let (message, label, help) = e.text(&seg.text, &parent);
            let mut diag = Diagnostic::new(Code::MalformedPath, message).label(seg.span, label).help(help);
            if let Some(fix) = fix {
                diag = diag.fix(format!("write `{fix}`"), seg.span, fix);
            }
            out.push(diag);
        }
    }
}
