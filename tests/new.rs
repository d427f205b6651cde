//! `blkc new`: a project in one command (issue 56, item 14). Each template
//! is written into a new folder, and there, as its README says, it checks
//! clean, is formatted, passes its own conversation tests and plays at
//! once: its first command answered by play offline.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::json;

fn blkc(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_blkc")).args(args).current_dir(dir).output().unwrap()
}

fn said(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// The first command of each template, and what its answer begins with.
const TEMPLATES: [(&str, &str, &str); 4] = [
    ("minimal", "hello", "Hello, ann! 👋"),
    ("moderation", "warn", "<@42> was warned: spam"),
    ("tickets", "tickets", "The panel is posted."),
    ("economy", "balance", "You have 0 coins."),
];

/// What the member types with the command.
fn options(command: &str) -> serde_json::Value {
    match command {
        "warn" => {
            json!([{ "name": "member", "type": 6, "value": "42" }, { "name": "reason", "type": 3, "value": "spam" }])
        }
        _ => json!([]),
    }
}

#[test]
fn each_template_is_a_project_that_checks_tests_and_plays_at_once() {
    for (template, command, answer) in TEMPLATES {
        let parent = tempfile::tempdir().unwrap();
        let made = blkc(parent.path(), &["new", "my-bot", "--template", template]);
        assert!(made.status.success(), "{template}: {}", said(&made));
        assert!(said(&made).contains("blkc play bot.blk --offline"), "{}", said(&made));
        let dir = parent.path().join("my-bot");
        let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
        assert!(readme.starts_with("# my-bot\n"), "{readme}");
        for step in ["blkc check bot.blk", "blkc play bot.blk --offline", "blkc test bot.blkt", "blkc deploy bot.blk"] {
            assert!(readme.contains(step), "{template}: the README says how to {step}:\n{readme}");
        }
        let ignored = std::fs::read_to_string(dir.join(".gitignore")).unwrap();
        assert!(ignored.lines().any(|l| l == ".blkc/"), "the store is ignored: {ignored}");
        let checked = blkc(&dir, &["check", "bot.blk"]);
        assert!(checked.status.success() && said(&checked).contains("no problems found"), "{}", said(&checked));
        let formatted = blkc(&dir, &["fmt", "--check", "bot.blk"]);
        assert!(formatted.status.success(), "{template}: {}", said(&formatted));
        let tested = blkc(&dir, &["test", "bot.blkt"]);
        assert!(tested.status.success() && said(&tested).contains(" 0 failed"), "{template}: {}", said(&tested));
        // It plays, offline, without a secret given.
        let moved = tempfile::tempdir().unwrap();
        std::fs::remove_dir(moved.path()).unwrap();
        std::fs::rename(&dir, moved.path()).unwrap();
        let played = crate::play::play_in(moved, &["--offline"]);
        let member = json!({ "id": "2001", "name": "ann", "permissions": "8" });
        let asked =
            json!({ "type": 2, "data": { "type": 1, "name": command, "options": options(command) }, "member": member });
        let answered = played.send(asked);
        let content = answered["answer"]["data"]["content"].as_str().unwrap_or_default();
        assert!(answered["answer"]["type"] == 4 && content == answer, "{template}: {answered}");
    }
}

#[test]
fn a_folder_that_is_not_empty_is_never_written_into() {
    let parent = tempfile::tempdir().unwrap();
    std::fs::create_dir(parent.path().join("mine")).unwrap();
    std::fs::write(parent.path().join("mine/bot.blk"), "# my own\n").unwrap();
    let made = blkc(parent.path(), &["new", "mine"]);
    assert_eq!(made.status.code(), Some(2), "{}", said(&made));
    assert!(said(&made).contains("already exists and is not empty"), "{}", said(&made));
    assert_eq!(std::fs::read_to_string(parent.path().join("mine/bot.blk")).unwrap(), "# my own\n");
    // An empty one is taken.
    std::fs::create_dir(parent.path().join("empty")).unwrap();
    assert!(blkc(parent.path(), &["new", "empty"]).status.success());
    assert!(parent.path().join("empty/bot.blk").exists());
}
