//! The answers of the language server, one function a request, as JSON
//! in the protocol's shapes.

use lsp_server::ErrorCode;
use serde_json::{json, Value};

use super::analysis::{Document, SymbolKind};
use super::{path_to_uri, Answer};
use crate::ast::*;
use crate::diagnostics::{Code, Confidence, Severity};
use crate::path::Kind;
use crate::source::Span;
use crate::vocab;

fn range(doc: &Document, span: Span) -> Value {
    let (s, e) = (doc.pos(span.start as usize), doc.pos(span.end as usize));
    json!({ "start": { "line": s.line, "character": s.character }, "end": { "line": e.line, "character": e.character } })
}

fn contains(span: Span, offset: usize) -> bool {
    span.start as usize <= offset && offset <= span.end as usize
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
        // Written each time: the page is the one this program prints.
        let _ = std::fs::write(dir.join(format!("{}.md", code.as_str())), code.page());
    }
}

/// The file's diagnostics, as `blkc check` finds them.
pub fn diagnostics(uri: &str, doc: &Document) -> Vec<Value> {
    doc.checked
        .diagnostics
        .iter()
        .map(|d| {
            let span = d.primary_span().unwrap_or_default();
            let related: Vec<Value> = d
                .labels
                .iter()
                .filter(|l| !l.primary)
                .map(|l| json!({ "location": { "uri": uri, "range": range(doc, l.span) }, "message": l.text }))
                .collect();
            let mut message = d.message.clone();
            if let Some(help) = &d.help {
                message.push_str("\nhelp: ");
                message.push_str(help);
            }
            json!({
                "range": range(doc, span),
                "severity": match d.severity { Severity::Error => 1, Severity::Warning => 2, Severity::Hint => 4 },
                "code": d.code.as_str(),
                "codeDescription": { "href": path_to_uri(&code_pages().join(format!("{}.md", d.code.as_str()))) },
                "source": "blkc",
                "message": message,
                "relatedInformation": related,
            })
        })
        .collect()
}

/// Quick fixes: the suggestions of the diagnostics in `range`.
pub fn code_actions(uri: &str, doc: &Document, wanted: &Value) -> Value {
    let start = super::Pos {
        line: wanted["start"]["line"].as_u64().unwrap_or(0) as u32,
        character: wanted["start"]["character"].as_u64().unwrap_or(0) as u32,
    };
    let end = super::Pos {
        line: wanted["end"]["line"].as_u64().unwrap_or(0) as u32,
        character: wanted["end"]["character"].as_u64().unwrap_or(0) as u32,
    };
    let (from, to) = (doc.offset(start), doc.offset(end));
    let mut actions = Vec::new();
    let all = diagnostics(uri, doc);
    for (d, lsp) in doc.checked.diagnostics.iter().zip(all) {
        let span = d.primary_span().unwrap_or_default();
        if (span.end as usize) < from || (span.start as usize) > to {
            continue;
        }
        for s in &d.suggestions {
            let edits: Vec<Value> =
                s.edits.iter().map(|e| json!({ "range": range(doc, e.span), "newText": e.replacement })).collect();
            actions.push(json!({
                "title": s.message,
                "kind": "quickfix",
                "diagnostics": [lsp],
                "isPreferred": s.confidence == Confidence::Certain,
                "edit": { "changes": { uri: edits } },
            }));
        }
    }
    json!(actions)
}

/// The whole document in the canonical layout, as one edit.
pub fn formatting(doc: &Document) -> Value {
    match crate::format::format_text(&doc.checked.source.name, doc.text()) {
        Ok(formatted) if formatted != doc.text() => {
            json!([{ "range": range(doc, Span::new(0, doc.text().len())), "newText": formatted }])
        }
        Ok(_) => json!([]),
        // A file that does not parse is not formatted (its errors show).
        Err(_) => Value::Null,
    }
}

// ── hover ────────────────────────────────────────────────────────────────

pub fn hover(doc: &Document, offset: usize) -> Value {
    let mut parts: Vec<String> = Vec::new();
    let mut at: Option<Span> = None;
    let symbols = doc.symbols();
    if let Some(s) = symbols.iter().find(|s| s.block.is_some_and(|r| contains(r.span, offset))) {
        let r = s.block.unwrap_or_else(|| unreachable!());
        parts.push(reference_hover(doc, r, offset));
        at = Some(r.span);
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
        return Value::Null;
    }
    let mut value = json!({ "contents": { "kind": "markdown", "value": parts.join("\n\n---\n\n") } });
    if let Some(span) = at {
        value["range"] = range(doc, span);
    }
    value
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
    let path = crate::path::display(upto.iter().copied());
    let shown = if r.root.name == "status" { "status".to_string() } else { path };
    let head = format!("`api_{}[{}]`", r.block.name, shown);
    let Some(block) = doc.block_named(r.span.start as usize, &r.block.name) else {
        return format!("{head}: no block `{}` in this command or event", r.block.name);
    };
    if r.root.name == "status" {
        return format!("{head}: the HTTP status code of block `{}` (a number)", r.block.name);
    }
    let Some(sample) = doc.sample_json(block) else {
        return format!(
            "{head}\n\nblock `{}` has no sample: record one with `blkc test FILE {}` `--save`, and its paths show their values",
            r.block.name, r.block.name
        );
    };
    match crate::path::walk(sample.as_ref(), &upto) {
        Ok(v) => {
            let mut text = serde_json::to_string_pretty(v).unwrap_or_default();
            if text.len() > 600 {
                text.truncate(text.char_indices().take_while(|(i, _)| *i < 600).last().map_or(0, |(i, _)| i));
                text.push_str("\n…");
            }
            format!("{head}: {} in the sample\n\n```json\n{text}\n```", Kind::of(v).words())
        }
        Err(miss) => format!("{head}: {}", miss.message(&upto)),
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
            Part::Var(Var::Named(n)) => format!("{{{}}}", n.name),
            Part::Var(Var::BotToken(_)) => "{bot_token}".into(),
            Part::Var(Var::Ref(r)) => format!("{{api_{}[{}]}}", r.block.name, r.path_text()),
            Part::Secret(s) => format!("<{}>", s.name),
        })
        .collect()
}

fn variable_hover(doc: &Document, name: &str, offset: usize) -> String {
    let known = doc.variables_at(offset);
    let what = known.iter().find(|(n, _)| n == name).map_or("not defined here".to_string(), |(_, w)| w.clone());
    let declared = doc
        .symbols()
        .into_iter()
        .find(|s| s.kind == SymbolKind::Variable && s.definition && s.name == name)
        .map(|s| format!(" (declared on line {})", doc.pos(s.span.start as usize).line + 1))
        .unwrap_or_default();
    format!("`{{{name}}}`: {what}{declared}")
}

// ── completion ───────────────────────────────────────────────────────────

pub fn completion(doc: &Document, offset: usize) -> Value {
    let text = doc.text();
    let line_start = text[..offset.min(text.len())].rfind('\n').map_or(0, |i| i + 1);
    let prefix = &text[line_start..offset.min(text.len())];
    let mut items: Vec<Value> = Vec::new();
    let item = |label: String, kind: u32, detail: String| json!({ "label": label, "kind": kind, "detail": detail });

    // `api_x[response.a.` : the keys of the sample there.
    if let Some(open) = prefix.rfind('[') {
        let before = &prefix[..open];
        let name_start = before.rfind(|c: char| !(c.is_alphanumeric() || c == '_')).map_or(0, |i| i + 1);
        let path = &prefix[open + 1..];
        if let Some(block) = before[name_start..].strip_prefix("api_").filter(|_| !path.contains(']')) {
            let mut segments: Vec<&str> = path.split('.').collect();
            segments.pop();
            if segments.is_empty() {
                for root in ["response", "status"] {
                    items.push(item(root.into(), 14, "a response path starts here".into()));
                }
                return json!(items);
            }
            if let Some(b) = doc.block_named(offset, block) {
                if let Some(sample) = doc.sample_json(b) {
                    if let Ok(v) = crate::path::walk(sample.as_ref(), &segments[1..]) {
                        match v {
                            serde_json::Value::Object(map) => {
                                for (k, v) in map {
                                    if crate::path::addressable(k) {
                                        items.push(item(k.clone(), 10, Kind::of(v).words().into()));
                                    }
                                }
                            }
                            serde_json::Value::Array(a) => {
                                for (i, v) in a.iter().enumerate().take(50) {
                                    items.push(item(
                                        i.to_string(),
                                        12,
                                        format!("element {i}: {}", Kind::of(v).words()),
                                    ));
                                }
                            }
                            _ => {}
                        }
                    }
                }
            }
            return json!(items);
        }
    }
    // `{api_` : the blocks that have run here; `{` : the variables.
    if let Some(brace) = prefix.rfind('{').filter(|&b| !prefix[b..].contains('}')) {
        let word = &prefix[brace + 1..];
        if word.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            for b in doc.blocks_run_before(offset) {
                let mut it = item(format!("api_{}", b.name.name), 9, block_hover(b).replace('\n', " "));
                it["insertText"] = json!(format!("api_{}[response", b.name.name));
                items.push(it);
            }
            if !word.starts_with("api_") {
                for (name, what) in doc.variables_at(offset) {
                    items.push(item(name, 6, what));
                }
            }
            return json!(items);
        }
    }
    let trimmed = prefix.trim_start();
    if trimmed.starts_with("event ") && !trimmed[6..].contains(' ') {
        for (kind, vars) in vocab::EVENTS {
            items.push(item(kind.to_string(), 23, format!("provides {}", vars.join(", "))));
        }
        return json!(items);
    }
    if trimmed.starts_with("method ") && !trimmed[7..].contains(' ') {
        for m in vocab::Method::ALL {
            items.push(item(m.as_str().into(), 20, "HTTP method".into()));
        }
        return json!(items);
    }
    if trimmed.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        let words: &[&str] = match where_in(doc, offset) {
            Where::Top => &["command", "event", "var", "platform"],
            Where::Tree => &["option", "api", "reply", "save", "if", "else"],
            Where::Block => &["method", "url", "params", "headers", "body", "sample", "allow"],
        };
        for w in words {
            items.push(item(w.to_string(), 14, "keyword".into()));
        }
    }
    json!(items)
}

enum Where {
    Top,
    Tree,
    Block,
}

/// Where `offset` is, from the text (the file may not parse while it is
/// typed): the head of the innermost `{` still open there.
fn where_in(doc: &Document, offset: usize) -> Where {
    let text = doc.text();
    let Some(&brace) = crate::syntax::open_braces(text, 0, offset).last() else { return Where::Top };
    let head = text[text[..brace].rfind('\n').map_or(0, |i| i + 1)..brace].trim_start();
    if head.starts_with("api ") {
        Where::Block
    } else {
        Where::Tree
    }
}

// ── definitions, references, rename ──────────────────────────────────────

pub fn definition(uri: &str, doc: &Document, offset: usize) -> Value {
    // `sample "…"`: the file.
    for tree in doc.checked.ast.trees() {
        let mut target = None;
        crate::ast::each_block(&tree.body, &mut |b| {
            if let Some(s) = b.sample() {
                if contains(s.span, offset) {
                    target = doc.folder().map(|f| f.join(s.value.as_str()));
                }
            }
        });
        if let Some(path) = target {
            return json!({ "uri": path_to_uri(&path), "range": { "start": { "line": 0, "character": 0 }, "end": { "line": 0, "character": 0 } } });
        }
    }
    let symbols = doc.symbols();
    let Some(here) = symbols.iter().find(|s| contains(s.span, offset)) else { return Value::Null };
    let def = symbols.iter().find(|s| {
        s.definition
            && s.kind == here.kind
            && s.name == here.name
            && (here.kind == SymbolKind::Variable || same_tree(s.tree, here.tree))
    });
    match def {
        Some(d) => json!({ "uri": uri, "range": range(doc, d.span) }),
        None => Value::Null,
    }
}

fn same_tree(a: Option<&Tree>, b: Option<&Tree>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => std::ptr::eq(a, b),
        (None, None) => true,
        _ => false,
    }
}

pub fn references(uri: &str, doc: &Document, offset: usize) -> Value {
    let symbols = doc.symbols();
    let Some(here) = symbols.iter().find(|s| contains(s.span, offset)) else { return json!([]) };
    let found: Vec<Value> = symbols
        .iter()
        .filter(|s| s.kind == here.kind && s.name == here.name)
        .filter(|s| here.kind == SymbolKind::Variable || same_tree(s.tree, here.tree))
        .map(|s| json!({ "uri": uri, "range": range(doc, s.span) }))
        .collect();
    json!(found)
}

pub fn rename(uri: &str, doc: &Document, offset: usize, new_name: &str) -> Answer {
    let refuse = |why: String| Err((ErrorCode::InvalidParams, why));
    if !crate::syntax::template::is_ident(new_name) {
        return refuse(format!("`{new_name}` is not a name: letters, digits and `_`"));
    }
    let symbols = doc.symbols();
    let Some(here) = symbols.iter().find(|s| contains(s.span, offset)) else {
        return refuse("nothing to rename here".into());
    };
    let mut edits = Vec::new();
    match here.kind {
        SymbolKind::Block => {
            let taken = symbols.iter().any(|s| {
                s.kind == SymbolKind::Block && s.definition && s.name == new_name && same_tree(s.tree, here.tree)
            });
            if taken {
                return refuse(format!("a block named `{new_name}` already exists in this command or event"));
            }
            for s in symbols.iter().filter(|s| s.kind == SymbolKind::Block && s.name == here.name) {
                if same_tree(s.tree, here.tree) {
                    edits.push(json!({ "range": range(doc, s.span), "newText": new_name }));
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
            if symbols.iter().any(|s| s.kind == SymbolKind::Variable && s.definition && s.name == new_var) {
                return refuse(format!("a variable named `{new_var}` already exists"));
            }
            for s in symbols.iter().filter(|s| s.kind == SymbolKind::Variable && s.name == here.name) {
                // An option is declared by its bare name, used as `option_…`.
                let text = if option && !s.definition { new_var.clone() } else { new_name.to_string() };
                edits.push(json!({ "range": range(doc, s.span), "newText": text }));
            }
        }
    }
    Ok(json!({ "changes": { uri: edits } }))
}

// ── outline ──────────────────────────────────────────────────────────────

pub fn symbols(doc: &Document) -> Value {
    let mut out = Vec::new();
    for item in &doc.checked.ast.items {
        match item {
            Item::Tree(t) => {
                let mut children = Vec::new();
                crate::ast::each_block(&t.body, &mut |b| {
                    let detail = b.method().map_or(String::new(), |m| m.name.to_string());
                    children.push(json!({
                        "name": b.name.name.as_str(), "detail": detail, "kind": 19,
                        "range": range(doc, b.span), "selectionRange": range(doc, b.name.span),
                    }));
                });
                for n in &t.body {
                    if let Node::Option(o) = n {
                        children.push(json!({
                            "name": format!("option_{}", o.name.name), "kind": 13,
                            "range": range(doc, o.span), "selectionRange": range(doc, o.name.span),
                        }));
                    }
                }
                out.push(json!({
                    "name": t.name.name.as_str(), "detail": t.kind.as_str(),
                    "kind": if t.kind == TreeKind::Command { 12 } else { 24 },
                    "range": range(doc, t.span), "selectionRange": range(doc, t.name.span),
                    "children": children,
                }));
            }
            Item::Var(v) => out.push(json!({
                "name": v.name.name.as_str(), "detail": "var", "kind": 13,
                "range": range(doc, v.span), "selectionRange": range(doc, v.name.span),
            })),
            Item::Platform(p) => out.push(json!({
                "name": "platform", "detail": p.url.value.as_str(), "kind": 14,
                "range": range(doc, p.span), "selectionRange": range(doc, p.url.span),
            })),
        }
    }
    json!(out)
}

pub fn folding(doc: &Document) -> Value {
    let mut spans: Vec<Span> = Vec::new();
    for tree in doc.checked.ast.trees() {
        spans.push(tree.span);
        fold_nodes(&tree.body, &mut spans);
    }
    let mut out = Vec::new();
    for span in spans {
        let (s, e) = (doc.pos(span.start as usize), doc.pos(span.end as usize));
        if e.line > s.line {
            out.push(json!({ "startLine": s.line, "endLine": e.line.saturating_sub(1).max(s.line) }));
        }
    }
    json!(out)
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
