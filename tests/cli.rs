//! The binary end to end: exit codes, output streams, `explain`.

use std::process::Command;

use insta_cmd::{assert_cmd_snapshot, get_cargo_bin};

fn blkc() -> Command {
    let mut cmd = Command::new(get_cargo_bin("blkc"));
    cmd.current_dir(env!("CARGO_MANIFEST_DIR")).env("NO_COLOR", "1").env("COLUMNS", "100");
    cmd
}

#[test]
fn clean_files_exit_0() {
    assert_cmd_snapshot!(blkc().args(["check", "examples/weather.blk", "examples/welcome.blk"]));
}

#[test]
fn errors_exit_1() {
    assert_cmd_snapshot!(blkc().args(["check", "tests/fixtures/check/err_B104_body_on_get.blk"]));
}

#[test]
fn warnings_alone_exit_0_unless_denied() {
    let file = "tests/fixtures/check/warn_B118_secret_literal.blk";
    let status = blkc().args(["check", file]).output().unwrap().status;
    assert_eq!(status.code(), Some(0));
    let status = blkc().args(["check", "--deny-warnings", file]).output().unwrap().status;
    assert_eq!(status.code(), Some(1));
}

#[test]
fn json_goes_to_stdout() {
    assert_cmd_snapshot!(blkc().args([
        "check",
        "--format",
        "json",
        "tests/fixtures/check/err_B111_unknown_block.blk",
        "examples/weather.blk"
    ]));
}

#[test]
fn missing_file_exits_2() {
    assert_cmd_snapshot!(blkc().args(["check", "tests/fixtures/check/no_such_file.blk"]));
}

#[test]
fn bad_usage_exits_2() {
    let out = blkc().args(["check"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn explain_prints_the_page() {
    let out = blkc().args(["explain", "b113"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(page.starts_with("# B113: response reference to a block that may not have run"));
}

#[test]
fn explain_unknown_code_exits_2() {
    assert_cmd_snapshot!(blkc().args(["explain", "B999"]));
}

#[test]
fn a_bad_platform_is_a_usage_error_before_anything_runs() {
    for cmd in [
        &["run", "examples/order_status.blk", "--command", "order", "--offline", "--var", "option_number=A-1"][..],
        &["test", "examples/weather.blk", "forecast"][..],
    ] {
        let out = blkc().args(cmd).args(["--platform", "ftp://discord.com/api"]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{cmd:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains("is not an absolute http(s) URL"), "{err}");
        assert!(out.stdout.is_empty(), "nothing ran");
    }
}

#[test]
fn a_var_that_names_nothing_is_a_usage_error_with_a_did_you_mean() {
    let base = ["run", "examples/weather.blk", "--command", "weather", "--dry-run"];
    let out = blkc().args(base).args(["--var", "city=Paris"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("`city` is not a variable of command `weather`") && err.contains("did you mean `option_city`?"),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "nothing was sent or shown");
    let out = blkc().args(base).args(["--var", "option_city=Paris"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8(out.stdout).unwrap().contains("q=Paris"));
}

#[test]
fn a_platform_flag_without_a_version_is_warned_about_and_the_run_goes_on() {
    let run = |platform: &str| {
        let base = ["run", "examples/order_status.blk", "--command", "order", "--offline"];
        blkc().args(base).args(["--var", "option_number=A-1", "--platform", platform]).output().unwrap()
    };
    let out = run("https://discord.com/api");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("warning[B426]") && stderr.contains("https://discord.com/api/v10"), "{stderr}");
    let out = run("https://discord.com/api/v10");
    assert!(out.status.success() && !String::from_utf8_lossy(&out.stderr).contains("B426"));
}
