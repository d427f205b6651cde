//! Waiting for what a test is about, never for a fixed time: a condition
//! polled until it holds, within a bound with room for a busy machine.
//! The one poll interval of the tests is here.

use std::time::{Duration, Instant};

/// Waits (up to `secs`) for `f` to hold; whether it did.
pub fn eventually(secs: u64, mut f: impl FnMut() -> bool) -> bool {
    until(secs, || f().then_some(())).is_some()
}

/// Waits (up to `secs`) for `f` to give a value: the first it gives.
pub fn until<T>(secs: u64, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(found) = f() {
            return Some(found);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
