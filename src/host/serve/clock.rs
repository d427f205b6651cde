//! The time serving reads: milliseconds since the Unix epoch.

use std::time::SystemTime;

/// Milliseconds since the Unix epoch.
pub fn epoch_ms() -> i64 {
    SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}
