//! `for` loops end to end: `blkc run` over real responses from a server on
//! 127.0.0.1 (nested lists, empty lists, lists of scalars, a list of
//! 100,000 objects), requests and saves inside loops, and the run's bounds.

use std::process::Command;

use crate::support::server::TestServer;
use serde_json::Value;

use crate::run::Ran;

/// Runs `command` of `text` (with `@SERVER@` the server's base URL) with
/// JSON events and a store of its own.
fn run(text: &str, server: &TestServer, command: &str, args: &[&str]) -> Ran {
    let program = crate::run::program(text, server);
    let mut all = vec!["--command", command];
    all.extend_from_slice(args);
    crate::run::json_run(&program, &all)
}

#[test]
fn loops_over_nested_empty_null_and_scalar_lists() {
    let server = TestServer::start();
    let ran = run(
        r#"command lists {
    api l { method GET url "@SERVER@/fixture/lists.json" }
    for row in api_l[response.matrix] join " | " into rows {
        for cell in row join "," into cells {
            text "{cell}"
        }
        text "{row_number}:{cells}"
    }
    reply "{rows}"
    for x in api_l[response.empty] join "," into e {
        text "{x}"
    }
    for x in api_l[response.none] join "," into n {
        text "{x}"
    }
    reply "[{e}][{n}]"
    for w in api_l[response.words] join "" into ws {
        text "{w_index}{w}"
    }
    reply "{ws}"
    for p in api_l[response.people] {
        for pet in p[pets] join " and " into pets {
            text "{pet[kind]}"
        }
        if "{pets}" {
            reply "{p[name]} has {pets}"
        } else {
            reply "{p[name]} has no pets"
        }
    }
}
"#,
        &server,
        "lists",
        &[],
    );
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    assert_eq!(
        ran.replies(),
        ["1:1,2 | 2:3 | 3:", "[][]", "0a1b2c", "Ann has cat and dog", "Bo has no pets", "Cy has no pets"]
    );
    // Cy has no `pets`: a path that does not resolve is an empty list, with
    // a warning; `null` is one without.
    assert_eq!(ran.stdout.matches("\"B307\"").count(), 1, "{}", ran.stdout);
}

#[test]
fn a_list_of_100000_elements_within_the_bounds() {
    let server = TestServer::start();
    let text = r#"command big {
    api list { method GET url "@SERVER@/items/100000" }
    for item in api_list[response.items] limit 3 join ", " into first {
        text "{item[name]}"
    }
    reply "{first} of {api_list[response.total]}"
    for item in api_list[response.items] limit 5000 join "" into ticks {
        if item[id] >= 4998 {
            text "{item_number};"
        }
    }
    reply "{ticks}"
    for item in api_list[response.items] limit 1000 join "," into found {
        if item[name] == "item 41" {
            text "{item_index}"
            stop
        }
    }
    reply "found {found}"
}
"#;
    let ran = run(text, &server, "big", &[]);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    assert_eq!(ran.replies(), ["item 0, item 1, item 2 of 100000", "4999;5000;", "found 41"]);
    // Without its limit the last loop could run 100,000 times: it is
    // refused as a whole (a `stop` might end it sooner, but a run's bound
    // holds whatever the list holds), and nothing of it runs.
    let unlimited = text.replace(" limit 1000", "");
    let ran = run(&unlimited, &server, "big", &[]);
    assert_eq!(ran.code, 3, "{}{}", ran.stdout, ran.stderr);
    assert!(ran.stdout.contains("B327") && ran.stdout.contains("would run 100,000 times"), "{}", ran.stdout);
    assert_eq!(ran.replies().len(), 2);
    // The response fits in a small memory budget only as compact data; a
    // budget below it fails the run before the loops (B321).
    let ran = run(text, &server, "big", &["--max-run-memory", "1000000"]);
    assert_eq!(ran.code, 3, "{}{}", ran.stdout, ran.stderr);
    assert!(ran.stdout.contains("B321"), "{}", ran.stdout);
}

#[test]
fn requests_and_saves_inside_a_loop() {
    let server = TestServer::start();
    let text = r#"var total = 0
command each {
    api list { method GET url "@SERVER@/items/6" }
    for item in api_list[response.items] limit 5 {
        if item[id] == 4 {
            stop
        }
        api one {
            method GET
            url "@SERVER@/echo"
            params { id = "{item[id]}", name = "{item[name]}" }
        }
        save total = total + item[id]
        reply "{api_one[response.args.0.1]}/{api_one[response.args.1.1]}"
    }
    reply "total {total}"
}
"#;
    let ran = run(text, &server, "each", &[]);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    assert_eq!(ran.replies(), ["0/item 0", "1/item 1", "2/item 2", "3/item 3", "total 6"]);
    let echoed: Vec<String> =
        server.received().into_iter().filter(|r| r.url.starts_with("/echo")).map(|r| r.url).collect();
    assert_eq!(
        echoed,
        [
            "/echo?id=0&name=item%200",
            "/echo?id=1&name=item%201",
            "/echo?id=2&name=item%202",
            "/echo?id=3&name=item%203"
        ]
    );
}

#[test]
fn the_top5_example_prints_the_first_five_of_its_sample() {
    let root = env!("CARGO_MANIFEST_DIR");
    let out = Command::new(env!("CARGO_BIN_EXE_blkc"))
        .args(["run", "examples/top5.blk", "--offline", "--var", "option_query=lamp"])
        .env("NO_COLOR", "1")
        .current_dir(root)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.starts_with("Top results for \"lamp\" (10 found):"), "{stdout}");
    for (n, title) in
        ["Desk lamp", "Floor lamp", "Clip-on reading light", "Bedside lamp", "Lava lamp"].iter().enumerate()
    {
        assert!(stdout.contains(&format!("{}. {title}:", n + 1)), "{stdout}");
    }
    assert!(!stdout.contains("6. "), "{stdout}");
}

#[test]
fn a_select_menu_takes_its_choices_from_a_response() {
    let server = TestServer::start();
    let text = r#"command pick {
    api list { method GET url "@SERVER@/items/@N@" }
    reply {
        text "Pick one"
        select chosen {
            for item in api_list[response.items] { choice "{item[name]}" "{item[id]}" }
        }
    }
}
handler chosen { reply "You chose {value}" }
"#;
    let events = Ran::events;
    let ran = run(&text.replace("@N@", "3"), &server, "pick", &[]);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    let reply = events(&ran).into_iter().find(|e| e["event"] == "reply").unwrap();
    let choices = &reply["components"][0]["choices"];
    assert_eq!(choices.as_array().unwrap().len(), 3);
    assert_eq!((choices[2]["label"].as_str(), choices[2]["value"].as_str()), (Some("item 2"), Some("2")));
    // 30 elements: the platform's first 25, and a warning for the rest.
    let ran = run(&text.replace("@N@", "30"), &server, "pick", &[]);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    let all = events(&ran);
    let reply = all.iter().find(|e| e["event"] == "reply").unwrap();
    assert_eq!(reply["components"][0]["choices"].as_array().unwrap().len(), 25);
    assert!(
        all.iter().any(|e| e["code"] == "B326" && e["message"].as_str().unwrap().contains("5 of the loop")),
        "{all:?}"
    );
    // An empty list: the menu, which the platform would refuse, is left out.
    let ran = run(&text.replace("@N@", "0"), &server, "pick", &[]);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    let all = events(&ran);
    let reply = all.iter().find(|e| e["event"] == "reply").unwrap();
    assert!(reply["components"].as_array().is_none_or(|c| c.is_empty()), "{reply}");
    assert!(all.iter().any(|e| e["code"] == "B326"), "{all:?}");
}

#[test]
fn a_joined_text_and_a_whole_element_keep_to_their_bounds() {
    let server = TestServer::start();
    // Each piece is the whole 2,000-element response (about 70 KB): the
    // join passes 1 MiB after some 15 pieces and the run stops there.
    let pieces = r#"command big {
    api list { method GET url "@SERVER@/items/2000" }
    for item in api_list[response.items] limit 100 join "" into all {
        text "{api_list[response]}"
    }
    reply "{all}"
}
"#;
    let ran = run(pieces, &server, "big", &[]);
    assert_eq!(ran.code, 3, "{}{}", ran.stdout, ran.stderr);
    assert!(ran.stdout.contains("B327") && ran.stdout.contains("would pass 1 MiB"), "{}", ran.stdout);
    assert!(ran.replies().is_empty());
    // Short pieces, long separators: refused before they are joined.
    let separators = pieces
        .replace("join \"\"", "join \"{api_list[response]}\"")
        .replace("text \"{api_list[response]}\"", "text \"{item_number}\"");
    let ran = run(&separators, &server, "big", &[]);
    assert_eq!(ran.code, 3, "{}{}", ran.stdout, ran.stderr);
    assert!(ran.stdout.contains("B327") && ran.stdout.contains("a join holds at most 1 MiB"), "{}", ran.stdout);
    // A whole element that is an object is JSON text: never sent in a header.
    let header = r#"command hdr {
    api list { method GET url "@SERVER@/items/2" }
    for item in api_list[response.items] {
        api one {
            method GET
            url "@SERVER@/echo"
            headers { X-Item = "{item}" }
        }
    }
}
"#;
    let before = server.received().iter().filter(|r| r.url.starts_with("/echo")).count();
    let ran = run(header, &server, "hdr", &[]);
    assert_eq!(ran.code, 3, "{}{}", ran.stdout, ran.stderr);
    assert_eq!(server.received().iter().filter(|r| r.url.starts_with("/echo")).count(), before, "nothing sent");
    assert!(ran.stdout.contains("object or array"), "{}", ran.stdout);
}

#[test]
fn list_helpers_count_join_and_keep_the_first_of_a_response_and_a_variable() {
    let server = TestServer::start();
    let text = r#"var names = ["ann", "bob", "cy"]
command show {
    api list { method GET url "@SERVER@/items/30" }
    reply "{api_list[response.items]|count} items; first: {api_list[response.items]|first 2|join ' / '}"
    reply "{names|count}: {names|join}; {names|first 2}; {api_list[response.missing]|count}"
    for item in api_list[response.items] limit 3 {
        reply "{item[name]}: {item[tags]|count} tags {item[tags]|join '+'}"
    }
    if "{names|count}" == 3 {
        reply "three"
    }
}
"#;
    let ran = run(text, &server, "show", &[]);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    let events: Vec<Value> = ran.stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let replies: Vec<&str> =
        events.iter().filter(|e| e["event"] == "reply").filter_map(|e| e["text"].as_str()).collect();
    let first = r#"30 items; first: {"id":0,"name":"item 0","tags":[]} / {"id":1,"name":"item 1","tags":["t1.0"]}"#;
    // A path that does not resolve is an empty list, with its warning.
    let names = r#"3: ann, bob, cy; ["ann","bob"]; 0"#;
    let tags = ["item 0: 0 tags ", "item 1: 1 tags t1.0", "item 2: 2 tags t2.0+t2.1"];
    assert_eq!(replies, [first, names, tags[0], tags[1], tags[2], "three"], "{}", ran.stdout);
    assert!(events.iter().any(|e| e["code"] == "B307"), "{}", ran.stdout);
}

#[test]
fn a_loop_by_a_key_takes_its_elements_in_that_order_and_limit_takes_the_first() {
    let server = TestServer::start();
    // Items 0..5: by their id (a path into each), highest first, and
    // `limit` takes the first four of that order.
    let text = r#"var scores = [{ name = "a", points = "9" }, { name = "b", points = 10 }, { name = "c" }, { name = "d", points = "100" }]
command ranked {
    api list { method GET url "@SERVER@/items/6" }
    for item in api_list[response.items] by item[id] desc limit 4 join " " into ids {
        text "{item[id]}"
    }
    for s in scores by s[points] join " " into up {
        text "{s[name]}"
    }
    for s in scores by s[points] desc join " " into down {
        text "{s[name]}"
    }
    reply "{ids} | {up} | {down}"
}
"#;
    let ran = run(text, &server, "ranked", &[]);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    let reply = &ran.replies()[0];
    // Numbers compare as numbers, numeric text too ("9" < 10 < "100"); an
    // element without the key comes last either way.
    assert_eq!(reply, "5 4 3 2 | a b d c | d b a c", "{}", ran.stdout);
}

/// Issue 53, item 5 (its text helpers): on a user's option, a response's
/// text and a loop element, in a reply and in a condition.
#[test]
fn text_helpers_change_options_responses_and_elements() {
    let server = TestServer::start();
    let text = r##"command show {
    option tags "Tags, by commas" required
    api list { method GET url "@SERVER@/items/3" }
    reply "{option_tags|split ','|count} tags: {option_tags|split ','|join ' & '|upper}"
    for item in api_list[response.items] limit 2 {
        reply "#{item[id]|pad 3 '0'} {item[name]|replace 'item' 'thing'|slice 0 5}"
    }
    if "{option_tags|trim|length}" > 5 {
        reply "long"
    }
}
"##;
    let ran = run(text, &server, "show", &["--var", "option_tags=  ève,bob,ß  "]);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    let events: Vec<Value> = ran.stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let replies: Vec<&str> =
        events.iter().filter(|e| e["event"] == "reply").filter_map(|e| e["text"].as_str()).collect();
    assert_eq!(replies, ["3 tags:   ÈVE & BOB & SS  ", "#000 thing", "#001 thing", "long"], "{}", ran.stdout);
}

/// Issue 53, item 5 (its number half, and `starts with`): exact rounding of
/// an option and of a response's numbers; a helper on text that is no
/// number fails the run with B323 and sends nothing of that step.
#[test]
fn number_helpers_round_exactly_and_fail_on_text() {
    let server = TestServer::start();
    let text = r##"command price {
    option amount "An amount" number required
    api list { method GET url "@SERVER@/items/3" }
    reply "{option_amount|round 2} {option_amount|floor} {option_amount|ceil} {option_amount|abs|min 2} {option_amount|max 0}"
    if option_amount starts with "-" {
        reply "negative, ending in {option_amount|slice 4}"
    }
    if "{option_amount}" ends with "5" {
        reply "ends in five"
    }
    reply "at least {api_list[response.items]|count|max 5}, {api_list[response.items]|count|min 5}"
}
"##;
    let ran = run(text, &server, "price", &["--var", "option_amount=-1.005"]);
    assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
    let events: Vec<Value> = ran.stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let replies: Vec<&str> =
        events.iter().filter(|e| e["event"] == "reply").filter_map(|e| e["text"].as_str()).collect();
    assert_eq!(
        replies,
        ["-1.01 -2 -1 1.005 0", "negative, ending in 05", "ends in five", "at least 5, 3"],
        "{}",
        ran.stdout
    );

    let text = r##"command price {
    api list { method GET url "@SERVER@/items/3" }
    reply "{api_list[response.items.0.name]|round}"
}
"##;
    let ran = run(text, &server, "price", &[]);
    assert_ne!(ran.code, 0, "{}", ran.stdout);
    assert!(ran.stdout.contains("B323") || ran.stderr.contains("B323"), "{}{}", ran.stdout, ran.stderr);
    assert!(!ran.stdout.contains("\"event\":\"reply\""), "{}", ran.stdout);
}

/// Issue 53, items 3 and 4: `blkc run --seed` draws the same again, and
/// `--now` fixes the time every time helper reads.
#[test]
fn a_seed_and_a_time_make_a_run_again_the_same() {
    let server = TestServer::start();
    let text = r##"var answers = ["yes", "no", "maybe", "later"]
command roll {
    option in "How long" required
    reply "{random 1 1000000} {random 1 6} {answers|pick} {answers|shuffle|join ','} {chance 50}"
    reply "{now} {option_in|from_now|timestamp 'R'} {now|add '1d'|date '%A %H:%M' 'Europe/Paris'} {option_in|seconds}"
}
"##;
    let args = ["--var", "option_in=2h30m", "--now", "2026-12-24T18:00:00Z"];
    let with = |seed: &str| {
        let ran = run(text, &server, "roll", &[&args[..], &["--seed", seed]].concat());
        assert_eq!(ran.code, 0, "{}{}", ran.stdout, ran.stderr);
        ran.replies()
    };
    let (a, b, c) = (with("7"), with("7"), with("8"));
    assert_eq!(a, b);
    assert_ne!(a[0], c[0], "two seeds drew the same 1 in a million");
    assert_eq!(a[1], "2026-12-24T18:00:00Z <t:1798144200:R> Friday 19:00 9000");
    // Without a seed, each run draws anew.
    let unseeded: std::collections::HashSet<String> =
        (0..3).map(|_| run(text, &server, "roll", &args).replies()[0].clone()).collect();
    assert_eq!(unseeded.len(), 3, "{unseeded:?}");
}

/// Issue 53, item 1: a field of an object variable and an element of a
/// list (from the end too) read and written, nested, in the store.
#[test]
fn fields_and_elements_of_variables_are_read_and_saved() {
    let server = TestServer::start();
    let text = r##"var settings = { mode = "fast", limits = { daily = 10 } }
var queue = ["a", "b", "c"]
command set {
    save settings[mode] = "slow"
    save settings[limits.daily] = settings[limits.daily] + 5
    save settings[tags] append "new"
    save queue[-1] = "z"
    save queue[0] = { who = "ann" }
    save queue[0.who] = "{settings[mode]}-bob"
    if settings[limits.daily] > 12 {
        reply "{settings[mode]} {settings[limits.daily]} {settings[tags.0]} {queue[0.who]} {queue[-1]} {queue[1]}"
    }
    save queue[7] = "x"
}
"##;
    let ran = run(text, &server, "set", &[]);
    assert_eq!(ran.replies(), ["slow 15 new slow-bob z b"], "{}{}", ran.stdout, ran.stderr);
    // An element a list does not have is not made: the run fails there,
    // and what it saved before stays.
    assert_ne!(ran.code, 0);
    let all = format!("{}{}", ran.stdout, ran.stderr);
    assert!(all.contains("B328") && all.contains("`queue[7]` cannot be saved"), "{all}");
}

/// Issue 53, item 8: a reply in the user's language, by their locale, then
/// its language, then the reply's own text.
#[test]
fn a_reply_is_in_the_user_s_language_with_a_fallback() {
    let server = TestServer::start();
    let text = r##"command hello {
    reply {
        text "Hello, {user_name}! ({user_locale})"
        text fr "Bonjour, {user_name} !"
        text pt "Olá, {user_name}!"
        text pt-BR "Oi, {user_name}!"
    }
}
"##;
    for (locale, said) in
        [("fr", "Bonjour, ann !"), ("pt-BR", "Oi, ann!"), ("pt-PT", "Olá, ann!"), ("en-US", "Hello, ann! (en-US)")]
    {
        let ran = run(text, &server, "hello", &["--var", "user_name=ann", "--var", &format!("user_locale={locale}")]);
        assert_eq!(ran.replies(), [said], "{}{}", ran.stdout, ran.stderr);
    }
}
