//! The platform's Gateway: a WebSocket per shard that the bot keeps open,
//! over which events arrive (docs/serve.md, "Events: the Gateway").
//!
//! One thread per shard runs [`Shard::run`]: connect, HELLO, heartbeats
//! (the first after a random part of the interval), IDENTIFY or RESUME,
//! then dispatches until the connection drops, the platform asks for a
//! reconnect (op 7) or invalidates the session (op 9), or a heartbeat goes
//! unacknowledged (a zombie connection). Drops are retried with backoff
//! and resumed; the close codes that retrying cannot fix end the server.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tungstenite::protocol::frame::coding::CloseCode as WsClose;
use twilight_model::gateway::payload::outgoing::identify::IdentifyProperties;
use twilight_model::gateway::payload::outgoing::{Heartbeat, Resume};
use twilight_model::gateway::{CloseCode, ShardId};

use super::intents::{self, Intents};
use super::model::{Dispatch, Frame, GatewayBot, OpCode};
use crate::base::stop::StopSignal;
use tungstenite::protocol::CloseFrame;
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};

type Socket = WebSocket<MaybeTlsStream<std::net::TcpStream>>;

/// The Gateway's API version blkc speaks.
pub const VERSION: u8 = 10;
/// The platform allows 120 sends a minute on one connection.
const SENDS_PER_MINUTE: usize = 110;
const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// The waits before reconnecting after quick ends: 250 ms, doubled each
/// time up to [`MAX_BACKOFF`], each with a random part (`backon`'s jitter,
/// up to the wait again) so that shards dropped together do not come
/// back together.
fn reconnect_waits() -> backon::ExponentialBackoff {
    use backon::BackoffBuilder as _;
    backon::ExponentialBuilder::default()
        .with_min_delay(Duration::from_millis(250))
        .with_max_delay(MAX_BACKOFF / 2)
        .with_jitter()
        .without_max_times()
        .build()
}
/// A connection that lasted this long was a good one: the next reconnect
/// is at once; quicker ends back off, whatever ended them (a close, an op
/// 7, a missed ACK), so a Gateway that asks again and again is not
/// answered with a storm of RESUMEs, each carrying the token.
const STABLE: Duration = Duration::from_secs(60);
/// The largest Gateway message read: a GUILD_CREATE of the largest server
/// the platform allows is a few MiB. Larger is refused before it is held.
pub const MAX_MESSAGE: usize = 8 * 1024 * 1024;
/// How long connecting (TCP, TLS, the WebSocket handshake) may take.
const CONNECT_TIME: Duration = Duration::from_secs(10);
/// The platform may ask for a heartbeat (op 1) at any time, and says to
/// answer at once: every one is, up to a burst of this many, then one a
/// second, so that a flood of asks cannot use up the send budget.
const ASKED_BEATS_BURST: u32 = 5;
/// The most shards one process holds with `--shards auto` (a thread each).
pub const MAX_AUTO_SHARDS: u32 = 128;

/// What `GET /gateway/bot` said.
#[derive(Debug, Clone)]
pub struct GatewayInfo {
    pub url: String,
    pub shards: u32,
    pub session_starts_left: u64,
    pub session_reset_after: Duration,
    pub max_concurrency: u32,
}

impl GatewayInfo {
    /// What `GET /gateway/bot` answered, within bounds.
    pub fn from_wire(body: GatewayBot) -> Result<GatewayInfo, NoGatewayUrl> {
        let url = body.url.ok_or(NoGatewayUrl)?;
        let limit = body.session_start_limit.unwrap_or_default();
        Ok(GatewayInfo {
            url,
            shards: body.shards.unwrap_or(1).clamp(1, 65_536) as u32,
            session_starts_left: limit.remaining.unwrap_or(1000),
            session_reset_after: Duration::from_millis(limit.reset_after.unwrap_or(0).min(86_400_000)),
            max_concurrency: limit.max_concurrency.unwrap_or(1).clamp(1, 1024) as u32,
        })
    }
}

/// `GET /gateway/bot` answered with no `url`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoGatewayUrl;

impl std::fmt::Display for NoGatewayUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the platform's /gateway/bot has no `url`")
    }
}

impl std::error::Error for NoGatewayUrl {}

/// Why a connection to the Gateway could not be opened.
#[derive(Debug)]
pub enum ConnectError {
    /// The URL is no WebSocket request.
    Request(tungstenite::Error),
    /// The URL is no URL.
    Url(url::ParseError),
    /// The host's addresses could not be looked up.
    Lookup { host: String, error: std::io::Error },
    /// The lookup took longer than [`CONNECT_TIME`].
    LookupSlow { host: String },
    /// The host has no address.
    NoAddress { host: String },
    /// No address of the host took the connection: the last one's error.
    Connect(std::io::Error),
    /// The WebSocket (or TLS) handshake failed.
    Handshake(tungstenite::Error),
    /// The lookup's thread could not be started.
    Thread(std::io::Error),
}

impl std::fmt::Display for ConnectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConnectError::Request(e) => write!(f, "{e}"),
            ConnectError::Url(e) => write!(f, "{e}"),
            ConnectError::Lookup { host, error } => write!(f, "cannot look up `{host}`: {error}"),
            ConnectError::LookupSlow { host } => {
                write!(f, "looking up `{host}` took longer than {} s", CONNECT_TIME.as_secs())
            }
            ConnectError::NoAddress { host } => write!(f, "`{host}` has no address"),
            ConnectError::Connect(e) => write!(f, "{e}"),
            ConnectError::Handshake(e) => write!(f, "the WebSocket handshake failed: {e}"),
            ConnectError::Thread(e) => write!(f, "cannot start a lookup: {e}"),
        }
    }
}

impl std::error::Error for ConnectError {}

/// Why the Gateway's URL is not one a shard connects to.
#[derive(Debug, Clone, PartialEq)]
pub enum BadGatewayUrl {
    NotUrl {
        url: String,
        error: url::ParseError,
    },
    /// Plain `ws://` to another machine: the bot token goes only over wss.
    PlainToAnother {
        url: String,
    },
    Scheme(String),
}

impl std::fmt::Display for BadGatewayUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BadGatewayUrl::NotUrl { url, error } => write!(f, "the Gateway URL `{url}` is not a URL: {error}"),
            BadGatewayUrl::PlainToAnother { url } => {
                write!(f, "the Gateway `{url}` is plain ws to another machine; the bot token goes only over wss")
            }
            BadGatewayUrl::Scheme(scheme) => write!(f, "the Gateway URL has scheme `{scheme}`, not wss"),
        }
    }
}

impl std::error::Error for BadGatewayUrl {}

/// Why the Gateway cannot go on: a close code retrying will not fix (the
/// code, when the Gateway closed with one).
#[derive(Debug, Clone, PartialEq)]
pub struct Fatal(pub String, pub Option<u16>);

/// The close code of a Gateway that wants more shards.
pub const SHARDING_REQUIRED: u16 = 4011;

/// The close codes that end the server, and what to fix.
pub fn fatal_close(code: u16, intents: Intents) -> Option<String> {
    Some(match CloseCode::try_from(code).ok()? {
        CloseCode::AuthenticationFailed => "the Gateway refused the bot token (close code 4004, authentication failed): copy the token again from the developer portal (Bot, Reset Token)".to_string(),
        CloseCode::InvalidShard => "the Gateway refused the shard (close code 4010, invalid shard): check `--shard ID/COUNT`, ID below COUNT".to_string(),
        CloseCode::ShardingRequired => "the Gateway wants more shards (close code 4011, sharding required): the bot is in too many servers for one connection; use `--shards auto`".to_string(),
        CloseCode::InvalidApiVersion => "the Gateway refused API version 10 (close code 4012)".to_string(),
        CloseCode::InvalidIntents => format!("the Gateway refused the intents {} (close code 4013, invalid intents)", intents::names(intents)),
        CloseCode::DisallowedIntents => {
            let switches: Vec<String> = intents::privileged(intents)
                .iter()
                .map(|(name, switch)| format!("{switch} (for {name})"))
                .collect();
            format!(
                "the Gateway refused a privileged intent (close code 4014, disallowed intents): in the developer portal, Bot, Privileged Gateway Intents, enable {}",
                if switches.is_empty() { "the privileged intents".to_string() } else { switches.join(" and ") }
            )
        }
        _ => return None,
    })
}

/// Whether a session closed with `code` can be resumed (an invalid
/// sequence or a timed-out session cannot).
fn resumable_after(code: u16) -> bool {
    !matches!(CloseCode::try_from(code), Ok(CloseCode::InvalidSequence | CloseCode::SessionTimedOut))
}

/// Identifies wait their turn: one per `max_concurrency` bucket every 5
/// seconds, and none past the session-start budget until it resets. With
/// [`Turns`] (processes sharing a store), the turns are the store's, so
/// processes starting together keep to the limit too.
pub struct IdentifyGate {
    max_concurrency: u32,
    state: Mutex<(std::collections::HashMap<u32, Instant>, u64, Instant)>,
    /// The wait between identifies of one bucket (5 s on the platform).
    pub spacing: Duration,
    pub turns: Option<Arc<dyn Turns>>,
}

impl std::fmt::Debug for IdentifyGate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IdentifyGate").field("max_concurrency", &self.max_concurrency).finish_non_exhaustive()
    }
}

/// The identifies' turns kept across processes.
pub trait Turns: Send + Sync {
    /// Whether `bucket` may identify now, `spacing` after the last of any
    /// process (and within the session-start budget), or how long to wait;
    /// a turn given is counted. `Err` when it cannot be said.
    fn turn(
        &self,
        bucket: u32,
        spacing: Duration,
    ) -> Result<Option<Duration>, Box<dyn std::error::Error + Send + Sync>>;
}

impl IdentifyGate {
    pub fn new(info: &GatewayInfo) -> IdentifyGate {
        IdentifyGate {
            max_concurrency: info.max_concurrency,
            state: Mutex::new((
                Default::default(),
                info.session_starts_left,
                Instant::now() + info.session_reset_after,
            )),
            spacing: Duration::from_secs(5),
            turns: None,
        }
    }

    /// Waits for `shard`'s turn to identify; false when stopping.
    fn wait(&self, shard: u32, stop: &StopSignal) -> bool {
        let bucket = shard % self.max_concurrency;
        if let Some(turns) = &self.turns {
            return wait_turn(turns.as_ref(), shard, bucket, self.spacing, stop);
        }
        let mut warned = false;
        loop {
            if stop.is_set() {
                return false;
            }
            let wait = {
                let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
                let now = Instant::now();
                let (last, left, reset_at) = &mut *s;
                if *left == 0 && now < *reset_at {
                    if !std::mem::replace(&mut warned, true) {
                        tracing::warn!(shard, "no session starts left today; waiting for the platform's reset");
                    }
                    (*reset_at - now).min(Duration::from_secs(1))
                } else {
                    if *left == 0 {
                        *left = 1000;
                    }
                    match last.get(&bucket) {
                        Some(t) if now.duration_since(*t) < self.spacing => self.spacing - now.duration_since(*t),
                        _ => {
                            last.insert(bucket, now);
                            *left -= 1;
                            return true;
                        }
                    }
                }
            };
            if stop.wait(wait.min(Duration::from_millis(250))) {
                return false;
            }
        }
    }
}

/// Waits for `bucket`'s turn in the store's turns; false when stopping. The
/// store is asked at most once a second by each waiting shard (a large
/// bot's shards may wait minutes for their buckets), and a store that
/// cannot say is asked again each second (the identify waits: two
/// processes could otherwise identify in one bucket at once).
fn wait_turn(turns: &dyn Turns, shard: u32, bucket: u32, spacing: Duration, stop: &StopSignal) -> bool {
    let mut warned = false;
    loop {
        if stop.is_set() {
            return false;
        }
        let wait = match turns.turn(bucket, spacing) {
            Ok(None) => return true,
            Ok(Some(wait)) => wait,
            Err(why) => {
                if !std::mem::replace(&mut warned, true) {
                    tracing::warn!(shard, error = %why, "the store cannot say whose turn it is to identify; waiting");
                }
                Duration::from_secs(1)
            }
        };
        if stop.wait(wait.min(Duration::from_secs(1))) {
            return false;
        }
    }
}

/// What a shard reports to the server.
pub trait Events: Send + Sync {
    /// A dispatch (op 0) blkc reads: its name, its data typed, and its
    /// data as sent (what identifies an occurrence that has no id).
    fn dispatch(&self, t: &str, event: Dispatch, raw: &str);
    /// The Gateway's counters: `reconnect`, `resume`, `identify`.
    fn count(&self, what: &'static str);
    /// How long a heartbeat took to be acknowledged.
    fn heartbeat(&self, latency: Duration);
}

/// One shard's connection, kept.
pub struct Shard {
    pub id: u32,
    pub count: u32,
    pub token: String,
    pub intents: Intents,
    pub url: String,
    pub gate: Arc<IdentifyGate>,
    pub events: Arc<dyn Events>,
    pub stop: StopSignal,
    /// Its session as it stands, for its lease (and from the last holder).
    pub kept: Arc<Kept>,
}

/// A session that can be resumed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    pub id: String,
    pub resume_url: String,
}

/// A shard's session and last sequence as they stand, shared with the
/// server: it keeps them with the shard's lease, so that another process
/// resumes the session (and the platform replays what it missed).
#[derive(Debug, Default)]
pub struct Kept {
    session: Mutex<Option<Session>>,
    seq: AtomicU64,
    /// Closing keeps the session resumable (a hand-over to another
    /// process), where a stop ends it.
    pub hand_over: AtomicBool,
    /// A new session began and is not yet kept with the lease.
    pub fresh: AtomicBool,
}

impl Kept {
    /// A shard that resumes `session` at `seq` (another process's).
    pub fn resuming(session: Option<(Session, u64)>) -> Kept {
        let kept = Kept::default();
        if let Some((session, seq)) = session {
            kept.set(Some(session));
            kept.seq.store(seq, Ordering::SeqCst);
            // (Kept with the lease already.)
            kept.fresh.store(false, Ordering::SeqCst);
        }
        kept
    }

    /// The session and its last sequence, when there is one to resume.
    pub fn get(&self) -> Option<(Session, u64)> {
        let session = self.session.lock().unwrap_or_else(|e| e.into_inner()).clone()?;
        Some((session, self.seq.load(Ordering::SeqCst)))
    }

    fn set(&self, session: Option<Session>) {
        let fresh = session.is_some();
        *self.session.lock().unwrap_or_else(|e| e.into_inner()) = session;
        self.fresh.store(fresh, Ordering::SeqCst);
    }
}

/// How a connection ended.
enum End {
    /// Connect again and resume (after `backoff` when set).
    Resume {
        backoff: bool,
    },
    /// Connect again with a new session.
    Identify,
    Stop,
    Fatal(String, Option<u16>),
}

fn jitter() -> f64 {
    // (The system's randomness; a half way when it cannot be had.)
    getrandom::u64().map_or(0.5, |n| (n % 10_000) as f64 / 10_000.0)
}

/// `url` with the Gateway's query; plain `ws://` only to this machine.
fn gateway_url(url: &str) -> Result<String, BadGatewayUrl> {
    let parsed = url::Url::parse(url).map_err(|error| BadGatewayUrl::NotUrl { url: url.to_string(), error })?;
    match parsed.scheme() {
        "wss" => {}
        "ws" => {
            let to = crate::base::urls::Destination::new("ws", parsed.host_str().unwrap_or_default(), parsed.port());
            if !to.is_loopback() {
                return Err(BadGatewayUrl::PlainToAnother { url: url.to_string() });
            }
        }
        other => return Err(BadGatewayUrl::Scheme(other.to_string())),
    }
    let mut parsed = parsed;
    parsed.set_query(Some(&format!("v={VERSION}&encoding=json")));
    Ok(parsed.to_string())
}

fn set_timeout(socket: &Socket, timeout: Duration) {
    let timeout = Some(timeout.max(Duration::from_millis(1)));
    let _ = match socket.get_ref() {
        MaybeTlsStream::Plain(s) => s.set_read_timeout(timeout),
        MaybeTlsStream::Rustls(s) => s.get_ref().set_read_timeout(timeout),
        _ => Ok(()),
    };
}

impl Shard {
    /// Keeps the shard connected until the server stops, or a close code
    /// that retrying cannot fix.
    pub fn run(&self) -> Result<(), Fatal> {
        let given = self.kept.get();
        let mut seq: Option<u64> = given.as_ref().map(|(_, seq)| *seq);
        let mut session: Option<Session> = given.map(|(session, _)| session);
        let mut failures = 0u32;
        let mut waits = reconnect_waits();
        loop {
            if self.stop.is_set() {
                return Ok(());
            }
            let url = match &session {
                Some(s) => s.resume_url.clone(),
                None => self.url.clone(),
            };
            let started = Instant::now();
            let end = self.connection(&url, &mut session, &mut seq);
            if started.elapsed() >= STABLE {
                failures = 0;
                waits = reconnect_waits();
            }
            let backoff = match end {
                End::Stop => return Ok(()),
                End::Fatal(why, code) => return Err(Fatal(why, code)),
                End::Identify => {
                    session = None;
                    seq = None;
                    self.kept.set(None);
                    failures > 0
                }
                End::Resume { backoff } => backoff || failures > 0,
            };
            if backoff {
                let wait = waits.next().unwrap_or(MAX_BACKOFF).min(MAX_BACKOFF);
                tracing::warn!(
                    shard = self.id,
                    in_ms = wait.as_millis() as u64,
                    "Gateway connection ended; reconnecting"
                );
                self.stop.wait(wait);
            }
            failures += 1;
            self.events.count("reconnect");
        }
    }

    /// Sends `payload`, never waiting: the shard's one thread also reads
    /// the ACKs and keeps the heartbeat's time. Over the platform's budget
    /// (which only heartbeats the Gateway asks for could reach, and those
    /// are spaced) a send is left out rather than get the connection closed.
    fn send(&self, socket: &mut Socket, sent: &mut Vec<Instant>, payload: &impl serde::Serialize) -> Result<(), End> {
        let now = Instant::now();
        sent.retain(|t| now.duration_since(*t) < Duration::from_secs(60));
        if sent.len() >= SENDS_PER_MINUTE {
            return Ok(());
        }
        sent.push(now);
        let text = serde_json::to_string(payload).map_err(|_| End::Resume { backoff: true })?;
        socket.send(Message::text(text)).map_err(|_| End::Resume { backoff: true })
    }

    /// One connection, from connect to its end.
    fn connection(&self, url: &str, session: &mut Option<Session>, seq: &mut Option<u64>) -> End {
        let url = match gateway_url(url) {
            Ok(u) => u,
            Err(e) => return End::Fatal(e.to_string(), None),
        };
        let mut socket = match open(&url) {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(shard = self.id, error = %e, "cannot connect to the Gateway");
                return End::Resume { backoff: true };
            }
        };
        let end = self.converse(&mut socket, session, seq);
        let close = match &end {
            // A session to resume (here, or by the process a shard is
            // handed over to): any code but 1000/1001, which end it.
            End::Resume { .. } => WsClose::from(4900),
            End::Stop if self.kept.hand_over.load(Ordering::SeqCst) => WsClose::from(4900),
            _ => WsClose::Normal,
        };
        let _ = socket.close(Some(CloseFrame { code: close, reason: "".into() }));
        let _ = socket.flush();
        end
    }

    fn converse(&self, socket: &mut Socket, session: &mut Option<Session>, seq: &mut Option<u64>) -> End {
        let mut sent = Vec::new();
        // HELLO first.
        set_timeout(socket, Duration::from_secs(30));
        let interval = match read(socket, |f| (f.op() == Some(OpCode::Hello)).then(|| f.heartbeat_interval())) {
            Ok(Some(Some(interval))) => interval.unwrap_or(41_250),
            Ok(_) => return End::Resume { backoff: true },
            Err(end) => return self.closed(end),
        };
        let interval = Duration::from_millis(interval.clamp(100, 600_000));
        let mut beat = Beat {
            next: Instant::now() + interval.mul_f64(jitter()),
            acked: true,
            sent: Instant::now(),
            asked: Beat::asked_limit(),
        };
        if let Err(end) = self.hello(socket, &mut sent, session.as_ref(), *seq) {
            return end;
        }
        loop {
            if self.stop.is_set() {
                return End::Stop;
            }
            if Instant::now() >= beat.next {
                if !beat.acked {
                    tracing::warn!(shard = self.id, "no heartbeat ACK: the connection is a zombie; reconnecting");
                    return End::Resume { backoff: false };
                }
                if let Err(end) = self.send(socket, &mut sent, &Heartbeat::new(*seq)) {
                    return end;
                }
                beat.acked = false;
                beat.sent = Instant::now();
                beat.next = beat.sent + interval;
            }
            set_timeout(socket, beat.next.saturating_duration_since(Instant::now()).min(Duration::from_millis(250)));
            let heard = read(socket, |frame| {
                if let Some(s) = frame.s {
                    *seq = Some(s);
                    self.kept.seq.store(s, Ordering::SeqCst);
                }
                self.heard(frame, session, &mut beat)
            });
            let step = match heard {
                Ok(Some(step)) => step,
                Ok(None) => continue,
                Err(end) => return self.closed(end),
            };
            match step {
                Heard::Nothing => {}
                Heard::BeatAsked => {
                    if let Err(end) = self.send(socket, &mut sent, &Heartbeat::new(*seq)) {
                        return end;
                    }
                    beat.sent = Instant::now();
                }
                Heard::End(end) => return end,
            }
        }
    }

    /// IDENTIFY, or RESUME when there is a session to resume.
    fn hello(
        &self,
        socket: &mut Socket,
        sent: &mut Vec<Instant>,
        session: Option<&Session>,
        seq: Option<u64>,
    ) -> Result<(), End> {
        if let Some(s) = session {
            self.events.count("resume");
            return self.send(socket, sent, &Resume::new(seq.unwrap_or(0), s.id.clone(), self.token.clone()));
        }
        if !self.gate.wait(self.id, &self.stop) {
            return Err(End::Stop);
        }
        self.events.count("identify");
        let shard = ShardId::new(self.id, self.count.max(self.id + 1));
        self.send(socket, sent, &Identify::new(&self.token, self.intents, shard))
    }

    /// What a frame asks of the shard; dispatches go to the server.
    fn heard(&self, frame: Frame<'_>, session: &mut Option<Session>, beat: &mut Beat) -> Heard {
        match frame.op() {
            Some(OpCode::Dispatch) => {
                let t = frame.t.as_deref().unwrap_or_default();
                let raw = frame.d.map_or("null", |d| d.get());
                let Some(event) = Dispatch::parse(t, raw) else {
                    if t == "INTERACTION_CREATE" {
                        unread_interaction(self.id, raw);
                    }
                    return Heard::Nothing;
                };
                match &event {
                    Dispatch::Ready(ready) => {
                        let id = ready.session_id.clone().unwrap_or_default();
                        let resume_url = ready.resume_gateway_url.clone().unwrap_or_else(|| self.url.clone());
                        *session = Some(Session { id, resume_url });
                        self.kept.set(session.clone());
                        tracing::info!(shard = self.id, intents = self.intents.bits(), "Gateway ready");
                    }
                    Dispatch::Resumed => tracing::info!(shard = self.id, "Gateway resumed"),
                    _ => {}
                }
                self.events.dispatch(t, event, raw);
                Heard::Nothing
            }
            // Asked for a heartbeat: answered at once, even right after
            // one of the shard's own; a flood of asks, only up to its bound.
            Some(OpCode::Heartbeat) if beat.asked.check().is_ok() => Heard::BeatAsked,
            Some(OpCode::Reconnect) => {
                tracing::info!(shard = self.id, "the Gateway asked to reconnect");
                Heard::End(End::Resume { backoff: false })
            }
            Some(OpCode::InvalidSession) => {
                let resumable = frame.resumable();
                tracing::info!(shard = self.id, resumable, "the Gateway invalidated the session");
                self.stop.wait(Duration::from_millis(1000 + (jitter() * 4000.0) as u64));
                Heard::End(if resumable && session.is_some() { End::Resume { backoff: false } } else { End::Identify })
            }
            Some(OpCode::HeartbeatAck) => {
                beat.acked = true;
                self.events.heartbeat(beat.sent.elapsed());
                Heard::Nothing
            }
            _ => Heard::Nothing,
        }
    }

    /// What a closed connection means.
    fn closed(&self, close: Closed) -> End {
        match close {
            Closed::Code(code, reason) => {
                if let Some(why) = fatal_close(code, self.intents) {
                    return End::Fatal(why, Some(code));
                }
                tracing::warn!(shard = self.id, code, reason, "the Gateway closed the connection");
                if resumable_after(code) {
                    End::Resume { backoff: true }
                } else {
                    End::Identify
                }
            }
            Closed::TooLarge => {
                tracing::warn!(
                    shard = self.id,
                    limit_bytes = MAX_MESSAGE,
                    "a Gateway message over the size limit was refused; reconnecting"
                );
                End::Resume { backoff: true }
            }
            Closed::Lost => End::Resume { backoff: true },
        }
    }
}

/// How a connection ended, as read.
enum Closed {
    /// A close frame: its code and reason (the reason as sent, cut short).
    Code(u16, String),
    /// A message over [`MAX_MESSAGE`].
    TooLarge,
    /// No close frame: the connection dropped.
    Lost,
}

/// Connects to the Gateway at `url` within [`CONNECT_TIME`] (a Gateway that
/// takes the connection and never answers must not hold the shard, nor the
/// server's stop), saying who blkc is, with messages bounded in size.
fn open(url: &str) -> Result<Socket, ConnectError> {
    use tungstenite::client::IntoClientRequest as _;
    let mut request = url.into_client_request().map_err(ConnectError::Request)?;
    request.headers_mut().insert("User-Agent", tungstenite::http::HeaderValue::from_static(super::rest::USER_AGENT));
    let parsed = url::Url::parse(url).map_err(ConnectError::Url)?;
    let host = parsed.host_str().unwrap_or_default().trim_start_matches('[').trim_end_matches(']');
    let port = parsed.port_or_known_default().unwrap_or(443);
    let addresses = resolve(host, port)?;
    let mut last = ConnectError::NoAddress { host: host.to_string() };
    for address in addresses {
        let stream = match std::net::TcpStream::connect_timeout(&address, CONNECT_TIME) {
            Ok(s) => s,
            Err(e) => {
                last = ConnectError::Connect(e);
                continue;
            }
        };
        // The handshake's reads and writes are bounded too; the shard sets
        // its own read time-out once connected.
        let _ = stream.set_read_timeout(Some(CONNECT_TIME));
        let _ = stream.set_write_timeout(Some(CONNECT_TIME));
        let config = tungstenite::protocol::WebSocketConfig::default()
            .max_message_size(Some(MAX_MESSAGE))
            .max_frame_size(Some(MAX_MESSAGE));
        return match tungstenite::client_tls_with_config(request, stream, Some(config), None) {
            Ok((socket, _)) => Ok(socket),
            Err(tungstenite::HandshakeError::Failure(e)) => Err(ConnectError::Handshake(e)),
            Err(tungstenite::HandshakeError::Interrupted(_)) => {
                Err(ConnectError::Handshake(tungstenite::Error::Io(std::io::ErrorKind::WouldBlock.into())))
            }
        };
    }
    Err(last)
}

/// The addresses of `host`, looked up within [`CONNECT_TIME`]: the
/// system's resolver has no deadline of its own, and a lookup that hangs
/// must not hold the shard (nor the server's stop). The lookup runs on a
/// thread of its own; one that outlives the deadline ends by itself and
/// is dropped.
fn resolve(host: &str, port: u16) -> Result<Vec<std::net::SocketAddr>, ConnectError> {
    let (tx, rx) = std::sync::mpsc::channel();
    let name = host.to_string();
    std::thread::Builder::new()
        .name("blkc-resolve".into())
        .spawn(move || {
            let found = std::net::ToSocketAddrs::to_socket_addrs(&(name.as_str(), port)).map(Iterator::collect);
            let _ = tx.send(found);
        })
        .map_err(ConnectError::Thread)?;
    match rx.recv_timeout(CONNECT_TIME) {
        Ok(found) => found.map_err(|error| ConnectError::Lookup { host: host.to_string(), error }),
        Err(_) => Err(ConnectError::LookupSlow { host: host.to_string() }),
    }
}

/// The heartbeat's state on one connection.
struct Beat {
    next: Instant,
    acked: bool,
    sent: Instant,
    /// The beats the Gateway asks for that are answered ([`ASKED_BEATS_BURST`]).
    asked: governor::DefaultDirectRateLimiter,
}

impl Beat {
    fn asked_limit() -> governor::DefaultDirectRateLimiter {
        let burst = std::num::NonZeroU32::new(ASKED_BEATS_BURST).expect("a burst of one or more");
        let quota = governor::Quota::per_second(std::num::NonZeroU32::MIN).allow_burst(burst);
        governor::RateLimiter::direct(quota)
    }
}

/// IDENTIFY (op 2) with the fields the platform documents for it and no
/// others: `twilight-model`'s own type also sends `capabilities` and a
/// `presence` of `null`, which the documented structure does not have.
#[derive(serde::Serialize)]
struct Identify<'a> {
    op: OpCode,
    d: IdentifyData<'a>,
}

#[derive(serde::Serialize)]
struct IdentifyData<'a> {
    token: &'a str,
    properties: IdentifyProperties,
    compress: bool,
    large_threshold: u64,
    shard: ShardId,
    intents: Intents,
}

impl<'a> Identify<'a> {
    fn new(token: &'a str, intents: Intents, shard: ShardId) -> Identify<'a> {
        let properties = IdentifyProperties::new("blkc", "blkc", std::env::consts::OS);
        let d = IdentifyData { token, properties, compress: false, large_threshold: 250, shard, intents };
        Identify { op: OpCode::Identify, d }
    }
}

/// What a frame asks of the shard.
enum Heard {
    Nothing,
    BeatAsked,
    End(End),
}

/// The next message, as `take` reads its frame: `Ok(None)` on a read
/// time-out, a frame that is not text or not a Gateway message; `Err` with
/// how the connection ended. A frame's `d` is read only as far as blkc
/// uses it ([`Dispatch::parse`]): a message of a few MiB costs about what
/// it says that blkc keeps, not many times its size.
fn read<T>(socket: &mut Socket, take: impl FnOnce(Frame<'_>) -> T) -> Result<Option<T>, Closed> {
    match socket.read() {
        Ok(Message::Text(t)) => Ok(serde_json::from_str::<Frame<'_>>(t.as_str()).ok().map(take)),
        Ok(Message::Close(Some(frame))) => {
            let reason: String = frame.reason.as_str().chars().take(200).collect();
            Err(Closed::Code(u16::from(frame.code), reason))
        }
        Ok(Message::Close(None)) => Err(Closed::Lost),
        Ok(_) => Ok(None),
        Err(tungstenite::Error::Io(e))
            if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) =>
        {
            Ok(None)
        }
        Err(tungstenite::Error::Capacity(_)) => Err(Closed::TooLarge),
        Err(_) => Err(Closed::Lost),
    }
}

/// An INTERACTION_CREATE that cannot be read is logged, never silent: its
/// user sees "This interaction failed". Only where and what kind of fault
/// is said (a value of it could be a member's text or its token).
fn unread_interaction(shard: u32, raw: &str) {
    let why = match serde_json::from_str::<super::model::Interaction>(raw) {
        _ if !raw.trim_start().starts_with('{') => "its data is not a JSON object".to_string(),
        Err(e) => format!("{:?} at line {} column {}", e.classify(), e.line(), e.column()),
        Ok(_) => "its data is not one blkc reads".to_string(),
    };
    tracing::warn!(
        shard,
        bytes = raw.len(),
        fault = why,
        "an INTERACTION_CREATE from the Gateway could not be read and is not answered: its user sees \"This interaction failed\""
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lookup_gives_the_addresses_or_why_not() {
        let found = resolve("127.0.0.1", 443).unwrap();
        assert_eq!(found, ["127.0.0.1:443".parse::<std::net::SocketAddr>().unwrap()]);
    }

    #[test]
    fn identifies_wait_for_their_bucket_and_the_session_budget() {
        let body = r#"{ "url": "wss://x", "shards": 4,
            "session_start_limit": { "remaining": 3, "reset_after": 400, "max_concurrency": 2 } }"#;
        let info = GatewayInfo::from_wire(serde_json::from_str(body).unwrap()).unwrap();
        let mut gate = IdentifyGate::new(&info);
        gate.spacing = Duration::from_millis(300);
        let stop = crate::base::stop::StopSignal::new();
        let started = Instant::now();
        // Shards 0 and 1 are in buckets 0 and 1: both at once.
        assert!(gate.wait(0, &stop) && gate.wait(1, &stop));
        assert!(started.elapsed() < Duration::from_millis(200));
        // Shard 2 shares bucket 0 with shard 0: it waits its spacing.
        assert!(gate.wait(2, &stop));
        assert!(started.elapsed() >= Duration::from_millis(290));
        // The budget of 3 is spent: the next waits for the reset.
        assert!(gate.wait(3, &stop));
        assert!(started.elapsed() >= Duration::from_millis(390));
        stop.set();
        assert!(!gate.wait(0, &stop));
    }

    #[test]
    fn plain_ws_goes_only_to_this_machine_and_the_query_is_set() {
        assert_eq!(gateway_url("wss://gateway.discord.gg").unwrap(), "wss://gateway.discord.gg/?v=10&encoding=json");
        assert!(gateway_url("ws://127.0.0.1:9/").is_ok());
        assert!(gateway_url("ws://gateway.example.com/").is_err());
        assert!(gateway_url("https://gateway.example.com/").is_err());
        assert!(fatal_close(4014, Intents::GUILD_MEMBERS).unwrap().contains("Server Members Intent"));
        assert!(fatal_close(4000, Intents::empty()).is_none());
        assert!(!resumable_after(4007) && !resumable_after(4009) && resumable_after(4000) && resumable_after(1006));
    }
}
