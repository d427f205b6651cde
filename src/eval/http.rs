//! Sending one request with ureq: time-outs, a cap on the decoded body, and
//! redirects followed here rather than by ureq, so that secret headers never
//! reach another host and a request carrying the bot token follows none.

use std::io::Read;
use std::time::{Duration, Instant};

use url::Url;

use super::request::Built;
use crate::policy;

/// Limits a user can change by flag (docs/cli.md).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub connect_timeout: Duration,
    /// For the whole request: every redirect and the body included.
    pub timeout: Duration,
    /// The most bytes of a decoded (decompressed) response body.
    pub max_body: u64,
    pub max_redirects: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            connect_timeout: Duration::from_secs(10),
            timeout: Duration::from_secs(30),
            max_body: 10 * 1024 * 1024,
            max_redirects: 5,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Header {
    pub name: String,
    pub value: String,
    /// Holds a secret slot or the bot token: never sent to another host.
    pub secret: bool,
}

#[derive(Debug)]
pub struct Incoming {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub url: Url,
    pub redirects: u32,
    /// A redirect was answered but not followed (the request carried the
    /// bot token).
    pub redirect_refused: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// Nothing listens there, or the connection broke.
    Connect(String),
    /// The host name does not resolve.
    Dns(String),
    Tls(String),
    Timeout(String),
    /// The decoded body is larger than the cap.
    TooLarge(u64),
    TooManyRedirects(u32),
    /// A redirect to somewhere that is not an http(s) URL.
    BadRedirect(String),
    Other(String),
}

pub struct Client {
    agent: ureq::Agent,
    limits: Limits,
}

impl Client {
    pub fn new(limits: Limits) -> Client {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .max_redirects_will_error(false)
            .timeout_connect(Some(limits.connect_timeout))
            .timeout_global(Some(limits.timeout))
            .user_agent(concat!("blkc/", env!("CARGO_PKG_VERSION")))
            .build();
        let agent = ureq::Agent::with_parts(
            config,
            ureq::unversioned::transport::DefaultConnector::new(),
            CachingResolver::default(),
        );
        Client { agent, limits }
    }

    pub fn send(&self, request: Built) -> Result<Incoming, Failure> {
        let started = Instant::now();
        let Built { mut method, mut url, mut headers, mut body, carries_token } = request;
        let mut redirects = 0;
        loop {
            let remaining = self.limits.timeout.checked_sub(started.elapsed()).unwrap_or_default();
            if remaining.is_zero() {
                return Err(Failure::Timeout(format!("no answer within {:?}", self.limits.timeout)));
            }
            let mut builder = ureq::http::Request::builder().method(method.as_str()).uri(url.as_str());
            for h in &headers {
                builder = builder.header(h.name.as_str(), h.value.as_str());
            }
            let req = builder.body(body.clone().unwrap_or_default()).map_err(|e| Failure::Other(e.to_string()))?;
            let req = self.agent.configure_request(req).timeout_global(Some(remaining)).build();
            let response = self.agent.run(req).map_err(failure)?;
            let status = response.status().as_u16();
            let location = response.headers().get("location").and_then(|v| v.to_str().ok()).map(str::to_string);
            let response_headers: Vec<(String, String)> = response
                .headers()
                .iter()
                .map(|(k, v)| (k.as_str().to_string(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
                .collect();
            let is_redirect = matches!(status, 301 | 302 | 303 | 307 | 308);
            let follows = policy::follows_redirects(carries_token);
            match location {
                Some(location) if is_redirect && follows => {
                    if redirects == self.limits.max_redirects {
                        return Err(Failure::TooManyRedirects(redirects));
                    }
                    let next = url.join(&location).map_err(|e| Failure::BadRedirect(format!("{location}: {e}")))?;
                    if !matches!(next.scheme(), "http" | "https") {
                        return Err(Failure::BadRedirect(format!("{} is not http(s)", next.scheme())));
                    }
                    // Drain the rest of the redirect's body so the connection
                    // can be reused.
                    let _ = response.into_body().with_config().limit(64 * 1024).read_to_vec();
                    if !policy::same_origin(&next, &url) {
                        headers.retain(|h| policy::forwarded_across_origins(&h.name, h.secret));
                    }
                    if let Some(changed) = policy::redirected_method(status, method) {
                        method = changed;
                        body = None;
                        headers.retain(|h| !h.name.eq_ignore_ascii_case("content-type"));
                    }
                    url = next;
                    redirects += 1;
                }
                location => {
                    let refused = location.filter(|_| is_redirect && !follows);
                    let mut reader = response.into_body().into_with_config().limit(u64::MAX).reader();
                    let mut bytes = Vec::new();
                    (&mut reader)
                        .take(self.limits.max_body + 1)
                        .read_to_end(&mut bytes)
                        .map_err(|e| read_failure(e, self.limits.max_body))?;
                    if bytes.len() as u64 > self.limits.max_body {
                        return Err(Failure::TooLarge(self.limits.max_body));
                    }
                    return Ok(Incoming {
                        status,
                        headers: response_headers,
                        body: bytes,
                        url,
                        redirects,
                        redirect_refused: refused,
                    });
                }
            }
        }
    }
}

/// Resolves each host once per run, and an IP address without a lookup.
///
/// ureq's default resolver runs every lookup on a new thread when a time-out
/// is set (so that the time-out can be kept), even for `127.0.0.1`; with a
/// request per block that was the largest cost of a run on loopback.
#[derive(Debug, Default)]
struct CachingResolver {
    inner: ureq::unversioned::resolver::DefaultResolver,
    cache: std::sync::Mutex<std::collections::HashMap<String, ureq::unversioned::resolver::ResolvedSocketAddrs>>,
}

impl ureq::unversioned::resolver::Resolver for CachingResolver {
    fn resolve(
        &self,
        uri: &ureq::http::Uri,
        config: &ureq::config::Config,
        timeout: ureq::unversioned::transport::NextTimeout,
    ) -> Result<ureq::unversioned::resolver::ResolvedSocketAddrs, ureq::Error> {
        let host = uri.host().unwrap_or_default().trim_start_matches('[').trim_end_matches(']');
        let port = uri.port_u16().unwrap_or(if uri.scheme_str() == Some("https") { 443 } else { 80 });
        if let Ok(ip) = host.parse::<std::net::IpAddr>() {
            let mut addrs = self.empty();
            addrs.truncate(0);
            addrs.push(std::net::SocketAddr::new(ip, port));
            return Ok(addrs);
        }
        let key = format!("{host}:{port}");
        if let Some(hit) = self.cache.lock().ok().and_then(|c| c.get(&key).cloned()) {
            return Ok(hit);
        }
        let addrs = self.inner.resolve(uri, config, timeout)?;
        if let Ok(mut cache) = self.cache.lock() {
            cache.insert(key, addrs.clone());
        }
        Ok(addrs)
    }
}

fn failure(e: ureq::Error) -> Failure {
    use ureq::Error as E;
    match e {
        E::Timeout(t) => Failure::Timeout(format!("timed out ({t})")),
        E::HostNotFound => Failure::Dns("the host name does not resolve".into()),
        E::ConnectionFailed => Failure::Connect("the connection failed".into()),
        E::Io(io) => match io.kind() {
            std::io::ErrorKind::ConnectionRefused => Failure::Connect("the connection was refused".into()),
            // rustls reports handshake and certificate errors as invalid data.
            std::io::ErrorKind::InvalidData => Failure::Tls(io.to_string()),
            std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => Failure::Timeout(io.to_string()),
            _ => Failure::Connect(io.to_string()),
        },
        E::Tls(msg) => Failure::Tls(msg.to_string()),
        E::Rustls(e) => Failure::Tls(e.to_string()),
        E::BodyExceedsLimit(n) => Failure::TooLarge(n),
        E::TooManyRedirects => Failure::TooManyRedirects(0),
        other => {
            let text = other.to_string();
            if text.to_ascii_lowercase().contains("tls") || text.contains("certificate") {
                Failure::Tls(text)
            } else {
                Failure::Other(text)
            }
        }
    }
}

fn read_failure(e: std::io::Error, cap: u64) -> Failure {
    match e.get_ref().and_then(|inner| inner.downcast_ref::<ureq::Error>()) {
        Some(ureq::Error::Timeout(t)) => Failure::Timeout(format!("timed out reading the body ({t})")),
        Some(ureq::Error::BodyExceedsLimit(_)) => Failure::TooLarge(cap),
        _ if e.kind() == std::io::ErrorKind::TimedOut => Failure::Timeout(e.to_string()),
        _ => Failure::Connect(format!("reading the body failed: {e}")),
    }
}
