//! Work that waits (`after "10m" { … }`) in `blkc serve`, sharing a
//! PostgreSQL store: taken over from a process killed mid-run and sent
//! once, and a thousand pieces due at once each run once, none early.

use crate::serve::serve;
use crate::support::platform::TestPlatform;
use crate::support::server::TestServer;
use std::process::Command;

/// A reminder whose run waits on `/held` before it posts: the test opens
/// the gate when it is ready.
const HELD: &str = r#"command remind "Remind me" {
    after "1s" key "tea" note "tea" {
        api wait {
            method GET
            url "@API@/held"
        }
        reply "⏰ <@{user_id}>: tea"
    }
    reply "kept"
}
"#;

/// Keeps the work of `program`'s `/remind` in `store`, as user `user` in
/// channel 4242 of server 9 (a run from a shell writes the same rows as a
/// served one).
fn keep(program: &str, store: &str, user: &str) {
    keep_of(program, "remind", store, user);
}

/// [`keep`], of command `command`.
fn keep_of(program: &str, tree: &str, store: &str, user: &str) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bot.blk"), program).unwrap();
    let vars = [format!("user_id={user}"), "server_id=9".to_string(), "channel_id=4242".to_string()];
    let mut command = Command::new(env!("CARGO_BIN_EXE_blkc"));
    command.current_dir(dir.path()).args(["run", "bot.blk", "--command", tree, "--store", store]);
    for v in &vars {
        command.args(["--var", v]);
    }
    let out = command.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("⏲ waits until"), "{out:?}");
}

/// The name of the tree of `program`'s `after` (its parent's and a digest
/// of its body), as `blkc run` says it.
fn tree_name(program: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bot.blk"), program).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_blkc"))
        .current_dir(dir.path())
        .args(["run", "bot.blk", "--command", "remind", "--offline"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout).to_string();
    let name = said.split('`').nth(1).unwrap_or_default().to_string();
    assert!(name.starts_with("remind#"), "{said}");
    name
}

/// The clock of both servers: the system's time now, ten times as fast
/// (a lease of 30 s of it lapses in 3 s).
fn fast_clock() -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64;
    format!("{now},{now},10")
}

fn posted(platform: &TestPlatform) -> Vec<String> {
    platform
        .calls()
        .iter()
        .filter(|c| c.method == "POST" && c.path.ends_with("/channels/4242/messages"))
        .map(|c| c.body["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// Issue 53, item 6: a reminder whose process is killed with `kill -9`
/// while its run goes on is taken over by another process once the claim
/// lapses, and sent once; then it is no longer kept.
#[test]
fn waiting_work_of_a_killed_server_is_taken_over_and_sent_once() {
    let Some(pg) = crate::support::postgres::server() else { return };
    let url = pg.store();
    let platform = TestPlatform::start();
    let api = TestServer::start();
    let program = HELD.replace("@API@", &api.base());
    keep(&program, &url, "1001");
    let clock = fast_clock();
    let env = [("BLKC_TEST_CLOCK", clock.as_str()), ("BLKC_BOT_TOKEN", "later.bot.token.0123456789")];
    let mut victim = serve(HELD, &platform, Some(&api), &["--store", &url], &env);
    // Its run has claimed the work and waits on `/held`.
    let held = || api.received().iter().filter(|r| r.url.starts_with("/held")).count();
    assert!(crate::support::wait::eventually(60, || held() >= 1), "the work never ran: {}", victim.log());
    victim.signal(libc::SIGKILL);
    let _ = victim.child.wait();
    let survivor = serve(HELD, &platform, Some(&api), &["--store", &url], &env);
    // Once the victim's claim lapses, the survivor takes the work over.
    assert!(crate::support::wait::eventually(60, || held() >= 2), "never taken over: {}", survivor.log());
    api.open();
    assert!(crate::support::wait::eventually(60, || !posted(&platform).is_empty()), "{}", survivor.log());
    let log = survivor.wait_log(&format!("waiting work tree={}", tree_name(&program)));
    assert!(log.contains("outcome=ran"), "{log}");
    let client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let client = std::sync::Mutex::new(client);
    let left = || -> i64 { client.lock().unwrap().query_one("SELECT count(*) FROM blkc_later", &[]).unwrap().get(0) };
    assert!(crate::support::wait::eventually(60, || left() == 0), "still kept after its run");
    // Sent once: the victim was killed before it posted.
    assert_eq!(posted(&platform), ["⏰ <@1001>: tea"], "{}", survivor.log());
    // It may ping the member who asked for it, and no one else.
    let calls = platform.calls();
    let message = calls.iter().find(|c| c.method == "POST" && c.path.ends_with("/channels/4242/messages")).unwrap();
    let allowed = &message.body["allowed_mentions"];
    assert_eq!(
        (&allowed["users"], &allowed["parse"]),
        (&serde_json::json!(["1001"]), &serde_json::json!([])),
        "{allowed}"
    );
}

/// Issue 53's test: 1,000 reminders due at once, kept in a store two
/// servers share, each sent once and none before its time (its message
/// says the time it ran).
#[test]
fn a_thousand_reminders_due_at_once_are_each_sent_once_and_none_early() {
    let Some(pg) = crate::support::postgres::server() else { return };
    let url = pg.store();
    let platform = TestPlatform::start();
    let program = r#"command remind "Remind me" {
    after "1s" note "{user_id}" {
        reply "{user_id} {now}"
    }
    reply "kept"
}
"#;
    // Kept as runs keep them, a thousand owners (a run each would take
    // minutes): due two seconds from now.
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64;
    let due = now + 2_000;
    let tree = tree_name(program);
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    for user in 0..1000 {
        let vars = format!(r#"{{"user_id":"{user}","server_id":"9","channel_id":"4242"}}"#);
        client
            .execute(
                "INSERT INTO blkc_later (id, owner, key, due_at, tree, note, vars) VALUES ($1, $2, '', $3, $4, '', $5)",
                &[&format!("id{user}"), &format!("user:9:{user}"), &due, &tree, &vars],
            )
            .unwrap();
    }
    // The system's clock: a claim's lease is 30 s, which a busy machine's
    // pauses never outlast.
    let env = [("BLKC_BOT_TOKEN", "later.bot.token.0123456789")];
    let servers: Vec<_> = (0..2).map(|_| serve(program, &platform, None, &["--store", &url], &env)).collect();
    let logs = || servers.iter().map(|s| s.log()).collect::<Vec<_>>();
    assert!(crate::support::wait::eventually(120, || posted(&platform).len() >= 1000), "{:#?}", logs());
    let client = std::sync::Mutex::new(client);
    let left = || -> i64 { client.lock().unwrap().query_one("SELECT count(*) FROM blkc_later", &[]).unwrap().get(0) };
    assert!(crate::support::wait::eventually(60, || left() == 0), "still kept after their runs");
    let sent = posted(&platform);
    let mut users: Vec<u32> = sent.iter().map(|m| m.split(' ').next().unwrap().parse().unwrap()).collect();
    users.sort();
    let twice: Vec<&u32> = users.windows(2).filter(|w| w[0] == w[1]).map(|w| &w[0]).collect();
    let missing: Vec<u32> = (0..1000).filter(|u| users.binary_search(u).is_err()).collect();
    assert!(twice.is_empty() && missing.is_empty(), "sent twice: {twice:?}, never: {missing:?}\n{:#?}", logs());
    let due_s = due / 1000;
    for message in &sent {
        let ran = chrono::DateTime::parse_from_rfc3339(message.split(' ').nth(1).unwrap()).unwrap().timestamp();
        assert!(ran >= due_s, "sent before its time: {message} (due {due_s})");
    }
    let ran: usize = servers.iter().map(|s| s.log().matches(&format!("waiting work tree={tree}")).count()).sum();
    assert_eq!(ran, 1000);
}

/// A button in a message that waiting work posts asks for the `require`
/// lines of the command that kept the work, as a button of its own reply
/// would: a reload never makes it ungated.
#[test]
fn a_button_waiting_work_posts_keeps_its_command_s_guards() {
    let program = r#"command raid "Start a raid" {
    require permissions manage_guild
    after "10m" {
        reply {
            text "The raid starts now"
            button join { label "Join" }
        }
    }
    reply "In ten minutes."
}

handler join {
    reply "Joined"
}
"#;
    let (source, _) = blkc::language::load::source_from_bytes("raid.blk", program.as_bytes().to_vec());
    let checked = blkc::language::load::check_source(source);
    let plan = blkc::language::plan::lower(&checked).unwrap();
    let later = plan.trees.iter().find(|t| t.kind == blkc::language::plan::TreeKind::Later).unwrap();
    let raid = plan.trees.iter().find(|t| t.name == "raid").unwrap();
    assert!(!raid.guards.is_empty());
    assert_eq!(later.guards, raid.guards);
    let button = blkc::language::plan::component(&plan, "join", &component_key(&plan)).unwrap();
    assert_eq!(button.guards, raid.guards, "{button:?}");
}

/// The key of the plan's only component with handler `join`.
fn component_key(plan: &blkc::language::plan::Plan) -> String {
    let mut key = None;
    for tree in &plan.trees {
        for step in &tree.steps {
            if let blkc::language::plan::Step::Reply { components, .. } = step {
                key = key.or(components.first().map(|c| c.key.clone()));
            }
        }
    }
    key.unwrap()
}

/// A question whose answer is the member's next message in the channel.
const QUIZ: &str = r#"command quiz "A question" {
    reply "What is 6 × 7?"
    await message "1h" as guess {
        reply "<@{user_id}> said {guess}"
    } timeout {
        reply "time is up"
    }
}
"#;

/// A member's message in server 9, as the Gateway dispatches it.
fn said(id: &str, user: &str, channel: &str, content: &str, bot: bool) -> serde_json::Value {
    serde_json::json!({
        "guild_id": "9", "channel_id": channel, "id": id, "content": content,
        "author": { "id": user, "username": format!("u{user}"), "bot": bot },
    })
}

/// How many members' messages `served` read for an answer, by outcome.
fn read_for_answers(served: &crate::serve::Served, outcome: &str) -> u64 {
    let agent: ureq::Agent =
        ureq::Agent::config_builder().timeout_global(Some(std::time::Duration::from_secs(10))).build().into();
    let Ok(mut got) = agent.get(&format!("{}/metrics", served.url)).call() else { return 0 };
    let text = got.body_mut().read_to_string().unwrap_or_default();
    let line = format!("blkc_await_messages_total{{outcome=\"{outcome}\"}} ");
    text.lines().find_map(|l| l.strip_prefix(line.as_str())).and_then(|n| n.trim().parse().ok()).unwrap_or(0)
}

/// Issue 53, item 7: a wait kept before the server started (it survives
/// a restart: it is in the store) is answered by its member's next
/// message in its channel, and only by that: not another member's, not
/// one in another channel, not a bot's; once answered, it is gone.
#[test]
fn an_await_is_answered_by_its_member_s_next_message_in_its_channel_only() {
    use crate::support::gateway::TestGateway;
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store.sqlite3").display().to_string();
    keep_of(QUIZ, "quiz", &store, "1001");
    let platform = TestPlatform::start();
    let gateway = TestGateway::start(200);
    platform.set_gateway(gateway.bot_info(1));
    let env = [("BLKC_BOT_TOKEN", "later.bot.token.0123456789")];
    let served = serve(QUIZ, &platform, None, &["--store", &store], &env);
    // It asks for messages and their text.
    let identify = gateway.wait_op(2, 1);
    let intents = identify[0].2["d"]["intents"].as_u64().unwrap();
    assert_eq!(intents & ((1 << 9) | (1 << 12) | (1 << 15)), (1 << 9) | (1 << 12) | (1 << 15), "{intents}");
    gateway.dispatch("MESSAGE_CREATE", said("1", "1002", "4242", "41", false));
    gateway.dispatch("MESSAGE_CREATE", said("2", "1001", "4243", "40", false));
    gateway.dispatch("MESSAGE_CREATE", said("3", "1001", "4242", "39", true));
    let read = || read_for_answers(&served, "none");
    assert!(crate::support::wait::eventually(60, || read() >= 2), "{}", served.log());
    assert!(posted(&platform).is_empty(), "{:?}", posted(&platform));
    gateway.dispatch("MESSAGE_CREATE", said("4", "1001", "4242", "42", false));
    assert!(crate::support::wait::eventually(60, || !posted(&platform).is_empty()), "{}", served.log());
    assert_eq!(posted(&platform), ["<@1001> said 42"]);
    gateway.dispatch("MESSAGE_CREATE", said("5", "1001", "4242", "43", false));
    assert!(crate::support::wait::eventually(60, || read() >= 3), "{}", served.log());
    assert_eq!(read_for_answers(&served, "answered"), 1);
    let log = served.wait_log("outcome=ran");
    assert!(log.contains("waiting work tree=quiz#"), "{log}");
    assert_eq!(posted(&platform), ["<@1001> said 42"], "{}", served.log());
    // The bot's own messages were never read for an answer.
    assert_eq!(read() + read_for_answers(&served, "answered"), 4);
}

/// Issue 53, item 7: two processes sharing PostgreSQL both read the
/// member's answer (each holds the shard): the wait is taken by one, and
/// its answer runs once.
#[test]
fn an_answer_read_by_two_processes_runs_once() {
    use crate::support::gateway::TestGateway;
    let Some(pg) = crate::support::postgres::server() else { return };
    let url = pg.store();
    keep_of(QUIZ, "quiz", &url, "1001");
    let platform = TestPlatform::start();
    let gateway = TestGateway::start(200);
    platform.set_gateway(gateway.bot_info(1));
    let env = [("BLKC_BOT_TOKEN", "later.bot.token.0123456789")];
    let args = ["--store", url.as_str(), "--shard", "0/1"];
    let (one, two) = (serve(QUIZ, &platform, None, &args, &env), serve(QUIZ, &platform, None, &args, &env));
    gateway.wait_op(2, 2);
    gateway.dispatch("MESSAGE_CREATE", said("7", "1001", "4242", "42", false));
    let read = |s: &crate::serve::Served| read_for_answers(s, "none") + read_for_answers(s, "answered");
    assert!(
        crate::support::wait::eventually(60, || read(&one) >= 1 && read(&two) >= 1),
        "{}\n{}",
        one.log(),
        two.log()
    );
    assert_eq!(read_for_answers(&one, "answered") + read_for_answers(&two, "answered"), 1);
    assert!(crate::support::wait::eventually(60, || !posted(&platform).is_empty()), "{}", one.log());
    let client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let client = std::sync::Mutex::new(client);
    let left = || -> i64 { client.lock().unwrap().query_one("SELECT count(*) FROM blkc_later", &[]).unwrap().get(0) };
    assert!(crate::support::wait::eventually(60, || left() == 0), "still kept after its answer ran");
    assert_eq!(posted(&platform), ["<@1001> said 42"]);
}

/// Issue 53, item 7, in the store itself (SQLite and PostgreSQL): a wait
/// is taken by a message only while it is not due, and claimed for its
/// time-out only once it is; a taken one is its answer's, claimed, and
/// a second message takes nothing.
#[test]
fn an_answer_and_its_time_out_are_never_both_taken() {
    use blkc::run::store::later::{answer_key, Later};
    use blkc::run::store::{Backend, Location};
    let dir = tempfile::tempdir().unwrap();
    let pg = crate::support::postgres::server();
    let mut locations = vec![Location::Sqlite(dir.path().join("store.sqlite3"))];
    locations.extend(pg.as_ref().map(|pg| Location::Postgres(pg.store())));
    let (owner, key) = ("user:9:1001", answer_key("4242"));
    for location in locations {
        let store = Backend::open(&location).unwrap();
        let wait = |id: &str, due_ms: i64| Later {
            id: id.into(),
            owner: owner.into(),
            key: key.clone(),
            due_ms,
            tree: "quiz#timeout".into(),
            note: String::new(),
            vars: serde_json::json!({ "~answer": "quiz#answer", "~as": "guess", "user_id": "1001" }),
        };
        store.run_store().wait_later(&wait("a", 1_000)).unwrap().unwrap();
        // Due: a message answers nothing, and the time-out is claimed.
        assert_eq!(store.take_answer((owner, &key), "late", 1_000, (31_000, "me")).unwrap(), None);
        let claimed = store.claim_due(1_000, 31_000, "me").unwrap();
        assert_eq!(claimed.iter().map(|l| l.tree.as_str()).collect::<Vec<_>>(), ["quiz#timeout"]);
        store.done_later("a", "me").unwrap();
        // Not due: the message takes it, as its answer's work, claimed.
        store.run_store().wait_later(&wait("b", 5_000)).unwrap().unwrap();
        let taken = store.take_answer((owner, &key), "42", 1_000, (31_000, "me")).unwrap().unwrap();
        assert_eq!((taken.tree.as_str(), taken.key.as_str(), taken.due_ms), ("quiz#answer", "", 1_000));
        assert_eq!(taken.vars["~said"], "42");
        assert_eq!(store.take_answer((owner, &key), "43", 1_001, (31_001, "me")).unwrap(), None);
        // Its time-out never comes: its claim holds while its run goes on,
        // and a lapsed claim (a process died) is the answer's, taken over.
        assert!(store.claim_due(6_000, 36_000, "other").unwrap().is_empty());
        let over = store.claim_due(40_000, 70_000, "other").unwrap();
        assert_eq!(over.iter().map(|l| l.tree.as_str()).collect::<Vec<_>>(), ["quiz#answer"]);
        assert_eq!(over[0].vars["~said"], "42");
    }
}

/// A click with a time-out (`examples/challenge.blk`), in the store: a
/// `cancel` takes back work that is not due and not claimed, and never
/// work that is due, or claimed by a process that runs it.
#[test]
fn a_cancel_never_takes_back_work_due_or_running() {
    use blkc::run::store::later::Later;
    use blkc::run::store::{Backend, Location};
    let dir = tempfile::tempdir().unwrap();
    let pg = crate::support::postgres::server();
    let mut locations = vec![Location::Sqlite(dir.path().join("store.sqlite3"))];
    locations.extend(pg.as_ref().map(|pg| Location::Postgres(pg.store())));
    for location in locations {
        let store = Backend::open(&location).unwrap();
        let piece = |id: &str, key: &str, due_ms: i64| Later {
            id: id.into(),
            owner: "server:9".into(),
            key: key.into(),
            due_ms,
            tree: "challenge#t".into(),
            note: String::new(),
            vars: serde_json::json!({}),
        };
        for p in [piece("a", "soon", 5_000), piece("b", "due", 1_000), piece("c", "running", 2_000)] {
            store.run_store().wait_later(&p).unwrap().unwrap();
        }
        // "running" is claimed by a process at 2 s (its lease to 32 s).
        let claimed = store.claim_due(2_000, 32_000, "me").unwrap();
        assert_eq!(claimed.iter().map(|l| l.key.as_str()).collect::<Vec<_>>(), ["due", "running"]);
        let mut run = store.run_store();
        assert_eq!(run.cancel_later("server:9", "running", 3_000).unwrap(), 0, "claimed: it runs");
        assert_eq!(run.cancel_later("server:9", "soon", 5_000).unwrap(), 0, "due: it runs");
        assert_eq!(run.cancel_later("server:9", "soon", 4_999).unwrap(), 1, "not due: taken back");
        assert_eq!(run.cancel_later("server:9", "soon", 4_999).unwrap(), 0, "once");
        let left: Vec<String> = run.waiting(None).unwrap().into_iter().map(|l| l.key).collect();
        assert_eq!(left, ["due", "running"]);
    }
}
