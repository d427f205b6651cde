//! Conversation tests' speed: `blkc test` on one core (`taskset`, when the
//! machine has it) and one stage (`--jobs 1`), over 200 tests of the poll
//! (a command, clicks that save, a cooldown, `wait`, and the expectations
//! after each). Prints the steps a second over the whole process (its
//! start, the bot served, every test), and within the tests alone; the
//! goal is 1,000 steps a second on one core, so that a bot with 200 tests
//! runs them in under a second.
//!
//! Run with `cargo bench --bench conversation`; `BLKC_BENCH_BASELINE=/path/to/blkc`
//! measures another build alternately with this one.

mod support;

use std::path::Path;
use std::process::Command;
use std::time::Instant;

const TEST: &str = r#"test "vote NAME" {
    as "member NAME" id "ID"
    command poll
    expect reply contains "Coffee or tea?"
    click "Coffee"
    expect update text contains "☕ 1"
    expect saved coffee = 1
    click "Tea"
    expect reply private contains "again in 10 seconds"
    wait "10s"
    click "Tea"
    expect update text contains "🍵 1"
}
"#;

/// The steps of one test above (its lines between the braces).
const STEPS: usize = 11;

fn main() {
    let tests = support::sized(200, 4);
    let rounds = support::sized(5, 1);
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::copy(root.join("examples/poll.blk"), dir.path().join("poll.blk")).unwrap();
    let text: String =
        (0..tests).map(|n| TEST.replace("NAME", &n.to_string()).replace("ID", &(2_000_000 + n).to_string())).collect();
    std::fs::write(dir.path().join("poll.blkt"), text).unwrap();
    let ours = env!("CARGO_BIN_EXE_blkc").to_string();
    let baseline = std::env::var("BLKC_BENCH_BASELINE").ok();
    let pinned = which("taskset");
    if pinned.is_none() {
        support::missing("taskset (util-linux) is not installed: the run is not pinned to one core");
    }
    println!(
        "{tests} tests of {STEPS} steps, --jobs 1{}",
        if pinned.is_some() { ", on one core (taskset -c 0)" } else { "" }
    );
    for round in 0..rounds {
        for (name, bin) in [("this build", Some(&ours)), ("baseline", baseline.as_ref())] {
            let Some(bin) = bin else { continue };
            let (whole, within) = run(bin, dir.path(), pinned.is_some(), tests);
            let steps = (tests * STEPS) as f64;
            println!(
                "round {round} {name:>10}: {:>7.0} steps/s over the process ({:.2} s), {:>7.0} steps/s within the tests",
                steps / whole,
                whole,
                steps / within
            );
        }
    }
}

/// Seconds for the whole `blkc test`, and for its tests alone (the sum of
/// their times, from its JSON report).
fn run(bin: &str, dir: &Path, pinned: bool, tests: usize) -> (f64, f64) {
    let mut command = if pinned {
        let mut c = Command::new("taskset");
        c.args(["-c", "0", bin]);
        c
    } else {
        Command::new(bin)
    };
    command.args(["test", "poll.blkt", "--jobs", "1", "--format", "json"]).current_dir(dir);
    let started = Instant::now();
    let out = command.output().unwrap();
    let whole = started.elapsed().as_secs_f64();
    let report: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(report["passed"], tests, "every test passes: {report}");
    let within: f64 =
        report["files"][0]["tests"].as_array().unwrap().iter().map(|t| t["ms"].as_f64().unwrap() / 1000.0).sum();
    (whole, within)
}

fn which(tool: &str) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH")?.to_str()?.split(':').map(|d| Path::new(d).join(tool)).find(|p| p.is_file())
}
