//! `blkc check FILE…`: every finding of every file, in the format asked for
//! (text, json, short, github, sarif), with `--fix` making the certain fixes.

use std::io::Write;
use std::path::Path;

use blkc::base::diagnostics::render::{render_json, render_terminal};
use blkc::base::diagnostics::{formats, Severity};
use blkc::language::load::LoadOptions;
use blkc::language::model::Checked;

use super::args::{CheckArgs, CheckFormat};
use super::report::{self, Exit};

/// What the bot needs in each server for the file's actions, once the
/// file checks (the platform's words; `blkc invite` has the link).
fn permissions_line(checked: &Checked) {
    if checked.has_errors() {
        return;
    }
    let needed = blkc::language::registration::permissions(&checked.ast);
    if needed.is_empty() {
        return;
    }
    let all = needed.iter().fold(0u64, |all, (bit, _)| all | bit.bits());
    let titles: Vec<String> = needed.iter().flat_map(|(bit, _)| blkc::discord::actions::titles(*bit)).collect();
    eprintln!(
        "{}: the bot needs {} in each server (permissions {all}; `blkc invite` prints the link that adds it)",
        checked.source.name,
        titles.join(", ")
    );
}

pub fn check(args: &CheckArgs) -> Exit {
    let opts = report::render_options(args.color);
    let stdin = args.files.iter().filter(|p| p.as_os_str() == "-").count();
    if stdin > 1 {
        return report::usage("`-` (standard input) can be given once");
    }
    if args.fix && stdin == 1 && args.format != CheckFormat::Text {
        return report::usage("`--fix` on standard input prints the fixed text there; leave out `--format`");
    }
    let mut options = LoadOptions::default();
    if let Some(jobs) = args.jobs {
        options.limits.threads = jobs.max(1);
    }
    let (mut failed, mut unreadable) = (false, false);
    let mut checked_files: Vec<Checked> = Vec::new();
    let mut stdout = std::io::stdout().lock();
    for path in &args.files {
        let mut checked = match read(path, args.stdin_filename.as_deref(), options) {
            Ok(c) => c,
            Err(e) => {
                unreadable = true;
                e.into_checked()
            }
        };
        if args.fix {
            match fix(path, checked, args.stdin_filename.as_deref(), options, &mut stdout) {
                Ok(c) => checked = c,
                Err(exit) => return exit,
            }
        }
        let warnings = checked.diagnostics.iter().any(|d| d.severity == Severity::Warning);
        failed |= checked.has_errors() || (args.deny_warnings && warnings);
        match args.format {
            CheckFormat::Text => {
                eprint!("{}", render_terminal(&checked.source, &checked.diagnostics, opts));
                permissions_line(&checked);
            }
            CheckFormat::Short => {
                let _ = stdout.write_all(formats::short(&checked.source, &checked.diagnostics).as_bytes());
            }
            CheckFormat::Github => {
                let _ = stdout.write_all(formats::github(&checked.source, &checked.diagnostics).as_bytes());
            }
            CheckFormat::Json | CheckFormat::Sarif => {}
        }
        if matches!(args.format, CheckFormat::Json | CheckFormat::Sarif) {
            // Kept for the one document printed at the end; the AST is not
            // needed for it.
            checked.ast = Default::default();
            checked_files.push(checked);
        } else {
            // The AST is not freed: the process ends soon after, and the OS
            // takes the memory back faster than walking the tree to free it.
            std::mem::forget(checked);
        }
    }
    match args.format {
        CheckFormat::Json => {
            let _ = writeln!(stdout, "{}", report::json(&json_document(&checked_files), true));
        }
        CheckFormat::Sarif => {
            let files: Vec<_> = checked_files.iter().map(|c| (&c.source, c.diagnostics.as_slice())).collect();
            let _ = writeln!(stdout, "{}", report::json(&formats::sarif(&files), true));
        }
        _ => {}
    }
    match (unreadable, failed) {
        (true, _) => Exit::Usage,
        (false, true) => Exit::Diagnostics,
        (false, false) => Exit::Success,
    }
}

/// Reads a file, or standard input for `-`.
fn read(
    path: &Path,
    stdin_name: Option<&Path>,
    options: LoadOptions,
) -> Result<Checked, blkc::language::load::LoadError> {
    if path.as_os_str() != "-" {
        return blkc::language::load::load(path, options);
    }
    let name = stdin_name.map_or("<stdin>".to_string(), |n| n.display().to_string());
    let folder = stdin_name.map(|n| n.parent().unwrap_or(Path::new("")));
    blkc::language::load::load_reader(std::io::stdin().lock(), &name, folder, options)
}

/// Makes the certain fixes of a file (over and over, as one fix can reveal
/// the next mistake, at most a few rounds) and writes it back; for standard
/// input, prints the fixed text. Returns the file as checked at the end.
fn fix(
    path: &Path,
    checked: Checked,
    stdin_name: Option<&Path>,
    options: LoadOptions,
    stdout: &mut dyn Write,
) -> Result<Checked, Exit> {
    if !checked.source.parts.is_empty() {
        return fix_parts(path, checked, stdin_name, options, stdout);
    }
    let original = checked.source.text.clone();
    let name = checked.source.name.clone();
    let folder = if path.as_os_str() == "-" { stdin_name.and_then(Path::parent) } else { path.parent() };
    let (checked, total) = blkc::language::load::fix_certain(checked, |fixed| {
        // Reading from memory cannot fail.
        blkc::language::load::load_reader(fixed.as_bytes(), &name, folder, options)
            .unwrap_or_else(blkc::language::load::LoadError::into_checked)
    });
    if path.as_os_str() == "-" {
        let _ = stdout.write_all(checked.source.text.as_bytes());
    } else if checked.source.text != original {
        super::write_atomically(path, &checked.source.text)
            .map_err(|e| report::usage(format!("cannot write `{}`: {e}", path.display())))?;
    }
    if total > 0 {
        let s = if total == 1 { "" } else { "s" };
        eprintln!("{}: fixed {total} problem{s}", checked.source.name);
    }
    Ok(checked)
}

/// [`fix`] for a bot in several files: each file's certain fixes are made in
/// that file (never in the bot's text as one), and the bot read again, a
/// few rounds. From standard input, the root's text is printed and the
/// files it includes are fixed in place.
fn fix_parts(
    path: &Path,
    mut checked: Checked,
    stdin_name: Option<&Path>,
    options: LoadOptions,
    stdout: &mut dyn Write,
) -> Result<Checked, Exit> {
    let root = checked.source.name.clone();
    let mut root_text = checked.source.parts.first().map(|p| checked.source.text[p.start..p.end].to_string());
    let mut total = 0;
    for _ in 0..8 {
        let mut applied = 0;
        for (part, local) in blkc::base::diagnostics::by_file(&checked.source, &checked.diagnostics) {
            let (fixed, n) = blkc::base::diagnostics::apply_certain(&part.text, &local);
            if n == 0 {
                continue;
            }
            applied += n;
            if path.as_os_str() == "-" && part.name == root {
                root_text = Some(fixed);
            } else {
                super::write_atomically(Path::new(&part.name), &fixed)
                    .map_err(|e| report::usage(format!("cannot write `{}`: {e}", part.name)))?;
            }
        }
        if applied == 0 {
            break;
        }
        total += applied;
        checked = match (path.as_os_str() == "-", &root_text) {
            (true, Some(text)) => {
                let folder = stdin_name.map(|n| n.parent().unwrap_or(Path::new("")));
                blkc::language::load::load_reader(text.as_bytes(), &root, folder, options)
                    .unwrap_or_else(blkc::language::load::LoadError::into_checked)
            }
            _ => {
                blkc::language::load::load(path, options).unwrap_or_else(blkc::language::load::LoadError::into_checked)
            }
        };
    }
    if path.as_os_str() == "-" {
        let _ = stdout.write_all(root_text.unwrap_or_default().as_bytes());
    }
    if total > 0 {
        let s = if total == 1 { "" } else { "s" };
        eprintln!("{root}: fixed {total} problem{s}");
    }
    Ok(checked)
}

/// `blkc check --format json`: every file's diagnostics in one document,
/// with the totals.
fn json_document(files: &[Checked]) -> serde_json::Value {
    let mut diagnostics = Vec::new();
    let (mut errors, mut warnings, mut hints) = (0, 0, 0);
    for c in files {
        if let serde_json::Value::Object(mut o) = render_json(&c.source, &c.diagnostics) {
            errors += o["errors"].as_u64().unwrap_or(0);
            warnings += o["warnings"].as_u64().unwrap_or(0);
            hints += o["hints"].as_u64().unwrap_or(0);
            if let Some(serde_json::Value::Array(items)) = o.remove("diagnostics") {
                diagnostics.extend(items);
            }
        }
    }
    serde_json::json!({ "errors": errors, "warnings": warnings, "hints": hints, "diagnostics": diagnostics })
}
