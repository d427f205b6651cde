//! `GET /metrics`: what the server did, through the Prometheus project's
//! own client (`prometheus-client`), in the OpenMetrics text format.

use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

use super::trigger::Outcome;

/// The content type of [`Metrics::render`]'s text.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Upper bounds of the run-time histogram, in seconds.
const BUCKETS: [f64; 13] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0];

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ByOutcome {
    outcome: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ByStatus {
    status: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ByEvent {
    kind: String,
    outcome: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ByTimer {
    event: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ByWhat {
    what: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ByWhy {
    why: &'static str,
}

/// The server's metrics, and the registry that writes them.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    interactions: Family<ByOutcome, Counter>,
    run_seconds: Histogram,
    requests: Family<ByStatus, Counter>,
    platform: Family<ByStatus, Counter>,
    deferrals: Counter,
    followups: Counter,
    /// Runs started and not yet answered in full.
    pub in_flight: Gauge,
    /// Request bodies being read or held now, and their bytes.
    pub bodies: Gauge,
    pub body_bytes: Gauge,
    /// Threads of the run pool.
    pub workers: Gauge,
    events: Family<ByEvent, Counter>,
    gateway: Family<ByWhat, Counter>,
    /// The last heartbeat's round trip, in seconds.
    heartbeat: Gauge<f64, std::sync::atomic::AtomicU64>,
    /// This process's share of the platform's global rate limit.
    pub global_limit: Gauge,
    /// Connections closed at the door, by why.
    refused: Family<ByWhy, Counter>,
    reloads: Family<ByOutcome, Counter>,
    /// Members' messages read for an `await`'s answer, by outcome.
    answers: Family<ByOutcome, Counter>,
    /// Each timed event's next tick, in Unix seconds.
    timers: Family<ByTimer, Gauge>,
    timer_names: std::sync::Mutex<Vec<String>>,
    /// The Gateway's shards this process holds (leased through the store,
    /// or all it was given).
    pub shards_held: Gauge,
    /// The shard count the bot's processes hold their shards under, and
    /// the count the platform recommends.
    pub shard_count: Gauge,
    pub shards_recommended: Gauge,
    /// Lease renewals, by outcome (`ok`, `failed`), and shards taken, by
    /// how (`resumed`, `identified`), or given up, by why.
    leases: Family<ByOutcome, Counter>,
}

impl Default for Metrics {
    fn default() -> Metrics {
        let mut m = Metrics {
            registry: Registry::default(),
            interactions: Family::default(),
            run_seconds: Histogram::new(BUCKETS),
            requests: Family::default(),
            platform: Family::default(),
            deferrals: Counter::default(),
            followups: Counter::default(),
            in_flight: Gauge::default(),
            bodies: Gauge::default(),
            body_bytes: Gauge::default(),
            workers: Gauge::default(),
            events: Family::default(),
            gateway: Family::default(),
            heartbeat: Gauge::default(),
            global_limit: Gauge::default(),
            refused: Family::default(),
            reloads: Family::default(),
            answers: Family::default(),
            timers: Family::default(),
            timer_names: std::sync::Mutex::default(),
            shards_held: Gauge::default(),
            shard_count: Gauge::default(),
            shards_recommended: Gauge::default(),
            leases: Family::default(),
        };
        let r = &mut m.registry;
        r.register("blkc_interactions", "Interactions received, by outcome", m.interactions.clone());
        r.register("blkc_run_seconds", "Time a command's run took, start to end", m.run_seconds.clone());
        r.register("blkc_requests", "Requests the runs sent, by status", m.requests.clone());
        r.register(
            "blkc_platform_calls",
            "Calls to the platform to answer (edits, follow-ups), by status",
            m.platform.clone(),
        );
        r.register("blkc_deferrals", "Interactions answered \"thinking\" first, then edited", m.deferrals.clone());
        r.register("blkc_followups", "Follow-up messages sent", m.followups.clone());
        r.register("blkc_runs_in_flight", "Runs started and not yet answered in full", m.in_flight.clone());
        r.register("blkc_request_bodies", "Request bodies being read or held now", m.bodies.clone());
        r.register("blkc_request_body_bytes", "Bytes of request bodies being read or held now", m.body_bytes.clone());
        r.register(
            "blkc_workers",
            "Threads of the run pool (one a core, more while runs wait on the network)",
            m.workers.clone(),
        );
        r.register("blkc_events", "Gateway events, by kind and outcome", m.events.clone());
        r.register("blkc_gateway", "Gateway connections: reconnects, resumes, identifies", m.gateway.clone());
        r.register("blkc_gateway_heartbeat_seconds", "The last heartbeat's round trip", m.heartbeat.clone());
        r.register(
            "blkc_global_rate_limit",
            "Requests a second this process may send to the platform (its share of the bot's)",
            m.global_limit.clone(),
        );
        r.register("blkc_connections_refused", "Connections closed at the door, by why", m.refused.clone());
        r.register("blkc_reloads", "Reloads of the file, by outcome", m.reloads.clone());
        r.register("blkc_await_messages", "Members' messages read for an `await`'s answer", m.answers.clone());
        r.register(
            "blkc_timer_next_tick_seconds",
            "Each timed event's next tick, in seconds since the Unix epoch",
            m.timers.clone(),
        );
        r.register("blkc_shards_held", "Gateway shards this process holds", m.shards_held.clone());
        r.register("blkc_shard_count", "The shard count the bot's shards are held under", m.shard_count.clone());
        r.register(
            "blkc_shards_recommended",
            "The shard count the platform recommends (GET /gateway/bot)",
            m.shards_recommended.clone(),
        );
        r.register(
            "blkc_shard_leases",
            "Shard leases through the store: renewals (renewed, renew_failed), shards taken (resumed, identified) \
             and given up (handed_over, lost, fenced, resharded, ended, stopped)",
            m.leases.clone(),
        );
        m
    }
}

impl Metrics {
    /// One interaction, by how it ended (`answered`, `deferred`, `failed`,
    /// `busy`, `unknown_command`, `replayed`, `unauthorized`, `malformed`, `ping`).
    pub fn interaction(&self, outcome: Outcome) {
        self.interactions.get_or_create(&ByOutcome { outcome: outcome.label() }).inc();
    }

    pub fn run_time(&self, took: Duration) {
        self.run_seconds.observe(took.as_secs_f64());
    }

    /// A request a run sent, by its status (`none` when no answer came).
    pub fn request(&self, status: Option<u16>) {
        let status = status.map_or("none".to_string(), |s| s.to_string());
        self.requests.get_or_create(&ByStatus { status }).inc();
    }

    /// A call blkc made to the platform to answer (edits, follow-ups).
    pub fn platform_call(&self, status: u16) {
        self.platform.get_or_create(&ByStatus { status: status.to_string() }).inc();
    }

    pub fn deferral(&self) {
        self.deferrals.inc();
    }

    pub fn followup(&self) {
        self.followups.inc();
    }

    pub fn reload(&self, outcome: &'static str) {
        self.reloads.get_or_create(&ByOutcome { outcome }).inc();
    }

    /// A Gateway event, by kind and how it ended (`ran`, `failed`, `busy`,
    /// `no_tree`).
    pub fn event(&self, kind: &str, outcome: Outcome) {
        self.events.get_or_create(&ByEvent { kind: kind.to_string(), outcome: outcome.label() }).inc();
    }

    /// A member's message read for an `await`'s answer.
    pub fn answer(&self, outcome: &'static str) {
        self.answers.get_or_create(&ByOutcome { outcome }).inc();
    }

    /// The Gateway's connections: `reconnect`, `resume`, `identify`.
    pub fn gateway(&self, what: &'static str) {
        self.gateway.get_or_create(&ByWhat { what }).inc();
    }

    /// A connection closed at the door: `full` (the cap), `address` (one
    /// address's share), `silent` (sent nothing in time), `accept` (the
    /// process could not take it: out of open files).
    pub fn connection_refused(&self, why: &'static str) {
        self.refused.get_or_create(&ByWhy { why }).inc();
    }

    /// A timed event's next tick (Unix seconds).
    pub fn timer_next(&self, event: &str, at: i64) {
        self.timers.get_or_create(&ByTimer { event: event.to_string() }).set(at);
    }

    /// Forgets the timed events that are no longer the file's.
    pub fn timers_only<'a>(&self, events: impl Iterator<Item = &'a String>) {
        let kept: Vec<&String> = events.collect();
        // (Family has no iterator: the names set earlier are tracked here.)
        let mut known = self.timer_names.lock().unwrap_or_else(|e| e.into_inner());
        known.retain(|name| {
            let keep = kept.contains(&name);
            if !keep {
                self.timers.remove(&ByTimer { event: name.clone() });
            }
            keep
        });
        for name in kept {
            if !known.contains(name) {
                known.push(name.clone());
            }
        }
    }

    /// A lease's renewal, a shard taken or given up (see the registration).
    pub fn lease(&self, outcome: &'static str) {
        self.leases.get_or_create(&ByOutcome { outcome }).inc();
    }

    pub fn heartbeat(&self, latency: Duration) {
        self.heartbeat.set(latency.as_secs_f64());
    }

    /// The text `GET /metrics` answers, of type [`CONTENT_TYPE`].
    pub fn render(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}
