//! The Gateway's shards in the server: where the Gateway is, a thread per
//! shard this process holds, and the dispatches they report made into
//! triggers of event runs.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::pipeline::{Queued, Work};
use super::server::{Shards, Shared};
use super::trigger::{find_tree, Outcome, Trigger};
use super::Loaded;
use crate::discord::gateway::{self, GatewayInfo, IdentifyGate, Shard};
use crate::discord::intents;
use crate::discord::model::Dispatch;
use crate::plan::TreeKind;

/// How long a stop waits for the Gateway's shards to close their
/// connections after the drain.
const SHARDS_STOP: Duration = Duration::from_secs(3);

/// Waits for the Gateway's shards to end: they do on their own within a
/// read time-out (or a connect's); the process does not wait on a Gateway
/// longer than [`SHARDS_STOP`].
pub fn stop(threads: Vec<std::thread::JoinHandle<()>>) {
    let until = Instant::now() + SHARDS_STOP;
    while threads.iter().any(|t| !t.is_finished()) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    for t in threads.into_iter().filter(|t| t.is_finished()) {
        let _ = t.join();
    }
}

/// The Gateway's reports, into the server: dispatches become event runs.
struct GatewayEvents(Arc<Shared>);

impl gateway::Events for GatewayEvents {
    fn dispatch(&self, t: &str, event: Dispatch, raw: &str) {
        let shared = &self.0;
        let Some(run) = shared.bot.cache.dispatch(t, &event) else { return };
        let loaded = shared.bot.loaded();
        let Some(tree) = find_tree(&loaded, TreeKind::Event, run.kind) else { return };
        // Known across processes when they share the store: two sessions
        // holding one shard (a hand-over) get the same dispatches.
        let dedupe = shared.bot.store.shared().then(|| {
            let (key, keep) = super::events::occurrence(t, &event, raw);
            (key, super::front::epoch_ms(), keep)
        });
        let kind = run.kind;
        let trigger = Trigger::from_event(run, (loaded, tree), dedupe);
        let work = Work { _queued: Queued::new(shared), trigger };
        if shared.queue.events.try_send(work).is_err() {
            shared.metrics.event(kind, Outcome::Busy);
            tracing::warn!(kind, "event dropped: the run queue is full");
        }
    }

    fn count(&self, what: &'static str) {
        self.0.metrics.gateway(what);
    }

    fn heartbeat(&self, latency: Duration) {
        self.0.metrics.heartbeat(latency);
    }
}

/// Where the Gateway is, and how many shards the platform recommends.
fn gateway_info(shared: &Shared, loaded: &Loaded) -> Result<GatewayInfo, String> {
    let platform = shared.bot.platform(loaded);
    let (answer, body) = platform.gateway_bot(Instant::now() + Duration::from_secs(30)).map_err(|e| e.to_string())?;
    if !answer.is_success() {
        return Err(format!(
            "the platform refused `GET /gateway/bot` ({}): {}{}",
            answer.status,
            answer.message(),
            if answer.status == 401 { "; the bot token is wrong" } else { "" }
        ));
    }
    GatewayInfo::from_wire(body.ok_or("/gateway/bot: the answer is not the platform's JSON")?)
}

/// Asks the platform where its Gateway is, and starts a thread for each
/// shard this process holds.
pub fn start(
    shared: &Arc<Shared>,
    loaded: &Loaded,
    shards: Shards,
) -> Result<Vec<std::thread::JoinHandle<()>>, String> {
    let token = shared.bot.inputs.bot_token.clone().ok_or(
        "the file has event trees, and events need the bot token: set BLKC_BOT_TOKEN or give `--bot-token-file`",
    )?;
    let intents = crate::check::platform::intents(&loaded.checked.ast);
    let info = gateway_info(shared, loaded)?;
    let (ids, count) = match shards {
        // A thread a shard: what the platform answers must not decide how
        // many this process makes.
        Shards::Auto if info.shards > gateway::MAX_AUTO_SHARDS => {
            return Err(format!(
                "the platform recommends {} shards; one process holds at most {} with `--shards auto`: run several \
                 processes, each with `--shard ID/{}` (docs/serve.md, \"Shards\")",
                info.shards,
                gateway::MAX_AUTO_SHARDS,
                info.shards
            ))
        }
        Shards::Auto => ((0..info.shards).collect::<Vec<u32>>(), info.shards),
        Shards::One { id, count } => (vec![id], count),
    };
    tracing::info!(
        shards = format!("{ids:?} of {count}"),
        intents = intents::names(intents),
        session_starts_left = info.session_starts_left,
        "connecting to the Gateway"
    );
    let gate = Arc::new(IdentifyGate::new(&info));
    let events: Arc<dyn gateway::Events> = Arc::new(GatewayEvents(shared.clone()));
    let mut threads = Vec::new();
    for id in ids {
        let shard = Shard {
            id,
            count,
            token: token.clone(),
            intents,
            url: info.url.clone(),
            gate: gate.clone(),
            events: events.clone(),
            stop: shared.life.gateway_stop.clone(),
        };
        let shared = shared.clone();
        let thread = std::thread::Builder::new()
            .name(format!("blkc-gateway-{id}"))
            .spawn(move || {
                if let Err(fatal) = shard.run() {
                    tracing::error!(shard = id, "{}", fatal.0);
                    *shared.life.fatal.lock().unwrap_or_else(|e| e.into_inner()) = Some(fatal.0);
                    shared.life.gateway_stop.store(true, Ordering::SeqCst);
                    shared.life.fatal_notify.notify_one();
                }
            })
            .map_err(|e| format!("cannot start a Gateway thread: {e}"))?;
        threads.push(thread);
    }
    Ok(threads)
}
