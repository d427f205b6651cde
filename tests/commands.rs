//! Every kind of command the platform has, through `deploy` and `serve`
//! against the loopback platform: subcommands and groups, and options
//! completed as the user types (autocomplete).

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Value};

use crate::serve::{content, deploy, serve};
use crate::support::platform::{command, keystroke, TestPlatform};
use crate::support::server::TestServer;

const ENV: [(&str, &str); 2] = [("BLKC_BOT_TOKEN", "bot-token-abcdefghijklmnop"), ("BLKC_APPLICATION_ID", "4242")];

/// A member of server 777 with `permissions` (the bits, as the platform
/// sends them).
fn with_permissions(mut body: Value, permissions: u64) -> Value {
    body["member"]["permissions"] = json!(permissions.to_string());
    body
}

const MANAGE_GUILD: u64 = 1 << 5;
const ADMINISTRATOR: u64 = 1 << 3;

/// examples/settings.blk: a command with a subcommand and a group of two,
/// registered nested as the platform wants them, read back unchanged, and
/// each subcommand run as its own tree with its own options and the
/// `require` lines of its command and its group.
#[test]
fn subcommands_and_a_group_deploy_round_trip_and_each_runs_its_own_tree() {
    let platform = TestPlatform::start();
    let dir = tempfile::tempdir().unwrap();
    let example = std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/settings.blk"));
    std::fs::write(dir.path().join("s.blk"), example.unwrap()).unwrap();
    let deploy_says = |said: &str| {
        let out = deploy(dir.path(), "s.blk", &["--platform", &platform.api()], &ENV);
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(out.status.success() && stderr.contains(said), "wanted {said:?}: {stderr}");
    };
    deploy_says("1 added (/settings)");
    let put = platform.calls().into_iter().find(|c| c.method == "PUT").unwrap();
    let settings = &put.body[0];
    let kinds: Vec<(&str, i64)> = settings["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| (o["name"].as_str().unwrap(), o["type"].as_i64().unwrap()))
        .collect();
    assert_eq!(kinds, [("show", 1), ("greeting", 2)]);
    let set = &settings["options"][1]["options"][0];
    assert_eq!((set["name"].as_str(), set["type"].as_i64()), (Some("set"), Some(1)));
    assert_eq!(set["options"][0]["max_length"], 200);
    assert_eq!(set["name_localizations"], json!({ "fr": "changer" }));
    // A subcommand carries no `required`; what the command registers is
    // the command's.
    assert!(set.get("required").is_none() && set.get("default_member_permissions").is_none(), "{set}");
    assert_eq!(settings["default_member_permissions"], json!(MANAGE_GUILD.to_string()));
    deploy_says("1 unchanged");
    // A change two levels down is a change of the command's options.
    let path = dir.path().join("s.blk");
    let changed = std::fs::read_to_string(&path).unwrap().replace("min 1 max 200", "min 1 max 100");
    std::fs::write(&path, changed).unwrap();
    deploy_says("1 changed (/settings: options)");
    deploy_says("1 unchanged");

    let program = std::fs::read_to_string(&path).unwrap();
    let served = serve(&program, &platform, None, &[], &[]);
    let set = |id: &str, message: &str| {
        let options = json!([{ "type": 2, "name": "greeting", "options": [
            { "type": 1, "name": "set", "options": [{ "type": 3, "name": "message", "value": message }] }
        ] }]);
        with_permissions(command(id, "settings", options), MANAGE_GUILD)
    };
    let answer = served.send(&platform, &set("s1", "Hello, newcomer!"));
    assert_eq!(content(&answer), "New members will now be greeted with: Hello, newcomer!");
    let show = with_permissions(command("s2", "settings", json!([{ "type": 1, "name": "show" }])), MANAGE_GUILD);
    let answer = served.send(&platform, &show);
    assert_eq!(content(&answer), "New members are greeted with: Hello, newcomer!");
    assert_eq!(answer.body["data"]["flags"], 64, "{answer:?}");
    // A subcommand's option is checked as any option: past its `max`.
    let answer = served.send(&platform, &set("s3", &"x".repeat(101)));
    assert_ne!(content(&answer), format!("New members will now be greeted with: {}", "x".repeat(101)));
    // The group's own `require` on top of the command's.
    let reset = |id: &str, permissions: u64| {
        let options = json!([{ "type": 2, "name": "greeting", "options": [{ "type": 1, "name": "reset" }] }]);
        with_permissions(command(id, "settings", options), permissions)
    };
    let answer = served.send(&platform, &reset("s4", MANAGE_GUILD));
    assert_eq!(content(&answer), "You need the Administrator permission to use this.");
    let answer = served.send(&platform, &reset("s5", ADMINISTRATOR));
    assert_eq!(content(&answer), "The greeting is back to: Welcome aboard!");
    // The command's `require` holds for every subcommand.
    let answer = served.send(&platform, &with_permissions(set("s6", "Hi"), 0));
    assert_eq!(content(&answer), "You need the Manage Guild permission to use this.");
    // The command alone, a subcommand it does not have, or a name with a
    // blank (which could pass for two levels) runs nothing.
    for (id, options) in [
        ("s7", json!([])),
        ("s8", json!([{ "type": 1, "name": "hide" }])),
        (
            "s9",
            json!([{ "type": 1, "name": "greeting set", "options": [{ "type": 3, "name": "message", "value": "x" }] }]),
        ),
    ] {
        let answer = served.send(&platform, &with_permissions(command(id, "settings", options), ADMINISTRATOR));
        assert!(content(&answer).contains("not available right now"), "{id}: {answer:?}");
    }
    assert!(served.wait_interaction("s1").contains("command=\"settings greeting set\""), "{}", served.log());
}

/// examples/forecast.blk's shape, against the loopback API: each keystroke
/// is answered with the choices the tree offers (type 8), numbers for a
/// number option; a slow API is answered with no choices by the deadline
/// (an autocomplete cannot be deferred); a user typing faster than the
/// limit is offered none past it, and another user still is; a guard
/// refuses with no choices.
#[test]
fn an_autocomplete_answers_in_time_and_a_user_typing_too_fast_is_offered_nothing() {
    let platform = TestPlatform::start();
    let api = TestServer::start();
    let program = r#"command forecast "The forecast" {
    require roles "1111111111111111111"
    option city "The city" required autocomplete {
        api places {
            method GET
            url "@API@/fixture/places.json"
            params { name = "{typed_text}" }
        }
        for place in api_places[response.results] limit 25 {
            choice "{place[name]}, {place[country]}" "{place[id]}"
        }
    }
    option days "Days ahead" integer autocomplete {
        api wait {
            method GET
            url "@API@/slow/4000"
        }
        choice "Tomorrow" "1"
    }
    option hours "Hours ahead" integer autocomplete {
        choice "One" "1"
        choice "{typed_text} hours" "{typed_text}"
        choice "Not a number" "soon"
    }
    reply "Forecast for {option_city}"
}
"#;
    let served = serve(program, &platform, Some(&api), &["--answer-within", "1.5"], &[]);
    let typing = |id: &str, user: &str, focused: &str, value: Value| {
        let mut options = json!([{ "type": 3, "name": "city", "value": "Par" }]);
        if focused != "city" {
            options.as_array_mut().unwrap().push(json!({ "type": 4, "name": focused, "value": value }));
        } else {
            options[0]["value"] = value;
        }
        let last = options.as_array().unwrap().len() - 1;
        options[last]["focused"] = json!(true);
        let mut body = keystroke(id, "forecast", options);
        body["member"]["user"]["id"] = json!(user);
        body["member"]["roles"] = json!(["1111111111111111111"]);
        served.send(&platform, &body)
    };
    let answer = typing("a1", "1001", "city", json!("Par"));
    assert_eq!(answer.body["type"], 8, "{answer:?}");
    let names: Vec<&str> =
        answer.body["data"]["choices"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["Paris, France", "Paris, United States", "Parma, Italy"]);
    assert_eq!(answer.body["data"]["choices"][0]["value"], "2988507");
    let asked = api.received().into_iter().find(|r| r.url.starts_with("/fixture/places.json")).unwrap();
    assert_eq!(asked.url, "/fixture/places.json?name=Par");
    // An integer option's choices are numbers; one that is none is left out.
    let answer = typing("a2", "1002", "hours", json!(12));
    assert_eq!(
        answer.body["data"]["choices"],
        json!([{ "name": "One", "value": 1 }, { "name": "12 hours", "value": 12 }])
    );
    // A slow API: no choices, by the deadline, not "thinking".
    let answer = typing("a3", "1003", "days", json!(2));
    assert_eq!(answer.body, json!({ "type": 8, "data": { "choices": [] } }), "{answer:?}");
    assert!(answer.took < Duration::from_millis(2900), "answered after {:?}", answer.took);
    // Typing fast: past the burst, no choices and no request.
    let before = api.received().len();
    let answers: Vec<Value> = (0..8).map(|i| typing(&format!("b{i}"), "1004", "city", json!("P")).body).collect();
    let offered = answers.iter().filter(|a| !a["data"]["choices"].as_array().unwrap().is_empty()).count();
    assert!((5..8).contains(&offered), "{offered} of 8 offered choices");
    assert_eq!(api.received().len() - before, offered);
    assert!(served.wait_log("outcome=limited").contains("user=1004"), "{}", served.log());
    // Another user is not held back by the first.
    assert_eq!(typing("c1", "1005", "city", json!("P")).body["data"]["choices"].as_array().unwrap().len(), 3);
    // A member the command's `require` refuses is offered nothing.
    let mut body = keystroke("d1", "forecast", json!([{ "type": 3, "name": "city", "value": "P", "focused": true }]));
    body["member"]["roles"] = json!([]);
    let answer = served.send(&platform, &body);
    assert_eq!(answer.body, json!({ "type": 8, "data": { "choices": [] } }), "{answer:?}");
    // The slow run is logged failed, past its deadline.
    let log = served.wait_interaction("a3");
    assert!(log.lines().any(|l| l.contains("id=a3") && l.contains("outcome=failed")), "{log}");
}
