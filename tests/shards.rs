//! `blkc serve --shards auto` on several processes sharing a PostgreSQL
//! store: the shards leased through it (src/host/serve/leases.rs), against a
//! sharded test Gateway on 127.0.0.1 recommending 8 shards. Every shard is
//! held once; identifies keep their bucket's spacing across processes; a
//! process killed with `kill -9` has its shards resumed by the others, and
//! the events sent meanwhile run once; a process that joins takes its
//! share, handed over by resume.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::serve::{serve, Served};
use crate::support::platform::TestPlatform;
use crate::support::sharded::{server_of, ShardedGateway};

const TOKEN: &str = "bot-token-abcdefghijklmnop";

const PING: &str = "event message_create {\n    if \"{message_content}\" == \"!ping\" {\n        reply \"pong {message_id}\"\n    }\n}\n";

/// The platform's spacing of identifies in one bucket.
const SPACING: Duration = Duration::from_secs(5);

/// Who holds each shard, as the store says (live leases).
fn holders(url: &str) -> BTreeMap<u32, String> {
    blkc::run::store::postgres::Pool::open(url).unwrap().holders().unwrap().into_iter().collect()
}

/// How many shards each process holds, by its process id.
fn shares(holders: &BTreeMap<u32, String>, servers: &[&Served]) -> Vec<usize> {
    servers.iter().map(|s| holders.values().filter(|h| h.contains(&format!(":{}:", s.child.id()))).count()).collect()
}

fn ping(id: u32) -> serde_json::Value {
    json!({ "channel_id": "889", "id": format!("{id}"), "content": "!ping", "author": { "id": "1001", "username": "x" } })
}

#[test]
fn processes_share_the_shards_by_lease_and_take_over_a_killed_one_s() {
    let Some(pg) = crate::support::postgres::server() else { return };
    let url = pg.store();
    let platform = TestPlatform::start();
    let gateway = ShardedGateway::start(8);
    platform.set_gateway(gateway.bot_info(4));
    let args = ["--store", url.as_str()];
    let start = || serve(PING, &platform, None, &args, &[("BLKC_BOT_TOKEN", TOKEN)]);
    let (a, b, c) = (start(), start(), start());
    let logs = |servers: &[&Served]| servers.iter().map(|s| s.log()).collect::<Vec<_>>().join("\n---\n");
    // Every shard held exactly once, by one of the three, in shares of 3, 3 and 2.
    let held = gateway.wait(Duration::from_secs(40), |g| g.live() == vec![1; 8]);
    assert!(held, "{:?}\n{}", gateway.live(), logs(&[&a, &b, &c]));
    let mut split = shares(&holders(&url), &[&a, &b, &c]);
    split.sort();
    assert_eq!(split, [2, 3, 3], "{}", logs(&[&a, &b, &c]));
    // Identifies of one bucket (shard mod 4) never closer than the spacing,
    // whichever process sent them.
    let mut by_bucket: BTreeMap<u32, Vec<Instant>> = BTreeMap::new();
    for (at, shard) in gateway.identifies() {
        by_bucket.entry(shard % 4).or_default().push(at);
    }
    for (bucket, times) in &by_bucket {
        let gaps: Vec<Duration> = times.windows(2).map(|w| w[1].duration_since(w[0])).collect();
        assert!(gaps.iter().all(|g| *g >= SPACING), "bucket {bucket}: {gaps:?}");
    }
    assert_eq!(gateway.identifies().len(), 8);
    // One killed: its shards are resumed by the others once its leases run
    // out, and what was sent to them meanwhile runs once.
    let before = holders(&url);
    let victim = format!(":{}:", a.child.id());
    let theirs: Vec<u32> = before.iter().filter(|(_, h)| h.contains(&victim)).map(|(s, _)| *s).collect();
    a.signal(libc::SIGKILL);
    let killed = Instant::now();
    for (i, shard) in theirs.iter().enumerate() {
        gateway.dispatch(server_of(*shard, 8, 1), "MESSAGE_CREATE", ping(7000 + i as u32));
    }
    let resumed = |g: &ShardedGateway| {
        let after: Vec<u32> = g.resumes().into_iter().filter(|(t, _)| *t > killed).map(|(_, s)| s).collect();
        theirs.iter().all(|s| after.contains(s))
    };
    assert!(gateway.wait(Duration::from_secs(25), resumed), "{:?}\n{}", gateway.resumes(), logs(&[&b, &c]));
    assert!(gateway.wait(Duration::from_secs(5), |g| g.live() == vec![1; 8]), "{:?}", gateway.live());
    assert_eq!(gateway.identifies().len(), 8, "resumed, not identified anew");
    let pongs = platform.wait_for("/channels/889/messages", theirs.len());
    assert_eq!(pongs.len(), theirs.len(), "{}", logs(&[&b, &c]));
    let log = logs(&[&b, &c]);
    assert!(log.contains("took over a shard") && log.contains(&format!("previous={}", before[&theirs[0]])), "{log}");
    assert!(log.contains("resumed=true"), "{log}");
    // A fourth joins: the two give it a shard each, by resume.
    let d = start();
    let joined = |_: &ShardedGateway| shares(&holders(&url), &[&d]) == [2];
    assert!(gateway.wait(Duration::from_secs(20), joined), "{:?}\n{}", holders(&url), logs(&[&b, &c, &d]));
    assert!(gateway.wait(Duration::from_secs(5), |g| g.live() == vec![1; 8]), "{:?}", gateway.live());
    let mut split = shares(&holders(&url), &[&b, &c, &d]);
    split.sort();
    assert_eq!(split, [2, 3, 3]);
    assert_eq!(gateway.identifies().len(), 8, "handed over by resume, not identified anew");
    assert!(logs(&[&b, &c]).contains("handed a shard over"));
    // No shard was ever held by two processes, and each event ran once.
    assert_eq!(gateway.doubles(), 0);
    // Each event's run has ended once, in one of the processes: the
    // messages sent are all there will be.
    let ran = || {
        logs(&[&b, &c, &d]).lines().filter(|l| l.contains("kind=message_create") && l.contains("outcome=ran")).count()
    };
    assert!(crate::support::wait::eventually(20, || ran() >= theirs.len()), "{}", logs(&[&b, &c, &d]));
    assert_eq!(ran(), theirs.len(), "{}", logs(&[&b, &c, &d]));
    assert_eq!(platform.wait_for("/channels/889/messages", theirs.len()).len(), theirs.len());
}

/// The platform recommends more shards: /gateway/bot says 8 where the
/// bot's processes hold 4. A process started then keeps the count (a
/// reshard would cost every process its sessions) and says so. Then a shard
/// that identifies again under 4 is closed with 4011: every process gives
/// its shards up, the count moves to 8 once none is held, and the shards
/// are taken again under it. No shard is ever held under two counts, and
/// it is said in the log and on /metrics.
#[test]
fn a_larger_shard_count_moves_every_process_with_no_shard_held_under_two() {
    let Some(pg) = crate::support::postgres::server() else { return };
    let url = pg.store();
    let platform = TestPlatform::start();
    let gateway = ShardedGateway::start(4);
    // (Each bucket its own: the 12 identifies need not wait their turns.)
    platform.set_gateway(gateway.bot_info(16));
    let args = ["--store", url.as_str()];
    let start = || serve(PING, &platform, None, &args, &[("BLKC_BOT_TOKEN", TOKEN)]);
    let (a, b) = (start(), start());
    assert!(gateway.wait(Duration::from_secs(30), |g| g.live() == vec![1; 4]), "{:?}", gateway.live());
    // The bot is in more servers now: a process started keeps the count,
    // and takes its share by resume.
    gateway.set_count(8);
    platform.set_gateway(gateway.bot_info(16));
    let c = start();
    let logs = || [&a, &b, &c].iter().map(|s| s.log()).collect::<Vec<_>>().join("\n---\n");
    let joined = |_: &ShardedGateway| shares(&holders(&url), &[&c]) == [1];
    assert!(gateway.wait(Duration::from_secs(20), joined), "{:?}\n{}", holders(&url), logs());
    assert!(c.log().contains("the platform recommends more shards"), "{}", c.log());
    assert_eq!(gateway.identified_counts(), [4; 4], "{}", logs());
    // A session ended makes its shard identify again, and the Gateway
    // closes it with 4011.
    gateway.invalidate(0);
    let moved = gateway.wait(Duration::from_secs(40), |g| g.live() == vec![1; 8]);
    assert!(moved, "{:?}\n{}", gateway.live(), logs());
    assert_eq!(gateway.splits(), 0, "a shard held under two counts");
    let counts = gateway.identified_counts();
    assert_eq!(counts.iter().filter(|c| **c == 8).count(), 8, "{counts:?}");
    let log = logs();
    assert!(log.contains("close code 4011") && log.contains("the platform wants more shards"), "{log}");
    assert!(log.contains("gave the shards up") && log.contains("why=resharded"), "{log}");
    let text = metrics(&a);
    assert!(text.contains("blkc_shard_count 8") && text.contains("blkc_shards_recommended 8"), "{text}");
    assert!(text.contains("blkc_shard_leases_total{outcome=\"renewed\"}"), "{text}");
    let held = |s: &Served| {
        let m = metrics(s);
        m.lines().find_map(|l| l.strip_prefix("blkc_shards_held ")?.parse::<i64>().ok()).unwrap()
    };
    assert_eq!(held(&a) + held(&b) + held(&c), 8);
}

/// The process's `/metrics` text.
fn metrics(served: &Served) -> String {
    let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
    agent.get(format!("{}/metrics", served.url)).call().unwrap().body_mut().read_to_string().unwrap()
}

/// `--max-shards 1` caps one process: of 4 shards it holds one and the
/// other process the rest, as `/metrics` and `blkc vars shards` say.
#[test]
fn max_shards_caps_one_process_and_the_others_take_the_rest() {
    let Some(pg) = crate::support::postgres::server() else { return };
    let url = pg.store();
    let platform = TestPlatform::start();
    let gateway = ShardedGateway::start(4);
    platform.set_gateway(gateway.bot_info(16));
    let env = [("BLKC_BOT_TOKEN", TOKEN)];
    let capped = serve(PING, &platform, None, &["--store", url.as_str(), "--max-shards", "1"], &env);
    let other = serve(PING, &platform, None, &["--store", url.as_str()], &env);
    let logs = || format!("{}\n---\n{}", capped.log(), other.log());
    let split = |_: &ShardedGateway| shares(&holders(&url), &[&capped, &other]) == [1, 3];
    assert!(gateway.wait(Duration::from_secs(30), split), "{:?}\n{}", holders(&url), logs());
    assert!(gateway.wait(Duration::from_secs(5), |g| g.live() == vec![1; 4]), "{:?}", gateway.live());
    let held = |s: &Served| metrics(s).lines().find_map(|l| l.strip_prefix("blkc_shards_held ")?.parse::<i64>().ok());
    assert_eq!((held(&capped), held(&other)), (Some(1), Some(3)));
    // `blkc vars shards` says who holds what, as text and as JSON.
    let vars = |format: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_blkc"))
            .args(["vars", "--store", url.as_str(), "shards", "--format", format])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    // (Each session is kept with its lease as soon as its READY comes.)
    let until = Instant::now() + Duration::from_secs(5);
    let mut text = vars("text");
    while text.contains("no session") && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(100));
        text = vars("text");
    }
    assert!(text.starts_with("4 shards\n"), "{text}");
    let mine = format!(":{}:", capped.child.id());
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("shard")).collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert_eq!(lines.iter().filter(|l| l.contains(&mine)).count(), 1, "{text}");
    assert!(lines.iter().all(|l| l.contains(" s left") && l.contains("(session kept)")), "{text}");
    let json: serde_json::Value = serde_json::from_str(&vars("json")).unwrap();
    assert_eq!(json["count"], 4);
    let shards = json["shards"].as_array().unwrap();
    assert!(shards.iter().all(|s| s["holder"].is_string() && s["lease_left_ms"].as_u64().unwrap() > 0), "{json}");
}

/// A process whose store stops answering (a black hole: bytes taken, none
/// answered) stops its shards before their leases can run out, and the
/// other process resumes them once they have: no shard is ever held by two
/// connections at once, and no event is lost (at least once: what the cut
/// process ran, the store could not be told).
#[test]
fn a_process_cut_off_from_the_store_stops_its_shards_before_another_takes_them() {
    let Some(pg) = crate::support::postgres::server() else { return };
    let url = pg.store();
    let port: u16 = url.split(':').nth(2).unwrap().split('/').next().unwrap().parse().unwrap();
    let proxy = crate::support::proxy::Proxy::start(port);
    let cut = url.replace(&format!(":{port}/"), &format!(":{}/", proxy.port));
    let platform = TestPlatform::start();
    let gateway = ShardedGateway::start(4);
    platform.set_gateway(gateway.bot_info(16));
    let env = [("BLKC_BOT_TOKEN", TOKEN)];
    let a = serve(PING, &platform, None, &["--store", cut.as_str()], &env);
    let b = serve(PING, &platform, None, &["--store", url.as_str()], &env);
    let logs = || format!("{}\n---\n{}", a.log(), b.log());
    let even = |_: &ShardedGateway| shares(&holders(&url), &[&a, &b]) == [2, 2];
    assert!(gateway.wait(Duration::from_secs(30), even), "{:?}\n{}", holders(&url), logs());
    assert!(gateway.wait(Duration::from_secs(5), |g| g.live() == vec![1; 4]), "{:?}", gateway.live());
    let theirs: Vec<u32> =
        holders(&url).into_iter().filter(|(_, h)| h.contains(&format!(":{}:", a.child.id()))).map(|(s, _)| s).collect();
    // (Once every session is kept with its lease, as it is at once after
    // its READY.)
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let mut kept = || -> i64 {
        client.query_one("SELECT count(*) FROM blkc_shards WHERE session_id IS NOT NULL", &[]).unwrap().get(0)
    };
    let until = Instant::now() + Duration::from_secs(5);
    while kept() < 4 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(kept(), 4, "{}", logs());
    proxy.swallow(true);
    let cut_at = Instant::now();
    // Sent while a is cut off: they reach a until it stops its shards, or
    // are replayed to b.
    for (i, shard) in theirs.iter().enumerate() {
        gateway.dispatch(server_of(*shard, 4, 1), "MESSAGE_CREATE", ping(8000 + i as u32));
    }
    let resumed = |g: &ShardedGateway| {
        let after: Vec<u32> = g.resumes().into_iter().filter(|(t, _)| *t > cut_at).map(|(_, s)| s).collect();
        theirs.iter().all(|s| after.contains(s))
    };
    assert!(gateway.wait(Duration::from_secs(25), resumed), "{:?}\n{}", gateway.resumes(), logs());
    assert_eq!(gateway.doubles(), 0, "a shard held by two connections at once\n{}", logs());
    assert!(a.log().contains("may run out: stopped"), "{}", a.log());
    assert!(gateway.wait(Duration::from_secs(5), |g| g.live() == vec![1; 4]), "{:?}", gateway.live());
    // Each ran: by a, which runs what it is sent while its leases hold (the
    // store cannot say whether another ran it), and by b, to which the
    // resumed session replays what a's last kept sequence had not seen.
    // At least once, never lost.
    let pongs = platform.wait_for("/channels/889/messages", theirs.len());
    assert!(pongs.len() >= theirs.len(), "{}", logs());
}

/// `--max-shards` without a PostgreSQL store caps nothing, and such a
/// store has no leases to show: each refused with why.
#[test]
fn max_shards_without_a_shared_store_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bot.blk"), PING).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_blkc"))
        .args(["serve", "bot.blk", "--max-shards", "2"])
        .env("BLKC_BOT_TOKEN", TOKEN)
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("`--max-shards` caps the shards leased through a PostgreSQL store"), "{stderr}");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_blkc"))
        .args(["vars", "shards"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("an SQLite store leases no shards"), "{stderr}");
}

/// The leases' statements alone: a shard is taken by one of two processes
/// taking at once; nothing is taken under a count that has moved; a shard
/// given up is taken with its holder's name and the session it left; the
/// holders are listed the first to join first, whatever their names.
#[test]
fn a_shard_is_taken_by_one_process_and_never_under_a_moved_count() {
    use blkc::run::store::postgres::leases::SavedSession;
    use blkc::run::store::postgres::Pool;
    let Some(pg) = crate::support::postgres::server() else { return };
    let url = pg.store();
    let pools: Vec<_> = (0..2).map(|_| Pool::open(&url).unwrap()).collect();
    assert_eq!(pools[0].shard_count(4, false).unwrap().count, 4);
    // A count that has moved since takes nothing.
    assert!(pools[0].take("a", 8, 4, 10_000).unwrap().is_empty());
    // Two taking all four at once: each shard to one.
    let taken: Vec<Vec<u32>> = std::thread::scope(|s| {
        let handles: Vec<_> = ["a", "b"]
            .iter()
            .zip(&pools)
            .map(|(me, pool)| s.spawn(move || pool.take(me, 4, 4, 10_000).unwrap().iter().map(|t| t.shard).collect()))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut all: Vec<u32> = taken.concat();
    all.sort();
    assert_eq!(all, [0, 1, 2, 3], "{taken:?}");
    // Given up with its session: the next taker is told both.
    let (holder, shard) = if taken[0].is_empty() { ("b", taken[1][0]) } else { ("a", taken[0][0]) };
    let session = SavedSession { id: "s-1".into(), seq: 41, resume_url: "wss://gateway.example".into() };
    pools[0].release(holder, &[(shard, Some(session.clone()))]).unwrap();
    let again = pools[1].take("c", 4, 4, 10_000).unwrap();
    assert_eq!(again.len(), 1);
    assert_eq!((again[0].shard, again[0].previous.as_str()), (shard, holder));
    assert_eq!(again[0].session, Some(session));
    // "z" joins before "m": it stays first (the remainder of a division is
    // the eldest's), and a renewal does not move it back.
    pools[0].renew("z", None, &[], 10_000).unwrap();
    std::thread::sleep(Duration::from_millis(5));
    pools[1].renew("m", Some(2), &[], 10_000).unwrap();
    let standing = pools[0].renew("z", None, &[], 10_000).unwrap();
    assert_eq!(standing.holders, [("z".to_string(), None), ("m".to_string(), Some(2))]);
}
