//! `blkc lsp` driven over real stdio with JSON-RPC messages, as an editor
//! does: initialize, open, change, every feature, shutdown.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::Duration;

use insta_cmd::get_cargo_bin;
use serde_json::{json, Value};

pub struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    messages: Receiver<Value>,
    next_id: i64,
    /// Notifications received while waiting for something else.
    pending: Vec<Value>,
}

const WAIT: Duration = Duration::from_secs(20);

impl Client {
    pub fn start(envs: &[(&str, &str)]) -> Client {
        let mut cmd = Command::new(get_cargo_bin("blkc"));
        cmd.arg("lsp").stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
        // Code pages go to the cache folder: not the tester's own.
        cmd.env("XDG_CACHE_HOME", std::env::temp_dir().join("blkc-lsp-tests"));
        for (k, v) in envs {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut length = 0;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(n) = line.strip_prefix("Content-Length: ") {
                        length = n.parse().unwrap();
                    }
                }
                let mut body = vec![0; length];
                if reader.read_exact(&mut body).is_err() {
                    return;
                }
                if tx.send(serde_json::from_slice(&body).unwrap()).is_err() {
                    return;
                }
            }
        });
        let stdin = child.stdin.take();
        let mut client = Client { child, stdin, messages: rx, next_id: 0, pending: Vec::new() };
        let result = client.request("initialize", json!({ "processId": null, "rootUri": null, "capabilities": {} }));
        assert!(result["capabilities"]["hoverProvider"].as_bool().unwrap());
        client.notify("initialized", json!({}));
        client
    }

    fn send(&mut self, message: Value) {
        let body = serde_json::to_string(&message).unwrap();
        let stdin = self.stdin.as_mut().unwrap();
        write!(stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        stdin.flush().unwrap();
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({ "jsonrpc": "2.0", "method": method, "params": params }));
    }

    /// The whole response (result or error) to a request.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        loop {
            let message = self.messages.recv_timeout(WAIT).expect("a response in time");
            if message["id"] == id && message.get("method").is_none() {
                return message;
            }
            self.pending.push(message);
        }
    }

    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let response = self.call(method, params);
        assert!(response.get("error").is_none(), "{method} failed: {response}");
        response["result"].clone()
    }

    /// The next notification of `method` (earlier ones kept are used first).
    pub fn notification(&mut self, method: &str) -> Value {
        if let Some(i) = self.pending.iter().position(|m| m["method"] == method) {
            return self.pending.remove(i)["params"].clone();
        }
        loop {
            let message = self.messages.recv_timeout(WAIT).unwrap_or_else(|_| panic!("no {method} in time"));
            if message["method"] == method {
                return message["params"].clone();
            }
            self.pending.push(message);
        }
    }

    pub fn open(&mut self, uri: &str, text: &str) -> Value {
        self.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": uri, "languageId": "blk", "version": 1, "text": text } }),
        );
        self.notification("textDocument/publishDiagnostics")
    }

    pub fn change(&mut self, uri: &str, version: i32, text: &str) -> Value {
        self.notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": [{ "text": text }] }),
        );
        self.notification("textDocument/publishDiagnostics")
    }

    /// A position request at the `n`th occurrence of `needle` in `text`,
    /// `shift` characters into it.
    pub fn at(&mut self, method: &str, uri: &str, text: &str, needle: &str, shift: usize) -> Value {
        let offset = text.find(needle).unwrap_or_else(|| panic!("{needle:?} not in the text")) + shift;
        let line = text[..offset].matches('\n').count();
        let character = text[text[..offset].rfind('\n').map_or(0, |i| i + 1)..offset].encode_utf16().count();
        let mut params =
            json!({ "textDocument": { "uri": uri }, "position": { "line": line, "character": character } });
        if method == "textDocument/references" {
            params["context"] = json!({ "includeDeclaration": true });
        }
        self.request(method, params)
    }

    pub fn shutdown(mut self) -> i32 {
        self.request("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        drop(self.stdin.take());
        wait_exit(&mut self.child)
    }
}

fn wait_exit(child: &mut Child) -> i32 {
    for _ in 0..200 {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code().unwrap_or(-1);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    panic!("the server did not exit");
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const BOT: &str = r#"var visits = "0"

command weather "Current weather" {
    option city "City to look up"
    api forecast {
        method GET
        url "https://api.example.com/weather"
        params { q = "{option_city}" }
        sample "samples/forecast.json"
    }
    reply "It is {api_forecast[response.main.temp]} in {api_forecast[response.name]}, {option_city}"
    save visits = "{visits}1"
}
"#;

fn workspace() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lsp");
    std::fs::create_dir_all(dir.path().join("samples")).unwrap();
    std::fs::copy(fixtures.join("samples/forecast.json"), dir.path().join("samples/forecast.json")).unwrap();
    std::fs::write(dir.path().join("bot.blk"), BOT).unwrap();
    let uri = file_uri(&dir.path().join("bot.blk"));
    (dir, uri)
}

fn codes(published: &Value) -> Vec<String> {
    published["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["severity"] != 4)
        .map(|d| d["code"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn diagnostics_on_open_and_change_are_check_s() {
    let (_dir, uri) = workspace();
    let mut client = Client::start(&[]);
    let published = client.open(&uri, BOT);
    assert_eq!(codes(&published), Vec::<String>::new(), "{published}");
    let broken = BOT.replace("response.main.temp", "response.main.tmep").replace("method GET", "method get");
    let published = client.change(&uri, 2, &broken);
    assert_eq!(published["version"], 2);
    let diags = published["diagnostics"].as_array().unwrap();
    let b201 = diags.iter().find(|d| d["code"] == "B201").expect("the sample check, as `blkc check`");
    assert_eq!(b201["source"], "blkc");
    assert_eq!(b201["severity"], 1);
    assert_eq!(b201["range"]["start"]["line"], 10);
    assert!(b201["message"].as_str().unwrap().contains("help:"));
    // The code links to its page.
    let page =
        blkc::host::lsp::protocol::uri_to_path(&b201["codeDescription"]["href"].as_str().unwrap().parse().unwrap())
            .unwrap();
    assert!(std::fs::read_to_string(page).unwrap().starts_with("# B201"));
    assert!(diags.iter().any(|d| d["code"] == "B103"));
    // The same findings as the command line.
    let checked = blkc::language::load::check_source(blkc::base::source::SourceFile::new("bot.blk", broken.clone()));
    assert!(checked.diagnostics.iter().any(|d| d.code.as_str() == "B103"));
    // Related information for a diagnostic's other labels.
    let twice =
        BOT.replace("    reply \"It", "    api forecast { method GET url \"https://x.example\" }\n    reply \"It");
    let published = client.change(&uri, 3, &twice);
    let b101 = published["diagnostics"].as_array().unwrap().iter().find(|d| d["code"] == "B101").unwrap().clone();
    assert_eq!(b101["relatedInformation"][0]["location"]["uri"], uri);
    assert_eq!(client.shutdown(), 0);
}

#[test]
fn quick_fixes_come_from_the_suggestions() {
    let (_dir, uri) = workspace();
    let mut client = Client::start(&[]);
    let text = BOT.replace("method GET", "method get");
    let published = client.open(&uri, &text);
    let diag = published["diagnostics"].as_array().unwrap().iter().find(|d| d["code"] == "B103").unwrap().clone();
    let actions = client.request(
        "textDocument/codeAction",
        json!({ "textDocument": { "uri": uri }, "range": diag["range"], "context": { "diagnostics": [diag] } }),
    );
    let action = &actions[0];
    assert_eq!(action["kind"], "quickfix");
    assert_eq!(action["isPreferred"], true);
    assert_eq!(action["edit"]["changes"][&uri][0]["newText"], "GET");
    // A syntax error's fix: `:` for `=`.
    let text = BOT.replace("q = \"{option_city}\"", "q: \"{option_city}\"");
    let published = client.change(&uri, 2, &text);
    let diag = published["diagnostics"][0].clone();
    let actions = client.request(
        "textDocument/codeAction",
        json!({ "textDocument": { "uri": uri }, "range": diag["range"], "context": { "diagnostics": [diag] } }),
    );
    assert_eq!(actions[0]["edit"]["changes"][&uri][0]["newText"], " =");
}

#[test]
fn hover_shows_sample_values_blocks_variables_and_codes() {
    let (_dir, uri) = workspace();
    let mut client = Client::start(&[]);
    client.open(&uri, BOT);
    let hover = client.at("textDocument/hover", &uri, BOT, "response.main.temp", 14);
    let text = hover["contents"]["value"].as_str().unwrap();
    assert!(
        text.contains("api_forecast[response.main.temp]") && text.contains("a number") && text.contains("21.4"),
        "{text}"
    );
    // The path so far: on `main`, the object.
    let hover = client.at("textDocument/hover", &uri, BOT, "response.main.temp", 10);
    let text = hover["contents"]["value"].as_str().unwrap();
    assert!(text.contains("[response.main]") && text.contains("an object") && text.contains("humidity"), "{text}");
    let hover = client.at("textDocument/hover", &uri, BOT, "api forecast", 5);
    let text = hover["contents"]["value"].as_str().unwrap();
    assert!(text.contains("GET https://api.example.com/weather"), "{text}");
    let hover = client.at("textDocument/hover", &uri, BOT, "{option_city}\"", 2);
    let text = hover["contents"]["value"].as_str().unwrap();
    assert!(text.contains("option `city` (string): City to look up"), "{text}");
    let typed = BOT.replace("option city \"City to look up\"", "option city \"City to look up\" integer required");
    client.change(&uri, 2, &typed);
    let hover = client.at("textDocument/hover", &uri, &typed, "integer required", 3);
    let text = hover["contents"]["value"].as_str().unwrap();
    assert!(text.contains("option type `integer`") && text.contains("2^53") && text.contains("type 4"), "{text}");
    let hover = client.at("textDocument/hover", &uri, &typed, "{option_city}\"", 2);
    let text = hover["contents"]["value"].as_str().unwrap();
    assert!(text.contains("option `city` (integer, required): City to look up"), "{text}");
    client.change(&uri, 3, BOT);
    let hover = client.at("textDocument/hover", &uri, BOT, "{visits}", 2);
    assert!(hover["contents"]["value"].as_str().unwrap().contains("custom variable (declared on line 1)"));
    // A diagnostic's code: its page.
    let bad = BOT.replace("method GET", "method TRACE");
    client.change(&uri, 4, &bad);
    let hover = client.at("textDocument/hover", &uri, &bad, "TRACE", 1);
    assert!(hover["contents"]["value"].as_str().unwrap().contains("# B102"));
}

#[test]
fn completion_knows_blocks_paths_variables_and_keywords() {
    let (_dir, uri) = workspace();
    let mut client = Client::start(&[]);
    let labels =
        |v: &Value| v.as_array().unwrap().iter().map(|i| i["label"].as_str().unwrap().to_string()).collect::<Vec<_>>();
    let text = BOT.replace("{api_forecast[response.name]}", "{api_");
    client.open(&uri, &text);
    let items = client.at("textDocument/completion", &uri, &text, "{api_,", 5);
    assert_eq!(labels(&items), ["api_forecast"]);
    let text = BOT.replace("{api_forecast[response.name]}", "{api_forecast[response.weather.0.");
    client.change(&uri, 2, &text);
    let items = client.at("textDocument/completion", &uri, &text, "weather.0.", 10);
    assert_eq!(labels(&items), ["description", "id"]);
    let items = client.at("textDocument/completion", &uri, &text, "weather.0.", 8);
    assert_eq!(labels(&items), ["0"]);
    let text = BOT.replace("{api_forecast[response.name]}", "{");
    client.change(&uri, 3, &text);
    let items = labels(&client.at("textDocument/completion", &uri, &text, "in {,", 4));
    for v in ["option_city", "user_name", "visits", "bot_token", "api_forecast"] {
        assert!(items.contains(&v.to_string()), "{v} in {items:?}");
    }
    // Blocks that have not run yet are not offered.
    let text = BOT.replace("    option city", "    reply \"{api_\"\n    option city");
    client.change(&uri, 4, &text);
    assert!(labels(&client.at("textDocument/completion", &uri, &text, "{api_\"", 5)).is_empty());
    let text = format!("{BOT}\nevent \n");
    client.change(&uri, 5, &text);
    assert!(
        labels(&client.at("textDocument/completion", &uri, &text, "event \n", 6)).contains(&"member_join".to_string())
    );
    let text = BOT.replace("        sample", "        he\n        sample");
    client.change(&uri, 6, &text);
    assert!(labels(&client.at("textDocument/completion", &uri, &text, "he\n", 2)).contains(&"headers".to_string()));
    // After an option's description: its types and words.
    let text = BOT.replace("option city \"City to look up\"", "option city \"City to look up\" in");
    client.change(&uri, 7, &text);
    let items = labels(&client.at("textDocument/completion", &uri, &text, "up\" in", 6));
    for word in ["integer", "user", "attachment", "required", "choices"] {
        assert!(items.contains(&word.to_string()), "{word} in {items:?}");
    }
    assert!(!items.contains(&"reply".to_string()), "{items:?}");
    // Inside the description, nothing of the sort.
    let items = labels(&client.at("textDocument/completion", &uri, &text, "to look", 3));
    assert!(!items.contains(&"integer".to_string()), "{items:?}");
}

#[test]
fn an_embed_completes_its_parts_and_hovers_with_their_limits() {
    let (_dir, uri) = workspace();
    let mut client = Client::start(&[]);
    let labels =
        |v: &Value| v.as_array().unwrap().iter().map(|i| i["label"].as_str().unwrap().to_string()).collect::<Vec<_>>();
    let text = "command c \"C\" {\n    reply {\n        embed {\n            ti\n        }\n        te\n    }\n}\n";
    client.open(&uri, text);
    let items = labels(&client.at("textDocument/completion", &uri, text, "ti\n", 2));
    for word in ["title", "description", "color", "url", "thumbnail", "field"] {
        assert!(items.contains(&word.to_string()), "{word} in {items:?}");
    }
    assert!(!items.contains(&"reply".to_string()) && !items.contains(&"method".to_string()), "{items:?}");
    let items = labels(&client.at("textDocument/completion", &uri, text, "te\n", 2));
    for word in ["text", "ephemeral", "embed"] {
        assert!(items.contains(&word.to_string()), "{word} in {items:?}");
    }
    let text =
        "command c \"C\" {\n    reply {\n        embed {\n            title \"T\"\n            color \"#5865F2\"\n        }\n    }\n}\n";
    client.change(&uri, 2, text);
    let hover = client.at("textDocument/hover", &uri, text, "color \"", 2);
    let shown = hover["contents"].to_string();
    assert!(shown.contains("#RRGGBB"), "{shown}");
}

#[test]
fn components_complete_their_settings_hover_with_limits_and_lead_to_their_handler() {
    let (_dir, uri) = workspace();
    let mut client = Client::start(&[]);
    let labels =
        |v: &Value| v.as_array().unwrap().iter().map(|i| i["label"].as_str().unwrap().to_string()).collect::<Vec<_>>();
    let text = "command c \"C\" {\n    reply {\n        text \"Vote\"\n        button vote {\n            la\n        }\n        select pick {\n            pl\n        }\n    }\n}\n\nhandler vote {\n    update \"ok\"\n}\n";
    client.open(&uri, text);
    let items = labels(&client.at("textDocument/completion", &uri, text, "la\n", 2));
    for word in ["label", "emoji", "value", "url", "disabled", "success", "danger", "max_clicks", "cooldown"] {
        assert!(items.contains(&word.to_string()), "{word} in {items:?}");
    }
    assert!(!items.contains(&"reply".to_string()) && !items.contains(&"placeholder".to_string()), "{items:?}");
    let items = labels(&client.at("textDocument/completion", &uri, text, "pl\n", 2));
    for word in ["placeholder", "min", "max", "users", "choice"] {
        assert!(items.contains(&word.to_string()), "{word} in {items:?}");
    }
    let text = "command c \"C\" {\n    reply {\n        text \"Vote\"\n        button vote { label \"Yes\" }\n    }\n}\n\nhandler vote {\n    update \"ok\"\n}\n";
    client.change(&uri, 2, text);
    let hover = client.at("textDocument/hover", &uri, text, "label \"", 2);
    assert!(hover["contents"].to_string().contains("at most 80 characters"), "{hover}");
    let def = client.at("textDocument/definition", &uri, text, "vote { label", 1);
    let handler_line = text[..text.find("handler vote").unwrap()].matches('\n').count();
    assert_eq!(def["range"]["start"]["line"], handler_line, "{def}");
    assert_eq!(def["range"]["start"]["character"], "handler ".len(), "{def}");
    // A tree's head, after its name: its cooldown.
    let text = "command daily \"Daily\" co\n";
    client.change(&uri, 3, text);
    let items = labels(&client.at("textDocument/completion", &uri, text, " co\n", 3));
    assert!(items.contains(&"cooldown".to_string()) && !items.contains(&"reply".to_string()), "{items:?}");
    let text = "command daily \"Daily\" cooldown 30 p\n";
    client.change(&uri, 4, text);
    assert_eq!(labels(&client.at("textDocument/completion", &uri, text, " p\n", 2)), ["per"]);
}

#[test]
fn completion_inside_a_string_that_is_not_closed_yet() {
    // Typed without auto-closing quotes: the string runs on, so the file
    // does not parse, and completion still knows the tree and the sample.
    let (_dir, uri) = workspace();
    let mut client = Client::start(&[]);
    let labels =
        |v: &Value| v.as_array().unwrap().iter().map(|i| i["label"].as_str().unwrap().to_string()).collect::<Vec<_>>();
    let typed = "    reply \"{api_forecast[response.\n";
    let text = BOT.replace("    save visits", &format!("{typed}    save visits"));
    assert_eq!(codes(&client.open(&uri, &text)), ["B001"], "the file does not parse");
    let items = client.at("textDocument/completion", &uri, &text, "[response.\n", 10);
    assert_eq!(labels(&items), ["name", "main", "weather"]);
    let text = BOT.replace("    save visits", "    reply \"{api_forecast[response.weather.0.\n    save visits");
    client.change(&uri, 2, &text);
    let items = client.at("textDocument/completion", &uri, &text, "weather.0.\n", 10);
    assert_eq!(labels(&items), ["description", "id"]);
    let text = BOT.replace("    save visits", "    reply \"It is {op\n    save visits");
    client.change(&uri, 3, &text);
    let items = labels(&client.at("textDocument/completion", &uri, &text, "{op\n", 3));
    assert!(items.contains(&"option_city".to_string()), "{items:?}");
    // At the end of a file still being written top to bottom: nothing after
    // the cursor, no closing quote, no closing braces.
    let end = BOT.find("    reply").unwrap();
    for (n, typed) in
        ["    reply \"{api_forecast[response.", "    reply \"{api_forecast[response.weather.0."].iter().enumerate()
    {
        let text = format!("{}{typed}", &BOT[..end]);
        client.change(&uri, 4 + n as i32, &text);
        let items = client.at("textDocument/completion", &uri, &text, typed, typed.len());
        let want: &[&str] = if n == 0 { &["name", "main", "weather"] } else { &["description", "id"] };
        assert_eq!(labels(&items), want, "{typed}");
        // And with a newline typed after it.
        let text = format!("{text}\n");
        client.change(&uri, 10 + n as i32, &text);
        let items = client.at("textDocument/completion", &uri, &text, typed, typed.len());
        assert_eq!(labels(&items), want, "{typed} and a newline");
    }
}

#[test]
fn definition_references_and_rename() {
    let (dir, uri) = workspace();
    let mut client = Client::start(&[]);
    client.open(&uri, BOT);
    let def = client.at("textDocument/definition", &uri, BOT, "api_forecast[response.main", 6);
    assert_eq!(def["range"]["start"]["line"], 4);
    let def = client.at("textDocument/definition", &uri, BOT, "samples/forecast", 3);
    assert_eq!(def["uri"], file_uri(&dir.path().join("samples/forecast.json")));
    let def = client.at("textDocument/definition", &uri, BOT, "{visits}", 2);
    assert_eq!(def["range"]["start"]["line"], 0);
    let refs = client.at("textDocument/references", &uri, BOT, "api forecast", 5);
    assert_eq!(refs.as_array().unwrap().len(), 3);
    let rename = client.call(
        "textDocument/rename",
        json!({ "textDocument": { "uri": uri }, "position": { "line": 4, "character": 9 }, "newName": "weather_now" }),
    );
    let edits = rename["result"]["changes"][&uri].as_array().unwrap().clone();
    assert_eq!(edits.len(), 3);
    assert!(edits.iter().all(|e| e["newText"] == "weather_now"));
    // Refused when the name is taken in that tree.
    let two = BOT.replace("    reply \"It", "    api other { method GET url \"https://x.example\" }\n    reply \"It");
    client.change(&uri, 2, &two);
    let refused = client.call(
        "textDocument/rename",
        json!({ "textDocument": { "uri": uri }, "position": { "line": 4, "character": 9 }, "newName": "other" }),
    );
    assert!(refused["error"]["message"].as_str().unwrap().contains("already exists"), "{refused}");
    // An option: declared by its bare name, used as `option_…`.
    client.change(&uri, 3, BOT);
    let rename = client.request(
        "textDocument/rename",
        json!({ "textDocument": { "uri": uri }, "position": { "line": 3, "character": 12 }, "newName": "town" }),
    );
    let texts: Vec<&str> =
        rename["changes"][&uri].as_array().unwrap().iter().map(|e| e["newText"].as_str().unwrap()).collect();
    assert_eq!(texts, ["option_town", "option_town", "town"]);
    // What blkc provides cannot be renamed.
    let refused = client.call(
        "textDocument/rename",
        json!({ "textDocument": { "uri": uri }, "position": { "line": 10, "character": 0 }, "newName": "x" }),
    );
    assert!(refused.get("error").is_some());
}

#[test]
fn outline_folding_and_formatting() {
    let (_dir, uri) = workspace();
    let mut client = Client::start(&[]);
    client.open(&uri, BOT);
    let symbols = client.request("textDocument/documentSymbol", json!({ "textDocument": { "uri": uri } }));
    assert_eq!(symbols[0]["name"], "visits");
    assert_eq!(symbols[1]["name"], "weather");
    assert_eq!(symbols[1]["children"][0]["name"], "forecast");
    let folds = client.request("textDocument/foldingRange", json!({ "textDocument": { "uri": uri } }));
    assert!(folds.as_array().unwrap().iter().any(|f| f["startLine"] == 2 && f["endLine"] == 11), "{folds}");
    let edits = client.request(
        "textDocument/formatting",
        json!({ "textDocument": { "uri": uri }, "options": { "tabSize": 4, "insertSpaces": true } }),
    );
    assert_eq!(edits, json!([]), "the text is formatted already");
    let messy = BOT.replace("    reply \"It", "  reply   \"It");
    client.change(&uri, 2, &messy);
    let edits = client.request(
        "textDocument/formatting",
        json!({ "textDocument": { "uri": uri }, "options": { "tabSize": 4, "insertSpaces": true } }),
    );
    assert_eq!(edits[0]["newText"], BOT);
}

#[test]
fn a_changed_sample_is_read_again() {
    let (dir, uri) = workspace();
    let mut client = Client::start(&[]);
    assert!(codes(&client.open(&uri, BOT)).is_empty());
    // `blkc test --save` writes a new sample without `main`.
    std::fs::write(dir.path().join("samples/forecast.json"), r#"{"name": "Paris", "temperature": 21}"#).unwrap();
    let sample_uri = file_uri(&dir.path().join("samples/forecast.json"));
    client.notify("workspace/didChangeWatchedFiles", json!({ "changes": [{ "uri": sample_uri, "type": 2 }] }));
    let published = client.notification("textDocument/publishDiagnostics");
    assert_eq!(codes(&published), ["B201"]);
}

#[test]
fn a_file_that_does_not_parse_still_gets_answers() {
    let (_dir, uri) = workspace();
    let mut client = Client::start(&[]);
    let text = format!("{BOT}\ncommand broken {{\n    reply 'oops'\n");
    let published = client.open(&uri, &text);
    assert_eq!(codes(&published), ["B001"]);
    // The command before the error is known.
    let hover = client.at("textDocument/hover", &uri, &text, "api forecast", 5);
    assert!(hover["contents"]["value"].as_str().unwrap().contains("GET"));
    let symbols = client.request("textDocument/documentSymbol", json!({ "textDocument": { "uri": uri } }));
    assert_eq!(symbols.as_array().unwrap().len(), 2);
    assert_eq!(
        client.request(
            "textDocument/formatting",
            json!({ "textDocument": { "uri": uri }, "options": { "tabSize": 4, "insertSpaces": true } })
        ),
        Value::Null
    );
    client.at("textDocument/completion", &uri, &text, "'oops'", 3);
}

#[test]
fn a_panic_in_a_handler_is_caught_and_the_server_goes_on() {
    let (_dir, uri) = workspace();
    let mut client = Client::start(&[("BLKC_LSP_TEST_PANIC", "1")]);
    let answer = client.call("blkc/panic", json!({}));
    assert_eq!(answer["error"]["code"], -32603, "{answer}");
    let log = client.notification("window/logMessage");
    assert!(log["message"].as_str().unwrap().contains("a panic asked for by the tests"));
    client.open(&uri, BOT);
    assert!(!client.at("textDocument/hover", &uri, BOT, "api forecast", 5).is_null());
    assert_eq!(client.shutdown(), 0);
}

#[test]
fn the_server_exits_when_its_parent_closes_stdin() {
    let mut client = Client::start(&[]);
    drop(client.stdin.take());
    assert_eq!(wait_exit(&mut client.child), 0);
    // No message after the end.
    assert!(matches!(client.messages.recv_timeout(Duration::from_millis(100)), Err(RecvTimeoutError::Disconnected)));
}

/// The `file:` URI of a path, as text.
fn file_uri(path: &std::path::Path) -> String {
    blkc::host::lsp::protocol::path_to_uri(path).expect("a file URI").as_str().to_string()
}

#[test]
fn exit_without_shutdown_is_exit_code_1() {
    let mut client = Client::start(&[]);
    client.notify("exit", Value::Null);
    assert_eq!(wait_exit(&mut client.child), 1);
}

#[test]
fn a_message_too_large_or_malformed_is_skipped_and_the_server_goes_on() {
    let mut client = Client::start(&[]);
    let (_dir, uri) = workspace();
    {
        let stdin = client.stdin.as_mut().unwrap();
        // Larger than the limit: read past, never allocated.
        let huge = blkc::host::lsp::transport::MAX_MESSAGE + 10;
        write!(stdin, "Content-Length: {huge}\r\n\r\n").unwrap();
        let chunk = vec![b' '; 1 << 20];
        let mut left = huge;
        while left > 0 {
            let n = left.min(chunk.len() as u64) as usize;
            stdin.write_all(&chunk[..n]).unwrap();
            left -= n as u64;
        }
        // Not JSON-RPC.
        write!(stdin, "Content-Length: 5\r\n\r\nhello").unwrap();
        stdin.flush().unwrap();
    }
    let published = client.open(&uri, "command c {\n    reply \"{nope}\"\n}\n");
    assert!(!codes(&published).is_empty(), "the server still answers: {published}");
    assert_eq!(client.shutdown(), 0);
}

#[test]
fn a_content_length_of_a_terabyte_does_not_abort_the_server() {
    let mut client = Client::start(&[]);
    {
        let stdin = client.stdin.as_mut().unwrap();
        write!(stdin, "Content-Length: 1000000000000\r\n\r\n{{}}").unwrap();
        stdin.flush().unwrap();
    }
    // The server reads past the message (it never allocates its length) and
    // ends when its input does, by itself: not by a signal (an abort).
    drop(client.stdin.take());
    let code = wait_exit(&mut client.child);
    assert_ne!(code, -1, "ended by a signal (an abort)");
}

#[test]
fn scoped_variables_complete_and_hover_with_their_scope() {
    let (_dir, uri) = workspace();
    let mut client = Client::start(&[]);
    let labels =
        |v: &Value| v.as_array().unwrap().iter().map(|i| i["label"].as_str().unwrap().to_string()).collect::<Vec<_>>();
    let text = "var points per user = \"0\"\ncommand c \"C\" {\n    save points = points + 1\n    reply \"{points}\"\n}\nvar other \n";
    client.open(&uri, text);
    let hover = client.at("textDocument/hover", &uri, text, "{points}\"", 2);
    let shown = hover["contents"]["value"].as_str().unwrap();
    assert!(shown.contains("per user: a value per user in each server"), "{shown}");
    // A bare name in a calculation is the variable too.
    let hover = client.at("textDocument/hover", &uri, text, "points + 1", 2);
    assert!(hover["contents"]["value"].as_str().unwrap().contains("per user"));
    assert_eq!(labels(&client.at("textDocument/completion", &uri, text, "var other \n", 10)), ["per"]);
    let text = text.replace("var other \n", "var other per \n");
    client.change(&uri, 2, &text);
    assert_eq!(labels(&client.at("textDocument/completion", &uri, &text, "per \n", 4)), ["user", "server", "channel"]);
}

#[test]
fn a_loop_element_completes_and_hovers_from_the_sample_list() {
    let (_dir, uri) = workspace();
    let mut client = Client::start(&[]);
    let labels =
        |v: &Value| v.as_array().unwrap().iter().map(|i| i["label"].as_str().unwrap().to_string()).collect::<Vec<_>>();
    let looped = BOT.replace(
        "    save visits",
        "    for w in api_forecast[response.weather] limit 3 join \", \" into kinds {\n        text \"{w[description]}\"\n    }\n    save visits",
    );
    client.open(&uri, &looped);
    let hover = client.at("textDocument/hover", &uri, &looped, "w[description]", 4);
    let text = hover["contents"]["value"].as_str().unwrap();
    assert!(text.contains("`w[description]`") && text.contains("a string in the sample's first element"), "{text}");
    // Typing a path into the element: the keys of the list's elements.
    let typing = looped.replace("{w[description]}", "{w[");
    client.change(&uri, 2, &typing);
    let items = client.at("textDocument/completion", &uri, &typing, "{w[\"", 3);
    assert_eq!(labels(&items), ["description", "id"]);
    // Inside the loop its names are variables; after it, its joined text.
    let typing = looped.replace("{w[description]}", "{");
    client.change(&uri, 3, &typing);
    let items = labels(&client.at("textDocument/completion", &uri, &typing, "text \"{\"", 7));
    for v in ["w", "w_number", "w_index", "option_city"] {
        assert!(items.contains(&v.to_string()), "{v} in {items:?}");
    }
    let after = looped.replace("save visits = \"{visits}1\"", "reply \"{}\"");
    client.change(&uri, 4, &after);
    let items = labels(&client.at("textDocument/completion", &uri, &after, "{}\"", 1));
    assert!(items.contains(&"kinds".to_string()) && !items.contains(&"w".to_string()), "{items:?}");
}

#[test]
fn list_helpers_complete_and_a_timed_event_hovers_with_its_next_ticks() {
    let (_dir, uri) = workspace();
    let mut client = Client::start(&[]);
    let labels =
        |v: &Value| v.as_array().unwrap().iter().map(|i| i["label"].as_str().unwrap().to_string()).collect::<Vec<_>>();
    let text = format!(
        "{BOT}\nvar queue = []\n\nevent morning at \"09:00\" in \"Europe/Paris\" channel \"123\" {{\n    reply \"{{queue|count}} waiting\"\n}}\n"
    );
    client.open(&uri, &text);
    let hover = client.at("textDocument/hover", &uri, &text, "at \"09:00\"", 4);
    let shown = hover["contents"]["value"].as_str().unwrap();
    let paris = shown.contains("T07:00:00Z") || shown.contains("T08:00:00Z");
    assert!(shown.contains("timed event: its next ticks are") && paris, "{shown}");
    // Typing a helper after `|`: the helpers.
    let typing = text.replace("{queue|count}", "{queue|");
    client.change(&uri, 2, &typing);
    let items = client.at("textDocument/completion", &uri, &typing, "{queue|", 7);
    assert_eq!(labels(&items), blkc::language::helpers::NAMES);
}

/// The words of registration lines: permissions, contexts, installs,
/// locales, and a `channel` option's kinds of channel.
#[test]
fn completion_knows_the_words_of_registration_lines() {
    let (_dir, uri) = workspace();
    let mut client = Client::start(&[]);
    let labels =
        |v: &Value| v.as_array().unwrap().iter().map(|i| i["label"].as_str().unwrap().to_string()).collect::<Vec<_>>();
    let lines = [
        ("    permissions kick_members, |", "ban_members"),
        ("    contexts |", "bot_dm"),
        ("    installs server, |", "user"),
        ("    locale |", "pt-BR"),
        ("    option log \"Where\" channel in text, |", "forum"),
        ("    require |", "permissions"),
        ("command \"Quote\" for |", "message"),
        ("    require permissions manage_messages, |", "kick_members"),
    ];
    for (version, (line, wanted)) in lines.into_iter().enumerate() {
        let text = BOT.replace("    option city", &format!("{}\n    option city", line.trim_end_matches('|')));
        if version == 0 {
            client.open(&uri, &text);
        } else {
            client.change(&uri, version as i32 + 1, &text);
        }
        let needle = line.trim_end_matches('|').trim_start();
        let items = labels(&client.at("textDocument/completion", &uri, &text, needle, needle.len()));
        assert!(items.contains(&wanted.to_string()), "{line}: {wanted} in {items:?}");
        assert!(!items.contains(&"reply".to_string()), "{line}: {items:?}");
    }
}

/// An option named in another script is a variable like any: hover on its
/// `{option_…}` says what it is, and rename keeps its script.
#[test]
fn an_option_named_in_another_script_is_hovered_and_renamed() {
    let (_dir, uri) = workspace();
    let mut client = Client::start(&[]);
    let text = "command привет \"Говорит привет\" {\n    option имя \"Кому сказать привет\" required\n    reply \"Привет, {option_имя}!\"\n}\n";
    client.open(&uri, text);
    let hover = client.at("textDocument/hover", &uri, text, "option_имя}", 9);
    let shown = hover["contents"]["value"].as_str().unwrap_or_default();
    assert!(shown.contains("option `имя`") && shown.contains("Кому сказать привет"), "{hover}");
    let offset = text.find("option_имя}").unwrap() + 9;
    let line = text[..offset].matches('\n').count();
    let character = text[text[..offset].rfind('\n').map_or(0, |i| i + 1)..offset].encode_utf16().count();
    let params = json!({
        "textDocument": { "uri": uri }, "position": { "line": line, "character": character }, "newName": "друг"
    });
    let edit = client.request("textDocument/rename", params);
    let edits = edit["changes"][&uri].as_array().cloned().unwrap_or_default();
    let mut written: Vec<&str> = edits.iter().map(|e| e["newText"].as_str().unwrap()).collect();
    written.sort();
    assert_eq!(written, ["option_друг", "друг"], "{edit}");
    // The declaration's range is the name's, in UTF-16 units.
    let declared = edits.iter().find(|e| e["newText"] == "друг").unwrap();
    assert_eq!(declared["range"]["start"], json!({ "line": 1, "character": 11 }), "{edit}");
}

/// A subcommand's options are its own, and an autocomplete is given its
/// command's options and what was typed: completion and hover know which
/// tree the cursor is in; `subcommand` and `group` are keywords of a tree.
#[test]
fn subcommands_and_autocompletes_complete_and_hover_with_their_own_variables() {
    let (_dir, uri) = workspace();
    let mut client = Client::start(&[]);
    let labels =
        |v: &Value| v.as_array().unwrap().iter().map(|i| i["label"].as_str().unwrap().to_string()).collect::<Vec<_>>();
    let text = "command settings \"Settings\" {\n    subcommand set \"Set it\" {\n        option message \"The new text\" required\n        option city \"A city\" autocomplete {\n            choice \"{typed_text}\" \"{\"\n        }\n        reply \"{option_message}\"\n    }\n    subcommand show \"Show it\" {\n        reply \"{option_\"\n    }\n}\n";
    client.open(&uri, text);
    let typed = labels(&client.at("textDocument/completion", &uri, text, "\"{\"\n", 2));
    assert!(typed.contains(&"typed_text".to_string()) && typed.contains(&"option_message".to_string()), "{typed:?}");
    let hover = client.at("textDocument/hover", &uri, text, "option_message}", 3);
    let shown = hover["contents"]["value"].as_str().unwrap_or_default();
    assert!(shown.contains("option `message`") && shown.contains("The new text"), "{hover}");
    // Another subcommand has none of them.
    let other = labels(&client.at("textDocument/completion", &uri, text, "{option_\"", 8));
    assert!(!other.contains(&"option_message".to_string()), "{other:?}");
    let head = "    subcommand show";
    let keywords = labels(&client.at("textDocument/completion", &uri, text, head, 4));
    assert!(keywords.contains(&"subcommand".to_string()) && keywords.contains(&"group".to_string()), "{keywords:?}");
}

/// A test file (`.blkt`) in the editor: its problems with its bot, the
/// bot's words completed, a lens over each test that runs it, and the
/// failure of a run shown where the test expects what the bot did not do.
#[test]
fn a_test_file_is_checked_completed_and_run_from_the_editor() {
    let dir = tempfile::tempdir().unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/conversations");
    std::fs::create_dir_all(dir.path().join("samples")).unwrap();
    for sample in ["posted.json", "thing.json"] {
        std::fs::copy(fixtures.join("samples").join(sample), dir.path().join("samples").join(sample)).unwrap();
    }
    std::fs::copy(fixtures.join("bot.blk"), dir.path().join("bot.blk")).unwrap();
    let text = "test \"greets\" {\n    command hello { name = \"Bo\" }\n    expect reply \"Hello, Bob!\"\n}\ntest \"misspelt\" {\n    command helo\n}\n";
    std::fs::write(dir.path().join("bot.blkt"), text).unwrap();
    let uri = file_uri(&dir.path().join("bot.blkt"));
    let mut client = Client::start(&[]);
    let published = client.open(&uri, text);
    assert_eq!(codes(&published), ["B501"], "{published}");
    assert!(published["diagnostics"][0]["message"].as_str().unwrap().contains("did you mean `hello`?"), "{published}");

    // The bot's words where a step takes them.
    let labels = |items: &Value| -> Vec<String> {
        items.as_array().unwrap().iter().map(|i| i["label"].as_str().unwrap().to_string()).collect()
    };
    let commands = client.at("textDocument/completion", &uri, text, "helo", 0);
    assert!(["ask", "fetch", "hello", "look"].iter().all(|c| labels(&commands).contains(&c.to_string())), "{commands}");
    let options = client.at("textDocument/completion", &uri, text, "name =", 0);
    assert_eq!(labels(&options), ["name"], "{options}");
    let edited = text.replace("command helo\n", "command helo\n    click \"\n    expect saved \n");
    client.change(&uri, 2, &edited);
    let buttons = client.at("textDocument/completion", &uri, &edited, "click \"", 7);
    assert!(labels(&buttons).contains(&"\"Vote\"".to_string()), "{buttons}");
    let variables = client.at("textDocument/completion", &uri, &edited, "saved ", 6);
    assert_eq!(labels(&variables), ["last_pick", "steps", "updates", "votes"], "{variables}");
    client.change(&uri, 3, text);

    // A lens over each test, and one to run them all; the run's failure is
    // a diagnostic where the test expects it, with the fix `--update` makes.
    let lenses = client.request("textDocument/codeLens", json!({ "textDocument": { "uri": uri } }));
    let titles: Vec<&str> =
        lenses.as_array().unwrap().iter().map(|l| l["command"]["title"].as_str().unwrap()).collect();
    assert_eq!(titles, ["▶ Run test", "▶ Run all tests", "▶ Run test"], "{lenses}");
    let fixed = text.replace("command helo", "command hello { name = \"Al\" }");
    std::fs::write(dir.path().join("bot.blkt"), &fixed).unwrap();
    client.change(&uri, 4, &fixed);
    let run = lenses[0]["command"].clone();
    let ran =
        client.request("workspace/executeCommand", json!({ "command": run["command"], "arguments": run["arguments"] }));
    assert_eq!(ran["failed"], 1, "{ran}");
    let shown = client.notification("window/showMessage");
    assert_eq!(shown["message"], "blkc: 0 passed, 1 failed", "{shown}");
    let published = client.notification("textDocument/publishDiagnostics");
    assert_eq!(codes(&published), ["B504"], "{published}");
    let failure = &published["diagnostics"][0];
    assert_eq!(failure["range"]["start"], json!({ "line": 2, "character": 17 }), "{published}");
    assert!(failure["message"].as_str().unwrap().starts_with("greets: expected text \"Hello, Bob!\""), "{failure}");
    let actions = client.request(
        "textDocument/codeAction",
        json!({ "textDocument": { "uri": uri }, "range": failure["range"], "context": { "diagnostics": [] } }),
    );
    let edit = &actions[0]["edit"]["changes"][&uri][0];
    assert_eq!(edit["newText"], "\"Hello, Bo!\"", "{actions}");
    assert_eq!(client.shutdown(), 0);
}

#[test]
fn an_action_completes_its_kind_and_the_words_it_takes() {
    let (_dir, uri) = workspace();
    let mut client = Client::start(&[]);
    let labels =
        |v: &Value| v.as_array().unwrap().iter().map(|i| i["label"].as_str().unwrap().to_string()).collect::<Vec<_>>();
    let text = "command c \"C\" {\n    give \n    kick \"42\" \n    send to \"#log\" {\n        te\n    }\n    api a {\n        timeout \n    }\n}\n";
    client.open(&uri, text);
    assert_eq!(labels(&client.at("textDocument/completion", &uri, text, "give \n", 5)), ["role"]);
    assert_eq!(labels(&client.at("textDocument/completion", &uri, text, "\"42\" \n", 5)), ["reason"]);
    // An action's message holds a reply's parts.
    let items = labels(&client.at("textDocument/completion", &uri, text, "te\n", 2));
    assert!(items.contains(&"text".to_string()) && items.contains(&"embed".to_string()), "{items:?}");
    // In an `api` block, `timeout` is its field: no action's words.
    let items = labels(&client.at("textDocument/completion", &uri, text, "timeout \n", 8));
    assert!(!items.contains(&"reason".to_string()), "{items:?}");
}

/// Issue 52: a webhook event's head completes its settings and, after
/// `signed`, the schemes; its request's body hovers and completes from its
/// sample as a block's response does; an event's variable hovers with
/// what it holds.
#[test]
fn a_webhook_head_and_its_request_complete_and_hover() {
    let (dir, uri) = workspace();
    std::fs::write(dir.path().join("push.json"), r#"{"pusher": {"name": "ada"}, "commits": []}"#).unwrap();
    let mut client = Client::start(&[]);
    let labels =
        |v: &Value| v.as_array().unwrap().iter().map(|i| i["label"].as_str().unwrap().to_string()).collect::<Vec<_>>();
    let text = "event push webhook \"/hooks/github\" signed github secret \"<S>\" sample \"push.json\" {\n    send to \"1\" \"{api_webhook[response.pusher.name]}\"\n}\n\nevent ban_add {\n    send to \"1\" \"{user_name}\"\n}\n";
    client.open(&uri, text);
    let head = "event push webhook \"/hooks/github\" ";
    let items = labels(&client.at("textDocument/completion", &uri, text, head, head.len()));
    assert!(items.contains(&"signed".to_string()) && items.contains(&"sample".to_string()), "{items:?}");
    let signed = "event push webhook \"/hooks/github\" signed ";
    let items = labels(&client.at("textDocument/completion", &uri, text, signed, signed.len()));
    assert_eq!(items, ["github", "stripe", "bearer"]);
    let hover = client.at("textDocument/hover", &uri, text, "pusher.name", 8);
    let shown = hover["contents"]["value"].as_str().unwrap_or_default().to_string();
    assert!(shown.contains("ada"), "{hover}");
    let hover = client.at("textDocument/hover", &uri, text, "user_name}", 2);
    let shown = hover["contents"]["value"].as_str().unwrap_or_default().to_string();
    assert!(shown.contains("as the server shows it"), "{hover}");
}

/// Issue 53, item 9: `{now}` and `{user_locale}` hover with what they hold,
/// and a time helper completes with its signature.
#[test]
fn the_time_and_the_locale_hover_and_time_helpers_complete() {
    let (_dir, uri) = workspace();
    let mut client = Client::start(&[]);
    let text = format!("{BOT}\ncommand when {{\n    reply \"{{now|timestamp 'R'}} for {{user_locale}}\"\n}}\n");
    client.open(&uri, &text);
    let hover = client.at("textDocument/hover", &uri, &text, "{now|", 2);
    let shown = hover["contents"]["value"].as_str().unwrap();
    assert!(shown.contains("the time now: RFC 3339"), "{shown}");
    let hover = client.at("textDocument/hover", &uri, &text, "{user_locale}", 3);
    let shown = hover["contents"]["value"].as_str().unwrap();
    assert!(shown.contains("the language the user's client is set to"), "{shown}");
    let typing = text.replace("{now|timestamp 'R'}", "{now|");
    client.change(&uri, 2, &typing);
    let items = client.at("textDocument/completion", &uri, &typing, "{now|", 5);
    let stamp = items.as_array().unwrap().iter().find(|i| i["label"] == "timestamp").expect("timestamp completes");
    assert!(stamp["detail"].as_str().unwrap().contains("t T d D f F s S R"), "{stamp}");
}

/// A bot in several files (issue 56, item 15): the root opened in the
/// editor is checked whole, with the files it includes; a finding in an
/// included file is published for that file, none falsely for the root.
#[test]
fn a_root_file_is_checked_with_the_files_it_includes() {
    let dir = tempfile::tempdir().unwrap();
    let root = "include \"parts.blk\"\n\ncommand hi \"Hi\" {\n    reply \"{greeting}\"\n}\n";
    std::fs::write(dir.path().join("bot.blk"), root).unwrap();
    std::fs::write(
        dir.path().join("parts.blk"),
        "var greeting = \"hello\"\n\ncommand bye \"Bye\" {\n    reply \"{nope}\"\n}\n",
    )
    .unwrap();
    let uri = file_uri(&dir.path().join("bot.blk"));
    let parts = file_uri(&dir.path().join("parts.blk"));
    let mut client = Client::start(&[]);
    let published = client.open(&uri, root);
    assert_eq!(published["uri"], uri);
    assert_eq!(codes(&published), Vec::<String>::new(), "{published}");
    let included = client.notification("textDocument/publishDiagnostics");
    assert_eq!(included["uri"], parts, "{included}");
    assert_eq!(codes(&included), ["B115"], "{included}");
    assert_eq!(included["diagnostics"][0]["range"]["start"]["line"], 3);
    assert_eq!(client.shutdown(), 0);
}
