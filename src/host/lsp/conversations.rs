//! The editor on a test file (`.blkt`, docs/test.md): its diagnostics (as
//! `blkc test` finds them before anything runs), completion of the steps'
//! words from its bot (commands, options, labels, handlers, events, timed
//! events, blocks, variables, form fields), its tests as symbols, and a
//! code lens over each test that runs it (`blkc.runTests`), whose
//! failures become the file's diagnostics until its next change.

use std::path::{Path, PathBuf};

use lsp_types::{
    CodeLens, Command, CompletionItem, CompletionItemKind, DocumentSymbol, Position, Range, SymbolKind, Uri,
};

use super::analysis::Lines;
use crate::base::diagnostics::{Code, Diagnostic};
use crate::base::source::{SourceFile, Span};
use crate::host::converse::{self, syntax::TestFile};
use crate::language::model::Checked;
use crate::language::plan::{Plan, Step, TreeKind};

/// The command a code lens runs: `[uri, test name]` (no name: every test).
pub const RUN_TESTS: &str = "blkc.runTests";

/// A test file as the server holds it.
pub struct TestDocument {
    pub source: SourceFile,
    pub path: Option<PathBuf>,
    pub version: i32,
    lines: Lines,
    pub file: Option<TestFile>,
    /// What `blkc test` finds before anything runs.
    pub diagnostics: Vec<Diagnostic>,
    /// The failures of the last run from the editor, until the next change.
    pub failures: Vec<Diagnostic>,
    /// Its bot, checked and lowered, when it reads without errors.
    bot: Option<(Checked, Plan)>,
    /// The bot's file.
    pub bot_path: Option<PathBuf>,
}

impl TestDocument {
    /// A test file of `text`; its bot read from `bot_text` when the editor
    /// has it open (unsaved changes included), else from its file.
    pub fn new(
        name: &str,
        path: Option<PathBuf>,
        text: String,
        version: i32,
        bot_text: &dyn Fn(&Path) -> Option<String>,
    ) -> TestDocument {
        let lines = Lines::of(&text);
        let mut doc = TestDocument {
            source: SourceFile::new(name, text),
            path,
            version,
            lines,
            file: None,
            diagnostics: Vec::new(),
            failures: Vec::new(),
            bot: None,
            bot_path: None,
        };
        let parsed = converse::syntax::parse(&doc.source);
        // (A file being typed often does not read: its bot is still known,
        // for completion, from its `bot` line as written.)
        let named = match &parsed {
            Ok((file, _)) => file.clone(),
            Err(_) => TestFile { bot: written_bot(doc.text()).map(|b| (b, Span::default())), ..TestFile::default() },
        };
        if let Some(path) = &doc.path {
            let bot = converse::bot_of(path, &named);
            doc.bot = doc.read_bot(&bot, bot_text);
            doc.bot_path = Some(bot);
        }
        match parsed {
            Ok((file, problems)) => {
                doc.diagnostics.extend(problems);
                if let Some((checked, plan)) = &doc.bot {
                    doc.diagnostics.extend(converse::check::check(&file, checked, plan));
                }
                doc.file = Some(file);
            }
            Err(diags) => doc.diagnostics = diags,
        }
        doc.diagnostics.sort_by_key(|d| d.primary_span().map(|s| s.start));
        doc
    }

    /// The bot, checked and lowered; or B505 said of the file.
    fn read_bot(&mut self, bot: &Path, bot_text: &dyn Fn(&Path) -> Option<String>) -> Option<(Checked, Plan)> {
        let at = Span::new(0, 0);
        let text = bot_text(bot).or_else(|| std::fs::read_to_string(bot).ok());
        let Some(text) = text else {
            let why = format!("the bot `{}` cannot be read", bot.display());
            self.diagnostics.push(no_bot(why, at));
            return None;
        };
        let folder = bot.parent().map(Path::to_path_buf).unwrap_or_default();
        let name = bot.display().to_string();
        let checked = crate::language::load::check_bot(
            SourceFile::new(name, text),
            Some(&folder),
            crate::language::syntax::Limits::default(),
            crate::language::model::Samples::in_folder(folder.clone()),
        );
        if checked.has_errors() {
            self.diagnostics.push(no_bot(format!("the bot `{}` has errors", bot.display()), at));
            return None;
        }
        let plan = crate::language::plan::lower(&checked).ok()?;
        Some((checked, plan))
    }

    pub fn text(&self) -> &str {
        &self.source.text
    }

    pub fn pos(&self, offset: usize) -> Position {
        self.lines.pos(self.text(), offset)
    }

    pub fn offset(&self, pos: Position) -> usize {
        self.lines.offset(self.text(), pos)
    }

    pub fn range(&self, span: Span) -> Range {
        Range { start: self.pos(span.start as usize), end: self.pos(span.end as usize) }
    }

    /// What the editor shows: the file's problems and its last run's failures.
    pub fn shown(&self) -> Vec<Diagnostic> {
        self.diagnostics.iter().chain(&self.failures).cloned().collect()
    }
}

/// The bot a test file's `bot "…"` line names, read from its text alone.
fn written_bot(text: &str) -> Option<String> {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty() && !l.starts_with('#'))?;
    let quoted = line.strip_prefix("bot")?.trim_start().strip_prefix('"')?;
    Some(quoted[..quoted.find('"')?].to_string())
}

fn no_bot(why: String, at: Span) -> Diagnostic {
    Diagnostic::new(Code::NoBotFile, why)
        .label(at, "the tests' bot")
        .help("a test file talks to the `.blk` file of its name beside it, or to the one its first line names: `bot \"path/to/bot.blk\"`")
}

/// A code lens over each test that runs it, and one over the first that
/// runs them all.
pub fn code_lenses(uri: &Uri, doc: &TestDocument) -> Vec<CodeLens> {
    let Some(file) = &doc.file else { return Vec::new() };
    let mut lenses = Vec::new();
    for (n, test) in file.tests.iter().enumerate() {
        let at = doc.range(test.named);
        let run = |title: &str, name: Option<&str>| CodeLens {
            range: at,
            command: Some(Command {
                title: title.to_string(),
                command: RUN_TESTS.to_string(),
                arguments: Some(vec![serde_json::json!(uri.as_str()), serde_json::json!(name)]),
            }),
            data: None,
        };
        lenses.push(run("▶ Run test", Some(&test.name)));
        if n == 0 && file.tests.len() > 1 {
            lenses.push(run("▶ Run all tests", None));
        }
    }
    lenses
}

/// The tests as the outline shows them.
#[allow(deprecated)]
pub fn symbols(doc: &TestDocument) -> Vec<DocumentSymbol> {
    let Some(file) = &doc.file else { return Vec::new() };
    file.tests
        .iter()
        .map(|t| DocumentSymbol {
            name: t.name.clone(),
            detail: Some(format!("{} steps", t.steps.len())),
            kind: SymbolKind::METHOD,
            tags: None,
            deprecated: None,
            range: doc.range(t.span),
            selection_range: doc.range(t.named),
            children: None,
        })
        .collect()
}

/// Completion at `offset`: the words a step may take there, from the bot.
pub fn completion(doc: &TestDocument, offset: usize) -> Vec<CompletionItem> {
    let text = doc.text();
    let offset = offset.min(text.len());
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let before = text[line_start..offset].trim_start();
    let Some((_, plan)) = &doc.bot else { return step_words(before) };
    let words = |items: Vec<String>, kind: CompletionItemKind| -> Vec<CompletionItem> {
        let mut items = items;
        items.sort();
        items.dedup();
        items.into_iter().map(|label| CompletionItem { label, kind: Some(kind), ..CompletionItem::default() }).collect()
    };
    let trees = |kind: TreeKind, timed: bool| -> Vec<String> {
        plan.trees
            .iter()
            .filter(|t| t.kind == kind && t.timer.is_some() == timed && t.menu.is_none())
            .map(|t| t.name.clone())
            .collect()
    };
    let (word, rest) = before.split_once(' ').unwrap_or((before, ""));
    match (word, rest) {
        ("command", rest) if rest.contains('{') => {
            let name = rest.split('{').next().unwrap_or_default().trim();
            let options = plan.trees.iter().find(|t| t.kind == TreeKind::Command && t.name == name);
            let options = options.map(|t| t.options.iter().map(|o| o.name.clone()).collect()).unwrap_or_default();
            words(options, CompletionItemKind::FIELD)
        }
        ("command", _) => words(trees(TreeKind::Command, false), CompletionItemKind::FUNCTION),
        ("type", _) => words(trees(TreeKind::Autocomplete, false), CompletionItemKind::FIELD),
        ("click", rest) if rest.starts_with("handler") => {
            words(trees(TreeKind::Handler, false), CompletionItemKind::FUNCTION)
        }
        ("click", _) => words(quoted(converse::check::Offered::of(plan).buttons), CompletionItemKind::VALUE),
        ("choose", _) => words(quoted(converse::check::Offered::of(plan).choices), CompletionItemKind::VALUE),
        ("submit", _) => words(converse::check::Offered::of(plan).fields, CompletionItemKind::FIELD),
        ("event", _) => words(trees(TreeKind::Event, false), CompletionItemKind::EVENT),
        ("tick", _) => words(trees(TreeKind::Event, true), CompletionItemKind::EVENT),
        ("respond", _) => words(blocks(plan), CompletionItemKind::VARIABLE),
        ("expect", rest) if rest.starts_with("request") => words(blocks(plan), CompletionItemKind::VARIABLE),
        ("expect", rest) if rest.starts_with("saved") => {
            words(plan.variables.iter().map(|v| v.name.clone()).collect(), CompletionItemKind::VARIABLE)
        }
        ("expect", _) => words(
            ["reply", "update", "form", "message in", "choices", "request", "saved", "nothing else"]
                .map(String::from)
                .to_vec(),
            CompletionItemKind::KEYWORD,
        ),
        _ => step_words(before),
    }
}

/// The words a step begins with, on an empty line.
fn step_words(before: &str) -> Vec<CompletionItem> {
    if before.contains(' ') {
        return Vec::new();
    }
    [
        "test", "secret", "bot", "as", "command", "type", "click", "choose", "submit", "event", "say", "tick", "wait",
        "respond", "expect",
    ]
    .iter()
    .map(|w| CompletionItem {
        label: w.to_string(),
        kind: Some(CompletionItemKind::KEYWORD),
        ..CompletionItem::default()
    })
    .collect()
}

/// Every step of every tree of `plan`, nested ones too.
fn each_step(plan: &Plan, f: &mut dyn FnMut(&Step)) {
    fn walk(steps: &[Step], f: &mut dyn FnMut(&Step)) {
        for step in steps {
            f(step);
            for nested in step.nested() {
                walk(nested, f);
            }
        }
    }
    for tree in &plan.trees {
        walk(&tree.steps, f);
    }
}

/// Labels as a step writes them, quoted.
fn quoted(labels: Vec<String>) -> Vec<String> {
    labels.into_iter().map(|l| format!("\"{l}\"")).collect()
}

fn blocks(plan: &Plan) -> Vec<String> {
    let mut out = Vec::new();
    each_step(plan, &mut |step| {
        if let Step::Request(r) = step {
            out.push(r.block.clone());
        }
    });
    out
}

/// Runs the tests of the document's saved file (`name`, or all) as `blkc
/// test` does, in a process of its own, and gives the failures as
/// diagnostics and a line that says how it went.
pub fn run(doc: &TestDocument, name: Option<&str>) -> Result<(Vec<Diagnostic>, String), String> {
    let path = doc.path.as_ref().ok_or("the test file is not saved in a folder")?;
    let exe = std::env::current_exe().map_err(|e| format!("cannot find blkc: {e}"))?;
    let mut command = std::process::Command::new(exe);
    command.arg("test").arg(path).args(["--format", "json"]);
    if let Some(name) = name {
        command.args(["--filter", name]);
    }
    let out = command.output().map_err(|e| format!("cannot run the tests: {e}"))?;
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)
        .map_err(|_| format!("the tests did not run: {}", String::from_utf8_lossy(&out.stderr).trim()))?;
    if report["files"].as_array().is_none_or(Vec::is_empty) {
        return Err("the tests did not run: the test file or its bot has errors (see the file's problems)".to_string());
    }
    let tests: Vec<&serde_json::Value> = report["files"][0]["tests"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| name.is_none_or(|n| t["name"] == n))
        .collect();
    let failures: Vec<Diagnostic> = tests.iter().filter_map(|t| failure(doc, t)).collect();
    let passed = tests.len() - tests.iter().filter(|t| t["passed"] == false).count();
    let said = format!("blkc: {passed} passed, {} failed", tests.len() - passed);
    Ok((failures, said))
}

/// A failed test's report (`blkc test --format json`) as a diagnostic of
/// the document.
fn failure(doc: &TestDocument, test: &serde_json::Value) -> Option<Diagnostic> {
    let f = &test["failure"];
    let code = Code::ALL.iter().find(|c| f["code"] == c.as_str()).copied()?;
    let start = f["span"]["start"]["offset"].as_u64()? as usize;
    let end = f["span"]["end"]["offset"].as_u64()? as usize;
    let span = Span::new(start.min(doc.text().len()), end.min(doc.text().len()));
    let mut diag = Diagnostic::new(code, format!("{}: {}", test["name"].as_str()?, f["message"].as_str()?));
    diag = diag.label(span, f["labels"][0]["message"].as_str().unwrap_or("here"));
    if let Some(help) = f["help"].as_str() {
        diag = diag.help(help);
    }
    if let Some(note) = f["note"].as_str() {
        diag = diag.note(note);
    }
    // The edit `--update` would make: a quick fix.
    for s in f["suggestions"].as_array().into_iter().flatten() {
        let edit = &s["edits"][0];
        let (Some(from), Some(to), Some(text)) = (
            edit["span"]["start"]["offset"].as_u64(),
            edit["span"]["end"]["offset"].as_u64(),
            edit["replacement"].as_str(),
        ) else {
            continue;
        };
        let message = s["message"].as_str().unwrap_or("write what the bot did");
        diag = diag.fix(message, Span::new(from as usize, to as usize), text);
    }
    Some(diag)
}
