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
use super::shared::{Queued, Shared, Work};
use super::trigger::{About, Outcome, Trigger};
use crate::base::stop::StopSignal;
use crate::language::plan::TreeKind;
use crate::run::store::later::Later;

/// A claim's lease, in the bot's clock: renewed every third of it.
pub const LEASE_MS: i64 = 30_000;

/// The longest this thread sleeps before it asks the store again: work
/// another process kept is seen within it.
const POLL: Duration = Duration::from_secs(1);

/// The thread of the waiting work, until [`LaterThread::stop`].
pub struct LaterThread {
    stop: StopSignal,
    thread: std::thread::JoinHandle<()>,
}

impl LaterThread {
    pub fn stop(self) {
        self.stop.set();
        let _ = self.thread.join();
    }
}

/// Starts the thread.
pub fn start(shared: &Arc<Shared>) -> std::io::Result<LaterThread> {
    let stop = StopSignal::new();
    let (shared, stopped) = (shared.clone(), stop.clone());
    let thread = std::thread::Builder::new().name("blkc-later".into()).spawn(move || {
        let held: Held = Arc::default();
        let mut renewed = std::time::Instant::now();
        // How many pieces this thread queued, told to a test that asks.
        let mut queued = 0;
        while !stopped.is_set() && !shared.life.draining() {
            let ran = claim_and_queue(&shared, &held);
            queued += ran;
            if renewed.elapsed() >= shared.clock.real(LEASE_MS / 3) {
                renew(&shared, &held);
                renewed = std::time::Instant::now();
            }
            // A conversation test that moved the clock asks for what is due
            // now, and is told how many pieces were queued so far.
            let Some(asked) = shared.hooks.as_ref().map(|h| h.later.clone()) else {
                stopped.wait(wait(&shared, ran));
                continue;
            };
            crossbeam_channel::select! {
                recv(asked) -> reply => if let Ok(reply) = reply {
                    loop {
                        let n = claim_and_queue(&shared, &held);
                        queued += n;
                        if n == 0 { break }
                    }
                    let _ = reply.send(queued);
                },
                default(wait(&shared, ran)) => {}
            }
        }
    })?;
    Ok(LaterThread { stop, thread })
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
