//! `blkc build`: the plan as versioned JSON.

use std::process::Command;

use blkc::language::plan::{Plan, Seg, Step};

fn build(file: &str) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_blkc"))
        .args(["build", file])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    (out.status.code().unwrap(), String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn the_plan_is_versioned_json_that_reads_back() {
    let (code, json) = build("examples/weather.blk");
    assert_eq!(code, 0);
    let plan: Plan = serde_json::from_str(&json).unwrap();
    assert_eq!(plan.format, blkc::language::plan::FORMAT);
    let Step::Request(request) = &plan.trees[0].steps[0] else { panic!("the first step is the request") };
    assert!(request.headers.iter().any(|(_, t)| t.parts == [Seg::Secret { name: "WEATHER_KEY".into() }]));
    insta::assert_snapshot!(json);
}

#[test]
fn a_file_with_errors_builds_nothing() {
    let (code, json) = build("tests/fixtures/check/err_B104_body_on_get.blk");
    assert_eq!(code, 1);
    assert!(json.is_empty());
}
