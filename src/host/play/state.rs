//! What the page, the stand-in API, the Gateway and serve share: [`Play`],
//! the calls serve made to the platform and the dispatches the page fired.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ed25519_dalek::{Signer, SigningKey};
use serde_json::{json, Value};

use super::world;

/// One call serve made to the platform, as the page shows it; or a run's
/// record (`kind` `run`, no method or route), for the page's inspector.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Call {
    pub method: String,
    /// The route, with the interaction's token left out.
    pub route: String,
    /// What kind of call: `edit`, `follow_up`, `delete`, `message`, `dm`,
    /// `edit_message`, `callback`, `action` (another action's, its body
    /// what was sent and answered), or `other`; or `run`.
    pub kind: &'static str,
    /// The interaction it belongs to (its id), when it is one's.
    pub interaction: Option<String>,
    pub body: Value,
}

/// The calls kept for the page: a page that has not asked for more than
/// this many has missed the oldest (the memory of a long play is bounded).
const KEPT_CALLS: usize = 10_000;
/// The events fired from the page that are kept, and their most bytes.
const KEPT_DISPATCHES: usize = 256;
const KEPT_DISPATCH_BYTES: usize = 16 * 1024 * 1024;

/// What the page and serve share through the stand-in.
pub struct Play {
    /// Where `play` listens (loopback).
    pub address: SocketAddr,
    key: SigningKey,
    /// The bot token serve is given: random, and good only for this stand-in.
    pub token: String,
    /// Serve's interactions endpoint, once it listens.
    pub serve: Mutex<Option<String>>,
    /// What serve sent the platform, in order: the last [`KEPT_CALLS`],
    /// and how many came before them.
    calls: Mutex<(std::collections::VecDeque<Call>, usize)>,
    arrived: tokio::sync::Notify,
    /// Told as `arrived` is, for a waiter on a thread of its own (a
    /// conversation test).
    arrived_sync: std::sync::Condvar,
    /// The one client interactions are posted to serve with (its
    /// connections kept).
    agent: ureq::Agent,
    next_id: std::sync::atomic::AtomicU64,
    /// What the page is told of the file: its name, its commands and its
    /// diagnostics; and the file's stamp when it was read.
    file: Mutex<Value>,
    stamp: Mutex<Option<Option<(std::time::SystemTime, u64)>>>,
    /// The file played.
    pub path: std::path::PathBuf,
    /// The Gateway's URL, and the dispatches the page fired: (sequence,
    /// name, data), READY and the GUILD_CREATEs being 1 to `world::GREETED`.
    pub gateway: Mutex<Option<String>>,
    dispatches: Mutex<Vec<(u64, String, Value)>>,
    /// Whether serve's shard has identified once.
    pub(super) identified: std::sync::atomic::AtomicBool,
    /// Timed events to tick now: sent here, heard by serve's timers.
    ticks: (crossbeam_channel::Sender<String>, crossbeam_channel::Receiver<String>),
    /// How far the page moved the bot's clock forward (ms).
    pub moved: std::sync::Arc<std::sync::atomic::AtomicI64>,
    /// The store serve keeps in (its waiting work is listed), and serve's
    /// clock (which `moved` moves).
    pub store: std::sync::OnceLock<crate::run::store::Backend>,
    pub clock: std::sync::OnceLock<crate::host::serve::clock::Clock>,
    /// Asks serve for the waiting work due now (the clock moved).
    later: (
        crossbeam_channel::Sender<crossbeam_channel::Sender<usize>>,
        crossbeam_channel::Receiver<crossbeam_channel::Sender<usize>>,
    ),
    /// Set when the stand-in is done: its Gateway takes no more connections.
    pub(super) closed: std::sync::atomic::AtomicBool,
    /// What runs' actions changed in the stand-in's world.
    pub acted: Mutex<super::acted::Acted>,
    /// What webhook events are signed with, by secret slot: the value
    /// serve holds, or `own_secret` for a slot with none (play posts as
    /// the sender would).
    hook_secrets: Mutex<std::collections::HashMap<String, String>>,
    own_secret: String,
    /// The files serve uploaded with its messages.
    pub uploads: super::files::Uploads,
}

impl Play {
    pub fn new(address: SocketAddr, path: std::path::PathBuf) -> Result<Play, PlayError> {
        let seed: [u8; 32] = random()?;
        let token: [u8; 24] = random()?;
        let secret: [u8; 24] = random()?;
        Ok(Play {
            address,
            key: SigningKey::from_bytes(&seed),
            token: format!("play.{}", hex::encode(token)),
            serve: Mutex::new(None),
            calls: Mutex::new((std::collections::VecDeque::new(), 0)),
            arrived: tokio::sync::Notify::new(),
            arrived_sync: std::sync::Condvar::new(),
            agent: ureq::Agent::new_with_config(
                ureq::Agent::config_builder()
                    .timeout_global(Some(Duration::from_secs(10)))
                    .http_status_as_error(false)
                    .build(),
            ),
            next_id: std::sync::atomic::AtomicU64::new(1),
            file: Mutex::new(Value::Null),
            stamp: Mutex::new(None),
            path,
            gateway: Mutex::new(None),
            dispatches: Mutex::new(Vec::new()),
            identified: std::sync::atomic::AtomicBool::new(false),
            ticks: crossbeam_channel::bounded(16),
            moved: std::sync::Arc::default(),
            store: std::sync::OnceLock::new(),
            clock: std::sync::OnceLock::new(),
            later: crossbeam_channel::bounded(1),
            closed: std::sync::atomic::AtomicBool::new(false),
            acted: Mutex::new(super::acted::Acted::default()),
            hook_secrets: Mutex::new(std::collections::HashMap::new()),
            own_secret: format!("play-webhook.{}", hex::encode(secret)),
            uploads: super::files::Uploads::default(),
        })
    }

    /// Whether `name` is a webhook event of the file.
    pub fn is_webhook(&self, name: &str) -> bool {
        let file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        file["webhooks"].as_array().is_some_and(|hooks| hooks.iter().any(|h| h["name"] == name))
    }

    /// Gives serve a value for each webhook's secret that has none (play's
    /// own), and keeps what each is, to sign with.
    pub fn webhook_secrets(&self, plan: &crate::language::plan::Plan, inputs: &mut crate::run::eval::Inputs) {
        let mut kept = self.hook_secrets.lock().unwrap_or_else(|e| e.into_inner());
        for hook in plan.trees.iter().filter_map(|t| t.webhook.as_ref()) {
            let value = inputs.secrets.entry(hook.secret.clone()).or_insert_with(|| self.own_secret.clone()).clone();
            kept.insert(hook.secret.clone(), value);
        }
    }

    /// Posts webhook event `hook` (as the page knows it: its name, path,
    /// scheme, secret slot and sample) to serve, signed as its sender
    /// signs: `given["body"]` (JSON text), or its sample.
    fn post_webhook(&self, hook: &Value, given: &Value) -> Result<(), PlayError> {
        use crate::base::webhook::Scheme;
        let name = hook["name"].as_str().unwrap_or_default();
        let body = match given["body"].as_str().filter(|b| !b.trim().is_empty()) {
            Some(b) => b.to_string(),
            None => hook["sample"].to_string(),
        };
        let scheme: Scheme = serde_json::from_value(hook["scheme"].clone()).map_err(PlayError::Json)?;
        let slot = hook["secret"].as_str().unwrap_or_default();
        let secret = self.hook_secrets.lock().unwrap_or_else(|e| e.into_inner()).get(slot).cloned();
        let secret = secret.ok_or_else(|| PlayError::NotAnEvent(name.to_string()))?;
        let serve = self.serve.lock().unwrap_or_else(|e| e.into_inner()).clone().ok_or(PlayError::NotServing)?;
        let base = serve.strip_suffix("/interactions").unwrap_or(&serve);
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64);
        let mut req = self.agent.post(&format!("{base}{}", hook["path"].as_str().unwrap_or_default()));
        for (k, v) in scheme.sign(&secret, body.as_bytes(), now) {
            req = req.header(k, &v);
        }
        // `header_x_github_event = "push"`: a header the sender sends besides.
        for (k, v) in given.as_object().into_iter().flatten() {
            if let (Some(name), Some(v)) = (k.strip_prefix("header_"), v.as_str()) {
                req = req.header(name.replace('_', "-"), v);
            }
        }
        let delivery = format!("play-{}", self.id());
        if let Some(h) = hook["delivery"].as_str().or(scheme.delivery_header()) {
            req = req.header(h, &delivery);
        }
        let answer =
            req.header("Content-Type", "application/json").send(body.as_bytes()).map_err(PlayError::NoAnswer)?;
        match answer.status().as_u16() {
            202 => Ok(()),
            status => Err(PlayError::Webhook(name.to_string(), status)),
        }
    }

    /// What `play` adds to serve: each run's record comes to the page (its
    /// inspector), and a timed event ticks when the page asks.
    pub fn hooks(self: &Arc<Play>) -> crate::host::serve::Hooks {
        let play = self.clone();
        crate::host::serve::Hooks {
            ran: Box::new(move |record| play.ran(&record)),
            ticks: self.ticks.1.clone(),
            later: self.later.1.clone(),
            heard: Some(Box::new({
                let play = self.clone();
                move |id| play.heard(id)
            })),
            stop: None,
            reloaded: Some(Box::new({
                let play = self.clone();
                move |refused| play.reloaded(refused)
            })),
            page: Some(self.url()),
        }
    }

    /// How serve's last reload went: what it refused is shown on the page
    /// beside the file's own diagnostics (a file can check clean and still
    /// be refused: a secret without a value), until a reload is taken.
    fn reloaded(&self, refused: Option<&crate::host::serve::Refused>) {
        let problems: Vec<Value> = refused.map_or_else(Vec::new, |r| {
            let listed = r.problems.iter().map(|p| {
                json!({
                    "code": p.code, "severity": "error", "message": format!("serve refused the new version: {}", p.message),
                    "file": p.file, "line": p.line, "column": p.column, "help": p.help,
                })
            });
            let mut listed: Vec<Value> = listed.collect();
            if listed.is_empty() {
                listed.push(json!({ "code": "", "severity": "error", "message": format!("serve refused the new version: {}", r.rendered), "line": 1, "column": 1 }));
            }
            listed
        });
        self.file.lock().unwrap_or_else(|e| e.into_inner())["refused"] = json!(problems);
    }

    /// A member's message serve read for an `await`'s answer.
    fn heard(&self, id: &str) {
        let body = serde_json::json!({ "message": id });
        self.record(Call { method: String::new(), route: String::new(), kind: "heard", interaction: None, body });
    }

    /// A run's record from serve, for the page's inspector (in order with
    /// serve's calls, so a run's record follows its messages).
    fn ran(&self, record: &str) {
        let body: Value = serde_json::from_str(record).unwrap_or(Value::Null);
        let interaction = body["interaction"].as_str().map(str::to_string);
        self.record(Call { method: String::new(), route: String::new(), kind: "run", interaction, body });
    }

    /// What the page is told of the file being played, read again from
    /// `path` when it changed since: a file with errors keeps the commands
    /// of the last good one (as serve keeps its plan) and says its
    /// diagnostics, with the spans and help `blkc check` gives.
    pub fn file(&self, path: &std::path::Path) -> Value {
        let stamp = crate::host::serve::stamp(path);
        let seen = self.stamp.lock().unwrap_or_else(|e| e.into_inner()).replace(stamp);
        if seen != Some(stamp) {
            if let Ok(checked) = crate::language::load::load(path, crate::language::load::LoadOptions::default()) {
                self.tell(&checked);
            }
        }
        self.file.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Tells the page of a checked file: its diagnostics, and (when it has
    /// no error) its commands.
    pub fn tell(&self, checked: &crate::language::model::Checked) {
        let index = checked.source.line_index();
        let diagnostics: Vec<Value> = checked
            .diagnostics
            .iter()
            .filter(|d| d.severity != crate::base::diagnostics::Severity::Hint)
            .map(|d| {
                let at = d.primary_span().map_or(0, |s| s.start as usize);
                let (line, column) = index.line_col(at);
                json!({
                    "code": d.code.as_str(), "severity": d.severity.as_str(), "message": d.message,
                    "file": index.file(at), "line": line, "column": column, "help": d.help,
                })
            })
            .collect();
        // (A file without errors lowers to its plan, which carries the
        // commands' registration.)
        if let Ok(plan) = crate::language::plan::lower(checked) {
            self.set_file(&checked.source.name, &checked.ast, plan.commands.as_deref());
            self.file.lock().unwrap_or_else(|e| e.into_inner())["webhooks"] = webhooks(checked, &plan);
        }
        self.file.lock().unwrap_or_else(|e| e.into_inner())["diagnostics"] = json!(diagnostics);
    }

    /// Tells the page of a file: its name, and its commands as the
    /// platform's client would offer them (their registration).
    pub fn set_file(
        &self,
        name: &str,
        ast: &crate::language::ast::File,
        registered: Option<&[crate::discord::registration::Command]>,
    ) {
        let commands = match registered {
            Some(commands) => serde_json::to_value(commands).unwrap_or_default(),
            // (A command without a description is still played.)
            None => json!(ast
                .written()
                .filter(|t| t.kind == crate::language::ast::TreeKind::Command)
                .map(|t| json!({ "type": 1, "name": t.name.name.as_str(), "description": "", "options": [] }))
                .collect::<Vec<_>>()),
        };
        // The events the page can fire, and the timed ones it can tick
        // (which also tick on their own schedule).
        let event = |timed: bool| {
            ast.written()
                .filter(move |t| t.kind == crate::language::ast::TreeKind::Event && t.schedule.is_some() == timed)
                .map(|t| t.name.name.as_str())
                .filter(|k| *k != "ready")
                .collect::<Vec<&str>>()
        };
        let (events, timers) = (event(false), event(true));
        // What the page lets one edit of each (who and where are its own controls).
        let own = ["user_id", "user_name", "server_id", "channel_id", "bot_id", "bot_name", "id", "new_server_id"];
        let fields: serde_json::Map<String, Value> = events
            .iter()
            .map(|k| {
                let mut f = crate::discord::events::sample_fields(k);
                f.retain(|n| !own.contains(n));
                (k.to_string(), json!(f))
            })
            .collect();
        let servers: Vec<Value> =
            world::SERVERS.iter().map(|g| json!({ "id": g.id, "name": g.name, "channel": g.channel })).collect();
        let mut file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        // (What serve last refused stays until serve takes a version.)
        let refused = file.get("refused").cloned().unwrap_or_else(|| json!([]));
        *file = json!({
            "name": name, "commands": commands, "events": events, "timers": timers, "servers": servers,
            "fields": fields, "diagnostics": [], "refused": refused, "bot": world::BOT, "names": names(),
        });
    }

    /// The public key serve checks interactions with (hex, as the portal
    /// shows one).
    pub fn public_key(&self) -> String {
        hex::encode(self.key.verifying_key().to_bytes())
    }

    /// The stand-in's API base, serve's `--platform`.
    pub fn api(&self) -> String {
        format!("http://{}/api/v10", self.address)
    }

    /// The page's address.
    pub fn url(&self) -> String {
        format!("http://{}/", self.address)
    }

    /// A new snowflake-like id for what the stand-in makes (interactions,
    /// messages).
    pub(super) fn id(&self) -> String {
        let n = self.next_id.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        (1_400_000_000_100_000_000u64 + n).to_string()
    }

    /// The headers the platform signs an interaction with.
    fn sign(&self, body: &[u8]) -> (String, String) {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let timestamp = now.to_string();
        let mut message = timestamp.as_bytes().to_vec();
        message.extend_from_slice(body);
        (hex::encode(self.key.sign(&message).to_bytes()), timestamp)
    }

    /// What serve sent the platform after call `after` (its index), waiting
    /// up to `wait` for one when there is none yet.
    /// Gives them and the number of the next one (those before the kept
    /// ones are gone).
    pub async fn calls_after(&self, after: usize, wait: Duration) -> (Vec<Call>, usize) {
        let take = || {
            let calls = self.calls.lock().unwrap_or_else(|e| e.into_inner());
            let (kept, dropped) = (&calls.0, calls.1);
            let new: Vec<Call> = kept.iter().skip(after.saturating_sub(dropped)).cloned().collect();
            (new, dropped + kept.len())
        };
        let notified = self.arrived.notified();
        let now = take();
        if !now.0.is_empty() {
            return now;
        }
        let _ = tokio::time::timeout(wait, notified).await;
        take()
    }

    /// The calls after call `after` (its index), once `done` holds of
    /// them, or when `within` has passed; and the number of the next one.
    pub fn wait_calls(&self, after: usize, within: Duration, done: impl Fn(&[Call]) -> bool) -> (Vec<Call>, usize) {
        let until = std::time::Instant::now() + within;
        let mut calls = self.calls.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            let (kept, dropped) = (&calls.0, calls.1);
            let new: Vec<Call> = kept.iter().skip(after.saturating_sub(dropped)).cloned().collect();
            let now = std::time::Instant::now();
            if done(&new) || now >= until {
                return (new, dropped + kept.len());
            }
            calls = self.arrived_sync.wait_timeout(calls, until - now).unwrap_or_else(|e| e.into_inner()).0;
        }
    }

    /// The number the next call will have.
    pub fn next_call(&self) -> usize {
        let calls = self.calls.lock().unwrap_or_else(|e| e.into_inner());
        calls.0.len() + calls.1
    }

    /// Fires an event of `kind` (`member_join`) with what the page gave:
    /// the dispatch serve's shard is sent next.
    /// The id of the dispatch's message (or other object) is returned.
    pub fn fire(&self, kind: &str, given: &Value) -> Result<String, PlayError> {
        if let Some(name) = kind.strip_prefix("tick:") {
            return self.tick(name).map(|()| String::new());
        }
        let hook = self.file.lock().unwrap_or_else(|e| e.into_inner())["webhooks"]
            .as_array()
            .and_then(|hooks| hooks.iter().find(|h| h["name"] == kind).cloned());
        if let Some(hook) = hook {
            return self.post_webhook(&hook, given).map(|()| String::new());
        }
        let id = self.id();
        let (t, d, prime) = world::dispatch(kind, given, &id).ok_or_else(|| PlayError::NotAnEvent(kind.to_string()))?;
        if !prime.is_null() {
            self.dispatch("GUILD_UPDATE", prime);
        }
        // A vote counts in its poll's results when the poll ends.
        if let ("poll_vote_add" | "poll_vote_remove", Some(message)) = (kind, d["message_id"].as_str()) {
            let (answer, user) = (d["answer_id"].as_u64().unwrap_or(1), d["user_id"].as_str().unwrap_or_default());
            let mut acted = self.acted.lock().unwrap_or_else(|e| e.into_inner());
            acted.vote(message, answer, user, kind == "poll_vote_add");
        }
        self.dispatch(t, d);
        Ok(id)
    }

    /// Each server's GUILD_CREATE again, as the platform sends one when a
    /// server becomes available anew: serve's cache holds the servers as
    /// at the start (a conversation test begins so).
    pub fn greet_again(&self) {
        for server in &world::SERVERS {
            if let Ok(d) = serde_json::to_value(world::guild(server)) {
                self.dispatch("GUILD_CREATE", d);
            }
        }
    }

    /// Queues dispatch `t` with data `d` for serve's shard.
    fn dispatch(&self, t: &str, d: Value) {
        let mut dispatches = self.dispatches.lock().unwrap_or_else(|e| e.into_inner());
        let seq = dispatches.last().map_or(world::GREETED, |d| d.0) + 1;
        dispatches.push((seq, t.to_string(), d));
        // Only the last fired are kept (a session replays what it missed
        // of those), within a count and a size.
        let size = |d: &(u64, String, Value)| d.2.to_string().len();
        let mut bytes: usize = dispatches.iter().map(size).sum();
        while dispatches.len() > 1 && (dispatches.len() > KEPT_DISPATCHES || bytes > KEPT_DISPATCH_BYTES) {
            bytes -= size(&dispatches.remove(0));
        }
    }

    /// Ends the stand-in's Gateway: its listener takes no more connections
    /// (woken by one of its own), and its thread ends.
    pub fn close(&self) {
        self.closed.store(true, std::sync::atomic::Ordering::SeqCst);
        let url = self.gateway.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if let Some(at) = url.as_deref().and_then(|u| u.strip_prefix("ws://")) {
            let _ = std::net::TcpStream::connect(at);
        }
    }

    /// Runs the waiting work due now (the clock was moved): how many runs
    /// serve queued, or none when it did not answer within `within`.
    pub fn due_now(&self, within: std::time::Duration) -> Option<usize> {
        let (reply, answer) = crossbeam_channel::bounded(1);
        self.later.0.send_timeout(reply, within).ok()?;
        answer.recv_timeout(within).ok()
    }

    /// Moves the bot's clock forward by `by` (`"10m"`), and runs the
    /// waiting work now due: the bot's time now, and how many pieces ran.
    pub fn move_clock(&self, by: &str) -> Result<(String, usize), PlayError> {
        let seconds =
            crate::language::vocab::parse_duration(by).map_err(|_| PlayError::NotADuration(by.to_string()))?;
        let before = self.due_now(Duration::from_secs(10)).unwrap_or(0);
        let ms = i64::try_from(seconds.saturating_mul(1000)).unwrap_or(i64::MAX);
        self.moved.fetch_add(ms, std::sync::atomic::Ordering::SeqCst);
        let ran = self.due_now(Duration::from_secs(10)).unwrap_or(before).saturating_sub(before);
        Ok((self.clock_now(), ran))
    }

    /// The bot's time now, as serve's clock reads it.
    fn clock_now(&self) -> String {
        let ms = self.clock.get().map_or_else(crate::host::serve::clock::epoch_ms, |c| c.now_ms());
        let t =
            time::OffsetDateTime::from_unix_timestamp(ms.div_euclid(1000)).unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
        crate::base::when::written(t)
    }

    /// The work waiting in serve's store, soonest first, as the page lists
    /// it: when each is due, whose, its tree, key and note.
    pub fn waiting(&self) -> Value {
        let pieces = match self.store.get().map(|s| s.run_store().waiting(None)) {
            Some(Ok(pieces)) => pieces,
            Some(Err(e)) => return serde_json::json!({ "error": e.to_string() }),
            None => Vec::new(),
        };
        let shown: Vec<Value> = pieces
            .iter()
            .take(100)
            .map(|p| {
                let mut v = p.shown();
                v["owner"] = Value::String(p.owner.clone());
                v["tree"] = Value::String(p.tree.clone());
                v
            })
            .collect();
        let now_ms = self.clock.get().map_or_else(crate::host::serve::clock::epoch_ms, |c| c.now_ms());
        serde_json::json!({ "now": self.clock_now(), "now_ms": now_ms, "waiting": shown, "count": pieces.len() })
    }

    /// Ticks the timed event `name` now (the file's, as last read well).
    pub fn tick(&self, name: &str) -> Result<(), PlayError> {
        let file = self.file.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let timers = file["timers"].as_array().cloned().unwrap_or_default();
        if !timers.iter().any(|t| t.as_str() == Some(name)) {
            return Err(PlayError::NotATimer(name.to_string()));
        }
        self.ticks.0.try_send(name.to_string()).map_err(|_| PlayError::TooManyTicks)
    }

    /// The dispatches fired after sequence `seq`.
    pub fn dispatches_after(&self, seq: u64) -> Vec<(u64, String, Value)> {
        self.dispatches.lock().unwrap_or_else(|e| e.into_inner()).iter().filter(|d| d.0 > seq).cloned().collect()
    }

    pub(super) fn record(&self, call: Call) {
        let mut calls = self.calls.lock().unwrap_or_else(|e| e.into_inner());
        calls.0.push_back(call);
        if calls.0.len() > KEPT_CALLS {
            calls.0.pop_front();
            calls.1 += 1;
        }
        drop(calls);
        self.arrived.notify_waiters();
        self.arrived_sync.notify_all();
    }

    /// The interaction the platform would send for what the page asked
    /// (`kind` 2 a command, 3 a component, 4 a keystroke, 5 a form), from
    /// the member the page says is using it.
    pub fn interaction(&self, asked: &Value) -> Value {
        use crate::discord::model::{CommandData, Interaction, Member, MessageRef, NamedChannel, User};
        let id = self.id();
        // Its own token, as the platform gives each interaction one.
        let token = random::<12>().map(hex::encode).unwrap_or_default();
        let who = &asked["member"];
        let name = Some(text_or(&who["name"], "you"));
        let user = User { id: Some(text_or(&who["id"], world::MEMBER)), username: name.clone(), global_name: name };
        let server = text_or(&asked["server"], world::SERVER);
        // A click comes from its message's channel; else the page's own.
        let on = asked.get("message").and_then(|m| m["channel_id"].as_str()).map(str::to_string);
        let page = asked["channel"].as_str().filter(|c| !c.is_empty()).map(str::to_string);
        let channel = on.or(page).unwrap_or_else(|| world::CHANNEL.to_string());
        let mut roles: Vec<String> =
            who["roles"].as_array().into_iter().flatten().filter_map(|r| r.as_str().map(str::to_string)).collect();
        let acted = self.acted.lock().unwrap_or_else(|e| e.into_inner());
        // The roles runs gave the member are theirs, as on the platform.
        let user_id = user.id.clone().unwrap_or_default();
        roles.extend(acted.roles_of(&server, &user_id).into_iter().filter(|r| !roles.contains(r)).collect::<Vec<_>>());
        let channel_name = acted.channel_name(&channel).unwrap_or_else(|| "general".to_string());
        drop(acted);
        let member = Member {
            user: Some(user),
            nick: None,
            roles: Some(roles),
            permissions: Some(
                crate::discord::registration::permission_bits(&text_or(&who["permissions"], "8"))
                    .unwrap_or_default()
                    .to_string(),
            ),
        };
        // What the page gave, read into the types serve reads it into (an
        // option's value is kept as written: read from text).
        let mut data = serde_json::from_str::<CommandData>(&asked["data"].to_string()).ok();
        // A file the page uploaded is where the platform keeps its uploads.
        let files = data.as_mut().and_then(|d| d.resolved.as_mut()).and_then(|r| r.attachments.as_mut());
        for (id, file) in files.into_iter().flatten() {
            file.url = Some(crate::discord::model::attachment_url(id, file.filename.as_deref().unwrap_or("file")));
        }
        let message = asked.get("message").filter(|m| m.is_object());
        let message = message.and_then(|m| serde_json::from_str::<MessageRef>(&m.to_string()).ok());
        let interaction = Interaction {
            type_code: Some(u8::try_from(asked["type"].as_u64().unwrap_or(2)).unwrap_or(2)),
            id: Some(id.clone()),
            application_id: Some(world::BOT.to_string()),
            token: Some(format!("play-{id}-{token}")),
            guild_id: Some(server),
            channel_id: Some(channel),
            channel: Some(NamedChannel { name: Some(channel_name) }),
            member: Some(member),
            user: None,
            data,
            message,
            locale: Some(asked["locale"].as_str().filter(|l| !l.is_empty()).unwrap_or("en-US").to_string()),
            guild_locale: Some("en-US".to_string()),
        };
        serde_json::to_value(interaction).unwrap_or_default()
    }

    /// Posts an interaction to serve's front door, signed, and gives its
    /// answer (the platform's first answer, as serve gave it).
    pub fn send(&self, interaction: &Value) -> Result<Value, PlayError> {
        let url = self.serve.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let url = url.ok_or(PlayError::NotServing)?;
        let body = serde_json::to_vec(interaction).map_err(PlayError::Json)?;
        let (signature, timestamp) = self.sign(&body);
        let mut answer = self
            .agent
            .post(&url)
            .header("Content-Type", "application/json")
            .header("X-Signature-Ed25519", &signature)
            .header("X-Signature-Timestamp", &timestamp)
            .send(&body[..])
            .map_err(PlayError::NoAnswer)?;
        let status = answer.status().as_u16();
        let text = answer.body_mut().read_to_string().map_err(PlayError::NoAnswer)?;
        let value: Value = serde_json::from_str(&text).unwrap_or(Value::String(text));
        let mut sent = json!({ "status": status, "answer": value });
        // A new message (or "thinking…") is sent now, on the bot's clock: the
        // time the platform gives its message (a component may expire).
        if matches!(sent["answer"]["type"].as_u64(), Some(4 | 5)) {
            sent["timestamp"] = json!(self.now_rfc3339());
        }
        Ok(sent)
    }

    /// Now on the bot's clock (the system's, moved as the page moved it),
    /// as the platform writes a message's time.
    pub fn now_rfc3339(&self) -> String {
        let moved = self.moved.load(std::sync::atomic::Ordering::SeqCst);
        let now = time::OffsetDateTime::now_utc() + time::Duration::milliseconds(moved);
        now.format(&time::format_description::well_known::Rfc3339).unwrap_or_default()
    }
}

/// A text field of the page's request, or `default` (a number is its digits).
fn text_or(v: &Value, default: &str) -> String {
    match v {
        Value::String(s) if !s.is_empty() => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => default.to_string(),
    }
}

/// Random bytes from the system (`getrandom`).
fn random<const N: usize>() -> Result<[u8; N], PlayError> {
    let mut out = [0u8; N];
    getrandom::fill(&mut out).map_err(PlayError::Random)?;
    Ok(out)
}

/// What `play` could not do.
/// The file's webhook events as the page fires them: each one's name,
/// path, scheme, secret slot, delivery header and sample body (`{}` with
/// none).
fn webhooks(checked: &crate::language::model::Checked, plan: &crate::language::plan::Plan) -> Value {
    let hooks = plan.trees.iter().filter_map(|t| Some((t, t.webhook.as_ref()?)));
    let list = hooks.map(|(t, h)| {
        let model = checked.model.trees.iter().find(|m| m.kind == crate::language::ast::TreeKind::Event && m.name == t.name);
        let sample = model
            .and_then(|m| m.block(crate::language::ast::Webhook::BLOCK))
            .and_then(|b| checked.model.sample(b))
            .and_then(|s| s.as_ref().as_ref().ok().map(|d| d.to_json()))
            .unwrap_or_else(|| json!({}));
        json!({ "name": t.name, "path": h.path, "scheme": h.scheme, "secret": h.secret, "delivery": h.delivery, "sample": sample })
    });
    Value::Array(list.collect())
}

#[derive(Debug)]
pub enum PlayError {
    /// The system gave no random bytes (for the key and the token).
    Random(getrandom::Error),
    /// The page asked for an event `play` does not fire.
    NotAnEvent(String),
    /// The page asked to tick what is not a timed event of the file.
    NotATimer(String),
    TooManyTicks,
    /// The bot's server is not listening yet.
    NotServing,
    Json(serde_json::Error),
    /// The bot's server did not answer, or its answer could not be read.
    NoAnswer(ureq::Error),
    /// The stand-in Gateway could not listen.
    Gateway(std::io::Error),
    /// Serve refused a webhook play posted, with this status.
    Webhook(String, u16),
    /// The page asked to move the clock by what is no duration.
    NotADuration(String),
}

impl std::fmt::Display for PlayError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PlayError::Random(e) => write!(f, "cannot read random bytes: {e}"),
            PlayError::NotAnEvent(kind) => write!(f, "`{kind}` is not an event play fires"),
            PlayError::NotATimer(name) => write!(f, "`{name}` is not a timed event of the file"),
            PlayError::TooManyTicks => f.write_str("too many ticks asked for at once"),
            PlayError::NotServing => f.write_str("the bot is not serving yet"),
            PlayError::Json(e) => write!(f, "{e}"),
            PlayError::NoAnswer(e) => write!(f, "the bot did not answer: {e}"),
            PlayError::Gateway(e) => write!(f, "cannot open the Gateway: {e}"),
            PlayError::Webhook(name, status) => write!(f, "the bot answered webhook `{name}` with {status}"),
            PlayError::NotADuration(by) => {
                write!(f, "`{}` is not a duration like 10m, 2h30m or 1d", crate::base::display::one_line(by))
            }
        }
    }
}

impl std::error::Error for PlayError {}

/// The names the page shows mentions by, as the client does (`<@id>` as
/// `@name`): the world's users, roles and channels. (The member playing is
/// the page's own.)
fn names() -> Value {
    let roles: serde_json::Map<String, Value> =
        super::acted::ROLES.iter().map(|(id, name)| (id.to_string(), json!(name))).collect();
    let channels: serde_json::Map<String, Value> =
        world::SERVERS.iter().map(|g| (g.channel.to_string(), json!("general"))).collect();
    json!({
        "users": { world::BOT: "bot", super::acted::OWNER: "owner", super::acted::CLOSED_DMS: "quiet" },
        "roles": roles,
        "channels": channels,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A long play keeps the last calls only, and says where the next one
    /// is numbered, so a page that fell behind goes on from the oldest kept.
    #[test]
    fn the_calls_kept_for_the_page_are_bounded() {
        let play = Play::new(([127, 0, 0, 1], 1).into(), "bot.blk".into()).unwrap();
        for n in 0..KEPT_CALLS + 5 {
            let call = Call {
                method: "POST".into(),
                route: format!("/{n}"),
                kind: "message",
                interaction: None,
                body: Value::Null,
            };
            play.record(call);
        }
        let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
        let (all, next) = runtime.block_on(play.calls_after(0, Duration::ZERO));
        assert_eq!((all.len(), next), (KEPT_CALLS, KEPT_CALLS + 5));
        assert_eq!(all[0].route, "/5");
        let (last, _) = runtime.block_on(play.calls_after(KEPT_CALLS + 3, Duration::ZERO));
        assert_eq!(
            last.iter().map(|c| c.route.as_str()).collect::<Vec<_>>(),
            [format!("/{}", KEPT_CALLS + 3), format!("/{}", KEPT_CALLS + 4)]
        );
        let (none, next) = runtime.block_on(play.calls_after(KEPT_CALLS + 5, Duration::ZERO));
        assert_eq!((none.len(), next), (0, KEPT_CALLS + 5));
    }
}
