//! `blkc test FILE BLOCK`: the builder's test request, the response, every
//! path into it, the shape compared with the sample, and `--save`. The
//! domain work is the library's ([`blkc::run::test_request`]); this file gathers
//! the inputs and prints.

use std::io::Write;
use std::path::Path;

use blkc::base::diagnostics::render::{render_reports, RenderOptions};
use blkc::base::diagnostics::{Diagnostic, Severity};
use blkc::language::ast::{ApiBlock, Tree, TreeKind};
use blkc::language::load::LoadOptions;
use blkc::language::model::Checked;
use blkc::language::plan::{Plan, Request};
use blkc::run::eval::explore::{self, Row};
use blkc::run::eval::{self, Body, Event, Inputs, Options, TestReport};
use blkc::run::test_request::{self as domain, Saved, ShapeReport};

use super::args::{Format, TestArgs, TestFormat};
use super::inputs::{http_limits, secret_inputs};
use super::report::{self, Exit};

/// A test request that failed: why, and what the block's `failed` runs with.
fn test_failed(checked: &Checked, failed: eval::TestFailure, opts: RenderOptions) -> Exit {
    eprint!("{}", render_reports(&checked.source, &[*failed.diagnostic], opts));
    if let Some(vars) = failed.failure {
        eprintln!("its `failed` runs with:");
        for (name, value) in vars {
            eprintln!("  {{{name}}} = {}", blkc::base::display::one_line(&value));
        }
    }
    Exit::RunFailure
}

/// What the request line of the output shows.
struct Sent {
    method: &'static str,
    url: String,
    size: Option<usize>,
    duration: Option<f64>,
}

pub fn test(args: &TestArgs) -> Exit {
    let Some(block) = &args.block else { return super::converse::conversations(args) };
    let opts = report::render_options(args.output.color);
    let format = match request_format(args.output.format) {
        Ok(f) => f,
        Err(exit) => return exit,
    };
    // Paths are not checked against the samples here: refreshing an outdated
    // sample is what a test request is for, and the shape report says what
    // changed.
    let load = LoadOptions { skip_samples: true, ..LoadOptions::default() };
    let (checked, plan) = match super::compile(&args.file, load, format, opts) {
        Ok(p) => p,
        Err(exit) => return exit,
    };
    let (tree, block, request) = match target(&checked, &plan, args, block) {
        Ok(found) => found,
        Err(e) => return report::usage(e),
    };
    let base_dir = args.file.parent().map(Path::to_path_buf).unwrap_or_default();
    let (inputs, options) = match inputs_and_options(args, checked.model.samples.clone()) {
        Ok(p) => p,
        Err(e) => return report::usage(e),
    };
    let mut sent = None;
    let mut warnings = Vec::new();
    let mut sink = |event: Event| match event {
        Event::Request(r) => sent = Some(Sent { method: r.method, url: r.url, size: r.size, duration: r.duration_ms }),
        Event::Warning(w) => warnings.push(w.diagnostic),
        // (A test request's tree does not run: it says nothing more.)
        _ => {}
    };
    if format == Format::Text {
        note_real(request.method, &block.name.name);
    }
    let test_report = match eval::test_request(&plan, request, &inputs, &options, &mut sink) {
        Ok(r) => r,
        Err(failed) => return test_failed(&checked, failed, opts),
    };
    warnings.splice(0..0, domain::left_as_text(&test_report, block));
    let shape = match &test_report.body {
        Body::Json(new) => domain::compare_with_sample(tree, block, &checked.model.samples, new),
        Body::Text(_) => ShapeReport::default(),
    };
    // A sample records a success: an error answer is not saved unless the
    // author asks for it, and the test request counts as failed either way.
    let succeeded = (200..300).contains(&test_report.status);
    let (saved, refused) = match save(args, &test_report, (&checked.ast, tree, block), &base_dir, succeeded) {
        Ok(s) => s,
        Err(exit) => return exit,
    };
    let sent = sent.unwrap_or(Sent { method: "?", url: String::new(), size: None, duration: None });
    let shown = Shown {
        block: &block.name.name,
        sent: &sent,
        report: &test_report,
        warnings: &warnings,
        shape: &shape,
        saved: saved.as_ref(),
    };
    match format {
        Format::Json => shown.print_json(),
        Format::Text => shown.print_text(&checked.source, opts),
    }
    if let Some(why) = refused {
        return report::error(why, Exit::RunFailure);
    }
    if !succeeded {
        // Shown in full above; the exit code says the request failed.
        return Exit::RunFailure;
    }
    if shape.diagnostics.iter().any(|d| d.severity == Severity::Error) {
        Exit::Diagnostics
    } else {
        Exit::Success
    }
}

/// A test request is sent for real: one that changes data says so first.
fn note_real(method: blkc::language::vocab::Method, block: &str) {
    if method != blkc::language::vocab::Method::GET {
        eprintln!(
            "note: sending {} for block `{block}`: a test request is a real request, and the server may change or \
             delete data (as it would in a run)",
            method.as_str()
        );
    }
}

/// The response saved as the block's sample when `--save` asks, or why
/// not: a sample records a success, so an error answer is not saved unless
/// `--save-error-status` says so.
fn save(
    args: &TestArgs,
    test_report: &eval::TestReport,
    (file, tree, block): (&blkc::language::ast::File, &Tree, &blkc::language::ast::ApiBlock),
    base_dir: &Path,
    succeeded: bool,
) -> Result<(Option<domain::Saved>, Option<String>), Exit> {
    match &args.save {
        Some(_) if !succeeded && !args.save_error_status => Ok((
            None,
            Some(format!(
                "the server answered {}, so the response was not saved as the sample of `{}` (a sample records a \
                 successful answer; add `--save-error-status` to save it anyway)",
                test_report.status, block.name.name
            )),
        )),
        Some(target) => {
            match domain::save((&test_report.body, &test_report.headers), target, file, tree, block, base_dir) {
                Ok(s) => Ok((Some(s), None)),
                Err(e) => Err(report::error(e, Exit::RunFailure)),
            }
        }
        None => Ok((None, None)),
    }
}

/// How a test request's result is printed: text or JSON (TAP and JUnit
/// report conversation tests).
fn request_format(format: TestFormat) -> Result<Format, Exit> {
    match format {
        TestFormat::Text => Ok(Format::Text),
        TestFormat::Json => Ok(Format::Json),
        other => {
            let named = if other == TestFormat::Tap { "tap" } else { "junit" };
            Err(report::usage(format!("`--format {named}` reports conversation tests: give no BLOCK")))
        }
    }
}

/// The block to send, its tree, and its request in the plan.
fn target<'c>(
    checked: &'c Checked,
    plan: &'c Plan,
    args: &TestArgs,
    block: &str,
) -> Result<(&'c Tree, &'c ApiBlock, &'c Request), String> {
    let wanted_tree = match (&args.command, &args.event) {
        (Some(c), _) => Some((TreeKind::Command, c.as_str())),
        (None, Some(e)) => Some((TreeKind::Event, e.as_str())),
        _ => None,
    };
    let (tree, block) = domain::find(&checked.ast, &checked.source.name, block, wanted_tree)?;
    let request = plan
        .trees
        .iter()
        .find(|t| t.kind == tree.kind.into() && t.name == tree.name.name)
        .and_then(|t| blkc::language::plan::find_request(&t.steps, &block.name.name))
        .ok_or_else(|| format!("block `{}` was not found in the plan", block.name.name))?;
    Ok((tree, block, request))
}

/// Secrets and the bot token (never trigger variables: a test request fills
/// only `{bot_token}`), and the options of a test request.
fn inputs_and_options(
    args: &TestArgs,
    samples: std::sync::Arc<blkc::language::model::Samples>,
) -> Result<(Inputs, Options), String> {
    let inputs = secret_inputs(&args.net)?;
    super::report::warn_unversioned(args.net.platform.as_ref());
    let options = Options {
        http: http_limits(&args.net)?,
        samples,
        platform: args.net.platform.clone(),
        test_request: true,
        allow_private_network: args.net.allow_private_network,
        memory: super::inputs::memory(&args.net),
        ..Options::default()
    };
    Ok((inputs, options))
}

/// Everything a test request shows.
struct Shown<'a> {
    block: &'a str,
    sent: &'a Sent,
    report: &'a TestReport,
    warnings: &'a [Diagnostic],
    shape: &'a ShapeReport,
    saved: Option<&'a Saved>,
}

impl Shown<'_> {
    /// Every path of the response, or the status and the text of a body
    /// that is not JSON.
    fn rows(&self) -> (Vec<Row>, bool) {
        match &self.report.body {
            Body::Json(j) => explore::paths(self.block, self.report.status, j),
            Body::Text(t) => (
                vec![
                    Row {
                        variable: blkc::base::path::variable(self.block, "status"),
                        shown: self.report.status.to_string(),
                        value: Some(self.report.status.into()),
                        note: None,
                    },
                    Row {
                        variable: blkc::base::path::variable(self.block, "response"),
                        shown: blkc::run::eval::explore::one_line(&t.chars().take(72).collect::<String>()),
                        value: Some(serde_json::Value::String(t.clone())),
                        note: Some("the body is not JSON: it has no paths".into()),
                    },
                ],
                false,
            ),
        }
    }

    fn print_json(&self) {
        let (rows, truncated) = self.rows();
        let report = self.report;
        let doc = serde_json::json!({
            "block": self.block,
            "method": self.sent.method,
            "url": self.sent.url,
            "status": report.status,
            "size": self.sent.size,
            "duration_ms": self.sent.duration,
            "headers": report.headers,
            "body": match &report.body { Body::Json(j) => j.to_json(), Body::Text(t) => serde_json::Value::String(t.clone()) },
            "paths": rows,
            "paths_shortened": truncated,
            "left_as_text": report.left_as_text,
            "changes": self.shape.changes.iter().map(|(c, spans)| serde_json::json!({
                "path": c.path_text(), "change": c.kind, "breaks_references": !spans.is_empty(),
            })).collect::<Vec<_>>(),
            "warnings": self.warnings.iter().chain(&self.shape.diagnostics).map(|d| serde_json::json!({
                "code": d.code.as_str(), "severity": d.severity, "message": d.message, "help": d.help,
            })).collect::<Vec<_>>(),
            "saved": self.saved.map(|s| s.path.display().to_string()),
        });
        println!("{}", report::json(&doc, true));
    }

    fn print_text(&self, source: &blkc::base::source::SourceFile, opts: RenderOptions) {
        eprint!("{}", render_reports(source, self.warnings, opts));
        let (rows, truncated) = self.rows();
        let mut out = std::io::stdout().lock();
        print_response(&mut out, self.sent, self.report, &rows, truncated);
        if let Some(s) = self.saved {
            let _ = writeln!(out, "\nsaved the response to {}", s.path.display());
            if let Some(line) = &s.add_line {
                let _ =
                    writeln!(out, "add this line to block `{}` so that `blkc check` uses it:\n    {line}", self.block);
            }
        }
        drop(out);
        eprint!("{}", render_reports(source, &self.shape.diagnostics, opts));
    }
}

fn print_response(out: &mut dyn Write, sent: &Sent, report: &TestReport, rows: &[Row], truncated: bool) {
    let _ = writeln!(out, "{} {}", sent.method, sent.url);
    let _ = writeln!(
        out,
        "{} · {} bytes{}",
        report.status,
        sent.size.unwrap_or(0),
        sent.duration.map_or(String::new(), |d| format!(" · {d} ms"))
    );
    // A server's headers and body, shown so that none can send the
    // terminal a control sequence (JSON escapes its own).
    for (k, v) in &report.headers {
        let _ = writeln!(out, "{}: {}", blkc::base::display::one_line(k), blkc::base::display::one_line(v));
    }
    let _ = writeln!(out);
    match &report.body {
        Body::Json(j) => {
            let _ = writeln!(out, "{}", serde_json::to_string_pretty(j).unwrap_or_default());
        }
        Body::Text(t) => {
            let _ = writeln!(out, "{}", blkc::base::display::lines(t));
        }
    }
    let _ = writeln!(out);
    let width = rows.iter().map(|r| r.variable.chars().count()).max().unwrap_or(0).min(60);
    for row in rows {
        let note = row.note.as_ref().map_or(String::new(), |n| format!("   ({n})"));
        let _ = writeln!(out, "{:width$}  {}{note}", row.variable, row.shown);
    }
    if truncated {
        let _ = writeln!(out, "… the listing stops at {} rows", explore::MAX_ROWS);
    }
}
