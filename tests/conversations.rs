//! Conversation tests (`blkc test FILE.blkt`, docs/test.md), by the real
//! binary: a passing and a failing test of each step and expectation
//! against tests/fixtures/conversations/bot.blk (each failure's report
//! snapshotted), one fixture per diagnostic, `--update`, the report
//! formats (JUnit validated against the schema CI systems use), the
//! examples' own tests, and that a test never reaches the network.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::server::TestServer;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/conversations");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn blkc(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_blkc"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("BLKC_BOT_TOKEN")
        .output()
        .unwrap()
}

fn text(out: &Output) -> (String, String) {
    (String::from_utf8_lossy(&out.stdout).to_string(), String::from_utf8_lossy(&out.stderr).to_string())
}

/// A test's time varies from run to run: `(12 ms)` is written `(… ms)`.
fn timeless(text: &str) -> String {
    let re = regex::Regex::new(r"\((\d+) ms\)").unwrap();
    re.replace_all(text, "(… ms)").to_string()
}

/// Each test of the fixture passes or fails as its name says, and each
/// failure's report is as snapshotted.
#[test]
fn each_step_and_expectation_passes_and_fails_as_its_test_is_named() {
    let out = blkc(Path::new(FIXTURES), &["test", "bot.blkt", "--color", "never", "--jobs", "2"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(4), "{stdout}{stderr}");
    let mut seen = 0;
    for line in stdout.lines().filter(|l| l.starts_with("test ") && l.contains(" › ")) {
        let (name, result) = line.split_once(" › ").unwrap().1.split_once(" ... ").unwrap();
        if name.starts_with("passes:") {
            assert!(result.starts_with("ok"), "{name} must pass:\n{stdout}");
        } else {
            assert!(name.starts_with("fails:"), "{name}");
            assert_eq!(result, "FAILED", "{name} must fail:\n{stdout}");
        }
        seen += 1;
    }
    let written = std::fs::read_to_string(Path::new(FIXTURES).join("bot.blkt")).unwrap();
    assert_eq!(seen, written.matches("\ntest \"").count(), "{stdout}");
    insta::assert_snapshot!(timeless(&stdout));
}

/// One fixture per code: those found before anything runs exit 2, a step
/// not taken or an expectation not met exits 4.
#[test]
fn every_test_diagnostic_has_its_fixture() {
    insta::glob!("fixtures/conversations/err_*.blkt", |path| {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let code = name.split('_').nth(1).unwrap().to_string();
        let out = blkc(Path::new(FIXTURES), &["test", &name, "--color", "never"]);
        let (stdout, stderr) = text(&out);
        let expected = if ["B503", "B504"].contains(&code.as_str()) { 4 } else { 2 };
        assert_eq!(out.status.code(), Some(expected), "{name}: {stdout}{stderr}");
        assert!(stdout.contains(&code) || stderr.contains(&code), "{name} must report {code}:\n{stdout}{stderr}");
        for report in stderr.split("\n\n").filter(|r| r.contains('×')) {
            assert!(report.contains("help:"), "{name}: a report without help:\n{report}");
        }
        insta::assert_snapshot!(timeless(&format!("{stdout}{stderr}")));
    });
}

/// A folder with the fixture bot in it, to write tests beside.
fn scratch() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(Path::new(FIXTURES).join("bot.blk"), dir.path().join("bot.blk")).unwrap();
    std::fs::create_dir(dir.path().join("samples")).unwrap();
    for sample in std::fs::read_dir(Path::new(FIXTURES).join("samples")).unwrap() {
        let sample = sample.unwrap().path();
        std::fs::copy(&sample, dir.path().join("samples").join(sample.file_name().unwrap())).unwrap();
    }
    let path = dir.path().join("bot.blkt");
    (dir, path)
}

/// `--update` writes what the bot did: a value it did not meet is
/// rewritten, a step without expectations gets them; the file then
/// passes as it is, and a second update changes nothing.
#[test]
fn update_writes_what_the_bot_did_and_round_trips() {
    let (dir, path) = scratch();
    std::fs::write(
        &path,
        r#"test "a snapshot" {
    as "ann"
    command hello { name = "Bo" }
    click "Vote"
    expect update text "Votes: 7"
    choose "Red"
}
test "already right" {
    command fetch { id = "1" }
    expect reply "Widget"
}
"#,
    )
    .unwrap();
    let out = blkc(dir.path(), &["test", "bot.blkt", "--update", "--color", "never"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("a snapshot ... updated"), "{stdout}");
    let updated = std::fs::read_to_string(&path).unwrap();
    insta::assert_snapshot!(updated);
    let again = blkc(dir.path(), &["test", "bot.blkt", "--color", "never"]);
    assert_eq!(again.status.code(), Some(0), "{}", text(&again).0);
    let twice = blkc(dir.path(), &["test", "bot.blkt", "--update"]);
    assert_eq!(twice.status.code(), Some(0));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), updated, "a second update changed the file");
}

/// The JUnit XML CI systems read holds to both schemas in use: Jenkins'
/// junit-4.xsd and Apache Ant's (as the junit-report crate ships them),
/// checked by libxml2's xmllint.
#[test]
fn junit_output_is_valid_against_the_junit_schemas() {
    let Some(xmllint) = which("xmllint") else {
        assert!(std::env::var_os("CI").is_none(), "xmllint (libxml2-utils) is needed under CI");
        eprintln!("skipped: no xmllint");
        return;
    };
    let out = blkc(Path::new(FIXTURES), &["test", "bot.blkt", "--format", "junit"]);
    assert_eq!(out.status.code(), Some(4));
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.xml");
    std::fs::write(&report, &out.stdout).unwrap();
    for schema in ["JUnit.xsd", "JUnit-alternative.xsd"] {
        let schema = junit_report_dir().join("tests").join(schema);
        assert!(schema.is_file(), "{} is missing", schema.display());
        let checked = Command::new(&xmllint).arg("--noout").arg("--schema").arg(&schema).arg(&report).output().unwrap();
        assert!(checked.status.success(), "{}: {}", schema.display(), String::from_utf8_lossy(&checked.stderr));
    }
    let xml = String::from_utf8_lossy(&out.stdout);
    let written = std::fs::read_to_string(Path::new(FIXTURES).join("bot.blkt")).unwrap();
    assert_eq!(xml.matches("<testcase ").count(), written.matches("\ntest \"").count(), "{xml}");
    assert_eq!(xml.matches("<failure ").count(), written.matches("\ntest \"fails:").count(), "{xml}");
    assert!(xml.contains("type=\"B504\""), "{xml}");
}

/// The junit-report crate's folder, from cargo's own metadata.
fn junit_report_dir() -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let out =
        Command::new(cargo).args(["metadata", "--format-version", "1", "--locked"]).current_dir(ROOT).output().unwrap();
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let package = meta["packages"].as_array().unwrap().iter().find(|p| p["name"] == "junit-report").unwrap();
    Path::new(package["manifest_path"].as_str().unwrap()).parent().unwrap().to_path_buf()
}

fn which(tool: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")?.to_str()?.split(':').map(|d| Path::new(d).join(tool)).find(|p| p.is_file())
}

/// TAP 14 and JSON say the same as the text.
#[test]
fn tap_and_json_reports() {
    let out = blkc(Path::new(FIXTURES), &["test", "bot.blkt", "--format", "tap", "--filter", "text"]);
    let (tap, _) = text(&out);
    assert_eq!(out.status.code(), Some(4));
    let lines: Vec<&str> = tap.lines().collect();
    assert_eq!(lines[..2], ["TAP version 14", "1..6"]);
    assert_eq!(tap.lines().filter(|l| l.starts_with("ok ")).count(), 3, "{tap}");
    assert_eq!(tap.lines().filter(|l| l.starts_with("not ok ")).count(), 3, "{tap}");
    assert!(tap.contains("  code: B504\n"), "{tap}");
    let out = blkc(Path::new(FIXTURES), &["test", "bot.blkt", "--format", "json", "--filter", "text"]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((doc["passed"].as_u64(), doc["failed"].as_u64()), (Some(3), Some(3)));
    let failed = doc["files"][0]["tests"].as_array().unwrap().iter().find(|t| t["passed"] == false).unwrap();
    assert_eq!(failed["failure"]["code"], "B504");
    assert_eq!(failed["failure"]["span"]["start"]["line"], 11);
}

/// Every example ships with its tests, and they pass (CI runs them so).
#[test]
fn the_examples_pass_their_own_tests() {
    let out = blkc(Path::new(ROOT), &["test", "examples/", "--color", "never"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    for entry in std::fs::read_dir(Path::new(ROOT).join("examples")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "blk") {
            let tests = path.with_extension("blkt");
            assert!(tests.is_file(), "{} has no tests ({})", path.display(), tests.display());
        }
    }
}

/// A test is offline, always: a block without a sample fails its run
/// (B312) and the server its URL names hears nothing.
#[test]
fn a_test_never_reaches_the_network() {
    let server = TestServer::start();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("bot.blk"),
        format!("command ping \"Ping\" {{\n    api live {{ method GET url \"{}/echo\" }}\n    reply \"{{api_live[status]}}\"\n}}\n", server.base()),
    )
    .unwrap();
    std::fs::write(dir.path().join("bot.blkt"), "test \"ping\" {\n    command ping\n    expect reply \"200\"\n}\n")
        .unwrap();
    let out = blkc(dir.path(), &["test", "bot.blkt", "--color", "never"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(4), "{stdout}{stderr}");
    assert!(stdout.contains("B312"), "the run must fail for want of a sample:\n{stdout}");
    assert!(server.log.lock().unwrap().is_empty(), "a test reached the server");
}

/// A test file is found beside its bot, a folder's are all run, and a
/// file without tests says where to write them.
#[test]
fn test_files_are_found_beside_their_bot() {
    let (dir, path) = scratch();
    std::fs::write(&path, "test \"t\" {\n    command fetch { id = \"1\" }\n    expect reply \"Widget\"\n}\n").unwrap();
    let by_bot = blkc(dir.path(), &["test", "bot.blk"]);
    assert_eq!(by_bot.status.code(), Some(0), "{:?}", text(&by_bot));
    let by_folder = blkc(dir.path(), &["test", "."]);
    assert_eq!(by_folder.status.code(), Some(0), "{:?}", text(&by_folder));
    std::fs::remove_file(&path).unwrap();
    let none = blkc(dir.path(), &["test", "bot.blk"]);
    assert_eq!(none.status.code(), Some(2));
    assert!(text(&none).1.contains("has no conversation tests: write them in"), "{:?}", text(&none));
}

/// `--coverage` names what no test reached: a tree no test ran, a branch
/// of an `if` no test took, where it is in the bot's file.
#[test]
fn coverage_names_what_no_test_reached() {
    let args = ["test", "bot.blkt", "--coverage", "--filter", "request, answered", "--color", "never"];
    let out = blkc(Path::new(FIXTURES), &args);
    let (stdout, _) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let coverage: Vec<&str> =
        stdout.lines().skip_while(|l| !l.starts_with("coverage of")).take_while(|l| !l.is_empty()).collect();
    insta::assert_snapshot!(coverage.join("\n"));
    let all = blkc(Path::new(FIXTURES), &["test", "bot.blkt", "--coverage", "--format", "json"]);
    let doc: serde_json::Value = serde_json::from_slice(&all.stdout).unwrap();
    let coverage = &doc["files"][0]["coverage"];
    assert_eq!(coverage["trees"]["reached"], coverage["trees"]["total"], "{coverage}");
    assert_eq!(coverage["branches"]["reached"], coverage["branches"]["total"], "{coverage}");
}

/// What a test reads of the bot's requests is redacted as every output
/// is: a secret the test gives is `<NAME>` in what `--update` writes.
#[test]
fn secrets_stay_out_of_what_the_tests_read() {
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(ROOT).join("examples");
    std::fs::copy(root.join("daily.blk"), dir.path().join("daily.blk")).unwrap();
    std::fs::create_dir(dir.path().join("samples")).unwrap();
    std::fs::copy(root.join("samples/forecast.json"), dir.path().join("samples/forecast.json")).unwrap();
    let tests = "secret NEWS_CHANNEL = \"1400000000000000002\"\nsecret WEATHER_KEY = \"a-secret-key-1234\"\ntest \"t\" {\n    tick morning\n}\n";
    std::fs::write(dir.path().join("daily.blkt"), tests).unwrap();
    let out = blkc(dir.path(), &["test", "daily.blkt", "--update"]);
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
    let written = std::fs::read_to_string(dir.path().join("daily.blkt")).unwrap();
    let after = written.split_once("tick morning").unwrap().1;
    assert!(after.contains("appid=<WEATHER_KEY>"), "{written}");
    assert!(!after.contains("a-secret-key-1234"), "{written}");
}

/// Issue 56, item 6: a button used up (`max_clicks`) is disabled on its
/// message by the bot's edit, and the test sees it so, as the platform's
/// client shows it: a click on it is a step the member cannot take (B503).
#[test]
fn a_used_up_button_is_disabled_on_its_message() {
    let dir = tempfile::tempdir().unwrap();
    let bot = "command claim \"Claim\" {\n    reply {\n        text \"One prize\"\n        button take { label \"Take\" max_clicks 1 }\n    }\n}\n\nhandler take {\n    reply \"taken\"\n}\n";
    std::fs::write(dir.path().join("bot.blk"), bot).unwrap();
    let tests = "test \"one prize\" {\n    command claim\n    click \"Take\"\n    expect reply \"taken\"\n    click \"Take\"\n}\n";
    std::fs::write(dir.path().join("bot.blkt"), tests).unwrap();
    let out = blkc(dir.path(), &["test", "bot.blkt", "--color", "never"]);
    let (stdout, stderr) = text(&out);
    assert!(!out.status.success(), "{stdout}{stderr}");
    let said = format!("{stdout}{stderr}");
    assert!(said.contains("B503") && said.contains("that button is disabled"), "{said}");
}
