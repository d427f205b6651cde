//! Running the real binary on a file in a folder, with JSON events read back.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// How a `blkc run --format json` ended.
pub struct Ran {
    pub code: i32,
    pub events: Vec<Value>,
    pub stderr: String,
}

#[allow(dead_code)]
impl Ran {
    pub fn replies(&self) -> Vec<&str> {
        self.events.iter().filter(|e| e["event"] == "reply").filter_map(|e| e["text"].as_str()).collect()
    }

    pub fn warnings(&self) -> Vec<&str> {
        self.events.iter().filter(|e| e["event"] == "warning").filter_map(|e| e["code"].as_str()).collect()
    }

    /// The code of the failure that stopped the run, or "".
    pub fn error_code(&self) -> &str {
        self.events.iter().find(|e| e["event"] == "error").and_then(|e| e["code"].as_str()).unwrap_or("")
    }

    /// The codes of the check's diagnostics, when the file did not check.
    pub fn check_codes(&self) -> Vec<&str> {
        self.events
            .iter()
            .filter(|e| e["event"] == "check")
            .flat_map(|e| e["report"]["diagnostics"].as_array().unwrap())
            .filter_map(|d| d["code"].as_str())
            .collect()
    }
}

/// Writes `file` as `bot.blk` in `dir` and runs it with `--format json`;
/// the bot token is unset unless `env` sets it.
pub fn run_json(dir: &Path, file: &str, args: &[&str], env: &[(&str, &str)]) -> Ran {
    std::fs::write(dir.join("bot.blk"), file).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_blkc"))
        .args(["run", "bot.blk", "--format", "json"])
        .args(args)
        .current_dir(dir)
        .env_remove("BLKC_BOT_TOKEN")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    Ran {
        code: out.status.code().unwrap_or(-1),
        events: stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Runs a command to its end and says how much memory it took at most (its
/// peak resident set, in bytes), measured by the kernel for that process
/// alone.
///
/// The command is started by a small Python process with a real `fork`:
/// Linux starts a process's peak at the peak of the memory it was spawned
/// from, and a test process that other tests have grown (spawning with
/// `vfork`, as Rust does) would lend it its own.
#[allow(dead_code)]
pub fn peak_memory(cmd: &mut Command) -> (std::process::Output, u64) {
    const SCRIPT: &str = "import os, sys\n\
        pid = os.fork()\n\
        if pid == 0:\n    os.execvp(sys.argv[2], sys.argv[2:])\n\
        _, status, usage = os.wait4(pid, 0)\n\
        open(sys.argv[1], 'w').write(str(usage.ru_maxrss))\n\
        sys.exit(os.waitstatus_to_exitcode(status) % 256)\n";
    let report = tempfile::NamedTempFile::new().unwrap();
    let mut wrapper = Command::new("python3");
    wrapper.arg("-c").arg(SCRIPT).arg(report.path()).arg(cmd.get_program()).args(cmd.get_args());
    if let Some(dir) = cmd.get_current_dir() {
        wrapper.current_dir(dir);
    }
    for (key, value) in cmd.get_envs() {
        match value {
            Some(v) => wrapper.env(key, v),
            None => wrapper.env_remove(key),
        };
    }
    let out = wrapper.stdin(std::process::Stdio::null()).output().expect("python3 runs the measured command");
    let kib: u64 = std::fs::read_to_string(report.path()).unwrap().trim().parse().unwrap();
    (out, kib * 1024)
}
