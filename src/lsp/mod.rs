//! `blkc lsp`: a language server over stdio, on rust-analyzer's synchronous
//! scaffold (`lsp-server`, `lsp-types`). It shares everything with `blkc
//! check`: a document is checked by [`crate::check_source_in`] with the
//! samples beside it, so the editor shows the same diagnostics, codes and
//! spans. Documents are synced whole on every change.
//!
//! A request is answered from what the file holds, even when it does not
//! parse (the items before the error are known); a panic inside a handler
//! is caught, answered as an internal error and logged, and never ends the
//! server.

pub mod analysis;
mod features;

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

use lsp_server::{Connection, ErrorCode, Message, Notification, Request, Response};
use serde_json::{json, Value};

use analysis::{Document, Pos};

/// Runs the server on standard input and output until the client says
/// `exit` (or closes standard input).
pub fn serve_stdio() -> Result<(), String> {
    let (connection, io_threads) = Connection::stdio();
    serve(&connection)?;
    drop(connection);
    io_threads.join().map_err(|e| e.to_string())
}

/// Runs the server on a connection (tests use an in-memory one).
pub fn serve(connection: &Connection) -> Result<(), String> {
    let capabilities = json!({
        "positionEncoding": "utf-16",
        "textDocumentSync": { "openClose": true, "change": 1, "save": false },
        "hoverProvider": true,
        "completionProvider": { "triggerCharacters": ["{", "[", ".", "_", " "] },
        "definitionProvider": true,
        "referencesProvider": true,
        "renameProvider": true,
        "documentSymbolProvider": true,
        "foldingRangeProvider": true,
        "documentFormattingProvider": true,
        "codeActionProvider": { "codeActionKinds": ["quickfix"] },
    });
    let init = json!({
        "capabilities": capabilities,
        "serverInfo": { "name": "blkc", "version": env!("CARGO_PKG_VERSION") },
    });
    let (id, _params) = connection.initialize_start().map_err(|e| e.to_string())?;
    connection.initialize_finish(id, init).map_err(|e| e.to_string())?;
    let mut server = Server { docs: HashMap::new(), connection };
    features::write_code_pages();
    for message in &connection.receiver {
        match message {
            Message::Request(req) => {
                // After `shutdown`, an `exit` or a closed input both end it.
                if connection.handle_shutdown(&req).unwrap_or(true) {
                    return Ok(());
                }
                let id = req.id.clone();
                let method = req.method.clone();
                let response = match catch_unwind(AssertUnwindSafe(|| server.request(&req))) {
                    Ok(Ok(result)) => Response::new_ok(id, result),
                    Ok(Err((code, message))) => Response::new_err(id, code as i32, message),
                    Err(panic) => {
                        let what = panic_text(&panic);
                        server.log(&format!("blkc lsp: `{method}` failed: {what}"));
                        Response::new_err(id, ErrorCode::InternalError as i32, format!("blkc lsp: {what}"))
                    }
                };
                let _ = connection.sender.send(Message::Response(response));
            }
            Message::Notification(note) => {
                let method = note.method.clone();
                if let Err(panic) = catch_unwind(AssertUnwindSafe(|| server.notification(note))) {
                    server.log(&format!("blkc lsp: `{method}` failed: {}", panic_text(&panic)));
                }
            }
            Message::Response(_) => {}
        }
    }
    Ok(())
}

fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".into())
}

pub(crate) type Answer = Result<Value, (ErrorCode, String)>;

struct Server<'c> {
    docs: HashMap<String, Document>,
    connection: &'c Connection,
}

/// The path of a `file:` URI.
pub fn uri_to_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    let decoded = percent_encoding::percent_decode_str(rest).decode_utf8().ok()?;
    Some(PathBuf::from(decoded.as_ref()))
}

/// The `file:` URI of a path.
pub fn path_to_uri(path: &std::path::Path) -> String {
    crate::source::file_uri(&path.to_string_lossy())
}

impl Server<'_> {
    fn log(&self, message: &str) {
        let note = Notification::new("window/logMessage".into(), json!({ "type": 1, "message": message }));
        let _ = self.connection.sender.send(Message::Notification(note));
    }

    fn open(&mut self, uri: &str, text: String, version: i32) {
        let path = uri_to_path(uri);
        let name =
            path.as_ref().and_then(|p| p.file_name()).map_or(uri.to_string(), |n| n.to_string_lossy().into_owned());
        let doc = Document::new(&name, path, text, version);
        self.publish(uri, &doc);
        self.docs.insert(uri.to_string(), doc);
    }

    fn publish(&self, uri: &str, doc: &Document) {
        let diagnostics = features::diagnostics(uri, doc);
        let params = json!({ "uri": uri, "version": doc.version, "diagnostics": diagnostics });
        let note = Notification::new("textDocument/publishDiagnostics".into(), params);
        let _ = self.connection.sender.send(Message::Notification(note));
    }

    fn notification(&mut self, note: Notification) {
        let p = &note.params;
        match note.method.as_str() {
            "textDocument/didOpen" => {
                let d = &p["textDocument"];
                let text = d["text"].as_str().unwrap_or_default().to_string();
                self.open(d["uri"].as_str().unwrap_or_default(), text, d["version"].as_i64().unwrap_or(0) as i32);
            }
            "textDocument/didChange" => {
                let uri = p["textDocument"]["uri"].as_str().unwrap_or_default().to_string();
                let version = p["textDocument"]["version"].as_i64().unwrap_or(0) as i32;
                // Full sync: the last change holds the whole text.
                if let Some(text) =
                    p["contentChanges"].as_array().and_then(|c| c.last()).and_then(|c| c["text"].as_str())
                {
                    self.open(&uri, text.to_string(), version);
                }
            }
            "textDocument/didClose" => {
                let uri = p["textDocument"]["uri"].as_str().unwrap_or_default();
                self.docs.remove(uri);
                let params = json!({ "uri": uri, "diagnostics": [] });
                let _ = self
                    .connection
                    .sender
                    .send(Message::Notification(Notification::new("textDocument/publishDiagnostics".into(), params)));
            }
            // A sample written by `blkc test --save` (or by hand): every open
            // document is checked again, reading samples afresh.
            "workspace/didChangeWatchedFiles" => {
                let open: Vec<(String, String, i32)> =
                    self.docs.iter().map(|(u, d)| (u.clone(), d.text().to_string(), d.version)).collect();
                for (uri, text, version) in open {
                    self.open(&uri, text, version);
                }
            }
            _ => {}
        }
    }

    fn request(&mut self, req: &Request) -> Answer {
        // A request that panics, for the tests of the server's recovery
        // (only when the environment asks for it).
        if req.method == "blkc/panic" && std::env::var_os("BLKC_LSP_TEST_PANIC").is_some() {
            panic!("a panic asked for by the tests");
        }
        let p = &req.params;
        let uri = p["textDocument"]["uri"].as_str().unwrap_or_default().to_string();
        let Some(doc) = self.docs.get(&uri) else {
            return match req.method.as_str() {
                "textDocument/hover" | "textDocument/definition" | "textDocument/formatting" => Ok(Value::Null),
                "textDocument/completion"
                | "textDocument/references"
                | "textDocument/documentSymbol"
                | "textDocument/foldingRange"
                | "textDocument/codeAction" => Ok(json!([])),
                _ => Err((ErrorCode::MethodNotFound, format!("`{}` is not supported", req.method))),
            };
        };
        let pos = || Pos {
            line: p["position"]["line"].as_u64().unwrap_or(0) as u32,
            character: p["position"]["character"].as_u64().unwrap_or(0) as u32,
        };
        match req.method.as_str() {
            "textDocument/hover" => Ok(features::hover(doc, doc.offset(pos()))),
            "textDocument/completion" => Ok(features::completion(doc, doc.offset(pos()))),
            "textDocument/definition" => Ok(features::definition(&uri, doc, doc.offset(pos()))),
            "textDocument/references" => Ok(features::references(&uri, doc, doc.offset(pos()))),
            "textDocument/rename" => {
                let new_name = p["newName"].as_str().unwrap_or_default();
                features::rename(&uri, doc, doc.offset(pos()), new_name)
            }
            "textDocument/documentSymbol" => Ok(features::symbols(doc)),
            "textDocument/foldingRange" => Ok(features::folding(doc)),
            "textDocument/formatting" => Ok(features::formatting(doc)),
            "textDocument/codeAction" => Ok(features::code_actions(&uri, doc, &p["range"])),
            _ => Err((ErrorCode::MethodNotFound, format!("`{}` is not supported", req.method))),
        }
    }
}
