//! Timed events in `blkc serve`: two servers sharing PostgreSQL over a
//! simulated hour (the tests' faster clock, `BLKC_TEST_CLOCK`, which both
//! compute alike), each tick run once, none replayed.

use crate::serve::serve;
use crate::support::platform::TestPlatform;

const TIMED: &str = r#"event pulse every "2m" channel "4242" {
    reply "tick {tick_time}"
}

event morning at "09:00" in "Europe/Paris" channel "<NEWS_CHANNEL>" {
    reply "Good morning ({tick_time} in {channel_id})"
}
"#;

/// Milliseconds since the epoch of an RFC 3339 instant.
fn ms(text: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(text).unwrap().timestamp_millis()
}

#[test]
fn two_servers_sharing_postgres_run_each_tick_once_over_a_simulated_hour() {
    let Some(pg) = crate::support::postgres::server() else { return };
    let url = pg.store();
    let platform = TestPlatform::start();
    // The clock reads 07:30 UTC (08:30 in Paris, in winter) now and runs
    // 120 times as fast: the hour to 08:30 UTC takes 30 s.
    let anchor = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64;
    let clock = format!("{},{anchor},120", ms("2026-01-15T07:30:00Z"));
    let env = [
        ("BLKC_TEST_CLOCK", clock.as_str()),
        ("BLKC_BOT_TOKEN", "timed.bot.token.0123456789"),
        ("BLKC_SECRET_NEWS_CHANNEL", "777"),
    ];
    let servers: Vec<_> = (0..2).map(|_| serve(TIMED, &platform, None, &["--store", &url], &env)).collect();
    for s in &servers {
        // The start lists each timed event's next ticks.
        let log = s.wait_log("event=morning");
        assert!(log.contains("next=\"2026-01-15T08:00:00Z, 2026-01-16T08:00:00Z"), "{log}");
    }
    let metrics =
        ureq::get(&format!("{}/metrics", servers[0].url)).call().unwrap().body_mut().read_to_string().unwrap();
    assert!(metrics.contains("blkc_timer_next_tick_seconds{event=\"pulse\"}"), "{metrics}");
    // The simulated hour is over when the tick of 08:28 has been posted and
    // every tick posted has its run's ending logged.
    let posted_in = |calls: &[crate::support::platform::Call], channel: &str| -> Vec<String> {
        calls
            .iter()
            .filter(|c| c.method == "POST" && c.path.ends_with(&format!("/channels/{channel}/messages")))
            .map(|c| c.body["content"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    let ran =
        |log: &str| log.lines().filter(|l| l.contains("timed event event=pulse") && l.contains("outcome=ran")).count();
    let last = ms("2026-01-15T08:28:00Z");
    let tick_ms =
        |t: &String| chrono::DateTime::parse_from_rfc3339(t.trim_start_matches("tick ")).map(|t| t.timestamp_millis());
    // One moment's logs and calls (the logs first: a tick posted between
    // the two reads has no ending yet, and the moment is taken again).
    let moment = || {
        let logs: Vec<String> = servers.iter().map(|s| s.log()).collect();
        let calls = platform.calls();
        let ticks = posted_in(&calls, "4242");
        let reached = ticks.iter().any(|t| tick_ms(t).is_ok_and(|t| t >= last));
        let ended: usize = logs.iter().map(|l| ran(l)).sum();
        (reached && ended == ticks.len() && !posted_in(&calls, "777").is_empty()).then_some((calls, logs))
    };
    let logs_now = || servers.iter().map(|s| s.log()).collect::<Vec<_>>();
    let (calls, logs) = crate::support::wait::until(120, moment)
        .unwrap_or_else(|| panic!("the simulated hour never ended: {:#?}", logs_now()));
    let posted = |channel: &str| posted_in(&calls, channel);
    // Every two minutes, each tick once: consecutive, none twice.
    let mut ticks: Vec<i64> = posted("4242").iter().map(|t| ms(t.trim_start_matches("tick "))).collect();
    ticks.sort();
    assert!(ticks.len() >= 26, "{} ticks: {ticks:?}\n{logs:#?}", ticks.len());
    // None from before the servers started (nothing is replayed).
    assert!(ticks[0] > ms("2026-01-15T07:30:00Z"), "{ticks:?}");
    for pair in ticks.windows(2) {
        assert_eq!(pair[1] - pair[0], 120_000, "a tick missed or run twice: {ticks:?}\n{logs:#?}");
    }
    // 09:00 in Paris is 08:00 UTC in winter: once, to the secret's channel.
    assert_eq!(posted("777"), ["Good morning (2026-01-15T08:00:00Z in 777)"], "{logs:#?}");
    // Both servers took part, and each ran its ticks' runs to the end.
    assert_eq!(ran(&logs[0]) + ran(&logs[1]), ticks.len(), "{logs:#?}");
    assert!(logs.iter().all(|l| !l.contains("outcome=failed")), "{logs:#?}");
}

#[test]
fn a_file_with_timed_events_is_not_served_without_the_bot_token() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bot.blk"), TIMED).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_blkc"))
        .args(["serve", "bot.blk"])
        .current_dir(dir.path())
        .env_remove("BLKC_BOT_TOKEN")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && stderr.contains("timed events") && stderr.contains("BLKC_BOT_TOKEN"), "{stderr}");
}
