//! The interactions the front door answered lately, so that one the
//! platform delivers again is answered once.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

/// How long an interaction id is remembered: past it, the timestamp of a
/// replay is stale anyway.
pub const REPLAY_MEMORY: Duration = Duration::from_secs(6 * 60);
/// The most ids remembered.
const REPLAY_MAX: usize = 500_000;

/// Interaction ids seen lately, oldest first.
#[derive(Default)]
pub struct Replay {
    seen: HashMap<String, Instant>,
    order: VecDeque<(Instant, String)>,
}

impl Replay {
    /// What an earlier run of this server took, from the store: each id
    /// remembered for what is left of its time.
    pub fn restore(&mut self, taken: Vec<(String, i64)>, now_ms: i64) {
        let now = Instant::now();
        for (key, expires_ms) in taken {
            let Some(id) = key.strip_prefix("interaction:") else { continue };
            let left = Duration::from_millis(expires_ms.saturating_sub(now_ms).max(0) as u64).min(REPLAY_MEMORY);
            let at = now.checked_sub(REPLAY_MEMORY - left).unwrap_or(now);
            self.seen.insert(id.to_string(), at);
            self.order.push_back((at, id.to_string()));
        }
    }

    /// Whether `id` is new (and now remembered).
    pub fn first(&mut self, id: &str, now: Instant) -> bool {
        while let Some((at, _)) = self.order.front() {
            if now.duration_since(*at) < REPLAY_MEMORY && self.order.len() < REPLAY_MAX {
                break;
            }
            if let Some((_, old)) = self.order.pop_front() {
                self.seen.remove(&old);
            }
        }
        if self.seen.contains_key(id) {
            return false;
        }
        self.seen.insert(id.to_string(), now);
        self.order.push_back((now, id.to_string()));
        true
    }
}
