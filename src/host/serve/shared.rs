//! What every part of a serving process shares ([`Shared`]: the bot, the
//! front door's state, the queues, the process's life and its metrics),
//! how it was configured ([`Config`]), the work a queue carries
//! ([`Work`]) and the guards that count it in flight ([`Queued`],
//! [`Busy`]), and how serving stops ([`Stop`], [`drain`]).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, SystemTime};

use tokio::sync::Notify;

use super::loaded::Loaded;
use super::log::LogFormat;
use super::metrics::Metrics;
use super::replay::Replay;
use super::trigger::Trigger;
use crate::discord::ratelimit::RateLimiter;
use crate::discord::rest::Platform;
use crate::discord::signature::PublicKey;
use crate::run::eval::{Inputs, Options};

/// What `blkc serve` was given.
pub struct Config {
    /// The clock the bot's time follows: timed events, cooldowns, clicks.
    pub clock: super::clock::Clock,
    pub file: PathBuf,
    /// Where interactions arrive; none for a file of events only.
    pub listen: Option<SocketAddr>,
    /// Share the port with other processes (SO_REUSEPORT), and stop
    /// listening at once on SIGTERM.
    pub reuse_port: bool,
    /// Needed for interactions only.
    pub public_key: Option<PublicKey>,
    /// Which Gateway shards this process holds.
    pub shards: Shards,
    /// The most shards this process holds with `--shards auto` and a shared
    /// store (`--max-shards`).
    pub max_shards: Option<u32>,
    /// Requests a second to the platform, across routes (its global limit).
    pub global_rate_limit: usize,
    /// Secrets and the bot token (`vars` empty): each run adds its own.
    pub inputs: Inputs,
    /// The runs' options: HTTP limits, `--platform`, memory.
    pub options: Options,
    pub store: crate::run::store::Backend,
    /// The first answer goes out by then: the run's first reply, or "thinking".
    pub answer_within: Duration,
    pub workers: usize,
    pub queue: usize,
    pub max_body: usize,
    pub max_connections: usize,
    /// Connections one client address may hold; 0: half the cap.
    pub max_connections_per_address: usize,
    pub drain_timeout: Duration,
    pub watch: bool,
    pub log: LogFormat,
    /// The file, already loaded by the caller (else `serve` loads it).
    pub loaded: Option<Loaded>,
    /// Called with the address once it is bound (tests and `--listen :0`).
    pub on_ready: Option<Box<dyn FnOnce(SocketAddr) + Send>>,
    /// What `blkc play` adds; `blkc serve` has none.
    pub hooks: Option<Hooks>,
}

/// What `blkc play` adds to a server: it is told of each run as it ends,
/// and may tick a timed event at once.
pub struct Hooks {
    /// Given each run's record, as JSON text (src/host/serve/inspect.rs).
    pub ran: Box<dyn Fn(String) + Send + Sync>,
    /// The names of timed events to tick now.
    pub ticks: crossbeam_channel::Receiver<String>,
    /// Asks for the waiting work due now (a test moved the clock): the
    /// number of runs queued is sent back.
    pub later: crossbeam_channel::Receiver<crossbeam_channel::Sender<usize>>,
    /// Told the id of each member's message read for an `await`'s answer,
    /// once it was (whether it answered one or not).
    pub heard: Option<Heard>,
    /// Told when the server is to stop, drain and return, as on SIGTERM
    /// (a conversation test's stage ends so).
    pub stop: Option<Arc<tokio::sync::Notify>>,
    /// Told how each reload went: why it was refused (the file's errors,
    /// a secret without a value), or nothing when it was taken.
    pub reloaded: Option<Reloaded>,
    /// The address its users reach when the server stands behind a page
    /// (play's): the `serving` line names it first, and its own loopback
    /// endpoint as where the bot answers inside.
    pub page: Option<String>,
}

/// Told a reload's refusal, or none: [`Hooks::reloaded`].
pub type Reloaded = Box<dyn Fn(Option<&super::loaded::Refused>) + Send + Sync>;

/// Told a message's id: [`Hooks::heard`].
pub type Heard = Box<dyn Fn(&str) + Send + Sync>;

/// The Gateway shards a process holds (`--shard ID/COUNT`, `--shards auto`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shards {
    /// Every shard the platform recommends, in this process.
    Auto,
    /// Shard `id` of `count`.
    One { id: u32, count: u32 },
}

/// What every request and run shares, in its parts.
pub struct Shared {
    pub clock: super::clock::Clock,
    pub file: PathBuf,
    pub bot: Bot,
    pub front: FrontState,
    pub queue: Queue,
    pub life: Life,
    pub metrics: Metrics,
    pub hooks: Option<Hooks>,
}

/// What a run needs: the file, its inputs, the store and the platform.
pub struct Bot {
    pub inputs: Inputs,
    pub options: Options,
    pub store: crate::run::store::Backend,
    pub loaded: RwLock<Arc<Loaded>>,
    pub limiter: Arc<RateLimiter>,
    /// What the Gateway said of servers and channels.
    pub cache: super::events::Cache,
    pub(super) platform: Mutex<Option<Platform>>,
}

impl Bot {
    /// The file as loaded last.
    pub fn loaded(&self) -> Arc<Loaded> {
        self.loaded.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The platform's API client, one per process (its connections are
    /// reused by every run); made again only when a reload changes the
    /// file's platform.
    pub fn platform(&self, loaded: &Loaded) -> Platform {
        let base = match &self.options.platform {
            Some(p) => p.base_url(),
            None => loaded.plan.platform.clone(),
        };
        let mut cached = self.platform.lock().unwrap_or_else(|e| e.into_inner());
        match &*cached {
            Some(p) if p.base() == base.trim_end_matches('/') => p.clone(),
            _ => {
                let p = Platform::new(&base, self.inputs.bot_token.clone(), self.limiter.clone());
                *cached = Some(p.clone());
                p
            }
        }
    }
}

/// What the front door keeps between requests.
pub struct FrontState {
    pub public_key: Option<PublicKey>,
    pub answer_within: Duration,
    pub max_body: usize,
    /// The memory of the request bodies in flight, in total.
    pub bodies: Arc<super::door::Bodies>,
    pub replay: Mutex<Replay>,
    /// Autocomplete keystrokes, limited per user.
    pub keystrokes: super::keystrokes::Keystrokes,
}

/// Where triggers wait for a run.
pub struct Queue {
    pub jobs: crossbeam_channel::Sender<Work>,
    /// Event runs on their way to `jobs`: a shard's reader hands them over
    /// here without ever waiting (it also reads the ACKs and keeps the
    /// heartbeat's time); a thread of its own waits for room in the queue.
    pub events: crossbeam_channel::Sender<Work>,
    /// Autocomplete keystrokes, run by a share of threads of their own
    /// ([`keystroke_share`] of `--workers`): a flood of them (each user
    /// within their own limit) waits there, or is offered no choices, and
    /// never delays a command's answer.
    pub keystrokes: crossbeam_channel::Sender<Work>,
    /// Members' messages that may answer an `await`, on their way to the
    /// thread of the waiting work (`later.rs`), which takes the wait.
    pub answers: crossbeam_channel::Sender<Said>,
    pub answered: crossbeam_channel::Receiver<Said>,
}

/// A member's message that may answer their `await` in its channel.
pub struct Said {
    /// The message's id.
    pub id: String,
    /// `user:SERVER:USER`.
    pub owner: String,
    /// `~message:CHANNEL`.
    pub key: String,
    pub text: String,
}

/// Keystrokes waiting for a thread; past it, a keystroke is offered no
/// choices at once.
pub const KEYSTROKE_QUEUE: usize = 256;
/// The keystrokes' threads: a quarter of `--workers`, 1 to 16.
pub fn keystroke_share(workers: usize) -> usize {
    (workers / 4).clamp(1, 16)
}

/// The server's life: what is in flight, the drain, reloads, and what
/// stops it.
pub struct Life {
    /// HTTP exchanges and runs not finished yet.
    pub busy: AtomicUsize,
    pub draining: AtomicBool,
    /// Draining with `--reuse-port`: the listener is closed, so the other
    /// processes on the port take new connections; interactions on this
    /// one's open connections are still answered, each closing its
    /// connection, so that its client reconnects to them.
    pub handing_over: AtomicBool,
    pub idle: Notify,
    /// The file's stamp when `--watch` last looked.
    pub watched: Mutex<Option<(SystemTime, u64)>>,
    /// Ends the Gateway's shards.
    pub gateway_stop: crate::base::stop::StopSignal,
    /// Why the server must stop (a Gateway close code retrying cannot fix).
    pub fatal: Mutex<Option<String>>,
    pub fatal_notify: Notify,
    /// The front door's runtime, for interactions the Gateway delivers.
    pub runtime: std::sync::OnceLock<tokio::runtime::Handle>,
}

impl Life {
    /// Stops the server for good with `why` (a shard's, when it says which).
    pub fn fatal(&self, shard: Option<u32>, why: String) {
        match shard {
            Some(shard) => tracing::error!(shard, "{why}"),
            None => tracing::error!("{why}"),
        }
        *self.fatal.lock().unwrap_or_else(|e| e.into_inner()) = Some(why);
        self.gateway_stop.set();
        self.fatal_notify.notify_one();
    }

    pub fn draining(&self) -> bool {
        self.draining.load(Ordering::SeqCst)
    }

    pub fn handing_over(&self) -> bool {
        self.handing_over.load(Ordering::SeqCst)
    }
}

/// Why the server stopped, or did not start.
#[derive(Debug)]
pub enum Stop {
    /// The store: it cannot be reached, or another process serves it (B311).
    Store(crate::run::store::StoreError),
    /// The Gateway refused for good (a wrong token, a disallowed intent):
    /// the reason, as the shard said it.
    Gateway(String),
    /// The file cannot be served (its diagnostics, or why it cannot be read).
    Refused(super::loaded::Refused),
    /// The file has events, and events need the bot token.
    NoBotToken,
    /// The address to listen on cannot be listened on.
    Listen { at: SocketAddr, error: std::io::Error },
    /// A thread, or the server's runtime, could not be started.
    Start { what: &'static str, error: std::io::Error },
    /// The platform recommends more shards than one process holds.
    TooManyShards { recommended: u32, most: u32 },
}

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stop::Store(e) => write!(f, "{e}"),
            Stop::Gateway(why) => f.write_str(why),
            Stop::Refused(refused) => f.write_str(&refused.rendered),
            Stop::NoBotToken => f.write_str(
                "the file has event trees, and events need the bot token: set BLKC_BOT_TOKEN or give `--bot-token-file`",
            ),
            Stop::Listen { at, error } => write!(f, "cannot listen on {at}: {error}"),
            Stop::Start { what, error } => write!(f, "cannot start {what}: {error}"),
            Stop::TooManyShards { recommended, most } => write!(
                f,
                "the platform recommends {recommended} shards; one process holds at most {most} with `--shards auto`: \
                 run several processes, each with `--shard ID/{recommended}` (docs/serve.md, \"Shards\")"
            ),
        }
    }
}

impl std::error::Error for Stop {}

/// SIGTERM or SIGINT.
pub async fn stop_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut term), Ok(mut int)) = (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
}

/// Stops taking interactions, and waits for those in flight to be answered
/// in full, for at most `timeout`.
pub async fn drain(shared: Arc<Shared>, timeout: Duration) {
    let life = &shared.life;
    life.draining.store(true, Ordering::SeqCst);
    // The runs, as `blkc_runs_in_flight` counts them (an HTTP exchange
    // waiting on its run's first answer is that run's, not another).
    tracing::info!(in_flight = shared.metrics.in_flight.get(), "draining");
    let deadline = tokio::time::Instant::now() + timeout;
    while life.busy.load(Ordering::SeqCst) > 0 {
        let notified = life.idle.notified();
        if life.busy.load(Ordering::SeqCst) == 0 {
            break;
        }
        if tokio::time::timeout_at(deadline, notified).await.is_err() {
            tracing::warn!(unfinished = shared.metrics.in_flight.get(), "drain timed out");
            return;
        }
    }
    tracing::info!("stopped");
}

/// A trigger on its way through the queue.
pub struct Work {
    pub _queued: Queued,
    pub trigger: Trigger,
}

/// A run from when it is queued until it ends, however it ends (a full
/// queue, a duplicate, a panic): it holds the server busy and counts in
/// flight while it lives, so no path can forget to give either back.
pub struct Queued(Busy);

impl Queued {
    pub fn new(shared: &Arc<Shared>) -> Queued {
        shared.metrics.in_flight.inc();
        Queued(Busy::new(shared))
    }
}

impl Drop for Queued {
    fn drop(&mut self) {
        self.0 .0.metrics.in_flight.dec();
    }
}

/// Counts an exchange or a run in flight while it lives.
pub struct Busy(Arc<Shared>);

impl Busy {
    pub fn new(shared: &Arc<Shared>) -> Busy {
        shared.life.busy.fetch_add(1, Ordering::SeqCst);
        Busy(shared.clone())
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        if self.0.life.busy.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.life.idle.notify_waiters();
        }
    }
}
