//! The platform's rate limits, kept by one limiter per process that every
//! request carrying the bot token goes through: the runs' own requests
//! (through [`Limiter`]) and blkc's (docs/serve.md, "Rate limits").

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Deserialize;

/// Requests a second the platform allows a bot across every route.
pub const GLOBAL_PER_SECOND: usize = 50;

/// The window the global limit is kept in: a second, and a tenth more for
/// the time between a request leaving and reaching the platform, which
/// varies (`cargo bench --bench store` measured up to 13 requests over in a
/// platform's second on a plain one-second window, with two processes).
const GLOBAL_WINDOW: Duration = Duration::from_millis(1100);

/// The platform's rate limits, shared by every request of a process that
/// carries the bot token.
pub trait Limiter: Send + Sync + std::fmt::Debug {
    /// Waits for the request's turn; an error says how long the turn is
    /// past `deadline`.
    fn before(&self, method: &str, url: &url::Url, deadline: Instant) -> Result<(), Wait>;
    /// Learns from an answer's headers; a 429 gives how long to wait before
    /// trying again.
    fn after(
        &self,
        method: &str,
        url: &url::Url,
        status: u16,
        headers: &[(String, String)],
        body: &[u8],
    ) -> Option<Duration>;
}

/// What an answer tells the limiter.
pub struct Heard<'a> {
    pub status: u16,
    pub headers: &'a [(String, String)],
    pub body: &'a [u8],
}

/// Why a limited send ended without an answer.
#[derive(Debug)]
pub enum Unsent<E> {
    /// Its turn comes after its deadline.
    Wait(Wait),
    /// The request failed.
    Failed(E),
}

/// The one send loop through the limiter, for the runs' bot-token requests
/// and blkc's own calls alike: the request's turn, the request, what its
/// answer teaches; a 429 is tried once more when its wait fits before
/// `deadline`. With no limiter, the request alone.
pub fn send<T, E>(
    limiter: Option<&dyn Limiter>,
    (method, url): (&str, &url::Url),
    deadline: Instant,
    mut attempt: impl FnMut() -> Result<T, E>,
    heard: impl for<'a> Fn(&'a T) -> Heard<'a>,
) -> Result<T, Unsent<E>> {
    let mut retried = false;
    loop {
        if let Some(limiter) = limiter {
            limiter.before(method, url, deadline).map_err(Unsent::Wait)?;
        }
        let answer = attempt().map_err(Unsent::Failed)?;
        let Some(limiter) = limiter else { return Ok(answer) };
        let h = heard(&answer);
        match limiter.after(method, url, h.status, h.headers, h.body) {
            Some(wait) if !retried && Instant::now() + wait < deadline => {
                std::thread::sleep(wait);
                retried = true;
            }
            _ => return Ok(answer),
        }
    }
}

/// A request whose turn comes after its deadline: how long it would wait.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Wait(pub Duration);

impl std::fmt::Display for Wait {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the platform's rate limit asks to wait {:.1} s, past the deadline", self.0.as_secs_f64())
    }
}

/// A 429's body.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RateLimited {
    retry_after: Option<f64>,
    global: Option<bool>,
}

/// The platform's rate limits as it announces them: per-route buckets
/// (`X-RateLimit-Bucket`, `-Remaining`, `-Reset-After`), the global limit of
/// 50 requests a second, and a 429's `retry_after` (global or per route).
#[derive(Debug)]
pub struct RateLimiter {
    state: Mutex<Limits>,
    /// Requests a second across every route: this process's share of the
    /// bot's global limit.
    per_second: std::sync::atomic::AtomicUsize,
    /// The bot's global limit, for every process sharing it.
    global: usize,
}

impl Default for RateLimiter {
    fn default() -> RateLimiter {
        RateLimiter::with_global(GLOBAL_PER_SECOND)
    }
}

#[derive(Debug, Default)]
struct Limits {
    /// Route (method and path with only its major parameter) to bucket.
    routes: HashMap<String, String>,
    /// Bucket and major parameter to what is left of it.
    buckets: HashMap<String, Bucket>,
    /// Nothing is sent before this (a global 429).
    global_until: Option<Instant>,
    /// When the last requests of the past second were sent.
    recent: VecDeque<Instant>,
    /// When the platform last answered 401, 403 or 429 (the last ten minutes).
    invalid: VecDeque<Instant>,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    remaining: u64,
    reset_at: Instant,
}

/// The route of a request: its method and path, with IDs made `:id` except
/// the major parameter (the channel, server or webhook), which the
/// platform limits on its own.
fn route(method: &str, url: &url::Url) -> (String, String) {
    let segments: Vec<&str> = url.path().split('/').filter(|s| !s.is_empty()).collect();
    // Skip the API's prefix (`api`, `v10`).
    let start = segments
        .iter()
        .position(|s| !(*s == "api" || s.starts_with('v') && s[1..].bytes().all(|b| b.is_ascii_digit())))
        .unwrap_or(0);
    let mut major = String::new();
    let mut shape = String::from(method);
    let mut previous = "";
    let mut token_next = false;
    for s in &segments[start..] {
        shape.push('/');
        if token_next {
            // A webhook's token is part of its major parameter.
            major.push('/');
            major.push_str(s);
            shape.push_str(":token");
            token_next = false;
        } else if matches!(previous, "channels" | "guilds" | "webhooks") && major.is_empty() {
            major = s.to_string();
            token_next = previous == "webhooks";
            shape.push_str(":major");
        } else if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
            shape.push_str(":id");
        } else {
            shape.push_str(s);
        }
        previous = s;
    }
    (shape, major)
}

impl RateLimiter {
    pub fn new() -> RateLimiter {
        RateLimiter::default()
    }

    /// A limiter whose global limit is `per_second` (a bot the platform
    /// has granted a higher limit: `--global-rate-limit`).
    pub fn with_global(per_second: usize) -> RateLimiter {
        let global = per_second.max(1);
        RateLimiter { state: Mutex::new(Limits::default()), per_second: global.into(), global }
    }

    /// Shares the global limit evenly among `processes` processes of one
    /// bot; returns this one's share (at least one request a second).
    pub fn share(&self, processes: usize) -> usize {
        let share = (self.global / processes.max(1)).max(1);
        self.per_second.store(share, std::sync::atomic::Ordering::Relaxed);
        share
    }

    /// Answers of 401, 403 and 429 in the last ten minutes (the platform
    /// bans an address for a while at 10,000).
    pub fn invalid_recently(&self) -> usize {
        let s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        s.invalid.iter().filter(|t| now.duration_since(**t) <= Duration::from_secs(600)).count()
    }
}

/// The one limiter: the runs' bot-token requests reach it through
/// [`Limiter`], and the REST client calls it the same way.
impl Limiter for RateLimiter {
    /// Waits until `method url` may be sent, or says why it may not be
    /// before `deadline`.
    fn before(&self, method: &str, url: &url::Url, deadline: Instant) -> Result<(), Wait> {
        let (shape, major) = route(method, url);
        loop {
            let now = Instant::now();
            let wait = {
                let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
                while s.recent.front().is_some_and(|t| now.duration_since(*t) >= GLOBAL_WINDOW) {
                    s.recent.pop_front();
                }
                let mut wait = Duration::ZERO;
                if let Some(until) = s.global_until {
                    wait = wait.max(until.saturating_duration_since(now));
                }
                if s.recent.len() >= self.per_second.load(std::sync::atomic::Ordering::Relaxed) {
                    let oldest = s.recent[0];
                    wait = wait.max((oldest + GLOBAL_WINDOW).saturating_duration_since(now));
                }
                let key = s.routes.get(&shape).map(|b| format!("{b}:{major}"));
                if let Some(bucket) = key.as_ref().and_then(|k| s.buckets.get(k)) {
                    if bucket.remaining == 0 && bucket.reset_at > now {
                        wait = wait.max(bucket.reset_at - now);
                    }
                }
                if wait.is_zero() {
                    s.recent.push_back(now);
                    if let Some(bucket) = key.and_then(|k| s.buckets.get_mut(&k)) {
                        if bucket.reset_at <= now {
                            // The bucket has reset; the answer will say how much is left.
                            bucket.remaining = u64::MAX;
                        }
                        bucket.remaining = bucket.remaining.saturating_sub(1);
                    }
                    return Ok(());
                }
                wait
            };
            if now + wait > deadline {
                return Err(Wait(wait));
            }
            std::thread::sleep(wait);
        }
    }

    /// Learns the limits from an answer; for a 429, how long to wait
    /// before trying again.
    fn after(
        &self,
        method: &str,
        url: &url::Url,
        status: u16,
        headers: &[(String, String)],
        body: &[u8],
    ) -> Option<Duration> {
        let (shape, major) = route(method, url);
        let header = |name: &str| headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.trim());
        let now = Instant::now();
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if matches!(status, 401 | 403 | 429) {
            s.invalid.push_back(now);
            while s.invalid.front().is_some_and(|t| now.duration_since(*t) > Duration::from_secs(600)) {
                s.invalid.pop_front();
            }
        }
        if let Some(bucket) = header("x-ratelimit-bucket") {
            s.routes.insert(shape, bucket.to_string());
            let remaining = header("x-ratelimit-remaining").and_then(|v| v.parse::<u64>().ok());
            let reset = header("x-ratelimit-reset-after")
                .and_then(|v| v.parse::<f64>().ok())
                .filter(|v| v.is_finite() && *v >= 0.0);
            if let (Some(remaining), Some(reset)) = (remaining, reset) {
                let reset_at = now + Duration::from_secs_f64(reset.min(3600.0));
                s.buckets.insert(format!("{bucket}:{major}"), Bucket { remaining, reset_at });
            }
        }
        if status != 429 {
            return None;
        }
        let said: RateLimited = serde_json::from_slice(body).unwrap_or_default();
        let retry = said
            .retry_after
            .or_else(|| header("retry-after").and_then(|v| v.parse::<f64>().ok()))
            .filter(|v| v.is_finite() && *v >= 0.0)
            .unwrap_or(1.0)
            .min(3600.0);
        let wait = Duration::from_secs_f64(retry);
        let global = said.global.unwrap_or(false)
            || header("x-ratelimit-global").is_some_and(|v| v.eq_ignore_ascii_case("true"))
            || header("x-ratelimit-scope").is_some_and(|v| v.eq_ignore_ascii_case("global"));
        if global {
            s.global_until = Some(now + wait);
        } else if let Some(bucket) = s.routes.get(&route(method, url).0).cloned() {
            s.buckets.insert(format!("{bucket}:{major}"), Bucket { remaining: 0, reset_at: now + wait });
        }
        Some(wait)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_keep_only_their_major_parameter() {
        let u = |s: &str| url::Url::parse(s).unwrap();
        assert_eq!(
            route("POST", &u("https://discord.com/api/v10/channels/123/messages")),
            ("POST/channels/:major/messages".into(), "123".into())
        );
        assert_eq!(
            route("PATCH", &u("https://x/api/webhooks/1/tok/messages/@original")).0,
            "PATCH/webhooks/:major/:token/messages/@original"
        );
        assert_eq!(route("PATCH", &u("https://x/api/webhooks/1/tok/messages/@original")).1, "1/tok");
        assert_eq!(
            route("GET", &u("https://x/api/guilds/9/members/55")),
            ("GET/guilds/:major/members/:id".into(), "9".into())
        );
    }

    #[test]
    fn the_global_limit_lets_50_requests_through_a_second() {
        let limiter = RateLimiter::new();
        let url = url::Url::parse("http://127.0.0.1:1/api/channels/5/messages").unwrap();
        let started = Instant::now();
        for _ in 0..GLOBAL_PER_SECOND {
            limiter.before("POST", &url, started + Duration::from_secs(5)).unwrap();
        }
        // The 51st waits for the first to be a second old (a lower bound:
        // the limit's own guarantee, not a speed).
        limiter.before("POST", &url, started + Duration::from_secs(5)).unwrap();
        assert!(started.elapsed() >= Duration::from_millis(990));
        // And one that cannot have its turn before its deadline says so.
        let limiter = RateLimiter::new();
        for _ in 0..GLOBAL_PER_SECOND {
            limiter.before("POST", &url, Instant::now() + Duration::from_secs(5)).unwrap();
        }
        assert!(limiter.before("POST", &url, Instant::now() + Duration::from_millis(100)).is_err());
    }

    #[test]
    fn a_share_of_the_global_limit_is_what_one_process_may_send() {
        let limiter = RateLimiter::new();
        let url = url::Url::parse("http://127.0.0.1:1/api/channels/5/messages").unwrap();
        assert_eq!((limiter.share(2), limiter.share(3), limiter.share(200), limiter.share(0)), (25, 16, 1, 50));
        assert_eq!(limiter.share(2), 25);
        let started = Instant::now();
        for _ in 0..25 {
            limiter.before("POST", &url, started + Duration::from_secs(5)).unwrap();
        }
        // The 26th waits for the first to be a second old.
        assert!(limiter.before("POST", &url, Instant::now() + Duration::from_millis(100)).is_err());
        limiter.before("POST", &url, started + Duration::from_secs(5)).unwrap();
        assert!(started.elapsed() >= Duration::from_millis(990));
        // Alone again: the whole limit.
        assert_eq!(limiter.share(1), 50);
        limiter.before("POST", &url, Instant::now() + Duration::from_millis(10)).unwrap();
    }

    #[test]
    fn an_empty_bucket_waits_for_its_reset_and_a_429_says_how_long() {
        let limiter = RateLimiter::new();
        let url = url::Url::parse("http://127.0.0.1:1/api/channels/5/messages").unwrap();
        let headers = vec![
            ("X-RateLimit-Bucket".to_string(), "abc".to_string()),
            ("X-RateLimit-Remaining".to_string(), "0".to_string()),
            ("X-RateLimit-Reset-After".to_string(), "0.2".to_string()),
        ];
        assert_eq!(limiter.after("POST", &url, 200, &headers, b""), None);
        let started = Instant::now();
        limiter.before("POST", &url, started + Duration::from_secs(5)).unwrap();
        assert!(started.elapsed() >= Duration::from_millis(150));
        // Past the deadline: refused at once rather than waiting.
        limiter.after("POST", &url, 200, &headers, b"");
        assert!(limiter.before("POST", &url, Instant::now() + Duration::from_millis(10)).is_err());
        let wait = limiter.after("POST", &url, 429, &headers, br#"{"retry_after": 0.05, "global": false}"#);
        assert_eq!(wait, Some(Duration::from_millis(50)));
        assert_eq!(limiter.invalid_recently(), 1);
    }
}
