//! `blkc run` end to end: the binary sends real HTTP to a real server on
//! 127.0.0.1 that the test starts. Nothing on the request path is mocked.

use std::path::PathBuf;
use std::process::Command;

use crate::support::server::TestServer;
use serde_json::{json, Value};

pub(crate) struct Program {
    dir: tempfile::TempDir,
    path: PathBuf,
}

/// Writes a program into a fresh folder; `@SERVER@` becomes the server's base URL.
pub(crate) fn program(text: &str, server: &TestServer) -> Program {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bot.blk");
    std::fs::write(&path, text.replace("@SERVER@", &server.base())).unwrap();
    Program { dir, path }
}

pub(crate) struct Ran {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Ran {
    /// The JSON events of a `--format json` run.
    pub(crate) fn events(&self) -> Vec<Value> {
        self.stdout.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect()
    }

    pub fn replies(&self) -> Vec<String> {
        self.events()
            .iter()
            .filter(|e| e["event"] == "reply")
            .map(|e| e["text"].as_str().unwrap().to_string())
            .collect()
    }

    fn of(&self, kind: &str) -> Vec<Value> {
        self.events().into_iter().filter(|e| e["event"] == kind).collect()
    }
}

pub(crate) fn blkc(p: &Program, args: &[&str], env: &[(&str, &str)]) -> Ran {
    let store = p.dir.path().join("store.sqlite3");
    let out = Command::new(env!("CARGO_BIN_EXE_blkc"))
        .arg("run")
        .arg(p.path.file_name().unwrap())
        .args(args)
        .arg("--store")
        .arg(&store)
        .env("NO_COLOR", "1")
        .env("COLUMNS", "100")
        .env_remove("BLKC_BOT_TOKEN")
        .envs(env.iter().copied())
        .current_dir(p.dir.path())
        .output()
        .unwrap();
    Ran {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

pub(crate) fn json_run(p: &Program, args: &[&str]) -> Ran {
    let mut all = vec!["--format", "json"];
    all.extend_from_slice(args);
    blkc(p, &all, &[])
}

#[test]
fn every_method_is_sent_as_written() {
    let server = TestServer::start();
    let mut text = String::from("command methods {\n");
    for m in ["GET", "POST", "PUT", "DELETE", "PATCH"] {
        let body = if m == "GET" { "" } else { "body { kind = \"x\" }" };
        text.push_str(&format!("    api b{m} {{ method {m} url \"@SERVER@/echo/{m}\" {body} }}\n"));
        text.push_str(&format!("    reply \"{{api_b{m}[response.method]}} {{api_b{m}[response.body]}}\"\n"));
    }
    text.push_str("}\n");
    let p = program(&text, &server);
    let ran = json_run(&p, &["--command", "methods"]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert_eq!(
        ran.replies(),
        ["GET ", "POST {\"kind\":\"x\"}", "PUT {\"kind\":\"x\"}", "DELETE {\"kind\":\"x\"}", "PATCH {\"kind\":\"x\"}"]
    );
    let got = server.received();
    assert_eq!(got[0].body, "", "GET carries no body");
    assert_eq!(got[0].header("content-type"), None);
    assert_eq!(got[1].header("content-type"), Some("application/json"));
}

#[test]
fn url_parameters_are_encoded_and_appended_in_order() {
    let server = TestServer::start();
    let p = program(
        r#"command search {
    option q "query"
    api s {
        method GET
        url "@SERVER@/echo?keep=1"
        params {
            q = "{option_q}"
            space = "a b"
            reserved = "&=+/?#%"
            unicode = "café ☕"
            n = 5
            flag = true
        }
    }
    reply "{api_s[response.query]}"
    reply "{api_s[response.args]}"
}
"#,
        &server,
    );
    let ran = json_run(&p, &["--command", "search", "--var", "option_q=rock & roll"]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    let replies = ran.replies();
    assert_eq!(
        replies[0],
        "keep=1&q=rock%20%26%20roll&space=a%20b&reserved=%26%3D%2B%2F%3F%23%25&unicode=caf%C3%A9%20%E2%98%95&n=5&flag=true"
    );
    let args: Value = serde_json::from_str(&replies[1]).unwrap();
    assert_eq!(
        args,
        json!([
            ["keep", "1"],
            ["q", "rock & roll"],
            ["space", "a b"],
            ["reserved", "&=+/?#%"],
            ["unicode", "café ☕"],
            ["n", "5"],
            ["flag", "true"]
        ])
    );
}

#[test]
fn variables_in_the_path_cannot_change_the_url() {
    let server = TestServer::start();
    let p = program(
        "command u {\n    option id \"id\"\n    api u { method GET url \"@SERVER@/echo/{option_id}\" }\n    reply \"{api_u[response.path]}\"\n}\n",
        &server,
    );
    let ran = json_run(&p, &["--command", "u", "--var", "option_id=../admin?x=1#y"]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert_eq!(ran.replies(), ["/echo/..%2Fadmin%3Fx%3D1%23y"]);
}

#[test]
fn headers_and_content_type_are_sent_as_written() {
    let server = TestServer::start();
    let p = program(
        r#"command h {
    api a {
        method POST
        url "@SERVER@/echo"
        headers { X-Custom = "v1", Content-Type = "application/vnd.api+json", Accept = "application/json" }
        body { a = 1 }
    }
}
"#,
        &server,
    );
    let ran = json_run(&p, &["--command", "h"]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    let got = &server.received()[0];
    assert_eq!(got.header("x-custom"), Some("v1"));
    assert_eq!(got.header("content-type"), Some("application/vnd.api+json"));
    assert_eq!(got.headers.iter().filter(|(k, _)| k.eq_ignore_ascii_case("content-type")).count(), 1);
}

#[test]
fn every_json_body_value_type_is_sent() {
    let server = TestServer::start();
    let p = program(
        r#"command body {
    api repo { method GET url "@SERVER@/fixture/repo.json" }
    api send {
        method POST
        url "@SERVER@/echo"
        body {
            text = "hi {user_name}"
            big = 12345678901234567890
            float = 2.5e3
            yes = true
            no = false
            nothing = null
            nested = { a = [1, "two", { three = 3 }] }
            owner = api_repo[response.owner]
            topics = api_repo[response.topics]
            id = api_repo[response.id]
            status = api_repo[status]
        }
    }
    reply "{api_send[response.body]}"
}
"#,
        &server,
    );
    let ran = json_run(&p, &["--command", "body", "--var", "user_name=Ann"]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert_eq!(
        ran.replies()[0],
        r#"{"text":"hi Ann","big":12345678901234567890,"float":2.5e+3,"yes":true,"no":false,"nothing":null,"nested":{"a":[1,"two",{"three":3}]},"owner":{"login":"acme","id":42},"topics":["rust","cli"],"id":9007199254740993,"status":200}"#
    );
}

#[test]
fn response_paths_of_every_form() {
    let server = TestServer::start();
    let p = program(
        r#"command paths {
    api repo { method GET url "@SERVER@/fixture/repo.json" }
    reply "{api_repo[response.name]}|{api_repo[response.owner.login]}|{api_repo[response.releases.0.assets.0.name]}"
    reply "{api_repo[response.id]}|{api_repo[response.ratio]}|{api_repo[response.archived]}|{api_repo[response.license]}"
    reply "{api_repo[response.owner]}|{api_repo[response.topics]}|{api_repo[response.empty_list]}|{api_repo[response.empty_object]}"
    reply "{api_repo[response.clé]}|{api_repo[response.with space]}|{api_repo[status]}"
}
"#,
        &server,
    );
    let ran = json_run(&p, &["--command", "paths"]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert_eq!(
        ran.replies(),
        [
            "widgets|acme|widgets.tar.gz",
            "9007199254740993|0.25|false|null",
            r#"{"login":"acme","id":42}|["rust","cli"]|[]|{}"#,
            "unicode key|spaced key|200",
        ]
    );
    assert!(ran.of("warning").is_empty());
}

#[test]
fn whole_response_and_status_codes() {
    let server = TestServer::start();
    let p = program(
        r#"command s {
    api missing { method GET url "@SERVER@/status/404" }
    if api_missing[status] == 404 {
        reply "not found: {api_missing[response.error.message]}"
    }
    api boom { method GET url "@SERVER@/status/503" }
    reply "{api_boom[status]} {api_boom[response]}"
}
"#,
        &server,
    );
    let ran = json_run(&p, &["--command", "s"]);
    assert_eq!(ran.code, 0, "a 4xx or 5xx answer is not a failure: {}", ran.stderr);
    assert_eq!(ran.replies(), ["not found: status 404", r#"503 {"error":{"message":"status 503"},"code":503}"#]);
    let requests = ran.of("request");
    assert_eq!(requests[0]["status"], 404);
    assert_eq!(requests[1]["status"], 503);
}

#[test]
fn a_body_that_is_not_json_is_kept_as_text() {
    let server = TestServer::start();
    let p = program(
        "command t {\n    api t { method GET url \"@SERVER@/text\" }\n    reply \"{api_t[response]}\"\n    reply \"{api_t[response.x]}\"\n}\n",
        &server,
    );
    let ran = json_run(&p, &["--command", "t"]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert_eq!(ran.replies(), ["plain text, not JSON", "{api_t[response.x]}"]);
    let warnings = ran.of("warning");
    assert_eq!(warnings[0]["code"], "B307");
    assert_eq!(warnings[0]["message"], "the response of block `t` is not JSON");
}

#[test]
fn unresolved_paths_warn_render_as_chosen_and_fail_under_strict() {
    let server = TestServer::start();
    let p = program(
        "command m {\n    api r { method GET url \"@SERVER@/fixture/repo.json\" }\n    reply \"[{api_r[response.releases.5.tag]}] [{api_r[response.topics.first]}] [{api_r[response.owner.name]}]\"\n}\n",
        &server,
    );
    let ran = json_run(&p, &["--command", "m"]);
    assert_eq!(ran.code, 0);
    assert_eq!(
        ran.replies(),
        ["[{api_r[response.releases.5.tag]}] [{api_r[response.topics.first]}] [{api_r[response.owner.name]}]"]
    );
    let messages: Vec<_> = ran.of("warning").iter().map(|w| w["message"].as_str().unwrap().to_string()).collect();
    assert_eq!(
        messages,
        [
            "`response.releases` has 1 element; index 5 is past its end",
            "`response.topics` is an array of 2; `first` is not an index",
            "`response.owner` has no key `name`",
        ]
    );
    let ran = json_run(&p, &["--command", "m", "--missing", "empty"]);
    assert_eq!(ran.replies(), ["[] [] []"]);
    let ran = json_run(&p, &["--command", "m", "--strict"]);
    assert_eq!(ran.code, 3);
    assert_eq!(ran.of("error")[0]["code"], "B307");
}

#[test]
fn bodies_over_the_cap_fail_plain_and_gzip() {
    let server = TestServer::start();
    for route in ["big", "gzip"] {
        let p = program(
            &format!("command b {{\n    api b {{ method GET url \"@SERVER@/{route}/200000\" }}\n}}\n"),
            &server,
        );
        let ran = json_run(&p, &["--command", "b", "--max-response-size", "100000"]);
        assert_eq!(ran.code, 3, "{route}: {}", ran.stdout);
        let error = &ran.of("error")[0];
        assert_eq!(error["code"], "B304", "{route}");
        let ok = json_run(&p, &["--command", "b", "--max-response-size", "300000"]);
        assert_eq!(ok.code, 0, "{route}: {}", ok.stdout);
    }
}

#[test]
fn a_slow_server_hits_the_time_out() {
    let server = TestServer::start();
    let p = program("command s {\n    api s { method GET url \"@SERVER@/slow/3000\" }\n}\n", &server);
    let ran = json_run(&p, &["--command", "s", "--timeout", "0.5"]);
    assert_eq!(ran.code, 3, "{}", ran.stdout);
    let error = &ran.of("error")[0];
    assert_eq!(error["code"], "B303");
    assert_eq!(error["span"]["start"]["line"], 2);
}

#[test]
fn connection_refused_is_a_clear_failure_and_keeps_earlier_saves() {
    let server = TestServer::start();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let p = program(
        &format!(
            "command c {{\n    api ok {{ method GET url \"@SERVER@/echo\" }}\n    save first = \"{{api_ok[response.method]}}\"\n    api down {{ method GET url \"http://127.0.0.1:{port}/x\" }}\n    save second = \"never\"\n}}\n"
        ),
        &server,
    );
    let ran = json_run(&p, &["--command", "c"]);
    assert_eq!(ran.code, 3);
    let error = &ran.of("error")[0];
    assert_eq!(error["code"], "B301");
    assert!(error["message"].as_str().unwrap().contains("block `down`"));
    let store = p.dir.path().join("store.sqlite3");
    let out =
        Command::new(env!("CARGO_BIN_EXE_blkc")).args(["vars", "--store"]).arg(&store).args(["list"]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "first = \"GET\"\n");
}

#[test]
fn redirects_on_the_same_host_are_followed_up_to_the_limit() {
    let server = TestServer::start();
    let p = program(
        "command r {\n    api r { method GET url \"@SERVER@/redirect/3\" }\n    reply \"{api_r[response.path]}\"\n}\n",
        &server,
    );
    let ran = json_run(&p, &["--command", "r"]);
    assert_eq!(ran.code, 0, "{}", ran.stdout);
    assert_eq!(ran.replies(), ["/echo"]);
    assert_eq!(ran.of("request")[0]["redirects"], 4);
    let ran = json_run(&p, &["--command", "r", "--max-redirects", "2"]);
    assert_eq!(ran.code, 3);
    assert_eq!(ran.of("error")[0]["code"], "B305");
}

#[test]
fn secret_headers_do_not_follow_a_redirect_to_another_host() {
    let server = TestServer::start();
    let other = TestServer::start();
    let p = program(
        &format!(
            r#"command r {{
    api r {{
        method POST
        url "@SERVER@/redirect-to/{}"
        headers {{ X-Api-Key = "<API_KEY>", Authorization = "Bearer <API_KEY>", X-Plain = "kept" }}
        body {{ a = 1 }}
    }}
    reply "{{api_r[response.method]}} {{api_r[response.body]}}"
}}
"#,
            other.port
        ),
        &server,
    );
    // Both servers are on this machine: the redirect's host is an internal
    // address, refused unless allowed (tested in tests/steering.rs).
    let ran = blkc(
        &p,
        &["--format", "json", "--command", "r", "--allow-private-network"],
        &[("BLKC_SECRET_API_KEY", "canary-key-123456")],
    );
    assert_eq!(ran.code, 0, "{}", ran.stdout);
    assert_eq!(ran.replies(), ["POST {\"a\":1}"], "307 keeps the method and body");
    let first = &server.received()[0];
    assert_eq!(first.header("x-api-key"), Some("canary-key-123456"));
    let second = &other.received()[0];
    assert_eq!(second.header("x-api-key"), None);
    assert_eq!(second.header("authorization"), None);
    assert_eq!(second.header("x-plain"), Some("kept"));
}

#[test]
fn a_request_carrying_the_bot_token_follows_no_redirect() {
    let server = TestServer::start();
    let p = program(
        "platform \"@SERVER@/api\"\ncommand t {\n    api t {\n        method GET\n        url \"@SERVER@/redirect/0\"\n        headers { Authorization = \"Bot {bot_token}\" }\n    }\n    reply \"{api_t[status]}\"\n}\n",
        &server,
    );
    let ran = blkc(&p, &["--format", "json", "--command", "t"], &[("BLKC_BOT_TOKEN", "canary.bot.token.0123456789")]);
    assert_eq!(ran.code, 0, "{}", ran.stdout);
    assert_eq!(ran.replies(), ["302"]);
    assert_eq!(ran.of("warning")[0]["code"], "B309");
    assert_eq!(server.received().len(), 1);
}

#[test]
fn the_bot_token_goes_only_to_the_platform_host() {
    let server = TestServer::start();
    let p = program(
        "platform \"@SERVER@/api\"\ncommand t {\n    api t {\n        method GET\n        url \"@SERVER@/echo\"\n        headers { Authorization = \"Bot {bot_token}\" }\n    }\n    reply \"{api_t[response.headers.authorization]}\"\n}\n",
        &server,
    );
    let token = [("BLKC_BOT_TOKEN", "canary.bot.token.0123456789")];
    let ran = blkc(&p, &["--format", "json", "--command", "t"], &token);
    assert_eq!(ran.code, 0, "{}", ran.stdout);
    assert_eq!(ran.replies(), ["Bot {bot_token}"], "the token was sent, and redacted in the reply");
    // A call with the bot token is the platform's: its User-Agent format.
    let agent = server.received()[0].headers.iter().find(|(k, _)| k.eq_ignore_ascii_case("user-agent")).cloned();
    assert!(agent.as_ref().is_some_and(|(_, v)| v.starts_with("DiscordBot (")), "{agent:?}");
    // `--platform` is known only at run time: the run applies the same rule.
    let ran = blkc(&p, &["--format", "json", "--command", "t", "--platform", "http://localhost:1/api"], &token);
    assert_eq!(ran.code, 3);
    assert_eq!(ran.of("error")[0]["code"], "B308");
    let ran = blkc(&p, &["--format", "json", "--command", "t", "--platform", "https://discord.com/api"], &token);
    assert_eq!(ran.code, 3);
    assert_eq!(ran.of("error")[0]["code"], "B308");
    assert_eq!(server.received().len(), 1, "refused before anything was sent");
    let ran = blkc(&p, &["--format", "json", "--command", "t"], &[]);
    assert_eq!(ran.code, 3);
    assert_eq!(ran.of("error")[0]["code"], "B306", "no token: stopped before any request");
}

#[test]
fn a_missing_secret_stops_the_run_before_any_request() {
    let server = TestServer::start();
    let p = program(
        "command s {\n    api a { method GET url \"@SERVER@/echo\" }\n    api b { method GET url \"@SERVER@/echo\" headers { X-Key = \"<MISSING_KEY>\" } }\n}\n",
        &server,
    );
    let ran = blkc(&p, &["--command", "s"], &[]);
    assert_eq!(ran.code, 3);
    assert!(ran.stderr.contains("B306"), "{}", ran.stderr);
    assert!(ran.stderr.contains("BLKC_SECRET_MISSING_KEY"));
    assert!(server.received().is_empty(), "nothing may be sent");
}

#[test]
fn connections_are_reused() {
    let server = TestServer::start();
    let mut text = String::from("command many {\n");
    for i in 0..5 {
        text.push_str(&format!("    api b{i} {{ method GET url \"@SERVER@/echo\" }}\n"));
    }
    text.push_str("}\n");
    let p = program(&text, &server);
    let ran = json_run(&p, &["--command", "many"]);
    assert_eq!(ran.code, 0);
    let peers: std::collections::HashSet<_> = server.received().iter().map(|r| r.peer).collect();
    assert_eq!(server.received().len(), 5);
    assert_eq!(peers.len(), 1, "the five requests came over {} connections: {peers:?}", peers.len());
}

#[test]
fn trigger_variables_come_from_flags_and_a_file() {
    let server = TestServer::start();
    let p = program("command v {\n    option city \"c\"\n    reply \"{user_name} in {option_city}\"\n}\n", &server);
    let vars = p.dir.path().join("vars.json");
    std::fs::write(&vars, r#"{"user_name": "Ann", "option_city": "Oslo"}"#).unwrap();
    let ran = json_run(&p, &["--command", "v", "--vars", vars.to_str().unwrap(), "--var", "option_city=Rome"]);
    assert_eq!(ran.replies(), ["Ann in Rome"]);
    let ran = json_run(&p, &["--command", "v"]);
    // An optional option left out is empty, as the platform gives it.
    assert_eq!(ran.replies(), ["{user_name} in "]);
    assert_eq!(ran.of("warning").len(), 1);
    assert_eq!(ran.of("warning")[0]["code"], "B313");
}

#[test]
fn unknown_command_is_a_usage_error() {
    let server = TestServer::start();
    let p = program("command weather {\n    reply \"x\"\n}\n", &server);
    let ran = blkc(&p, &["--command", "wether"], &[]);
    assert_eq!(ran.code, 2);
    assert!(ran.stderr.contains("did you mean `weather`?"), "{}", ran.stderr);
}

#[test]
fn dry_run_sends_nothing_and_saves_nothing() {
    let server = TestServer::start();
    let p = program(
        "command d {\n    api a { method POST url \"@SERVER@/echo\" body { x = \"{user_id}\" } }\n    save s = \"{api_a[response.method]}\"\n}\n",
        &server,
    );
    let ran = blkc(&p, &["--command", "d", "--dry-run", "--var", "user_id=7"], &[]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert!(server.received().is_empty());
    let port = server.port.to_string();
    assert_eq!(
        ran.stdout.replace(&port, "PORT"),
        "POST http://127.0.0.1:PORT/echo\nContent-Type: application/json\n\n{\"x\":\"7\"}\n\n"
    );
    assert!(
        !p.dir.path().join("store.sqlite3").exists() || {
            let out = Command::new(env!("CARGO_BIN_EXE_blkc"))
                .args(["vars", "--store"])
                .arg(p.dir.path().join("store.sqlite3"))
                .arg("list")
                .output()
                .unwrap();
            out.stdout.is_empty()
        }
    );
}

#[test]
fn text_output_snapshot() {
    let server = TestServer::start();
    let p = program(
        "command report {\n    api repo { method GET url \"@SERVER@/fixture/repo.json\" }\n    reply \"{api_repo[response.name]} has {api_repo[response.stars]} stars\"\n    reply \"{api_repo[response.owner.name]}\"\n}\n",
        &server,
    );
    let ran = blkc(&p, &["--command", "report"], &[]);
    insta::assert_snapshot!(format!("exit {}\n--- stdout\n{}--- stderr\n{}", ran.code, ran.stdout, ran.stderr));
}

#[test]
fn json_output_snapshot() {
    let server = TestServer::start();
    let p = program(
        "command report {\n    api repo { method GET url \"@SERVER@/fixture/repo.json\" }\n    reply \"{api_repo[response.name]}\"\n    save stars = api_repo[response.stars]\n    reply \"{api_repo[response.nope]}\"\n}\n",
        &server,
    );
    let ran = json_run(&p, &["--command", "report"]);
    let mut events = ran.events();
    for e in &mut events {
        if e["event"] == "request" {
            e["duration_ms"] = json!("[ms]");
            e["url"] = json!(e["url"].as_str().unwrap().replace(&server.port.to_string(), "[PORT]"));
        }
    }
    insta::assert_snapshot!(serde_json::to_string_pretty(&events).unwrap());
}

#[test]
fn typed_options_check_their_values_and_integers_compare_exactly() {
    let server = TestServer::start();
    let p = program(
        "command pick \"Pick\" {\n    option n \"A number\" integer required\n    option who \"Someone\" user\n    \
         option on \"On or off\" boolean\n    \
         if \"{option_n}\" > 9007199254740990 { reply \"above\" } else { reply \"not above\" }\n    \
         if \"{option_n}\" == 9007199254740991 { reply \"equal\" }\n}\n",
        &server,
    );
    let ran = blkc(&p, &["--command", "pick", "--var", "option_n=9007199254740991"], &[]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert_eq!(ran.stdout, "above\nequal\n");
    let ran = blkc(&p, &["--command", "pick", "--var", "option_n=9007199254740990"], &[]);
    assert_eq!(ran.stdout, "not above\n");
    for (var, expected) in [
        ("option_n=12.5", "option `n` is integer: expected a whole number between -(2^53 - 1) and 2^53 - 1"),
        ("option_n=9007199254740992", "option `n` is integer"),
        ("option_who=@everyone", "option `who` is user: expected a user of the server"),
        ("option_on=yes", "option `on` is boolean: expected `true` or `false`"),
    ] {
        let ran = blkc(&p, &["--command", "pick", "--var", var], &[]);
        assert_eq!(ran.code, 2, "{var}: {}", ran.stderr);
        assert!(ran.stderr.contains(expected), "{var}: {}", ran.stderr);
    }
    let ran = blkc(&p, &["--command", "pick", "--var", "option_n=-3", "--var", "option_who=80351110224678912"], &[]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
}

#[test]
fn arithmetic_saves_exact_results_and_conditions_compute() {
    let server = TestServer::start();
    let p = program(
        "var points = \"0\"\nvar ratio = \"0\"\ncommand add \"Add\" {\n    option n \"How many\" integer\n    \
         api item {\n        method GET\n        url \"@SERVER@/echo\"\n        params { price = \"0.2\" }\n    }\n    \
         save points = points + \"{option_n}\" * 2\n    \
         save ratio = (0.1 + api_item[response.args.0.1]) * 10 / 4\n    \
         if points % 2 == 0 { reply \"even {points}, {ratio}\" } else { reply \"odd {points}\" }\n}\n",
        &server,
    );
    let ran = blkc(&p, &["--command", "add", "--var", "option_n=3"], &[]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert_eq!(ran.stdout, "even 6, 0.75\n");
    let ran = blkc(&p, &["--command", "add", "--var", "option_n=9007199254740990"], &[]);
    assert_eq!(ran.stdout, "even 18014398509481986, 0.75\n", "{}", ran.stderr);
    let out = Command::new(env!("CARGO_BIN_EXE_blkc"))
        .args(["vars", "--store"])
        .arg(p.dir.path().join("store.sqlite3"))
        .args(["get", "points"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "18014398509481986");
}

#[test]
fn scoped_variables_keep_a_value_per_user_server_and_channel() {
    let server = TestServer::start();
    let p = program(
        "var points per user = \"0\"\nvar tickets per server = \"0\"\nvar topic per channel = \"none\"\nvar total = \"0\"\n\
         command hit \"Hit\" {\n    save points = points + 1\n    save tickets = tickets + 10\n    save total = total + 1\n    \
         reply \"{user_id}@{server_id}: {points} points, {tickets} tickets, {total} in all, topic {topic}\"\n}\n",
        &server,
    );
    let hit = |user: &str, guild: &str| {
        let ran = blkc(
            &p,
            &[
                "--command",
                "hit",
                "--var",
                &format!("user_id={user}"),
                "--var",
                &format!("server_id={guild}"),
                "--var",
                "channel_id=5",
            ],
            &[],
        );
        assert_eq!(ran.code, 0, "{}", ran.stderr);
        ran.stdout
    };
    assert_eq!(hit("1", "77"), "1@77: 1 points, 10 tickets, 1 in all, topic none\n");
    assert_eq!(hit("1", "77"), "1@77: 2 points, 20 tickets, 2 in all, topic none\n");
    assert_eq!(hit("2", "77"), "2@77: 1 points, 30 tickets, 3 in all, topic none\n");
    // The same user in another server: theirs there, from the start.
    assert_eq!(hit("1", "88"), "1@88: 1 points, 10 tickets, 4 in all, topic none\n");
    let vars = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_blkc"))
            .args(["vars", "--store"])
            .arg(p.dir.path().join("store.sqlite3"))
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert_eq!(vars(&["get", "points", "--user", "1", "--server", "77"]).trim(), "2");
    assert_eq!(vars(&["get", "tickets", "--server", "88"]).trim(), "10");
    let listed = vars(&["list", "--server", "77", "--user", "1"]);
    assert_eq!(listed, "points [user 1 in server 77] = 2\n");
    let all = vars(&["list"]);
    assert!(all.contains("tickets [server 77] = 30") && all.contains("total = 4"), "{all}");
    vars(&["set", "topic", "rust", "--channel", "5"]);
    assert!(hit("3", "77").ends_with("topic rust\n"));
}

#[test]
fn a_scope_id_that_is_not_a_number_never_makes_a_key() {
    let server = TestServer::start();
    let p = program("var points per user = \"0\"\ncommand hit \"Hit\" {\n    save points = points + 1\n}\n", &server);
    // `7:1` as a server would make the key of user 1's value in server 7.
    let ran = blkc(&p, &["--command", "hit", "--var", "server_id=7:1", "--var", "user_id=2"], &[]);
    assert_eq!(ran.code, 3, "{}", ran.stderr);
    assert!(ran.stderr.contains("B325") && ran.stderr.contains("`server_id` that is an ID"), "{}", ran.stderr);
}

/// `blkc run` holds `require` lines as `serve` does, on the member its
/// `--roles` and `--permissions` describe: the same rule, the same words.
#[test]
fn run_holds_require_lines_on_the_member_its_flags_describe() {
    let server = TestServer::start();
    let p = program(
        "command purge \"Delete messages\" {\n    require roles \"<MOD_ROLE>\", \"2222222222222222222\"\n    require channels \"888\"\n    require permissions manage_messages\n    reply \"Purged.\"\n}\n",
        &server,
    );
    let secret = [("BLKC_SECRET_MOD_ROLE", "1111111111111111111")];
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let mut all = vec!["--offline", "--var", "channel_id=888"];
        all.extend_from_slice(args);
        blkc(&p, &all, env)
    };
    let ran = run(&[], &secret);
    assert_eq!(ran.code, 3, "{}", ran.stderr);
    assert!(ran.stderr.contains("the run did not start: You need a role this requires."), "{}", ran.stderr);
    assert!(!ran.stderr.contains("1111111111111111111"), "{}", ran.stderr);
    let ran = run(&["--roles", "1111111111111111111"], &secret);
    assert!(ran.stderr.contains("You need the Manage Messages permission to use this."), "{}", ran.stderr);
    let ran = run(&["--roles", "5, 1111111111111111111", "--permissions", "manage_messages"], &secret);
    assert_eq!((ran.code, ran.stdout.trim()), (0, "Purged."), "{}", ran.stderr);
    let ran = run(&["--roles", "1111111111111111111", "--permissions", "manage_mesages"], &secret);
    assert_eq!(ran.code, 2);
    assert!(ran.stderr.contains("did you mean `manage_messages`?"), "{}", ran.stderr);
    // The secret a guard reads must be set, as any secret.
    let ran = run(&["--roles", "1111111111111111111", "--permissions", "manage_messages"], &[]);
    assert_eq!(ran.code, 3);
    assert!(ran.stderr.contains("B306") && ran.stderr.contains("MOD_ROLE"), "{}", ran.stderr);
    // ... and hold an id: a role's name there could never match, and is
    // never shown.
    let named = [("BLKC_SECRET_MOD_ROLE", "Moderators of the server")];
    let ran = run(&["--roles", "1111111111111111111", "--permissions", "manage_messages"], &named);
    assert_eq!(ran.code, 3);
    assert!(ran.stderr.contains("B430") && ran.stderr.contains("does not hold an id"), "{}", ran.stderr);
    assert!(!ran.stderr.contains("Moderators of"), "{}", ran.stderr);
}

/// A variable read is an event with its scope and key, its default said as
/// one when nothing is saved; `-v` says reads and saves on standard error.
#[test]
fn a_variable_read_and_saved_says_its_scope_and_key() {
    let server = TestServer::start();
    let p = program(
        "var visits per user = 0\ncommand v {\n    save visits = visits + 1\n    reply \"{visits}\"\n}\n",
        &server,
    );
    let vars = ["--var", "server_id=777", "--var", "user_id=1001"];
    let ran = blkc(&p, &[&["--format", "json", "--command", "v"][..], &vars].concat(), &[]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    let events = ran.events();
    let said: Vec<&Value> = events.iter().filter(|e| e["event"] == "read" || e["event"] == "save").collect();
    assert_eq!(
        said,
        [
            &json!({ "event": "read", "name": "visits", "scope": "user", "key": "visits:user:777:1001", "value": 0, "stored": false }),
            &json!({ "event": "save", "name": "visits", "scope": "user", "key": "visits:user:777:1001", "value": 1 }),
        ]
    );
    let ran = blkc(&p, &[&["-v", "--command", "v"][..], &vars].concat(), &[]);
    assert!(ran.stderr.contains("read visits = 1\n") && ran.stderr.contains("saved visits = 2\n"), "{}", ran.stderr);
    assert_eq!(ran.stdout, "2\n");
}

/// Issue 56, item 8: an embed's lines of many are drawn under their first
/// (a field's under its value, past its name), each indented as a
/// continuation, so that no value can pass for a part of its own.
#[test]
fn an_embed_s_lines_stand_under_their_first() {
    let server = TestServer::start();
    let p = program(
        "command e \"E\" {\n    reply {\n        embed {\n            title \"T\"\n            description \"one\\nimage: https://forged.example\"\n            field \"A\" \"x\\ny\"\n        }\n    }\n}\n",
        &server,
    );
    let out = blkc(&p, &["--command", "e", "--offline"], &[]);
    assert_eq!(out.stdout, "│ T\n│ one\n│   image: https://forged.example\n│ A: x\n│      y\n", "{}", out.stderr);
}
