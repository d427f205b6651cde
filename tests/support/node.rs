//! The npm packages the tests drive as real clients (tests/node): installed
//! from the committed package-lock.json by `.ci/run`, or here, once per
//! test run, when they are missing.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/node");
const EXTENSION: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/editors/vscode");

/// `tests/node/node_modules`, installed with `npm ci` if it is missing or
/// older than the lock file.
pub fn modules() -> PathBuf {
    static INSTALLED: OnceLock<PathBuf> = OnceLock::new();
    INSTALLED.get_or_init(|| install(DIR)).clone()
}

/// The VS Code extension's own packages (`editors/vscode/node_modules`).
pub fn extension_modules() -> PathBuf {
    static INSTALLED: OnceLock<PathBuf> = OnceLock::new();
    INSTALLED.get_or_init(|| install(EXTENSION)).clone()
}

fn install(dir: &str) -> PathBuf {
    let modules = PathBuf::from(dir).join("node_modules");
    let installed = modules.join(".package-lock.json");
    let modified = |p: &PathBuf| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let lock = modified(&PathBuf::from(dir).join("package-lock.json"));
    if modified(&installed).is_none() || modified(&installed) < lock {
        // Its output (deprecation warnings and the like) is shown only when
        // it fails: the tests' own output stays clean.
        let out = Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
            .current_dir(dir)
            .output()
            .expect("npm must be installed to run the tests that drive real clients");
        assert!(
            out.status.success(),
            "`npm ci` in {dir} failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    modules
}

/// `node tests/node/SCRIPT ARGS…`, its output.
pub fn node(script: &str, args: &[&std::ffi::OsStr]) -> std::process::Output {
    modules();
    Command::new("node").arg(PathBuf::from(DIR).join(script)).args(args).output().expect("node runs")
}

/// Microsoft's SARIF validator (`sarif-multitool`), ready to run. Its
/// package marks the binary executable in an install script, which npm may
/// be set not to run; the test does what the script would.
pub fn sarif_multitool() -> PathBuf {
    let tool = modules().join("@microsoft/sarif-multitool-linux/Sarif.Multitool");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(meta) = std::fs::metadata(&tool) {
            let mut perms = meta.permissions();
            if perms.mode() & 0o100 == 0 {
                perms.set_mode(perms.mode() | 0o100);
                let _ = std::fs::set_permissions(&tool, perms);
            }
        }
    }
    tool
}
