//! How many threads of this process wait on the network now: in a request
//! to an API (`run::eval::http`) or to the platform (`discord::rest`). The
//! run pool reads it (`host::serve::pool`): a thread that waits leaves its
//! core to another.

/// Threads of this process waiting on the network now.
static BLOCKED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// How many threads wait on the network now.
pub fn blocked() -> usize {
    BLOCKED.load(std::sync::atomic::Ordering::Relaxed)
}

/// Counts this thread among those waiting on the network while it lives.
pub struct Blocking(());

impl Blocking {
    pub fn start() -> Blocking {
        BLOCKED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Blocking(())
    }
}

impl Drop for Blocking {
    fn drop(&mut self) {
        BLOCKED.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
}
