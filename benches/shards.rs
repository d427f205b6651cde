//! Take-over time of the Gateway's shards leased through a shared
//! PostgreSQL store (src/host/serve/leases.rs): two `blkc serve` processes hold
//! the 8 shards a loopback sharded Gateway recommends; one is stopped
//! (SIGTERM: it gives its shards up at once) or killed (SIGKILL: its leases
//! run out), alternating, and the time is measured from the signal until
//! the other has resumed every shard it held. A third process is then
//! started in its place for the next round.
//!
//! Run with `cargo bench --bench shards`; `BLKC_BENCH_BIN=/path/to/blkc`
//! runs another build's `blkc serve`.

#[path = "../tests/support/platform.rs"]
#[allow(dead_code)]
mod platform;
#[path = "../tests/support/postgres.rs"]
mod postgres_server;
#[path = "../tests/support/sharded.rs"]
#[allow(dead_code)]
mod sharded;
mod support;

use std::io::BufRead as _;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use platform::TestPlatform;
use sharded::ShardedGateway;

const PROGRAM: &str = "event message_create {\n    reply \"{message_content}\"\n}\n";

/// A `blkc serve` process holding shards through the store, its log kept.
struct Server {
    child: Child,
    log: std::sync::Arc<std::sync::Mutex<String>>,
    _dir: tempfile::TempDir,
}

impl Server {
    fn start(platform: &TestPlatform, url: &str) -> Server {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("bot.blk"), PROGRAM).unwrap();
        let mut child = Command::new(support::binary())
            .args(["serve", "bot.blk", "--store", url, "--platform", &platform.api()])
            .env("BLKC_BOT_TOKEN", "bench-token-0123456789")
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start blkc serve");
        let log = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let (lines, kept) = (std::io::BufReader::new(child.stderr.take().unwrap()).lines(), log.clone());
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                let mut kept = kept.lock().unwrap();
                kept.push_str(&line);
                kept.push('\n');
            }
        });
        Server { child, log, _dir: dir }
    }

    /// The shards this process holds, as the store says.
    fn shards(&self, url: &str) -> Vec<u32> {
        let me = format!(":{}:", self.child.id());
        let pool = blkc::run::store::postgres::Pool::open(url).unwrap();
        pool.holders().unwrap().into_iter().filter(|(_, h)| h.contains(&me)).map(|(s, _)| s).collect()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn main() {
    let Some(pg) = postgres_server::server() else {
        support::missing("shards: PostgreSQL is not installed");
        return;
    };
    let url = pg.store();
    let platform = TestPlatform::start();
    let gateway = ShardedGateway::start(8);
    // (A bucket each: the take-overs resume, so the spacing is not what is timed.)
    platform.set_gateway(gateway.bot_info(16));
    let mut servers = vec![Server::start(&platform, &url), Server::start(&platform, &url)];
    let all_held = |g: &ShardedGateway| g.live() == vec![1; 8];
    assert!(gateway.wait(Duration::from_secs(40), all_held), "{:?}", gateway.live());
    let rounds = support::sized(4, 1);
    println!("shards: 8 leased by two processes through PostgreSQL; take-over of one's shards by the other, {rounds} round(s) each, alternating");
    let mut times: Vec<(&str, Vec<f64>)> = vec![("stopped (SIGTERM)", Vec::new()), ("killed (SIGKILL)", Vec::new())];
    for _ in 0..rounds {
        for (how, measured) in times.iter_mut() {
            // Once the two hold 4 each, the older goes.
            let even = |_: &ShardedGateway| servers.iter().all(|s| s.shards(&url).len() == 4);
            assert!(gateway.wait(Duration::from_secs(30), even), "not divided: {:?}", gateway.live());
            let gone = servers.remove(0);
            let theirs = gone.shards(&url);
            let signal = if how.starts_with("killed") { libc::SIGKILL } else { libc::SIGTERM };
            let signalled = Instant::now();
            // SAFETY: a signal to a child this bench started.
            unsafe { libc::kill(gone.child.id() as i32, signal) };
            let resumed = |g: &ShardedGateway| {
                let after: Vec<u32> = g.resumes().into_iter().filter(|(t, _)| *t > signalled).map(|(_, s)| s).collect();
                theirs.iter().all(|s| after.contains(s))
            };
            let done = gateway.wait(Duration::from_secs(30), resumed);
            assert!(done, "not taken over: {:?}\n{}", gateway.resumes(), servers[0].log.lock().unwrap());
            measured.push(signalled.elapsed().as_secs_f64());
            drop(gone);
            assert!(gateway.wait(Duration::from_secs(10), all_held), "{:?}", gateway.live());
            servers.push(Server::start(&platform, &url));
        }
    }
    for (how, measured) in &mut times {
        measured.sort_by(f64::total_cmp);
        let shown: Vec<String> = measured.iter().map(|t| format!("{t:.2}")).collect();
        println!("  {how:<18} taken over in {} s (median {:.2} s)", shown.join(", "), measured[measured.len() / 2]);
    }
    assert_eq!(gateway.doubles(), 0, "a shard held by two processes at once");
    println!(
        "  no shard held twice; {} identifies in all, {} resumes",
        gateway.identifies().len(),
        gateway.resumes().len()
    );
}
