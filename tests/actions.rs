//! Actions (docs/language.md, "Actions") through `blkc serve`, against
//! the loopback test platform: each action's route, method, body and
//! audit-log reason as the platform's API describes them; the platform's
//! refusals as their outcomes; a purge in bulk calls of at most 100 that
//! leaves what is older than 14 days; and the ticket flow end to end.

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use crate::serve::{content, serve};
use crate::support::platform::{click, command, component_id, Call, TestPlatform};

const TOKEN: (&str, &str) = ("BLKC_BOT_TOKEN", "bot-token-abcdefghijklmnop");

/// A program on `platform`, its `{P}` the platform's API.
fn on(platform: &TestPlatform, program: &str) -> String {
    format!("platform \"{}\"\n{program}", platform.api())
}

/// The calls of the bot token below the API, after the interaction's own.
fn actions(platform: &TestPlatform, n: usize) -> Vec<Call> {
    let wanted =
        |c: &Call| c.authorization.is_some() && !c.path.contains("/webhooks/") && !c.path.contains("/interactions/");
    crate::support::wait::eventually(20, || platform.calls().into_iter().filter(wanted).count() >= n);
    platform.calls().into_iter().filter(wanted).collect()
}

#[test]
fn each_action_sends_the_platform_s_route_method_body_and_reason() {
    let platform = TestPlatform::start();
    let program = r#"command act "Every action" {
    send to "888" reply_to "555" as note "Noted"
    dm "42" "Hello"
    react "👍" to note
    give role "701" to "42" reason "Promoted by {user_name}"
    take role "701" from "42"
    timeout "42" for "10m" reason "spam"
    timeout "42" off
    kick "42" reason "bye"
    ban "42" delete_messages "1d" reason "raid"
    unban "42"
    nickname "42" to "Ann the Great"
    create thread name "Discussion" from note
    create thread name "Private" in "888" private
    create thread name "Question" in "889" tags "901", "902" { text "How do I…?" }
    create channel name "ticket-ann" category "700" topic "Ann's" private visible "42" as ticket
    pin note
    unpin note
    edit note { text "Noted (edited)" }
    delete message note
    delete channel "{api_ticket[response.id]}" reason "closed"
    reply "done"
}
"#;
    let served = serve(&on(&platform, program), &platform, None, &[], &[TOKEN]);
    platform.answer("GET", "/api/guilds/777/roles", 200, json!([{ "id": "701", "name": "Regulars" }]));
    let mut asked = command("100", "act", json!([]));
    asked["guild_id"] = json!("777");
    let answer = served.send(&platform, &asked);
    assert_eq!(content(&answer), "done", "{answer:?}\n{}", served.log());
    let calls = actions(&platform, 22);
    let seen: Vec<(String, String)> = calls.iter().map(|c| (c.method.clone(), c.path.clone())).collect();
    let route = |m: &str, p: &str| -> &Call {
        calls
            .iter()
            .find(|c| c.method == m && c.path == format!("/api{p}"))
            .unwrap_or_else(|| panic!("no {m} {p} in {seen:#?}"))
    };
    let sent = route("POST", "/channels/888/messages");
    assert_eq!(sent.body["content"], "Noted");
    assert_eq!(sent.body["message_reference"]["message_id"], "555");
    // Who it may ping: the command's own user, no one else (as a reply).
    assert_eq!(sent.body["allowed_mentions"], json!({ "parse": [], "users": ["1001"] }));
    assert_eq!(route("POST", "/users/@me/channels").body, json!({ "recipient_id": "42" }));
    assert_eq!(route("POST", "/channels/1490000000000000001/messages").body["content"], "Hello");
    let note = made_id(&platform, "POST", "/api/channels/888/messages");
    route("PUT", &format!("/channels/888/messages/{note}/reactions/%F0%9F%91%8D/@me"));
    let give = route("PUT", "/guilds/777/members/42/roles/701");
    assert_eq!(give.reason.as_deref(), Some("Promoted%20by%20Ada"));
    assert_eq!(route("DELETE", "/guilds/777/members/42/roles/701").reason, None);
    let patches: Vec<&Call> =
        calls.iter().filter(|c| c.method == "PATCH" && c.path == "/api/guilds/777/members/42").collect();
    let until = patches[0].body["communication_disabled_until"].as_str().unwrap();
    assert!(time_of(until) > now_s() + 550 && time_of(until) < now_s() + 650, "{until}");
    assert_eq!(patches[0].reason.as_deref(), Some("spam"));
    assert_eq!(patches[1].body, json!({ "communication_disabled_until": null }));
    assert_eq!(patches[2].body, json!({ "nick": "Ann the Great" }));
    assert_eq!(route("DELETE", "/guilds/777/members/42").reason.as_deref(), Some("bye"));
    assert_eq!(route("PUT", "/guilds/777/bans/42").body, json!({ "delete_message_seconds": 86400 }));
    route("DELETE", "/guilds/777/bans/42");
    assert_eq!(route("POST", &format!("/channels/888/messages/{note}/threads")).body, json!({ "name": "Discussion" }));
    let threads: Vec<&Call> = calls
        .iter()
        .filter(|c| c.method == "POST" && c.path.ends_with("/threads") && !c.path.contains("/messages/"))
        .collect();
    assert_eq!(threads[0].body, json!({ "name": "Private", "type": 12 }));
    assert_eq!(threads[1].path, "/api/channels/889/threads");
    assert_eq!(threads[1].body["applied_tags"], json!(["901", "902"]));
    assert_eq!(threads[1].body["message"]["content"], "How do I…?");
    let channel = route("POST", "/guilds/777/channels");
    assert_eq!((channel.body["name"].clone(), channel.body["type"].clone()), (json!("ticket-ann"), json!(0)));
    assert_eq!((channel.body["parent_id"].clone(), channel.body["topic"].clone()), (json!("700"), json!("Ann's")));
    let overwrites = &channel.body["permission_overwrites"];
    assert_eq!(overwrites[0], json!({ "id": "777", "type": 0, "deny": "1024" }));
    // 42 is not among the server's roles: a member, who may see, write and read back.
    assert_eq!(overwrites[1], json!({ "id": "42", "type": 1, "allow": (1024 + 2048 + 65536).to_string() }));
    route("PUT", &format!("/channels/888/messages/pins/{note}"));
    route("DELETE", &format!("/channels/888/messages/pins/{note}"));
    assert_eq!(route("PATCH", &format!("/channels/888/messages/{note}")).body["content"], "Noted (edited)");
    route("DELETE", &format!("/channels/888/messages/{note}"));
    let ticket = made_id(&platform, "POST", "/api/guilds/777/channels");
    assert_eq!(route("DELETE", &format!("/channels/{ticket}")).reason.as_deref(), Some("closed"));
    assert!(calls.iter().all(|c| c.authorization.as_deref() == Some("Bot bot-token-abcdefghijklmnop")));
    held_to_the_platform_s_description(&calls);
    let log = served.wait_log("action=kick");
    assert!(log.contains("an action"), "{log}");
}

/// Each call is one of the platform's routes as its published API
/// description has it (tests/fixtures/platform/routes.json, taken from
/// discord-api-spec's OpenAPI document and discord-api-docs): its method
/// and path, a body of only the fields the route takes and with those it
/// needs, and an audit-log reason only where the route keeps one.
fn held_to_the_platform_s_description(calls: &[Call]) {
    let described: Value =
        serde_json::from_str(include_str!("fixtures/platform/routes.json")).expect("the routes' description");
    for call in calls {
        let path = call.path.strip_prefix("/api").unwrap_or(&call.path);
        let path = path.split('?').next().unwrap_or_default();
        let matches = |template: &str| {
            let (want, got): (Vec<&str>, Vec<&str>) = (template.split('/').collect(), path.split('/').collect());
            want.len() == got.len() && want.iter().zip(&got).all(|(w, g)| w.starts_with('{') || w == g)
        };
        let route = described["routes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["method"] == call.method.as_str() && matches(r["path"].as_str().unwrap()))
            // (`…/messages/pins/{id}` before `…/messages/{id}`: the more literal wins.)
            .max_by_key(|r| r["path"].as_str().unwrap().matches('{').count().wrapping_neg())
            .unwrap_or_else(|| panic!("{} {path} is no route of the platform's", call.method));
        let allowed: Vec<&str> = route["body"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
        if let Some(body) = call.body.as_object() {
            for key in body.keys() {
                assert!(allowed.contains(&key.as_str()), "{} {path}: the platform takes no `{key}`", call.method);
            }
            for key in route["required"].as_array().unwrap().iter().filter_map(Value::as_str) {
                assert!(body.contains_key(key), "{} {path}: the platform needs `{key}`", call.method);
            }
        } else {
            assert!(call.body.is_null() || allowed.is_empty(), "{} {path}: {}", call.method, call.body);
        }
        if call.reason.is_some() {
            assert_eq!(route["audit_log_reason"], true, "{} {path} keeps no audit-log reason", call.method);
        }
    }
}

/// The id the test platform gave what the first `method path` call made
/// (its ids count the calls it had, that one included).
fn made_id(platform: &TestPlatform, method: &str, path: &str) -> String {
    let all = platform.calls();
    let n = all.iter().position(|c| c.method == method && c.path == path).unwrap();
    (1_480_000_000_000_000_000u64 + n as u64 + 1).to_string()
}

fn now_s() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() as i64
}

/// An RFC 3339 time, in seconds since 1970.
fn time_of(text: &str) -> i64 {
    time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).unwrap().unix_timestamp()
}

#[test]
fn the_platform_s_refusals_are_their_outcomes_and_reach_a_failed_branch() {
    let platform = TestPlatform::start();
    let program = r#"command promote "Promote" {
    give role "701" to "42" reason "Promoted"
    reply "promoted"
    failed {
        reply { ephemeral text "Could not: {failure_message}" }
    }
}

command remind "Remind" {
    dm "{user_id}" "Your reminder"
    reply "sent"
}
"#;
    let served = serve(&on(&platform, program), &platform, None, &[], &[TOKEN]);
    let refusal = |code: u64, message: &str| json!({ "code": code, "message": message });
    platform.answer("PUT", "/api/guilds/777/members/42/roles/701", 403, refusal(50013, "Missing Permissions"));
    platform.answer(
        "POST",
        "/api/channels/1490000000000000001/messages",
        403,
        refusal(50007, "Cannot send messages to this user"),
    );
    let mut asked = command("110", "promote", json!([]));
    asked["guild_id"] = json!("777");
    let answer = served.send(&platform, &asked);
    let said = content(&answer);
    assert!(
        said.starts_with("Could not: `give role`: the bot lacks Manage Roles in this server, or the role is above the bot's highest role"),
        "{said}"
    );
    assert!(served.wait_log("code=B332").contains("a run warned"));
    let answer = served.send(&platform, &command("111", "remind", json!([])));
    assert!(content(&answer).starts_with("Sorry, something went wrong"), "{answer:?}");
    let log = served.wait_log("B333");
    assert!(log.contains("the user does not take direct messages from the bot"), "{log}");
}

/// A snowflake made `days_ago` days ago (the platform's epoch is 2015).
fn snowflake(days_ago: u64, n: u64) -> String {
    let ms = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64 - days_ago * 86_400_000;
    (((ms - 1_420_070_400_000) << 22) + n).to_string()
}

#[test]
fn a_purge_deletes_in_bulk_calls_of_at_most_100_and_leaves_messages_older_than_14_days() {
    let platform = TestPlatform::start();
    let program = r#"command clean "Purge" {
    purge 150 in "888" reason "tidy" as purged
    reply "{api_purged[response.deleted]} deleted, {api_purged[response.skipped]} too old"
}
"#;
    let served = serve(&on(&platform, program), &platform, None, &[], &[TOKEN]);
    // The channel's last 100, then 50 more: 147 recent, the 3 oldest 20 days old.
    let page = |from: u64, n: u64, old: u64| -> Value {
        json!((from..from + n)
            .map(|i| json!({ "id": if i >= 150 - old { snowflake(20, i) } else { snowflake(1, 1000 - i) } }))
            .collect::<Vec<_>>())
    };
    platform.answer("GET", "/api/channels/888/messages?limit=50", 200, page(100, 50, 3));
    platform.answer("GET", "/api/channels/888/messages?limit=100", 200, page(0, 100, 0));
    let answer = served.send(&platform, &command("120", "clean", json!([])));
    assert_eq!(content(&answer), "147 deleted, 3 too old", "{answer:?}\n{}", served.log());
    let calls = platform.calls();
    let reads: Vec<&Call> = calls.iter().filter(|c| c.method == "GET").collect();
    assert_eq!(reads.len(), 2);
    assert!(reads[1].path.contains("&before="), "{}", reads[1].path);
    let bulk: Vec<&Call> = calls.iter().filter(|c| c.path == "/api/channels/888/messages/bulk-delete").collect();
    let sizes: Vec<usize> = bulk.iter().map(|c| c.body["messages"].as_array().unwrap().len()).collect();
    assert_eq!(sizes, [100, 47]);
    assert!(bulk.iter().all(|c| c.reason.as_deref() == Some("tidy")));
    let old: Vec<String> = (147..150).map(|i| snowflake(20, i)).collect();
    assert!(bulk.iter().all(|c| c.body["messages"].as_array().unwrap().iter().all(|id| !old.iter().any(|o| id == o))));
}

#[test]
fn the_ticket_flow_runs_end_to_end_through_serve() {
    let platform = TestPlatform::start();
    let example = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/tickets.blk")).unwrap();
    let samples = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/samples/messages.json");
    let program = on(&platform, &example.replace("https://discord.com/api/v10", &platform.api()))
        .replace("\"samples/messages.json\"", &format!("\"{samples}\""));
    let secrets = [
        TOKEN,
        ("BLKC_SECRET_TICKETS_CATEGORY", "1400000000000000700"),
        ("BLKC_SECRET_SUPPORT_ROLE", "1400000000000000804"),
        ("BLKC_SECRET_TICKET_LOG", "1400000000000000701"),
    ];
    let served = serve(&program, &platform, None, &[], &secrets);
    platform.answer("GET", "/api/guilds/777/roles", 200, json!([{ "id": "1400000000000000804", "name": "Support" }]));
    platform.answer(
        "GET",
        "/api/channels/",
        200,
        json!([{ "id": "5", "author": { "username": "ann" }, "content": "help", "timestamp": "2026-11-27T10:00:00Z" }]),
    );
    let mut asked = command("130", "tickets", json!([]));
    asked["guild_id"] = json!("777");
    let answer = served.send(&platform, &asked);
    assert_eq!(content(&answer), "The panel is posted.", "{answer:?}\n{}", served.log());
    let panel = actions(&platform, 1).into_iter().find(|c| c.path.ends_with("/messages")).unwrap();
    assert_eq!(panel.body["components"][0]["components"][0]["label"], "Open a ticket");
    // A member opens a ticket from the panel.
    let open = component_id(&program, "open_ticket", 0, "");
    let mut clicked = click("131", &open, None);
    clicked["guild_id"] = json!("777");
    let answer = served.send(&platform, &clicked);
    assert!(content(&answer).starts_with("Your ticket is open: <#"), "{answer:?}\n{}", served.log());
    let made = platform.calls().into_iter().find(|c| c.path == "/api/guilds/777/channels").unwrap();
    assert_eq!(made.body["permission_overwrites"][0]["deny"], "1024");
    let ticket = made_id(&platform, "POST", "/api/guilds/777/channels");
    let first =
        actions(&platform, 3).into_iter().find(|c| c.path == format!("/api/channels/{ticket}/messages")).unwrap();
    assert_eq!(first.body["components"][0]["components"][0]["label"], "Close");
    // Support closes it: the transcript goes to the log, the channel away.
    let close = component_id(&program, "close_ticket", 0, "");
    let mut clicked = click("132", &close, None);
    (clicked["guild_id"], clicked["channel_id"]) = (json!("777"), json!(ticket));
    served.send(&platform, &clicked);
    // The channel is deleted last, after the first answer.
    let gone = |c: &Call| c.method == "DELETE" && c.path == format!("/api/channels/{ticket}");
    crate::support::wait::eventually(20, || platform.calls().iter().any(gone));
    let calls = platform.calls();
    let log = calls.iter().find(|c| c.path == "/api/channels/1400000000000000701/messages").unwrap();
    assert_eq!(log.body["embeds"][0]["description"], "ann: help");
    let deleted = calls.iter().find(|c| gone(c)).unwrap_or_else(|| panic!("no deletion: {calls:#?}"));
    assert!(deleted.reason.as_deref().unwrap().starts_with("Ticket%20closed%20by"));
    let bot: Vec<Call> = calls
        .into_iter()
        .filter(|c| {
            c.authorization.is_some()
                && !c.path.contains("/webhooks/")
                && !c.path.contains("/interactions/")
                && !c.path.contains("/gateway")
        })
        .collect();
    held_to_the_platform_s_description(&bot);
}

/// The permissions each example's actions need, as `blkc invite` says
/// them: their integer, each with its actions, and the link.
#[test]
fn the_permissions_each_example_needs_are_derived_from_its_actions() {
    let examples = concat!(env!("CARGO_MANIFEST_DIR"), "/examples");
    for (file, bits, some) in [
        ("tickets.blk", 268_454_928u64, ("manage_channels", "create channel")),
        ("moderation.blk", 1_099_511_647_238, ("moderate_members", "timeout")),
        ("autorole.blk", 268_520_512, ("add_reactions", "react")),
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_blkc"))
            .args(["invite", file, "--application-id", "1400000000000000000", "--format", "json"])
            .current_dir(examples)
            .output()
            .unwrap();
        assert!(out.status.success(), "{file}: {}", String::from_utf8_lossy(&out.stderr));
        let said: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(said["permissions"], bits.to_string(), "{file}: {said}");
        let listed = said["needed"].as_array().unwrap().iter().find(|p| p["permission"] == some.0).unwrap();
        assert!(listed["actions"].as_array().unwrap().iter().any(|a| a == some.1), "{file}: {said}");
        assert_eq!(
            said["url"],
            format!("https://discord.com/oauth2/authorize?client_id=1400000000000000000&scope=bot+applications.commands&permissions={bits}")
        );
    }
    // `check` says them too, once the file checks.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_blkc"))
        .args(["check", "tickets.blk"])
        .current_dir(examples)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("the bot needs Manage Channels, View Channel, Send Messages, Embed Links, Manage Roles in each server (permissions 268454928"), "{said}");
}

/// With `--strict`, a variable an action reads that has no value fails
/// the run before the action is sent, as a block's request does.
#[test]
fn strict_runs_send_no_action_whose_values_are_missing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("a.blk"),
        "command k \"Kick\" {\n    kick \"42\" reason \"by {user_name}\"\n    reply \"done\"\n}\n",
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_blkc"))
        .args(["run", "a.blk", "--offline", "--strict", "--var", "server_id=777"])
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(3), "{stdout}{stderr}");
    assert!(stderr.contains("`{user_name}` has no value in this run") && stderr.contains("--strict"), "{stderr}");
    assert!(!stdout.contains("→ kick"), "{stdout}");
}

/// `delete message … after "1s"`: the run answers at once, and the call
/// is sent by the process's queue when its time comes, not before.
#[test]
fn a_delete_after_a_while_is_sent_when_its_time_comes_and_the_run_goes_on() {
    let platform = TestPlatform::start();
    let program = "command flash \"Flash\" {\n    send to \"888\" as note \"Gone in a second\"\n    delete message note after \"1s\" reason \"flash\"\n    reply \"sent\"\n}\n";
    let served = serve(&on(&platform, program), &platform, None, &[], &[TOKEN]);
    let asked = std::time::Instant::now();
    let answer = served.send(&platform, &command("140", "flash", json!([])));
    assert_eq!(content(&answer), "sent", "{answer:?}\n{}", served.log());
    let note = made_id(&platform, "POST", "/api/channels/888/messages");
    let gone = |c: &Call| c.method == "DELETE" && c.path == format!("/api/channels/888/messages/{note}");
    assert!(crate::support::wait::eventually(20, || platform.calls().iter().any(gone)), "{}", served.log());
    let deleted = platform.calls().into_iter().find(|c| gone(c)).unwrap();
    // Not before its second (however busy the machine, never sooner).
    assert!(deleted.at.duration_since(asked) >= std::time::Duration::from_millis(950));
    assert_eq!(deleted.reason.as_deref(), Some("flash"));
    assert!(served.wait_log("action=\"delete message\"").contains("later=true"), "{}", served.log());
}

/// A channel id a user typed is acted on only when the platform says it is
/// the run's server's: no option can point an action at a channel of
/// another server the bot is in.
#[test]
fn a_channel_a_user_names_must_be_the_run_s_server_s() {
    let platform = TestPlatform::start();
    let program = "command wipe \"Delete a channel\" {\n    option target \"Its id\" required\n    delete channel \"{option_target}\" reason \"wipe\"\n    reply \"deleted\"\n}\n";
    let served = serve(&on(&platform, program), &platform, None, &[], &[TOKEN]);
    platform.answer("GET", "/api/channels/901", 200, json!({ "id": "901", "guild_id": "555" }));
    platform.answer("GET", "/api/channels/902", 200, json!({ "id": "902", "guild_id": "777" }));
    let wipe = |id: &str, target: &str| {
        let mut asked = command(id, "wipe", json!([{ "name": "target", "type": 3, "value": target }]));
        asked["guild_id"] = json!("777");
        served.send(&platform, &asked)
    };
    let answer = wipe("150", "901");
    assert!(content(&answer).starts_with("Sorry, something went wrong"), "{answer:?}");
    let log = served.wait_log("B334");
    assert!(log.contains("not a channel of this server"), "{log}");
    assert!(!platform.calls().iter().any(|c| c.method == "DELETE"), "another server's channel was deleted");
    assert_eq!(content(&wipe("151", "902")), "deleted");
    assert!(platform.calls().iter().any(|c| c.method == "DELETE" && c.path == "/api/channels/902"));
}
