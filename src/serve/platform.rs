//! The chat platform's API as blkc's own client: registration, the answers
//! to interactions (webhook edits and follow-ups), all through one rate
//! limiter per process that the runs' own requests with the bot token
//! share (docs/serve.md, "Rate limits").

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value as Json;

use crate::eval::Limiter as _;

/// Requests a second the platform allows a bot across every route.
pub const GLOBAL_PER_SECOND: usize = 50;

/// The window the global limit is kept in: a second, and a tenth more for
/// the time between a request leaving and reaching the platform, which
/// varies (`cargo bench --bench store` measured up to 13 requests over in a
/// platform's second on a plain one-second window, with two processes).
const GLOBAL_WINDOW: Duration = Duration::from_millis(1100);

/// Whether `id` is a snowflake, the only form of id the platform makes:
/// decimal digits, at most 20 (a 64-bit number). Every id the platform
/// sends is checked with this before it goes into a path with the bot
/// token: an id is untrusted, and `645/../../guilds/77/bans/1?x=` must
/// never become a route.
pub fn is_snowflake(id: &str) -> bool {
    (1..=20).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_digit())
}

/// Whether `token` can stand in a webhook path as an interaction token:
/// the platform's are URL-safe base64 and dots, well under 500 characters.
pub fn is_interaction_token(token: &str) -> bool {
    (1..=500).contains(&token.len()) && token.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
}

/// How the platform answered.
#[derive(Debug, Clone)]
pub struct Answer {
    pub status: u16,
    pub body: Vec<u8>,
}

impl Answer {
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The platform's `message` of an error, made safe to show on one line.
    pub fn message(&self) -> String {
        let text = serde_json::from_slice::<Json>(&self.body)
            .ok()
            .and_then(|j| j.get("message").and_then(Json::as_str).map(str::to_string))
            .unwrap_or_else(|| String::from_utf8_lossy(&self.body[..self.body.len().min(300)]).into_owned());
        crate::display::one_line(&text)
    }
}

/// The platform's API at `base` (`https://discord.com/api`, or `--platform`).
#[derive(Debug, Clone)]
pub struct Platform {
    agent: ureq::Agent,
    base: String,
    token: Option<String>,
    pub limiter: Arc<RateLimiter>,
}

impl Platform {
    pub fn new(base: &str, token: Option<String>, limiter: Arc<RateLimiter>) -> Platform {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .timeout_connect(Some(Duration::from_secs(10)))
            .timeout_global(Some(Duration::from_secs(30)))
            .user_agent(concat!("DiscordBot (https://github.com/blkc, ", env!("CARGO_PKG_VERSION"), ") blkc"))
            .build();
        Platform { agent: config.into(), base: base.trim_end_matches('/').to_string(), token, limiter }
    }

    pub fn base(&self) -> &str {
        &self.base
    }

    /// Sends `method path` with a JSON body; `with_token` adds the bot's
    /// `Authorization`. Waits for the rate limits, and once for a 429, as
    /// long as `deadline` allows.
    pub fn send(
        &self,
        method: &str,
        path: &str,
        body: Option<&Json>,
        with_token: bool,
        deadline: Instant,
    ) -> Result<Answer, String> {
        let url = format!("{}{path}", self.base);
        let parsed = url::Url::parse(&url).map_err(|e| format!("bad platform URL: {e}"))?;
        let token = match (with_token, &self.token) {
            (true, Some(t)) => Some(t.as_str()),
            (true, None) => return Err("no bot token (set BLKC_BOT_TOKEN or --bot-token-file)".into()),
            (false, _) => None,
        };
        let mut retried = false;
        loop {
            self.limiter.before(method, &parsed, deadline)?;
            let mut request = ureq::http::Request::builder().method(method).uri(url.as_str());
            if let Some(t) = token {
                request = request.header("Authorization", format!("Bot {t}"));
            }
            let sent = match body {
                Some(b) => {
                    let bytes = serde_json::to_vec(b).map_err(|e| e.to_string())?;
                    let request = request.header("Content-Type", "application/json").body(bytes);
                    self.agent.run(request.map_err(|e| e.to_string())?)
                }
                None => self.agent.run(request.body(()).map_err(|e| e.to_string())?),
            };
            let mut response = sent.map_err(|e| format!("{method} {}: {e}", self.redact_path(path)))?;
            let status = response.status().as_u16();
            let headers: Vec<(String, String)> = response
                .headers()
                .iter()
                .map(|(k, v)| (k.as_str().to_string(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
                .collect();
            let body = response.body_mut().with_config().limit(1024 * 1024).read_to_vec().map_err(|e| e.to_string())?;
            let wait = self.limiter.after(method, &parsed, status, &headers, &body);
            match wait {
                Some(wait) if !retried && Instant::now() + wait < deadline => {
                    std::thread::sleep(wait);
                    retried = true;
                }
                _ => return Ok(Answer { status, body }),
            }
        }
    }

    /// A path with an interaction token in it, as a log may show it.
    pub fn redact_path(&self, path: &str) -> String {
        redact_webhook(path)
    }
}

/// `/webhooks/{application}/{token}/…` with the token left out.
pub fn redact_webhook(path: &str) -> String {
    let parts: Vec<&str> = path.split('/').collect();
    match parts.iter().position(|p| *p == "webhooks") {
        Some(i) if parts.len() > i + 2 => {
            let mut parts: Vec<String> = parts.iter().map(|p| p.to_string()).collect();
            parts[i + 2] = "[interaction token]".into();
            parts.join("/")
        }
        _ => path.to_string(),
    }
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
/// [`crate::eval::Limiter`], and [`Platform`] calls it the same way.
impl crate::eval::Limiter for RateLimiter {
    /// Waits until `method url` may be sent, or says why it may not be
    /// before `deadline`.
    fn before(&self, method: &str, url: &url::Url, deadline: Instant) -> Result<(), String> {
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
                return Err(format!(
                    "the platform's rate limit asks to wait {:.1} s, past the deadline",
                    wait.as_secs_f64()
                ));
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
        let json: Option<Json> = serde_json::from_slice(body).ok();
        let retry = json
            .as_ref()
            .and_then(|j| j.get("retry_after"))
            .and_then(Json::as_f64)
            .or_else(|| header("retry-after").and_then(|v| v.parse::<f64>().ok()))
            .filter(|v| v.is_finite() && *v >= 0.0)
            .unwrap_or(1.0)
            .min(3600.0);
        let wait = Duration::from_secs_f64(retry);
        let global = json.as_ref().and_then(|j| j.get("global")).and_then(Json::as_bool).unwrap_or(false)
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
        assert_eq!(
            redact_webhook("/webhooks/1/secret-token/messages/@original"),
            "/webhooks/1/[interaction token]/messages/@original"
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
