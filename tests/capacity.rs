//! What the front door and the run pool hold: a burst of new connections,
//! processes sharing one port, runs waiting on slow APIs. The real binary,
//! the test platform and an API server, on 127.0.0.1.

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Condvar, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::serve::{serve, Served};
use crate::support::platform::{command, try_post, TestPlatform};

const PING: &str = "command ping \"Ping\" {\n    reply \"pong\"\n}\n";

/// The backlog the kernel gave the listener on `port`, from `ss` (for a
/// listening socket its Send-Q column).
fn listen_backlog(port: u16) -> usize {
    let out = Command::new("ss").args(["-ltnH", &format!("sport = :{port}")]).output();
    let Ok(out) = out else {
        panic!("`ss` (iproute2) is needed to read a listener's backlog; .ci/run installs it");
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().next().unwrap_or_else(|| panic!("no listener on port {port}: {text}"));
    line.split_whitespace().nth(2).and_then(|q| q.parse().ok()).unwrap_or_else(|| panic!("ss said: {line}"))
}

fn port(served: &Served) -> u16 {
    served.url.rsplit(':').next().and_then(|p| p.parse().ok()).expect("a port")
}

/// Posts each interaction on a connection of its own, all at once.
fn burst(served: &Served, platform: &TestPlatform, ids: std::ops::Range<usize>) -> Vec<Option<Value>> {
    let barrier = Arc::new(Barrier::new(ids.len()));
    let threads: Vec<_> = ids
        .map(|i| {
            let bytes = serde_json::to_vec(&command(&format!("{i}"), "ping", json!([]))).unwrap();
            let (signature, url, barrier) = (platform.sign(&bytes, 0), served.interactions(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                try_post(&url, &bytes, Some(signature)).filter(|a| a.status == 200).map(|a| a.body)
            })
        })
        .collect();
    threads.into_iter().map(|t| t.join().unwrap()).collect()
}

fn somaxconn() -> usize {
    let text = std::fs::read_to_string("/proc/sys/net/core/somaxconn").expect("/proc/sys/net/core/somaxconn");
    text.trim().parse().expect("a number")
}

#[test]
fn the_listener_holds_a_burst_as_large_as_the_connection_cap() {
    let platform = TestPlatform::start();
    let served = serve(PING, &platform, None, &["--max-connections", "3000"], &[]);
    // The kernel caps any backlog at net.core.somaxconn; under it, the cap
    // on connections is the backlog (it was 128).
    let expected = 3000.min(somaxconn());
    assert!(expected > 128, "this machine's somaxconn is {expected}");
    assert_eq!(listen_backlog(port(&served)), expected);
    assert!(served.log().contains(&format!("backlog={expected}")), "{}", served.log());
    // 400 interactions, each on a new connection, at once: every one answered.
    let answers = burst(&served, &platform, 0..400);
    let answered = answers.iter().flatten().filter(|a| a["data"]["content"] == "pong").count();
    assert_eq!(answered, 400);
}

/// How many interactions a server's log says it answered.
fn answered(served: &Served) -> usize {
    served.log().matches("outcome=answered").count()
}

/// How many interactions the servers' logs say they answered, once they
/// say `n` or 10 s have passed (a run's log line follows its answer, so a
/// client may have its answer a moment before the line is written).
fn answered_by(servers: &[&Served], n: usize) -> Vec<usize> {
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        let counts: Vec<usize> = servers.iter().map(|s| answered(s)).collect();
        if counts.iter().sum::<usize>() >= n || Instant::now() >= until {
            return counts;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn processes_share_a_port_with_reuse_port_and_one_that_stops_hands_over() {
    let platform = TestPlatform::start();
    let first = serve(PING, &platform, None, &["--reuse-port"], &[]);
    let address = first.url.trim_start_matches("http://").to_string();
    // Without --reuse-port the port is taken, as before.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bot.blk"), PING).unwrap();
    let taken = Command::new(env!("CARGO_BIN_EXE_blkc"))
        .args(["serve", "bot.blk", "--listen", &address])
        .env("BLKC_DISCORD_PUBLIC_KEY", platform.public_key())
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .output()
        .unwrap();
    assert!(!taken.status.success());
    assert!(String::from_utf8_lossy(&taken.stderr).contains("Address already in use"), "{taken:?}");
    let mut second = serve(PING, &platform, None, &["--reuse-port", "--listen", &address], &[]);
    assert_eq!(second.url, first.url);
    // The kernel spreads new connections over both.
    let answers = burst(&first, &platform, 1000..1060);
    assert!(answers.iter().all(|a| a.as_ref().is_some_and(|a| a["data"]["content"] == "pong")));
    let counts = answered_by(&[&first, &second], 60);
    let (a, b) = (counts[0], counts[1]);
    assert_eq!(a + b, 60);
    assert!(a > 0 && b > 0, "the first answered {a}, the second {b}");
    // One stops (a restart, or a scale-down): it stops listening at once,
    // and every new connection goes to the other.
    second.signal(libc::SIGTERM);
    assert_eq!(second.child.wait().unwrap().code(), Some(0));
    assert!(second.log().contains("stopped listening"), "{}", second.log());
    let answers = burst(&first, &platform, 2000..2060);
    assert!(answers.iter().all(|a| a.as_ref().is_some_and(|a| a["data"]["content"] == "pong")), "{answers:?}");
    assert_eq!(answered_by(&[&first], a + 60), [a + 60]);
}

/// An API that holds every request until opened: a thread per connection
/// (the test server's pool of threads would itself cap how many wait).
struct HeldApi {
    port: u16,
    waiting: Arc<AtomicUsize>,
    open: Arc<(Mutex<bool>, Condvar)>,
}

impl HeldApi {
    fn start() -> HeldApi {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let (waiting, open) = (Arc::new(AtomicUsize::new(0)), Arc::new((Mutex::new(false), Condvar::new())));
        let (w, o) = (waiting.clone(), open.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().map_while(Result::ok) {
                let (w, o) = (w.clone(), o.clone());
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream.try_clone().unwrap());
                    let mut line = String::new();
                    while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                        line.clear();
                    }
                    w.fetch_add(1, Ordering::SeqCst);
                    let (gate, opened) = &*o;
                    drop(opened.wait_while(gate.lock().unwrap(), |open| !*open).unwrap());
                    let body = "{\"held\":true}";
                    let mut stream = stream;
                    let _ = write!(stream, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
                });
            }
        });
        HeldApi { port, waiting, open }
    }

    fn waiting(&self) -> usize {
        self.waiting.load(Ordering::SeqCst)
    }

    fn open(&self) {
        *self.open.0.lock().unwrap() = true;
        self.open.1.notify_all();
    }
}

/// Programs at the lowest priority that keep every core busy while they
/// live, as a build or a backup beside the bot would.
struct BusyLoops(Vec<std::process::Child>);

impl BusyLoops {
    fn start() -> BusyLoops {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        let spawn = |_| {
            Command::new("nice")
                .args(["-n", "19", "sh", "-c", "while :; do :; done"])
                .stdin(Stdio::null())
                .spawn()
                .expect("nice and sh")
        };
        BusyLoops((0..cores).map(spawn).collect())
    }
}

impl Drop for BusyLoops {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[test]
fn runs_waiting_on_a_slow_api_get_threads_of_their_own_up_to_workers() {
    runs_waiting_get_threads(None);
}

/// Issue 48, item 9: the pool once refused to grow while the machine had
/// little idle CPU, even CPU taken by programs at the lowest priority.
#[test]
fn runs_waiting_on_a_slow_api_get_threads_beside_busy_programs() {
    runs_waiting_get_threads(Some(BusyLoops::start()));
}

fn runs_waiting_get_threads(_busy: Option<BusyLoops>) {
    let platform = TestPlatform::start();
    let api = HeldApi::start();
    let program = format!(
        "command slow \"Slow\" {{\n    api w {{\n        method GET\n        url \"http://127.0.0.1:{}/held\"\n    }}\n    reply \"done\"\n}}\n",
        api.port
    );
    let args = ["--workers", "12", "--answer-within", "0.5"];
    let served = Arc::new(serve(&program, &platform, None, &args, &[]));
    // The pool starts with a thread a core; twenty runs that each wait on
    // the API get threads until `--workers` runs wait at once.
    let pending: Vec<_> = (0..20)
        .map(|i| {
            let bytes = serde_json::to_vec(&command(&format!("s{i}"), "slow", json!([]))).unwrap();
            let (signature, url) = (platform.sign(&bytes, 0), served.interactions());
            std::thread::spawn(move || try_post(&url, &bytes, Some(signature)))
        })
        .collect();
    let until = Instant::now() + Duration::from_secs(20);
    while api.waiting() < 12 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(api.waiting(), 12, "runs waiting on the API at once");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(api.waiting(), 12, "never more than --workers");
    let until = Instant::now() + Duration::from_secs(5);
    while served.metric("blkc_workers") != Some(12.0) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(served.metric("blkc_workers"), Some(12.0));
    for answer in pending {
        assert_eq!(answer.join().unwrap().map(|a| a.body), Some(json!({ "type": 5 })));
    }
    api.open();
    assert_eq!(platform.wait_for("/messages/@original", 20).len(), 20);
}
