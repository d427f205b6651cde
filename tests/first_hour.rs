//! The first hour of a bot: each friction a newcomer met, as the exact
//! command they ran, now doing the right thing.

use std::process::Command;

use crate::support::cli::run_json;

fn blkc(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_blkc"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("COLUMNS", "100")
        .env_remove("BLKC_BOT_TOKEN")
        .env_remove("BLKC_STORE")
        .output()
        .unwrap()
}

fn text(out: &[u8]) -> String {
    String::from_utf8_lossy(out).into_owned()
}

/// `var points = 0` and `var points per user = 0` check clean, and a saved
/// count starts from the number.
#[test]
fn a_number_is_a_default() {
    let dir = tempfile::tempdir().unwrap();
    let file = "var points per user = 0\nvar bonus = 1.50\nvar tags = [\"a{b}\", 2, true, null]\n\n\
        command award \"Give points\" {\n    save points = points + 1 + bonus\n    reply \"{points} {tags}\"\n}\n";
    std::fs::write(dir.path().join("bot.blk"), file).unwrap();
    let out = blkc(dir.path(), &["check", "bot.blk"]);
    assert!(out.status.success(), "{}{}", text(&out.stdout), text(&out.stderr));
    let out = blkc(dir.path(), &["fmt", "--check", "bot.blk"]);
    assert!(out.status.success(), "the default is kept as written: {}", text(&out.stdout));
    let ids = ["--command", "award", "--var", "user_id=1", "--var", "server_id=2"];
    let first = run_json(dir.path(), file, &ids, &[]);
    assert_eq!(first.replies(), ["2.5 [\"a{b}\",2,true,null]"], "{}", first.stderr);
    let second = run_json(dir.path(), file, &ids, &[]);
    assert_eq!(second.replies(), ["5 [\"a{b}\",2,true,null]"], "{}", second.stderr);
}

/// A bare word as a default gets the message that names what a default can
/// be, and the fix that quotes it.
#[test]
fn a_bare_word_default_says_what_a_default_is() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bot.blk"), "var greeting per user = hello\n").unwrap();
    let out = blkc(dir.path(), &["check", "bot.blk"]);
    let err = text(&out.stderr) + &text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("a `var`'s default is a value"), "{err}");
    assert!(err.contains("\"hello\""), "the fix quotes it: {err}");
}

/// An optional option left out of a shell run is empty, as the platform and
/// `serve` give it: the request a shell run sends is the one a user's
/// would. `--missing text` asks for the variable's own text instead.
#[test]
fn an_optional_option_left_out_is_empty_as_under_serve() {
    let api = crate::support::server::TestServer::start();
    let dir = tempfile::tempdir().unwrap();
    let file = format!(
        "command forecast \"Weather\" {{\n    option days \"How many days\" integer\n    api f {{\n        method GET\n        \
         url \"{}/echo\"\n        params {{ days = \"{{option_days}}\" }}\n    }}\n    reply \"sent {{api_f[response.query]}}\"\n}}\n",
        api.base()
    );
    let allow = ["--command", "forecast", "--allow-private-network"];
    let ran = run_json(dir.path(), &file, &allow, &[]);
    assert_eq!(ran.replies(), ["sent days="], "{:?} {}", ran.events, ran.stderr);
    assert!(ran.warnings().is_empty(), "nothing is missing: {:?}", ran.warnings());
    let args = [&allow[..], &["--missing", "text"]].concat();
    let ran = run_json(dir.path(), &file, &args, &[]);
    assert_eq!(ran.replies(), ["sent days=%7Boption_days%7D"], "{}", ran.stderr);
    assert_eq!(ran.warnings(), ["B313"]);
}

/// A dry run of a bot with a per-user counter needs no ids (it keeps
/// nothing), and `{user_mention}` follows from `--var user_id`.
#[test]
fn a_dry_run_of_a_scoped_bot_needs_no_ids_and_the_mention_follows_the_id() {
    let dir = tempfile::tempdir().unwrap();
    let file = "var points per user = 0\n\ncommand work \"Earn points\" {\n    save points = points + 10\n    \
        reply \"{user_mention}: {points} points\"\n}\n";
    // A dry run saves nothing (so reads the default after its save); an
    // offline run saves into a store it throws away.
    for (flag, points) in [("--dry-run", 0), ("--offline", 10)] {
        let ran = run_json(dir.path(), file, &["--command", "work", flag], &[]);
        assert_eq!(ran.code, 0, "{flag}: {:?} {}", ran.events, ran.stderr);
        assert_eq!(ran.replies(), [format!("{{user_mention}}: {points} points")], "{flag}");
    }
    let ids = ["--command", "work", "--var", "user_id=80351110224678912", "--var", "server_id=613425648685547541"];
    let ran = run_json(dir.path(), file, &ids, &[]);
    assert_eq!(ran.replies(), ["<@80351110224678912>: 10 points"], "{}", ran.stderr);
    // A run that keeps its saves still needs the ids.
    let ran = run_json(dir.path(), file, &["--command", "work"], &[]);
    assert_eq!(ran.error_code(), "B325");
}

/// Two commands with a block of the same name each save a sample of their
/// own; a block's default sample never takes a path another block's
/// `sample` line names, and an explicit one that does is refused.
#[test]
fn samples_saved_by_blkc_test_never_collide() {
    let api = crate::support::server::TestServer::start();
    let dir = tempfile::tempdir().unwrap();
    let file = "command one \"One\" {\n    api w { method GET url \"@S@/echo?from=one\" }\n    \
        api a { method GET url \"@S@/echo?from=a\" sample \"samples/b.json\" }\n}\n\n\
        command other \"Other\" {\n    api w { method GET url \"@S@/echo?from=other\" }\n    \
        api b { method GET url \"@S@/echo?from=b\" }\n}\n";
    std::fs::write(dir.path().join("bot.blk"), file.replace("@S@", &api.base())).unwrap();
    let test = |args: &[&str]| {
        let all = [&["test", "bot.blk"][..], args, &["--save", "--allow-private-network"]].concat();
        blkc(dir.path(), &all)
    };
    let read = |name: &str| std::fs::read_to_string(dir.path().join("samples").join(name)).unwrap_or_default();
    for (tree, file) in [("one", "one.w.json"), ("other", "other.w.json")] {
        let out = test(&["w", "--command", tree]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert!(read(file).contains(&format!("from={tree}")), "{file}: {}", read(file));
    }
    assert!(test(&["a"]).status.success());
    let out = test(&["b"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(read("b.json").contains("from=a"), "block a's sample is kept: {}", read("b.json"));
    assert!(read("other.b.json").contains("from=b"), "{}", read("other.b.json"));
    let out = blkc(dir.path(), &["test", "bot.blk", "b", "--save", "samples/b.json", "--allow-private-network"]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("is the sample of block `a`"), "{}", text(&out.stderr));
    assert!(read("b.json").contains("from=a"));
}

/// `blkc vars list --store PATH`: the store (and the scope flags) may come
/// after the action, where a newcomer writes them.
#[test]
fn the_store_flag_goes_after_the_action_too() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("points.sqlite3");
    let store = store.to_str().unwrap();
    let set = blkc(dir.path(), &["vars", "set", "points", "7", "--store", store, "--user", "1", "--server", "2"]);
    assert!(set.status.success(), "{}", text(&set.stderr));
    for args in [&["vars", "list", "--store", store][..], &["vars", "--store", store, "list"][..]] {
        let out = blkc(dir.path(), args);
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        assert!(text(&out.stdout).contains("points"), "{args:?}: {}", text(&out.stdout));
    }
    let got = blkc(dir.path(), &["vars", "get", "points", "--user", "1", "--server", "2", "--store", store]);
    assert_eq!(text(&got.stdout).trim(), "7", "{}", text(&got.stderr));
}

/// `check --fix` of an option named in capitals renames it and every place
/// the command reads it, so the fixed file checks clean.
#[test]
fn an_upper_case_option_is_fixed_with_its_references() {
    let dir = tempfile::tempdir().unwrap();
    let file = "command Roll \"Roll a die\" {\n    option Sides \"How many sides\" integer\n    \
        save last = option_Sides * 2\n    reply \"{option_Sides} sides\"\n}\n";
    std::fs::write(dir.path().join("bot.blk"), file).unwrap();
    let out = blkc(dir.path(), &["check", "--fix", "bot.blk"]);
    let fixed = std::fs::read_to_string(dir.path().join("bot.blk")).unwrap();
    assert!(out.status.success(), "{}{}\n{fixed}", text(&out.stdout), text(&out.stderr));
    assert_eq!(
        fixed,
        "command roll \"Roll a die\" {\n    option sides \"How many sides\" integer\n    \
         save last = option_sides * 2\n    reply \"{option_sides} sides\"\n}\n"
    );
}

/// A deploy reads what is registered and says what it adds, changes and
/// removes; a file without commands does not wipe the registered ones
/// unless `--remove-all` says so.
#[test]
fn a_deploy_says_what_it_changes_and_never_wipes_by_accident() {
    let platform = crate::support::platform::TestPlatform::start();
    let dir = tempfile::tempdir().unwrap();
    let deploy = |file: &str, extra: &[&str]| {
        std::fs::write(dir.path().join("bot.blk"), file).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_blkc"))
            .args(["deploy", "bot.blk", "--platform", &platform.api(), "--guild", "777"])
            .args(extra)
            .current_dir(dir.path())
            .env("NO_COLOR", "1")
            .env("BLKC_BOT_TOKEN", "bot-token-abcdefghijklmnop")
            .env("BLKC_APPLICATION_ID", "4242")
            .output()
            .unwrap();
        (out.status.code(), text(&out.stderr))
    };
    let path = "/api/applications/4242/guilds/777/commands";
    let two = "command roll \"Roll a die\" {\n    option sides \"How many sides\" integer\n    reply \"{option_sides}\"\n}\n\n\
        command ping \"Ping\" {\n    reply \"pong\"\n}\n";
    let (code, said) = deploy(two, &[]);
    assert_eq!(code, Some(0), "{said}");
    assert!(said.contains("registered 2 commands in server 777: 2 added (/roll, /ping)"), "{said}");
    // The same file again: the platform's listing (ids, versions, `required`
    // left out when false) reads as the same commands.
    let (_, said) = deploy(two, &[]);
    assert!(said.contains(": 2 unchanged"), "{said}");
    let changed = two.replace("\"How many sides\"", "\"Sides on the die\"").replace("command ping", "command pong");
    let (_, said) = deploy(&changed, &["--dry-run"]);
    assert!(
        said.contains(
            "would register 2 commands in server 777: 1 added (/pong), 1 changed (/roll: options), 1 removed (/ping)"
        ),
        "{said}"
    );
    assert_eq!(platform.registered(path).as_array().unwrap().len(), 2, "a dry run registers nothing");
    // An attachment option's kinds of file are registered, and a change of
    // them is a change (the platform's listing holds them; twilight's
    // option does not).
    let upload = "command up \"Upload\" {\n    option doc \"A file\" attachment types \"image .PDF\"\n    reply \"{option_doc_name}\"\n}\n";
    let (code, said) = deploy(upload, &["--remove-all"]);
    assert_eq!(code, Some(0), "{said}");
    assert_eq!(platform.registered(path)[0]["options"][0]["file_types"], serde_json::json!(["image", ".pdf"]));
    let (_, said) = deploy(upload, &[]);
    assert!(said.contains(": 1 unchanged"), "{said}");
    let (_, said) = deploy(&upload.replace("image .PDF", "image"), &["--dry-run"]);
    assert!(said.contains("1 changed (/up: options)"), "{said}");
    let (code, said) = deploy(two, &["--remove-all"]);
    assert_eq!(code, Some(0), "{said}");
    // A file with no commands: refused, nothing sent.
    let puts = || platform.calls().iter().filter(|c| c.method == "PUT").count();
    let before = puts();
    let (code, said) = deploy("var visits = 0\n", &[]);
    assert_eq!(code, Some(2), "{said}");
    assert!(said.contains("would remove every command registered in server 777 (/roll, /ping)"), "{said}");
    assert!(said.contains("--remove-all"), "{said}");
    assert_eq!(puts(), before);
    let (code, said) = deploy("var visits = 0\n", &["--remove-all"]);
    assert_eq!(code, Some(0), "{said}");
    assert!(said.contains("registered 0 commands in server 777: 2 removed (/roll, /ping)"), "{said}");
    assert_eq!(platform.registered(path), serde_json::json!([]));
}

/// A bot with events whose `/gateway/bot` cannot be reached at start still
/// starts: it answers interactions, says which host failed, and connects to
/// the Gateway once the platform answers.
#[test]
fn events_wait_for_an_unreachable_gateway_while_interactions_are_answered() {
    use crate::support::gateway::TestGateway;
    use crate::support::platform::{command, post, TestPlatform};
    let platform = TestPlatform::start();
    let gateway = TestGateway::start(200);
    platform.set_gateway(gateway.bot_info(1));
    platform.refuse_once("/api/gateway/bot", 503);
    platform.refuse_once("/api/gateway/bot", 503);
    let program = "command ping \"Ping\" {\n    reply \"pong\"\n}\n\nevent message_create {\n    reply \"seen\"\n}\n";
    let served =
        crate::serve::serve(program, &platform, None, &[], &[("BLKC_BOT_TOKEN", "bot-token-abcdefghijklmnop")]);
    let bytes = serde_json::to_vec(&command("9001", "ping", serde_json::json!([]))).unwrap();
    let answer = post(&format!("{}/interactions", served.url), &bytes, Some(platform.sign(&bytes, 0)));
    assert_eq!(answer.body["data"]["content"], "pong", "{}", served.log());
    let log = served.wait_log("retry_in_s=");
    assert!(log.contains("127.0.0.1 refused `GET /gateway/bot` (503)"), "{log}");
    assert!(log.contains("interactions are answered meanwhile"), "{log}");
    assert_eq!(gateway.wait_op(2, 1).len(), 1, "it identifies once the platform answers: {}", served.log());
}

/// A first bot with no public address: no public key, just the bot token.
/// The platform delivers the command over the Gateway (INTERACTION_CREATE),
/// and blkc answers it at its callback, through the same pipeline: the
/// answer, a deferral then an edit for a slow run, once per interaction.
#[test]
fn commands_come_over_the_gateway_without_a_public_address() {
    use crate::support::gateway::TestGateway;
    use crate::support::platform::{command, TestPlatform};
    let api = crate::support::server::TestServer::start();
    let platform = TestPlatform::start();
    let gateway = TestGateway::start(200);
    platform.set_gateway(gateway.bot_info(1));
    let program = "command ping \"Ping\" {\n    reply \"pong from {user_name}\"\n}\n\n\
        command slow \"Slow\" {\n    api held {\n        method GET\n        url \"@API@/held\"\n    }\n    \
        reply \"done {api_held[status]}\"\n}\n";
    let env = [("BLKC_BOT_TOKEN", "bot-token-abcdefghijklmnop"), ("BLKC_DISCORD_PUBLIC_KEY", "")];
    let served =
        crate::serve::serve(program, &platform, Some(&api), &["--answer-within", "1", "--allow-private-network"], &env);
    assert_eq!(gateway.wait_op(2, 1).len(), 1, "{}", served.log());
    let ping = command("9101", "ping", serde_json::json!([]));
    gateway.dispatch("INTERACTION_CREATE", ping.clone());
    let calls = platform.wait_for("/interactions/9101/", 1);
    assert_eq!(calls.len(), 1, "{}", served.log());
    assert_eq!(calls[0].method, "POST");
    assert_eq!(calls[0].path, "/api/interactions/9101/itoken-9101-secretpart/callback");
    assert_eq!(calls[0].authorization, None, "the interaction token is the credential");
    assert_eq!(calls[0].body["type"], 4);
    assert_eq!(calls[0].body["data"]["content"], "pong from Ada");
    // Delivered again (a resumed session): answered once.
    gateway.dispatch("INTERACTION_CREATE", ping);
    // A slow run: "thinking" by the deadline, then the edit.
    gateway.dispatch("INTERACTION_CREATE", command("9102", "slow", serde_json::json!([])));
    let deferred = platform.wait_for("/interactions/9102/", 1);
    assert_eq!(deferred.len(), 1, "{}", served.log());
    assert_eq!(deferred[0].body, serde_json::json!({ "type": 5 }));
    api.open();
    let edit = platform.wait_for("/webhooks/4242/itoken-9102-secretpart/messages/@original", 1);
    assert_eq!(edit.len(), 1, "{}", served.log());
    assert_eq!(edit[0].body["content"], "done 200");
    assert_eq!(platform.calls().iter().filter(|c| c.path.contains("/interactions/9101/")).count(), 1);
    // A callback the platform refuses is logged, its token hidden.
    platform.refuse_once("/api/interactions/9103/", 400);
    gateway.dispatch("INTERACTION_CREATE", command("9103", "ping", serde_json::json!([])));
    let log = served.wait_log("callback failed");
    assert!(log.contains("(400, code 50035)"), "{log}");
    assert!(
        !log.contains("itoken-9101-secretpart") && !log.contains("itoken-9103"),
        "the token is never logged: {log}"
    );
    // One the server cannot read is logged (issue 56, item 10), what of it
    // a member wrote or its token never.
    gateway.dispatch("INTERACTION_CREATE", serde_json::json!("secret-member-text itoken-9104"));
    let log = served.wait_log("could not be read and is not answered");
    assert!(log.contains("This interaction failed") && log.contains("fault="), "{log}");
    assert!(!log.contains("secret-member-text") && !log.contains("itoken-9104"), "{log}");
}

/// Issue 56, item 10: `blkc --help` says how commands arrive as
/// docs/serve.md does: over the Gateway with just a bot token, or signed to
/// an HTTP endpoint.
#[test]
fn serve_s_help_and_its_docs_say_the_same_ways_commands_arrive() {
    let out = Command::new(env!("CARGO_BIN_EXE_blkc")).arg("--help").output().unwrap();
    let help = text(&out.stdout);
    let line = help.lines().find(|l| l.trim_start().starts_with("serve")).unwrap_or_default().to_string();
    assert!(line.contains("over the Gateway") && line.contains("HTTP endpoint"), "{line}");
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/serve.md")).unwrap();
    assert!(docs.contains("**Over the Gateway**") && docs.contains("**To an HTTP endpoint**"));
}
