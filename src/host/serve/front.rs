//! The HTTP front door: connections through the door, `/healthz`,
//! `/metrics`, and `POST /interactions` (size, signature, the body, a
//! replay's refusal), each interaction made a trigger and queued, and its
//! first answer given by the deadline.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Method, Request, Response, StatusCode};
use tokio::sync::oneshot;

use super::clock::epoch_ms;
use super::ending::{ended, Ended, Ending};
use super::replay::REPLAY_MEMORY;
use super::shared::Shared;
use super::shared::{Busy, Queued, Stop, Work};
use super::trigger::{tree_of, About, Answer, Outcome, Phase, Trigger};
use crate::discord::model::{Interaction, InteractionType};
use crate::discord::outgoing;
use crate::discord::outgoing::{Message, Outgoing};
use crate::discord::{self, signature};
use crate::language::plan::TreeKind;

/// The listener at `at`, and the address it is bound to (`:0` picks one).
pub fn listen(how: Listen) -> Result<(Option<tokio::net::TcpListener>, Option<SocketAddr>), Stop> {
    let Some(at) = how.at else { return Ok((None, None)) };
    let cannot = |error: std::io::Error| Stop::Listen { at, error };
    let socket = if at.is_ipv4() { tokio::net::TcpSocket::new_v4() } else { tokio::net::TcpSocket::new_v6() };
    let socket = socket.map_err(cannot)?;
    // As every listener on unix: a restarted server binds its port at once,
    // not after the old connections' TIME_WAIT.
    socket.set_reuseaddr(true).map_err(cannot)?;
    if how.reuse_port {
        socket.set_reuseport(true).map_err(cannot)?;
    }
    socket.bind(at).map_err(cannot)?;
    let listener = socket.listen(how.backlog()).map_err(cannot)?;
    let address = listener.local_addr().map_err(cannot)?;
    Ok((Some(listener), Some(address)))
}

/// Where and how the front door listens.
pub struct Listen {
    pub at: Option<SocketAddr>,
    /// Connections the kernel may hold before they are taken: the cap on
    /// connections (`--max-connections`), so that a burst of new ones waits
    /// for the accept loop instead of overflowing (the kernel then drops
    /// SYNs, and a client retries after a second: past the platform's 3 s).
    pub backlog: usize,
    pub reuse_port: bool,
}

impl Listen {
    /// The backlog asked of the kernel, which caps it at
    /// `net.core.somaxconn` (see [`backlog_in_effect`]).
    fn backlog(&self) -> u32 {
        u32::try_from(self.backlog).unwrap_or(u32::MAX).clamp(128, 65_535)
    }
}

/// The backlog the kernel gives a listener that asks for `asked`: at most
/// `net.core.somaxconn`.
pub fn backlog_in_effect(asked: usize) -> usize {
    let most = std::fs::read_to_string("/proc/sys/net/core/somaxconn").ok().and_then(|s| s.trim().parse().ok());
    let asked = Listen { at: None, backlog: asked, reuse_port: false }.backlog() as usize;
    most.map_or(asked, |most: usize| asked.min(most))
}

/// The accept loop's state: the door, and when running out of open files
/// was last logged.
pub struct Front {
    door: Arc<super::door::Door>,
    emfile_logged: Option<Instant>,
    /// Other processes share the port (`--reuse-port`).
    reuse_port: bool,
}

impl Front {
    pub fn new(door: Arc<super::door::Door>, reuse_port: bool) -> Front {
        Front { door, emfile_logged: None, reuse_port }
    }

    /// Takes connections until SIGTERM, SIGINT or a Gateway refusal; then
    /// drains with the listener still open, so new requests are answered
    /// 503 (and `/healthz` says so) until the runs in flight are done.
    pub async fn serve(
        mut self,
        shared: &Arc<Shared>,
        listener: Option<tokio::net::TcpListener>,
        drain_timeout: Duration,
    ) {
        let stop = super::shared::stop_signal();
        tokio::pin!(stop);
        let asked = async {
            match shared.hooks.as_ref().and_then(|h| h.stop.clone()) {
                Some(stop) => stop.notified().await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(asked);
        loop {
            tokio::select! {
                _ = &mut stop => break,
                _ = &mut asked => break,
                _ = shared.life.fatal_notify.notified() => break,
                accepted = accept(listener.as_ref()) => self.take(shared, accepted).await,
            }
        }
        shared.life.gateway_stop.set();
        let listener = match listener {
            Some(listener) if self.reuse_port => {
                self.hand_over(shared, listener).await;
                None
            }
            listener => listener,
        };
        let drained = super::shared::drain(shared.clone(), drain_timeout);
        tokio::pin!(drained);
        loop {
            tokio::select! {
                _ = &mut drained => break,
                accepted = accept(listener.as_ref()) => self.take(shared, accepted).await,
            }
        }
    }

    /// Stops listening, so that the other processes on the port take the
    /// new connections: takes the ones the kernel already queued for this
    /// listener (closing it would reset them; at most as many as the
    /// backlog holds), then closes it. A connection
    /// that arrives in between is reset, unless the kernel migrates it
    /// (`net.ipv4.tcp_migrate_req`; docs/serve.md).
    async fn hand_over(&mut self, shared: &Arc<Shared>, listener: tokio::net::TcpListener) {
        shared.life.handing_over.store(true, Ordering::SeqCst);
        let mut taken = 0;
        // At most a backlog's worth: a flood of new connections must not
        // keep the process from stopping.
        while taken < self.door.max() {
            let queued = std::future::poll_fn(|cx| match listener.poll_accept(cx) {
                std::task::Poll::Pending => std::task::Poll::Ready(None),
                std::task::Poll::Ready(accepted) => std::task::Poll::Ready(Some(accepted)),
            })
            .await;
            match queued {
                Some(Ok(accepted)) => {
                    taken += 1;
                    self.take(shared, Ok(accepted)).await;
                }
                Some(Err(_)) | None => break,
            }
        }
        drop(listener);
        tracing::info!(
            queued_connections = taken,
            "stopped listening; the other processes on the port take new connections"
        );
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
                    tracing::error!(
                        error = %e,
                        "cannot accept a connection; backing off (new connections wait in the backlog)"
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
        let (shared, door) = (shared.clone(), self.door.clone());
        tokio::spawn(async move {
            let slot = admitted.slot.clone();
            // A connection that sends nothing gives its place back soon,
            // or at once when a new one needs it.
            let mut first = [0u8; 1];
            tokio::select! {
                peeked = tokio::time::timeout(super::door::FIRST_BYTE, stream.peek(&mut first)) => match peeked {
                    Ok(Ok(n)) if n > 0 => {}
                    Ok(_) => return,
                    Err(_) => {
                        shared.metrics.connection_refused("silent");
                        return;
                    }
                },
                () = slot.evict.notified() => {
                    shared.metrics.connection_refused("idle");
                    return;
                }
            }
            let (metrics, on_slot) = (shared.clone(), slot.clone());
            let service = hyper::service::service_fn(move |req| {
                let (shared, door, slot) = (shared.clone(), door.clone(), on_slot.clone());
                async move {
                    slot.busy();
                    let reply = handle(shared, req).await;
                    super::door::Admitted::idle(&door, &slot);
                    reply
                }
            });
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(Duration::from_secs(10))
                .max_buf_size(64 * 1024)
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service);
            tokio::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => {}
                () = slot.evict.notified() => {
                    // Idle between requests, it gives way: a request it has
                    // begun since is still answered, then it closes.
                    metrics.metrics.connection_refused("idle");
                    connection.as_mut().graceful_shutdown();
                    let _ = connection.await;
                }
            }
            drop(admitted);
        });
    }
}

/// The next connection, or never when there is no listener.
async fn accept(listener: Option<&tokio::net::TcpListener>) -> std::io::Result<(tokio::net::TcpStream, SocketAddr)> {
    match listener {
        Some(l) => l.accept().await,
        None => std::future::pending().await,
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

fn json_reply(value: &impl serde::Serialize) -> Reply {
    match serde_json::to_vec(value) {
        Ok(body) => respond(StatusCode::OK, "application/json", body),
        Err(_) => respond(StatusCode::INTERNAL_SERVER_ERROR, "text/plain", "internal error\n"),
    }
}

async fn handle(shared: Arc<Shared>, req: Request<Incoming>) -> Result<Reply, Infallible> {
    let _busy = Busy::new(&shared);
    let reply = match (req.method(), req.uri().path()) {
        (&Method::GET, "/healthz") if shared.life.draining() => {
            respond(StatusCode::SERVICE_UNAVAILABLE, "text/plain", "draining\n")
        }
        (&Method::GET, "/healthz") => match shared.bot.store.health() {
            // Runs that read or save would fail: the process is not well.
            Some(why) => respond(StatusCode::SERVICE_UNAVAILABLE, "text/plain", format!("store unreachable: {why}\n")),
            None => respond(StatusCode::OK, "text/plain", "ok\n"),
        },
        (&Method::GET, "/metrics") => respond(StatusCode::OK, super::metrics::CONTENT_TYPE, shared.metrics.render()),
        (&Method::POST, "/interactions") => interaction(&shared, req).await,
        (_, "/healthz" | "/metrics" | "/interactions") => {
            respond(StatusCode::METHOD_NOT_ALLOWED, "text/plain", "method not allowed\n")
        }
        (&Method::POST, _) => webhook(&shared, req).await,
        _ => respond(StatusCode::NOT_FOUND, "text/plain", "not found\n"),
    };
    let mut reply = reply;
    if shared.life.handing_over() {
        // The client reconnects, to a process that goes on serving.
        reply.headers_mut().insert(hyper::header::CONNECTION, hyper::header::HeaderValue::from_static("close"));
    }
    Ok(reply)
}

/// A POST to another path: a webhook event's, if the file has one there.
async fn webhook(shared: &Arc<Shared>, req: Request<Incoming>) -> Reply {
    let loaded = shared.bot.loaded();
    match super::webhooks::find(&loaded, req.uri().path()) {
        Some((tree, hook)) => match super::webhooks::post(shared, req, (loaded, tree, hook)).await {
            super::webhooks::Answer::Status(status, text) => respond(status, "text/plain", text),
            super::webhooks::Answer::Body(refused) => body_refused(shared, refused),
        },
        None => respond(StatusCode::NOT_FOUND, "text/plain", "not found\n"),
    }
}

/// The answer to a body that was not read.
fn body_refused(shared: &Shared, refused: super::door::BodyRefused) -> Reply {
    use super::door::BodyRefused;
    match refused {
        BodyRefused::TooLarge => {
            shared.metrics.interaction(Outcome::TooLarge);
            respond(StatusCode::PAYLOAD_TOO_LARGE, "text/plain", "too large\n")
        }
        BodyRefused::Busy => {
            shared.metrics.interaction(Outcome::BodiesFull);
            respond(StatusCode::SERVICE_UNAVAILABLE, "text/plain", "busy\n")
        }
        BodyRefused::TooSlow => respond(StatusCode::REQUEST_TIMEOUT, "text/plain", "too slow\n"),
        BodyRefused::Broken => respond(StatusCode::BAD_REQUEST, "text/plain", "bad request\n"),
    }
}

/// What an interaction gets first, however it came.
enum First {
    /// The answer: the HTTP exchange's body, or the callback's.
    Answer(Box<discord::message::Answer>),
    /// Not run: the HTTP status and text to refuse it with.
    Refused(StatusCode, &'static str),
}

/// An answer of twilight's type.
fn typed(answer: twilight_model::http::interaction::InteractionResponse) -> First {
    First::Answer(Box::new(answer.into()))
}

fn reply(first: First) -> Reply {
    match first {
        First::Answer(answer) => json_reply(&answer),
        First::Refused(status, text) => respond(status, "text/plain", text),
    }
}

/// `POST /interactions`: size, signature, then the body.
async fn interaction(shared: &Arc<Shared>, req: Request<Incoming>) -> Reply {
    let received = Instant::now();
    if shared.life.draining() && !shared.life.handing_over() {
        return respond(StatusCode::SERVICE_UNAVAILABLE, "text/plain", "draining\n");
    }
    let interaction = match signed(shared, req).await {
        Ok(i) => i,
        Err(reply) => return reply,
    };
    reply(answer(shared, interaction, received).await)
}

/// An interaction the Gateway delivered (the application has no
/// Interactions Endpoint URL): the same answer as the front door's, by the
/// same deadline, sent to its callback.
pub async fn over_gateway(shared: Arc<Shared>, interaction: Interaction, received: Instant) {
    let _busy = Busy::new(&shared);
    if shared.life.draining() {
        return;
    }
    let (id, token) = (interaction.id().to_string(), interaction.token().to_string());
    let First::Answer(first) = answer(&shared, interaction, received).await else { return };
    let platform = shared.bot.platform(&shared.bot.loaded());
    // Logged while the token is hidden: a transport error may quote the URL.
    let _ = tokio::task::spawn_blocking(move || {
        let route = discord::rest::Route::Callback { interaction: &id, token: &token };
        let deadline = Instant::now() + Duration::from_secs(10);
        super::log::hiding(Some(&token), || {
            let why = match platform.send(route, Some(&*first), deadline).map(|answer| answer.refusal()) {
                Ok(Ok(())) => return,
                Ok(Err(refusal)) => format!("the platform refused the answer {refusal}"),
                Err(e) => e.to_string(),
            };
            tracing::warn!(error = why, "an interaction's callback failed");
        })
    })
    .await;
}

/// The first answer to an interaction whose bytes were the platform's: a
/// replay's refusal, or the run queued and answered by the deadline.
async fn answer(shared: &Arc<Shared>, interaction: Interaction, received: Instant) -> First {
    if let Some(refused) = refusal(shared, &interaction) {
        return refused;
    }
    // A keystroke past its user's rate costs nothing more: no replay check
    // with the store, no write, no run. One within it is checked against
    // this process's memory only (a keystroke replayed to another process
    // offers choices again, within its user's rate): a flood of keystrokes
    // never takes the store's checks from commands.
    let autocomplete = interaction.kind() == Ok(InteractionType::ApplicationCommandAutocomplete);
    if autocomplete && !shared.front.keystrokes.allow(interaction.user_id()) {
        ended(
            shared,
            Ended::Before { about: About::interaction(&interaction), received },
            Ending::of(Outcome::Limited),
        );
        return typed(discord::message::autocomplete(&[]));
    }
    if !first_delivery(shared, interaction.id(), received, !autocomplete).await {
        shared.metrics.interaction(Outcome::Replayed);
        tracing::warn!(id = interaction.id(), "replayed interaction refused");
        return First::Refused(StatusCode::CONFLICT, "interaction already answered\n");
    }
    let loaded = shared.bot.loaded();
    let tree = match tree_of(&loaded, &interaction) {
        Ok(tree) => tree,
        Err(None) if autocomplete => {
            let about = About::interaction(&interaction);
            ended(shared, Ended::Before { about, received }, Ending::of(Outcome::UnknownCommand));
            return typed(discord::message::autocomplete(&[]));
        }
        Err(None) => {
            let about = About::interaction(&interaction);
            ended(shared, Ended::Before { about, received }, Ending::of(Outcome::UnknownCommand));
            return typed(discord::message::answer(&Message::notice(outgoing::UNKNOWN)));
        }
        Err(Some(handler)) => {
            // A message sent by an earlier version of the file, or an id
            // blkc did not write: said to the user, logged, never run.
            return stale(shared, &interaction, received, Outcome::UnknownHandler, |about| {
                tracing::warn!(id = about.id(), handler, "a component or form names a handler the file does not have");
            });
        }
    };
    if matches!(interaction.kind(), Ok(InteractionType::MessageComponent | InteractionType::ModalSubmit)) {
        if let Err(why) = super::trigger::clicked(&loaded.plan, &interaction) {
            // A message from before a reload that changed its component, or
            // a click on what the message never offered: never run, and
            // never counted against another component's limits.
            return stale(shared, &interaction, received, Outcome::Stale, |about| {
                tracing::warn!(id = about.id(), why = %why, "a click matches nothing the bot offered; answered as stale");
            });
        }
    }
    let (first, answer) = oneshot::channel();
    let answer_state = Arc::new(Answer::new(&interaction, first));
    let server = interaction.guild_id.clone().unwrap_or_default();
    let channel = interaction.channel_id.clone().unwrap_or_default();
    let names = shared.bot.cache.names(&server, &channel);
    let trigger = Trigger::from_interaction(&interaction, (loaded, tree), answer_state.clone(), names, received);
    queue_and_answer(shared, trigger, (answer_state, answer)).await
}

/// A click or a form that runs nothing: the user is told privately that it
/// no longer does anything; `log` says why (its token hidden), and it is
/// counted and logged as `outcome`.
fn stale(
    shared: &Shared,
    interaction: &Interaction,
    received: Instant,
    outcome: Outcome,
    log: impl FnOnce(&About),
) -> First {
    let about = About::interaction(interaction);
    super::log::hiding(about.token(), || log(&about));
    ended(shared, Ended::Before { about, received }, Ending::of(outcome));
    typed(discord::message::answer(&Message::notice(outgoing::STALE)))
}

/// The interaction of a signed body: its size and signature hold, and it
/// reads as one. Nothing unsigned is parsed beyond its size.
async fn signed(shared: &Arc<Shared>, req: Request<Incoming>) -> Result<Interaction, Reply> {
    let front = &shared.front;
    let header = |name: &str| req.headers().get(name).map(|v| v.as_bytes().to_vec());
    let signature = header("x-signature-ed25519");
    let timestamp = header("x-signature-timestamp");
    let too_large = req
        .headers()
        .get(hyper::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok())
        .is_some_and(|n| n > front.max_body as u64);
    if too_large {
        shared.metrics.interaction(Outcome::TooLarge);
        return Err(respond(StatusCode::PAYLOAD_TOO_LARGE, "text/plain", "too large\n"));
    }
    // Unsigned bytes: read into the bodies' budget, never past it.
    let body = super::door::read(req.into_body(), front.max_body, &front.bodies)
        .await
        .map_err(|refused| body_refused(shared, refused))?;
    let body = &body.bytes;
    let Some(public_key) = &front.public_key else {
        return Err(respond(StatusCode::NOT_FOUND, "text/plain", "not found\n"));
    };
    if let Err(refused) =
        signature::verify(public_key, signature.as_deref(), timestamp.as_deref(), body, SystemTime::now())
    {
        shared.metrics.interaction(Outcome::Unauthorized);
        tracing::warn!(status = 401, why = refused.as_str(), "refused");
        return Err(respond(StatusCode::UNAUTHORIZED, "text/plain", "invalid request signature\n"));
    }
    Interaction::from_slice(body).map_err(|e| {
        shared.metrics.interaction(Outcome::Malformed);
        tracing::warn!(error = %e, "malformed interaction");
        respond(StatusCode::BAD_REQUEST, "text/plain", "malformed interaction\n")
    })
}

/// The answer to an interaction blkc does not run: anything but a command
/// whose application id and token are of the platform's form (they make
/// the path of every later message). A PING is answered here.
fn refusal(shared: &Shared, interaction: &Interaction) -> Option<First> {
    match interaction.kind() {
        Ok(InteractionType::Ping) => {
            shared.metrics.interaction(Outcome::Ping);
            Some(typed(discord::message::pong()))
        }
        Ok(
            InteractionType::ApplicationCommand
            | InteractionType::ApplicationCommandAutocomplete
            | InteractionType::MessageComponent
            | InteractionType::ModalSubmit,
        ) if !discord::is_snowflake(interaction.application_id())
            || !discord::is_interaction_token(interaction.token()) =>
        {
            shared.metrics.interaction(Outcome::Malformed);
            tracing::warn!("malformed interaction: its application id or token is not of the platform's form");
            Some(First::Refused(StatusCode::BAD_REQUEST, "malformed interaction\n"))
        }
        Ok(
            InteractionType::ApplicationCommand
            | InteractionType::ApplicationCommandAutocomplete
            | InteractionType::MessageComponent
            | InteractionType::ModalSubmit,
        ) => None,
        other => {
            let code = match other {
                Ok(kind) => kind as u8,
                Err(code) => code,
            };
            shared.metrics.interaction(Outcome::Unsupported);
            tracing::warn!(r#type = code, "interaction of a type blkc does not answer");
            Some(First::Refused(StatusCode::BAD_REQUEST, "unsupported interaction type\n"))
        }
    }
}

/// Queues the command's run, and gives the HTTP exchange its first answer
/// by the deadline: the run's first message, or "thinking" (or "busy"
/// when the queue is full).
async fn queue_and_answer(
    shared: &Arc<Shared>,
    trigger: Trigger,
    (answer, mut first): (Arc<Answer>, oneshot::Receiver<Outgoing>),
) -> First {
    let received = trigger.received;
    // A tree that says nothing in public defers in private: then its
    // replies, and "Done." or a failure, edit the deferral as they are. A
    // handler that updates its component's message defers as an update.
    let tree = &trigger.loaded.plan.trees[trigger.tree];
    let private = !crate::language::plan::any_public_reply(&tree.steps);
    let update = tree.kind == TreeKind::Handler && crate::language::plan::any_update(&tree.steps);
    let autocomplete = tree.kind == TreeKind::Autocomplete;
    // The run holds the server busy until it is answered in full.
    let work = Work { _queued: Queued::new(shared), trigger };
    let queue = if autocomplete { &shared.queue.keystrokes } else { &shared.queue.jobs };
    if let Err(e) = queue.try_send(work) {
        let work = e.into_inner();
        ended(shared, Ended::Trigger(&work.trigger), Ending::of(Outcome::Busy));
        if autocomplete {
            return typed(discord::message::autocomplete(&[]));
        }
        return typed(discord::message::answer(&Message::notice(outgoing::BUSY)));
    }
    let deadline = tokio::time::Instant::from_std(received + shared.front.answer_within);
    let answered = |said: &Outgoing| First::Answer(Box::new(discord::message::first_answer(said)));
    let deferral = || match update {
        true => discord::message::deferred_update(),
        false => discord::message::deferred(private),
    };
    match tokio::time::timeout_at(deadline, &mut first).await {
        Ok(Ok(said)) => answered(&said),
        Ok(Err(_)) => answered(&Outgoing::Message(Message::notice(outgoing::FAILED))),
        Err(_) => {
            let mut phase = answer.phase.lock().unwrap_or_else(|e| e.into_inner());
            match &*phase {
                // An autocomplete cannot be deferred: past the deadline, it
                // offers nothing (its run's choices, when they come, are
                // dropped, and the run counted failed with why).
                Phase::Waiting(_) if autocomplete => {
                    *phase = Phase::Answered { original_is_component: false };
                    typed(discord::message::autocomplete(&[]))
                }
                Phase::Waiting(_) => {
                    *phase = Phase::Deferred { edited: false, private, update };
                    shared.metrics.deferral();
                    typed(deferral())
                }
                // The first message came as the time ran out.
                _ => match first.try_recv() {
                    Ok(said) => answered(&said),
                    Err(_) => typed(deferral()),
                },
            }
        }
    }
}

/// Whether interaction `id` is new: to this process, and to the others
/// sharing its store. A new one is remembered across a restart too (the
/// same signed bytes stay valid for 5 minutes).
async fn first_delivery(shared: &Arc<Shared>, id: &str, received: Instant, across: bool) -> bool {
    let first = shared.front.replay.lock().unwrap_or_else(|e| e.into_inner()).first(id, received);
    let first = first && (!across || first_across_processes(shared, id, received).await);
    if first {
        let key = crate::run::store::delivery_key("interaction", id);
        shared.bot.store.remember(key, epoch_ms() + REPLAY_MEMORY.as_millis() as i64);
    }
    first
}

/// Whether no other process sharing the store has taken interaction `id`.
/// Asked within a bound, so that the first
/// answer never waits on the store past the platform's deadline; a store
/// that does not answer in time (or is known not to) lets the interaction
/// run: this process's own memory still refuses replays.
async fn first_across_processes(shared: &Arc<Shared>, id: &str, received: Instant) -> bool {
    let store = &shared.bot.store;
    if !store.shared() || store.health().is_some() {
        return true;
    }
    // At most a few checks at once: a burst of checks, each on a blocking
    // task that keeps its connection past its bound, would take every
    // connection of the store's pool from the runs.
    static CHECKS: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(8);
    let (store, key) = (store.clone(), crate::run::store::delivery_key("interaction", id));
    let keep = REPLAY_MEMORY.as_millis() as i64;
    let bound = tokio::time::Instant::from_std(received + (shared.front.answer_within / 3).min(Duration::from_secs(1)));
    let asked = async {
        let permit = CHECKS.acquire().await.map_err(|_| "the check failed".to_string())?;
        let asked = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            store.first_time(&key, epoch_ms(), keep)
        });
        match asked.await {
            Ok(Ok(first)) => Ok(first),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err("the check failed".to_string()),
        }
    };
    let why = match tokio::time::timeout_at(bound, asked).await {
        Ok(Ok(first)) => return first,
        Ok(Err(why)) => why,
        Err(_) => "no answer in time; the interaction runs".to_string(),
    };
    tracing::warn!(error = why, "the store could not say whether the interaction is new");
    true
}
