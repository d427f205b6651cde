//! `blkc serve` on the Gateway: a test Gateway on 127.0.0.1 speaking the
//! protocol, the test platform, and the binary. Nothing is mocked.

use std::time::Duration;

use serde_json::json;

use crate::serve::serve;
use crate::support::gateway::{Control, TestGateway};
use crate::support::platform::TestPlatform;

const TOKEN: &str = "bot-token-abcdefghijklmnop";

const WELCOME: &str = r#"event member_join {
    reply "Welcome {user_mention} to {server_name}, member #{member_count}! See #{channel_name}"
}
event message_create {
    if "{message_content}" == "!ping" {
        reply "pong in #{channel_name}"
    }
}
"#;

fn start(program: &str, shards: u32, args: &[&str]) -> (TestPlatform, TestGateway, crate::serve::Served) {
    let platform = TestPlatform::start();
    let gateway = TestGateway::start(200);
    platform.set_gateway(gateway.bot_info(shards));
    let served = serve(program, &platform, None, args, &[("BLKC_BOT_TOKEN", TOKEN)]);
    (platform, gateway, served)
}

fn member_join(id: &str) -> serde_json::Value {
    json!({ "guild_id": "777", "user": { "id": id, "username": format!("user{id}") } })
}

#[test]
fn identify_asks_for_the_intents_the_file_needs_and_heartbeats_keep_time() {
    let (_platform, gateway, _served) = start(WELCOME, 1, &[]);
    let identify = gateway.wait_op(2, 1);
    assert_eq!(identify.len(), 1);
    let d = &identify[0].2["d"];
    assert_eq!(d["token"], TOKEN);
    // GUILDS | GUILD_MEMBERS | GUILD_MESSAGES | MESSAGE_CONTENT, and no more.
    assert_eq!(d["intents"], (1 << 0) | (1 << 1) | (1 << 9) | (1 << 15));
    assert_eq!(d["shard"], json!([0, 1]));
    // Issue 48, item 13: only the fields the platform documents for
    // IDENTIFY (no `capabilities`, no `presence` of null).
    let keys: Vec<&str> = d.as_object().unwrap().keys().map(String::as_str).collect();
    let mut keys = keys;
    keys.sort_unstable();
    assert_eq!(keys, ["compress", "intents", "large_threshold", "properties", "shard", "token"]);
    let mut properties: Vec<&str> = d["properties"].as_object().unwrap().keys().map(String::as_str).collect();
    properties.sort_unstable();
    assert_eq!(properties, ["browser", "device", "os"]);
    let beats = gateway.wait_op(1, 8);
    assert!(beats.len() >= 8);
    // Every 200 ms, after the first: none early, and on time on the whole
    // (one wake-up a loaded machine delays does not make a late rhythm).
    let gaps: Vec<Duration> = beats.windows(2).skip(1).map(|p| p[1].1.duration_since(p[0].1)).collect();
    assert!(gaps.iter().all(|gap| *gap >= Duration::from_millis(180)), "heartbeat gaps {gaps:?}");
    let mean = gaps.iter().sum::<Duration>() / gaps.len() as u32;
    assert!(mean < Duration::from_millis(320), "heartbeat gaps {gaps:?}");
    assert!(beats[1].2["d"].as_u64().unwrap() >= 2, "a heartbeat carries the last sequence: {:?}", beats[1].2);
}

/// Issue 48, item 14: a heartbeat the Gateway asks for is answered at
/// once, even right after the shard's own (three asked in a row were
/// answered once: the rest fell within a second of the first).
#[test]
fn every_heartbeat_the_gateway_asks_for_is_answered() {
    let platform = TestPlatform::start();
    // The shard's own beats a minute apart: what is answered was asked.
    let gateway = TestGateway::start(60_000);
    platform.set_gateway(gateway.bot_info(1));
    let _served = serve(WELCOME, &platform, None, &[], &[("BLKC_BOT_TOKEN", TOKEN)]);
    gateway.wait_op(2, 1);
    let before = gateway.sent_op(1).len();
    gateway.control(crate::support::gateway::Control::Beats(3));
    let beats = gateway.wait_op(1, before + 3);
    assert!(beats.len() >= before + 3, "{} of 3 asked heartbeats answered", beats.len() - before);
}

#[test]
fn a_dispatch_runs_its_tree_and_the_reply_reaches_the_channel_but_not_for_the_bot_s_own_messages() {
    let (platform, gateway, served) = start(WELCOME, 1, &[]);
    gateway.wait_op(2, 1);
    gateway.dispatch("GUILD_MEMBER_ADD", member_join("1001"));
    let sent = platform.wait_for("/channels/888/messages", 1);
    assert_eq!(sent.len(), 1, "{}", served.log());
    assert_eq!(sent[0].body["content"], "Welcome <@1001> to Test Server, member #11! See #general");
    assert_eq!(sent[0].authorization.as_deref(), Some("Bot bot-token-abcdefghijklmnop"));
    assert_eq!(sent[0].body["allowed_mentions"], json!({ "parse": [], "users": ["1001"] }));
    // The bot's own "!ping" triggers nothing; a user's does.
    let message = |author: &str, id: &str| json!({ "guild_id": "777", "channel_id": "889", "id": id, "content": "!ping", "author": { "id": author, "username": "x" } });
    gateway.dispatch("MESSAGE_CREATE", message("999", "1"));
    gateway.dispatch("MESSAGE_CREATE", message("1001", "2"));
    // The shard reads its dispatches in order: once the user's message has
    // ended, the bot's own, before it, was judged already.
    let log = served.wait_log("kind=message_create");
    assert_eq!(log.matches("kind=message_create").count(), 1, "{log}");
    let sent = platform.wait_for("/channels/889/messages", 1);
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].body["content"], "pong in #random");
    assert!(!log.contains(TOKEN), "{log}");
    let metrics = ureq::get(&format!("{}/metrics", served.url)).call().unwrap().body_mut().read_to_string().unwrap();
    for line in [
        "blkc_events_total{kind=\"member_join\",outcome=\"ran\"} 1",
        "blkc_events_total{kind=\"message_create\",outcome=\"ran\"} 1",
        "blkc_gateway_total{what=\"identify\"} 1",
    ] {
        assert!(metrics.contains(line), "{line} in {metrics}");
    }
    assert!(!metrics.contains("blkc_gateway_heartbeat_seconds 0\n"), "{metrics}");
}

#[test]
fn an_event_in_its_cooldown_is_skipped_and_logged() {
    let program = r#"event member_join cooldown "1h" per server {
    reply "Welcome {user_mention}"
}
"#;
    let (platform, gateway, served) = start(program, 1, &[]);
    gateway.wait_op(2, 1);
    gateway.dispatch("GUILD_MEMBER_ADD", member_join("1003"));
    gateway.dispatch("GUILD_MEMBER_ADD", member_join("1004"));
    let log = served.wait_log("outcome=cooldown");
    assert!(log.contains("kind=member_join") && log.contains("outcome=cooldown"), "{log}");
    let sent = platform.wait_for("/channels/888/messages", 1);
    assert_eq!(sent.len(), 1, "one welcome an hour in a server: {}", served.log());
    // The two run at once: whichever the store saw first is welcomed.
    let content = sent[0].body["content"].as_str().unwrap_or_default();
    assert!(["Welcome <@1003>", "Welcome <@1004>"].contains(&content), "{content}");
    // Both have ended (one ran, one in its cooldown): nothing more comes.
    let ended = || served.log().matches("kind=member_join").count() == 2;
    assert!(crate::support::wait::eventually(20, ended), "{}", served.log());
    assert_eq!(platform.calls().iter().filter(|c| c.path.contains("/channels/888/messages")).count(), 1);
}

#[test]
fn an_event_s_reply_posts_its_embed_in_the_channel() {
    let program = r##"event member_join {
    reply {
        text "Welcome {user_mention}"
        embed {
            title "Welcome to {server_name}"
            description "You are member #{member_count}."
            color "#57F287"
            field "Read first" "the rules" inline
        }
    }
}
"##;
    let (platform, gateway, served) = start(program, 1, &[]);
    gateway.wait_op(2, 1);
    gateway.dispatch("GUILD_MEMBER_ADD", member_join("1002"));
    let sent = platform.wait_for("/channels/888/messages", 1);
    assert_eq!(sent.len(), 1, "{}", served.log());
    let body = &sent[0].body;
    assert_eq!(body["content"], "Welcome <@1002>");
    assert!(body["flags"].is_null(), "{body}");
    let embed = &body["embeds"][0];
    assert_eq!(embed["title"], "Welcome to Test Server");
    assert_eq!(embed["description"], "You are member #11.");
    assert_eq!(embed["color"], 0x57F287);
    assert_eq!(embed["fields"], json!([{ "name": "Read first", "value": "the rules", "inline": true }]));
}

#[test]
fn a_dropped_connection_resumes_and_receives_what_it_missed() {
    let (platform, gateway, _served) = start(WELCOME, 1, &[]);
    gateway.wait_op(2, 1);
    gateway.dispatch("GUILD_MEMBER_ADD", member_join("1"));
    platform.wait_for("/channels/888/messages", 1);
    gateway.control(Control::Drop);
    // Dispatched while the bot is away: replayed on RESUME.
    gateway.dispatch("GUILD_MEMBER_ADD", member_join("2"));
    let resume = gateway.wait_op(6, 1);
    assert_eq!(resume.len(), 1);
    assert_eq!(resume[0].2["d"]["session_id"], "session-1");
    assert_eq!(resume[0].2["d"]["seq"], 3);
    let sent = platform.wait_for("/channels/888/messages", 2);
    assert_eq!(sent.len(), 2);
    assert!(sent[1].body["content"].as_str().unwrap().starts_with("Welcome <@2>"));
    // One identify in all: the session went on.
    assert_eq!(gateway.sent_op(2).len(), 1);
}

#[test]
fn reconnect_and_invalid_session_are_handled_both_ways() {
    let (_platform, gateway, served) = start(WELCOME, 1, &[]);
    gateway.wait_op(2, 1);
    gateway.control(Control::Reconnect);
    assert_eq!(gateway.wait_op(6, 1).len(), 1, "op 7 resumes");
    gateway.control(Control::Invalid(true));
    assert_eq!(gateway.wait_op(6, 2).len(), 2, "op 9 true resumes");
    assert_eq!(gateway.sent_op(2).len(), 1);
    gateway.control(Control::Invalid(false));
    assert_eq!(gateway.wait_op(2, 2).len(), 2, "op 9 false identifies afresh");
    assert!(served.log().contains("invalidated the session"));
}

#[test]
fn a_missing_ack_is_a_zombie_connection_that_reconnects() {
    let (_platform, gateway, served) = start(WELCOME, 1, &[]);
    gateway.wait_op(2, 1);
    gateway.set_ack(false);
    let resumed = gateway.wait_op(6, 1);
    assert_eq!(resumed.len(), 1, "{}", served.log());
    assert!(served.log().contains("zombie"));
    assert!(gateway.connections() >= 2);
}

#[test]
fn fatal_close_codes_stop_the_server_with_what_to_fix_and_no_retry_loop() {
    for (code, says) in [(4004, "Reset Token"), (4014, "Server Members Intent")] {
        let (_platform, gateway, mut served) = start(WELCOME, 1, &[]);
        gateway.wait_op(2, 1);
        gateway.control(Control::Close(code));
        let status = served.child.wait().unwrap();
        assert_eq!(status.code(), Some(3), "{}", served.log());
        let log = served.log();
        assert!(log.contains(says) && log.contains(&format!("close code {code}")), "{log}");
        assert_eq!(gateway.connections(), 1, "no retry after {code}");
    }
}

#[test]
fn shards_identify_with_their_id_and_count() {
    let (_platform, gateway, _served) = start(WELCOME, 2, &["--shard", "1/3"]);
    let identify = gateway.wait_op(2, 1);
    assert_eq!(identify[0].2["d"]["shard"], json!([1, 3]));
    let (_platform, gateway, _served) = start(WELCOME, 2, &[]);
    let identify = gateway.wait_op(2, 2);
    let mut shards: Vec<_> = identify.iter().map(|i| i.2["d"]["shard"].clone()).collect();
    shards.sort_by_key(|s| s[0].as_u64());
    assert_eq!(shards, [json!([0, 2]), json!([1, 2])]);
}

#[test]
fn a_command_knows_its_server_s_name_from_the_gateway_s_cache() {
    let program =
        format!("{WELCOME}command where \"Where am I\" {{\n    reply \"{{server_name}} #{{channel_name}}\"\n}}\n");
    let (platform, gateway, served) = start(&program, 1, &[]);
    gateway.wait_op(2, 1);
    // GUILD_CREATE has come before the first heartbeat's ACK.
    gateway.wait_op(1, 2);
    let mut interaction = crate::support::platform::command("g1", "where", json!([]));
    interaction["channel"] = serde_json::Value::Null;
    let bytes = serde_json::to_vec(&interaction).unwrap();
    let answer =
        crate::support::platform::post(&format!("{}/interactions", served.url), &bytes, Some(platform.sign(&bytes, 0)));
    assert_eq!(answer.body["data"]["content"], "Test Server #general");
}

/// Two processes holding the same shard (as in a hand-over) and sharing a
/// PostgreSQL store: each dispatch reaches both, and runs once.
#[test]
fn two_servers_holding_one_shard_run_each_event_once_through_the_store() {
    let Some(pg) = crate::support::postgres::server() else { return };
    let url = pg.store();
    let platform = TestPlatform::start();
    let gateway = TestGateway::start(200);
    platform.set_gateway(gateway.bot_info(1));
    let args = ["--store", url.as_str(), "--shard", "0/1"];
    let servers: Vec<_> =
        (0..2).map(|_| serve(WELCOME, &platform, None, &args, &[("BLKC_BOT_TOKEN", TOKEN)])).collect();
    assert_eq!(gateway.wait_op(2, 2).len(), 2);
    // Both have their GUILD_CREATE (it comes before the first heartbeat's
    // ACK): either may take a welcome, which needs the system channel.
    let until = std::time::Instant::now() + Duration::from_secs(20);
    let beats = |c: usize| gateway.sent_op(1).iter().filter(|(n, _, _)| *n == c).count();
    while (beats(1) < 2 || beats(2) < 2) && std::time::Instant::now() < until {
        std::thread::sleep(Duration::from_millis(10));
    }
    let message = |id: &str| json!({ "guild_id": "777", "channel_id": "889", "id": id, "content": "!ping", "author": { "id": "1001", "username": "x" } });
    gateway.dispatch("MESSAGE_CREATE", message("5001"));
    gateway.dispatch("MESSAGE_CREATE", message("5002"));
    // Known by its join time; and one without (known by its payload).
    let mut joined = member_join("1001");
    joined["joined_at"] = json!("2026-11-24T10:00:00.000000+00:00");
    gateway.dispatch("GUILD_MEMBER_ADD", joined);
    gateway.dispatch("GUILD_MEMBER_ADD", member_join("1002"));
    let logs = || format!("{}\n{}", servers[0].log(), servers[1].log());
    assert_eq!(platform.wait_for("/channels/889/messages", 2).len(), 2, "{}", logs());
    assert_eq!(platform.wait_for("/channels/888/messages", 2).len(), 2, "{}", logs());
    // Both processes have taken all four (each is logged by both).
    let until = std::time::Instant::now() + Duration::from_secs(20);
    let taken = |s: &crate::serve::Served| s.log().matches("already taken by another process").count();
    while taken(&servers[0]) + taken(&servers[1]) < 4 && std::time::Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(taken(&servers[0]) + taken(&servers[1]), 4, "{}\n{}", servers[0].log(), servers[1].log());
    // Every copy has ended, taken or refused: the counts are final.
    assert_eq!(platform.wait_for("/channels/889/messages", 2).len(), 2);
    assert_eq!(platform.wait_for("/channels/888/messages", 2).len(), 2);
}

/// Issue 52: every dispatch the platform documents for an event kind, in
/// its documented shape (the platform layer's samples), sent by the test
/// Gateway: each runs its kind's tree once, with every variable the
/// language promises, and what changed computed against what the Gateway
/// said before.
#[test]
fn every_event_kind_runs_on_its_dispatch_with_its_variables() {
    use blkc::discord::events::{sample, EVENTS};
    let mut program = String::new();
    for e in EVENTS {
        let vars: Vec<String> = e.vars.iter().map(|v| format!("{v}={{{v}}}")).collect();
        program += &format!("event {} {{\n    send to \"900\" \"{} {}\"\n}}\n\n", e.kind, e.kind, vars.join("|"));
    }
    let (platform, gateway, served) = start(&program, 1, &[]);
    gateway.wait_op(2, 1);
    let given = |k: &str| -> Option<String> {
        let v = match k {
            "server_id" => "777",
            "channel_id" => "888",
            "other_channel_id" => "889",
            "dm_channel_id" => "950",
            "message_id" => "5000",
            "bot_id" => "999",
            _ => return None,
        };
        Some(v.to_string())
    };
    // (The bot leaves the server last: the cache forgets it then.) One
    // kind at a time, each once its messages are in: the test platform
    // (tiny_http) can leave one of fifty requests at once unanswered.
    let last = EVENTS.iter().filter(|e| e.kind == "guild_leave");
    let mut expected = 1; // `ready`'s
    for e in EVENTS.iter().filter(|e| e.kind != "ready" && e.kind != "guild_leave").chain(last) {
        let (t, d, prime) = sample(e.kind, &given).unwrap();
        if let Some(prime) = prime.as_object() {
            let mut update = json!({ "id": "777" });
            update.as_object_mut().unwrap().extend(prime.clone());
            gateway.dispatch("GUILD_UPDATE", update);
        }
        gateway.dispatch(t, d);
        // A member's update runs `member_update` besides its own kind.
        expected += if e.dispatch == "GUILD_MEMBER_UPDATE" && e.kind != "member_update" { 2 } else { 1 };
        let got = platform.wait_for("/channels/900/messages", expected).len();
        assert_eq!(got, expected, "`{}`: {}", e.kind, served.log());
    }
    let sent = platform.wait_for("/channels/900/messages", EVENTS.len() + 4);
    let said: Vec<String> = sent.iter().map(|c| c.body["content"].as_str().unwrap_or_default().to_string()).collect();
    assert_eq!(said.len(), EVENTS.len() + 4, "{said:#?}\n{}", served.log());
    let count = |kind: &str| said.iter().filter(|s| s.split(' ').next() == Some(kind)).count();
    assert_eq!(count("member_update"), 5, "{said:#?}");
    assert!(EVENTS.iter().all(|e| e.kind == "member_update" || count(e.kind) == 1), "{said:#?}");
    // (Runs end in any order: a member's own update is the one that renamed them.)
    let of = |kind: &str| -> std::collections::HashMap<String, String> {
        let mine =
            |s: &&String| s.split(' ').next() == Some(kind) && (kind != "member_update" || s.contains("new nick"));
        let line = said.iter().find(mine).unwrap_or_else(|| panic!("no `{kind}` in {said:#?}"));
        let (_, vars) = line.split_once(' ').unwrap();
        vars.split('|').filter_map(|kv| kv.split_once('=')).map(|(k, v)| (k.to_string(), v.to_string())).collect()
    };
    for e in EVENTS {
        let vars = of(e.kind);
        assert_eq!(vars.len(), e.vars.len(), "{}: {vars:?}", e.kind);
        if e.vars.contains(&"user_id") && e.kind != "message_delete" {
            assert_eq!(vars["user_id"], "1001", "{}", e.kind);
        }
        if e.vars.contains(&"server_name") && e.kind != "guild_join" {
            assert_eq!(vars["server_name"], "Test Server", "{}", e.kind);
        }
    }
    let member = of("member_update");
    assert_eq!((member["roles_added"].as_str(), member["roles_removed"].as_str()), ("<@&9>", "<@&8>"));
    assert_eq!((member["old_nickname"].as_str(), member["nickname"].as_str()), ("old nick", "new nick"));
    let moved = of("voice_move");
    assert_eq!((moved["old_channel_name"].as_str(), moved["channel_name"].as_str()), ("random", "general"));
    assert_eq!(of("voice_leave")["channel_name"], "general");
    let edit = of("message_update");
    assert_eq!((edit["old_message_content"].as_str(), edit["message_content"].as_str()), ("hello", "hello"));
    assert_eq!(
        (of("message_delete")["user_id"].as_str(), of("message_delete")["message_content"].as_str()),
        ("1001", "hello")
    );
    assert_eq!(of("dm_message")["channel_id"], "950");
    assert_eq!(of("guild_join")["server_name"], "New server");
    assert_eq!(of("guild_leave")["server_name"], "Test Server");
    assert_eq!(of("automod_action")["automod_action"], "block_message");
    assert_eq!(of("entitlement_create")["entitlement_type"], "application_subscription");
    assert_eq!(of("presence_update")["activity"], "Chess");
    assert_eq!(of("thread_members")["users_added"], "<@1001>");
    assert_eq!(of("invite_create")["invite_url"], "https://discord.gg/Xk3nQ2");
    let metrics = ureq::get(&format!("{}/metrics", served.url)).call().unwrap().body_mut().read_to_string().unwrap();
    assert!(metrics.contains("blkc_events_total{kind=\"voice_move\",outcome=\"ran\"} 1"), "{metrics}");
}

/// Issue 52: a direct message to the bot arrives (the file asks for
/// DIRECT_MESSAGES, and not for the privileged content intent: a DM's text
/// comes without it) and its reply goes to the DM.
#[test]
fn a_direct_message_arrives_and_is_answered_in_the_dm() {
    let program = "event dm_message {\n    reply \"You said: {message_content}\"\n}\n";
    let (platform, gateway, served) = start(program, 1, &[]);
    let identify = gateway.wait_op(2, 1);
    assert_eq!(identify[0].2["d"]["intents"], (1 << 0) | (1 << 12));
    let dm = json!({ "id": "6000", "channel_id": "950", "author": { "id": "1001", "username": "ada" }, "content": "hello bot" });
    gateway.dispatch("MESSAGE_CREATE", dm);
    // A message in a server is no DM.
    let in_server = json!({ "id": "6001", "channel_id": "888", "guild_id": "777", "author": { "id": "1001", "username": "ada" }, "content": "hi all" });
    gateway.dispatch("MESSAGE_CREATE", in_server);
    let sent = platform.wait_for("/channels/950/messages", 1);
    assert_eq!(sent.len(), 1, "{}", served.log());
    assert_eq!(sent[0].body["content"], "You said: hello bot");
    let log = served.wait_log("kind=dm_message");
    assert_eq!(log.matches("kind=dm_message").count(), 1, "{log}");
    assert!(platform.calls().iter().all(|c| !c.path.contains("/channels/888/")), "{:?}", platform.calls());
}
