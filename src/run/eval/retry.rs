//! When a block's request is sent again (`retry N on … backoff …`), and how
//! long the run waits first. Pure: the runner sends and waits.

use std::time::Duration;

use super::http::Failure;
use crate::language::plan::Retry;
use crate::language::vocab::MAX_BACKOFF_MS;

/// The waits between attempts: `backoff`, doubled each time up to the
/// longest backoff, each with a random part up to the wait again
/// (`backon`'s jitter), so that runs failing together do not come back
/// together; one per retry.
pub fn waits(r: &Retry) -> backon::ExponentialBackoff {
    use backon::BackoffBuilder as _;
    backon::ExponentialBuilder::default()
        .with_min_delay(Duration::from_millis(r.backoff_ms))
        .with_max_delay(Duration::from_millis(MAX_BACKOFF_MS))
        .with_jitter()
        .with_max_times(r.times as usize)
        .build()
}

/// Whether an answer of `status` is tried again.
pub fn retried_status(r: &Retry, status: u16) -> bool {
    r.on.iter().any(|(lo, hi)| (*lo..=*hi).contains(&status))
}

/// Whether a request that failed so is tried again: a time-out, a
/// connection that could not be made or broke off. Never one refused
/// before it was sent (an internal address, a redirect refused) or an
/// answer too large: sending it again changes nothing.
pub fn retried_failure(f: &Failure) -> bool {
    matches!(f, Failure::Timeout(_) | Failure::Connect(_) | Failure::Dns(_) | Failure::Broken(_))
}

/// How long the server asks to wait: `Retry-After` in seconds or as an
/// HTTP date (RFC 9110 §10.2.3), or the platform's own
/// `X-RateLimit-Reset-After` (seconds, with a fraction).
pub fn asked_wait(headers: &[(String, String)], now: std::time::SystemTime) -> Option<Duration> {
    let header = |name: &str| headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.trim());
    if let Some(v) = header("retry-after") {
        if let Ok(seconds) = v.parse::<u64>() {
            return Some(Duration::from_secs(seconds));
        }
        if let Ok(at) = httpdate::parse_http_date(v) {
            return Some(at.duration_since(now).unwrap_or_default());
        }
    }
    let seconds = header("x-ratelimit-reset-after")?.parse::<f64>().ok()?;
    (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds.min(86_400.0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn retry(times: u32) -> Retry {
        Retry { times, on: crate::language::plan::RETRIED.to_vec(), backoff_ms: 100, repeatable: true }
    }

    #[test]
    fn waits_are_one_per_retry_and_grow_within_their_jitter() {
        let waits: Vec<Duration> = waits(&retry(3)).collect();
        assert_eq!(waits.len(), 3);
        for (i, w) in waits.iter().enumerate() {
            let base = 100u64 << i;
            assert!(*w >= Duration::from_millis(base) && *w <= Duration::from_millis(2 * base), "{i}: {w:?}");
        }
    }

    #[test]
    fn the_default_statuses_are_the_transient_ones() {
        let r = retry(1);
        for s in [408, 429, 500, 502, 503, 504] {
            assert!(retried_status(&r, s), "{s}");
        }
        for s in [200, 400, 401, 404, 501, 505] {
            assert!(!retried_status(&r, s), "{s}");
        }
    }

    #[test]
    fn retry_after_is_seconds_or_a_date_and_the_platforms_header_counts() {
        let now = std::time::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let h = |k: &str, v: &str| vec![(k.to_string(), v.to_string())];
        assert_eq!(asked_wait(&h("Retry-After", "2"), now), Some(Duration::from_secs(2)));
        let date = httpdate::fmt_http_date(now + Duration::from_secs(5));
        assert_eq!(asked_wait(&h("retry-after", &date), now), Some(Duration::from_secs(5)));
        assert_eq!(asked_wait(&h("X-RateLimit-Reset-After", "1.5"), now), Some(Duration::from_millis(1500)));
        assert_eq!(asked_wait(&h("Retry-After", "soon"), now), None);
        assert_eq!(asked_wait(&h("X-RateLimit-Reset-After", "-1"), now), None);
    }
}
