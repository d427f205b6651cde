//! Issue: never crash. Inputs that used to panic, abort, misparse or read
//! without end, each run through the real binary.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn blkc(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_blkc")).args(args).current_dir(dir).env("NO_COLOR", "1").output().unwrap()
}

fn json_of(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)))
}

#[test]
fn a_lone_cr_is_a_line_break_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("cr.blk"), "# a comment\rcommand c {\r    reply \"hi\"\r}\r").unwrap();
    let out = blkc(dir.path(), &["build", "cr.blk"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(json_of(&out)["trees"].as_array().unwrap().len(), 1, "the comment does not swallow the file");
    // Mixed endings: the header's line and the snippet's line agree.
    std::fs::write(dir.path().join("mixed.blk"), "command c {\r\n    reply \"a\"\r    reply \"{nope}\"\n}\n").unwrap();
    let out = blkc(dir.path(), &["check", "mixed.blk"]);
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("mixed.blk:3:13]"), "{text}");
    assert!(text.contains(" 3 │     reply \"{nope}\""), "{text}");
}

#[test]
fn a_byte_order_mark_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bom.blk"), "\u{feff}command c {\n    reply \"hi\"\n}\n").unwrap();
    let out = blkc(dir.path(), &["check", "bom.blk"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn a_closed_pipe_ends_the_program_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let many: String = (0..3000).map(|i| format!("    reply \"{{nope_{i}}}\"\n")).collect();
    std::fs::write(dir.path().join("bad.blk"), format!("command c {{\n{many}}}\n")).unwrap();
    for (args, stdout) in [(&["check", "bad.blk"][..], false), (&["check", "bad.blk", "--format", "json"], true)] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_blkc"))
            .args(args)
            .current_dir(dir.path())
            .stdout(if stdout { Stdio::piped() } else { Stdio::null() })
            .stderr(if stdout { Stdio::null() } else { Stdio::piped() })
            .spawn()
            .unwrap();
        // Close the reading end before blkc writes.
        drop(child.stdout.take());
        drop(child.stderr.take());
        let status = child.wait().unwrap();
        assert_ne!(status.code(), Some(101), "{args:?} panicked");
        assert!(status.signal() == Some(13) || status.code() == Some(1), "{args:?}: {status:?}");
    }
}

#[test]
fn an_environment_variable_that_is_not_utf8_is_ignored() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ok.blk"), "command c {\n    reply \"hi\"\n}\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_blkc"))
        .args(["run", "ok.blk", "--command", "c"])
        .current_dir(dir.path())
        .env(OsStr::from_bytes(b"WEIRD"), OsStr::from_bytes(b"\xff\xfe"))
        .env(OsStr::from_bytes(b"BLKC_SECRET_\xff"), "x")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "hi\n");
}

#[test]
fn a_file_that_never_ends_is_read_only_to_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let out = blkc(dir.path(), &["check", "/dev/zero", "--format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(json_of(&out)["diagnostics"][0]["code"], "B002");
}

#[test]
fn json_output_escapes_the_javascript_line_separators() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ls.blk"), "command c {\n    reply \"a\u{2028}b\u{2029}c {user_name}\"\n}\n")
        .unwrap();
    let out =
        blkc(dir.path(), &["run", "ls.blk", "--command", "c", "--format", "json", "--var", "user_name=x\u{2028}y"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains(['\u{2028}', '\u{2029}']), "{text}");
    assert!(text.contains("a\\u2028b\\u2029c x\\u2028y"), "{text}");
}

#[test]
fn a_long_else_if_chain_is_not_nesting() {
    let dir = tempfile::tempdir().unwrap();
    let links: String =
        (0..20_000).map(|i| format!(" else if \"{{user_id}}\" == \"{i}\" {{ reply \"{i}\" }}")).collect();
    let chain = format!(
        "command c {{\n    if \"{{user_id}}\" == \"x\" {{ reply \"x\" }}{links} else {{ reply \"none\" }}\n}}\n"
    );
    std::fs::write(dir.path().join("chain.blk"), &chain).unwrap();
    let out = blkc(dir.path(), &["run", "chain.blk", "--command", "c", "--var", "user_id=19999"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "19999\n");
    // In a file over 2 MiB, parsed on worker threads.
    let replies = format!("    reply \"{}\"\n", "x".repeat(30)).repeat(600);
    let filler: String = (0..90).map(|i| format!("command f{i} {{\n{replies}}}\n")).collect();
    std::fs::write(dir.path().join("big.blk"), format!("{filler}{chain}")).unwrap();
    let out = blkc(dir.path(), &["check", "big.blk", "--jobs", "2"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn a_hash_inside_a_reference_does_not_hide_its_nesting() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!("command c {{\n    save v = [api_[#], {}\n}}\n", "[".repeat(20_000));
    std::fs::write(dir.path().join("deep.blk"), text).unwrap();
    let out = blkc(dir.path(), &["check", "deep.blk", "--format", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(json_of(&out)["diagnostics"][0]["code"], "B003");
    // A comment after a reference is still a comment.
    let ok = format!("command c {{\n    api x {{ method GET url \"https://a.example/x\" }}\n    save v = api_x[response.a] # {}\n}}\n", "[".repeat(100));
    std::fs::write(dir.path().join("ok.blk"), ok).unwrap();
    let out = blkc(dir.path(), &["check", "ok.blk"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn reports_on_very_long_lines_and_far_labels_stay_short() {
    let dir = tempfile::tempdir().unwrap();
    // A label past column 65,535 (miette's formatting width) panicked.
    std::fs::write(dir.path().join("wide.blk"), format!("command c {{{}reply }}\n", " ".repeat(65_519))).unwrap();
    let out = blkc(dir.path(), &["check", "wide.blk"]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("wide.blk:1:65537"), "the position is said: {text}");
    assert!(text.len() < 4000, "no 65 KB line is printed");
    // 20,000 findings on one 200 KB line: rendering stays short.
    let line: String = (0..20_000).map(|i| format!("{{v{i}}}")).collect();
    std::fs::write(dir.path().join("many.blk"), format!("command c {{\n    reply \"{line}\"\n}}\n")).unwrap();
    let out = blkc(dir.path(), &["check", "many.blk"]);
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(
        text.contains("19900 more B115 (unknown variable) not listed"),
        "{}",
        &text[text.len().saturating_sub(800)..]
    );
    assert!(text.len() < 400_000, "{} bytes", text.len());
    // Two labels 10,000 lines apart: the lines between are not printed.
    let gap = "\n".repeat(10_000);
    let far = format!("command c {{\n    api a {{ method GET url \"https://a.example/\" }}{gap}    api a {{ method GET url \"https://b.example/\" }}\n}}\n");
    std::fs::write(dir.path().join("far.blk"), far).unwrap();
    let out = blkc(dir.path(), &["check", "far.blk"]);
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("B101") && text.contains("first defined here at far.blk:2:9"), "{text}");
    assert!(text.len() < 4000, "{} bytes", text.len());
}

#[test]
fn a_response_costs_a_small_multiple_of_its_size_and_a_run_has_a_budget() {
    use crate::support::cli::peak_memory;
    let server = crate::support::server::TestServer::start();
    let dir = tempfile::tempdir().unwrap();
    // 10 MB of `[0,0,…]` once decoded (5,000,000 values, 10 KB on the wire):
    // it used to take almost 1 GB.
    let one = format!(
        "command c {{\n    api a {{ method GET url \"{}/zeros/5000000\" }}\n    reply \"{{api_a[response.4999999]}}\"\n}}\n",
        server.base()
    );
    std::fs::write(dir.path().join("bot.blk"), one).unwrap();
    let (out, peak) = peak_memory(
        Command::new(env!("CARGO_BIN_EXE_blkc")).args(["run", "bot.blk", "--command", "c"]).current_dir(dir.path()),
    );
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "0");
    let body = 10_000_001;
    assert!(peak < 25 * body, "peak {peak} bytes for a body of {body}: more than 25 times its size");
    // Four such blocks: the run's budget (256 MiB) fails the run with B321
    // at the second, long before memory runs out.
    let four = format!(
        "command c {{\n{}    reply \"done\"\n}}\n",
        (0..4)
            .map(|i| format!("    api a{i} {{ method GET url \"{}/zeros/5000000\" }}\n", server.base()))
            .collect::<String>()
    );
    std::fs::write(dir.path().join("bot.blk"), four).unwrap();
    let (out, peak) = peak_memory(
        Command::new(env!("CARGO_BIN_EXE_blkc"))
            .args(["run", "bot.blk", "--command", "c", "--format", "json"])
            .current_dir(dir.path()),
    );
    assert_eq!(out.status.code(), Some(3));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("\"B321\"") && stdout.contains("block `a1`"), "{stdout}");
    assert!(peak < 300 * 1024 * 1024, "peak {peak} bytes: the budget did not hold");
}

#[test]
fn inputs_dense_with_problems_cost_a_small_multiple_of_their_size() {
    use crate::support::cli::peak_memory;
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        // 5 MB of `}` in one string: it took 2.4 GB.
        ("braces.blk", format!("command c {{\n    reply \"{}\"\n}}\n", "}".repeat(5_000_000))),
        // `api_a[` over and over in a string: every one searched to the end.
        ("names.blk", format!("command c {{\n    reply \"{}\"\n}}\n", "api_a[".repeat(350_000))),
        // A problem on each of 300,000 lines.
        ("lines.blk", format!("command c {{\n{}}}\n", "    reply \"{nope}\"\n".repeat(300_000))),
    ];
    for (name, text) in &cases {
        std::fs::write(dir.path().join(name), text).unwrap();
        let (out, peak) = peak_memory(
            Command::new(env!("CARGO_BIN_EXE_blkc")).args(["check", name, "--format", "json"]).current_dir(dir.path()),
        );
        let report = json_of(&out);
        let listed = report["diagnostics"].as_array().unwrap().len();
        assert!(listed <= 202, "{name}: {listed} diagnostics listed");
        let limit = 16 * text.len() as u64 + 96 * 1024 * 1024;
        assert!(peak < limit, "{name}: peak {peak} bytes for a file of {}", text.len());
    }
}

#[test]
fn calculations_deep_or_long_are_diagnosed_not_crashed() {
    let dir = tempfile::tempdir().unwrap();
    let deep = format!(
        "var v = \"0\"\ncommand c \"C\" {{\n    save v = {}1{}\n}}\n",
        "(".repeat(100_000),
        ")".repeat(100_000)
    );
    let long = format!("var v = \"0\"\ncommand c \"C\" {{\n    save v = v{}\n}}\n", " + 1".repeat(200_000));
    let huge = "var v = \"0\"\ncommand c \"C\" {\n    save v = v + 1e999999999\n}\n".to_string();
    for (name, text, code) in [("deep.blk", &deep, "B003"), ("long.blk", &long, "B003")] {
        std::fs::write(dir.path().join(name), text).unwrap();
        let out = blkc(dir.path(), &["check", name]);
        assert_eq!(out.status.code(), Some(1), "{name}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(code),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // An exponent that would write out a billion digits: refused at run time.
    std::fs::write(dir.path().join("huge.blk"), huge).unwrap();
    let out = blkc(dir.path(), &["run", "huge.blk", "--command", "c", "--store", "s.sqlite3"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("too large to compute with"));
}
