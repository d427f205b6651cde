//! One fixture per runtime diagnostic, run by the real binary against a
//! real server on 127.0.0.1. `err_` fixtures must fail the run (exit 3),
//! `warn_` fixtures must warn and succeed. Output is snapshotted.
//!
//! A fixture's first comment lines say how to run it: `# args: …`,
//! `# env: NAME=value`, `# store: corrupt`, `# test: BLOCK` (run `blkc test`
//! instead of `blkc run`), `# exit: N` (an `err_` fixture's exit code, 3 by
//! default), `# meanwhile: ARGS` (another `blkc ARGS` in the same folder,
//! once the run's first request has reached the server). The folder `samples/` is copied beside each fixture. In its text, `@SERVER@` is the
//! test server, `@CLOSED@` a port nothing listens on, `@TLS@` an https address
//! of a server that answers in plain HTTP at once (the handshake fails),
//! `@BROKEN@` a server whose responses break off, `@PORT@` the test
//! server's port alone, `@LONG@` 3,000 characters.

use std::process::Command;

use crate::support::server::TestServer;

#[test]
fn run_fixtures() {
    let server = TestServer::start();
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let plain = crate::support::server::plain_responder();
    let broken = crate::support::server::broken_responder();
    insta::glob!("fixtures/run/*.blk", |path| {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(path)
            .unwrap()
            .replace("@SERVER@", &server.base())
            .replace("@CLOSED@", &format!("http://127.0.0.1:{closed}"))
            .replace("@TLS@", &format!("https://127.0.0.1:{}", plain))
            .replace("@BROKEN@", &format!("http://127.0.0.1:{broken}"))
            .replace("@PORT@", &server.port.to_string())
            .replace("@LONG@", &"w".repeat(3000));
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(&name), &text).unwrap();
        let samples = path.parent().unwrap().join("samples");
        std::fs::create_dir_all(dir.path().join("samples")).unwrap();
        for entry in std::fs::read_dir(&samples).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), dir.path().join("samples").join(entry.file_name())).unwrap();
        }
        let header: Vec<&str> = text.lines().take_while(|l| l.starts_with('#')).collect();
        let test_block = header.iter().find_map(|l| l.strip_prefix("# test: "));
        let expected_exit: Option<i32> =
            header.iter().find_map(|l| l.strip_prefix("# exit: ")).map(|n| n.parse().unwrap());
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_blkc"));
        match test_block {
            Some(block) => cmd.arg("test").arg(&name).arg(block),
            None => cmd.arg("run").arg(&name),
        };
        cmd.current_dir(dir.path()).env("NO_COLOR", "1").env("COLUMNS", "100");
        cmd.env_remove("BLKC_BOT_TOKEN");
        for line in &header {
            if let Some(args) = line.strip_prefix("# args: ") {
                cmd.args(args.split_whitespace());
            } else if let Some((k, v)) = line.strip_prefix("# env: ").and_then(|e| e.split_once('=')) {
                cmd.env(k, v);
            } else if *line == "# store: corrupt" {
                std::fs::create_dir_all(dir.path().join(".blkc")).unwrap();
                std::fs::write(dir.path().join(".blkc/store.sqlite3"), "this is not a database\n".repeat(100)).unwrap();
            }
        }
        // `# meanwhile: ARGS`: another blkc, run in the same folder while
        // this one waits for a slow response (another run saving at once).
        let meanwhile = header.iter().find_map(|l| l.strip_prefix("# meanwhile: ")).map(|a| a.to_string());
        let out = match meanwhile {
            None => cmd.output().unwrap(),
            Some(args) => {
                let before = server.received().len();
                let child =
                    cmd.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap();
                // Once the run's request has reached the server, the run
                // has read what it decides on and waits for the answer.
                let waited = std::time::Instant::now();
                while server.received().len() == before {
                    assert!(waited.elapsed().as_secs() < 30, "{name}: the run sent no request");
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                let other = Command::new(env!("CARGO_BIN_EXE_blkc"))
                    .args(args.split_whitespace())
                    .current_dir(dir.path())
                    .output()
                    .unwrap();
                assert!(other.status.success(), "{}", String::from_utf8_lossy(&other.stderr));
                child.wait_with_output().unwrap()
            }
        };
        let code = out.status.code().unwrap_or(-1);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let code_in_name = name.split('_').nth(1).unwrap();
        if name.starts_with("err_") {
            assert_eq!(code, expected_exit.unwrap_or(3), "{name} must fail:\n{stderr}");
        } else {
            assert_eq!(code, 0, "{name} must succeed:\n{stderr}");
        }
        assert!(stderr.lines().any(|l| l.trim() == code_in_name), "{name} must report {code_in_name}:\n{stderr}");
        if name.contains("store_failed") {
            let kept = std::fs::read_to_string(dir.path().join(".blkc/store.sqlite3")).unwrap();
            assert!(kept.starts_with("this is not a database"), "a corrupt store must not be recreated");
        }
        let report = format!("exit {code}\n--- stdout\n{stdout}--- stderr\n{stderr}")
            .replace(&server.port.to_string(), "[PORT]")
            .replace(&plain.to_string(), "[PORT]")
            .replace(&broken.to_string(), "[PORT]")
            .replace(&closed.to_string(), "[CLOSED]");
        insta::assert_snapshot!(without_durations(&report));
    });
}

/// `· 9.6 ms` becomes `· [ms]`: durations differ from run to run.
fn without_durations(text: &str) -> String {
    text.lines()
        .map(|line| if line.starts_with("date: ") { "date: [date]" } else { line })
        .map(|line| match line.find(" · ").zip(line.strip_suffix(" ms")) {
            Some((at, _)) if line.rfind(" · ").is_some_and(|last| last > at || line[at + 3..].ends_with(" ms")) => {
                let last = line.rfind(" · ").unwrap_or(at);
                format!("{} · [ms]", &line[..last])
            }
            _ => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}
