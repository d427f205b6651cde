//! Rendering diagnostics: miette's graphical report for terminals, and JSON
//! for editors.

use std::fmt;

use miette::{GraphicalReportHandler, GraphicalTheme, LabeledSpan};

use super::{Diagnostic, Severity};
use crate::base::source::{LineIndex, SourceFile, Span};

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
    source: &'a IndexedSource<'a>,
    /// The labels shown in the snippet; empty when the report shows no
    /// snippet (its line is too long to show).
    shown: Vec<&'a super::Label>,
    /// What the snippet leaves out, said in the help instead.
    extra: Option<String>,
}

/// A line longer than this is not shown in a snippet: the report says where
/// instead, with an excerpt (terminals cannot show it, and rendering it for
/// every report of a long line is quadratic).
const MAX_SNIPPET_LINE: usize = 400;
/// Related labels further than this many lines from the primary one are
/// listed in the help rather than drawn, so one snippet stays short.
const MAX_SNIPPET_REACH: usize = 24;
/// The most errors and warnings a terminal report shows; `--format json`
/// lists them all.
pub const MAX_SHOWN: usize = 200;

impl<'a> Report<'a> {
    fn new(diag: &'a Diagnostic, source: &'a IndexedSource<'a>) -> Report<'a> {
        let Some(primary) = diag.primary_span() else {
            return Report { diag, source, shown: Vec::new(), extra: None };
        };
        let primary_line = source.line_of(primary.start as usize);
        let mut shown = Vec::new();
        let mut elsewhere = Vec::new();
        for label in &diag.labels {
            let line = source.line_of(label.span.start as usize);
            let near = line.abs_diff(primary_line) <= MAX_SNIPPET_REACH;
            let end_line = source.line_of((label.span.end as usize).max(label.span.start as usize + 1) - 1);
            if near && end_line.abs_diff(line) <= MAX_SNIPPET_REACH && source.line_len(line) <= MAX_SNIPPET_LINE {
                shown.push(label);
            } else {
                elsewhere.push(format!("{} at {}", label.text, source.position(label.span.start as usize)));
            }
        }
        if !shown.iter().any(|l| l.primary || l.span == primary) {
            // The primary label cannot be drawn: show none, say where.
            let at = source.position(primary.start as usize);
            let extra = format!("at {}: `{}`", at, source.excerpt(primary.start as usize, primary.end as usize));
            let mut all: Vec<String> = vec![extra];
            all.extend(
                diag.labels
                    .iter()
                    .filter(|l| l.span != primary)
                    .map(|l| format!("{} at {}", l.text, source.position(l.span.start as usize))),
            );
            return Report { diag, source, shown: Vec::new(), extra: Some(all.join("; ")) };
        }
        let extra = (!elsewhere.is_empty()).then(|| elsewhere.join("; "));
        Report { diag, source, shown, extra }
    }
}

/// The source as miette reads it, with an index of line starts: miette's own
/// `SourceCode` for text scans from the start of the file for every report,
/// which is quadratic when a large file has many diagnostics. This cuts the
/// lines a report shows out of the file first.
struct IndexedSource<'a> {
    name: &'a str,
    text: &'a str,
    line_starts: Vec<usize>,
}

impl<'a> IndexedSource<'a> {
    fn new(name: &'a str, text: &'a str) -> IndexedSource<'a> {
        let mut line_starts = vec![0];
        line_starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        IndexedSource { name, text, line_starts }
    }

    /// The 0-based line holding byte `offset`.
    fn line_of(&self, offset: usize) -> usize {
        self.line_starts.partition_point(|&start| start <= offset).saturating_sub(1)
    }

    fn line_len(&self, line: usize) -> usize {
        self.line_starts.get(line + 1).copied().unwrap_or(self.text.len()) - self.line_starts[line]
    }

    /// `file:line:column` of a byte offset (column in characters).
    fn position(&self, offset: usize) -> String {
        let line = self.line_of(offset);
        let start = self.line_starts[line];
        let mut end = offset.min(self.text.len());
        while !self.text.is_char_boundary(end) {
            end -= 1;
        }
        let column = self.text[start..end.max(start)].chars().count() + 1;
        format!("{}:{}:{column}", self.name, line + 1)
    }

    /// Up to 60 characters of the text at a span, on one line.
    fn excerpt(&self, start: usize, end: usize) -> String {
        let mut start = start.min(self.text.len());
        while !self.text.is_char_boundary(start) {
            start -= 1;
        }
        let text: String = self.text[start..].chars().take_while(|c| *c != '\n').take(60).collect();
        let cut =
            end.saturating_sub(start) > text.len() || self.text[start..].chars().nth(60).is_some_and(|c| c != '\n');
        if cut {
            format!("{text}…")
        } else {
            text
        }
    }
}

impl miette::SourceCode for IndexedSource<'_> {
    fn read_span<'b>(
        &'b self,
        span: &miette::SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<Box<dyn miette::SpanContents<'b> + 'b>, miette::MietteError> {
        let first = self.line_of(span.offset()).saturating_sub(before);
        let last = self.line_of(span.offset() + span.len().saturating_sub(1)) + after + 1;
        let start = self.line_starts[first];
        let end = self.line_starts.get(last + 1).copied().unwrap_or(self.text.len());
        let window = &self.text.as_bytes()[start..end];
        let local = miette::SourceSpan::new((span.offset() - start).into(), span.len());
        let contents = window.read_span(&local, before, after)?;
        let offset = contents.span().offset() + start;
        // Columns count characters, as in every other format (miette's own
        // count is bytes; the header `file:line:col` shows this one).
        let line_start = self.line_starts[self.line_of(offset)];
        let column = self.text.get(line_start..offset).map_or(contents.column(), |t| t.chars().count());
        Ok(Box::new(miette::MietteSpanContents::new_named(
            self.name.to_string(),
            contents.data(),
            miette::SourceSpan::new(offset.into(), contents.span().len()),
            contents.line() + first,
            column,
            contents.line_count() + first,
        )))
    }
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
            Severity::Hint => miette::Severity::Advice,
        })
    }

    fn help<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        let lines: Vec<String> =
            [self.diag.help.clone(), self.extra.clone(), self.diag.note.as_ref().map(|n| format!("note: {n}"))]
                .into_iter()
                .flatten()
                .collect();
        (!lines.is_empty()).then(|| Box::new(lines.join("\n")) as Box<dyn fmt::Display>)
    }

    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        (!self.shown.is_empty()).then_some(self.source as &dyn miette::SourceCode)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        if self.shown.is_empty() {
            return None;
        }
        Some(Box::new(self.shown.iter().map(|l| {
            let text = (!l.text.is_empty()).then(|| l.text.clone());
            if l.primary {
                LabeledSpan::new_primary_with_span(text, l.span)
            } else {
                LabeledSpan::new_with_span(text, l.span)
            }
        })))
    }
}

/// The most hints a terminal report shows (errors and warnings: at most
/// [`MAX_SHOWN`]); `--format json` lists every one.
pub const MAX_HINTS_SHOWN: usize = 10;

/// Renders every error and warning of a file as miette reports, the first
/// [`MAX_HINTS_SHOWN`] hints, then a summary line.
pub fn render_terminal(file: &SourceFile, diags: &[Diagnostic], opts: RenderOptions) -> String {
    let (mut hints, mut others) = (0, 0);
    let shown: Vec<Diagnostic> = diags
        .iter()
        .filter(|d| {
            if d.severity != Severity::Hint {
                others += 1;
                return others <= MAX_SHOWN;
            }
            hints += 1;
            hints <= MAX_HINTS_SHOWN
        })
        .cloned()
        .collect();
    let mut out = render_reports(file, &shown, opts);
    if others > MAX_SHOWN {
        out.push_str(&format!(
            "… and {} more errors and warnings, not shown (`--format json` lists them all)\n\n",
            others - MAX_SHOWN
        ));
    }
    if hints > MAX_HINTS_SHOWN {
        out.push_str(&format!(
            "… and {} more hints, not shown (`--format json` lists them all)\n\n",
            hints - MAX_HINTS_SHOWN
        ));
    }
    out.push_str(&summary(&file.name, diags));
    out.push('\n');
    out
}

/// Renders diagnostics as miette reports, without a summary line.
pub fn render_reports(file: &SourceFile, diags: &[Diagnostic], opts: RenderOptions) -> String {
    if !file.parts.is_empty() {
        let each = super::by_file(file, diags);
        return each.iter().map(|(f, d)| render_reports(f, d, opts)).collect();
    }
    if diags.is_empty() {
        // No line index for a clean file: on a big one it is a tenth of the
        // memory the check takes.
        return String::new();
    }
    let theme = if opts.color { GraphicalTheme::unicode() } else { GraphicalTheme::unicode_nocolor() };
    let handler = GraphicalReportHandler::new_themed(theme).with_width(opts.width).with_links(false);
    let source = IndexedSource::new(&file.name, &file.text);
    let mut out = String::new();
    for diag in diags {
        let report = Report::new(diag, &source);
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
    let (errors, warnings, hints) = (count(Severity::Error), count(Severity::Warning), count(Severity::Hint));
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
    if hints > 0 {
        parts.push(plural(hints, "hint"));
    }
    format!("{name}: {}", parts.join(", "))
}

/// The diagnostics of a file as a JSON value, for editors.
pub fn render_json(file: &SourceFile, diags: &[Diagnostic]) -> serde_json::Value {
    let items: Vec<_> = if file.parts.is_empty() {
        let index = file.line_index();
        diags.iter().map(|d| diagnostic_json(file, &index, d)).collect()
    } else {
        // (A bot in several files: each diagnostic names its own file.)
        let each = super::by_file(file, diags);
        each.iter()
            .flat_map(|(part, local)| local.iter().map(|d| diagnostic_json(part, &part.line_index(), d)))
            .collect()
    };
    let count = |s: Severity| diags.iter().filter(|d| d.severity == s).count();
    serde_json::json!({
        "file": file.name,
        "errors": count(Severity::Error),
        "warnings": count(Severity::Warning),
        "hints": count(Severity::Hint),
        "diagnostics": items,
    })
}

/// A span in every JSON format blkc prints: start and end, each with the
/// byte offset, the 1-based line and the 1-based column in characters.
pub fn span_json(index: &LineIndex<'_>, span: Span) -> serde_json::Value {
    let position = |offset: u32| {
        let (line, column) = index.line_col(offset as usize);
        serde_json::json!({ "offset": offset, "line": line, "column": column })
    };
    serde_json::json!({ "start": position(span.start), "end": position(span.end) })
}

/// One diagnostic as JSON: the object `blkc check --format json` lists and
/// `blkc run --format json` puts in its `warning` and `error` events.
pub fn diagnostic_json(file: &SourceFile, index: &LineIndex<'_>, d: &Diagnostic) -> serde_json::Value {
    if !file.parts.is_empty() {
        // (A bot in several files: as its own file's.)
        let (part, local) = super::localized(file, d);
        return diagnostic_json(&part, &part.line_index(), &local);
    }
    serde_json::json!({
        "code": d.code.as_str(),
        "severity": d.severity,
        "message": d.message,
        "file": file.name,
        "span": d.primary_span().map(|s| span_json(index, s)),
        "labels": d.labels.iter().map(|l| serde_json::json!({
            "message": l.text,
            "primary": l.primary,
            "span": span_json(index, l.span),
        })).collect::<Vec<_>>(),
        "help": d.help,
        "note": d.note,
        "suggestions": d.suggestions.iter().map(|s| serde_json::json!({
            "message": s.message,
            "confidence": s.confidence,
            "edits": s.edits.iter().map(|e| serde_json::json!({
                "span": span_json(index, e.span),
                "replacement": e.replacement,
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}
