//! `blkc check FILE…`: every finding of every file, in text or JSON.

use std::io::Write;
use std::path::PathBuf;

use blkc::diagnostics::{render_json, render_terminal, Severity};
use blkc::LoadOptions;

use super::args::{Format, Output};
use super::report::{self, Exit};

pub fn check(files: &[PathBuf], output: &Output, deny_warnings: bool, jobs: Option<usize>) -> Exit {
    let opts = report::render_options(output.color);
    let mut options = LoadOptions::default();
    if let Some(jobs) = jobs {
        options.limits.threads = jobs.max(1);
    }
    let mut failed = false;
    let mut io_error = false;
    let mut json = Vec::new();
    let (mut errors, mut warnings) = (0, 0);
    for path in files {
        let checked = match blkc::load(path, options) {
            Ok(c) => c,
            Err(e) => {
                report::usage(e);
                io_error = true;
                continue;
            }
        };
        // The AST is not freed: the process ends soon after, and the OS takes
        // the memory back faster than walking the tree to free it.
        let checked = std::mem::ManuallyDrop::new(checked);
        errors += checked.diagnostics.iter().filter(|d| d.severity == Severity::Error).count();
        warnings += checked.diagnostics.iter().filter(|d| d.severity == Severity::Warning).count();
        failed |= checked.has_errors() || (deny_warnings && warnings > 0);
        match output.format {
            Format::Text => eprint!("{}", render_terminal(&checked.source, &checked.diagnostics, opts)),
            Format::Json => {
                if let serde_json::Value::Object(mut o) = render_json(&checked.source, &checked.diagnostics) {
                    if let Some(serde_json::Value::Array(items)) = o.remove("diagnostics") {
                        json.extend(items);
                    }
                }
            }
        }
    }
    if output.format == Format::Json {
        let doc = serde_json::json!({ "errors": errors, "warnings": warnings, "diagnostics": json });
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(report::json(&doc, true).as_bytes());
        let _ = writeln!(stdout);
    }
    match (io_error, failed) {
        (true, _) => Exit::Usage,
        (false, true) => Exit::Diagnostics,
        (false, false) => Exit::Success,
    }
}
