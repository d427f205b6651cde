//! Source text to AST. The only module that knows pest.
//!
//! The file is parsed one top-level item at a time: each item's pairs are
//! lowered to AST and dropped before the next item is parsed, which keeps
//! peak memory near the size of the AST (docs/architecture.md).

mod errors;
mod failure;
mod grammar;
pub mod lexer;
mod mistakes;

pub use errors::recognised_mistake;

/// The names of the mistake recognisers, in the order they are tried.
pub fn mistake_names() -> impl Iterator<Item = &'static str> {
    mistakes::RECOGNISERS.iter().map(|(name, _)| *name)
}
pub mod template;

use pest::iterators::Pair;
use pest::Parser as _;

use crate::base::diagnostics::{Code, Diagnostic, Findings};
use crate::base::source::{SourceFile, Span};
use crate::language::ast::*;

use grammar::{BlkParser, Rule};

/// The largest file blkc reads (64 MiB).
pub const MAX_FILE_SIZE: usize = 64 * 1024 * 1024;
/// The deepest nesting of `{…}` and `[…]` a file may have.
pub const MAX_DEPTH: usize = 64;

/// The most operators in one calculation: an expression is a tree, and a
/// tree of a million `+` would take a million frames to walk.
pub const MAX_OPERATIONS: usize = 256;

/// The result of parsing: the AST of what could be read, every diagnostic,
/// and whether parsing stopped early (so the checker should not run).
#[derive(Debug)]
pub struct Parsed {
    pub ast: File,
    pub diagnostics: Findings,
    pub complete: bool,
}

/// Limits on what a file may be: its size and its nesting depth.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_file_size: usize,
    pub max_depth: usize,
    /// How many threads may parse a large file (files under 512 KiB a
    /// thread are parsed on one).
    pub threads: usize,
    /// pest's guard against runaway parsing: the most rule calls one parse
    /// (an item, or a node of a big tree) may make.
    pub call_limit: usize,
    /// A command or event larger than this many bytes is parsed a node at a
    /// time (a whole parse of a big item holds all of its pairs); smaller
    /// ones in one parse, which is quicker.
    pub big_item: usize,
}

impl Default for Limits {
    fn default() -> Self {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8);
        Limits {
            max_file_size: MAX_FILE_SIZE,
            max_depth: MAX_DEPTH,
            threads,
            call_limit: 50_000_000,
            big_item: 256 * 1024,
        }
    }
}

/// B002: a file over the size limit (found without reading past it).
pub fn too_large(limit: usize) -> Diagnostic {
    Diagnostic::new(Code::FileTooLarge, format!("file is larger than the limit of {limit} bytes"))
        .label(Span::new(0, 0), "this file")
        .help("split the commands and events over several files")
}

pub fn parse(source: &SourceFile) -> Parsed {
    parse_with(source, Limits::default())
}

pub fn parse_with(source: &SourceFile, limits: Limits) -> Parsed {
    let text = source.text.as_str();
    let mut parsed = Parsed { ast: File::default(), diagnostics: Findings::new(), complete: false };
    if text.len() > limits.max_file_size {
        parsed.diagnostics.push(too_large(limits.max_file_size));
        return parsed;
    }
    let splits = match scan_structure(text, limits.max_depth) {
        Ok(splits) => splits,
        Err(diag) => {
            parsed.diagnostics.push(*diag);
            return parsed;
        }
    };
    // pest's own guard against runaway parsing, on top of the depth check.
    // Trees are parsed a node at a time, so no single parse is the size of
    // the file.
    pest::set_call_limit(std::num::NonZeroUsize::new(limits.call_limit));

    let splits = &splits[..];
    let chunks = chunk_bounds(text.len(), splits, limits.threads);
    if chunks.len() > 1 {
        let results: Vec<Parsed> = std::thread::scope(|scope| {
            let handles: Vec<_> = chunks
                .iter()
                .map(|&(start, end)| scope.spawn(move || parse_range(text, start, end, splits, limits)))
                .collect();
            handles.into_iter().filter_map(|h| h.join().ok()).collect()
        });
        if results.len() == chunks.len() && results.iter().all(|r| r.complete) {
            for r in results {
                parsed.ast.items.extend(r.ast.items);
                parsed.diagnostics.absorb(r.diagnostics);
            }
            parsed.complete = true;
            return parsed;
        }
        // A syntax error somewhere: the sequential parse reports it exactly
        // as it would have without threads.
    }
    let whole = parse_range(text, 0, text.len(), splits, limits);
    parsed.ast = whole.ast;
    parsed.diagnostics.absorb(whole.diagnostics);
    parsed.complete = whole.complete;
    parsed
}

/// Parses the items that lie in `text[start..end]`, one at a time;
/// `splits` are the ends of the file's items (empty if it is unbalanced).
fn parse_range(text: &str, start: usize, end: usize, splits: &[usize], limits: Limits) -> Parsed {
    let mut parsed = Parsed { ast: File::default(), diagnostics: Findings::new(), complete: false };
    let mut squeezed = lexer::Squeezed::default();
    let mut pos = skip_blank(text, start);
    while pos < end {
        let rest = &text[pos..end];
        let item_end = splits.get(splits.partition_point(|&s| s <= pos)).copied().unwrap_or(end);
        // A command or event is read a node at a time: squeezed up to
        // `big_item`, as written when larger (see `Squeezed`).
        let kept = parsed.diagnostics.mark();
        let by_nodes = if item_end - pos > limits.big_item {
            let nodes = memchr::memchr_iter(b'\n', &text.as_bytes()[pos..item_end.min(text.len())]).count() + 1;
            Lower { base: 0, squeezed: None, diags: &mut parsed.diagnostics, actions: false }
                .tree_by_nodes(text, pos, end, nodes)
        } else if !splits.is_empty() && is_tree_head(text, pos) {
            Lower::squeezed_tree(&mut squeezed, &mut parsed.diagnostics, text, pos, item_end)
        } else {
            None
        };
        match by_nodes {
            Some(Ok((tree, tree_end))) => {
                parsed.ast.items.push(Item::Tree(tree));
                pos = skip_blank(text, tree_end);
                continue;
            }
            Some(Err(bug)) => {
                parsed.diagnostics.push(bug.diagnostic());
                return parsed;
            }
            // Not a tree, or a syntax error in it: the whole item is parsed
            // as written (and any error reported) as one.
            None => parsed.diagnostics.rollback(kept),
        }
        let mut lower = Lower { base: 0, squeezed: None, diags: &mut parsed.diagnostics, actions: false };
        match BlkParser::parse(Rule::item, rest) {
            Ok(mut pairs) => {
                let Some(pair) = pairs.next() else { break };
                let item_end = pair.as_span().end();
                lower.base = pos;
                match lower.item(pair) {
                    Ok(item) => parsed.ast.items.push(item),
                    Err(bug) => {
                        lower.diags.push(bug.diagnostic());
                        return parsed;
                    }
                }
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
    const MIN_CHUNK: usize = 1 << 19;
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

/// Skips blanks and comments (the grammar's WHITESPACE) between items.
fn skip_blank(text: &str, pos: usize) -> usize {
    lexer::skip_trivia(text, pos)
}

/// The nesting-depth limit (B003) and the split points of the file, from
/// the lexer's structure scan.
fn scan_structure(text: &str, max_depth: usize) -> Result<Vec<usize>, Box<Diagnostic>> {
    lexer::structure(text, max_depth).map_err(|(i, depth)| {
        Box::new(
            Diagnostic::new(Code::TooDeep, format!("nesting deeper than {max_depth} levels"))
                .label(Span::new(i, i + 1), format!("level {depth} opens here"))
                .help(format!(
                    "flatten the branches, the body or the calculation; blkc reads at most {max_depth} levels of `{{…}}`, `[…]` and `(…)`"
                )),
        )
    })
}

pub use lexer::open_braces;

/// What the grammar reads as a leaf token, for [`grammar_leaves`].
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GrammarLeaf {
    Str,
    Reference,
    /// A keyword, name, key, number or operator.
    Other,
}

/// The leaf tokens pest reads in the items of `text` that parse (up to the
/// first that does not): where the grammar sees strings and unquoted
/// references. The tests hold the lexer to the same reading.
#[doc(hidden)]
pub fn grammar_leaves(text: &str) -> Vec<(GrammarLeaf, Span)> {
    let mut out = Vec::new();
    let mut pos = skip_blank(text, 0);
    while pos < text.len() {
        let Ok(pairs) = BlkParser::parse(Rule::item, &text[pos..]) else { break };
        let mut end = pos;
        for pair in pairs.flatten() {
            let s = pair.as_span();
            let span = Span::new(pos + s.start(), pos + s.end());
            end = end.max(pos + s.end());
            let leaf = match pair.as_rule() {
                Rule::string => GrammarLeaf::Str,
                Rule::key if pair.as_str().starts_with('"') => GrammarLeaf::Str,
                Rule::reference => GrammarLeaf::Reference,
                rule if holds_tokens(rule) => continue,
                _ => GrammarLeaf::Other,
            };
            out.push((leaf, span));
        }
        pos = skip_blank(text, end);
    }
    out
}

/// A rule whose pair holds other tokens (and the trivia between them), never
/// a token itself.
fn holds_tokens(rule: Rule) -> bool {
    holds_tokens_of_trees(rule) || holds_tokens_of_values(rule)
}

/// [`holds_tokens`] of the first half of the grammar's rules.
fn holds_tokens_of_trees(rule: Rule) -> bool {
    matches!(
        rule,
        Rule::command
            | Rule::event
            | Rule::var_decl
            | Rule::platform
            | Rule::include
            | Rule::option_decl
            | Rule::option_type
            | Rule::option_bound
            | Rule::option_in
            | Rule::option_files
            | Rule::menu
            | Rule::guard
            | Rule::register
            | Rule::subcommand
            | Rule::choice_node
            | Rule::autocomplete
            | Rule::locale
            | Rule::locale_option
            | Rule::locale_choice
            | Rule::var_scope
            | Rule::choices
            | Rule::arith
            | Rule::arith_group
            | Rule::arith_var
            | Rule::reply
            | Rule::update
            | Rule::action
            | Rule::action_subject
            | Rule::action_arg
            | Rule::action_message
            | Rule::reply_text
            | Rule::embed
            | Rule::embed_part
            | Rule::embed_field
            | Rule::handler
            | Rule::button
            | Rule::select
            | Rule::menu_choice
            | Rule::menu_loop
            | Rule::form
            | Rule::form_input
            | Rule::container
            | Rule::section
            | Rule::thumbnail
            | Rule::separator
            | Rule::gallery
            | Rule::media
            | Rule::poll
            | Rule::poll_answer
            | Rule::reply_file
            | Rule::file_text
    )
}

/// [`holds_tokens`] of the rest.
fn holds_tokens_of_values(rule: Rule) -> bool {
    matches!(
        rule,
        Rule::setting
            | Rule::cooldown
            | Rule::save
            | Rule::save_field
            | Rule::schedule
            | Rule::webhook
            | Rule::webhook_word
            | Rule::list_op
            | Rule::op
            | Rule::if_node
            | Rule::for_node
            | Rule::loop_limit
            | Rule::loop_order
            | Rule::loop_join
            | Rule::text_node
            | Rule::branch
            | Rule::condition
            | Rule::api_block
            | Rule::object
            | Rule::array
            | Rule::fixed_object
            | Rule::fixed_array
            | Rule::body_json
            | Rule::body_form
            | Rule::body_text
            | Rule::body_multipart
            | Rule::part
            | Rule::file_part
            | Rule::auth_field
            | Rule::timeout_field
            | Rule::retry_field
            | Rule::failed_field
            | Rule::pages_field
            | Rule::page_setting
            | Rule::cache_field
            | Rule::failed_node
            | Rule::with_node
            | Rule::together_node
            | Rule::later_node
            | Rule::later_part
            | Rule::cancel_node
            | Rule::await_node
            | Rule::var_expires
            | Rule::tree_open
    )
}

/// Whether the item at `pos` is a command or an event.
fn is_tree_head(text: &str, pos: usize) -> bool {
    let rest = &text.as_bytes()[pos..];
    let word = |w: &[u8]| rest.starts_with(w) && !rest.get(w.len()).is_some_and(|&b| lexer::is_word_byte(b));
    word(b"command") || word(b"event") || word(b"handler")
}

/// Where a pair read as written ends: at its last token. pest ends a pair
/// that closes with an optional part not there (`condition`'s `op`,
/// `if`'s `else`) after the blanks and comments it skipped looking for it;
/// its last token is then its last inner pair's. (In squeezed text, a pair
/// ends at its token, and the map back ends it there too.)
fn tight_end(pair: &Pair<'_, Rule>) -> usize {
    let end = pair.as_span().end();
    if !pair.as_str().ends_with([' ', '\t', '\r', '\n']) {
        return end;
    }
    match pair.clone().into_inner().last() {
        Some(last) => tight_end(&last),
        None => end,
    }
}

/// Lowers the pairs of one item to AST, with spans offset by `base` (or
/// mapped back from a squeezed text's).
struct Lower<'d> {
    base: usize,
    squeezed: Option<&'d lexer::Squeezed>,
    diags: &'d mut Findings,
    /// An action was lowered since the tree being read began (its
    /// `Parts::actions`, so the rules on actions skip trees without one).
    actions: bool,
}

/// A rule the lowering did not expect where it found it: a bug in the
/// grammar or the lowering, reported as such rather than read as a
/// plausible node.
#[derive(Debug)]
struct Unexpected {
    rule: Rule,
    /// What was being read.
    within: &'static str,
    span: Span,
}

impl Unexpected {
    fn diagnostic(&self) -> Diagnostic {
        Diagnostic::new(
            Code::Syntax,
            format!("internal error: the parser found {:?} while reading {}", self.rule, self.within),
        )
        .label(self.span, "here")
        .help("this is a bug in blkc's parser, not in the file; please report it with the file")
    }
}

type Lowered<T> = Result<T, Unexpected>;

impl Lower<'_> {
    fn span(&self, pair: &Pair<'_, Rule>) -> Span {
        let s = pair.as_span();
        let end = if self.squeezed.is_some() { s.end() } else { tight_end(pair) };
        self.file_span(self.base + s.start(), self.base + end)
    }

    /// The file's span of `start..end` in the text pest read.
    fn file_span(&self, start: usize, end: usize) -> Span {
        match self.squeezed {
            Some(squeezed) if end > start => Span::new(squeezed.start(start), squeezed.end(end)),
            Some(squeezed) => Span::new(squeezed.start(start), squeezed.start(start)),
            None => Span::new(start, end),
        }
    }

    /// The file's offset of `offset` in the pair pest read last.
    fn at(&self, offset: usize) -> usize {
        match self.squeezed {
            Some(squeezed) => squeezed.start(self.base + offset),
            None => self.base + offset,
        }
    }

    /// A command or event of at most `item_end`, read from its squeezed
    /// text (see [`lexer::Squeezed`]): `None` if that does not parse.
    fn squeezed_tree(
        squeezed: &mut lexer::Squeezed,
        diags: &mut Findings,
        text: &str,
        pos: usize,
        item_end: usize,
    ) -> Option<Lowered<(Tree, usize)>> {
        squeezed.fill(text, pos, item_end);
        let nodes = memchr::memchr_iter(b'\n', &text.as_bytes()[pos..item_end]).count() + 1;
        let mut lower = Lower { base: 0, squeezed: Some(squeezed), diags, actions: false };
        let len = squeezed.text.len();
        Some(lower.tree_by_nodes(&squeezed.text, 0, len, nodes)?.map(|(tree, end)| (tree, squeezed.end(end))))
    }

    fn unexpected<T>(&self, pair: &Pair<'_, Rule>, within: &'static str) -> Lowered<T> {
        Err(Unexpected { rule: pair.as_rule(), within, span: self.span(pair) })
    }

    /// The value of a part the grammar requires, or the bug that it is missing.
    fn required<T>(&self, value: Option<T>, rule: Rule, within: &'static str, span: Span) -> Lowered<T> {
        value.ok_or(Unexpected { rule, within, span })
    }

    /// A command or event read a node at a time: `None` when the text at
    /// `pos` is not a tree's head or does not parse (the caller parses the
    /// whole item then, to report the error), else the tree and where it ends.
    fn tree_by_nodes(&mut self, text: &str, pos: usize, end: usize, nodes: usize) -> Option<Lowered<(Tree, usize)>> {
        let head = BlkParser::parse(Rule::tree_open, &text[pos..end]).ok()?.next()?;
        self.base = pos;
        let mut at = pos + head.as_span().end();
        let (mut kind, mut name, mut description, mut cooldown) = (None, None, None, None);
        let (mut schedule, mut menu, mut webhook) = (None, None, None);
        for p in head.into_inner() {
            match p.as_rule() {
                Rule::kw_command => kind = Some(TreeKind::Command),
                Rule::kw_event => kind = Some(TreeKind::Event),
                Rule::kw_handler => kind = Some(TreeKind::Handler),
                Rule::ident | Rule::name => name = Some(self.ident(p)),
                Rule::menu => match self.menu(p) {
                    Ok((n, m)) => (name, menu) = (Some(n), Some(Box::new(m))),
                    Err(bug) => return Some(Err(bug)),
                },
                Rule::string => description = Some(self.text(p)),
                Rule::cooldown => match self.setting(p) {
                    Ok(c) => cooldown = Some(c),
                    Err(bug) => return Some(Err(bug)),
                },
                Rule::schedule => match self.schedule(p) {
                    Ok(s) => schedule = Some(Box::new(s)),
                    Err(bug) => return Some(Err(bug)),
                },
                Rule::webhook => match self.webhook(p) {
                    Ok(w) => webhook = Some(Box::new(w)),
                    Err(bug) => return Some(Err(bug)),
                },
                _ => return Some(self.unexpected(&p, "a command or event")),
            }
        }
        // At most `nodes` (a node a line): reserved at once, the body never
        // grows by doubling (which briefly holds two copies of a big tree),
        // and is trimmed to its size at the end.
        let mut body = Vec::with_capacity(nodes);
        loop {
            at = skip_blank(text, at);
            match text.as_bytes().get(at) {
                None => return None,
                Some(b'}') if at < end => break,
                Some(_) if at >= end => return None,
                Some(_) => {}
            }
            let node = BlkParser::parse(Rule::node_item, &text[at..end]).ok()?.next()?;
            let node_end = node.as_span().end();
            self.base = at;
            match self.node(node) {
                Ok(n) => body.push(n),
                Err(bug) => return Some(Err(bug)),
            }
            at += node_end;
        }
        body.shrink_to_fit();
        let span = self.file_span(pos, at + 1);
        let (Some(kind), Some(name)) = (kind, name) else {
            return Some(Err(Unexpected { rule: Rule::tree_open, within: "a command or event", span }));
        };
        let parts = Parts::default();
        let mut tree = Tree { kind, name, description, cooldown, schedule, webhook, menu, body, parts, span };
        tree.parts.actions = std::mem::take(&mut self.actions);
        tree.name_parts();
        Some(Ok((tree, at + 1)))
    }

    fn item(&mut self, pair: Pair<'_, Rule>) -> Lowered<Item> {
        Ok(match pair.as_rule() {
            Rule::command => Item::Tree(self.tree(pair, TreeKind::Command)?),
            Rule::event => Item::Tree(self.tree(pair, TreeKind::Event)?),
            Rule::handler => Item::Tree(self.tree(pair, TreeKind::Handler)?),
            Rule::var_decl => Item::Var(self.var_decl(pair)?),
            Rule::platform => Item::Platform(self.platform(pair)?),
            Rule::include => Item::Include(self.include(pair)?),
            Rule::failed_node => match self.node(pair)? {
                Node::Failed(b, span) => Item::Failed(*b, span),
                _ => {
                    return Err(Unexpected {
                        rule: Rule::failed_node,
                        within: "a top-level item",
                        span: Span::default(),
                    })
                }
            },
            _ => return self.unexpected(&pair, "a top-level item"),
        })
    }

    fn tree(&mut self, pair: Pair<'_, Rule>, kind: TreeKind) -> Lowered<Tree> {
        let span = self.span(&pair);
        let mut name = None;
        let mut description = None;
        let mut cooldown = None;
        let mut schedule = None;
        let mut webhook = None;
        let mut menu = None;
        let mut body = Vec::new();
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::kw_command | Rule::kw_event | Rule::kw_handler => {}
                Rule::ident | Rule::name => name = Some(self.ident(p)),
                Rule::menu => {
                    let (n, m) = self.menu(p)?;
                    (name, menu) = (Some(n), Some(Box::new(m)));
                }
                Rule::string => description = Some(self.text(p)),
                Rule::cooldown => cooldown = Some(self.setting(p)?),
                Rule::schedule => schedule = Some(Box::new(self.schedule(p)?)),
                Rule::webhook => webhook = Some(Box::new(self.webhook(p)?)),
                Rule::option_decl
                | Rule::register
                | Rule::guard
                | Rule::api_block
                | Rule::reply
                | Rule::update
                | Rule::form
                | Rule::save
                | Rule::save_field
                | Rule::if_node
                | Rule::for_node
                | Rule::text_node
                | Rule::subcommand
                | Rule::choice_node
                | Rule::failed_node
                | Rule::with_node
                | Rule::together_node
                | Rule::later_node
                | Rule::cancel_node
                | Rule::await_node
                | Rule::action
                | Rule::stop => body.push(self.node(p)?),
                _ => return self.unexpected(&p, "a command or event"),
            }
        }
        let name = self.required(name, Rule::ident, "a command or event", span)?;
        let parts = Parts::default();
        let mut tree = Tree { kind, name, description, cooldown, schedule, webhook, menu, body, parts, span };
        tree.parts.actions = std::mem::take(&mut self.actions);
        tree.name_parts();
        Ok(tree)
    }

    /// `"Show Avatar" for user`: the name (a string's value) and the menu.
    fn menu(&mut self, pair: Pair<'_, Rule>) -> Lowered<(Ident, Menu)> {
        let span = self.span(&pair);
        let (mut name, mut target) = (None, None);
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::string => {
                    let text = self.text(p);
                    name = Some(Ident { name: text.value, span: text.span });
                }
                Rule::kw_for => {}
                Rule::ident => target = Some(self.ident(p)),
                _ => return self.unexpected(&p, "a context-menu command"),
            }
        }
        let name = self.required(name, Rule::string, "a context-menu command", span)?;
        let target = self.required(target, Rule::ident, "a context-menu command", span)?;
        Ok((name, Menu { target, span }))
    }

    /// `every|at|cron "…" [in "ZONE"] channel "…"`.
    fn schedule(&mut self, pair: Pair<'_, Rule>) -> Lowered<Schedule> {
        use crate::language::schedule::Written;
        let span = self.span(&pair);
        let (mut written, mut keyword, mut when, mut zone, mut channel) = (None, span, None, None, None);
        let mut after_in = false;
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::kw_every | Rule::kw_at | Rule::kw_cron => {
                    keyword = self.span(&p);
                    written = Some(match p.as_rule() {
                        Rule::kw_every => Written::Every,
                        Rule::kw_at => Written::At,
                        _ => Written::Cron,
                    });
                }
                Rule::kw_in => after_in = true,
                Rule::kw_channel => after_in = false,
                Rule::string if when.is_none() => when = Some(self.text(p)),
                Rule::string if after_in => zone = Some(self.text(p)),
                Rule::string => channel = Some(self.template(p)),
                _ => return self.unexpected(&p, "a schedule"),
            }
        }
        let written = self.required(written, Rule::schedule, "a schedule", span)?;
        let when = self.required(when, Rule::string, "a schedule", span)?;
        let channel = self.required(channel, Rule::string, "a schedule", span)?;
        Ok(Schedule { written, keyword, when, zone, channel, span })
    }

    /// `webhook "/path" WORD VALUE…`.
    fn webhook(&mut self, pair: Pair<'_, Rule>) -> Lowered<Webhook> {
        let span = self.span(&pair);
        let (mut keyword, mut path, mut words) = (span, None, Vec::new());
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::kw_webhook => keyword = self.span(&p),
                Rule::string => path = Some(self.text(p)),
                Rule::webhook_word => {
                    let (mut word, mut value) = (None, None);
                    for q in p.into_inner() {
                        match q.as_rule() {
                            Rule::ident if word.is_none() => word = Some(self.ident(q)),
                            Rule::ident => value = Some(WebhookValue::Word(self.ident(q))),
                            Rule::string => value = Some(WebhookValue::Text(self.text(q))),
                            _ => return self.unexpected(&q, "a webhook's setting"),
                        }
                    }
                    let word = self.required(word, Rule::ident, "a webhook's setting", span)?;
                    let value = self.required(value, Rule::string, "a webhook's setting", span)?;
                    words.push((word, value));
                }
                _ => return self.unexpected(&p, "a webhook"),
            }
        }
        let path = self.required(path, Rule::string, "a webhook", span)?;
        let sample = words.iter().find(|(w, _)| w.name == "sample").and_then(|(w, v)| match v {
            WebhookValue::Text(t) => {
                Some(Field { keyword: w.span, kind: FieldKind::Sample(vec![t.clone()]), span: t.span })
            }
            WebhookValue::Word(_) => None,
        });
        let name = Ident { name: Webhook::BLOCK.into(), span: keyword };
        let block = ApiBlock { name, fields: sample.into_iter().collect(), span };
        Ok(Webhook { keyword, path, words, block, span })
    }

    /// `after "10m" key "…" note "…" per server { … }`, `at "{when}" { … }`.
    fn later(&mut self, pair: Pair<'_, Rule>) -> Lowered<crate::language::ast::LaterNode> {
        let span = self.span(&pair);
        let (mut at, mut head, mut when, mut key, mut note, mut scope, mut body) =
            (false, span, None, None, None, None, None);
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::kw_at => (at, head.start) = (true, self.span(&p).start),
                Rule::kw_after => head.start = self.span(&p).start,
                Rule::string => (head.end, when) = (self.span(&p).end, Some(self.template(p))),
                Rule::later_part => {
                    let mut inner = p.into_inner();
                    let Some(word) = inner.next() else { continue };
                    match (word.as_rule(), inner.next()) {
                        (Rule::kw_key, Some(value)) => key = Some(self.template(value)),
                        (Rule::kw_note, Some(value)) => note = Some(self.template(value)),
                        (_, _) => scope = word.into_inner().nth(1).map(|w| self.ident(w)),
                    }
                }
                Rule::branch => body = Some(self.branch(p)?),
                _ => {}
            }
        }
        let when = self.required(when, Rule::string, "an `after`", span)?;
        let body = self.required(body, Rule::branch, "an `after`", span)?;
        Ok(crate::language::ast::LaterNode { at, when, key, note, scope, body, head, span })
    }

    /// `await message "30s" as guess { … } timeout { … }`.
    fn await_node(&mut self, pair: Pair<'_, Rule>) -> Lowered<crate::language::ast::AwaitNode> {
        let span = self.span(&pair);
        let (mut head, mut wait, mut name, mut body, mut timeout) = (span, None, None, None, None);
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::string => (head.end, wait) = (self.span(&p).end, Some(self.template(p))),
                Rule::ident => name = Some(self.ident(p)),
                Rule::branch if body.is_none() => body = Some(self.branch(p)?),
                Rule::branch => timeout = Some(self.branch(p)?),
                _ => {}
            }
        }
        let wait = self.required(wait, Rule::string, "an `await`", span)?;
        let name = self.required(name, Rule::ident, "an `await`", span)?;
        let body = self.required(body, Rule::branch, "an `await`", span)?;
        Ok(crate::language::ast::AwaitNode { wait, name, body, timeout, head, span })
    }

    fn var_decl(&mut self, pair: Pair<'_, Rule>) -> Lowered<VarDecl> {
        let span = self.span(&pair);
        let mut name = None;
        let mut scope = None;
        let mut default = None;
        let mut expires = None;
        // The declaration ends at its last token, not at blanks skipped after it.
        let mut span = span;
        for p in pair.into_inner() {
            span.end = self.span(&p).end;
            match p.as_rule() {
                Rule::kw_var => {}
                Rule::ident => name = Some(self.ident(p)),
                Rule::var_scope => match p.into_inner().nth(1) {
                    Some(word) => scope = Some(self.ident(word)),
                    None => return Err(Unexpected { rule: Rule::var_scope, within: "a `var`", span }),
                },
                Rule::var_expires => match p.into_inner().nth(1) {
                    Some(text) => expires = Some(self.text(text)),
                    None => return Err(Unexpected { rule: Rule::var_expires, within: "a `var`", span }),
                },
                _ => default = Some(self.fixed(p)?),
            }
        }
        let name = self.required(name, Rule::ident, "a `var`", span)?;
        Ok(VarDecl { name, scope, default, expires, span })
    }

    fn include(&mut self, pair: Pair<'_, Rule>) -> Lowered<Include> {
        let span = self.span(&pair);
        let mut path = None;
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::kw_include => {}
                Rule::string => path = Some(self.text(p)),
                _ => return self.unexpected(&p, "an `include`"),
            }
        }
        Ok(Include { path: self.required(path, Rule::string, "an `include`", span)?, span })
    }

    fn platform(&mut self, pair: Pair<'_, Rule>) -> Lowered<Platform> {
        let span = self.span(&pair);
        let mut url = None;
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::kw_platform => {}
                Rule::string => url = Some(self.text(p)),
                _ => return self.unexpected(&p, "a `platform`"),
            }
        }
        Ok(Platform { url: self.required(url, Rule::string, "a `platform`", span)?, span })
    }

    fn node(&mut self, pair: Pair<'_, Rule>) -> Lowered<Node> {
        Ok(match pair.as_rule() {
            Rule::option_decl => Node::Option(Box::new(self.option_decl(pair)?)),
            Rule::register => Node::Register(Box::new(self.register(pair)?)),
            Rule::guard => Node::Guard(Box::new(self.guard(pair)?)),
            Rule::api_block => Node::Api(Box::new(self.api_block(pair)?)),
            Rule::reply | Rule::update => Node::Reply(self.reply(pair)?),
            Rule::form => Node::Form(Box::new(self.form(pair)?)),
            Rule::save | Rule::save_field => self.save(pair)?,
            Rule::if_node => Node::If(Box::new(self.if_node(pair)?)),
            Rule::for_node => Node::For(Box::new(self.for_node(pair)?)),
            Rule::text_node => {
                let span = self.span(&pair);
                let string = pair.into_inner().find(|p| p.as_rule() == Rule::string);
                let string = self.required(string, Rule::string, "a `text`", span)?;
                Node::Text(Box::new(self.template(string)), span)
            }
            Rule::stop => Node::Stop(self.span(&pair)),
            Rule::failed_node => {
                let span = self.span(&pair);
                let branch = pair.into_inner().find(|p| p.as_rule() == Rule::branch);
                let branch = self.required(branch, Rule::branch, "a `failed`", span)?;
                Node::Failed(Box::new(self.branch(branch)?), span)
            }
            Rule::with_node => {
                let span = self.span(&pair);
                let mut words = Vec::new();
                let mut body = None;
                for p in pair.into_inner() {
                    match p.as_rule() {
                        Rule::ident => words.push(self.ident(p)),
                        Rule::branch => body = Some(self.branch(p)?),
                        _ => {}
                    }
                }
                let body = self.required(body, Rule::branch, "a `with`", span)?;
                let mut words = words.into_iter();
                let scope = self.required(words.next(), Rule::ident, "a `with`", span)?;
                let whose = self.required(words.next(), Rule::ident, "a `with`", span)?;
                Node::With(Box::new(crate::language::ast::WithNode { scope, whose, body, span }))
            }
            Rule::together_node => {
                let span = self.span(&pair);
                let branch = pair.into_inner().find(|p| p.as_rule() == Rule::branch);
                let branch = self.required(branch, Rule::branch, "a `together`", span)?;
                Node::Together(Box::new(self.branch(branch)?), span)
            }
            Rule::later_node => Node::Later(Box::new(self.later(pair)?)),
            Rule::await_node => Node::Await(Box::new(self.await_node(pair)?)),
            Rule::cancel_node => {
                let span = self.span(&pair);
                let mut key = None;
                let mut scope = None;
                for p in pair.into_inner() {
                    match p.as_rule() {
                        Rule::string => key = Some(self.template(p)),
                        Rule::var_scope => scope = p.into_inner().nth(1).map(|w| self.ident(w)),
                        _ => {}
                    }
                }
                let key = self.required(key, Rule::string, "a `cancel`", span)?;
                Node::Cancel(Box::new(crate::language::ast::CancelNode { key, scope, span }))
            }
            Rule::subcommand => Node::Sub(Box::new(self.sub(pair)?)),
            Rule::action => {
                self.actions = true;
                Node::Action(Box::new(self.action(pair)?))
            }
            Rule::choice_node => {
                let span = self.span(&pair);
                let mut strings = pair.into_inner().filter(|p| p.as_rule() == Rule::string);
                let (name, value) = (strings.next(), strings.next());
                let name = self.required(name, Rule::string, "a `choice`", span)?;
                let value = self.required(value, Rule::string, "a `choice`", span)?;
                Node::Choice(Box::new(ChoiceNode { name: self.template(name), value: self.template(value), span }))
            }
            _ => return self.unexpected(&pair, "a node"),
        })
    }

    /// `subcommand NAME ["…"] [cooldown …] { … }`, `group NAME ["…"] { … }`
    /// (its whole name is given once the command is read: `name_parts`).
    fn sub(&mut self, pair: Pair<'_, Rule>) -> Lowered<Sub> {
        let outer = std::mem::take(&mut self.actions);
        let span = self.span(&pair);
        let (mut keyword, mut group, mut word, mut description, mut cooldown) = (span, false, None, None, None);
        let mut body = Vec::new();
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::kw_subcommand => keyword = self.span(&p),
                Rule::kw_group => (keyword, group) = (self.span(&p), true),
                Rule::name => word = Some(self.ident(p)),
                Rule::string => description = Some(self.text(p)),
                Rule::cooldown => cooldown = Some(self.setting(p)?),
                _ => body.push(self.node(p)?),
            }
        }
        let word: Ident = self.required(word, Rule::name, "a `subcommand`", span)?;
        let mut tree = Tree::inner(TreeKind::Command, word.clone(), (description, cooldown), body, span);
        tree.parts.actions = self.actions;
        self.actions |= outer;
        Ok(Sub { group, keyword, word, tree })
    }

    /// `autocomplete { … }`: a tree of its own (named once its command is
    /// read: `name_parts`).
    fn autocomplete(&mut self, pair: Pair<'_, Rule>, option: &Ident) -> Lowered<Autocomplete> {
        let outer = std::mem::take(&mut self.actions);
        let span = self.span(&pair);
        let mut keyword = span;
        let mut body = Vec::new();
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::kw_autocomplete => keyword = self.span(&p),
                _ => body.push(self.node(p)?),
            }
        }
        let mut tree = Tree::inner(TreeKind::Autocomplete, option.clone(), (None, None), body, span);
        tree.parts.actions = self.actions;
        self.actions |= outer;
        Ok(Autocomplete { keyword, tree })
    }

    fn option_decl(&mut self, pair: Pair<'_, Rule>) -> Lowered<OptionDecl> {
        let span = self.span(&pair);
        let mut name = None;
        let mut description = None;
        let mut kind = None;
        let mut required = None;
        let mut bounds = Vec::new();
        let mut channels = None;
        let mut file_types = None;
        let mut choices = None;
        let mut autocomplete = None;
        // The node ends at its last token, not at the blanks the grammar's
        // optional parts skipped looking for more.
        let mut span = span;
        for p in pair.into_inner() {
            span.end = self.span(&p).end;
            match p.as_rule() {
                Rule::kw_option => {}
                Rule::name => name = Some(self.ident(p)),
                Rule::string => description = Some(self.text(p)),
                Rule::option_type => match p.into_inner().next() {
                    Some(word) => kind = Some(self.ident(word)),
                    None => return Err(Unexpected { rule: Rule::option_type, within: "an `option`", span }),
                },
                Rule::kw_required => required = Some(self.span(&p)),
                Rule::option_bound => {
                    let at = self.span(&p);
                    let max = p.as_str().starts_with("max");
                    let number = p.into_inner().find(|q| q.as_rule() == Rule::number);
                    let number = self.required(number, Rule::number, "an option's `min` or `max`", at)?;
                    bounds.push(OptionBound { max, value: number.as_str().into(), span: at });
                }
                Rule::option_in => {
                    let at = self.span(&p);
                    let mut inner = p.into_inner();
                    let keyword = inner.next().map_or(at, |k| self.span(&k));
                    channels = Some(Words { keyword, words: inner.map(|w| self.ident(w)).collect(), span: at });
                }
                Rule::option_files => {
                    let at = self.span(&p);
                    let mut inner = p.into_inner();
                    let keyword = inner.next().map_or(at, |k| self.span(&k));
                    let string = inner.find(|q| q.as_rule() == Rule::string);
                    file_types =
                        Some((keyword, self.text(self.required(string, Rule::string, "an option's `types`", at)?)));
                }
                Rule::choices => choices = Some(self.choices(p)?),
                Rule::autocomplete => {
                    let option = self.required(name.as_ref(), Rule::name, "an `option`", span)?;
                    autocomplete = Some(Box::new(self.autocomplete(p, option)?));
                }
                _ => return self.unexpected(&p, "an `option`"),
            }
        }
        let name = self.required(name, Rule::ident, "an `option`", span)?;
        Ok(OptionDecl { name, description, kind, required, bounds, channels, file_types, choices, autocomplete, span })
    }

    /// `require WORD value, …`.
    fn guard(&mut self, pair: Pair<'_, Rule>) -> Lowered<Guard> {
        let span = self.span(&pair);
        let mut inner = pair.into_inner().skip(1);
        let what = inner.next().filter(|p| p.as_rule() == Rule::ident);
        let what = what.map(|p| self.ident(p));
        let what = self.required(what, Rule::ident, "a `require`", span)?;
        let mut values = Vec::new();
        for p in inner {
            values.push(match p.as_rule() {
                Rule::string => GuardValue::Text(self.template(p)),
                Rule::ident => GuardValue::Word(self.ident(p)),
                _ => return self.unexpected(&p, "a `require`"),
            });
        }
        Ok(Guard { what, values, span })
    }

    /// `permissions a, b`, `contexts …`, `installs …`, `nsfw`, `locale …`.
    fn register(&mut self, pair: Pair<'_, Rule>) -> Lowered<Register> {
        let span = self.span(&pair);
        let mut inner = pair.into_inner();
        let Some(first) = inner.next() else {
            return Err(Unexpected { rule: Rule::register, within: "a command's registration", span });
        };
        let rule = first.as_rule();
        if rule == Rule::locale {
            return Ok(Register::Locale(self.locale(first)?));
        }
        let keyword = self.span(&first);
        let words = Words { keyword, words: inner.map(|p| self.ident(p)).collect(), span };
        Ok(match rule {
            Rule::kw_permissions => Register::Permissions(words),
            Rule::kw_contexts => Register::Contexts(words),
            Rule::kw_installs => Register::Installs(words),
            Rule::kw_nsfw => Register::Nsfw(span),
            _ => return self.unexpected(&first, "a command's registration"),
        })
    }

    /// `locale fr "name" ["description"] [{ option "name" ["description"] … }]`.
    fn locale(&mut self, pair: Pair<'_, Rule>) -> Lowered<Locale> {
        let span = self.span(&pair);
        let (mut locale, mut texts, mut options, mut choices) = (None, Vec::new(), Vec::new(), Vec::new());
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::kw_locale => {}
                Rule::name => locale = Some(self.ident(p)),
                Rule::string => texts.push(self.text(p)),
                Rule::locale_option => {
                    let at = self.span(&p);
                    let (mut option, mut texts) = (None, Vec::new());
                    for q in p.into_inner() {
                        match q.as_rule() {
                            Rule::name => option = Some(self.ident(q)),
                            _ => texts.push(self.text(q)),
                        }
                    }
                    let option = self.required(option, Rule::name, "a `locale`'s option", at)?;
                    let mut texts = texts.into_iter();
                    let name = self.required(texts.next(), Rule::string, "a `locale`'s option", at)?;
                    options.push(LocaleOption { option, name, description: texts.next(), span: at });
                }
                Rule::locale_choice => {
                    let at = self.span(&p);
                    let mut texts = p.into_inner().map(|q| self.text(q));
                    let (written, translated) = (texts.next(), texts.next());
                    let written = self.required(written, Rule::string, "a `locale`'s choice", at)?;
                    let translated = self.required(translated, Rule::string, "a `locale`'s choice", at)?;
                    choices.push((written, translated));
                }
                _ => return self.unexpected(&p, "a `locale`"),
            }
        }
        let locale = self.required(locale, Rule::name, "a `locale`", span)?;
        let mut texts = texts.into_iter();
        let name = self.required(texts.next(), Rule::string, "a `locale`", span)?;
        Ok(Locale { locale, name, description: texts.next(), options, choices, span })
    }

    /// `choices { "Shown" = value, … }`: the keyword, then key and value tokens.
    fn choices(&mut self, pair: Pair<'_, Rule>) -> Lowered<Choices> {
        let span = self.span(&pair);
        let mut inner = pair.into_inner();
        let keyword = inner.next().map_or(span, |k| self.span(&k));
        let mut entries = Vec::new();
        while let Some(key) = inner.next() {
            let name = self.key(key)?;
            let value = match inner.next() {
                Some(p) if p.as_rule() == Rule::string => ChoiceValue::Text(self.text(p)),
                Some(p) if p.as_rule() == Rule::number => ChoiceValue::Number(p.as_str().into(), self.span(&p)),
                Some(p) => return self.unexpected(&p, "a choice"),
                None => {
                    return Err(Unexpected { rule: Rule::key, within: "a choice without its value", span: name.span })
                }
            };
            entries.push(Choice { span: name.span.to(value.span()), name, value });
        }
        Ok(Choices { entries, keyword, span })
    }

    fn reply(&mut self, pair: Pair<'_, Rule>) -> Lowered<Reply> {
        let span = self.span(&pair);
        let mut items = Vec::new();
        let mut block = true;
        let mut update = false;
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::kw_reply => {}
                Rule::kw_update => update = true,
                Rule::string => {
                    block = false;
                    let value = self.template(p);
                    items.push(ReplyItem::Text { span: value.span, value });
                }
                _ => items.extend(self.reply_item(p)?),
            }
        }
        if !block && items.is_empty() {
            return Err(Unexpected { rule: Rule::string, within: "a `reply`", span });
        }
        Ok(Reply { items, block, update, span })
    }

    /// A part of a message: `text`, `ephemeral`, an embed, a component.
    fn reply_item(&mut self, p: Pair<'_, Rule>) -> Lowered<Option<ReplyItem>> {
        let span = self.span(&p);
        Ok(Some(match p.as_rule() {
            Rule::reply_text => {
                let mut inner = p.into_inner();
                let locale = inner.clone().find(|p| p.as_rule() == Rule::name).map(|n| self.ident(n));
                let string = inner.find(|p| p.as_rule() == Rule::string);
                let string = self.required(string, Rule::string, "a reply's `text`", span)?;
                let value = self.template(string);
                match locale {
                    Some(locale) => {
                        ReplyItem::Translation(Box::new(crate::language::ast::Translation { locale, value, span }))
                    }
                    None => ReplyItem::Text { value, span },
                }
            }
            Rule::kw_ephemeral => ReplyItem::Ephemeral(span),
            Rule::embed => ReplyItem::Embed(self.embed(p)?),
            Rule::button | Rule::select => ReplyItem::Component(Box::new(self.component(p)?)),
            Rule::container | Rule::section | Rule::separator | Rule::gallery => {
                ReplyItem::Layout(Box::new(self.layout(p)?))
            }
            Rule::poll => ReplyItem::Poll(Box::new(self.poll(p)?)),
            Rule::reply_file => ReplyItem::File(Box::new(self.reply_file(p)?)),
            _ => return self.unexpected(&p, "a `reply`"),
        }))
    }

    /// `file SOURCE { settings }` in a message.
    fn reply_file(&mut self, pair: Pair<'_, Rule>) -> Lowered<ReplyFile> {
        let span = self.span(&pair);
        let (mut keyword, mut source, mut settings) = (span, None, Vec::new());
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::kw_file => keyword = self.span(&p),
                Rule::setting => settings.push(self.setting(p)?),
                _ => source = Some(self.file_source(p, "a message's `file`")?),
            }
        }
        let source = self.required(source, Rule::string, "a message's `file`", span)?;
        Ok(ReplyFile { keyword, source, settings, span })
    }

    /// Where a file's bytes come from: a path (a string), a name, or
    /// `text "…"`.
    fn file_source(&mut self, p: Pair<'_, Rule>, within: &'static str) -> Lowered<FileSource> {
        Ok(match p.as_rule() {
            Rule::string => FileSource::Path(self.text(p)),
            Rule::ident => FileSource::Name(self.ident(p)),
            Rule::file_text => {
                let span = self.span(&p);
                let string = p.into_inner().find(|q| q.as_rule() == Rule::string);
                FileSource::Text(self.template(self.required(string, Rule::string, within, span)?))
            }
            _ => return self.unexpected(&p, within),
        })
    }

    /// `container { … }`, `section { … }`, `separator [{ … }]` or
    /// `gallery { media … }`: a part of a layout message.
    fn layout(&mut self, pair: Pair<'_, Rule>) -> Lowered<Layout> {
        let span = self.span(&pair);
        let kind = match pair.as_rule() {
            Rule::container => LayoutKind::Container,
            Rule::section => LayoutKind::Section,
            Rule::separator => LayoutKind::Separator,
            _ => LayoutKind::Gallery,
        };
        let mut layout =
            Layout { kind, keyword: span, items: Vec::new(), media: Vec::new(), settings: Vec::new(), span };
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::kw_container | Rule::kw_section | Rule::kw_separator | Rule::kw_gallery => {
                    layout.keyword = self.span(&p)
                }
                Rule::setting => layout.settings.push(self.setting(p)?),
                Rule::thumbnail | Rule::media => layout.media.push(self.media(p)?),
                _ => layout.items.extend(self.reply_item(p)?),
            }
        }
        Ok(layout)
    }

    /// `poll { settings and answers }`.
    fn poll(&mut self, pair: Pair<'_, Rule>) -> Lowered<Poll> {
        let span = self.span(&pair);
        let mut poll = Poll { keyword: span, settings: Vec::new(), answers: Vec::new(), span };
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::kw_poll => poll.keyword = self.span(&p),
                Rule::setting => poll.settings.push(self.setting(p)?),
                Rule::poll_answer => {
                    let answer_span = self.span(&p);
                    let (mut text, mut settings) = (None, Vec::new());
                    for q in p.into_inner() {
                        match q.as_rule() {
                            Rule::kw_answer => {}
                            Rule::string => text = Some(self.template(q)),
                            Rule::setting => settings.push(self.setting(q)?),
                            _ => return self.unexpected(&q, "a poll's answer"),
                        }
                    }
                    let text = self.required(text, Rule::string, "a poll's answer", answer_span)?;
                    poll.answers.push(PollAnswer { text, settings, span: answer_span });
                }
                _ => return self.unexpected(&p, "a poll"),
            }
        }
        Ok(poll)
    }

    /// `thumbnail "…" { settings }` or `media "…" { settings }`.
    fn media(&mut self, pair: Pair<'_, Rule>) -> Lowered<Media> {
        let span = self.span(&pair);
        let (mut keyword, mut url, mut settings) = (span, None, Vec::new());
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::kw_thumbnail | Rule::kw_media => keyword = self.span(&p),
                Rule::string => url = Some(self.template(p)),
                Rule::setting => settings.push(self.setting(p)?),
                _ => return self.unexpected(&p, "an image"),
            }
        }
        let url = self.required(url, Rule::string, "an image", span)?;
        Ok(Media { keyword, url, settings, span })
    }

    /// `VERB [KIND] [SUBJECT] [WORD VALUE, …]… [MESSAGE]`: a platform action.
    fn action(&mut self, pair: Pair<'_, Rule>) -> Lowered<Action> {
        let mut span = self.span(&pair);
        let (mut verb, mut kind, mut subject, mut args, mut message) = (None, None, None, Vec::new(), None);
        for p in pair.into_inner() {
            // The action ends at its last token, not at blanks skipped after it.
            span.end = self.span(&p).end;
            match p.as_rule() {
                Rule::action_verb => verb = Some(self.ident(p)),
                Rule::action_kind => kind = Some(self.ident(p)),
                Rule::action_subject => match p.into_inner().next() {
                    Some(value) => subject = Some(self.action_value(value)),
                    None => return Err(Unexpected { rule: Rule::action_subject, within: "an action", span }),
                },
                Rule::action_arg => args.push(self.action_arg(p)?),
                Rule::action_message => {
                    let mut items = Vec::new();
                    let mut block = true;
                    let message_span = self.span(&p);
                    for part in p.into_inner() {
                        match part.as_rule() {
                            Rule::string => {
                                block = false;
                                let value = self.template(part);
                                items.push(ReplyItem::Text { span: value.span, value });
                            }
                            _ => items.extend(self.reply_item(part)?),
                        }
                    }
                    message = Some(Reply { items, block, update: false, span: message_span });
                }
                _ => return self.unexpected(&p, "an action"),
            }
        }
        let verb = self.required(verb, Rule::action_verb, "an action", span)?;
        Ok(Action { verb, kind, subject, args, message, span })
    }

    fn action_value(&mut self, pair: Pair<'_, Rule>) -> ActionValue {
        match pair.as_rule() {
            Rule::string => ActionValue::Text(self.template(pair)),
            Rule::number => ActionValue::Number(pair.as_str().into(), self.span(&pair)),
            _ => ActionValue::Name(self.ident(pair)),
        }
    }

    /// `WORD VALUE[, VALUE…]`, `as NAME` or a flag.
    fn action_arg(&mut self, pair: Pair<'_, Rule>) -> Lowered<ActionArg> {
        let span = self.span(&pair);
        let (mut word, mut values) = (None, Vec::new());
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::action_word | Rule::action_to | Rule::action_flag | Rule::kw_as => word = Some(self.ident(p)),
                Rule::string | Rule::number | Rule::ident => values.push(self.action_value(p)),
                _ => return self.unexpected(&p, "an action's word"),
            }
        }
        let word = self.required(word, Rule::action_word, "an action", span)?;
        Ok(ActionArg { word, values, span })
    }

    /// `button [handler] { settings }` or `select handler { choices and settings }`.
    fn component(&mut self, pair: Pair<'_, Rule>) -> Lowered<Component> {
        let span = self.span(&pair);
        let kind = if pair.as_rule() == Rule::button { ComponentKind::Button } else { ComponentKind::Select };
        let (mut keyword, mut handler) = (span, None);
        let (mut settings, mut choices) = (Vec::new(), Vec::new());
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::kw_button | Rule::kw_select => keyword = self.span(&p),
                Rule::ident => handler = Some(self.ident(p)),
                Rule::setting => settings.push(self.setting(p)?),
                Rule::menu_choice => choices.push(self.menu_choice(p)?),
                Rule::menu_loop => choices.push(self.menu_loop(p)?),
                _ => return self.unexpected(&p, "a button or select menu"),
            }
        }
        Ok(Component { kind, keyword, handler, settings, choices, span })
    }

    /// `choice "Label" "value" { settings }`.
    fn menu_choice(&mut self, pair: Pair<'_, Rule>) -> Lowered<MenuChoice> {
        let whole = self.span(&pair);
        let mut span = whole;
        let (mut texts, mut settings) = (Vec::new(), Vec::new());
        for p in pair.into_inner() {
            span.end = self.span(&p).end;
            match p.as_rule() {
                Rule::kw_choice => {}
                Rule::string => texts.push(self.template(p)),
                Rule::setting => settings.push(self.setting(p)?),
                _ => return self.unexpected(&p, "a `choice`"),
            }
        }
        // With settings, the choice ends at their `}` (a comment before it
        // is inside the choice, where the formatter keeps it).
        if !settings.is_empty() {
            span.end = whole.end;
        }
        let mut texts = texts.into_iter();
        let label = self.required(texts.next(), Rule::string, "a `choice`", span)?;
        let value = self.required(texts.next(), Rule::string, "a `choice`", span)?;
        Ok(MenuChoice { label, value, settings, each: None, span })
    }

    /// `for r in SOURCE [limit N] { choice … }`: the choice, with its loop.
    fn menu_loop(&mut self, pair: Pair<'_, Rule>) -> Lowered<MenuChoice> {
        let span = self.span(&pair);
        let (mut item, mut source, mut limit, mut choice) = (None, None, None, None);
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::kw_for | Rule::kw_in => {}
                Rule::ident if item.is_none() => item = Some(self.ident(p)),
                Rule::ident | Rule::reference => source = Some(self.loop_source(p)?),
                Rule::loop_limit => limit = Some(self.loop_limit(p, span)?),
                Rule::menu_choice => choice = Some(self.menu_choice(p)?),
                _ => return self.unexpected(&p, "a `for` of choices"),
            }
        }
        let mut choice = self.required(choice, Rule::menu_choice, "a `for` of choices", span)?;
        let body = Branch { body: Vec::new(), span: choice.span };
        choice.each = Some(Box::new(ForNode {
            item: self.required(item, Rule::ident, "a `for` of choices", span)?,
            source: self.required(source, Rule::reference, "a `for` of choices", span)?,
            order: None,
            limit,
            join: None,
            body,
            span,
        }));
        Ok(choice)
    }

    /// A word and at most one string or number; it ends at its last token.
    /// `word [value] [per scope]`; or a tree's `cooldown …`, whose keyword
    /// is its word.
    fn setting(&mut self, pair: Pair<'_, Rule>) -> Lowered<Setting> {
        let mut span = self.span(&pair);
        let (mut key, mut value, mut scope) = (None, None, None);
        for p in pair.into_inner() {
            span.end = self.span(&p).end;
            match p.as_rule() {
                Rule::ident => key = Some(self.ident(p)),
                Rule::kw_cooldown => key = Some(self.ident(p)),
                Rule::string => value = Some(SettingValue::Text(self.template(p))),
                Rule::number => value = Some(SettingValue::Number(p.as_str().into(), self.span(&p))),
                Rule::var_scope => match p.into_inner().nth(1) {
                    Some(word) => scope = Some(self.ident(word)),
                    None => return Err(Unexpected { rule: Rule::var_scope, within: "a setting", span }),
                },
                _ => return self.unexpected(&p, "a setting"),
            }
        }
        Ok(Setting { key: self.required(key, Rule::ident, "a setting", span)?, value, scope, span })
    }

    /// `form handler { settings and inputs }`.
    fn form(&mut self, pair: Pair<'_, Rule>) -> Lowered<Form> {
        let span = self.span(&pair);
        let (mut handler, mut settings, mut inputs, mut texts) = (None, Vec::new(), Vec::new(), Vec::new());
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::kw_form => {}
                Rule::ident => handler = Some(self.ident(p)),
                Rule::setting => settings.push(self.setting(p)?),
                Rule::reply_text => texts.extend(self.reply_item(p)?),
                Rule::form_input => inputs.push(self.input(p)?),
                _ => return self.unexpected(&p, "a `form`"),
            }
        }
        let handler = self.required(handler, Rule::ident, "a `form`", span)?;
        Ok(Form { handler, settings, inputs, texts, span })
    }

    /// `input NAME { settings and choices }`.
    fn input(&mut self, pair: Pair<'_, Rule>) -> Lowered<Input> {
        let span = self.span(&pair);
        let (mut name, mut settings, mut choices) = (None, Vec::new(), Vec::new());
        for q in pair.into_inner() {
            match q.as_rule() {
                Rule::kw_input => {}
                Rule::ident => name = Some(self.ident(q)),
                Rule::setting => settings.push(self.setting(q)?),
                Rule::menu_choice => choices.push(self.menu_choice(q)?),
                Rule::menu_loop => choices.push(self.menu_loop(q)?),
                _ => return self.unexpected(&q, "an `input`"),
            }
        }
        let name = self.required(name, Rule::ident, "an `input`", span)?;
        Ok(Input { name, settings, choices, span })
    }

    fn embed(&mut self, pair: Pair<'_, Rule>) -> Lowered<Embed> {
        let span = self.span(&pair);
        let mut items = Vec::new();
        for p in pair.into_inner() {
            let item_span = self.span(&p);
            match p.as_rule() {
                Rule::kw_embed => {}
                Rule::embed_part => {
                    let (mut part, mut key, mut value) = (None, item_span, None);
                    for q in p.into_inner() {
                        match q.as_rule() {
                            Rule::embed_key => {
                                key = self.span(&q);
                                part = crate::language::vocab::EmbedPart::parse(q.as_str());
                            }
                            Rule::string => value = Some(self.template(q)),
                            _ => return self.unexpected(&q, "an embed part"),
                        }
                    }
                    let part = self.required(part, Rule::embed_key, "an embed part", item_span)?;
                    let value = self.required(value, Rule::string, "an embed part", item_span)?;
                    items.push(EmbedItem::Part { part, key, value, span: item_span });
                }
                Rule::embed_field => {
                    let (mut texts, mut inline) = (Vec::new(), None);
                    for q in p.into_inner() {
                        match q.as_rule() {
                            Rule::kw_field => {}
                            Rule::string => texts.push(self.template(q)),
                            Rule::kw_inline => inline = Some(self.span(&q)),
                            _ => return self.unexpected(&q, "an embed `field`"),
                        }
                    }
                    let mut texts = texts.into_iter();
                    let name = self.required(texts.next(), Rule::string, "an embed `field`", item_span)?;
                    let value = self.required(texts.next(), Rule::string, "an embed `field`", item_span)?;
                    items.push(EmbedItem::Field { name, value, inline, span: item_span });
                }
                _ => return self.unexpected(&p, "an `embed`"),
            }
        }
        Ok(Embed { items, span })
    }

    fn save(&mut self, pair: Pair<'_, Rule>) -> Lowered<Node> {
        let span = self.span(&pair);
        let mut name = None;
        let mut field = None;
        let mut value = None;
        let mut op = SaveOp::Set;
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::kw_save => {}
                Rule::ident if name.is_none() => name = Some(self.ident(p)),
                // `save settings[mode] = …`: a field of the variable.
                Rule::reference if name.is_none() => {
                    let at = self.span(&p);
                    let (target, path) = match self.value(p)? {
                        Value::Element(e) => (e.item, e.segments),
                        // (`api_x[…]` is no variable: the checker says so of its name.)
                        Value::Ref(r) => {
                            (Ident { name: format!("api_{}", r.block.name).into(), span: r.block.span }, Vec::new())
                        }
                        _ => (Ident { name: "".into(), span: at }, Vec::new()),
                    };
                    name = Some(target);
                    field = Some((path, at));
                }
                Rule::list_op => {
                    let at = p.clone().into_inner().any(|w| w.as_rule() == Rule::kw_at);
                    let append = p.as_str().starts_with("append");
                    op = if append {
                        SaveOp::Append
                    } else if at {
                        SaveOp::RemoveAt
                    } else {
                        SaveOp::Remove
                    };
                }
                // `clear` saves an empty list.
                Rule::kw_clear => {
                    op = SaveOp::Clear;
                    value = Some(Value::Array(Box::new([]), self.span(&p)));
                }
                _ => value = Some(self.value(p)?),
            }
        }
        let name = self.required(name, Rule::ident, "a `save`", span)?;
        let value = self.required(value, Rule::value, "a `save`", span)?;
        // The node ends at its value (`Save::span`), not at blanks a
        // calculation looked past.
        let save = Save { name, value, start: span.start, op };
        Ok(match field {
            Some((path, span)) => Node::SaveField(Box::new(crate::language::ast::SaveField { save, path, span })),
            None => Node::Save(save),
        })
    }

    /// `if … else if … else …`: a flat stream of `if`/`else` keywords,
    /// conditions and branches (the grammar repeats, never nests).
    fn if_node(&mut self, pair: Pair<'_, Rule>) -> Lowered<IfNode> {
        let span = self.span(&pair);
        let mut links = Vec::new();
        let mut otherwise = None;
        let mut condition = None;
        let mut link_start = span;
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::kw_if => link_start = self.span(&p),
                Rule::kw_else => {}
                Rule::condition => condition = Some(self.condition(p)?),
                Rule::branch => {
                    let branch = self.branch(p)?;
                    match condition.take() {
                        Some(condition) => {
                            let span = link_start.to(branch.span);
                            links.push(IfLink { condition, then: branch, span });
                        }
                        None => otherwise = Some(branch),
                    }
                }
                _ => return self.unexpected(&p, "an `if`"),
            }
        }
        if links.is_empty() {
            return Err(Unexpected { rule: Rule::condition, within: "an `if`", span });
        }
        Ok(IfNode { links, otherwise, span })
    }

    /// `for NAME in SOURCE [limit N] [join "SEP" into NAME] { … }`.
    fn for_node(&mut self, pair: Pair<'_, Rule>) -> Lowered<ForNode> {
        let span = self.span(&pair);
        let mut item = None;
        let mut source = None;
        let mut limit = None;
        let mut join = None;
        let mut body = None;
        let mut order = None;
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::kw_for | Rule::kw_in => {}
                Rule::ident if item.is_none() => item = Some(self.ident(p)),
                Rule::ident | Rule::reference => source = Some(self.loop_source(p)?),
                Rule::loop_order => {
                    let order_span = self.span(&p);
                    let mut key = None;
                    let mut descending = false;
                    for q in p.into_inner() {
                        match q.as_rule() {
                            Rule::kw_by => {}
                            Rule::kw_desc => descending = true,
                            _ => key = Some(self.loop_source(q)?),
                        }
                    }
                    let key = self.required(key, Rule::reference, "a loop's `by`", order_span)?;
                    order = Some(LoopOrder { key, descending, span: order_span });
                }
                Rule::loop_limit => limit = Some(self.loop_limit(p, span)?),
                Rule::loop_join => {
                    let join_span = self.span(&p);
                    let mut separator = None;
                    let mut into = None;
                    for q in p.into_inner() {
                        match q.as_rule() {
                            Rule::string => separator = Some(self.template(q)),
                            Rule::ident => into = Some(self.ident(q)),
                            _ => {}
                        }
                    }
                    let separator = self.required(separator, Rule::string, "a loop's `join`", join_span)?;
                    let into = self.required(into, Rule::ident, "a loop's `join`", join_span)?;
                    join = Some(Join { separator, into, span: join_span });
                }
                Rule::branch => body = Some(self.branch(p)?),
                _ => return self.unexpected(&p, "a `for` loop"),
            }
        }
        Ok(ForNode {
            item: self.required(item, Rule::ident, "a `for` loop", span)?,
            source: self.required(source, Rule::reference, "a `for` loop", span)?,
            order,
            limit,
            join,
            body: self.required(body, Rule::branch, "a `for` loop", span)?,
            span,
        })
    }

    /// What a loop runs over: a reference, an element's path, or a name.
    fn loop_source(&mut self, p: Pair<'_, Rule>) -> Lowered<LoopSource> {
        if p.as_rule() == Rule::ident {
            return Ok(LoopSource::Name(self.ident(p)));
        }
        let at = self.span(&p);
        Ok(match self.value(p)? {
            Value::Ref(r) => LoopSource::Ref(r),
            Value::Element(e) => LoopSource::Element(e),
            // Unreadable: its diagnostic is out; a name stands in.
            _ => LoopSource::Name(Ident { name: "".into(), span: at }),
        })
    }

    fn loop_limit(&mut self, p: Pair<'_, Rule>, span: Span) -> Lowered<Value> {
        let value = p.into_inner().find(|p| p.as_rule() != Rule::kw_limit);
        let value = self.required(value, Rule::number, "a loop's `limit`", span)?;
        self.value(value)
    }

    fn branch(&mut self, pair: Pair<'_, Rule>) -> Lowered<Branch> {
        let span = self.span(&pair);
        let body = pair.into_inner().map(|p| self.node(p)).collect::<Lowered<_>>()?;
        Ok(Branch { body, span })
    }

    fn condition(&mut self, pair: Pair<'_, Rule>) -> Lowered<Condition> {
        let span = self.span(&pair);
        let mut inner = pair.into_inner();
        let left = match inner.next() {
            Some(p) => self.value(p)?,
            None => return Err(Unexpected { rule: Rule::operand, within: "a condition", span }),
        };
        let test = match (inner.next(), inner.next()) {
            (Some(op), Some(right)) => Some((self.op(&op)?, self.span(&op), self.value(right)?)),
            (None, None) => None,
            (Some(p), None) | (None, Some(p)) => return self.unexpected(&p, "a condition"),
        };
        Ok(Condition { left, test, span })
    }

    fn op(&self, pair: &Pair<'_, Rule>) -> Lowered<CompareOp> {
        let written = pair.as_str();
        let op = if written.starts_with("starts") {
            "starts with"
        } else if written.starts_with("ends") {
            "ends with"
        } else {
            written
        };
        Ok(match (pair.as_rule(), op) {
            (Rule::op, "==") => CompareOp::Eq,
            (Rule::op, "!=") => CompareOp::Ne,
            (Rule::op, "<") => CompareOp::Lt,
            (Rule::op, "<=") => CompareOp::Le,
            (Rule::op, ">") => CompareOp::Gt,
            (Rule::op, ">=") => CompareOp::Ge,
            (Rule::op, "contains") => CompareOp::Contains,
            (Rule::op, "starts with") => CompareOp::StartsWith,
            (Rule::op, "ends with") => CompareOp::EndsWith,
            _ => return self.unexpected(pair, "a comparison"),
        })
    }

    /// `api NAME { fields }`: the fields arrive as a flat stream, each a
    /// keyword token followed by its value tokens.
    fn api_block(&mut self, pair: Pair<'_, Rule>) -> Lowered<ApiBlock> {
        let span = self.span(&pair);
        let mut inner = pair.into_inner().peekable();
        let mut name = None;
        let mut fields = Vec::with_capacity(6);
        while let Some(p) = inner.next() {
            let keyword = self.span(&p);
            let (kind, end) = match p.as_rule() {
                Rule::kw_api => continue,
                Rule::ident if name.is_none() => {
                    name = Some(self.ident(p));
                    continue;
                }
                Rule::kw_params | Rule::kw_headers => {
                    let mut pairs = Vec::new();
                    while let Some(key) = inner.next_if(|k| k.as_rule() == Rule::key) {
                        pairs.push(self.pair(key, inner.next())?);
                    }
                    let end = pairs.last().map_or(keyword, |p: &Pair_| p.span);
                    let kind = if p.as_rule() == Rule::kw_params {
                        FieldKind::Params(pairs)
                    } else {
                        FieldKind::Headers(pairs)
                    };
                    (kind, end)
                }
                Rule::kw_sample => {
                    let first = match inner.next() {
                        Some(v) if v.as_rule() == Rule::string => self.text(v),
                        Some(v) => return self.unexpected(&v, "a sample"),
                        None => return Err(Unexpected { rule: Rule::kw_sample, within: "a sample", span: keyword }),
                    };
                    let mut more = Vec::new();
                    while let Some(v) = inner.next_if(|v| v.as_rule() == Rule::string) {
                        more.push(self.text(v));
                    }
                    let end = more.last().map_or(first.span, |t: &Text| t.span);
                    (FieldKind::Sample(std::iter::once(first).chain(more).collect()), end)
                }
                rule @ (Rule::kw_method | Rule::kw_url | Rule::kw_body | Rule::kw_allow) => {
                    let Some(value) = inner.next() else {
                        return Err(Unexpected { rule, within: "an api field without its value", span: keyword });
                    };
                    let end = self.span(&value);
                    let kind = match (rule, value.as_rule()) {
                        (Rule::kw_method, Rule::ident) => FieldKind::Method(self.ident(value)),
                        (Rule::kw_url, Rule::string) => FieldKind::Url(self.template(value)),
                        (Rule::kw_body, Rule::object | Rule::array) => {
                            FieldKind::Body(Box::new(Body::Json(self.value(value)?)))
                        }
                        (Rule::kw_body, _) => FieldKind::Body(Box::new(self.body(value)?)),
                        (Rule::kw_allow, Rule::ident) => FieldKind::Allow(self.ident(value)),
                        _ => return self.unexpected(&value, "an api field"),
                    };
                    (kind, end)
                }
                Rule::auth_field
                | Rule::timeout_field
                | Rule::retry_field
                | Rule::failed_field
                | Rule::pages_field
                | Rule::cache_field => {
                    let whole = self.span(&p);
                    let keyword = self.span(&p.clone().into_inner().next().unwrap_or(p.clone()));
                    let kind = self.setting_field(p)?;
                    fields.push(Field { keyword, kind, span: whole });
                    continue;
                }
                _ => return self.unexpected(&p, "an api block"),
            };
            fields.push(Field { keyword, kind, span: keyword.to(end) });
        }
        Ok(ApiBlock { name: self.required(name, Rule::ident, "an api block", span)?, fields, span })
    }

    /// A body of a kind its keyword names: `json`, `form`, `text`, `multipart`.
    fn body(&mut self, pair: Pair<'_, Rule>) -> Lowered<Body> {
        let rule = pair.as_rule();
        let mut inner = pair.into_inner();
        inner.next(); // the kind's keyword
        Ok(match rule {
            Rule::body_json => match inner.next() {
                Some(v) => Body::Json(self.value(v)?),
                None => {
                    return Err(Unexpected { rule, within: "a json body without its value", span: Span::default() })
                }
            },
            Rule::body_form => match inner.next() {
                Some(object) => Body::Form(self.entries(object)?),
                None => {
                    return Err(Unexpected { rule, within: "a form body without its object", span: Span::default() })
                }
            },
            Rule::body_text => {
                let text = inner.next().map(|t| self.template(t));
                let media_type = inner.nth(1).map(|t| self.text(t));
                Body::Text { text: self.required(text, Rule::string, "a text body", Span::default())?, media_type }
            }
            Rule::body_multipart => Body::Multipart(inner.map(|p| self.part(p)).collect::<Lowered<_>>()?),
            _ => return Err(Unexpected { rule, within: "a body", span: Span::default() }),
        })
    }

    /// `name = "text"` or `name = file …`.
    fn part(&mut self, pair: Pair<'_, Rule>) -> Lowered<PartDecl> {
        let span = self.span(&pair);
        let mut inner = pair.into_inner();
        let key = match inner.next() {
            Some(k) => self.key(k)?,
            None => return Err(Unexpected { rule: Rule::part, within: "a part without its name", span }),
        };
        let value = match inner.next() {
            Some(v) if v.as_rule() == Rule::file_part => {
                let file_span = self.span(&v);
                let mut parts = v.into_inner();
                parts.next(); // `file`
                let source = match parts.next() {
                    Some(s) => self.file_source(s, "a file part")?,
                    None => return Err(Unexpected { rule: Rule::file_part, within: "a file part", span: file_span }),
                };
                let mut settings = Vec::new();
                while let (Some(word), Some(value)) = (parts.next(), parts.next()) {
                    settings.push((self.ident(word), self.template(value)));
                }
                PartValue::File(FilePart { source, settings, span: file_span })
            }
            Some(v) if v.as_rule() == Rule::string => PartValue::Field(self.template(v)),
            Some(v) if matches!(v.as_rule(), Rule::number | Rule::kw_true | Rule::kw_false) => {
                let s = self.span(&v);
                PartValue::Field(Template { parts: vec![Part::Lit(v.as_str().into(), s)], span: s })
            }
            Some(v) => return self.unexpected(&v, "a part"),
            None => return Err(Unexpected { rule: Rule::part, within: "a part without its value", span }),
        };
        Ok(PartDecl { key, value, span })
    }

    /// `auth …`, `timeout …`, `retry …`, `failed … { … }`.
    fn setting_field(&mut self, pair: Pair<'_, Rule>) -> Lowered<FieldKind> {
        let rule = pair.as_rule();
        let span = self.span(&pair);
        let mut inner = pair.into_inner();
        inner.next(); // the keyword
        Ok(match rule {
            Rule::auth_field => {
                let scheme = inner.next().map(|w| self.ident(w));
                let values = inner.map(|v| self.template(v)).collect();
                FieldKind::Auth(Box::new(Auth {
                    scheme: self.required(scheme, Rule::ident, "an auth field", span)?,
                    values,
                }))
            }
            Rule::timeout_field => {
                let value = inner.next().map(|v| self.text(v));
                FieldKind::Timeout(self.required(value, Rule::string, "a timeout", span)?)
            }
            Rule::retry_field => {
                let times = inner.next().map(|n| Text { value: n.as_str().into(), span: self.span(&n) });
                let (mut on, mut backoff) = (Vec::new(), None);
                for p in inner {
                    match p.as_rule() {
                        Rule::status_code => on.push(Text { value: p.as_str().into(), span: self.span(&p) }),
                        Rule::string => backoff = Some(self.text(p)),
                        _ => {}
                    }
                }
                FieldKind::Retry(Box::new(Retry {
                    times: self.required(times, Rule::number, "a retry", span)?,
                    on,
                    backoff,
                }))
            }
            Rule::failed_field => {
                let (mut on, mut branch) = (Vec::new(), None);
                for p in inner {
                    match p.as_rule() {
                        Rule::status_code => on.push(Text { value: p.as_str().into(), span: self.span(&p) }),
                        Rule::branch => branch = Some(self.branch(p)?),
                        _ => {}
                    }
                }
                let branch = self.required(branch, Rule::branch, "a failed field", span)?;
                FieldKind::Failed(Box::new(Failed { on, branch }))
            }
            Rule::cache_field => match inner.next() {
                Some(v) if v.as_rule() == Rule::string => FieldKind::Cache(Box::new(Cache::For(self.text(v)))),
                Some(v) => FieldKind::Cache(Box::new(Cache::From(self.key(v)?))),
                None => return Err(Unexpected { rule, within: "a cache field", span }),
            },
            Rule::pages_field => {
                let mut settings = Vec::new();
                for setting in inner {
                    settings.push(self.page_setting(setting)?);
                }
                FieldKind::Pages(Box::new(Pages { settings, span }))
            }
            _ => return Err(Unexpected { rule, within: "an api field", span }),
        })
    }

    /// `items PATH`, `cursor PATH param NAME`, `next PATH`, `next link`,
    /// `max N`, `limit N`.
    fn page_setting(&mut self, pair: Pair<'_, Rule>) -> Lowered<PageSetting> {
        let span = self.span(&pair);
        let mut inner = pair.into_inner();
        let rule = inner.next().map(|w| w.as_rule());
        let missing = || Unexpected { rule: Rule::page_setting, within: "a setting of pages", span };
        let (Some(rule), at) = (rule, span) else { return Err(missing()) };
        let mut keys = Vec::new();
        let mut number = None;
        let mut link = false;
        for p in inner {
            match p.as_rule() {
                Rule::key => keys.push(self.key(p)?),
                Rule::number => number = Some(Text { value: p.as_str().into(), span: self.span(&p) }),
                Rule::kw_link => link = true,
                _ => {}
            }
        }
        let mut keys = keys.into_iter();
        Ok(match rule {
            Rule::kw_items => PageSetting::Items(at, keys.next().ok_or_else(missing)?),
            Rule::kw_cursor => {
                let path = keys.next().ok_or_else(missing)?;
                PageSetting::Cursor(at, path, keys.next().ok_or_else(missing)?)
            }
            Rule::kw_next if link => PageSetting::NextLink(at),
            Rule::kw_next => PageSetting::Next(at, keys.next().ok_or_else(missing)?),
            Rule::kw_max => PageSetting::Max(at, number.ok_or_else(missing)?),
            Rule::kw_limit => PageSetting::Limit(at, number.ok_or_else(missing)?),
            _ => return Err(missing()),
        })
    }

    /// A URL parameter or header: a key token and its value token.
    fn pair(&mut self, key: Pair<'_, Rule>, value: Option<Pair<'_, Rule>>) -> Lowered<Pair_> {
        let key = self.key(key)?;
        let value = match value {
            Some(p) if p.as_rule() == Rule::string => self.template(p),
            Some(p) if matches!(p.as_rule(), Rule::number | Rule::kw_true | Rule::kw_false) => {
                let s = self.span(&p);
                Template { parts: vec![Part::Lit(p.as_str().into(), s)], span: s }
            }
            Some(p) => return self.unexpected(&p, "a parameter or header"),
            None => return Err(Unexpected { rule: Rule::key, within: "a key without its value", span: key.span }),
        };
        Ok(Pair_ { span: key.span.to(value.span), key, value })
    }

    /// The entries of an object: key and value tokens, alternating.
    fn entries(&mut self, object: Pair<'_, Rule>) -> Lowered<Vec<Entry>> {
        self.entries_of(object, Self::value)
    }

    /// The `key = value` entries of an object, each value lowered by `value`.
    fn entries_of(
        &mut self,
        object: Pair<'_, Rule>,
        value: fn(&mut Self, Pair<'_, Rule>) -> Lowered<Value>,
    ) -> Lowered<Vec<Entry>> {
        let mut inner = object.into_inner();
        let mut entries = Vec::with_capacity(inner.len() / 2);
        while let Some(key) = inner.next() {
            let key = self.key(key)?;
            let Some(written) = inner.next() else {
                return Err(Unexpected { rule: Rule::key, within: "a key without its value", span: key.span });
            };
            let value = value(self, written)?;
            entries.push(Entry { span: key.span.to(value.span()), key, value });
        }
        Ok(entries)
    }

    /// A `var`'s default: a JSON value whose strings are text as written.
    fn fixed(&mut self, pair: Pair<'_, Rule>) -> Lowered<Value> {
        let span = self.span(&pair);
        Ok(match pair.as_rule() {
            Rule::string => {
                let text = self.text(pair);
                Value::Str(Template { parts: vec![Part::Lit(text.value, text.span)], span: text.span })
            }
            Rule::fixed_object => Value::Object(self.entries_of(pair, Self::fixed)?.into_boxed_slice(), span),
            Rule::fixed_array => Value::Array(pair.into_inner().map(|p| self.fixed(p)).collect::<Lowered<_>>()?, span),
            Rule::number | Rule::kw_true | Rule::kw_false | Rule::kw_null => self.value(pair)?,
            _ => return self.unexpected(&pair, "a `var`'s default"),
        })
    }

    fn value(&mut self, pair: Pair<'_, Rule>) -> Lowered<Value> {
        let span = self.span(&pair);
        Ok(match pair.as_rule() {
            Rule::string => Value::Str(self.template(pair)),
            Rule::number => Value::Number(pair.as_str().into(), span),
            Rule::kw_true => Value::Bool(true, span),
            Rule::kw_false => Value::Bool(false, span),
            Rule::kw_null => Value::Null(span),
            // A reference the scanner cannot read has its diagnostic already.
            Rule::reference if !pair.as_str().starts_with("api_") => {
                match self.scanned(|d| template::scan_element(pair.as_str(), span.start as usize, d)) {
                    Some(e) => Value::Element(Box::new(e)),
                    None => Value::Null(span),
                }
            }
            Rule::reference => {
                match self.scanned(|d| template::scan_reference(pair.as_str(), span.start as usize, d)) {
                    Some(r) => Value::Ref(Box::new(r)),
                    None => Value::Null(span),
                }
            }
            Rule::arith | Rule::arith_group => Value::Arith(Box::new(self.arith(pair)?)),
            // A bare name, as a side of a condition.
            Rule::arith_var => match pair.into_inner().next() {
                Some(word) => Value::Var(self.ident(word)),
                None => return Err(Unexpected { rule: Rule::arith_var, within: "a condition", span }),
            },
            Rule::object => Value::Object(self.entries(pair)?.into_boxed_slice(), span),
            Rule::array => Value::Array(pair.into_inner().map(|p| self.value(p)).collect::<Lowered<_>>()?, span),
            _ => return self.unexpected(&pair, "a value"),
        })
    }

    /// A calculation: its operands and operators in a row, made a tree by
    /// precedence (`*`, `/`, `%` before `+`, `-`; left to right).
    fn arith(&mut self, pair: Pair<'_, Rule>) -> Lowered<Expr> {
        let span = self.span(&pair);
        let group = pair.as_rule() == Rule::arith_group;
        let mut operands = Vec::new();
        let mut ops = Vec::new();
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::arith_op => match ArithOp::parse(p.as_str()) {
                    Some(op) => ops.push((op, self.span(&p))),
                    None => return self.unexpected(&p, "a calculation"),
                },
                Rule::arith_var => match p.into_inner().next() {
                    Some(word) => operands.push(Expr::Var(self.ident(word))),
                    None => return Err(Unexpected { rule: Rule::arith_var, within: "a calculation", span }),
                },
                Rule::arith | Rule::arith_group => operands.push(self.arith(p)?),
                _ => operands.push(Expr::Value(self.value(p)?)),
            }
        }
        if ops.len() > MAX_OPERATIONS {
            self.diags.push(
                Diagnostic::new(Code::TooDeep, format!("a calculation of {} operations", ops.len()))
                    .label(span, format!("more than {MAX_OPERATIONS} operators"))
                    .help(format!(
                        "split it over several `save`s; blkc computes at most {MAX_OPERATIONS} operations in one"
                    )),
            );
            ops.truncate(MAX_OPERATIONS);
            operands.truncate(MAX_OPERATIONS + 1);
        }
        if operands.len() != ops.len() + 1 {
            return Err(Unexpected { rule: Rule::arith, within: "a calculation", span });
        }
        // `*`, `/`, `%` first: each joins the operand before it.
        let mut operands = operands.into_iter();
        let mut terms = vec![operands.next().ok_or(Unexpected { rule: Rule::arith, within: "a calculation", span })?];
        let mut loose = Vec::new();
        for ((op, op_span), right) in ops.into_iter().zip(operands) {
            if op.binds_tight() {
                let left = terms.pop().unwrap_or(Expr::Var(Ident { name: "".into(), span }));
                terms.push(Expr::Binary(Box::new(Binary { op, op_span, left, right })));
            } else {
                loose.push((op, op_span));
                terms.push(right);
            }
        }
        let mut terms = terms.into_iter();
        let mut expr = terms.next().ok_or(Unexpected { rule: Rule::arith, within: "a calculation", span })?;
        for ((op, op_span), right) in loose.into_iter().zip(terms) {
            expr = Expr::Binary(Box::new(Binary { op, op_span, left: expr, right }));
        }
        Ok(if group { Expr::Group(Box::new(expr), span) } else { expr })
    }

    fn key(&mut self, pair: Pair<'_, Rule>) -> Lowered<Key> {
        if pair.as_rule() != Rule::key {
            return self.unexpected(&pair, "a key");
        }
        let span = self.span(&pair);
        let text = pair.as_str();
        let name = if text.starts_with('"') {
            self.scanned(|d| template::scan_text(text, span.start as usize, d)).value
        } else {
            text.into()
        };
        Ok(Key { name, span })
    }

    fn ident(&mut self, pair: Pair<'_, Rule>) -> Ident {
        Ident { name: pair.as_str().into(), span: self.span(&pair) }
    }

    fn text(&mut self, pair: Pair<'_, Rule>) -> Text {
        let start = self.at(pair.as_span().start());
        self.scanned(|d| template::scan_text(pair.as_str(), start, d))
    }

    fn template(&mut self, pair: Pair<'_, Rule>) -> Template {
        let start = self.at(pair.as_span().start());
        self.scanned(|d| template::scan_template(pair.as_str(), start, d))
    }

    /// Runs a string scanner (which caps its own findings per string) and
    /// takes in what it found.
    fn scanned<T>(&mut self, scan: impl FnOnce(&mut Vec<Diagnostic>) -> T) -> T {
        let mut found = Vec::new();
        let scanned = scan(&mut found);
        self.diags.extend(found);
        scanned
    }
}

use crate::language::ast::Pair as Pair_;

#[cfg(test)]
mod tests {
    use super::*;

    /// pest's call limit is one setting for the process: tests that lower it,
    /// and tests whose parses need a high one, take turns.
    static CALL_LIMIT: std::sync::Mutex<()> = std::sync::Mutex::new(());

    #[test]
    fn an_unexpected_rule_is_a_bug_that_names_the_rule() {
        let mut diags = Findings::new();
        let mut lower = Lower { base: 0, squeezed: None, diags: &mut diags, actions: false };
        let pair = BlkParser::parse(Rule::string, "\"x\"").unwrap().next().unwrap();
        let diag = lower.item(pair).unwrap_err().diagnostic();
        assert_eq!(diag.message, "internal error: the parser found string while reading a top-level item");
        let pair = BlkParser::parse(Rule::number, "12").unwrap().next().unwrap();
        assert_eq!(lower.node(pair).unwrap_err().rule, Rule::number);
    }

    #[test]
    fn a_big_tree_is_parsed_a_node_at_a_time_within_the_call_limit() {
        // Scaled down: pest's limit of rule calls per parse, and a tree that
        // needs more calls than that when parsed whole (as a million one-line
        // nodes did with the real limit, failing with a false B001). Both
        // ways of reading a tree go a node at a time: squeezed (a tree up to
        // `big_item`) and as written (a bigger one).
        let _turn = CALL_LIMIT.lock().unwrap_or_else(|e| e.into_inner());
        let saves: String = (0..5_000).map(|_| "    save v = 1 # one\n").collect();
        let source = SourceFile::new("big.blk", format!("command c {{\n{saves}}}\n"));
        let squeezed = Limits { call_limit: 100_000, big_item: usize::MAX, ..Limits::default() };
        let as_written = Limits { call_limit: 100_000, big_item: 1024, ..Limits::default() };
        pest::set_call_limit(std::num::NonZeroUsize::new(100_000));
        let whole = BlkParser::parse(Rule::item, &source.text).map(|_| ());
        assert!(whole.is_err(), "the whole tree needs more calls than the limit");
        for limits in [squeezed, as_written] {
            let parsed = parse_with(&source, limits);
            assert!(parsed.complete && parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics.first());
            let Item::Tree(tree) = &parsed.ast.items[0] else { panic!("a tree") };
            assert_eq!(tree.body.len(), 5_000);
            assert_eq!(parsed.ast, parse(&source).ast, "the same tree either way");
        }
    }

    #[test]
    fn the_deepest_nesting_allowed_parses_on_half_a_thread_s_default_stack() {
        // pest recurses once per `{`, `[` or `(` (every recursive rule of
        // the grammar opens one), and the structure pre-scan refuses a file
        // nested deeper than MAX_DEPTH before pest runs: that is what bounds
        // the stack, with no probe of pest's own (Cargo.toml). At the bound,
        // a debug build fits in 1 MiB (a spawned thread has 2 MiB).
        // Each text opens `opens` brackets around its repeated part.
        let texts = |more: usize| {
            let k = |opens: usize| MAX_DEPTH - opens + more;
            [
                format!("command c {{ {}reply \"x\"{} }}", "if 1 == 1 { ".repeat(k(1)), " }".repeat(k(1))),
                format!(
                    "command c {{ api a {{ method POST url \"https://x.io\" body {{ k = {}1{} }} }} }}",
                    "{ k = ".repeat(k(3)),
                    " }".repeat(k(3))
                ),
                format!("command c {{ save v = {}1{} }}", "[".repeat(k(1)), "]".repeat(k(1))),
                format!("command c {{ save v = {}1 + 1{} }}", "(".repeat(k(1)), ")".repeat(k(1))),
                format!("command c {{ if {}1 + 1{} == 2 {{ }} }}", "(".repeat(k(1)), ")".repeat(k(1))),
            ]
        };
        for (deepest, deeper) in texts(0).into_iter().zip(texts(1)) {
            let (deepest, deeper) = std::thread::Builder::new()
                .stack_size(1 << 20)
                .spawn(move || {
                    let deepest = parse(&SourceFile::new("deepest.blk", deepest));
                    (deepest, parse(&SourceFile::new("deeper.blk", deeper)))
                })
                .unwrap()
                .join()
                .expect("parsed within the stack");
            assert!(deepest.complete && deepest.diagnostics.is_empty(), "{:?}", deepest.diagnostics.first());
            assert_eq!(deeper.diagnostics.first().map(|d| d.code), Some(Code::TooDeep));
        }
    }

    #[test]
    fn a_long_else_if_chain_lowers_in_order() {
        let _turn = CALL_LIMIT.lock().unwrap_or_else(|e| e.into_inner());
        let links: String = (0..200).map(|i| format!(" else if {i} == 1 {{ reply \"{i}\" }}")).collect();
        let text = format!("command c {{ if 1 == 2 {{ reply \"a\" }}{links} else {{ reply \"z\" }} }}");
        let parsed = parse(&SourceFile::new("c.blk", text));
        assert!(parsed.complete && parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
        let Item::Tree(tree) = &parsed.ast.items[0] else { panic!("a tree") };
        let Node::If(first) = &tree.body[0] else { panic!("an if") };
        assert_eq!(crate::language::ast::visit::chain(first).count(), 201);
        assert!(crate::language::ast::visit::final_else(first).is_some());
        // Tens of thousands of links: parsed, checked, lowered and dropped
        // without recursion.
        let links: String = (0..50_000).map(|i| format!(" else if {i} == 1 {{ reply \"{i}\" }}")).collect();
        let text = format!("command c {{ if 1 == 2 {{ reply \"a\" }}{links} }}");
        let checked = crate::language::load::check_source(SourceFile::new("long.blk", text));
        assert!(checked.diagnostics.iter().all(|d| !d.is_error()), "{:?}", checked.diagnostics.first());
        assert_eq!(crate::language::plan::lower(&checked).unwrap().trees.len(), 1);
    }
}
