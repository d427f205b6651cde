//! `GET /metrics`: Prometheus text of what the server did.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use super::trigger::Outcome;

/// Upper bounds of the run-time histogram, in seconds.
const BUCKETS: &[f64] = &[0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0];

#[derive(Debug, Default)]
pub struct Metrics {
    interactions: Mutex<BTreeMap<&'static str, u64>>,
    requests: Mutex<BTreeMap<String, u64>>,
    platform: Mutex<BTreeMap<u16, u64>>,
    run_buckets: [AtomicU64; 14],
    run_count: AtomicU64,
    /// Microseconds.
    run_sum: AtomicU64,
    deferrals: AtomicU64,
    followups: AtomicU64,
    pub in_flight: AtomicI64,
    reloads: Mutex<BTreeMap<&'static str, u64>>,
    events: Mutex<BTreeMap<(String, &'static str), u64>>,
    gateway: Mutex<BTreeMap<&'static str, u64>>,
    /// Connections closed at the door, by why.
    refused: Mutex<BTreeMap<&'static str, u64>>,
    /// The last heartbeat's round trip, in microseconds.
    heartbeat_us: AtomicU64,
    /// This process's share of the platform's global rate limit.
    pub global_limit: std::sync::atomic::AtomicUsize,
}

impl Metrics {
    /// One interaction, by how it ended (`answered`, `deferred`, `failed`,
    /// `busy`, `unknown_command`, `replayed`, `unauthorized`, `malformed`, `ping`).
    pub fn interaction(&self, outcome: Outcome) {
        *self.interactions.lock().unwrap_or_else(|e| e.into_inner()).entry(outcome.label()).or_default() += 1;
    }

    pub fn run_time(&self, took: Duration) {
        let seconds = took.as_secs_f64();
        let i = BUCKETS.iter().position(|b| seconds <= *b).unwrap_or(BUCKETS.len());
        self.run_buckets[i].fetch_add(1, Ordering::Relaxed);
        self.run_count.fetch_add(1, Ordering::Relaxed);
        self.run_sum.fetch_add(took.as_micros() as u64, Ordering::Relaxed);
    }

    /// A request a run sent, by its status (`none` when no answer came).
    pub fn request(&self, status: Option<u16>) {
        let key = status.map_or("none".to_string(), |s| s.to_string());
        *self.requests.lock().unwrap_or_else(|e| e.into_inner()).entry(key).or_default() += 1;
    }

    /// A call blkc made to the platform to answer (edits, follow-ups).
    pub fn platform_call(&self, status: u16) {
        *self.platform.lock().unwrap_or_else(|e| e.into_inner()).entry(status).or_default() += 1;
    }

    pub fn deferral(&self) {
        self.deferrals.fetch_add(1, Ordering::Relaxed);
    }

    pub fn followup(&self) {
        self.followups.fetch_add(1, Ordering::Relaxed);
    }

    pub fn reload(&self, outcome: &'static str) {
        *self.reloads.lock().unwrap_or_else(|e| e.into_inner()).entry(outcome).or_default() += 1;
    }

    /// A Gateway event, by kind and how it ended (`ran`, `failed`, `busy`,
    /// `no_tree`).
    pub fn event(&self, kind: &str, outcome: Outcome) {
        let key = (kind.to_string(), outcome.label());
        *self.events.lock().unwrap_or_else(|e| e.into_inner()).entry(key).or_default() += 1;
    }

    /// The Gateway's connections: `reconnect`, `resume`, `identify`.
    pub fn gateway(&self, what: &'static str) {
        *self.gateway.lock().unwrap_or_else(|e| e.into_inner()).entry(what).or_default() += 1;
    }

    /// A connection closed at the door: `full` (the cap), `address` (one
    /// address's share), `silent` (sent nothing in time), `accept` (the
    /// process could not take it: out of open files).
    pub fn connection_refused(&self, why: &'static str) {
        *self.refused.lock().unwrap_or_else(|e| e.into_inner()).entry(why).or_default() += 1;
    }

    pub fn heartbeat(&self, latency: Duration) {
        self.heartbeat_us.store(latency.as_micros() as u64, Ordering::Relaxed);
    }

    pub fn count(&self, outcome: &str) -> u64 {
        self.interactions.lock().unwrap_or_else(|e| e.into_inner()).get(outcome).copied().unwrap_or(0)
    }

    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "# HELP blkc_interactions_total Interactions received, by outcome.");
        let _ = writeln!(out, "# TYPE blkc_interactions_total counter");
        for (outcome, n) in self.interactions.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            let _ = writeln!(out, "blkc_interactions_total{{outcome=\"{outcome}\"}} {n}");
        }
        let _ = writeln!(out, "# HELP blkc_run_seconds Time a command's run took, start to end.");
        let _ = writeln!(out, "# TYPE blkc_run_seconds histogram");
        let mut cumulative = 0;
        for (i, bound) in BUCKETS.iter().enumerate() {
            cumulative += self.run_buckets[i].load(Ordering::Relaxed);
            let _ = writeln!(out, "blkc_run_seconds_bucket{{le=\"{bound}\"}} {cumulative}");
        }
        cumulative += self.run_buckets[BUCKETS.len()].load(Ordering::Relaxed);
        let _ = writeln!(out, "blkc_run_seconds_bucket{{le=\"+Inf\"}} {cumulative}");
        let sum = self.run_sum.load(Ordering::Relaxed) as f64 / 1e6;
        let _ = writeln!(out, "blkc_run_seconds_sum {sum}");
        let _ = writeln!(out, "blkc_run_seconds_count {}", self.run_count.load(Ordering::Relaxed));
        let _ = writeln!(out, "# HELP blkc_requests_total Requests the runs sent, by status.");
        let _ = writeln!(out, "# TYPE blkc_requests_total counter");
        for (status, n) in self.requests.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            let _ = writeln!(out, "blkc_requests_total{{status=\"{status}\"}} {n}");
        }
        let _ = writeln!(
            out,
            "# HELP blkc_platform_calls_total Calls to the platform to answer (edits, follow-ups), by status."
        );
        let _ = writeln!(out, "# TYPE blkc_platform_calls_total counter");
        for (status, n) in self.platform.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            let _ = writeln!(out, "blkc_platform_calls_total{{status=\"{status}\"}} {n}");
        }
        let _ = writeln!(out, "# HELP blkc_deferrals_total Interactions answered \"thinking\" first, then edited.");
        let _ = writeln!(out, "# TYPE blkc_deferrals_total counter");
        let _ = writeln!(out, "blkc_deferrals_total {}", self.deferrals.load(Ordering::Relaxed));
        let _ = writeln!(out, "# HELP blkc_followups_total Follow-up messages sent.");
        let _ = writeln!(out, "# TYPE blkc_followups_total counter");
        let _ = writeln!(out, "blkc_followups_total {}", self.followups.load(Ordering::Relaxed));
        let _ = writeln!(out, "# HELP blkc_runs_in_flight Runs started and not yet answered in full.");
        let _ = writeln!(out, "# TYPE blkc_runs_in_flight gauge");
        let _ = writeln!(out, "blkc_runs_in_flight {}", self.in_flight.load(Ordering::Relaxed));
        let _ = writeln!(out, "# HELP blkc_events_total Gateway events, by kind and outcome.");
        let _ = writeln!(out, "# TYPE blkc_events_total counter");
        for ((kind, outcome), n) in self.events.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            let _ = writeln!(out, "blkc_events_total{{kind=\"{kind}\",outcome=\"{outcome}\"}} {n}");
        }
        let _ = writeln!(out, "# HELP blkc_gateway_total Gateway connections: reconnects, resumes, identifies.");
        let _ = writeln!(out, "# TYPE blkc_gateway_total counter");
        for (what, n) in self.gateway.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            let _ = writeln!(out, "blkc_gateway_total{{what=\"{what}\"}} {n}");
        }
        let _ = writeln!(out, "# HELP blkc_gateway_heartbeat_seconds The last heartbeat's round trip.");
        let _ = writeln!(out, "# TYPE blkc_gateway_heartbeat_seconds gauge");
        let _ =
            writeln!(out, "blkc_gateway_heartbeat_seconds {}", self.heartbeat_us.load(Ordering::Relaxed) as f64 / 1e6);
        let _ = writeln!(
            out,
            "# HELP blkc_global_rate_limit Requests a second this process may send to the platform (its share of the bot's)."
        );
        let _ = writeln!(out, "# TYPE blkc_global_rate_limit gauge");
        let _ = writeln!(out, "blkc_global_rate_limit {}", self.global_limit.load(Ordering::Relaxed));
        let _ = writeln!(out, "# HELP blkc_connections_refused_total Connections closed at the door, by why.");
        let _ = writeln!(out, "# TYPE blkc_connections_refused_total counter");
        for (why, n) in self.refused.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            let _ = writeln!(out, "blkc_connections_refused_total{{why=\"{why}\"}} {n}");
        }
        let _ = writeln!(out, "# HELP blkc_reloads_total Reloads of the file, by outcome.");
        let _ = writeln!(out, "# TYPE blkc_reloads_total counter");
        for (outcome, n) in self.reloads.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            let _ = writeln!(out, "blkc_reloads_total{{outcome=\"{outcome}\"}} {n}");
        }
        out
    }
}
