//! The custom variable store: concurrent writers, corrupt files, `blkc vars`.

use std::path::Path;
use std::process::{Command, Output};

fn blkc(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_blkc")).args(args).current_dir(dir).output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn several_processes_saving_at_once_lose_no_write() {
    let dir = tempfile::tempdir().unwrap();
    let (processes, saves) = (8, 25);
    let mut text = String::new();
    for p in 0..processes {
        text.push_str(&format!("command c{p} {{\n"));
        for s in 0..saves {
            text.push_str(&format!("    save v{p}_{s} = \"{p}-{s}\"\n"));
        }
        text.push_str("}\n");
    }
    std::fs::write(dir.path().join("many.blk"), text).unwrap();
    let children: Vec<_> = (0..processes)
        .map(|p| {
            Command::new(env!("CARGO_BIN_EXE_blkc"))
                .args(["run", "many.blk", "--command", &format!("c{p}")])
                .current_dir(dir.path())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let listing = stdout(&blkc(dir.path(), &["vars", "list"]));
    assert_eq!(listing.lines().count(), processes * saves, "{listing}");
    for p in 0..processes {
        for s in 0..saves {
            assert!(listing.contains(&format!("v{p}_{s} = \"{p}-{s}\"\n")));
        }
    }
}

#[test]
fn vars_set_get_list_delete() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    assert!(blkc(d, &["vars", "set", "greeting", "hello world"]).status.success());
    assert!(blkc(d, &["vars", "set", "limits", r#"{"max": 5}"#, "--json"]).status.success());
    assert_eq!(stdout(&blkc(d, &["vars", "get", "greeting"])), "hello world\n");
    assert_eq!(stdout(&blkc(d, &["vars", "get", "limits"])), "{\"max\":5}\n");
    assert_eq!(stdout(&blkc(d, &["vars", "list"])), "greeting = \"hello world\"\nlimits = {\"max\":5}\n");
    assert!(blkc(d, &["vars", "delete", "greeting"]).status.success());
    assert_eq!(blkc(d, &["vars", "get", "greeting"]).status.code(), Some(2));
    assert_eq!(blkc(d, &["vars", "set", "bad", "{", "--json"]).status.code(), Some(2));
}

#[test]
fn saved_values_are_read_by_later_runs_and_defaults_apply() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("count.blk"),
        "var visits = \"0\"\ncommand show {\n    reply \"visits: {visits}\"\n}\ncommand bump {\n    save visits = \"41\"\n}\n",
    )
    .unwrap();
    assert_eq!(stdout(&blkc(d, &["run", "count.blk", "--command", "show"])), "visits: 0\n");
    assert!(blkc(d, &["run", "count.blk", "--command", "bump"]).status.success());
    assert_eq!(stdout(&blkc(d, &["run", "count.blk", "--command", "show"])), "visits: 41\n");
}

#[test]
fn a_corrupt_store_is_reported_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let path = d.join("broken.sqlite3");
    std::fs::write(&path, "not a database at all\n".repeat(200)).unwrap();
    let before = std::fs::read(&path).unwrap();
    let out = blkc(d, &["vars", "--store", "broken.sqlite3", "list"]);
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("B311") && err.contains("not a blkc store"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), before, "the file must not change");
}

#[test]
fn another_programs_database_is_not_taken_over() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("other.sqlite3");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT); INSERT INTO notes (text) VALUES ('mine');",
    )
    .unwrap();
    drop(conn);
    let out = blkc(dir.path(), &["vars", "--store", "other.sqlite3", "set", "x", "1"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a blkc store"));
    let conn = rusqlite::Connection::open(&path).unwrap();
    let tables: i64 =
        conn.query_row("SELECT count(*) FROM sqlite_master WHERE type = 'table'", [], |r| r.get(0)).unwrap();
    assert_eq!(tables, 1);
}
