//! Buttons, select menus and forms end to end: `blkc serve`, the test
//! platform signing interactions of types 3 and 5 in the platform's shapes,
//! and every answer type blkc gives them (4, 6, 7, 9).

use serde_json::{json, Value};

use crate::serve::serve;
use crate::support::platform::{click, command, component_id, submit, TestPlatform};
use crate::support::server::TestServer;

const POLL: &str = r#"var yes per channel = 0

command poll "Vote" {
    save yes = 0
    reply {
        text "Vote now"
        button vote { label "Yes" success value "yes" }
        button vote { label "Also yes" value "yes" }
        button { label "Rules" url "https://example.com/rules" }
        select pick { placeholder "Colours" max 2 choice "Red" "red" choice "Blue" "blue" { emoji "🟦" } }
    }
}

handler vote {
    save yes = yes + 1
    update { text "Votes: {yes} (last {value} by {user_name})" }
}

handler pick {
    reply { ephemeral text "You chose {values}; first {value}." }
}
"#;

#[test]
fn a_click_updates_its_message_and_a_choice_answers_in_private() {
    let platform = TestPlatform::start();
    let served = serve(POLL, &platform, None, &[], &[]);
    let answer = served.send(&platform, &command("c1", "poll", json!([])));
    let rows = &answer.body["data"]["components"];
    // Buttons share a row; the select menu takes one of its own.
    assert_eq!(rows.as_array().map(Vec::len), Some(2), "{answer:?}");
    let buttons = &rows[0]["components"];
    assert_eq!(buttons[0]["type"], 2);
    assert_eq!((buttons[0]["style"].clone(), buttons[0]["label"].clone()), (json!(3), json!("Yes")));
    // Two buttons of one handler and value still have ids of their own.
    let (yes, also_yes) = (component_id(POLL, "vote", 0, "yes"), component_id(POLL, "vote", 1, "yes"));
    assert_eq!(buttons[0]["custom_id"], yes.as_str());
    assert_eq!(buttons[1]["custom_id"], also_yes.as_str());
    assert_ne!(yes, also_yes);
    assert_eq!(buttons[2]["style"], 5);
    assert_eq!(buttons[2]["url"], "https://example.com/rules");
    assert!(buttons[2]["custom_id"].is_null(), "a link carries no id: {buttons}");
    let menu = &rows[1]["components"][0];
    assert_eq!((menu["type"].clone(), menu["custom_id"].clone()), (json!(3), json!(component_id(POLL, "pick", 0, ""))));
    assert_eq!(menu["max_values"], 2);
    assert_eq!(
        menu["options"][1],
        json!({ "label": "Blue", "value": "blue", "emoji": { "name": "🟦" }, "default": false })
    );

    // A click: the message is updated (type 7), with no flag, its
    // components left as they are.
    let answer = served.send(&platform, &click("c2", &yes, None));
    assert_eq!(answer.body["type"], 7, "{answer:?}");
    assert_eq!(answer.body["data"]["content"], "Votes: 1 (last yes by Ada)");
    assert!(answer.body["data"]["flags"].is_null() && answer.body["data"]["components"].is_null(), "{answer:?}");
    let answer = served.send(&platform, &click("c3", &also_yes, None));
    assert_eq!(answer.body["data"]["content"], "Votes: 2 (last yes by Ada)");

    // A choice: the values, in a private new message (type 4, flags 64).
    let answer = served.send(&platform, &click("c4", &component_id(POLL, "pick", 0, ""), Some(json!(["red", "blue"]))));
    assert_eq!((answer.body["type"].clone(), answer.body["data"]["flags"].clone()), (json!(4), json!(64)));
    assert_eq!(answer.body["data"]["content"], "You chose red, blue; first red.");
    let log = served.wait_log("command=pick");
    assert!(log.contains("command=vote") && log.contains("outcome=answered"), "{log}");
}

#[test]
fn a_form_is_shown_and_its_submission_runs_its_handler() {
    let platform = TestPlatform::start();
    let program = r#"command feedback "Feedback" {
    form got {
        title "Feedback for {user_name}"
        input topic { label "Topic" max 100 placeholder "What about?" }
        input details { label "Details" paragraph optional }
    }
}

handler got {
    reply { ephemeral text "Thanks: [{field_topic}] [{field_details}]" }
}
"#;
    let served = serve(program, &platform, None, &[], &[]);
    let answer = served.send(&platform, &command("f1", "feedback", json!([])));
    assert_eq!(answer.body["type"], 9, "{answer:?}");
    let data = &answer.body["data"];
    assert_eq!(
        (data["custom_id"].clone(), data["title"].clone()),
        (json!(component_id(program, "got", 0, "")), json!("Feedback for Ada"))
    );
    // Each input in a Label, as the platform has asked since 2025.
    let labels = data["components"].as_array().unwrap();
    assert_eq!(labels.len(), 2);
    assert_eq!((labels[0]["type"].clone(), labels[0]["label"].clone()), (json!(18), json!("Topic")));
    let inputs: Vec<_> = labels.iter().map(|l| l["component"].clone()).collect();
    assert_eq!(
        inputs[0],
        json!({ "type": 4, "custom_id": "topic", "style": 1, "max_length": 100,
                "placeholder": "What about?", "required": true })
    );
    assert_eq!((inputs[1]["style"].clone(), inputs[1]["required"].clone()), (json!(2), json!(false)));
    // Sent in rows, then in the newer labels: the fields come through; one
    // left out of the submission is empty.
    for (id, labels) in [("f2", false), ("f3", true)] {
        let answer =
            served.send(&platform, &submit(id, &component_id(program, "got", 0, ""), &[("topic", "Docs")], labels));
        assert_eq!((answer.body["type"].clone(), answer.body["data"]["flags"].clone()), (json!(4), json!(64)));
        assert_eq!(answer.body["data"]["content"], "Thanks: [Docs] []", "{answer:?}");
    }
}

#[test]
fn a_click_on_a_handler_the_file_no_longer_has_is_told_so_and_logged() {
    let platform = TestPlatform::start();
    let served = serve(POLL, &platform, None, &[], &[]);
    let long = format!("blk1:{}:0:", "x".repeat(5000));
    for (id, custom_id) in [("s1", "blk1:gone:0:x"), ("s2", "not-one-of-ours"), ("s3", "blk1:../x:0:"), ("s4", &long)] {
        let answer = served.send(&platform, &click(id, custom_id, None));
        assert_eq!((answer.body["type"].clone(), answer.body["data"]["flags"].clone()), (json!(4), json!(64)));
        let text = answer.body["data"]["content"].as_str().unwrap_or_default();
        assert!(text.contains("no longer does anything"), "{answer:?}");
    }
    let log = served.wait_log("not-one-of-ours");
    assert!(log.contains("handler=gone") && log.contains("outcome=unknown_handler"), "{log}");
    // An id of any length is logged no longer than the platform's 100.
    let log = served.wait_interaction("s4");
    let shown = format!("handler=blk1:{}\n", "x".repeat(95));
    assert!(log.contains(&shown) && !log.contains(&"x".repeat(96)), "{log}");
}

#[test]
fn a_silent_handler_acknowledges_and_a_slow_update_defers_as_an_update() {
    let platform = TestPlatform::start();
    let api = TestServer::start();
    let program = r#"command menu "Menu" {
    reply {
        text "Pick"
        button quiet { label "Quiet" }
        button slow { label "Slow" }
    }
}

handler quiet {
    save clicks = 1
}

handler slow {
    api wait {
        method GET
        url "@API@/slow/1500"
    }
    update { text "Done slowly" button slow { label "Again" disabled } }
}
"#;
    let served = serve(program, &platform, Some(&api), &["--answer-within", "0.5"], &[]);
    // Nothing to say: the message stays as it is (type 6), nothing follows.
    let answer = served.send(&platform, &click("q1", &component_id(program, "quiet", 0, ""), None));
    assert_eq!(answer.body, json!({ "type": 6 }), "{answer:?}");
    // An update that takes longer than the deadline: type 6 first, then an
    // edit of the message the button is on.
    let answer = served.send(&platform, &click("q2", &component_id(program, "slow", 0, ""), None));
    assert_eq!(answer.body, json!({ "type": 6 }), "{answer:?}");
    let edit = platform.wait_for("itoken-q2-secretpart/messages/@original", 1);
    assert_eq!(edit.len(), 1, "{}", served.log());
    assert_eq!((edit[0].method.as_str(), edit[0].body["content"].as_str()), ("PATCH", Some("Done slowly")));
    let button = &edit[0].body["components"][0]["components"][0];
    assert_eq!((button["label"].clone(), button["disabled"].clone()), (json!("Again"), json!(true)), "{button}");
    assert!(platform.calls().iter().all(|c| !c.path.contains("itoken-q1")), "{:?}", platform.calls());
}

/// A click on a message whose rows hold `buttons` (as the platform sends
/// them back).
fn click_on(id: &str, custom_id: &str, buttons: Value) -> Value {
    let mut body = click(id, custom_id, None);
    body["message"]["components"] = json!([{ "type": 1, "components": buttons }]);
    body
}

const PRIZES: &str = r#"command claim "Claim" cooldown 60 {
    reply {
        text "Prizes"
        button take { label "Take" max_clicks 2 }
        button peek { label "Peek" cooldown "1h" }
    }
}

handler take {
    reply "Taken by {user_name}"
}

handler peek {
    update { text "Peeked" }
}
"#;

#[test]
fn a_button_is_disabled_after_its_last_click_and_a_cooldown_says_how_long_is_left() {
    let platform = TestPlatform::start();
    // The bot token edits the message a button is disabled on.
    let served = serve(PRIZES, &platform, None, &[], &[("BLKC_BOT_TOKEN", "prizes.bot.token.0123456789")]);
    let answer = served.send(&platform, &command("c1", "claim", json!([])));
    let buttons = answer.body["data"]["components"][0]["components"].clone();
    let (take, peek) = (component_id(PRIZES, "take", 0, ""), component_id(PRIZES, "peek", 0, ""));
    assert_eq!(buttons[0]["custom_id"], take.as_str(), "{answer:?}");
    // The command's own cooldown: the same user, again, is told privately.
    let again = served.send(&platform, &command("c2", "claim", json!([])));
    assert_eq!((again.body["type"].clone(), again.body["data"]["flags"].clone()), (json!(4), json!(64)));
    assert_eq!(again.body["data"]["content"], "You can use this again in 1 minute.", "{again:?}");
    let log = served.wait_log("outcome=cooldown");
    assert!(log.lines().any(|l| l.contains("id=c2 command=claim") && l.contains("outcome=cooldown")), "{log}");

    // Two clicks run the handler; the second is the last: the button is
    // disabled on its message, edited in its channel.
    for id in ["t1", "t2"] {
        let answer = served.send(&platform, &click_on(id, &take, buttons.clone()));
        assert_eq!(answer.body["data"]["content"], "Taken by Ada", "{answer:?}");
    }
    let edit = platform.wait_for("/channels/888/messages/555", 1);
    assert_eq!(edit.len(), 1, "{}\n{:?}", served.log(), platform.calls());
    assert_eq!(edit[0].method, "PATCH");
    let row = &edit[0].body["components"][0]["components"];
    assert_eq!((row[0]["custom_id"].clone(), row[0]["disabled"].clone()), (json!(take), json!(true)));
    assert!(row[1]["disabled"].is_null() || row[1]["disabled"] == false, "only that button: {row}");
    // A third click (from a client that still shows it) is refused.
    let third = served.send(&platform, &click_on("t3", &take, buttons.clone()));
    assert_eq!(third.body["data"]["flags"], 64, "{third:?}");
    assert_eq!(third.body["data"]["content"], "This button has been used its 2 times.");
    let log = served.wait_log("outcome=used_up");
    assert!(log.lines().any(|l| l.contains("id=t3 command=take") && l.contains("outcome=used_up")), "{log}");

    // A button's own cooldown, with its remaining time.
    let peeked = served.send(&platform, &click_on("p1", &peek, buttons.clone()));
    assert_eq!((peeked.body["type"].clone(), peeked.body["data"]["content"].clone()), (json!(7), json!("Peeked")));
    let peeked = served.send(&platform, &click_on("p2", &peek, buttons));
    assert_eq!(peeked.body["data"]["content"], "You can use this again in 1 hour.", "{peeked:?}");
}

/// A poll on two processes sharing PostgreSQL: 50 clicks at once on its
/// vote button are each counted once, and a button with `max_clicks 30`
/// clicked 50 times runs exactly 30 times across both.
#[test]
fn a_poll_counts_every_click_once_across_two_processes_sharing_postgres() {
    let Some(pg) = crate::support::postgres::server() else { return };
    let url = pg.store();
    let platform = TestPlatform::start();
    let program = r#"var yes per channel = 0
var taken per channel = 0

command poll "Vote" {
    reply {
        text "Vote"
        button vote { label "Yes" }
        button take { label "Take one" max_clicks 30 }
    }
}

handler vote {
    save yes = yes + 1
    update { text "Votes: {yes}" }
}

handler take {
    save taken = taken + 1
    reply { ephemeral text "You took one" }
}
"#;
    let servers: Vec<std::sync::Arc<crate::serve::Served>> = (0..2)
        .map(|_| std::sync::Arc::new(serve(program, &platform, None, &["--store", &url, "--workers", "16"], &[])))
        .collect();
    let (vote, take) = (component_id(program, "vote", 0, ""), component_id(program, "take", 0, ""));
    let buttons = json!([
        { "type": 2, "style": 1, "label": "Yes", "custom_id": vote },
        { "type": 2, "style": 1, "label": "Take one", "custom_id": take },
    ]);
    let signed: Vec<(Vec<u8>, (String, String))> = (0..100)
        .map(|i| {
            let id = if i % 2 == 0 { vote.as_str() } else { take.as_str() };
            let bytes = serde_json::to_vec(&click_on(&format!("k{i}"), id, buttons.clone())).unwrap();
            let signature = platform.sign(&bytes, 0);
            (bytes, signature)
        })
        .collect();
    let start = std::sync::Arc::new(std::sync::Barrier::new(signed.len()));
    let threads: Vec<_> = signed
        .into_iter()
        .enumerate()
        .map(|(i, (bytes, signature))| {
            let (url, start) = (servers[i % 4 / 2].interactions(), start.clone());
            std::thread::spawn(move || {
                start.wait();
                crate::support::platform::post(&url, &bytes, Some(signature))
            })
        })
        .collect();
    let answers: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    let (votes, takes): (Vec<_>, Vec<_>) = answers.iter().enumerate().partition(|(i, _)| i % 2 == 0);
    // An update in time (7), or on a loaded machine past the deadline a
    // deferred one (6) edited later.
    for (_, a) in &votes {
        assert!(a.body["type"] == 7 || a.body["type"] == 6, "{a:?}");
    }
    // A refusal is answered at once; a run answers its own way (in time,
    // or "thinking" first).
    let refused =
        takes.iter().filter(|(_, a)| a.body["data"]["content"] == "This button has been used its 30 times.").count();
    let deferred = takes.iter().filter(|(_, a)| a.body["type"] == 5).count();
    assert!(refused <= 20 && refused + deferred >= 20, "{:?}", takes.iter().map(|(_, a)| &a.body).collect::<Vec<_>>());
    let get = |name: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_blkc"))
            .args(["vars", "--store", &url, "get", name, "--channel", "888"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    // A run that answered "thinking" first goes on after its answer: the
    // store is read once every run has logged how it ended.
    let ended = |log: &str| log.lines().filter(|l| l.contains(" id=k") && l.contains(" outcome=")).count();
    let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while servers.iter().map(|s| ended(&s.log())).sum::<usize>() < 100 && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let logs: Vec<String> = servers.iter().map(|s| s.log()).collect();
    assert!(logs.iter().all(|l| !l.contains("outcome=failed")), "{logs:#?}");
    assert_eq!((get("yes"), get("taken")), ("50".to_string(), "30".to_string()), "{logs:#?}");
    // Every vote's update showed a count the store held at its save.
    let shown: Vec<u32> = votes
        .iter()
        .filter_map(|(_, a)| a.body["data"]["content"].as_str()?.strip_prefix("Votes: ")?.parse().ok())
        .collect();
    assert!(shown.iter().all(|n| (1..=50).contains(n)), "{shown:?}");
}

/// A select menu whose choices come from a response, through `serve`: one
/// choice per element, the platform's first 25 kept and the rest logged,
/// a choice answered with its element's value, and a menu of an empty list
/// left out of a message the platform still takes.
#[test]
fn a_select_menu_built_from_a_response_is_sent_chosen_from_and_cut_to_25() {
    let platform = TestPlatform::start();
    let api = TestServer::start();
    let program = r##"command pick "Pick an item" {
    option count "How many" integer required
    api list { method GET url "@API@/items/{option_count}" }
    reply {
        text "Pick one of {api_list[response.total]}"
        select chosen {
            placeholder "Items"
            for item in api_list[response.items] { choice "{item[name]}" "{item[id]}" { description "#{item_number}" } }
        }
    }
}

handler chosen {
    reply { ephemeral text "You chose item {value}" }
}
"##;
    let served = serve(program, &platform, Some(&api), &[], &[]);
    let count = |n: u32| json!([{ "name": "count", "type": 4, "value": n }]);
    let answer = served.send(&platform, &command("r1", "pick", count(3)));
    assert_eq!(answer.body["type"], 4, "{answer:?}");
    let menu = &answer.body["data"]["components"][0]["components"][0];
    assert_eq!(
        (menu["type"].clone(), menu["custom_id"].clone()),
        (json!(3), json!(component_id(program, "chosen", 0, ""))),
        "{answer:?}"
    );
    assert_eq!(
        menu["options"],
        json!([
            { "label": "item 0", "value": "0", "description": "#1", "default": false },
            { "label": "item 1", "value": "1", "description": "#2", "default": false },
            { "label": "item 2", "value": "2", "description": "#3", "default": false },
        ])
    );
    let chosen = served.send(&platform, &click("r2", &component_id(program, "chosen", 0, ""), Some(json!(["2"]))));
    assert_eq!((chosen.body["type"].clone(), chosen.body["data"]["flags"].clone()), (json!(4), json!(64)));
    assert_eq!(chosen.body["data"]["content"], "You chose item 2", "{chosen:?}");

    // 40 elements: the first 25 are sent, and the log says 15 were not.
    let answer = served.send(&platform, &command("r3", "pick", count(40)));
    let options = answer.body["data"]["components"][0]["components"][0]["options"].as_array().cloned();
    let options = options.unwrap_or_default();
    assert_eq!(options.len(), 25, "{answer:?}");
    assert_eq!(options[24]["value"], "24");
    let log = served.wait_log("warnings=B326");
    let warned = log.lines().find(|l| l.contains("a run warned") && l.contains("id=r3"));
    assert!(warned.is_some_and(|l| l.contains("code=B326") && l.contains("15 of the loop")), "{log}");
    assert!(log.lines().any(|l| l.contains("id=r3 command=pick") && l.contains("warnings=B326")), "{log}");

    // No element: the text alone, with no menu the platform would refuse.
    let answer = served.send(&platform, &command("r4", "pick", count(0)));
    assert_eq!(answer.body["data"]["content"], "Pick one of 0", "{answer:?}");
    let rows = &answer.body["data"]["components"];
    assert!(rows.as_array().is_none_or(Vec::is_empty), "{answer:?}");
}
