//! Events over the Gateway: how many dispatches a second one `blkc serve`
//! turns into event runs whose reply reaches the platform, and the time
//! from a dispatch written on the Gateway to its reply's request read by
//! the platform. A Gateway and a platform on loopback, both in this
//! process; the event is reply-only (`message_create`).
//!
//! Two measurements, alternating three times: dispatches paced at 2,000 a
//! second for 5 seconds (the p50 and p99 of that rate), then 4,000 written
//! at once (the rate at which the process drains them).
//!
//! Run with `cargo bench --bench gateway`; `BLKC_BENCH_BIN=/path/to/blkc`
//! measures another build (run the two one after the other, alternately).

use std::collections::HashMap;
use std::io::{BufRead as _, BufReader};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use tungstenite::Message;

mod support;

/// When each reply arrived, by the message ID it answers.
type Arrivals = Arc<Mutex<HashMap<u64, Instant>>>;

/// The platform: answers `/gateway/bot` and records each reply's arrival.
fn platform(gateway_port: u16, arrivals: Arrivals) -> u16 {
    support::http_server(move |line, body| {
        let now = Instant::now();
        if line.contains("/gateway/bot") {
            return json!({ "url": format!("ws://127.0.0.1:{gateway_port}"), "shards": 1,
                    "session_start_limit": { "total": 1000, "remaining": 1000, "reset_after": 0, "max_concurrency": 1 } })
            .to_string();
        }
        let body: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
        if let Some(id) = body["content"].as_str().and_then(|c| c.strip_prefix("echo ")) {
            arrivals.lock().unwrap().insert(id.parse().unwrap_or(0), now);
        }
        "{}".to_string()
    })
}

/// The Gateway: HELLO, READY and GUILD_CREATE, ACKs, then the dispatches
/// the bench hands it, each stamped when written.
/// Dispatches to write (message ID and text), and the pace to write them at.
type Batch = (Vec<(u64, String)>, Option<Duration>);

fn gateway(batches: mpsc::Receiver<Batch>, sent: Arrivals) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        stream.set_nodelay(true).unwrap();
        let mut ws = tungstenite::accept(stream).unwrap();
        ws.send(Message::text(json!({ "op": 10, "d": { "heartbeat_interval": 41_250 } }).to_string())).unwrap();
        loop {
            let m: serde_json::Value = match ws.read().unwrap() {
                Message::Text(t) => serde_json::from_str(t.as_str()).unwrap_or_default(),
                _ => continue,
            };
            if m["op"] == 2 {
                break;
            }
        }
        let ready = json!({ "op": 0, "t": "READY", "s": 1, "d": { "session_id": "s", "resume_gateway_url": format!("ws://127.0.0.1:{port}"),
            "user": { "id": "999", "username": "bot" }, "guilds": [{ "id": "777" }] } });
        let guild = json!({ "op": 0, "t": "GUILD_CREATE", "s": 2, "d": { "id": "777", "name": "Bench", "member_count": 5,
            "channels": [{ "id": "888", "name": "general" }] } });
        ws.send(Message::text(ready.to_string())).unwrap();
        ws.send(Message::text(guild.to_string())).unwrap();
        ws.get_ref().set_nonblocking(true).unwrap();
        // Heartbeats and whatever else the client sends: ACK them.
        let service = |ws: &mut tungstenite::WebSocket<std::net::TcpStream>| {
            while let Ok(m) = ws.read() {
                if let Message::Text(t) = m {
                    if t.as_str().contains("\"op\":1") {
                        let _ = ws.write(Message::text(json!({ "op": 11 }).to_string()));
                    }
                }
            }
            let _ = ws.flush();
        };
        loop {
            let (batch, pace) = match batches.recv_timeout(Duration::from_millis(20)) {
                Ok(b) => b,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    service(&mut ws);
                    continue;
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => return,
            };
            let started = Instant::now();
            for (i, (id, text)) in batch.into_iter().enumerate() {
                if let Some(pace) = pace {
                    let due = started + pace * i as u32;
                    // Sleeping, not spinning: the load generator must not
                    // take a core from the server on this 2-core machine.
                    let now = Instant::now();
                    if due > now {
                        std::thread::sleep(due - now);
                    }
                }
                sent.lock().unwrap().insert(id, Instant::now());
                // A full socket buffer queues the message for the next flush.
                match ws.write(Message::text(text)) {
                    Ok(()) => {}
                    Err(tungstenite::Error::Io(e)) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                    Err(e) => panic!("the Gateway could not write: {e}"),
                }
                let _ = ws.flush();
                if i % 64 == 0 {
                    service(&mut ws);
                }
            }
            service(&mut ws);
        }
    });
    port
}

/// A burst the run queue holds (4,096): beyond it the Gateway's reader
/// waits, then drops events, which a rate should not count.
const BURST: usize = 4000;

fn dispatch(seq: u64, id: u64) -> String {
    json!({ "op": 0, "t": "MESSAGE_CREATE", "s": seq, "d": {
        "id": id.to_string(), "channel_id": "888", "guild_id": "777", "content": "hello",
        "author": { "id": "1001", "username": "ada" } } })
    .to_string()
}

fn main() {
    let arrivals: Arrivals = Arc::default();
    let sent: Arrivals = Arc::default();
    let (batches, rx) = mpsc::channel();
    let gateway_port = gateway(rx, sent.clone());
    let platform_port = platform(gateway_port, arrivals.clone());
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bench_gateway");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("bot.blk"), "event message_create {\n    reply \"echo {message_id}\"\n}\n").unwrap();
    let mut child = Command::new(support::binary())
        .args(["serve", "bot.blk", "--global-rate-limit", "1000000", "--log-format", "json", "--platform"])
        .arg(format!("http://127.0.0.1:{platform_port}/api"))
        .env("BLKC_BOT_TOKEN", "bench-token-0123456789")
        .current_dir(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start blkc serve");
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if std::env::var_os("BLKC_BENCH_LOG").is_some() && !line.contains("\"INFO\"") {
                eprintln!("{line}");
            }
        }
    });
    let mut seq = 3;
    let mut next_id = 1u64;
    let mut batch = |n: usize| -> Vec<(u64, String)> {
        (0..n)
            .map(|_| {
                let (s, id) = (seq, next_id);
                seq += 1;
                next_id += 1;
                (id, dispatch(s, id))
            })
            .collect()
    };
    let wait_for = |first: u64, n: usize| -> Vec<Duration> {
        let until = Instant::now() + Duration::from_secs(120);
        loop {
            let got = { arrivals.lock().unwrap().keys().filter(|id| **id >= first && **id < first + n as u64).count() };
            if got == n || Instant::now() > until {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let (a, s) = (arrivals.lock().unwrap(), sent.lock().unwrap());
        (first..first + n as u64).filter_map(|id| Some(a.get(&id)?.duration_since(*s.get(&id)?))).collect()
    };
    // Warm up, until a warm-up's replies all arrive (the first may meet a
    // shard still identifying).
    let (warm_size, paced_size, burst_size) =
        (support::sized(2000, 20), support::sized(10_000, 50), support::sized(BURST, 50));
    for attempt in 1..=3 {
        let warm = batch(warm_size);
        let first = warm[0].0;
        // Paced: written at once, a burst overflows the run queue (see the burst below).
        batches.send((warm, Some(Duration::from_micros(500)))).unwrap();
        let got = wait_for(first, warm_size).len();
        if got == warm_size {
            break;
        }
        assert!(attempt < 3, "no warm-up's replies all arrived (the last: {got} of {warm_size})");
    }
    println!("gateway: reply-only message_create events, one blkc serve, Gateway and platform on loopback");
    for round in 1..=support::sized(3, 1) {
        let paced = batch(paced_size);
        let first = paced[0].0;
        batches.send((paced, Some(Duration::from_micros(500)))).unwrap();
        let mut latencies = wait_for(first, paced_size);
        latencies.sort();
        let pick = |p: f64| latencies[((latencies.len() as f64 * p) as usize).min(latencies.len() - 1)];
        println!(
            "  round {round}: at 2,000 dispatches/s: {} of {paced_size} replied, dispatch to reply p50 {:.2} ms, p99 {:.2} ms",
            latencies.len(),
            pick(0.5).as_secs_f64() * 1e3,
            pick(0.99).as_secs_f64() * 1e3
        );
        let burst = batch(burst_size);
        let first = burst[0].0;
        let started = Instant::now();
        batches.send((burst, None)).unwrap();
        let done = wait_for(first, burst_size);
        let took = {
            let a = arrivals.lock().unwrap();
            (first..first + burst_size as u64)
                .filter_map(|id| a.get(&id))
                .max()
                .map_or(started.elapsed(), |t| t.duration_since(started))
        };
        println!(
            "           {burst_size} written at once: {} replied, at {:.0} dispatches/s",
            done.len(),
            done.len() as f64 / took.as_secs_f64()
        );
    }
    let _ = child.kill();
    let _ = child.wait();
}
