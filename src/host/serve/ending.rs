//! What a server's [`Hooks`](super::Hooks) are told of each run: the
//! record `blkc play`'s inspector shows (docs/play.md). Only a server given
//! hooks keeps one; `blkc serve` keeps none.
//!
//! A record holds what the run's own events hold, already redacted by the
//! runner (a secret's value and the bot token are masked in every URL,
//! header, body, variable and diagnostic), and the interaction's token is
//! masked in the whole record before it leaves: a record is shown to a web
//! page, and a token is a credential.

use serde_json::{json, Value};

use super::pipeline::RunReport;
use super::server::Shared;
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

/// How a run ended, beyond its outcome.
pub struct Ending<'a> {
    pub outcome: Outcome,
    pub report: Option<&'a RunReport>,
    pub trail: Option<Trail>,
    /// What the member was told when the run was kept from running.
    pub refused: Option<&'a str>,
}

/// Tells the server's hooks, if any, of a run that ended.
pub fn tell(shared: &Shared, trigger: &Trigger, ending: Ending) {
    let Some(hooks) = &shared.hooks else { return };
    let about = &trigger.about;
    let (kind, name) = match about {
        About::Interaction { command, .. } => ("interaction", command.as_str()),
        About::Event { kind, .. } => ("event", *kind),
        About::Timer { name, .. } => ("timer", name.as_str()),
    };
    let mut trail = ending.trail.unwrap_or(Trail { events: Vec::new(), left_out: 0 });
    // A warning's place in the file, as `blkc check` says it.
    let spans = trail.events.iter().any(|e| e["span"].is_object());
    if spans {
        let index = trigger.loaded.checked.source.line_index();
        for event in trail.events.iter_mut().filter(|e| e["span"].is_object()) {
            let start = event["span"]["start"].as_u64().unwrap_or(0) as usize;
            let (line, column) = index.line_col(start);
            (event["line"], event["column"]) = (json!(line), json!(column));
        }
    }
    let record = json!({
        "kind": kind,
        "name": name,
        "tree": trigger.tree().name,
        "tree_kind": trigger.tree().kind.as_str(),
        "interaction": about.id(),
        "outcome": ending.outcome.label(),
        "ms": (trigger.received.elapsed().as_secs_f64() * 1e4).round() / 10.0,
        "error": ending.report.and_then(|r| r.failure.as_deref()),
        "refused": ending.refused,
        "events": trail.events,
        "left_out": trail.left_out,
    });
    let mut text = record.to_string();
    if let Some(token) = about.token().filter(|t| !t.is_empty()) {
        text = text.replace(token, "[interaction token]");
    }
    (hooks.ran)(text);
}
