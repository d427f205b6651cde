//! `blkc test FILE|FOLDER` with no block: a bot's conversation tests
//! (docs/test.md). The tests are read and checked against their bot, run
//! by the library ([`blkc::host::converse`]), and reported here: a line a
//! test and the first difference rustc-style, or JSON, TAP or JUnit XML.
//! Exit codes are Hurl's: 0 every test passed, 2 a file has errors, 3 the
//! tests could not run, 4 a test failed.

use std::path::{Path, PathBuf};

use blkc::base::diagnostics::render::{diagnostic_json, render_reports, RenderOptions};
use blkc::base::diagnostics::{Diagnostic, Severity};
use blkc::base::source::SourceFile;
use blkc::host::converse::coverage::Coverage;
use blkc::host::converse::{self, Outcome, Suite};
use blkc::language::model::Checked;
use blkc::language::plan::Plan;
use serde_json::json;

use super::args::{TestArgs, TestFormat};
use super::report::{self, Exit};

/// A test file's results.
struct Ran {
    suite: Suite,
    outcomes: Vec<Outcome>,
    /// With `--coverage`: what the tests reached of the bot, whose text
    /// places its branches.
    coverage: Option<(SourceFile, Coverage)>,
}

pub fn conversations(args: &TestArgs) -> Exit {
    let opts = report::render_options(args.output.color);
    let files = match test_files(&args.file) {
        Ok(f) => f,
        Err(why) => return report::usage(why),
    };
    let secrets = match given_secrets(args) {
        Ok(s) => s,
        Err(why) => return report::usage(why),
    };
    let jobs = args.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()));
    let (mut ran, mut broken) = (Vec::new(), 0);
    for path in &files {
        let Some((suite, checked, plan)) = prepared(path, opts) else {
            broken += 1;
            continue;
        };
        let tests: Vec<&converse::Test> =
            suite.file.tests.iter().filter(|t| args.filter.as_deref().is_none_or(|f| t.name.contains(f))).collect();
        let bot = suite.bot.clone();
        let load = || blkc::host::serve::load(&bot).map_err(String::from);
        let mut secrets = secrets.clone();
        secrets.secrets.extend(suite.file.secrets.iter().map(|(name, value)| (name.text.clone(), value.clone())));
        let text = args.update.then(|| suite.source.text.clone());
        let settings = converse::Settings { jobs, loaded: &load, secrets: &secrets, update: text.as_deref() };
        let outcomes = match converse::run(&bot, &tests, &settings) {
            Ok(o) => o,
            Err(e) => {
                return report::error(format!("{}: the tests could not run: {e}", path.display()), Exit::RunFailure)
            }
        };
        if args.update {
            if let Err(why) = write_edits(&suite, &outcomes) {
                return report::error(why, Exit::Usage);
            }
        }
        let coverage = args.coverage.then(|| (checked.source, converse::coverage::coverage(&plan, &outcomes)));
        if args.output.format == TestFormat::Text {
            print_text(&suite, &outcomes, opts);
            if let Some((bot, coverage)) = &coverage {
                print_coverage(bot, coverage);
            }
        }
        ran.push(Ran { suite, outcomes, coverage });
    }
    let failed = ran.iter().flat_map(|r| &r.outcomes).filter(|o| !o.passed()).count();
    match args.output.format {
        TestFormat::Text => summary(&ran, failed, broken),
        TestFormat::Json => println!("{}", as_json(&ran)),
        TestFormat::Tap => print!("{}", as_tap(&ran)),
        TestFormat::Junit => print!("{}", as_junit(&ran)),
    }
    match (broken, failed) {
        (1.., _) => Exit::Usage,
        (0, 0) => Exit::Success,
        _ => Exit::TestsFailed,
    }
}

/// The secrets `--secrets FILE` gives the tests: no others (not the
/// environment's), so that a test passes or fails alike on every machine;
/// a test file's own `secret` lines are added to them.
fn given_secrets(args: &TestArgs) -> Result<blkc::run::eval::Inputs, String> {
    let mut inputs = blkc::run::eval::Inputs::default();
    if let Some(path) = &args.net.secrets {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        inputs.secrets = super::inputs::secret_pairs(&text, &format!("`{}`", path.display()))?;
    }
    Ok(inputs)
}

/// The test files `path` names: itself (a `.blkt` file), the one beside a
/// `.blk` file, or every one in a folder and the folders in it, sorted.
fn test_files(path: &Path) -> Result<Vec<PathBuf>, String> {
    if path.is_dir() {
        let mut found = Vec::new();
        walk(path, &mut found, 0).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        found.sort();
        if found.is_empty() {
            return Err(format!("{} holds no conversation tests (`.{}` files)", path.display(), converse::EXTENSION));
        }
        return Ok(found);
    }
    let tests = match path.extension().and_then(|e| e.to_str()) {
        Some("blk") => path.with_extension(converse::EXTENSION),
        _ => path.to_path_buf(),
    };
    match tests.is_file() {
        true => Ok(vec![tests]),
        false if tests != path => Err(format!(
            "{} has no conversation tests: write them in {} (docs/test.md), or give a BLOCK to send its test request",
            path.display(),
            tests.display()
        )),
        false => Err(format!("cannot read {}", path.display())),
    }
}

fn walk(folder: &Path, found: &mut Vec<PathBuf>, depth: usize) -> std::io::Result<()> {
    if depth > 16 {
        return Ok(());
    }
    for entry in std::fs::read_dir(folder)? {
        let path = entry?.path();
        if path.is_dir() {
            walk(&path, found, depth + 1)?;
        } else if path.extension().is_some_and(|e| e == converse::EXTENSION) {
            found.push(path);
        }
    }
    Ok(())
}

/// A test file read and checked against its bot, or `None` once its
/// problems (or its bot's) are printed.
fn prepared(path: &Path, opts: RenderOptions) -> Option<(Suite, Checked, Plan)> {
    let text = match read(path) {
        Ok(t) => t,
        Err(why) => {
            eprintln!("error: {why}");
            return None;
        }
    };
    let suite = match converse::read(path, text) {
        Ok(s) => s,
        Err((source, diags)) => {
            eprint!("{}", render_reports(&source, &diags, opts));
            return None;
        }
    };
    let checked = match blkc::language::load::load(&suite.bot, blkc::language::load::LoadOptions::default()) {
        Ok(c) if suite.bot.is_file() => c,
        Ok(_) => return problems(&suite.source, &[converse::no_bot(&suite, "is not a file")], opts),
        Err(e) => return problems(&suite.source, &[converse::no_bot(&suite, &format!("cannot be read: {e}"))], opts),
    };
    if checked.has_errors() {
        let errors: Vec<Diagnostic> =
            checked.diagnostics.iter().filter(|d| d.severity == Severity::Error).cloned().collect();
        eprint!("{}", render_reports(&checked.source, &errors, opts));
        return problems(&suite.source, &[converse::no_bot(&suite, "has errors")], opts);
    }
    let plan = match blkc::language::plan::lower(&checked) {
        Ok(p) => p,
        Err(d) => return problems(&checked.source, &[*d], opts),
    };
    let mut found = suite.problems.clone();
    found.extend(converse::check::check(&suite.file, &checked, &plan));
    if !found.is_empty() {
        found.sort_by_key(|d| d.primary_span().map(|s| s.start));
        return problems(&suite.source, &found, opts);
    }
    Some((suite, checked, plan))
}

fn problems<T>(source: &SourceFile, diags: &[Diagnostic], opts: RenderOptions) -> Option<T> {
    eprint!("{}", render_reports(source, diags, opts));
    None
}

/// A test file's text, within the size a `.blk` file may have.
fn read(path: &Path) -> Result<String, String> {
    let most = blkc::language::syntax::Limits::default().max_file_size;
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if meta.len() > most as u64 {
        return Err(format!("{} is larger than {most} bytes", path.display()));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    String::from_utf8(bytes).map_err(|_| format!("{} is not UTF-8", path.display()))
}

/// Writes the edits of `--update` into the test file (each test's, from
/// the end backwards, so each span still points where it was read).
fn write_edits(suite: &Suite, outcomes: &[Outcome]) -> Result<(), String> {
    let mut edits: Vec<&blkc::base::diagnostics::Edit> = outcomes.iter().flat_map(|o| &o.edits).collect();
    if edits.is_empty() {
        return Ok(());
    }
    edits.sort_by_key(|e| std::cmp::Reverse((e.span.start, e.span.end)));
    let mut text = suite.source.text.clone();
    for edit in edits {
        text.replace_range(edit.span.range(), &edit.replacement);
    }
    let path = Path::new(&suite.source.name);
    super::write_atomically(path, &text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn print_text(suite: &Suite, outcomes: &[Outcome], opts: RenderOptions) {
    for o in outcomes {
        let ms = o.duration.as_secs_f64() * 1000.0;
        match &o.failure {
            None if !o.edits.is_empty() => {
                println!("test {} › {} ... updated ({ms:.0} ms)", suite.source.name, o.name)
            }
            None => println!("test {} › {} ... ok ({ms:.0} ms)", suite.source.name, o.name),
            Some(diag) => {
                println!("test {} › {} ... FAILED", suite.source.name, o.name);
                print!("{}", render_reports(&suite.source, std::slice::from_ref(diag), opts));
            }
        }
    }
}

/// What the tests did not reach: a line of counts, then each tree no test
/// ran and each branch no test took, where it is in the bot's file.
fn print_coverage(bot: &SourceFile, coverage: &Coverage) {
    println!(
        "coverage of {}: {} of {} commands, handlers and events; {} of {} branches",
        bot.name,
        coverage.trees_reached(),
        coverage.trees.len(),
        coverage.arms_reached(),
        coverage.arms.len()
    );
    for (kind, name, _) in coverage.trees.iter().filter(|t| !t.2) {
        println!("  not reached: {kind} `{name}`");
    }
    let index = bot.line_index();
    for arm in coverage.arms.iter().filter(|a| !a.reached) {
        let (line, column) = index.line_col(arm.span.start as usize);
        println!("  not taken: {}:{line}:{column} {}", index.file(arm.span.start as usize), arm.describe());
    }
}

/// Coverage as data: the counts and what was missed.
fn coverage_json(bot: &SourceFile, coverage: &Coverage) -> serde_json::Value {
    let index = bot.line_index();
    let trees: Vec<_> =
        coverage.trees.iter().filter(|t| !t.2).map(|(kind, name, _)| json!({ "kind": kind, "name": name })).collect();
    let arms: Vec<_> = coverage
        .arms
        .iter()
        .filter(|a| !a.reached)
        .map(|a| {
            let (line, column) = index.line_col(a.span.start as usize);
            let file = index.file(a.span.start as usize);
            json!({ "file": file, "line": line, "column": column, "branch": a.arm, "branches": a.arms })
        })
        .collect();
    json!({
        "trees": { "reached": coverage.trees_reached(), "total": coverage.trees.len(), "missed": trees },
        "branches": { "reached": coverage.arms_reached(), "total": coverage.arms.len(), "missed": arms },
    })
}

/// The last line: how many passed and failed, and how many test files
/// did not run for their errors.
fn summary(ran: &[Ran], failed: usize, broken: usize) {
    let total: usize = ran.iter().map(|r| r.outcomes.len()).sum();
    let steps: usize = ran.iter().flat_map(|r| &r.outcomes).map(|o| o.steps).sum();
    let word = if failed == 0 && broken == 0 { "ok" } else { "FAILED" };
    let unrun = match broken {
        0 => String::new(),
        1 => "; 1 test file not run for its errors".to_string(),
        n => format!("; {n} test files not run for their errors"),
    };
    println!("\ntest result: {word}. {} passed; {failed} failed; {steps} steps{unrun}", total - failed);
}

fn as_json(ran: &[Ran]) -> serde_json::Value {
    let files: Vec<_> = ran
        .iter()
        .map(|r| {
            let index = r.suite.source.line_index();
            let tests: Vec<_> = r
                .outcomes
                .iter()
                .map(|o| {
                    json!({
                        "name": o.name, "passed": o.passed(), "steps": o.steps,
                        "ms": (o.duration.as_secs_f64() * 1e4).round() / 10.0,
                        "failure": o.failure.as_ref().map(|d| diagnostic_json(&r.suite.source, &index, d)),
                    })
                })
                .collect();
            let coverage = r.coverage.as_ref().map(|(bot, c)| coverage_json(bot, c));
            json!({ "file": r.suite.source.name, "bot": r.suite.bot.display().to_string(), "tests": tests, "coverage": coverage })
        })
        .collect();
    let all = ran.iter().flat_map(|r| &r.outcomes);
    let failed = all.clone().filter(|o| !o.passed()).count();
    json!({ "files": files, "passed": all.count() - failed, "failed": failed })
}

/// TAP version 14: a line a test, a failure's report as its YAML block.
fn as_tap(ran: &[Ran]) -> String {
    let total: usize = ran.iter().map(|r| r.outcomes.len()).sum();
    let mut out = format!("TAP version 14\n1..{total}\n");
    let mut n = 0;
    for r in ran {
        for o in &r.outcomes {
            n += 1;
            let name = format!("{} › {}", r.suite.source.name, o.name).replace('#', "\\#");
            match &o.failure {
                None => out.push_str(&format!("ok {n} - {name}\n")),
                Some(d) => {
                    out.push_str(&format!("not ok {n} - {name}\n  ---\n"));
                    out.push_str(&format!("  code: {}\n  message: {}\n", d.code.as_str(), json!(d.message)));
                    if let Some(note) = &d.note {
                        out.push_str(&format!("  got: {}\n", json!(note)));
                    }
                    let at = d.primary_span().map(|s| r.suite.source.line_index().line_col(s.start as usize));
                    if let Some((line, column)) = at {
                        out.push_str(&format!("  at: {{ line: {line}, column: {column} }}\n"));
                    }
                    out.push_str("  ...\n");
                }
            }
        }
    }
    out
}

/// JUnit XML as CI systems read it: a `testsuite` a test file, a
/// `testcase` a test, a `failure` with the report. It holds to both
/// schemas in use (Jenkins' junit-4.xsd and Apache Ant's, which asks for
/// each suite's id, package, timestamp and host).
fn as_junit(ran: &[Ran]) -> String {
    let secs = |o: &Outcome| format!("{:.3}", o.duration.as_secs_f64());
    let timestamp = chrono::Utc::now().format("%Y-%m-%dT%H:%M:%S").to_string();
    let host = xml(&hostname());
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n");
    for (id, r) in ran.iter().enumerate() {
        let file = xml(&r.suite.source.name);
        let fails = r.outcomes.iter().filter(|o| !o.passed()).count();
        let time: f64 = r.outcomes.iter().map(|o| o.duration.as_secs_f64()).sum();
        out.push_str(&format!(
            "  <testsuite name=\"{file}\" package=\"{file}\" id=\"{id}\" timestamp=\"{timestamp}\" hostname=\"{host}\" tests=\"{}\" failures=\"{fails}\" errors=\"0\" time=\"{time:.3}\">\n    <properties>\n      <property name=\"bot\" value=\"{}\"/>\n      <property name=\"blkc\" value=\"{}\"/>\n    </properties>\n",
            r.outcomes.len(),
            xml(&r.suite.bot.display().to_string()),
            env!("CARGO_PKG_VERSION"),
        ));
        for o in &r.outcomes {
            let head = format!("    <testcase name=\"{}\" classname=\"{file}\" time=\"{}\"", xml(&o.name), secs(o));
            match &o.failure {
                None => out.push_str(&format!("{head}/>\n")),
                Some(d) => {
                    let plain = RenderOptions { color: false, width: 100 };
                    let report = render_reports(&r.suite.source, std::slice::from_ref(d), plain);
                    out.push_str(&format!(
                        "{head}>\n      <failure message=\"{}\" type=\"{}\">{}</failure>\n    </testcase>\n",
                        xml(&d.message),
                        d.code.as_str(),
                        xml(&report)
                    ));
                }
            }
        }
        out.push_str("    <system-out/>\n    <system-err/>\n  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

/// This machine's name, as a JUnit suite says where it ran.
fn hostname() -> String {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    match name.trim() {
        "" => "localhost".to_string(),
        name => name.to_string(),
    }
}

/// Text as XML character data or an attribute's value: escaped, and the
/// characters XML 1.0 cannot hold left out.
fn xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {}
            c => out.push(c),
        }
    }
    out
}
