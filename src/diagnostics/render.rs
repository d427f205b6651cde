//! Rendering diagnostics: miette's graphical report for terminals, and JSON
//! for editors.

use std::fmt;

use miette::{GraphicalReportHandler, GraphicalTheme, LabeledSpan, NamedSource};

use super::{Diagnostic, Severity};
use crate::source::SourceFile;

#[derive(Debug, Clone, Copy)]
pub struct RenderOptions {
    pub color: bool,
    pub width: usize,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions { color: false, width: 100 }
    }
}

struct Report<'a> {
    diag: &'a Diagnostic,
    source: &'a NamedSource<String>,
}

impl fmt::Debug for Report<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.diag, f)
    }
}

impl fmt::Display for Report<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.diag.message)
    }
}

impl std::error::Error for Report<'_> {}

impl miette::Diagnostic for Report<'_> {
    fn code<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        Some(Box::new(self.diag.code.as_str()))
    }

    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.diag.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
            Severity::Advice => miette::Severity::Advice,
        })
    }

    fn help<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        match (&self.diag.help, &self.diag.note) {
            (Some(help), Some(note)) => Some(Box::new(format!("{help}\nnote: {note}"))),
            (Some(help), None) => Some(Box::new(help)),
            (None, Some(note)) => Some(Box::new(format!("note: {note}"))),
            (None, None) => None,
        }
    }

    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        (!self.diag.labels.is_empty()).then_some(self.source as &dyn miette::SourceCode)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        if self.diag.labels.is_empty() {
            return None;
        }
        Some(Box::new(self.diag.labels.iter().map(|l| {
            let text = (!l.text.is_empty()).then(|| l.text.clone());
            if l.primary {
                LabeledSpan::new_primary_with_span(text, l.span)
            } else {
                LabeledSpan::new_with_span(text, l.span)
            }
        })))
    }
}

/// Renders every diagnostic of a file as miette reports, then a summary line.
pub fn render_terminal(file: &SourceFile, diags: &[Diagnostic], opts: RenderOptions) -> String {
    let mut out = render_reports(file, diags, opts);
    out.push_str(&summary(&file.name, diags));
    out.push('\n');
    out
}

/// Renders diagnostics as miette reports, without a summary line.
pub fn render_reports(file: &SourceFile, diags: &[Diagnostic], opts: RenderOptions) -> String {
    let theme = if opts.color { GraphicalTheme::unicode() } else { GraphicalTheme::unicode_nocolor() };
    let handler = GraphicalReportHandler::new_themed(theme).with_width(opts.width).with_links(false);
    let source = NamedSource::new(file.name.clone(), file.text.clone());
    let mut out = String::new();
    for diag in diags {
        let report = Report { diag, source: &source };
        // Writing into a String cannot fail.
        let _ = handler.render_report(&mut out, &report);
        out.push('\n');
    }
    out
}

/// "weather.blk: 2 errors, 1 warning" or "weather.blk: no problems found".
pub fn summary(name: &str, diags: &[Diagnostic]) -> String {
    let count = |s: Severity| diags.iter().filter(|d| d.severity == s).count();
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    let (errors, warnings, advice) = (count(Severity::Error), count(Severity::Warning), count(Severity::Advice));
    if diags.is_empty() {
        return format!("{name}: no problems found");
    }
    let mut parts = Vec::new();
    if errors > 0 {
        parts.push(plural(errors, "error"));
    }
    if warnings > 0 {
        parts.push(plural(warnings, "warning"));
    }
    if advice > 0 {
        parts.push(plural(advice, "hint"));
    }
    format!("{name}: {}", parts.join(", "))
}

/// The diagnostics of a file as a JSON value, for editors.
pub fn render_json(file: &SourceFile, diags: &[Diagnostic]) -> serde_json::Value {
    let position = |offset: u32| {
        let (line, column) = file.line_col(offset as usize);
        serde_json::json!({ "offset": offset, "line": line, "column": column })
    };
    let items: Vec<_> = diags
        .iter()
        .map(|d| {
            let span = d.primary_span();
            serde_json::json!({
                "code": d.code.as_str(),
                "severity": d.severity,
                "message": d.message,
                "file": file.name,
                "span": span.map(|s| serde_json::json!({ "start": position(s.start), "end": position(s.end) })),
                "labels": d.labels.iter().map(|l| serde_json::json!({
                    "message": l.text,
                    "primary": l.primary,
                    "span": { "start": position(l.span.start), "end": position(l.span.end) },
                })).collect::<Vec<_>>(),
                "help": d.help,
                "note": d.note,
            })
        })
        .collect();
    serde_json::json!({
        "file": file.name,
        "errors": diags.iter().filter(|d| d.severity == Severity::Error).count(),
        "warnings": diags.iter().filter(|d| d.severity == Severity::Warning).count(),
        "diagnostics": items,
    })
}
