//! Issue 48, the fifth hardening round: each item's regression test, run
//! against the real binary and the test platform on 127.0.0.1.

use serde_json::{json, Value};

use crate::serve::{content, serve};
use crate::support::platform::{click_showing, command, TestPlatform};
use crate::support::wait::eventually;

/// The rows of components of an answer's message.
fn rows(answer: &crate::support::platform::Answered) -> Value {
    answer.body["data"]["components"].clone()
}

/// The `custom_id` of the component labelled `label` in `rows`.
fn id_of(rows: &Value, label: &str) -> String {
    let all = rows.as_array().into_iter().flatten().flat_map(|r| r["components"].as_array().into_iter().flatten());
    let found = all.clone().find(|c| c["label"] == label || c["placeholder"] == label);
    found.and_then(|c| c["custom_id"].as_str()).unwrap_or_else(|| panic!("no `{label}` in {rows}")).to_string()
}

const PRIZES: &str = r#"command prizes "Prizes" {
    reply {
        text "Prizes"
        button take { label "Take" max_clicks 3 }
        button wait { label "Wait" cooldown 60 }
    }
}

handler take {
    reply "taken"
}

handler wait {
    reply "waited"
}
"#;

/// Item 1: a reload that adds components above others keeps every earlier
/// message's buttons gated by their own limits; a click on a component the
/// file no longer has is answered as stale and never runs.
#[test]
fn a_reload_that_moves_components_keeps_the_limits_of_earlier_buttons() {
    let platform = TestPlatform::start();
    let served = serve(PRIZES, &platform, None, &[], &[]);
    let shown = rows(&served.send(&platform, &command("r1", "prizes", json!([]))));
    let (take, wait) = (id_of(&shown, "Take"), id_of(&shown, "Wait"));
    for i in 0..3 {
        let answer = served.send(&platform, &click_showing(&format!("t{i}"), &take, None, shown.clone()));
        assert_eq!(content(&answer), "taken", "{answer:?}");
    }
    assert_eq!(content(&served.send(&platform, &click_showing("w0", &wait, None, shown.clone()))), "waited");
    // Components added above, in another command and in this reply, of
    // the same handlers and of others.
    let moved = PRIZES.replace(
        "command prizes \"Prizes\" {\n    reply {\n        text \"Prizes\"\n",
        "command other \"Other\" {\n    reply {\n        text \"x\"\n        button take { label \"Also take\" value \"other\" }\n        button wait { label \"W\" value \"w\" }\n    }\n}\n\n\
         command prizes \"Prizes\" {\n    reply {\n        text \"Prizes\"\n        button wait { label \"New\" value \"new\" }\n        button take { label \"Take more\" value \"more\" }\n",
    );
    std::fs::write(&served.file, &moved).unwrap();
    served.signal(libc::SIGHUP);
    served.wait_log("reloaded");
    // The used-up button stays used up; the cooling one stays cooling.
    let again = served.send(&platform, &click_showing("t3", &take, None, shown.clone()));
    assert_eq!(content(&again), "This button has been used its 3 times.", "{again:?}");
    let again = served.send(&platform, &click_showing("w1", &wait, None, shown.clone()));
    assert!(content(&again).starts_with("You can use this again in"), "{again:?}");
    // The component removed: its earlier message's clicks are stale.
    let gone = moved.replace("        button wait { label \"Wait\" cooldown 60 }\n", "");
    std::fs::write(&served.file, &gone).unwrap();
    served.signal(libc::SIGHUP);
    assert!(eventually(30, || served.log().matches("reloaded").count() == 2), "{}", served.log());
    let stale = served.send(&platform, &click_showing("w2", &wait, None, shown.clone()));
    assert!(content(&stale).contains("no longer does anything"), "{stale:?}");
    assert!(served.wait_interaction("w2").contains("outcome=stale"), "{}", served.log());
    assert!(!served.log().contains("id=w2 command=wait outcome=answered"));
}

/// Item 6: a choice the menu never offered never reaches the handler, and
/// a button's `{value}` is its own, whatever `values` a click carries.
#[test]
fn a_forged_choice_is_refused_and_a_button_s_value_is_its_own() {
    let platform = TestPlatform::start();
    let program = r#"command roles "Pick a role" {
    reply {
        text "Roles"
        select pick { placeholder "Roles" choice "Red" "111" choice "Blue" "222" }
        button show { label "Show" value "mine" }
    }
}

handler pick {
    reply { ephemeral text "given {values}" }
}

handler show {
    reply { ephemeral text "value {value}" }
}
"#;
    let served = serve(program, &platform, None, &[], &[]);
    let shown = rows(&served.send(&platform, &command("p1", "roles", json!([]))));
    let (pick, show) = (id_of(&shown, "Roles"), id_of(&shown, "Show"));
    let offered = served.send(&platform, &click_showing("p2", &pick, Some(json!(["222"])), shown.clone()));
    assert_eq!(content(&offered), "given 222", "{offered:?}");
    for (id, values) in [("p3", json!(["999"])), ("p4", json!(["111", "999"])), ("p5", json!(["111", "222"]))] {
        let forged = served.send(&platform, &click_showing(id, &pick, Some(values), shown.clone()));
        assert!(content(&forged).contains("no longer does anything"), "{forged:?}");
    }
    // A menu the message does not show under that id.
    let elsewhere = json!([{ "type": 1, "components": [{ "type": 3, "custom_id": "other", "options": [] }] }]);
    let forged = served.send(&platform, &click_showing("p6", &pick, Some(json!(["111"])), elsewhere));
    assert!(content(&forged).contains("no longer does anything"), "{forged:?}");
    // A button clicked with forged values: its own value.
    let mut click = click_showing("p7", &show, None, shown.clone());
    click["data"]["values"] = json!(["999"]);
    assert_eq!(content(&served.send(&platform, &click)), "value mine");
    let log = served.wait_interaction("p6");
    assert!(log.contains("a value its menu did not offer"), "{log}");
    assert_eq!(log.matches("outcome=stale").count(), 4, "{log}");
}

/// Item 5: a button on a guarded command's reply holds the command's
/// `require` lines; the same handler's button on an unguarded reply does
/// not.
#[test]
fn a_button_on_a_guarded_reply_holds_the_guard() {
    let platform = TestPlatform::start();
    let program = r#"command ban "Ban someone" {
    require permissions ban_members
    reply {
        text "Ban?"
        button confirm { label "Confirm" value "ban" }
    }
}

command hello "Hello" {
    reply {
        text "Hi"
        button confirm { label "Wave" value "wave" }
    }
}

handler confirm {
    reply "confirmed {value}"
}
"#;
    let served = serve(program, &platform, None, &[], &[]);
    let as_member = |mut body: Value, permissions: u64| {
        body["member"]["permissions"] = json!(permissions.to_string());
        body
    };
    let ban_members = 1u64 << 2;
    let shown = rows(&served.send(&platform, &as_member(command("b1", "ban", json!([])), ban_members)));
    let confirm = id_of(&shown, "Confirm");
    let refused = served.send(&platform, &as_member(click_showing("b2", &confirm, None, shown.clone()), 0));
    assert_eq!(content(&refused), "You need the Ban Members permission to use this.", "{refused:?}");
    assert!(served.wait_interaction("b2").contains("outcome=guarded"), "{}", served.log());
    let allowed = served.send(&platform, &as_member(click_showing("b3", &confirm, None, shown), ban_members));
    assert_eq!(content(&allowed), "confirmed ban");
    // The same handler from an unguarded reply runs for anyone.
    let shown = rows(&served.send(&platform, &as_member(command("h1", "hello", json!([])), 0)));
    let wave = id_of(&shown, "Wave");
    let anyone = served.send(&platform, &as_member(click_showing("h2", &wave, None, shown), 0));
    assert_eq!(content(&anyone), "confirmed wave");
    // `blkc run` holds a component's whole id to the same guards.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bot.blk"), program).unwrap();
    let run = |id: &str, permissions: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_blkc"))
            .args(["run", "bot.blk", "--component", id, "--permissions", permissions])
            .current_dir(dir.path())
            .output()
            .unwrap()
    };
    let refused = run(&confirm, "");
    assert!(!refused.status.success(), "{refused:?}");
    assert!(String::from_utf8_lossy(&refused.stderr).contains("Ban Members"), "{refused:?}");
    assert_eq!(String::from_utf8_lossy(&run(&confirm, "ban_members").stdout), "confirmed ban\n");
    assert_eq!(String::from_utf8_lossy(&run(&wave, "").stdout), "confirmed wave\n");
}

/// Item 4: a `per server` cooldown used in direct messages is each
/// conversation's, not one for every direct message.
#[test]
fn a_per_server_cooldown_in_direct_messages_is_each_user_s() {
    let platform = TestPlatform::start();
    let program = r#"command daily "Daily" cooldown "1d" per server {
    contexts server, bot_dm
    reply "claimed"
}
"#;
    let served = serve(program, &platform, None, &[], &[]);
    let dm = |id: &str, user: &str, channel: &str| {
        let mut body = command(id, "daily", json!([]));
        let body_map = body.as_object_mut().unwrap();
        body_map.remove("member");
        body_map.remove("guild_id");
        body["user"] = json!({ "id": user, "username": format!("u{user}") });
        body["channel_id"] = json!(channel);
        body
    };
    assert_eq!(content(&served.send(&platform, &dm("d1", "2001", "9001"))), "claimed");
    assert_eq!(content(&served.send(&platform, &dm("d2", "2002", "9002"))), "claimed", "another user's DM");
    let again = served.send(&platform, &dm("d3", "2001", "9001"));
    assert!(content(&again).starts_with("This can be used again in this channel in"), "{again:?}");
    // In a server, one wait for everyone there, as before.
    assert_eq!(content(&served.send(&platform, &command("s1", "daily", json!([])))), "claimed");
    let mut other = command("s2", "daily", json!([]));
    other["member"]["user"]["id"] = json!("1002");
    assert!(content(&served.send(&platform, &other)).contains("in this server"));
}

/// `blkc check --format json` on `program`: each diagnostic's code and
/// message, and the whole output for a failed assertion.
fn check(program: &str) -> (Vec<(String, String)>, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bot.blk"), program).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_blkc"))
        .args(["check", "bot.blk", "--format", "json"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let json: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    let found = json["diagnostics"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| (d["code"].as_str().unwrap_or_default().to_string(), d.to_string()))
        .collect();
    (found, text)
}

/// Items 16, 17 and 18: what the platform refuses in a message is an error
/// of `blkc check`: a URL over its length, an emoji it does not take, a
/// menu asking for more than it offers.
#[test]
fn what_the_platform_refuses_in_a_message_does_not_check_clean() {
    let long = format!("https://example.com/{}", "a".repeat(2048));
    let cases = [
        (format!("embed {{ title \"t\" url \"{long}\" }}"), "B410", "2048"),
        (format!("embed {{ title \"t\" image \"{long}\" }}"), "B410", "2048"),
        (format!("button {{ label \"Docs\" url \"{}\" }}", &long[..600]), "B410", "512"),
        ("button b { label \"Like\" emoji \":thumbsup:\" }".to_string(), "B418", "👍"),
        ("button b { label \"Like\" emoji \"thumbsup\" }".to_string(), "B418", "👍"),
        ("button b { label \"Blob\" emoji \"<:blob:abc>\" }".to_string(), "B418", "its id"),
        (format!("button b {{ label \"Blob\" emoji \"<:{}:12345>\" }}", "x".repeat(33)), "B418", "32"),
        ("select s { min 3 max 3 choice \"A\" \"a\" choice \"B\" \"b\" }".to_string(), "B418", "min 3"),
        ("select s { min 2 choice \"A\" \"a\" choice \"B\" \"b\" }".to_string(), "B418", "no `max`"),
        ("select s { max 3 choice \"A\" \"a\" choice \"B\" \"b\" }".to_string(), "B418", "max 3"),
    ];
    for (part, code, said) in cases {
        let program = format!(
            "command c \"C\" {{\n    reply {{\n        text \"x\"\n        {part}\n    }}\n}}\n\nhandler b {{\n    reply \"b\"\n}}\n\nhandler s {{\n    reply \"s\"\n}}\n"
        );
        let (found, text) = check(&program);
        assert!(found.iter().any(|(c, d)| c == code && d.contains(said)), "{part}: {text}");
    }
    // What the platform takes checks clean.
    let good = "command c \"C\" {\n    reply {\n        text \"x\"\n        button b { label \"Like\" emoji \"👍\" }\n        \
                button b { label \"Blob\" emoji \"<a:blob_2:123456789012345678>\" }\n        \
                select s { min 2 max 2 choice \"A\" \"a\" choice \"B\" \"b\" }\n    }\n}\n\nhandler b {\n    reply \"b\"\n}\n\nhandler s {\n    reply \"s\"\n}\n";
    let (found, text) = check(good);
    assert!(found.is_empty(), "{text}");
}

/// Items 15, 16 and 17 at run time: what a run fills in is kept to the
/// platform's limits (every embed's total, URLs' lengths, emoji), with a
/// warning, never sent for the platform to refuse.
#[test]
fn what_a_run_fills_in_is_kept_to_the_platform_s_rules() {
    let platform = TestPlatform::start();
    let fields: String = (0..8).map(|i| format!("            field \"f{i}\" \"{{option_text}}\"\n")).collect();
    let program = format!(
        "command big \"Big\" {{\n    option text \"Text\" required\n    option link \"Link\" required\n    option emoji \"Emoji\" required\n    \
         reply {{\n        text \"x\"\n        embed {{\n            title \"t\"\n            url \"{{option_link}}\"\n{fields}        }}\n        \
         button b {{ label \"Go\" emoji \"{{option_emoji}}\" }}\n        button {{ label \"Link\" url \"{{option_link}}\" }}\n    }}\n}}\n\nhandler b {{\n    reply \"b\"\n}}\n"
    );
    let served = serve(&program, &platform, None, &[], &[]);
    let options = json!([
        { "name": "text", "type": 3, "value": "v".repeat(1000) },
        { "name": "link", "type": 3, "value": format!("https://example.com/{}", "a".repeat(2100)) },
        { "name": "emoji", "type": 3, "value": ":thumbsup:" },
    ]);
    let answer = served.send(&platform, &command("e1", "big", options));
    let embed = &answer.body["data"]["embeds"][0];
    let total: usize = ["title", "description"]
        .iter()
        .map(|k| embed[k].as_str().map_or(0, |t| t.encode_utf16().count()))
        .sum::<usize>()
        + embed["fields"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|f| {
                f["name"].as_str().unwrap().encode_utf16().count() + f["value"].as_str().unwrap().encode_utf16().count()
            })
            .sum::<usize>();
    assert!(total <= 6000, "{total} characters in the embeds: {answer:?}");
    assert!(embed["url"].is_null(), "a URL over 2,048 characters is left out: {embed}");
    let buttons = &answer.body["data"]["components"][0]["components"];
    assert!(buttons[0]["emoji"].is_null(), "a shortcode is no emoji: {buttons}");
    assert_eq!(buttons[1]["disabled"], true, "a link over 512 characters: {buttons}");
    assert!(buttons[1]["url"].as_str().is_some_and(|u| u.len() <= 512), "{buttons}");
    let log = served.wait_log("warnings=");
    assert!(log.contains("B326"), "{log}");
}

/// Milliseconds since the epoch, now and of an RFC 3339 instant.
fn epoch_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64
}

fn ms(text: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(text).unwrap().timestamp_millis()
}

/// The texts posted to channel `channel` so far.
fn posted(platform: &TestPlatform, channel: &str) -> Vec<String> {
    let path = format!("/channels/{channel}/messages");
    let calls = platform.calls();
    let posts = calls.iter().filter(|c| c.method == "POST" && c.path.ends_with(&path));
    posts.map(|c| c.body["content"].as_str().unwrap_or_default().to_string()).collect()
}

/// Item 2: while the store is down no process runs a tick it cannot claim
/// (two processes posted every tick of an outage twice); each is skipped,
/// logged as unclaimed and counted.
#[test]
fn no_tick_is_posted_twice_while_the_store_is_down() {
    let Some(pg) = crate::support::postgres::durable_server() else { return };
    let url = pg.store();
    let platform = TestPlatform::start();
    let program = "event pulse every \"2m\" channel \"4242\" {\n    reply \"tick {tick_time}\"\n}\n";
    // A tick every second of the system's time.
    let clock = format!("{},{},120", ms("2026-01-15T07:30:00Z"), epoch_ms());
    let env = [("BLKC_TEST_CLOCK", clock.as_str()), ("BLKC_BOT_TOKEN", "timed.bot.token.0123456789")];
    let servers: Vec<_> = (0..2).map(|_| serve(program, &platform, None, &["--store", &url], &env)).collect();
    assert!(eventually(60, || posted(&platform, "4242").len() >= 3), "{}", servers[0].log());
    pg.crash();
    let unclaimed =
        || servers.iter().any(|s| s.log().contains("outcome=\"unclaimed\"") || s.log().contains("a tick was not run"));
    assert!(eventually(60, unclaimed), "{}\n{}", servers[0].log(), servers[1].log());
    // Ticks keep coming through the outage: several go unclaimed.
    let count = |s: &crate::serve::Served| s.log().matches("a tick was not run").count();
    assert!(eventually(60, || servers.iter().map(count).sum::<usize>() >= 4), "{}", servers[0].log());
    let during = posted(&platform, "4242").len();
    pg.restart();
    assert!(eventually(90, || posted(&platform, "4242").len() >= during + 3), "{}", servers[0].log());
    let mut ticks = posted(&platform, "4242");
    let all = ticks.len();
    ticks.sort();
    ticks.dedup();
    assert_eq!(ticks.len(), all, "a tick was posted twice: {ticks:?}\n{}\n{}", servers[0].log(), servers[1].log());
    let metrics =
        ureq::get(&format!("{}/metrics", servers[0].url)).call().unwrap().body_mut().read_to_string().unwrap();
    let other = ureq::get(&format!("{}/metrics", servers[1].url)).call().unwrap().body_mut().read_to_string().unwrap();
    assert!(metrics.contains("outcome=\"unclaimed\"") || other.contains("outcome=\"unclaimed\""), "{metrics}");
}

/// Item 3: a tick whose process is killed mid-run is taken over by another
/// once its claim's lease lapses (it was kept for two days, so no process
/// posted it).
#[test]
fn a_tick_whose_process_is_killed_mid_run_is_taken_over() {
    let Some(pg) = crate::support::postgres::server() else { return };
    let url = pg.store();
    let platform = TestPlatform::start();
    let api = crate::support::server::TestServer::start();
    let program = "event nightly at \"08:00\" channel \"4242\" {\n    api slow {\n        method GET\n        \
                   url \"@API@/held?process=<WHO>\"\n    }\n    reply \"ran\"\n}\n";
    // The tick comes 20 s after now, on the system's time.
    let clock = format!("{},{},1", ms("2026-01-15T07:59:40Z"), epoch_ms());
    let servers: Vec<_> = ["process-a", "process-b"]
        .iter()
        .map(|who| {
            let env = [
                ("BLKC_TEST_CLOCK", clock.as_str()),
                ("BLKC_BOT_TOKEN", "timed.bot.token.0123456789"),
                ("BLKC_SECRET_WHO", who),
            ];
            serve(program, &platform, Some(&api), &["--store", &url], &env)
        })
        .collect();
    assert!(eventually(60, || !api.received().is_empty()), "{}", servers[0].log());
    let first = api.received()[0].url.clone();
    let claimer = usize::from(first.ends_with("process=process-b"));
    let mut servers = servers;
    let mut killed = servers.remove(claimer);
    killed.child.kill().unwrap();
    killed.child.wait().unwrap();
    let kill = std::time::Instant::now();
    api.open();
    let survivor = &servers[0];
    assert!(eventually(90, || posted(&platform, "4242").len() == 1), "{}", survivor.log());
    eprintln!("a tick whose process was killed mid-run: posted by the other {:?} after the kill", kill.elapsed());
    assert!(survivor.log().contains("took over a tick"), "{}", survivor.log());
    assert_eq!(api.received().len(), 2, "run again by the survivor");
    assert_eq!(posted(&platform, "4242"), ["ran"]);
}

/// Item 11: `play` on an address beyond loopback is refused unless
/// `--expose` says so, and then warns what it exposes.
#[test]
fn play_beyond_loopback_needs_expose_and_says_what_it_exposes() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bot.blk"), "command c \"C\" {\n    reply \"hi\"\n}\n").unwrap();
    let start = |extra: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_blkc"))
            .args(["play", "bot.blk", "--offline", "--listen", "0.0.0.0:0"])
            .args(extra)
            .current_dir(dir.path())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let mut refused = start(&[]);
    let ended = eventually(20, || refused.try_wait().unwrap().is_some());
    if !ended {
        let _ = refused.kill();
    }
    let out = refused.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(ended && !out.status.success(), "it served: {stderr}");
    assert!(stderr.contains("--expose") && stderr.contains("secrets"), "{stderr}");
    let mut exposed = start(&["--expose"]);
    let mut err = std::io::BufReader::new(exposed.stderr.take().unwrap());
    let mut first = String::new();
    std::io::BufRead::read_line(&mut err, &mut first).unwrap();
    let _ = exposed.kill();
    let _ = exposed.wait();
    assert!(first.contains("warning") && first.contains("secrets"), "{first}");
}

const TYPED: &str = r#"command ping "Ping" {
    reply "pong"
}

command forecast "Forecast" {
    option city "The city" required autocomplete {
        api places {
            method GET
            url "@API@/held"
        }
        choice "Paris" "paris"
    }
    reply "for {option_city}"
}
"#;

/// Item 10: a flood of keystrokes, each user within their rate, into an
/// autocomplete whose API does not answer, never delays a command: the
/// keystrokes have a share of threads of their own.
#[test]
fn a_flood_of_keystrokes_never_delays_a_command() {
    let platform = TestPlatform::start();
    let api = crate::support::server::TestServer::start();
    let served = std::sync::Arc::new(serve(TYPED, &platform, Some(&api), &["--workers", "8"], &[]));
    let typing = json!([{ "name": "city", "type": 3, "value": "Pa", "focused": true }]);
    let flood: Vec<_> = (0..200)
        .map(|i| {
            let mut body = crate::support::platform::keystroke(&format!("k{i}"), "forecast", typing.clone());
            body["member"]["user"]["id"] = json!(format!("{}", 5000 + i));
            let bytes = serde_json::to_vec(&body).unwrap();
            let (signature, url) = (platform.sign(&bytes, 0), served.interactions());
            std::thread::spawn(move || crate::support::platform::try_post(&url, &bytes, Some(signature)))
        })
        .collect();
    // The keystrokes wait on the API (their threads are all taken) while
    // commands are answered with their reply, never "thinking".
    assert!(eventually(30, || !api.received().is_empty()), "{}", served.log());
    let mut slowest = std::time::Duration::ZERO;
    for i in 0..10 {
        let answer = served.send(&platform, &command(&format!("p{i}"), "ping", json!([])));
        assert_eq!((answer.body["type"].clone(), content(&answer)), (json!(4), "pong"), "{answer:?}");
        slowest = slowest.max(answer.took);
    }
    eprintln!("200 keystrokes waiting on a held API: 10 commands answered, the slowest in {slowest:?}");
    api.open();
    for keystroke in flood {
        let answered = keystroke.join().unwrap().expect("every keystroke answered");
        assert_eq!(answered.body["type"], 8, "{answered:?}");
    }
}

/// Item 10: a keystroke past its user's rate costs nothing: no replay
/// check with the store and no write to it (each wrote a row of
/// `blkc_seen` in PostgreSQL).
#[test]
fn a_refused_keystroke_writes_nothing_to_the_store() {
    let Some(pg) = crate::support::postgres::server() else { return };
    let url = pg.store();
    let platform = TestPlatform::start();
    let api = crate::support::server::TestServer::start();
    api.open();
    let served = serve(TYPED, &platform, Some(&api), &["--store", &url], &[]);
    let typing = json!([{ "name": "city", "type": 3, "value": "Pa", "focused": true }]);
    for i in 0..20 {
        let body = crate::support::platform::keystroke(&format!("r{i}"), "forecast", typing.clone());
        assert_eq!(served.send(&platform, &body).body["type"], 8);
    }
    assert_eq!(content(&served.send(&platform, &command("r-cmd", "ping", json!([])))), "pong");
    let mut admin = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let rows: i64 = admin.query_one("SELECT count(*) FROM blkc_seen WHERE id LIKE 'interaction%'", &[]).unwrap().get(0);
    assert_eq!(rows, 1, "only the command is kept across processes");
    assert!(served.wait_interaction("r19").contains("outcome=limited"), "{}", served.log());
}

/// Item 7: a variable has a bound in bytes, stated in a clear error; what
/// a run reads from the store is charged to its memory; a form's field is
/// held to its input's declared length.
#[test]
fn variables_and_form_fields_are_bounded_in_bytes() {
    let platform = TestPlatform::start();
    let program = r#"var notes per server = []

command add "Add a note" {
    option text "The note" required
    save notes append "{option_text}"
    reply "added"
}

command read "Read the notes" {
    reply "{notes|count} notes"
}

command ask "Ask" {
    form got {
        title "Ask"
        input topic { label "Topic" max 10 }
    }
}

handler got {
    reply "got {field_topic}"
}
"#;
    let served = serve(program, &platform, None, &["--max-run-memory", "600000"], &[]);
    let note = |id: &str| {
        let options = json!([{ "name": "text", "type": 3, "value": "n".repeat(6000) }]);
        served.send(&platform, &command(id, "add", options))
    };
    // About 100 notes fit in the run's 600,000 bytes; the read of the
    // list is charged, and past it a run fails, saying why.
    let mut added = 0;
    while added < 200 && content(&note(&format!("a{added}"))) == "added" {
        added += 1;
    }
    assert!((90..110).contains(&added), "{added} notes of 6,000 characters: {}", served.log());
    let log = served.wait_interaction(&format!("a{added}"));
    assert!(log.contains("B321") && log.contains("`notes`"), "{log}");
    let read = served.send(&platform, &command("r1", "read", json!([])));
    assert_eq!(content(&read), crate::serve::FAILED_WORD, "{read:?}");
    drop(served);
    // With the default memory, the list stops at the bound in bytes.
    let served = serve(program, &platform, None, &[], &[]);
    let mut added = 0;
    while added < 400
        && content(&{
            let options = json!([{ "name": "text", "type": 3, "value": "n".repeat(6000) }]);
            served.send(&platform, &command(&format!("b{added}"), "add", options))
        }) == "added"
    {
        added += 1;
    }
    assert!((170..180).contains(&added), "{added} notes of 6,000 characters");
    let log = served.wait_interaction(&format!("b{added}"));
    assert!(log.contains("B327") && log.contains("a variable holds at most 1,048,576"), "{log}");
    // A form's field longer than its input's `max` never reaches the handler.
    let form = served.send(&platform, &command("f1", "ask", json!([])));
    let id = form.body["data"]["custom_id"].as_str().unwrap().to_string();
    let sent = crate::support::platform::submit("f2", &id, &[("topic", "short")], false);
    assert_eq!(content(&served.send(&platform, &sent)), "got short");
    let sent = crate::support::platform::submit("f3", &id, &[("topic", &"x".repeat(4000))], false);
    assert_eq!(content(&served.send(&platform, &sent)), crate::serve::FAILED_WORD);
    let log = served.wait_interaction("f3");
    assert!(log.contains("its input takes 10"), "{log}");
}
