//! The platform's message surface as it is today (issue 54) through `blkc
//! serve` against the loopback test platform, each payload held to the
//! platform's published shape (`support::shapes`) and to what the file
//! wrote: layout messages (the answer, its update after a click on a
//! section's button, a channel post), forms of every kind of input, polls,
//! menus' defaults and kinds, premium buttons, localized choices; and the
//! shapes themselves, which refuse what the platform refuses.

use serde_json::{json, Value};

use crate::serve::serve;
use crate::support::platform::{click_showing, command, component_id, TestPlatform};
use crate::support::shapes::{assert_shape, check};

const CARD: &str = r###"var likes per channel = 0

command card "Show a card" {
    reply {
        ephemeral
        container {
            accent "#5865F2"
            section {
                text "## {user_name}"
                text "Likes: {likes}"
                thumbnail "https://cdn.example.com/a.png" { description "avatar" }
            }
            separator { large }
            gallery {
                media "https://cdn.example.com/1.png"
                media "https://cdn.example.com/2.png" { spoiler }
            }
            section {
                text "Like this card?"
                button like { label "Like" success }
            }
            button { label "Site" url "https://example.com" }
            button like { label "Like too" }
        }
        text "-# only you see this"
    }
}

handler like {
    save likes = likes + 1
    update {
        container {
            text "Liked {likes} times"
            separator { invisible }
            button like { label "Like" }
        }
    }
}
"###;

#[test]
fn a_layout_answer_and_its_update_are_the_platform_s_shapes() {
    let platform = TestPlatform::start();
    let served = serve(CARD, &platform, None, &[], &[]);
    let answer = served.send(&platform, &command("l1", "card", json!([])));
    assert_shape("answer", &answer.body);
    let data = &answer.body["data"];
    // Private, and laid out by its components alone.
    assert_eq!(data["flags"], json!(64 | (1 << 15)), "{data:#}");
    assert!(data.get("content").is_none() && data.get("embeds").is_none(), "{data:#}");
    let top = data["components"].as_array().unwrap();
    let types: Vec<&Value> = top.iter().map(|c| &c["type"]).collect();
    assert_eq!(types, [&json!(17), &json!(10)], "{data:#}");
    assert_eq!(top[1]["content"], "-# only you see this");
    let container = &top[0];
    assert_eq!(container["accent_color"], 0x5865F2);
    let parts: Vec<&Value> = container["components"].as_array().unwrap().iter().map(|c| &c["type"]).collect();
    assert_eq!(parts, [&json!(9), &json!(14), &json!(12), &json!(9), &json!(1)], "{container:#}");
    let inside = &container["components"];
    assert_eq!(inside[0]["components"][0]["content"], "## Ada");
    assert_eq!(inside[0]["components"][1]["content"], "Likes: 0");
    assert_eq!(inside[0]["accessory"]["media"]["url"], "https://cdn.example.com/a.png");
    assert_eq!(inside[0]["accessory"]["description"], "avatar");
    assert_eq!(inside[1]["spacing"], 2);
    assert_eq!(inside[2]["items"][1]["spoiler"], true);
    // A section's button beside its text; the two others share a row.
    let like = component_id(CARD, "like", 0, "");
    assert_eq!(inside[3]["accessory"]["custom_id"], like.as_str());
    assert_eq!(inside[4]["components"].as_array().map(Vec::len), Some(2));

    // A click on the section's button, as the platform sends it with the
    // message: its handler runs, and the update makes the message the
    // new layout (its content emptied with null, as the platform asks).
    let clicked = click_showing("l2", &like, None, data["components"].clone());
    let update = served.send(&platform, &clicked);
    assert_shape("update", &update.body);
    assert_eq!(update.body["type"], 7, "{update:?}\n{}", served.log());
    let data = &update.body["data"];
    assert_eq!(data["flags"], json!(1 << 15), "an edit carries no privacy flag: {data:#}");
    assert!(data.get("content").is_some_and(Value::is_null) && data["embeds"] == json!([]), "{data:#}");
    assert_eq!(data["components"][0]["components"][0]["content"], "Liked 1 times");
    assert_eq!(data["components"][0]["components"][1]["divider"], false);

    // A click on a button the message does not show is refused.
    let forged = click_showing("l3", &like, None, json!([{ "type": 10, "content": "no buttons" }]));
    let refused = served.send(&platform, &forged);
    assert_ne!(refused.body["type"], 7, "{refused:?}");
}

#[test]
fn a_layout_message_posted_to_a_channel_is_the_platform_s_shape() {
    let platform = TestPlatform::start();
    let program = format!(
        "platform \"{}\"\n{}",
        platform.api(),
        r##"command announce "Announce" {
    send to "888" {
        container {
            accent "#57F287"
            text "# Release 2.0"
            text "Out now, for {user_name}."
        }
        gallery { media "https://cdn.example.com/shot.png" { description "a screenshot" } }
    }
    reply "sent"
}
"##
    );
    let served = serve(&program, &platform, None, &[], &[("BLKC_BOT_TOKEN", "bot-token-abcdefghijklmnop")]);
    let answer = served.send(&platform, &command("l4", "announce", json!([])));
    assert_eq!(answer.body["data"]["content"], "sent", "{answer:?}\n{}", served.log());
    let posted = platform.wait_for("/channels/888/messages", 1);
    let body = &posted[0].body;
    assert_shape("channel message", body);
    assert_eq!(body["flags"], 1 << 15);
    assert_eq!(body["components"][0]["components"][1]["content"], "Out now, for Ada.");
    assert_eq!(body["components"][1]["items"][0]["description"], "a screenshot");
}

/// The shapes refuse what the platform refuses, so that a test holding a
/// payload to them can fail: a section of four texts, a text over 4,000
/// characters, a field the description does not name; and take the
/// messages blkc sent before layouts (text, embeds, rows, a form).
#[test]
fn the_platform_s_shapes_refuse_what_it_refuses_and_take_the_older_messages() {
    let text = |s: &str| json!({ "type": 10, "content": s });
    let thumb = json!({ "type": 11, "media": { "url": "https://e.com/a.png" } });
    let section = |n: usize| json!({ "type": 9, "components": vec![text("x"); n], "accessory": thumb });
    let message = |components: Value| json!({ "flags": 1 << 15, "components": components });
    assert!(check("channel message", &message(json!([section(3)]))).is_ok());
    for (bad, why) in [
        (message(json!([section(4)])), "4 items"),
        (message(json!([section(0)])), "0 items"),
        (message(json!([text(&"x".repeat(4001))])), "4001 characters"),
        (message(json!([{ "type": 17, "components": [text("x")], "accent": 1 }])), "`accent`"),
        (message(json!(vec![text("x"); 41])), "41 items"),
    ] {
        let problems = check("channel message", &bad).expect_err(why).join("\n");
        assert!(problems.contains(why), "{why}: {problems}");
    }
    let older = json!({
        "content": "hi", "allowed_mentions": { "parse": [] },
        "embeds": [{ "title": "t", "color": 1, "fields": [{ "name": "a", "value": "b", "inline": true }] }],
        "components": [{ "type": 1, "components": [{ "type": 2, "style": 1, "label": "Go", "custom_id": "blk2:go:0:" }] }]
    });
    assert_shape("channel message", &older);
    assert_shape("answer", &json!({ "type": 4, "data": older }));
    let form = json!({ "type": 9, "data": { "custom_id": "f", "title": "T", "components": [
        { "type": 18, "label": "Topic", "component": { "type": 4, "custom_id": "topic", "style": 1 } }
    ] } });
    assert_shape("form", &form);
}

/// What a `{…}` fills in is held to the platform's limits when the message
/// is sent, each change a warning (B326): a text past 4,000 characters cut,
/// a thumbnail that is no web address left out (its section's texts shown
/// alone), a gallery with no image left out, a colour that is none left out.
#[test]
fn a_layout_s_filled_values_are_held_to_the_limits_with_a_warning_each() {
    let dir = tempfile::tempdir().unwrap();
    let program = r#"command card "A card" {
    option colour "A colour"
    option long "A text"
    option picture "A picture"
    reply {
        container {
            accent "{option_colour}"
            section {
                text "{option_long}"
                thumbnail "{option_picture}"
            }
            gallery { media "{option_picture}" }
            text "kept"
        }
    }
}
"#;
    std::fs::write(dir.path().join("bot.blk"), program).unwrap();
    let long = "x".repeat(4100);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_blkc"))
        .args(["run", "bot.blk", "--command", "card", "--offline", "--format", "json"])
        .args(["--var", &format!("option_long={long}"), "--var", "option_picture=javascript:alert(1)"])
        .args(["--var", "option_colour=blue"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let events: Vec<Value> = stdout.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    let warnings: Vec<String> = events
        .iter()
        .filter(|e| e["code"] == "B326")
        .map(|e| e["message"].as_str().unwrap_or_default().to_string())
        .collect();
    let said = |part: &str| warnings.iter().any(|w| w.contains(part));
    assert!(said("a layout text was cut to 4000 characters"), "{warnings:#?}");
    assert!(said("a section's thumbnail was left out"), "{warnings:#?}");
    assert!(said("a gallery with no image left to show was left out"), "{warnings:#?}");
    assert!(said("`accent` was left out"), "{warnings:#?}");
    let reply = events.iter().find(|e| e["event"] == "reply").expect("a reply");
    let parts = &reply["layout"][0]["parts"];
    assert!(reply["layout"][0].get("accent").is_none(), "{reply:#}");
    assert_eq!(parts.as_array().map(Vec::len), Some(2), "the section's text alone, then `kept`: {reply:#}");
    let text = parts[0]["text"].as_str().unwrap();
    assert_eq!(text.encode_utf16().count(), 4000);
    assert!(text.ends_with('…'));
    assert_eq!(parts[1]["text"], "kept");
}

const APPLICATION: &str = r#"command apply "Apply" {
    form application {
        title "Staff application"
        text "Tell us about **you**."
        input why { label "Why?" description "A few lines" paragraph max 100 }
        input team {
            label "Team"
            choice "Moderation" "mod"
            choice "Events" "events" { description "Game nights" }
        }
        input mentor { label "A mentor" users optional }
        input proof { label "Your work" upload max 2 types "image .pdf" }
    }
}

command more "More" {
    form more {
        title "A little more"
        input level {
            label "Experience"
            radio
            choice "New" "new"
            choice "Some" "some"
        }
        input days {
            label "Days"
            checkboxes
            min 1
            choice "Mon" "mon"
            choice "Tue" "tue"
            choice "Wed" "wed"
        }
        input agree { label "I read the rules" checkbox default }
    }
}

handler application {
    reply "why={field_why} team={field_team} mentor={field_mentor} proof={field_proof} name={field_proof_name} type={field_proof_type} size={field_proof_size}"
}

handler more {
    reply "level={field_level} days={field_days} agree={field_agree}"
}
"#;

/// A form as the platform has them now: each input in a Label with its
/// description, of its kind (a paragraph, a menu, a member menu, an upload,
/// a radio group, checkboxes, a checkbox), a text beside them; its
/// submission in the platform's real shape gives each its variables.
#[test]
fn a_form_of_every_kind_of_input_is_shown_and_its_submission_read() {
    let platform = TestPlatform::start();
    let served = serve(APPLICATION, &platform, None, &[], &[]);
    let answer = served.send(&platform, &command("f1", "apply", json!([])));
    assert_eq!(answer.body["type"], 9, "{answer:?}\n{}", served.log());
    let mut shown = answer.body.clone();
    let kinds = |shown: &Value| -> Vec<Value> {
        let parts = shown["data"]["components"].as_array().cloned().unwrap_or_default();
        parts.iter().map(|p| json!([p["type"], p["component"]["type"]])).collect()
    };
    let types = [json!([10, null]), json!([18, 4]), json!([18, 3]), json!([18, 5]), json!([18, 19])];
    assert_eq!(kinds(&shown), types, "{shown:#}");
    let parts = &shown["data"]["components"];
    assert_eq!(parts[1]["description"], "A few lines");
    assert_eq!(parts[1]["component"]["style"], 2);
    assert_eq!(parts[4]["component"]["file_types"], json!(["image", ".pdf"]));
    // (The published description has no `file_types` yet; its docs do.)
    shown["data"]["components"][4]["component"].as_object_mut().unwrap().remove("file_types");
    assert_shape("form", &shown);
    let second = served.send(&platform, &command("f0", "more", json!([])));
    assert_shape("form", &second.body);
    assert_eq!(kinds(&second.body), [json!([18, 21]), json!([18, 22]), json!([18, 23])], "{second:?}");
    let parts = &second.body["data"]["components"];
    assert_eq!(parts[1]["component"]["min_values"], 1);
    assert_eq!(parts[2]["component"], json!({ "type": 23, "custom_id": "agree", "default": true }));

    let form_id = answer.body["data"]["custom_id"].as_str().unwrap().to_string();
    let mut sent = command("f2", "", json!([]));
    sent["type"] = json!(5);
    let label = |c: Value| json!({ "type": 18, "id": 1, "component": c });
    sent["data"] = json!({ "custom_id": form_id, "components": [
        { "type": 10, "id": 2 },
        label(json!({ "type": 4, "custom_id": "why", "value": "I like helping" })),
        label(json!({ "type": 3, "custom_id": "team", "values": ["events"] })),
        label(json!({ "type": 5, "custom_id": "mentor", "values": ["42"] })),
        label(json!({ "type": 19, "custom_id": "proof", "values": ["9001", "9002"] })),
    ], "resolved": { "attachments": {
        "9001": { "id": "9001", "filename": "shot.png", "size": 2048, "content_type": "image/png", "url": "https://cdn.discordapp.com/attachments/1/9001/shot.png" },
        "9002": { "id": "9002", "filename": "cv.pdf", "size": 4096, "content_type": "application/pdf", "url": "https://cdn.discordapp.com/attachments/1/9002/cv.pdf" }
    } } });
    let answer = served.send(&platform, &sent);
    assert_eq!(
        answer.body["data"]["content"],
        "why=I like helping team=events mentor=42 proof=https://cdn.discordapp.com/attachments/1/9001/shot.png, https://cdn.discordapp.com/attachments/1/9002/cv.pdf name=shot.png, cv.pdf type=image/png, application/pdf size=2048, 4096",
        "{answer:?}\n{}",
        served.log()
    );
    let mut other = command("f4", "", json!([]));
    other["type"] = json!(5);
    other["data"] = json!({ "custom_id": second.body["data"]["custom_id"], "components": [
        label(json!({ "type": 21, "custom_id": "level", "value": "some" })),
        label(json!({ "type": 22, "custom_id": "days", "values": ["mon", "wed"] })),
        label(json!({ "type": 23, "custom_id": "agree", "value": false })),
    ] });
    let answer = served.send(&platform, &other);
    assert_eq!(answer.body["data"]["content"], "level=some days=mon, wed agree=false", "{answer:?}");

    // A forged submission: a member menu's value that is no id.
    sent["id"] = json!("f5");
    sent["data"]["components"][3]["component"]["values"] = json!(["../../users/@me"]);
    let refused = served.send(&platform, &sent);
    assert_ne!(refused.body["data"]["content"].as_str().map(|c| c.starts_with("why=")), Some(true), "{refused:?}");
    sent["data"]["components"][3]["component"]["values"] = json!(["42"]);
    // A forged submission: three files where the upload takes two.
    sent["id"] = json!("f3");
    sent["data"]["components"][4]["component"]["values"] = json!(["1", "2", "3"]);
    let refused = served.send(&platform, &sent);
    assert_ne!(refused.body["data"]["content"].as_str().map(|c| c.starts_with("why=")), Some(true), "{refused:?}");
}

/// A poll in a reply and in a channel post, as the platform creates one
/// (held to its published shape), and ended early by `end poll`: its
/// route, and its results read from the message the platform answers.
#[test]
fn a_poll_is_sent_in_the_platform_s_shape_and_ended_with_its_results() {
    let platform = TestPlatform::start();
    let program = format!(
        "platform \"{}\"\n{}",
        platform.api(),
        r#"command ask "Ask" {
    reply {
        text "Vote below"
        poll {
            question "Tea or coffee?"
            answer "Tea" { emoji "🍵" }
            answer "Coffee"
            duration "2d"
            multiple
        }
    }
}

command post "Post" {
    send to "888" as asked { poll { question "Which day?" answer "Mon" answer "Tue" } }
    end poll "{api_asked[response.id]}" in "888" as ended
    reply "ended {api_ended[response.poll.results.is_finalized]}"
}
"#
    );
    let served = serve(&program, &platform, None, &[], &[("BLKC_BOT_TOKEN", "bot-token-abcdefghijklmnop")]);
    let answer = served.send(&platform, &command("p1", "ask", json!([])));
    assert_shape("answer", &answer.body);
    assert_eq!(
        answer.body["data"]["poll"],
        json!({ "question": { "text": "Tea or coffee?" }, "duration": 48, "allow_multiselect": true, "answers": [
            { "poll_media": { "text": "Tea", "emoji": { "name": "🍵" } } }, { "poll_media": { "text": "Coffee" } }
        ] }),
        "{answer:?}"
    );
    platform.answer(
        "POST",
        "/api/channels/888/polls/",
        200,
        json!({ "id": "5", "poll": { "results": { "is_finalized": true } } }),
    );
    let answer = served.send(&platform, &command("p2", "post", json!([])));
    assert_eq!(answer.body["data"]["content"], "ended true", "{answer:?}\n{}", served.log());
    let posted = platform.wait_for("/channels/888/messages", 1);
    assert_shape("channel message", &posted[0].body);
    assert_eq!(posted[0].body["poll"]["duration"], 24, "a day unless it says");
    let ended = platform.calls().into_iter().find(|c| c.path.ends_with("/expire")).expect("the poll was ended");
    assert_eq!((ended.method.as_str(), ended.body.is_null()), ("POST", true));
    assert!(ended.path.starts_with("/api/channels/888/polls/"), "{}", ended.path);
}

/// Issue 54's smaller items on the wire: a menu's default members and a
/// menu of channels' kinds, and a premium button, each in the platform's
/// shape.
#[test]
fn a_menu_s_defaults_and_channel_kinds_and_a_premium_button_are_sent() {
    let platform = TestPlatform::start();
    let program = r#"command pick "Pick" {
    reply {
        text "Pick"
        select who { users max 2 defaults "{user_id} <@42>" }
        select room { channels types "text forum" }
        button { sku "1088510058284990888" }
    }
}

handler who {
    reply "{values}"
}

handler room {
    reply "{value}"
}
"#;
    let served = serve(program, &platform, None, &[], &[]);
    let answer = served.send(&platform, &command("s1", "pick", json!([])));
    assert_shape("answer", &answer.body);
    let rows = &answer.body["data"]["components"];
    assert_eq!(
        rows[0]["components"][0]["default_values"],
        json!([{ "id": "1001", "type": "user" }, { "id": "42", "type": "user" }]),
        "{rows:#}"
    );
    assert_eq!(rows[1]["components"][0]["channel_types"], json!([0, 15]));
    assert_eq!(rows[2]["components"][0], json!({ "type": 2, "style": 6, "sku_id": "1088510058284990888" }));
}

/// A choice's name in a `locale`'s language is registered with it, and a
/// locale naming no choice is refused.
#[test]
fn a_choice_is_registered_with_its_names_in_other_languages() {
    let dir = tempfile::tempdir().unwrap();
    let program = r#"command colour "Pick a colour" {
    option c "The colour" choices { Red = "red", Blue = "blue" }
    locale fr "couleur" "Choisir une couleur" {
        "Red" "Rouge"
        "Blue" "Bleu"
    }
    locale de "farbe" "Eine Farbe wählen" { "Red" "Rot" }
    reply "{option_c}"
}
"#;
    std::fs::write(dir.path().join("bot.blk"), program).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_blkc"))
        .args(["deploy", "bot.blk", "--dry-run"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    let start = stdout.find('[').expect("the commands as JSON");
    let commands: Value = serde_json::Deserializer::from_str(&stdout[start..]).into_iter().next().unwrap().unwrap();
    let choices = &commands[0]["options"][0]["choices"];
    assert_eq!(choices[0]["name_localizations"], json!({ "de": "Rot", "fr": "Rouge" }), "{commands:#}");
    assert_eq!(choices[1]["name_localizations"], json!({ "fr": "Bleu" }));
    std::fs::write(dir.path().join("bot.blk"), program.replace("\"Blue\" \"Bleu\"", "\"Green\" \"Vert\"")).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_blkc"))
        .args(["check", "bot.blk"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr).to_string() + &String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success() && said.contains("has no choice `Green`"), "{said}");
}

/// Every limit of the platform blkc holds a message to is one line of
/// `discord::limits`, and each is the platform's as its published API
/// description says it (tests/fixtures/platform/message-schemas.json): a
/// change of a limit there fails here, naming the line to change.
#[test]
fn each_message_limit_blkc_holds_is_the_platform_s_published_one() {
    use blkc::discord::limits;
    let schemas =
        &serde_json::from_str::<Value>(include_str!("fixtures/platform/message-schemas.json")).unwrap()["schemas"];
    let at = |path: &str| -> u64 {
        let mut v = schemas;
        for key in path.split('.') {
            v = &v[key];
        }
        v.as_u64().unwrap_or_else(|| panic!("{path} is no number in the description"))
    };
    let pinned: &[(&str, u64, &str)] = &[
        // (A message's `content` is 2,000 characters as the docs say; the
        // description's 4,000 is not a bot's. A message of rows takes 5 of
        // them, as the docs say; the description's 40 is a layout's.)
        ("EMBEDS", limits::EMBEDS as u64, "MessageCreateRequest.properties.embeds.maxItems"),
        ("LAYOUT_COMPONENTS", limits::LAYOUT_COMPONENTS as u64, "MessageCreateRequest.properties.components.maxItems"),
        (
            "LAYOUT_COMPONENTS",
            limits::LAYOUT_COMPONENTS as u64,
            "ContainerComponentForMessageRequest.properties.components.maxItems",
        ),
        (
            "LAYOUT_TEXT",
            limits::LAYOUT_TEXT as u64,
            "TextDisplayComponentForMessageRequest.properties.content.maxLength",
        ),
        (
            "SECTION_TEXTS",
            limits::SECTION_TEXTS as u64,
            "SectionComponentForMessageRequest.properties.components.maxItems",
        ),
        (
            "GALLERY_ITEMS",
            limits::GALLERY_ITEMS as u64,
            "MediaGalleryComponentForMessageRequest.properties.items.maxItems",
        ),
        (
            "MEDIA_DESCRIPTION",
            limits::MEDIA_DESCRIPTION as u64,
            "MediaGalleryItemRequest.properties.description.maxLength",
        ),
        ("MEDIA_URL", limits::MEDIA_URL as u64, "UnfurledMediaRequest.properties.url.maxLength"),
        (
            "ROW_BUTTONS",
            limits::ROW_BUTTONS as u64,
            "ActionRowComponentForMessageRequest.properties.components.maxItems",
        ),
        (
            "MENU_CHOICES",
            limits::MENU_CHOICES as u64,
            "StringSelectComponentForMessageRequest.properties.options.maxItems",
        ),
        ("CUSTOM_ID", limits::CUSTOM_ID as u64, "ButtonComponentForMessageRequest.properties.custom_id.maxLength"),
        ("LINK_URL", limits::LINK_URL as u64, "ButtonComponentForMessageRequest.properties.url.maxLength"),
        (
            "INPUT_TEXT",
            u64::from(limits::INPUT_TEXT),
            "TextInputComponentForModalRequest.properties.max_length.maximum",
        ),
        (
            "UPLOAD_FILES",
            u64::from(limits::UPLOAD_FILES),
            "FileUploadComponentForModalRequest.properties.max_values.maximum",
        ),
        (
            "GROUP_CHOICES",
            limits::GROUP_CHOICES as u64,
            "CheckboxGroupComponentForModalRequest.properties.options.maxItems",
        ),
        ("POLL_ANSWERS", limits::POLL_ANSWERS as u64, "PollCreateRequest.properties.answers.maxItems"),
        ("FILES", limits::FILES as u64, "MessageCreateRequest.properties.attachments.maxItems"),
        ("FILE_NAME", limits::FILE_NAME as u64, "MessageAttachmentRequest.properties.filename.maxLength"),
        (
            "FILE_DESCRIPTION",
            limits::FILE_DESCRIPTION as u64,
            "MessageAttachmentRequest.properties.description.maxLength",
        ),
        ("POLL_HOURS", u64::from(limits::POLL_HOURS), "PollCreateRequest.properties.duration.maximum"),
        ("POLL_QUESTION", limits::POLL_QUESTION as u64, "PollMedia.properties.text.maxLength"),
        // (An answer's 55 characters are the docs'; the description says 300.)
    ];
    let wrong: Vec<String> = pinned
        .iter()
        .filter(|(_, ours, path)| *ours != at(path))
        .map(|(name, ours, path)| format!("limits::{name} is {ours}; the platform's {path} is {}", at(path)))
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// 9 MiB of bytes no text encoding would keep: every byte value, in an
/// order that repeats only every 251 bytes.
fn nine_mib() -> Vec<u8> {
    (0..9u32 << 20).map(|i| (i.wrapping_mul(31) % 251) as u8).collect()
}

/// A reply with files: the platform's answer to the interaction is
/// "thinking" (its HTTP answer is JSON, never an upload), then the message
/// edits it as an upload: a multipart body whose `payload_json` is an edit
/// of an answer in the platform's shape, listing each file by its place,
/// and each file as `files[n]` with its name, type and every byte (one of
/// 9 MiB); an embed shows one of them by `attachment://`. A private reply
/// thinks in private.
#[test]
fn a_reply_with_files_is_uploaded_as_the_platform_takes_files() {
    let platform = TestPlatform::start();
    let program = r#"command export "Export" {
    option qty "How many"
    reply {
        text "Your export, {user_name}"
        file "data.bin" { description "Every byte" }
        file text "name,qty\nlamp,{option_qty}\n" { filename "stock.csv" }
        file "chart.png" { spoiler }
        embed {
            title "Chart"
            image "attachment://chart.png"
        }
    }
}

command mine "Mine" {
    reply {
        ephemeral
        file text "only yours" { filename "note.txt" }
    }
}
"#;
    let png = b"\x89PNG\r\n\x1a\n not really".to_vec();
    let data = nine_mib();
    let beside: &[(&str, &[u8])] = &[("data.bin", &data), ("chart.png", &png)];
    let served = crate::serve::serve_beside(program, &platform, &[], &[], beside);
    let options = json!([{ "name": "qty", "type": 3, "value": "3" }]);
    let answer = served.send(&platform, &command("f1", "export", options));
    assert_eq!(answer.body, json!({ "type": 5 }), "thinking first: {answer:?}\n{}", served.log());
    let edits = platform.wait_for("/messages/@original", 1);
    let edit = edits.first().unwrap_or_else(|| panic!("no edit: {}", served.log()));
    assert_eq!(edit.method, "PATCH");
    assert!(edit.content_type.as_deref().unwrap_or_default().starts_with("multipart/form-data; boundary="));
    assert_shape("edit of an answer", &edit.body);
    assert_eq!(edit.body["content"], "Your export, Ada");
    assert_eq!(
        edit.body["attachments"],
        json!([
            { "id": "0", "filename": "data.bin", "description": "Every byte" },
            { "id": "1", "filename": "stock.csv" },
            { "id": "2", "filename": "chart.png", "is_spoiler": true },
        ])
    );
    assert_eq!(edit.body["embeds"][0]["image"]["url"], "attachment://chart.png");
    let files: Vec<(&str, &str, &str, usize)> = edit
        .files
        .iter()
        .map(|f| {
            let name = f.name.as_deref().unwrap_or_default();
            (
                name,
                f.filename.as_deref().unwrap_or_default(),
                f.content_type.as_deref().unwrap_or_default(),
                f.bytes.len(),
            )
        })
        .collect();
    assert_eq!(
        files,
        [
            ("files[0]", "data.bin", "application/octet-stream", 9 << 20),
            ("files[1]", "stock.csv", "text/csv", 16),
            ("files[2]", "chart.png", "image/png", png.len())
        ]
    );
    assert!(edit.files[0].bytes == data, "the 9 MiB file, every byte");
    assert_eq!(edit.files[1].bytes, b"name,qty\nlamp,3\n");
    assert_eq!(edit.files[2].bytes, png);
    // A private reply with a file thinks in private (an edit keeps it so).
    let answer = served.send(&platform, &command("f2", "mine", json!([])));
    assert_eq!(answer.body, json!({ "type": 5, "data": { "flags": 64 } }), "{answer:?}");
    let edits = platform.wait_for("/messages/@original", 2);
    assert_eq!(edits.len(), 2, "{}", served.log());
    assert_shape("edit of an answer", &edits[1].body);
    assert_eq!(edits[1].files[0].bytes, b"only yours");
}

/// A file over the platform's 10 MiB is refused before anything of its
/// message is sent: the run fails with B337 saying the file and its size,
/// and the platform is sent no upload.
#[test]
fn a_file_over_the_upload_limit_is_refused_before_it_is_sent() {
    let platform = TestPlatform::start();
    let api = crate::support::server::TestServer::start();
    let program = r#"command export "Export" {
    api big {
        method GET
        url "@API@/big/11534336"
    }
    reply {
        text "Here it is"
        file api_big { filename "big.json" }
    }
}
"#;
    let served = serve(program, &platform, Some(&api), &["--max-response-size", "20000000"], &[]);
    let answer = served.send(&platform, &command("g1", "export", json!([])));
    let log = served.wait_log("B337");
    assert!(log.contains("file `big.json` cannot be sent: it is 11534338 bytes"), "{log}");
    assert_ne!(crate::serve::content(&answer), "Here it is", "{answer:?}");
    let uploads: Vec<_> = platform.calls().into_iter().filter(|c| !c.files.is_empty()).collect();
    assert!(uploads.is_empty(), "nothing uploaded: {uploads:?}");
}

/// Files in a layout message and in a message an action sends: in a layout
/// message, a file stands where it is written as a File component, unless
/// an image of the message shows it (`attachment://`); a message sent to a
/// channel is an upload too, in the platform's shape.
#[test]
fn files_stand_in_layout_messages_and_go_with_sent_messages() {
    let platform = TestPlatform::start();
    let program = format!(
        "platform \"{}\"\n{}",
        platform.api(),
        r#"command card "Card" {
    reply {
        container {
            section {
                text "The chart"
                thumbnail "attachment://chart.png"
            }
            file "notes.txt" { spoiler }
        }
        file "chart.png"
    }
}

command post "Post" {
    send to "888" {
        text "The numbers"
        file text "a,b\n1,2\n" { filename "numbers.csv" type "text/csv; charset=utf-8" }
    }
    reply "posted"
}
"#
    );
    let beside: &[(&str, &[u8])] = &[("chart.png", b"png"), ("notes.txt", b"notes")];
    let env = [("BLKC_BOT_TOKEN", "bot-token-abcdefghijklmnop")];
    let served = crate::serve::serve_beside(&program, &platform, &[], &env, beside);
    let answer = served.send(&platform, &command("h1", "card", json!([])));
    assert_eq!(answer.body["type"], 5, "{answer:?}");
    let edit = platform.wait_for("/messages/@original", 1).pop().unwrap_or_else(|| panic!("{}", served.log()));
    assert_shape("edit of an answer", &edit.body);
    assert_eq!(edit.body["flags"], 1 << 15, "a layout message");
    let container = &edit.body["components"][0];
    assert_eq!(container["components"][0]["accessory"]["media"]["url"], "attachment://chart.png");
    assert_eq!(
        container["components"][1],
        json!({ "type": 13, "file": { "url": "attachment://notes.txt" }, "spoiler": true })
    );
    assert_eq!(edit.body["components"].as_array().map(Vec::len), Some(1), "the chart is shown by the thumbnail");
    let names: Vec<_> = edit.files.iter().map(|f| f.filename.clone().unwrap_or_default()).collect();
    assert_eq!(names, ["notes.txt", "chart.png"]);
    let answer = served.send(&platform, &command("h2", "post", json!([])));
    assert_eq!(crate::serve::content(&answer), "posted", "{answer:?}\n{}", served.log());
    let posted = platform.wait_for("/channels/888/messages", 1).pop().unwrap();
    assert_shape("channel message", &posted.body);
    assert_eq!(posted.body["attachments"], json!([{ "id": "0", "filename": "numbers.csv" }]));
    assert_eq!(posted.files[0].content_type.as_deref(), Some("text/csv; charset=utf-8"));
    assert_eq!(posted.files[0].bytes, b"a,b\n1,2\n");
}

/// A component with `expires` stops working that long after its message was
/// sent, by the time the platform gives the message: a click within it
/// runs, one past it is told it has expired and runs nothing, and a click
/// on a message that says no time is held to the limit too (it cannot be
/// told to be within it).
#[test]
fn a_component_past_its_expiry_is_told_so_and_runs_nothing() {
    let platform = TestPlatform::start();
    let program = r#"command ask "Ask" {
    reply {
        text "Quick!"
        button go { label "Go" expires "10m" }
    }
}

handler go {
    reply "went"
}
"#;
    let served = serve(program, &platform, None, &[], &[]);
    let id = component_id(program, "go", 0, "");
    let at = |minutes_ago: i64| {
        let t = time::OffsetDateTime::now_utc() - time::Duration::minutes(minutes_ago);
        t.format(&time::format_description::well_known::Rfc3339).unwrap()
    };
    let clicked = |n: &str, sent: Option<String>| {
        let mut body = crate::support::platform::click(n, &id, None);
        if let Some(sent) = sent {
            body["message"]["timestamp"] = json!(sent);
        }
        served.send(&platform, &body)
    };
    let answer = clicked("e1", Some(at(9)));
    assert_eq!(crate::serve::content(&answer), "went", "{answer:?}\n{}", served.log());
    for (n, sent) in [("e2", Some(at(11))), ("e3", None), ("e4", Some("yesterday-ish".to_string()))] {
        let answer = clicked(n, sent);
        assert_eq!(crate::serve::content(&answer), "This has expired: it no longer does anything.", "{answer:?}");
        assert_eq!(answer.body["data"]["flags"], 64, "told privately");
    }
    let three = || served.log().matches("outcome=expired").count() == 3;
    assert!(crate::support::wait::eventually(20, three), "{}", served.log());
    assert!(!served.log().contains("went\""), "nothing past its time ran");
}

/// A form's upload passed on with a message (`file field_NAME`): each file
/// the member uploaded is fetched from where the platform keeps it (here
/// its own origin) and uploaded with the handler's message under its own
/// name; a file anywhere else is never fetched.
#[test]
fn a_form_s_uploaded_files_go_on_with_a_message() {
    let platform = TestPlatform::start();
    let program = r#"command apply "Apply" {
    form application {
        title "Apply"
        input work { label "Work" upload max 2 }
    }
}

handler application {
    reply {
        text "Got {field_work_name}"
        file field_work
    }
}
"#;
    let served = serve(program, &platform, None, &[], &[]);
    let answer = served.send(&platform, &command("u1", "apply", json!([])));
    let form_id = answer.body["data"]["custom_id"].as_str().unwrap().to_string();
    let base = format!("http://127.0.0.1:{}", platform.port);
    let submitted = |n: &str, url: String| {
        let mut sent = command(n, "", json!([]));
        sent["type"] = json!(5);
        sent["data"] = json!({ "custom_id": form_id, "components": [
            { "type": 18, "id": 1, "component": { "type": 19, "custom_id": "work", "values": ["9001", "9002"] } },
        ], "resolved": { "attachments": {
            "9001": { "id": "9001", "filename": "a.csv", "size": 40, "content_type": "text/csv", "url": url },
            "9002": { "id": "9002", "filename": "b.csv", "size": 40, "content_type": "text/csv", "url": format!("{base}/attachments/1/9002/b.csv") }
        } } });
        served.send(&platform, &sent)
    };
    let answer = submitted("u2", format!("{base}/attachments/1/9001/a.csv"));
    assert_eq!(answer.body["type"], 5, "{answer:?}\n{}", served.log());
    let edit = platform.wait_for("/messages/@original", 1).pop().unwrap_or_else(|| panic!("{}", served.log()));
    assert_shape("edit of an answer", &edit.body);
    assert_eq!(edit.body["content"], "Got a.csv, b.csv");
    let files: Vec<(String, String)> = edit
        .files
        .iter()
        .map(|f| (f.filename.clone().unwrap_or_default(), String::from_utf8_lossy(&f.bytes).into_owned()))
        .collect();
    assert_eq!(
        files,
        [
            ("a.csv".to_string(), "week,orders\n48,141\nfrom /attachments/1/9001/a.csv\n".to_string()),
            ("b.csv".to_string(), "week,orders\n48,141\nfrom /attachments/1/9002/b.csv\n".to_string())
        ]
    );
    // A file anywhere else is not fetched: nothing is sent, and the run says why.
    let answer = submitted("u3", "http://127.0.0.1:9/elsewhere.csv".to_string());
    assert_ne!(answer.body["type"], 5, "{answer:?}");
    let log = served.wait_log("B337");
    assert!(log.contains("not where the platform keeps files"), "{log}");
    assert_eq!(platform.wait_for("/messages/@original", 1).len(), 1, "no second upload");
}
