//! A real HTTP server on 127.0.0.1 for the integration tests (tiny_http).
//! It records every request it receives so tests can check what arrived.

use std::io::Write;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use tiny_http::{Header, Response, Server};

#[derive(Debug, Clone)]
pub struct Received {
    pub method: String,
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
    /// The client's address: one per connection, so reuse shows here.
    pub peer: Option<std::net::SocketAddr>,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

pub struct TestServer {
    pub port: u16,
    pub log: Arc<Mutex<Vec<Received>>>,
    server: Arc<Server>,
    gate: Arc<Gate>,
}

/// What `/held` waits on: it answers once the test opens the gate, so a
/// test waits on an event, not on a time that a loaded machine stretches.
#[derive(Default)]
struct Gate {
    open: Mutex<bool>,
    opened: Condvar,
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.open();
        self.server.unblock();
    }
}

impl TestServer {
    pub fn start() -> TestServer {
        TestServer::start_on("127.0.0.1")
    }

    /// A server listening on `address` (`0.0.0.0` for every interface).
    pub fn start_on(address: &str) -> TestServer {
        let server = Arc::new(Server::http(format!("{address}:0")).expect("bind"));
        let port = server.server_addr().to_ip().expect("an IP address").port();
        let log = Arc::new(Mutex::new(Vec::new()));
        let gate = Arc::new(Gate::default());
        let (s, l, g) = (server.clone(), log.clone(), gate.clone());
        std::thread::spawn(move || {
            for request in s.incoming_requests() {
                let (l, g) = (l.clone(), g.clone());
                std::thread::spawn(move || handle(request, port, &l, &g));
            }
        });
        TestServer { port, log, server, gate }
    }

    /// Lets every request to `/held`, waiting or to come, be answered.
    pub fn open(&self) {
        *self.gate.open.lock().unwrap() = true;
        self.gate.opened.notify_all();
    }

    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn received(&self) -> Vec<Received> {
        self.log.lock().unwrap().clone()
    }
}

fn json_header() -> Header {
    Header::from_bytes("Content-Type", "application/json").unwrap()
}

fn handle(mut request: tiny_http::Request, port: u16, log: &Mutex<Vec<Received>>, gate: &Gate) {
    let mut body = String::new();
    let _ = request.as_reader().read_to_string(&mut body);
    let received = Received {
        peer: request.remote_addr().copied(),
        method: request.method().as_str().to_string(),
        url: request.url().to_string(),
        headers: request
            .headers()
            .iter()
            .map(|h| (h.field.as_str().to_string(), h.value.as_str().to_string()))
            .collect(),
        body,
    };
    log.lock().unwrap().push(received.clone());
    let (path, query) = received.url.split_once('?').unwrap_or((received.url.as_str(), ""));
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let response = match segments.as_slice() {
        ["echo", ..] => {
            let args: Vec<serde_json::Value> =
                url::form_urlencoded::parse(query.as_bytes()).map(|(k, v)| serde_json::json!([k, v])).collect();
            let headers: serde_json::Map<String, serde_json::Value> = received
                .headers
                .iter()
                .map(|(k, v)| (k.to_ascii_lowercase(), serde_json::Value::String(v.clone())))
                .collect();
            let json: serde_json::Value = serde_json::from_str(&received.body).unwrap_or(serde_json::Value::Null);
            let doc = serde_json::json!({
                "method": received.method, "path": path, "query": query, "args": args,
                "headers": headers, "body": received.body, "json": json,
            });
            Response::from_string(doc.to_string()).with_header(json_header())
        }
        // The platform refusing whatever is asked below `/refuse/CODE`, as
        // it does: its status, JSON error code and message.
        ["refuse", code, ..] => {
            let code: u64 = code.parse().unwrap_or(0);
            let (status, message) = match code {
                50013 => (403, "Missing Permissions"),
                50001 => (403, "Missing Access"),
                50007 => (403, "Cannot send messages to this user"),
                10007 => (404, "Unknown Member"),
                10008 => (404, "Unknown Message"),
                _ => (400, "Invalid Form Body"),
            };
            let doc = serde_json::json!({ "message": message, "code": code });
            Response::from_string(doc.to_string()).with_status_code(status).with_header(json_header())
        }
        ["status", code] => {
            let code: u16 = code.parse().unwrap_or(500);
            let doc = serde_json::json!({ "error": { "message": format!("status {code}") }, "code": code });
            Response::from_string(doc.to_string()).with_status_code(code).with_header(json_header())
        }
        ["fixture", name] => {
            let path = format!("{}/tests/fixtures/responses/{name}", env!("CARGO_MANIFEST_DIR"));
            Response::from_string(std::fs::read_to_string(path).unwrap_or_default()).with_header(json_header())
        }
        ["basic"] => {
            use base64::Engine as _;
            let key = received.header("x-api-key").unwrap_or_default();
            let basic = base64::engine::general_purpose::STANDARD.encode(format!("bot:{key}"));
            let doc = serde_json::json!({ "authorization": format!("Basic {basic}"), "path_key": key });
            Response::from_string(doc.to_string()).with_header(json_header())
        }
        // The `X-Api-Key` header echoed in the forms servers commonly use.
        ["forms"] => {
            let key = received.header("x-api-key").unwrap_or_default().as_bytes().to_vec();
            let pct: String = key.iter().map(|b| format!("%{b:02X}")).collect();
            let uni: String = String::from_utf8_lossy(&key).encode_utf16().map(|u| format!("\\u{u:04X}")).collect();
            let hex: String = key.iter().map(|b| format!("{b:02x}")).collect();
            let body = format!(
                "{{\"pct\":\"{pct}\",\"uni\":\"{uni}\",\"raw_uni\":\"x{uni}x\",\"hex\":\"{hex}\",\"HEX\":\"{}\"}}",
                hex.to_uppercase()
            );
            Response::from_string(body).with_header(json_header())
        }
        ["text"] => Response::from_string("plain text, not JSON")
            .with_header(Header::from_bytes("Content-Type", "text/plain").unwrap()),
        ["big", n] => {
            let n: usize = n.parse().unwrap_or(0);
            Response::from_string(format!("\"{}\"", "x".repeat(n))).with_header(json_header())
        }
        ["gzip", n] => {
            let n: usize = n.parse().unwrap_or(0);
            let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
            enc.write_all(format!("\"{}\"", "x".repeat(n)).as_bytes()).unwrap();
            let bytes = enc.finish().unwrap();
            Response::from_data(bytes)
                .with_header(json_header())
                .with_header(Header::from_bytes("Content-Encoding", "gzip").unwrap())
        }
        ["zeros", n] => {
            // `[0,0,…]`, n elements, gzipped: the cheapest JSON to send and
            // the densest in values.
            let n: usize = n.parse().unwrap_or(0);
            let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
            enc.write_all(b"[").unwrap();
            for i in 0..n {
                enc.write_all(if i == 0 { b"0" } else { b",0" }).unwrap();
            }
            enc.write_all(b"]").unwrap();
            let bytes = enc.finish().unwrap();
            Response::from_data(bytes)
                .with_header(json_header())
                .with_header(Header::from_bytes("Content-Encoding", "gzip").unwrap())
        }
        ["items", n] => {
            // `{"total": n, "items": [{"id": 0, "name": "item 0", "tags":
            // ["t0", …]}, …]}`: a list of n objects, each with a list of
            // 0 to 2 tags (the first has none), gzipped.
            let n: usize = n.parse().unwrap_or(0);
            let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            write!(enc, "{{\"total\":{n},\"items\":[").unwrap();
            for i in 0..n {
                let tags: Vec<String> = (0..i % 3).map(|k| format!("\"t{i}.{k}\"")).collect();
                let comma = if i == 0 { "" } else { "," };
                write!(enc, "{comma}{{\"id\":{i},\"name\":\"item {i}\",\"tags\":[{}]}}", tags.join(",")).unwrap();
            }
            enc.write_all(b"]}").unwrap();
            Response::from_data(enc.finish().unwrap())
                .with_header(json_header())
                .with_header(Header::from_bytes("Content-Encoding", "gzip").unwrap())
        }
        ["held"] => {
            let open = gate.open.lock().unwrap();
            drop(gate.opened.wait_while(open, |open| !*open).unwrap());
            Response::from_string("{\"held\":true}").with_header(json_header())
        }
        ["slow", ms] => {
            std::thread::sleep(Duration::from_millis(ms.parse().unwrap_or(0)));
            Response::from_string("{\"slow\":true}").with_header(json_header())
        }
        ["redirect", n] => {
            let n: u32 = n.parse().unwrap_or(0);
            let to = if n == 0 { "/echo".to_string() } else { format!("/redirect/{}", n - 1) };
            Response::from_string("").with_status_code(302).with_header(Header::from_bytes("Location", to).unwrap())
        }
        ["redirect-to", port_to] => {
            let to = format!("http://127.0.0.1:{port_to}/echo");
            Response::from_string("").with_status_code(307).with_header(Header::from_bytes("Location", to).unwrap())
        }
        // `/location/307?to=URL`: a redirect to exactly `URL` (raw bytes kept).
        ["location", code] => {
            let to = query.strip_prefix("to=").unwrap_or_default();
            let to = percent_encoding::percent_decode_str(to).collect::<Vec<u8>>();
            Response::from_string("{\"redirected\":true}")
                .with_status_code(code.parse::<u16>().unwrap_or(302))
                .with_header(Header::from_bytes("Location", to).unwrap())
        }
        ["encoded", coding] => {
            let json = br#"{"encoded":"yes","filler":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}"#;
            let bytes = match *coding {
                "deflate" => {
                    let mut enc = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
                    enc.write_all(json).unwrap();
                    enc.finish().unwrap()
                }
                "deflate-raw" => {
                    let mut enc = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
                    enc.write_all(json).unwrap();
                    enc.finish().unwrap()
                }
                _ => {
                    let mut out = Vec::new();
                    brotli::BrotliCompress(&mut &json[..], &mut out, &Default::default()).unwrap();
                    out
                }
            };
            let coding = if *coding == "deflate-raw" { "deflate" } else { coding };
            Response::from_data(bytes)
                .with_header(json_header())
                .with_header(Header::from_bytes("Content-Encoding", coding).unwrap())
        }
        ["bomb", coding] => {
            let zeros = vec![b' '; 5 * 1024 * 1024];
            let bytes = if *coding == "deflate" {
                let mut enc = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
                enc.write_all(&zeros).unwrap();
                enc.finish().unwrap()
            } else {
                let mut out = Vec::new();
                brotli::BrotliCompress(&mut &zeros[..], &mut out, &Default::default()).unwrap();
                out
            };
            Response::from_data(bytes)
                .with_header(json_header())
                .with_header(Header::from_bytes("Content-Encoding", *coding).unwrap())
        }
        ["bom"] => Response::from_data(b"\xEF\xBB\xBF{\"bom\":\"skipped\"}".to_vec()).with_header(json_header()),
        ["bad-utf8"] => Response::from_data(b"{\"name\":\"caf\xE9\",\"ok\":true}".to_vec()).with_header(json_header()),
        // `/flaky/N/KEY[?after=S]`: the first N requests of KEY answer 503
        // (with `Retry-After: S` when given), the next ones 200 with their number.
        ["flaky", n, key] => {
            let count = count(key);
            if count <= n.parse().unwrap_or(0) {
                let mut r =
                    Response::from_string("{\"error\":\"busy\"}").with_status_code(503).with_header(json_header());
                if let Some(after) = query.strip_prefix("after=") {
                    r = r.with_header(Header::from_bytes("Retry-After", after).unwrap());
                }
                r
            } else {
                Response::from_string(format!("{{\"ok\":true,\"attempt\":{count}}}"))
                    .with_header(json_header())
                    .with_header(Header::from_bytes("X-Attempt", count.to_string()).unwrap())
            }
        }
        // `/token/KEY?expires=S`: an OAuth2 token answer, `tok-N-0123456789` for the
        // Nth request of KEY, living S seconds.
        ["token", key] => {
            let n = count(key);
            let expires: u64 = query.strip_prefix("expires=").and_then(|e| e.parse().ok()).unwrap_or(3600);
            let doc = serde_json::json!({ "access_token": format!("tok-{n}-0123456789"), "token_type": "Bearer", "expires_in": expires });
            Response::from_string(doc.to_string()).with_header(json_header())
        }
        // `/needs/TOKEN`: 401 unless the request sends `Bearer TOKEN`.
        ["needs", token] => {
            let sent = received.header("authorization").unwrap_or_default().to_string();
            if sent == format!("Bearer {token}") {
                Response::from_string(format!("{{\"ok\":true,\"token\":\"{token}\"}}")).with_header(json_header())
            } else {
                Response::from_string("{\"error\":\"invalid_token\"}").with_status_code(401).with_header(json_header())
            }
        }
        // `/pages/N?cursor=K`: page K (from 1) of N (0: no end), two items a
        // page; the next page as a cursor, a URL in the body and a `Link`.
        ["pages", n] => {
            let n: u32 = n.parse().unwrap_or(0);
            let k: u32 =
                query.split('&').find_map(|p| p.strip_prefix("cursor=")).and_then(|c| c.parse().ok()).unwrap_or(1);
            let last = n != 0 && k >= n;
            let next = (!last).then(|| k + 1);
            let doc = serde_json::json!({
                "data": [{ "n": k * 10 + 1 }, { "n": k * 10 + 2 }],
                "next": next,
                "links": { "next": next.map(|m| format!("/pages/{n}?cursor={m}")) },
                "elsewhere": format!("http://localhost:{port}/pages/{n}?cursor={}", k + 1),
                "same": "again",
            });
            let mut r = Response::from_string(doc.to_string()).with_header(json_header());
            if let Some(m) = next {
                let link = format!("</pages/{n}?cursor=1>; rel=\"first\", </pages/{n}?cursor={m}>; rel=\"next\"");
                r = r.with_header(Header::from_bytes("Link", link).unwrap());
            }
            r
        }
        ["limited"] => Response::from_string("{\"error\":\"slow down\"}")
            .with_status_code(429)
            .with_header(json_header())
            .with_header(Header::from_bytes("Retry-After", "30").unwrap()),
        _ => Response::from_string(format!("{{\"error\":\"no route {path} on {port}\"}}"))
            .with_status_code(404)
            .with_header(json_header()),
    };
    let _ = request.respond(response);
}

/// How many requests of `key` the tests' servers have had, this one included
/// (one count a key across every server of the test process).
fn count(key: &str) -> u32 {
    static SEEN: Mutex<Vec<(String, u32)>> = Mutex::new(Vec::new());
    let mut seen = SEEN.lock().unwrap();
    match seen.iter_mut().find(|(k, _)| k == key) {
        Some((_, c)) => {
            *c += 1;
            *c
        }
        None => {
            seen.push((key.to_string(), 1));
            1
        }
    }
}

/// A port where a server answers every connection at once with a plain
/// HTTP error, whatever it is sent: a TLS client's handshake fails there.
#[allow(dead_code)]
pub fn plain_responder() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let _ = stream.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
        }
    });
    port
}

/// A port where a server answers every request with a head that promises
/// 1,000 bytes of JSON, sends 20 of them, and closes the connection.
#[allow(dead_code)]
pub fn broken_responder() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut head = [0u8; 4096];
            let _ = std::io::Read::read(&mut stream, &mut head);
            let _ = stream.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"items\": [1, 2, 3, ",
            );
            let _ = stream.shutdown(std::net::Shutdown::Both);
        }
    });
    port
}

/// What a raw-socket server received: the exact bytes of each request.
#[allow(dead_code)]
pub struct RawServer {
    pub port: u16,
    pub requests: Arc<Mutex<Vec<Vec<u8>>>>,
}

#[allow(dead_code)]
impl RawServer {
    /// Records the bytes of every request (its head, and as many body bytes
    /// as its `Content-Length` says) and answers `{"ok":true}`.
    pub fn start() -> RawServer {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let log = requests.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let log = log.clone();
                std::thread::spawn(move || serve_raw(stream, &log));
            }
        });
        RawServer { port, requests }
    }

    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn received(&self) -> Vec<String> {
        self.requests.lock().unwrap().iter().map(|r| String::from_utf8_lossy(r).into_owned()).collect()
    }
}

fn serve_raw(mut stream: std::net::TcpStream, log: &Mutex<Vec<Vec<u8>>>) {
    use std::io::Read as _;
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        let head_end = buf.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4);
        if let Some(end) = head_end {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let length = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            if buf.len() >= end + length {
                let rest = buf.split_off(end + length);
                log.lock().unwrap().push(std::mem::replace(&mut buf, rest));
                let body = b"{\"ok\":true}";
                let reply = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                    body.len()
                );
                if stream.write_all(reply.as_bytes()).and_then(|_| stream.write_all(body)).is_err() {
                    return;
                }
                continue;
            }
        }
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

/// A port where a server answers every request with exactly `reply`.
#[allow(dead_code)]
pub fn raw_responder(reply: Vec<u8>) -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut head = [0u8; 8192];
            let _ = std::io::Read::read(&mut stream, &mut head);
            let _ = stream.write_all(&reply);
        }
    });
    port
}

/// An HTTP proxy on 127.0.0.1 that tunnels `CONNECT host:port` to
/// 127.0.0.1, answers for any other target itself (`{"proxied":"host:port"}`),
/// and records every byte a client sends through it.
#[allow(dead_code)]
pub struct ProxyServer {
    pub address: String,
    pub port: u16,
    pub seen: Arc<Mutex<Vec<u8>>>,
}

#[allow(dead_code)]
impl ProxyServer {
    pub fn start() -> ProxyServer {
        ProxyServer::start_on("127.0.0.1")
    }

    pub fn start_on(address: &str) -> ProxyServer {
        let listener = std::net::TcpListener::bind(format!("{address}:0")).unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let log = log.clone();
                std::thread::spawn(move || tunnel(stream, &log));
            }
        });
        ProxyServer { address: address.to_string(), port, seen }
    }

    pub fn base(&self) -> String {
        format!("http://{}:{}", self.address, self.port)
    }

    pub fn seen(&self) -> String {
        String::from_utf8_lossy(&self.seen.lock().unwrap()).into_owned()
    }
}

fn tunnel(mut client: std::net::TcpStream, log: &Arc<Mutex<Vec<u8>>>) {
    use std::io::Read as _;
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match client.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return,
        }
    }
    log.lock().unwrap().extend_from_slice(&head);
    let line = String::from_utf8_lossy(&head).lines().next().unwrap_or_default().to_string();
    let target = line.strip_prefix("CONNECT ").and_then(|l| l.split(' ').next()).unwrap_or_default().to_string();
    if !target.starts_with("127.0.0.1:") {
        // Any other target: the proxy answers as that origin itself, so
        // nothing leaves this machine.
        let _ = client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n");
        let mut request = Vec::new();
        while !request.ends_with(b"\r\n\r\n") {
            match client.read(&mut byte) {
                Ok(1) => request.push(byte[0]),
                _ => return,
            }
        }
        log.lock().unwrap().extend_from_slice(&request);
        let body = format!("{{\"proxied\":\"{target}\"}}");
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        let _ = client.write_all(head.as_bytes());
        let _ = client.write_all(body.as_bytes());
        return;
    }
    let Ok(mut upstream) = std::net::TcpStream::connect(&target) else { return };
    let _ = client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n");
    let (mut client_read, mut upstream_write) = (client.try_clone().unwrap(), upstream.try_clone().unwrap());
    let log = log.clone();
    std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        while let Ok(n) = client_read.read(&mut buf) {
            if n == 0 {
                break;
            }
            // Logged before it is passed on: once the target has answered,
            // the test reads a log that holds what it was sent.
            log.lock().unwrap().extend_from_slice(&buf[..n]);
            if upstream_write.write_all(&buf[..n]).is_err() {
                break;
            }
        }
        let _ = upstream_write.shutdown(std::net::Shutdown::Write);
    });
    let _ = std::io::copy(&mut upstream, &mut client);
}

/// Runs `f` on a thread of its own in a private network namespace, where
/// only `lo` exists, and returns what it returned; `None` (with a message)
/// when not root, as a namespace needs. Servers started and commands run
/// inside `f` live in that namespace: nothing in it can reach beyond it.
#[allow(dead_code)]
pub fn in_private_network<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: a private network namespace needs root (CI runs as root)");
        return None;
    }
    let ran = std::thread::spawn(move || {
        // SAFETY: unshare affects only this thread, which ends with `f`.
        let unshared = unsafe { libc::unshare(libc::CLONE_NEWNET) };
        assert_eq!(unshared, 0, "unshare(CLONE_NEWNET): {}", std::io::Error::last_os_error());
        let up = std::process::Command::new("ip").args(["link", "set", "lo", "up"]).status().expect("run ip");
        assert!(up.success(), "ip link set lo up");
        f()
    });
    Some(ran.join().unwrap())
}

/// Adds an address to `lo` in the current (private) network namespace.
#[allow(dead_code)]
pub fn add_address(address: &str) {
    let added = std::process::Command::new("ip").args(["addr", "add", address, "dev", "lo"]).status().expect("run ip");
    assert!(added.success(), "ip addr add {address} dev lo");
}
