//! A timed event's tick, and a piece of waiting work, claimed in the
//! store by the process that runs it, and held by its run.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long a tick's claim is kept in the store once it has run: longer
/// than any process could still be about to run it.
const CLAIM_KEPT: Duration = Duration::from_secs(2 * 86_400);

/// A tick's claim, held by its run: when the run is over (its trigger
/// dropped after it ran), the claim is kept for [`CLAIM_KEPT`]; a run that
/// never started leaves the lease to lapse, for another process to take.
pub struct TickHold {
    key: String,
    store: crate::run::store::Backend,
    done: Arc<AtomicBool>,
    ran: bool,
}

impl TickHold {
    /// The claim on tick `key`, held until its run ends; `done` is set then.
    pub fn new(key: String, store: crate::run::store::Backend, done: Arc<AtomicBool>) -> TickHold {
        TickHold { key, store, done, ran: false }
    }

    /// The run started: its end keeps the claim.
    pub fn started(&mut self) {
        self.ran = true;
    }
}

impl Drop for TickHold {
    fn drop(&mut self) {
        if self.ran {
            let until = super::clock::epoch_ms() + CLAIM_KEPT.as_millis() as i64;
            if let Err(e) = self.store.hold(&self.key, until) {
                tracing::warn!(tick = self.key.as_str(), error = %e, "a tick's claim could not be kept after its run; another process may run it again");
            }
        }
        self.done.store(true, Ordering::SeqCst);
    }
}

/// The pieces this process claimed whose runs have not ended: renewed.
pub type Held = Arc<Mutex<HashSet<String>>>;

/// A piece's claim, held by its run: when the run is over, the piece is
/// removed; a run that never started leaves the lease to lapse.
pub struct LaterHold {
    id: String,
    me: &'static str,
    store: crate::run::store::Backend,
    held: Held,
    ran: bool,
}

impl LaterHold {
    /// The claim of piece `id` by process `me`, held in `held` (renewed)
    /// until its run ends.
    pub fn new(id: String, me: &'static str, store: crate::run::store::Backend, held: Held) -> LaterHold {
        held.lock().unwrap_or_else(|e| e.into_inner()).insert(id.clone());
        LaterHold { id, me, store, held, ran: false }
    }

    /// The run starts once its claim is still this process's, renewed
    /// until `until_ms`: its end removes the piece. False when another
    /// process took the piece over meanwhile (this one was held up past
    /// the lease): then it must not run, and the other's claim stands.
    pub fn start(&mut self, until_ms: i64) -> bool {
        match self.store.renew_later(std::slice::from_ref(&self.id), self.me, until_ms) {
            Ok(0) => false,
            Ok(_) => {
                self.ran = true;
                true
            }
            // The store cannot say: fail closed; the lease lapses.
            Err(e) => {
                tracing::warn!(id = self.id.as_str(), error = %e, "waiting work not run: its claim could not be checked");
                false
            }
        }
    }

    /// Removed without running (its tree is gone).
    pub fn drop_unrun(mut self) {
        self.ran = true;
    }
}

impl Drop for LaterHold {
    fn drop(&mut self) {
        self.held.lock().unwrap_or_else(|e| e.into_inner()).remove(&self.id);
        if self.ran {
            if let Err(e) = self.store.done_later(&self.id, self.me) {
                tracing::warn!(id = self.id.as_str(), error = %e, "waiting work ran but could not be removed; it may run again");
            }
        }
    }
}
