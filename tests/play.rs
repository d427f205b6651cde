//! `blkc play` over HTTP, as its page uses it: the page and its assets,
//! `Host` and `Origin` held to play's own address, a command and a click
//! run through serve's pipeline, a slow run's "thinking" answer edited
//! later, and nothing of the bot token reaching the page.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

use crate::support::server::TestServer;

pub struct Played {
    child: Child,
    url: String,
    /// What play printed before its page's address.
    started: Vec<String>,
    _dir: tempfile::TempDir,
}

impl Drop for Played {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `blkc play` on `program` (with `@API@` the loopback API), and
/// reads the page's address from what it prints.
fn play(program: &str, api: Option<&TestServer>, args: &[&str]) -> Played {
    play_with(program, api, &[], args)
}

/// [`play`], with `files` (a path and its bytes) beside the program.
fn play_with(program: &str, api: Option<&TestServer>, files: &[(&str, &[u8])], args: &[&str]) -> Played {
    let dir = tempfile::tempdir().unwrap();
    for (path, bytes) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
    let text = api.map_or(program.to_string(), |api| program.replace("@API@", &api.base()));
    std::fs::write(dir.path().join("bot.blk"), text).unwrap();
    play_in(dir, args)
}

/// Starts `blkc play bot.blk` in `dir`, as its author would there.
pub fn play_in(dir: tempfile::TempDir, args: &[&str]) -> Played {
    let mut child = Command::new(env!("CARGO_BIN_EXE_blkc"))
        .args(["play", "bot.blk", "--listen", "127.0.0.1:0"])
        .args(args)
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut started = Vec::new();
    let url = loop {
        let line = lines.next().expect("play prints its address").unwrap();
        if let Some(rest) = line.strip_prefix("blkc play: open ") {
            break rest.split_whitespace().next().unwrap().to_string();
        }
        started.push(line);
    };
    // The rest of what it prints is read, so that it never blocks on it.
    std::thread::spawn(move || lines.for_each(drop));
    Played { child, url, started, _dir: dir }
}

fn agent() -> ureq::Agent {
    ureq::Agent::new_with_config(
        ureq::Agent::config_builder().http_status_as_error(false).timeout_global(Some(Duration::from_secs(30))).build(),
    )
}

impl Played {
    /// The file played, to be edited as its author would.
    fn file(&self) -> std::path::PathBuf {
        self._dir.path().join("bot.blk")
    }

    fn get(&self, path: &str) -> (u16, String, String) {
        let mut r = agent().get(&format!("{}{}", self.url, path.trim_start_matches('/'))).call().unwrap();
        let kind = r.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
        (r.status().as_u16(), kind, r.body_mut().read_to_string().unwrap())
    }

    /// What the page sends when the user runs a command or clicks.
    pub fn send(&self, asked: Value) -> Value {
        let bytes = serde_json::to_vec(&asked).unwrap();
        let (status, body) = self.post("/play/interaction", &bytes, &[]);
        assert_eq!(status, 200, "{body}");
        serde_json::from_str(&body).unwrap()
    }

    fn post(&self, path: &str, body: &[u8], headers: &[(&str, &str)]) -> (u16, String) {
        let mut request = agent().post(&format!("{}{}", self.url, path.trim_start_matches('/')));
        for (k, v) in headers {
            request = request.header(*k, *v);
        }
        let mut r = request.header("Content-Type", "application/json").send(body).unwrap();
        (r.status().as_u16(), r.body_mut().read_to_string().unwrap())
    }
}

/// The newcomer's case: `blkc play bot.blk --listen PORT` said it served
/// on another, random port (serve's, inside play). The `serving` line
/// names the page the user opens.
#[test]
fn the_serving_line_names_the_page_not_the_bot_s_port_inside() {
    let example = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/poll.blk")).unwrap();
    let played = play(&example, None, &["--offline"]);
    let serving = played.started.iter().find(|l| l.contains(" serving ")).expect("a serving line");
    let page = played.url.trim_end_matches('/');
    assert!(serving.contains(&format!("listen=\"{page}/ (play's page")), "{serving}");
}

#[test]
fn a_command_and_a_click_run_through_serve_and_the_page_is_play_s_own() {
    let example = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/poll.blk")).unwrap();
    let played = play(&example, None, &["--offline"]);
    let (status, kind, page) = played.get("/");
    assert_eq!((status, kind.as_str()), (200, "text/html; charset=utf-8"));
    assert!(page.contains("<script src=\"/play.js\""), "{page}");
    let (status, kind, script) = played.get("/play.js");
    assert_eq!((status, kind.as_str()), (200, "text/javascript; charset=utf-8"));
    assert!(!script.contains("http://") && !script.contains("https://"), "the page loads nothing from elsewhere");
    let file: Value = serde_json::from_str(&played.get("/play/file").2).unwrap();
    assert_eq!(file["commands"][0]["name"], "poll");
    // A command: the platform's answer, as serve gave it.
    let answered = played.send(json!({ "type": 2, "data": { "type": 1, "name": "poll", "options": [] } }));
    let answer = &answered["answer"];
    assert_eq!(answer["type"], 4, "{answered}");
    assert_eq!(answer["data"]["content"], "**Coffee or tea?** Click to vote.");
    // When the message was sent, on the bot's clock (its buttons expire).
    let sent_at = answered["timestamp"].clone();
    assert!(sent_at.as_str().is_some_and(|t| t.starts_with("20")), "{answered}");
    let button = &answer["data"]["components"][0]["components"][0];
    let coffee = crate::support::platform::component_id(&example, "vote", 0, "coffee");
    assert_eq!(button["custom_id"], coffee.as_str());
    // A click on its button, by the member the page names: the handler
    // updates the message.
    let click = json!({
        "type": 3,
        "data": { "custom_id": coffee, "component_type": 2 },
        "message": { "id": "1400000000000000099", "components": answer["data"]["components"], "timestamp": sent_at },
        "member": { "id": "2002", "name": "Grace" },
    });
    let answered = played.send(click);
    assert_eq!(answered["answer"]["type"], 7, "{answered}");
    assert_eq!(answered["answer"]["data"]["content"], "**Coffee or tea?** ☕ 1 · 🍵 0 (last vote by Grace)");
    // A page that opens now starts after what came before it (here, the
    // two runs' records).
    assert_eq!(played.runs(2).len(), 2);
    let now: Value = serde_json::from_str(&played.get("/play/calls?after=now").2).unwrap();
    assert_eq!((&now["calls"], &now["next"]), (&json!([]), &json!(2)));
}

#[test]
fn another_host_or_origin_is_refused_and_drives_nothing() {
    let played = play("command hi \"Hi\" {\n    reply \"hi\"\n}\n", None, &["--offline"]);
    let port = played.url.trim_end_matches('/').rsplit(':').next().unwrap().to_string();
    let command = serde_json::to_vec(&json!({ "type": 2, "data": { "type": 1, "name": "hi" } })).unwrap();
    // DNS rebinding: a name that resolves to 127.0.0.1 is not play's.
    for (headers, why) in [
        (vec![("Host", format!("evil.example:{port}"))], "another host"),
        (vec![("Origin", "http://evil.example".to_string())], "another page"),
        (vec![("Origin", format!("http://evil.example:{port}"))], "another page on the port"),
        (vec![("Origin", "null".to_string())], "a sandboxed page"),
    ] {
        let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let (status, body) = played.post("/play/interaction", &command, &headers);
        assert_eq!(status, 403, "{why}: {body}");
    }
    // Its own page, by its address or as localhost, is taken.
    let own = [("Origin", played.url.trim_end_matches('/'))];
    assert_eq!(played.post("/play/interaction", &command, &own).0, 200);
    // The stand-in's channel routes need the bot token, which the page
    // never sees.
    let (status, _) = played.post("/api/v10/channels/1/messages", b"{\"content\":\"x\"}", &[]);
    assert_eq!(status, 401);
    // play's Gateway is serve's alone: a web page's WebSocket (a browser
    // always says its Origin) is refused, and hears no event.
    let info: Value = serde_json::from_str(&played.get("/api/v10/gateway/bot").2).unwrap();
    let url = info["url"].as_str().unwrap();
    use tungstenite::client::IntoClientRequest as _;
    let mut request = url.into_client_request().unwrap();
    request.headers_mut().insert("Origin", "http://evil.example".parse().unwrap());
    match tungstenite::connect(request) {
        Err(tungstenite::Error::Http(response)) => assert_eq!(response.status(), 403),
        other => panic!("a browser's WebSocket was taken: {:?}", other.map(|_| ())),
    }
    let (mut ws, _) = tungstenite::connect(url).expect("serve's shard connects");
    let hello: Value = serde_json::from_str(ws.read().unwrap().to_text().unwrap()).unwrap();
    assert_eq!(hello["op"], 10);
}

#[test]
fn a_slow_run_thinks_then_its_edit_reaches_the_page() {
    let api = TestServer::start();
    let program = "command slow \"Slow\" {\n    api wait {\n        method GET\n        url \"@API@/slow/3500\"\n    }\n    reply { ephemeral text \"done at last\" }\n}\n";
    let played = play(program, Some(&api), &[]);
    let answered = played.send(json!({ "type": 2, "data": { "type": 1, "name": "slow" } }));
    // "Thinking", in private: the reply to come is ephemeral.
    assert_eq!(answered["answer"], json!({ "type": 5, "data": { "flags": 64 } }), "{answered}");
    let id = answered["interaction"].as_str().unwrap().to_string();
    let mut edit = None;
    for _ in 0..10 {
        let calls: Value = serde_json::from_str(&played.get("/play/calls?after=0").2).unwrap();
        edit = calls["calls"].as_array().unwrap().iter().find(|c| c["kind"] == "edit").cloned();
        if edit.is_some() {
            break;
        }
    }
    let edit = edit.expect("the deferred answer is edited");
    assert_eq!(
        (edit["interaction"].as_str(), edit["body"]["content"].as_str()),
        (Some(id.as_str()), Some("done at last"))
    );
    // The route is shown without the interaction's token.
    assert!(edit["route"].as_str().unwrap().contains("/…/messages/@original"), "{edit}");
}

/// Saved with an error, the file's diagnostics reach the page (with the
/// code, the place and the help `blkc check` gives) and the bot keeps
/// the last good plan; saved fixed, the new command is offered and runs.
#[test]
fn a_saved_file_s_diagnostics_reach_the_page_and_a_fixed_one_is_played() {
    let played = play("command hi \"Hi\" {\n    reply \"hi\"\n}\n", None, &["--offline"]);
    let path = played._dir.path().join("bot.blk");
    let file = |played: &Played| -> Value { serde_json::from_str(&played.get("/play/file").2).unwrap() };
    assert_eq!(file(&played)["diagnostics"], json!([]));
    std::fs::write(&path, "command hi \"Hi\" {\n    reply \"hi {user_nam}\"\n}\n").unwrap();
    let broken = file(&played);
    let first = &broken["diagnostics"][0];
    assert_eq!((first["code"].as_str(), first["line"].as_u64()), (Some("B115"), Some(2)), "{broken}");
    assert!(first["help"].as_str().unwrap_or_default().contains("user_name"), "{broken}");
    assert_eq!(broken["commands"][0]["name"], "hi", "the last good commands stay");
    let hi = json!({ "type": 2, "data": { "type": 1, "name": "hi" } });
    assert_eq!(played.send(hi.clone())["answer"]["data"]["content"], "hi");
    std::fs::write(
        &path,
        "command hi \"Hi\" {\n    reply \"hello, {user_name}\"\n}\ncommand bye \"Bye\" {\n    reply \"bye\"\n}\n",
    )
    .unwrap();
    let fixed = file(&played);
    assert_eq!(fixed["diagnostics"], json!([]));
    assert_eq!(fixed["commands"][1]["name"], "bye", "{fixed}");
    // The bot reloads it (serve's own watch, every half second).
    let mut said = Value::Null;
    for _ in 0..40 {
        said = played.send(hi.clone())["answer"]["data"]["content"].clone();
        if said == "hello, you" {
            break;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    assert_eq!(said, "hello, you");
    let bye = played.send(json!({ "type": 2, "data": { "type": 1, "name": "bye" } }));
    assert_eq!(bye["answer"]["data"]["content"], "bye");
}

/// A keystroke in an option with `autocomplete`, as the page sends it: the
/// bot's choices, by serve's own autocomplete path.
#[test]
fn a_keystroke_is_offered_the_autocomplete_s_choices() {
    let example = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/forecast.blk")).unwrap();
    let sample = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/samples/places.json")).unwrap();
    let played = play_with(&example, None, &[("samples/places.json", &sample)], &["--offline"]);
    let file: Value = serde_json::from_str(&played.get("/play/file").2).unwrap();
    assert_eq!(file["commands"][0]["options"][0]["autocomplete"], true, "{file}");
    let keystroke = json!({ "type": 4, "data": { "type": 1, "name": "forecast", "options": [
        { "type": 3, "name": "city", "value": "Par", "focused": true }
    ] } });
    let answered = played.send(keystroke);
    assert_eq!(answered["answer"]["type"], 8, "{answered}");
    let names: Vec<&str> =
        answered["answer"]["data"]["choices"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names[0], "Paris, Île-de-France, France", "{answered}");
}

/// A conversation in a real browser: Debian's Chromium, driven through its
/// WebDriver (chromedriver) with `fantoccini`. A command, its answer's
/// button clicked and the message updated in place (its buttons kept); an
/// option completed as it is typed. Under CI a machine without the browser
/// fails the test rather than skipping it.
#[test]
fn the_page_plays_a_conversation_in_a_real_browser() {
    let Some(driver) = chromedriver() else { return };
    let example = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/poll.blk")).unwrap();
    let played = play(&example, None, &["--offline"]);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let browser = browser(&driver).await;
        browser.goto(&played.url).await.unwrap();
        let text = |css: &'static str| {
            let browser = browser.clone();
            async move { browser.find(fantoccini::Locator::Css(css)).await.unwrap().text().await.unwrap() }
        };
        wait_for(|| text("#file"), |t| t.ends_with("bot.blk")).await;
        let command = browser.find(fantoccini::Locator::Css("#command")).await.unwrap();
        command.send_keys("/poll").await.unwrap();
        browser.find(fantoccini::Locator::Css("#composer button[type=submit]")).await.unwrap().click().await.unwrap();
        wait_for(|| text("#messages"), |t| t.contains("Coffee or tea? Click to vote.")).await;
        let coffee = browser.find(fantoccini::Locator::Css("#messages .row button")).await.unwrap();
        assert_eq!(coffee.text().await.unwrap(), "☕ Coffee");
        coffee.click().await.unwrap();
        let after = wait_for(|| text("#messages"), |t| t.contains("☕ 1 · 🍵 0 (last vote by you)")).await;
        // Updated in place: one bot message, its buttons kept.
        assert_eq!(after.matches("Coffee or tea?").count(), 1, "{after}");
        let buttons = browser.find_all(fantoccini::Locator::Css("#messages .row button")).await.unwrap();
        assert_eq!(buttons.len(), 3);
        screenshot(&browser, "poll.png").await;
        browser.close().await.unwrap();
    });
    drop(played);
    // An option with `autocomplete`: the bot's choices, as the user types.
    let example = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/forecast.blk")).unwrap();
    let sample = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/samples/places.json")).unwrap();
    let played = play_with(&example, None, &[("samples/places.json", &sample)], &["--offline"]);
    runtime.block_on(async {
        let browser = browser(&driver).await;
        browser.goto(&played.url).await.unwrap();
        let find = |css: &'static str| {
            let browser = browser.clone();
            async move { browser.find(fantoccini::Locator::Css(css)).await }
        };
        let command = find("#command").await.unwrap();
        wait_for(
            || async { browser.find(fantoccini::Locator::Css("#file")).await.unwrap().text().await.unwrap() },
            |t| t.ends_with("bot.blk"),
        )
        .await;
        // The picker lists it as the client does, with its description.
        command.send_keys("/").await.unwrap();
        let listed =
            "return [...document.querySelectorAll('#picker [role=option]')].map(o => o.textContent).join(' | ')";
        let listed = wait_for(
            || async { browser.execute(listed, vec![]).await.unwrap().as_str().unwrap_or_default().to_string() },
            |t| !t.is_empty(),
        )
        .await;
        assert!(
            listed.starts_with("/forecastcitydays") && listed.contains("The weather to come in a city"),
            "{listed}"
        );
        screenshot(&browser, "picker.png").await;
        command.send_keys("forecast").await.unwrap();
        find("[name=city]").await.unwrap().send_keys("Par").await.unwrap();
        let script = "return [...document.querySelectorAll('#choices-city option')].map(o => o.label).join(' | ')";
        let offered = wait_for(
            || async { browser.execute(script, vec![]).await.unwrap().as_str().unwrap_or_default().to_string() },
            |t| !t.is_empty(),
        )
        .await;
        assert_eq!(
            offered,
            "Paris, Île-de-France, France | Paris, Texas, United States | Parma, Emilia-Romagna, Italy"
        );
        screenshot(&browser, "forecast.png").await;
        browser.close().await.unwrap();
    });
}

/// The newcomer's case (issue 56, item 13): play draws as the client
/// does. Messages headed by an avatar of initials, the author's name (the
/// bot's with its APP tag) and the time, the command used above its
/// answer, a second message of the same author grouped under the first;
/// the client's markdown; mentions by name; emoji in a colour font.
#[test]
fn the_page_draws_messages_and_markdown_as_the_client() {
    let Some(driver) = chromedriver() else { return };
    let program = r##"command md "The client's markdown" {
    reply "# Title\n## Sub\n-# small print\n- one\n- two\n  - nested\n1. first\n2. second\n> quoted\n**bold** *it* __under__ ~~gone~~ ||secret|| `code`\n```rust\nfn main() \{\}\n```\n[docs](https://example.com/docs) <t:0:R> <@1001> <@&1400000000000000803> <#1400000000000000002>"
    reply "and more"
}
"##;
    let played = play(program, None, &["--offline"]);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let browser = browser(&driver).await;
        browser.goto(&played.url).await.unwrap();
        let page = Page(&browser);
        page.wait_text("#file", |t| t.ends_with("bot.blk")).await;
        page.find("#command").await.send_keys("/md\u{E007}").await.unwrap();
        page.wait_text("#messages", |t| t.contains("and more")).await;
        let first = "document.querySelector('#messages .message')";
        let q = |css: &str| format!("return [...{first}.querySelectorAll('{css}')].map(e => e.textContent).join('|')");
        assert_eq!(page.js(&q(".md-h1, .md-h2, .md-subtext")).await, "Title|Sub|small print");
        assert_eq!(page.js(&q(".content > ul > li")).await, "one|twonested");
        assert_eq!(page.js(&q(".content ul ul > li")).await, "nested");
        assert_eq!(page.js(&q(".content ol > li")).await, "first|second");
        assert_eq!(page.js(&q("blockquote")).await, "quoted");
        assert_eq!(
            page.js(&q("strong, em, u, s, .spoiler-text, :not(pre) > code")).await,
            "bold|it|under|gone|secret|code"
        );
        assert_eq!(page.js(&q("pre code")).await, "fn main() {}");
        assert_eq!(page.js(&q(r#"a[href="https://example.com/docs"][target=_blank][rel~=noopener]"#)).await, "docs");
        let ago = page.js(&q("time.timestamp")).await;
        assert!(ago.ends_with("years ago"), "{ago}");
        assert_eq!(page.js(&q(".content .mention")).await, "@you|@Regulars|#general");
        // The head: who used what, the avatar, the name, its tag, the time.
        assert_eq!(page.js(&q(".used")).await, "@you used /md");
        assert_eq!(page.js(&q(".avatar")).await, "B");
        assert_eq!(page.js(&q(".head .author, .head .tag")).await, "bot|APP");
        assert!(page.js(&q(".head .time")).await.starts_with("Today at "));
        // The follow-up is grouped under it: no avatar, no head.
        let second = "document.querySelectorAll('#messages .message')[1]";
        assert_eq!(page.js(&format!("return {second}.className")).await, "message grouped");
        assert_eq!(page.js(&format!("return {second}.querySelectorAll('.avatar, .head').length")).await, "0");
        // A spoiler is hidden until clicked.
        let spoiler = page.find("#messages .spoiler-text").await;
        assert_eq!(
            page.js(&format!("return getComputedStyle({first}.querySelector('.spoiler-text')).color")).await,
            "rgba(0, 0, 0, 0)"
        );
        spoiler.click().await.unwrap();
        assert_eq!(
            page.js(&format!("return {first}.querySelector('.spoiler-text').className")).await,
            "spoiler-text shown"
        );
        // Emoji in a colour font the machine has.
        let fonts = page.js("return getComputedStyle(document.body).fontFamily").await;
        assert!(fonts.contains("Noto Color Emoji"), "{fonts}");
        let drawn = "const c = document.createElement('canvas').getContext('2d'); \
                     const width = (f) => { c.font = f; return c.measureText('😀').width; }; \
                     return String(width(\"40px 'Noto Color Emoji', monospace\") !== width('40px monospace'))";
        assert_eq!(page.js(drawn).await, "true", "the machine has Noto Color Emoji (fonts-noto-color-emoji)");
        screenshot(&browser, "markdown.png").await;
        browser.close().await.unwrap();
    });
}

/// The newcomer's case (issue 56, item 13): the page is the client's dark
/// theme by default, whatever the system prefers, and light when chosen
/// (kept on reload).
#[test]
fn the_page_is_dark_by_default_and_light_when_chosen() {
    let Some(driver) = chromedriver() else { return };
    let example = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/poll.blk")).unwrap();
    let played = play(&example, None, &["--offline"]);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let browser = browser_with(&driver, &["--blink-settings=preferredColorScheme=1"]).await;
        browser.goto(&played.url).await.unwrap();
        let page = Page(&browser);
        page.wait_js("return matchMedia('(prefers-color-scheme: dark)').matches", "false").await;
        page.wait_js("return document.documentElement.dataset.theme", "dark").await;
        assert_eq!(page.js("return getComputedStyle(document.body).backgroundColor").await, "rgb(49, 51, 56)");
        let command = page.find("#command").await;
        command.send_keys("/poll\u{E007}").await.unwrap();
        page.wait_text("#messages", |t| t.contains("Coffee or tea?")).await;
        screenshot(&browser, "dark.png").await;
        page.find("#theme").await.click().await.unwrap();
        assert_eq!(page.js("return getComputedStyle(document.body).backgroundColor").await, "rgb(255, 255, 255)");
        browser.refresh().await.unwrap();
        page.wait_js("return document.documentElement.dataset.theme", "light").await;
        assert_eq!(page.js("return getComputedStyle(document.body).backgroundColor").await, "rgb(255, 255, 255)");
        browser.close().await.unwrap();
    });
}

/// An event fired from the page in a real browser, and the bot's reply
/// drawn in the channel.
#[test]
fn an_event_is_fired_from_the_page_in_a_real_browser() {
    let Some(driver) = chromedriver() else { return };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    // An event fired from the page, and the bot's reply in the channel.
    let program = "event member_join {\n    reply \"Welcome, {user_mention}!\"\n}\n";
    let played = play(program, None, &["--offline"]);
    runtime.block_on(async {
        let browser = browser(&driver).await;
        browser.goto(&played.url).await.unwrap();
        let text =
            || async { browser.find(fantoccini::Locator::Css("#messages")).await.unwrap().text().await.unwrap() };
        let visible =
            || async { browser.execute("return !document.getElementById('events').hidden", vec![]).await.unwrap() };
        wait_for(|| async { visible().await.to_string() }, |v| v == "true").await;
        browser.find(fantoccini::Locator::Css("#events button")).await.unwrap().click().await.unwrap();
        wait_for(text, |t| t.contains("you fired member_join") && t.contains("Welcome, @you!")).await;
        browser.close().await.unwrap();
    });
}

/// The page as the browser shows it, kept as `name` in the folder
/// `BLKC_SCREENSHOTS` names (docs/play/ has them, made so).
async fn screenshot(browser: &fantoccini::Client, name: &str) {
    let Some(dir) = std::env::var_os("BLKC_SCREENSHOTS") else { return };
    let png = browser.screenshot().await.unwrap();
    assert!(png.starts_with(b"\x89PNG"), "a PNG");
    std::fs::write(std::path::Path::new(&dir).join(name), png).unwrap();
}

/// chromedriver on a free port, or `None` when the machine has none (and
/// CI is not set: under CI that fails).
fn chromedriver() -> Option<Driver> {
    let found = ["/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists());
    let Some(path) = found else {
        assert!(
            std::env::var_os("CI").is_none(),
            "chromedriver is not installed, and CI is set: the browser test cannot run"
        );
        eprintln!(
            "chromedriver is not installed: the browser test is skipped (apt-get install chromium chromium-driver)"
        );
        return None;
    };
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let child =
        Command::new(path).arg(format!("--port={port}")).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let (profiles, sessions) = (tempfile::tempdir().unwrap(), std::sync::atomic::AtomicUsize::new(0));
    let driver = Driver { child, url: format!("http://127.0.0.1:{port}"), profiles, sessions };
    for _ in 0..100 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Some(driver);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("chromedriver did not listen on {port}");
}

struct Driver {
    child: Child,
    url: String,
    profiles: tempfile::TempDir,
    sessions: std::sync::atomic::AtomicUsize,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A headless Chromium, started as this machine needs it: no sandbox (as
/// root), no network of its own, a new profile.
async fn browser(driver: &Driver) -> fantoccini::Client {
    browser_with(driver, &[]).await
}

/// [`browser`], with more of Chromium's switches.
async fn browser_with(driver: &Driver, more: &[&str]) -> fantoccini::Client {
    // (A profile of its own, under the driver's: gone with it.)
    let profile =
        driver.profiles.path().join(format!("p{}", driver.sessions.fetch_add(1, std::sync::atomic::Ordering::Relaxed)));
    let args = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=900,700",
        // No name resolves: nothing the page shows is fetched from beyond
        // this machine (an embed's image stays a broken one).
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    ];
    let mut args: Vec<String> = args.iter().chain(more).map(|a| a.to_string()).collect();
    args.push(format!("--user-data-dir={}", profile.display()));
    let mut caps = serde_json::Map::new();
    caps.insert("goog:chromeOptions".into(), json!({ "binary": "/usr/bin/chromium", "args": args }));
    let connector = hyper_util::client::legacy::connect::HttpConnector::new();
    fantoccini::ClientBuilder::new(connector).capabilities(caps).connect(&driver.url).await.expect("a browser session")
}

/// Polls `read` until `done` holds of what it gives (at most 20 s); gives it.
async fn wait_for<F, Fut>(read: F, done: impl Fn(&str) -> bool) -> String
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = String>,
{
    let mut last = String::new();
    for _ in 0..200 {
        last = read().await;
        if done(&last) {
            return last;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the page never showed what was awaited; it shows: {last}");
}

/// The file's events, fired from the page: serve's shard takes them from
/// play's Gateway as the platform sends them, and their replies come back
/// as channel messages.
#[test]
fn an_event_fired_from_the_page_runs_and_its_reply_reaches_the_page() {
    let program = "event member_join {\n    reply \"Welcome, {user_mention}! We are {member_count} now.\"\n}\n\
                   event message_create {\n    if \"{message_content}\" == \"!ping\" {\n        reply \"pong\"\n    }\n}\n";
    let played = play(program, None, &["--offline"]);
    let file: Value = serde_json::from_str(&played.get("/play/file").2).unwrap();
    assert_eq!(file["events"], json!(["member_join", "message_create"]));
    let fire = |kind: &str, given: Value| {
        let (status, body) =
            played.post("/play/event", &serde_json::to_vec(&json!({ "kind": kind, "given": given })).unwrap(), &[]);
        assert_eq!(status, 200, "{body}");
    };
    fire("member_join", json!({ "user_id": "2002", "user_name": "Grace" }));
    fire("message_create", json!({ "content": "!ping" }));
    // In the second server: its own channel.
    fire("member_join", json!({ "user_id": "3003", "user_name": "Ada", "server_id": "1400000000000000003" }));
    let mut said = Vec::new();
    // (Each poll answers at once once there is a call: a pause between.)
    for _ in 0..100 {
        let calls: Value = serde_json::from_str(&played.get("/play/calls?after=0").2).unwrap();
        let calls = calls["calls"].as_array().unwrap().iter();
        said = calls
            .filter_map(|c| Some(format!("{} {}", c["route"].as_str()?, c["body"]["content"].as_str()?)))
            .collect();
        if said.len() >= 3 {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    said.sort();
    assert_eq!(
        said,
        [
            "/channels/1400000000000000002/messages Welcome, <@2002>! We are 3 now.",
            "/channels/1400000000000000002/messages pong",
            "/channels/1400000000000000004/messages Welcome, <@3003>! We are 3 now.",
        ]
    );
    let (status, body) = played.post("/play/event", br#"{"kind":"party","given":{}}"#, &[]);
    assert_eq!(status, 400, "{body}");
}

impl Played {
    /// The records of serve's runs so far (the inspector's), once `n` are
    /// there.
    fn runs(&self, n: usize) -> Vec<Value> {
        let mut runs = Vec::new();
        for _ in 0..100 {
            let calls: Value = serde_json::from_str(&self.get("/play/calls?after=0").2).unwrap();
            let calls = calls["calls"].as_array().unwrap().iter();
            runs = calls.filter(|c| c["kind"] == "run").map(|c| c["body"].clone()).collect();
            if runs.len() >= n {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        runs
    }
}

/// The inspector's record of a run: its request with the secret and the
/// interaction's token masked, the start of its response, the variables
/// read and saved with their scope, its warnings and its time; a refused
/// run's, with what the member was told.
#[test]
fn each_run_s_record_reaches_the_inspector_with_its_secrets_masked() {
    let api = TestServer::start();
    let program = "var points per user = 0\n\
                   command score \"Your score\" {\n    require roles \"42\"\n    \
                   api echo {\n        method GET\n        url \"@API@/echo/score\"\n        \
                   headers { X-Api-Key = \"<API_KEY>\" }\n    }\n    save points = points + 1\n    \
                   reply \"{api_echo[response.headers.x-api-key]} {points} {api_echo[response.nothing]}\"\n}\n";
    let secrets: &[(&str, &[u8])] = &[("secrets.env", b"API_KEY=canary-key-123456\n")];
    let args = ["--secrets", "secrets.env", "--allow-private-network"];
    let played = play_with(program, Some(&api), secrets, &args);
    let member = json!({ "id": "2002", "name": "Grace", "roles": ["42"] });
    let answered = played.send(json!({ "type": 2, "data": { "type": 1, "name": "score" }, "member": member }));
    assert_eq!(answered["answer"]["data"]["content"], "<API_KEY> 1 {api_echo[response.nothing]}", "{answered}");
    let stranger = json!({ "id": "3003", "name": "Ada" });
    played.send(json!({ "type": 2, "data": { "type": 1, "name": "score" }, "member": stranger }));
    // In the second server, the member's points are that server's.
    let elsewhere =
        json!({ "type": 2, "data": { "type": 1, "name": "score" }, "member": member, "server": "1400000000000000003" });
    assert_eq!(played.send(elsewhere)["answer"]["data"]["content"], "<API_KEY> 1 {api_echo[response.nothing]}");
    let runs = played.runs(3);
    // (Each record comes when its run ends: the refused one may come first.)
    let of = |id: &Value| runs.iter().find(|r| &r["interaction"] == id).unwrap_or_else(|| panic!("{runs:?}"));
    let elsewhere = runs.iter().find(|r| r["events"][2]["key"] == "points:user:1400000000000000003:2002");
    assert!(elsewhere.is_some(), "{runs:?}");
    let run = of(&answered["interaction"]);
    assert_eq!(
        (&run["kind"], &run["name"], &run["outcome"]),
        (&json!("interaction"), &json!("score"), &json!("answered"))
    );
    assert_eq!(run["interaction"], answered["interaction"]);
    assert!(run["ms"].as_f64().unwrap() > 0.0, "{run}");
    let events = run["events"].as_array().unwrap();
    let kinds: Vec<&str> = events.iter().map(|e| e["event"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["request", "read", "save", "warning", "reply"], "{run}");
    let request = &events[0];
    assert_eq!((&request["method"], &request["status"]), (&json!("GET"), &json!(200)));
    assert!(request["url"].as_str().unwrap().ends_with("/echo/score"), "{request}");
    assert!(request["request_headers"].to_string().contains("\"<API_KEY>\""), "{request}");
    assert!(request["response_body"].as_str().unwrap().contains("\"path\":\"/echo/score\""), "{request}");
    let read = &events[1];
    assert_eq!(read["scope"], "user");
    assert_eq!((&read["value"], &read["stored"]), (&json!(0), &json!(false)), "{read}");
    let save = &events[2];
    assert_eq!((&save["name"], &save["scope"], &save["value"]), (&json!("points"), &json!("user"), &json!(1)));
    assert!(save["key"].as_str().unwrap().ends_with(":2002"), "{save}");
    assert_eq!((&events[3]["code"], &events[3]["line"]), (&json!("B307"), &json!(10)), "{run}");
    let refused = runs.iter().find(|r| r["outcome"] == "guarded").unwrap_or_else(|| panic!("{runs:?}"));
    assert!(refused["refused"].as_str().unwrap().contains("role"), "{refused}");
    // Nothing of the secret, the bot token or the interactions' tokens.
    let (_, _, everything) = played.get("/play/calls?after=0");
    assert!(!everything.contains("canary-key-123456"));
    assert!(!everything.contains("play."), "the bot token");
    assert!(!everything.contains("\"play-1"), "an interaction's token");
}

/// A timed event ticks when the page asks, at once, whatever its schedule;
/// its message reaches the page, and its run the inspector.
#[test]
fn a_timed_event_ticks_when_the_page_asks() {
    let program =
        "event nightly at \"03:00\" channel \"1400000000000000002\" {\n    reply \"Good night, tick {tick_time}\"\n}\n";
    let played = play(program, None, &["--offline"]);
    let file: Value = serde_json::from_str(&played.get("/play/file").2).unwrap();
    assert_eq!((&file["events"], &file["timers"]), (&json!([]), &json!(["nightly"])));
    let (status, body) = played.post("/play/event", br#"{"kind":"tick:nightly","given":{}}"#, &[]);
    assert_eq!(status, 200, "{body}");
    let runs = played.runs(1);
    assert_eq!(
        (&runs[0]["kind"], &runs[0]["name"], &runs[0]["outcome"]),
        (&json!("timer"), &json!("nightly"), &json!("ran"))
    );
    let calls: Value = serde_json::from_str(&played.get("/play/calls?after=0").2).unwrap();
    let message = calls["calls"].as_array().unwrap().iter().find(|c| c["kind"] == "message").unwrap();
    assert_eq!(message["route"], "/channels/1400000000000000002/messages");
    assert!(message["body"]["content"].as_str().unwrap().starts_with("Good night, tick 20"), "{message}");
    let (status, body) = played.post("/play/event", br#"{"kind":"tick:daily","given":{}}"#, &[]);
    assert_eq!((status, body.contains("not a timed event")), (400, true), "{body}");
}

/// Issue 53, item 9: the page lists the work waiting to run, and moves
/// the bot's clock forward: what came due runs at once (its message
/// reaches the page), and the list empties; a move by what is no duration
/// is refused.
#[test]
fn the_page_moves_the_clock_and_the_waiting_work_runs() {
    let example = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/remind.blk")).unwrap();
    let played = play(&example, None, &["--offline"]);
    let options = json!([{ "type": 3, "name": "in", "value": "10m" }, { "type": 3, "name": "text", "value": "tea" }]);
    let answered = played.send(json!({ "type": 2, "data": { "type": 1, "name": "remind", "options": options } }));
    assert!(answered["answer"]["data"]["content"].as_str().unwrap().starts_with("I will remind you <t:"), "{answered}");
    let waiting: Value = serde_json::from_str(&played.get("/play/waiting").2).unwrap();
    assert_eq!(waiting["count"], 1, "{waiting}");
    assert_eq!(
        (&waiting["waiting"][0]["tree"], &waiting["waiting"][0]["note"]),
        (&json!("remind#9169a528"), &json!("tea"))
    );
    let (status, body) = played.post("/play/clock", br#"{"forward":"5m"}"#, &[]);
    assert_eq!(status, 200, "{body}");
    assert_eq!(serde_json::from_str::<Value>(&body).unwrap()["ran"], 0, "not due yet: {body}");
    let (status, body) = played.post("/play/clock", br#"{"forward":"5m"}"#, &[]);
    assert_eq!(status, 200, "{body}");
    assert_eq!(serde_json::from_str::<Value>(&body).unwrap()["ran"], 1, "{body}");
    let runs = played.runs(2);
    assert!(
        runs.iter().any(|r| r["kind"] == "later" && r["name"] == "remind#9169a528" && r["outcome"] == "ran"),
        "{runs:?}"
    );
    let calls: Value = serde_json::from_str(&played.get("/play/calls?after=0").2).unwrap();
    let message = calls["calls"].as_array().unwrap().iter().find(|c| c["kind"] == "message").unwrap();
    assert_eq!(message["body"]["content"], "⏰ <@1001>: tea");
    let waiting: Value = serde_json::from_str(&played.get("/play/waiting").2).unwrap();
    assert_eq!(waiting["count"], 0, "{waiting}");
    let (status, body) = played.post("/play/clock", br#"{"forward":"soon"}"#, &[]);
    assert_eq!((status, body.contains("not a duration")), (400, true), "{body}");
}

/// The clock control in a real browser: the waiting reminder is listed,
/// the clock moved by the page's form, and the reminder drawn in the chat.
#[test]
fn the_clock_is_moved_from_the_page_in_a_real_browser() {
    let Some(driver) = chromedriver() else { return };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let example = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/remind.blk")).unwrap();
    let played = play(&example, None, &["--offline"]);
    runtime.block_on(async {
        let browser = browser(&driver).await;
        browser.goto(&played.url).await.unwrap();
        let options =
            json!([{ "type": 3, "name": "in", "value": "10m" }, { "type": 3, "name": "text", "value": "tea" }]);
        played.send(json!({ "type": 2, "data": { "type": 1, "name": "remind", "options": options } }));
        let css = |c: &'static str| {
            let browser = browser.clone();
            move || {
                let browser = browser.clone();
                async move { browser.find(fantoccini::Locator::Css(c)).await.unwrap().text().await.unwrap() }
            }
        };
        wait_for(css("#waiting"), |t| t.contains("remind#9169a528") && t.contains("tea")).await;
        browser.find(fantoccini::Locator::Css("#clock button")).await.unwrap().click().await.unwrap();
        wait_for(css("#messages"), |t| t.contains("The clock moved forward by 10m") && t.contains("tea")).await;
        wait_for(css("#messages"), |t| t.contains("⏰")).await;
        wait_for(css("#waiting"), |t| !t.contains("remind#9169a528")).await;
        browser.close().await.unwrap();
    });
}

/// The café (tests/fixtures/play/cafe.blk), its program with `@API@` the
/// loopback API server's base.
fn cafe(api: &TestServer) -> String {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/play/cafe.blk")).unwrap();
    text.replace("@API@", &api.base())
}

/// A whole conversation in a real browser: a command with options whose
/// run is deferred ("thinking…", then the edit with its embed), a choice
/// in its select menu, a form opened by its button and sent, an event, the
/// inspector's record of a run, and the file saved broken (its diagnostics
/// shown, the conversation kept) and then fixed (its new command played).
#[test]
fn a_whole_conversation_in_a_real_browser() {
    let Some(driver) = chromedriver() else { return };
    let api = TestServer::start();
    let played = play(&cafe(&api), None, &["--allow-private-network"]);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let browser = browser(&driver).await;
        browser.goto(&played.url).await.unwrap();
        let page = Page(&browser);
        page.wait_js("return state.commands.length", "1").await;
        // A command with options: "thinking…", then its edit in place.
        page.find("#command").await.send_keys("/order").await.unwrap();
        page.find("select[name=drink]").await.select_by_label("Tea").await.unwrap();
        page.find("[name=name]").await.send_keys("Ada").await.unwrap();
        page.find("#composer button[type=submit]").await.click().await.unwrap();
        page.wait_text("#messages", |t| t.contains("bot is thinking…")).await;
        screenshot(&browser, "thinking.png").await;
        let shown = page.wait_text("#messages", |t| t.contains("Order for Ada: tea")).await;
        assert!(!shown.contains("thinking"), "{shown}");
        let embed = page.wait_text("#messages .embed", |t| t.contains("Order 1")).await;
        assert!(embed.contains("Drink\ntea") && embed.contains("Ready\ntrue") && embed.contains("The café"), "{embed}");
        let colour = page.js("return document.querySelector('#messages .embed').style.borderLeftColor").await;
        assert_eq!(colour, "rgb(46, 204, 113)");
        let image = page.js("return document.querySelector('#messages .embed img.thumbnail').src").await;
        assert_eq!(image, "https://cafe.example/cup.png");
        // The message drawn is the edit serve sent the platform, whole.
        let drawn = browser
            .execute("return document.querySelector('#messages .embed').closest('li').payload", vec![])
            .await
            .unwrap();
        let calls: Value = serde_json::from_str(&played.get("/play/calls?after=0").2).unwrap();
        let edit = calls["calls"].as_array().unwrap().iter().find(|c| c["kind"] == "edit").unwrap();
        assert_eq!(drawn, edit["body"]);
        // Its run in the inspector: the request, the variable read and saved.
        page.find("#messages .inspect").await.click().await.unwrap();
        let run = page.wait_text("#runs details[open]", |t| t.contains("saved orders")).await;
        assert!(run.starts_with("/order · deferred · "), "{run}");
        assert!(
            run.contains("kitchen: GET http://127.0.0.1:") && run.contains("read orders (user) = 0 (default)"),
            "{run}"
        );
        assert!(run.contains("saved orders (user) = 1"), "{run}");
        screenshot(&browser, "order.png").await;
        // A choice in its select menu: a private answer.
        page.find("#messages select").await.select_by_value("large").await.unwrap();
        let shown = page.wait_text("#messages", |t| t.contains("A large one, coming up.")).await;
        assert!(shown.contains("Only you can see this"), "{shown}");
        // Its button opens a form; sent, the form's handler answers.
        page.find("#messages button.secondary:not(.inspect)").await.click().await.unwrap();
        page.wait_js("return document.getElementById('form').open", "true").await;
        assert_eq!(page.find("#form-title").await.text().await.unwrap(), "A note for the barista");
        page.find("#form-inputs [name=text]").await.send_keys("Oat milk").await.unwrap();
        screenshot(&browser, "form.png").await;
        page.find("#form-send").await.click().await.unwrap();
        page.wait_text("#messages", |t| t.contains("Note for the barista: Oat milk")).await;
        // An event, fired from the page.
        page.wait_js("return !document.getElementById('events').hidden", "true").await;
        page.find("#events button").await.click().await.unwrap();
        page.wait_text("#messages", |t| t.contains("Welcome, @you!")).await;
        saved_broken_then_fixed(&page, &played).await;
        browser.close().await.unwrap();
    });
}

/// The café's file saved broken (its diagnostics shown, the conversation
/// kept) and then fixed (its new command offered and played, by keyboard);
/// and every control the page drew named.
async fn saved_broken_then_fixed(page: &Page<'_>, played: &Played) {
    // Saved broken: the diagnostics, the conversation kept.
    let good = std::fs::read_to_string(played.file()).unwrap();
    std::fs::write(played.file(), format!("{good}\ncommand menu \"See the menu\" {{\n    reply \"Coffee, tea\"\n"))
        .unwrap();
    let said = page.wait_text("#diagnostics", |t| t.contains("error B001")).await;
    assert!(said.contains("help:"), "{said}");
    screenshot(page.0, "diagnostics.png").await;
    // Saved fixed: its new command is offered and played.
    std::fs::write(played.file(), format!("{good}\ncommand menu \"See the menu\" {{\n    reply \"Coffee, tea\"\n}}\n"))
        .unwrap();
    page.wait_js("return state.commands.length", "2").await;
    page.wait_text("#diagnostics", str::is_empty).await;
    // (By keyboard: Enter sends.)
    let command = page.find("#command").await;
    command.clear().await.unwrap();
    command.send_keys("/menu\u{E007}").await.unwrap();
    let shown = page.wait_text("#messages", |t| t.contains("Coffee, tea")).await;
    assert!(shown.contains("Order for Ada: tea") && shown.contains("Note for the barista"), "{shown}");
    // Every control the page drew has a name a screen reader says.
    let unnamed = "return [...document.querySelectorAll('input, select, textarea, button')]\
            .filter(e => !(e.labels && e.labels.length) && !e.getAttribute('aria-label') && !e.textContent.trim())\
            .map(e => e.outerHTML).join(' ')";
    assert_eq!(page.js(unnamed).await, "");
}

/// A page in the browser, read and used by CSS selectors.
struct Page<'a>(&'a fantoccini::Client);

impl Page<'_> {
    async fn find(&self, css: &str) -> fantoccini::elements::Element {
        self.0.find(fantoccini::Locator::Css(css)).await.unwrap_or_else(|e| panic!("{css}: {e}"))
    }

    async fn js(&self, script: &str) -> String {
        match self.0.execute(script, vec![]).await.unwrap() {
            Value::String(s) => s,
            other => other.to_string(),
        }
    }

    /// Waits for the script's value to be `value`.
    async fn wait_js(&self, script: &str, value: &str) -> String {
        wait_for(|| self.js(script), |v| v == value).await
    }

    /// Waits for the text of the first element `css` selects to be `done`.
    async fn wait_text(&self, css: &str, done: impl Fn(&str) -> bool) -> String {
        let script = format!("const e = document.querySelector({css:?}); return e ? e.innerText : ''");
        wait_for(|| self.js(&script), done).await
    }
}

/// What the page is given is what `blkc serve` sends the platform for the
/// same runs: the café's order (deferred, then its edit), a choice in its
/// menu, the form its button opens and the form sent, answered by `blkc
/// serve` to the test platform and by `blkc play` to the page, compared
/// whole. (The page draws what it is given: the browser test holds its
/// drawn message to the edit.)
#[test]
fn the_page_is_given_what_serve_sends_the_platform() {
    use crate::support::platform::{click, command, submit, TestPlatform};
    let api = TestServer::start();
    // (Without its event, serve needs no Gateway.)
    let program = cafe(&api);
    let program = program.split("event member_join").next().unwrap();
    let platform = TestPlatform::start();
    let served = crate::serve::serve(
        program,
        &platform,
        None,
        &["--allow-private-network"],
        &[("BLKC_BOT_TOKEN", "a-test-bot-token")],
    );
    let played = play(program, None, &["--allow-private-network"]);
    let options =
        json!([{ "type": 3, "name": "drink", "value": "tea" }, { "type": 3, "name": "name", "value": "Ada" }]);
    let ada = json!({ "id": "1001", "name": "Ada" });
    // The order: "thinking", then its edit.
    let by_serve = served.send(&platform, &command("1", "order", options.clone())).body;
    let by_play =
        played.send(json!({ "type": 2, "data": { "type": 1, "name": "order", "options": options }, "member": ada }));
    assert_eq!(by_serve, by_play["answer"]);
    assert_eq!(by_serve["type"], 5);
    let serve_edit = platform.wait_for("/webhooks/", 1)[0].body.clone();
    let play_edit = loop {
        let calls: Value = serde_json::from_str(&played.get("/play/calls?after=0").2).unwrap();
        if let Some(edit) = calls["calls"].as_array().unwrap().iter().find(|c| c["kind"] == "edit") {
            break edit["body"].clone();
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(serve_edit, play_edit);
    assert_eq!(serve_edit["embeds"][0]["title"], "Order 1", "{serve_edit}");
    // A choice in its menu, and its button's form, sent.
    let (menu, button) = (&serve_edit["components"][0]["components"][0], &serve_edit["components"][1]["components"][0]);
    let message = json!({ "id": "555", "components": serve_edit["components"] });
    let page = |data: Value| {
        played.send(json!({ "type": if data["components"].is_array() { 5 } else { 3 }, "data": data, "message": message, "member": ada }))["answer"].clone()
    };
    let values = json!(["large"]);
    let by_serve = served.send(&platform, &click("2", menu["custom_id"].as_str().unwrap(), Some(values.clone()))).body;
    let by_play = page(json!({ "custom_id": menu["custom_id"], "component_type": 3, "values": values }));
    assert_eq!((&by_serve, &by_serve["data"]["content"]), (&by_play, &json!("A large one, coming up.")));
    let by_serve = served.send(&platform, &click("3", button["custom_id"].as_str().unwrap(), None)).body;
    let by_play = page(json!({ "custom_id": button["custom_id"], "component_type": 2 }));
    assert_eq!((&by_serve, &by_serve["type"]), (&by_play, &json!(9)));
    let form = by_serve["data"]["custom_id"].as_str().unwrap();
    let sent = submit("4", form, &[("text", "Oat milk")], false);
    let by_serve = served.send(&platform, &sent).body;
    let by_play = page(sent["data"].clone());
    assert_eq!((&by_serve, &by_serve["data"]["content"]), (&by_play, &json!("Note for the barista: Oat milk")));
}

/// Without `--offline`, a request goes out under `run`'s request policy: a
/// chat user's value may not choose where it goes (here, to an address of
/// this machine), and the inspector says why the run failed; nothing
/// reaches the server.
#[test]
fn a_request_to_an_internal_address_is_refused_as_by_run() {
    let api = TestServer::start();
    let program =
        "command ask \"Ask\" {\n    option host \"Where\" required\n    api inside {\n        method GET\n        \
                   url \"http://{option_host}/echo\"\n    }\n    reply \"{api_inside[status]}\"\n}\n";
    let played = play(program, None, &[]);
    let host = api.base().trim_start_matches("http://").to_string();
    let options = json!([{ "type": 3, "name": "host", "value": host }]);
    let answered = played.send(json!({ "type": 2, "data": { "type": 1, "name": "ask", "options": options } }));
    assert_eq!(answered["answer"]["data"]["content"], crate::serve::FAILED_WORD, "{answered}");
    let run = &played.runs(1)[0];
    assert_eq!(run["outcome"], "failed");
    assert!(run["error"].as_str().unwrap().contains("B314 block `inside`: the value"), "{run}");
    assert!(api.received().is_empty());
}

/// Issue 48, item 12: a page request whose head never ends does not hold
/// its connection open (half-sent requests were still open after 12 s).
#[test]
fn a_half_sent_page_request_is_closed() {
    use std::io::{Read as _, Write as _};
    let played = play("command c \"C\" {\n    reply \"hi\"\n}\n", None, &["--offline"]);
    let address = played.url.trim_start_matches("http://").trim_end_matches('/').to_string();
    let mut stream = std::net::TcpStream::connect(&address).unwrap();
    stream.write_all(b"GET / HTTP/1.1\r\nHost: ").unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let started = std::time::Instant::now();
    let mut rest = Vec::new();
    let _ = stream.read_to_end(&mut rest);
    assert!(started.elapsed() < Duration::from_secs(50), "still open after {:?}", started.elapsed());
}

/// Issue 48, item 12: play's Gateway holds a few connections; more are
/// closed at once, so idle connections cannot make a thread each (1,500
/// made 1,518 threads).
#[test]
fn play_s_gateway_holds_a_bounded_number_of_connections() {
    use std::io::Read as _;
    let played = play("event member_join {\n    reply \"hi\"\n}\n", None, &["--offline"]);
    let info: Value = serde_json::from_str(&played.get("/api/v10/gateway/bot").2).unwrap();
    let gateway = info["url"].as_str().unwrap().trim_start_matches("ws://").to_string();
    let idle: Vec<std::net::TcpStream> = (0..50).filter_map(|_| std::net::TcpStream::connect(&gateway).ok()).collect();
    let closed = idle
        .iter()
        .filter(|c| {
            c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            match (&mut &**c).read(&mut [0u8; 1]) {
                Ok(n) => n == 0,
                Err(e) => !matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut),
            }
        })
        .count();
    assert!(closed >= 40, "{closed} of 50 idle connections closed");
}

/// Issue 48, item 12: the events fired from the page are kept within a
/// bound (300 events of 1 MB added 410 MB).
#[test]
fn events_fired_from_the_page_are_kept_within_a_bound() {
    let played = play("event member_join {\n    reply \"hi\"\n}\n", None, &["--offline"]);
    let rss = || {
        let status = std::fs::read_to_string(format!("/proc/{}/status", played.child.id())).unwrap_or_default();
        let kb = status.lines().find(|l| l.starts_with("VmRSS:")).and_then(|l| l.split_whitespace().nth(1));
        kb.and_then(|n| n.parse::<u64>().ok()).unwrap_or(0) / 1024
    };
    let before = rss();
    let content = "x".repeat(900 * 1024);
    let body = serde_json::to_vec(&json!({ "kind": "message_create", "given": { "content": content } })).unwrap();
    for _ in 0..300 {
        let (status, said) = played.post("/play/event", &body, &[]);
        assert_eq!(status, 200, "{said}");
    }
    let grown = rss().saturating_sub(before);
    eprintln!("300 fired events of 900 KB: play grew by {grown} MiB");
    assert!(grown < 150, "play grew by {grown} MiB for 300 events of 900 KB");
}

/// examples/tickets.blk in play's page, in a real browser: the panel, a
/// ticket opened (a private channel made, its first message in it with a
/// "Close" button) and closed (the transcript to the log, the channel
/// deleted), each action shown as the chat would show its effect.
#[test]
fn the_ticket_flow_plays_in_a_real_browser() {
    let Some(driver) = chromedriver() else { return };
    let example = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/tickets.blk")).unwrap();
    let sample = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/samples/messages.json")).unwrap();
    let played = play_with(&example, None, &[("samples/messages.json", &sample)], &["--offline"]);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let browser = browser(&driver).await;
        browser.goto(&played.url).await.unwrap();
        let page = Page(&browser);
        page.wait_text("#file", |t| t.ends_with("bot.blk")).await;
        page.find("#command").await.send_keys("/tickets").await.unwrap();
        page.find("#composer button[type=submit]").await.click().await.unwrap();
        page.wait_text("#messages", |t| t.contains("Need help?") && t.contains("The panel is posted.")).await;
        let press = |label: &str| {
            format!("const b = [...document.querySelectorAll('#messages .row button')].find(b => b.textContent.includes('{label}')); if (!b) return 'no'; b.click(); return 'ok'")
        };
        page.wait_js(&press("Open a ticket"), "ok").await;
        let shown = page
            .wait_text("#messages", |t| t.contains("tell us what is wrong") && t.contains("Your ticket is open"))
            .await;
        assert!(shown.contains("created a channel #ticket-you"), "{shown}");
        assert!(shown.contains("in #ticket-you"), "{shown}");
        page.wait_js(&press("Close"), "ok").await;
        let shown = page.wait_text("#messages", |t| t.contains("deleted the channel")).await;
        assert!(shown.contains("Closed by"), "{shown}");
        assert!(shown.contains("Ticket #ticket-you closed"), "{shown}");
        screenshot(&browser, "tickets.png").await;
        browser.close().await.unwrap();
    });
}

/// What an action changes is drawn where the client shows it: a reaction
/// under its message, a role given to the member playing in "Playing as",
/// a timeout marked on them.
#[test]
fn actions_on_the_member_playing_show_in_the_page() {
    let Some(driver) = chromedriver() else { return };
    let program = "command me \"Act on me\" {\n    send to \"{channel_id}\" as note \"Noted\"\n    react \"👍\" to note\n    give role \"1400000000000000802\" to \"{user_id}\"\n    timeout \"{user_id}\" for \"10m\"\n    reply \"done\"\n}\n";
    let played = play(program, None, &["--offline"]);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let browser = browser(&driver).await;
        browser.goto(&played.url).await.unwrap();
        let page = Page(&browser);
        page.wait_text("#file", |t| t.ends_with("bot.blk")).await;
        page.find("#command").await.send_keys("/me").await.unwrap();
        page.find("#composer button[type=submit]").await.click().await.unwrap();
        page.wait_text("#messages", |t| t.contains("done") && t.contains("👍 1")).await;
        page.wait_js("return document.querySelector('#user-roles').value", "1400000000000000802").await;
        let state = page.wait_text("#who-state", |t| t.starts_with("(timed out until")).await;
        assert!(state.ends_with(')'), "{state}");
        browser.close().await.unwrap();
    });
}

/// Issue 52: the page fires any kind, with the values that matter to it
/// editable (a reaction's emoji), and posts a webhook event, its body the
/// sample to begin with and edited, signed as its sender would: each run
/// reaches the page.
#[test]
fn any_event_kind_and_a_webhook_are_fired_from_the_page() {
    let Some(driver) = chromedriver() else { return };
    let program = "event reaction_add {\n    reply \"{user_mention} reacted {emoji}\"\n}\n\n\
                   event deploy webhook \"/hooks/deploy\" signed bearer secret \"<DEPLOY_TOKEN>\" sample \"deploy.json\" {\n    \
                   send to \"1400000000000000002\" \"Deployed {api_webhook[response.version]}\"\n}\n";
    let played = play_with(program, None, &[("deploy.json", br#"{"version": "1.0.0"}"#)], &["--offline"]);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let browser = browser(&driver).await;
        browser.goto(&played.url).await.unwrap();
        let page = Page(&browser);
        page.wait_js("return document.getElementById('event-kind').options.length", "2").await;
        // A reaction: its emoji is a value of its own, edited.
        page.wait_js("return document.querySelector('#event-fields [name=emoji]').value", "👍").await;
        page.js("document.querySelector('#event-fields [name=emoji]').value = '🎉'").await;
        page.find("#events button").await.click().await.unwrap();
        page.wait_text("#messages", |t| t.contains("reacted 🎉")).await;
        // The webhook: its body shown as the sample, edited, then posted.
        page.find("#event-kind").await.select_by_value("deploy").await.unwrap();
        let body = page.js("return document.querySelector('#event-fields [name=body]').value").await;
        assert!(body.contains("1.0.0"), "{body}");
        page.js("document.querySelector('#event-fields [name=body]').value = '{\"version\": \"2.1.0\"}'").await;
        page.find("#events button").await.click().await.unwrap();
        page.wait_text("#messages", |t| t.contains("Deployed 2.1.0")).await;
        screenshot(&browser, "webhook.png").await;
        browser.close().await.unwrap();
    });
}

/// Issue 53, item 7: text typed in the composer that is no command is the
/// member's message in the channel, and an `await` of theirs takes it.
#[test]
fn a_message_typed_in_the_page_answers_an_await_in_a_real_browser() {
    let Some(driver) = chromedriver() else { return };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let example = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/quiz.blk")).unwrap();
    let played = play(&example, None, &["--offline"]);
    runtime.block_on(async {
        let browser = browser(&driver).await;
        browser.goto(&played.url).await.unwrap();
        let css = |c: &'static str| {
            let browser = browser.clone();
            move || {
                let browser = browser.clone();
                async move { browser.find(fantoccini::Locator::Css(c)).await.unwrap().text().await.unwrap() }
            }
        };
        let command = browser.find(fantoccini::Locator::Css("#command")).await.unwrap();
        wait_for(
            || {
                let browser = browser.clone();
                async move {
                    let n = browser.execute("return state.commands.length", vec![]);
                    n.await.map(|v| v.to_string()).unwrap_or_default()
                }
            },
            |n| n == "2",
        )
        .await;
        command.send_keys("/quiz").await.unwrap();
        browser.find(fantoccini::Locator::Css("#composer button[type=submit]")).await.unwrap().click().await.unwrap();
        wait_for(css("#messages"), |t| t.contains("What is 6 × 7?")).await;
        wait_for(css("#waiting"), |t| t.contains("quiz#")).await;
        // (The page keeps the command written, to run it again.)
        command.clear().await.unwrap();
        command.send_keys("42").await.unwrap();
        browser.find(fantoccini::Locator::Css("#composer button[type=submit]")).await.unwrap().click().await.unwrap();
        wait_for(css("#messages"), |t| t.contains("right! Your score is 1.")).await;
        browser.close().await.unwrap();
    });
}

/// Issue 54: an embed's author links to its `author_url` with its
/// `author_icon` beside it, and its footer has its `footer_icon`, as the
/// client draws them.
#[test]
fn an_embed_s_author_link_and_icons_are_drawn_in_a_real_browser() {
    let Some(driver) = chromedriver() else { return };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let program = r#"command card "A card" {
    reply {
        embed {
            title "Hello"
            author "Ada"
            author_url "https://example.com/ada"
            author_icon "https://example.com/ada.png"
            footer "From blkc"
            footer_icon "https://example.com/f.png"
        }
    }
}
"#;
    let played = play(program, None, &["--offline"]);
    runtime.block_on(async {
        let browser = browser(&driver).await;
        browser.goto(&played.url).await.unwrap();
        let js = |script: &'static str| {
            let browser = browser.clone();
            move || {
                let browser = browser.clone();
                async move { browser.execute(script, vec![]).await.map(|v| v.to_string()).unwrap_or_default() }
            }
        };
        let css = |c: &'static str| {
            let browser = browser.clone();
            move || {
                let browser = browser.clone();
                async move { browser.find(fantoccini::Locator::Css(c)).await.unwrap().text().await.unwrap() }
            }
        };
        let drawn = "const a = document.querySelector('.embed .author a'); \
                     return [a ? a.href : '', document.querySelectorAll('.embed img.icon').length].join(' ')";
        let command = browser.find(fantoccini::Locator::Css("#command")).await.unwrap();
        let commands = "return String(state.commands.length)";
        wait_for(js(commands), |n| n.contains('1')).await;
        command.send_keys("/card").await.unwrap();
        browser.find(fantoccini::Locator::Css("#composer button[type=submit]")).await.unwrap().click().await.unwrap();
        wait_for(css("#messages"), |t| t.contains("Ada")).await;
        wait_for(js(drawn), |t| t.contains("https://example.com/ada 2")).await;
        browser.close().await.unwrap();
    });
}

/// Issue 54: a layout message drawn as the client lays it out (a container
/// behind its accent bar, a section's thumbnail beside its text, a gallery's
/// grid, a separator), and a click on a section's button updating it.
#[test]
fn a_layout_message_is_drawn_and_its_section_s_button_clicked_in_a_real_browser() {
    let Some(driver) = chromedriver() else { return };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let program = r###"var likes per channel = 0

command card "A card" {
    reply {
        container {
            accent "#57F287"
            section {
                text "## Ada"
                thumbnail "https://example.com/ada.png" { description "Ada's picture" }
            }
            separator
            gallery {
                media "https://example.com/1.png"
                media "https://example.com/2.png"
            }
            section {
                text "Likes: {likes}"
                button like { label "Like" }
            }
        }
    }
}

handler like {
    save likes = likes + 1
    update {
        container {
            text "Liked {likes} times"
        }
    }
}
"###;
    let played = play(program, None, &["--offline"]);
    runtime.block_on(async {
        let browser = browser(&driver).await;
        browser.goto(&played.url).await.unwrap();
        let js = |script: &'static str| {
            let browser = browser.clone();
            move || {
                let browser = browser.clone();
                async move { browser.execute(script, vec![]).await.map(|v| v.to_string()).unwrap_or_default() }
            }
        };
        let drawn = "const c = document.querySelector('#messages .container'); if (!c) return ''; \
                     return [getComputedStyle(c).borderLeftColor, \
                             c.querySelectorAll('.section img.thumbnail').length, \
                             c.querySelector('.section img.thumbnail').alt, \
                             c.querySelectorAll('.gallery img.media').length, \
                             c.querySelectorAll('hr.separator').length, \
                             c.querySelector('.text-display').textContent].join('|')";
        let command = browser.find(fantoccini::Locator::Css("#command")).await.unwrap();
        let commands = "return String(state.commands.length)";
        wait_for(js(commands), |n| n.contains('1')).await;
        command.send_keys("/card").await.unwrap();
        browser.find(fantoccini::Locator::Css("#composer button[type=submit]")).await.unwrap().click().await.unwrap();
        // #57F287 is rgb(87, 242, 135).
        wait_for(js(drawn), |t| t.contains("rgb(87, 242, 135)|1|Ada's picture|2|1|Ada")).await;
        browser.find(fantoccini::Locator::Css("#messages .section button")).await.unwrap().click().await.unwrap();
        let updated = "const c = document.querySelector('#messages .container'); return c ? c.textContent : ''";
        wait_for(js(updated), |t| t.contains("Liked 1 times")).await;
        browser.close().await.unwrap();
    });
}

/// Issue 54: a form of today's kinds of input drawn in a real browser (its
/// text, a radio group, checkboxes, a checkbox, an upload with a real
/// file), filled in and sent in the platform's shapes:
/// its handler reads each.
#[test]
fn a_form_of_every_kind_of_input_is_filled_in_a_real_browser() {
    let Some(driver) = chromedriver() else { return };
    let program = r#"command apply "Apply" {
    form application {
        title "Application"
        text "Only the staff read this."
        input level {
            label "Experience"
            radio
            choice "New" "new"
            choice "Some" "some"
        }
        input days {
            label "Days"
            checkboxes
            optional
            choice "Mon" "mon"
            choice "Tue" "tue"
        }
        input work { label "Work" upload optional }
        input agree { label "I agree" checkbox }
    }
}

handler application {
    reply "level={field_level} days={field_days} work={field_work_name} ({field_work_size}) agree={field_agree}"
}
"#;
    let played = play(program, None, &["--offline"]);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("flyer.png");
    std::fs::write(&file, [0u8; 1234]).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let browser = browser(&driver).await;
        browser.goto(&played.url).await.unwrap();
        let page = Page(&browser);
        page.wait_js("return state.commands.length", "1").await;
        page.find("#command").await.send_keys("/apply").await.unwrap();
        page.find("#composer button[type=submit]").await.click().await.unwrap();
        page.wait_js("return document.getElementById('form').open", "true").await;
        let text = page.js("return document.querySelector('#form-inputs .text-display').textContent").await;
        assert_eq!(text, "Only the staff read this.");
        page.find("#form-inputs input[name=level][value=some]").await.click().await.unwrap();
        page.find("#form-inputs input[name=days][value=tue]").await.click().await.unwrap();
        page.find("#form-inputs input[name=agree]").await.click().await.unwrap();
        page.find("#form-inputs input[name=work]").await.send_keys(file.to_str().unwrap()).await.unwrap();
        page.find("#form-send").await.click().await.unwrap();
        page.wait_text("#messages", |t| t.contains("level=some days=tue work=flyer.png (1234) agree=true")).await;
        browser.close().await.unwrap();
    });
}

/// Issue 54: a poll drawn in a real browser and voted in: the vote is the
/// platform's `poll_vote_add` event, the bot's event counts it, and the
/// poll ended early gives the results the page's votes make.
#[test]
fn a_poll_is_voted_in_and_ended_in_a_real_browser() {
    let Some(driver) = chromedriver() else { return };
    let example = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/vote.blk")).unwrap();
    let played = play(&example, None, &["--offline"]);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let browser = browser(&driver).await;
        browser.goto(&played.url).await.unwrap();
        let page = Page(&browser);
        page.wait_js("return state.commands.length", "2").await;
        let command = page.find("#command").await;
        command.send_keys("/vote").await.unwrap();
        page.find("#composer button[type=submit]").await.click().await.unwrap();
        page.wait_text("#messages", |t| t.contains("Which game on Friday?")).await;
        page.find("#messages .poll button.answer[data-answer='3']").await.click().await.unwrap();
        page.wait_js(
            "return document.querySelector('#messages .poll button.answer[data-answer=\"3\"] .count').textContent",
            "1",
        )
        .await;
        command.clear().await.unwrap();
        command.send_keys("/results").await.unwrap();
        page.find("#composer button[type=submit]").await.click().await.unwrap();
        page.wait_text("#messages", |t| t.contains("Catan: 1")).await;
        browser.close().await.unwrap();
    });
}

/// A 1×1 PNG (a real one: the browser decodes it).
const PNG: &[u8] = b"\x89\x50\x4e\x47\x0d\x0a\x1a\x0a\x00\x00\x00\x0d\x49\x48\x44\x52\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\x0d\x49\x44\x41\x54\x78\x9c\x63\xf8\xcf\xc0\xf0\x1f\x00\x05\x00\x01\xff\x89\x99\x3d\x1d\x00\x00\x00\x00\x49\x45\x4e\x44\xae\x42\x60\x82";

/// Issue 54: a reply's files as the client shows them, in a real browser:
/// an image an embed shows by `attachment://` (loaded from the stand-in, as
/// the platform's CDN serves it, and not shown a second time), a CSV as its
/// name and size whose link downloads its bytes, and a layout message's
/// file where it stands.
#[test]
fn a_reply_s_files_are_shown_and_downloaded_in_a_real_browser() {
    let Some(driver) = chromedriver() else { return };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let program = r#"command export "Export" {
    reply {
        text "Your export"
        file "chart.png"
        file text "name,qty\nlamp,3\n" { filename "stock.csv" }
        embed {
            title "Chart"
            image "attachment://chart.png"
        }
    }
}

command card "Card" {
    reply {
        container {
            text "Notes"
            file text "first note" { filename "notes.txt" }
        }
    }
}
"#;
    let played = play_with(program, None, &[("chart.png", PNG)], &["--offline"]);
    runtime.block_on(async {
        let browser = browser(&driver).await;
        browser.goto(&played.url).await.unwrap();
        let page = Page(&browser);
        page.wait_js("return String(state.commands.length)", "2").await;
        let command = page.find("#command").await;
        command.send_keys("/export").await.unwrap();
        page.find("#composer button[type=submit]").await.click().await.unwrap();
        let drawn = "const m = [...document.querySelectorAll('#messages .message')].find(m => m.querySelector('.embed')); \
                     if (!m) return ''; const img = m.querySelector('.embed img.image'); \
                     const f = m.querySelector('a.file'); \
                     return [img && img.complete && img.naturalWidth, m.querySelectorAll('img').length, \
                             f && f.querySelector('.file-name').textContent, f && f.querySelector('.file-size').textContent, \
                             f && f.getAttribute('download')].join('|')";
        page.wait_js(drawn, "1|1|stock.csv|16 bytes|stock.csv").await;
        let fetched = "return (async () => { const f = document.querySelector('#messages a.file'); \
                       const r = await fetch(f.href); return r.headers.get('content-disposition') + '|' + await r.text() })()";
        assert_eq!(page.js(fetched).await, "attachment; filename=\"stock.csv\"|name,qty\nlamp,3\n");
        command.clear().await.unwrap();
        command.send_keys("/card").await.unwrap();
        page.find("#composer button[type=submit]").await.click().await.unwrap();
        page.wait_text("#messages .container a.file .file-name", |t| t == "notes.txt").await;
        browser.close().await.unwrap();
    });
}

/// Issue 54: a component with `expires` in play, on the bot's clock: the
/// answer's message carries when it was sent, a click within its time runs,
/// and once the page moved the clock past it the click is told it expired.
#[test]
fn a_component_expires_on_play_s_clock() {
    let program = "command ask \"Ask\" {\n    reply {\n        text \"Quick!\"\n        button go { label \"Go\" expires \"10m\" }\n    }\n}\n\nhandler go {\n    reply \"went\"\n}\n";
    let played = play(program, None, &["--offline"]);
    let answered = played.send(json!({ "type": 2, "data": { "type": 1, "name": "ask" } }));
    let data = &answered["answer"]["data"];
    assert!(answered["timestamp"].as_str().is_some_and(|t| t.starts_with("20")), "{answered}");
    let button = &data["components"][0]["components"][0];
    let message = json!({ "id": "play-1", "components": data["components"], "timestamp": answered["timestamp"] });
    let click =
        json!({ "type": 3, "data": { "custom_id": button["custom_id"], "component_type": 2 }, "message": message });
    let went = played.send(click.clone());
    assert_eq!(went["answer"]["data"]["content"], "went", "{went}");
    let (status, body) = played.post("/play/clock", br#"{"forward":"11m"}"#, &[]);
    assert_eq!(status, 200, "{body}");
    let expired = played.send(click);
    assert_eq!(expired["answer"]["data"]["content"], "This has expired: it no longer does anything.", "{expired}");
}

/// Issue 56, items 2 and 4, the newcomer's case: a reply's lines (the docs'
/// `join "\n"` loop, an embed's description) keep their breaks on the page,
/// and the newest answer is in view however many came before it.
#[test]
fn the_page_keeps_line_breaks_and_shows_the_newest_answer() {
    let Some(driver) = chromedriver() else { return };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let program = r#"var items = ["tea", "cake", "jam"]

command list "The list" {
    for item in items join "\n" into lines {
        text "- {item}"
    }
    reply {
        text "Today:\n{lines}"
        embed { description "first line\nsecond line" }
    }
}
"#;
    let played = play(program, None, &["--offline"]);
    runtime.block_on(async {
        let browser = browser(&driver).await;
        browser.goto(&played.url).await.unwrap();
        let page = Page(&browser);
        page.wait_text("#file", |t| t.ends_with("bot.blk")).await;
        let command = page.find("#command").await;
        for n in 1..=20 {
            command.clear().await.unwrap();
            command.send_keys("/list").await.unwrap();
            page.find("#composer button[type=submit]").await.click().await.unwrap();
            let count = "return String(document.querySelectorAll('#messages .embed').length)";
            page.wait_js(count, &n.to_string()).await;
        }
        let last = "const m = [...document.querySelectorAll('#messages .message')].pop(); \
                    return m.querySelector('.content').innerText + '|' + m.querySelector('.embed .description').innerText";
        // (The joined lines are a markdown list, as the client shows one.)
        assert_eq!(page.js(last).await, "Today:\ntea\ncake\njam|first line\nsecond line");
        // The newest answer is in view: the conversation scrolled to it.
        let in_view = "const main = document.querySelector('main'); \
                       const last = [...document.querySelectorAll('#messages .message')].pop().getBoundingClientRect(); \
                       const box = main.getBoundingClientRect(); \
                       return String(main.scrollHeight > main.clientHeight && last.bottom <= box.bottom + 1 && last.top >= box.top)";
        page.wait_js(in_view, "true").await;
        browser.close().await.unwrap();
    });
}

/// Issue 56, item 5, the newcomer's case: "Playing as" takes permissions by
/// their names (as `require permissions` writes them), and a name that is
/// none is said on the page instead of playing a member with none.
#[test]
fn playing_as_takes_permissions_by_name_and_says_a_wrong_one() {
    let Some(driver) = chromedriver() else { return };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let program = "command kick \"Kick\" {\n    require permissions kick_members\n    reply \"allowed\"\n}\n";
    let played = play(program, None, &["--offline"]);
    runtime.block_on(async {
        let browser = browser(&driver).await;
        browser.goto(&played.url).await.unwrap();
        let page = Page(&browser);
        page.wait_text("#file", |t| t.ends_with("bot.blk")).await;
        page.js("document.querySelector('#who').open = true; return ''").await;
        let permissions = page.find("#user-permissions").await;
        let command = page.find("#command").await;
        let last = "const m = [...document.querySelectorAll('#messages .message')].pop(); return m ? m.innerText : ''";
        for (given, answer) in [
            ("kick_members", "allowed"),
            ("send_messages", "You need"),
            (
                "kick_memberz",
                "blkc play: Playing as: no permission is called `kick_memberz`; did you mean `kick_members`?",
            ),
        ] {
            permissions.clear().await.unwrap();
            permissions.send_keys(given).await.unwrap();
            command.clear().await.unwrap();
            command.send_keys("/kick").await.unwrap();
            page.find("#composer button[type=submit]").await.click().await.unwrap();
            let shown = wait_for(|| page.js(last), |t| t.contains(answer)).await;
            assert!(given == "kick_members" || !shown.contains("allowed"), "{given}: {shown}");
        }
        browser.close().await.unwrap();
    });
}

/// Issue 56, item 1, the newcomer's case: in `play --offline`, an edit that
/// adds a command with a secret reaches the bot (offline needs no secrets,
/// at a reload as at the start); without `--offline`, the reload serve
/// refuses (the secret has no value) is shown on the page, not silent.
#[test]
fn an_edit_with_a_secret_reloads_offline_and_a_refused_reload_is_shown() {
    let first = "command hi \"Hi\" {\n    reply \"hi\"\n}\n";
    let with_secret = "command hi \"Hi\" {\n    reply \"hi\"\n}\ncommand order \"Order\" {\n    api order {\n        method GET\n        url \"https://shop.example.com/orders/1\"\n        headers { X-Api-Key = \"<SHOP_KEY>\" }\n        sample \"order.json\"\n    }\n    reply \"order {api_order[response.state]}\"\n}\n";
    let order = json!({ "type": 2, "data": { "type": 1, "name": "order" } });
    for offline in [true, false] {
        let args: &[&str] = if offline { &["--offline"] } else { &[] };
        let played = play_with(first, None, &[("order.json", br#"{"state": "packed"}"#)], args);
        std::fs::write(played._dir.path().join("bot.blk"), with_secret).unwrap();
        let file = || -> Value { serde_json::from_str(&played.get("/play/file").2).unwrap() };
        if offline {
            // The bot takes the new version when its own watch sees it.
            let said = || played.send(order.clone())["answer"]["data"]["content"].clone();
            let packed = crate::support::wait::eventually(30, || said() == "order packed");
            assert!(packed, "the edit reached the bot: {}", said());
            assert_eq!(file()["refused"], json!([]), "nothing refused");
        } else {
            let refused = crate::support::wait::until(30, || {
                let refused = file()["refused"].clone();
                refused.as_array().is_some_and(|r| !r.is_empty()).then_some(refused)
            });
            let refused = refused.unwrap_or_else(|| panic!("no refusal shown: {}", file()));
            assert_eq!(refused[0]["code"], "B306", "{refused}");
            assert!(refused[0]["message"].as_str().unwrap().contains("SHOP_KEY"), "{refused}");
        }
    }
}

/// Issue 56, item 6, the newcomer's case: a button used up (`max_clicks`)
/// looks used up on the page, as the platform disables it on its message:
/// the message it is on is edited in place, and a second message's button
/// counts its own clicks.
#[test]
fn a_used_up_button_is_disabled_on_its_message_in_a_real_browser() {
    let Some(driver) = chromedriver() else { return };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let program = "command claim \"Claim\" {\n    reply {\n        text \"One prize\"\n        button take { label \"Take\" max_clicks 1 }\n    }\n}\n\nhandler take {\n    reply \"taken by {user_name}\"\n}\n";
    let played = play(program, None, &["--offline"]);
    runtime.block_on(async {
        let browser = browser(&driver).await;
        browser.goto(&played.url).await.unwrap();
        let page = Page(&browser);
        page.wait_text("#file", |t| t.ends_with("bot.blk")).await;
        let command = page.find("#command").await;
        for _ in 0..2 {
            command.clear().await.unwrap();
            command.send_keys("/claim").await.unwrap();
            page.find("#composer button[type=submit]").await.click().await.unwrap();
        }
        let buttons = "return String(document.querySelectorAll('#messages .row button').length)";
        page.wait_js(buttons, "2").await;
        page.find("#messages .row button").await.click().await.unwrap();
        page.wait_text("#messages", |t| t.contains("taken by you")).await;
        // The first message's button is disabled in place; the second's is not.
        let states =
            "return [...document.querySelectorAll('#messages .row button')].map(b => String(b.disabled)).join(',')";
        page.wait_js(states, "true,false").await;
        // (A command heads its answer, as the client's: two answers and the click's.)
        assert_eq!(page.js("return String(document.querySelectorAll('#messages .message').length)").await, "3");
        browser.close().await.unwrap();
    });
}

/// Issue 56, item 8, the newcomer's case: a menu shows its placeholder
/// again once a choice is sent (the client resets it), an offline
/// request's line in the inspector says it was answered from its sample
/// (never "in null ms"), and the page asks for no favicon it lacks.
#[test]
fn a_menu_resets_after_a_choice_and_an_offline_request_says_so() {
    let Some(driver) = chromedriver() else { return };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let program = r#"command pick "Pick" {
    reply {
        text "Pick a size"
        select size {
            placeholder "Size"
            choice "Small" "small"
            choice "Large" "large"
        }
    }
}

handler size {
    api stock {
        method GET
        url "https://shop.example.com/stock/{value}"
        sample "stock.json"
    }
    reply "{value}: {api_stock[response.left]} left"
}
"#;
    let played = play_with(program, None, &[("stock.json", br#"{"left": 3}"#)], &["--offline"]);
    runtime.block_on(async {
        let browser = browser(&driver).await;
        browser.goto(&played.url).await.unwrap();
        let page = Page(&browser);
        assert_eq!(
            page.js("const l = document.querySelector('link[rel=icon]'); return l ? l.href : ''").await,
            "data:,"
        );
        page.wait_text("#file", |t| t.ends_with("bot.blk")).await;
        page.find("#command").await.send_keys("/pick").await.unwrap();
        page.find("#composer button[type=submit]").await.click().await.unwrap();
        page.wait_js("return String(document.querySelectorAll('#messages select').length)", "1").await;
        page.find("#messages select").await.select_by_value("large").await.unwrap();
        page.wait_text("#messages", |t| t.contains("large: 3 left")).await;
        assert_eq!(page.js("return document.querySelector('#messages select').value").await, "");
        let inspect = "return String(document.querySelectorAll('#messages .inspect').length)";
        page.wait_js(inspect, "2").await;
        let buttons = browser.find_all(fantoccini::Locator::Css("#messages .inspect")).await.unwrap();
        buttons[1].click().await.unwrap();
        let run = page.wait_text("#runs details[open]", |t| t.contains("stock:")).await;
        assert!(run.contains("answered from its sample") && !run.contains("null"), "{run}");
        browser.close().await.unwrap();
    });
}

/// Issue 56, item 3, the newcomer's case: a context-menu command is played
/// from the command picker, as the client opens it from a menu: a user's on
/// the member playing, a message's on the newest message shown (or, with
/// none, the page says so).
#[test]
fn context_menu_commands_are_played_from_the_picker() {
    let Some(driver) = chromedriver() else { return };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let program = r#"command hi "Hi" {
    reply "hello there"
}

command "High five" for user {
    reply "{user_name} high-fives {target_user_name}!"
}

command "Quote" for message {
    reply "quoted: {target_message_content}"
}
"#;
    let played = play(program, None, &["--offline"]);
    runtime.block_on(async {
        let browser = browser(&driver).await;
        browser.goto(&played.url).await.unwrap();
        let page = Page(&browser);
        page.wait_js("return String(state.commands.length)", "3").await;
        let command = page.find("#command").await;
        let last = "const m = [...document.querySelectorAll('#messages .message')].pop(); return m ? m.innerText : ''";
        for (typed, answer) in [
            ("/Quote", "No message to use /Quote on"),
            ("/hi", "hello there"),
            ("/Quote", "quoted: hello there"),
            ("/High five", "you high-fives you!"),
        ] {
            command.clear().await.unwrap();
            command.send_keys(typed).await.unwrap();
            page.find("#composer button[type=submit]").await.click().await.unwrap();
            wait_for(|| page.js(last), |t| t.contains(answer)).await;
        }
        browser.close().await.unwrap();
    });
}
