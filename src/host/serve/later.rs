//! Work that waits, in `blkc serve` (docs/serve.md, "Work that waits"):
//! one thread claims the work that is due from the store, queues each
//! piece's run as a timed event's is queued, and removes it once it ran.
//!
//! - **Once across processes**: a piece is claimed in one statement for a
//!   lease ([`LEASE_MS`] of the bot's clock) that this thread renews while
//!   its run goes on; processes sharing a PostgreSQL store claim at once
//!   without waiting on one another (`SKIP LOCKED`). A process killed
//!   mid-run leaves its lease to lapse, and another takes the piece over:
//!   it runs **at least once** while some process lives, and twice only
//!   when a process dies after its run sent and before it removed it.
//! - **Late work runs**: a piece due while no process served (a restart,
//!   an outage) runs when the next process starts, however late.
//! - **Fail closed**: while the store cannot say what is due, nothing
//!   runs; it is tried again at the next poll.
//! - A piece whose tree is gone (the file changed) is removed and logged.

use std::sync::Arc;
use std::time::Duration;

use super::claim::{Held, LaterHold};
use super::ending::{ended, Ended, Ending};
use super::shared::{Queued, Said, Shared, Work};
use super::trigger::{About, Outcome, Trigger};
use crate::base::stop::StopSignal;
use crate::language::plan::TreeKind;
use crate::run::store::later::Later;

/// A claim's lease, in the bot's clock: renewed every third of it.
pub const LEASE_MS: i64 = 30_000;

/// The longest this thread sleeps before it asks the store again: work
/// another process kept is seen within it.
const POLL: Duration = Duration::from_secs(1);

/// The most members' messages on their way to this thread; past it, a
/// message answers no `await` (logged; the wait's time-out runs).
pub const ANSWER_BUFFER: usize = 10_000;

/// A message the Gateway dispatched, sent to this thread when a member
/// (not a bot, not this one) wrote it: the wait it may answer is taken
/// there, where the store is asked, never on the shard's thread.
pub fn maybe_answer(shared: &Shared, event: &crate::discord::model::Dispatch) {
    use crate::discord::is_snowflake;
    let crate::discord::model::Dispatch::Event("MESSAGE_CREATE", f) = event else { return };
    let text = |v: Option<&serde_json::Value>| v.and_then(serde_json::Value::as_str).unwrap_or_default().to_string();
    let author = f.get("author");
    let user = text(author.and_then(|a| a.get("id")));
    let bot = author.and_then(|a| a.get("bot")).and_then(serde_json::Value::as_bool).unwrap_or(false);
    let (server, channel) = (text(f.get("guild_id")), text(f.get("channel_id")));
    if bot || !is_snowflake(&user) || !is_snowflake(&channel) || !(server.is_empty() || is_snowflake(&server)) {
        return;
    }
    let content: String = text(f.get("content")).chars().take(super::events::MAX_CONTENT).collect();
    let said = Said {
        id: text(f.get("id")),
        owner: format!("user:{server}:{user}"),
        key: crate::run::store::later::answer_key(&channel),
        text: content,
    };
    if shared.queue.answers.try_send(said).is_err() {
        // Counted each, logged at the 1st, 2nd, 4th, 8th… (a flood of
        // messages never floods the log).
        static DROPPED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        shared.metrics.answer("dropped");
        let dropped = DROPPED.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        if dropped.is_power_of_two() {
            tracing::warn!(dropped, "members' messages answer no `await`: too many are waiting to be read");
        }
    }
}

/// The thread of the waiting work, until [`LaterThread::stop`].
pub struct LaterThread {
    stop: StopSignal,
    /// Dropped to wake the thread at once.
    wake: crossbeam_channel::Sender<()>,
    thread: std::thread::JoinHandle<()>,
}

impl LaterThread {
    pub fn stop(self) {
        self.stop.set();
        drop(self.wake);
        let _ = self.thread.join();
    }
}

/// Starts the thread.
pub fn start(shared: &Arc<Shared>) -> std::io::Result<LaterThread> {
    let stop = StopSignal::new();
    let (wake, woken) = crossbeam_channel::bounded::<()>(0);
    let (shared, stopped) = (shared.clone(), stop.clone());
    let thread = std::thread::Builder::new().name("blkc-later".into()).spawn(move || {
        let held: Held = Arc::default();
        let mut renewed = std::time::Instant::now();
        let mut next_claim = std::time::Instant::now();
        // How many pieces this thread queued, told to a test that asks.
        let mut queued = 0;
        // A conversation test that moved the clock asks for what is due
        // now, and is told how many pieces were queued so far.
        let asked = shared.hooks.as_ref().map_or_else(crossbeam_channel::never, |h| h.later.clone());
        let answered = shared.queue.answered.clone();
        while !stopped.is_set() && !shared.life.draining() {
            if std::time::Instant::now() >= next_claim {
                let ran = claim_and_queue(&shared, &held);
                queued += ran;
                next_claim = std::time::Instant::now() + wait(&shared, ran);
            }
            if renewed.elapsed() >= shared.clock.real(LEASE_MS / 3) {
                renew(&shared, &held);
                renewed = std::time::Instant::now();
            }
            crossbeam_channel::select! {
                recv(woken) -> _ => {},
                recv(answered) -> said => if let Ok(said) = said {
                    take(&shared, &held, said);
                },
                recv(asked) -> reply => if let Ok(reply) = reply {
                    loop {
                        let n = claim_and_queue(&shared, &held);
                        queued += n;
                        if n == 0 { break }
                    }
                    let _ = reply.send(queued);
                },
                default(next_claim.saturating_duration_since(std::time::Instant::now())) => {}
            }
        }
    })?;
    Ok(LaterThread { stop, wake, thread })
}

/// A member's message: the wait it answers, if one is waiting and not yet
/// due, becomes its answer's run (claimed, as due work is).
fn take(shared: &Arc<Shared>, held: &Held, said: Said) {
    let now = shared.clock.now_ms();
    match shared.bot.store.take_answer((&said.owner, &said.key), &said.text, now, (now + LEASE_MS, super::share::me()))
    {
        Ok(Some(piece)) => {
            shared.metrics.answer("answered");
            queue(shared, held, piece);
        }
        Ok(None) => shared.metrics.answer("none"),
        Err(e) => {
            shared.metrics.answer("failed");
            tracing::warn!(error = %e, "a member's message answers no `await`: the store cannot say what waits");
        }
    }
    if let Some(heard) = shared.hooks.as_ref().and_then(|h| h.heard.as_ref()) {
        heard(&said.id);
    }
}

/// How long to sleep: not at all while a claim took a full batch, else
/// until the next piece is due, at most [`POLL`].
fn wait(shared: &Shared, ran: usize) -> Duration {
    if ran >= crate::run::store::later::CLAIM_BATCH {
        return Duration::ZERO;
    }
    match shared.bot.store.next_due() {
        Ok(Some(due)) => shared.clock.until(due).clamp(Duration::from_millis(5), POLL),
        _ => POLL,
    }
}

/// Claims what is due and queues its runs; how many.
fn claim_and_queue(shared: &Arc<Shared>, held: &Held) -> usize {
    let now = shared.clock.now_ms();
    let me = super::share::me();
    let claimed = match shared.bot.store.claim_due(now, now + LEASE_MS, me) {
        Ok(claimed) => claimed,
        Err(e) => {
            tracing::warn!(error = %e, "the store cannot say what waiting work is due; nothing runs until it can");
            return 0;
        }
    };
    let count = claimed.len();
    for piece in claimed {
        // A piece this process still runs, whose lease lapsed while this
        // thread was held up, is claimed again: its run goes on, once.
        if held.lock().unwrap_or_else(|e| e.into_inner()).contains(&piece.id) {
            continue;
        }
        queue(shared, held, piece);
    }
    count
}

/// Queues one claimed piece's run, held until it ends.
fn queue(shared: &Arc<Shared>, held: &Held, piece: Later) {
    let loaded = shared.bot.loaded();
    let hold = LaterHold::new(piece.id.clone(), super::share::me(), shared.bot.store.clone(), held.clone());
    let Some(tree) = loaded.plan.trees.iter().position(|t| t.kind == TreeKind::Later && t.name == piece.tree) else {
        tracing::warn!(tree = piece.tree.as_str(), "waiting work whose `after` the file no longer has is removed");
        hold.drop_unrun();
        let about = About::Later { tree: piece.tree.clone(), key: piece.key.clone() };
        ended(shared, Ended::Before { about, received: std::time::Instant::now() }, Ending::of(Outcome::Failed));
        return;
    };
    let trigger = Trigger::from_later(loaded.clone(), tree, &piece, hold);
    let work = Work { _queued: Queued::new(shared), trigger };
    if let Err(full) = shared.queue.events.try_send(work) {
        // Its lease lapses, and it is claimed again: nothing is lost.
        tracing::warn!(tree = piece.tree.as_str(), "waiting work left for later: the run queue is full");
        ended(shared, Ended::Trigger(&full.into_inner().trigger), Ending::of(Outcome::Busy));
    }
}

/// Keeps the claims of the runs still going.
fn renew(shared: &Shared, held: &Held) {
    let ids: Vec<String> = held.lock().unwrap_or_else(|e| e.into_inner()).iter().cloned().collect();
    if ids.is_empty() {
        return;
    }
    let until = shared.clock.now_ms() + LEASE_MS;
    if let Err(e) = shared.bot.store.renew_later(&ids, super::share::me(), until).map(|_| ()) {
        tracing::warn!(error = %e, "claims of waiting work could not be renewed; another process may take them over");
    }
}
