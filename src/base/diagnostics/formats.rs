//! Diagnostics in the formats other tools read, each a real convention:
//! `short` (gcc, rustc `--error-format=short`, vim's quickfix, VS Code
//! problem matchers), `github` (workflow annotations) and SARIF 2.1.0 (code
//! scanning). Lines and columns are 1-based, columns count characters
//! (Unicode scalar values), as in the text and JSON reports.

use super::{Code, Confidence, Diagnostic, Severity};
use crate::base::source::{LineIndex, SourceFile, Span};

/// `file:line:col: severity[CODE]: message`, one line per diagnostic.
pub fn short(file: &SourceFile, diags: &[Diagnostic]) -> String {
    if !file.parts.is_empty() {
        return super::by_file(file, diags).iter().map(|(f, d)| short(f, d)).collect();
    }
    let index = file.line_index();
    let mut out = String::new();
    for d in diags {
        let (line, col) = d.primary_span().map_or((1, 1), |s| index.line_col(s.start as usize));
        out.push_str(&format!(
            "{}:{line}:{col}: {}[{}]: {}\n",
            file.name,
            d.severity.as_str(),
            d.code.as_str(),
            one_line(&d.message)
        ));
    }
    out
}

/// GitHub Actions workflow commands: `::error file=…,line=…,col=…::message`.
/// Hints are `notice`s; the help line follows the message.
pub fn github(file: &SourceFile, diags: &[Diagnostic]) -> String {
    if !file.parts.is_empty() {
        return super::by_file(file, diags).iter().map(|(f, d)| github(f, d)).collect();
    }
    let index = file.line_index();
    let mut out = String::new();
    for d in diags {
        let command = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Hint => "notice",
        };
        let mut properties = format!("file={}", property(&file.name));
        if let Some(span) = d.primary_span() {
            let (line, col) = index.line_col(span.start as usize);
            let (end_line, end_col) = index.line_col(span.end as usize);
            properties.push_str(&format!(",line={line},col={col},endLine={end_line},endColumn={end_col}"));
        }
        properties.push_str(&format!(",title={}", property(&format!("{} {}", d.code.as_str(), d.code.title()))));
        let mut message = d.message.clone();
        if let Some(help) = &d.help {
            message.push_str("\nhelp: ");
            message.push_str(help);
        }
        out.push_str(&format!("::{command} {properties}::{}\n", data(&message)));
    }
    out
}

/// A message on one line (the short format has no room for more).
fn one_line(text: &str) -> String {
    text.replace(['\n', '\r'], " ")
}

/// A workflow command's message: `%`, CR and LF escaped.
fn data(text: &str) -> String {
    text.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// A workflow command's property value: also `:` and `,`.
fn property(text: &str) -> String {
    data(text).replace(':', "%3A").replace(',', "%2C")
}

/// A SARIF 2.1.0 log of the files' diagnostics: one run of blkc, a rule per
/// code that occurs, a result per diagnostic with its region, related
/// locations and fixes.
pub fn sarif(files: &[(&SourceFile, &[Diagnostic])]) -> serde_json::Value {
    let mut codes: Vec<Code> = files.iter().flat_map(|(_, d)| d.iter().map(|d| d.code)).collect();
    codes.sort();
    codes.dedup();
    let rules: Vec<_> = codes
        .iter()
        .map(|c| {
            serde_json::json!({
                "id": c.as_str(),
                "name": format!("{c:?}"),
                "shortDescription": { "text": c.title() },
                "fullDescription": { "text": first_paragraph(c.page()) },
                "defaultConfiguration": { "level": level(c.severity()) },
                "help": { "text": format!("blkc explain {}", c.as_str()), "markdown": c.page() },
            })
        })
        .collect();
    let mut results = Vec::new();
    // (A bot in several files is a file each.)
    let parts: Vec<(SourceFile, Vec<Diagnostic>)> =
        files.iter().filter(|(f, _)| !f.parts.is_empty()).flat_map(|(f, d)| super::by_file(f, d)).collect();
    let each = files.iter().filter(|(f, _)| f.parts.is_empty()).map(|(f, d)| (*f, *d));
    for (file, diags) in each.chain(parts.iter().map(|(f, d)| (f, d.as_slice()))) {
        let index = file.line_index();
        for d in diags.iter() {
            results.push(result(file, &index, d, codes.binary_search(&d.code).unwrap_or(0)));
        }
    }
    serde_json::json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "blkc",
                "version": env!("CARGO_PKG_VERSION"),
                "semanticVersion": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    })
}

fn result(file: &SourceFile, index: &LineIndex<'_>, d: &Diagnostic, rule: usize) -> serde_json::Value {
    let uri = artifact_uri(&file.name);
    let location = |span: Span, message: Option<&str>| {
        let mut loc = serde_json::json!({
            "physicalLocation": {
                "artifactLocation": { "uri": uri },
                "region": region(index, span),
            }
        });
        if let Some(m) = message.filter(|m| !m.is_empty()) {
            loc["message"] = serde_json::json!({ "text": m });
        }
        loc
    };
    let mut text = d.message.clone();
    if let Some(help) = &d.help {
        text.push_str("\nhelp: ");
        text.push_str(help);
    }
    let mut value = serde_json::json!({
        "ruleId": d.code.as_str(),
        "ruleIndex": rule,
        "level": level(d.severity),
        "message": { "text": text },
        "locations": [location(d.primary_span().unwrap_or_default(), None)],
    });
    let related: Vec<_> = d
        .labels
        .iter()
        .filter(|l| !l.primary)
        .enumerate()
        .map(|(i, l)| {
            let mut loc = location(l.span, Some(&l.text));
            loc["id"] = serde_json::json!(i);
            loc
        })
        .collect();
    if !related.is_empty() {
        value["relatedLocations"] = serde_json::json!(related);
    }
    let fixes: Vec<_> = d
        .suggestions
        .iter()
        .filter(|s| s.confidence == Confidence::Certain)
        .map(|s| {
            serde_json::json!({
                "description": { "text": s.message },
                "artifactChanges": [{
                    "artifactLocation": { "uri": uri },
                    "replacements": s.edits.iter().map(|e| serde_json::json!({
                        "deletedRegion": region(index, e.span),
                        "insertedContent": { "text": e.replacement },
                    })).collect::<Vec<_>>(),
                }],
            })
        })
        .collect();
    if !fixes.is_empty() {
        value["fixes"] = serde_json::json!(fixes);
    }
    value
}

fn region(index: &LineIndex<'_>, span: Span) -> serde_json::Value {
    let (start_line, start_column) = index.line_col(span.start as usize);
    let (end_line, end_column) = index.line_col(span.end as usize);
    serde_json::json!({
        "startLine": start_line,
        "startColumn": start_column,
        "endLine": end_line,
        "endColumn": end_column,
    })
}

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Hint => "note",
    }
}

/// A file name as a URI: a relative reference, or a `file:` URI for an
/// absolute path: `/` separators, and the few
/// characters a URI cannot hold percent-encoded.
fn artifact_uri(name: &str) -> String {
    let name = name.replace('\\', "/");
    // An absolute path is a `file:` URI; a relative one a relative reference.
    if name.starts_with('/') {
        crate::base::source::file_uri(&name)
    } else {
        crate::base::source::uri_escaped(&name)
    }
}

/// The "What it means" paragraph of a code's page.
fn first_paragraph(page: &str) -> String {
    page.split("## What it means")
        .nth(1)
        .and_then(|rest| rest.trim().split("\n\n").next())
        .unwrap_or("")
        .trim()
        .to_string()
}
