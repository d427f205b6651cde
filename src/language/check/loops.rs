//! Rules of `for` loops: where `text` and `stop` may stand (B146), a loop's
//! names (B148) and bounds (B147), and its element's paths — read inside
//! the loop (B145) and, with a sample, checked against the elements the
//! sample's list holds (B2xx, B212).

use crate::base::data::Data;
use crate::base::diagnostics::{did_you_mean, Code, Diagnostic, Findings};
use crate::base::path::{self, Document};
use crate::base::source::Span;
use crate::language::ast::visit::{self, Site, Visitor};
use crate::language::ast::{ApiBlock, ElementRef, ForNode, Node, Template, Tree, Value};
use crate::language::vocab::{MAX_LOOP_RUNS, MAX_REQUESTS};

/// How many of a sample list's elements a path is tried against: a key
/// found in any of them is one the API sends (elements of one list need
/// not all have the same keys).
const ELEMENTS_TRIED: usize = 50;

/// A loop being walked: its node and, when a sample shows them, the
/// elements it would run over.
pub struct Frame<'a> {
    pub node: &'a ForNode,
    pub elements: Vec<Data>,
    /// Where the elements come from, for notes: "the sample `x.json`".
    pub sample: Option<String>,
}

/// The loops enclosing the node being walked, innermost last.
#[derive(Default)]
pub struct Frames<'a>(pub Vec<Frame<'a>>);

/// The names a loop makes besides its element's.
pub fn made_names(item: &str) -> [String; 2] {
    [format!("{item}_number"), format!("{item}_index")]
}

impl<'a> Frames<'a> {
    /// The innermost loop whose element is named `name`.
    pub fn find(&self, name: &str) -> Option<&Frame<'a>> {
        self.0.iter().rev().find(|f| f.node.item.name == name)
    }

    /// Whether `{name}` names something an enclosing loop makes: its
    /// element, or the element's number or index.
    pub fn knows(&self, name: &str) -> bool {
        self.0.iter().any(|f| {
            let item = f.node.item.name.as_str();
            name == item || name.strip_prefix(item).is_some_and(|rest| rest == "_number" || rest == "_index")
        })
    }

    /// The elements of the list that `e` (or the element named `name`, when
    /// `e` is none) reads inside an enclosing loop's sample elements.
    pub fn elements_of(&self, name: &str, e: Option<&ElementRef>) -> (Vec<Data>, Option<String>) {
        let Some(frame) = self.find(name) else { return (Vec::new(), None) };
        let mut out = Vec::new();
        for element in &frame.elements {
            let value = match e {
                Some(e) => path::walk(element, &e.segments).ok(),
                None => Some(element),
            };
            if let Some(Data::Array(items)) = value {
                out.extend(items.iter().take(ELEMENTS_TRIED.saturating_sub(out.len())).cloned());
            }
        }
        (out, frame.sample.clone())
    }

    /// B145 and the sample rules for `item[path]`.
    pub fn check_element(&self, e: &ElementRef, site: Site, in_text: bool, tree: &Tree, out: &mut Findings) {
        let name = e.item.name.as_str();
        let Some(frame) = self.find(name) else {
            out.push(outside_loop(e, tree));
            return;
        };
        for seg in &e.segments {
            if let Err(why) = path::check_key(&seg.text) {
                let (message, label, help) = why.text(&seg.text, name);
                out.push(Diagnostic::new(Code::MalformedPath, message).label(seg.span, label).help(help));
                return;
            }
        }
        // A key read from a variable is known only when it runs.
        if path::until_variable(&e.segments).len() < e.segments.len() {
            return;
        }
        let Some(first) = frame.elements.first() else { return };
        if frame.elements.iter().any(|el| path::walk(el, &e.segments).is_ok()) {
            if in_text && site != Site::Loop {
                if let Ok(here @ (Data::Object(_) | Data::Array(_))) = path::walk(first, &e.segments) {
                    let at = path::display_from(name, e.segments.iter().map(|s| s.text.as_str()));
                    out.push(
                        Diagnostic::new(
                            Code::SampleJsonInText,
                            format!("`{at}` is {}: it renders as JSON text", here.kind().words()),
                        )
                        .label(e.span, "written into text")
                        .help(
                            "address a field inside it to show one value, or keep it if the JSON text is what you want",
                        ),
                    );
                }
            }
            return;
        }
        let Err(miss) = path::walk(first, &e.segments) else { return };
        let at = &e.segments[miss.at];
        let suggestion = match miss.kind {
            path::MissKind::NoKey => {
                did_you_mean(&at.text, miss.keys.iter().map(String::as_str)).filter(|k| path::addressable(k))
            }
            _ => None,
        };
        let whole = |p: &str| {
            let inner = p.strip_prefix(name).map_or(p, |rest| rest.trim_start_matches('.'));
            format!("{name}[{inner}]")
        };
        let note = format!(
            "checked against the elements of the list in {}",
            frame.sample.as_deref().map_or("the sample".to_string(), |s| format!("the sample `{s}`"))
        );
        out.push(
            Diagnostic::new(super::samples::code(&miss.kind), miss.message_from(name, &e.segments))
                .label(at.span, miss.label())
                .help(miss.help_from(name, &whole, &e.segments))
                .note(note)
                .maybe_fixes(suggestion.map(|k| (format!("write `{k}`"), at.span, k.to_string()))),
        );
    }
}

/// B145: a loop over `item` where no loop `item` runs, as its source.
pub fn source_outside_loop(item: &crate::language::ast::Ident) -> Diagnostic {
    let name = item.name.as_str();
    Diagnostic::new(Code::ElementOutsideLoop, format!("`{name}` is not an enclosing loop's element"))
        .label(item.span, "not a list a loop can run over")
        .help(format!(
            "a loop runs over a response's list, `for x in api_<block>[response.items]`, a list inside an enclosing loop's element, or a custom variable that holds a list (`var {name} = []`); `{name}` is none of these"
        ))
}

/// B145: a loop's `by` reads its own element (`by entry[points]`, `by
/// entry`), checked against the element's shape as any read of it.
pub fn check_order(
    node: &ForNode,
    order: &crate::language::ast::LoopOrder,
    frames: &Frames<'_>,
    tree: &Tree,
    out: &mut Findings,
) {
    let item = node.item.name.as_str();
    let (read, span) = match &order.key {
        crate::language::ast::LoopSource::Element(e) if e.item.name == item => {
            return frames.check_element(e, Site::Condition, false, tree, out);
        }
        crate::language::ast::LoopSource::Name(n) if n.name == item => return,
        crate::language::ast::LoopSource::Element(e) => (e.item.name.to_string(), e.span),
        crate::language::ast::LoopSource::Name(n) => (n.name.to_string(), n.span),
        crate::language::ast::LoopSource::Ref(r) => (format!("api_{}", r.block.name), r.span),
    };
    out.push(
        Diagnostic::new(
            Code::ElementOutsideLoop,
            format!("loop `{item}` is ordered by `{read}`, not by its own element"),
        )
        .label(span, "not this loop's element")
        .help(format!("order by a path into each element, `by {item}[points]`, or by the element itself, `by {item}`")),
    );
}

/// B145: `item[…]` where no loop `item` runs.
fn outside_loop(e: &ElementRef, tree: &Tree) -> Diagnostic {
    let item = &e.item;
    let name = item.name.as_str();
    let mut block = None;
    crate::language::ast::visit::each_block(&tree.body, &mut |b| {
        if b.name.name == name {
            block = Some(b);
        }
    });
    if block.is_some() {
        let fixed = format!("api_{name}[{}]", e.path_text());
        return Diagnostic::new(Code::ElementOutsideLoop, format!("`{name}[…]` reads block `{name}` without `api_`"))
            .label(e.span, "read as a loop's element, and no loop is named so")
            .help(format!("a block's response is read through `api_` and its name: `{fixed}`"))
            .fix(
                "write `api_` before the block's name",
                Span::new(item.span.start as usize, item.span.start as usize),
                "api_",
            );
    }
    let diag = Diagnostic::new(Code::ElementOutsideLoop, format!("no loop named `{name}` runs here"))
        .label(e.span, "not an enclosing loop's element");
    match loop_named(&tree.body, name) {
        Some(l) => diag.related(l.item.span, "the loop is here").help(format!(
            "an element exists only inside its loop: read `{name}` there, or build a text with `join … into NAME` and read that after the loop"
        )),
        None => diag.help(format!("loop over a list with `for {name} in api_<block>[response.items] {{ … }}` and read `{name}[…]` inside it")),
    }
}

/// The first loop of `nodes` (in any branch) whose element is `name`.
fn loop_named<'a>(nodes: &'a [Node], name: &str) -> Option<&'a ForNode> {
    let mut found = None;
    crate::language::ast::visit::each_loop(nodes, &mut |l| {
        if l.item.name == name && found.is_none() {
            found = Some(l);
        }
    });
    found
}

/// B148: a loop's names that are already variables here (`known`) or an
/// enclosing loop's.
pub fn check_names(node: &ForNode, frames: &Frames<'_>, known: impl Fn(&str) -> bool, out: &mut Findings) {
    let item = node.item.name.as_str();
    let [number, index] = made_names(item);
    let taken = [item, number.as_str(), index.as_str()]
        .into_iter()
        .find(|n| known(n) || frames.knows(n))
        .map(|n| (n.to_string(), node.item.span));
    let join = node.join.as_ref().filter(|j| known(&j.into.name) || frames.knows(&j.into.name));
    let joined = join.map(|j| (j.into.name.to_string(), j.into.span));
    for (k, (name, span)) in taken.into_iter().chain(joined).enumerate() {
        let whose = if frames.knows(&name) { "an enclosing loop's" } else { "a variable here" };
        let what = if span == node.item.span && k == 0 { "the loop" } else { "the joined text" };
        out.push(
            Diagnostic::new(Code::LoopNameTaken, format!("`{{{name}}}` is already {whose}"))
                .label(span, "this name")
                .help(format!(
                    "give {what} a name of its own: `{{{name}}}` would read one of the two and hide the other"
                )),
        );
    }
}

/// B147: a limit written as a number must be a whole number from 1 to
/// [`MAX_LOOP_RUNS`] (10,000, as the messages write it); returns it.
pub fn literal_limit(node: &ForNode, out: &mut Findings) -> Option<u64> {
    let (text, span) = match &node.limit {
        Some(Value::Number(n, span)) => (n.to_string(), *span),
        Some(Value::Str(t)) => (t.as_literal()?, t.span),
        _ => return None,
    };
    match text.trim().parse::<u64>() {
        Ok(n) if (1..=MAX_LOOP_RUNS as u64).contains(&n) => Some(n),
        _ => {
            out.push(
                Diagnostic::new(
                    Code::LoopLimit,
                    format!("the limit of loop `{}` is {}", node.item.name, crate::base::display::one_line(&text)),
                )
                .label(span, "not a whole number from 1 to 10,000")
                .help("a run makes at most 10,000 loop runs, all its loops together: write a whole number like `limit 10`"),
            );
            None
        }
    }
}

/// B147: a block inside loops with literal limits that would send more
/// than [`MAX_REQUESTS`] requests (`runs`: the product of the limits).
pub fn too_many_requests(block: &ApiBlock, runs: u64, out: &mut Findings) {
    if runs <= MAX_REQUESTS as u64 {
        return;
    }
    out.push(
        Diagnostic::new(
            Code::LoopLimit,
            format!("block `{}` would send up to {runs} requests in one run", block.name.name),
        )
        .label(block.name.span, format!("runs once per loop run; a run sends at most {MAX_REQUESTS}"))
        .help("lower the limit of the loops around it, or fetch what they need in one request"),
    );
}

/// B147: more requests than a run sends (the 101st) among the steps every
/// run of the tree takes: its API blocks and actions outside any `if`,
/// loop or `failed` (each sends at least one), counted in order. Found at
/// run time otherwise, on the first run that reaches it (B327).
pub fn requests_every_run(tree: &Tree, out: &mut Findings) {
    use crate::language::ast::Node;
    let mut sent = 0usize;
    for node in &tree.body {
        let (name, span) = match node {
            Node::Api(b) => (format!("block `{}`", b.name.name), b.name.span),
            Node::Action(a) => (format!("this `{}`", a.verb.name), a.span),
            _ => continue,
        };
        sent += 1;
        if sent == MAX_REQUESTS + 1 {
            out.push(
                Diagnostic::new(
                    Code::LoopLimit,
                    format!("{name} is the {}st request every run of this {} sends", MAX_REQUESTS + 1, tree.kind.as_str()),
                )
                .label(span, format!("a run sends at most {MAX_REQUESTS} requests"))
                .help("fetch what the blocks need in fewer requests (a list in one answer), or split the work across commands"),
            );
            return;
        }
    }
}

/// B146: `text` and `stop` outside a loop, and `text` outside every loop
/// with a join.
pub fn check_placement(tree: &Tree, out: &mut Findings) {
    struct Walk<'o> {
        /// Per enclosing loop: whether it has a join.
        loops: Vec<bool>,
        out: &'o mut Findings,
    }
    impl<'a> Visitor<'a> for Walk<'_> {
        fn for_loop(&mut self, node: &'a ForNode) {
            self.loops.push(node.join.is_some());
            self.branch(&node.body.body);
            self.loops.pop();
        }
        fn text_piece(&mut self, _: &'a Template, span: Span) {
            if self.loops.iter().any(|j| *j) {
                return;
            }
            let (message, help) = if self.loops.is_empty() {
                (
                    "`text` outside a loop",
                    "`text` adds a piece to a loop's `join`; a message of its own is `reply \"…\"`",
                )
            } else {
                (
                    "`text` in a loop without `join`",
                    "give the loop a join, `for x in … join \", \" into names { text \"…\" }`, and read `{names}` after it; one message per element is `reply \"…\"`",
                )
            };
            self.out
                .push(Diagnostic::new(Code::LoopMisplaced, message).label(span, "nothing to add this to").help(help));
        }
        fn stop(&mut self, span: Span) {
            if self.loops.is_empty() {
                self.out.push(
                    Diagnostic::new(Code::LoopMisplaced, "`stop` outside a loop")
                        .label(span, "no loop to end")
                        .help("`stop` ends the loop it is in; move it inside a `for` loop, or leave it out"),
                );
            }
        }
        fn block(&mut self, _: &'a ApiBlock) {}
        fn template(&mut self, _: &'a Template, _: Site) {}
        fn value(&mut self, _: &'a Value, _: Site) {}
    }
    visit::walk_nodes(&mut Walk { loops: Vec::new(), out }, &tree.body);
}

/// The elements of a list a sample shows at `r` (up to [`ELEMENTS_TRIED`]),
/// or B212 when it shows something else there.
pub fn sample_elements(
    sample: &Data,
    r: &crate::language::ast::Reference,
    node: &ForNode,
    note: &str,
    out: &mut Findings,
) -> Vec<Data> {
    match path::walk(sample, &r.segments) {
        Ok(Data::Array(items)) => items.iter().take(ELEMENTS_TRIED).cloned().collect(),
        Ok(Data::Null) | Err(_) => Vec::new(),
        Ok(other) => {
            let lists: Vec<String> = match other {
                Data::Object(_) => other
                    .keys()
                    .into_iter()
                    .filter(|k| matches!(other.get(k), Some(Data::Array(_))))
                    .map(|k| format!("`{k}`"))
                    .collect(),
                _ => Vec::new(),
            };
            let help = if lists.is_empty() {
                "a loop runs over a list: loop over a path whose value is one".to_string()
            } else {
                let fixed = format!("api_{}[{}.{}]", r.block.name, r.path_text(), lists[0].trim_matches('`'));
                format!("the lists inside it are {}: loop over one, like `{fixed}`", lists.join(", "))
            };
            out.push(
                Diagnostic::new(
                    Code::SampleNotAList,
                    format!("loop `{}` runs over {}, not a list", node.item.name, other.kind().words()),
                )
                .label(node.source.span(), format!("{} in the sample", other.kind().words()))
                .help(help)
                .note(note.to_string()),
            );
            Vec::new()
        }
    }
}
