//! Buttons, select menus and forms end to end: `blkc serve`, the test
//! platform signing interactions of types 3 and 5 in the platform's shapes,
//! and every answer type blkc gives them (4, 6, 7, 9).

use serde_json::json;

use crate::serve::serve;
use crate::support::platform::{click, command, submit, TestPlatform};
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
    assert_eq!(buttons[0]["custom_id"], "blk1:vote:0:yes");
    assert_eq!(buttons[1]["custom_id"], "blk1:vote:1:yes");
    assert_eq!(buttons[2]["style"], 5);
    assert_eq!(buttons[2]["url"], "https://example.com/rules");
    assert!(buttons[2]["custom_id"].is_null(), "a link carries no id: {buttons}");
    let menu = &rows[1]["components"][0];
    assert_eq!((menu["type"].clone(), menu["custom_id"].clone()), (json!(3), json!("blk1:pick:3:")));
    assert_eq!(menu["max_values"], 2);
    assert_eq!(
        menu["options"][1],
        json!({ "label": "Blue", "value": "blue", "emoji": { "name": "🟦" }, "default": false })
    );

    // A click: the message is updated (type 7), with no flag, its
    // components left as they are.
    let answer = served.send(&platform, &click("c2", "blk1:vote:0:yes", None));
    assert_eq!(answer.body["type"], 7, "{answer:?}");
    assert_eq!(answer.body["data"]["content"], "Votes: 1 (last yes by Ada)");
    assert!(answer.body["data"]["flags"].is_null() && answer.body["data"]["components"].is_null(), "{answer:?}");
    let answer = served.send(&platform, &click("c3", "blk1:vote:1:yes", None));
    assert_eq!(answer.body["data"]["content"], "Votes: 2 (last yes by Ada)");

    // A choice: the values, in a private new message (type 4, flags 64).
    let answer = served.send(&platform, &click("c4", "blk1:pick:3:", Some(json!(["red", "blue"]))));
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
    assert_eq!((data["custom_id"].clone(), data["title"].clone()), (json!("blk1:got:0:"), json!("Feedback for Ada")));
    let inputs: Vec<_> = data["components"].as_array().unwrap().iter().map(|r| r["components"][0].clone()).collect();
    assert_eq!(inputs.len(), 2);
    assert_eq!(
        inputs[0],
        json!({ "type": 4, "custom_id": "topic", "label": "Topic", "style": 1, "max_length": 100,
                "placeholder": "What about?", "required": true })
    );
    assert_eq!((inputs[1]["style"].clone(), inputs[1]["required"].clone()), (json!(2), json!(false)));
    // Sent in rows, then in the newer labels: the fields come through; one
    // left out of the submission is empty.
    for (id, labels) in [("f2", false), ("f3", true)] {
        let answer = served.send(&platform, &submit(id, "blk1:got:0:", &[("topic", "Docs")], labels));
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
    let log = served.wait_log("id=s4");
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
    let answer = served.send(&platform, &click("q1", "blk1:quiet:0:", None));
    assert_eq!(answer.body, json!({ "type": 6 }), "{answer:?}");
    // An update that takes longer than the deadline: type 6 first, then an
    // edit of the message the button is on.
    let answer = served.send(&platform, &click("q2", "blk1:slow:1:", None));
    assert_eq!(answer.body, json!({ "type": 6 }), "{answer:?}");
    let edit = platform.wait_for("itoken-q2-secretpart/messages/@original", 1);
    assert_eq!(edit.len(), 1, "{}", served.log());
    assert_eq!((edit[0].method.as_str(), edit[0].body["content"].as_str()), ("PATCH", Some("Done slowly")));
    let button = &edit[0].body["components"][0]["components"][0];
    assert_eq!((button["label"].clone(), button["disabled"].clone()), (json!("Again"), json!(true)), "{button}");
    assert!(platform.calls().iter().all(|c| !c.path.contains("itoken-q1")), "{:?}", platform.calls());
}
