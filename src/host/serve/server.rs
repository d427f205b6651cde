//! The server's parts and their lifetime: what `blkc serve` was given,
//! the state every request and run shares (broken into the bot, the front
//! door, the queue and the server's life), the pool of runs, reloads and
//! the drain. The front door is `front.rs`, the one run path
//! `pipeline.rs`, the Gateway's shards `shards.rs`.

use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use tokio::sync::Notify;

use super::front::Front;
use super::loaded::Loaded;
use super::metrics::Metrics;
use super::replay::Replay;
use super::shared::{keystroke_share, Bot, Config, FrontState, Life, Queue, Shared, Stop, Work, KEYSTROKE_QUEUE};
use crate::discord::ratelimit::RateLimiter;
use crate::run::eval::{self};

/// Event runs waiting for room in the run queue, past which a dispatch is
/// dropped (and counted) rather than held.
const EVENT_BUFFER: usize = 1024;

/// Runs the server until SIGTERM or SIGINT, then drains. Errors are what
/// stopped it from starting, or a Gateway refusal that stopped it.
/// The server's threads of time: the timed events, and the work waiting.
fn start_clocks(shared: &Arc<Shared>) -> Result<(super::timers::Timers, super::later::LaterThread), Stop> {
    let timers = super::timers::start(shared).map_err(|error| Stop::Start { what: "the timed events", error })?;
    let later = super::later::start(shared).map_err(|error| Stop::Start { what: "the waiting work", error })?;
    Ok((timers, later))
}

fn stop_clocks((timers, later): (super::timers::Timers, super::later::LaterThread)) {
    timers.stop();
    later.stop();
}

pub fn serve(mut config: Config) -> Result<(), Stop> {
    // Before any file is opened: the soft limit of open files up to the
    // hard one, and the connections capped by what is left for the runs.
    let (files_before, open_files) = super::door::raise_open_files();
    let cap = super::door::connection_cap(config.max_connections, open_files, config.workers.max(1));
    let door = super::door::Door::new(cap, config.max_connections_per_address);
    let loaded = match config.loaded.take() {
        Some(loaded) => Arc::new(loaded),
        None => Arc::new(super::loaded::load(&config.file).map_err(Stop::Refused)?),
    };
    let (jobs, queue) = crossbeam_channel::bounded::<Work>(config.queue.max(1));
    let (events, arriving) = crossbeam_channel::bounded::<Work>(EVENT_BUFFER);
    let (keystrokes, typed) = crossbeam_channel::bounded::<Work>(KEYSTROKE_QUEUE);
    let (answers, answered) = crossbeam_channel::bounded(super::later::ANSWER_BUFFER);
    let parts = Queue { jobs: jobs.clone(), events, keystrokes, answers, answered };
    let shared = Arc::new(shared(&mut config, loaded.clone(), parts));
    start_workers(&shared, config.workers.max(1), queue, (jobs, arriving))?;
    super::pool::start(&shared, &super::pool::Pool::share(keystroke_share(config.workers.max(1)), typed))?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(std::thread::available_parallelism().map_or(2, |n| n.get()).min(4))
        .thread_name("blkc-http")
        .enable_all()
        .build()
        .map_err(|error| Stop::Start { what: "the server's runtime", error })?;
    // One serving process to an SQLite store; several share PostgreSQL.
    let _claim = shared.bot.store.claim_for_serving().map_err(Stop::Store)?;
    let share = super::share::share_global_limit(&shared)?;
    // What this server took before a restart (an SQLite store).
    let taken = shared.bot.store.recent(super::clock::epoch_ms()).map_err(Stop::Store)?;
    shared.front.replay.lock().unwrap_or_else(|e| e.into_inner()).restore(taken, super::clock::epoch_ms());
    let _ = shared.life.runtime.set(runtime.handle().clone());
    let ((commands, events), gateway) = start_gateway(&shared, &loaded, &config)?;
    let clocks = start_clocks(&shared)?;
    let store = shared.bot.store.clone();
    let result = runtime.block_on(async move {
        let listening = super::front::Listen { at: config.listen, backlog: door.max(), reuse_port: config.reuse_port };
        let (listener, address) = super::front::listen(listening)?;
        let listen = address.map_or("none".to_string(), |a| a.to_string());
        let serving = Serving { listen, commands, events };
        let asked = listener.is_some().then_some(config.max_connections);
        // Listening for SIGHUP before the `serving` line: a reload asked
        // for as soon as the server says it serves must not end it.
        let hangups = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).ok();
        log_serving(&shared, serving, (files_before, open_files), &door, asked);
        let drain_timeout = drain_bound(&shared, config.drain_timeout);
        if let (Some(ready), Some(address)) = (config.on_ready.take(), address) {
            ready(address);
        }
        if config.watch {
            tokio::spawn(watch(shared.clone()));
        }
        if let Some(hangups) = hangups {
            tokio::spawn(reload_on_hangup(shared.clone(), hangups));
        }
        Front::new(door, config.reuse_port).serve(&shared, listener, drain_timeout).await;
        match shared.life.fatal.lock().unwrap_or_else(|e| e.into_inner()).take() {
            Some(why) => Err(Stop::Gateway(why)),
            None => Ok(()),
        }
    });
    stop_clocks(clocks);
    if let Some(threads) = gateway {
        super::shards::stop(threads);
    }
    if let Some(share) = share {
        share.stop();
    }
    store.finish();
    runtime.shutdown_timeout(Duration::from_millis(100));
    result
}

/// The Gateway's shards, when the file needs them, and how many commands
/// and events (not timed) the file has.
#[allow(clippy::type_complexity)]
fn start_gateway(
    shared: &Arc<Shared>,
    loaded: &Arc<Loaded>,
    config: &Config,
) -> Result<((usize, usize), Option<std::thread::JoinHandle<()>>), Stop> {
    let count = |kind| loaded.plan.trees.iter().filter(|t| t.kind == kind && t.timer.is_none()).count();
    // (Timed events are the server's own: they need no Gateway.)
    let (commands, events) =
        (count(crate::language::plan::TreeKind::Command), count(crate::language::plan::TreeKind::Event));
    // Events come over the Gateway; so do commands when no public key says
    // the application has an Interactions Endpoint URL, and the messages
    // an `await` waits for.
    let over_gateway = commands > 0 && config.public_key.is_none();
    let gateway = if events > 0 || over_gateway || loaded.plan.awaits {
        Some(super::shards::start(shared, loaded, config.shards, config.max_shards)?)
    } else {
        None
    };
    Ok(((commands, events), gateway))
}

/// The shared state of a server of `config`, serving `loaded`.
fn shared(config: &mut Config, loaded: Arc<Loaded>, queue: Queue) -> Shared {
    let limiter = Arc::new(RateLimiter::with_global(config.global_rate_limit));
    config.options.limiter = Some(limiter.clone());
    config.options.client = Some(Arc::new(eval::http::Client::new(config.options.http)));
    super::log::init(config.log, eval::redactor(&config.inputs, &[]));
    let metrics = Metrics::default();
    Shared {
        file: config.file.clone(),
        bot: Bot {
            inputs: config.inputs.clone(),
            options: config.options.clone(),
            store: config.store.clone(),
            loaded: RwLock::new(loaded.clone()),
            limiter,
            cache: super::events::Cache::default(),
            platform: Mutex::new(None),
        },
        front: FrontState {
            public_key: config.public_key.clone(),
            answer_within: config.answer_within,
            max_body: config.max_body,
            bodies: super::door::Bodies::new(config.max_body, metrics.bodies.clone(), metrics.body_bytes.clone()),
            replay: Mutex::new(Replay::default()),
            keystrokes: super::keystrokes::Keystrokes::default(),
        },
        queue,
        life: Life {
            busy: AtomicUsize::new(0),
            draining: AtomicBool::new(false),
            handing_over: AtomicBool::new(false),
            idle: Notify::new(),
            watched: Mutex::new(loaded.stamp),
            gateway_stop: crate::base::stop::StopSignal::new(),
            fatal: Mutex::new(None),
            fatal_notify: Notify::new(),
            runtime: std::sync::OnceLock::new(),
        },
        metrics,
        hooks: config.hooks.take(),
        clock: config.clock.clone(),
    }
}

/// The pool's threads, and the one that moves event runs from the
/// Gateway's buffer into the run queue.
fn start_workers(
    shared: &Arc<Shared>,
    workers: usize,
    queue: crossbeam_channel::Receiver<Work>,
    (jobs, arriving): (crossbeam_channel::Sender<Work>, crossbeam_channel::Receiver<Work>),
) -> Result<(), Stop> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    super::pool::start(shared, &super::pool::Pool::new(workers, cores, queue))?;
    std::thread::Builder::new()
        .name("blkc-events".into())
        .spawn(move || {
            for work in arriving {
                if jobs.send(work).is_err() {
                    return;
                }
            }
        })
        .map_err(|error| Stop::Start { what: "the events' thread", error })?;
    Ok(())
}

/// What the `serving` line says of the server.
struct Serving {
    listen: String,
    commands: usize,
    events: usize,
}

/// The `serving` line, with the open files and the connections' caps,
/// and a warning when the open-file limit lowered `asked`.
fn log_serving(
    shared: &Shared,
    serving: Serving,
    (files_before, open_files): (u64, u64),
    door: &super::door::Door,
    asked: Option<usize>,
) {
    // Behind play's page, the page is where the bot is reached; its own
    // port is play's business, never one to open.
    let listen = match shared.hooks.as_ref().and_then(|h| h.page.as_deref()) {
        Some(page) => format!("{page} (play's page; the bot answers it inside on {})", serving.listen),
        None => serving.listen,
    };
    tracing::info!(
        listen,
        file = %shared.file.display(),
        commands = serving.commands,
        events = serving.events,
        global_rate_limit = shared.metrics.global_limit.get(),
        open_files,
        backlog = asked.map_or(0, |_| super::front::backlog_in_effect(door.max())),
        max_connections = door.max(),
        per_address = door.per_address_max(),
        "serving"
    );
    if let Some(asked) = asked.filter(|asked| door.max() < *asked) {
        tracing::warn!(
            asked,
            open_files,
            soft_limit_was = files_before,
            "fewer connections than --max-connections: the open-file limit leaves room for this many beside the runs; \
             raise the hard limit (LimitNOFILE= in a systemd unit, ulimit -Hn)"
        );
    }
}

/// How long the drain waits: `--drain-timeout`, but never less than an
/// HTTP exchange takes to give its first answer, so that no exchange in
/// flight is left with no answer at all.
fn drain_bound(shared: &Shared, asked: Duration) -> Duration {
    let least = shared.front.answer_within + Duration::from_millis(500);
    if asked < least {
        tracing::warn!(
            drain_ms = least.as_millis() as u64,
            "--drain-timeout is shorter than an answer can take; the drain waits for the first answers"
        );
    }
    asked.max(least)
}

async fn reload_on_hangup(shared: Arc<Shared>, mut hangups: tokio::signal::unix::Signal) {
    while hangups.recv().await.is_some() {
        let s = shared.clone();
        let _ = tokio::task::spawn_blocking(move || reload(&s, "SIGHUP")).await;
    }
}

/// `--watch`: reloads when the file's modification time or size changes.
async fn watch(shared: Arc<Shared>) {
    loop {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let now = super::loaded::stamp(&shared.file);
        // A file with errors is tried once per change, not every half second.
        let changed = {
            let mut seen = shared.life.watched.lock().unwrap_or_else(|e| e.into_inner());
            let changed = now.is_some() && now != *seen;
            *seen = now.or(*seen);
            changed
        };
        if changed {
            let s = shared.clone();
            let _ = tokio::task::spawn_blocking(move || reload(&s, "change")).await;
        }
    }
}

/// Loads the file again: a clean file replaces the plan for new runs (runs
/// in flight keep theirs); a file with errors is refused and logged.
fn reload(shared: &Shared, why: &str) {
    // Offline, nothing is sent: no secret is needed (as at the start).
    let ready = |loaded| match shared.bot.options.offline {
        true => Ok(loaded),
        false => super::loaded::ready(loaded, &shared.bot.inputs),
    };
    let reloaded = super::loaded::load(&shared.file).and_then(ready);
    if let Some(told) = shared.hooks.as_ref().and_then(|h| h.reloaded.as_ref()) {
        told(reloaded.as_ref().err());
    }
    match reloaded {
        Ok(loaded) => {
            let commands =
                loaded.plan.trees.iter().filter(|t| t.kind == crate::language::plan::TreeKind::Command).count();
            *shared.bot.loaded.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(loaded);
            shared.metrics.reload("ok");
            tracing::info!(on = why, commands, "reloaded");
        }
        Err(refused) => {
            shared.metrics.reload("refused");
            // One line a problem, its parts as fields (the first 20: the
            // file's own `blkc check` has the rest), then the refusal.
            let file = shared.file.display().to_string();
            for p in refused.problems.iter().take(20) {
                tracing::error!(code = p.code, file, line = p.line, column = p.column, help = p.help, "{}", p.message);
            }
            let errors = refused.problems.len();
            let detail = refused.problems.is_empty().then_some(refused.rendered);
            tracing::error!(
                on = why,
                errors,
                detail,
                "reload refused: the file has errors or needs a secret without a value; the previous version keeps serving"
            );
        }
    }
}
