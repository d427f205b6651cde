//! The time serving reads: the system's, as milliseconds since the Unix
//! epoch ([`epoch_ms`]: claims, leases, the replay memory, which other
//! processes and the store compare), and the [`Clock`] the bot's own time
//! follows (timed events, cooldowns and click limits), given to the server
//! in its `Config`: the system's, or the tests' faster one.

use std::time::{Duration, SystemTime};

/// Milliseconds since the Unix epoch.
pub fn epoch_ms() -> i64 {
    SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

/// Milliseconds since the Unix epoch: the system's, or a faster clock for
/// tests: at the system's `anchor` it reads `start`, and it runs `speed`
/// times as fast.
#[derive(Debug, Clone, Default)]
pub struct Clock {
    test: Option<(i64, i64, i64)>,
    /// Milliseconds a conversation test moved the clock forward (its
    /// `wait` steps), shared with the test's stage.
    moved: Option<std::sync::Arc<std::sync::atomic::AtomicI64>>,
}

impl Clock {
    /// The system's clock.
    pub fn system() -> Clock {
        Clock { test: None, moved: None }
    }

    /// The system's clock, moved forward by what `moved` holds (a
    /// conversation test's `wait "10s"` adds to it).
    pub fn movable(moved: std::sync::Arc<std::sync::atomic::AtomicI64>) -> Clock {
        Clock { test: None, moved: Some(moved) }
    }

    /// This clock, moved forward by what `moved` holds as well (`blkc
    /// play`'s clock control).
    pub fn moved_by(self, moved: std::sync::Arc<std::sync::atomic::AtomicI64>) -> Clock {
        Clock { moved: Some(moved), ..self }
    }

    /// `START_MS,ANCHOR_MS,SPEED` (`BLKC_TEST_CLOCK`, read by the command
    /// line): a clock that reads `START_MS` at the system's `ANCHOR_MS` and
    /// runs `SPEED` times as fast; `None` for any other text.
    pub fn parse(text: &str) -> Option<Clock> {
        let mut parts = text.split(',').map(|p| p.trim().parse::<i64>());
        match (parts.next()?, parts.next()?, parts.next()?) {
            (Ok(start), Ok(anchor), Ok(speed)) if speed >= 1 => {
                Some(Clock { test: Some((start, anchor, speed)), moved: None })
            }
            _ => None,
        }
    }

    pub fn now_ms(&self) -> i64 {
        let real = epoch_ms();
        let moved = self.moved.as_ref().map_or(0, |m| m.load(std::sync::atomic::Ordering::SeqCst));
        moved
            + match self.test {
                None => real,
                Some((start, anchor, speed)) => start + (real - anchor) * speed,
            }
    }

    /// The system's time until this clock reads `at_ms` (zero if it has).
    pub fn until(&self, at_ms: i64) -> Duration {
        self.real(at_ms - self.now_ms())
    }

    /// The system's time a span of this clock's milliseconds takes.
    pub fn real(&self, ms: i64) -> Duration {
        let speed = self.test.map_or(1, |(_, _, speed)| speed);
        Duration::from_millis(u64::try_from(ms.max(0) / speed).unwrap_or(0))
    }
}
