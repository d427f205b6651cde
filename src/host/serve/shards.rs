//! The Gateway's shards in the server: where the Gateway is, a thread per
//! shard this process holds, and the dispatches they report made into
//! triggers of event runs.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::ending::{ended, Ended, Ending};
use super::gateway_bot::{gateway_info, NoGateway};
use super::loaded::Loaded;
use super::shared::{Queued, Work};
use super::shared::{Shards, Shared, Stop};
use super::trigger::{find_tree, Outcome, Trigger};
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

/// The dispatches this process read that started runs, numbered.
static DISPATCHES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

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
        let loaded = shared.bot.loaded();
        if loaded.plan.awaits {
            super::later::maybe_answer(shared, &event);
        }
        let runs: Vec<_> = shared
            .bot
            .cache
            .dispatch(t, &event)
            .into_iter()
            .filter_map(|run| Some((find_tree(&loaded, TreeKind::Event, run.kind)?, run)))
            .collect();
        let number = DISPATCHES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let count = runs.len();
        for (tree, run) in runs {
            // Known across processes when they share the store: two sessions
            // holding one shard (a hand-over) get the same dispatches.
            let dedupe = shared.bot.store.shared().then(|| {
                let (key, keep) = super::events::occurrence(t, run.kind, &event, raw);
                (key, super::clock::epoch_ms(), keep)
            });
            let trigger = Trigger::from_event(run, (loaded.clone(), tree), dedupe, (number, count));
            let work = Work { _queued: Queued::new(shared), trigger };
            if let Err(full) = shared.queue.events.try_send(work) {
                let trigger = full.into_inner().trigger;
                tracing::warn!(kind = trigger.about.kind(), "event dropped: the run queue is full");
                ended(shared, Ended::Trigger(&trigger), Ending::of(Outcome::Busy));
            }
        }
    }

    fn count(&self, what: &'static str) {
        self.0.metrics.gateway(what);
    }

    fn heartbeat(&self, latency: Duration) {
        self.0.metrics.heartbeat(latency);
    }
}

/// The waits before asking `GET /gateway/bot` again: 1 s, doubled a time,
/// up to a minute (`backon`'s exponential backoff).
fn gateway_bot_waits() -> backon::ExponentialBackoff {
    use backon::BackoffBuilder as _;
    backon::ExponentialBuilder::default()
        .with_min_delay(Duration::from_secs(1))
        .with_max_delay(Duration::from_secs(60))
        .without_max_times()
        .build()
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
) -> Result<std::thread::JoinHandle<()>, Stop> {
    let token = shared.bot.inputs.bot_token.clone().ok_or(Stop::NoBotToken)?;
    let (shared, loaded) = (shared.clone(), loaded.clone());
    std::thread::Builder::new()
        .name("blkc-gateway".into())
        .spawn(move || {
            let mut waits = gateway_bot_waits();
            let info = loop {
                match gateway_info(&shared, &loaded) {
                    Ok(info) => break info,
                    Err(NoGateway::Never(why)) => return shared.life.fatal(None, why),
                    Err(NoGateway::Again(why)) => {
                        let wait = waits.next().unwrap_or(Duration::from_secs(60));
                        tracing::warn!(
                            retry_in_s = wait.as_secs(),
                            "{why}; events wait, interactions are answered meanwhile"
                        );
                        if shared.life.gateway_stop.wait(wait) {
                            return;
                        }
                    }
                }
            };
            // `--shards auto` with a shared store: the shards are leased.
            if let (Shards::Auto, Some(pool)) = (shards, shared.bot.store.leases()) {
                let connect = super::leases::Connect {
                    token,
                    intents: loaded.plan.intents(),
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
                Err(why) => shared.life.fatal(None, why.to_string()),
            }
        })
        .map_err(|error| Stop::Start { what: "the Gateway's thread", error })
}

/// A thread for each shard this process holds.
fn shard_threads(
    shared: &Arc<Shared>,
    loaded: &Loaded,
    shards: Shards,
    token: String,
    info: &GatewayInfo,
) -> Result<Vec<std::thread::JoinHandle<()>>, Stop> {
    let intents = loaded.plan.intents();
    let (ids, count) = match shards {
        // A thread a shard: what the platform answers must not decide how
        // many this process makes.
        Shards::Auto if info.shards > gateway::MAX_AUTO_SHARDS => {
            return Err(Stop::TooManyShards { recommended: info.shards, most: gateway::MAX_AUTO_SHARDS })
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
                    shared.life.fatal(Some(id), why.0);
                }
            })
            .map_err(|error| Stop::Start { what: "a Gateway thread", error })?;
        threads.push(thread);
    }
    Ok(threads)
}
