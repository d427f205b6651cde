//! Source text to AST. The only module that knows pest.
//!
//! The file is parsed one top-level item at a time: each item's pairs are
//! lowered to AST and dropped before the next item is parsed, which keeps
//! peak memory near the size of the AST (docs/architecture.md).

mod errors;
pub mod template;

use pest::iterators::Pair;
use pest::Parser as _;

use crate::ast::*;
use crate::diagnostics::{Code, Diagnostic};
use crate::source::{SourceFile, Span};

#[derive(pest_derive::Parser)]
#[grammar = "../grammar/blk.pest"]
struct BlkParser;

/// The largest file blkc reads (64 MiB).
pub const MAX_FILE_SIZE: usize = 64 * 1024 * 1024;
/// The deepest nesting of `{…}` and `[…]` a file may have.
pub const MAX_DEPTH: usize = 64;

/// The result of parsing: the AST of what could be read, every diagnostic,
/// and whether parsing stopped early (so the checker should not run).
#[derive(Debug)]
pub struct Parsed {
    pub ast: File,
    pub diagnostics: Vec<Diagnostic>,
    pub complete: bool,
}

/// Limits on what a file may be: its size and its nesting depth.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_file_size: usize,
    pub max_depth: usize,
    /// How many threads may parse a large file (files under 1 MiB a
    /// thread are parsed on one).
    pub threads: usize,
}

impl Default for Limits {
    fn default() -> Self {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8);
        Limits { max_file_size: MAX_FILE_SIZE, max_depth: MAX_DEPTH, threads }
    }
}

pub fn parse(source: &SourceFile) -> Parsed {
    parse_with(source, Limits::default())
}

pub fn parse_with(source: &SourceFile, limits: Limits) -> Parsed {
    let text = source.text.as_str();
    let mut parsed = Parsed { ast: File::default(), diagnostics: Vec::new(), complete: false };
    if text.len() > limits.max_file_size {
        parsed.diagnostics.push(
            Diagnostic::new(
                Code::FileTooLarge,
                format!("file is {} bytes, more than the limit of {} bytes", text.len(), limits.max_file_size),
            )
            .label(Span::new(0, 0), "this file")
            .help("split the commands and events over several files"),
        );
        return parsed;
    }
    let splits = match scan_structure(text, limits.max_depth) {
        Ok(splits) => splits,
        Err(diag) => {
            parsed.diagnostics.push(diag);
            return parsed;
        }
    };
    // pest's own guard against deep recursion, on top of the depth check.
    pest::set_call_limit(std::num::NonZeroUsize::new(50_000_000));

    let chunks = chunk_bounds(text.len(), &splits, limits.threads);
    if chunks.len() > 1 {
        let results: Vec<Parsed> = std::thread::scope(|scope| {
            let handles: Vec<_> =
                chunks.iter().map(|&(start, end)| scope.spawn(move || parse_range(text, start, end))).collect();
            handles.into_iter().filter_map(|h| h.join().ok()).collect()
        });
        if results.len() == chunks.len() && results.iter().all(|r| r.complete) {
            for r in results {
                parsed.ast.items.extend(r.ast.items);
                parsed.diagnostics.extend(r.diagnostics);
            }
            parsed.complete = true;
            return parsed;
        }
        // A syntax error somewhere: the sequential parse reports it exactly
        // as it would have without threads.
    }
    let whole = parse_range(text, 0, text.len());
    parsed.ast = whole.ast;
    parsed.diagnostics.extend(whole.diagnostics);
    parsed.complete = whole.complete;
    parsed
}

/// Parses the items that lie in `text[start..end]`, one at a time.
fn parse_range(text: &str, start: usize, end: usize) -> Parsed {
    let mut parsed = Parsed { ast: File::default(), diagnostics: Vec::new(), complete: false };
    let mut lower = Lower { base: 0, diags: &mut parsed.diagnostics };
    let mut pos = skip_blank(text, start);
    while pos < end {
        let rest = &text[pos..end];
        match BlkParser::parse(Rule::item, rest) {
            Ok(mut pairs) => {
                let Some(pair) = pairs.next() else { break };
                let item_end = pair.as_span().end();
                lower.base = pos;
                let item = lower.item(pair);
                parsed.ast.items.push(item);
                pos = skip_blank(text, pos + item_end);
            }
            Err(_) => {
                lower.diags.push(errors::syntax_error(&text[..end], pos));
                return parsed;
            }
        }
    }
    parsed.complete = true;
    parsed
}

/// Splits `0..len` into at most `threads` ranges at item boundaries
/// (`splits`), each about the same size. Small files stay in one piece.
fn chunk_bounds(len: usize, splits: &[usize], threads: usize) -> Vec<(usize, usize)> {
    const MIN_CHUNK: usize = 1 << 20;
    let pieces = threads.min(len / MIN_CHUNK).max(1);
    let mut bounds = Vec::with_capacity(pieces);
    let mut start = 0;
    for k in 1..pieces {
        let target = len * k / pieces;
        let at = splits.partition_point(|&s| s < target);
        if let Some(&split) = splits.get(at) {
            if split > start && split < len {
                bounds.push((start, split));
                start = split;
            }
        }
    }
    bounds.push((start, len));
    bounds
}

/// Skips blanks and comments; the grammar's WHITESPACE, by hand, between items.
fn skip_blank(text: &str, mut pos: usize) -> usize {
    let bytes = text.as_bytes();
    while pos < bytes.len() {
        match bytes[pos] {
            b' ' | b'\t' | b'\r' | b'\n' => pos += 1,
            b'#' => pos = memchr::memchr(b'\n', &bytes[pos..]).map_or(bytes.len(), |i| pos + i),
            _ => break,
        }
    }
    pos
}

/// At a `"` or `#` at `i`: the offset of the string's closing quote or the
/// comment's line end (the scans over raw text skip both).
pub(super) fn skip_literal(bytes: &[u8], mut i: usize) -> usize {
    if bytes[i] == b'#' {
        return memchr::memchr(b'\n', &bytes[i..]).map_or(bytes.len(), |j| i + j);
    }
    i += 1;
    while i < bytes.len() && bytes[i] != b'"' {
        i += if bytes[i] == b'\\' { 2 } else { 1 };
    }
    i
}

/// Walks the file once before pest sees it, outside strings and comments:
/// finds the first `{` or `[` nested deeper than `max_depth` (so nothing
/// recursive can overflow the stack), and the offsets just after each `}`
/// that closes a top-level item (where the file may be split for threads).
/// Unbalanced files give no split points.
fn scan_structure(text: &str, max_depth: usize) -> Result<Vec<usize>, Diagnostic> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut balanced = true;
    let mut splits = Vec::new();
    let (mut next_open, mut next_close) = (0, 0);
    let mut i = 0;
    while i < bytes.len() {
        // Jump to the next byte that matters; each search is redone only
        // once the scan has passed what it found.
        if next_open < i {
            next_open = memchr::memchr3(b'"', b'#', b'{', &bytes[i..]).map_or(usize::MAX, |j| i + j);
        }
        if next_close < i {
            next_close = memchr::memchr3(b'}', b'[', b']', &bytes[i..]).map_or(usize::MAX, |j| i + j);
        }
        i = next_open.min(next_close);
        if i == usize::MAX {
            break;
        }
        match bytes[i] {
            b'"' | b'#' => i = skip_literal(bytes, i),
            b'{' | b'[' => {
                depth += 1;
                if depth > max_depth {
                    return Err(Diagnostic::new(Code::TooDeep, format!("nesting deeper than {max_depth} levels"))
                        .label(Span::new(i, i + 1), format!("level {depth} opens here"))
                        .help(format!(
                            "flatten the branches or the body; blkc reads at most {max_depth} levels of `{{…}}` and `[…]`"
                        )));
                }
            }
            b'}' | b']' => {
                if depth == 0 {
                    balanced = false;
                } else {
                    depth -= 1;
                    if depth == 0 && bytes[i] == b'}' {
                        splits.push(i + 1);
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    if !balanced || depth != 0 {
        splits.clear();
    }
    Ok(splits)
}

/// Lowers the pairs of one item to AST, with spans offset by `base`.
struct Lower<'d> {
    base: usize,
    diags: &'d mut Vec<Diagnostic>,
}

impl Lower<'_> {
    fn span(&self, pair: &Pair<'_, Rule>) -> Span {
        let s = pair.as_span();
        Span::new(self.base + s.start(), self.base + s.end())
    }

    fn item(&mut self, pair: Pair<'_, Rule>) -> Item {
        match pair.as_rule() {
            Rule::command => Item::Tree(self.tree(pair, TreeKind::Command)),
            Rule::event => Item::Tree(self.tree(pair, TreeKind::Event)),
            Rule::var_decl => Item::Var(self.var_decl(pair)),
            _ => Item::Platform(self.platform(pair)),
        }
    }

    fn tree(&mut self, pair: Pair<'_, Rule>, kind: TreeKind) -> Tree {
        let span = self.span(&pair);
        let mut name = None;
        let mut description = None;
        let mut body = Vec::new();
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::kw_command | Rule::kw_event => {}
                Rule::ident => name = Some(self.ident(p)),
                Rule::string => description = Some(self.text(p)),
                _ => body.push(self.node(p)),
            }
        }
        Tree { kind, name: name.unwrap_or_else(|| missing(span)), description, body, span }
    }

    fn var_decl(&mut self, pair: Pair<'_, Rule>) -> VarDecl {
        let span = self.span(&pair);
        let mut name = None;
        let mut default = None;
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::ident => name = Some(self.ident(p)),
                Rule::string => default = Some(self.text(p)),
                _ => {}
            }
        }
        VarDecl { name: name.unwrap_or_else(|| missing(span)), default, span }
    }

    fn platform(&mut self, pair: Pair<'_, Rule>) -> Platform {
        let span = self.span(&pair);
        let url = pair
            .into_inner()
            .find(|p| p.as_rule() == Rule::string)
            .map(|p| self.text(p))
            .unwrap_or(Text { value: Str::default(), span });
        Platform { url, span }
    }

    fn node(&mut self, pair: Pair<'_, Rule>) -> Node {
        match pair.as_rule() {
            Rule::option_decl => Node::Option(self.option_decl(pair)),
            Rule::api_block => Node::Api(Box::new(self.api_block(pair))),
            Rule::reply => Node::Reply(self.reply(pair)),
            Rule::save => Node::Save(self.save(pair)),
            _ => Node::If(Box::new(self.if_node(pair))),
        }
    }

    fn option_decl(&mut self, pair: Pair<'_, Rule>) -> OptionDecl {
        let span = self.span(&pair);
        let mut name = None;
        let mut description = None;
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::ident => name = Some(self.ident(p)),
                Rule::string => description = Some(self.text(p)),
                _ => {}
            }
        }
        OptionDecl { name: name.unwrap_or_else(|| missing(span)), description, span }
    }

    fn reply(&mut self, pair: Pair<'_, Rule>) -> Reply {
        let span = self.span(&pair);
        let text = pair
            .into_inner()
            .find(|p| p.as_rule() == Rule::string)
            .map(|p| self.template(p))
            .unwrap_or(Template { parts: Vec::new(), span });
        Reply { text, span }
    }

    fn save(&mut self, pair: Pair<'_, Rule>) -> Save {
        let span = self.span(&pair);
        let mut name = None;
        let mut value = None;
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::kw_save => {}
                Rule::ident if name.is_none() => name = Some(self.ident(p)),
                _ => value = Some(self.value(p)),
            }
        }
        Save { name: name.unwrap_or_else(|| missing(span)), value: value.unwrap_or(Value::Null(span)), span }
    }

    fn if_node(&mut self, pair: Pair<'_, Rule>) -> IfNode {
        let span = self.span(&pair);
        let mut condition = None;
        let mut then = None;
        let mut otherwise = None;
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::condition => condition = Some(self.condition(p)),
                Rule::branch if then.is_none() => then = Some(self.branch(p)),
                Rule::branch => otherwise = Some(Else::Branch(self.branch(p))),
                Rule::if_node => otherwise = Some(Else::If(Box::new(self.if_node(p)))),
                _ => {}
            }
        }
        IfNode {
            condition: condition.unwrap_or(Condition { left: Value::Null(span), test: None, span }),
            then: then.unwrap_or(Branch { body: Vec::new(), span }),
            otherwise,
            span,
        }
    }

    fn branch(&mut self, pair: Pair<'_, Rule>) -> Branch {
        let span = self.span(&pair);
        let body = pair.into_inner().map(|p| self.node(p)).collect();
        Branch { body, span }
    }

    fn condition(&mut self, pair: Pair<'_, Rule>) -> Condition {
        let span = self.span(&pair);
        let mut inner = pair.into_inner();
        let left = match inner.next() {
            Some(p) => self.value(p),
            None => Value::Null(span),
        };
        let test = match (inner.next(), inner.next()) {
            (Some(op), Some(right)) => {
                let op_span = self.span(&op);
                let op = match op.as_str() {
                    "==" => CompareOp::Eq,
                    "!=" => CompareOp::Ne,
                    "<" => CompareOp::Lt,
                    "<=" => CompareOp::Le,
                    ">" => CompareOp::Gt,
                    ">=" => CompareOp::Ge,
                    _ => CompareOp::Contains,
                };
                Some((op, op_span, self.value(right)))
            }
            _ => None,
        };
        Condition { left, test, span }
    }

    /// `api NAME { fields }`: the fields arrive as a flat stream, each a
    /// keyword token followed by its value tokens.
    fn api_block(&mut self, pair: Pair<'_, Rule>) -> ApiBlock {
        let span = self.span(&pair);
        let mut inner = pair.into_inner().peekable();
        let mut name = missing(span);
        let mut fields = Vec::with_capacity(6);
        while let Some(p) = inner.next() {
            let keyword = self.span(&p);
            let (kind, end) = match p.as_rule() {
                Rule::kw_api => continue,
                Rule::ident => {
                    name = self.ident(p);
                    continue;
                }
                Rule::kw_params | Rule::kw_headers => {
                    let mut pairs = Vec::new();
                    while inner.peek().is_some_and(|k| k.as_rule() == Rule::key) {
                        if let Some(key) = inner.next() {
                            pairs.push(self.pair(key, inner.next()));
                        }
                    }
                    let end = pairs.last().map_or(keyword, |p: &Pair_| p.span);
                    let kind = if p.as_rule() == Rule::kw_params {
                        FieldKind::Params(pairs)
                    } else {
                        FieldKind::Headers(pairs)
                    };
                    (kind, end)
                }
                rule => {
                    let Some(value) = inner.next() else { break };
                    let end = self.span(&value);
                    let kind = match rule {
                        Rule::kw_method => FieldKind::Method(self.ident(value)),
                        Rule::kw_url => FieldKind::Url(self.template(value)),
                        Rule::kw_body => FieldKind::Body(self.entries(value)),
                        Rule::kw_sample => FieldKind::Sample(self.text(value)),
                        _ => FieldKind::Allow(self.ident(value)),
                    };
                    (kind, end)
                }
            };
            fields.push(Field { keyword, kind, span: keyword.to(end) });
        }
        ApiBlock { name, fields, span }
    }

    /// A URL parameter or header: a key token and its value token.
    fn pair(&mut self, key: Pair<'_, Rule>, value: Option<Pair<'_, Rule>>) -> Pair_ {
        let key = self.key(key);
        let value = match value {
            Some(p) if p.as_rule() == Rule::string => self.template(p),
            Some(p) => {
                let s = self.span(&p);
                Template { parts: vec![Part::Lit(p.as_str().into(), s)], span: s }
            }
            None => Template { parts: Vec::new(), span: key.span },
        };
        Pair_ { span: key.span.to(value.span), key, value }
    }

    /// The entries of an object: key and value tokens, alternating.
    fn entries(&mut self, object: Pair<'_, Rule>) -> Vec<Entry> {
        let mut inner = object.into_inner();
        let mut entries = Vec::with_capacity(inner.len() / 2);
        while let Some(key) = inner.next() {
            let key = self.key(key);
            let value = inner.next().map_or(Value::Null(key.span), |p| self.value(p));
            entries.push(Entry { span: key.span.to(value.span()), key, value });
        }
        entries
    }

    fn value(&mut self, pair: Pair<'_, Rule>) -> Value {
        let span = self.span(&pair);
        match pair.as_rule() {
            Rule::string => Value::Str(self.template(pair)),
            Rule::number => Value::Number(pair.as_str().into(), span),
            Rule::kw_true => Value::Bool(true, span),
            Rule::kw_false => Value::Bool(false, span),
            Rule::reference => match template::scan_reference(pair.as_str(), span.start as usize, self.diags) {
                Some(r) => Value::Ref(Box::new(r)),
                None => Value::Null(span),
            },
            Rule::object => Value::Object(self.entries(pair), span),
            Rule::array => Value::Array(pair.into_inner().map(|p| self.value(p)).collect(), span),
            _ => Value::Null(span),
        }
    }

    fn key(&mut self, pair: Pair<'_, Rule>) -> Key {
        let span = self.span(&pair);
        let text = pair.as_str();
        let name = if text.starts_with('"') {
            template::scan_text(text, span.start as usize, self.diags).value
        } else {
            text.into()
        };
        Key { name, span }
    }

    fn ident(&mut self, pair: Pair<'_, Rule>) -> Ident {
        Ident { name: pair.as_str().into(), span: self.span(&pair) }
    }

    fn text(&mut self, pair: Pair<'_, Rule>) -> Text {
        let start = self.base + pair.as_span().start();
        template::scan_text(pair.as_str(), start, self.diags)
    }

    fn template(&mut self, pair: Pair<'_, Rule>) -> Template {
        let start = self.base + pair.as_span().start();
        template::scan_template(pair.as_str(), start, self.diags)
    }
}

/// A name the grammar guarantees; never reached on a successful parse.
fn missing(span: Span) -> Ident {
    Ident { name: Str::default(), span }
}

use crate::ast::Pair as Pair_;
