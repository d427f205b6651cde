//! A timed event's tick, claimed in the store by the process that runs
//! it, and held by its run.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
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
