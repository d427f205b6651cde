//! A sharded test Gateway on 127.0.0.1, as the platform's is to a bot in
//! many servers: each connection identifies as one shard of a count, and
//! gets the dispatches of the servers that shard carries (server id >> 22,
//! mod the count); sessions outlive their connections, so a RESUME from
//! any process replays what the session missed; a session resumed while
//! another connection holds it closes that one (and is counted: it means
//! two processes held one shard). An identify under a count other than the
//! one recommended is closed with 4011 when smaller.

use std::collections::HashMap;
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tungstenite::protocol::frame::coding::CloseCode;
use tungstenite::protocol::CloseFrame;
use tungstenite::Message;

struct Session {
    shard: u32,
    count: u32,
    /// Its dispatches, each with its sequence (READY 1, GUILD_CREATE 2).
    dispatches: Vec<(u64, String, Value)>,
    /// The connection that holds it now.
    live: Option<usize>,
}

#[derive(Default)]
struct State {
    count: u32,
    sessions: HashMap<String, Session>,
    connections: usize,
    /// (when, shard, connection) of each IDENTIFY.
    identifies: Vec<(Instant, u32, usize)>,
    /// (when, shard, connection) of each RESUME of a known session.
    resumes: Vec<(Instant, u32, usize)>,
    /// Sessions resumed while another connection held them.
    doubles: usize,
    /// Connections to close: their session was resumed elsewhere.
    kicked: Vec<usize>,
    /// Connections to tell their session is invalid (op 9, not resumable).
    invalidated: Vec<usize>,
    /// Identifies under one count while a session under another was live.
    splits: usize,
    /// The count each identifying connection named.
    counts: HashMap<usize, u32>,
}

pub struct ShardedGateway {
    state: Arc<Mutex<State>>,
    pub port: u16,
}

/// The server id that shard `shard` of `count` carries (the `n`th of them).
pub fn server_of(shard: u32, count: u32, n: u64) -> u64 {
    (u64::from(shard) + n * u64::from(count)) << 22
}

impl ShardedGateway {
    /// A Gateway recommending `count` shards.
    pub fn start(count: u32) -> ShardedGateway {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(Mutex::new(State { count, ..State::default() }));
        let s = state.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let s = s.clone();
                let number = {
                    let mut st = s.lock().unwrap();
                    st.connections += 1;
                    st.connections
                };
                std::thread::spawn(move || connection(stream, number, &s));
            }
        });
        ShardedGateway { state, port }
    }

    /// What `GET /gateway/bot` answers.
    pub fn bot_info(&self, max_concurrency: u32) -> Value {
        let count = self.state.lock().unwrap().count;
        json!({ "url": format!("ws://127.0.0.1:{}", self.port), "shards": count,
                "session_start_limit": { "total": 1000, "remaining": 990, "reset_after": 0, "max_concurrency": max_concurrency } })
    }

    /// From now on, recommends `count` shards (a bot in more servers).
    pub fn set_count(&self, count: u32) {
        self.state.lock().unwrap().count = count;
    }

    /// Invalidates the live session of `shard` (op 9, not resumable): its
    /// holder identifies anew.
    pub fn invalidate(&self, shard: u32) {
        let mut st = self.state.lock().unwrap();
        let live: Vec<usize> = st.sessions.values().filter(|s| s.shard == shard).filter_map(|s| s.live).collect();
        st.invalidated.extend(live);
    }

    /// The shard counts of the identifies so far, in order.
    pub fn identified_counts(&self) -> Vec<u32> {
        let st = self.state.lock().unwrap();
        st.identifies.iter().map(|(_, _, c)| st.counts[c]).collect()
    }

    /// How many identifies came under one count while a session under
    /// another was live (a shard held under two counts).
    pub fn splits(&self) -> usize {
        self.state.lock().unwrap().splits
    }

    /// A dispatch for server `server`: to the sessions of its shard.
    pub fn dispatch(&self, server: u64, t: &str, mut d: Value) {
        let mut st = self.state.lock().unwrap();
        let count = st.count;
        let shard = ((server >> 22) % u64::from(count)) as u32;
        d["guild_id"] = json!(server.to_string());
        for session in st.sessions.values_mut().filter(|s| s.shard == shard && s.count == count) {
            let seq = session.dispatches.len() as u64 + 3;
            session.dispatches.push((seq, t.to_string(), d.clone()));
        }
    }

    /// Each shard's live sessions under the count recommended: how many
    /// connections hold it now.
    pub fn live(&self) -> Vec<usize> {
        let st = self.state.lock().unwrap();
        let live = |shard: u32| {
            st.sessions.values().filter(|s| s.shard == shard && s.count == st.count && s.live.is_some()).count()
        };
        (0..st.count).map(live).collect()
    }

    /// (when, shard) of each IDENTIFY so far.
    pub fn identifies(&self) -> Vec<(Instant, u32)> {
        self.state.lock().unwrap().identifies.iter().map(|(t, s, _)| (*t, *s)).collect()
    }

    /// (when, shard) of each RESUME of a known session so far.
    pub fn resumes(&self) -> Vec<(Instant, u32)> {
        self.state.lock().unwrap().resumes.iter().map(|(t, s, _)| (*t, *s)).collect()
    }

    /// How many times a session was resumed while another connection held it.
    pub fn doubles(&self) -> usize {
        self.state.lock().unwrap().doubles
    }

    /// Waits (up to `within`) for `done` to hold of the Gateway.
    pub fn wait(&self, within: Duration, done: impl Fn(&ShardedGateway) -> bool) -> bool {
        let until = Instant::now() + within;
        while Instant::now() < until {
            if done(self) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        done(self)
    }
}

fn send(ws: &mut tungstenite::WebSocket<std::net::TcpStream>, v: Value) {
    let _ = ws.send(Message::text(v.to_string()));
}

/// IDENTIFY: a new session of the shard it names, or a close (4011 for a
/// count smaller than the one recommended, 4010 for an id past it).
fn identify(state: &Mutex<State>, number: usize, message: &Value) -> Result<(String, u32), u16> {
    let mut st = state.lock().unwrap();
    let (shard, count) =
        (message["d"]["shard"][0].as_u64().unwrap_or(0) as u32, message["d"]["shard"][1].as_u64().unwrap_or(1) as u32);
    if count < st.count {
        return Err(4011);
    }
    if shard >= count {
        return Err(4010);
    }
    if st.sessions.values().any(|s| s.count != count && s.live.is_some()) {
        st.splits += 1;
    }
    st.identifies.push((Instant::now(), shard, number));
    st.counts.insert(number, count);
    let id = format!("session-{number}");
    st.sessions.insert(id.clone(), Session { shard, count, dispatches: Vec::new(), live: Some(number) });
    Ok((id, shard))
}

/// RESUME: the session, taken from the connection that held it; none when
/// it is unknown.
fn resume(state: &Mutex<State>, number: usize, message: &Value) -> Option<String> {
    let mut st = state.lock().unwrap();
    let id = message["d"]["session_id"].as_str()?.to_string();
    let session = st.sessions.get_mut(&id)?;
    let (shard, before) = (session.shard, session.live.replace(number));
    st.resumes.push((Instant::now(), shard, number));
    if let Some(other) = before.filter(|c| *c != number) {
        st.doubles += 1;
        st.kicked.push(other);
    }
    Some(id)
}

fn connection(stream: std::net::TcpStream, number: usize, state: &Mutex<State>) {
    let Ok(mut ws) = tungstenite::accept(stream) else { return };
    send(&mut ws, json!({ "op": 10, "d": { "heartbeat_interval": 1000 } }));
    let _ = ws.get_ref().set_read_timeout(Some(Duration::from_millis(10)));
    let port = ws.get_ref().local_addr().unwrap().port();
    // The session this connection holds, and the last sequence it delivered.
    let mut held: Option<(String, u64)> = None;
    loop {
        match ws.read() {
            Ok(Message::Text(text)) => {
                let message: Value = serde_json::from_str(text.as_str()).unwrap_or(Value::Null);
                match message["op"].as_u64() {
                    Some(1) => send(&mut ws, json!({ "op": 11 })),
                    Some(2) => match identify(state, number, &message) {
                        Ok((id, shard)) => {
                            let server = server_of(shard, state.lock().unwrap().count, 0).to_string();
                            send(
                                &mut ws,
                                json!({ "op": 0, "t": "READY", "s": 1, "d": {
                                "session_id": id, "resume_gateway_url": format!("ws://127.0.0.1:{port}"),
                                "user": { "id": "999", "username": "blkcbot" }, "guilds": [{ "id": server, "unavailable": true }] } }),
                            );
                            send(
                                &mut ws,
                                json!({ "op": 0, "t": "GUILD_CREATE", "s": 2, "d": {
                                "id": server, "name": format!("Server {shard}"), "member_count": 10, "system_channel_id": "888",
                                "channels": [{ "id": "888", "name": "general" }] } }),
                            );
                            held = Some((id, 2));
                        }
                        Err(code) => {
                            let _ = ws.close(Some(CloseFrame { code: CloseCode::from(code), reason: "shards".into() }));
                            let _ = ws.flush();
                            std::thread::sleep(Duration::from_millis(100));
                            return;
                        }
                    },
                    Some(6) => match resume(state, number, &message) {
                        Some(id) => {
                            held = Some((id, message["d"]["seq"].as_u64().unwrap_or(0)));
                            // What it missed comes first, then RESUMED.
                            flush(&mut ws, state, &mut held);
                            send(&mut ws, json!({ "op": 0, "t": "RESUMED", "s": null, "d": {} }));
                        }
                        None => send(&mut ws, json!({ "op": 9, "d": false })),
                    },
                    _ => {}
                }
            }
            Ok(Message::Close(_)) | Err(tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed) => {
                return release(state, number);
            }
            Ok(_) => {}
            Err(tungstenite::Error::Io(e))
                if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
            Err(_) => return release(state, number),
        }
        let invalid = {
            let mut st = state.lock().unwrap();
            let mine = st.invalidated.contains(&number);
            st.invalidated.retain(|c| *c != number);
            mine
        };
        if invalid {
            send(&mut ws, json!({ "op": 9, "d": false }));
        }
        if state.lock().unwrap().kicked.contains(&number) {
            let _ = ws.close(Some(CloseFrame { code: CloseCode::from(4009), reason: "resumed elsewhere".into() }));
            let _ = ws.flush();
            return;
        }
        flush(&mut ws, state, &mut held);
    }
}

/// Sends the session's dispatches after the last delivered.
fn flush(ws: &mut tungstenite::WebSocket<std::net::TcpStream>, state: &Mutex<State>, held: &mut Option<(String, u64)>) {
    let Some((id, last)) = held else { return };
    let pending: Vec<(u64, String, Value)> = {
        let st = state.lock().unwrap();
        st.sessions.get(id).map_or(Vec::new(), |s| s.dispatches.iter().filter(|d| d.0 > *last).cloned().collect())
    };
    for (seq, t, d) in pending {
        send(ws, json!({ "op": 0, "t": t, "s": seq, "d": d }));
        *last = seq;
    }
}

/// A connection ended: the session it held is held by none.
fn release(state: &Mutex<State>, number: usize) {
    let mut st = state.lock().unwrap();
    for session in st.sessions.values_mut().filter(|s| s.live == Some(number)) {
        session.live = None;
    }
}
