//! `blkc test`: the builder's test request against a real server on
//! 127.0.0.1, the listing of paths, `--save` and the shape report.

use std::path::Path;
use std::process::{Command, Output};

use crate::support::server::TestServer;
use blkc::run::eval::explore::{shape_changes, ChangeKind};
use serde_json::{json, Value};

fn write(dir: &Path, text: &str, server: &TestServer) {
    std::fs::write(dir.join("bot.blk"), text.replace("@SERVER@", &server.base())).unwrap();
}

fn blkc(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_blkc"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("BLKC_BOT_TOKEN")
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

fn json_of(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)))
}

fn paths(doc: &Value) -> Vec<(String, String)> {
    doc["paths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["variable"].as_str().unwrap().to_string(), r["shown"].as_str().unwrap().to_string()))
        .collect()
}

#[test]
fn only_the_bot_token_is_substituted() {
    let server = TestServer::start();
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        r#"platform "@SERVER@/api"
var region = "eu"
command lookup {
    option city "City"
    api first { method GET url "@SERVER@/echo" }
    api probe {
        method POST
        url "@SERVER@/echo/{option_city}"
        params { user = "{user_name}", region = "{region}" }
        headers { Authorization = "Bot {bot_token}", X-Key = "<PROBE_KEY>" }
        body { previous = "{api_first[response.method]}" }
    }
}
"#,
        &server,
    );
    let out = blkc(
        dir.path(),
        &["test", "bot.blk", "probe", "--format", "json"],
        &[("BLKC_BOT_TOKEN", "test.bot.token.0123456789"), ("BLKC_SECRET_PROBE_KEY", "probe-key-0123456")],
    );
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let doc = json_of(&out);
    assert_eq!(doc["left_as_text"], json!(["option_city", "user_name", "region", "api_first[response.method]"]));
    let got = &server.received()[0];
    assert_eq!(got.url, "/echo/%7Boption_city%7D?user=%7Buser_name%7D&region=%7Bregion%7D");
    assert_eq!(got.header("authorization"), Some("Bot test.bot.token.0123456789"));
    assert_eq!(got.header("x-key"), Some("probe-key-0123456"));
    assert_eq!(got.body, r#"{"previous":"{api_first[response.method]}"}"#);
    assert_eq!(server.received().len(), 1, "only the tested block is sent");
    // What the server echoed back is shown redacted.
    let shown = serde_json::to_string(&doc).unwrap();
    assert!(!shown.contains("test.bot.token.0123456789") && !shown.contains("probe-key-0123456"));
    assert_eq!(doc["warnings"][0]["code"], "B210");
}

#[test]
fn every_path_of_every_shape_is_listed() {
    let server = TestServer::start();
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "command e {\n    api e { method GET url \"@SERVER@/fixture/explore.json\" }\n}\n", &server);
    let doc = json_of(&blkc(dir.path(), &["test", "bot.blk", "e", "--format", "json"], &[]));
    let rows = paths(&doc);
    let has = |var: &str, shown: &str| {
        assert!(rows.iter().any(|(v, s)| v == var && s == shown), "missing {var} = {shown} in {rows:#?}")
    };
    has("{api_e[status]}", "200");
    has("{api_e[response.user.name]}", "Ann");
    has("{api_e[response.user.address.geo.lat]}", "59.91");
    has("{api_e[response.orders.1.total]}", "12");
    has("{api_e[response.orders.0]}", r#"{"id":1,"total":9.5}"#);
    has("{api_e[response.many.2]}", "2");
    has("{api_e[response.many.3]} … {api_e[response.many.9]}", "… 7 more elements");
    has("{api_e[response.01]}", "a key, not an index");
    has("{api_e[response.0]}", "a key on an object");
    has("{api_e[response.nothing]}", "[]");
    has("{api_e[response.blank]}", "{}");
    has("{api_e[response.snowflake]}", "1215489532217262122");
    has("{api_e[response.ünïcødé]}", "yes");
    has("{api_e[response.two words]}", "spaced");
    assert!(!rows.iter().any(|(v, _)| v == "{api_e[response.many.3]}"), "long arrays are shortened");
    let dotted =
        doc["paths"].as_array().unwrap().iter().find(|r| r["variable"].as_str().unwrap().contains("dotted")).unwrap();
    assert!(dotted["note"].as_str().unwrap().starts_with("cannot be addressed"));
    // Keys no path can hold are listed as such, never as a variable.
    let unaddressable = doc["paths"].as_array().unwrap().iter().filter(|r| r["value"].is_null()).count();
    assert_eq!(unaddressable, 6, "dotted, a[b, x\"y, -1, the empty key, and the shortened array: {rows:#?}");
    for (v, _) in rows.iter().filter(|(v, _)| v.starts_with('{')) {
        assert!(!v.contains("a[b") && !v.contains("x\"y") && !v.contains("response.-1") && !v.contains("response.]"));
    }
    // Every listed path really resolves in a run, to the same value.
    let reply: Vec<String> =
        rows.iter().filter(|(v, _)| !v.contains('…') && v.starts_with('{')).map(|(v, _)| v.clone()).collect();
    let program = format!(
        "command e {{\n    api e {{ method GET url \"@SERVER@/fixture/explore.json\" }}\n    reply \"{}\"\n}}\n",
        reply.join("\\n").replace('"', "\\\"")
    );
    write(dir.path(), &program, &server);
    let check = blkc(dir.path(), &["check", "bot.blk"], &[]);
    assert_eq!(
        check.status.code(),
        Some(0),
        "every listed path checks clean: {}",
        String::from_utf8_lossy(&check.stderr)
    );
    let run = blkc(dir.path(), &["run", "bot.blk", "--command", "e", "--strict"], &[]);
    assert_eq!(run.status.code(), Some(0), "{}", String::from_utf8_lossy(&run.stderr));
}

#[test]
fn a_top_level_array_is_listed_as_text() {
    let server = TestServer::start();
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "command l {\n    api list { method GET url \"@SERVER@/fixture/list.json\" }\n}\n", &server);
    let out = blkc(dir.path(), &["test", "bot.blk", "list"], &[]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout).replace(&server.port.to_string(), "[PORT]");
    let listing: String =
        text.lines().skip_while(|l| !l.starts_with("{api_list[status]}")).collect::<Vec<_>>().join("\n");
    insta::assert_snapshot!(listing);
}

#[test]
fn save_writes_the_redacted_sample_and_says_where() {
    let server = TestServer::start();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "command s {\n    api echo {\n        method GET\n        url \"@SERVER@/echo\"\n        headers { X-Key = \"<SAVE_KEY>\" }\n    }\n}\n", &server);
    let env = [("BLKC_SECRET_SAVE_KEY", "save-key-secret-42")];
    let out = blkc(d, &["test", "bot.blk", "echo", "--save"], &env);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout
            .contains("add this line to block `echo` so that `blkc check` uses it:\n    sample \"samples/echo.json\""),
        "{stdout}"
    );
    let saved = std::fs::read_to_string(d.join("samples/echo.json")).unwrap();
    assert!(saved.contains("\"x-key\": \"<SAVE_KEY>\""), "{saved}");
    assert!(!saved.contains("save-key-secret-42"));

    // With a sample field, --save writes there and asks for nothing.
    write(d, "command s {\n    api echo {\n        method GET\n        url \"@SERVER@/echo\"\n        sample \"recorded/echo.json\"\n    }\n}\n", &server);
    let out = blkc(d, &["test", "bot.blk", "echo", "--save"], &[]);
    assert!(!String::from_utf8_lossy(&out.stdout).contains("add this line"));
    assert!(d.join("recorded/echo.json").exists());
    // And `blkc check` now reads it.
    write(d, "command s {\n    api echo {\n        method GET\n        url \"@SERVER@/echo\"\n        sample \"recorded/echo.json\"\n    }\n    reply \"{api_echo[response.methd]}\"\n}\n", &server);
    let check = blkc(d, &["check", "bot.blk"], &[]);
    assert_eq!(check.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&check.stderr).contains("did you mean `method`?"));

    // To a path given on the command line.
    let out = blkc(d, &["test", "bot.blk", "echo", "--save", "elsewhere.json"], &[]);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("sample \"elsewhere.json\""));
    assert!(d.join("elsewhere.json").exists());
}

#[test]
fn a_body_that_is_not_json_is_shown_but_not_saved() {
    let server = TestServer::start();
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "command t {\n    api t { method GET url \"@SERVER@/text\" }\n}\n", &server);
    let out = blkc(dir.path(), &["test", "bot.blk", "t", "--save"], &[]);
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("a sample must be"));
    let out = blkc(dir.path(), &["test", "bot.blk", "t", "--format", "json"], &[]);
    let doc = json_of(&out);
    assert_eq!(doc["body"], "plain text, not JSON");
    assert_eq!(doc["paths"][1]["note"], "the body is not JSON: it has no paths");
}

#[test]
fn an_ambiguous_block_must_be_qualified() {
    let server = TestServer::start();
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "command a {\n    api lookup { method GET url \"@SERVER@/echo/a\" }\n}\ncommand b {\n    api lookup { method GET url \"@SERVER@/echo/b\" }\n}\n",
        &server,
    );
    let out = blkc(dir.path(), &["test", "bot.blk", "lookup"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("say which with --command a or --command b"));
    let out = blkc(dir.path(), &["test", "bot.blk", "lookup", "--command", "b", "--format", "json"], &[]);
    assert_eq!(json_of(&out)["url"], format!("{}/echo/b", server.base()));
    let out = blkc(dir.path(), &["test", "bot.blk", "lokup"], &[]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("did you mean `lookup`?"));
}

#[test]
fn shape_changes_are_found() {
    let old = json!({ "a": { "b": 1 }, "list": [ { "x": "s" } ], "gone": true, "kept": null, "obj": { "k": 1 } });
    let new = json!({ "a": { "b": "now text" }, "list": [], "kept": 5, "obj": null, "added": 1 });
    let data = |j: serde_json::Value| blkc::base::data::Data::parse(j.to_string().as_bytes()).unwrap().data;
    let (old, new) = (data(old), data(new));
    let changes: Vec<(String, ChangeKind)> =
        shape_changes(&old, &new).into_iter().map(|c| (c.path_text(), c.kind)).collect();
    assert_eq!(
        changes,
        [
            ("response.a.b".to_string(), ChangeKind::TypeChanged { was: "a number", now: "a string" }),
            ("response.list".to_string(), ChangeKind::ArrayNowEmpty),
            ("response.gone".to_string(), ChangeKind::KeyGone),
            ("response.obj".to_string(), ChangeKind::TypeChanged { was: "an object", now: "null" }),
            ("response.added".to_string(), ChangeKind::KeyAdded),
        ]
    );
    let list_change = &shape_changes(&old, &new)[1];
    assert!(list_change.affects(&["list", "3", "x"]), "any index reads through a now empty array");
    assert!(!list_change.affects(&["gone"]));
}

#[test]
fn an_error_answer_is_not_saved_as_the_sample_and_the_test_fails() {
    let server = TestServer::start();
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "command c {\n    api gone {\n        method GET\n        url \"@SERVER@/no-such-thing\"\n        sample \"samples/gone.json\"\n    }\n}\n",
        &server,
    );
    let sample = dir.path().join("samples/gone.json");
    let out = blkc(dir.path(), &["test", "bot.blk", "gone", "--save"], &[]);
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("the server answered 404") && err.contains("--save-error-status"), "{err}");
    assert!(!sample.exists(), "a 404 body must not become the sample");
    // Without --save the test request fails too; with the flag it is saved.
    assert_eq!(blkc(dir.path(), &["test", "bot.blk", "gone"], &[]).status.code(), Some(3));
    let out = blkc(dir.path(), &["test", "bot.blk", "gone", "--save", "--save-error-status"], &[]);
    assert_eq!(out.status.code(), Some(3));
    assert!(std::fs::read_to_string(&sample).unwrap().contains("no route"));
    // A body that is not JSON is never saved.
    write(
        dir.path(),
        "command c {\n    api t {\n        method GET\n        url \"@SERVER@/text\"\n    }\n}\n",
        &server,
    );
    let out = blkc(dir.path(), &["test", "bot.blk", "t", "--save"], &[]);
    assert_eq!(out.status.code(), Some(3));
    assert!(!dir.path().join("samples/t.json").exists());
}

#[test]
fn a_test_request_that_changes_data_says_so_before_it_is_sent() {
    let server = TestServer::start();
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "command c {\n    api make {\n        method POST\n        url \"@SERVER@/echo\"\n        body { name = \"x\" }\n    }\n    api look {\n        method GET\n        url \"@SERVER@/echo\"\n    }\n}\n",
        &server,
    );
    let out = blkc(dir.path(), &["test", "bot.blk", "make"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("note: sending POST for block `make`: a test request is a real request"));
    let out = blkc(dir.path(), &["test", "bot.blk", "look"], &[]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("a test request is a real request"));
}
