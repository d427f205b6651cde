//! The custom variable store: concurrent writers, corrupt files, `blkc vars`.

use std::path::Path;
use std::process::{Command, Output};

fn blkc(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_blkc")).args(args).current_dir(dir).output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// `blkc run FILE --command C --store STORE`, a process for each command,
/// all at once; each must succeed.
fn run_at_once(dir: &Path, store: &str, file: &str, commands: &[String]) {
    let children: Vec<_> = commands
        .iter()
        .map(|c| {
            Command::new(env!("CARGO_BIN_EXE_blkc"))
                .args(["run", file, "--command", c, "--store", store])
                .current_dir(dir)
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
}

#[test]
fn several_processes_saving_at_once_lose_no_write_on_both_backends() {
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
    for store in backends(dir.path()) {
        let commands: Vec<String> = (0..processes).map(|p| format!("c{p}")).collect();
        run_at_once(dir.path(), &store, "many.blk", &commands);
        let listing = stdout(&blkc(dir.path(), &["vars", "--store", &store, "list"]));
        assert_eq!(listing.lines().count(), processes * saves, "{listing}");
        for p in 0..processes {
            for s in 0..saves {
                assert!(listing.contains(&format!("v{p}_{s} = \"{p}-{s}\"\n")), "{store}");
            }
        }
    }
}

#[test]
fn vars_set_get_list_delete_on_both_backends() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for store in backends(d) {
        let vars = |args: &[&str]| {
            let mut all = vec!["vars", "--store", &store];
            all.extend(args);
            blkc(d, &all)
        };
        assert!(vars(&["set", "greeting", "hello world"]).status.success());
        assert!(vars(&["set", "limits", r#"{"max": 5, "big": 123456789012345678901234567890}"#, "--json"])
            .status
            .success());
        assert!(vars(&["set", "name", "Zoë 🦀 \"q\""]).status.success());
        assert_eq!(stdout(&vars(&["get", "greeting"])), "hello world\n");
        // Numbers of any size come back as they were.
        assert_eq!(stdout(&vars(&["get", "limits"])), "{\"max\":5,\"big\":123456789012345678901234567890}\n");
        assert_eq!(stdout(&vars(&["get", "name"])), "Zoë 🦀 \"q\"\n");
        assert_eq!(
            stdout(&vars(&["list"])),
            "greeting = \"hello world\"\nlimits = {\"max\":5,\"big\":123456789012345678901234567890}\nname = \"Zoë 🦀 \\\"q\\\"\"\n",
            "{store}"
        );
        assert!(vars(&["delete", "greeting"]).status.success());
        assert_eq!(vars(&["get", "greeting"]).status.code(), Some(2));
        assert_eq!(vars(&["delete", "greeting"]).status.code(), Some(2), "{store}");
        assert_eq!(vars(&["set", "bad", "{", "--json"]).status.code(), Some(2));
        // A large value, from standard input.
        let mut child = Command::new(env!("CARGO_BIN_EXE_blkc"))
            .args(["vars", "--store", &store, "set", "long", "-"])
            .current_dir(d)
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let long = "y".repeat(3_000_000);
        std::io::Write::write_all(&mut child.stdin.take().unwrap(), format!("{long}\n").as_bytes()).unwrap();
        assert!(child.wait().unwrap().success());
        assert_eq!(stdout(&vars(&["get", "long"])).trim_end().len(), long.len(), "{store}");
    }
}

#[test]
fn saved_values_are_read_by_later_runs_and_defaults_apply_on_both_backends() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("count.blk"),
        "var visits = \"0\"\ncommand show {\n    reply \"visits: {visits}\"\n}\ncommand bump {\n    save visits = \"41\"\n}\n",
    )
    .unwrap();
    for store in backends(d) {
        let run = |command: &str| blkc(d, &["run", "count.blk", "--command", command, "--store", &store]);
        assert_eq!(stdout(&run("show")), "visits: 0\n");
        assert!(run("bump").status.success());
        assert_eq!(stdout(&run("show")), "visits: 41\n", "{store}");
    }
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

#[test]
fn text_appends_of_many_saves_a_run_from_eight_writers_are_all_kept_on_both_backends() {
    let dir = tempfile::tempdir().unwrap();
    let (writers, appends) = (8, 40);
    let saves: String = (0..appends).map(|_| "    save log = \"{log}x\"\n").collect();
    std::fs::write(dir.path().join("log.blk"), format!("var log = \"\"\ncommand append {{\n{saves}}}\n")).unwrap();
    for store in backends(dir.path()) {
        run_at_once(dir.path(), &store, "log.blk", &vec!["append".to_string(); writers]);
        let log = stdout(&blkc(dir.path(), &["vars", "--store", &store, "get", "log"]));
        assert_eq!(log.trim_end().len(), writers * appends, "{store}: {} appends kept", log.trim_end().len());
    }
}

/// Eight processes at once, each appending 30 elements of its own to one
/// list variable (each append a save of its own), then each removing its
/// own: every element is kept, then every one is gone, on both backends.
#[test]
fn list_appends_and_removes_from_eight_processes_keep_every_element_on_both_backends() {
    let dir = tempfile::tempdir().unwrap();
    let (writers, appends) = (8, 30);
    let mut text = String::from("var seen = []\n");
    for p in 0..writers {
        let appended: String = (0..appends).map(|k| format!("    save seen append \"{p}-{k}\"\n")).collect();
        let removed: String = (0..appends).map(|k| format!("    save seen remove \"{p}-{k}\"\n")).collect();
        text.push_str(&format!("command add{p} {{\n{appended}}}\ncommand drop{p} {{\n{removed}}}\n"));
    }
    std::fs::write(dir.path().join("list.blk"), text).unwrap();
    let get = |store: &str| -> Vec<String> {
        let out = stdout(&blkc(dir.path(), &["vars", "--store", store, "get", "seen"]));
        serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{store}: {e}: {out}"))
    };
    for store in backends(dir.path()) {
        let adds: Vec<String> = (0..writers).map(|p| format!("add{p}")).collect();
        run_at_once(dir.path(), &store, "list.blk", &adds);
        let mut seen = get(&store);
        assert_eq!(seen.len(), writers * appends, "{store}: {seen:?}");
        // Each process's own elements are in the order it appended them.
        for p in 0..writers {
            let own: Vec<&String> = seen.iter().filter(|e| e.starts_with(&format!("{p}-"))).collect();
            let expected: Vec<String> = (0..appends).map(|k| format!("{p}-{k}")).collect();
            assert_eq!(own, expected.iter().collect::<Vec<_>>(), "{store}");
        }
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), writers * appends, "{store}: an element twice");
        let drops: Vec<String> = (0..writers).map(|p| format!("drop{p}")).collect();
        run_at_once(dir.path(), &store, "list.blk", &drops);
        assert_eq!(get(&store), Vec::<String>::new(), "{store}");
    }
}

/// The bytes of a file, to show it was not changed.
fn bytes(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap()
}

#[test]
fn a_file_that_is_not_a_store_is_never_changed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("save.blk"), "command s {\n    save x = \"1\"\n}\n").unwrap();
    let foreign = d.join("foreign.db");
    let conn = rusqlite::Connection::open(&foreign).unwrap();
    conn.execute_batch("CREATE TABLE users (id INTEGER); INSERT INTO users VALUES (1);").unwrap();
    drop(conn);
    let view_only = d.join("view.db");
    let conn = rusqlite::Connection::open(&view_only).unwrap();
    conn.execute_batch("CREATE VIEW v AS SELECT 1;").unwrap();
    drop(conn);
    let future = d.join("future.db");
    let conn = rusqlite::Connection::open(&future).unwrap();
    conn.execute_batch(
        "CREATE TABLE blkc_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
         CREATE TABLE vars (name TEXT PRIMARY KEY, value TEXT NOT NULL, updated_at INTEGER NOT NULL);
         INSERT INTO blkc_meta VALUES ('schema', 2);",
    )
    .unwrap();
    drop(conn);
    let empty = d.join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    let text = d.join("notes.txt");
    std::fs::write(&text, "these are my notes, not a database\n").unwrap();
    for path in [&foreign, &view_only, &future, &empty, &text] {
        let before = bytes(path);
        let shown = path.to_str().unwrap();
        for args in [
            &["run", "save.blk", "--command", "s", "--store", shown][..],
            &["vars", "--store", shown, "set", "x", "1"],
            &["vars", "--store", shown, "get", "x"],
        ] {
            let out = blkc(d, args);
            assert_ne!(out.status.code(), Some(0), "{args:?}");
            assert!(String::from_utf8_lossy(&out.stderr).contains("B311"), "{args:?}");
        }
        assert_eq!(bytes(path), before, "{} was changed", path.display());
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        assert!(!d.join(format!("{name}-wal")).exists(), "{name} was switched to WAL");
    }
}

#[test]
fn reading_never_creates_a_store_and_a_new_one_is_private() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = blkc(d, &["vars", "--store", "typo.db", "get", "x"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!d.join("typo.db").exists(), "a read created the store");
    assert!(blkc(d, &["vars", "--store", "typo.db", "list"]).status.success());
    assert!(!d.join("typo.db").exists());
    // Names a file cannot read are refused; a value can come from stdin.
    for bad in ["", "a b", "-x", "1st"] {
        assert_eq!(blkc(d, &["vars", "set", "--", bad, "v"]).status.code(), Some(2), "{bad:?}");
    }
    assert!(blkc(d, &["vars", "set", "x", "1"]).status.success());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(d.join(".blkc/store.sqlite3")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}

#[test]
fn the_store_is_beside_the_file_and_offline_runs_never_touch_it() {
    let dir = tempfile::tempdir().unwrap();
    let bot = dir.path().join("bot");
    std::fs::create_dir(&bot).unwrap();
    std::fs::write(bot.join("save.blk"), "command s {\n    save x = \"1\"\n}\n").unwrap();
    assert!(blkc(dir.path(), &["run", "bot/save.blk", "--command", "s"]).status.success());
    assert!(blkc(&bot, &["run", "save.blk", "--command", "s"]).status.success());
    assert!(bot.join(".blkc/store.sqlite3").exists());
    assert!(!dir.path().join(".blkc").exists(), "one store, beside the file");
    let other = tempfile::tempdir().unwrap();
    std::fs::write(other.path().join("save.blk"), "command s {\n    save x = \"1\"\n}\n").unwrap();
    assert!(blkc(other.path(), &["run", "save.blk", "--command", "s", "--offline"]).status.success());
    assert!(!other.path().join(".blkc").exists(), "an offline run created the store");
}

#[test]
fn a_save_whose_path_fails_is_reported_and_follows_strict_on_both_backends() {
    let server = crate::support::server::TestServer::start();
    let dir = tempfile::tempdir().unwrap();
    let file = format!(
        "command s {{\n    api b {{ method GET url \"{}/echo\" }}\n    save got = \"{{api_b[response.nope]}}\"\n}}\ncommand then_fail {{\n    save before = \"kept\"\n    api down {{ method GET url \"{}/status/500\" }}\n    reply \"{{api_down[response.x]}}\"\n}}\n",
        server.base(),
        server.base()
    );
    std::fs::write(dir.path().join("s.blk"), file).unwrap();
    for store in backends(dir.path()) {
        let out = blkc(dir.path(), &["run", "s.blk", "--command", "s", "--strict", "--store", &store]);
        assert_eq!(out.status.code(), Some(3));
        assert!(String::from_utf8_lossy(&out.stderr).contains("B307"));
        let got = blkc(dir.path(), &["vars", "--store", &store, "get", "got"]);
        assert_eq!(got.status.code(), Some(2), "nothing was saved under --strict");
        let out = blkc(dir.path(), &["run", "s.blk", "--command", "s", "--missing", "empty", "--store", &store]);
        assert!(out.status.success() && String::from_utf8_lossy(&out.stderr).contains("B307"), "reported");
        assert_eq!(stdout(&blkc(dir.path(), &["vars", "--store", &store, "get", "got"])), "\n", "{store}");
        // What was saved before a failure stays saved.
        let out = blkc(dir.path(), &["run", "s.blk", "--command", "then_fail", "--strict", "--store", &store]);
        assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(stdout(&blkc(dir.path(), &["vars", "--store", &store, "get", "before"])), "kept\n", "{store}");
    }
}

/// The same store tests on both backends: an SQLite file, and a database
/// of the test PostgreSQL (`postgres://…`, created with `blkc vars migrate`).
fn backends(dir: &Path) -> Vec<String> {
    let mut stores = vec![dir.join("store.sqlite3").display().to_string()];
    if let Some(pg) = crate::support::postgres::server() {
        let url = pg.database();
        let out = blkc(dir, &["vars", "--store", &url, "migrate"]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(String::from_utf8_lossy(&out.stderr).contains("created the store"));
        stores.push(url);
    }
    stores
}

#[test]
fn eight_processes_of_150_read_then_save_appends_keep_all_1200_on_both_backends() {
    let dir = tempfile::tempdir().unwrap();
    let (writers, appends) = (8, 150);
    std::fs::write(dir.path().join("count.blk"), "var n = \"0\"\ncommand add {\n    save n = n + 1\n}\n").unwrap();
    for store in backends(dir.path()) {
        let children: Vec<_> = (0..writers)
            .map(|_| {
                let store = store.clone();
                let dir = dir.path().to_path_buf();
                std::thread::spawn(move || {
                    for _ in 0..appends {
                        let out = blkc(&dir, &["run", "count.blk", "--command", "add", "--store", &store]);
                        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
                    }
                })
            })
            .collect();
        for c in children {
            c.join().unwrap();
        }
        let n = stdout(&blkc(dir.path(), &["vars", "--store", &store, "get", "n"]));
        assert_eq!(n.trim(), (writers * appends).to_string(), "{store}");
    }
}

#[test]
fn both_backends_read_list_set_and_delete_alike_and_refuse_what_is_not_theirs() {
    let dir = tempfile::tempdir().unwrap();
    for store in backends(dir.path()) {
        let vars = |args: &[&str]| {
            let mut all = vec!["vars", "--store", &store];
            all.extend_from_slice(args);
            blkc(dir.path(), &all)
        };
        assert!(vars(&["set", "greeting", "hi"]).status.success());
        assert!(vars(&["set", "points", "5", "--json", "--user", "1", "--server", "2"]).status.success());
        assert_eq!(stdout(&vars(&["get", "greeting"])), "hi\n");
        assert_eq!(stdout(&vars(&["list"])), "greeting = \"hi\"\npoints [user 1 in server 2] = 5\n");
        assert!(vars(&["delete", "greeting"]).status.success());
        assert_eq!(vars(&["get", "greeting"]).status.code(), Some(2));
    }
    let Some(pg) = crate::support::postgres::server() else { return };
    // A database that is not a blkc store: refused, and not changed.
    let url = pg.database();
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    client.batch_execute("CREATE TABLE orders (id INT)").unwrap();
    let out = blkc(dir.path(), &["vars", "--store", &url, "set", "x", "1"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("holds no blkc store"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tables: i64 = client
        .query_one("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'", &[])
        .unwrap()
        .get(0);
    assert_eq!(tables, 1);
    // A newer format: refused by the commands and by migrate.
    let url = pg.database();
    assert!(blkc(dir.path(), &["vars", "--store", &url, "migrate"]).status.success());
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    client.batch_execute("UPDATE blkc_meta SET value = 9 WHERE key = 'schema'").unwrap();
    for args in [vec!["get", "x"], vec!["migrate"]] {
        let mut all = vec!["vars", "--store", &url];
        all.extend(args);
        let out = blkc(dir.path(), &all);
        assert_eq!(out.status.code(), Some(3));
        assert!(String::from_utf8_lossy(&out.stderr).contains("format 9"), "{}", String::from_utf8_lossy(&out.stderr));
    }
}

/// A fresh store of each backend (an SQLite file, a migrated PostgreSQL
/// database), named `tag`.
fn fresh_stores(dir: &Path, tag: &str) -> Vec<String> {
    let mut stores = vec![dir.join(format!("{tag}.sqlite3")).display().to_string()];
    if let Some(pg) = crate::support::postgres::server() {
        let url = pg.database();
        assert!(blkc(dir, &["vars", "--store", &url, "migrate"]).status.success());
        stores.push(url);
    }
    stores
}

#[test]
fn both_backends_apply_defaults_and_refuse_a_save_on_a_stale_decision() {
    let server = crate::support::server::TestServer::start();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("race.blk"),
        format!(
            "var winner = \"none\"\ncommand show {{\n    reply \"winner: {{winner}}\"\n}}\ncommand claim {{\n    option id \"Your ID\"\n    if \"{{winner}}\" == \"none\" {{\n        api wait {{ method GET url \"{}/slow/300\" }}\n        save winner = \"{{option_id}}\"\n        reply \"WON\"\n    }}\n}}\n",
            server.base()
        ),
    )
    .unwrap();
    for round in 0..3 {
        for store in fresh_stores(d, &format!("race{round}")) {
            assert_eq!(
                stdout(&blkc(d, &["run", "race.blk", "--command", "show", "--store", &store])),
                "winner: none\n"
            );
            let children: Vec<_> = (0..8)
                .map(|id| {
                    Command::new(env!("CARGO_BIN_EXE_blkc"))
                        .args([
                            "run",
                            "race.blk",
                            "--command",
                            "claim",
                            "--store",
                            &store,
                            "--var",
                            &format!("option_id={id}"),
                        ])
                        .current_dir(d)
                        .stdout(std::process::Stdio::piped())
                        .stderr(std::process::Stdio::piped())
                        .spawn()
                        .unwrap()
                })
                .collect();
            let mut winners = Vec::new();
            for (id, child) in children.into_iter().enumerate() {
                let out = child.wait_with_output().unwrap();
                let stderr = String::from_utf8_lossy(&out.stderr);
                match out.status.code() {
                    Some(0) if stdout(&out) == "WON\n" => winners.push(id),
                    Some(0) => assert_eq!(stdout(&out), "", "{store}"),
                    Some(3) => assert!(stderr.contains("B322"), "{store}: {stderr}"),
                    other => panic!("{store}: exit {other:?}: {stderr}"),
                }
            }
            assert_eq!(winners.len(), 1, "{store}: winners {winners:?}");
            let shown = stdout(&blkc(d, &["run", "race.blk", "--command", "show", "--store", &store]));
            assert_eq!(shown, format!("winner: {}\n", winners[0]), "{store}");
        }
    }
}

/// A delivery counts as seen until its expiry, whichever process claims it
/// first; then it is new again.
#[test]
fn a_delivery_is_seen_once_until_it_expires() {
    let Some(pg) = crate::support::postgres::server() else { return };
    let url = pg.store();
    let pool = blkc::run::store::postgres::Pool::open(&url).unwrap();
    let other = blkc::run::store::postgres::Pool::open(&url).unwrap();
    // Times (ms) from now: what has expired by the clock is removed now and then.
    let t0 = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64;
    let at = |ms: i64| t0 + ms;
    assert!(pool.first_time("event:X:1", at(10_000), 500).unwrap());
    assert!(!other.first_time("event:X:1", at(10_200), 500).unwrap());
    assert!(other.first_time("event:X:2", at(10_200), 500).unwrap());
    // Expired at 10,500: the same key is a new delivery, seen until 11,000.
    assert!(other.first_time("event:X:1", at(10_500), 500).unwrap());
    assert!(!pool.first_time("event:X:1", at(10_999), 500).unwrap());
    // Many processes at once: one wins.
    let winners: usize = std::thread::scope(|s| {
        let handles: Vec<_> = (0..16)
            .map(|_| {
                let p = blkc::run::store::postgres::Pool::open(&url).unwrap();
                s.spawn(move || usize::from(p.first_time("interaction:race", at(20_000), 1_000).unwrap()))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    assert_eq!(winners, 1);
}

/// A store of format `from` (blkc's meta and vars tables, `topic` set to
/// "hi", and `tables`) at `url`: refused by `vars get` until `blkc vars
/// migrate` moves it to format 4, which keeps `topic`. Gives a client of
/// the database and the directory blkc ran in.
fn migrated(url: &str, from: i64, tables: &str) -> (postgres::Client, tempfile::TempDir) {
    let mut client = postgres::Client::connect(url, postgres::NoTls).unwrap();
    client
        .batch_execute(&format!(
            "CREATE TABLE blkc_meta (key TEXT PRIMARY KEY, value BIGINT NOT NULL);
             CREATE TABLE blkc_vars (name TEXT PRIMARY KEY, value TEXT NOT NULL, updated_at BIGINT NOT NULL);
             INSERT INTO blkc_meta VALUES ('schema', {from});
             INSERT INTO blkc_vars VALUES ('topic', '\"hi\"', 0);
             {tables}"
        ))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = blkc(dir.path(), &["vars", "--store", url, "get", "topic"]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let refused = format!("has store format {from}; move it to format 4 with `blkc vars --store URL migrate`");
    assert!(String::from_utf8_lossy(&out.stderr).contains(&refused), "{out:?}");
    let out = blkc(dir.path(), &["vars", "--store", url, "migrate"]);
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains(&format!("from store format {from} to 4")), "{out:?}");
    assert_eq!(stdout(&blkc(dir.path(), &["vars", "--store", url, "get", "topic"])), "hi\n");
    (client, dir)
}

/// A store of format 1 (before deliveries expired by time) is refused by
/// runs and servers until `blkc vars migrate` moves it, keeping its values.
#[test]
fn a_format_1_postgres_store_is_refused_until_migrated_and_keeps_its_values() {
    let Some(pg) = crate::support::postgres::server() else { return };
    let url = pg.database();
    let (mut client, dir) = migrated(
        &url,
        1,
        "CREATE TABLE blkc_seen (id TEXT PRIMARY KEY, seen_at BIGINT NOT NULL);
         INSERT INTO blkc_vars VALUES ('points:user:7:1', '41', 0);
         INSERT INTO blkc_seen VALUES ('123', 0);",
    );
    let out = blkc(dir.path(), &["vars", "--store", &url, "get", "points", "--user", "1", "--server", "7"]);
    assert_eq!(stdout(&out), "41\n");
    let out = blkc(dir.path(), &["vars", "--store", &url, "migrate"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing to do"));
    let version: i64 = client.query_one("SELECT value FROM blkc_meta WHERE key = 'schema'", &[]).unwrap().get(0);
    assert_eq!(version, 4);
}

/// A store of format 2 (before the shards' leases) is moved to format 4 by
/// `blkc vars migrate`: its values kept, the leases' and the waiting
/// work's tables added empty.
#[test]
fn a_format_2_postgres_store_is_migrated_to_leases_keeping_its_values() {
    let Some(pg) = crate::support::postgres::server() else { return };
    let url = pg.database();
    let (mut client, _dir) = migrated(
        &url,
        2,
        "CREATE TABLE blkc_seen (id TEXT PRIMARY KEY, expires_at BIGINT NOT NULL);
         CREATE TABLE blkc_processes (id TEXT PRIMARY KEY, seen_at BIGINT NOT NULL);",
    );
    let shards: i64 = client.query_one("SELECT count(*) FROM blkc_shards", &[]).unwrap().get(0);
    let turns: i64 = client.query_one("SELECT count(*) FROM blkc_identify", &[]).unwrap().get(0);
    let later: i64 = client.query_one("SELECT count(*) FROM blkc_later", &[]).unwrap().get(0);
    assert_eq!((shards, turns, later), (0, 0, 0));
}

/// A store of format 3 (before waiting work) is moved to format 4 by
/// `blkc vars migrate`: its values kept, the waiting work's table added.
#[test]
fn a_format_3_postgres_store_is_migrated_to_waiting_work_keeping_its_values() {
    let Some(pg) = crate::support::postgres::server() else { return };
    let url = pg.database();
    let (mut client, _dir) = migrated(
        &url,
        3,
        "CREATE TABLE blkc_seen (id TEXT PRIMARY KEY, expires_at BIGINT NOT NULL);
         CREATE TABLE blkc_processes (id TEXT PRIMARY KEY, seen_at BIGINT NOT NULL);
         CREATE TABLE blkc_shards (id INT PRIMARY KEY);",
    );
    let later: i64 = client.query_one("SELECT count(*) FROM blkc_later", &[]).unwrap().get(0);
    assert_eq!(later, 0);
}

/// A PostgreSQL that takes TLS only, with a certificate from a private
/// authority: trusted through `sslrootcert` (libpq's way), with the host's
/// name checked; refused with the public roots alone, and without TLS.
#[test]
fn a_postgres_store_over_tls_trusts_its_sslrootcert_and_no_unknown_authority() {
    let Some((pg, authority)) = crate::support::postgres::tls_server() else { return };
    let database = pg.database();
    let dir = tempfile::tempdir().unwrap();
    let url = format!("{database}?sslmode=verify-full&sslrootcert={}", authority.display());
    let out = blkc(dir.path(), &["vars", "--store", &url, "migrate"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    std::fs::write(dir.path().join("count.blk"), "var n = \"0\"\ncommand add {\n    save n = n + 1\n}\n").unwrap();
    for _ in 0..3 {
        let out = blkc(dir.path(), &["run", "count.blk", "--command", "add", "--store", &url]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    assert_eq!(stdout(&blkc(dir.path(), &["vars", "--store", &url, "get", "n"])), "3\n");
    // The public roots do not know the authority: no connection.
    let out = blkc(dir.path(), &["vars", "--store", &format!("{database}?sslmode=require"), "get", "n"]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("invalid peer certificate: UnknownIssuer"), "{stderr}");
    // Without TLS the server will not talk.
    let out = blkc(dir.path(), &["vars", "--store", &format!("{database}?sslmode=disable"), "get", "n"]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("pg_hba.conf"), "{stderr}");
    // An authority file that is not one is said to be so.
    std::fs::write(dir.path().join("not.pem"), "hello").unwrap();
    let bad = format!("{database}?sslrootcert={}", dir.path().join("not.pem").display());
    let out = blkc(dir.path(), &["vars", "--store", &bad, "get", "n"]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(stderr.contains("holds no certificate"), "{stderr}");
    // And the password never shows in what is said.
    let secret = url.replace("blkc@", "blkc:hunter2@");
    let out = blkc(dir.path(), &["vars", "--store", &secret.replace("verify-full", "disable"), "get", "n"]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("hunter2"));
}

#[test]
fn a_run_sees_what_it_saved_not_what_another_run_saved_since_on_both_backends() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("tickets.blk"),
        "var tickets = \"0\"\ncommand take {\n    save tickets = tickets + 1\n    reply \"your ticket is #{tickets}\"\n}\n",
    )
    .unwrap();
    for store in backends(d) {
        let children: Vec<_> = (0..8)
            .map(|_| {
                Command::new(env!("CARGO_BIN_EXE_blkc"))
                    .args(["run", "tickets.blk", "--command", "take", "--store", &store])
                    .current_dir(d)
                    .stdout(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let mut told: Vec<String> =
            children.into_iter().map(|c| stdout(&c.wait_with_output().unwrap()).trim().to_string()).collect();
        told.sort_by_key(|t| t.trim_start_matches("your ticket is #").parse::<u32>().unwrap_or(0));
        let expected: Vec<String> = (1..=8).map(|n| format!("your ticket is #{n}")).collect();
        assert_eq!(told, expected, "{store}");
    }
}

#[test]
fn a_name_no_template_can_read_is_refused_on_both_backends() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for store in backends(d) {
        for name in ["a'b", "a b", "9lives", "x;DROP TABLE blkc_vars"] {
            let out = blkc(d, &["vars", "--store", &store, "set", name, "v"]);
            let said = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{store} {name}: {said}");
            assert!(said.contains("is not a variable name"), "{said}");
        }
        assert_eq!(stdout(&blkc(d, &["vars", "--store", &store, "list"])), "", "{store}");
    }
}

/// Cooldowns that have passed are removed, and nothing else: not one still
/// running, not a value that is not a time, not another key.
#[test]
fn cooldowns_that_have_passed_are_removed_and_nothing_else_on_both_backends() {
    let dir = tempfile::tempdir().unwrap();
    for location in fresh_stores(dir.path(), "sweep") {
        let mut store: Box<dyn blkc::run::store::VarStore> = match blkc::run::store::Location::parse(&location) {
            blkc::run::store::Location::Sqlite(path) => Box::new(blkc::run::store::Store::open(&path).unwrap()),
            blkc::run::store::Location::Postgres(url) => {
                Box::new(blkc::run::store::postgres::Pool::open(&url).unwrap().store())
            }
        };
        let values = [
            ("~cooldown.command.daily:user:1:7", serde_json::json!(1_000)),
            ("~cooldown.command.daily:user:1:8", serde_json::json!(5_000_000)),
            ("~cooldown.component.3:server:1", serde_json::json!("not a time")),
            ("~clicks.5.0", serde_json::json!(1)),
            ("points", serde_json::json!(3)),
        ];
        for (name, value) in &values {
            store.set(name, value).unwrap();
        }
        assert_eq!(store.remove_expired("~cooldown.", 2_000_000).unwrap(), 1, "{location}");
        for (name, value) in &values[1..] {
            assert_eq!(store.get(name).unwrap().as_ref(), Some(value), "{location}: {name}");
        }
        assert_eq!(store.get(values[0].0).unwrap(), None, "{location}");
    }
}

/// Issue 53, item 2: 200 gives between two members at once, from eight
/// processes sharing a store, each a `together` of two saves: every coin
/// is kept (a give that finds its decision stale fails whole, B322), on
/// both backends.
#[test]
fn gives_between_two_members_at_once_keep_every_coin_on_both_backends() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/economy.blk"), dir.path().join("economy.blk"))
        .unwrap();
    let (writers, gives) = (8, 25);
    for store in backends(dir.path()) {
        for user in ["1001", "1002"] {
            let out = blkc(
                dir.path(),
                &["vars", "--store", &store, "set", "coins", "500", "--json", "--user", user, "--server", "9"],
            );
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        }
        let children: Vec<_> = (0..writers)
            .map(|w| {
                let (store, dir) = (store.clone(), dir.path().to_path_buf());
                std::thread::spawn(move || {
                    let (from, to) = if w % 2 == 0 { ("1001", "1002") } else { ("1002", "1001") };
                    let mut given = 0;
                    for n in 0..gives {
                        let amount = format!("option_amount={}", 1 + (n % 7));
                        let args = [
                            "run",
                            "economy.blk",
                            "--command",
                            "give",
                            "--store",
                            &store,
                            "--var",
                            &format!("user_id={from}"),
                            "--var",
                            "server_id=9",
                            "--var",
                            &format!("option_to={to}"),
                            "--var",
                            &amount,
                        ];
                        let out = blkc(&dir, &args);
                        let said = format!("{}{}", stdout(&out), String::from_utf8_lossy(&out.stderr));
                        // Given, or refused whole because another give
                        // changed what this one read.
                        assert!(out.status.success() || said.contains("B322"), "{said}");
                        given += usize::from(out.status.success());
                    }
                    given
                })
            })
            .collect();
        let given: usize = children.into_iter().map(|c| c.join().unwrap()).sum();
        // (How many go through depends on how the processes interleave; a
        // give whose decision went stale is refused whole, and says so.)
        assert!(given > 0, "no give went through");
        let coins = |user: &str| -> i64 {
            let out = blkc(dir.path(), &["vars", "--store", &store, "get", "coins", "--user", user, "--server", "9"]);
            stdout(&out).trim().parse().unwrap()
        };
        let (a, b) = (coins("1001"), coins("1002"));
        assert_eq!(a + b, 1000, "{store}: {a} + {b}");
    }
}

/// Issue 53, item 6: a variable declared `expires "1d"` reads as its
/// default a day after its save (by the run's clock, `--now` here), and
/// counts afresh from there, on both backends.
#[test]
fn a_value_that_expires_reads_as_its_default_once_it_has_lapsed_on_both_backends() {
    let dir = tempfile::tempdir().unwrap();
    let program = "var warned per user = 0 expires \"1d\"\n\ncommand warn \"Warn\" {\n    save warned = warned + 1\n    reply \"Warned {warned} times today.\"\n}\n";
    std::fs::write(dir.path().join("warn.blk"), program).unwrap();
    for store in backends(dir.path()) {
        let warn = |now: &str| {
            let args = [
                "run",
                "warn.blk",
                "--command",
                "warn",
                "--store",
                &store,
                "--now",
                now,
                "--var",
                "user_id=7",
                "--var",
                "server_id=9",
            ];
            let out = blkc(dir.path(), &args);
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            stdout(&out).trim().to_string()
        };
        assert_eq!(warn("2026-11-28T09:00:00Z"), "Warned 1 times today.");
        assert_eq!(warn("2026-11-28T20:00:00Z"), "Warned 2 times today.");
        // A day after the last save: lapsed, read as 0.
        assert_eq!(warn("2026-11-29T20:00:01Z"), "Warned 1 times today.", "{store}");
        assert_eq!(warn("2026-11-29T21:00:00Z"), "Warned 2 times today.", "{store}");
    }
}

/// Issue 53, item 6: work a run keeps is listed by `blkc vars waiting`,
/// soonest first (all of it, or one user's), replaced by its key, taken
/// back by `cancel`, and bounded per user (B336), on both backends.
#[test]
fn waiting_work_is_kept_listed_replaced_cancelled_and_bounded_on_both_backends() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/remind.blk"), dir.path().join("remind.blk")).unwrap();
    for store in backends(dir.path()) {
        let run = |user: &str, args: &[&str]| {
            let mut all = vec!["run", "remind.blk", "--store", &store, "--now", "2026-11-28T09:00:00Z"];
            let user = format!("user_id={user}");
            all.extend(["--var", &user, "--var", "server_id=9"]);
            all.extend(args);
            blkc(dir.path(), &all)
        };
        let remind = |user: &str, when: &str, text: &str| {
            let (when, text) = (format!("option_in={when}"), format!("option_text={text}"));
            run(user, &["--command", "remind", "--var", &when, "--var", &text])
        };
        assert!(remind("1", "2h", "tea").status.success());
        assert!(remind("1", "10m", "cake").status.success());
        assert!(remind("2", "1d", "walk").status.success());
        // The same key again replaces: tea now in 30 minutes.
        assert!(remind("1", "30m", "tea").status.success());
        let waiting = |args: &[&str]| {
            let mut all = vec!["vars", "--store", &store, "waiting"];
            all.extend(args);
            stdout(&blkc(dir.path(), &all))
        };
        assert_eq!(
            waiting(&[]),
            "2026-11-28T09:10:00Z  user 1 in server 9  remind#9169a528  key \"cake\"  note \"cake\"\n\
             2026-11-28T09:30:00Z  user 1 in server 9  remind#9169a528  key \"tea\"  note \"tea\"\n\
             2026-11-29T09:00:00Z  user 2 in server 9  remind#9169a528  key \"walk\"  note \"walk\"\n",
            "{store}"
        );
        assert_eq!(waiting(&["--user", "2", "--server", "9"]).lines().count(), 1);
        let listed = stdout(&run("1", &["--command", "reminders"]));
        let (cake, tea) = (listed.find("• cake, <t:1795857000:R>"), listed.find("• tea, <t:1795858200:R>"));
        assert!(cake.is_some() && tea.is_some() && cake < tea, "{listed}");
        assert!(run("1", &["--command", "forget", "--var", "option_text=cake"]).status.success());
        assert_eq!(waiting(&["--user", "1", "--server", "9"]).lines().count(), 1);
        // 25 a user: the 26th is refused, and nothing of it kept.
        for n in 0..25 {
            assert!(remind("3", "1h", &format!("n{n}")).status.success());
        }
        let out = remind("3", "1h", "one too many");
        assert_eq!(out.status.code(), Some(3));
        assert!(String::from_utf8_lossy(&out.stderr).contains("B336"), "{out:?}");
        assert!(remind("3", "1h", "n0").status.success(), "a key kept already replaces");
        assert_eq!(waiting(&["--user", "3", "--server", "9"]).lines().count(), 25);
    }
}
