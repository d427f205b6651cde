//! Conversation tests (docs/test.md): a bot's expected conversations,
//! written in a `.blkt` file beside its `.blk` file, taken step by step
//! through the one pipeline `blkc serve` runs, against `blkc play`'s
//! stand-in of the platform, offline.
//!
//! - [`syntax`] reads a test file; [`check`] holds what it names against
//!   the bot (B501, B502) before anything runs;
//! - [`stage`] serves the bot for tests; [`conversation`] takes a test's
//!   steps (B503 when one cannot be taken) and [`expect`] holds its
//!   expectations (B504).

pub mod check;
pub mod conversation;
pub mod coverage;
pub mod expect;
pub mod stage;
pub mod syntax;
pub mod write;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::base::diagnostics::{Code, Diagnostic, Edit};
use crate::base::source::SourceFile;
use crate::run::eval::Inputs;

pub use stage::{NoStage, Stage};
pub use syntax::{Test, TestFile};

/// The extension of a test file.
pub const EXTENSION: &str = "blkt";

/// A test file read and checked against its bot.
pub struct Suite {
    /// The test file's text, for its diagnostics.
    pub source: SourceFile,
    pub file: TestFile,
    /// The bot's `.blk` file.
    pub bot: PathBuf,
    /// Problems of values in its steps (B004, B502): the tests do not run.
    pub problems: Vec<Diagnostic>,
}

/// How one test went.
#[derive(Debug)]
pub struct Outcome {
    pub name: String,
    /// The first difference, or the step that could not be taken.
    pub failure: Option<Diagnostic>,
    /// The steps taken (expectations included).
    pub steps: usize,
    pub duration: Duration,
    /// With `--update`: the edits that write what the bot did into the
    /// test (an expected value it did not meet, the expectations of a step
    /// that had none).
    pub edits: Vec<Edit>,
    /// The trees its steps ran and the branches they took (`--coverage`).
    pub reached: std::collections::BTreeSet<(String, String)>,
    pub branches: std::collections::BTreeSet<(u32, usize)>,
}

impl Outcome {
    pub fn passed(&self) -> bool {
        self.failure.is_none()
    }
}

/// The bot a test file talks to: the one its `bot` line names (relative
/// to the test file), else the `.blk` file of the same name beside it.
pub fn bot_of(path: &Path, file: &TestFile) -> PathBuf {
    match &file.bot {
        Some((named, _)) => path.parent().unwrap_or(Path::new("")).join(named),
        None => path.with_extension("blk"),
    }
}

/// Reads the test file at `path` (its text given), or its diagnostics.
pub fn read(path: &Path, text: String) -> Result<Suite, (SourceFile, Vec<Diagnostic>)> {
    let source = SourceFile::new(path.display().to_string(), text);
    match syntax::parse(&source) {
        Ok((file, problems)) => {
            let bot = bot_of(path, &file);
            Ok(Suite { source, file, bot, problems })
        }
        Err(diags) => Err((source, diags)),
    }
}

/// B505: a test file whose bot cannot be read.
pub fn no_bot(suite: &Suite, why: &str) -> Diagnostic {
    let at = suite.file.bot.as_ref().map_or(crate::base::source::Span::new(0, 0), |(_, s)| *s);
    Diagnostic::new(Code::NoBotFile, format!("the bot `{}` {why}", suite.bot.display()))
        .label(at, "the tests' bot")
        .help("a test file talks to the `.blk` file of its name beside it, or to the one its first line names: `bot \"path/to/bot.blk\"`")
}

/// How tests are run.
pub struct Settings<'a> {
    /// How many stages at once (each its own server).
    pub jobs: usize,
    /// Gives each stage the bot's file.
    pub loaded: &'a (dyn Fn() -> Result<crate::host::serve::Loaded, String> + Sync),
    pub secrets: &'a Inputs,
    /// `--update`: the test file's text, whose expectations are written
    /// from what the bot did.
    pub update: Option<&'a str>,
}

/// Runs `tests` of the bot at `bot` on `settings.jobs` stages at once, and
/// gives their outcomes in their order.
pub fn run(bot: &Path, tests: &[&Test], settings: &Settings<'_>) -> Result<Vec<Outcome>, NoStage> {
    let (jobs, loaded, secrets) = (settings.jobs, settings.loaded, settings.secrets);
    let jobs = jobs.clamp(1, tests.len().max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = std::sync::Mutex::new(Vec::new());
    let failed = std::sync::Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| {
                let stage = loaded().map_err(NoStage).and_then(|l| Stage::start(bot, l, secrets.clone()));
                let mut stage = match stage {
                    Ok(s) => s,
                    Err(e) => {
                        *failed.lock().unwrap_or_else(|e| e.into_inner()) = Some(e);
                        return;
                    }
                };
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let Some(test) = tests.get(i) else { break };
                    let outcome = run_one(&mut stage, test, settings.update);
                    results.lock().unwrap_or_else(|e| e.into_inner()).push((i, outcome));
                }
            });
        }
    });
    if let Some(e) = failed.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(e);
    }
    let mut results = results.into_inner().unwrap_or_else(|e| e.into_inner());
    results.sort_by_key(|(i, _)| *i);
    Ok(results.into_iter().map(|(_, o)| o).collect())
}

/// Takes one test's steps, in order, until the first that fails. With
/// `update` (the test file's text), an expectation whose value the bot
/// did not meet is rewritten and the test goes on, and a step with no
/// expectation gets those that hold of what the bot did.
pub fn run_one(stage: &mut Stage, test: &Test, update: Option<&str>) -> Outcome {
    let started = Instant::now();
    let mut conversation = conversation::Conversation::new(stage);
    let (mut steps, mut failure, mut edits) = (0, None, Vec::new());
    for step in &test.steps {
        let taken = match &step.kind {
            syntax::StepKind::Expect(e) => expect::hold(e, step.span, conversation.did.as_mut()),
            _ => after_step(&mut conversation, update, &mut edits).and_then(|()| conversation.take(step)),
        };
        match taken.map_err(|diag| (update.and_then(|_| rewrite(&diag)), diag)) {
            Ok(()) => {}
            Err((Some(edit), _)) => edits.push(edit),
            Err((None, diag)) => {
                failure = Some(*diag);
                break;
            }
        }
        steps += 1;
    }
    if failure.is_none() {
        failure = after_step(&mut conversation, update, &mut edits).err().map(|d| *d);
    }
    let (reached, branches) = (std::mem::take(&mut conversation.reached), std::mem::take(&mut conversation.branches));
    Outcome { name: test.name.clone(), failure, steps, duration: started.elapsed(), edits, reached, branches }
}

/// What follows a step before the next: without `update`, B504 if its run
/// failed and nothing looked; with it, the expectations of what it did
/// when none follow it.
fn after_step(
    conversation: &mut conversation::Conversation<'_>,
    update: Option<&str>,
    edits: &mut Vec<Edit>,
) -> Result<(), Box<Diagnostic>> {
    let Some(text) = update else { return unexamined(conversation) };
    let Some(did) = conversation.did.as_mut().filter(|d| !d.examined) else { return Ok(()) };
    did.examined = true;
    let end = text[did.step.end as usize..].find('\n').map_or(text.len(), |n| did.step.end as usize + n + 1);
    let line_start = text[..did.step.start as usize].rfind('\n').map_or(0, |n| n + 1);
    let indent: String = text[line_start..].chars().take_while(|c| *c == ' ' || *c == '\t').collect();
    let mut written = write::expectations(did, &indent);
    if end == text.len() && !text.ends_with('\n') {
        written.insert(0, '\n');
    }
    edits.push(Edit { span: crate::base::source::Span::new(end, end), replacement: written });
    Ok(())
}

/// The edit a B504 carries that writes what the bot did, if any.
fn rewrite(diag: &Diagnostic) -> Option<Edit> {
    let edit = diag.suggestions.first()?.edits.first()?.clone();
    match edit.span.is_empty() {
        true => Some(Edit { replacement: format!(" {}", edit.replacement), ..edit }),
        false => Some(edit),
    }
}

/// B504 for a step whose run failed when no expectation looked at what
/// it did: a failure path is tested by expecting what the member is told.
fn unexamined(conversation: &conversation::Conversation<'_>) -> Result<(), Box<Diagnostic>> {
    match &conversation.did {
        Some(did) if !did.examined && did.outcome == "failed" => Err(Box::new(
            Diagnostic::new(Code::ExpectationFailed, "the bot's run failed, and no expectation follows the step")
                .label(did.step, "this step's run failed")
                .note(format!("the run's error: {}", did.error.as_deref().unwrap_or("(none given)")))
                .help("when the failure is what the test is about, say what the member is told: `expect reply contains \"…\"`"),
        )),
        _ => Ok(()),
    }
}
