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
#[allow(dead_code)]
pub fn peak_memory(cmd: &mut Command) -> (std::process::Output, u64) {
    use std::io::Read as _;
    use std::os::unix::process::ExitStatusExt as _;
    #[allow(clippy::zombie_processes)] // waited for by wait4, for its usage
    let mut child = cmd
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let errors = std::thread::spawn(move || {
        let mut text = Vec::new();
        let _ = stderr.read_to_end(&mut text);
        text
    });
    let mut stdout = Vec::new();
    let _ = child.stdout.take().unwrap().read_to_end(&mut stdout);
    let stderr = errors.join().unwrap();
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4 fills it for this child,
    // which is not waited for anywhere else.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let waited = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    assert_eq!(waited, child.id() as libc::pid_t, "wait4");
    let status = std::process::ExitStatus::from_raw(status);
    (std::process::Output { status, stdout, stderr }, usage.ru_maxrss as u64 * 1024)
}
