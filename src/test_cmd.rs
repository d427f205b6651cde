//! `blkc test FILE BLOCK`: the builder's test request, the response, every
//! path into it, the shape compared with the sample, and `--save`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use blkc::ast::{ApiBlock, Item, Tree, TreeKind};
use blkc::diagnostics::{render_reports, Code, Diagnostic, Severity};
use blkc::eval::explore::{self, Change};
use blkc::eval::{self, Body, Event, Options};
use blkc::plan::{self, Step};

use crate::cli::{Format, TestArgs};
use crate::run_cmd::{http_limits, secret_inputs};
use crate::{render_options, EXIT_DIAGNOSTICS, EXIT_RUN_FAILURE, EXIT_USAGE};

fn usage(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(EXIT_USAGE)
}

/// Finds the block, qualified by its tree when the name alone is ambiguous.
fn find<'a>(trees: &[&'a Tree], args: &TestArgs) -> Result<(&'a Tree, &'a ApiBlock), String> {
    let wanted_tree = match (&args.command, &args.event) {
        (Some(c), _) => Some((TreeKind::Command, c.as_str())),
        (None, Some(e)) => Some((TreeKind::Event, e.as_str())),
        _ => None,
    };
    let mut found = Vec::new();
    let mut names = Vec::new();
    for tree in trees {
        if wanted_tree.is_some_and(|(k, n)| tree.kind != k || tree.name.name != n) {
            continue;
        }
        blkc::ast::each_block(&tree.body, &mut |b| {
            names.push(b.name.name.to_string());
            if b.name.name == args.block {
                found.push((*tree, b));
            }
        });
    }
    match found.as_slice() {
        [one] => Ok(*one),
        [] => {
            let hint = match blkc::diagnostics::did_you_mean(&args.block, names.iter().map(String::as_str)) {
                Some(s) => format!("did you mean `{s}`?"),
                None => format!("the blocks are {}", names.join(", ")),
            };
            Err(format!("no api block `{}` in `{}`; {hint}", args.block, args.file.display()))
        }
        many => {
            let places: Vec<String> =
                many.iter().map(|(t, _)| format!("--{} {}", t.kind.as_str(), t.name.name)).collect();
            Err(format!("block `{}` is in several trees; say which with {}", args.block, places.join(" or ")))
        }
    }
}

pub fn test(args: &TestArgs) -> ExitCode {
    let opts = render_options(args.output.color);
    // Paths are not checked against the samples here: refreshing an outdated
    // sample is what a test request is for, and the shape report below says
    // what changed.
    let bytes = match std::fs::read(&args.file) {
        Ok(b) => b,
        Err(e) => return usage(format!("cannot read `{}`: {e}", args.file.display())),
    };
    let (source, bad_utf8) = blkc::source_from_bytes(&args.file.display().to_string(), bytes);
    let checked = match bad_utf8 {
        Some(diag) => blkc::Checked { source, ast: Default::default(), diagnostics: vec![diag] },
        None => blkc::check_source(source),
    };
    if checked.has_errors() {
        eprint!("{}", blkc::diagnostics::render_terminal(&checked.source, &checked.diagnostics, opts));
        return ExitCode::from(EXIT_DIAGNOSTICS);
    }
    let trees: Vec<&Tree> =
        checked.ast.items.iter().filter_map(|i| if let Item::Tree(t) = i { Some(t) } else { None }).collect();
    let (tree, block) = match find(&trees, args) {
        Ok(found) => found,
        Err(e) => return usage(e),
    };
    let plan = plan::lower(&checked.ast, &checked.source.name);
    let Some(request) = plan
        .trees
        .iter()
        .find(|t| t.kind == tree.kind && t.name == tree.name.name)
        .and_then(|t| find_request(&t.steps, &block.name.name))
    else {
        return usage("the block was not found in the plan");
    };
    let mut inputs = match secret_inputs(&args.net) {
        Ok(i) => i,
        Err(e) => return usage(e),
    };
    inputs.vars.clear();
    let base_dir = args.file.parent().map(Path::to_path_buf).unwrap_or_default();
    let options = Options {
        http: match http_limits(&args.net) {
            Ok(l) => l,
            Err(e) => return usage(e),
        },
        base_dir: base_dir.clone(),
        platform: args.net.platform.clone(),
        test_request: true,
        ..Options::default()
    };

    let source = &checked.source;
    let mut request_line = None;
    let mut warnings = Vec::new();
    let mut sink = |event: Event| match event {
        Event::Request(r) => request_line = Some((r.method, r.url, r.size, r.duration_ms)),
        Event::Warning(w) => warnings.push(w.diagnostic),
        Event::Reply { .. } | Event::Save { .. } => {}
    };
    let report = match eval::test_request(&plan, request, &inputs, &options, &mut sink) {
        Ok(r) => r,
        Err(diag) => {
            eprint!("{}", render_reports(source, &[*diag], opts));
            return ExitCode::from(EXIT_RUN_FAILURE);
        }
    };
    if !report.left_as_text.is_empty() {
        let list: Vec<String> = report.left_as_text.iter().map(|v| format!("`{{{v}}}`")).collect();
        warnings.insert(
            0,
            Diagnostic::new(Code::LeftAsText, format!("sent as text, not filled: {}", list.join(", ")))
                .label(block.name.span, "test request of this block")
                .help("a test request substitutes only `{bot_token}`, as the builder's does; the server may have answered differently than in a run"),
        );
    }

    // The shape compared with the sample.
    let sample_path = block.sample().map(|s| base_dir.join(s.value.as_str()));
    let mut changes: Vec<(Change, Vec<blkc::source::Span>)> = Vec::new();
    if let (Some(path), Body::Json(new)) = (&sample_path, &report.body) {
        if let Ok(old) = std::fs::read(path).map_err(|_| ()).and_then(|b| serde_json::from_slice(&b).map_err(|_| ())) {
            let mut refs = Vec::new();
            blkc::check::references::each_reference(&tree.body, &mut |r| {
                if r.block.name == block.name.name && r.root.name == "response" {
                    refs.push(r);
                }
            });
            for change in explore::shape_changes(&old, new) {
                let spans: Vec<_> = refs
                    .iter()
                    .filter(|r| change.affects(&r.segments.iter().map(|s| s.text.as_str()).collect::<Vec<_>>()))
                    .map(|r| r.span)
                    .collect();
                changes.push((change, spans));
            }
        }
    }
    let sample_field = block.sample();
    let shape_diags: Vec<Diagnostic> = changes
        .iter()
        .filter(|(c, _)| !matches!(c.kind, explore::ChangeKind::KeyAdded))
        .map(|(change, spans)| shape_diagnostic(change, spans, sample_field.map(|s| (s.value.as_str(), s.span)), block))
        .collect();

    // --save
    let mut saved = None;
    if let Some(target) = &args.save {
        match save(&report.body, target, block, &base_dir) {
            Ok(s) => saved = Some(s),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(EXIT_RUN_FAILURE);
            }
        }
    }

    let (rows, truncated) = match &report.body {
        Body::Json(j) => explore::paths(&block.name.name, report.status, j),
        Body::Text(t) => (
            vec![
                explore::Row {
                    variable: format!("{{api_{}[status]}}", block.name.name),
                    shown: report.status.to_string(),
                    value: Some(report.status.into()),
                    note: None,
                },
                explore::Row {
                    variable: format!("{{api_{}[response]}}", block.name.name),
                    shown: t.chars().take(72).collect(),
                    value: Some(serde_json::Value::String(t.clone())),
                    note: Some("the body is not JSON: it has no paths".into()),
                },
            ],
            false,
        ),
    };
    let (method, url, size, duration) = request_line.unwrap_or(("?", String::new(), None, None));
    let mut out = std::io::stdout().lock();
    match args.output.format {
        Format::Json => {
            let doc = serde_json::json!({
                "block": block.name.name.as_str(),
                "method": method,
                "url": url,
                "status": report.status,
                "size": size,
                "duration_ms": duration,
                "headers": report.headers,
                "body": match &report.body { Body::Json(j) => j.clone(), Body::Text(t) => serde_json::Value::String(t.clone()) },
                "paths": rows,
                "paths_shortened": truncated,
                "left_as_text": report.left_as_text,
                "changes": changes.iter().map(|(c, spans)| serde_json::json!({
                    "path": c.path_text(), "change": c.kind, "breaks_references": !spans.is_empty(),
                })).collect::<Vec<_>>(),
                "warnings": warnings.iter().chain(&shape_diags).map(|d| serde_json::json!({
                    "code": d.code.as_str(), "severity": d.severity, "message": d.message, "help": d.help,
                })).collect::<Vec<_>>(),
                "saved": saved.as_ref().map(|s: &Saved| s.path.display().to_string()),
            });
            let _ = writeln!(out, "{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        }
        Format::Text => {
            eprint!("{}", render_reports(source, &warnings, opts));
            print_text(&mut out, method, &url, &report, size, duration, &rows, truncated);
            if let Some(s) = &saved {
                let _ = writeln!(out, "\nsaved the response to {}", s.path.display());
                if let Some(line) = &s.add_line {
                    let _ = writeln!(
                        out,
                        "add this line to block `{}` so that `blkc check` uses it:\n    {line}",
                        block.name.name
                    );
                }
            }
        }
    }
    drop(out);
    if !shape_diags.is_empty() && args.output.format == Format::Text {
        eprint!("{}", render_reports(source, &shape_diags, opts));
    }
    if shape_diags.iter().any(|d| d.severity == Severity::Error) {
        ExitCode::from(EXIT_DIAGNOSTICS)
    } else {
        ExitCode::SUCCESS
    }
}

fn find_request<'p>(steps: &'p [Step], name: &str) -> Option<&'p plan::Request> {
    steps.iter().find_map(|s| match s {
        Step::Request(r) if r.block == name => Some(r.as_ref()),
        Step::If { then, otherwise, .. } => find_request(then, name).or_else(|| find_request(otherwise, name)),
        _ => None,
    })
}

fn shape_diagnostic(
    change: &Change,
    spans: &[blkc::source::Span],
    sample: Option<(&str, blkc::source::Span)>,
    block: &ApiBlock,
) -> Diagnostic {
    let (sample_name, sample_span) = sample.unwrap_or(("", block.name.span));
    let mut d = Diagnostic::new(Code::ShapeChanged, format!("{} since the sample `{sample_name}`", change.describe()));
    match spans.split_first() {
        Some((first, rest)) => {
            d = d.label(*first, "reads it");
            for s in rest {
                d = d.related(*s, "reads it too");
            }
            d = d.related(sample_span, "the sample").help(
                "the response no longer has the shape these paths expect; update them, then record the new shape with `--save`",
            );
        }
        None => {
            d = d
                .with_severity(Severity::Warning)
                .label(sample_span, "the sample")
                .help("no path in the file reads it; record the new shape with `--save`");
        }
    }
    d
}

struct Saved {
    path: PathBuf,
    /// The `sample` line to add when the block has none.
    add_line: Option<String>,
}

fn save(body: &Body, target: &str, block: &ApiBlock, base_dir: &Path) -> Result<Saved, String> {
    let Body::Json(json) = body else {
        return Err("the response is not JSON, and a sample must be: nothing was saved".into());
    };
    let (path, relative) = if !target.is_empty() {
        let path = PathBuf::from(target);
        let relative = path.strip_prefix(base_dir).map(Path::to_path_buf).unwrap_or_else(|_| path.clone());
        (path, relative.display().to_string())
    } else if let Some(s) = block.sample() {
        (base_dir.join(s.value.as_str()), s.value.to_string())
    } else {
        let relative = format!("samples/{}.json", block.name.name);
        (base_dir.join(&relative), relative)
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
    }
    let text = serde_json::to_string_pretty(json).map_err(|e| e.to_string())? + "\n";
    std::fs::write(&path, text).map_err(|e| format!("cannot write `{}`: {e}", path.display()))?;
    let add_line = match block.sample() {
        Some(s) if s.value == relative => None,
        _ => Some(format!("sample {relative:?}")),
    };
    Ok(Saved { path, add_line })
}

#[allow(clippy::too_many_arguments)]
fn print_text(
    out: &mut dyn Write,
    method: &str,
    url: &str,
    report: &eval::TestReport,
    size: Option<usize>,
    duration: Option<f64>,
    rows: &[explore::Row],
    truncated: bool,
) {
    let _ = writeln!(out, "{method} {url}");
    let _ = writeln!(
        out,
        "{} · {} bytes{}",
        report.status,
        size.unwrap_or(0),
        duration.map_or(String::new(), |d| format!(" · {d} ms"))
    );
    for (k, v) in &report.headers {
        let _ = writeln!(out, "{k}: {v}");
    }
    let _ = writeln!(out);
    match &report.body {
        Body::Json(j) => {
            let _ = writeln!(out, "{}", serde_json::to_string_pretty(j).unwrap_or_default());
        }
        Body::Text(t) => {
            let _ = writeln!(out, "{t}");
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
