//! How a trigger ended, recorded in one place whichever part of the
//! server it ended in (the front door, the pipeline, the Gateway's
//! dispatcher, the timers): counted in the metrics, logged as the
//! trigger's one line, and told to the server's [`Hooks`](super::Hooks),
//! the record `blkc play`'s inspector shows (docs/play.md). Only a server
//! given hooks keeps records; `blkc serve` keeps none.
//!
//! A record holds what the run's own events hold, already redacted by the
//! runner (a secret's value and the bot token are masked in every URL,
//! header, body, variable and diagnostic), and the interaction's token is
//! masked in the whole record before it leaves: a record is shown to a web
//! page, and a token is a credential.

use std::time::Instant;

use serde_json::{json, Value};

use super::log;

use super::shared::Shared;
use super::trigger::{About, Outcome, Trigger};
use crate::run::eval::Event;

/// The events a record keeps of one run: a loop may say thousands.
const KEPT: usize = 200;

/// A run's events, as they come, for its record.
pub struct Trail {
    events: Vec<Value>,
    left_out: usize,
}

impl Trail {
    /// A trail when the server has hooks to tell; else none is kept.
    pub fn new(shared: &Shared) -> Option<Trail> {
        shared.hooks.as_ref().map(|_| Trail { events: Vec::new(), left_out: 0 })
    }

    pub fn push(&mut self, event: &Event) {
        if self.events.len() >= KEPT {
            self.left_out += 1;
        } else if let Ok(value) = serde_json::to_value(event) {
            self.events.push(value);
        }
    }
}

/// The record of a trigger that ended, as `blkc play`'s inspector reads
/// it (docs/play.md, "The inspector").
#[derive(serde::Serialize)]
struct Record<'a> {
    /// `interaction`, `event` or `timer`.
    kind: &'static str,
    /// The command or handler, the event's kind, or the timed event's name.
    name: &'a str,
    /// The tree that ran; none when it ended before one was found.
    tree: Option<&'a str>,
    tree_kind: Option<&'static str>,
    /// The interaction's id, when it is one.
    interaction: Option<&'a str>,
    outcome: &'static str,
    ms: f64,
    error: Option<&'a str>,
    /// What the member was told when the trigger was kept from running.
    refused: Option<&'a str>,
    /// The run's events as `blkc run --format json` prints them, each
    /// warning with its line and column.
    events: Vec<Value>,
    left_out: usize,
    /// An event's dispatch (numbered in this process) and how many runs
    /// it started: a conversation test waits for them all.
    #[serde(skip_serializing_if = "Option::is_none")]
    dispatch: Option<(u64, usize)>,
}

/// How a run ended, beyond its outcome.
pub struct Ending<'a> {
    pub outcome: Outcome,
    pub report: Option<&'a RunReport>,
    pub trail: Option<Trail>,
    /// What the member was told when the run was kept from running.
    pub refused: Option<&'a str>,
}

/// Tells the server's hooks, if any, of a trigger that ended.
fn tell(shared: &Shared, what: &Ended, ending: Ending) {
    let Some(hooks) = &shared.hooks else { return };
    let (about, received, trigger) = match what {
        Ended::Trigger(trigger) => (&trigger.about, trigger.received, Some(*trigger)),
        Ended::Before { about, received } => (about, *received, None),
    };
    let (kind, name) = match about {
        About::Interaction { command, .. } => ("interaction", command.as_str()),
        About::Event { kind, .. } => ("event", *kind),
        About::Timer { name, .. } => ("timer", name.as_str()),
        About::Later { tree, .. } => ("later", tree.as_str()),
        About::Webhook { name, .. } => ("webhook", name.as_str()),
    };
    let mut trail = ending.trail.unwrap_or(Trail { events: Vec::new(), left_out: 0 });
    // A warning's place in the file, as `blkc check` says it.
    if let Some(trigger) = trigger.filter(|_| trail.events.iter().any(|e| e["span"].is_object())) {
        let index = trigger.loaded.checked.source.line_index();
        for event in trail.events.iter_mut().filter(|e| e["span"].is_object()) {
            let start = event["span"]["start"].as_u64().unwrap_or(0) as usize;
            let (line, column) = index.line_col(start);
            (event["line"], event["column"]) = (json!(line), json!(column));
            // (A bot in several files: the file it is in.)
            if !trigger.loaded.checked.source.parts.is_empty() {
                event["file"] = json!(index.file(start));
            }
        }
    }
    let record = Record {
        kind,
        name,
        tree: trigger.map(|t| t.tree().name.as_str()),
        tree_kind: trigger.map(|t| t.tree().kind.as_str()),
        interaction: about.id(),
        outcome: ending.outcome.label(),
        ms: (received.elapsed().as_secs_f64() * 1e4).round() / 10.0,
        error: ending.report.and_then(|r| r.failure.as_deref()),
        refused: ending.refused,
        events: trail.events,
        left_out: trail.left_out,
        dispatch: match about {
            About::Event { dispatch, .. } => Some(*dispatch),
            _ => None,
        },
    };
    let Ok(mut text) = serde_json::to_string(&record) else { return };
    if let Some(token) = about.token().filter(|t| !t.is_empty()) {
        text = text.replace(token, "[interaction token]");
    }
    (hooks.ran)(text);
}

/// What ended: a trigger, or what is known of one that ended before it
/// became one (an unknown command, a stale click, a full queue, a tick
/// that could not be claimed).
pub enum Ended<'a> {
    Trigger(&'a Trigger),
    Before { about: About, received: Instant },
}

impl Ending<'_> {
    /// An ending with nothing more to say than its outcome.
    pub fn of(outcome: Outcome) -> Ending<'static> {
        Ending { outcome, report: None, trail: None, refused: None }
    }
}

/// Records how a trigger ended: the one call every ending makes.
pub fn ended(shared: &Shared, what: Ended, ending: Ending) {
    let (about, received) = match &what {
        Ended::Trigger(trigger) => (&trigger.about, trigger.received),
        Ended::Before { about, received } => (about, *received),
    };
    count(shared, about, ending.outcome);
    log_run(about, received, ending.outcome, ending.report);
    tell(shared, &what, ending);
}

/// How many of a run's warnings are logged whole (all are named on its
/// run line): a loop may warn once per element.
const WARNINGS_LOGGED: usize = 5;

/// What a run did, for its log line.
#[derive(Default)]
pub struct RunReport {
    pub requests: usize,
    pub warnings: Vec<&'static str>,
    /// Messages the platform took.
    pub messages: usize,
    pub failure: Option<String>,
    /// Why a message did not reach the chat (the first such): the run
    /// then counts as failed, whatever it did.
    pub(super) undelivered: Option<String>,
    pub deferred: bool,
}

impl RunReport {
    /// The run's outcome once its messages are counted: one that did not
    /// reach the chat fails the run, with the reason as its error.
    pub(super) fn settle(&mut self, outcome: Outcome) -> Outcome {
        match self.undelivered.take() {
            Some(why) if outcome != Outcome::Failed => {
                self.failure = Some(why);
                Outcome::Failed
            }
            _ => outcome,
        }
    }

    /// Counts a run's request or warning (a reply is the caller's). The
    /// first [`WARNINGS_LOGGED`] warnings of a run are logged whole, for
    /// the operator to read what the run line only names.
    pub(super) fn note(&mut self, shared: &Shared, about: &About, event: &Event) {
        match event {
            Event::Request(r) => {
                self.requests += 1;
                shared.metrics.request(r.status);
            }
            Event::Warning(w) => {
                if self.warnings.len() < WARNINGS_LOGGED {
                    let (id, kind, code, warning) = (about.id(), about.kind(), w.code, w.message.as_str());
                    log::hiding(about.token(), || tracing::warn!(id, kind, code, warning, "a run warned"));
                }
                self.warnings.push(w.code);
            }
            Event::Action(a) => {
                let (id, kind, action, status) = (about.id(), about.kind(), a.action, a.status);
                log::hiding(about.token(), || tracing::info!(id, kind, action, status, later = a.later, "an action"));
            }
            Event::Reply { .. }
            | Event::Form(_)
            | Event::Save { .. }
            | Event::Read { .. }
            | Event::Choice { .. }
            | Event::Later { .. }
            | Event::Cancel { .. }
            | Event::Branch { .. } => {}
        }
    }
}

/// The log line of a trigger, however it ended.
pub fn log_run(about: &About, received: Instant, outcome: Outcome, report: Option<&RunReport>) {
    let ms = (received.elapsed().as_secs_f64() * 1e4).round() / 10.0;
    let label = outcome.label();
    let requests = report.map(|r| r.requests);
    let messages = report.map(|r| r.messages);
    let warnings = report.filter(|r| !r.warnings.is_empty()).map(|r| codes(&r.warnings));
    let error = report.and_then(|r| r.failure.as_deref());
    // At `error` when the run failed, else at `info`.
    macro_rules! run_line {
        ($($field:tt)*) => {
            if outcome == Outcome::Failed { tracing::error!($($field)*) } else { tracing::info!($($field)*) }
        };
    }
    log::hiding(about.token(), || match about {
        About::Interaction { id, command, user, server, .. } => {
            let (id, command, user, server) = (id.as_str(), command.as_str(), user.as_str(), server.as_str());
            run_line!(
                id,
                command,
                user,
                server,
                outcome = label,
                ms,
                requests,
                messages,
                warnings,
                error,
                "interaction"
            );
        }
        About::Event { kind, server, .. } => {
            let (kind, server) = (*kind, server.as_str());
            run_line!(kind, server, outcome = label, ms, requests, messages, warnings, error, "event");
        }
        About::Timer { name, tick } => {
            let (event, tick) = (name.as_str(), tick.as_str());
            run_line!(event, tick, outcome = label, ms, requests, messages, warnings, error, "timed event");
        }
        About::Webhook { name, delivery } => {
            let (event, delivery) = (name.as_str(), delivery.as_str());
            run_line!(event, delivery, outcome = label, ms, requests, messages, warnings, error, "webhook event");
        }
        About::Later { tree, key } => {
            let (tree, key) = (tree.as_str(), key.as_str());
            run_line!(tree, key, outcome = label, ms, requests, messages, warnings, error, "waiting work");
        }
    });
}

/// A run's warnings for its log line: each code once, in the order first
/// seen, with how many times when more than once (`B307x120,B326`).
pub(super) fn codes(warnings: &[&'static str]) -> String {
    let mut seen: Vec<(&str, usize)> = Vec::new();
    for code in warnings {
        match seen.iter_mut().find(|(c, _)| c == code) {
            Some((_, n)) => *n += 1,
            None => seen.push((code, 1)),
        }
    }
    let named = seen.iter().map(|(c, n)| if *n == 1 { c.to_string() } else { format!("{c}x{n}") });
    named.collect::<Vec<_>>().join(",")
}

/// Counts a trigger's outcome in the metrics.
pub fn count(shared: &Shared, about: &About, outcome: Outcome) {
    match about {
        About::Interaction { .. } => shared.metrics.interaction(outcome),
        About::Event { kind, .. } => shared.metrics.event(kind, outcome),
        About::Timer { .. } => shared.metrics.event("timer", outcome),
        About::Later { .. } => shared.metrics.event("later", outcome),
        About::Webhook { .. } => shared.metrics.event(&about.metric_kind(), outcome),
    }
}

#[cfg(test)]
mod tests {
    use super::codes;

    #[test]
    fn a_run_lines_warnings_name_each_code_once_with_its_count() {
        assert_eq!(codes(&["B326"]), "B326");
        assert_eq!(codes(&["B307", "B326", "B307", "B307"]), "B307x3,B326");
    }
}
