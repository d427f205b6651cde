//! The store under load: read-then-save runs (`save n = n + 1`, the
//! runner's own transaction) on SQLite and on PostgreSQL (loopback, started
//! by the bench from this machine's binaries), with 1, 8 and 32 runs at
//! once: saves a second and the p50 and p99 of a run. Then two `blkc serve`
//! processes sharing PostgreSQL, answering signed interactions that
//! increment one counter: interactions a second, and the count checked.
//!
//! Run with `cargo bench --bench store`.

#[path = "../tests/support/postgres.rs"]
mod postgres_server;
mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use blkc::eval::{self, Inputs, Options};
use blkc::source::SourceFile;
use blkc::store::{Backend, Location};

const SECONDS: f64 = 3.0;

fn plan() -> blkc::plan::Plan {
    let checked =
        blkc::check_source(SourceFile::new("bench.blk", "var n = \"0\"\ncommand add {\n    save n = n + 1\n}\n"));
    blkc::plan::lower(&checked).expect("the bench's file lowers")
}

/// Runs `add` on `threads` threads for a few seconds; saves a second and
/// the run latencies, sorted.
fn measure(backend: &Backend, threads: usize) -> (f64, Vec<Duration>) {
    let plan = Arc::new(plan());
    let started = Instant::now();
    let until = started + Duration::from_secs_f64(SECONDS);
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

fn pick(sorted: &[Duration], p: f64) -> f64 {
    sorted[((sorted.len() as f64 * p) as usize).min(sorted.len() - 1)].as_secs_f64() * 1e3
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let mut backends = vec![("SQLite", Backend::open(&Location::Sqlite(dir.path().join("store.sqlite3"))).unwrap())];
    let pg = postgres_server::server();
    let url = pg.map(|pg| pg.store());
    if let Some(url) = &url {
        backends.push(("PostgreSQL", Backend::open(&Location::Postgres(url.clone())).unwrap()));
    } else {
        println!("store: PostgreSQL is not installed; SQLite alone");
    }
    println!("store: read-then-save runs (`save n = n + 1`), {SECONDS} s each, alternating backends");
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
    }
}

/// Two `blkc serve` processes sharing the PostgreSQL store, 32 keep-alive
/// clients each, answering signed interactions that increment one
/// per-server counter; the count is checked.
fn two_servers(dir: &std::path::Path, url: &str) {
    use std::io::BufRead as _;
    const EACH: usize = 4000;
    let key = support::key();
    std::fs::write(
        dir.join("hit.blk"),
        "var hits per server = \"0\"\ncommand hit \"Hit\" {\n    option word \"Word\"\n    save hits = hits + 1\n    reply \"{hits}\"\n}\n",
    )
    .unwrap();
    let servers: Vec<(std::process::Child, String)> = (0..2)
        .map(|_| {
            let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_blkc"))
                .args(["serve", "hit.blk", "--listen", "127.0.0.1:0", "--log-format", "json", "--store", url])
                .env("BLKC_DISCORD_PUBLIC_KEY", hex::encode(key.verifying_key().to_bytes()))
                .current_dir(dir)
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("start blkc serve");
            let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
            let first: serde_json::Value =
                serde_json::from_str(&lines.next().and_then(Result::ok).unwrap_or_default()).unwrap_or_default();
            std::thread::spawn(move || for _ in lines {});
            (child, first["listen"].as_str().expect("a listening server").to_string())
        })
        .collect();
    let started = Instant::now();
    let loads: Vec<_> = servers
        .iter()
        .enumerate()
        .map(|(s, (_, address))| {
            let requests: Vec<Vec<u8>> =
                (0..EACH).map(|i| support::signed(&key, s * EACH + i + 1, "hit", "w")).collect();
            let address = address.clone();
            std::thread::spawn(move || support::load(&address, requests, 32))
        })
        .collect();
    let mut latencies = Vec::new();
    for l in loads {
        let l = l.join().unwrap();
        assert_eq!(l.failures, 0, "interactions not answered");
        latencies.extend(l.latencies);
    }
    let took = started.elapsed();
    latencies.sort();
    let backend = Backend::open(&Location::Postgres(url.to_string())).unwrap();
    let counted = backend.run_store().get("hits:server:777").unwrap().map(|v| v.to_string()).unwrap_or_default();
    println!(
        "  two servers sharing PostgreSQL, 64 clients: {:.0} interactions/s (each a read-then-save), p50 {:.2} ms, p99 {:.2} ms; the counter reads {counted} of {}",
        latencies.len() as f64 / took.as_secs_f64(),
        support::percentile(&latencies, 0.5).as_secs_f64() * 1e3,
        support::percentile(&latencies, 0.99).as_secs_f64() * 1e3,
        2 * EACH
    );
    assert_eq!(counted, (2 * EACH).to_string());
    for (mut child, _) in servers {
        let _ = child.kill();
        let _ = child.wait();
    }
}
