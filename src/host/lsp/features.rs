//! The answers of the language server, one function a request, as the
//! protocol's types (`lsp-types`).

use std::collections::HashMap;

use lsp_server::ErrorCode;
use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, CodeDescription, CompletionItem, CompletionItemKind,
    Diagnostic as LspDiagnostic, DiagnosticRelatedInformation, DiagnosticSeverity, DocumentSymbol,
    DocumentSymbolResponse, FoldingRange, GotoDefinitionResponse, Hover, HoverContents, Location, MarkupContent,
    MarkupKind, NumberOrString, Position, Range, SymbolKind as LspSymbolKind, TextEdit, Uri, WorkspaceEdit,
};

use super::analysis::{Document, SymbolKind};
use super::protocol::{path_to_uri, Answer};
use crate::base::data::Data;
use crate::base::diagnostics::{Code, Confidence, Severity};
use crate::base::path::Document as _;
use crate::base::source::Span;
use crate::language::ast::*;
use crate::language::syntax::lexer::{self, Kind as Token};
use crate::language::vocab;

fn range(doc: &Document, span: Span) -> Range {
    Range { start: doc.pos(span.start as usize), end: doc.pos(span.end as usize) }
}

fn contains(span: Span, offset: usize) -> bool {
    span.start as usize <= offset && offset <= span.end as usize
}

fn changes(uri: &Uri, edits: Vec<TextEdit>) -> WorkspaceEdit {
    WorkspaceEdit { changes: Some(HashMap::from([(uri.clone(), edits)])), ..WorkspaceEdit::default() }
}

/// Where the pages of the diagnostic codes are written for the editor to
/// open: a diagnostic's code links to its page (the page `blkc explain`
/// prints, compiled into the program).
/// The user's own cache folder (`$XDG_CACHE_HOME`, `~/.cache`), not a
/// shared temporary one another user could have filled first.
fn code_pages() -> std::path::PathBuf {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    cache.join("blkc").join(format!("codes-{}", env!("CARGO_PKG_VERSION")))
}

/// Writes every code's page when the server starts (a few hundred KB).
pub fn write_code_pages() {
    let dir = code_pages();
    if std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    for code in Code::ALL {
        // Written each time: the page is the one this program prints. Put
        // in place whole (a file of its own, then renamed), so that an
        // editor reading a page while another server writes it never reads
        // it empty or in part.
        let page = dir.join(format!("{}.md", code.as_str()));
        let part = dir.join(format!("{}.md.{}", code.as_str(), std::process::id()));
        if std::fs::write(&part, code.page()).is_ok() && std::fs::rename(&part, &page).is_err() {
            let _ = std::fs::remove_file(&part);
        }
    }
}

/// The file's diagnostics, as `blkc check` finds them.
pub fn diagnostics(uri: &Uri, doc: &Document) -> Vec<LspDiagnostic> {
    let own = doc.text().len() as u32;
    let mine: Vec<_> = doc
        .checked
        .diagnostics
        .iter()
        .filter(|d| d.primary_span().is_none_or(|s| s.start <= own))
        .map(|d| {
            // A place in another file of the bot is said in the note.
            let (_, local) = crate::base::diagnostics::localized(&doc.checked.source, d);
            local
        })
        .collect();
    to_lsp(uri, &mine, &|span| range(doc, span))
}

/// The diagnostics of the files a document includes, by each file's path,
/// as that file's (published to its URI while the including one is open).
pub fn included_diagnostics(doc: &Document) -> Vec<(String, Vec<LspDiagnostic>)> {
    let source = &doc.checked.source;
    let each = crate::base::diagnostics::by_file(source, &doc.checked.diagnostics);
    let mut out = Vec::new();
    for part in source.parts.iter().skip(1) {
        let Some((file, diags)) = each.iter().find(|(f, _)| f.name == part.name) else {
            out.push((part.name.clone(), Vec::new()));
            continue;
        };
        let Ok(uri) = crate::base::source::file_uri(&part.name).parse::<Uri>() else { continue };
        let lines = super::analysis::Lines::of(&file.text);
        let range = |s: Span| Range {
            start: lines.pos(&file.text, s.start as usize),
            end: lines.pos(&file.text, s.end as usize),
        };
        out.push((part.name.clone(), to_lsp(&uri, diags, &range)));
    }
    out
}

/// Diagnostics as the protocol has them, placed by `range` (a `.blk` or a
/// `.blkt` document's).
pub fn to_lsp(
    uri: &Uri,
    diags: &[crate::base::diagnostics::Diagnostic],
    range: &dyn Fn(Span) -> Range,
) -> Vec<LspDiagnostic> {
    diags
        .iter()
        .map(|d| {
            let span = d.primary_span().unwrap_or_default();
            let related = d
                .labels
                .iter()
                .filter(|l| !l.primary)
                .map(|l| DiagnosticRelatedInformation {
                    location: Location { uri: uri.clone(), range: range(l.span) },
                    message: l.text.clone(),
                })
                .collect();
            let mut message = d.message.clone();
            if let Some(help) = &d.help {
                message.push_str("\nhelp: ");
                message.push_str(help);
            }
            LspDiagnostic {
                range: range(span),
                severity: Some(match d.severity {
                    Severity::Error => DiagnosticSeverity::ERROR,
                    Severity::Warning => DiagnosticSeverity::WARNING,
                    Severity::Hint => DiagnosticSeverity::HINT,
                }),
                code: Some(NumberOrString::String(d.code.as_str().into())),
                code_description: path_to_uri(&code_pages().join(format!("{}.md", d.code.as_str())))
                    .map(|href| CodeDescription { href }),
                source: Some("blkc".into()),
                message,
                related_information: Some(related),
                ..LspDiagnostic::default()
            }
        })
        .collect()
}

/// Quick fixes: the suggestions of the diagnostics in `wanted`.
pub fn code_actions(uri: &Uri, doc: &Document, wanted: Range) -> Vec<CodeActionOrCommand> {
    let wanted = (doc.offset(wanted.start), doc.offset(wanted.end));
    quick_fixes(uri, &doc.checked.diagnostics, wanted, &|span| range(doc, span))
}

/// The suggestions of the diagnostics between the offsets `wanted`, as
/// quick fixes placed by `range`.
pub fn quick_fixes(
    uri: &Uri,
    diags: &[crate::base::diagnostics::Diagnostic],
    (from, to): (usize, usize),
    range: &dyn Fn(Span) -> Range,
) -> Vec<CodeActionOrCommand> {
    let mut actions = Vec::new();
    let all = to_lsp(uri, diags, range);
    for (d, lsp) in diags.iter().zip(all) {
        let span = d.primary_span().unwrap_or_default();
        if (span.end as usize) < from || (span.start as usize) > to {
            continue;
        }
        for s in &d.suggestions {
            let edits =
                s.edits.iter().map(|e| TextEdit { range: range(e.span), new_text: e.replacement.clone() }).collect();
            actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                title: s.message.clone(),
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![lsp.clone()]),
                is_preferred: Some(s.confidence == Confidence::Certain),
                edit: Some(changes(uri, edits)),
                ..CodeAction::default()
            }));
        }
    }
    actions
}

/// The whole document in the canonical layout, as one edit (`None`: a file
/// that does not parse is not formatted; its errors show).
pub fn formatting(doc: &Document) -> Option<Vec<TextEdit>> {
    match crate::language::format::format_text(&doc.checked.source.name, doc.text()) {
        Ok(formatted) if formatted != doc.text() => {
            Some(vec![TextEdit { range: range(doc, Span::new(0, doc.text().len())), new_text: formatted }])
        }
        Ok(_) => Some(Vec::new()),
        Err(_) => None,
    }
}

// ── hover ────────────────────────────────────────────────────────────────

pub fn hover(doc: &Document, offset: usize) -> Option<Hover> {
    let mut parts: Vec<String> = Vec::new();
    let mut at: Option<Span> = None;
    let symbols = doc.symbols();
    if let Some(r) = symbols.iter().find_map(|s| s.block.filter(|r| contains(r.span, offset))) {
        parts.push(reference_hover(doc, r, offset));
        at = Some(r.span);
    } else if let Some(e) = element_at(doc, offset) {
        parts.push(element_hover(doc, e, offset));
        at = Some(e.span);
    } else if let Some(s) = symbols.iter().find(|s| contains(s.span, offset)) {
        at = Some(s.span);
        match s.kind {
            SymbolKind::Block => {
                if let Some(b) = doc.block_named(offset, &s.name) {
                    parts.push(block_hover(b));
                }
            }
            SymbolKind::Variable => parts.push(variable_hover(doc, &s.name, offset)),
        }
    }
    // An option's type: what the user gives, and what the platform shows.
    if let Some((kind, span)) = option_type_at(doc, offset) {
        parts.push(format!(
            "option type `{}`: {} (the platform's type {})",
            kind.as_str(),
            kind.describe(),
            crate::discord::registration::option_type(kind) as u8
        ));
        at = Some(span);
    }
    // A component's setting: what it takes, and its limit.
    if let Some((about, span)) = setting_at(doc, offset) {
        parts.push(about);
        at = Some(span);
    }
    // A timed event's schedule: its next ticks.
    if let Some((about, span)) = schedule_at(doc, offset) {
        parts.push(about);
        at = Some(span);
    }
    // A block's field: what it does.
    if let Some((about, span)) = block_word_at(doc, offset) {
        parts.push(about);
        at = Some(span);
    }
    // An embed's part: what it takes, and its limit.
    if let Some((part, span)) = embed_part_at(doc, offset) {
        parts.push(format!("embed part `{}`: {}", part.as_str(), part.about()));
        at = Some(span);
    }
    // A diagnostic here, or a code written here (`B101` in a comment): its page.
    let word = word_at(doc.text(), offset);
    if let Some(code) = Code::ALL.iter().find(|c| c.as_str() == word) {
        parts.push(code.page().to_string());
    } else if let Some(d) =
        doc.checked.diagnostics.iter().find(|d| d.primary_span().is_some_and(|s| contains(s, offset)))
    {
        parts.push(format!("**{}**: {}\n\n{}", d.code.as_str(), d.code.title(), d.code.page()));
    }
    if parts.is_empty() {
        return None;
    }
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent { kind: MarkupKind::Markdown, value: parts.join("\n\n---\n\n") }),
        range: at.map(|span| range(doc, span)),
    })
}

/// The type word of an `option` under `offset`.
fn option_type_at(doc: &Document, offset: usize) -> Option<(crate::discord::options::OptionType, Span)> {
    doc.checked.ast.trees().flat_map(|t| &t.body).find_map(|n| match n {
        crate::language::ast::Node::Option(o) => {
            let kind = o.kind.as_ref().filter(|k| contains(k.span, offset))?;
            Some((crate::discord::options::OptionType::parse(&kind.name)?, kind.span))
        }
        _ => None,
    })
}

fn word_at(text: &str, offset: usize) -> &str {
    let bytes = text.as_bytes();
    let is_word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut start = offset.min(bytes.len());
    while start > 0 && is_word(bytes[start - 1]) {
        start -= 1;
    }
    let mut end = offset.min(bytes.len());
    while end < bytes.len() && is_word(bytes[end]) {
        end += 1;
    }
    &text[start..end]
}

/// `api_x[response.a.0]`: the path up to the segment under the cursor, and
/// what the block's sample holds there.
fn reference_hover(doc: &Document, r: &Reference, offset: usize) -> String {
    let upto: Vec<&str> =
        r.segments.iter().take_while(|s| s.span.start as usize <= offset).map(|s| s.text.as_str()).collect();
    let path = crate::base::path::display(upto.iter().copied());
    let shown = if r.root.name == "status" { "status".to_string() } else { path };
    let head = format!("`api_{}[{}]`", r.block.name, shown);
    let Some(block) = doc.block_named(r.span.start as usize, &r.block.name) else {
        return format!("{head}: no block `{}` in this command or event", r.block.name);
    };
    if r.root.name == "status" {
        return format!("{head}: the HTTP status code of block `{}` (a number)", r.block.name);
    }
    let sample = doc.sample_json(block);
    let Some(Ok(sample)) = sample.as_deref() else {
        return format!(
            "{head}\n\nblock `{}` has no sample: record one with `blkc test FILE {}` `--save`, and its paths show their values",
            r.block.name, r.block.name
        );
    };
    match crate::base::path::walk(sample, &upto) {
        Ok(v) => format!("{head}: {} in the sample\n\n{}", v.kind().words(), json_snippet(v)),
        Err(miss) => format!("{head}: {}", miss.message(&upto)),
    }
}

/// A sample's value as a JSON block, cut after 600 bytes.
fn json_snippet(v: &Data) -> String {
    let mut text = serde_json::to_string_pretty(v).unwrap_or_default();
    if text.len() > 600 {
        text.truncate(text.char_indices().take_while(|(i, _)| *i < 600).last().map_or(0, |(i, _)| i));
        text.push_str("\n…");
    }
    format!("```json\n{text}\n```")
}

/// The path into a loop's element under `offset`.
fn element_at(doc: &Document, offset: usize) -> Option<&crate::language::ast::ElementRef> {
    struct Find<'a>(usize, Option<&'a crate::language::ast::ElementRef>);
    impl<'a> crate::language::ast::visit::Visitor<'a> for Find<'a> {
        fn element(&mut self, e: &'a crate::language::ast::ElementRef, _: crate::language::ast::visit::Site, _: bool) {
            if contains(e.span, self.0) {
                self.1 = Some(e);
            }
        }
    }
    let mut find = Find(offset, None);
    crate::language::ast::visit::walk_nodes(&mut find, &doc.tree_at(offset)?.body);
    find.1
}

/// `item[a.b]`: the path up to the segment under the cursor, and what the
/// sample's list holds there (its first element's).
fn element_hover(doc: &Document, e: &crate::language::ast::ElementRef, offset: usize) -> String {
    let name = e.item.name.as_str();
    let upto: Vec<&str> =
        e.segments.iter().take_while(|s| s.span.start as usize <= offset).map(|s| s.text.as_str()).collect();
    let head = format!("`{name}[{}]`", upto.join("."));
    let Some(element) = doc.element_sample(offset, name) else {
        return format!("{head}: a path into the element of loop `{name}` (no sample shows its list)");
    };
    match crate::base::path::walk(&element, &upto) {
        Ok(v) => format!("{head}: {} in the sample's first element\n\n{}", v.kind().words(), json_snippet(v)),
        Err(miss) => format!("{head}: {}", miss.message_from(name, &upto)),
    }
}

fn block_hover(b: &ApiBlock) -> String {
    let method = b.method().map_or("(no method)".to_string(), |m| m.name.to_string());
    let url = b.url().map_or("(no url)".to_string(), |u| u.as_literal().unwrap_or_else(|| template_text(u)));
    let sample = b.sample().map_or(String::from("no sample"), |s| format!("sample `{}`", s.value));
    format!("**api {}**\n\n`{method} {url}`\n\n{sample}", b.name.name)
}

fn template_text(t: &Template) -> String {
    t.parts
        .iter()
        .map(|p| match p {
            Part::Lit(s, _) => s.to_string(),
            Part::Var(var) => format!("{{{}}}", var_text(var)),
            Part::Secret(s) => format!("<{}>", s.name),
        })
        .collect()
}

/// What a `{…}` holds, without its braces.
fn var_text(var: &Var) -> String {
    match var {
        Var::Named(n) => n.name.to_string(),
        Var::BotToken(_) => "bot_token".into(),
        Var::Draw(d) => d.draw.written(),
        Var::Ref(r) => format!("api_{}[{}]", r.block.name, r.path_text()),
        Var::Element(e) => format!("{}[{}]", e.item.name, e.path_text()),
        Var::Helped(h) => format!("{}{}", var_text(&h.base), crate::language::helpers::written(&h.helpers)),
    }
}

fn variable_hover(doc: &Document, name: &str, offset: usize) -> String {
    let known = doc.variables_at(offset);
    let failure = vocab::FAILURE_VARIABLES.iter().find(|(n, _)| *n == name).filter(|_| in_failed(doc, offset));
    let what = match (known.iter().find(|(n, _)| n == name), failure) {
        (Some((_, w)), _) => w.clone(),
        (None, Some((_, w))) => format!("the failure's: {w}"),
        (None, None) => "not defined here".to_string(),
    };
    let declared = doc
        .symbols()
        .into_iter()
        .find(|s| s.kind == SymbolKind::Variable && s.definition && s.name == name)
        .map(|s| format!(" (declared on line {})", doc.pos(s.span.start as usize).line + 1))
        .unwrap_or_default();
    // A scoped variable: whose value this is.
    let scope = doc
        .checked
        .ast
        .items
        .iter()
        .find_map(|i| match i {
            crate::language::ast::Item::Var(v) if v.name.name == name => v.scope.as_ref(),
            _ => None,
        })
        .and_then(|w| vocab::VarScope::parse(&w.name))
        .map(|s| format!(", per {}: {}", s.as_str(), s.describe()))
        .unwrap_or_default();
    format!("`{{{name}}}`: {what}{scope}{declared}")
}

// ── completion ───────────────────────────────────────────────────────────

fn item(label: String, kind: CompletionItemKind, detail: String) -> CompletionItem {
    CompletionItem { label, kind: Some(kind), detail: Some(detail), ..CompletionItem::default() }
}

/// What the cursor is in, from the lexer's tokens (the file may not parse
/// while it is typed).
enum Context<'t> {
    /// Inside `{…}` of a string, or an unquoted reference: the text from
    /// the variable's start (after `{`) to the cursor.
    Variable(&'t str),
    /// A word being typed, the text of its line before it.
    Word(&'t str),
    Nothing,
}

fn context(text: &str, offset: usize) -> Context<'_> {
    let offset = offset.min(text.len());
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let Some(token) = lexer::token_at(text, 0, offset) else { return Context::Word(&text[line_start..offset]) };
    let (start, end) = (token.start(), token.end());
    match token.kind {
        // Inside a string (closed or still open): the innermost `{` of its
        // text before the cursor that no `}` closes.
        Token::Str { closed } if offset > start && (offset < end || !closed) => {
            let inside = &text[start + 1..offset];
            match inside.rfind('{') {
                Some(b) if !inside[b..].contains('}') => Context::Variable(&inside[b + 1..]),
                _ => Context::Nothing,
            }
        }
        Token::Reference { .. } => Context::Variable(&text[start..offset]),
        Token::Comment => Context::Nothing,
        _ => Context::Word(&text[line_start..offset]),
    }
}

/// A timed event's schedule under the cursor: when it runs next (from
/// now, as `blkc serve` would list it).
fn schedule_at(doc: &Document, offset: usize) -> Option<(String, Span)> {
    let s = doc.checked.ast.trees().filter_map(|t| t.schedule.as_deref()).find(|s| contains(s.span, offset))?;
    let zone = s.zone.as_ref().map(|z| z.value.as_str());
    let schedule = crate::language::schedule::read(s.written, &s.when.value, zone).ok()?;
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let ticks = schedule.next_ticks(i64::try_from(now).unwrap_or(0), 3);
    let shown: Vec<String> = ticks.into_iter().map(crate::language::schedule::rfc3339).collect();
    Some((format!("timed event: its next ticks are {} (UTC)", shown.join(", ")), s.span))
}

pub fn completion(doc: &Document, offset: usize) -> Vec<CompletionItem> {
    // A string being typed is not closed yet, or the tree's braces are not
    // (a file written top to bottom), so the file does not parse and its
    // tree is not known: the tree is read from the file as if finished.
    let repaired;
    let doc = match doc.tree_at(offset) {
        None => match doc.as_if_finished(offset) {
            Some(d) => {
                repaired = d;
                &repaired
            }
            None => doc,
        },
        Some(_) => doc,
    };
    match context(doc.text(), offset) {
        Context::Variable(v) => variable_completion(doc, offset, v),
        Context::Word(prefix) => word_completion(doc, offset, prefix),
        Context::Nothing => Vec::new(),
    }
}

/// In `{…}` or an unquoted reference: `api_x[response.a.` gives the keys of
/// the sample there; `api_` the blocks that have run; a word the variables.
fn variable_completion(doc: &Document, offset: usize, v: &str) -> Vec<CompletionItem> {
    let mut items = Vec::new();
    // `{queue|` or `{api_x[response.items]|first 3|`: the list helpers.
    if crate::language::helpers::split(v).is_some() || v.ends_with('|') {
        let typing = v.rsplit('|').next().unwrap_or_default().trim_start();
        if typing.bytes().all(lexer::is_word_byte) {
            for (name, about) in crate::language::helpers::ABOUT {
                items.push(item(name.to_string(), CompletionItemKind::FUNCTION, about.to_string()));
            }
        }
        return items;
    }
    if let Some((name, path)) = v.split_once('[') {
        if path.contains(']') {
            return items;
        }
        let Some(block) = name.strip_prefix("api_") else {
            // `item[a.` in a loop: the keys of its element in the sample.
            let mut segments: Vec<&str> = path.split('.').collect();
            segments.pop();
            if let Some(element) = doc.element_sample(offset, name) {
                if let Ok(here) = crate::base::path::walk(&element, &segments) {
                    items.extend(keys_of(here));
                }
            }
            return items;
        };
        let mut segments: Vec<&str> = path.split('.').collect();
        segments.pop();
        if segments.is_empty() {
            for (root, about) in [
                ("response", "the response's body: a path into its JSON"),
                ("status", "the response's HTTP status"),
                ("headers", "a response header, `headers.NAME` (names in any case)"),
                ("items", "the items of every page the block follows (`pages`)"),
            ] {
                items.push(item(root.into(), CompletionItemKind::KEYWORD, about.into()));
            }
            return items;
        }
        let Some(b) = doc.block_named(offset, block) else { return items };
        let sample = doc.sample_json(b);
        let Some(Ok(sample)) = sample.as_deref() else { return items };
        if let Ok(here) = crate::base::path::walk(sample, &segments[1..]) {
            items.extend(keys_of(here));
        }
        return items;
    }
    if !v.bytes().all(lexer::is_word_byte) {
        return items;
    }
    for b in doc.blocks_run_before(offset) {
        items.push(CompletionItem {
            insert_text: Some(format!("api_{}[response", b.name.name)),
            ..item(format!("api_{}", b.name.name), CompletionItemKind::MODULE, block_hover(b).replace('\n', " "))
        });
    }
    if !v.starts_with("api_") {
        for (name, what) in doc.variables_at(offset) {
            items.push(item(name, CompletionItemKind::VARIABLE, what));
        }
        if in_failed(doc, offset) {
            for (name, what) in vocab::FAILURE_VARIABLES {
                items.push(item(name.to_string(), CompletionItemKind::VARIABLE, what.to_string()));
            }
        }
    }
    items
}

/// Whether `offset` is inside a `failed { … }`, a block's or a tree's: the
/// failure's variables exist there.
fn in_failed(doc: &Document, offset: usize) -> bool {
    struct Inside(usize, bool);
    impl<'a> crate::language::ast::visit::Visitor<'a> for Inside {
        fn failed(&mut self, _: &'a crate::language::ast::ApiBlock, f: &'a crate::language::ast::Failed) {
            self.1 |= contains(f.branch.span, self.0);
            self.branch(&f.branch.body);
        }
        fn tree_failed(&mut self, b: &'a crate::language::ast::Branch) {
            self.1 |= contains(b.span, self.0);
            self.branch(&b.body);
        }
    }
    let mut inside = Inside(offset, false);
    for tree in doc.checked.ast.trees() {
        crate::language::ast::visit::walk_nodes(&mut inside, &tree.body);
    }
    inside.1
}

/// What a path can go on with at a value of a sample: an object's keys, or
/// an array's indexes.
fn keys_of(here: &Data) -> Vec<CompletionItem> {
    match here {
        Data::Object(map) => map
            .iter()
            .filter(|(k, _)| crate::base::path::addressable(k))
            .map(|(k, v)| item(k.to_string(), CompletionItemKind::PROPERTY, v.kind().words().into()))
            .collect(),
        Data::Array(a) => a
            .iter()
            .enumerate()
            .take(50)
            .map(|(i, v)| item(i.to_string(), CompletionItemKind::VALUE, format!("element {i}: {}", v.kind().words())))
            .collect(),
        _ => Vec::new(),
    }
}

/// A word: an event kind after `event`, a method after `method`, else the
/// keywords that can stand where the cursor is.
fn word_completion(doc: &Document, offset: usize, prefix: &str) -> Vec<CompletionItem> {
    let mut items = Vec::new();
    let trimmed = prefix.trim_start();
    if let Some(items) = line_words(doc, offset, trimmed) {
        return items;
    }
    // `var NAME per …`: the scopes; `var NAME …`: `per`.
    if let Some(rest) = trimmed.strip_prefix("var ") {
        let words: Vec<&str> = rest.split_whitespace().collect();
        let typing = !rest.ends_with(' ');
        let done = words.len() - usize::from(typing && !words.is_empty());
        if done == 2 && words[1] == "per" {
            for s in vocab::VarScope::WORDS {
                items.push(item(s.as_str().into(), CompletionItemKind::ENUM_MEMBER, s.describe().into()));
            }
        } else if done == 1 {
            items.push(item(
                "per".into(),
                CompletionItemKind::KEYWORD,
                "keep a value per user, server or channel".into(),
            ));
        }
        return items;
    }
    // A tree's head after its name (and description): `cooldown`, then
    // after its length, `per`.
    let head = ["command ", "event ", "handler "].iter().find_map(|k| trimmed.strip_prefix(k));
    if let Some(rest) = head.filter(|r| r.matches('"').count() % 2 == 0) {
        let words: Vec<&str> = rest.split_whitespace().collect();
        let done = words.len() - usize::from(!rest.ends_with(' ') && !words.is_empty());
        match words[..done] {
            [.., "cooldown", _] => items.push(item(
                "per".into(),
                CompletionItemKind::KEYWORD,
                "keep it per user, server or channel".into(),
            )),
            [.., "per"] => {
                for s in vocab::VarScope::WORDS {
                    items.push(item(s.as_str().into(), CompletionItemKind::ENUM_MEMBER, s.describe().into()));
                }
            }
            [_, ..] if !words[..done].contains(&"cooldown") => return keyword_words(vocab::Place::Head),
            _ => {}
        }
        return items;
    }
    // After `option NAME` (and its description): the types, `required`, `choices`.
    if let Some(rest) = trimmed.strip_prefix("option ") {
        let in_string = rest.matches('"').count() % 2 == 1;
        let word = rest.rsplit(' ').next().unwrap_or_default();
        if !in_string && rest.trim_start().contains(' ') && word.bytes().all(lexer::is_word_byte) {
            for t in crate::discord::options::OptionType::ALL {
                items.push(item(t.as_str().into(), CompletionItemKind::TYPE_PARAMETER, t.describe().into()));
            }
            for k in vocab::Keyword::ALL.iter().filter(|k| k.place() == vocab::Place::Option) {
                items.push(item(k.as_str().to_string(), CompletionItemKind::KEYWORD, "keyword".into()));
            }
        }
        return items;
    }
    if trimmed.bytes().all(lexer::is_word_byte) {
        return match settings_in(doc, offset) {
            // A container takes settings and parts.
            Some((specs, "container")) => {
                let mut words = setting_words(specs, "container");
                words.extend(keyword_words(vocab::Place::Reply));
                words
            }
            Some((specs, within)) => setting_words(specs, within),
            None => keyword_words(where_in(doc, offset)),
        };
    }
    items
}

/// The words of a registration line: permissions, contexts, installs,
/// locales, and the kinds of channel after an option's `in`; `None` when
/// the line is none of those.
fn register_words(line: &str) -> Option<Vec<CompletionItem>> {
    use crate::discord::registration as reg;
    let word = CompletionItemKind::ENUM_MEMBER;
    let list = |rest: &str| rest.rsplit(',').next().is_some_and(|w| !w.trim().contains(' '));
    let permissions = |rest: &str| match list(rest) {
        true => reg::permission_words().into_iter().map(|p| item(p, word, "permission".into())).collect(),
        false => Vec::new(),
    };
    fn table<T>(t: &[(&str, T, &str)]) -> Vec<CompletionItem> {
        t.iter().map(|(w, _, about)| item(w.to_string(), CompletionItemKind::ENUM_MEMBER, about.to_string())).collect()
    }
    // `command "Show Avatar" for …`: the menus.
    if let Some(rest) = line.strip_prefix("command \"").and_then(|r| r.rsplit_once("\" for ")) {
        return Some(if rest.1.contains(' ') { Vec::new() } else { table(reg::MENUS) });
    }
    if let Some(rest) = line.strip_prefix("require ") {
        let kinds = [
            ("roles", "a member with any of these roles: `\"<MOD_ROLE>\"` or an id"),
            ("channels", "in any of these channels: `\"<BOT_CHANNEL>\"` or an id"),
            ("permissions", "a member with all of these permissions"),
        ];
        return Some(match rest.strip_prefix("permissions ") {
            Some(words) => permissions(words),
            None if !rest.contains(' ') => {
                kinds.iter().map(|(k, about)| item(k.to_string(), word, about.to_string())).collect()
            }
            None => Vec::new(),
        });
    }
    if let Some(rest) = line.strip_prefix("permissions ") {
        return Some(permissions(rest));
    }
    if let Some(rest) = line.strip_prefix("contexts ") {
        return Some(if list(rest) { table(reg::CONTEXTS) } else { Vec::new() });
    }
    if let Some(rest) = line.strip_prefix("installs ") {
        return Some(if list(rest) { table(reg::INSTALLS) } else { Vec::new() });
    }
    if let Some(rest) = line.strip_prefix("locale ") {
        return Some(if rest.contains(' ') {
            Vec::new()
        } else {
            reg::LOCALES.iter().map(|(code, language)| item(code.to_string(), word, language.to_string())).collect()
        });
    }
    let (head, rest) = line.rsplit_once(" in ")?;
    if !(head.starts_with("option ") && head.matches('"').count() % 2 == 0 && list(rest)) {
        return None;
    }
    Some(reg::CHANNEL_TYPES.iter().map(|(w, _)| item(w.to_string(), word, "kind of channel".into())).collect())
}

/// A webhook event's head: its settings, and after `signed` the schemes.
fn webhook_words(trimmed: &str) -> Option<Vec<CompletionItem>> {
    let (_, rest) = trimmed.strip_prefix("event ")?.split_once(" webhook ")?;
    if rest.matches('"').count() % 2 != 0 {
        return None;
    }
    let tokens: Vec<&str> = rest.split_whitespace().collect();
    let before = if rest.ends_with(' ') { tokens.last() } else { tokens.iter().rev().nth(1) };
    let word = CompletionItemKind::KEYWORD;
    match before.copied() {
        Some("signed") => Some(
            crate::base::webhook::SCHEMES
                .iter()
                .map(|s| item(s.to_string(), word, "how the sender signs".into()))
                .collect(),
        ),
        Some(w) if crate::language::webhook::WORDS.iter().any(|(k, _)| *k == w) => None,
        _ => Some(
            crate::language::webhook::WORDS
                .iter()
                .map(|(k, what)| item(k.to_string(), word, what.to_string()))
                .collect(),
        ),
    }
}

/// The words a line's start asks for: event kinds after `event`, methods
/// after `method`, a registration line's words, an action's.
fn line_words(doc: &Document, offset: usize, trimmed: &str) -> Option<Vec<CompletionItem>> {
    if trimmed.starts_with("event ") && !trimmed[6..].contains(' ') {
        let kinds = vocab::EVENTS.iter().map(|e| {
            let detail = format!("{}; provides {}", e.about, e.vars.join(", "));
            item(e.kind.to_string(), CompletionItemKind::EVENT, detail)
        });
        return Some(kinds.collect());
    }
    if let Some(items) = webhook_words(trimmed) {
        return Some(items);
    }
    if trimmed.starts_with("method ") && !trimmed[7..].contains(' ') {
        let methods = vocab::Method::ALL.iter();
        return Some(
            methods.map(|m| item(m.as_str().into(), CompletionItemKind::ENUM_MEMBER, "HTTP method".into())).collect(),
        );
    }
    if let Some(items) = register_words(trimmed) {
        return Some(items);
    }
    // (Among a tree's nodes: in an `api` block, `timeout` is its field.)
    action_words(trimmed).filter(|_| where_in(doc, offset) == vocab::Place::Tree)
}

/// On an action's line, outside its strings: the kinds a verb takes
/// (`give role`, `create thread`), then the words of its action not yet
/// written, each with what its value is.
fn action_words(line: &str) -> Option<Vec<CompletionItem>> {
    use crate::discord::actions::{Slot, Verb};
    if line.matches('"').count() % 2 == 1 || line.contains('{') {
        return None;
    }
    let words: Vec<&str> = line.split_whitespace().collect();
    let done = words.len() - usize::from(!line.ends_with(' ') && !words.is_empty());
    let verb = *words.first().filter(|_| done >= 1)?;
    let kind = words.get(1).copied().filter(|k| done >= 2 && ["role", "message", "channel", "thread"].contains(k));
    let spec = match Verb::parse(verb, kind) {
        Ok(v) => v.spec(),
        Err(kinds) if done == 1 && !kinds.is_empty() => {
            let about = |k: &str| format!("`{verb} {k}`");
            return Some(kinds.iter().map(|k| item(k.to_string(), CompletionItemKind::KEYWORD, about(k))).collect());
        }
        Err(_) => return None,
    };
    let written = &words[..done];
    let items = spec
        .words
        .iter()
        .filter(|w| !written.contains(&w.word))
        .map(|w| {
            let about = match w.slot {
                Slot::Member => "a member: an id or a mention",
                Slot::Role => "a role: an id, a mention or `@Name`",
                Slot::Channel => "a channel: an id, a mention or `#name`",
                Slot::Message => "a message: an id, or an earlier action's name",
                Slot::Who => "who may see it: members and roles, separated by commas",
                Slot::Duration { .. } => "a duration: `\"10m\"`, `\"1h30m\"`, `\"7d\"`",
                Slot::Text { .. } if w.word == "reason" => "the reason, kept in the server's audit log",
                Slot::Text { .. } => "a text",
                Slot::Tag => "a forum's tags: ids or names",
                Slot::Flag => "a word alone",
                Slot::Name => "the name later nodes read its answer by: `{api_NAME[response.id]}`",
                Slot::Emoji | Slot::Count { .. } => "a value",
            };
            item(w.word.to_string(), CompletionItemKind::KEYWORD, about.to_string())
        })
        .collect();
    Some(items)
}

/// Inside a component, a choice, a form or an input: its settings, and
/// the part a select menu or a form holds.
fn setting_words(specs: &[vocab::SettingSpec], within: &str) -> Vec<CompletionItem> {
    let mut items: Vec<CompletionItem> =
        specs.iter().map(|spec| item(spec.name.to_string(), CompletionItemKind::PROPERTY, spec.about.into())).collect();
    let inner = match within {
        "select" => Some(("choice", "a choice: `choice \"Label\" \"value\" { … }`, at most 25")),
        "form" => Some(("input", "a text input: `input name { label \"…\" }`, read as `{field_name}`")),
        _ => None,
    };
    if let Some((word, about)) = inner {
        items.push(item(word.into(), CompletionItemKind::KEYWORD, about.into()));
    }
    items
}

/// The keywords that stand at `place` (in an embed, its parts and `field`).
fn keyword_words(place: vocab::Place) -> Vec<CompletionItem> {
    let mut items = Vec::new();
    if place == vocab::Place::Embed {
        // An embed's parts, with what each takes.
        for p in vocab::EmbedPart::ALL {
            items.push(item(p.as_str().to_string(), CompletionItemKind::PROPERTY, p.about().into()));
        }
    }
    for k in vocab::Keyword::ALL.iter().filter(|k| k.place() == place) {
        let about = match k {
            vocab::Keyword::Field => "a name and a value: `field \"Name\" \"Value\" [inline]`, at most 25",
            vocab::Keyword::Text => "the reply's text, a template",
            vocab::Keyword::Ephemeral => "only the user who ran the command sees the reply",
            vocab::Keyword::Embed => "a box of rich text: title, description, fields, …; at most 10",
            vocab::Keyword::Button => "a button: `button handler { label \"…\" }`, or a link with a `url`",
            vocab::Keyword::Select => "a select menu: `select handler { choice \"Label\" \"value\" }`",
            vocab::Keyword::Form => "shows a form: `form handler { title \"…\" input name { label \"…\" } }`",
            vocab::Keyword::Update => "edits the message whose button or menu ran this handler",
            vocab::Keyword::Await => {
                "waits for the member's next message in the channel: `await message \"30s\" as answer { … } timeout { … }`"
            }
            vocab::Keyword::Cooldown => {
                "a wait between two runs: `cooldown \"1h\"` (per user), or `… per server`, `… per channel`"
            }
            _ => vocab::block_word_about(k.as_str()).unwrap_or("keyword"),
        };
        if place != vocab::Place::Embed || *k == vocab::Keyword::Field {
            items.push(item(k.as_str().to_string(), CompletionItemKind::KEYWORD, about.into()));
        }
    }
    // `file` is an `api` block's word too (a multipart part's).
    if place == vocab::Place::Reply {
        let about =
            "a file the message carries: `file \"report.pdf\"`, `file api_x`, `file text \"…\" { filename \"a.csv\" }`";
        items.push(item("file".to_string(), CompletionItemKind::KEYWORD, about.into()));
    }
    items
}

/// The keyword of an `api` block's field at `offset`, and what it does.
fn block_word_at(doc: &Document, offset: usize) -> Option<(String, Span)> {
    let mut found = None;
    for tree in doc.checked.ast.trees() {
        crate::language::ast::visit::each_block(&tree.body, &mut |b| {
            for f in b.fields.iter().filter(|f| contains(f.keyword, offset)) {
                let word = f.kind.keyword();
                if let Some(about) = vocab::block_word_about(word) {
                    found = Some((format!("`{word}`: {about}"), f.keyword));
                }
            }
        });
    }
    found
}

/// The embed part whose keyword is at `offset`.
fn embed_part_at(doc: &Document, offset: usize) -> Option<(vocab::EmbedPart, Span)> {
    let mut found = None;
    for tree in doc.checked.ast.trees() {
        crate::language::ast::visit::walk_nodes(&mut EmbedParts(offset, &mut found), &tree.body);
    }
    found
}

struct EmbedParts<'f>(usize, &'f mut Option<(vocab::EmbedPart, Span)>);

impl<'a> crate::language::ast::visit::Visitor<'a> for EmbedParts<'_> {
    fn block(&mut self, _: &'a crate::language::ast::ApiBlock) {}
    fn save(&mut self, _: &'a crate::language::ast::Save) {}
    fn condition(&mut self, _: &'a crate::language::ast::Condition) {}
    fn reply(&mut self, r: &'a crate::language::ast::Reply) {
        for e in r.embeds() {
            for item in &e.items {
                if let crate::language::ast::EmbedItem::Part { part, key, .. } = item {
                    if contains(*key, self.0) {
                        *self.1 = Some((*part, *key));
                    }
                }
            }
        }
    }
}

/// The settings taken where `offset` is, when it is inside a `button`,
/// `select`, `choice`, `form` or `input` block, and that part's keyword.
fn settings_in(doc: &Document, offset: usize) -> Option<(&'static [vocab::SettingSpec], &'static str)> {
    let text = doc.text();
    let &brace = lexer::open_braces(text, 0, offset).last()?;
    let head = text[text[..brace].rfind(['\n', '{']).map_or(0, |i| i + 1)..brace].trim_start();
    Some(match head.split_whitespace().next()? {
        "button" => (vocab::BUTTON_SETTINGS, "button"),
        "select" => (vocab::SELECT_SETTINGS, "select"),
        "choice" => (vocab::CHOICE_SETTINGS, "choice"),
        "form" => (vocab::FORM_SETTINGS, "form"),
        "input" => (vocab::INPUT_SETTINGS, "input"),
        "container" => (vocab::CONTAINER_SETTINGS, "container"),
        "separator" => (vocab::SEPARATOR_SETTINGS, "separator"),
        "thumbnail" => (vocab::MEDIA_SETTINGS, "thumbnail"),
        "media" => (vocab::MEDIA_SETTINGS, "media"),
        "poll" => (vocab::POLL_SETTINGS, "poll"),
        "answer" => (vocab::POLL_ANSWER_SETTINGS, "answer"),
        "file" => (vocab::FILE_SETTINGS, "file"),
        _ => return None,
    })
}

/// The setting whose word is at `offset`, with what it does.
fn setting_at(doc: &Document, offset: usize) -> Option<(String, Span)> {
    let (specs, within) = settings_in(doc, offset)?;
    let word = word_at(doc.text(), offset);
    let spec = specs.iter().find(|s| s.name == word)?;
    let start = offset - doc.text()[..offset].bytes().rev().take_while(|b| lexer::is_word_byte(*b)).count();
    let limit = match spec.form {
        vocab::SettingForm::Flag => "a word alone".to_string(),
        vocab::SettingForm::Text(max) => format!("a string of at most {max} characters"),
        vocab::SettingForm::Url(max) => format!("an http or https URL of at most {max} characters"),
        vocab::SettingForm::Emoji => "an emoji: `\"👍\"`, or a server's `\"<:name:id>\"`".to_string(),
        vocab::SettingForm::Number(least, most) => format!("a whole number from {least} to {most}"),
        vocab::SettingForm::Color => "a colour: `\"#5865F2\"`".to_string(),
        vocab::SettingForm::Hours(most) => format!("whole hours, 1 to {most}: `\"1d\"`"),
        vocab::SettingForm::Lasting(most) => format!("a length of time, up to {} days: `\"10m\"`", most / 86_400),
        vocab::SettingForm::Duration => {
            "a number of seconds or a string like `\"5m\"`, then `per user` (the default), `per server` or `per channel`".to_string()
        }
    };
    Some((
        format!("`{within}` setting `{}` ({limit}): {}", spec.name, spec.about),
        Span::new(start, start + word.len()),
    ))
}

/// The handler a `button`, `select` or `form` names at `offset`.
fn handler_named_at(doc: &Document, offset: usize) -> Option<&Tree> {
    let mut name = None;
    for tree in doc.checked.ast.trees() {
        crate::language::ast::visit::each_reply(&tree.body, &mut |r| {
            for c in r.components() {
                if let Some(h) = c.handler.as_ref().filter(|h| contains(h.span, offset)) {
                    name = Some(h.name.clone());
                }
            }
        });
        crate::language::ast::visit::each_form(&tree.body, &mut |f| {
            if contains(f.handler.span, offset) {
                name = Some(f.handler.name.clone());
            }
        });
    }
    let name = name?;
    doc.checked.ast.trees().find(|t| t.kind == crate::language::ast::TreeKind::Handler && t.name.name == name)
}

/// Where `offset` is, from the tokens (the file may not parse while it is
/// typed): the head of the innermost `{` still open there.
fn where_in(doc: &Document, offset: usize) -> vocab::Place {
    let text = doc.text();
    let Some(&brace) = lexer::open_braces(text, 0, offset).last() else { return vocab::Place::Top };
    let head = text[text[..brace].rfind('\n').map_or(0, |i| i + 1)..brace].trim_start();
    let word = head.split_whitespace().next().unwrap_or_default();
    match word {
        "api" if head.starts_with("api ") => vocab::Place::Block,
        "pages" => vocab::Place::Pages,
        // (An action's message is a reply's parts.)
        "reply" | "send" | "dm" | "edit" | "create" => vocab::Place::Reply,
        // (A container's and a section's parts are a reply's.)
        "update" | "container" | "section" => vocab::Place::Reply,
        "embed" => vocab::Place::Embed,
        _ => vocab::Place::Tree,
    }
}

// ── definitions, references, rename ──────────────────────────────────────

pub fn definition(uri: &Uri, doc: &Document, offset: usize) -> Option<GotoDefinitionResponse> {
    // A component's or a form's handler: the handler.
    if let Some(handler) = handler_named_at(doc, offset) {
        return Some(GotoDefinitionResponse::Scalar(Location {
            uri: uri.clone(),
            range: range(doc, handler.name.span),
        }));
    }
    // `sample "…"`: the file.
    for tree in doc.checked.ast.trees() {
        let mut target = None;
        let mut look = |b: &crate::language::ast::ApiBlock| {
            if let Some(s) = b.sample() {
                if contains(s.span, offset) {
                    target = doc.folder().map(|f| f.join(s.value.as_str()));
                }
            }
        };
        tree.received().into_iter().for_each(&mut look);
        crate::language::ast::visit::each_block(&tree.body, &mut look);
        if let Some(path) = target {
            let start = Position { line: 0, character: 0 };
            let location = Location { uri: path_to_uri(&path)?, range: Range { start, end: start } };
            return Some(GotoDefinitionResponse::Scalar(location));
        }
    }
    let symbols = doc.symbols();
    let here = symbols.iter().find(|s| contains(s.span, offset))?;
    let def = symbols.iter().find(|s| {
        s.definition
            && s.kind == here.kind
            && s.name == here.name
            && (here.kind == SymbolKind::Variable || same_tree(s.tree, here.tree))
    })?;
    Some(GotoDefinitionResponse::Scalar(Location { uri: uri.clone(), range: range(doc, def.span) }))
}

fn same_tree(a: Option<&Tree>, b: Option<&Tree>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => std::ptr::eq(a, b),
        (None, None) => true,
        _ => false,
    }
}

pub fn references(uri: &Uri, doc: &Document, offset: usize) -> Vec<Location> {
    let symbols = doc.symbols();
    let Some(here) = symbols.iter().find(|s| contains(s.span, offset)) else { return Vec::new() };
    symbols
        .iter()
        .filter(|s| s.kind == here.kind && s.name == here.name)
        .filter(|s| here.kind == SymbolKind::Variable || same_tree(s.tree, here.tree))
        .map(|s| Location { uri: uri.clone(), range: range(doc, s.span) })
        .collect()
}

pub fn rename(uri: &Uri, doc: &Document, offset: usize, new_name: &str) -> Answer<WorkspaceEdit> {
    let refuse = |why: String| Err((ErrorCode::InvalidParams, why));
    let symbols = doc.symbols();
    let Some(here) = symbols.iter().find(|s| contains(s.span, offset)) else {
        return refuse("nothing to rename here".into());
    };
    // An option's name is the platform's (`my-opt`, `année`); every other
    // name is one a bare word reads.
    if here.kind == SymbolKind::Variable && here.name.starts_with("option_") {
        if !crate::discord::names::is_valid(new_name) {
            return refuse(format!(
                "`{new_name}` is not an option's name: 1 to 32 letters or digits of any script, `-`, `_` and `'`, in lower case"
            ));
        }
    } else if !crate::language::syntax::template::is_ident(new_name) {
        return refuse(format!("`{new_name}` is not a name: letters, digits and `_`"));
    }
    let edit = |s: &super::analysis::Symbol<'_>, text: String| TextEdit { range: range(doc, s.span), new_text: text };
    let mut edits = Vec::new();
    match here.kind {
        SymbolKind::Block => {
            let taken = new_name != here.name
                && symbols.iter().any(|s| {
                    s.kind == SymbolKind::Block && s.definition && s.name == new_name && same_tree(s.tree, here.tree)
                });
            if taken {
                return refuse(format!("a block named `{new_name}` already exists in this command or event"));
            }
            for s in symbols.iter().filter(|s| s.kind == SymbolKind::Block && s.name == here.name) {
                if same_tree(s.tree, here.tree) {
                    edits.push(edit(s, new_name.to_string()));
                }
            }
        }
        SymbolKind::Variable => {
            let defined = symbols.iter().any(|s| s.kind == SymbolKind::Variable && s.definition && s.name == here.name);
            if !defined {
                return refuse(format!("`{}` is provided by blkc and cannot be renamed", here.name));
            }
            let option = here.name.starts_with("option_");
            let new_var = if option { format!("option_{new_name}") } else { new_name.to_string() };
            let taken = new_var != here.name
                && symbols.iter().any(|s| s.kind == SymbolKind::Variable && s.definition && s.name == new_var);
            if taken {
                return refuse(format!("a variable named `{new_var}` already exists"));
            }
            for s in symbols.iter().filter(|s| s.kind == SymbolKind::Variable && s.name == here.name) {
                // An option is declared by its bare name, used as `option_…`.
                let text = if option && !s.definition { new_var.clone() } else { new_name.to_string() };
                edits.push(edit(s, text));
            }
        }
    }
    Ok(changes(uri, edits))
}

// ── outline ──────────────────────────────────────────────────────────────

#[allow(deprecated)] // `DocumentSymbol::deprecated` must be written, though the protocol deprecates it
fn symbol(
    doc: &Document,
    name: String,
    detail: Option<String>,
    kind: LspSymbolKind,
    span: Span,
    name_span: Span,
) -> DocumentSymbol {
    DocumentSymbol {
        name,
        detail,
        kind,
        tags: None,
        deprecated: None,
        range: range(doc, span),
        selection_range: range(doc, name_span),
        children: None,
    }
}

pub fn symbols(doc: &Document) -> DocumentSymbolResponse {
    let mut out = Vec::new();
    for item in &doc.checked.ast.items {
        match item {
            Item::Tree(t) => {
                let mut children = Vec::new();
                crate::language::ast::visit::each_block(&t.body, &mut |b| {
                    let detail = b.method().map_or(String::new(), |m| m.name.to_string());
                    children.push(symbol(
                        doc,
                        b.name.name.to_string(),
                        Some(detail),
                        LspSymbolKind::OBJECT,
                        b.span,
                        b.name.span,
                    ));
                });
                for n in &t.body {
                    if let Node::Option(o) = n {
                        let name = format!("option_{}", o.name.name);
                        children.push(symbol(doc, name, None, LspSymbolKind::VARIABLE, o.span, o.name.span));
                    }
                }
                let kind = if t.kind == TreeKind::Command { LspSymbolKind::FUNCTION } else { LspSymbolKind::EVENT };
                let detail = Some(t.kind.as_str().to_string());
                let mut tree = symbol(doc, t.name.name.to_string(), detail, kind, t.span, t.name.span);
                tree.children = Some(children);
                out.push(tree);
            }
            Item::Var(v) => {
                let detail = Some("var".to_string());
                out.push(symbol(doc, v.name.name.to_string(), detail, LspSymbolKind::VARIABLE, v.span, v.name.span));
            }
            Item::Platform(p) => {
                let detail = Some(p.url.value.to_string());
                out.push(symbol(doc, "platform".into(), detail, LspSymbolKind::CONSTANT, p.span, p.url.span));
            }
            Item::Include(i) => {
                let detail = Some(i.path.value.to_string());
                out.push(symbol(doc, "include".into(), detail, LspSymbolKind::FILE, i.span, i.path.span));
            }
            Item::Failed(_, span) => {
                let detail = Some("what a failed step runs".to_string());
                out.push(symbol(doc, "failed".into(), detail, LspSymbolKind::EVENT, *span, *span));
            }
        }
    }
    DocumentSymbolResponse::Nested(out)
}

pub fn folding(doc: &Document) -> Vec<FoldingRange> {
    let mut spans: Vec<Span> = Vec::new();
    for tree in doc.checked.ast.trees() {
        spans.push(tree.span);
        fold_nodes(&tree.body, &mut spans);
    }
    let mut out = Vec::new();
    for span in spans {
        let (s, e) = (doc.pos(span.start as usize), doc.pos(span.end as usize));
        if e.line > s.line {
            out.push(FoldingRange {
                start_line: s.line,
                end_line: e.line.saturating_sub(1).max(s.line),
                ..FoldingRange::default()
            });
        }
    }
    out
}

fn fold_nodes(nodes: &[Node], spans: &mut Vec<Span>) {
    for node in nodes {
        match node {
            Node::Api(b) => {
                spans.push(b.span);
                for f in &b.fields {
                    spans.push(f.span);
                }
            }
            Node::If(i) => {
                for l in &i.links {
                    spans.push(l.then.span);
                    fold_nodes(&l.then.body, spans);
                }
                if let Some(o) = &i.otherwise {
                    spans.push(o.span);
                    fold_nodes(&o.body, spans);
                }
            }
            _ => {}
        }
    }
}
