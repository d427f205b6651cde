//! `blkc check`'s formats for other tools (short, github, sarif, json),
//! standard input, `--fix`, and one way of counting columns everywhere.

use std::io::Write;
use std::process::{Command, Stdio};

use insta_cmd::{assert_cmd_snapshot, get_cargo_bin};

use crate::support::node;

fn blkc() -> Command {
    let mut cmd = Command::new(get_cargo_bin("blkc"));
    cmd.current_dir(env!("CARGO_MANIFEST_DIR")).env("NO_COLOR", "1").env("COLUMNS", "100");
    cmd
}

/// Runs blkc with `input` on standard input.
fn with_stdin(cmd: &mut Command, input: &str) -> std::process::Output {
    let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

const MISTAKES: [&str; 3] = [
    "tests/fixtures/mistakes/json_colon_in_body.blk",
    "tests/fixtures/check/warn_B118_secret_literal.blk",
    "tests/fixtures/check/err_B113_not_run_before.blk",
];

#[test]
fn short_is_one_line_per_diagnostic() {
    assert_cmd_snapshot!(blkc().args(["check", "--format", "short"]).args(MISTAKES));
}

#[test]
fn github_annotations() {
    assert_cmd_snapshot!(blkc().args(["check", "--format", "github"]).args(MISTAKES));
}

#[test]
fn sarif_passes_microsofts_validator() {
    let dir = tempfile::tempdir().unwrap();
    // An absolute path too: SARIF wants it as a `file:` URI.
    let absolute = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/mistakes/unclosed_array.blk");
    let out = blkc().args(["check", "--format", "sarif"]).args(MISTAKES).arg(absolute).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let log: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let results = log["runs"][0]["results"].as_array().unwrap();
    assert!(results.len() >= 4, "every diagnostic is a result");
    assert!(results.iter().any(|r| r["fixes"].is_array()), "certain fixes are SARIF fixes");
    let file = dir.path().join("blkc.sarif");
    std::fs::write(&file, &out.stdout).unwrap();
    let report = dir.path().join("validation.sarif");
    let status = Command::new(node::sarif_multitool())
        .args(["validate", "--output"])
        .arg(&report)
        .arg(&file)
        .stdout(Stdio::null())
        .status()
        .expect("the SARIF multitool runs");
    assert!(status.success());
    let validation: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let errors: Vec<_> = validation["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["level"] == "error")
        .map(|r| r["message"].to_string())
        .collect();
    assert!(errors.is_empty(), "the SARIF validator found errors: {errors:#?}");
}

#[test]
fn a_broken_sarif_log_fails_the_validator() {
    // The validator test above can fail: the same tool rejects a bad log.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.sarif");
    std::fs::write(&file, r#"{"version":"2.1.0","runs":[{"tool":{"driver":{}},"results":[{"message":{}}]}]}"#).unwrap();
    let report = dir.path().join("validation.sarif");
    Command::new(node::sarif_multitool())
        .args(["validate", "--output"])
        .arg(&report)
        .arg(&file)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    let validation: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert!(validation["runs"][0]["results"].as_array().unwrap().iter().any(|r| r["level"] == "error"));
}

#[test]
fn columns_count_characters_in_every_format() {
    // `é` and `→` are two and three bytes: columns count them as one each.
    let text = "command cafe {\n    reply \"é→\" save v: \"1\"\n}\n";
    let json = with_stdin(blkc().args(["check", "-", "--format", "json"]), text);
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let start = &doc["diagnostics"][0]["span"]["start"];
    let short = String::from_utf8(with_stdin(blkc().args(["check", "-", "--format", "short"]), text).stdout).unwrap();
    let text_out = String::from_utf8(with_stdin(blkc().args(["check", "-"]), text).stderr).unwrap();
    let column = start["column"].as_u64().unwrap();
    assert_eq!(start["line"], 2);
    assert!(short.starts_with(&format!("<stdin>:2:{column}:")), "{short}");
    assert!(text_out.contains(&format!("<stdin>:2:{column}]")), "{text_out}");
    let line = text.lines().nth(1).unwrap();
    let byte = start["offset"].as_u64().unwrap() as usize - text.find('\n').unwrap() - 1;
    assert_eq!(column as usize, line[..byte].chars().count() + 1);
}

#[test]
fn stdin_takes_the_name_and_folder_of_stdin_filename() {
    let text = std::fs::read_to_string("examples/weather.blk").unwrap();
    // Samples are read beside the named file: examples/samples/forecast.json.
    let out =
        with_stdin(blkc().args(["check", "-", "--stdin-filename", "examples/weather.blk", "--format", "short"]), &text);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let broken = text.replace("response.main.temp", "response.main.tmep");
    let out = with_stdin(
        blkc().args(["check", "-", "--stdin-filename", "examples/weather.blk", "--format", "short"]),
        &broken,
    );
    let short = String::from_utf8(out.stdout).unwrap();
    assert!(short.starts_with("examples/weather.blk:") && short.contains("[B201]"), "{short}");
}

#[test]
fn unreadable_files_are_errors_in_the_json_document() {
    let out = blkc().args(["check", "--format", "json", "examples/weather.blk", "no/such.blk"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["errors"], 1);
    assert_eq!(doc["diagnostics"][0]["code"], "B007");
    assert_eq!(doc["diagnostics"][0]["file"], "no/such.blk");
}

#[test]
fn fix_makes_the_certain_fixes_and_reports_what_is_left() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bot.blk");
    std::fs::write(
        &file,
        "command hello {\n    Reply 'hi'\n    api ping {\n        method get\n        url \"https://api.example.com/ping\"\n    }\n    reply \"{api_ping.response.ok}\"\n}\n",
    )
    .unwrap();
    let out = blkc().args(["check", "--fix"]).arg(&file).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("fixed 4 problems"), "{stderr}");
    let fixed = std::fs::read_to_string(&file).unwrap();
    assert_eq!(
        fixed,
        "command hello {\n    reply \"hi\"\n    api ping {\n        method GET\n        url \"https://api.example.com/ping\"\n    }\n    reply \"{api_ping[response.ok]}\"\n}\n"
    );
    // A maybe-fix is offered, never made.
    std::fs::write(&file, "command hello {\n    option name \"Who\"\n    reply \"Hi ${option_name}\"\n}\n").unwrap();
    let out = blkc().args(["check", "--fix", "--format", "json"]).arg(&file).output().unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["diagnostics"][0]["code"], "B134");
    assert_eq!(doc["diagnostics"][0]["suggestions"][0]["confidence"], "maybe");
    assert!(std::fs::read_to_string(&file).unwrap().contains("${option_name}"));
}

#[test]
fn fix_on_stdin_prints_the_fixed_text() {
    let out = with_stdin(blkc().args(["check", "--fix", "-"]), "command hello {\n    reply: \"hi\";\n}\n");
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "command hello {\n    reply \"hi\"\n}\n");
}
