//! `blkc lsp` over stdio, as an editor drives it: the time from a change
//! of a 1 MB file to its diagnostics, and hover and completion on a typical
//! 20 KB file with samples (answers that read the samples' values).
//!
//! Run with `cargo bench --bench lsp`.

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

struct Client {
    child: std::process::Child,
    stdin: ChildStdin,
    rx: Receiver<Value>,
    id: i64,
}

impl Client {
    fn start(blkc: &PathBuf) -> Client {
        let mut child = Command::new(blkc).arg("lsp").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                let mut len = 0;
                loop {
                    let mut line = String::new();
                    if r.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    if line.trim().is_empty() {
                        break;
                    }
                    if let Some(n) = line.trim().strip_prefix("Content-Length: ") {
                        len = n.parse().unwrap();
                    }
                }
                let mut body = vec![0; len];
                r.read_exact(&mut body).unwrap();
                if tx.send(serde_json::from_slice(&body).unwrap()).is_err() {
                    return;
                }
            }
        });
        let mut c = Client { stdin: child.stdin.take().unwrap(), child, rx, id: 0 };
        c.request("initialize", json!({ "processId": null, "rootUri": null, "capabilities": {} }));
        c.send(json!({ "jsonrpc": "2.0", "method": "initialized", "params": {} }));
        c
    }

    fn send(&mut self, v: Value) {
        let body = v.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.stdin.flush().unwrap();
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.id += 1;
        let id = self.id;
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        loop {
            let m = self.rx.recv_timeout(Duration::from_secs(30)).unwrap();
            if m["id"] == id {
                return m["result"].clone();
            }
        }
    }

    /// Sends a document's text and waits for its diagnostics.
    fn publish(&mut self, method: &str, uri: &str, version: i32, text: &str) -> Duration {
        let params = if method == "textDocument/didOpen" {
            json!({ "textDocument": { "uri": uri, "languageId": "blk", "version": version, "text": text } })
        } else {
            json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": [{ "text": text }] })
        };
        let start = Instant::now();
        self.send(json!({ "jsonrpc": "2.0", "method": method, "params": params }));
        loop {
            let m = self.rx.recv_timeout(Duration::from_secs(30)).unwrap();
            if m["method"] == "textDocument/publishDiagnostics" && m["params"]["version"] == version {
                return start.elapsed();
            }
        }
    }
}

fn position(text: &str, needle: &str, shift: usize) -> Value {
    let offset = text.find(needle).unwrap() + shift;
    let line = text[..offset].matches('\n').count();
    let character = offset - text[..offset].rfind('\n').map_or(0, |i| i + 1);
    json!({ "line": line, "character": character })
}

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

fn p95(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() * 95 / 100]
}

fn main() {
    let blkc = PathBuf::from(env!("CARGO_BIN_EXE_blkc"));
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bench_lsp");
    std::fs::create_dir_all(dir.join("samples")).unwrap();

    // A change to a 1 MB file: time to its diagnostics.
    let big = support::generate(40, support::sized(1650, 40));
    let big_uri = format!("file://{}", dir.join("big.blk").display());
    let mut client = Client::start(&blkc);
    client.publish("textDocument/didOpen", &big_uri, 1, &big);
    let mut changes = Vec::new();
    for v in 2..support::sized(32, 4) {
        let text = format!("{big}# edit {v}\n");
        changes.push(client.publish("textDocument/didChange", &big_uri, v, &text));
    }
    println!(
        "lsp: a change to a {:.2} MB file, to its diagnostics published: median {:.1} ms, p95 {:.1} ms ({} changes)",
        big.len() as f64 / 1e6,
        median(changes.clone()).as_secs_f64() * 1e3,
        p95(changes.clone()).as_secs_f64() * 1e3,
        changes.len()
    );

    // Hover and completion on a 20 KB file whose blocks have samples.
    for n in 0..3 {
        std::fs::write(dir.join(format!("samples/s{n:02}.json")), support::sample(n)).unwrap();
    }
    let small = support::generate_with(1, 32, 3);
    std::fs::write(dir.join("small.blk"), &small).unwrap();
    let uri = format!("file://{}", dir.join("small.blk").display());
    client.publish("textDocument/didOpen", &uri, 1, &small);
    let hover_at = position(&small, "response.data.items.0.name]}", 22);
    let complete_at = position(&small, "response.data.items.0.name]}", 22);
    let mut hovers = Vec::new();
    let mut completions = Vec::new();
    for _ in 0..support::sized(300, 3) {
        let start = Instant::now();
        let h = client.request("textDocument/hover", json!({ "textDocument": { "uri": uri }, "position": hover_at }));
        hovers.push(start.elapsed());
        assert!(h["contents"]["value"].as_str().unwrap().contains("item 0 of sample"), "{h}");
        let start = Instant::now();
        let c = client
            .request("textDocument/completion", json!({ "textDocument": { "uri": uri }, "position": complete_at }));
        completions.push(start.elapsed());
        assert!(c.as_array().unwrap().iter().any(|i| i["label"] == "owner"), "{c}");
    }
    println!(
        "lsp: hover on a response path of a {:.1} KB file with 100 KB samples: median {:.2} ms, p95 {:.2} ms",
        small.len() as f64 / 1e3,
        median(hovers.clone()).as_secs_f64() * 1e3,
        p95(hovers).as_secs_f64() * 1e3
    );
    println!(
        "lsp: completion of the sample's keys there: median {:.2} ms, p95 {:.2} ms",
        median(completions.clone()).as_secs_f64() * 1e3,
        p95(completions).as_secs_f64() * 1e3
    );
    let _ = client.request("shutdown", Value::Null);
    client.send(json!({ "jsonrpc": "2.0", "method": "exit", "params": null }));
    let status = client.child.wait().unwrap();
    assert!(status.success(), "the server ends cleanly on `exit`");
}
