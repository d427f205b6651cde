//! Issue: untrusted values and responses. Conditions on chat IDs and on
//! missing values, what servers answer (BOM, bad UTF-8, compression,
//! redirects with raw UTF-8, error statuses), against real loopback servers.

use crate::support::cli::{run_json, Ran};
use crate::support::server::TestServer;
use std::path::Path;

fn run(dir: &Path, file: &str, args: &[&str]) -> Ran {
    run_json(dir, file, args, &[])
}

#[test]
fn an_admin_check_on_a_long_id_admits_only_that_id() {
    let dir = tempfile::tempdir().unwrap();
    let file = "command whoami {\n    if \"{user_id}\" == \"123456789012345679\" {\n        reply \"admin\"\n    } else {\n        reply \"user\"\n    }\n}\n";
    let ran = run(dir.path(), file, &["--command", "whoami", "--var", "user_id=123456789012345678"]);
    assert_eq!(ran.replies(), ["user"], "{}", ran.stderr);
    let ran = run(dir.path(), file, &["--command", "whoami", "--var", "user_id=123456789012345679"]);
    assert_eq!(ran.replies(), ["admin"]);
}

#[test]
fn a_missing_value_never_makes_an_ordering_true_and_warns() {
    let server = TestServer::start();
    let dir = tempfile::tempdir().unwrap();
    let file = format!(
        "command c {{\n    api r {{ method GET url \"{}/echo\" }}\n    if api_r[response.balance] > 1000 {{ reply \"gt\" }} else {{ reply \"not gt\" }}\n    if api_r[response.balance] <= 1000 {{ reply \"le\" }} else {{ reply \"not le\" }}\n    if api_r[response.balance] == null {{ reply \"eq null\" }} else {{ reply \"not eq null\" }}\n    if api_r[response.balance] != 5 {{ reply \"ne\" }}\n    if api_r[response.balance] {{ reply \"truthy\" }} else {{ reply \"falsy\" }}\n}}\n",
        server.base()
    );
    let ran = run(dir.path(), &file, &["--command", "c"]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert_eq!(ran.replies(), ["not gt", "not le", "not eq null", "ne", "falsy"]);
    assert_eq!(ran.warnings(), ["B307"; 5], "every read of the missing value is warned about");
}

#[test]
fn a_json_body_with_a_bom_is_json() {
    let server = TestServer::start();
    let dir = tempfile::tempdir().unwrap();
    let file = format!(
        "command c {{\n    api r {{ method GET url \"{}/bom\" }}\n    reply \"{{api_r[response.bom]}}\"\n}}\n",
        server.base()
    );
    let ran = run(dir.path(), &file, &["--command", "c", "--strict"]);
    assert_eq!(ran.replies(), ["skipped"], "{}", ran.stderr);
}

#[test]
fn a_json_body_with_a_bad_byte_is_read_lossily_and_warned_about() {
    let server = TestServer::start();
    let dir = tempfile::tempdir().unwrap();
    let file = format!(
        "command c {{\n    api r {{ method GET url \"{}/bad-utf8\" }}\n    reply \"{{api_r[response.name]}} {{api_r[response.ok]}}\"\n}}\n",
        server.base()
    );
    let ran = run(dir.path(), &file, &["--command", "c"]);
    assert_eq!(ran.replies(), ["caf\u{fffd} true"], "{}", ran.stderr);
    assert_eq!(ran.warnings(), ["B318"]);
}

#[test]
fn deflate_and_brotli_are_decoded_and_capped() {
    let server = TestServer::start();
    let dir = tempfile::tempdir().unwrap();
    for coding in ["deflate", "deflate-raw", "br"] {
        let file = format!(
            "command c {{\n    api r {{ method GET url \"{}/encoded/{coding}\" }}\n    reply \"{{api_r[response.encoded]}}\"\n}}\n",
            server.base()
        );
        let ran = run(dir.path(), &file, &["--command", "c", "--strict"]);
        assert_eq!(ran.replies(), ["yes"], "{coding}: {}", ran.stderr);
    }
    for coding in ["deflate", "br"] {
        let file = format!("command c {{\n    api r {{ method GET url \"{}/bomb/{coding}\" }}\n}}\n", server.base());
        let ran = run(dir.path(), &file, &["--command", "c", "--max-response-size", "100000"]);
        assert_eq!((ran.code, ran.error_code()), (3, "B304"), "{coding}: {}", ran.stderr);
    }
}

#[test]
fn a_redirect_with_raw_utf8_is_followed_encoded() {
    let server = TestServer::start();
    let mut reply = b"HTTP/1.1 302 Found\r\nContent-Length: 0\r\nLocation: ".to_vec();
    reply.extend_from_slice(format!("http://127.0.0.1:{}/echo/caf\u{e9}", server.port).as_bytes());
    reply.extend_from_slice(b"\r\n\r\n");
    let redirector = crate::support::server::raw_responder(reply);
    let dir = tempfile::tempdir().unwrap();
    let file = format!(
        "command c {{\n    api r {{ method GET url \"http://127.0.0.1:{redirector}/go\" }}\n    reply \"{{api_r[response.path]}}\"\n}}\n"
    );
    // Both servers are on this machine: the redirect's host is internal.
    let ran = run(dir.path(), &file, &["--command", "c", "--allow-private-network"]);
    assert_eq!(ran.replies(), ["/echo/caf%C3%A9"], "{}", ran.stderr);
}

#[test]
fn an_error_status_nobody_reads_is_said() {
    let server = TestServer::start();
    let dir = tempfile::tempdir().unwrap();
    let file =
        format!("command c {{\n    api r {{ method GET url \"{}/limited\" }}\n    reply \"done\"\n}}\n", server.base());
    let ran = run(dir.path(), &file, &["--command", "c"]);
    assert_eq!(ran.code, 0);
    assert_eq!(ran.warnings(), ["B319"]);
    let warning = ran.events.iter().find(|e| e["event"] == "warning").unwrap();
    assert!(warning["message"].as_str().unwrap().contains("429"), "{warning}");
    assert!(warning["help"].as_str().unwrap().contains("Retry-After: 30"), "{warning}");
    // A tree that reads the status handles it: nothing to say.
    let file = format!(
        "command c {{\n    api r {{ method GET url \"{}/limited\" }}\n    if api_r[status] == 429 {{ reply \"later\" }}\n}}\n",
        server.base()
    );
    let ran = run(dir.path(), &file, &["--command", "c"]);
    assert_eq!((ran.replies(), ran.warnings()), (vec!["later"], vec![]));
}

#[test]
fn a_secrets_file_is_read_as_dotenv() {
    let server = TestServer::start();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("secrets.env"),
        "# the shop\nSHOP_KEY = \"quoted-value-123\"\nexport OTHER_KEY=exported-value-456\nPASS='single$quoted$789'\n",
    )
    .unwrap();
    let file = format!(
        "command c {{\n    api r {{\n        method GET\n        url \"{}/echo\"\n        headers {{ A = \"<SHOP_KEY>\", B = \"<OTHER_KEY>\", C = \"<PASS>\" }}\n    }}\n}}\n",
        server.base()
    );
    let ran = run(dir.path(), &file, &["--command", "c", "--secrets", "secrets.env"]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    let got = &server.received()[0];
    assert_eq!(
        (got.header("a"), got.header("b"), got.header("c")),
        (Some("quoted-value-123"), Some("exported-value-456"), Some("single$quoted$789"))
    );
}

#[test]
fn an_object_is_never_written_into_a_url_or_header() {
    let server = TestServer::start();
    let dir = tempfile::tempdir().unwrap();
    let file = format!(
        "command c {{\n    api first {{ method GET url \"{0}/echo\" }}\n    api second {{\n        method GET\n        url \"{0}/echo\"\n        headers {{ X-All = \"{{api_first[response.headers]}}\" }}\n    }}\n}}\n",
        server.base()
    );
    let ran = run(dir.path(), &file, &["--command", "c"]);
    assert_eq!((ran.code, ran.error_code()), (3, "B310"), "{}", ran.stderr);
    assert_eq!(server.received().len(), 1, "the second request was not sent");
}

#[test]
fn a_value_cannot_forge_a_line_or_reach_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let file = "command c {\n    option x \"x\"\n    reply \"you said {option_x}\"\n    reply \"second\"\n}\n";
    std::fs::write(dir.path().join("bot.blk"), file).unwrap();
    let value = "hi\nWON\r\u{1b}]0;owned\u{7}\u{85}\u{202e}";
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_blkc"))
        .args(["run", "bot.blk", "--command", "c", "--var", &format!("option_x={value}")])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout, "you said hi\n  WON\\r\\u{1b}]0;owned\\u{7}\\u{85}\\u{202e}\nsecond\n");
    // In JSON lines, a line-splitting reader sees one line per event.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_blkc"))
        .args(["run", "bot.blk", "--command", "c", "--format", "json", "--var", &format!("option_x={value}")])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    let split: Vec<&str> =
        stdout.split(['\n', '\r', '\u{85}', '\u{2028}', '\u{2029}']).filter(|l| !l.is_empty()).collect();
    assert_eq!(lines, split, "a line end inside an event");
    let first: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
    assert_eq!(first["text"], format!("you said {value}"), "the JSON keeps the value exactly");
}

#[test]
fn an_object_from_vars_or_a_huge_value_in_a_header_is_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let file = "command c {\n    option q \"q\"\n    option h \"h\"\n    api a {\n        method GET\n        url \"https://api.example.com/s/{option_q}\"\n        headers { X-H = \"{option_h}\" }\n    }\n}\n";
    std::fs::write(dir.path().join("bot.blk"), file).unwrap();
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_blkc"))
            .args(["run", "bot.blk", "--command", "c", "--dry-run", "--format", "json"])
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned())
    };
    for vars in [r#"{"option_q": {"a": 1}, "option_h": "x"}"#, r#"{"option_q": "x", "option_h": [1, 2]}"#] {
        std::fs::write(dir.path().join("vars.json"), vars).unwrap();
        let (code, out) = run(&["--vars", "vars.json"]);
        assert_eq!(code, Some(3), "{out}");
        assert!(out.contains("\"B310\"") && out.contains("object or array"), "{out}");
    }
    // The same text given with --var is a string like any other.
    let (code, out) = run(&["--var", "option_q={\"a\":1}", "--var", "option_h=x"]);
    assert_eq!(code, Some(0), "{out}");
    let huge = serde_json::json!({ "option_q": "x", "option_h": "h".repeat(1 << 20) });
    std::fs::write(dir.path().join("vars.json"), huge.to_string()).unwrap();
    let (code, out) = run(&["--vars", "vars.json"]);
    assert_eq!(code, Some(3), "{out}");
    assert!(
        out.contains("\"B310\"") && out.contains("header `X-H` is 1048576 bytes"),
        "{}",
        &out[..out.len().min(2000)]
    );
}
