//! The API block complete (issue 50): each body kind's exact bytes on the
//! wire, credentials, time-outs, retries, response headers and the failure
//! path, against servers of the tests' own on 127.0.0.1.

use std::process::Command;

use crate::run::{blkc, json_run, program};
use crate::support::server::{RawServer, TestServer};

fn header<'a>(request: &'a str, name: &str) -> Option<&'a str> {
    let head = request.split("\r\n\r\n").next().unwrap_or_default();
    head.lines().skip(1).find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

fn body(request: &[u8]) -> &[u8] {
    let at = request.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    &request[at..]
}

/// A bot in a folder of its own that talks to `raw`: `@RAW@` is its address.
fn raw_program(text: &str, raw: &RawServer) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bot.blk");
    std::fs::write(&path, text.replace("@RAW@", &raw.base())).unwrap();
    (dir, path)
}

fn run_in(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_blkc"))
        .args(["run", "bot.blk"])
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("BLKC_BOT_TOKEN")
        .output()
        .unwrap()
}

#[test]
fn each_body_kind_is_sent_as_its_exact_bytes_with_its_content_type() {
    let raw = RawServer::start();
    let (dir, _) = raw_program(
        r#"command c {
    option q "q"
    api form {
        method POST
        url "@RAW@/form"
        body form {
            q = "{option_q}"
            safe = "*-._"
            tilde = "~"
            accent = "é"
            ops = "&=+%"
            line = "a\nb"
            n = 3
            yes = true
            "a key" = "v"
        }
    }
    api list {
        method PUT
        url "@RAW@/list"
        body [1, "two", { three = 3 }, null]
    }
    api scalar {
        method PATCH
        url "@RAW@/scalar"
        body json "just text"
    }
    api csv {
        method POST
        url "@RAW@/csv"
        body text "week,orders\n48,{option_q}" type "text/csv"
    }
    api plain {
        method POST
        url "@RAW@/plain"
        body text "hello"
    }
    api vendor {
        method POST
        url "@RAW@/vendor"
        headers { Content-Type = "application/vnd.api+json" }
        body { data = { type = "note" } }
    }
}
"#,
        &raw,
    );
    let out = run_in(dir.path(), &["--command", "c", "--var", "option_q=a b&c=d"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let got = raw.requests.lock().unwrap().clone();
    let want: [(&str, &str, &[u8]); 6] = [
        (
            "POST /form ",
            "application/x-www-form-urlencoded",
            b"q=a+b%26c%3Dd&safe=*-._&tilde=%7E&accent=%C3%A9&ops=%26%3D%2B%25&line=a%0Ab&n=3&yes=true&a+key=v",
        ),
        ("PUT /list ", "application/json", br#"[1,"two",{"three":3},null]"#),
        ("PATCH /scalar ", "application/json", br#""just text""#),
        ("POST /csv ", "text/csv", b"week,orders\n48,a b&c=d"),
        ("POST /plain ", "text/plain; charset=utf-8", b"hello"),
        ("POST /vendor ", "application/vnd.api+json", br#"{"data":{"type":"note"}}"#),
    ];
    assert_eq!(got.len(), want.len());
    for (request, (line, content_type, bytes)) in got.iter().zip(want) {
        let text = String::from_utf8_lossy(request);
        assert!(text.starts_with(line), "{text}");
        assert_eq!(header(&text, "content-type"), Some(content_type), "{text}");
        assert_eq!(header(&text, "content-length"), Some(bytes.len().to_string().as_str()), "{text}");
        assert_eq!(body(request), bytes, "{text}");
    }
}

#[test]
fn a_multipart_body_is_read_back_by_a_real_parser_and_no_value_adds_a_header() {
    let raw = RawServer::start();
    let (dir, _) = raw_program(
        r#"command c {
    option name "name"
    api first {
        method GET
        url "@RAW@/first"
    }
    api up {
        method POST
        url "@RAW@/upload"
        body multipart {
            note = "from {option_name}"
            blob = file "blob.bin" type "application/octet-stream" filename "{option_name}.bin"
            echo = file api_first type "application/json"
        }
    }
}
"#,
        &raw,
    );
    let blob: Vec<u8> = (0..=255u8).chain(b"\r\n--".iter().copied()).collect();
    std::fs::write(dir.path().join("blob.bin"), &blob).unwrap();
    let hostile = "a\"\r\nX-Evil: 1";
    let out = run_in(dir.path(), &["--command", "c", "--var", &format!("option_name={hostile}")]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let got = raw.requests.lock().unwrap().clone();
    assert_eq!(got.len(), 2);
    let text = String::from_utf8_lossy(&got[1]).into_owned();
    let content_type = header(&text, "content-type").unwrap().to_string();
    let parts: Vec<_> = crate::support::platform::multipart(&content_type, body(&got[1]))
        .into_iter()
        .map(|p| (p.name, p.filename, p.content_type, p.headers, p.bytes))
        .collect();
    assert_eq!(parts.len(), 3, "{text}");
    assert_eq!(parts[0].0.as_deref(), Some("note"));
    assert_eq!(parts[0].4, format!("from {hostile}").into_bytes(), "a text part's value is its bytes");
    assert_eq!(parts[1].0.as_deref(), Some("blob"));
    assert_eq!(parts[1].1.as_deref(), Some("a%22%0D%0AX-Evil: 1.bin"), "the file name is escaped");
    assert_eq!(parts[1].2.as_deref(), Some("application/octet-stream"));
    assert_eq!(parts[1].4, blob, "the file's bytes, every one");
    assert_eq!(parts[2].1.as_deref(), Some("first"));
    assert_eq!(parts[2].4, br#"{"ok":true}"#, "the first block's response bytes");
    for part in &parts {
        assert!(part.3.iter().all(|h| h == "content-disposition" || h == "content-type"), "{:?}", part.3);
    }
}

#[test]
fn a_content_type_that_says_another_body_is_refused_before_anything_is_sent() {
    let server = TestServer::start();
    let p = program(
        r#"command c {
    option t "t"
    api token {
        method POST
        url "@SERVER@/echo"
        headers { Content-Type = "{option_t}" }
        body { grant_type = "client_credentials" }
    }
}
"#,
        &server,
    );
    let ran = blkc(&p, &["--command", "c", "--var", "option_t=application/x-www-form-urlencoded"], &[]);
    assert_eq!(ran.code, 3, "{}", ran.stderr);
    assert!(ran.stderr.contains("B310") && ran.stderr.contains("Content-Type"), "{}", ran.stderr);
    assert!(server.received().is_empty(), "nothing is sent");
    let ran = blkc(&p, &["--command", "c", "--var", "option_t=application/json; charset=utf-8"], &[]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert_eq!(server.received().len(), 1);
}

#[test]
fn basic_auth_is_encoded_as_rfc_7617_says_and_never_shown() {
    use base64::Engine as _;
    let server = TestServer::start();
    let p = program(
        r#"command c {
    api me {
        method GET
        url "@SERVER@/echo"
        auth basic "<API_USER>" "<API_PASSWORD>"
    }
    api token {
        method GET
        url "@SERVER@/echo"
        auth bearer "<API_TOKEN>"
    }
}
"#,
        &server,
    );
    let env = [
        ("BLKC_SECRET_API_USER", "ann@example.com"),
        ("BLKC_SECRET_API_PASSWORD", "pä:ss word 42"),
        ("BLKC_SECRET_API_TOKEN", "tok-1234567890"),
    ];
    let ran = blkc(&p, &["--command", "c", "-v"], &env);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    let got = server.received();
    let basic = base64::engine::general_purpose::STANDARD.encode("ann@example.com:pä:ss word 42");
    assert_eq!(got[0].header("authorization"), Some(format!("Basic {basic}").as_str()));
    assert_eq!(got[1].header("authorization"), Some("Bearer tok-1234567890"));
    for secret in ["ann@example.com", "pä:ss word 42", "tok-1234567890", basic.as_str()] {
        assert!(!ran.stderr.contains(secret) && !ran.stdout.contains(secret), "{secret} shown:\n{}", ran.stderr);
    }
}

#[test]
fn a_retry_waits_as_retry_after_asks_and_is_said() {
    let server = TestServer::start();
    let p = program(
        r#"command c {
    api busy {
        method GET
        url "@SERVER@/flaky/1/retry-after?after=1"
        retry 2
    }
    reply "attempt {api_busy[response.attempt]} of {api_busy[headers.X-ATTEMPT]}"
}
"#,
        &server,
    );
    let started = std::time::Instant::now();
    let ran = json_run(&p, &["--command", "c"]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert!(started.elapsed() >= std::time::Duration::from_secs(1), "Retry-After: 1 is waited for");
    assert_eq!(ran.replies(), ["attempt 2 of 2"]);
    let events = ran.events();
    let request = events.iter().find(|e| e["event"] == "request").unwrap();
    assert_eq!(request["retries"], 1);
    let warning = events.iter().find(|e| e["code"] == "B330").expect("the retry is said");
    assert!(warning["message"].as_str().unwrap().contains("in 1.0 s (attempt 2 of 3)"), "{warning}");
    assert_eq!(server.received().len(), 2);
}

#[test]
fn a_post_is_sent_once_unless_the_block_allows_retry() {
    let server = TestServer::start();
    let p = program(
        r#"command c {
    api once {
        method POST
        url "@SERVER@/flaky/1/post-once"
        body { n = 1 }
        retry 3 backoff "1ms"
    }
    api again {
        method POST
        url "@SERVER@/flaky/1/post-again"
        body { n = 1 }
        retry 3 backoff "1ms"
        allow retry
    }
    reply "{api_once[status]} {api_again[status]}"
}
"#,
        &server,
    );
    let ran = json_run(&p, &["--command", "c"]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert_eq!(ran.replies(), ["503 200"]);
    let paths: Vec<String> = server.received().iter().map(|r| r.url.clone()).collect();
    assert_eq!(paths, ["/flaky/1/post-once", "/flaky/1/post-again", "/flaky/1/post-again"]);
}

#[test]
fn each_kind_of_failure_runs_the_failed_branch_with_its_variables() {
    let server = TestServer::start();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    // Each case: its settings, its URL, and the kind, status and attempts its `failed` gets.
    let cases = [
        ("timeout \"200ms\"", format!("{}/slow/5000", server.base()), "timeout 1"),
        ("", format!("http://127.0.0.1:{closed}/x"), "connection 1"),
        ("", "http://{option_host}/x".to_string(), "refused 0"),
        ("", format!("{}/big/5000", server.base()), "too_large 1"),
        ("", format!("{}/status/404", server.base()), "status 404 1"),
        ("retry 1 backoff \"1ms\"", format!("{}/status/503", server.base()), "status 503 2"),
    ];
    for (setting, url, want) in cases {
        let text = format!(
            "command c {{\n    option host \"h\"\n    api x {{\n        method GET\n        url \"{url}\"\n        {setting}\n        failed on 404, 5xx {{\n            reply \"{{failure_kind}} {{failure_status}} {{failure_attempts}}|{{failure_block}}|{{failure_message}}\"\n        }}\n    }}\n    reply \"not failed\"\n}}\n"
        );
        let p = program(&text, &server);
        let ran =
            json_run(&p, &["--command", "c", "--var", "option_host=evil.example/a?", "--max-response-size", "1000"]);
        assert_eq!(ran.code, 0, "{want}: {}", ran.stderr);
        let replies = ran.replies();
        assert_eq!(replies.len(), 1, "{want}: {replies:?}");
        let (vars, rest) = replies[0].split_once('|').unwrap();
        let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        assert_eq!(words(vars), want, "{replies:?}");
        assert!(rest.starts_with("x|") && rest.len() > 2, "{rest}");
    }
    // A status the block does not list is an answer like any other.
    let p = program(
        "command c {\n    api x {\n        method GET\n        url \"@SERVER@/status/500\"\n        failed on 404 { reply \"failed\" }\n    }\n    reply \"{api_x[status]}\"\n}\n",
        &server,
    );
    assert_eq!(json_run(&p, &["--command", "c"]).replies(), ["500"]);
}

/// A bot whose block `b` follows `pages` at `url`, replying with the items.
fn paged(server: &TestServer, url: &str, pages: &str) -> crate::run::Program {
    let text = format!(
        "command c {{\n    api b {{\n        method GET\n        url \"@SERVER@{url}\"\n        pages {{ {pages} }}\n    }}\n    for i in api_b[items] join \",\" into all {{ text \"{{i[n]}}\" }}\n    reply \"{{api_b[items]|count}}: {{all}}\"\n}}\n"
    );
    program(&text, server)
}

#[test]
fn three_pages_are_followed_by_a_cursor_a_next_url_or_the_link_header() {
    let server = TestServer::start();
    for (pages, want) in [
        ("items response.data cursor response.next param cursor", "/pages/3?cursor=3"),
        ("items response.data next response.links.next", "/pages/3?cursor=3"),
        ("items response.data next link", "/pages/3?cursor=3"),
    ] {
        let before = server.received().len();
        let ran = json_run(&paged(&server, "/pages/3", pages), &["--command", "c"]);
        assert_eq!(ran.code, 0, "{pages}: {}", ran.stderr);
        assert_eq!(ran.replies(), ["6: 11,12,21,22,31,32"], "{pages}");
        let urls: Vec<String> = server.received()[before..].iter().map(|r| r.url.clone()).collect();
        assert_eq!(urls.len(), 3, "{urls:?}");
        assert_eq!(urls[2], want, "{pages}");
    }
}

#[test]
fn pages_stop_at_their_bound_at_a_page_read_before_and_never_leave_the_origin() {
    let server = TestServer::start();
    // A list with no end: `max` pages, then B331.
    let ran = json_run(
        &paged(&server, "/pages/0", "items response.data cursor response.next param cursor max 4"),
        &["--command", "c"],
    );
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert_eq!(ran.replies(), ["8: 11,12,21,22,31,32,41,42"]);
    assert!(ran.events().iter().any(|e| e["code"] == "B331"), "{}", ran.stdout);
    assert_eq!(server.received().len(), 4);
    // A cursor that never changes: the second page is the first again.
    let ran = json_run(
        &paged(&server, "/pages/0", "items response.data cursor response.same param cursor"),
        &["--command", "c"],
    );
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert_eq!(ran.replies(), ["4: 11,12,11,12"]);
    let round = ran.events().into_iter().find(|e| e["code"] == "B331").expect("B331");
    assert!(round["message"].as_str().unwrap().contains("already read"), "{round}");
    // `limit` keeps that many items and reads no further page.
    let before = server.received().len();
    let ran = json_run(&paged(&server, "/pages/0", "items response.data next link limit 3"), &["--command", "c"]);
    assert_eq!(ran.replies(), ["3: 11,12,21"]);
    assert_eq!(server.received().len() - before, 2);
    // A next URL on another origin (another host name for this machine) is refused.
    let before = server.received().len();
    let ran = json_run(&paged(&server, "/pages/0", "items response.data next response.elsewhere"), &["--command", "c"]);
    assert_eq!(ran.code, 3, "{}", ran.stdout);
    assert!(ran.stdout.contains("B314"), "{}", ran.stdout);
    assert_eq!(server.received().len() - before, 1, "only the first page is sent");
}

#[test]
fn each_page_counts_as_a_request_of_the_run() {
    let server = TestServer::start();
    let max = blkc::language::vocab::MAX_REQUESTS;
    let p = program(
        &format!(
            "command c {{\n    api first {{ method GET url \"@SERVER@/echo\" }}\n    api b {{\n        method GET\n        url \"@SERVER@/pages/0\"\n        pages {{ items response.data cursor response.next param cursor max {max} }}\n    }}\n    reply \"{{api_b[items]|count}}\"\n}}\n"
        ),
        &server,
    );
    let ran = json_run(&p, &["--command", "c"]);
    assert_eq!(ran.code, 3, "{}", ran.stdout);
    assert!(ran.stdout.contains("B327"), "{}", ran.stdout);
    assert_eq!(server.received().len(), max, "the first block and {} pages", max - 1);
}

/// A bot whose `token` block gets a token kept as long as it lives, and whose
/// `api` block sends it to `api_path`.
fn token_bot(server: &TestServer, key: &str, expires: u32, api_path: &str) -> String {
    format!(
        "command c {{\n    api token {{\n        method POST\n        url \"{base}/token/{key}?expires={expires}\"\n        body form {{ grant_type = \"client_credentials\", client_secret = \"<CLIENT_SECRET>\" }}\n        cache response.expires_in\n    }}\n    api call {{\n        method GET\n        url \"{base}{api_path}\"\n        auth bearer \"{{api_token[response.access_token]}}\"\n    }}\n    reply \"{{api_call[status]}}\"\n}}\n",
        base = server.base()
    )
}

fn run_with_store(dir: &std::path::Path, store: &str) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_blkc"))
        .args(["run", "bot.blk", "--command", "c", "--format", "json", "--store", store])
        .current_dir(dir)
        .env("BLKC_SECRET_CLIENT_SECRET", "client-secret-1234")
        .env_remove("BLKC_BOT_TOKEN")
        .output()
        .unwrap()
}

fn token_fetches(server: &TestServer, key: &str) -> usize {
    server.received().iter().filter(|r| r.url.starts_with(&format!("/token/{key}"))).count()
}

#[test]
fn a_kept_get_is_answered_from_the_store_and_a_kept_token_is_never_shown() {
    let server = TestServer::start();
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store.sqlite3").display().to_string();
    let bot = format!(
        "command c {{\n    api stock {{\n        method GET\n        url \"{}/echo?item=tea\"\n        cache \"1h\"\n    }}\n    reply \"{{api_stock[response.query]}}\"\n}}\n",
        server.base()
    );
    std::fs::write(dir.path().join("bot.blk"), bot).unwrap();
    for run in 0..3 {
        let out = run_with_store(dir.path(), &store);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains(r#""text":"item=tea""#), "{stdout}");
        assert_eq!(stdout.contains(r#""cached":true"#), run > 0, "run {run}: {stdout}");
    }
    assert_eq!(server.received().len(), 1, "one request for three runs");
    // A token got with a secret is a secret: its text never reaches the output.
    std::fs::write(dir.path().join("bot.blk"), token_bot(&server, "shown", 3600, "/echo")).unwrap();
    std::fs::write(
        dir.path().join("bot.blk"),
        std::fs::read_to_string(dir.path().join("bot.blk"))
            .unwrap()
            .replace("{api_call[status]}", "{api_call[response.headers.authorization]}"),
    )
    .unwrap();
    for _ in 0..2 {
        let out = run_with_store(dir.path(), &store);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success() && stdout.contains("Bearer <api_token>"), "{stdout}");
    }
    assert_eq!(token_fetches(&server, "shown"), 1);
    // `blkc vars` lists a kept answer by its size and expiry, never its text.
    // (`vars get` reads variables by their names, which a kept answer's is not.)
    for args in [&["vars", "--store", &store, "list"][..], &["vars", "--store", &store, "list", "--format", "json"][..]]
    {
        let listed = Command::new(env!("CARGO_BIN_EXE_blkc")).args(args).current_dir(dir.path()).output().unwrap();
        let text = String::from_utf8_lossy(&listed.stdout);
        assert!(
            listed.status.success() && text.contains("kept answer"),
            "{text}{}",
            String::from_utf8_lossy(&listed.stderr)
        );
        assert!(!text.contains("tok-1"), "{text}");
    }
}

#[test]
fn a_token_is_fetched_once_for_50_runs_of_two_processes_sharing_postgresql_and_again_once_it_expires() {
    let server = TestServer::start();
    let Some(pg) = crate::support::postgres::server() else { return };
    let url = pg.database();
    let dir = tempfile::tempdir().unwrap();
    let migrate = Command::new(env!("CARGO_BIN_EXE_blkc")).args(["vars", "--store", &url, "migrate"]).output().unwrap();
    assert!(migrate.status.success(), "{}", String::from_utf8_lossy(&migrate.stderr));
    std::fs::write(dir.path().join("bot.blk"), token_bot(&server, "shared", 3, "/echo")).unwrap();
    // Two processes at a time, 25 runs each.
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                for _ in 0..25 {
                    let out = run_with_store(dir.path(), &url);
                    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
                    assert!(String::from_utf8_lossy(&out.stdout).contains(r#""text":"200""#));
                }
            });
        }
    });
    assert_eq!(token_fetches(&server, "shared"), 1, "one token for 50 runs");
    let sent: Vec<String> = server
        .received()
        .iter()
        .filter(|r| r.url == "/echo")
        .filter_map(|r| r.header("authorization").map(str::to_string))
        .collect();
    assert_eq!(sent.len(), 50);
    assert!(sent.iter().all(|a| a == "Bearer tok-1-0123456789"), "{sent:?}");
    // The token lives 3 s and is kept 2.7 s: runs go on until one fetches
    // it again (the event this waits for); the 50 above all used the kept one.
    let started = std::time::Instant::now();
    while token_fetches(&server, "shared") == 1 {
        assert!(started.elapsed() < std::time::Duration::from_secs(120), "the token was never fetched again");
        assert!(run_with_store(dir.path(), &url).status.success());
    }
    for _ in 0..3 {
        assert!(run_with_store(dir.path(), &url).status.success());
    }
    assert_eq!(token_fetches(&server, "shared"), 2, "fetched again once after it expired");
}

#[test]
fn a_kept_token_the_server_refuses_is_fetched_again_once_and_the_request_sent_again() {
    let server = TestServer::start();
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store.sqlite3").display().to_string();
    // The API takes only the second token the endpoint gives.
    std::fs::write(dir.path().join("bot.blk"), token_bot(&server, "revoked", 3600, "/needs/tok-2-0123456789")).unwrap();
    let out = run_with_store(dir.path(), &store);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains(r#""text":"200""#), "{stdout}");
    assert!(stdout.contains("B330") && stdout.contains("fetched again"), "{stdout}");
    assert_eq!(token_fetches(&server, "revoked"), 2);
    // The new token is kept: the next run sends it at once.
    let before = server.received().len();
    let out = run_with_store(dir.path(), &store);
    assert!(String::from_utf8_lossy(&out.stdout).contains(r#""text":"200""#));
    assert_eq!(server.received().len() - before, 1, "only the API call");
    // A token refused again is not fetched a third time in the same run.
    std::fs::write(dir.path().join("bot.blk"), token_bot(&server, "never", 3600, "/needs/nothing")).unwrap();
    let out = run_with_store(dir.path(), &store);
    assert!(String::from_utf8_lossy(&out.stdout).contains(r#""text":"401""#));
    assert_eq!(token_fetches(&server, "never"), 2);
}

#[test]
fn response_headers_are_recorded_beside_the_sample_checked_and_answered_offline() {
    let server = TestServer::start();
    let dir = tempfile::tempdir().unwrap();
    let bot = |path: &str| {
        format!(
            "command c {{\n    api x {{\n        method GET\n        url \"{}/flaky/0/recorded\"\n        sample \"samples/x.json\"\n    }}\n    reply \"attempt {{api_x[headers.{path}]}}\"\n}}\n",
            server.base()
        )
    };
    std::fs::write(dir.path().join("bot.blk"), bot("X-Attempt")).unwrap();
    let blkc = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_blkc"))
            .args(args)
            .current_dir(dir.path())
            .env("NO_COLOR", "1")
            .output()
            .unwrap()
    };
    let saved = blkc(&["test", "bot.blk", "x", "--save"]);
    assert!(saved.status.success(), "{}", String::from_utf8_lossy(&saved.stderr));
    let headers = std::fs::read_to_string(dir.path().join("samples/x.headers.json")).unwrap();
    assert!(headers.contains("\"x-attempt\": \"1\""), "{headers}");
    // Checked like a body path: a name the server did not send, with the one it meant.
    std::fs::write(dir.path().join("bot.blk"), bot("x-atempt")).unwrap();
    let checked = blkc(&["check", "bot.blk"]);
    let stderr = String::from_utf8_lossy(&checked.stderr).into_owned() + &String::from_utf8_lossy(&checked.stdout);
    assert!(stderr.contains("B201") && stderr.contains("x-attempt"), "{stderr}");
    // Offline, the recorded headers answer.
    std::fs::write(dir.path().join("bot.blk"), bot("X-Attempt")).unwrap();
    let run = blkc(&["run", "bot.blk", "--command", "c", "--offline"]);
    assert_eq!(String::from_utf8_lossy(&run.stdout).trim(), "attempt 1", "{}", String::from_utf8_lossy(&run.stderr));
}

#[test]
fn a_tree_s_failed_replaces_the_generic_failure_whichever_step_fails() {
    let server = TestServer::start();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let p = program(
        &format!(
            "command c {{\n    api up {{ method GET url \"@SERVER@/echo\" }}\n    api down {{ method GET url \"http://127.0.0.1:{closed}/x\" }}\n    reply \"never\"\n    failed {{\n        reply \"{{failure_kind}} at {{failure_block}}: {{failure_message}}\"\n    }}\n}}\n"
        ),
        &server,
    );
    let ran = json_run(&p, &["--command", "c"]);
    assert_eq!(ran.code, 0, "{}", ran.stdout);
    let replies = ran.replies();
    assert_eq!(replies.len(), 1);
    assert!(replies[0].starts_with("connection at down: block `down` could not connect"), "{replies:?}");
    assert!(ran.events().iter().any(|e| e["code"] == "B301" && e["severity"] == "warning"), "{}", ran.stdout);
    // A failure that is not a request's: kind `run`.
    let p = program(
        "var n = \"x\"\ncommand c {\n    save n = n + 1\n    failed { reply \"{failure_kind}: {failure_message}\" }\n}\n",
        &server,
    );
    let ran = json_run(&p, &["--command", "c"]);
    assert_eq!(ran.code, 0, "{}", ran.stdout);
    assert!(ran.replies()[0].starts_with("run: "), "{:?}", ran.replies());
}

#[test]
fn the_file_s_failed_answers_for_every_tree_without_its_own() {
    let server = TestServer::start();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let p = program(
        &format!(
            "var failures = 0\nfailed {{\n    save failures = failures + 1\n    reply \"noted {{failure_kind}} #{{failures}}\"\n}}\ncommand c {{\n    api down {{ method GET url \"http://127.0.0.1:{closed}/x\" }}\n}}\ncommand own {{\n    api down {{ method GET url \"http://127.0.0.1:{closed}/x\" }}\n    failed {{ reply \"its own\" }}\n}}\n"
        ),
        &server,
    );
    assert_eq!(json_run(&p, &["--command", "c"]).replies(), ["noted connection #1"]);
    assert_eq!(json_run(&p, &["--command", "c"]).replies(), ["noted connection #2"]);
    assert_eq!(json_run(&p, &["--command", "own"]).replies(), ["its own"]);
}

#[test]
fn a_users_upload_is_fetched_from_the_platform_and_sent_on_as_a_file_part() {
    use crate::support::platform::{command, TestPlatform};
    let platform = TestPlatform::start();
    let api = TestServer::start();
    let bot = "command upload {\n    option doc \"A file\" attachment required\n    api up {\n        method POST\n        url \"@API@/echo\"\n        body multipart { note = \"from {user_name}\", doc = file option_doc }\n    }\n    reply \"{api_up[status]}\"\n}\n";
    let served = crate::serve::serve(bot, &platform, Some(&api), &[], &[]);
    let base = format!("http://127.0.0.1:{}", platform.port);
    let mut interaction = command("20", "upload", serde_json::json!([{ "name": "doc", "type": 11, "value": "900" }]));
    interaction["data"]["resolved"] = serde_json::json!({ "attachments": { "900": {
        "id": "900", "url": format!("{base}/attachments/1/900/report.csv"), "filename": "report.csv",
        "content_type": "text/csv", "size": 40
    } } });
    let answer = served.send(&platform, &interaction);
    assert_eq!(crate::serve::content(&answer), "200", "{}", served.log());
    let sent = api.received().into_iter().find(|r| r.url == "/echo").expect("the upload was sent");
    assert!(sent.body.contains("name=\"doc\"; filename=\"report.csv\"\r\nContent-Type: text/csv"), "{}", sent.body);
    assert!(sent.body.contains("week,orders\n48,141\nfrom /attachments/1/900/report.csv"), "{}", sent.body);
    // A URL anywhere else is never fetched: the run fails and says why.
    interaction["id"] = serde_json::json!("21");
    interaction["data"]["resolved"]["attachments"]["900"]["url"] = serde_json::json!(format!("{}/echo", api.base()));
    let before = api.received().len();
    let answer = served.send(&platform, &interaction);
    assert_ne!(crate::serve::content(&answer), "200");
    assert_eq!(api.received().len(), before, "neither the file nor the upload was fetched or sent");
    assert!(served.wait_interaction("21").contains("not where the platform keeps files"), "{}", served.log());
}

/// Issue 54: an attachment option's file is described by variables: its
/// address, name, media type and size, as the interaction resolves it.
#[test]
fn an_attachment_option_s_address_name_type_and_size_are_variables() {
    use crate::support::platform::{command, TestPlatform};
    let platform = TestPlatform::start();
    let bot = "command upload \"Upload\" {\n    option doc \"A file\" attachment required\n    reply \"{option_doc_name} ({option_doc_type}, {option_doc_size} bytes) at {option_doc_url}\"\n}\n";
    let served = crate::serve::serve(bot, &platform, None, &[], &[]);
    let mut interaction = command("30", "upload", serde_json::json!([{ "name": "doc", "type": 11, "value": "900" }]));
    interaction["data"]["resolved"] = serde_json::json!({ "attachments": { "900": {
        "id": "900", "url": "https://cdn.discordapp.com/attachments/1/900/report.csv", "filename": "report.csv",
        "content_type": "text/csv", "size": 40
    } } });
    let answer = served.send(&platform, &interaction);
    assert_eq!(
        crate::serve::content(&answer),
        "report.csv (text/csv, 40 bytes) at https://cdn.discordapp.com/attachments/1/900/report.csv",
        "{}",
        served.log()
    );
}
