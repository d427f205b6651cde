//! Walking the AST: the one place that knows where templates, values and
//! references sit in a tree. A rule implements [`Visitor`] for the parts it
//! cares about; the `walk_*` functions visit the rest in source order.
//!
//! An `else if` chain is walked as a loop, never by recursion, so a chain
//! of any length takes no stack.

use super::*;
use crate::language::policy::Place;

/// Where a template or value sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Site {
    Url,
    Param,
    Header,
    Body,
    Reply,
    Save,
    Condition,
    /// A loop's source (its limit is read as a condition's value is).
    Loop,
    /// What an action acts on: an id, a mention or a name, sent to the
    /// platform in its route or body (an action's texts are `Reply`: a
    /// reason is shown in the server's audit log).
    Action,
}

impl Site {
    /// The place in a request, for a block's fields.
    pub fn request_place(self) -> Option<Place> {
        match self {
            Site::Url => Some(Place::Url),
            Site::Param => Some(Place::Param),
            Site::Header => Some(Place::Header),
            Site::Body => Some(Place::Body),
            Site::Reply | Site::Save | Site::Condition | Site::Loop | Site::Action => None,
        }
    }
}

/// Every method visits its part and, by default, walks into it.
pub trait Visitor<'a> {
    fn block(&mut self, b: &'a ApiBlock) {
        walk_block(self, b);
    }
    /// A block's `failed { … }`: walked before the block itself (its
    /// response does not exist there).
    fn failed(&mut self, _block: &'a ApiBlock, f: &'a Failed) {
        self.branch(&f.branch.body);
    }
    /// A tree's `failed { … }`: runs after a step failed, wherever.
    fn tree_failed(&mut self, b: &'a Branch) {
        self.branch(&b.body);
    }
    fn reply(&mut self, r: &'a Reply) {
        for t in r.templates() {
            self.template(t, Site::Reply);
        }
    }
    /// A form's texts read as a reply's: shown to the user.
    fn form(&mut self, f: &'a Form) {
        for t in f.templates() {
            self.template(t, Site::Reply);
        }
    }
    fn save(&mut self, s: &'a Save) {
        self.value(&s.value, Site::Save);
    }
    /// An action: its values, then its message (read as a reply's).
    fn action(&mut self, a: &'a Action) {
        walk_action(self, a);
    }
    fn option(&mut self, _option: &'a OptionDecl) {}
    /// An `if` with its whole `else if … else` chain.
    fn if_chain(&mut self, node: &'a IfNode) {
        walk_if_chain(self, node);
    }
    fn condition(&mut self, c: &'a Condition) {
        walk_condition(self, c);
    }
    /// A `for` loop: its source, limit and join, then its body.
    fn for_loop(&mut self, node: &'a ForNode) {
        walk_for(self, node);
    }
    /// A `text "…"` piece of a loop's join: read as a reply's text.
    fn text_piece(&mut self, t: &'a Template, _span: Span) {
        self.template(t, Site::Reply);
    }
    fn stop(&mut self, _span: Span) {}
    /// A subcommand's or a group's body (a tree of its own: only a walk of
    /// a whole command, or of one the checker refuses, meets it).
    fn sub(&mut self, s: &'a Sub) {
        self.branch(&s.tree.body);
    }
    /// An autocomplete tree's `choice`: its texts read as a reply's.
    fn choice(&mut self, c: &'a ChoiceNode) {
        self.template(&c.name, Site::Reply);
        self.template(&c.value, Site::Reply);
    }
    /// The nodes of a branch (a `then`, an `else`, a loop's body).
    fn branch(&mut self, nodes: &'a [Node]) {
        walk_nodes(self, nodes);
    }
    fn value(&mut self, v: &'a Value, site: Site) {
        walk_value(self, v, site);
    }
    fn template(&mut self, t: &'a Template, site: Site) {
        walk_template(self, t, site);
    }
    /// A response reference; `in_text` when written inside a string.
    fn reference(&mut self, _r: &'a Reference, _site: Site, _in_text: bool) {}
    /// A path into a loop's element; `in_text` when written inside a string.
    fn element(&mut self, _e: &'a ElementRef, _site: Site, _in_text: bool) {}
    /// A trigger, option or custom variable (or a loop's name).
    fn named(&mut self, _name: &'a Ident, _site: Site) {}
    fn bot_token(&mut self, _span: Span, _site: Site) {}
    fn secret(&mut self, _slot: &'a Ident, _site: Site) {}
    /// `await message "30s" as NAME { … } timeout { … }`: its wait, then
    /// its bodies (`{NAME}` is the answer's text in the first).
    fn await_node(&mut self, a: &'a crate::language::ast::AwaitNode) {
        self.template(&a.wait, Site::Condition);
        self.branch(&a.body.body);
        if let Some(t) = &a.timeout {
            self.branch(&t.body);
        }
    }
    /// `save NAME[path] = …`: a save of the variable, by default.
    fn save_field(&mut self, f: &'a crate::language::ast::SaveField) {
        self.save(&f.save);
    }
}

pub fn walk_nodes<'a, V: Visitor<'a> + ?Sized>(v: &mut V, nodes: &'a [Node]) {
    for node in nodes {
        match node {
            Node::Api(b) => {
                // What runs when the block fails runs without its response:
                // walked before the block has run.
                if let Some(f) = b.failed() {
                    v.failed(b, f);
                }
                v.block(b)
            }
            Node::Reply(r) => v.reply(r),
            Node::Form(f) => v.form(f),
            Node::Save(s) => v.save(s),
            Node::SaveField(f) => v.save_field(f),
            Node::Option(o) => v.option(o),
            Node::If(i) => v.if_chain(i),
            Node::For(f) => v.for_loop(f),
            Node::Text(t, span) => v.text_piece(t, *span),
            Node::Stop(span) => v.stop(*span),
            Node::Failed(b, _) => v.tree_failed(b),
            Node::Sub(s) => v.sub(s),
            Node::Choice(c) => v.choice(c),
            Node::Action(a) => v.action(a),
            Node::With(w) => {
                v.named(&w.whose, Site::Condition);
                v.branch(&w.body.body);
            }
            Node::Together(b, _) => v.branch(&b.body),
            Node::Later(l) => {
                v.template(&l.when, Site::Condition);
                l.key.iter().for_each(|k| v.template(k, Site::Save));
                l.note.iter().for_each(|n| v.template(n, Site::Save));
                v.branch(&l.body.body);
            }
            Node::Cancel(c) => v.template(&c.key, Site::Save),
            Node::Await(a) => v.await_node(a),
            Node::Register(_) => {}
            Node::Guard(g) => {
                for value in &g.values {
                    if let GuardValue::Text(t) = value {
                        v.template(t, Site::Condition);
                    }
                }
            }
        }
    }
}

/// An action's values in the order written (a text one, like a reason or
/// a name, where shown; an id where sent), then its message.
pub fn walk_action<'a, V: Visitor<'a> + ?Sized>(v: &mut V, a: &'a Action) {
    use crate::discord::actions::{Slot, Verb};
    let spec = Verb::parse(&a.verb.name, a.kind.as_ref().map(|k| k.name.as_str())).ok().map(Verb::spec);
    let site = |slot: Option<Slot>| match slot {
        Some(Slot::Text { .. } | Slot::Tag) => Site::Reply,
        _ => Site::Action,
    };
    if let Some(t) = a.subject.as_ref().and_then(ActionValue::template) {
        v.template(t, site(spec.and_then(|s| s.subject).map(|(slot, _)| slot)));
    }
    for arg in &a.args {
        let slot = spec.and_then(|s| s.word(&arg.word.name)).map(|w| w.slot);
        for t in arg.values.iter().filter_map(ActionValue::template) {
            v.template(t, site(slot));
        }
    }
    if let Some(m) = &a.message {
        v.reply(m);
    }
}

/// A loop's source, limit and separator (read before its first run), then
/// its body.
pub fn walk_for<'a, V: Visitor<'a> + ?Sized>(v: &mut V, node: &'a ForNode) {
    walk_loop_head(v, node);
    v.branch(&node.body.body);
}

/// A loop's source, limit and separator.
pub fn walk_loop_head<'a, V: Visitor<'a> + ?Sized>(v: &mut V, node: &'a ForNode) {
    match &node.source {
        LoopSource::Ref(r) => v.reference(r, Site::Loop, false),
        LoopSource::Element(e) => v.element(e, Site::Loop, false),
        LoopSource::Name(n) => v.named(n, Site::Loop),
    }
    if let Some(limit) = &node.limit {
        v.value(limit, Site::Condition);
    }
    if let Some(join) = &node.join {
        v.template(&join.separator, Site::Reply);
    }
}

/// Each link's condition and branch in order, then the final `else`.
pub fn walk_if_chain<'a, V: Visitor<'a> + ?Sized>(v: &mut V, node: &'a IfNode) {
    for link in chain(node) {
        v.condition(&link.condition);
        v.branch(&link.then.body);
    }
    if let Some(last) = final_else(node) {
        v.branch(&last.body);
    }
}

/// The links of an `if … else if …` chain, first to last.
pub fn chain(node: &IfNode) -> impl Iterator<Item = &IfLink> {
    node.links.iter()
}

/// The `else { … }` that ends a chain, if it has one.
pub fn final_else(node: &IfNode) -> Option<&Branch> {
    node.otherwise.as_ref()
}

pub fn walk_condition<'a, V: Visitor<'a> + ?Sized>(v: &mut V, c: &'a Condition) {
    v.value(&c.left, Site::Condition);
    if let Some((_, _, right)) = &c.test {
        v.value(right, Site::Condition);
    }
}

/// A block's fields in source order: URL, parameters, headers, body (its
/// `failed` branch is the visitor's [`Visitor::failed`]).
pub fn walk_block<'a, V: Visitor<'a> + ?Sized>(v: &mut V, b: &'a ApiBlock) {
    for field in &b.fields {
        match &field.kind {
            FieldKind::Url(t) => v.template(t, Site::Url),
            FieldKind::Params(pairs) => pairs.iter().for_each(|p| v.template(&p.value, Site::Param)),
            FieldKind::Headers(pairs) => pairs.iter().for_each(|p| v.template(&p.value, Site::Header)),
            FieldKind::Body(body) => walk_body(v, body),
            FieldKind::Auth(auth) => auth.values.iter().for_each(|t| v.template(t, Site::Header)),
            FieldKind::Method(_)
            | FieldKind::Failed(_)
            | FieldKind::Sample(..)
            | FieldKind::Pages(_)
            | FieldKind::Cache(_)
            | FieldKind::Allow(_)
            | FieldKind::Timeout(_)
            | FieldKind::Retry(_) => {}
        }
    }
}

/// A body's values and texts, in source order.
pub fn walk_body<'a, V: Visitor<'a> + ?Sized>(v: &mut V, body: &'a Body) {
    match body {
        // An object's entries are the body's values, as they were before a
        // body had kinds (a visitor sees no object value around them).
        Body::Json(Value::Object(entries, _)) => entries.iter().for_each(|e| v.value(&e.value, Site::Body)),
        Body::Json(value) => v.value(value, Site::Body),
        Body::Form(entries) => entries.iter().for_each(|e| v.value(&e.value, Site::Body)),
        Body::Text { text, .. } => v.template(text, Site::Body),
        Body::Multipart(parts) => {
            for part in parts {
                match &part.value {
                    PartValue::Field(t) => v.template(t, Site::Body),
                    PartValue::File(file) => file.settings.iter().for_each(|(_, t)| v.template(t, Site::Body)),
                }
            }
        }
    }
}

pub fn walk_value<'a, V: Visitor<'a> + ?Sized>(v: &mut V, value: &'a Value, site: Site) {
    match value {
        Value::Str(t) => v.template(t, site),
        Value::Ref(r) => v.reference(r, site, false),
        Value::Element(e) => v.element(e, site, false),
        Value::Var(name) => v.named(name, site),
        Value::Object(entries, _) => entries.iter().for_each(|e| v.value(&e.value, site)),
        Value::Array(items, _) => items.iter().for_each(|i| v.value(i, site)),
        Value::Number(..) | Value::Bool(..) | Value::Null(_) => {}
        Value::Arith(e) => walk_expr(v, e, site),
    }
}

/// The values and variables of an arithmetic expression, left to right.
/// (Its depth is bounded by the lowering: at most [`MAX_OPERATIONS`]
/// operators and the nesting limit of parentheses.)
///
/// [`MAX_OPERATIONS`]: crate::language::syntax::MAX_OPERATIONS
pub fn walk_expr<'a, V: Visitor<'a> + ?Sized>(v: &mut V, e: &'a Expr, site: Site) {
    match e {
        Expr::Value(value) => v.value(value, site),
        Expr::Var(name) => v.named(name, site),
        Expr::Binary(b) => {
            walk_expr(v, &b.left, site);
            walk_expr(v, &b.right, site);
        }
        Expr::Group(inner, _) => walk_expr(v, inner, site),
    }
}

pub fn walk_template<'a, V: Visitor<'a> + ?Sized>(v: &mut V, t: &'a Template, site: Site) {
    for part in &t.parts {
        match part {
            Part::Lit(..) => {}
            Part::Var(var) => walk_var(v, var, site, true),
            Part::Secret(slot) => v.secret(slot, site),
        }
    }
}

/// A `{…}` of a template; a helped one is its base's read, written into
/// the text as itself only when its last helper leaves a list (`first`).
fn walk_var<'a, V: Visitor<'a> + ?Sized>(v: &mut V, var: &'a Var, site: Site, in_text: bool) {
    match var {
        Var::Ref(r) => v.reference(r, site, in_text),
        Var::Element(e) => v.element(e, site, in_text),
        Var::Named(name) => v.named(name, site),
        Var::BotToken(span) => v.bot_token(*span, site),
        Var::Draw(d) => d.variables.iter().for_each(|name| v.named(name, site)),
        Var::Helped(h) => {
            let list = matches!(h.helpers.last(), Some(crate::language::helpers::Helper::First(_)));
            walk_var(v, &h.base, site, in_text && list)
        }
    }
}

/// Calls `f` on every api block of a node list, in every branch, in order.
pub fn each_block<'a>(nodes: &'a [Node], f: &mut impl FnMut(&'a ApiBlock)) {
    struct Blocks<'f, F>(&'f mut F);
    impl<'a, F: FnMut(&'a ApiBlock)> Visitor<'a> for Blocks<'_, F> {
        fn block(&mut self, b: &'a ApiBlock) {
            (self.0)(b);
        }
        fn reply(&mut self, _: &'a Reply) {}
        fn save(&mut self, _: &'a Save) {}
        fn condition(&mut self, _: &'a Condition) {}
    }
    walk_nodes(&mut Blocks(f), nodes);
}

/// Calls `f` on every action of a node list, in every branch, in order.
pub fn each_action<'a>(nodes: &'a [Node], f: &mut impl FnMut(&'a Action)) {
    struct Actions<'f, F>(&'f mut F);
    impl<'a, F: FnMut(&'a Action)> Visitor<'a> for Actions<'_, F> {
        fn block(&mut self, b: &'a ApiBlock) {
            if let Some(f) = b.failed() {
                self.branch(&f.branch.body);
            }
        }
        fn action(&mut self, a: &'a Action) {
            (self.0)(a);
        }
        fn reply(&mut self, _: &'a Reply) {}
        fn save(&mut self, _: &'a Save) {}
        fn condition(&mut self, _: &'a Condition) {}
    }
    walk_nodes(&mut Actions(f), nodes);
}

/// Calls `f` on every `save` of a node list, in every branch.
pub fn each_save<'a>(nodes: &'a [Node], f: &mut impl FnMut(&'a Save)) {
    walk_nodes(&mut Saves { f, fields: true }, nodes);
}

/// [`each_save`] of the saves of a whole variable (not of a field of it,
/// `save settings[mode] = …`).
pub fn each_whole_save<'a>(nodes: &'a [Node], f: &mut impl FnMut(&'a Save)) {
    walk_nodes(&mut Saves { f, fields: false }, nodes);
}

struct Saves<'f, F> {
    f: &'f mut F,
    fields: bool,
}

impl<'a, F: FnMut(&'a Save)> Visitor<'a> for Saves<'_, F> {
    fn block(&mut self, _: &'a ApiBlock) {}
    fn reply(&mut self, _: &'a Reply) {}
    fn save(&mut self, s: &'a Save) {
        (self.f)(s);
    }
    fn save_field(&mut self, f: &'a crate::language::ast::SaveField) {
        if self.fields {
            (self.f)(&f.save);
        }
    }
    fn condition(&mut self, _: &'a Condition) {}
}

/// Calls `f` on every `form` of a node list, in every branch.
pub fn each_form<'a>(nodes: &'a [Node], f: &mut impl FnMut(&'a Form)) {
    struct Forms<'f, F>(&'f mut F);
    impl<'a, F: FnMut(&'a Form)> Visitor<'a> for Forms<'_, F> {
        fn block(&mut self, _: &'a ApiBlock) {}
        fn reply(&mut self, _: &'a Reply) {}
        fn save(&mut self, _: &'a Save) {}
        fn form(&mut self, form: &'a Form) {
            (self.0)(form);
        }
        fn condition(&mut self, _: &'a Condition) {}
    }
    walk_nodes(&mut Forms(f), nodes);
}

/// Calls `f` on every `reply` and `update` of a node list, in every branch.
pub fn each_reply<'a>(nodes: &'a [Node], f: &mut impl FnMut(&'a Reply)) {
    struct Replies<'f, F>(&'f mut F);
    impl<'a, F: FnMut(&'a Reply)> Visitor<'a> for Replies<'_, F> {
        fn block(&mut self, _: &'a ApiBlock) {}
        fn reply(&mut self, r: &'a Reply) {
            (self.0)(r);
        }
        fn save(&mut self, _: &'a Save) {}
        fn form(&mut self, _: &'a Form) {}
        fn condition(&mut self, _: &'a Condition) {}
    }
    walk_nodes(&mut Replies(f), nodes);
}

/// Calls `f` on every response reference of a node list, in every branch.
pub fn each_reference<'a>(nodes: &'a [Node], f: &mut impl FnMut(&'a Reference)) {
    struct References<'f, F>(&'f mut F);
    impl<'a, F: FnMut(&'a Reference)> Visitor<'a> for References<'_, F> {
        fn reference(&mut self, r: &'a Reference, _: Site, _: bool) {
            (self.0)(r);
        }
    }
    walk_nodes(&mut References(f), nodes);
}

/// Calls `f` on every node inside a branch of an `if` or the body of a
/// `for`, at any depth: never on the nodes of `nodes` themselves (what must
/// stand at the top of a tree is looked for here).
pub fn each_in_branch<'a>(nodes: &'a [Node], f: &mut impl FnMut(&'a Node)) {
    for node in nodes {
        let branches: Vec<&'a [Node]> = match node {
            Node::If(i) => i
                .links
                .iter()
                .map(|l| l.then.body.as_slice())
                .chain(i.otherwise.iter().map(|o| o.body.as_slice()))
                .collect(),
            Node::For(l) => vec![l.body.body.as_slice()],
            Node::Failed(b, _) => vec![b.body.as_slice()],
            Node::Api(b) => match b.failed() {
                Some(f) => vec![f.branch.body.as_slice()],
                None => continue,
            },
            _ => continue,
        };
        for branch in branches {
            branch.iter().for_each(&mut *f);
            each_in_branch(branch, f);
        }
    }
}

/// Calls `f` on every loop of `nodes`, in every branch, outer loops first.
pub fn each_loop<'a>(nodes: &'a [Node], f: &mut impl FnMut(&'a ForNode)) {
    struct Loops<'f, F>(&'f mut F);
    impl<'a, F: FnMut(&'a ForNode)> Visitor<'a> for Loops<'_, F> {
        fn for_loop(&mut self, node: &'a ForNode) {
            (self.0)(node);
            self.branch(&node.body.body);
        }
        fn block(&mut self, _: &'a ApiBlock) {}
        fn template(&mut self, _: &'a Template, _: Site) {}
        fn value(&mut self, _: &'a Value, _: Site) {}
    }
    walk_nodes(&mut Loops(f), nodes);
}
