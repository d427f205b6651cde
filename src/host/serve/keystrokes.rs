//! An autocomplete's keystrokes, limited per user. Each keystroke in an
//! option with `autocomplete` runs its tree, whose api blocks reach a
//! server: a user who types faster than [`PER_SECOND`] after a burst of
//! [`BURST`] (or a client that sends faster) is offered no choices for the
//! keystrokes past it, so that no chat user can make the bot flood an API.
//! The limit is each process's own (docs/serve.md says so).

use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};

use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

/// Keystrokes a user may send at once.
pub const BURST: u32 = 5;
/// Keystrokes a user may send each second, past the burst.
pub const PER_SECOND: u32 = 2;
/// How often (in keystrokes) the users idle long enough to have their
/// whole burst back are forgotten.
const SWEEP_EVERY: u64 = 1024;

pub struct Keystrokes {
    limiter: DefaultKeyedRateLimiter<String>,
    checks: AtomicU64,
}

impl Default for Keystrokes {
    fn default() -> Keystrokes {
        let per_second = NonZeroU32::new(PER_SECOND).unwrap_or(NonZeroU32::MIN);
        let burst = NonZeroU32::new(BURST).unwrap_or(NonZeroU32::MIN);
        Keystrokes {
            limiter: RateLimiter::keyed(Quota::per_second(per_second).allow_burst(burst)),
            checks: AtomicU64::new(0),
        }
    }
}

impl Keystrokes {
    /// Whether `user`'s keystroke may run its autocomplete (and counts it).
    pub fn allow(&self, user: &str) -> bool {
        if self.checks.fetch_add(1, Ordering::Relaxed) % SWEEP_EVERY == SWEEP_EVERY - 1 {
            self.limiter.retain_recent();
        }
        self.limiter.check_key(&user.to_string()).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_user_past_the_burst_waits_and_another_user_does_not() {
        let keys = Keystrokes::default();
        let allowed = (0..BURST + 3).filter(|_| keys.allow("1001")).count();
        // (A refill may land while the loop runs on a slow machine.)
        assert!(allowed >= BURST as usize && allowed < BURST as usize + 3, "{allowed}");
        assert!(keys.allow("1002"));
        std::thread::sleep(std::time::Duration::from_millis(1000 / u64::from(PER_SECOND) + 50));
        assert!(keys.allow("1001"));
    }
}
