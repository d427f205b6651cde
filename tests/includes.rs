//! A bot in several files (issue 56, item 15): a root file includes others
//! (commands, handlers, variables), and every command takes the root.
//! Each test runs the real binary on a bot in three files.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{json, Value};

const ROOT: &str = "# bot.blk: the root of a bot in three files.
include \"commands/shop.blk\"
include \"handlers.blk\"

var coins per user = 0
";
const SHOP: &str = "command buy \"Buy something\" {
    save coins = coins + 1
    reply {
        text \"You have {coins} coins.\"
        button again { label \"Again\" }
    }
}
";
const HANDLERS: &str = "handler again {
    save coins = coins + 1
    reply \"Again: {coins}\"
}
";

fn bot() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("commands")).unwrap();
    std::fs::write(dir.path().join("bot.blk"), ROOT).unwrap();
    std::fs::write(dir.path().join("commands/shop.blk"), SHOP).unwrap();
    std::fs::write(dir.path().join("handlers.blk"), HANDLERS).unwrap();
    dir
}

fn blkc(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_blkc")).args(args).current_dir(dir).env("NO_COLOR", "1").output().unwrap()
}

fn said(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

#[test]
fn a_bot_in_three_files_checks_runs_builds_and_deploys_from_its_root() {
    let dir = bot();
    let d = dir.path();
    let checked = blkc(d, &["check", "bot.blk"]);
    assert!(checked.status.success() && said(&checked).contains("bot.blk: no problems found"), "{}", said(&checked));
    let ran = blkc(d, &["run", "bot.blk", "--command", "buy", "--offline"]);
    assert!(said(&ran).contains("You have 1 coins."), "{}", said(&ran));
    let clicked = blkc(d, &["run", "bot.blk", "--component", "again", "--offline"]);
    assert!(said(&clicked).contains("Again: 1"), "{}", said(&clicked));
    let built = blkc(d, &["build", "bot.blk"]);
    let plan: Value = serde_json::from_slice(&built.stdout).unwrap();
    let trees: Vec<&str> = plan["trees"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(trees, ["buy", "again"]);
    assert_eq!(plan["variables"][0]["name"], "coins");
    let deployed = blkc(d, &["deploy", "bot.blk", "--dry-run", "--application-id", "1"]);
    assert!(said(&deployed).contains("buy"), "{}", said(&deployed));
    // Its conversation tests, beside the root.
    let test = "test \"a purchase and another\" {\n    command buy\n    expect reply text \"You have 1 coins.\"\n    click \"Again\"\n    expect reply text \"Again: 2\"\n}\n";
    std::fs::write(d.join("bot.blkt"), test).unwrap();
    let tested = blkc(d, &["test", "bot.blkt"]);
    assert!(tested.status.success() && said(&tested).contains("1 passed"), "{}", said(&tested));
}

/// The newcomer's case: a name defined in two files is reported in the
/// file where it is again, with where it was first, in every format.
#[test]
fn a_name_in_two_files_is_reported_in_both() {
    let dir = bot();
    let d = dir.path();
    std::fs::write(
        d.join("handlers.blk"),
        format!("{HANDLERS}\ncommand buy \"Twice\" {{\n    reply \"{{nope}}\"\n}}\n"),
    )
    .unwrap();
    let text = said(&blkc(d, &["check", "bot.blk"]));
    assert!(text.contains("╭─[handlers.blk:6:9]") && text.contains("command `buy` is defined twice"), "{text}");
    assert!(text.contains("first defined here: commands/shop.blk:1:9"), "{text}");
    assert!(text.contains("╭─[handlers.blk:7:13]") && text.contains("bot.blk: 2 errors"), "{text}");
    let short = said(&blkc(d, &["check", "bot.blk", "--format", "short"]));
    assert!(
        short.contains("handlers.blk:6:9: error[B120]") && short.contains("handlers.blk:7:13: error[B115]"),
        "{short}"
    );
    let json: Value = serde_json::from_slice(&blkc(d, &["check", "bot.blk", "--format", "json"]).stdout).unwrap();
    let first = &json["diagnostics"][0];
    assert_eq!((first["file"].as_str(), first["span"]["start"]["line"].as_u64()), (Some("handlers.blk"), Some(6)));
    // A run's refusal names the file too.
    let ran = said(&blkc(d, &["run", "bot.blk", "--command", "buy", "--offline"]));
    assert!(ran.contains("handlers.blk:6:9"), "{ran}");
    // An include that cannot be read, and one read twice.
    std::fs::write(d.join("handlers.blk"), "include \"bot.blk\"\ninclude \"gone.blk\"\n").unwrap();
    let text = said(&blkc(d, &["check", "bot.blk"]));
    assert!(text.contains("B009") && text.contains("`bot.blk` is already part of the bot"), "{text}");
    assert!(text.contains("B008") && text.contains("╭─[handlers.blk:2:9]"), "{text}");
}

#[test]
fn fmt_and_fix_write_each_file_of_the_bot_in_its_own() {
    let dir = bot();
    let d = dir.path();
    std::fs::write(d.join("handlers.blk"), "handler again {save coins = coins + 1\n reply \"Again: {coins}\"}\n")
        .unwrap();
    let checked = blkc(d, &["fmt", "--check", "bot.blk"]);
    assert_eq!(checked.status.code(), Some(1), "{}", said(&checked));
    assert!(said(&checked).contains("--- handlers.blk\n+++ handlers.blk (formatted)"), "{}", said(&checked));
    assert!(blkc(d, &["fmt", "bot.blk"]).status.success());
    assert_eq!(std::fs::read_to_string(d.join("handlers.blk")).unwrap(), HANDLERS);
    assert_eq!(std::fs::read_to_string(d.join("bot.blk")).unwrap(), ROOT);
    // A certain fix in an included file is made there, and only there.
    std::fs::write(d.join("handlers.blk"), HANDLERS.replace("reply", "repyl")).unwrap();
    let fixed = blkc(d, &["check", "bot.blk", "--fix"]);
    assert!(fixed.status.success(), "{}", said(&fixed));
    assert_eq!(std::fs::read_to_string(d.join("handlers.blk")).unwrap(), HANDLERS);
    assert_eq!(std::fs::read_to_string(d.join("bot.blk")).unwrap(), ROOT);
}

/// Play (serve inside it, `--watch`) takes a change of an included file.
#[test]
fn play_reloads_when_an_included_file_changes() {
    let dir = bot();
    let handlers = dir.path().join("handlers.blk");
    let played = crate::play::play_in(dir, &["--offline"]);
    let buy = json!({ "type": 2, "data": { "type": 1, "name": "buy", "options": [] } });
    assert_eq!(played.send(buy)["answer"]["data"]["content"], "You have 1 coins.");
    std::fs::write(&handlers, format!("{HANDLERS}\ncommand hello \"Hi\" {{\n    reply \"hello from handlers\"\n}}\n"))
        .unwrap();
    let hello = json!({ "type": 2, "data": { "type": 1, "name": "hello", "options": [] } });
    assert!(
        crate::support::wait::eventually(60, || played.send(hello.clone())["answer"]["data"]["content"]
            == "hello from handlers"),
        "the new command of an included file was never served"
    );
}
