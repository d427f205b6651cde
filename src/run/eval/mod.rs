//! Plan to run report: executes one command or event. The only module that
//! does network I/O (through [`http`]).
//!
//! Everything that leaves the runner (events, warnings, failures, saved
//! values) passes through the [`Redactor`] first, so no secret or bot token
//! is ever shown or stored.

pub(crate) mod arith;
pub mod budget;
pub mod cache;
pub(crate) mod condition;
pub mod explore;
mod failure;
pub mod http;
pub(crate) mod inputs;
pub(crate) mod later;
mod pages;
mod preflight;
pub(crate) mod redact;
pub mod render;
pub mod request;
mod retry;
mod runner;

use crate::base::diagnostics::Diagnostic;
use crate::language::plan::{Plan, Request, Step, Tree};
pub use inputs::{
    ActionEvent, Answer, Answers, DiagnosticEvent, Event, Inputs, Memory, MissingAs, Options, Outcome, Received,
    RequestEvent,
};
pub use preflight::redactor;
pub use redact::Redactor;
pub use redact::MIN_SECRET_LEN;
pub use render::Body;
pub use request::Refusal;
use runner::Runner;

pub use crate::run::store::{MemoryStore, VarStore};

/// Runs `tree` of `plan`. Events go to `sink` as they happen; what was saved
/// before a failure stays saved.
pub fn run(
    plan: &Plan,
    tree: &Tree,
    inputs: &Inputs,
    options: &Options,
    store: &mut dyn VarStore,
    sink: &mut dyn FnMut(Event),
) -> Outcome {
    let redactor = redactor(inputs, &tree.steps);
    if !options.dry_run && !options.offline {
        preflight::preflight(&tree.steps, inputs)?;
    }
    let mut runner = Runner::new(plan, inputs, options, store, redactor, sink);
    let outcome = runner.steps(&tree.steps);
    match (outcome, &tree.failed) {
        (Err(failure), Some(handler)) => runner.tree_failed(*failure, handler),
        (outcome, _) => outcome,
    }
}

/// The channel a timed event's tick posts to: its value filled in (a
/// secret, a custom variable read from `store`), which must be a channel's
/// id (B329 otherwise: the tick is not run).
pub fn timer_channel(
    plan: &Plan,
    timer: &crate::language::plan::Timer,
    inputs: &Inputs,
    store: &mut dyn VarStore,
) -> Result<String, Box<crate::base::diagnostics::Diagnostic>> {
    use crate::base::diagnostics::{Code, Diagnostic};
    let options = Options::default();
    let mut sink = |_: Event| {};
    let redactor = redact::Redactor::default();
    let mut runner = Runner::new(plan, inputs, &options, store, redactor, &mut sink);
    let channel = render::render(&timer.channel, &mut runner);
    runner.flush()?;
    if channel.is_empty() || channel.len() > 20 || !channel.bytes().all(|b| b.is_ascii_digit()) {
        let shown = match timer.channel.has_secret() {
            // A secret with no value is left as its slot.
            true if channel.contains('<') => "a secret that is not set".to_string(),
            true => "its secret's value".to_string(),
            false if channel.is_empty() => "empty".to_string(),
            // (A variable may hold anything: at most 40 characters of it
            // are shown, in the log of every tick.)
            false => {
                let shown: String = channel.chars().take(40).collect();
                let more = if shown.len() < channel.len() { "…" } else { "" };
                format!("`{}{more}`", crate::base::display::one_line(&shown))
            }
        };
        return Err(Box::new(
            Diagnostic::new(Code::NoTimerChannel, format!("the timed event's channel is {shown}, not a channel's id"))
                .label(timer.channel.span, "this channel")
                .help("a channel's id is its digits (Discord: right-click the channel, Copy Channel ID); save it in the variable, or set the secret"),
        ));
    }
    Ok(channel)
}

/// Whether every secret and the bot token that any tree of `plan` may send
/// has a value: what `blkc serve` checks before it starts, and before it
/// takes a reloaded file, so that no user meets a run that cannot send.
pub fn inputs_ready(plan: &Plan, inputs: &Inputs) -> Outcome {
    let trees: Vec<&[Step]> = plan.trees.iter().map(|t| t.steps.as_slice()).collect();
    let guards: Vec<&crate::language::plan::Template> = plan.trees.iter().flat_map(guard_ids).collect();
    preflight::preflight_all(&trees, &guards, inputs)?;
    guards.iter().try_for_each(|t| guard_id(t, inputs))?;
    // A webhook's secret: without it, no request could be verified.
    let hooks: Vec<&crate::language::plan::Hook> = plan.trees.iter().filter_map(|t| t.webhook.as_ref()).collect();
    let missing: Vec<&crate::language::plan::Hook> =
        hooks.into_iter().filter(|h| !inputs.secrets.contains_key(&h.secret)).collect();
    match missing.split_first() {
        None => Ok(()),
        Some((first, rest)) => {
            let others: Vec<&str> = rest.iter().map(|h| h.secret.as_str()).collect();
            Err(Box::new(failure::missing_secret(&first.secret, first.span, &others)))
        }
    }
}

/// A `require` line's role or channel, once its secret is filled in: an
/// id, or the guard could never hold (a role's name in the secret, say).
fn guard_id(t: &crate::language::plan::Template, inputs: &Inputs) -> Outcome {
    let Some(id) = crate::language::plan::fixed_text(t, &inputs.secrets) else { return Ok(()) };
    if crate::discord::is_snowflake(&id) || !t.has_secret() {
        return Ok(());
    }
    let secrets: Vec<&str> = t
        .parts
        .iter()
        .filter_map(|s| match s {
            crate::language::plan::Seg::Secret { name } => Some(name.as_str()),
            _ => None,
        })
        .collect();
    Err(Box::new(
        Diagnostic::new(
            crate::base::diagnostics::Code::BadGuard,
            format!("the secret {} of a `require` line does not hold an id", secrets.join(", ")),
        )
        .label(t.span, "filled from the secret")
        .help("a role's or a channel's id is its digits (Discord: right-click it, Copy ID); set the secret to that, not to a name"),
    ))
}

/// Whether every secret the `require` lines of `tree` read has a value:
/// what `blkc run` checks before it decides them.
pub fn guards_ready(tree: &Tree, inputs: &Inputs) -> Outcome {
    preflight::preflight_all(&[], &guard_ids(tree).collect::<Vec<_>>(), inputs)?;
    guard_ids(tree).try_for_each(|t| guard_id(t, inputs))
}

/// The role and channel ids of a tree's `require` lines.
fn guard_ids(tree: &Tree) -> impl Iterator<Item = &crate::language::plan::Template> {
    tree.guards.iter().flat_map(|g| match g {
        crate::language::plan::Guard::Roles { ids } | crate::language::plan::Guard::Channels { ids } => ids.as_slice(),
        crate::language::plan::Guard::Permissions { .. } => &[],
    })
}

/// What a test request got back (every text already redacted).
#[derive(Debug, Clone)]
pub struct TestReport {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Body,
    /// Variables sent as their own text (spec 4.2: only `{bot_token}` is
    /// substituted in a test request).
    pub left_as_text: Vec<String>,
}

/// A test request that failed: why, and the variables the block's `failed`
/// would run with (when the block has one and the failure is of a kind it
/// takes).
#[derive(Debug)]
pub struct TestFailure {
    pub diagnostic: Box<Diagnostic>,
    pub failure: Option<Vec<(&'static str, String)>>,
}

/// Sends one block's request the way the builder's test request does: only
/// `{bot_token}` is substituted; secret slots are filled as in a run; the
/// bot token and redirect rules of a run apply.
pub fn test_request(
    plan: &Plan,
    request: &Request,
    inputs: &Inputs,
    options: &Options,
    sink: &mut dyn FnMut(Event),
) -> Result<TestReport, TestFailure> {
    let options = Options { test_request: true, dry_run: false, ..options.clone() };
    let steps = [Step::Request(Box::new(request.clone()))];
    let redactor = redactor(inputs, &steps);
    preflight::preflight(&steps, inputs).map_err(|diagnostic| TestFailure { diagnostic, failure: None })?;
    let mut store = MemoryStore::default();
    let mut runner = Runner::new(plan, inputs, &options, &mut store, redactor, sink);
    if let Err(diagnostic) = runner.request(request) {
        let failure = request.failed.as_ref().and_then(|_| runner.failure_of(request, &diagnostic));
        return Err(TestFailure { diagnostic, failure });
    }
    // A request that returns Ok has stored its response.
    let response =
        runner.responses.remove(&request.block).unwrap_or(render::Response::new(0, Body::Text(String::new())));
    let body = match response.body {
        Body::Json(mut j) => {
            runner.redactor.redact_data(&mut j);
            Body::Json(j)
        }
        Body::Text(t) => Body::Text(runner.redactor.redact(&t)),
    };
    Ok(TestReport {
        status: response.status,
        headers: std::mem::take(&mut runner.last_headers),
        body,
        left_as_text: std::mem::take(&mut runner.left_as_text),
    })
}
