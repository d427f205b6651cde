//! The store under load: read-then-save runs (`save n = n + 1`, the
//! runner's own transaction) on SQLite and on PostgreSQL (loopback, started
//! by the bench from this machine's binaries), with 1, 8 and 32 runs at
//! once: saves a second and the p50 and p99 of a run. Then two `blkc serve`
//! processes sharing PostgreSQL, answering signed interactions that
//! increment one counter: interactions a second, and the count checked.
//!
//! Run with `cargo bench --bench store`; `BLKC_BENCH_BIN=/path/to/blkc`
//! runs another build's `blkc serve` for the two servers.

#[path = "../tests/support/postgres.rs"]
mod postgres_server;
mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use blkc::base::source::SourceFile;
use blkc::run::eval::{self, Inputs, Options};
use blkc::run::store::{Backend, Location};

fn plan() -> blkc::language::plan::Plan {
    let checked = blkc::language::load::check_source(SourceFile::new(
        "bench.blk",
        "var n = \"0\"\ncommand add {\n    save n = n + 1\n}\n",
    ));
    blkc::language::plan::lower(&checked).expect("the bench's file lowers")
}

/// Runs `add` on `threads` threads for a few seconds; saves a second and
/// the run latencies, sorted.
fn measure(backend: &Backend, threads: usize) -> (f64, Vec<Duration>) {
    let plan = Arc::new(plan());
    let started = Instant::now();
    let until = started + Duration::from_secs_f64(seconds());
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let (backend, plan) = (backend.clone(), plan.clone());
            std::thread::spawn(move || {
                let tree = &plan.trees[0];
                let (inputs, options) = (Inputs::default(), Options::default());
                let mut latencies = Vec::new();
                while Instant::now() < until {
                    let t = Instant::now();
                    let mut store = backend.run_store();
                    eval::run(&plan, tree, &inputs, &options, store.as_mut(), &mut |_| {}).expect("a save");
                    latencies.push(t.elapsed());
                }
                latencies
            })
        })
        .collect();
    let mut all: Vec<Duration> = handles.into_iter().flat_map(|h| h.join().unwrap()).collect();
    all.sort();
    (all.len() as f64 / started.elapsed().as_secs_f64(), all)
}

/// How long each configuration runs.
fn seconds() -> f64 {
    support::sized(3.0, 0.2)
}

fn pick(sorted: &[Duration], p: f64) -> f64 {
    sorted[((sorted.len() as f64 * p) as usize).min(sorted.len() - 1)].as_secs_f64() * 1e3
}

fn main() {
    // `cargo bench --bench store -- answers`: members' messages read for
    // an `await`'s answer alone.
    if std::env::args().any(|a| a == "answers") {
        let dir = tempfile::tempdir().unwrap();
        answers(&Backend::open(&Location::Sqlite(dir.path().join("store.sqlite3"))).unwrap(), "SQLite");
        match postgres_server::server() {
            Some(pg) => answers(&Backend::open(&Location::Postgres(pg.store())).unwrap(), "PostgreSQL"),
            None => support::missing("store: PostgreSQL is not installed; SQLite alone"),
        }
        return;
    }
    // `cargo bench --bench store -- global`: the global rate limit alone.
    if std::env::args().any(|a| a == "global") {
        match postgres_server::server() {
            Some(pg) => global_limit(&pg.store()),
            None => support::missing("store: PostgreSQL is not installed"),
        }
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut backends = vec![("SQLite", Backend::open(&Location::Sqlite(dir.path().join("store.sqlite3"))).unwrap())];
    let pg = postgres_server::server();
    let url = pg.map(|pg| pg.store());
    if let Some(url) = &url {
        backends.push(("PostgreSQL", Backend::open(&Location::Postgres(url.clone())).unwrap()));
    } else {
        support::missing("store: PostgreSQL is not installed; SQLite alone");
    }
    println!("store: read-then-save runs (`save n = n + 1`), {} s each, alternating backends", seconds());
    let mut expected = std::collections::HashMap::new();
    for threads in [1, 8, 32] {
        for (name, backend) in &backends {
            let (rate, latencies) = measure(backend, threads);
            *expected.entry(*name).or_insert(0usize) += latencies.len();
            println!(
                "  {name:<10} {threads:>2} at once: {rate:>7.0} saves/s   p50 {:>6.2} ms   p99 {:>6.2} ms",
                pick(&latencies, 0.5),
                pick(&latencies, 0.99)
            );
        }
    }
    // Every save landed: the counter is the number of runs.
    for (name, backend) in &backends {
        let mut store = backend.run_store();
        let n = store.get("n").unwrap().unwrap_or_default();
        let n: usize = n.to_string().trim_matches('"').parse().unwrap_or(0);
        assert_eq!(n, expected[name], "{name}: {n} of {} saves kept", expected[name]);
    }
    println!("  every save kept on both");
    if let Some(url) = &url {
        two_servers(dir.path(), url);
        global_limit(url);
    }
}

/// The platform's global rate limit, shared by processes through the
/// store: two `blkc serve` processes each answer interactions whose runs
/// send one bot-token request to a loopback platform, as fast as their
/// limiters let them. What the platform sees, sharing through PostgreSQL
/// (alternating with two processes that each keep the whole limit, as
/// SQLite stores do): requests a second, and the most in any one second.
fn global_limit(url: &str) {
    let each = support::sized(250, 10);
    let (port, arrivals) = support::recording_json_server();
    let key = support::key();
    let program = format!(
        "platform \"http://127.0.0.1:{port}\"\ncommand hit \"Hit\" {{\n    option word \"Word\"\n    api call {{\n        method GET\n        url \"http://127.0.0.1:{port}/item/1\"\n        headers {{ Authorization = \"Bot {{bot_token}}\" }}\n    }}\n    reply \"ok\"\n}}\n"
    );
    let platform = format!("http://127.0.0.1:{port}");
    println!("global rate limit (50 a second), two processes, {each} interactions each with one platform request:");
    let mut next_id = 1_000_000;
    for round in 1..=support::sized(2, 1) {
        for shared in [true, false] {
            let dirs: Vec<tempfile::TempDir> = (0..2).map(|_| tempfile::tempdir().unwrap()).collect();
            let servers: Vec<(std::process::Child, String)> = dirs
                .iter()
                .map(|d| {
                    std::fs::write(d.path().join("hit.blk"), &program).unwrap();
                    let mut args = vec!["--platform", platform.as_str()];
                    if shared {
                        args.extend(["--store", url]);
                    }
                    start_server(d.path(), "hit.blk", &args, &key)
                })
                .collect();
            // Both have checked in and see each other.
            std::thread::sleep(Duration::from_millis(1200));
            let mut phases = vec![("both loaded", vec![0, 1])];
            if shared {
                phases.push(("one loaded, both up", vec![0]));
            }
            for (phase, loaded) in phases {
                arrivals.lock().unwrap().clear();
                let loads: Vec<_> = loaded
                    .iter()
                    .map(|s: &usize| {
                        let requests: Vec<Vec<u8>> =
                            (0..each).map(|i| support::signed(&key, next_id + s * each + i, "hit", "w")).collect();
                        let address = servers[*s].1.clone();
                        std::thread::spawn(move || support::load(&address, requests, 16))
                    })
                    .collect();
                next_id += 2 * each;
                for l in loads {
                    assert_eq!(l.join().unwrap().failures, 0, "interactions not answered");
                }
                let mut times = arrivals.lock().unwrap().clone();
                times.sort();
                let span = times.last().unwrap().duration_since(times[0]).as_secs_f64();
                // The most requests within any one second.
                let (mut most, mut start) = (0, 0);
                for end in 0..times.len() {
                    while times[end].duration_since(times[start]) >= Duration::from_secs(1) {
                        start += 1;
                    }
                    most = most.max(end - start + 1);
                }
                let how = if shared { "shared through PostgreSQL" } else { "each its own limit" };
                println!(
                    "  round {round}, {how:<26} {phase:<20}: {:>5.1} requests/s at the platform, at most {most:>3} in one second ({} requests)",
                    (times.len() - 1) as f64 / span,
                    times.len()
                );
            }
            for (mut child, _) in servers {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }
}

/// `blkc serve FILE ARGS` in `dir`, taking interactions signed with `key`;
/// the server and the address it listens on.
fn start_server(
    dir: &std::path::Path,
    file: &str,
    args: &[&str],
    key: &ed25519_dalek::SigningKey,
) -> (std::process::Child, String) {
    use std::io::BufRead as _;
    let mut child = std::process::Command::new(support::binary())
        .args(["serve", file, "--listen", "127.0.0.1:0", "--log-format", "json"])
        .args(args)
        .env("BLKC_DISCORD_PUBLIC_KEY", hex::encode(key.verifying_key().to_bytes()))
        .env("BLKC_BOT_TOKEN", "bench-token-0123456789")
        .current_dir(dir)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start blkc serve");
    let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let first: serde_json::Value =
        serde_json::from_str(&lines.next().and_then(Result::ok).unwrap_or_default()).unwrap_or_default();
    // The log is read (and dropped, but for failed runs, which are shown).
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            if line.contains("\"outcome\":\"failed\"") {
                eprintln!("  a run failed: {line}");
            }
        }
    });
    (child, first["listen"].as_str().expect("a listening server").to_string())
}

/// Two `blkc serve` processes sharing the PostgreSQL store, 32 keep-alive
/// clients each, answering signed interactions that increment one
/// per-server counter; the count is checked.
fn two_servers(dir: &std::path::Path, url: &str) {
    let each = support::sized(4000, 20);
    let key = support::key();
    std::fs::write(
        dir.join("hit.blk"),
        "var hits per server = \"0\"\ncommand hit \"Hit\" {\n    option word \"Word\"\n    save hits = hits + 1\n    reply \"{hits}\"\n}\n",
    )
    .unwrap();
    let servers: Vec<(std::process::Child, String)> =
        (0..2).map(|_| start_server(dir, "hit.blk", &["--store", url], &key)).collect();
    let started = Instant::now();
    let loads: Vec<_> = servers
        .iter()
        .enumerate()
        .map(|(s, (_, address))| {
            let requests: Vec<Vec<u8>> =
                (0..each).map(|i| support::signed(&key, s * each + i + 1, "hit", "w")).collect();
            let address = address.clone();
            std::thread::spawn(move || support::load(&address, requests, 32))
        })
        .collect();
    let (mut latencies, mut notices, mut deferred) = (Vec::new(), 0, 0);
    for l in loads {
        let l = l.join().unwrap();
        assert_eq!(l.failures, 0, "interactions not answered");
        latencies.extend(l.latencies);
        notices += l.notices;
        deferred += l.deferred;
    }
    let took = started.elapsed();
    latencies.sort();
    let backend = Backend::open(&Location::Postgres(url.to_string())).unwrap();
    let count = || backend.run_store().get("hits:server:777").unwrap().map(|v| v.to_string()).unwrap_or_default();
    // A run answered "thinking" is still going when its answer comes:
    // its save is waited for (a few seconds at most).
    let expected = (2 * each - notices).to_string();
    let settle = Instant::now() + std::time::Duration::from_secs(10);
    let mut counted = count();
    while deferred > 0 && counted != expected && Instant::now() < settle {
        std::thread::sleep(std::time::Duration::from_millis(100));
        counted = count();
    }
    println!(
        "  two servers sharing PostgreSQL, 64 clients: {:.0} interactions/s (each a read-then-save), p50 {:.2} ms, p99 {:.2} ms; the counter reads {counted} of {}; {notices} told their user the run failed, {deferred} answered \"thinking\" first",
        latencies.len() as f64 / took.as_secs_f64(),
        support::percentile(&latencies, 0.5).as_secs_f64() * 1e3,
        support::percentile(&latencies, 0.99).as_secs_f64() * 1e3,
        2 * each
    );
    // Every save a user was told of landed, and no other.
    assert_eq!(counted, expected);
    for (mut child, _) in servers {
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// What `blkc serve`'s thread of waiting work spends on each member's
/// message when the file has an `await` (`Host::take_answer`, one
/// statement): messages a second read against a store holding 1,000
/// waits of other members, none of them the message's (the common case),
/// then 1,000 messages each answering its member's wait.
fn answers(backend: &Backend, name: &str) {
    use blkc::run::store::later::{answer_key, Later};
    let wait = |user: usize, due_ms: i64| Later {
        id: format!("w{user}"),
        owner: format!("user:9:{user}"),
        key: answer_key("4242"),
        due_ms,
        tree: "quiz#t".into(),
        note: String::new(),
        vars: serde_json::json!({ "~answer": "quiz#a", "~as": "guess" }),
    };
    for user in 0..1_000 {
        backend.run_store().wait_later(&wait(user, i64::MAX / 2)).unwrap().unwrap();
    }
    let until = Instant::now() + Duration::from_secs_f64(seconds());
    let (mut read, started) = (0u64, Instant::now());
    while Instant::now() < until {
        let owner = format!("user:9:{}", 100_000 + read);
        assert!(backend.take_answer((&owner, &answer_key("4242")), "42", 1, (30_001, "bench")).unwrap().is_none());
        read += 1;
    }
    let none = read as f64 / started.elapsed().as_secs_f64();
    let started = Instant::now();
    for user in 0..1_000 {
        let owner = format!("user:9:{user}");
        assert!(backend.take_answer((&owner, &answer_key("4242")), "42", 1, (30_001, "bench")).unwrap().is_some());
    }
    let answered = 1_000.0 / started.elapsed().as_secs_f64();
    println!(
        "answers ({name}): {none:>7.0} messages/s answering no wait, {answered:>7.0}/s each taking its member's wait"
    );
}
