//! The store under faults: processes killed mid-save, a disk that fills, a
//! folder that cannot be written. Every value is old or new, no
//! acknowledged save is lost, and the store stays readable.

use std::io::BufRead;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

fn blkc(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_blkc")).args(args).current_dir(dir).output().unwrap()
}

/// Every variable of the store at `.blkc/store.sqlite3`, as (name, value).
fn listing(dir: &Path) -> Vec<(String, serde_json::Value)> {
    listing_of(dir, ".blkc/store.sqlite3")
}

/// Every variable of `store` (a path or a `postgres://` URL).
fn listing_of(dir: &Path, store: &str) -> Vec<(String, serde_json::Value)> {
    let out = blkc(dir, &["vars", "--store", store, "list", "--format", "json"]);
    assert!(out.status.success(), "the store must stay readable: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let e: serde_json::Value = serde_json::from_str(l).unwrap();
            (e["name"].as_str().unwrap().to_string(), e["value"].clone())
        })
        .collect()
}

#[test]
fn killing_a_run_mid_save_loses_no_acknowledged_save_on_both_backends() {
    let dir = tempfile::tempdir().unwrap();
    let saves: String =
        (0..400).map(|i| format!("    save k{i} = \"value {i} of round {{option_round}}\"\n")).collect();
    std::fs::write(dir.path().join("saves.blk"), format!("command s {{\n    option round \"Round\"\n{saves}}}\n"))
        .unwrap();
    let mut stores = vec![".blkc/store.sqlite3".to_string()];
    stores.extend(crate::support::postgres::server().map(|pg| pg.store()));
    let mut acknowledged_in = std::collections::HashMap::new();
    for (store, round) in stores.iter().flat_map(|s| (0..30u64).map(move |r| (s, r))) {
        let mut child = Command::new(env!("CARGO_BIN_EXE_blkc"))
            .args(["run", "saves.blk", "--command", "s", "--format", "json", "--var", &format!("option_round={round}")])
            .args(["--store", store])
            .current_dir(dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (seen, saves_seen) = std::sync::mpsc::channel();
        let reader = std::thread::spawn(move || {
            let mut acknowledged = Vec::new();
            for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
                let e: serde_json::Value = serde_json::from_str(&line).unwrap();
                if e["event"] == "save" {
                    acknowledged.push((e["name"].as_str().unwrap().to_string(), e["value"].clone()));
                    let _ = seen.send(());
                }
            }
            acknowledged
        });
        // Killed after a different number of saves each round, mid-way
        // through the next (and the first round before any).
        let target = (round * 13) % 400;
        for _ in 0..target {
            if saves_seen.recv_timeout(Duration::from_secs(20)).is_err() {
                break;
            }
        }
        let _ = child.kill();
        let _ = child.wait();
        let acknowledged = reader.join().unwrap();
        *acknowledged_in.entry(store.clone()).or_insert(0) += acknowledged.len();
        let stored = listing_of(dir.path(), store);
        for (name, value) in &acknowledged {
            assert!(
                stored.iter().any(|(n, v)| n == name && v == value),
                "{store}, round {round}: {name} = {value} was lost"
            );
        }
        for (name, value) in &stored {
            let text = value.as_str().unwrap_or_default();
            let i: usize = name[1..].parse().unwrap();
            assert!(text.starts_with(&format!("value {i} of round ")), "round {round}: {name} holds {text:?}");
        }
    }
    // Kills came mid-save, not before the first one.
    for store in &stores {
        assert!(acknowledged_in[store] > 0, "{store}: no save was acknowledged before a kill");
    }
}

#[test]
fn a_full_disk_fails_the_save_and_keeps_what_was_saved() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("small.blk"), "command s {\n    save small = \"kept\"\n}\n").unwrap();
    assert!(blkc(d, &["run", "small.blk", "--command", "s"]).status.success());
    // Under a variable's 1 MiB (B327), over the disk's room.
    let big = "z".repeat(900_000);
    std::fs::write(
        d.join("big.blk"),
        format!("command b {{\n    save small = \"replaced\"\n    save big = \"{big}\"\n}}\n"),
    )
    .unwrap();
    let size = std::fs::metadata(d.join(".blkc/store.sqlite3")).unwrap().len();
    let limit = size + 256 * 1024;
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_blkc"));
    cmd.args(["run", "big.blk", "--command", "b"]).current_dir(d);
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let rlimit = libc::rlimit { rlim_cur: limit, rlim_max: limit };
            libc::setrlimit(libc::RLIMIT_FSIZE, &rlimit);
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("B311") && said.contains("could not be written"), "{said}");
    let stored = listing(d);
    assert!(
        stored.iter().any(|(n, v)| n == "small" && v == "replaced"),
        "the save before the failure stays: {stored:?}"
    );
    assert!(!stored.iter().any(|(n, _)| n == "big"), "the failed save left nothing");
}

/// A folder that cannot be written: read-only for this user, or (as root,
/// whom permissions do not stop) a read-only bind mount.
struct ReadOnly<'a>(&'a Path, bool);

impl<'a> ReadOnly<'a> {
    fn new(dir: &'a Path) -> ReadOnly<'a> {
        if unsafe { libc::geteuid() } == 0 {
            let path = dir.to_str().unwrap();
            let bind = Command::new("mount").args(["--bind", path, path]).status().unwrap();
            let ro = Command::new("mount").args(["-o", "remount,ro,bind", path, path]).status().unwrap();
            assert!(bind.success() && ro.success(), "root must be able to mount a read-only folder for this test");
            ReadOnly(dir, true)
        } else {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o555)).unwrap();
            ReadOnly(dir, false)
        }
    }
}

impl Drop for ReadOnly<'_> {
    fn drop(&mut self) {
        if self.1 {
            let _ = Command::new("umount").arg(self.0).status();
        } else {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(self.0, std::fs::Permissions::from_mode(0o755));
        }
    }
}

#[test]
fn a_store_in_a_folder_that_cannot_be_written_is_still_read() {
    let dir = tempfile::tempdir().unwrap();
    let bot = dir.path().join("bot");
    std::fs::create_dir(&bot).unwrap();
    std::fs::write(
        bot.join("save.blk"),
        "var seen = \"never\"\ncommand s {\n    save seen = \"once\"\n}\ncommand r {\n    reply \"{seen}\"\n}\n",
    )
    .unwrap();
    assert!(blkc(&bot, &["run", "save.blk", "--command", "s"]).status.success());
    let _guard = ReadOnly::new(&bot);
    let got = blkc(&bot, &["vars", "--store", ".blkc/store.sqlite3", "get", "seen"]);
    assert_eq!(String::from_utf8_lossy(&got.stdout), "once\n", "{}", String::from_utf8_lossy(&got.stderr));
    let run = blkc(&bot, &["run", "save.blk", "--command", "r"]);
    assert_eq!(String::from_utf8_lossy(&run.stdout), "once\n", "{}", String::from_utf8_lossy(&run.stderr));
    let save = blkc(&bot, &["run", "save.blk", "--command", "s"]);
    assert_eq!(save.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&save.stderr).contains("B311"));
}

#[test]
fn vars_set_in_a_folder_that_cannot_be_written_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let bot = dir.path().join("bot");
    std::fs::create_dir(&bot).unwrap();
    assert!(blkc(&bot, &["vars", "set", "seen", "once"]).status.success());
    let _guard = ReadOnly::new(&bot);
    let set = blkc(&bot, &["vars", "set", "seen", "twice"]);
    let err = String::from_utf8_lossy(&set.stderr);
    assert_eq!(set.status.code(), Some(3), "{err}");
    assert!(err.contains("cannot be written") && !err.contains("not a blkc store"), "{err}");
    let fresh = blkc(&bot, &["vars", "--store", "new.sqlite3", "set", "a", "1"]);
    let err = String::from_utf8_lossy(&fresh.stderr);
    assert!(err.contains("folder cannot be written"), "{err}");
}

/// The pids the next processes of this machine are likely to get.
fn next_pids() -> std::ops::Range<i32> {
    let last: i32 = std::fs::read_to_string("/proc/sys/kernel/ns_last_pid")
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(1000);
    last + 1..last + 400
}

#[test]
fn creating_a_store_follows_no_planted_name_and_cleans_up_after_a_killed_creation() {
    use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
    let dir = tempfile::tempdir().unwrap();
    let shared = dir.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    // A folder everyone may write, as /tmp is.
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    std::fs::create_dir(shared.join(".blkc")).unwrap();
    std::fs::set_permissions(shared.join(".blkc"), std::fs::Permissions::from_mode(0o1777)).unwrap();
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, "precious\n").unwrap();
    // Another user plants the temporary names of the processes to come,
    // and the files SQLite would make beside them.
    for pid in next_pids() {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let name = shared.join(format!(".blkc/.store.sqlite3.new-{pid}{suffix}"));
            let _ = std::os::unix::fs::symlink(&victim, name);
        }
    }
    // And what a creation killed half-way left: a folder of a process that
    // is gone.
    let gone = {
        let mut child = Command::new("true").spawn().unwrap();
        child.wait().unwrap();
        child.id()
    };
    let left = shared.join(format!(".blkc/.store.sqlite3.new-{gone}-abc123"));
    std::fs::create_dir(&left).unwrap();
    std::fs::write(left.join("store.sqlite3"), "half made").unwrap();
    let set = blkc(&shared, &["vars", "set", "token", "s3cret"]);
    assert!(set.status.success(), "{}", String::from_utf8_lossy(&set.stderr));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n", "the planted link was followed");
    let store = shared.join(".blkc/store.sqlite3");
    let meta = std::fs::symlink_metadata(&store).unwrap();
    assert!(meta.is_file());
    assert_eq!(meta.mode() & 0o777, 0o600);
    assert_eq!(meta.uid(), unsafe { libc::geteuid() });
    assert!(!left.exists(), "the abandoned creation was cleaned up");
    let got = blkc(&shared, &["vars", "get", "token"]);
    assert_eq!(String::from_utf8_lossy(&got.stdout), "s3cret\n");
}

#[test]
fn a_store_others_can_write_or_another_user_owns_is_refused() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    assert!(blkc(d, &["vars", "set", "a", "1"]).status.success());
    let store = d.join(".blkc/store.sqlite3");
    std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o666)).unwrap();
    let set = blkc(d, &["vars", "set", "a", "2"]);
    let err = String::from_utf8_lossy(&set.stderr);
    assert_eq!(set.status.code(), Some(3), "{err}");
    assert!(err.contains("can be written by other users") && err.contains("chmod 600"), "{err}");
    std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o600)).unwrap();
    // A link in place of the store is not followed.
    std::fs::rename(&store, d.join("real.sqlite3")).unwrap();
    std::os::unix::fs::symlink(d.join("real.sqlite3"), &store).unwrap();
    let err = String::from_utf8_lossy(&blkc(d, &["vars", "set", "a", "3"]).stderr).into_owned();
    assert!(err.contains("symbolic link"), "{err}");
    std::fs::remove_file(&store).unwrap();
    std::fs::rename(d.join("real.sqlite3"), &store).unwrap();
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: a store of another user needs root to make (CI runs as root)");
        return;
    }
    // SAFETY: a valid path; 65534 is `nobody`.
    let c = std::ffi::CString::new(store.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::chown(c.as_ptr(), 65534, 65534) }, 0);
    let set = blkc(d, &["vars", "set", "a", "4"]);
    let err = String::from_utf8_lossy(&set.stderr);
    assert_eq!(set.status.code(), Some(3), "{err}");
    assert!(err.contains("belongs to another user"), "{err}");
}

/// A serving process keeps its SQLite store's connections between runs
/// (src/run/store/kept.rs). Every click it acknowledged survives a
/// `kill -9`; a store removed under it is made anew by the next save, never
/// saved into the removed file; one made writable by others is refused at
/// the next save, as a new process would refuse it.
#[test]
fn a_serving_process_keeps_its_store_open_and_loses_nothing_to_a_kill_or_a_removal() {
    use crate::serve::{content, serve, FAILED_WORD};
    use crate::support::platform::{command, TestPlatform};
    use std::os::unix::fs::PermissionsExt as _;
    let platform = TestPlatform::start();
    let program = "var n = 0\ncommand add \"Add\" {\n    save n = n + 1\n    reply \"n is {n}\"\n}\n";
    let served = serve(program, &platform, None, &[], &[]);
    let dir = served.file.parent().unwrap().to_path_buf();
    let add = |id: String| content(&served.send(&platform, &command(&id, "add", serde_json::json!([])))).to_string();
    let n = || listing(&dir).into_iter().find(|(name, _)| name == "n").map(|(_, v)| v);
    for i in 1..=20 {
        assert_eq!(add(format!("a{i}")), format!("n is {i}"), "{}", served.log());
    }
    assert_eq!(n(), Some(serde_json::json!(20)));

    // Removed, with its log: the next save makes a new store and is in it.
    let store = dir.join(".blkc/store.sqlite3");
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", store.display()));
    }
    assert_eq!(add("b1".into()), "n is 1", "{}", served.log());
    assert_eq!(add("b2".into()), "n is 2", "{}", served.log());
    assert_eq!(n(), Some(serde_json::json!(2)));

    // Made writable by others: refused at the next save, which fails.
    std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o666)).unwrap();
    assert_eq!(add("c1".into()), FAILED_WORD, "{}", served.log());
    let log = served.wait_interaction("c1");
    assert!(log.contains("can be written by other users"), "{log}");
    std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert_eq!(add("c2".into()), "n is 3", "{}", served.log());

    // Killed right after its last answer: every acknowledged save is kept.
    for i in 4..=40 {
        assert_eq!(add(format!("d{i}")), format!("n is {i}"), "{}", served.log());
    }
    served.signal(libc::SIGKILL);
    let mut served = served;
    let _ = served.child.wait();
    assert_eq!(n(), Some(serde_json::json!(40)));
}
