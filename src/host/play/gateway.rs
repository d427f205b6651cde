//! The Gateway as `play` stands in for it: a WebSocket on loopback that
//! speaks the platform's protocol to serve's shard (HELLO, IDENTIFY and
//! READY with one server, heartbeats and their ACKs, RESUME), and delivers
//! the events the page fires as dispatches, in sequence.

use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use tungstenite::Message;

use super::state::{Play, PlayError};
use super::world::{BOT, GREETED, SERVERS};
use crate::discord::model::{Frame, GuildList, OpCode, Ready, Sent, User};
use twilight_model::gateway::payload::incoming::Hello;
use twilight_model::gateway::payload::outgoing::Resume;

/// Connections the Gateway holds at once (serve's one shard needs one, and
/// one more while it reconnects); more are closed at once, so idle
/// connections cannot make a thread each without end.
const MOST_CONNECTIONS: usize = 8;
/// How long a connection may take to finish its handshake.
const HANDSHAKE_TIME: std::time::Duration = std::time::Duration::from_secs(10);

/// Listens on a free loopback port; gives its `ws://` URL.
pub fn start(play: Arc<Play>) -> Result<String, PlayError> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let listener = TcpListener::bind("127.0.0.1:0").map_err(PlayError::Gateway)?;
    let url = format!("ws://{}", listener.local_addr().map_err(PlayError::Gateway)?);
    let live = Arc::new(AtomicUsize::new(0));
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            if play.closed.load(Ordering::SeqCst) {
                return;
            }
            if live.fetch_add(1, Ordering::SeqCst) >= MOST_CONNECTIONS {
                live.fetch_sub(1, Ordering::SeqCst);
                drop(stream);
                continue;
            }
            let (play, live) = (play.clone(), live.clone());
            let _ = stream.set_read_timeout(Some(HANDSHAKE_TIME));
            let spawned = std::thread::Builder::new().name("blkc-play-gateway".into()).spawn(move || {
                connection(stream, &play);
                live.fetch_sub(1, Ordering::SeqCst);
            });
            if spawned.is_err() {
                tracing::warn!("play's Gateway could not start a connection's thread");
            }
        }
    });
    Ok(url)
}

/// Whether a WebSocket handshake is serve's: a browser's always says its
/// page's `Origin`, and no web page may listen to the events played.
fn not_a_browser(request: &tungstenite::handshake::server::Request) -> bool {
    !request.headers().contains_key("origin")
}

fn connection(stream: TcpStream, play: &Play) {
    // The callback's types are tungstenite's own (its error is a response).
    #[allow(clippy::result_large_err)]
    let only_serve = |request: &tungstenite::handshake::server::Request, response| {
        if not_a_browser(request) {
            return Ok(response);
        }
        let mut refused = tungstenite::handshake::server::ErrorResponse::new(Some("not play's bot\n".to_string()));
        *refused.status_mut() = tungstenite::http::StatusCode::FORBIDDEN;
        Err(refused)
    };
    let Ok(mut ws) = tungstenite::accept_hdr(stream, only_serve) else { return };
    let hello = Hello { heartbeat_interval: 41250 };
    if !send(&mut ws, &Sent::op(OpCode::Hello, hello)) {
        return;
    }
    let _ = ws.get_ref().set_read_timeout(Some(Duration::from_millis(50)));
    // The last sequence delivered; none before the session identifies.
    let mut delivered: Option<u64> = None;
    loop {
        match ws.read() {
            Ok(Message::Text(text)) => {
                let Ok(frame) = serde_json::from_str::<Frame>(text.as_str()) else { continue };
                match frame.op() {
                    Some(OpCode::Heartbeat) => {
                        send(&mut ws, &Sent::op(OpCode::HeartbeatAck, ()));
                    }
                    Some(OpCode::Identify) => {
                        let url = ws.get_ref().local_addr().map(|a| format!("ws://{a}")).unwrap_or_default();
                        send(&mut ws, &Sent::dispatch("READY", Some(1), ready(url)));
                        for (seq, g) in (2..).zip(&SERVERS) {
                            send(&mut ws, &Sent::dispatch("GUILD_CREATE", Some(seq), super::world::guild(g)));
                        }
                        // The first session gets what the page fired before
                        // the bot connected; a new one starts after what
                        // was fired, as the platform's does.
                        let first = !play.identified.swap(true, std::sync::atomic::Ordering::SeqCst);
                        let last = || play.dispatches_after(0).last().map_or(GREETED, |d| d.0);
                        delivered = Some(if first { GREETED } else { last() });
                    }
                    Some(OpCode::Resume) => {
                        // Read as serve wrote it: twilight's RESUME.
                        let resumed = serde_json::from_str::<Resume>(text.as_str()).ok();
                        delivered = Some(resumed.map_or(GREETED, |r| r.d.seq));
                        send(&mut ws, &Sent::dispatch("RESUMED", None, serde_json::Map::new()));
                    }
                    _ => {}
                }
            }
            Ok(Message::Close(_)) => return,
            Ok(_) => {}
            Err(tungstenite::Error::Io(e))
                if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
            Err(_) => return,
        }
        let Some(last) = delivered else { continue };
        for (seq, t, d) in play.dispatches_after(last) {
            if !send(&mut ws, &Sent::dispatch(&t, Some(seq), d)) {
                return;
            }
            delivered = Some(seq);
        }
    }
}

/// READY as the platform sends it to serve's shard: the session, the
/// bot's user and its servers (each unavailable until its GUILD_CREATE).
fn ready(url: String) -> Ready {
    Ready {
        user: Some(User { id: Some(BOT.to_string()), username: Some("bot".to_string()), global_name: None }),
        session_id: Some("play".to_string()),
        resume_gateway_url: Some(url),
        guilds: GuildList { count: SERVERS.len(), ids: SERVERS.iter().map(|s| s.id.to_string()).collect() },
    }
}

/// Writes a frame to serve's shard: whether it went.
fn send<D: serde::Serialize>(ws: &mut tungstenite::WebSocket<TcpStream>, sent: &Sent<'_, D>) -> bool {
    serde_json::to_string(sent).is_ok_and(|text| ws.send(Message::text(text)).is_ok())
}
