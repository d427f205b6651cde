//! What the language server knows of one document: positions in the
//! protocol's units, the names of the file (blocks, variables) and where
//! they are defined and used, and the samples behind response paths.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use lsp_types::Position;

use crate::base::source::{SourceFile, Span};
use crate::language::ast::visit::{self, Site, Visitor};
use crate::language::ast::*;
use crate::language::model::Checked;
use crate::language::model::Samples;

/// A document as the server holds it: its text, checked.
pub struct Document {
    pub checked: Checked,
    /// The file's path, when its URI is a `file:` URI.
    pub path: Option<PathBuf>,
    pub version: i32,
    lines: Lines,
}

/// Where a text's lines start, to turn byte offsets into the protocol's
/// positions and back (every document the server holds, `.blk` or `.blkt`).
pub struct Lines {
    starts: Vec<usize>,
}

impl Lines {
    pub fn of(text: &str) -> Lines {
        let mut starts = vec![0];
        starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        Lines { starts }
    }

    /// The protocol position (UTF-16 code units, as LSP counts by
    /// default) of a byte offset of `text`.
    pub fn pos(&self, text: &str, offset: usize) -> Position {
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let character = text[self.starts[line]..offset].encode_utf16().count();
        Position { line: line as u32, character: character as u32 }
    }

    /// The byte offset of a protocol position in `text` (clamped to its line).
    pub fn offset(&self, text: &str, pos: Position) -> usize {
        let Some(&start) = self.starts.get(pos.line as usize) else { return text.len() };
        let end = self.starts.get(pos.line as usize + 1).map_or(text.len(), |e| e.saturating_sub(1));
        let mut units = 0;
        for (i, c) in text[start..end].char_indices() {
            if units >= pos.character as usize {
                return start + i;
            }
            units += c.len_utf16();
        }
        end
    }
}

impl Document {
    pub fn new(name: &str, path: Option<PathBuf>, text: String, version: i32) -> Document {
        let folder = path.as_deref().and_then(Path::parent).map(Path::to_path_buf);
        // Samples are read (once) by the check, for the model: a changed
        // sample makes a new version of the document (watched files).
        let samples = match &folder {
            Some(f) => Samples::in_folder(f.clone()),
            None => Samples::none(),
        };
        // A bot in several files is checked whole, with the files it
        // includes as they are on disk (docs/editor.md).
        let limits = crate::language::syntax::Limits::default();
        let checked = match &folder {
            Some(f) => crate::language::load::check_bot(SourceFile::new(name, text), Some(f), limits, samples),
            None => crate::language::load::check_source_in(SourceFile::new(name, text), limits, samples),
        };
        let own = checked.source.parts.first().map_or(checked.source.text.len(), |p| p.end);
        let lines = Lines::of(&checked.source.text[..own]);
        Document { checked, path, version, lines }
    }

    /// The document's own text (of a bot in several files, this file's).
    pub fn text(&self) -> &str {
        let own = self.checked.source.parts.first().map_or(self.checked.source.text.len(), |p| p.end);
        &self.checked.source.text[..own]
    }

    pub fn folder(&self) -> Option<&Path> {
        self.path.as_deref().and_then(Path::parent)
    }

    /// The protocol position of a byte offset.
    pub fn pos(&self, offset: usize) -> Position {
        self.lines.pos(self.text(), offset)
    }

    /// The byte offset of a protocol position (clamped to its line).
    pub fn offset(&self, pos: Position) -> usize {
        self.lines.offset(self.text(), pos)
    }

    /// The document as it reads while it is still being typed: the string
    /// that holds `offset` closed at the end of its line, when it is still
    /// open there (the usual state while a string is typed), and every `{`
    /// still open at the end of the file closed after it (the usual state
    /// of a file written top to bottom). `None` when neither is so.
    pub fn as_if_finished(&self, offset: usize) -> Option<Document> {
        let text = self.text();
        let mut repaired = text.to_string();
        let mut changed = false;
        if let Some(token) = crate::language::syntax::lexer::token_at(text, 0, offset) {
            if let crate::language::syntax::lexer::Kind::Str { closed } = token.kind {
                let eol = text[offset.min(text.len())..].find('\n').map_or(text.len(), |i| offset + i);
                if !closed || token.end() > eol {
                    let eol = if text[..eol].ends_with('\r') { eol - 1 } else { eol };
                    repaired = format!("{}\"{}", &text[..eol], &text[eol..]);
                    changed = true;
                }
            }
        }
        let open = crate::language::syntax::open_braces(&repaired, 0, repaired.len()).len();
        if open > 0 {
            repaired.push('\n');
            repaired.push_str(&"}\n".repeat(open));
            changed = true;
        }
        changed.then(|| Document::new(&self.checked.source.name, self.path.clone(), repaired, self.version))
    }

    /// The tree holding a byte offset: the innermost (an autocomplete's,
    /// not its command's).
    pub fn tree_at(&self, offset: usize) -> Option<&Tree> {
        let holding =
            self.checked.ast.trees().filter(|t| t.span.start as usize <= offset && offset <= t.span.end as usize);
        holding.min_by_key(|t| t.span.end - t.span.start)
    }

    /// Every name in the file: definitions and uses.
    pub fn symbols(&self) -> Vec<Symbol<'_>> {
        let mut collect = Collect { out: Vec::new(), tree: None };
        for item in &self.checked.ast.items {
            match item {
                Item::Var(v) => collect.out.push(Symbol {
                    kind: SymbolKind::Variable,
                    name: v.name.name.to_string(),
                    span: v.name.span,
                    definition: true,
                    tree: None,
                    block: None,
                }),
                Item::Tree(_) | Item::Platform(_) | Item::Include(_) | Item::Failed(..) => {}
            }
        }
        // Each tree that runs: a subcommand's names are its own.
        for t in self.checked.ast.trees() {
            collect.tree = Some(t);
            visit::walk_nodes(&mut collect, &t.body);
            collect_saves_and_options(&t.body, t, &mut collect.out);
        }
        collect.out
    }

    /// A block's sample as JSON values (hover shows values), if it has one
    /// that can be read: the model's, read once by the check.
    pub fn sample_json(&self, block: &ApiBlock) -> Option<Arc<Result<crate::base::data::Data, String>>> {
        self.checked.model.samples.of(block)
    }

    /// The blocks whose responses exist at `offset`: those of its tree that
    /// ran before it on every path there (the model's flow, the checker's).
    pub fn blocks_run_before(&self, offset: usize) -> Vec<&ApiBlock> {
        let Some(tree) = self.checked.model.tree_at(offset) else { return Vec::new() };
        tree.ran_at(offset).into_iter().filter_map(|b| self.block_named(offset, &b.name)).collect()
    }

    /// The block named `name` in the tree holding `offset`.
    pub fn block_named(&self, offset: usize, name: &str) -> Option<&ApiBlock> {
        let tree = self.tree_at(offset)?;
        let mut found = tree.received().filter(|b| b.name.name == name);
        crate::language::ast::visit::each_block(&tree.body, &mut |b| {
            if b.name.name == name && found.is_none() {
                found = Some(b);
            }
        });
        found
    }

    /// The variables that `{…}` can name at `offset`, and what each is:
    /// the enclosing loops' names first, then the tree's.
    pub fn variables_at(&self, offset: usize) -> Vec<(String, String)> {
        let Some(tree) = self.checked.model.tree_at(offset) else { return Vec::new() };
        let mut out = Vec::new();
        for l in self.loops_at(offset).into_iter().rev() {
            let item = l.item.name.as_str();
            let source = self.text().get(l.source.span().range()).unwrap_or_default();
            out.push((
                item.to_string(),
                format!("the element of the loop over `{source}`; `{item}[key]` reads into it"),
            ));
            out.push((format!("{item}_number"), format!("the place of `{item}` in the list, from 1")));
            out.push((format!("{item}_index"), format!("the index of `{item}` in the list, from 0")));
        }
        if let Some(ast) = self.tree_at(offset) {
            crate::language::ast::visit::each_loop(&ast.body, &mut |l| {
                if let Some(j) = l.join.as_ref().filter(|_| (l.span.end as usize) <= offset) {
                    let what = format!("the text the loop over `{}` joins", l.item.name);
                    out.push((j.into.name.to_string(), what));
                }
            });
        }
        out.extend(tree.all_variables().map(|v| {
            let what = tree.describe(&v);
            (v.name, what)
        }));
        out
    }

    /// The loops whose body holds `offset`, outermost first.
    pub fn loops_at(&self, offset: usize) -> Vec<&ForNode> {
        let mut out = Vec::new();
        if let Some(tree) = self.tree_at(offset) {
            crate::language::ast::visit::each_loop(&tree.body, &mut |l| {
                let body = l.body.span;
                if body.start as usize <= offset && offset <= body.end as usize {
                    out.push(l);
                }
            });
        }
        out
    }

    /// What the sample shows loop `name`'s element to be at `offset` (its
    /// list's first element), when a sample shows it.
    pub fn element_sample(&self, offset: usize, name: &str) -> Option<crate::base::data::Data> {
        let loops = self.loops_at(offset);
        let at = loops.iter().rposition(|l| l.item.name == name)?;
        let l = loops[at];
        let list = match &l.source {
            LoopSource::Ref(r) => {
                let block = self.block_named(offset, &r.block.name)?;
                let sample = self.sample_json(block)?;
                let sample = sample.as_ref().as_ref().ok()?;
                crate::base::path::walk(sample, &r.segments).ok()?.clone()
            }
            LoopSource::Element(e) => {
                let outer = self.element_sample(l.span.start as usize, &e.item.name)?;
                crate::base::path::walk(&outer, &e.segments).ok()?.clone()
            }
            LoopSource::Name(n) => self.element_sample(l.span.start as usize, &n.name)?,
        };
        match list {
            crate::base::data::Data::Array(items) => items.first().cloned(),
            _ => None,
        }
    }
}

fn collect_saves_and_options<'a>(nodes: &'a [Node], tree: &'a Tree, out: &mut Vec<Symbol<'a>>) {
    for node in nodes {
        match node {
            Node::Save(s) => out.push(Symbol {
                kind: SymbolKind::Variable,
                name: s.name.name.to_string(),
                span: s.name.span,
                definition: true,
                tree: Some(tree),
                block: None,
            }),
            Node::Option(o) => out.push(Symbol {
                kind: SymbolKind::Variable,
                name: format!("option_{}", o.name.name),
                span: o.name.span,
                definition: true,
                tree: Some(tree),
                block: None,
            }),
            Node::If(i) => {
                for l in &i.links {
                    collect_saves_and_options(&l.then.body, tree, out);
                }
                if let Some(o) = &i.otherwise {
                    collect_saves_and_options(&o.body, tree, out);
                }
            }
            _ => {}
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SymbolKind {
    Block,
    Variable,
}

/// A name: a block or a variable, where it is defined or used.
#[derive(Debug, Clone)]
pub struct Symbol<'a> {
    pub kind: SymbolKind,
    pub name: String,
    pub span: Span,
    pub definition: bool,
    pub tree: Option<&'a Tree>,
    /// For a use of a block: the reference.
    pub block: Option<&'a Reference>,
}

struct Collect<'a> {
    out: Vec<Symbol<'a>>,
    tree: Option<&'a Tree>,
}

impl<'a> Visitor<'a> for Collect<'a> {
    fn block(&mut self, b: &'a ApiBlock) {
        self.out.push(Symbol {
            kind: SymbolKind::Block,
            name: b.name.name.to_string(),
            span: b.name.span,
            definition: true,
            tree: self.tree,
            block: None,
        });
        visit::walk_block(self, b);
    }
    fn reference(&mut self, r: &'a Reference, _site: Site, _in_text: bool) {
        self.out.push(Symbol {
            kind: SymbolKind::Block,
            name: r.block.name.to_string(),
            span: r.block.span,
            definition: false,
            tree: self.tree,
            block: Some(r),
        });
    }
    fn named(&mut self, name: &'a Ident, _site: Site) {
        self.out.push(Symbol {
            kind: SymbolKind::Variable,
            name: name.name.to_string(),
            span: name.span,
            definition: false,
            tree: self.tree,
            block: None,
        });
    }
}
