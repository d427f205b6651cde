//! A signal that one side sets once and any number of threads wait on:
//! once it is set, every wait on it ends at once, however long it was
//! asked to be. Threads that wait between steps (a reconnect's backoff, a
//! lease's renewal, a check-in) wait on it instead of sleeping and polling
//! a flag, so a stop is heard when it is given, not at the next poll.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};

/// Cheap to clone; every clone is the same signal.
#[derive(Clone, Debug)]
pub struct StopSignal(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    set: AtomicBool,
    /// Never sent on: dropped when the signal is set, which ends every
    /// `recv` on the receiver at once.
    sender: Mutex<Option<Sender<()>>>,
    receiver: Receiver<()>,
}

impl Default for StopSignal {
    fn default() -> StopSignal {
        StopSignal::new()
    }
}

impl StopSignal {
    pub fn new() -> StopSignal {
        let (sender, receiver) = crossbeam_channel::bounded(0);
        StopSignal(Arc::new(Inner { set: AtomicBool::new(false), sender: Mutex::new(Some(sender)), receiver }))
    }

    /// Sets the signal: every wait ends now, and every later one at once.
    pub fn set(&self) {
        self.0.set.store(true, Ordering::SeqCst);
        self.0.sender.lock().unwrap_or_else(|e| e.into_inner()).take();
    }

    pub fn is_set(&self) -> bool {
        self.0.set.load(Ordering::SeqCst)
    }

    /// Waits `wait`, or until the signal is set if that comes first:
    /// whether it is set.
    pub fn wait(&self, wait: Duration) -> bool {
        match self.0.receiver.recv_timeout(wait) {
            Err(RecvTimeoutError::Disconnected) => true,
            Ok(()) | Err(RecvTimeoutError::Timeout) => self.is_set(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_ends_when_the_signal_is_set_and_later_ones_at_once() {
        let stop = StopSignal::new();
        assert!(!stop.wait(Duration::from_millis(1)));
        let waiter = {
            let stop = stop.clone();
            std::thread::spawn(move || stop.wait(Duration::from_secs(3600)))
        };
        stop.set();
        assert!(waiter.join().unwrap());
        assert!(stop.is_set() && stop.wait(Duration::from_secs(3600)));
    }
}
