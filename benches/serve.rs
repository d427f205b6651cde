//! `blkc serve` under load: signed interactions from a load generator on
//! loopback (64 keep-alive clients), for a command with no request block
//! and one with a request block to a loopback API. Beside it, in the same
//! alternation, Discord's own example stack (Node's express with the
//! discord-interactions package, benches/node) answering the same signed
//! interactions with the same replies. Then memory with 1,000 slow
//! interactions in flight, and a burst of 1,000 slow commands, each on a new
//! connection, all at once: every first answer must come within the
//! platform's deadline of 3 s. Last, the run pool: the command with one
//! request against a fast API and against one that takes 50 ms, with the
//! default pool (a thread a core, more while runs wait on idle cores)
//! beside fixed small ones (`--workers 4`, `--workers 16`).
//!
//! Run with `cargo bench --bench serve` (node and npm on the PATH for the
//! comparison; `npm ci` runs in benches/node on first use).
//! `BLKC_BENCH_BASELINE=/path/to/older/blkc` runs an older build in the
//! same alternation, on the same interactions.

#[path = "../tests/support/platform.rs"]
#[allow(dead_code)]
mod platform;
#[path = "../tests/support/postgres.rs"]
#[allow(dead_code)]
mod postgres_server;
mod support;

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use ed25519_dalek::SigningKey;
use support::{key, load, percentile, signed, Load};

const CLIENTS: usize = 64;

/// A server under test: its process and the address it listens on.
struct Server {
    child: Child,
    address: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// The CPU time the process has used (user and system), from /proc.
    fn cpu(&self) -> Duration {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).unwrap_or_default();
        // The fields after the command's name, which is in parentheses.
        let fields: Vec<u64> = stat
            .rsplit_once(')')
            .map(|(_, rest)| rest.split_whitespace().map(|f| f.parse().unwrap_or(0)).collect())
            .unwrap_or_default();
        // SAFETY: sysconf has no preconditions.
        let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
        let used = fields.get(11).copied().unwrap_or(0) + fields.get(12).copied().unwrap_or(0);
        Duration::from_secs_f64(used as f64 / ticks)
    }

    /// Resident memory now and at most (KiB), from /proc.
    fn memory(&self) -> (u64, u64) {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap_or_default();
        let field = |name: &str| {
            status
                .lines()
                .find(|l| l.starts_with(name))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
                .unwrap_or(0)
        };
        (field("VmRSS:"), field("VmHWM:"))
    }
}

/// A button and its handler, for the click line (this build only: a
/// baseline from before handlers would not read them).
const CLICKS: &str = r#"
command buttons "Buttons" {
    reply {
        text "Tap"
        button tap { label "Tap" value "one" }
    }
}
handler tap {
    update "tapped {value} by {user_name}"
}
"#;

fn start_blkc(dir: &Path, api: u16, key: &SigningKey, binary: &Path, extra: &[&str]) -> Server {
    let clicks = if binary == Path::new(env!("CARGO_BIN_EXE_blkc")) { CLICKS } else { "" };
    let source = clicks.to_string()
        + &format!(
            r#"command fast "Fast" {{
    option word "Word"
    reply "pong {{option_word}}"
}}
command lookup "Look up" {{
    option word "Word"
    api item {{
        method GET
        url "http://127.0.0.1:{api}/item/{{option_word}}"
    }}
    reply "{{option_word}}: {{api_item[response.name]}}"
}}
command wait "Wait" {{
    option word "Word"
    api item {{
        method GET
        url "http://127.0.0.1:{api}/slow/50"
    }}
    reply "{{option_word}}: {{api_item[response.name]}}"
}}
command slow "Slow" {{
    option word "Word"
    api wait {{
        method GET
        url "http://127.0.0.1:{api}/slow/4000"
    }}
    reply "done {{option_word}}"
}}
"#
        );
    start_source(dir, &source, api, key, binary, extra)
}

/// `blkc serve` of `source` (written to `dir/bot.blk`), its platform at the
/// loopback API `api`.
fn start_source(dir: &Path, source: &str, api: u16, key: &SigningKey, binary: &Path, extra: &[&str]) -> Server {
    std::fs::write(dir.join("bot.blk"), source).unwrap();
    let mut child = Command::new(binary)
        .args(["serve", "bot.blk", "--listen", "127.0.0.1:0", "--log-format", "json", "--platform"])
        .arg(format!("http://127.0.0.1:{api}/api"))
        .args(extra)
        .env("BLKC_DISCORD_PUBLIC_KEY", hex::encode(key.verifying_key().to_bytes()))
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start blkc serve");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    // The first line that says where it listens (a warning may come first).
    let mut said = String::new();
    let address = loop {
        let Some(Ok(line)) = lines.next() else { panic!("blkc serve did not start: {said}") };
        let log: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
        if let Some(listen) = log["listen"].as_str() {
            break listen.to_string();
        }
        said.push_str(&line);
    };
    // The log of every interaction is read (and dropped), as a terminal would.
    std::thread::spawn(move || for _ in lines {});
    Server { child, address }
}

/// express + discord-interactions; its clicks' counts in `dir/votes.sqlite3`.
fn start_node(api: u16, key: &SigningKey, dir: &Path) -> Option<Server> {
    let folder = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/node");
    if !folder.join("node_modules").exists() {
        let ok = Command::new("npm").args(["ci", "--no-audit", "--no-fund"]).current_dir(&folder).status();
        if !ok.is_ok_and(|s| s.success()) {
            return None;
        }
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0").ok()?.local_addr().ok()?.port();
    let mut child = Command::new("node")
        .arg("server.js")
        .arg(port.to_string())
        .arg(format!("http://127.0.0.1:{api}"))
        .env("PUBLIC_KEY", hex::encode(key.verifying_key().to_bytes()))
        .env("STORE", dir.join("votes.sqlite3"))
        .current_dir(&folder)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut line = String::new();
    BufReader::new(child.stdout.take()?).read_line(&mut line).ok()?;
    line.starts_with("listening").then(|| Server { child, address: format!("127.0.0.1:{port}") })
}

fn main() {
    let api = support::json_server();
    let key = key();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bench_serve");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // `BLKC_BENCH_ONLY=pool`: the run pool's section alone;
    // `BLKC_BENCH_ONLY=neighbours`: slow runs beside busy programs alone.
    match std::env::var("BLKC_BENCH_ONLY").as_deref() {
        Ok("pool") => return pool(&dir, api, &key, support::sized(2_000, 20), support::sized(5, 1)),
        Ok("neighbours") => return busy_neighbours(&dir, api, &key),
        Ok("features") => return features(&dir, &key),
        Ok("saves") => {
            let rounds = std::env::var("BLKC_BENCH_ROUNDS").ok().and_then(|r| r.parse().ok());
            return saves(&dir, api, &key, support::sized(10_000, 100), rounds.unwrap_or(support::sized(3, 1)));
        }
        _ => {}
    }
    let blkc = start_blkc(&dir, api, &key, Path::new(env!("CARGO_BIN_EXE_blkc")), &[]);
    let baseline = std::env::var("BLKC_BENCH_BASELINE").ok().map(|binary| {
        let dir = dir.join("baseline");
        std::fs::create_dir_all(&dir).unwrap();
        start_blkc(&dir, api, &key, Path::new(&binary), &[])
    });
    let node = start_node(api, &key, &dir);
    if node.is_none() {
        support::missing("serve: node or npm is missing; blkc alone");
    }
    let (per_round, rounds) = (support::sized(10_000, 100), support::sized(5, 1));
    let mut next_id = 1_000_000;
    let mut batch = |command: &str| -> Vec<Vec<u8>> {
        let requests = (0..per_round).map(|i| signed(&key, next_id + i, command, &format!("{}", i % 97))).collect();
        next_id += per_round;
        requests
    };
    // Warm both up (connections, JIT).
    for server in std::iter::once(&blkc).chain(baseline.as_ref()).chain(node.as_ref()) {
        let l = load(&server.address, batch("fast"), CLIENTS);
        assert_eq!(l.failures, 0, "warm-up of {} failed", server.address);
    }
    type Figures = Vec<(f64, Duration, Duration)>;
    let mut results: Vec<(String, Figures)> = Vec::new();
    let mut record = |name: String, l: Load| {
        let mut sorted = l.latencies;
        sorted.sort();
        assert_eq!(l.failures, 0, "{name}: {} interactions not answered", l.failures);
        let rate = sorted.len() as f64 / l.wall.as_secs_f64();
        let entry = (rate, percentile(&sorted, 0.5), percentile(&sorted, 0.99));
        match results.iter_mut().find(|(n, _)| *n == name) {
            Some((_, v)) => v.push(entry),
            None => results.push((name, vec![entry])),
        }
    };
    let mut next_click = 0;
    // The button's id as this build writes it (its key read from the plan).
    let tap = platform::component_id(CLICKS, "tap", 0, "one");
    let mut clicks = |n: usize| -> Vec<Vec<u8>> {
        let requests = (0..n).map(|i| support::signed_click(&key, 50_000_000 + next_click + i, &tap)).collect();
        next_click += n;
        requests
    };
    for _ in 0..rounds {
        // A click on a button whose handler updates its message (type 7),
        // beside the command figures.
        let clicked = load(&blkc.address, clicks(per_round), CLIENTS);
        assert_eq!(clicked.notices, 0, "clicks answered with a private notice (a stale id?)");
        record("blkc click".into(), clicked);
        for command in ["fast", "lookup"] {
            record(format!("blkc {command}"), load(&blkc.address, batch(command), CLIENTS));
            if let Some(base) = &baseline {
                record(format!("base {command}"), load(&base.address, batch(command), CLIENTS));
            }
            if let Some(node) = &node {
                record(format!("node {command}"), load(&node.address, batch(command), CLIENTS));
            }
        }
    }
    println!("serve: {per_round} signed interactions per run, {CLIENTS} keep-alive clients, {rounds} alternating runs; medians");
    let median = |v: &[(f64, Duration, Duration)], f: &dyn Fn(&(f64, Duration, Duration)) -> f64| {
        let mut xs: Vec<f64> = v.iter().map(f).collect();
        xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
        xs[xs.len() / 2]
    };
    let mut rates = std::collections::HashMap::new();
    for (name, v) in &results {
        let rate = median(v, &|e| e.0);
        rates.insert(name.clone(), rate);
        println!(
            "  {name:<12} {rate:>8.0} interactions/s   p50 {:>6.2} ms   p99 {:>6.2} ms",
            median(v, &|e| e.1.as_secs_f64() * 1e3),
            median(v, &|e| e.2.as_secs_f64() * 1e3)
        );
    }
    for command in ["fast", "lookup"] {
        if let (Some(b), Some(n)) = (rates.get(&format!("blkc {command}")), rates.get(&format!("node {command}"))) {
            println!(
                "  {command}: blkc answers {:.2}× the interactions a second of express + discord-interactions",
                b / n
            );
        }
        if let (Some(b), Some(o)) = (rates.get(&format!("blkc {command}")), rates.get(&format!("base {command}"))) {
            println!("  {command}: this build answers {:.2}× the interactions a second of the baseline", b / o);
        }
    }
    drop(node);
    slow_commands(&blkc, baseline.as_ref(), &key);
    drop(baseline);
    drop(blkc);
    saves(&dir, api, &key, per_round, support::sized(3, 1));
    features(&dir, &key);
    pool(&dir, api, &key, per_round / 5, rounds);
    busy_neighbours(&dir, api, &key);
}

/// The reply-only command, beside the poll's vote.
const FAST: &str = r#"
command fast "Fast" {
    option word "Word"
    reply "pong {option_word}"
}
"#;

/// A click that saves beside a command that does not: examples/poll.blk's
/// vote (a per-user cooldown kept in the store, the channel's count saved,
/// the message updated in place), each click by a user of its own so that
/// none is refused. `blkc serve` with its default SQLite store, with a
/// PostgreSQL store (a durable one, fsync on, started by the bench), and
/// express doing the same with better-sqlite3 (benches/node/server.js);
/// `BLKC_BENCH_BASELINE`'s build with SQLite beside them. Closed loops at 8
/// and 64 connections, then paced at 1,000 a second; the server's CPU time a
/// request from /proc. Every round alternates the servers.
fn saves(dir: &Path, api: u16, key: &SigningKey, per_round: usize, rounds: usize) {
    let bot = format!("{}{FAST}", include_str!("../examples/poll.blk"));
    let vote = platform::component_id(&bot, "vote", 0, "coffee");
    let started = |name: &str, binary: &Path, extra: &[&str]| -> Server {
        let dir = dir.join(format!("saves-{}", name.replace(' ', "-")));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        start_source(&dir, &bot, api, key, binary, extra)
    };
    let this = Path::new(env!("CARGO_BIN_EXE_blkc"));
    let mut servers: Vec<(String, Server)> = vec![("blkc sqlite".into(), started("blkc sqlite", this, &[]))];
    let postgres = postgres_server::durable_server();
    match &postgres {
        Some(pg) => {
            let url = pg.store();
            servers.push(("blkc postgres".into(), started("blkc postgres", this, &["--store", &url])));
        }
        None => support::missing("serve: PostgreSQL's binaries are missing; the saves bench without it"),
    }
    if let Ok(binary) = std::env::var("BLKC_BENCH_BASELINE") {
        servers.push(("base sqlite".into(), started("base sqlite", Path::new(&binary), &[])));
    }
    let node_dir = dir.join("saves-node");
    let _ = std::fs::remove_dir_all(&node_dir);
    std::fs::create_dir_all(&node_dir).unwrap();
    match start_node(api, key, &node_dir) {
        Some(node) => servers.push(("node sqlite".into(), node)),
        None => support::missing("serve: node or npm is missing; the saves bench without express"),
    }
    let (mut next_id, mut next_user) = (60_000_000, 3_000_000);
    let mut requests = |kind: &str, n: usize| -> Vec<Vec<u8>> {
        let made = (0..n)
            .map(|i| match kind {
                "vote" => support::signed_vote(key, next_id + i, &vote, next_user + i),
                _ => signed(key, next_id + i, "fast", &format!("{}", i % 97)),
            })
            .collect();
        next_id += n;
        next_user += n;
        made
    };
    for (name, server) in &servers {
        let warm = load(&server.address, requests("vote", 200), 8);
        assert_eq!(warm.failures + warm.notices, 0, "the warm-up of {name} failed: {:?}", warm.first_notice);
    }
    // (server, kind, how), each round's (rate, p50, p99, CPU a request).
    type Figure = (f64, Duration, Duration, Duration);
    type Line<'a> = (String, &'a str, String);
    let mut figures: Vec<(Line, Vec<Figure>)> = Vec::new();
    let paced_n = support::sized(3_000, 50);
    for _ in 0..rounds {
        for how in ["8 connections", "64 connections", "paced 1,000/s"] {
            for (name, server) in &servers {
                for kind in ["fast", "vote"] {
                    let cpu = server.cpu();
                    let l = match how {
                        "paced 1,000/s" => support::paced(&server.address, requests(kind, paced_n), 1000.0, CLIENTS),
                        _ => {
                            let clients = if how.starts_with('8') { 8 } else { 64 };
                            load(&server.address, requests(kind, per_round), clients)
                        }
                    };
                    let cpu = (server.cpu() - cpu) / l.latencies.len().max(1) as u32;
                    assert_eq!(l.failures + l.notices, 0, "{name} {kind} {how}: not answered as asked");
                    let mut sorted = l.latencies;
                    sorted.sort();
                    let rate = sorted.len() as f64 / l.wall.as_secs_f64();
                    let figure = (rate, percentile(&sorted, 0.5), percentile(&sorted, 0.99), cpu);
                    let label = (name.clone(), kind, how.to_string());
                    match figures.iter_mut().find(|(l, _)| *l == label) {
                        Some((_, v)) => v.push(figure),
                        None => figures.push((label, vec![figure])),
                    }
                }
            }
        }
    }
    println!(
        "serve: clicks that save (poll.blk's vote) beside the reply-only command, {rounds} alternating rounds; medians"
    );
    let median = |v: &[Figure], f: &dyn Fn(&Figure) -> f64| {
        let mut xs: Vec<f64> = v.iter().map(f).collect();
        xs.sort_by(f64::total_cmp);
        xs[xs.len() / 2]
    };
    let summary = |v: &[Figure]| {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        (median(v, &|f| f.0), median(v, &|f| ms(f.1)), median(v, &|f| ms(f.2)), median(v, &|f| ms(f.3) * 1e3))
    };
    for ((name, kind, how), v) in &figures {
        let (rate, p50, p99, cpu) = summary(v);
        println!(
            "  {name:<13} {kind:<4} {how:<14} {rate:>8.0}/s   p50 {p50:>6.2} ms   p99 {p99:>6.2} ms   CPU {cpu:>5.0} µs a request"
        );
    }
    for ((name, kind, how), v) in figures.iter().filter(|((_, k, _), _)| *k == "vote") {
        let Some((_, fast)) = figures.iter().find(|((n, k, h), _)| n == name && *k == "fast" && h == how) else {
            continue;
        };
        let ((rate, _, p99, cpu), (f_rate, _, f_p99, f_cpu)) = (summary(v), summary(fast));
        println!(
            "  {name} {how}: a {kind} runs at {:.2}× the command's rate, {:.2}× its p99, {:.2}× its CPU",
            rate / f_rate,
            p99 / f_p99,
            cpu / f_cpu
        );
    }
    drop(servers);
    drop(postgres);
}

/// Slow commands (an API that answers in 4 s) beside programs at the
/// lowest priority that keep every core busy (`nice -n 19` loops, as a build
/// or a backup beside the bot): how long until every real answer (the edit
/// of its "thinking") is delivered, and on how many threads. This build,
/// then `BLKC_BENCH_BASELINE`'s, each bounded at 150 s.
fn busy_neighbours(dir: &Path, api: u16, key: &SigningKey) {
    let n = support::sized(1000, 20);
    let cores = std::thread::available_parallelism().map_or(2, |c| c.get());
    let mut loops: Vec<Child> = (0..cores)
        .map(|_| {
            Command::new("nice").args(["-n", "19", "sh", "-c", "while :; do :; done"]).spawn().expect("nice and sh")
        })
        .collect();
    let mut builds = vec![("blkc", PathBuf::from(env!("CARGO_BIN_EXE_blkc")))];
    builds.extend(std::env::var("BLKC_BENCH_BASELINE").ok().map(|b| ("base", PathBuf::from(b))));
    for (i, (who, binary)) in builds.into_iter().enumerate() {
        let dir = dir.join(format!("neighbours{i}"));
        std::fs::create_dir_all(&dir).unwrap();
        let server = start_blkc(&dir, api, key, &binary, &[]);
        let slow: Vec<Vec<u8>> = (0..n).map(|j| signed(key, 30_000_000 + i * 100_000 + j, "slow", "s")).collect();
        let started = std::time::Instant::now();
        let first = support::burst(&server.address, slow);
        let (mut delivered, mut threads) = (0, 0);
        while started.elapsed() < Duration::from_secs(150) {
            delivered = metric(&server.address, "blkc_interactions_total{outcome=\"deferred\"}").unwrap_or(0);
            threads = threads.max(metric(&server.address, "blkc_workers").unwrap_or(0));
            if delivered >= n as u64 {
                break;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        println!(
            "  {who}: {n} commands on an API answering in 4 s beside {cores} `nice -n 19` busy loops: {delivered} real answers delivered in {:.1} s, at most {threads} threads; {} first answers failed",
            started.elapsed().as_secs_f64(),
            first.failures
        );
    }
    for l in &mut loops {
        let _ = l.kill();
        let _ = l.wait();
    }
}

/// Slow commands: many in flight (memory), then a burst on new connections
/// (the deadline).
fn slow_commands(blkc: &Server, baseline: Option<&Server>, key: &SigningKey) {
    let (in_flight, at_once) = (support::sized(1000, 20), support::sized(1000, 20));
    let slow: Vec<Vec<u8>> = (0..in_flight).map(|i| signed(key, 9_000_000 + i, "slow", "s")).collect();
    let (before, _) = blkc.memory();
    let address = blkc.address.clone();
    let flight = std::thread::spawn(move || load(&address, slow, in_flight));
    std::thread::sleep(Duration::from_millis(2000));
    let (during, _) = blkc.memory();
    let l = flight.join().unwrap();
    let (_, peak) = blkc.memory();
    let latest = l.latencies.iter().max().copied().unwrap_or_default();
    println!(
        "  {in_flight} slow interactions in flight: resident {:.1} MB (idle {:.1} MB, peak {:.1} MB); latest first answer {:.0} ms, {} failed",
        during as f64 / 1024.0,
        before as f64 / 1024.0,
        peak as f64 / 1024.0,
        latest.as_secs_f64() * 1e3,
        l.failures
    );
    // The bursts, alternating with the baseline's.
    let mut next_id = 9_500_000;
    for _ in 0..support::sized(2, 1) {
        for (who, server) in std::iter::once(("blkc", blkc)).chain(baseline.map(|b| ("base", b))) {
            std::thread::sleep(Duration::from_secs(5));
            let slow: Vec<Vec<u8>> = (0..at_once).map(|i| signed(key, next_id + i, "slow", "s")).collect();
            next_id += at_once;
            let l = support::burst(&server.address, slow);
            let mut sorted = l.latencies;
            sorted.sort();
            let late = sorted.iter().filter(|t| t.as_secs_f64() >= 3.0).count();
            println!(
                "  {who}: {at_once} slow commands at once, each on a new connection: first answers p50 {:.0} ms, latest {:.0} ms; {late} past the 3,000 ms deadline, {} failed",
                percentile(&sorted, 0.5).as_secs_f64() * 1e3,
                sorted.last().copied().unwrap_or_default().as_secs_f64() * 1e3,
                l.failures
            );
            assert!(who == "base" || l.failures == 0, "every interaction of the burst is answered");
        }
    }
}

/// The run pool: one request to a fast API (`lookup`) and to one that
/// takes 50 ms (`wait`), with the default pool and fixed small ones.
fn pool(dir: &Path, api: u16, key: &SigningKey, per_round: usize, rounds: usize) {
    let binary = Path::new(env!("CARGO_BIN_EXE_blkc"));
    let pools: [(&str, &[&str]); 3] =
        [("default", &[]), ("--workers 4", &["--workers", "4"]), ("--workers 16", &["--workers", "16"])];
    let servers: Vec<(&str, Server)> = pools
        .iter()
        .enumerate()
        .map(|(i, (name, args))| {
            let dir = dir.join(format!("pool{i}"));
            std::fs::create_dir_all(&dir).unwrap();
            (*name, start_blkc(&dir, api, key, binary, args))
        })
        .collect();
    let mut next_id = 20_000_000;
    let mut figures: Vec<(String, Vec<f64>)> = Vec::new();
    let mut threads_seen = Vec::new();
    for _ in 0..rounds {
        for command in ["lookup", "wait"] {
            for (name, server) in &servers {
                // 50 ms a request: a tenth as many, so that a small pool is done in seconds.
                let n = if command == "wait" { per_round / 10 } else { per_round };
                let requests = (0..n).map(|i| signed(key, next_id + i, command, &format!("{}", i % 97))).collect();
                next_id += n;
                let l = load(&server.address, requests, CLIENTS);
                assert_eq!(l.failures, 0, "{name} {command}: interactions not answered");
                let rate = l.latencies.len() as f64 / l.wall.as_secs_f64();
                let label = format!("{command:<6} {name}");
                if *name == "default" {
                    let threads = workers(&server.address).map_or("?".to_string(), |n| n.to_string());
                    threads_seen.push(format!("{command} {threads}"));
                }
                match figures.iter_mut().find(|(n, _)| *n == label) {
                    Some((_, v)) => v.push(rate),
                    None => figures.push((label, vec![rate])),
                }
            }
        }
    }
    println!(
        "serve: the run pool, {per_round} interactions per run, {CLIENTS} clients, {rounds} alternating runs; medians"
    );
    for (label, mut rates) in figures {
        rates.sort_by(f64::total_cmp);
        println!("  {label:<20} {:>8.0} interactions/s", rates[rates.len() / 2]);
    }
    println!("  the default pool's threads after each run: {}", threads_seen.join(", "));
}

/// The `blkc_workers` gauge of the server at `address`.
fn workers(address: &str) -> Option<u64> {
    metric(address, "blkc_workers")
}

/// The value of metric `name` (with its labels, as written) of the server
/// at `address`.
fn metric(address: &str, name: &str) -> Option<u64> {
    let mut stream = std::net::TcpStream::connect(address).ok()?;
    std::io::Write::write_all(&mut stream, b"GET /metrics HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n")
        .ok()?;
    let (_, body) = support::read_response(&mut std::io::BufReader::new(stream))?;
    let line = body.lines().find(|l| l.strip_prefix(name).is_some_and(|rest| rest.starts_with(' ')))?;
    line.split_whitespace().last()?.parse::<f64>().ok().map(|n| n as u64)
}

/// The platform's requests as they came: when, and the request line.
type Arrivals = std::sync::Arc<std::sync::Mutex<Vec<(std::time::Instant, String)>>>;

/// The turn's features on their hot paths, through `blkc serve`: a role
/// given by a command (through the rate limiter, at the default global
/// limit of 50 a second and at one the platform granted, 5,000), a webhook
/// event with its GitHub signature, each sending a message, and 1,000
/// reminders (`at` one moment, each a member's own) all due at once: when
/// each reaches the platform after its time.
fn features(dir: &Path, key: &SigningKey) {
    let arrivals: Arrivals = Default::default();
    let noted = arrivals.clone();
    let platform = support::http_server(move |line, _| {
        noted.lock().unwrap().push((std::time::Instant::now(), line.to_string()));
        "{\"id\":\"1\"}".to_string()
    });
    let secret = "whsec-0123456789abcdef";
    let lead = Duration::from_secs(support::sized(8, 4));
    // A whole second (the time helpers read seconds), `lead` or a little
    // more from now.
    let now = time::OffsetDateTime::now_utc();
    let due = (now + lead + Duration::from_secs(1)).replace_nanosecond(0).unwrap();
    let due_at = std::time::Instant::now() + Duration::try_from(due - now).unwrap();
    let at = due.format(&time::format_description::well_known::Rfc3339).unwrap();
    let bot = format!(
        r#"command role "Role" {{
    option word "Word"
    give role "999" to "{{user_id}}"
    reply "given"
}}
command remind "Remind" {{
    option word "Word"
    at "{at}" {{
        send to "900" "reminder {{option_word}}"
    }}
    reply "kept"
}}
event push webhook "/hooks/github" signed github secret "<GITHUB_SECRET>" {{
    send to "901" "push {{api_webhook[response.n]}}"
}}
"#
    );
    let this = Path::new(env!("CARGO_BIN_EXE_blkc"));
    let folder = dir.join("features");
    let _ = std::fs::remove_dir_all(&folder);
    std::fs::create_dir_all(&folder).unwrap();
    std::env::set_var("BLKC_BOT_TOKEN", "bench.bot.token.0123456789");
    std::env::set_var("BLKC_SECRET_GITHUB_SECRET", secret);
    let granted = start_source(&folder, &bot, platform, key, this, &["--global-rate-limit", "5000"]);
    let count = |what: &str| arrivals.lock().unwrap().iter().filter(|(_, l)| l.contains(what)).count();
    let wait_for = |what: &str, n: usize| {
        let until = std::time::Instant::now() + Duration::from_secs(120);
        while count(what) < n && std::time::Instant::now() < until {
            std::thread::sleep(Duration::from_millis(20));
        }
        let times: Vec<std::time::Instant> =
            arrivals.lock().unwrap().iter().filter(|(_, l)| l.contains(what)).map(|(t, _)| *t).collect();
        times
    };

    // 1,000 reminders, kept before their moment.
    let reminders = support::sized(1000, 20);
    let asked = load(
        &granted.address,
        (0..reminders)
            .map(|i| support::signed_by(key, 70_000_000 + i, "remind", &i.to_string(), 5_000_000 + i))
            .collect(),
        CLIENTS,
    );
    assert_eq!(asked.failures + asked.notices, 0, "the reminders were not all kept");
    let kept_by = due_at.saturating_duration_since(std::time::Instant::now());
    let sent = wait_for("/channels/900/messages", reminders);
    // Milliseconds after the moment (before it: negative).
    let mut late: Vec<f64> = sent
        .iter()
        .map(|t| match t.checked_duration_since(due_at) {
            Some(after) => after.as_secs_f64() * 1e3,
            None => -(due_at.duration_since(*t).as_secs_f64() * 1e3),
        })
        .collect();
    late.sort_by(f64::total_cmp);
    let at = |p: f64| late.get(((late.len() as f64 * p) as usize).min(late.len().saturating_sub(1))).copied();
    println!(
        "serve: {} of {reminders} reminders due at one moment sent (kept {:.1} s before it); after their time: first {:.1} ms, p50 {:.1} ms, last {:.1} ms",
        sent.len(),
        kept_by.as_secs_f64(),
        at(0.0).unwrap_or_default(),
        at(0.5).unwrap_or_default(),
        at(1.0).unwrap_or_default()
    );

    // Roles given, at a granted global limit and at the default one.
    std::fs::create_dir_all(dir.join("features-default")).unwrap();
    let default = start_source(&dir.join("features-default"), &bot, platform, key, this, &[]);
    for (label, server, n) in [
        ("a limit of 5,000/s", &granted, support::sized(4000, 40)),
        ("the default limit, 50/s", &default, support::sized(300, 10)),
    ] {
        let before = count("/roles/999");
        let started = std::time::Instant::now();
        let l = load(&server.address, (0..n).map(|i| signed(key, 71_000_000 + i, "role", "r")).collect(), CLIENTS);
        assert_eq!(l.failures + l.notices, 0, "roles: not answered as asked");
        let given = wait_for("/roles/999", before + n);
        let took = given.last().map_or(Duration::ZERO, |t| t.duration_since(started));
        println!(
            "serve: {n} roles given by commands at {label}: {:.0} actions/s reached the platform ({} of {n})",
            (given.len() - before) as f64 / took.as_secs_f64(),
            given.len() - before
        );
    }

    // Webhook events, each signed and its delivery new.
    let n = support::sized(4000, 40);
    let host = granted.address.clone();
    let posts: Vec<Vec<u8>> = (0..n)
        .map(|i| {
            let body = format!("{{\"n\":{i},\"ref\":\"refs/heads/main\"}}");
            let signed = blkc::base::webhook::Scheme::Github.sign(secret, body.as_bytes(), 0);
            let headers: String = signed.iter().map(|(k, v)| format!("{k}: {v}\r\n")).collect();
            format!(
                "POST /hooks/github HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
                 X-GitHub-Event: push\r\nX-GitHub-Delivery: bench-{i}\r\n{headers}\r\n{body}",
                body.len()
            )
            .into_bytes()
        })
        .collect();
    let started = std::time::Instant::now();
    let l = support::load_status(&granted.address, posts, CLIENTS, 202);
    assert_eq!(l.failures, 0, "webhook events: not accepted");
    let accepted = l.latencies.len() as f64 / l.wall.as_secs_f64();
    let delivered = wait_for("/channels/901/messages", n);
    let took = delivered.last().map_or(Duration::ZERO, |t| t.duration_since(started));
    let mut latencies = l.latencies;
    latencies.sort();
    println!(
        "serve: {n} signed webhook events: accepted at {accepted:.0}/s (p99 {:.2} ms), their {} messages sent at {:.0}/s",
        percentile(&latencies, 0.99).as_secs_f64() * 1e3,
        delivered.len(),
        delivered.len() as f64 / took.as_secs_f64()
    );
}
