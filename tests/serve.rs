//! `blkc serve` end to end: the binary, a test platform that signs its
//! interactions and records blkc's answers, and an API server, all on
//! 127.0.0.1. Nothing on the request path is mocked.

use std::io::{BufRead as _, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::platform::{command, post, Answered, TestPlatform};
use crate::support::server::TestServer;

pub(crate) struct Served {
    pub(crate) child: Child,
    pub(crate) url: String,
    log: Arc<Mutex<String>>,
    _dir: tempfile::TempDir,
    pub(crate) file: PathBuf,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Served {
    pub(crate) fn interactions(&self) -> String {
        format!("{}/interactions", self.url)
    }

    /// Signs and posts `body` as the platform does.
    pub(crate) fn send(&self, platform: &TestPlatform, body: &Value) -> Answered {
        let bytes = serde_json::to_vec(body).unwrap();
        post(&self.interactions(), &bytes, Some(platform.sign(&bytes, 0)))
    }

    pub(crate) fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// Waits (up to 20 s) for the log to hold `text`.
    pub(crate) fn wait_log(&self, text: &str) -> String {
        let until = Instant::now() + Duration::from_secs(20);
        loop {
            let log = self.log();
            if log.contains(text) || Instant::now() > until {
                return log;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits (up to 20 s) for the `interaction` line that ends delivery
    /// `id` and returns the whole log. A delivery's other lines (a guard's
    /// refusal, a warning) come before it, so they are in the log too;
    /// waiting for `id=…` alone can return at one of those.
    pub(crate) fn wait_interaction(&self, id: &str) -> String {
        self.wait_log(&format!("interaction id={id} "))
    }

    /// The value of metric `name` (a line `name VALUE`) at `/metrics`.
    pub(crate) fn metric(&self, name: &str) -> Option<f64> {
        let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
        let text = agent.get(format!("{}/metrics", self.url)).call().ok()?.body_mut().read_to_string().ok()?;
        text.lines().find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
    }

    pub(crate) fn signal(&self, signal: libc::c_int) {
        // SAFETY: sends a signal to our own child process.
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, signal);
        }
    }
}

/// Starts `blkc serve` on `program` (`@API@` becomes the API server's base).
pub(crate) fn serve(
    program: &str,
    platform: &TestPlatform,
    api: Option<&TestServer>,
    args: &[&str],
    env: &[(&str, &str)],
) -> Served {
    serve_with_files(program, platform, api, args, env, None)
}

/// [`serve`], the process started with the open-file limits `files`
/// (soft, hard) as a shell's `ulimit -n` or a systemd unit would set them.
pub(crate) fn serve_with_files(
    program: &str,
    platform: &TestPlatform,
    api: Option<&TestServer>,
    args: &[&str],
    env: &[(&str, &str)],
    files: Option<(u64, u64)>,
) -> Served {
    start(program, platform, api, (args, env), files, &[])
}

/// [`serve`], with files beside the bot (a path from its folder, and
/// the file's bytes).
pub(crate) fn serve_beside(
    program: &str,
    platform: &TestPlatform,
    args: &[&str],
    env: &[(&str, &str)],
    beside: &[(&str, &[u8])],
) -> Served {
    start(program, platform, None, (args, env), None, beside)
}

fn start(
    program: &str,
    platform: &TestPlatform,
    api: Option<&TestServer>,
    (args, env): (&[&str], &[(&str, &str)]),
    files: Option<(u64, u64)>,
    beside: &[(&str, &[u8])],
) -> Served {
    let dir = tempfile::tempdir().unwrap();
    for (path, bytes) in beside {
        std::fs::write(dir.path().join(path), bytes).unwrap();
    }
    let file = dir.path().join("bot.blk");
    let text = match api {
        Some(api) => program.replace("@API@", &api.base()),
        None => program.to_string(),
    };
    std::fs::write(&file, text).unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_blkc"));
    if let Some((soft, hard)) = files {
        use std::os::unix::process::CommandExt as _;
        // SAFETY: setrlimit only, between fork and exec.
        unsafe {
            command.pre_exec(move || {
                let limit = libc::rlimit { rlim_cur: soft, rlim_max: hard };
                if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    command.args(["serve", "bot.blk", "--platform"]).arg(platform.api());
    // A test that gives `--listen` has its own address (a shared port).
    if !args.contains(&"--listen") {
        command.args(["--listen", "127.0.0.1:0"]);
    }
    command.args(args).env("BLKC_DISCORD_PUBLIC_KEY", platform.public_key()).env_remove("BLKC_BOT_TOKEN");
    // A variable given as empty in `env` is not set at all.
    for &(name, value) in env {
        match value {
            "" => command.env_remove(name),
            _ => command.env(name, value),
        };
    }
    let mut child = command
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let log = Arc::new(Mutex::new(String::new()));
    let (tx, rx) = std::sync::mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    let l = log.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(at) = line.split(" listen=").nth(1) {
                let _ = tx.send(at.split(' ').next().unwrap_or_default().to_string());
            } else if let Some(at) = line.split("\"listen\":\"").nth(1) {
                let _ = tx.send(at.split('"').next().unwrap_or_default().to_string());
            }
            let mut l = l.lock().unwrap();
            l.push_str(&line);
            l.push('\n');
        }
    });
    let address = rx
        .recv_timeout(Duration::from_secs(30))
        .unwrap_or_else(|_| panic!("no `serving` line: {}", log.lock().unwrap()));
    Served { child, url: format!("http://{address}"), log, _dir: dir, file }
}

const HELLO: &str = r#"command hello "Say hello" {
    option name "Whom to greet" required
    option times "How many times" integer
    reply "Hello {option_name} x{option_times}, from {user_name} in #{channel_name}"
}
"#;

pub(crate) fn content(answer: &Answered) -> &str {
    answer.body["data"]["content"].as_str().unwrap_or_default()
}

pub(crate) const FAILED_WORD: &str =
    "Sorry, something went wrong running this command. The bot's operator can see what in the log.";

#[test]
fn a_ping_is_answered_and_anything_unsigned_gets_401_before_it_is_read() {
    let platform = TestPlatform::start();
    let served = serve(HELLO, &platform, None, &["--max-body", "1000"], &[]);
    let ping = served.send(&platform, &json!({ "type": 1, "id": "1" }));
    assert_eq!((ping.status, ping.body.clone()), (200, json!({ "type": 1 })));
    let body = br#"{"type":1,"id":"2"}"#;
    // Missing, bad, stale, and another key's signatures.
    assert_eq!(post(&served.interactions(), body, None).status, 401);
    let (sig, ts) = platform.sign(body, 0);
    let other = br#"{"type":1,"id":"3"}"#;
    assert_eq!(post(&served.interactions(), other, Some((sig.clone(), ts.clone()))).status, 401);
    assert_eq!(post(&served.interactions(), body, Some(platform.sign(body, 301))).status, 401);
    assert_eq!(post(&served.interactions(), body, Some(("00".repeat(64), ts.clone()))).status, 401);
    let stranger = TestPlatform::start();
    assert_eq!(post(&served.interactions(), body, Some(stranger.sign(body, 0))).status, 401);
    // Not JSON at all, unsigned: 401, not 400 (nothing unsigned is parsed).
    assert_eq!(post(&served.interactions(), b"{{{{ not json", None).status, 401);
    // Signed but not an interaction: 400.
    let junk = b"[1, 2, 3]";
    assert_eq!(post(&served.interactions(), junk, Some(platform.sign(junk, 0))).status, 400);
    // Over the size cap: refused by its length before it is read, or as it
    // is read when it comes in chunks.
    let address = served.url.trim_start_matches("http://").to_string();
    let raw = |request: &[u8]| {
        use std::io::{Read as _, Write as _};
        let mut stream = std::net::TcpStream::connect(&address).unwrap();
        stream.write_all(request).unwrap();
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
        answer
    };
    let answer = raw(b"POST /interactions HTTP/1.1\r\nHost: x\r\nContent-Length: 2000000\r\nConnection: close\r\n\r\n");
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    let chunk = format!("{:x}\r\n{}\r\n", 1500, "x".repeat(1500));
    let chunked = format!(
        "POST /interactions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n{chunk}0\r\n\r\n"
    );
    let answer = raw(chunked.as_bytes());
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    let health = ureq::get(&format!("{}/healthz", served.url)).call().unwrap();
    assert_eq!(health.status(), 200);
    let metrics = ureq::get(&format!("{}/metrics", served.url)).call().unwrap().body_mut().read_to_string().unwrap();
    assert!(metrics.contains("blkc_interactions_total{outcome=\"unauthorized\"} 6"), "{metrics}");
    assert!(metrics.contains("blkc_interactions_total{outcome=\"ping\"} 1"), "{metrics}");
    assert!(metrics.contains("blkc_interactions_total{outcome=\"too_large\"} 2"), "{metrics}");
    // The log is read from the process's standard error as it comes.
    let log = served.wait_log("why=\"stale timestamp\"");
    let log = if log.contains("why=\"bad signature\"") { log } else { served.wait_log("why=\"bad signature\"") };
    assert!(log.contains("why=\"bad signature\"") && log.contains("why=\"stale timestamp\""), "{log}");
}

#[test]
fn a_command_is_answered_with_its_reply_options_and_trigger_variables() {
    let platform = TestPlatform::start();
    let served = serve(HELLO, &platform, None, &[], &[]);
    let options = json!([{ "name": "name", "type": 3, "value": "@everyone and <@&5>" }, { "name": "times", "type": 4, "value": 3 }]);
    let answer = served.send(&platform, &command("10", "hello", options));
    assert_eq!(answer.status, 200, "{:?}", answer);
    assert_eq!(answer.body["type"], 4);
    assert_eq!(content(&answer), "Hello @everyone and <@&5> x3, from Ada in #general");
    // The text a chat user supplied pings no one: no `everyone`, no roles,
    // only the user who asked.
    assert_eq!(answer.body["data"]["allowed_mentions"], json!({ "parse": [], "users": ["1001"] }));
    assert!(answer.took < Duration::from_secs(3));
    // An optional option left out is empty; an unknown command is said so.
    let answer = served.send(&platform, &command("11", "hello", json!([{ "name": "name", "type": 3, "value": "Bo" }])));
    assert_eq!(content(&answer), "Hello Bo x, from Ada in #general");
    let answer = served.send(&platform, &command("12", "nope", json!([])));
    assert_eq!((answer.body["type"].clone(), answer.body["data"]["flags"].clone()), (json!(4), json!(64)));
    // A value of the wrong type (an integer option given text) fails the
    // run, ephemerally, and the log says why.
    let bad = json!([{ "name": "name", "type": 3, "value": "x" }, { "name": "times", "type": 4, "value": "many" }]);
    let answer = served.send(&platform, &command("13", "hello", bad));
    assert_eq!(answer.body["data"]["flags"], 64);
    let log = served.wait_interaction("13");
    let line = log.lines().find(|l| l.contains("interaction id=13 ")).unwrap_or_default();
    assert!(line.contains("outcome=failed") && line.contains("option `times` is integer"), "{log}");
}

#[test]
fn a_slow_run_is_deferred_in_time_then_edited_and_more_replies_follow_up() {
    let platform = TestPlatform::start();
    let api = TestServer::start();
    let program = r#"command slow "Slow" {
    api wait {
        method GET
        url "@API@/held"
    }
    reply "first"
    reply "second {user_mention}"
}
command quick "Quick" {
    reply "one"
    reply "two"
}
"#;
    // The API answers once the test has the first answer: "thinking",
    // however loaded the machine, and inside the platform's 3 s.
    let served = serve(program, &platform, Some(&api), &["--answer-within", "1.5"], &[]);
    let answer = served.send(&platform, &command("20", "slow", json!([])));
    assert_eq!(answer.body, json!({ "type": 5 }));
    assert!(answer.took < Duration::from_millis(2900), "deferred after {:?}", answer.took);
    api.open();
    let edits = platform.wait_for("/messages/@original", 1);
    assert_eq!(edits.len(), 1);
    assert_eq!(edits[0].method, "PATCH");
    assert_eq!(edits[0].path, "/api/webhooks/4242/itoken-20-secretpart/messages/@original");
    assert_eq!(edits[0].body["content"], "first");
    assert_eq!(edits[0].body["allowed_mentions"]["parse"], json!([]));
    // Webhooks need no bot token.
    assert_eq!(edits[0].authorization, None);
    let follow = platform.wait_for("/webhooks/4242/itoken-20-secretpart", 2);
    let follow: Vec<_> = follow.iter().filter(|c| c.method == "POST").collect();
    assert_eq!(follow.len(), 1);
    assert_eq!(follow[0].body["content"], "second <@1001>");
    // A quick run: its first reply is the answer, the second a follow-up,
    // sent again when the platform did not know the webhook yet.
    platform.unknown_once("/api/webhooks/4242/itoken-21-secretpart");
    let answer = served.send(&platform, &command("21", "quick", json!([])));
    assert_eq!(content(&answer), "one");
    let follow = platform.wait_for("/webhooks/4242/itoken-21-secretpart", 2);
    assert_eq!(follow.len(), 2);
    assert_eq!(follow[1].body["content"], "two");
    let mut scraped = ureq::get(&format!("{}/metrics", served.url)).call().unwrap();
    let kind = scraped.headers().get("content-type").and_then(|v| v.to_str().ok()).map(str::to_string);
    assert_eq!(kind.as_deref(), Some("application/openmetrics-text; version=1.0.0; charset=utf-8"));
    let metrics = scraped.body_mut().read_to_string().unwrap();
    assert!(metrics.ends_with("# EOF\n") && metrics.contains("blkc_run_seconds_count 2"), "{metrics}");
    assert!(
        metrics.contains("blkc_deferrals_total 1") && metrics.contains("blkc_platform_calls_total{status=\"404\"} 1"),
        "{metrics}"
    );
    // The log says `deferred` as the metrics and the docs do.
    assert!(served.wait_log("outcome=deferred").contains("command=slow"), "{}", served.log());
}

#[test]
fn a_full_queue_answers_busy_at_once_and_queued_runs_are_still_answered_in_time() {
    let platform = TestPlatform::start();
    let api = TestServer::start();
    let program = "command slow \"Slow\" {\n    api w {\n        method GET\n        url \"@API@/held\"\n    }\n    reply \"done\"\n}\n";
    let args = ["--workers", "1", "--queue", "1", "--answer-within", "1.5"];
    let served = Arc::new(serve(program, &platform, Some(&api), &args, &[]));
    let send = |id: &str| {
        let (served, bytes) = (served.clone(), serde_json::to_vec(&command(id, "slow", json!([]))).unwrap());
        let signature = platform.sign(&bytes, 0);
        std::thread::spawn(move || post(&served.interactions(), &bytes, Some(signature)))
    };
    // One runs, one waits in the queue, the third finds it full.
    let running = send("a1");
    while api.received().is_empty() {
        std::thread::sleep(Duration::from_millis(10));
    }
    let queued = send("a2");
    // Two in flight: one running, one in the queue.
    let in_queue = || served.metric("blkc_runs_in_flight") == Some(2.0);
    assert!(crate::support::wait::eventually(20, in_queue), "{}", served.log());
    let busy = send("a3").join().unwrap();
    assert_eq!(busy.body["data"]["content"], "The bot is busy right now. Please try again in a moment.");
    assert_eq!(busy.body["data"]["flags"], 64);
    // At once: before the two waiting are told "thinking".
    assert!(!running.is_finished() && !queued.is_finished(), "busy after {:?}", busy.took);
    for pending in [running, queued] {
        let answer = pending.join().unwrap();
        assert_eq!(answer.body, json!({ "type": 5 }));
        assert!(answer.took < Duration::from_millis(2900));
    }
    api.open();
    // Both are edited once their runs end, the queued one after the first.
    assert_eq!(platform.wait_for("/messages/@original", 2).len(), 2);
}

#[test]
fn a_private_word_after_a_deferral_takes_the_thinking_answer_back_and_follows_up() {
    // The platform keeps a deferred answer's privacy: an edit cannot make
    // it private, and the first follow-up takes the deferral's. So a
    // failure or "Done." after a deferral deletes "thinking…" and follows
    // up with the private flag; no edit carries a flag.
    let platform = TestPlatform::start();
    let api = TestServer::start();
    let program = r#"command broken "Broken" {
    api wait {
        method GET
        url "@API@/slow/1500"
    }
    api big {
        method GET
        url "@API@/big/100000"
    }
    reply "never"
}
command quiet "Quiet" {
    api wait {
        method GET
        url "@API@/slow/1500"
    }
}
"#;
    let args = ["--answer-within", "0.5", "--max-response-size", "1000"];
    let served = serve(program, &platform, Some(&api), &args, &[]);
    // A tree with a public reply defers in public: its failure takes the
    // deferral back and follows up in private.
    let (id, name, content) = ("d1", "broken", FAILED_WORD);
    let answer = served.send(&platform, &command(id, name, json!([])));
    assert_eq!(answer.body, json!({ "type": 5 }));
    let token = format!("/api/webhooks/4242/itoken-{id}-secretpart");
    let calls = platform.wait_for(&token, 2);
    let calls: Vec<(&str, &str)> = calls.iter().map(|c| (c.method.as_str(), c.path.as_str())).collect();
    let original = format!("{token}/messages/@original");
    assert_eq!(calls, [("DELETE", original.as_str()), ("POST", token.as_str())], "{}", served.log());
    let follow = platform.wait_for(&token, 2).pop().unwrap();
    assert_eq!((follow.body["content"].as_str(), follow.body["flags"].clone()), (Some(content), json!(64)));
    assert_eq!(follow.authorization, None);
    assert!(platform.calls().iter().all(|c| c.method != "PATCH"), "{:?}", platform.calls());
    // A tree with no public reply defers in private, and "Done." edits it.
    let answer = served.send(&platform, &command("d2", "quiet", json!([])));
    assert_eq!(answer.body, json!({ "type": 5, "data": { "flags": 64 } }));
    let edit = platform.wait_for("itoken-d2-secretpart/messages/@original", 1);
    assert_eq!((edit[0].method.as_str(), edit[0].body["content"].as_str()), ("PATCH", Some("Done.")));
    assert!(edit[0].body["flags"].is_null());
    let log = served.wait_log("outcome=deferred");
    assert!(log.contains("outcome=failed") && log.contains("outcome=deferred"), "{log}");
}

#[test]
fn a_tree_that_replies_only_in_private_defers_in_private_and_edits_without_a_flag() {
    let platform = TestPlatform::start();
    let api = TestServer::start();
    let program = r#"command secret "Secret" {
    api wait {
        method GET
        url "@API@/slow/1500"
    }
    reply {
        text "only you"
        ephemeral
    }
}
"#;
    let served = serve(program, &platform, Some(&api), &["--answer-within", "0.5"], &[]);
    let answer = served.send(&platform, &command("p1", "secret", json!([])));
    assert_eq!(answer.body, json!({ "type": 5, "data": { "flags": 64 } }));
    let edit = platform.wait_for("itoken-p1-secretpart/messages/@original", 1);
    assert_eq!(edit.len(), 1, "{}", served.log());
    assert_eq!((edit[0].method.as_str(), edit[0].body["content"].as_str()), ("PATCH", Some("only you")));
    assert!(edit[0].body["flags"].is_null(), "{:?}", edit[0].body);
    assert!(platform.calls().iter().all(|c| c.method != "DELETE"), "{:?}", platform.calls());
}

#[test]
fn a_reply_with_an_embed_and_ephemeral_is_answered_with_them() {
    let platform = TestPlatform::start();
    let program = r##"command card "Card" {
    option colour "A colour"
    reply {
        text "Your card"
        ephemeral
        embed {
            title "Card of {user_name}"
            color "{option_colour}"
            timestamp "2026-11-24T14:05:00Z"
            field "Level" "3" inline
        }
    }
}
"##;
    let served = serve(program, &platform, None, &[], &[]);
    let options = json!([{ "name": "colour", "type": 3, "value": "#5865F2" }]);
    let answer = served.send(&platform, &command("e1", "card", options));
    let data = &answer.body["data"];
    assert_eq!((answer.body["type"].clone(), data["flags"].clone()), (json!(4), json!(64)), "{answer:?}");
    assert_eq!(data["content"], "Your card");
    let embed = &data["embeds"][0];
    assert!(embed["title"].as_str().is_some_and(|t| t.starts_with("Card of ")), "{embed}");
    assert_eq!((embed["color"].clone(), embed["type"].clone()), (json!(0x5865F2), json!("rich")));
    assert_eq!(embed["timestamp"].as_str().map(|t| t.starts_with("2026-11-24T14:05:00")), Some(true), "{embed}");
    assert_eq!(embed["fields"], json!([{ "name": "Level", "value": "3", "inline": true }]));
    assert_eq!(data["allowed_mentions"]["parse"], json!([]));
    // A colour a user typed that is not one is left out, with a warning;
    // the card is still sent.
    let options = json!([{ "name": "colour", "type": 3, "value": "blue" }]);
    let answer = served.send(&platform, &command("e2", "card", options));
    assert!(answer.body["data"]["embeds"][0]["color"].is_null(), "{answer:?}");
    assert!(answer.body["data"]["embeds"][0]["title"].is_string());
    let log = served.wait_log("B326");
    assert!(log.contains("B326"), "{log}");
}

#[test]
fn a_replayed_interaction_is_answered_once() {
    let platform = TestPlatform::start();
    let api = TestServer::start();
    let program = "command hit \"Hit\" {\n    api h {\n        method GET\n        url \"@API@/echo\"\n    }\n    reply \"hit\"\n}\n";
    let served = serve(program, &platform, Some(&api), &[], &[]);
    let bytes = serde_json::to_vec(&command("30", "hit", json!([]))).unwrap();
    let signature = platform.sign(&bytes, 0);
    let first = post(&served.interactions(), &bytes, Some(signature.clone()));
    let again = post(&served.interactions(), &bytes, Some(signature));
    assert_eq!((first.status, again.status), (200, 409));
    assert_eq!(api.received().len(), 1);
}

#[test]
fn runs_at_once_each_see_only_their_own_values_and_responses() {
    let platform = TestPlatform::start();
    let api = TestServer::start();
    let program = r#"command echo "Echo" {
    option word "A word" required
    api e {
        method GET
        url "@API@/echo"
        params { w = "{option_word}" }
    }
    reply "{option_word}={api_e[response.args.0.1]}"
}
"#;
    let served = Arc::new(serve(program, &platform, Some(&api), &[], &[]));
    let threads: Vec<_> = (0..40)
        .map(|i| {
            let (served, word) = (served.clone(), format!("w{i}"));
            let body = command(&format!("4{i:03}"), "echo", json!([{ "name": "word", "type": 3, "value": word }]));
            let bytes = serde_json::to_vec(&body).unwrap();
            let signature = platform.sign(&bytes, 0);
            std::thread::spawn(move || {
                let answer = post(&served.interactions(), &bytes, Some(signature));
                (word, answer.body["data"]["content"].as_str().unwrap_or_default().to_string())
            })
        })
        .collect();
    for t in threads {
        let (word, content) = t.join().unwrap();
        assert_eq!(content, format!("{word}={word}"));
    }
}

#[test]
fn a_failed_run_tells_the_user_nothing_and_the_log_everything_but_secrets() {
    let platform = TestPlatform::start();
    let program = r#"command fail "Fails" {
    api down {
        method GET
        url "http://127.0.0.1:9/<API_KEY>/x"
        headers { Authorization = "Bot {bot_token}" }
        allow bot_token
    }
    reply "never"
}
"#;
    let secret = "s3cret-value-0123456789";
    let token = "bot-token-abcdefghijklmnop";
    let env = [("BLKC_SECRET_API_KEY", secret), ("BLKC_BOT_TOKEN", token)];
    let served = serve(program, &platform, None, &["--log-format", "json"], &env);
    let answer = served.send(&platform, &command("50", "fail", json!([])));
    assert_eq!(answer.body["data"]["flags"], 64);
    let text = content(&answer);
    assert!(text.contains("went wrong") && !text.contains("B3") && !text.contains("127.0.0.1"), "{text}");
    let log = served.wait_log("\"outcome\":\"failed\"");
    let line = log.lines().find(|l| l.contains("\"outcome\":\"failed\"")).unwrap();
    let line: Value = serde_json::from_str(line).unwrap();
    assert_eq!(
        (line["level"].as_str(), line["command"].as_str(), line["id"].as_str()),
        (Some("ERROR"), Some("fail"), Some("50")),
        "{line}"
    );
    assert!(line["timestamp"].as_str().is_some_and(|t| t.ends_with('Z')), "{line}");
    assert!(line["error"].as_str().unwrap().starts_with("B301"), "{line}");
    for leaked in [secret, token, "itoken-50-secretpart"] {
        assert!(!log.contains(leaked), "the log holds {leaked}: {log}");
    }
}

#[test]
fn a_long_reply_is_split_and_every_message_limits_mentions() {
    let platform = TestPlatform::start();
    let program = "command long \"Long\" {\n    option text \"Text\" required\n    reply \"{option_text}\"\n}\n";
    let served = serve(program, &platform, None, &[], &[]);
    let long = "word ".repeat(900); // 4,500 characters
    let answer = served.send(&platform, &command("60", "long", json!([{ "name": "text", "type": 3, "value": long }])));
    let first = content(&answer).to_string();
    assert!(first.chars().count() <= 2000 && !first.is_empty());
    let follow = platform.wait_for("itoken-60-secretpart", 2);
    assert_eq!(follow.len(), 2);
    let all: String =
        std::iter::once(first).chain(follow.iter().map(|c| c.body["content"].as_str().unwrap().to_string())).collect();
    assert_eq!(all.split_whitespace().count(), 900);
    assert!(follow.iter().all(|c| c.body["allowed_mentions"]["parse"] == json!([])));
    assert!(served.wait_log("sent as 3 messages").contains("warn"));
}

#[test]
fn a_429_from_the_platform_is_waited_out_within_the_run() {
    let platform = TestPlatform::start();
    let program = r#"command post "Post" {
    api send {
        method POST
        url "{platform_url}/channels/888/messages"
        headers { Authorization = "Bot {bot_token}" }
        body { content = "hi" }
    }
    reply "status {api_send[status]}"
}
"#;
    let program = program.replace("{platform_url}", &platform.api());
    let program = format!("platform \"{}\"\n{program}", platform.api());
    platform.limit_once("/api/channels/888/messages", 0.4);
    let served = serve(&program, &platform, None, &[], &[("BLKC_BOT_TOKEN", "bot-token-abcdefghijklmnop")]);
    let answer = served.send(&platform, &command("70", "post", json!([])));
    assert_eq!(content(&answer), "status 200", "{answer:?}\n{}", served.log());
    let sent = platform.wait_for("/channels/888/messages", 2);
    assert_eq!(sent.len(), 2);
    assert!(sent[1].at.duration_since(sent[0].at) >= Duration::from_millis(380));
    assert_eq!(sent[1].authorization.as_deref(), Some("Bot bot-token-abcdefghijklmnop"));
}

#[test]
fn sighup_reloads_a_clean_file_and_keeps_the_old_one_for_a_broken_file() {
    let platform = TestPlatform::start();
    let served = serve("command v \"Version\" {\n    reply \"one\"\n}\n", &platform, None, &[], &[]);
    assert_eq!(content(&served.send(&platform, &command("80", "v", json!([])))), "one");
    std::fs::write(&served.file, "command v \"Version\" {\n    reply \"two\"\n}\n").unwrap();
    served.signal(libc::SIGHUP);
    served.wait_log("reloaded");
    assert_eq!(content(&served.send(&platform, &command("81", "v", json!([])))), "two");
    std::fs::write(&served.file, "command v \"Version\" {\n    reply \"three\"\n    api {\n}\n").unwrap();
    served.signal(libc::SIGHUP);
    let log = served.wait_log("reload refused");
    // Each problem is a line of its own with its parts as fields, never a
    // rendered report with box drawing.
    let problem = log.lines().find(|l| l.contains("code=B001")).unwrap_or_else(|| panic!("{log}"));
    assert!(problem.contains("line=3") && problem.contains("column=") && problem.contains("file="), "{problem}");
    assert!(!log.contains('╭') && !log.contains("\\n"), "{log}");
    assert!(log.contains("errors=1"), "{log}");
    assert_eq!(content(&served.send(&platform, &command("82", "v", json!([])))), "two");
}

#[test]
fn watch_reloads_when_the_file_changes() {
    let platform = TestPlatform::start();
    let served = serve("command v \"Version\" {\n    reply \"one\"\n}\n", &platform, None, &["--watch"], &[]);
    std::fs::write(&served.file, "command v \"Version\" {\n    reply \"two, longer\"\n}\n").unwrap();
    served.wait_log("reloaded");
    assert_eq!(content(&served.send(&platform, &command("85", "v", json!([])))), "two, longer");
}

#[test]
fn sigterm_lets_runs_in_flight_finish_and_deliver_then_exits_0() {
    let platform = TestPlatform::start();
    let api = TestServer::start();
    let program = "command slow \"Slow\" {\n    api w {\n        method GET\n        url \"@API@/slow/3200\"\n    }\n    reply \"done\"\n}\n";
    let mut served = serve(program, &platform, Some(&api), &[], &[]);
    let url = served.interactions();
    let bytes = serde_json::to_vec(&command("90", "slow", json!([]))).unwrap();
    let signature = platform.sign(&bytes, 0);
    let pending = std::thread::spawn(move || post(&url, &bytes, Some(signature)));
    while api.received().is_empty() {
        std::thread::sleep(Duration::from_millis(20));
    }
    served.signal(libc::SIGTERM);
    assert_eq!(pending.join().unwrap().body, json!({ "type": 5 }));
    let status = served.child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{}", served.log());
    let edits = platform.wait_for("itoken-90-secretpart/messages/@original", 1);
    assert_eq!(edits[0].body["content"], "done");
    // One run in flight, counted once (not again for its HTTP exchange).
    assert!(served.log().contains("draining in_flight=1"), "{}", served.log());
}

/// `blkc serve bot.blk` in `dir`, expected not to start: what it said.
fn refused_start(dir: &std::path::Path, platform: &TestPlatform) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_blkc"))
        .args(["serve", "bot.blk", "--listen", "127.0.0.1:0"])
        .env("BLKC_DISCORD_PUBLIC_KEY", platform.public_key())
        .env("NO_COLOR", "1")
        .current_dir(dir)
        .output()
        .unwrap()
}

#[test]
fn a_file_with_errors_does_not_start() {
    let platform = TestPlatform::start();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bot.blk"), "command x {\n    reply \"{nope}\"\n}\n").unwrap();
    let out = refused_start(dir.path(), &platform);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("B115") && stderr.contains("did not start"), "{stderr}");
    std::fs::write(dir.path().join("bot.blk"), HELLO).unwrap();
    // Neither a public key (the HTTP endpoint) nor a bot token (the Gateway).
    let out = Command::new(env!("CARGO_BIN_EXE_blkc"))
        .args(["serve", "bot.blk"])
        .env_remove("BLKC_DISCORD_PUBLIC_KEY")
        .env_remove("BLKC_BOT_TOKEN")
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("BLKC_BOT_TOKEN") && stderr.contains("BLKC_DISCORD_PUBLIC_KEY"), "{stderr}");
}

/// A newcomer's first bot with its API key not yet exported: the server
/// does not start (naming every secret missing and how to set it) rather
/// than failing the command for every user; a reload that would need a
/// secret without a value is refused the same way.
#[test]
fn a_secret_without_a_value_stops_the_start_and_refuses_a_reload() {
    let platform = TestPlatform::start();
    let dir = tempfile::tempdir().unwrap();
    let needs = "command w \"Weather\" {\n    api w {\n        method GET\n        url \"https://api.example.com/<API_KEY>/w\"\n        headers { X-Other = \"<OTHER_KEY>\" }\n    }\n    reply \"{api_w[status]}\"\n}\n";
    std::fs::write(dir.path().join("bot.blk"), needs).unwrap();
    let out = refused_start(dir.path(), &platform);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("B306") && stderr.contains("BLKC_SECRET_API_KEY") && stderr.contains("OTHER_KEY"),
        "{stderr}"
    );
    assert!(stderr.contains("did not start"), "{stderr}");

    let served = serve("command v \"Version\" {\n    reply \"one\"\n}\n", &platform, None, &[], &[]);
    std::fs::write(&served.file, needs).unwrap();
    served.signal(libc::SIGHUP);
    let log = served.wait_log("reload refused");
    assert!(log.contains("B306") && log.contains("API_KEY"), "{log}");
    assert_eq!(content(&served.send(&platform, &command("83", "v", json!([])))), "one");
}

pub(crate) fn deploy(dir: &std::path::Path, file: &str, args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_blkc"))
        .arg("deploy")
        .arg(file)
        .args(args)
        .env("NO_COLOR", "1")
        .env("COLUMNS", "100")
        .env_remove("BLKC_BOT_TOKEN")
        .env_remove("BLKC_APPLICATION_ID")
        .envs(env.iter().copied())
        .current_dir(dir)
        .output()
        .unwrap()
}

/// `blkc deploy --dry-run` of each fixture: the payload, or the diagnostics
/// of what the platform would not register.
#[test]
fn deploy_fixtures() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/deploy");
    let mut names: Vec<_> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    for name in names {
        let out = deploy(&dir, &name, &["--dry-run"], &[]);
        let text = format!(
            "exit: {:?}\n--- stdout\n{}--- stderr\n{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        if let Some(code) = name.strip_prefix("err_").and_then(|n| n.get(..4)) {
            assert_eq!(out.status.code(), Some(1), "{text}");
            assert!(text.contains(code), "{name} must report {code}: {text}");
        } else {
            assert_eq!(out.status.code(), Some(0), "{text}");
        }
        insta::assert_snapshot!(format!("deploy_{}", name.trim_end_matches(".blk")), text);
    }
}

#[test]
fn deploy_registers_every_command_in_one_put_with_the_bot_token() {
    let platform = TestPlatform::start();
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/deploy");
    let token = "bot-token-abcdefghijklmnop";
    let env = [("BLKC_BOT_TOKEN", token), ("BLKC_APPLICATION_ID", "4242")];
    let out = deploy(&dir, "every_option.blk", &["--platform", &platform.api()], &env);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("registered 1 command globally: 1 added (/remind)"));
    let out = deploy(&dir, "every_option.blk", &["--platform", &platform.api(), "--guild", "777"], &env);
    assert_eq!(out.status.code(), Some(0));
    // Each deploy reads what is registered, then registers in one PUT.
    let calls: Vec<_> = platform.calls().into_iter().filter(|c| c.method == "PUT").collect();
    assert_eq!(calls.len(), 2);
    assert_eq!(platform.calls().len(), 4);
    assert_eq!((calls[0].method.as_str(), calls[0].path.as_str()), ("PUT", "/api/applications/4242/commands"));
    assert_eq!(calls[1].path, "/api/applications/4242/guilds/777/commands");
    assert_eq!(calls[0].authorization.as_deref(), Some("Bot bot-token-abcdefghijklmnop"));
    let options = calls[0].body[0]["options"].as_array().unwrap();
    let types: Vec<u64> = options.iter().map(|o| o["type"].as_u64().unwrap()).collect();
    assert_eq!(types, [4, 3, 5, 6, 7, 10, 3, 8, 9, 11]);
    assert_eq!(options[0]["choices"], json!([{ "name": "Five", "value": 5 }, { "name": "A quarter", "value": 15 }]));
    assert_eq!(options[5]["choices"], json!([{ "name": "Half", "value": 0.5 }]));
    // Without a token or an application ID: told what to set, nothing sent.
    let out = deploy(&dir, "every_option.blk", &["--platform", &platform.api()], &[("BLKC_APPLICATION_ID", "4242")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("BLKC_BOT_TOKEN"));
    assert_eq!(platform.calls().len(), 4);
}

/// Two `blkc serve` processes of one bot, behind no balancer but the test:
/// they share a PostgreSQL store, every increment lands, and an
/// interaction delivered to both runs once.
#[test]
fn two_servers_sharing_postgres_count_every_interaction_once() {
    let Some(pg) = crate::support::postgres::server() else { return };
    let url = pg.store();
    let platform = TestPlatform::start();
    let program =
        "var hits per server = \"0\"\ncommand hit \"Hit\" {\n    save hits = hits + 1\n    reply \"{hits}\"\n}\n";
    let servers: Vec<Arc<Served>> =
        (0..2).map(|_| Arc::new(serve(program, &platform, None, &["--store", &url, "--workers", "16"], &[]))).collect();
    let (clients, each) = (8, 250);
    let threads: Vec<_> = (0..clients)
        .map(|c| {
            let servers = servers.clone();
            let signed: Vec<(Vec<u8>, (String, String))> = (0..each)
                .map(|i| {
                    let bytes = serde_json::to_vec(&command(&format!("{c}-{i}"), "hit", json!([]))).unwrap();
                    let signature = platform.sign(&bytes, 0);
                    (bytes, signature)
                })
                .collect();
            std::thread::spawn(move || {
                for (i, (bytes, signature)) in signed.into_iter().enumerate() {
                    let answer = post(&servers[i % 2].interactions(), &bytes, Some(signature));
                    assert_eq!(answer.status, 200, "{answer:?}");
                    assert!(answer.body["data"]["flags"].is_null(), "{answer:?}");
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let count = Command::new(env!("CARGO_BIN_EXE_blkc"))
        .args(["vars", "--store", &url, "get", "hits", "--server", "777"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&count.stdout).trim(), (clients * each).to_string());
    // One interaction, delivered to both: the second is a replay.
    let bytes = serde_json::to_vec(&command("twice", "hit", json!([]))).unwrap();
    let signature = platform.sign(&bytes, 0);
    let first = post(&servers[0].interactions(), &bytes, Some(signature.clone()));
    let second = post(&servers[1].interactions(), &bytes, Some(signature));
    assert_eq!((first.status, second.status), (200, 409));
    assert_eq!(first.body["data"]["content"], (clients * each + 1).to_string());
}

/// A counter every interaction adds one to, and shows.
const HITS: &str = "var hits = \"0\"\ncommand hit \"Hit\" {\n    save hits = hits + 1\n    reply \"{hits}\"\n}\n";

/// `kill -9` of one of two servers sharing PostgreSQL while interactions
/// are being answered: every save whose answer reached the platform is in
/// the store.
#[test]
fn killing_one_server_mid_load_loses_no_acknowledged_save() {
    let Some(pg) = crate::support::postgres::server() else { return };
    let url = pg.store();
    let platform = TestPlatform::start();
    let program = HITS;
    let survivor = Arc::new(serve(program, &platform, None, &["--store", &url], &[]));
    let mut victim = serve(program, &platform, None, &["--store", &url], &[]);
    let victim_url = victim.interactions();
    let acknowledged = Arc::new(std::sync::Mutex::new(Vec::new()));
    // What the victim answered, and what it did not once it was killed.
    let victim_answered = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let victim_failed = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let threads: Vec<_> = (0..4)
        .map(|c| {
            let (survivor, victim_url, acknowledged) = (survivor.clone(), victim_url.clone(), acknowledged.clone());
            let (answered, failed) = (victim_answered.clone(), victim_failed.clone());
            let signed: Vec<(Vec<u8>, (String, String))> = (0..150)
                .map(|i| {
                    let bytes = serde_json::to_vec(&command(&format!("k{c}-{i}"), "hit", json!([]))).unwrap();
                    let signature = platform.sign(&bytes, 0);
                    (bytes, signature)
                })
                .collect();
            std::thread::spawn(move || {
                for (i, (bytes, signature)) in signed.into_iter().enumerate() {
                    let to_victim = i % 2 == 1;
                    let to = if to_victim { victim_url.clone() } else { survivor.interactions() };
                    // A killed server answers nothing: the connection fails.
                    let answer = crate::support::platform::try_post(&to, &bytes, Some(signature));
                    if to_victim {
                        let counter = if answer.is_some() { &answered } else { &failed };
                        counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    }
                    if let Some(answer) = answer {
                        if let Some(n) = answer.body["data"]["content"].as_str().and_then(|c| c.parse::<u64>().ok()) {
                            acknowledged.lock().unwrap().push(n);
                        }
                    }
                }
            })
        })
        .collect();
    // Killed once it is answering: mid-load, not before or after it.
    let until = Instant::now() + Duration::from_secs(30);
    while victim_answered.load(std::sync::atomic::Ordering::SeqCst) < 20 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(5));
    }
    // SAFETY: kills our own child process.
    unsafe {
        libc::kill(victim.child.id() as libc::pid_t, libc::SIGKILL);
    }
    let _ = victim.child.wait();
    for t in threads {
        let _ = t.join();
    }
    let acknowledged = acknowledged.lock().unwrap().clone();
    let stored =
        Command::new(env!("CARGO_BIN_EXE_blkc")).args(["vars", "--store", &url, "get", "hits"]).output().unwrap();
    let stored: u64 = String::from_utf8_lossy(&stored.stdout).trim().parse().unwrap();
    // Every acknowledged save is counted: at least as many as were
    // acknowledged, and at least the highest value an answer showed (a
    // reply reads the counter after its own save, so runs saving at once may
    // show the same later value).
    assert!(acknowledged.len() as u64 <= stored, "{} acknowledged, {stored} stored", acknowledged.len());
    assert!(acknowledged.iter().all(|n| *n <= stored));
    assert!(acknowledged.len() >= 300, "the survivor went on answering: {}", acknowledged.len());
    // The kill landed mid-load: the victim had answered, and then some
    // requests to it failed.
    let ordering = std::sync::atomic::Ordering::SeqCst;
    let (answered, failed) = (victim_answered.load(ordering), victim_failed.load(ordering));
    assert!(answered >= 20 && failed > 0, "the victim answered {answered} and failed {failed}");
}

/// Processes sharing a PostgreSQL store share the platform's global rate
/// limit evenly, and follow processes starting and stopping (and being
/// killed, once they stop checking in).
#[test]
fn servers_sharing_postgres_share_the_global_rate_limit() {
    let Some(pg) = crate::support::postgres::server() else { return };
    let url = pg.store();
    let platform = TestPlatform::start();
    let program = "command hit \"Hit\" {\n    reply \"hi\"\n}\n";
    let gauge = |s: &Served| -> u64 {
        let text = ureq::get(&format!("{}/metrics", s.url)).call().unwrap().body_mut().read_to_string().unwrap();
        let line = text.lines().find(|l| l.starts_with("blkc_global_rate_limit ")).unwrap().to_string();
        line.rsplit(' ').next().unwrap().parse().unwrap()
    };
    // Waits (up to 10 s) for every server's share to be `share`.
    let settle = |servers: &[&Served], share: u64| {
        let until = Instant::now() + Duration::from_secs(10);
        while servers.iter().any(|s| gauge(s) != share) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(50));
        }
        let shares: Vec<u64> = servers.iter().map(|s| gauge(s)).collect();
        assert!(shares.iter().all(|s| *s == share), "{shares:?}, not {share}");
    };
    let first = serve(program, &platform, None, &["--store", &url], &[]);
    assert!(first.wait_log("global_rate_limit=").contains("global_rate_limit=50"), "{}", first.log());
    let second = serve(program, &platform, None, &["--store", &url], &[]);
    // The newcomer keeps to its share from its first request.
    assert!(second.wait_log("global_rate_limit=").contains("global_rate_limit=25"), "{}", second.log());
    settle(&[&first, &second], 25);
    let mut third = serve(program, &platform, None, &["--store", &url, "--global-rate-limit", "90"], &[]);
    assert!(third.wait_log("global_rate_limit=").contains("global_rate_limit=30"), "{}", third.log());
    settle(&[&first, &second], 16);
    assert!(first.wait_log("processes=3 per_second=16").contains("processes=3 per_second=16"));
    // Killed: its share returns once it has not checked in for 2 s.
    third.signal(libc::SIGKILL);
    let _ = third.child.wait();
    settle(&[&first, &second], 25);
    // Stopped: at once.
    second.signal(libc::SIGTERM);
    settle(&[&first], 50);
}

/// The database drops every connection (a restart, a fail-over): the next
/// interactions are answered on new ones, and nothing saved is lost.
#[test]
fn a_server_sharing_postgres_outlives_its_connections_being_dropped() {
    let Some(pg) = crate::support::postgres::server() else { return };
    let url = pg.store();
    let platform = TestPlatform::start();
    let program = HITS;
    let served = serve(program, &platform, None, &["--store", &url, "--workers", "4"], &[]);
    let hit = |id: &str| served.send(&platform, &command(id, "hit", json!([])));
    for i in 0..8 {
        assert_eq!(hit(&format!("before-{i}")).body["data"]["content"], (i + 1).to_string());
    }
    let database = url.rsplit('/').next().unwrap().to_string();
    let mut admin = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let dropped: i64 = admin
        .query_one(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
            &[&database],
        )
        .unwrap()
        .get(0);
    assert!(dropped >= 1, "the server's connections were open");
    for i in 0..8 {
        let answer = hit(&format!("after-{i}"));
        assert_eq!(answer.body["data"]["content"], (i + 9).to_string(), "{answer:?}\n{}", served.log());
    }
}

/// An SQLite store serves one process: a second `blkc serve` on it is
/// refused (it could not know what the first answered), until the first
/// ends, however it ends. `blkc run` and `blkc vars` are not held back.
#[test]
fn a_second_server_on_one_sqlite_store_is_refused_until_the_first_ends() {
    let platform = TestPlatform::start();
    let shared = tempfile::tempdir().unwrap();
    let store = shared.path().join("bot.sqlite3");
    let store = store.to_str().unwrap();
    let program = HITS;
    let mut first = serve(program, &platform, None, &["--store", store], &[]);
    assert_eq!(first.send(&platform, &command("a", "hit", json!([]))).body["data"]["content"], "1");
    let second = Command::new(env!("CARGO_BIN_EXE_blkc"))
        .args(["serve", "bot.blk", "--listen", "127.0.0.1:0", "--store", store])
        .env("BLKC_DISCORD_PUBLIC_KEY", platform.public_key())
        .current_dir(first.file.parent().unwrap())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(3), "{said}");
    assert!(said.starts_with("error[B311]: "), "{said}");
    let pid = first.child.id().to_string();
    assert!(said.contains("another `blkc serve`") && said.contains(&pid) && said.contains("PostgreSQL"), "{said}");
    // The store error's kind gives its help line.
    assert!(said.contains("error[B311]") && said.contains("help: stop the other `blkc serve`"), "{said}");
    let out =
        Command::new(env!("CARGO_BIN_EXE_blkc")).args(["vars", "--store", store, "get", "hits"]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "1\n");
    // Killed: the claim goes with it.
    first.signal(libc::SIGKILL);
    let _ = first.child.wait();
    let next = serve(program, &platform, None, &["--store", store], &[]);
    assert_eq!(next.send(&platform, &command("b", "hit", json!([]))).body["data"]["content"], "2");
}

/// PostgreSQL itself crashes mid-load (every process at once, nothing
/// written out; fsync on) and starts again: no save whose answer went out
/// is lost, runs during the outage fail with a short message, and the
/// server answers on new connections once the database is back.
#[test]
fn a_database_crash_mid_load_loses_no_acknowledged_save_and_the_server_recovers() {
    let Some(pg) = crate::support::postgres::durable_server() else { return };
    let url = pg.store();
    let platform = Arc::new(TestPlatform::start());
    let program = HITS;
    let served = Arc::new(serve(program, &platform, None, &["--store", &url], &[]));
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let acknowledged = Arc::new(std::sync::Mutex::new(Vec::new()));
    let failed = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let clients: Vec<_> = (0..4)
        .map(|c| {
            let (served, stop, acknowledged, failed) =
                (served.clone(), stop.clone(), acknowledged.clone(), failed.clone());
            let platform = platform.clone();
            std::thread::spawn(move || {
                let mut i = 0;
                while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                    i += 1;
                    let bytes = serde_json::to_vec(&command(&format!("c{c}-{i}"), "hit", json!([]))).unwrap();
                    let answer = post(&served.interactions(), &bytes, Some(platform.sign(&bytes, 0)));
                    match answer.body["data"]["content"].as_str().and_then(|t| t.parse::<u64>().ok()) {
                        Some(n) => acknowledged.lock().unwrap().push(n),
                        None => {
                            failed.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        }
                    }
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(400));
    let before = acknowledged.lock().unwrap().len();
    pg.crash();
    std::thread::sleep(Duration::from_millis(300));
    pg.restart();
    std::thread::sleep(Duration::from_millis(400));
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    for c in clients {
        c.join().unwrap();
    }
    // Answered again, on new connections.
    for i in 0..5 {
        let answer = served.send(&platform, &command(&format!("after-{i}"), "hit", json!([])));
        assert!(content(&answer).parse::<u64>().is_ok(), "{answer:?}\n{}", served.log());
    }
    let acknowledged = acknowledged.lock().unwrap().clone();
    let out = Command::new(env!("CARGO_BIN_EXE_blkc")).args(["vars", "--store", &url, "get", "hits"]).output().unwrap();
    let stored: u64 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    assert!(before > 0, "saves were acknowledged before the crash");
    assert!(failed.load(std::sync::atomic::Ordering::SeqCst) > 0, "runs during the outage failed");
    assert!(acknowledged.len() as u64 + 5 <= stored, "{} acknowledged, {stored} stored", acknowledged.len());
    assert!(acknowledged.iter().all(|n| *n <= stored));
    assert!(served.log().contains("B311"), "the log says why runs failed");
}

/// A PostgreSQL store that cannot serve (no blkc store in it, nobody
/// listening) stops the server before it starts, with B311 and what to do.
#[test]
fn a_server_whose_postgres_store_cannot_serve_does_not_start() {
    let platform = TestPlatform::start();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bot.blk"), "command hit \"Hit\" {\n    reply \"hi\"\n}\n").unwrap();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut stores = vec![(format!("postgres://blkc:hunter2@127.0.0.1:{closed}/bot"), "cannot connect")];
    if let Some(pg) = crate::support::postgres::server() {
        stores.push((pg.database(), "holds no blkc store"));
    }
    for (store, says) in stores {
        let out = Command::new(env!("CARGO_BIN_EXE_blkc"))
            .args(["serve", "bot.blk", "--listen", "127.0.0.1:0", "--store", &store])
            .env("BLKC_DISCORD_PUBLIC_KEY", platform.public_key())
            .current_dir(dir.path())
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{said}");
        assert!(said.starts_with("error[B311]: ") && said.contains(says), "{said}");
        assert!(!said.contains("hunter2"), "{said}");
    }
}

/// An option's bounds: registered as the platform's fields (and found the
/// same on a second deploy), and held in every run: a value outside them
/// is refused before the run, whatever sent it.
#[test]
fn option_bounds_are_registered_and_a_value_outside_them_never_runs() {
    let platform = TestPlatform::start();
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/deploy");
    let env = [("BLKC_BOT_TOKEN", "bot-token-abcdefghijklmnop"), ("BLKC_APPLICATION_ID", "4242")];
    for said in ["1 added (/roll)", "1 unchanged"] {
        let out = deploy(&dir, "bounds.blk", &["--platform", &platform.api()], &env);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success() && stderr.contains(said), "{stderr}");
    }
    let put = platform.calls().into_iter().find(|c| c.method == "PUT").unwrap();
    let options = &put.body[0]["options"];
    assert_eq!((options[0]["min_value"].clone(), options[0]["max_value"].clone()), (json!(2), json!(120)));
    assert_eq!((options[1]["min_value"].clone(), options[1]["max_value"].clone()), (json!(-0.5), json!(2.5)));
    assert_eq!((options[2]["min_length"].clone(), options[2]["max_length"].clone()), (json!(2), json!(32)));
    let program = std::fs::read_to_string(dir.join("bounds.blk")).unwrap();
    let served = serve(&program, &platform, None, &[], &[]);
    let roll = |id: &str, sides: i64, label: &str| {
        let options =
            json!([{ "name": "sides", "type": 4, "value": sides }, { "name": "label", "type": 3, "value": label }]);
        served.send(&platform, &command(id, "roll", options))
    };
    assert_eq!(content(&roll("b1", 6, "ok")), "Rolled a d6");
    for (id, sides, label, why) in [("b2", 121, "ok", "at most 120"), ("b3", 6, "x", "at least 2 characters")] {
        let answer = roll(id, sides, label);
        assert_ne!(content(&answer), format!("Rolled a d{sides}"), "{answer:?}");
        let log = served.wait_interaction(id);
        assert!(log.contains(why), "{log}");
    }
}

/// examples/names.blk: commands and options named in five scripts are
/// registered as written, and run when the platform sends those names.
#[test]
fn names_in_five_scripts_deploy_and_run() {
    let platform = TestPlatform::start();
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples");
    let env = [("BLKC_BOT_TOKEN", "bot-token-abcdefghijklmnop"), ("BLKC_APPLICATION_ID", "4242")];
    let out = deploy(&dir, "names.blk", &["--platform", &platform.api()], &env);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let put = platform.calls().into_iter().find(|c| c.method == "PUT").unwrap();
    let names: Vec<&str> = put.body.as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["ping-pong", "café", "привет", "日本語", "नमस्ते", "don't"]);
    assert_eq!(put.body[2]["options"][0]["name"], "имя");
    assert_eq!(put.body[5]["options"][0]["name"], "what-not");
    // What is registered reads back as the same commands: a second deploy
    // changes nothing.
    let again = deploy(&dir, "names.blk", &["--platform", &platform.api()], &env);
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("6 unchanged"),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    let program = std::fs::read_to_string(dir.join("names.blk")).unwrap();
    let served = serve(&program, &platform, None, &[], &[]);
    let text = |o: &str| json!([{ "name": o, "type": 3, "value": "Мир" }]);
    for (id, name, options, said) in [
        ("n1", "ping-pong", json!([]), "pong"),
        ("n2", "café", json!([{ "name": "taille", "type": 3, "value": "grand" }]), "Un grand café ☕☕"),
        ("n3", "привет", text("имя"), "Привет, Мир!"),
        ("n4", "日本語", text("名前"), "こんにちは、Мирさん!"),
        ("n5", "नमस्ते", json!([]), "नमस्ते 🙏"),
        ("n6", "don't", json!([{ "name": "what-not", "type": 3, "value": "panic" }]), "Don't panic."),
    ] {
        assert_eq!(content(&served.send(&platform, &command(id, name, options))), said, "/{name}");
    }
}

/// examples/moderation.blk: every registration line round-trips through
/// the loopback platform (a second deploy changes nothing), and a change
/// to one is named.
#[test]
fn registration_lines_round_trip_and_a_change_is_named() {
    let platform = TestPlatform::start();
    let dir = tempfile::tempdir().unwrap();
    let example = std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/moderation.blk"));
    let example = example.unwrap();
    std::fs::write(dir.path().join("m.blk"), &example).unwrap();
    let env = [("BLKC_BOT_TOKEN", "bot-token-abcdefghijklmnop"), ("BLKC_APPLICATION_ID", "4242")];
    let deploy_says = |said: &str| {
        let out = deploy(dir.path(), "m.blk", &["--platform", &platform.api()], &env);
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(out.status.success() && stderr.contains(said), "wanted {said:?}: {stderr}");
    };
    deploy_says("4 added (/warn, /timeout, /kick, /ban)");
    let put = platform.calls().into_iter().find(|c| c.method == "PUT").unwrap();
    let warn = &put.body[0];
    // moderate_members (1 << 40) and kick_members (1 << 1), as a string.
    assert_eq!(warn["default_member_permissions"], json!(((1u64 << 40) | 2).to_string()));
    assert_eq!((warn["contexts"].clone(), warn["integration_types"].clone()), (json!([0]), json!([0])));
    assert_eq!(warn["name_localizations"], json!({ "de": "verwarnen", "fr": "avertir" }));
    assert_eq!(warn["description_localizations"]["fr"], "Avertir un membre");
    assert_eq!(warn["options"][0]["name_localizations"], json!({ "de": "mitglied", "fr": "membre" }));
    assert_eq!(warn["options"][2]["channel_types"], json!([0, 15]));
    assert!(warn.get("nsfw").is_none(), "{warn}");
    deploy_says("4 unchanged");
    for (from, to, what) in [
        ("moderate_members, kick_members", "moderate_members", "permissions"),
        ("contexts server", "contexts server, bot_dm", "contexts"),
        ("\"verwarnen\"", "\"abmahnen\"", "locales"),
        ("in text, forum", "in text", "options"),
        // A line taken out is a change back to the platform's default.
        ("    contexts server, bot_dm\n", "", "contexts"),
        ("    installs server\n", "", "nothing"),
    ] {
        // (`/warn` is the file's first command: the first match is its.)
        let changed = std::fs::read_to_string(dir.path().join("m.blk")).unwrap().replacen(from, to, 1);
        std::fs::write(dir.path().join("m.blk"), changed).unwrap();
        // (`installs server` is the default: taking it out changes nothing.)
        deploy_says(&if what == "nothing" { "4 unchanged".to_string() } else { format!("1 changed (/warn: {what})") });
        deploy_says("4 unchanged");
    }
}

/// examples/menus.blk: a user command and a message command are registered
/// in their menus, and run with what they were chosen on; the user a user
/// command was chosen on may be pinged, a message's author may not.
#[test]
fn context_menu_commands_deploy_and_run_with_their_targets() {
    let platform = TestPlatform::start();
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples");
    let env = [("BLKC_BOT_TOKEN", "bot-token-abcdefghijklmnop"), ("BLKC_APPLICATION_ID", "4242")];
    let out = deploy(&dir, "menus.blk", &["--platform", &platform.api()], &env);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(stderr.contains("2 added (High five (user menu), Quote (message menu))"), "{stderr}");
    let put = platform.calls().into_iter().find(|c| c.method == "PUT").unwrap();
    assert_eq!(put.body[0]["type"], 2);
    assert_eq!(put.body[1]["type"], 3);
    assert_eq!((put.body[0]["name"].clone(), put.body[0]["description"].clone()), (json!("High five"), json!("")));
    let again = deploy(&dir, "menus.blk", &["--platform", &platform.api()], &env);
    assert!(String::from_utf8_lossy(&again.stderr).contains("2 unchanged"));
    let program = std::fs::read_to_string(dir.join("menus.blk")).unwrap();
    let served = serve(&program, &platform, None, &[], &[]);
    let mut five = command("m1", "High five", json!([]));
    five["data"]["type"] = json!(2);
    five["data"]["target_id"] = json!("2002");
    five["data"]["resolved"] = json!({
        "users": { "2002": { "id": "2002", "username": "grace", "global_name": "Grace" } },
        "members": { "2002": { "nick": "Admiral" } }
    });
    let answer = served.send(&platform, &five);
    assert_eq!(content(&answer), "<@1001> high-fives <@2002>!");
    assert_eq!(answer.body["data"]["allowed_mentions"]["users"], json!(["1001", "2002"]), "{answer:?}");
    let mut quote = command("m2", "Quote", json!([]));
    quote["data"]["type"] = json!(3);
    quote["data"]["target_id"] = json!("3003");
    quote["data"]["resolved"] = json!({ "messages": { "3003": {
        "id": "3003", "content": "Ship it <@4004>", "author": { "id": "4004", "username": "linus" }
    } } });
    let answer = served.send(&platform, &quote);
    let embed = &answer.body["data"]["embeds"][0];
    assert_eq!(
        (embed["description"].as_str(), embed["footer"]["text"].as_str()),
        (Some("Ship it <@4004>"), Some("— linus"))
    );
    assert_eq!(answer.body["data"]["allowed_mentions"]["users"], json!(["1001"]), "{answer:?}");
    // A user command's interaction that names no user: the run fails, and
    // says why in the log.
    let mut bare = command("m3", "High five", json!([]));
    bare["data"]["type"] = json!(2);
    let answer = served.send(&platform, &bare);
    assert_eq!(content(&answer), FAILED_WORD);
    assert!(served.wait_interaction("m3").contains("names no user"));
    // A target that is no id is no target.
    let mut odd = five.clone();
    odd["id"] = json!("m5");
    odd["token"] = json!("itoken-m5-secretpart");
    odd["data"]["target_id"] = json!("2002/../x");
    odd["data"]["resolved"]["users"] = json!({ "2002/../x": { "id": "2002/../x", "username": "mallory" } });
    assert_eq!(content(&served.send(&platform, &odd)), FAILED_WORD);
    // The same name as a slash command is not the menu's command.
    let slash = served.send(&platform, &command("m4", "High five", json!([])));
    assert_ne!(content(&slash), "<@1001> high-fives <@2002>!");
}

/// `require` lines: a member without the role, in another channel, or
/// without the permissions is told why, privately, and nothing runs; a
/// role kept in a secret is never named; an administrator has every
/// permission; serve will not start without the secret.
#[test]
fn a_guard_refuses_a_member_without_the_role_and_nothing_runs() {
    let platform = TestPlatform::start();
    let program = r#"var purges = 0

command purge "Delete messages" {
    require roles "<MOD_ROLE>", "2222222222222222222"
    require channels "888"
    require permissions manage_messages
    save purges = purges + 1
    reply "Purged ({purges})."
}
"#;
    let served = serve(program, &platform, None, &[], &[("BLKC_SECRET_MOD_ROLE", "1111111111111111111")]);
    let send = |id: &str, roles: Value, permissions: &str, channel: &str| {
        let mut body = command(id, "purge", json!([]));
        body["member"]["roles"] = roles;
        body["member"]["permissions"] = json!(permissions);
        body["channel_id"] = json!(channel);
        served.send(&platform, &body)
    };
    let manage_messages = (1u64 << 13).to_string();
    let answer = send("g1", json!(["1111111111111111111"]), &manage_messages, "888");
    assert_eq!(content(&answer), "Purged (1).");
    // No role: told so privately, the role from the secret not named.
    let answer = send("g2", json!(["3333333333333333333"]), &manage_messages, "888");
    assert_eq!(content(&answer), "You need a role this requires.");
    assert_eq!(answer.body["data"]["flags"], 64, "{answer:?}");
    assert!(!answer.body.to_string().contains("1111111111111111111"), "{answer:?}");
    assert_eq!(answer.body["data"]["allowed_mentions"]["parse"], json!([]), "{answer:?}");
    // Another channel: the channel written in the file is named.
    let answer = send("g3", json!(["2222222222222222222"]), &manage_messages, "999");
    assert_eq!(content(&answer), "This can't be used in this channel: <#888>.");
    // Without the permission; then an administrator.
    let answer = send("g4", json!(["2222222222222222222"]), "0", "888");
    assert_eq!(content(&answer), "You need the Manage Messages permission to use this.");
    let administrator = (1u64 << 3).to_string();
    assert_eq!(content(&send("g5", json!(["2222222222222222222"]), &administrator, "888")), "Purged (2).");
    // In a direct message there is no member.
    let mut dm = command("g6", "purge", json!([]));
    dm.as_object_mut().unwrap().remove("member");
    dm["user"] = json!({ "id": "1001", "username": "ada" });
    assert_eq!(content(&served.send(&platform, &dm)), "This can only be used in a server.");
    assert!(served.wait_interaction("g2").contains("outcome=guarded"), "{}", served.wait_interaction("g2"));
    // The operator's log says which line refused.
    let log = served.wait_log("guard=channels");
    assert!(log.lines().any(|l| l.contains("id=g3") && l.contains("guard=channels")), "{log}");
    drop(served);
    // The secret a guard reads must be set, as any secret.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bot.blk"), program).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_blkc"))
        .args(["serve", "bot.blk", "--platform", &platform.api(), "--listen", "127.0.0.1:0"])
        .env("BLKC_DISCORD_PUBLIC_KEY", platform.public_key())
        .env_remove("BLKC_BOT_TOKEN")
        .env_remove("BLKC_SECRET_MOD_ROLE")
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("MOD_ROLE"), "{out:?}");
}
