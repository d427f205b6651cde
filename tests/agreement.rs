//! `check`, `run` and `test` judge a file alike: a file that checks clean
//! is never refused at run time for a reason that was visible in the file,
//! and a miss reads the same wherever it is found.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

fn blkc(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_blkc"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("BLKC_BOT_TOKEN", "agreement.bot.token.0123456789")
        .output()
        .unwrap()
}

fn first_json_line(out: &Output) -> Value {
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().next().unwrap_or_else(|| panic!("no output: {}", String::from_utf8_lossy(&out.stderr)));
    serde_json::from_str(line).unwrap()
}

fn codes(report: &Value) -> Vec<String> {
    report["diagnostics"].as_array().unwrap().iter().map(|d| d["code"].as_str().unwrap().to_string()).collect()
}

#[test]
fn the_token_over_plain_http_is_refused_before_anything_is_sent_by_all_three() {
    let dir = tempfile::tempdir().unwrap();
    let file = "command me {\n    api whoami {\n        method GET\n        url \"http://discord.com/api/v10/users/@me\"\n        headers { Authorization = \"Bot {bot_token}\" }\n    }\n}\n";
    std::fs::write(dir.path().join("bot.blk"), file).unwrap();
    let check = blkc(dir.path(), &["check", "bot.blk", "--format", "json"]);
    assert_eq!(check.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&check.stdout).unwrap();
    assert_eq!(codes(&report), ["B126"]);
    for args in [
        &["run", "bot.blk", "--command", "me", "--format", "json"][..],
        &["test", "bot.blk", "whoami", "--format", "json"],
    ] {
        let out = blkc(dir.path(), args);
        assert_eq!(out.status.code(), Some(1), "{args:?}: refused by the check, not at run time (exit 3)");
        let event = first_json_line(&out);
        assert_eq!(event["event"], "check");
        assert_eq!(codes(&event["report"]), ["B126"], "{args:?}");
    }
}

#[test]
fn run_and_test_report_a_file_with_errors_in_the_same_json() {
    let dir = tempfile::tempdir().unwrap();
    let file = "command c {\n    api a { method GET url \"https://api.example.com/a\" }\n    reply \"{api_nope[response.x]}\"\n}\n";
    std::fs::write(dir.path().join("bot.blk"), file).unwrap();
    let run = blkc(dir.path(), &["run", "bot.blk", "--command", "c", "--format", "json"]);
    let test = blkc(dir.path(), &["test", "bot.blk", "a", "--format", "json"]);
    assert_eq!((run.status.code(), test.status.code()), (Some(1), Some(1)));
    assert_eq!(first_json_line(&run), first_json_line(&test));
    assert_eq!(codes(&first_json_line(&test)["report"]), ["B111"]);
    assert!(test.stderr.is_empty(), "JSON mode prints no text: {}", String::from_utf8_lossy(&test.stderr));
}

#[test]
fn a_miss_reads_the_same_in_the_check_and_the_run() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("samples")).unwrap();
    std::fs::write(dir.path().join("samples/r.json"), r#"{"list": [{"name": "a"}, {"name": "b"}], "obj": {"k": 1}}"#)
        .unwrap();
    let paths = ["list.99999999999999999999999.name", "list.01.name", "obj.0", "obj.kk"];
    let replies: String = paths.iter().map(|p| format!("    reply \"{{api_r[response.{p}]}}\"\n")).collect();
    let file = format!(
        "command c {{\n    api r {{\n        method GET\n        url \"https://api.example.com/r\"\n        sample \"samples/r.json\"\n    }}\n{replies}}}\n"
    );
    std::fs::write(dir.path().join("bot.blk"), file).unwrap();
    let check = blkc(dir.path(), &["check", "bot.blk", "--format", "json"]);
    let report: Value = serde_json::from_slice(&check.stdout).unwrap();
    let found: Vec<(String, String)> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["code"].as_str().unwrap().to_string(), d["message"].as_str().unwrap().to_string()))
        .collect();
    let messages: Vec<&str> = found.iter().map(|(_, m)| m.as_str()).collect();
    assert_eq!(
        messages,
        [
            "`response.list` has 2 elements; index 99999999999999999999999 is past its end",
            "`response.list` is an array of 2; `01` is not an index",
            "`response.obj` is an object; `0` is not one of its keys",
            "`response.obj` has no key `kk`",
        ]
    );
    let codes: Vec<&str> = found.iter().map(|(c, _)| c.as_str()).collect();
    assert_eq!(codes, ["B205", "B202", "B203", "B201"]);

    // The one path the check only warns about fails the run the same way.
    let file = std::fs::read_to_string(dir.path().join("bot.blk")).unwrap();
    let only_warning: String =
        file.lines().filter(|l| !l.contains("reply") || l.contains(paths[0])).collect::<Vec<_>>().join("\n");
    std::fs::write(dir.path().join("bot.blk"), only_warning).unwrap();
    let run = blkc(dir.path(), &["run", "bot.blk", "--command", "c", "--offline", "--format", "json"]);
    assert_eq!(run.status.code(), Some(0), "{}", String::from_utf8_lossy(&run.stderr));
    let stdout = String::from_utf8_lossy(&run.stdout);
    let warning: Value = stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|e| e["event"] == "warning")
        .expect("a B307 warning");
    assert_eq!(warning["code"], "B307");
    assert_eq!(warning["message"], messages[0]);
}
