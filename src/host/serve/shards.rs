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
use crate::language::plan::TreeKind;

/// How long a stop waits for the Gateway's shards to close their
/// connections after the drain.
const SHARDS_STOP: Duration = Duration::from_secs(3);

/// Waits for the Gateway to end: its shards do on their own within a read
/// time-out (or a connect's), and its thread when they have; the process
/// does not wait on a Gateway longer than [`SHARDS_STOP`].
pub fn stop(gateway: std::thread::JoinHandle<()>) {
    let until = Instant::now() + SHARDS_STOP;
    while !gateway.is_finished() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    if gateway.is_finished() {
        let _ = gateway.join();
    }
}

/// The Gateway's reports, into the server: dispatches become event runs.
pub(super) struct GatewayEvents(pub(super) Arc<Shared>);

impl gateway::Events for GatewayEvents {
    fn dispatch(&self, t: &str, event: Dispatch, raw: &str) {
        let shared = &self.0;
        if let Dispatch::InteractionCreate(interaction) = event {
            // Answered as one the front door took, to its callback.
            let received = Instant::now();
            if let Some(runtime) = shared.life.runtime.get() {
                runtime.spawn(super::front::over_gateway(shared.clone(), *interaction, received));
            }
            return;
        }
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

/// Why `GET /gateway/bot` gave no Gateway: worth trying again (no answer,
/// a 5xx, a 429), or not (a refused token: no retry makes it right).
pub(super) enum NoGateway {
    Again(String),
    Never(String),
}

/// Where the Gateway is, and how many shards the platform recommends.
pub(super) fn gateway_info(shared: &Shared, loaded: &Loaded) -> Result<GatewayInfo, NoGateway> {
    let platform = shared.bot.platform(loaded);
    let host = url::Url::parse(platform.base()).ok().and_then(|u| u.host_str().map(str::to_string)).unwrap_or_default();
    let (answer, body) = platform
        .gateway_bot(Instant::now() + Duration::from_secs(30))
        .map_err(|e| NoGateway::Again(format!("`GET /gateway/bot` at {host} got no answer: {e}")))?;
    if !answer.is_success() {
        let why = format!(
            "{host} refused `GET /gateway/bot` ({}): {}{}",
            answer.status,
            answer.message(),
            if answer.status == 401 { "; the bot token is wrong" } else { "" }
        );
        let again = answer.status >= 500 || answer.status == 429 || answer.status == 408;
        return Err(if again { NoGateway::Again(why) } else { NoGateway::Never(why) });
    }
    let body =
        body.ok_or_else(|| NoGateway::Again(format!("{host}'s /gateway/bot answer is not the platform's JSON")))?;
    GatewayInfo::from_wire(body).map_err(NoGateway::Again)
}

/// How long to wait before asking `GET /gateway/bot` again: 1 s, doubled a
/// time, up to a minute.
fn backoff(tries: u32) -> Duration {
    Duration::from_secs(1u64 << tries.min(6)).min(Duration::from_secs(60))
}

/// Stops the server for good with `why` (a shard's, when it says which).
pub(super) fn fatal(shared: &Shared, shard: Option<u32>, why: String) {
    match shard {
        Some(shard) => tracing::error!(shard, "{why}"),
        None => tracing::error!("{why}"),
    }
    *shared.life.fatal.lock().unwrap_or_else(|e| e.into_inner()) = Some(why);
    shared.life.gateway_stop.store(true, Ordering::SeqCst);
    shared.life.fatal_notify.notify_one();
}

/// Starts the Gateway on a thread of its own: it asks the platform where
/// the Gateway is (again and again with a growing wait while the platform
/// cannot be reached, so interactions are answered meanwhile), then runs a
/// thread for each shard this process holds, and ends when they have.
pub fn start(
    shared: &Arc<Shared>,
    loaded: &Arc<Loaded>,
    shards: Shards,
    max_shards: Option<u32>,
) -> Result<std::thread::JoinHandle<()>, String> {
    let token = shared.bot.inputs.bot_token.clone().ok_or(
        "the file has event trees, and events need the bot token: set BLKC_BOT_TOKEN or give `--bot-token-file`",
    )?;
    let (shared, loaded) = (shared.clone(), loaded.clone());
    std::thread::Builder::new()
        .name("blkc-gateway".into())
        .spawn(move || {
            let mut tries = 0;
            let info = loop {
                match gateway_info(&shared, &loaded) {
                    Ok(info) => break info,
                    Err(NoGateway::Never(why)) => return fatal(&shared, None, why),
                    Err(NoGateway::Again(why)) => {
                        let wait = backoff(tries);
                        tries += 1;
                        tracing::warn!(
                            retry_in_s = wait.as_secs(),
                            "{why}; events wait, interactions are answered meanwhile"
                        );
                        let until = Instant::now() + wait;
                        while Instant::now() < until {
                            if shared.life.gateway_stop.load(Ordering::SeqCst) {
                                return;
                            }
                            std::thread::sleep(Duration::from_millis(50));
                        }
                    }
                }
            };
            // `--shards auto` with a shared store: the shards are leased.
            if let (Shards::Auto, Some(pool)) = (shards, shared.bot.store.leases()) {
                let connect = super::leases::Connect {
                    token,
                    intents: crate::language::registration::intents(&loaded.checked.ast),
                    url: info.url.clone(),
                    gate: Arc::new(IdentifyGate::new(&info)),
                    events: Arc::new(GatewayEvents(shared.clone())),
                };
                return super::leases::hold(&shared, pool, &info, connect, max_shards);
            }
            match shard_threads(&shared, &loaded, shards, token, &info) {
                Ok(threads) => {
                    for t in threads {
                        let _ = t.join();
                    }
                }
                Err(why) => fatal(&shared, None, why),
            }
        })
        .map_err(|e| format!("cannot start the Gateway thread: {e}"))
}

/// A thread for each shard this process holds.
fn shard_threads(
    shared: &Arc<Shared>,
    loaded: &Loaded,
    shards: Shards,
    token: String,
    info: &GatewayInfo,
) -> Result<Vec<std::thread::JoinHandle<()>>, String> {
    let intents = crate::language::registration::intents(&loaded.checked.ast);
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
    shared.metrics.shards_held.set(ids.len() as i64);
    shared.metrics.shard_count.set(i64::from(count));
    shared.metrics.shards_recommended.set(i64::from(info.shards));
    let gate = Arc::new(IdentifyGate::new(info));
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
            kept: Arc::default(),
        };
        let shared = shared.clone();
        let thread = std::thread::Builder::new()
            .name(format!("blkc-gateway-{id}"))
            .spawn(move || {
                if let Err(why) = shard.run() {
                    fatal(&shared, Some(id), why.0);
                }
            })
            .map_err(|e| format!("cannot start a Gateway thread: {e}"))?;
        threads.push(thread);
    }
    Ok(threads)
}
