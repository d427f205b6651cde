//! Sending one request with ureq: time-outs, a cap on the decoded body, and
//! redirects followed here rather than by ureq, so that secret headers never
//! reach another host and a request carrying the bot token follows none.

use std::io::Read;
use std::sync::Arc;
use std::time::{Duration, Instant};

use url::Url;

use super::request::Built;
use crate::language::policy;

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

#[derive(Debug)]
pub struct Incoming {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub url: Url,
    pub redirects: u32,
    /// A redirect that was answered but not followed: where to, and why.
    pub redirect_refused: Option<(String, NotFollowed)>,
}

/// Why a redirect was not followed (its response is the redirect itself).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotFollowed {
    /// The request carries the bot token.
    CarriesToken,
    /// A 307 or 308 to another origin would send a body holding a secret there.
    SecretBody,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// Nothing listens there, or the connection could not be made.
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
    /// A host from a value or a redirect resolved to an internal address.
    Internal {
        host: String,
        address: std::net::IpAddr,
    },
    /// The response broke off after it had begun.
    Broken(String),
    Other(String),
}

pub struct Client {
    /// For hosts the file wrote.
    agent: ureq::Agent,
    /// For hosts that came from a value or a redirect: its resolver refuses
    /// internal addresses. A pool of its own, so such a request never reuses
    /// a connection the other agent opened to an internal host (a pooled
    /// connection is never resolved again). Made on first use.
    guarded: std::sync::OnceLock<ureq::Agent>,
    limits: Limits,
    /// Host lookups, shared by both agents: no host is looked up twice.
    cache: DnsCache,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client").field("limits", &self.limits).finish_non_exhaustive()
    }
}

impl Client {
    pub fn new(limits: Limits) -> Client {
        let cache = DnsCache::default();
        let agent = agent(limits, &cache, false);
        Client { agent, guarded: std::sync::OnceLock::new(), limits, cache }
    }

    fn agent_for(&self, hop: &Built) -> &ureq::Agent {
        if hop.guarded {
            self.guarded.get_or_init(|| agent(self.limits, &self.cache, true))
        } else {
            &self.agent
        }
    }

    /// Sends a request and follows its redirects by the destination policy.
    pub fn send(&self, request: Built) -> Result<Incoming, Failure> {
        let _waiting = crate::base::waiting::Blocking::start();
        let started = Instant::now();
        let whole = request.timeout.unwrap_or(self.limits.timeout);
        let total = request.within.map_or(whole, |w| w.min(whole));
        let mut hop = request;
        let mut redirects = 0;
        loop {
            // The whole time-out on the first hop; what is left of it after.
            let remaining =
                if redirects == 0 { total } else { total.checked_sub(started.elapsed()).unwrap_or_default() };
            if remaining.is_zero() {
                return Err(Failure::Timeout(format!("no answer within {total:?}")));
            }
            let mut response = self.call(&hop, remaining)?;
            let status = response.status().as_u16();
            // A raw UTF-8 `Location` is read as text; joining it to the URL
            // percent-encodes it, as browsers and curl do.
            let location =
                response.headers().get("location").map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
            let headers: Vec<(String, String)> = response
                .headers()
                .iter()
                .map(|(k, v)| (k.as_str().to_string(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
                .collect();
            match next_hop(&hop, status, location)? {
                Next::Follow(next) => {
                    if redirects == self.limits.max_redirects {
                        return Err(Failure::TooManyRedirects(redirects));
                    }
                    // Drain the redirect's body (decoded, capped) so the
                    // connection can be reused.
                    let _ = read_body(&mut response, 64 * 1024);
                    hop = redirected(hop, status, next);
                    redirects += 1;
                }
                Next::Stop(refused) => {
                    let body = read_body(&mut response, self.limits.max_body)?;
                    return Ok(Incoming { status, headers, body, url: hop.url, redirects, redirect_refused: refused });
                }
            }
        }
    }

    /// One HTTP exchange, up to the response's head.
    fn call(&self, hop: &Built, remaining: Duration) -> Result<ureq::http::Response<ureq::Body>, Failure> {
        let agent = self.agent_for(hop);
        let mut builder = ureq::http::Request::builder().method(hop.method.as_str()).uri(hop.url.as_str());
        for h in &hop.headers {
            builder = builder.header(h.name.as_str(), h.value.as_str());
        }
        // A call with the bot token is the platform's, which wants its own
        // User-Agent format (`DiscordBot (url, version)`), unless the block
        // wrote one.
        if hop.carries_token && !hop.headers.iter().any(|h| h.name.as_str().eq_ignore_ascii_case("user-agent")) {
            builder = builder.header("User-Agent", crate::discord::rest::USER_AGENT);
        }
        // The bot token never crosses a plaintext hop to a proxy.
        let direct = hop.carries_token && hop.url.scheme() == "http";
        if hop.guarded && !direct {
            self.judge_before_proxy(agent, &hop.url)?;
        }
        match &hop.body {
            // A request without a body sends no body and no `Content-Length`.
            None => self.run(agent, builder.body(()), remaining, direct),
            Some(body) => self.run(agent, builder.body(body.clone()), remaining, direct),
        }
    }

    /// Through a proxy, the proxy resolves the target's name and only the
    /// proxy's own address reaches the resolver. So a guarded target is
    /// judged here, before the proxy sees it: an address by itself, a
    /// `localhost` name as this machine, and any other name by what it
    /// resolves to here when it does (when it does not, the proxy resolves
    /// it: its network is not this machine's).
    fn judge_before_proxy(&self, agent: &ureq::Agent, url: &Url) -> Result<(), Failure> {
        let Some(proxy) = agent.config().proxy() else { return Ok(()) };
        let Ok(uri) = url.as_str().parse::<ureq::http::Uri>() else { return Ok(()) };
        if proxy.is_no_proxy(&uri) || proxy.resolve_target() {
            // ureq resolves the target itself, through the guarded resolver.
            return Ok(());
        }
        let refused = |host: &str, address: std::net::IpAddr| Failure::Internal { host: host.to_string(), address };
        match url.host() {
            Some(url::Host::Ipv4(v4)) => refuses(v4.into()).then_some(refused(&v4.to_string(), v4.into())),
            Some(url::Host::Ipv6(v6)) => refuses(v6.into()).then_some(refused(&v6.to_string(), v6.into())),
            Some(url::Host::Domain(name)) => {
                let name = name.trim_end_matches('.').to_ascii_lowercase();
                if name == "localhost" || name.ends_with(".localhost") {
                    Some(refused(&name, std::net::Ipv4Addr::LOCALHOST.into()))
                } else {
                    let timeout = ureq::unversioned::transport::NextTimeout {
                        after: self.limits.connect_timeout.into(),
                        reason: ureq::Timeout::Resolve,
                        per_read: None,
                        per_write: None,
                    };
                    let lookup = CachingResolver { inner: Default::default(), cache: self.cache.clone(), guard: true };
                    match ureq::unversioned::resolver::Resolver::resolve(&lookup, &uri, agent.config(), timeout) {
                        Err(ureq::Error::Io(io))
                            if io.get_ref().is_some_and(|i| i.downcast_ref::<InternalAddress>().is_some()) =>
                        {
                            return Err(failure(ureq::Error::Io(io)));
                        }
                        _ => None,
                    }
                }
            }
            None => None,
        }
        .map_or(Ok(()), Err)
    }

    fn run<S: ureq::AsSendBody>(
        &self,
        agent: &ureq::Agent,
        request: Result<ureq::http::Request<S>, ureq::http::Error>,
        remaining: Duration,
        direct: bool,
    ) -> Result<ureq::http::Response<ureq::Body>, Failure> {
        let request = request.map_err(|e| Failure::Other(e.to_string()))?;
        // The agent's own configuration serves the first hop of most requests;
        // building a per-request one costs a copy of it each time.
        if !direct && remaining == self.limits.timeout {
            return agent.run(request).map_err(failure);
        }
        let mut config = agent.configure_request(request).timeout_global(Some(remaining));
        if direct {
            config = config.proxy(None);
        }
        agent.run(config.build()).map_err(failure)
    }
}

enum Next {
    Follow(Url),
    /// The response is this one; a redirect not followed says why.
    Stop(Option<(String, NotFollowed)>),
}

/// Whether a response is a redirect to follow, by the destination policy.
fn next_hop(hop: &Built, status: u16, location: Option<String>) -> Result<Next, Failure> {
    let Some(location) = location.filter(|_| matches!(status, 301 | 302 | 303 | 307 | 308)) else {
        return Ok(Next::Stop(None));
    };
    if !policy::follows_redirects(hop.carries_token) {
        return Ok(Next::Stop(Some((location, NotFollowed::CarriesToken))));
    }
    let next = hop.url.join(&location).map_err(|e| Failure::BadRedirect(format!("{location}: {e}")))?;
    if !crate::base::urls::is_http(next.scheme()) {
        return Err(Failure::BadRedirect(format!("{} is not http(s)", next.scheme())));
    }
    let keeps_body = policy::redirected_method(status, hop.method).is_none() && hop.body.is_some();
    if keeps_body && hop.body_secret && !policy::same_origin(&next, &hop.url) {
        return Ok(Next::Stop(Some((next.to_string(), NotFollowed::SecretBody))));
    }
    Ok(Next::Follow(next))
}

/// The request to send after a redirect: credentials stay with their
/// origin, a host the redirect chose is guarded, and 303 (301/302 after a
/// POST) becomes a GET without a body.
fn redirected(mut hop: Built, status: u16, next: Url) -> Built {
    if !policy::same_origin(&next, &hop.url) {
        hop.headers.retain(|h| policy::forwarded_across_origins(&h.name, h.secret));
        hop.guarded |= !hop.allow_private_network;
    }
    if let Some(changed) = policy::redirected_method(status, hop.method) {
        hop.method = changed;
        hop.body = None;
        hop.body_secret = false;
        hop.headers.retain(|h| !h.name.eq_ignore_ascii_case("content-type"));
    }
    hop.url = next;
    hop
}

/// Reads a body, decoded (gzip and brotli by ureq, deflate here), up to
/// `cap` decoded bytes.
fn read_body(response: &mut ureq::http::Response<ureq::Body>, cap: u64) -> Result<Vec<u8>, Failure> {
    let deflate = response
        .headers()
        .get("content-encoding")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("deflate"));
    let reader = response.body_mut().with_config().limit(u64::MAX).reader();
    let mut bytes = Vec::new();
    let read = if deflate {
        Deflate::new(reader).take(cap + 1).read_to_end(&mut bytes)
    } else {
        reader.take(cap + 1).read_to_end(&mut bytes)
    };
    read.map_err(|e| read_failure(e, cap))?;
    if bytes.len() as u64 > cap {
        return Err(Failure::TooLarge(cap));
    }
    Ok(bytes)
}

/// `Content-Encoding: deflate`: zlib-wrapped as RFC 9110 says, or raw
/// deflate as some servers send it (told apart by the zlib header).
enum Deflate<R: Read> {
    Unknown(Option<R>),
    Zlib(flate2::read::ZlibDecoder<std::io::Chain<std::io::Cursor<Vec<u8>>, R>>),
    Raw(flate2::read::DeflateDecoder<std::io::Chain<std::io::Cursor<Vec<u8>>, R>>),
}

impl<R: Read> Deflate<R> {
    fn new(reader: R) -> Deflate<R> {
        Deflate::Unknown(Some(reader))
    }
}

impl<R: Read> Read for Deflate<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if let Deflate::Unknown(inner) = self {
            let Some(mut inner) = inner.take() else { return Ok(0) };
            let mut head = vec![0; 2];
            let n = inner.read(&mut head[..1])?;
            let n = n + if n == 1 { inner.read(&mut head[1..])? } else { 0 };
            head.truncate(n);
            let zlib = n == 2 && head[0] & 0x0f == 8 && (u16::from(head[0]) << 8 | u16::from(head[1])) % 31 == 0;
            let chained = std::io::Cursor::new(head).chain(inner);
            *self = if zlib {
                Deflate::Zlib(flate2::read::ZlibDecoder::new(chained))
            } else {
                Deflate::Raw(flate2::read::DeflateDecoder::new(chained))
            };
        }
        match self {
            Deflate::Zlib(d) => d.read(buf),
            Deflate::Raw(d) => d.read(buf),
            Deflate::Unknown(_) => Ok(0),
        }
    }
}

/// An agent of blkc's configuration: redirects followed by blkc, time-outs,
/// every coding it decodes; `guard`: its resolver refuses internal addresses.
fn agent(limits: Limits, cache: &DnsCache, guard: bool) -> ureq::Agent {
    let config = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .max_redirects_will_error(false)
        .timeout_connect(Some(limits.connect_timeout))
        .timeout_global(Some(limits.timeout))
        .accept_encoding("gzip, deflate, br")
        .user_agent(concat!("blkc/", env!("CARGO_PKG_VERSION")))
        .build();
    let resolver = CachingResolver { inner: Default::default(), cache: cache.clone(), guard };
    ureq::Agent::with_parts(config, ureq::unversioned::transport::DefaultConnector::new(), resolver)
}

type DnsCache =
    Arc<std::sync::Mutex<std::collections::HashMap<String, ureq::unversioned::resolver::ResolvedSocketAddrs>>>;

/// Resolves each host once per run, and an IP address without a lookup; the
/// guarded agent's resolver refuses an internal address here, at connect
/// time, on the address the connection would use.
///
/// ureq's default resolver runs every lookup on a new thread when a time-out
/// is set (so that the time-out can be kept), even for `127.0.0.1`; with a
/// request per block that was the largest cost of a run on loopback.
#[derive(Debug)]
struct CachingResolver {
    inner: ureq::unversioned::resolver::DefaultResolver,
    cache: DnsCache,
    /// This resolver refuses internal addresses.
    guard: bool,
}

/// The resolver's refusal of an internal address, carried through ureq.
#[derive(Debug)]
struct InternalAddress {
    host: String,
    address: std::net::IpAddr,
}

impl std::fmt::Display for InternalAddress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "`{}` is the internal address {}", self.host, self.address)
    }
}

impl std::error::Error for InternalAddress {}

impl ureq::unversioned::resolver::Resolver for CachingResolver {
    fn resolve(
        &self,
        uri: &ureq::http::Uri,
        config: &ureq::config::Config,
        timeout: ureq::unversioned::transport::NextTimeout,
    ) -> Result<ureq::unversioned::resolver::ResolvedSocketAddrs, ureq::Error> {
        let host = uri.host().unwrap_or_default().trim_start_matches('[').trim_end_matches(']');
        let port = uri.port_u16().unwrap_or(crate::base::urls::default_port(uri.scheme_str().unwrap_or_default()));
        let addrs = if let Ok(ip) = host.parse::<std::net::IpAddr>() {
            let mut addrs = self.empty();
            addrs.truncate(0);
            addrs.push(std::net::SocketAddr::new(ip, port));
            addrs
        } else {
            let key = format!("{host}:{port}");
            match self.cache.lock().ok().and_then(|c| c.get(&key).cloned()) {
                Some(hit) => hit,
                None => {
                    let addrs = self.inner.resolve(uri, config, timeout)?;
                    if let Ok(mut cache) = self.cache.lock() {
                        cache.insert(key, addrs.clone());
                    }
                    addrs
                }
            }
        };
        // The proxy is the operator's choice, on loopback too: its target
        // was judged before the request was made (`judge_before_proxy`).
        let is_proxy = config.proxy().is_some_and(|p| p.host() == host && p.port() == port);
        if self.guard && !is_proxy {
            if let Some(internal) = addrs.iter().find(|a| refuses(a.ip())) {
                let refusal = InternalAddress { host: host.to_string(), address: internal.ip() };
                return Err(ureq::Error::Io(std::io::Error::new(std::io::ErrorKind::PermissionDenied, refusal)));
            }
        }
        Ok(addrs)
    }
}

/// Whether a guarded request may not connect to `ip`: an internal address,
/// or one of this machine's own.
fn refuses(ip: std::net::IpAddr) -> bool {
    policy::is_internal(ip) || own_addresses().contains(&ip)
}

/// The addresses of this machine's own interfaces, read afresh each time
/// (an interface may gain an address while blkc runs). A value or a
/// redirect must not reach this machine through one of them, whatever
/// range it is in: a server bound to `0.0.0.0` answers on all of them.
fn own_addresses() -> Vec<std::net::IpAddr> {
    let mut found = Vec::new();
    let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `list` with a linked list that freeifaddrs
    // releases; each node is read only while the list is alive.
    unsafe {
        if libc::getifaddrs(&mut list) != 0 {
            return found;
        }
        let mut node = list;
        while let Some(entry) = node.as_ref() {
            if let Some(addr) = entry.ifa_addr.as_ref() {
                match i32::from(addr.sa_family) {
                    libc::AF_INET => {
                        let v4 = &*(entry.ifa_addr as *const libc::sockaddr_in);
                        found.push(std::net::IpAddr::from(u32::from_be(v4.sin_addr.s_addr).to_be_bytes()));
                    }
                    libc::AF_INET6 => {
                        let v6 = &*(entry.ifa_addr as *const libc::sockaddr_in6);
                        found.push(std::net::IpAddr::from(v6.sin6_addr.s6_addr));
                    }
                    _ => {}
                }
            }
            node = entry.ifa_next;
        }
        libc::freeifaddrs(list);
    }
    found
}

fn failure(e: ureq::Error) -> Failure {
    use ureq::Error as E;
    match e {
        E::Timeout(t) => Failure::Timeout(format!("timed out ({t})")),
        E::HostNotFound => Failure::Dns("the host name does not resolve".into()),
        E::ConnectionFailed => Failure::Connect("the connection failed".into()),
        E::Io(io) => {
            if let Some(internal) = io.get_ref().and_then(|i| i.downcast_ref::<InternalAddress>()) {
                return Failure::Internal { host: internal.host.clone(), address: internal.address };
            }
            match io.kind() {
                std::io::ErrorKind::ConnectionRefused => Failure::Connect("the connection was refused".into()),
                // rustls reports handshake and certificate errors as invalid data.
                std::io::ErrorKind::InvalidData => Failure::Tls(tls_words(&io.to_string())),
                std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => Failure::Timeout(io.to_string()),
                std::io::ErrorKind::UnexpectedEof
                | std::io::ErrorKind::ConnectionReset
                | std::io::ErrorKind::ConnectionAborted
                | std::io::ErrorKind::BrokenPipe => Failure::Broken(io.to_string()),
                _ => Failure::Connect(io.to_string()),
            }
        }
        E::Tls(msg) => Failure::Tls(tls_words(msg)),
        E::Rustls(e) => Failure::Tls(tls_words(&format!("{e:?}"))),
        E::BodyExceedsLimit(n) => Failure::TooLarge(n),
        E::TooManyRedirects => Failure::TooManyRedirects(0),
        other => {
            let text = other.to_string();
            if text.to_ascii_lowercase().contains("tls") || text.contains("certificate") {
                Failure::Tls(tls_words(&text))
            } else {
                Failure::Other(text)
            }
        }
    }
}

/// What is wrong with a TLS connection, in words rather than rustls's names.
fn tls_words(detail: &str) -> String {
    const WORDS: &[(&str, &str)] = &[
        ("CaUsedAsEndEntity", "the server presented a certificate authority's certificate as its own"),
        ("UnknownIssuer", "the server's certificate is not signed by an authority this machine trusts"),
        ("Expired", "the server's certificate has expired"),
        ("NotValidYet", "the server's certificate is not valid yet"),
        ("NotValidForName", "the server's certificate is for another host name"),
        ("Revoked", "the server's certificate has been revoked"),
        ("BadSignature", "the server's certificate has a bad signature"),
        ("BadEncoding", "the server's certificate cannot be read"),
        ("UnsupportedSignatureAlgorithm", "the server's certificate uses a signature algorithm blkc does not accept"),
        ("InvalidPurpose", "the server's certificate is not meant for a web server"),
        ("CorruptMessage", "the server does not speak TLS on this port (is it plain http?)"),
        ("InvalidContentType", "the server does not speak TLS on this port (is it plain http?)"),
        ("HandshakeFailure", "the server and blkc share no TLS version or cipher"),
        ("PeerIncompatible", "the server and blkc share no TLS version or cipher"),
    ];
    match WORDS.iter().find(|(name, _)| detail.contains(name)) {
        Some((_, words)) => (*words).to_string(),
        None if detail.contains("Other(") || detail.contains("OtherError") => {
            "the server's certificate was refused".to_string()
        }
        None => detail.to_string(),
    }
}

fn read_failure(e: std::io::Error, cap: u64) -> Failure {
    match e.get_ref().and_then(|inner| inner.downcast_ref::<ureq::Error>()) {
        Some(ureq::Error::Timeout(t)) => Failure::Timeout(format!("timed out reading the body ({t})")),
        Some(ureq::Error::BodyExceedsLimit(_)) => Failure::TooLarge(cap),
        _ if e.kind() == std::io::ErrorKind::TimedOut => Failure::Timeout(e.to_string()),
        _ => Failure::Broken(e.to_string().to_lowercase()),
    }
}
