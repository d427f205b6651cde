//! The host under attack and under faults (the fourth hardening round):
//! each test drives the real binary against real components on loopback
//! (the test platform, a test Gateway, PostgreSQL, a black-hole proxy, raw
//! sockets) and checks what an operator and a chat user would see.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::serve::{serve, Served};
use crate::support::platform::{command, TestPlatform};
use crate::support::proxy::Proxy;
use crate::support::wait::eventually;

const FAILED: &str = "Sorry, something went wrong running this command. The bot's operator can see what in the log.";

/// A counter and a command that never touches the store.
const COUNTER: &str = "var hits = \"0\"
command hit \"Hit\" {
    save hits = hits + 1
    reply \"{hits}\"
}
command ping \"Ping\" {
    reply \"pong\"
}
";

fn get(url: &str) -> (u16, String) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .into();
    match agent.get(url).call() {
        Ok(mut r) => (r.status().as_u16(), r.body_mut().read_to_string().unwrap_or_default()),
        Err(e) => (0, e.to_string()),
    }
}

/// What the user finally saw of an interaction: the first answer's
/// content, or the edit of a deferred one, or the follow-up that replaced
/// it (a private word: the deferred answer is deleted first).
fn seen_by_user(platform: &TestPlatform, answer: &Value, id: &str) -> String {
    if answer["type"] == 4 {
        return answer["data"]["content"].as_str().unwrap_or_default().to_string();
    }
    let path = format!("itoken-{id}-secretpart");
    let content = |c: &crate::support::platform::Call| c.body["content"].as_str().unwrap_or_default().to_string();
    let calls = platform.wait_for(&path, 1);
    if let Some(edit) = calls.iter().find(|c| c.method == "PATCH") {
        return content(edit);
    }
    let calls = platform.wait_for(&path, 2);
    calls.iter().find(|c| c.method == "POST").map_or(String::new(), content)
}

/// A command whose one request takes `ms` to be answered (by the API
/// server's `/slow/MS`), then replies `done`.
fn slow_command(ms: u32) -> String {
    format!("command slow \"Slow\" {{\n    api w {{\n        method GET\n        url \"@API@/slow/{ms}\"\n    }}\n    reply \"done\"\n}}\n")
}

/// A command whose request the test API answers only when the test says.
const HELD_COMMAND: &str = "command slow \"Slow\" {\n    api w {\n        method GET\n        url \"@API@/held\"\n    }\n    reply \"done\"\n}\n";

fn healthz(served: &Served) -> (u16, String) {
    get(&format!("{}/healthz", served.url))
}

/// High 1: the network to PostgreSQL is lost after start-up (a proxy takes
/// the bytes and never answers; the kernel sees nothing wrong). Commands
/// that never touch the store are still answered at once, those that do
/// fail in time with the short message, `/healthz` and the log say so, and
/// all comes back when the network does.
#[test]
fn a_store_that_stops_answering_never_silences_the_bot() {
    let Some(pg) = crate::support::postgres::server() else { return };
    let url = pg.store();
    let port: u16 = url.split(':').nth(2).unwrap().split('/').next().unwrap().parse().unwrap();
    let proxy = Proxy::start(port);
    let url = url.replace(&format!(":{port}/"), &format!(":{}/", proxy.port));
    let platform = TestPlatform::start();
    // The first answer goes out 1.5 s in, whatever waits on the store.
    let served = serve(COUNTER, &platform, None, &["--store", &url, "--answer-within", "1.5"], &[]);
    assert_eq!(served.send(&platform, &command("h1", "hit", json!([]))).body["data"]["content"], "1");
    assert_eq!(healthz(&served).0, 200);

    proxy.swallow(true);
    let ping = served.send(&platform, &command("p1", "ping", json!([])));
    assert_eq!(ping.body["data"]["content"], "pong", "{ping:?}\n{}", served.log());
    assert!(ping.took < Duration::from_millis(2_900), "the first answer waited on the store: {:?}", ping.took);
    let hit = served.send(&platform, &command("h2", "hit", json!([])));
    assert!(hit.took < Duration::from_millis(2_900), "{:?}", hit.took);
    assert_eq!(seen_by_user(&platform, &hit.body, "h2"), FAILED, "{}", served.log());
    assert!(eventually(15, || healthz(&served).0 == 503), "{:?}", healthz(&served));
    assert!(healthz(&served).1.contains("store unreachable"), "{:?}", healthz(&served));
    let log = served.wait_log("the store does not answer");
    assert!(log.contains("the store does not answer"), "{log}");
    // Known down: a command that saves fails at once rather than waiting.
    let fast = served.send(&platform, &command("h3", "hit", json!([])));
    eprintln!(
        "store black hole: ping answered in {:?}, a save's first answer in {:?}, then failed at once in {:?}",
        ping.took, hit.took, fast.took
    );
    // Its first answer says so: it did not wait past the answer's time.
    assert_eq!(fast.body["data"]["content"].as_str(), Some(FAILED), "{fast:?}");
    let ping = served.send(&platform, &command("p2", "ping", json!([])));
    assert_eq!(ping.body["data"]["content"], "pong");

    proxy.swallow(false);
    assert!(eventually(20, || healthz(&served).0 == 200), "{:?}\n{}", healthz(&served), served.log());
    served.wait_log("the store answers again");
    let again = served.send(&platform, &command("h4", "hit", json!([])));
    assert_eq!(again.body["data"]["content"], "2", "{again:?}\n{}", served.log());
}

/// The resident memory of process `pid`, in MiB.
fn rss_mib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let kb: u64 = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    kb / 1024
}

/// A TCP connection to `to` from the loopback address `from` (an attacker
/// with an address of its own: 127.0.0.2 is this machine too).
fn connect_from(from: &str, to: &str) -> Option<std::net::TcpStream> {
    use socket2::{Domain, Socket, Type};
    let socket = Socket::new(Domain::IPV4, Type::STREAM, None).ok()?;
    socket.bind(&format!("{from}:0").parse::<std::net::SocketAddr>().ok()?.into()).ok()?;
    socket.connect_timeout(&to.parse::<std::net::SocketAddr>().ok()?.into(), Duration::from_secs(2)).ok()?;
    Some(socket.into())
}

fn address(served: &Served) -> String {
    served.url.trim_start_matches("http://").to_string()
}

/// High 2: unsigned bodies just under the size cap, each held open by its
/// last byte, from many connections at once. Their memory is bounded in
/// total (the server says busy past it), a signed interaction is still
/// answered meanwhile, and the memory goes back once they close.
#[test]
fn unsigned_bodies_held_open_cannot_exhaust_memory() {
    use std::io::Write as _;
    let platform = TestPlatform::start();
    let served = serve(COUNTER, &platform, None, &["--store", "vars.sqlite3"], &[]);
    let pid = served.child.id();
    let before = rss_mib(pid);
    let to = address(&served);
    let body = vec![b'x'; 1024 * 1024 - 1];
    let mut held = Vec::new();
    for i in 0..300 {
        // Spread over addresses, as a botnet would (one address holds half the cap).
        let Some(mut stream) = connect_from(&format!("127.0.1.{}", 1 + i % 50), &to) else { continue };
        let _ = stream.set_write_timeout(Some(Duration::from_secs(2)));
        let head = format!(
            "POST /interactions HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\nX-Signature-Ed25519: {}\r\nX-Signature-Timestamp: 1\r\n\r\n",
            1024 * 1024,
            "00".repeat(64)
        );
        let _ = stream.write_all(head.as_bytes());
        let _ = stream.write_all(&body);
        held.push(stream);
    }
    // Every body is either being read (held within the budget) or refused
    // as over it: then the server holds all it ever will of them.
    let sent = held.len() as f64;
    let settled = || {
        let reading = served.metric("blkc_request_bodies").unwrap_or(0.0);
        let refused = served.metric("blkc_interactions_total{outcome=\"bodies_full\"}").unwrap_or(0.0);
        reading + refused >= sent
    };
    assert!(crate::support::wait::eventually(30, settled), "{}", served.log());
    let during = rss_mib(pid);
    let held_bytes = served.metric("blkc_request_body_bytes").unwrap_or(0.0);
    assert!(held_bytes <= 47.0 * 1024.0 * 1024.0, "{held_bytes} bytes of bodies held, over the budget");
    let ping = served.send(&platform, &command("p1", "ping", json!([])));
    assert_eq!(ping.body["data"]["content"], "pong", "{ping:?}");
    drop(held);
    // Their room is given back once they close.
    let released = || served.metric("blkc_request_bodies") == Some(0.0);
    assert!(crate::support::wait::eventually(30, released), "{}", served.log());
    let after = rss_mib(pid);
    eprintln!("unsigned bodies: {before} MiB before, {during} MiB with 300 held, {after} MiB after");
    // 300 bodies of 1 MiB held would be 300 MiB; the budget is 47 MiB.
    assert!(during < before + 120, "{before} MiB before, {during} MiB with 300 bodies held");
    let metrics = get(&format!("{}/metrics", served.url)).1;
    assert!(metrics.contains("blkc_interactions_total{outcome=\"bodies_full\"}"), "{metrics}");
}

/// High 3 and medium 10: a low open-file limit (a shell's 1,024, or
/// systemd's) and idle connections that send nothing, from one address,
/// opened again as they are closed. The soft limit is raised, the
/// connections are capped by what is left for the runs, a silent
/// connection soon gives its place back, one address cannot hold them
/// all: every signed interaction is answered and every deferred edit
/// reaches the platform, and is counted as delivered only then.
#[test]
fn idle_connections_and_a_low_open_file_limit_cannot_starve_answers() {
    let platform = TestPlatform::start();
    let api = crate::support::server::TestServer::start();
    // The API answers only once the test has every first answer: those
    // are "thinking" whatever the machine's load, and each came while its
    // run was still waiting.
    let program = HELD_COMMAND;
    let args = &["--workers", "8", "--answer-within", "1"];
    // The soft limit is raised to the hard one at start.
    let raised = crate::serve::serve_with_files(program, &platform, Some(&api), args, &[], Some((256, 2048)));
    assert!(raised.wait_log("open_files=").contains("open_files=2048"), "{}", raised.log());
    drop(raised);
    let served = crate::serve::serve_with_files(program, &platform, Some(&api), args, &[], Some((400, 400)));
    let log = served.wait_log("fewer connections");
    assert!(log.contains("max_connections=208") && log.contains("fewer connections than --max-connections"), "{log}");
    let to = address(&served);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let opened = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let (s, t, o) = (stop.clone(), to.clone(), opened.clone());
    let attacker = std::thread::spawn(move || {
        let mut idle: Vec<std::net::TcpStream> = Vec::new();
        while !s.load(std::sync::atomic::Ordering::SeqCst) {
            idle.retain(|c| {
                let mut byte = [0u8; 1];
                let _ = c.set_nonblocking(true);
                !matches!(std::io::Read::read(&mut &*c, &mut byte), Ok(0))
            });
            while idle.len() < 600 {
                match connect_from("127.0.0.2", &t) {
                    Some(c) => {
                        idle.push(c);
                        o.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    }
                    None => break,
                }
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    });
    // The attacker has opened its 600 idle connections (the door holds at
    // most its cap of them, evicting the longest idle).
    let attacking = || opened.load(std::sync::atomic::Ordering::SeqCst) >= 600;
    assert!(crate::support::wait::eventually(30, attacking), "{}", served.log());
    let sends: Vec<_> = (0..20)
        .map(|i| {
            let (url, bytes) =
                (served.interactions(), serde_json::to_vec(&command(&format!("s{i}"), "slow", json!([]))).unwrap());
            let signature = platform.sign(&bytes, 0);
            std::thread::spawn(move || crate::support::platform::post(&url, &bytes, Some(signature)))
        })
        .collect();
    let answers: Vec<_> = sends.into_iter().map(|h| h.join().unwrap()).collect();
    let slowest = answers.iter().map(|a| a.took).max().unwrap_or_default();
    eprintln!("600 idle connections, open files 400: 20 first answers, the slowest in {slowest:?}");
    for a in &answers {
        assert_eq!((a.status, a.body.clone()), (200, json!({ "type": 5 })), "{}", served.log());
        // The platform's own deadline, with 1.9 s to spare past the server's.
        assert!(a.took < Duration::from_millis(2_900), "{:?}", a.took);
    }
    api.open();
    let edits = platform.wait_for("/messages/@original", 20);
    assert_eq!(edits.len(), 20, "{}", served.log());
    assert!(edits.iter().all(|e| e.body["content"] == "done"));
    // A silent connection gives its place back 3 s after it opened.
    let silent = "blkc_connections_refused_total{why=\"silent\"}";
    let until = std::time::Instant::now() + Duration::from_secs(20);
    let mut metrics = get(&format!("{}/metrics", served.url)).1;
    while !metrics.contains(silent) && std::time::Instant::now() < until {
        std::thread::sleep(Duration::from_millis(100));
        metrics = get(&format!("{}/metrics", served.url)).1;
    }
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let _ = attacker.join();
    assert!(metrics.contains(silent), "{metrics}");
    assert!(metrics.contains("blkc_interactions_total{outcome=\"deferred\"} 20"), "{metrics}");
    assert!(metrics.contains("blkc_connections_refused_total{why=\"address\"}"), "{metrics}");
}

/// Low 14: while draining, the listener stays open: `/healthz` and new
/// interactions are answered 503; a drain shorter than an answer takes
/// still lets the exchange in flight give its first answer.
#[test]
fn a_drain_answers_503_and_leaves_no_exchange_unanswered() {
    let platform = TestPlatform::start();
    let api = crate::support::server::TestServer::start();
    let program = &slow_command(4000);
    let served = serve(program, &platform, Some(&api), &["--drain-timeout", "0.1", "--answer-within", "1"], &[]);
    assert!(served.wait_log("--drain-timeout is shorter").contains("--drain-timeout is shorter"));
    let (url, bytes) = (served.interactions(), serde_json::to_vec(&command("d1", "slow", json!([]))).unwrap());
    let signature = platform.sign(&bytes, 0);
    let in_flight = std::thread::spawn(move || crate::support::platform::try_post(&url, &bytes, Some(signature)));
    while api.received().is_empty() {
        std::thread::sleep(Duration::from_millis(10));
    }
    served.signal(libc::SIGTERM);
    served.wait_log("draining");
    assert_eq!(healthz(&served).0, 503);
    let late = served.send(&platform, &command("d2", "slow", json!([])));
    assert_eq!(late.status, 503);
    let answer = in_flight.join().unwrap().expect("the exchange in flight is answered");
    assert_eq!((answer.status, answer.body), (200, json!({ "type": 5 })));
}

// ── the Gateway ──────────────────────────────────────────────────────────

use crate::support::gateway::{Control, TestGateway};

const TOKEN: &str = "bot-token-abcdefghijklmnop";

const EVENTS: &str = r#"event message_create {
    reply "seen {message_content}"
}
"#;

fn on_gateway(program: &str, shards: u32, args: &[&str]) -> (TestPlatform, TestGateway, Served) {
    let platform = TestPlatform::start();
    let gateway = TestGateway::start(200);
    platform.set_gateway(gateway.bot_info(shards));
    let served = serve(program, &platform, None, args, &[("BLKC_BOT_TOKEN", TOKEN)]);
    (platform, gateway, served)
}

fn message(channel: &str, id: &str) -> Value {
    json!({ "guild_id": "777", "channel_id": channel, "id": id, "content": "hi", "author": { "id": "1001", "username": "ada" } })
}

/// Low 20: the connection says who it is (an implementation of the
/// platform refuses one that does not, with 4002), and a close's reason
/// reaches the log.
#[test]
fn the_gateway_connection_says_who_it_is_and_a_close_s_reason_is_logged() {
    let (_platform, gateway, served) = on_gateway(EVENTS, 1, &[]);
    gateway.wait_op(2, 1);
    let agents = gateway.user_agents();
    assert!(agents[0].starts_with("DiscordBot (") && agents[0].contains(env!("CARGO_PKG_VERSION")), "{agents:?}");
    gateway.control(Control::Close(4000));
    let log = served.wait_log("reason=test");
    assert!(log.contains("code=4000 reason=test"), "{log}");
}

/// Medium 8: a Gateway that asks for a reconnect (op 7) after every RESUME
/// is not answered with a storm of RESUMEs, each carrying the token.
#[test]
fn a_gateway_asking_to_reconnect_again_and_again_gets_backoff() {
    let (_platform, gateway, served) = on_gateway(EVENTS, 1, &[]);
    gateway.wait_op(2, 1);
    gateway.set_reconnect_always(true);
    gateway.control(Control::Reconnect);
    std::thread::sleep(Duration::from_secs(4));
    let hellos = gateway.sent_op(2).len() + gateway.sent_op(6).len();
    gateway.set_reconnect_always(false);
    assert!((2..=10).contains(&hellos), "{hellos} identifies and resumes in 4 s\n{}", served.log());
}

/// Low 13: a storm of heartbeat requests (op 1) is answered at most once a
/// second, the shard never sleeps inside its send budget, and SIGTERM
/// stops the process at once.
#[test]
fn a_heartbeat_request_storm_neither_deafens_the_shard_nor_delays_the_stop() {
    let (_platform, gateway, mut served) = on_gateway(EVENTS, 1, &[]);
    gateway.wait_op(2, 1);
    let before = gateway.sent_op(1).len();
    gateway.control(Control::Beats(500));
    std::thread::sleep(Duration::from_secs(2));
    let answered = gateway.sent_op(1).len() - before;
    // The regular beats (every 200 ms here), a burst of 5 asked for and
    // then one a second.
    assert!(answered <= 20, "{answered} heartbeats in 2 s");
    assert_eq!(gateway.connections(), 1, "{}", served.log());
    served.signal(libc::SIGTERM);
    let stopping = Instant::now();
    while served.child.try_wait().unwrap().is_none() && stopping.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(stopping.elapsed() < Duration::from_secs(5), "stopped after {:?}", stopping.elapsed());
}

/// Medium 9: a Gateway message larger than any the platform makes is
/// refused before it is held, and a server of a million channels costs the
/// cache what it keeps, not what was sent.
#[test]
fn gateway_messages_and_the_cache_have_a_memory_bound() {
    let (platform, gateway, served) = on_gateway(EVENTS, 1, &[]);
    gateway.wait_op(2, 1);
    let pid = served.child.id();
    let before = rss_mib(pid);
    let huge = format!(
        "{{\"op\":0,\"t\":\"MESSAGE_CREATE\",\"s\":90,\"d\":{{\"content\":\"{}\"}}}}",
        "x".repeat(60 * 1024 * 1024)
    );
    gateway.control(Control::Raw(huge));
    let log = served.wait_log("over the size limit");
    assert!(log.contains("over the size limit"), "{log}");
    let channels: Vec<String> =
        (0..150_000).map(|i| format!("{{\"id\":\"{i}\",\"name\":\"c{i}\",\"x\":[0,0,0]}}")).collect();
    let guild = format!(
        "{{\"op\":0,\"t\":\"GUILD_CREATE\",\"s\":91,\"d\":{{\"id\":\"778\",\"name\":\"Big\",\"member_count\":3,\"channels\":[{}]}}}}",
        channels.join(",")
    );
    assert!(guild.len() < 8 * 1024 * 1024, "{}", guild.len());
    gateway.control(Control::Raw(guild));
    // Still serving: the shard reads in order, so once a message after
    // them has run, both large messages have been read (or refused).
    gateway.dispatch("MESSAGE_CREATE", message("888", "5"));
    assert_eq!(platform.wait_for("/channels/888/messages", 1).len(), 1, "{}", served.log());
    let after = rss_mib(pid);
    eprintln!("gateway messages: {before} MiB before, {after} MiB after a 60 MB message and a GUILD_CREATE of 150,000 channels");
    assert!(after < before + 100, "{before} MiB before, {after} MiB after");
}

/// Low 12: with the run queue full, the shard's reader still reads: its
/// ACKs arrive in time, the connection is not taken for a zombie.
#[test]
fn a_full_run_queue_does_not_block_the_shard_s_reader() {
    let api = crate::support::server::TestServer::start();
    let program = format!(
        "event message_create {{\n    api w {{\n        method GET\n        url \"{}/slow/1500\"\n    }}\n    reply \"done\"\n}}\n",
        api.base()
    );
    let (_platform, gateway, served) = on_gateway(&program, 1, &["--workers", "1", "--queue", "1"]);
    gateway.wait_op(2, 1);
    for i in 0..40 {
        gateway.dispatch("MESSAGE_CREATE", message("888", &format!("m{i}")));
    }
    // Ten heartbeats more, each acknowledged: a reader held by the full
    // queue would miss an ACK, and reconnect.
    let beats = gateway.sent_op(1).len();
    assert!(gateway.wait_op(1, beats + 10).len() >= beats + 10, "{}", served.log());
    assert_eq!(gateway.connections(), 1, "{}", served.log());
    assert!(!served.log().contains("zombie"), "{}", served.log());
}

/// Low 15: an id the platform sent goes into a path with the bot token only
/// if it is a snowflake.
#[test]
fn a_channel_id_that_is_not_a_snowflake_never_becomes_a_route() {
    let (platform, gateway, served) = on_gateway(EVENTS, 1, &[]);
    gateway.wait_op(2, 1);
    gateway.dispatch("MESSAGE_CREATE", message("645/../../../guilds/77/bans/1?x=", "1"));
    gateway.dispatch("MESSAGE_CREATE", message("888", "2"));
    assert_eq!(platform.wait_for("/channels/888/messages", 1).len(), 1, "{}", served.log());
    let calls = platform.calls();
    assert!(calls.iter().all(|c| !c.path.contains("bans") && !c.path.contains("..")), "{calls:?}");
}

/// Low 19: what the platform answers cannot make blkc start 20,000 threads.
#[test]
fn a_platform_asking_for_twenty_thousand_shards_is_refused_with_what_to_do() {
    let platform = TestPlatform::start();
    let gateway = TestGateway::start(200);
    platform.set_gateway(gateway.bot_info(20_000));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bot.blk"), EVENTS).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_blkc"))
        .args(["serve", "bot.blk", "--platform", &platform.api()])
        .env("BLKC_BOT_TOKEN", TOKEN)
        .current_dir(dir.path())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{said}");
    assert!(said.contains("20000 shards") && said.contains("--shard ID/20000"), "{said}");
    assert_eq!(gateway.connections(), 0);
}

// ── what is delivered, what is logged, what is kept ──────────────────────

/// Low 20 and high 3: a message the platform refused (400) is not counted
/// as delivered: the run is logged and counted as failed, with the reason.
#[test]
fn a_message_the_platform_refused_fails_its_run_with_the_reason() {
    let (platform, gateway, served) = on_gateway(EVENTS, 1, &[]);
    gateway.wait_op(2, 1);
    platform.refuse_once("/api/channels/888/messages", 400);
    gateway.dispatch("MESSAGE_CREATE", message("888", "1"));
    // The run's own line (its outcome), not the warning logged before it.
    let log = served.wait_log("outcome=");
    let line = log.lines().find(|l| l.contains(" event ") && l.contains("kind=message_create")).unwrap_or_default();
    assert!(line.contains("outcome=failed") && line.contains("messages=0"), "{log}");
    assert!(line.contains("refused a message (400, code 50035): Invalid Form Body"), "{line}");
    // An interaction whose deferred edit is refused is failed too.
    let api = crate::support::server::TestServer::start();
    let program = &slow_command(1500);
    let served = serve(program, &platform, Some(&api), &["--answer-within", "0.5"], &[]);
    platform.refuse_once("/api/webhooks/4242/itoken-r1-secretpart/messages/@original", 400);
    let answer = served.send(&platform, &command("r1", "slow", json!([])));
    assert_eq!(answer.body, json!({ "type": 5 }));
    let log = served.wait_log("outcome=failed");
    assert!(log.contains("refused a message (400, code 50035)") && !log.contains("outcome=answered"), "{log}");
    let metrics = get(&format!("{}/metrics", served.url)).1;
    assert!(metrics.contains("blkc_interactions_total{outcome=\"failed\"} 1"), "{metrics}");
}

/// Low 16: a value holding blanks cannot forge a field of the text log.
#[test]
fn a_value_with_blanks_cannot_forge_a_log_field() {
    let platform = TestPlatform::start();
    let served = serve(COUNTER, &platform, None, &["--store", "vars.sqlite3"], &[]);
    let mut forged = command("f1", "ping", json!([]));
    forged["guild_id"] = json!("777 outcome=forged user=0");
    let answer = served.send(&platform, &forged);
    assert_eq!(answer.body["data"]["content"], "pong");
    let log = served.wait_log("command=ping");
    let line = log.lines().find(|l| l.contains("command=ping")).unwrap();
    // Read as logfmt: the forged words are inside one quoted value.
    assert!(line.contains(" server=\"777 outcome=forged user=0\" outcome=answered "), "{line}");
    let unquoted: String = line.split('"').step_by(2).collect();
    assert_eq!(unquoted.matches(" outcome=").count(), 1, "{line}");
}

/// Low 18: with the default SQLite store, the same signed bytes do not run
/// again after a restart (they stay valid for 5 minutes).
#[test]
fn the_same_signed_bytes_do_not_run_again_after_a_restart() {
    let platform = TestPlatform::start();
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store.sqlite3");
    let store = store.to_str().unwrap();
    let bytes = serde_json::to_vec(&command("r1", "hit", json!([]))).unwrap();
    let signature = platform.sign(&bytes, 0);
    let first = serve(COUNTER, &platform, None, &["--store", store], &[]);
    let answer = crate::support::platform::post(&first.interactions(), &bytes, Some(signature.clone()));
    assert_eq!(answer.body["data"]["content"], "1");
    // Stopped as a service manager stops it: SIGTERM, then it exits.
    let mut first = first;
    first.signal(libc::SIGTERM);
    let _ = first.child.wait();
    drop(first);
    let second = serve(COUNTER, &platform, None, &["--store", store], &[]);
    let again = crate::support::platform::post(&second.interactions(), &bytes, Some(signature));
    assert_eq!(again.status, 409, "{again:?}");
    let next = second.send(&platform, &command("r2", "hit", json!([])));
    assert_eq!(next.body["data"]["content"], "2");
}

/// High 4: a store row blkc cannot decode (a NULL value in a database that
/// is not blkc's) fails its run with B311 and what is wrong, never the
/// worker: the user is told, later commands are answered; `blkc vars list`
/// says what is wrong (exit 3) rather than panicking.
#[test]
fn a_row_blkc_cannot_decode_fails_its_run_not_the_server() {
    let Some(pg) = crate::support::postgres::server() else { return };
    let url = pg.store();
    let mut admin = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    admin
        .batch_execute(
            "ALTER TABLE blkc_vars ALTER COLUMN value DROP NOT NULL;
             INSERT INTO blkc_vars (name, value, updated_at) VALUES ('hits', NULL, 0);",
        )
        .unwrap();
    let platform = TestPlatform::start();
    let served = serve(COUNTER, &platform, None, &["--store", &url, "--workers", "1"], &[]);
    for id in ["n1", "n2", "n3"] {
        let hit = served.send(&platform, &command(id, "hit", json!([])));
        assert_eq!(hit.body["data"]["content"], FAILED, "{hit:?}\n{}", served.log());
    }
    let ping = served.send(&platform, &command("n4", "ping", json!([])));
    assert_eq!(ping.body["data"]["content"], "pong", "{}", served.log());
    let log = served.log();
    assert!(log.contains("B311") && log.contains("is NULL"), "{log}");
    assert!(!log.contains("panicked"), "{log}");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_blkc"))
        .args(["vars", "--store", &url, "list"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{said}");
    assert!(said.contains("B311") && said.contains("is NULL"), "{said}");
}

/// A Gateway that takes the connection and never answers (no handshake)
/// holds neither the shard nor the stop: SIGTERM ends the process in
/// seconds.
#[test]
fn a_gateway_that_never_answers_does_not_hold_the_stop() {
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let (accepted, connected) = std::sync::mpsc::channel();
    let held = std::thread::spawn(move || {
        silent
            .incoming()
            .flatten()
            .take(4)
            .inspect(|_| {
                let _ = accepted.send(());
            })
            .collect::<Vec<_>>()
    });
    let platform = TestPlatform::start();
    platform.set_gateway(json!({ "url": format!("ws://127.0.0.1:{port}"), "shards": 1,
        "session_start_limit": { "total": 1000, "remaining": 999, "reset_after": 0, "max_concurrency": 1 } }));
    let mut served = serve(EVENTS, &platform, None, &[], &[("BLKC_BOT_TOKEN", TOKEN)]);
    served.wait_log("connecting to the Gateway");
    // The shard's connection is taken, and never answered.
    assert!(connected.recv_timeout(Duration::from_secs(20)).is_ok(), "{}", served.log());
    served.signal(libc::SIGTERM);
    let stopping = Instant::now();
    while served.child.try_wait().unwrap().is_none() && stopping.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(stopping.elapsed() < Duration::from_secs(6), "stopped after {:?}\n{}", stopping.elapsed(), served.log());
    drop(held);
}

/// Issue 48, item 8: idle connections from a few addresses, each within
/// its share, fill `--max-connections`; at capacity the idle ones give way
/// to new connections, and every signed interaction is answered (1–2 of 15
/// were, with 4 addresses holding 150 idle connections each).
#[test]
fn idle_connections_give_way_to_new_ones_at_capacity() {
    use std::io::{Read as _, Write as _};
    let platform = TestPlatform::start();
    let served = crate::serve::serve(
        "command ping \"Ping\" {\n    reply \"pong\"\n}\n",
        &platform,
        None,
        &["--max-connections", "100"],
        &[],
    );
    let to = address(&served);
    // 4 addresses, 25 keep-alive connections each: one request answered,
    // then idle.
    let mut idle = Vec::new();
    for from in ["127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"] {
        for _ in 0..25 {
            let mut c = connect_from(from, &to).expect("a connection from another loopback address");
            c.write_all(b"GET /healthz HTTP/1.1\r\nHost: bot\r\n\r\n").unwrap();
            c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            let mut got = Vec::new();
            let mut buf = [0u8; 512];
            while !got.ends_with(b"ok\n") {
                let n = c.read(&mut buf).unwrap();
                assert!(n > 0, "closed: {}", String::from_utf8_lossy(&got));
                got.extend_from_slice(&buf[..n]);
            }
            idle.push(c);
        }
    }
    let answered = (0..15)
        .filter(|i| {
            let bytes = serde_json::to_vec(&command(&format!("i{i}"), "ping", json!([]))).unwrap();
            let answer =
                crate::support::platform::try_post(&served.interactions(), &bytes, Some(platform.sign(&bytes, 0)));
            answer.is_some_and(|a| a.status == 200 && a.body["data"]["content"] == "pong")
        })
        .count();
    assert_eq!(answered, 15, "{}", served.log());
    eprintln!("100 idle connections from 4 addresses at --max-connections 100: {answered} of 15 interactions answered");
    let metrics = get(&format!("{}/metrics", served.url)).1;
    assert!(metrics.contains("blkc_connections_refused_total{why=\"idle\"}"), "{metrics}");
    drop(idle);
}
