//! A test Gateway on 127.0.0.1: a WebSocket server speaking the platform's
//! Gateway protocol (HELLO, IDENTIFY, READY, GUILD_CREATE, heartbeats and
//! ACKs, dispatches with sequence numbers, RESUME replaying what was
//! missed, op 7 and op 9, close codes). The test drives it and reads what
//! each connection sent.

use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tungstenite::protocol::frame::coding::CloseCode;
use tungstenite::protocol::CloseFrame;
use tungstenite::Message;

#[derive(Debug, Clone)]
pub enum Control {
    /// Drop the TCP connection without a close frame.
    Drop,
    /// op 7 RECONNECT.
    Reconnect,
    /// op 9 INVALID SESSION, resumable or not.
    Invalid(bool),
    /// A close frame with this code.
    Close(u16),
    /// This many op 1 (a heartbeat asked for) at once.
    Beats(usize),
    /// A text message as it is.
    Raw(String),
}

#[derive(Default)]
struct State {
    /// Every message the clients sent, with its connection's number.
    received: Vec<(usize, Instant, Value)>,
    connections: usize,
    /// Every dispatch made, in order: (sequence, name, data).
    dispatches: Vec<(u64, String, Value)>,
    /// Controls waiting for each live connection.
    controls: Vec<(usize, Control)>,
    live: Vec<usize>,
    ack: bool,
    interval: u64,
    /// Ask for a reconnect (op 7) right after every READY and RESUMED.
    reconnect_always: bool,
    /// The `User-Agent` of each connection's handshake.
    user_agents: Vec<String>,
}

pub struct TestGateway {
    pub port: u16,
    state: Arc<Mutex<State>>,
}

impl TestGateway {
    /// A Gateway asking for heartbeats every `interval_ms`.
    pub fn start(interval_ms: u64) -> TestGateway {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(Mutex::new(State { ack: true, interval: interval_ms, ..State::default() }));
        let s = state.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let s = s.clone();
                let number = {
                    let mut st = s.lock().unwrap();
                    st.connections += 1;
                    let n = st.connections;
                    st.live.push(n);
                    st.connections
                };
                std::thread::spawn(move || connection(stream, number, &s));
            }
        });
        TestGateway { port, state }
    }

    pub fn url(&self) -> String {
        format!("ws://127.0.0.1:{}", self.port)
    }

    /// What `GET /gateway/bot` answers for this Gateway.
    pub fn bot_info(&self, shards: u32) -> Value {
        json!({ "url": self.url(), "shards": shards,
                "session_start_limit": { "total": 1000, "remaining": 999, "reset_after": 0, "max_concurrency": 16 } })
    }

    /// A dispatch to every identified connection, and to replay on resume.
    pub fn dispatch(&self, t: &str, d: Value) {
        let mut st = self.state.lock().unwrap();
        let seq = st.dispatches.len() as u64 + 3; // READY and GUILD_CREATE come first
        st.dispatches.push((seq, t.to_string(), d));
    }

    pub fn control(&self, control: Control) {
        let mut st = self.state.lock().unwrap();
        let live = st.live.clone();
        for c in live {
            st.controls.push((c, control.clone()));
        }
    }

    pub fn set_reconnect_always(&self, on: bool) {
        self.state.lock().unwrap().reconnect_always = on;
    }

    pub fn user_agents(&self) -> Vec<String> {
        self.state.lock().unwrap().user_agents.clone()
    }

    pub fn set_ack(&self, ack: bool) {
        self.state.lock().unwrap().ack = ack;
    }

    pub fn connections(&self) -> usize {
        self.state.lock().unwrap().connections
    }

    /// Every message a client sent, with its connection's number.
    pub fn received(&self) -> Vec<(usize, Instant, Value)> {
        self.state.lock().unwrap().received.clone()
    }

    /// The messages of opcode `op` so far.
    pub fn sent_op(&self, op: u64) -> Vec<(usize, Instant, Value)> {
        self.received().into_iter().filter(|(_, _, m)| m["op"] == op).collect()
    }

    /// Waits (up to 20 s) for `n` messages of opcode `op`.
    pub fn wait_op(&self, op: u64, n: usize) -> Vec<(usize, Instant, Value)> {
        let until = Instant::now() + Duration::from_secs(20);
        loop {
            let found = self.sent_op(op);
            if found.len() >= n || Instant::now() > until {
                return found;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

fn connection(stream: std::net::TcpStream, number: usize, state: &Mutex<State>) {
    let agent = std::sync::Arc::new(Mutex::new(String::new()));
    let seen = agent.clone();
    // The callback's type is tungstenite's own (its error is a response).
    #[allow(clippy::result_large_err)]
    let callback = move |request: &tungstenite::handshake::server::Request, response| {
        let ua = request.headers().get("user-agent").and_then(|v| v.to_str().ok()).unwrap_or_default();
        *seen.lock().unwrap() = ua.to_string();
        Ok(response)
    };
    let Ok(mut ws) = tungstenite::accept_hdr(stream, callback) else { return };
    state.lock().unwrap().user_agents.push(agent.lock().unwrap().clone());
    let interval = state.lock().unwrap().interval;
    let _ = ws.send(Message::text(json!({ "op": 10, "d": { "heartbeat_interval": interval } }).to_string()));
    let _ = ws.get_ref().set_read_timeout(Some(Duration::from_millis(10)));
    // The last sequence this connection delivered; none before it identifies.
    let mut delivered: Option<u64> = None;
    let end = |state: &Mutex<State>| state.lock().unwrap().live.retain(|c| *c != number);
    loop {
        match ws.read() {
            Ok(Message::Text(text)) => {
                let message: Value = serde_json::from_str(text.as_str()).unwrap_or(Value::Null);
                state.lock().unwrap().received.push((number, Instant::now(), message.clone()));
                match message["op"].as_u64() {
                    Some(1) if state.lock().unwrap().ack => {
                        let _ = ws.send(Message::text(json!({ "op": 11 }).to_string()));
                    }
                    Some(2) => {
                        let ready = json!({ "op": 0, "t": "READY", "s": 1, "d": {
                            "session_id": format!("session-{number}"), "resume_gateway_url": format!("ws://127.0.0.1:{}", ws.get_ref().local_addr().unwrap().port()),
                            "user": { "id": "999", "username": "blkcbot" }, "guilds": [{ "id": "777", "unavailable": true }] } });
                        let guild = json!({ "op": 0, "t": "GUILD_CREATE", "s": 2, "d": {
                            "id": "777", "name": "Test Server", "member_count": 10, "system_channel_id": "888",
                            "channels": [{ "id": "888", "name": "general" }, { "id": "889", "name": "random" }] } });
                        let _ = ws.send(Message::text(ready.to_string()));
                        let _ = ws.send(Message::text(guild.to_string()));
                        if state.lock().unwrap().reconnect_always {
                            let _ = ws.send(Message::text(json!({ "op": 7, "d": null }).to_string()));
                        }
                        // A new session starts after what was dispatched so far.
                        delivered = Some(state.lock().unwrap().dispatches.last().map_or(2, |d| d.0));
                    }
                    Some(6) => {
                        // Replay what the session missed, then RESUMED.
                        delivered = Some(message["d"]["seq"].as_u64().unwrap_or(0));
                        let _ =
                            ws.send(Message::text(json!({ "op": 0, "t": "RESUMED", "s": null, "d": {} }).to_string()));
                        if state.lock().unwrap().reconnect_always {
                            let _ = ws.send(Message::text(json!({ "op": 7, "d": null }).to_string()));
                        }
                    }
                    _ => {}
                }
            }
            Ok(Message::Close(_)) => {
                end(state);
                return;
            }
            Ok(_) => {}
            Err(tungstenite::Error::Io(e))
                if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
            Err(_) => {
                end(state);
                return;
            }
        }
        let (pending, controls) = {
            let mut st = state.lock().unwrap();
            let pending: Vec<(u64, String, Value)> = match delivered {
                Some(last) => st.dispatches.iter().filter(|d| d.0 > last).cloned().collect(),
                None => Vec::new(),
            };
            let mine: Vec<Control> = st.controls.iter().filter(|(c, _)| *c == number).map(|(_, c)| c.clone()).collect();
            st.controls.retain(|(c, _)| *c != number);
            (pending, mine)
        };
        // Controls first: one made before a dispatch acts before it.
        for control in controls {
            match control {
                Control::Drop => {
                    end(state);
                    return;
                }
                Control::Reconnect => {
                    let _ = ws.send(Message::text(json!({ "op": 7, "d": null }).to_string()));
                }
                Control::Invalid(resumable) => {
                    let _ = ws.send(Message::text(json!({ "op": 9, "d": resumable }).to_string()));
                }
                Control::Beats(n) => {
                    for _ in 0..n {
                        let _ = ws.send(Message::text(json!({ "op": 1, "d": null }).to_string()));
                    }
                }
                Control::Raw(text) => {
                    let _ = ws.send(Message::text(text));
                }
                Control::Close(code) => {
                    let _ = ws.close(Some(CloseFrame { code: CloseCode::from(code), reason: "test".into() }));
                    let _ = ws.flush();
                    end(state);
                    std::thread::sleep(Duration::from_millis(100));
                    return;
                }
            }
        }
        for (seq, t, d) in pending {
            let _ = ws.send(Message::text(json!({ "op": 0, "t": t, "s": seq, "d": d }).to_string()));
            delivered = Some(seq);
        }
    }
}
