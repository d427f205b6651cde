//! The server: the HTTP front door, the pool of runs, the answers, the log,
//! reloads and the drain.

use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant, SystemTime};

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{json, Value as Json};
use tokio::sync::{oneshot, Notify};

use super::interaction::{self, Interaction};
use super::message::{self, pieces};
use super::metrics::Metrics;
use super::platform::{Platform, RateLimiter};
use super::signature::{self, PublicKey};
use super::Loaded;
use crate::eval::{self, Event, Inputs, Options, Redactor};

/// How long an interaction token lasts: answers after this cannot be sent.
const TOKEN_LIFETIME: Duration = Duration::from_secs(15 * 60);
/// How long an interaction id is remembered: past it, the timestamp of a
/// replay is stale anyway.
const REPLAY_MEMORY: Duration = Duration::from_secs(6 * 60);
const REPLAY_MAX: usize = 500_000;
/// Event runs waiting for room in the run queue, past which a dispatch is
/// dropped (and counted) rather than held.
const EVENT_BUFFER: usize = 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    Text,
    Json,
}

/// What `blkc serve` was given.
pub struct Config {
    pub file: PathBuf,
    /// Where interactions arrive; none for a file of events only.
    pub listen: Option<SocketAddr>,
    /// Needed for interactions only.
    pub public_key: Option<PublicKey>,
    /// Which Gateway shards this process holds.
    pub shards: Shards,
    /// Requests a second to the platform, across routes (its global limit).
    pub global_rate_limit: usize,
    /// Secrets and the bot token (`vars` empty): each run adds its own.
    pub inputs: Inputs,
    /// The runs' options: HTTP limits, `--platform`, memory.
    pub options: Options,
    pub store: crate::store::Backend,
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
    /// Called with the address once it is bound (tests and `--listen :0`).
    pub on_ready: Option<Box<dyn FnOnce(SocketAddr) + Send>>,
}

/// The Gateway shards a process holds (`--shard ID/COUNT`, `--shards auto`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shards {
    /// Every shard the platform recommends, in this process.
    Auto,
    /// Shard `id` of `count`.
    One { id: u32, count: u32 },
}

/// How long a stop waits for the Gateway's shards to close their
/// connections after the drain.
const SHARDS_STOP: Duration = Duration::from_secs(3);

/// What every request and run shares.
struct Shared {
    file: PathBuf,
    public_key: Option<PublicKey>,
    inputs: Inputs,
    options: Options,
    store: crate::store::Backend,
    answer_within: Duration,
    max_body: usize,
    /// The memory of the request bodies in flight, in total.
    bodies: Arc<super::door::Bodies>,
    loaded: RwLock<Arc<Loaded>>,
    metrics: Metrics,
    limiter: Arc<RateLimiter>,
    jobs: crossbeam_channel::Sender<Work>,
    /// Event runs on their way to `jobs`: a shard's reader hands them over
    /// here without ever waiting (it also reads the ACKs and keeps the
    /// heartbeat's time); a thread of its own waits for room in the queue.
    events: crossbeam_channel::Sender<Work>,
    replay: Mutex<Replay>,
    log: Log,
    /// HTTP exchanges and runs not finished yet.
    busy: AtomicUsize,
    draining: AtomicBool,
    idle: Notify,
    /// The file's stamp when `--watch` last looked.
    watched: Mutex<Option<(SystemTime, u64)>>,
    /// What the Gateway said of servers and channels.
    cache: super::events::Cache,
    /// Ends the Gateway's shards.
    gateway_stop: Arc<AtomicBool>,
    /// Why the server must stop (a Gateway close code retrying cannot fix).
    fatal: Mutex<Option<String>>,
    fatal_notify: Notify,
    platform: Mutex<Option<Platform>>,
}

/// What the pool runs.
enum Work {
    Command(Box<Job>),
    Event(EventJob),
}

/// One event tree to run.
struct EventJob {
    _queued: Queued,
    run: super::events::EventRun,
    loaded: Arc<Loaded>,
    /// What identifies the delivery across processes sharing the store,
    /// when it was received (ms since the epoch) and how long it counts.
    seen: Option<(String, i64, Duration)>,
}

/// Milliseconds since the Unix epoch.
fn epoch_ms() -> i64 {
    SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

/// Interaction ids seen lately, oldest first.
#[derive(Default)]
struct Replay {
    seen: HashMap<String, Instant>,
    order: VecDeque<(Instant, String)>,
}

impl Replay {
    /// What an earlier run of this server took, from the store: each id
    /// remembered for what is left of its time.
    fn restore(&mut self, taken: Vec<(String, i64)>, now_ms: i64) {
        let now = Instant::now();
        for (key, expires_ms) in taken {
            let Some(id) = key.strip_prefix("interaction:") else { continue };
            let left = Duration::from_millis(expires_ms.saturating_sub(now_ms).max(0) as u64).min(REPLAY_MEMORY);
            let at = now.checked_sub(REPLAY_MEMORY - left).unwrap_or(now);
            self.seen.insert(id.to_string(), at);
            self.order.push_back((at, id.to_string()));
        }
    }

    /// Whether `id` is new (and now remembered).
    fn first(&mut self, id: &str, now: Instant) -> bool {
        while let Some((at, _)) = self.order.front() {
            if now.duration_since(*at) < REPLAY_MEMORY && self.order.len() < REPLAY_MAX {
                break;
            }
            if let Some((_, old)) = self.order.pop_front() {
                self.seen.remove(&old);
            }
        }
        if self.seen.contains_key(id) {
            return false;
        }
        self.seen.insert(id.to_string(), now);
        self.order.push_back((now, id.to_string()));
        true
    }
}

/// One command to run.
struct Job {
    _queued: Queued,
    interaction: Interaction,
    loaded: Arc<Loaded>,
    answer: Arc<Answer>,
    received: Instant,
}

/// Where the interaction's answer stands; the run and the HTTP exchange
/// both move it on, under its lock.
struct Answer {
    phase: Mutex<Phase>,
}

enum Phase {
    /// The platform still waits on the HTTP exchange for the first answer.
    Waiting(Option<oneshot::Sender<Json>>),
    /// The first answer was a message; more go as follow-ups.
    Answered,
    /// The first answer was "thinking": the first message edits it.
    Deferred { edited: bool },
}

/// What to do with a message, decided under the lock and done after it.
enum Delivery {
    Sent,
    Edit,
    FollowUp,
}

impl Answer {
    fn deliver(&self, message: Json) -> (Delivery, Json) {
        let mut phase = self.phase.lock().unwrap_or_else(|e| e.into_inner());
        match &mut *phase {
            Phase::Waiting(tx) => {
                if let Some(tx) = tx.take() {
                    let _ = tx.send(message.clone());
                }
                *phase = Phase::Answered;
                (Delivery::Sent, message)
            }
            Phase::Deferred { edited } if !*edited => {
                *edited = true;
                (Delivery::Edit, message)
            }
            _ => (Delivery::FollowUp, message),
        }
    }
}

/// The operator's log: a line per interaction and per event of the server,
/// on standard error, through the redactor.
struct Log {
    format: LogFormat,
    redactor: Redactor,
    out: Mutex<std::io::Stderr>,
}

impl Log {
    fn write(&self, level: &str, message: &str, fields: &[(&str, Json)], token: Option<&str>) {
        use std::io::Write as _;
        let mut line = match self.format {
            LogFormat::Json => {
                let mut o = serde_json::Map::new();
                o.insert("time".into(), rfc3339(SystemTime::now()).into());
                o.insert("level".into(), level.into());
                o.insert("message".into(), message.into());
                for (k, v) in fields {
                    o.insert((*k).into(), v.clone());
                }
                crate::display::one_line(&Json::Object(o).to_string())
            }
            LogFormat::Text => {
                let mut s = format!("{} {level:<5} {}", rfc3339(SystemTime::now()), crate::display::one_line(message));
                for (k, v) in fields {
                    let v = match v {
                        Json::String(t) => t.clone(),
                        other => other.to_string(),
                    };
                    s.push_str(&format!(" {k}={}", logfmt_value(&crate::display::one_line(&v))));
                }
                s
            }
        };
        // The interaction's token is a credential: never in the log.
        if let Some(t) = token.filter(|t| t.len() >= 8) {
            line = line.replace(t, "[interaction token]");
        }
        let line = self.redactor.redact(&line);
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        let _ = writeln!(out, "{line}");
    }
}

/// A value of a text log line as logfmt writes it: bare when it is one
/// word, else quoted with `"` and `\` escaped, so a value holding blanks
/// (a user's name, a platform's message) cannot add a field of its own
/// (`outcome=ran user=1` inside a value reads as one quoted value).
fn logfmt_value(v: &str) -> std::borrow::Cow<'_, str> {
    let bare = !v.is_empty() && !v.chars().any(|c| c.is_whitespace() || c == '"' || c == '=' || c == '\\');
    if bare {
        return v.into();
    }
    let mut out = String::with_capacity(v.len() + 2);
    out.push('"');
    for c in v.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out.into()
}

/// `2026-11-23T10:00:00.123Z`.
fn rfc3339(t: SystemTime) -> String {
    let d = t.duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Howard Hinnant's days-to-civil.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_millis()
    )
}

/// Why the server stopped, or did not start.
#[derive(Debug)]
pub enum Stop {
    /// The store: it cannot be reached, or another process serves it (B311).
    Store(String),
    /// The Gateway refused for good (a wrong token, a disallowed intent).
    Gateway(String),
    /// Anything else that kept it from starting.
    Start(String),
}

impl From<String> for Stop {
    fn from(why: String) -> Stop {
        Stop::Start(why)
    }
}

/// Runs the server until SIGTERM or SIGINT, then drains. Errors are what
/// stopped it from starting, or a Gateway refusal that stopped it.
pub fn serve(mut config: Config) -> Result<(), Stop> {
    // Before any file is opened: the soft limit of open files up to the
    // hard one, and the connections capped by what is left for the runs.
    let (files_before, open_files) = super::door::raise_open_files();
    let cap = super::door::connection_cap(config.max_connections, open_files, config.workers.max(1));
    let door = super::door::Door::new(cap, config.max_connections_per_address);
    let loaded = Arc::new(super::load(&config.file)?);
    let limiter = Arc::new(RateLimiter::with_global(config.global_rate_limit));
    config.options.limiter = Some(limiter.clone());
    config.options.client = Some(Arc::new(eval::http::Client::new(config.options.http)));
    let (jobs, queue) = crossbeam_channel::bounded::<Work>(config.queue.max(1));
    let (events, arriving) = crossbeam_channel::bounded::<Work>(EVENT_BUFFER);
    let redactor = eval::redactor(&config.inputs, &[]);
    let shared = Arc::new(Shared {
        file: config.file.clone(),
        public_key: config.public_key.clone(),
        inputs: config.inputs.clone(),
        options: config.options.clone(),
        store: config.store.clone(),
        answer_within: config.answer_within,
        max_body: config.max_body,
        bodies: super::door::Bodies::new(config.max_body),
        loaded: RwLock::new(loaded.clone()),
        metrics: Metrics::default(),
        limiter,
        jobs: jobs.clone(),
        events,
        replay: Mutex::new(Replay::default()),
        log: Log { format: config.log, redactor, out: Mutex::new(std::io::stderr()) },
        busy: AtomicUsize::new(0),
        draining: AtomicBool::new(false),
        idle: Notify::new(),
        watched: Mutex::new(loaded.stamp),
        cache: super::events::Cache::default(),
        gateway_stop: Arc::new(AtomicBool::new(false)),
        fatal: Mutex::new(None),
        fatal_notify: Notify::new(),
        platform: Mutex::new(None),
    });
    start_workers(&shared, config.workers.max(1), queue, (jobs, arriving))?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(std::thread::available_parallelism().map_or(2, |n| n.get()).min(4))
        .thread_name("blkc-http")
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the server: {e}"))?;
    // One serving process to an SQLite store; several share PostgreSQL.
    let _claim = match &shared.store {
        crate::store::Backend::Sqlite(path, _) => Some(crate::store::claim_for_serving(path).map_err(Stop::Store)?),
        crate::store::Backend::Postgres(_) => None,
    };
    let share = share_global_limit(&shared)?;
    // What this server took before a restart (an SQLite store).
    let taken = shared.store.recent(epoch_ms()).map_err(Stop::Store)?;
    shared.replay.lock().unwrap_or_else(|e| e.into_inner()).restore(taken, epoch_ms());
    let commands = loaded.plan.trees.iter().filter(|t| t.kind == crate::plan::TreeKind::Command).count();
    let events = loaded.plan.trees.iter().filter(|t| t.kind == crate::plan::TreeKind::Event).count();
    let gateway = if events > 0 { Some(start_gateway(&shared, &loaded, config.shards)?) } else { None };
    let store = shared.store.clone();
    let result = runtime.block_on(async move {
        let (listener, address) = listen(config.listen).await?;
        let serving = [
            ("listen", address.map_or("none".to_string(), |a| a.to_string()).into()),
            ("file", shared.file.display().to_string().into()),
            ("commands", commands.into()),
            ("events", events.into()),
            ("global_rate_limit", shared.metrics.global_limit.load(Ordering::Relaxed).into()),
        ];
        log_serving(
            &shared,
            serving,
            (files_before, open_files),
            &door,
            listener.is_some().then_some(config.max_connections),
        );
        let drain_timeout = drain_bound(&shared, config.drain_timeout);
        if let (Some(ready), Some(address)) = (config.on_ready.take(), address) {
            ready(address);
        }
        if config.watch {
            tokio::spawn(watch(shared.clone()));
        }
        tokio::spawn(reload_on_hangup(shared.clone()));
        Front { door, emfile_logged: None }.serve(&shared, listener, drain_timeout).await;
        match shared.fatal.lock().unwrap_or_else(|e| e.into_inner()).take() {
            Some(why) => Err(Stop::Gateway(why)),
            None => Ok(()),
        }
    });
    if let Some(threads) = gateway {
        stop_shards(threads);
    }
    if let Some(share) = share {
        share.stop();
    }
    store.finish();
    runtime.shutdown_timeout(Duration::from_millis(100));
    result
}

/// Waits for the Gateway's shards to end: they do on their own within a
/// read time-out (or a connect's); the process does not wait on a Gateway
/// longer than [`SHARDS_STOP`].
fn stop_shards(threads: Vec<std::thread::JoinHandle<()>>) {
    let until = Instant::now() + SHARDS_STOP;
    while threads.iter().any(|t| !t.is_finished()) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    for t in threads.into_iter().filter(|t| t.is_finished()) {
        let _ = t.join();
    }
}

/// The pool's threads, and the one that moves event runs from the
/// Gateway's buffer into the run queue.
fn start_workers(
    shared: &Arc<Shared>,
    workers: usize,
    queue: crossbeam_channel::Receiver<Work>,
    (jobs, arriving): (crossbeam_channel::Sender<Work>, crossbeam_channel::Receiver<Work>),
) -> Result<(), String> {
    for i in 0..workers {
        let (shared, queue) = (shared.clone(), queue.clone());
        std::thread::Builder::new()
            .name(format!("blkc-run-{i}"))
            .spawn(move || {
                for work in queue {
                    // A run's own panics are caught inside it, where its user
                    // can be told; this keeps the worker for anything else.
                    let done = caught(|| match work {
                        Work::Command(job) => run_job(&shared, *job),
                        Work::Event(job) => run_event(&shared, job),
                    });
                    if let Err(panicked) = done {
                        shared.log.write("error", "a run failed", &[("error", panicked.into())], None);
                    }
                }
            })
            .map_err(|e| format!("cannot start a run thread: {e}"))?;
    }
    std::thread::Builder::new()
        .name("blkc-events".into())
        .spawn(move || {
            for work in arriving {
                if jobs.send(work).is_err() {
                    return;
                }
            }
        })
        .map_err(|e| format!("cannot start a thread: {e}"))?;
    Ok(())
}

/// The `serving` line, with the open files and the connections' caps,
/// and a warning when the open-file limit lowered `asked`.
fn log_serving(
    shared: &Shared,
    serving: [(&str, Json); 5],
    (files_before, open_files): (u64, u64),
    door: &super::door::Door,
    asked: Option<usize>,
) {
    let mut fields = serving.to_vec();
    fields.extend([
        ("open_files", open_files.into()),
        ("max_connections", door.max().into()),
        ("per_address", door.per_address_max().into()),
    ]);
    shared.log.write("info", "serving", &fields, None);
    if let Some(asked) = asked.filter(|asked| door.max() < *asked) {
        shared.log.write(
            "warn",
            "fewer connections than --max-connections: the open-file limit leaves room for this many beside the runs; \
             raise the hard limit (LimitNOFILE= in a systemd unit, ulimit -Hn)",
            &[("asked", asked.into()), ("open_files", open_files.into()), ("soft_limit_was", files_before.into())],
            None,
        );
    }
}

/// The listener at `at`, and the address it is bound to (`:0` picks one).
async fn listen(at: Option<SocketAddr>) -> Result<(Option<tokio::net::TcpListener>, Option<SocketAddr>), String> {
    let Some(at) = at else { return Ok((None, None)) };
    let listener = tokio::net::TcpListener::bind(at).await.map_err(|e| format!("cannot listen on {at}: {e}"))?;
    let address = listener.local_addr().map_err(|e| e.to_string())?;
    Ok((Some(listener), Some(address)))
}

/// The accept loop's state: the door, and when running out of open files
/// was last logged.
struct Front {
    door: Arc<super::door::Door>,
    emfile_logged: Option<Instant>,
}

impl Front {
    /// Takes connections until SIGTERM, SIGINT or a Gateway refusal; then
    /// drains with the listener still open, so new requests are answered
    /// 503 (and `/healthz` says so) until the runs in flight are done.
    async fn serve(mut self, shared: &Arc<Shared>, listener: Option<tokio::net::TcpListener>, drain_timeout: Duration) {
        let stop = stop_signal();
        tokio::pin!(stop);
        loop {
            tokio::select! {
                _ = &mut stop => break,
                _ = shared.fatal_notify.notified() => break,
                accepted = accept(listener.as_ref()) => self.take(shared, accepted).await,
            }
        }
        shared.gateway_stop.store(true, Ordering::SeqCst);
        let drained = drain(shared.clone(), drain_timeout);
        tokio::pin!(drained);
        loop {
            tokio::select! {
                _ = &mut drained => break,
                accepted = accept(listener.as_ref()) => self.take(shared, accepted).await,
            }
        }
    }

    /// Takes a new connection through the door, or backs off when the
    /// process cannot accept one (out of open files: spinning on the error
    /// would take a core and starve the runs).
    async fn take(&mut self, shared: &Arc<Shared>, accepted: std::io::Result<(tokio::net::TcpStream, SocketAddr)>) {
        let (stream, peer) = match accepted {
            Ok(a) => a,
            Err(e) => {
                shared.metrics.connection_refused("accept");
                if self.emfile_logged.is_none_or(|t| t.elapsed() > Duration::from_secs(10)) {
                    self.emfile_logged = Some(Instant::now());
                    shared.log.write(
                        "error",
                        "cannot accept a connection; backing off (new connections wait in the backlog)",
                        &[("error", e.to_string().into())],
                        None,
                    );
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
                return;
            }
        };
        let admitted = match self.door.admit(peer.ip()) {
            Ok(a) => a,
            Err(why) => {
                // Over the cap, or this address's share: closed at once.
                shared.metrics.connection_refused(match why {
                    super::door::Refused::Full => "full",
                    super::door::Refused::Address => "address",
                });
                return;
            }
        };
        let _ = stream.set_nodelay(true);
        let shared = shared.clone();
        tokio::spawn(async move {
            // A connection that sends nothing gives its place back soon.
            let mut first = [0u8; 1];
            match tokio::time::timeout(super::door::FIRST_BYTE, stream.peek(&mut first)).await {
                Ok(Ok(n)) if n > 0 => {}
                Ok(_) => return,
                Err(_) => {
                    shared.metrics.connection_refused("silent");
                    return;
                }
            }
            let service = hyper::service::service_fn(move |req| handle(shared.clone(), req));
            let _ = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(Duration::from_secs(10))
                .max_buf_size(64 * 1024)
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .await;
            drop(admitted);
        });
    }
}

/// How long the drain waits: `--drain-timeout`, but never less than an
/// HTTP exchange takes to give its first answer, so that no exchange in
/// flight is left with no answer at all.
fn drain_bound(shared: &Shared, asked: Duration) -> Duration {
    let least = shared.answer_within + Duration::from_millis(500);
    if asked < least {
        shared.log.write(
            "warn",
            "--drain-timeout is shorter than an answer can take; the drain waits for the first answers",
            &[("drain_ms", (least.as_millis() as u64).into())],
            None,
        );
    }
    asked.max(least)
}

/// How often a process says it is alive in a shared store.
const CHECK_IN_EVERY: Duration = Duration::from_millis(500);

/// This process's part in sharing the platform's global rate limit with
/// the other processes of the bot: they check in to the shared store, and
/// each takes an even share.
struct Share {
    me: String,
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<()>,
    store: crate::store::Backend,
}

impl Share {
    /// Stops checking in, and leaves the others its share.
    fn stop(self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = self.thread.join();
        let _ = self.store.check_out(&self.me);
    }
}

/// A unique name for this process among those sharing the store.
fn process_name() -> String {
    let mut host = [0u8; 256];
    // SAFETY: the buffer is as long as said; the name ends at its NUL.
    let named = unsafe { libc::gethostname(host.as_mut_ptr().cast(), host.len()) } == 0;
    let host = if named {
        String::from_utf8_lossy(host.split(|b| *b == 0).next().unwrap_or_default()).into_owned()
    } else {
        "host".to_string()
    };
    let nanos = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    format!("{host}:{}:{nanos:x}", std::process::id())
}

/// With a shared store: checks in before anything is sent (so the first
/// requests already keep to the share), then twice a second; the share
/// follows processes starting and stopping. A store that cannot be reached
/// leaves the last share in place.
fn share_global_limit(shared: &Arc<Shared>) -> Result<Option<Share>, Stop> {
    if !shared.store.shared() {
        shared.metrics.global_limit.store(shared.limiter.share(1), Ordering::Relaxed);
        return Ok(None);
    }
    let me = process_name();
    let processes = shared.store.check_in(&me).map_err(Stop::Store)?;
    let mut known = processes;
    // Said in the "serving" line.
    shared.metrics.global_limit.store(shared.limiter.share(processes), Ordering::Relaxed);
    let stop = Arc::new(AtomicBool::new(false));
    let (s, halt, name) = (shared.clone(), stop.clone(), me.clone());
    let thread = std::thread::Builder::new()
        .name("blkc-share".into())
        .spawn(move || {
            let mut failing = false;
            while !halt.load(Ordering::SeqCst) {
                std::thread::sleep(CHECK_IN_EVERY);
                // Each call has the store's deadline: a lost network fails
                // it in time, and the check-ins are what see it come back.
                match s.store.check_in(&name) {
                    Ok(n) => {
                        if failing {
                            s.log.write("info", "the store answers again", &[], None);
                        }
                        failing = false;
                        if n != known {
                            known = n;
                            note_share(&s, n);
                        }
                    }
                    Err(e) if !failing => {
                        failing = true;
                        s.log.write(
                            "error",
                            "the store does not answer: runs that read or save fail, /healthz answers 503; \
                             keeping the share of the global rate limit",
                            &[("error", e.into())],
                            None,
                        );
                    }
                    Err(_) => {}
                }
            }
        })
        .map_err(|e| format!("cannot start a thread: {e}"))?;
    Ok(Some(Share { me, stop, thread, store: shared.store.clone() }))
}

fn note_share(shared: &Shared, processes: usize) {
    let share = shared.limiter.share(processes);
    shared.metrics.global_limit.store(share, Ordering::Relaxed);
    shared.log.write(
        "info",
        "sharing the platform's global rate limit",
        &[("processes", processes.into()), ("per_second", share.into())],
        None,
    );
}

/// The next connection, or never when there is no listener.
async fn accept(listener: Option<&tokio::net::TcpListener>) -> std::io::Result<(tokio::net::TcpStream, SocketAddr)> {
    match listener {
        Some(l) => l.accept().await,
        None => std::future::pending().await,
    }
}

/// SIGTERM or SIGINT.
async fn stop_signal() {
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
async fn drain(shared: Arc<Shared>, timeout: Duration) {
    shared.draining.store(true, Ordering::SeqCst);
    let in_flight = shared.busy.load(Ordering::SeqCst);
    shared.log.write("info", "draining", &[("in_flight", in_flight.into())], None);
    let deadline = tokio::time::Instant::now() + timeout;
    while shared.busy.load(Ordering::SeqCst) > 0 {
        let notified = shared.idle.notified();
        if shared.busy.load(Ordering::SeqCst) == 0 {
            break;
        }
        if tokio::time::timeout_at(deadline, notified).await.is_err() {
            let left = shared.busy.load(Ordering::SeqCst);
            shared.log.write("warn", "drain timed out", &[("unfinished", left.into())], None);
            return;
        }
    }
    shared.log.write("info", "stopped", &[], None);
}

/// A run from when it is queued until it ends, however it ends (a full
/// queue, a duplicate, a panic): it holds the server busy and counts in
/// flight while it lives, so no path can forget to give either back.
struct Queued(Busy);

impl Queued {
    fn new(shared: &Arc<Shared>) -> Queued {
        shared.metrics.in_flight.fetch_add(1, Ordering::SeqCst);
        Queued(Busy::new(shared))
    }
}

impl Drop for Queued {
    fn drop(&mut self) {
        self.0 .0.metrics.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Runs `f`; a panic becomes its message. A bug in one run fails that run
/// only: its user is told, its worker goes on to the next run.
fn caught<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "no message".to_string());
        format!("internal error: the run panicked ({what}); this is a bug in blkc, please report it")
    })
}

/// Why a run failed, for its log line: its diagnostic, or its panic.
fn failure(ran: Result<eval::Outcome, String>) -> Option<String> {
    match ran {
        Ok(Ok(())) => None,
        Ok(Err(d)) => Some(format!("{} {}", d.code.as_str(), d.message)),
        Err(panicked) => Some(panicked),
    }
}

/// Counts an exchange or a run in flight while it lives.
struct Busy(Arc<Shared>);

impl Busy {
    fn new(shared: &Arc<Shared>) -> Busy {
        shared.busy.fetch_add(1, Ordering::SeqCst);
        Busy(shared.clone())
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        if self.0.busy.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

async fn reload_on_hangup(shared: Arc<Shared>) {
    use tokio::signal::unix::{signal, SignalKind};
    let Ok(mut hangup) = signal(SignalKind::hangup()) else { return };
    while hangup.recv().await.is_some() {
        let s = shared.clone();
        let _ = tokio::task::spawn_blocking(move || reload(&s, "SIGHUP")).await;
    }
}

/// `--watch`: reloads when the file's modification time or size changes.
async fn watch(shared: Arc<Shared>) {
    loop {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let now = super::stamp(&shared.file);
        // A file with errors is tried once per change, not every half second.
        let changed = {
            let mut seen = shared.watched.lock().unwrap_or_else(|e| e.into_inner());
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
    match super::load(&shared.file) {
        Ok(loaded) => {
            let commands = loaded.plan.trees.iter().filter(|t| t.kind == crate::plan::TreeKind::Command).count();
            *shared.loaded.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(loaded);
            shared.metrics.reload("ok");
            shared.log.write("info", "reloaded", &[("on", why.into()), ("commands", commands.into())], None);
        }
        Err(diagnostics) => {
            shared.metrics.reload("refused");
            shared.log.write(
                "error",
                "reload refused: the file has errors; the previous version keeps serving",
                &[("on", why.into()), ("diagnostics", diagnostics.into())],
                None,
            );
        }
    }
}

type Reply = Response<Full<Bytes>>;

fn respond(status: StatusCode, content_type: &str, body: impl Into<Bytes>) -> Reply {
    let mut r = Response::new(Full::new(body.into()));
    *r.status_mut() = status;
    if let Ok(v) = hyper::header::HeaderValue::from_str(content_type) {
        r.headers_mut().insert(hyper::header::CONTENT_TYPE, v);
    }
    r
}

fn json_reply(value: &Json) -> Reply {
    respond(StatusCode::OK, "application/json", value.to_string())
}

async fn handle(shared: Arc<Shared>, req: Request<Incoming>) -> Result<Reply, Infallible> {
    let _busy = Busy::new(&shared);
    let reply = match (req.method(), req.uri().path()) {
        (&Method::GET, "/healthz") if shared.draining.load(Ordering::SeqCst) => {
            respond(StatusCode::SERVICE_UNAVAILABLE, "text/plain", "draining\n")
        }
        (&Method::GET, "/healthz") => match shared.store.health() {
            // Runs that read or save would fail: the process is not well.
            Some(why) => respond(StatusCode::SERVICE_UNAVAILABLE, "text/plain", format!("store unreachable: {why}\n")),
            None => respond(StatusCode::OK, "text/plain", "ok\n"),
        },
        (&Method::GET, "/metrics") => respond(StatusCode::OK, "text/plain; version=0.0.4", shared.metrics.render()),
        (&Method::POST, "/interactions") => interaction(&shared, req).await,
        (_, "/healthz" | "/metrics" | "/interactions") => {
            respond(StatusCode::METHOD_NOT_ALLOWED, "text/plain", "method not allowed\n")
        }
        _ => respond(StatusCode::NOT_FOUND, "text/plain", "not found\n"),
    };
    Ok(reply)
}

/// The answer to a body that was not read.
fn body_refused(shared: &Shared, refused: super::door::BodyRefused) -> Reply {
    use super::door::BodyRefused;
    match refused {
        BodyRefused::TooLarge => {
            shared.metrics.interaction("too_large");
            respond(StatusCode::PAYLOAD_TOO_LARGE, "text/plain", "too large\n")
        }
        BodyRefused::Busy => {
            shared.metrics.interaction("bodies_full");
            respond(StatusCode::SERVICE_UNAVAILABLE, "text/plain", "busy\n")
        }
        BodyRefused::TooSlow => respond(StatusCode::REQUEST_TIMEOUT, "text/plain", "too slow\n"),
        BodyRefused::Broken => respond(StatusCode::BAD_REQUEST, "text/plain", "bad request\n"),
    }
}

/// `POST /interactions`: size, signature, then the body.
async fn interaction(shared: &Arc<Shared>, req: Request<Incoming>) -> Reply {
    let received = Instant::now();
    if shared.draining.load(Ordering::SeqCst) {
        return respond(StatusCode::SERVICE_UNAVAILABLE, "text/plain", "draining\n");
    }
    let header = |name: &str| req.headers().get(name).map(|v| v.as_bytes().to_vec());
    let signature = header("x-signature-ed25519");
    let timestamp = header("x-signature-timestamp");
    let too_large = req
        .headers()
        .get(hyper::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok())
        .is_some_and(|n| n > shared.max_body as u64);
    if too_large {
        shared.metrics.interaction("too_large");
        return respond(StatusCode::PAYLOAD_TOO_LARGE, "text/plain", "too large\n");
    }
    // Unsigned bytes: read into the bodies' budget, never past it.
    let body = match super::door::read(req.into_body(), shared.max_body, &shared.bodies).await {
        Ok(body) => body,
        Err(refused) => return body_refused(shared, refused),
    };
    let body = &body.bytes;
    let Some(public_key) = &shared.public_key else {
        return respond(StatusCode::NOT_FOUND, "text/plain", "not found\n");
    };
    if let Err(refused) =
        signature::verify(public_key, signature.as_deref(), timestamp.as_deref(), body, SystemTime::now())
    {
        shared.metrics.interaction("unauthorized");
        shared.log.write("warn", "refused", &[("status", 401.into()), ("why", refused.as_str().into())], None);
        return respond(StatusCode::UNAUTHORIZED, "text/plain", "invalid request signature\n");
    }
    let interaction: Interaction = match serde_json::from_slice(body) {
        Ok(i) => i,
        Err(e) => {
            shared.metrics.interaction("malformed");
            shared.log.write("warn", "malformed interaction", &[("error", e.to_string().into())], None);
            return respond(StatusCode::BAD_REQUEST, "text/plain", "malformed interaction\n");
        }
    };
    match interaction.kind {
        interaction::PING => {
            shared.metrics.interaction("ping");
            return json_reply(&json!({ "type": 1 }));
        }
        // Its application id and token make the path of every later
        // message: they must be of the platform's form.
        interaction::APPLICATION_COMMAND
            if !super::platform::is_snowflake(&interaction.application_id)
                || !super::platform::is_interaction_token(&interaction.token) =>
        {
            shared.metrics.interaction("malformed");
            shared.log.write(
                "warn",
                "malformed interaction: its application id or token is not of the platform's form",
                &[],
                None,
            );
            return respond(StatusCode::BAD_REQUEST, "text/plain", "malformed interaction\n");
        }
        interaction::APPLICATION_COMMAND => {}
        other => {
            shared.metrics.interaction("unsupported");
            shared.log.write("warn", "interaction of a type blkc does not answer", &[("type", other.into())], None);
            return respond(StatusCode::BAD_REQUEST, "text/plain", "unsupported interaction type\n");
        }
    }
    if !first_delivery(shared, &interaction.id, received).await {
        shared.metrics.interaction("replayed");
        shared.log.write("warn", "replayed interaction refused", &[("id", interaction.id.clone().into())], None);
        return respond(StatusCode::CONFLICT, "text/plain", "interaction already answered\n");
    }
    let loaded = shared.loaded.read().unwrap_or_else(|e| e.into_inner()).clone();
    let known =
        loaded.plan.trees.iter().any(|t| t.kind == crate::plan::TreeKind::Command && t.name == interaction.command());
    if !known {
        shared.metrics.interaction("unknown_command");
        log_interaction(shared, &interaction, "unknown_command", received, None, &[]);
        return json_reply(&json!({ "type": 4, "data": message::message(message::UNKNOWN, &[], true) }));
    }
    queue_and_answer(shared, interaction, loaded, received).await
}

/// Queues the command's run, and gives the HTTP exchange its first answer
/// by the deadline: the run's first message, or "thinking" (or "busy"
/// when the queue is full).
async fn queue_and_answer(
    shared: &Arc<Shared>,
    interaction: Interaction,
    loaded: Arc<Loaded>,
    received: Instant,
) -> Reply {
    let (tx, rx) = oneshot::channel();
    let answer = Arc::new(Answer { phase: Mutex::new(Phase::Waiting(Some(tx))) });
    // The run holds the server busy until it is answered in full.
    let job = Job { _queued: Queued::new(shared), interaction, loaded, answer: answer.clone(), received };
    if let Err(e) = shared.jobs.try_send(Work::Command(Box::new(job))) {
        let Work::Command(job) = e.into_inner() else { unreachable!("a command was queued") };
        shared.metrics.interaction("busy");
        log_interaction(shared, &job.interaction, "busy", received, None, &[]);
        return json_reply(&json!({ "type": 4, "data": message::message(message::BUSY, &[], true) }));
    }
    let deadline = tokio::time::Instant::from_std(received + shared.answer_within);
    let mut rx = rx;
    match tokio::time::timeout_at(deadline, &mut rx).await {
        Ok(Ok(first)) => json_reply(&json!({ "type": 4, "data": first })),
        Ok(Err(_)) => json_reply(&json!({ "type": 4, "data": message::message(message::FAILED, &[], true) })),
        Err(_) => {
            let mut phase = answer.phase.lock().unwrap_or_else(|e| e.into_inner());
            match &*phase {
                Phase::Waiting(_) => {
                    *phase = Phase::Deferred { edited: false };
                    shared.metrics.deferral();
                    json_reply(&json!({ "type": 5 }))
                }
                // The first message came as the time ran out.
                _ => match rx.try_recv() {
                    Ok(first) => json_reply(&json!({ "type": 4, "data": first })),
                    Err(_) => json_reply(&json!({ "type": 5 })),
                },
            }
        }
    }
}

/// Whether interaction `id` is new: to this process, and to the others
/// sharing its store. A new one is remembered across a restart too (the
/// same signed bytes stay valid for 5 minutes).
async fn first_delivery(shared: &Arc<Shared>, id: &str, received: Instant) -> bool {
    let first = shared.replay.lock().unwrap_or_else(|e| e.into_inner()).first(id, received);
    let first = first && first_across_processes(shared, id, received).await;
    if first {
        let key = crate::store::delivery_key("interaction", id);
        shared.store.remember(key, epoch_ms() + REPLAY_MEMORY.as_millis() as i64);
    }
    first
}

/// Whether no other process sharing the store has taken interaction `id`.
/// Asked within a bound, so that the first
/// answer never waits on the store past the platform's deadline; a store
/// that does not answer in time (or is known not to) lets the interaction
/// run: this process's own memory still refuses replays.
async fn first_across_processes(shared: &Arc<Shared>, id: &str, received: Instant) -> bool {
    if !shared.store.shared() || shared.store.health().is_some() {
        return true;
    }
    let (store, key) = (shared.store.clone(), crate::store::delivery_key("interaction", id));
    let keep = REPLAY_MEMORY.as_millis() as i64;
    let bound = received + (shared.answer_within / 3).min(Duration::from_secs(1));
    let asked = tokio::task::spawn_blocking(move || store.first_time(&key, epoch_ms(), keep));
    let why = match tokio::time::timeout_at(tokio::time::Instant::from_std(bound), asked).await {
        Ok(Ok(Ok(first))) => return first,
        Ok(Ok(Err(e))) => e,
        Ok(Err(_)) => "the check failed".to_string(),
        Err(_) => "no answer in time; the interaction runs".to_string(),
    };
    shared.log.write("warn", "the store could not say whether the interaction is new", &[("error", why.into())], None);
    true
}

/// What a run did, for its log line.
#[derive(Default)]
struct RunReport {
    requests: usize,
    warnings: Vec<&'static str>,
    /// Messages the platform took.
    messages: usize,
    failure: Option<String>,
    /// Why a message did not reach the chat (the first such): the run
    /// then counts as failed, whatever it did.
    undelivered: Option<String>,
    deferred: bool,
}

impl RunReport {
    /// The run's outcome once its messages are counted: one that did not
    /// reach the chat fails the run, with the reason as its error.
    fn settle(&mut self, outcome: &'static str) -> &'static str {
        match self.undelivered.take() {
            Some(why) if outcome != "failed" => {
                self.failure = Some(why);
                "failed"
            }
            _ => outcome,
        }
    }

    /// Counts a run's request or warning (a reply is the caller's).
    fn note(&mut self, shared: &Shared, event: &Event) {
        match event {
            Event::Request(r) => {
                self.requests += 1;
                shared.metrics.request(r.status);
            }
            Event::Warning(w) => self.warnings.push(w.code),
            Event::Reply { .. } | Event::Save { .. } => {}
        }
    }
}

/// Counts and logs how a message to the platform went, and notes it in
/// the run's report: a message the platform took counts, one it refused or
/// that could not be sent makes the run fail with the reason. `about`
/// names the interaction or event in the log line.
fn sent_message(
    shared: &Shared,
    report: &mut RunReport,
    sent: Result<super::platform::Answer, String>,
    about: (&'static str, Json),
    token: Option<&str>,
) {
    let why = match sent {
        Ok(a) if a.is_success() => {
            shared.metrics.platform_call(a.status);
            report.messages += 1;
            return;
        }
        Ok(a) => {
            shared.metrics.platform_call(a.status);
            let fields = [about, ("status", a.status.into()), ("platform", a.message().into())];
            shared.log.write("warn", "the platform refused a message", &fields, token);
            format!("the platform refused a message ({}): {}", a.status, a.message())
        }
        Err(e) => {
            shared.log.write("warn", "a message could not be sent", &[about, ("error", e.clone().into())], token);
            format!("a message could not be sent: {e}")
        }
    };
    report.undelivered.get_or_insert(why);
}

fn log_interaction(
    shared: &Shared,
    i: &Interaction,
    outcome: &str,
    received: Instant,
    report: Option<&RunReport>,
    extra: &[(&str, Json)],
) {
    let mut fields: Vec<(&str, Json)> = vec![
        ("id", i.id.clone().into()),
        ("command", i.command().into()),
        ("user", i.user().map_or(String::new(), |u| u.id.clone()).into()),
        ("server", i.guild_id.clone().unwrap_or_default().into()),
        ("outcome", outcome.into()),
        ("ms", ((received.elapsed().as_secs_f64() * 1e4).round() / 10.0).into()),
    ];
    if let Some(r) = report {
        fields.push(("requests", r.requests.into()));
        fields.push(("messages", r.messages.into()));
        if r.deferred {
            fields.push(("deferred", true.into()));
        }
        if !r.warnings.is_empty() {
            fields.push(("warnings", r.warnings.join(",").into()));
        }
        if let Some(f) = &r.failure {
            fields.push(("error", f.clone().into()));
        }
    }
    fields.extend(extra.iter().cloned());
    let level = if outcome == "failed" { "error" } else { "info" };
    shared.log.write(level, "interaction", &fields, Some(&i.token));
}

/// Runs one command on a pool thread, and delivers what it says.
fn run_job(shared: &Arc<Shared>, job: Job) {
    let started = Instant::now();
    let Job { _queued, interaction, loaded, answer, received } = job;
    let token_deadline = received + TOKEN_LIFETIME;
    let platform = platform(shared, &loaded);
    let mut report = RunReport::default();
    let deliver = |report: &mut RunReport, content: &str, users: &[String], ephemeral: bool| {
        let (delivery, body) = answer.deliver(message::message(content, users, ephemeral));
        let path = match delivery {
            Delivery::Sent => {
                report.messages += 1;
                return;
            }
            Delivery::Edit => {
                report.deferred = true;
                format!("/webhooks/{}/{}/messages/@original", interaction.application_id, interaction.token)
            }
            Delivery::FollowUp => {
                shared.metrics.followup();
                format!("/webhooks/{}/{}", interaction.application_id, interaction.token)
            }
        };
        let method = if matches!(delivery, Delivery::Edit) { "PATCH" } else { "POST" };
        // The platform may not know the interaction's webhook until the
        // answer on the HTTP exchange has reached it: an "unknown webhook"
        // (404) right after the answer is tried again, a few times.
        let mut sent = platform.send(method, &path, Some(&body), false, token_deadline);
        for _ in 0..3 {
            match &sent {
                Ok(a) if a.status == 404 => {
                    shared.metrics.platform_call(a.status);
                    std::thread::sleep(Duration::from_millis(300));
                    sent = platform.send(method, &path, Some(&body), false, token_deadline);
                }
                _ => break,
            }
        }
        sent_message(shared, report, sent, ("id", interaction.id.clone().into()), Some(&interaction.token));
    };
    let tree =
        loaded.plan.trees.iter().find(|t| t.kind == crate::plan::TreeKind::Command && t.name == interaction.command());
    let prepared = tree
        .ok_or_else(|| "the command is not in the file".to_string())
        .and_then(|tree| interaction::variables(&interaction, tree).map(|vars| (tree, vars)));
    let outcome = match prepared {
        Err(why) => {
            report.failure = Some(why);
            deliver(&mut report, message::FAILED, &[], true);
            "failed"
        }
        Ok((tree, vars)) => {
            let users = interaction::mentionable_users(&interaction, tree, &vars);
            let mut inputs = shared.inputs.clone();
            inputs.vars.extend(vars);
            // The interaction carries no server name: the Gateway's cache
            // has it when the file's events keep one open.
            let server = interaction.guild_id.clone().unwrap_or_default();
            let channel = interaction.channel_id.clone().unwrap_or_default();
            let (server_name, channel_name) = shared.cache.names(&server, &channel);
            inputs.vars.insert("server_name".into(), server_name.unwrap_or_default());
            if inputs.vars.get("channel_name").is_none_or(String::is_empty) {
                inputs.vars.insert("channel_name".into(), channel_name.unwrap_or_default());
            }
            let mut options = shared.options.clone();
            options.samples = loaded.checked.model.samples.clone();
            let mut store = shared.store.run_store();
            let mut replies: Vec<String> = Vec::new();
            let mut sink = |event: Event| match event {
                Event::Reply { text } => {
                    let (parts, warning) = pieces(&text);
                    if let Some(w) = warning {
                        shared.log.write(
                            "warn",
                            &w,
                            &[("id", interaction.id.clone().into())],
                            Some(&interaction.token),
                        );
                    }
                    for p in parts {
                        deliver(&mut report, &p, &users, false);
                    }
                    replies.push(String::new());
                }
                other => report.note(shared, &other),
            };
            let ran = caught(|| eval::run(&loaded.plan, tree, &inputs, &options, store.as_mut(), &mut sink));
            match failure(ran) {
                None => {
                    if replies.is_empty() {
                        deliver(&mut report, message::DONE, &[], true);
                    }
                    "answered"
                }
                Some(why) => {
                    report.failure = Some(why);
                    deliver(&mut report, message::FAILED, &[], true);
                    "failed"
                }
            }
        }
    };
    let outcome = report.settle(outcome);
    shared.metrics.run_time(started.elapsed());
    shared.metrics.interaction(if report.deferred && outcome == "answered" { "deferred" } else { outcome });
    log_interaction(shared, &interaction, outcome, received, Some(&report), &[]);
}

/// The platform's API client, one per process (its connections are reused
/// by every run); made again only when a reload changes the file's platform.
fn platform(shared: &Shared, loaded: &Loaded) -> Platform {
    let base = platform_base(shared, loaded);
    let mut cached = shared.platform.lock().unwrap_or_else(|e| e.into_inner());
    match &*cached {
        Some(p) if p.base() == base.trim_end_matches('/') => p.clone(),
        _ => {
            let p = Platform::new(&base, shared.inputs.bot_token.clone(), shared.limiter.clone());
            *cached = Some(p.clone());
            p
        }
    }
}

/// The platform's API base: `--platform`, or the file's.
fn platform_base(shared: &Shared, loaded: &Loaded) -> String {
    match &shared.options.platform {
        Some(p) => p.base_url(),
        None => loaded.plan.platform.clone(),
    }
}

/// The Gateway's reports, into the server: dispatches become event runs.
struct GatewayEvents(Arc<Shared>);

impl super::gateway::Events for GatewayEvents {
    fn dispatch(&self, t: &str, d: &Json) {
        let shared = &self.0;
        let Some(run) = shared.cache.dispatch(t, d) else { return };
        let loaded = shared.loaded.read().unwrap_or_else(|e| e.into_inner()).clone();
        let has_tree =
            loaded.plan.trees.iter().any(|tree| tree.kind == crate::plan::TreeKind::Event && tree.name == run.kind);
        if !has_tree {
            return;
        }
        let kind = run.kind;
        // Known across processes when they share the store: two sessions
        // holding one shard (a hand-over) get the same dispatches.
        let seen = shared.store.shared().then(|| {
            let (key, keep) = super::events::occurrence(t, d);
            (key, epoch_ms(), keep)
        });
        let job = Work::Event(EventJob { _queued: Queued::new(shared), run, loaded, seen });
        if shared.events.try_send(job).is_err() {
            shared.metrics.event(kind, "busy");
            shared.log.write("warn", "event dropped: the run queue is full", &[("kind", kind.into())], None);
        }
    }

    fn log(&self, level: &str, message: &str, fields: &[(&str, Json)]) {
        self.0.log.write(level, message, fields, None);
    }

    fn count(&self, what: &'static str) {
        self.0.metrics.gateway(what);
    }

    fn heartbeat(&self, latency: Duration) {
        self.0.metrics.heartbeat(latency);
    }
}

/// Asks the platform where its Gateway is, and starts a thread for each
/// shard this process holds.
fn start_gateway(
    shared: &Arc<Shared>,
    loaded: &Loaded,
    shards: Shards,
) -> Result<Vec<std::thread::JoinHandle<()>>, String> {
    let token = shared.inputs.bot_token.clone().ok_or(
        "the file has event trees, and events need the bot token: set BLKC_BOT_TOKEN or give `--bot-token-file`",
    )?;
    let intents = super::intents::needed(&loaded.checked.ast);
    let platform = platform(shared, loaded);
    let answer = platform.send("GET", "/gateway/bot", None, true, Instant::now() + Duration::from_secs(30))?;
    if !answer.is_success() {
        return Err(format!(
            "the platform refused `GET /gateway/bot` ({}): {}{}",
            answer.status,
            answer.message(),
            if answer.status == 401 { "; the bot token is wrong" } else { "" }
        ));
    }
    let body: Json = serde_json::from_slice(&answer.body).map_err(|e| format!("/gateway/bot: {e}"))?;
    let info = super::gateway::GatewayInfo::parse(&body)?;
    let (ids, count) = match shards {
        // A thread a shard: what the platform answers must not decide how
        // many this process makes.
        Shards::Auto if info.shards > super::gateway::MAX_AUTO_SHARDS => {
            return Err(format!(
                "the platform recommends {} shards; one process holds at most {} with `--shards auto`: run several \
                 processes, each with `--shard ID/{}` (docs/serve.md, \"Shards\")",
                info.shards,
                super::gateway::MAX_AUTO_SHARDS,
                info.shards
            ))
        }
        Shards::Auto => ((0..info.shards).collect::<Vec<u32>>(), info.shards),
        Shards::One { id, count } => (vec![id], count),
    };
    shared.log.write(
        "info",
        "connecting to the Gateway",
        &[
            ("shards", format!("{ids:?} of {count}").into()),
            ("intents", super::intents::names(intents).into()),
            ("session_starts_left", info.session_starts_left.into()),
        ],
        None,
    );
    let gate = Arc::new(super::gateway::IdentifyGate::new(&info));
    let events: Arc<dyn super::gateway::Events> = Arc::new(GatewayEvents(shared.clone()));
    let mut threads = Vec::new();
    for id in ids {
        let shard = super::gateway::Shard {
            id,
            count,
            token: token.clone(),
            intents,
            url: info.url.clone(),
            gate: gate.clone(),
            events: events.clone(),
            stop: shared.gateway_stop.clone(),
        };
        let shared = shared.clone();
        let thread = std::thread::Builder::new()
            .name(format!("blkc-gateway-{id}"))
            .spawn(move || {
                if let Err(fatal) = shard.run() {
                    shared.log.write("error", &fatal.0, &[("shard", id.into())], None);
                    *shared.fatal.lock().unwrap_or_else(|e| e.into_inner()) = Some(fatal.0);
                    shared.gateway_stop.store(true, Ordering::SeqCst);
                    shared.fatal_notify.notify_one();
                }
            })
            .map_err(|e| format!("cannot start a Gateway thread: {e}"))?;
        threads.push(thread);
    }
    Ok(threads)
}

/// Runs one event tree on a pool thread; its replies go to its channel.
fn run_event(shared: &Arc<Shared>, job: EventJob) {
    let started = Instant::now();
    let EventJob { _queued, run, loaded, seen } = job;
    if let Some((key, at, keep)) = seen {
        match shared.store.first_time(&key, at, keep.as_millis() as i64) {
            Ok(true) => {}
            Ok(false) => {
                shared.metrics.event(run.kind, "duplicate");
                shared.log.write("info", "event already taken by another process", &[("kind", run.kind.into())], None);
                return;
            }
            // The store is down: run it (the process's own shards are its own).
            Err(e) => shared.log.write(
                "warn",
                "the store could not say whether the event is new",
                &[("kind", run.kind.into()), ("error", e.into())],
                None,
            ),
        }
    }
    let Some(tree) = loaded.plan.trees.iter().find(|t| t.kind == crate::plan::TreeKind::Event && t.name == run.kind)
    else {
        return;
    };
    let platform = platform(shared, &loaded);
    let users: Vec<String> = run.mention.iter().cloned().collect();
    let mut inputs = shared.inputs.clone();
    inputs.vars.extend(run.vars.iter().cloned());
    let mut options = shared.options.clone();
    options.samples = loaded.checked.model.samples.clone();
    let mut store = shared.store.run_store();
    let mut report = RunReport::default();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut sink = |event: Event| match event {
        Event::Reply { text } => {
            let Some(channel) = &run.channel else {
                shared.log.write(
                    "warn",
                    "a reply in this event has no channel to go to; not sent",
                    &[("kind", run.kind.into())],
                    None,
                );
                return;
            };
            let (parts, warning) = pieces(&text);
            if let Some(w) = warning {
                shared.log.write("warn", &w, &[("kind", run.kind.into())], None);
            }
            for p in parts {
                let body = message::message(&p, &users, false);
                let sent = platform.send("POST", &format!("/channels/{channel}/messages"), Some(&body), true, deadline);
                sent_message(shared, &mut report, sent, ("kind", run.kind.into()), None);
            }
        }
        other => report.note(shared, &other),
    };
    let ran = caught(|| eval::run(&loaded.plan, tree, &inputs, &options, store.as_mut(), &mut sink));
    report.failure = failure(ran);
    let outcome = if report.failure.is_some() { "failed" } else { "ran" };
    let outcome = report.settle(outcome);
    shared.metrics.run_time(started.elapsed());
    shared.metrics.event(run.kind, outcome);
    let mut fields: Vec<(&str, Json)> = vec![
        ("kind", run.kind.into()),
        ("server", run.vars.iter().find(|(k, _)| k == "server_id").map_or(String::new(), |(_, v)| v.clone()).into()),
        ("outcome", outcome.into()),
        ("ms", ((started.elapsed().as_secs_f64() * 1e4).round() / 10.0).into()),
        ("requests", report.requests.into()),
        ("messages", report.messages.into()),
    ];
    if !report.warnings.is_empty() {
        fields.push(("warnings", report.warnings.join(",").into()));
    }
    if let Some(f) = &report.failure {
        fields.push(("error", f.clone().into()));
    }
    shared.log.write(if outcome == "failed" { "error" } else { "info" }, "event", &fields, None);
}
