//! Waiting for what a test is about, never for a fixed time: a condition
//! polled until it holds, within a bound with room for a busy machine.

use std::time::{Duration, Instant};

/// Waits (up to `secs`) for `f` to hold; whether it did.
pub fn eventually(secs: u64, mut f: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < until {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    f()
}
