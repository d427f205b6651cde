//! No secret and no bot token, raw, percent-encoded or base64-encoded,
//! appears in any output: text, JSON, `-v`, dry runs, failures, the plan,
//! the store. The server echoes every secret back to make leaks likely.

use std::process::Command;

use crate::support::server::TestServer;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
use base64::Engine as _;

const TOKEN: &str = "CanaryBotToken.Xy9.qR7-zz_0123456789";
// A quote and a backslash: JSON output must escape them, and the redactor
// must find the escaped form too.
const SECRET: &str = "canary/se\"cr\\et+key=0987654321";

/// Every form in which a value could leak.
fn forms(value: &str) -> Vec<String> {
    let pct = percent_encoding::utf8_percent_encode(value, percent_encoding::NON_ALPHANUMERIC).to_string();
    let json = serde_json::Value::String(value.into()).to_string();
    let mut forms = vec![
        value.to_string(),
        value.to_ascii_lowercase(),
        pct.to_ascii_lowercase(),
        pct,
        url::form_urlencoded::byte_serialize(value.as_bytes()).collect(),
        json[1..json.len() - 1].to_string(),
        value.bytes().map(|b| format!("%{b:02X}")).collect(),
        value.bytes().map(|b| format!("{b:02x}")).collect(),
        value.bytes().map(|b| format!("{b:02X}")).collect(),
        value.encode_utf16().map(|u| format!("\\u{u:04X}")).collect(),
        value.encode_utf16().map(|u| format!("\\u{u:04x}")).collect(),
    ];
    for engine in [&STANDARD, &STANDARD_NO_PAD, &URL_SAFE, &URL_SAFE_NO_PAD] {
        forms.push(engine.encode(value));
        // Inside longer base64 text, as in `Basic` credentials.
        let basic = engine.encode(format!("bot:{value}"));
        forms.push(basic[8..basic.len() - 4].to_string());
    }
    forms
}

fn assert_clean(what: &str, output: &str) {
    for value in [TOKEN, SECRET] {
        for form in forms(value) {
            assert!(!output.contains(&form), "{what} leaks `{form}`:\n{output}");
        }
    }
}

const PROGRAM: &str = r#"platform "@SERVER@/api"

command leak {
    option base "base URL"
    api me {
        method POST
        url "@SERVER@/echo/<API_KEY>?key=<API_KEY>"
        params { token_param = "<API_KEY>" }
        headers { Authorization = "Bot {bot_token}", X-Api-Key = "<API_KEY>" }
        body { key = "<API_KEY>" }
        allow bot_token
    }
    api basic {
        method GET
        url "@SERVER@/basic"
        headers { X-Api-Key = "<API_KEY>" }
    }
    api forms {
        method GET
        url "@SERVER@/forms"
        headers { X-Api-Key = "<API_KEY>" }
    }
    reply "{api_me[response]}"
    reply "{api_basic[response]}"
    reply "{api_forms[response]} {api_forms[response.pct]} {api_forms[response.uni]} {api_forms[response.hex]} {api_forms[response.HEX]}"
    save forms = api_forms[response]
    reply "{api_me[response.nope]}"
    save echoed = "{api_me[response]}"
    save basic = api_basic[response]
}

command broken {
    option id "an id"
    api bad {
        method GET
        url "@SERVER@/x/{option_id}/<API_KEY>?k=<API_KEY>"
        headers { X-Api-Key = "<API_KEY>", X-Trace = "{option_id}-<API_KEY>", Authorization = "Bot {bot_token}" }
    }
}
"#;

fn run(dir: &std::path::Path, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_blkc"))
        .args(args)
        .current_dir(dir)
        .env("BLKC_BOT_TOKEN", TOKEN)
        .env("BLKC_SECRET_API_KEY", SECRET)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    format!("{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

#[test]
fn no_output_mode_shows_a_secret() {
    let server = TestServer::start();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("leak.blk"), PROGRAM.replace("@SERVER@", &server.base())).unwrap();
    let d = dir.path();
    let modes: &[(&str, &[&str])] = &[
        ("text", &["run", "leak.blk", "--command", "leak"]),
        ("text -v", &["run", "leak.blk", "--command", "leak", "-v"]),
        ("json", &["run", "leak.blk", "--command", "leak", "--format", "json"]),
        ("json -v", &["run", "leak.blk", "--command", "leak", "--format", "json", "-v"]),
        ("dry run", &["run", "leak.blk", "--command", "leak", "--dry-run"]),
        ("dry run json", &["run", "leak.blk", "--command", "leak", "--dry-run", "--format", "json"]),
        ("strict failure", &["run", "leak.blk", "--command", "leak", "--strict", "-v"]),
        ("dot segment", &["run", "leak.blk", "--command", "broken", "--var", "option_id=.."]),
        ("dot segment json", &["run", "leak.blk", "--command", "broken", "--var", "option_id=..", "--format", "json"]),
        ("header refused", &["run", "leak.blk", "--command", "broken", "--var", "option_id=a\nb", "-v"]),
        (
            "token refused",
            &["run", "leak.blk", "--command", "broken", "--var", "option_id=1", "--platform", "http://localhost:1/api"],
        ),
        ("build", &["build", "leak.blk"]),
        ("vars list", &["vars", "list"]),
        ("vars list json", &["vars", "list", "--format", "json"]),
    ];
    for (what, args) in modes {
        assert_clean(what, &run(d, args));
    }
    // The secrets did reach the server: the test would prove nothing otherwise.
    let first = &server.received()[0];
    assert_eq!(first.header("x-api-key"), Some(SECRET));
    assert_eq!(first.header("authorization").map(|a| a.ends_with(TOKEN)), Some(true));
    // What was saved is redacted, and the store file holds no secret.
    let listing = run(d, &["vars", "get", "echoed"]);
    assert!(listing.contains("<API_KEY>") && listing.contains("{bot_token}"), "{listing}");
    for entry in std::fs::read_dir(d.join(".blkc")).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        assert_clean("the store", &String::from_utf8_lossy(&bytes));
    }
}
