//! A test chat platform on 127.0.0.1: it signs interactions with its own
//! Ed25519 key pair, as the real one does, and records what blkc sends it
//! (registrations, webhook edits and follow-ups, channel messages). It can
//! answer a route with 429 first, to test the rate limiter.

use std::io::Read as _;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use ed25519_dalek::{Signer, SigningKey};
use serde_json::{json, Value};
use tiny_http::{Header, Response, Server};

#[derive(Debug, Clone)]
pub struct Call {
    pub method: String,
    pub path: String,
    pub authorization: Option<String>,
    /// The `X-Audit-Log-Reason` header, as sent (percent-encoded).
    pub reason: Option<String>,
    pub body: Value,
    /// The files of an upload (a multipart body, whose `payload_json` is
    /// `body`).
    pub files: Vec<Part>,
    /// The body's `Content-Type`, as sent.
    pub content_type: Option<String>,
    pub at: Instant,
}

/// One part of a multipart/form-data body, as multer (the parser axum
/// uses) reads it back: its name, file name, type, header names and bytes.
#[derive(Debug, Clone)]
pub struct Part {
    pub name: Option<String>,
    pub filename: Option<String>,
    pub content_type: Option<String>,
    pub headers: Vec<String>,
    pub bytes: Vec<u8>,
}

/// The parts of a multipart/form-data body with this `Content-Type`.
pub fn multipart(content_type: &str, bytes: &[u8]) -> Vec<Part> {
    let boundary = multer::parse_boundary(content_type).unwrap();
    let bytes = bytes.to_vec();
    tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async move {
        let mut form = multer::Multipart::with_reader(&bytes[..], boundary);
        let mut parts = Vec::new();
        while let Some(field) = form.next_field().await.unwrap() {
            let name = field.name().map(str::to_string);
            let filename = field.file_name().map(str::to_string);
            let content_type = field.content_type().map(|m| m.to_string());
            let headers: Vec<String> = field.headers().keys().map(|k| k.to_string()).collect();
            let bytes = field.bytes().await.unwrap().to_vec();
            parts.push(Part { name, filename, content_type, headers, bytes });
        }
        parts
    })
}

/// Answers given every time: a method, a path prefix, a status and a body.
type Given = Arc<Mutex<Vec<(String, String, u16, Value)>>>;

pub struct TestPlatform {
    pub port: u16,
    key: SigningKey,
    calls: Arc<Mutex<Vec<Call>>>,
    /// Answers to give first, by path prefix: 429s with their
    /// `retry_after`, or (negative) the status to refuse with.
    limited: Arc<Mutex<Vec<(String, f64)>>>,
    /// What `GET /api/gateway/bot` answers.
    gateway: Arc<Mutex<Value>>,
    /// The commands registered, by path, as the platform lists them.
    registered: Arc<Mutex<std::collections::HashMap<String, Value>>>,
    /// Answers given every time, by method and path prefix: a status and
    /// a body (`answer`).
    answers: Given,
    server: Arc<Server>,
}

/// A registered command as the platform lists it: with its ids, version and
/// the fields blkc never sends, and each option's `required` only when true.
fn as_listed(command: &Value, n: usize) -> Value {
    let mut c = command.clone();
    let id = format!("{}", 1_300_000_000_000_000_000u64 + n as u64);
    c["id"] = json!(id);
    c["application_id"] = json!("4242");
    c["version"] = json!(id);
    // What was registered, and the platform's defaults for what was not.
    let default = |c: &mut Value, key: &str, value: Value| {
        c.as_object_mut().unwrap().entry(key).or_insert(value);
    };
    default(&mut c, "default_member_permissions", Value::Null);
    c["dm_permission"] = json!(true);
    default(&mut c, "nsfw", json!(false));
    default(&mut c, "integration_types", json!([0]));
    default(&mut c, "contexts", Value::Null);
    default(&mut c, "name_localizations", Value::Null);
    default(&mut c, "description_localizations", Value::Null);
    // Options at every level: a subcommand's, a group's subcommands.
    fn options(holder: &mut Value) {
        for o in holder["options"].as_array_mut().into_iter().flatten() {
            if o["required"] == json!(false) {
                o.as_object_mut().unwrap().remove("required");
            }
            for key in ["name_localizations", "description_localizations"] {
                o.as_object_mut().unwrap().entry(key).or_insert(Value::Null);
            }
            options(o);
        }
    }
    options(&mut c);
    c
}

impl Drop for TestPlatform {
    fn drop(&mut self) {
        self.server.unblock();
    }
}

fn random_key() -> SigningKey {
    let mut seed = [0u8; 32];
    std::fs::File::open("/dev/urandom").unwrap().read_exact(&mut seed).unwrap();
    SigningKey::from_bytes(&seed)
}

impl TestPlatform {
    pub fn start() -> TestPlatform {
        let server = Arc::new(Server::http("127.0.0.1:0").expect("bind"));
        let port = server.server_addr().to_ip().unwrap().port();
        let calls = Arc::new(Mutex::new(Vec::new()));
        let limited: Arc<Mutex<Vec<(String, f64)>>> = Arc::new(Mutex::new(Vec::new()));
        let gateway = Arc::new(Mutex::new(Value::Null));
        let registered = Arc::new(Mutex::new(std::collections::HashMap::new()));
        let answers: Given = Arc::new(Mutex::new(Vec::new()));
        let (s, c, l, g, r) = (server.clone(), calls.clone(), limited.clone(), gateway.clone(), registered.clone());
        let a = answers.clone();
        std::thread::spawn(move || {
            for mut request in s.incoming_requests() {
                let mut raw = Vec::new();
                let _ = request.as_reader().read_to_end(&mut raw);
                let content_type = request
                    .headers()
                    .iter()
                    .find(|h| h.field.equiv("Content-Type"))
                    .map(|h| h.value.as_str().to_string());
                // An upload: its message is its `payload_json`.
                let files = match &content_type {
                    Some(t) if t.starts_with("multipart/form-data") => multipart(t, &raw),
                    _ => Vec::new(),
                };
                let body = match files.iter().find(|p| p.name.as_deref() == Some("payload_json")) {
                    Some(p) => String::from_utf8_lossy(&p.bytes).into_owned(),
                    None => String::from_utf8_lossy(&raw).into_owned(),
                };
                let files: Vec<Part> =
                    files.into_iter().filter(|p| p.name.as_deref() != Some("payload_json")).collect();
                let path = request.url().to_string();
                let authorization = request
                    .headers()
                    .iter()
                    .find(|h| h.field.equiv("Authorization"))
                    .map(|h| h.value.as_str().to_string());
                let reason = request
                    .headers()
                    .iter()
                    .find(|h| h.field.equiv("X-Audit-Log-Reason"))
                    .map(|h| h.value.as_str().to_string());
                let method = request.method().as_str().to_string();
                let json: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
                let commands = path.ends_with("/commands");
                let limit = {
                    let mut l = l.lock().unwrap();
                    let i = l.iter().position(|(prefix, _)| path.starts_with(prefix.as_str()));
                    i.map(|i| l.remove(i))
                };
                c.lock().unwrap().push(Call {
                    method: method.clone(),
                    path: path.clone(),
                    authorization,
                    reason,
                    body: json.clone(),
                    files,
                    content_type,
                    at: Instant::now(),
                });
                let given = a
                    .lock()
                    .unwrap()
                    .iter()
                    .find(|(m, prefix, _, _)| *m == method && path.starts_with(prefix.as_str()))
                    .map(|(_, _, status, body)| (*status, body.clone()));
                let header = |k: &str, v: &str| Header::from_bytes(k, v).unwrap();
                let response = match limit {
                    None if given.is_some() => {
                        let (status, body) = given.unwrap();
                        Response::from_string(if body.is_null() { String::new() } else { body.to_string() })
                            .with_status_code(status)
                    }
                    // A DM channel with the user, as the platform opens one.
                    None if path.ends_with("/users/@me/channels") => Response::from_string(
                        json!({ "id": "1490000000000000001", "type": 1, "recipients": [{ "id": json["recipient_id"] }] })
                            .to_string(),
                    ),
                    // What the bot makes (a message, a channel, a thread) gets an id.
                    None if method == "POST" && (path.contains("/channels/") || path.contains("/guilds/")) && json.is_object() => {
                        let mut made = json.clone();
                        made["id"] = json!(format!("{}", 1_480_000_000_000_000_000u64 + c.lock().unwrap().len() as u64));
                        if let Some(channel) = path.split("/channels/").nth(1).and_then(|p| p.split('/').next()) {
                            made["channel_id"] = json!(channel);
                        }
                        Response::from_string(made.to_string())
                    }
                    Some((_, -404.0)) => {
                        Response::from_string(json!({ "message": "Unknown Webhook", "code": 10015 }).to_string())
                            .with_status_code(404)
                    }
                    Some((_, status)) if status < 0.0 => {
                        Response::from_string(json!({ "message": "Invalid Form Body", "code": 50035 }).to_string())
                            .with_status_code(-status as u16)
                    }
                    Some((_, retry)) => Response::from_string(
                        json!({ "message": "You are being rate limited.", "retry_after": retry, "global": false })
                            .to_string(),
                    )
                    .with_status_code(429)
                    .with_header(header("X-RateLimit-Bucket", "test-bucket"))
                    .with_header(header("X-RateLimit-Remaining", "0"))
                    .with_header(header("X-RateLimit-Reset-After", &retry.to_string()))
                    .with_header(header("X-RateLimit-Scope", "user")),
                    None if path == "/api/gateway/bot" => Response::from_string(g.lock().unwrap().to_string()),
                    // A file a user uploaded, where the platform keeps it.
                    None if path.starts_with("/attachments/") => {
                        Response::from_string(format!("week,orders\n48,141\nfrom {path}\n"))
                    }
                    None if commands && method == "GET" => {
                        Response::from_string(r.lock().unwrap().get(&path).cloned().unwrap_or(json!([])).to_string())
                    }
                    None if commands && method == "PUT" => {
                        let listed: Vec<Value> =
                            json.as_array().into_iter().flatten().enumerate().map(|(n, c)| as_listed(c, n)).collect();
                        r.lock().unwrap().insert(path.clone(), json!(listed));
                        Response::from_string(json!(listed).to_string())
                    }
                    None => Response::from_string(if json.is_null() { "{}".to_string() } else { json.to_string() })
                        .with_header(header("X-RateLimit-Bucket", "test-bucket"))
                        .with_header(header("X-RateLimit-Remaining", "5"))
                        .with_header(header("X-RateLimit-Reset-After", "1")),
                };
                let _ = request.respond(response.with_header(header("Content-Type", "application/json")));
            }
        });
        TestPlatform { port, key: random_key(), calls, limited, gateway, registered, answers, server }
    }

    /// The API's base URL, for `--platform`.
    pub fn api(&self) -> String {
        format!("http://127.0.0.1:{}/api", self.port)
    }

    pub fn public_key(&self) -> String {
        hex::encode(self.key.verifying_key().to_bytes())
    }

    /// The next request whose path starts with `prefix` gets a 429 asking
    /// to wait `retry_after` seconds.
    pub fn limit_once(&self, prefix: &str, retry_after: f64) {
        self.limited.lock().unwrap().push((prefix.to_string(), retry_after));
    }

    /// The next request whose path starts with `prefix` gets a 404 "Unknown
    /// Webhook", as the platform answers before it has seen the answer.
    pub fn unknown_once(&self, prefix: &str) {
        self.limited.lock().unwrap().push((prefix.to_string(), -404.0));
    }

    /// The next request whose path starts with `prefix` is refused with
    /// `status` and "Invalid Form Body", as the platform refuses a message.
    pub fn refuse_once(&self, prefix: &str, status: u16) {
        self.limited.lock().unwrap().push((prefix.to_string(), -f64::from(status)));
    }

    /// Every `method` request whose path starts with `prefix` is answered
    /// `status` and `body` from now on (a null body: none).
    #[allow(dead_code)]
    pub fn answer(&self, method: &str, prefix: &str, status: u16, body: Value) {
        self.answers.lock().unwrap().push((method.to_string(), prefix.to_string(), status, body));
    }

    /// What `GET /gateway/bot` answers from now on.
    pub fn set_gateway(&self, info: Value) {
        *self.gateway.lock().unwrap() = info;
    }

    /// The commands registered at `path` (`/api/applications/…/commands`).
    #[allow(dead_code)]
    pub fn registered(&self, path: &str) -> Value {
        self.registered.lock().unwrap().get(path).cloned().unwrap_or(json!([]))
    }

    pub fn calls(&self) -> Vec<Call> {
        self.calls.lock().unwrap().clone()
    }

    /// Waits (up to 20 s) for `n` calls whose path contains `part`.
    pub fn wait_for(&self, part: &str, n: usize) -> Vec<Call> {
        let until = Instant::now() + Duration::from_secs(20);
        loop {
            let found: Vec<Call> = self.calls().into_iter().filter(|c| c.path.contains(part)).collect();
            if found.len() >= n || Instant::now() > until {
                return found;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The signature headers of `body`, timestamped `age` seconds ago.
    pub fn sign(&self, body: &[u8], age: i64) -> (String, String) {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() as i64;
        let timestamp = (now - age).to_string();
        let mut message = timestamp.as_bytes().to_vec();
        message.extend_from_slice(body);
        (hex::encode(self.key.sign(&message).to_bytes()), timestamp)
    }
}

/// What the server answered to an interaction.
#[derive(Debug)]
pub struct Answered {
    pub status: u16,
    pub body: Value,
    pub took: Duration,
}

/// Posts `body` to `url` with the given signature headers (none when `None`).
pub fn post(url: &str, body: &[u8], signature: Option<(String, String)>) -> Answered {
    try_post(url, body, signature).expect("the server answers")
}

/// [`post`], or `None` when the server answers nothing (it was killed).
pub fn try_post(url: &str, body: &[u8], signature: Option<(String, String)>) -> Option<Answered> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .into();
    let mut request = agent.post(url).header("Content-Type", "application/json");
    if let Some((sig, ts)) = signature {
        request = request.header("X-Signature-Ed25519", &sig).header("X-Signature-Timestamp", &ts);
    }
    let started = Instant::now();
    let mut response = request.send(body).ok()?;
    let took = started.elapsed();
    let status = response.status().as_u16();
    let text = response.body_mut().read_to_string().unwrap_or_default();
    Some(Answered { status, body: serde_json::from_str(&text).unwrap_or(Value::String(text)), took })
}

/// An APPLICATION_COMMAND interaction for `command` with `options`.
pub fn command(id: &str, command: &str, options: Value) -> Value {
    json!({
        "type": 2, "id": id, "application_id": "4242", "token": format!("itoken-{id}-secretpart"),
        "guild_id": "777", "channel_id": "888", "channel": { "name": "general" },
        "member": { "user": { "id": "1001", "username": "ada", "global_name": "Ada" }, "nick": null },
        "data": { "name": command, "options": options }
    })
}

/// A keystroke in an option with autocomplete, as the platform sends it:
/// type 4 APPLICATION_COMMAND_AUTOCOMPLETE, `options` with one `focused`.
pub fn keystroke(id: &str, command: &str, options: Value) -> Value {
    let mut body = self::command(id, command, options);
    body["type"] = json!(4);
    body
}

/// A click on a button (or, with `values`, a choice in a select menu) of
/// message 555, as the platform sends it: type 3 MESSAGE_COMPONENT, with
/// the message showing the component clicked (a menu offering the values
/// chosen).
pub fn click(id: &str, custom_id: &str, values: Option<Value>) -> Value {
    let shown = match &values {
        None => json!({ "type": 2, "style": 1, "label": "Click", "custom_id": custom_id }),
        Some(values) => {
            let options: Vec<Value> = values
                .as_array()
                .into_iter()
                .flatten()
                .map(|v| json!({ "label": v.as_str().unwrap_or("?"), "value": v.as_str().unwrap_or("?") }))
                .collect();
            json!({ "type": 3, "custom_id": custom_id, "options": options, "max_values": 25 })
        }
    };
    click_showing(id, custom_id, values, json!([{ "type": 1, "components": [shown] }]))
}

/// A click whose message shows the rows `components`, as the test says
/// (a forged click: the component or values the message never offered).
pub fn click_showing(id: &str, custom_id: &str, values: Option<Value>, components: Value) -> Value {
    let mut data = json!({ "custom_id": custom_id, "component_type": if values.is_some() { 3 } else { 2 } });
    if let Some(values) = values {
        data["values"] = values;
    }
    let mut body = command(id, "", json!([]));
    body["type"] = json!(3);
    body["data"] = data;
    body["message"] = json!({ "id": "555", "channel_id": "888", "content": "the poll", "components": components });
    body
}

/// A form sent, as the platform sends it: type 5 MODAL_SUBMIT, each input
/// in a row of its own (`rows`) or in a label (the newer layout).
pub fn submit(id: &str, custom_id: &str, fields: &[(&str, &str)], labels: bool) -> Value {
    let components: Vec<Value> = fields
        .iter()
        .map(|(name, value)| {
            let input = json!({ "type": 4, "custom_id": name, "value": value });
            if labels {
                json!({ "type": 18, "component": input })
            } else {
                json!({ "type": 1, "components": [input] })
            }
        })
        .collect();
    let mut body = command(id, "", json!([]));
    body["type"] = json!(5);
    body["data"] = json!({ "custom_id": custom_id, "components": components });
    body
}

/// The `custom_id` blkc gives the `n`th component running `handler` in
/// `program` (in the file's order), with `value`: its key read from the
/// plan `blkc build` writes, as serve reads it.
pub fn component_id(program: &str, handler: &str, n: usize, value: &str) -> String {
    fn walk<'v>(v: &'v Value, handler: &str, out: &mut Vec<&'v str>) {
        match v {
            Value::Object(o) => {
                if o.get("handler").and_then(Value::as_str) == Some(handler) {
                    if let Some(key) = o.get("key").and_then(Value::as_str) {
                        out.push(key);
                    }
                }
                o.values().for_each(|v| walk(v, handler, out));
            }
            Value::Array(a) => a.iter().for_each(|v| walk(v, handler, out)),
            _ => {}
        }
    }
    let dir = tempfile::tempdir().unwrap();
    // (An API's address, filled in by the test, moves no key.)
    std::fs::write(dir.path().join("bot.blk"), program.replace("@API@", "http://127.0.0.1:1")).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_blkc"))
        .args(["build", "bot.blk"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let plan: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let mut keys = Vec::new();
    walk(&plan, handler, &mut keys);
    let key = keys.get(n).unwrap_or_else(|| panic!("no component {n} of `{handler}` in {plan}"));
    format!("blk2:{handler}:{key}:{value}")
}
