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
    let boundary = multer::parse_boundary(&content_type).unwrap();
    let bytes = body(&got[1]).to_vec();
    let parts = tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async move {
        let mut form = multer::Multipart::with_reader(&bytes[..], boundary);
        let mut parts = Vec::new();
        while let Some(field) = form.next_field().await.unwrap() {
            let name = field.name().map(str::to_string);
            let file = field.file_name().map(str::to_string);
            let kind = field.content_type().map(|m| m.to_string());
            let headers: Vec<String> = field.headers().keys().map(|k| k.to_string()).collect();
            parts.push((name, file, kind, headers, field.bytes().await.unwrap().to_vec()));
        }
        parts
    });
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
    let cases = [
        ("timeout \"200ms\"", format!("{}/slow/5000", server.base()), "timeout"),
        ("", format!("http://127.0.0.1:{closed}/x"), "connection"),
        ("", "http://{option_host}/x".to_string(), "refused"),
        ("", format!("{}/status/404", server.base()), "status 404"),
        ("retry 1 backoff \"1ms\"", format!("{}/status/503", server.base()), "status 503 2"),
    ];
    for (setting, url, want) in cases {
        let text = format!(
            "command c {{\n    option host \"h\"\n    api x {{\n        method GET\n        url \"{url}\"\n        {setting}\n        failed on 404, 5xx {{\n            reply \"{{failure_kind}} {{failure_status}} {{failure_attempts}}|{{failure_block}}|{{failure_message}}\"\n        }}\n    }}\n    reply \"not failed\"\n}}\n"
        );
        let p = program(&text, &server);
        let ran = json_run(&p, &["--command", "c", "--var", "option_host=evil.example/a?"]);
        assert_eq!(ran.code, 0, "{want}: {}", ran.stderr);
        let replies = ran.replies();
        assert_eq!(replies.len(), 1, "{want}: {replies:?}");
        let (vars, rest) = replies[0].split_once('|').unwrap();
        let attempts = if want.ends_with(" 2") { "" } else { " 1" };
        let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        assert_eq!(words(vars), format!("{want}{attempts}"), "{replies:?}");
        assert!(rest.starts_with("x|") && rest.len() > 2, "{rest}");
    }
    // A status the block does not list is an answer like any other.
    let p = program(
        "command c {\n    api x {\n        method GET\n        url \"@SERVER@/status/500\"\n        failed on 404 { reply \"failed\" }\n    }\n    reply \"{api_x[status]}\"\n}\n",
        &server,
    );
    assert_eq!(json_run(&p, &["--command", "c"]).replies(), ["500"]);
}
