//! `blkc lsp`: a language server over stdio, on rust-analyzer's synchronous
//! scaffold (`lsp-server`, `lsp-types`). It shares everything with `blkc
//! check`: a document is checked by [`crate::language::load::check_source_in`] with the
//! samples beside it, so the editor shows the same diagnostics, codes and
//! spans. Documents are synced whole on every change.
//!
//! A request is answered from what the file holds, even when it does not
//! parse (the items before the error are known); a panic inside a handler
//! is caught, answered as an internal error and logged, and never ends the
//! server.

pub(crate) mod analysis;
mod conversations;
mod features;
pub mod protocol;
pub mod transport;

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};

use lsp_server::{Connection, ErrorCode, Message, Notification, Request, Response};
use lsp_types::notification::{self as note, Notification as _};
use lsp_types::request::{self as req, Request as _};
use lsp_types::{
    CodeActionKind, CodeActionOptions, CodeActionProviderCapability, CompletionOptions, FoldingRangeProviderCapability,
    HoverProviderCapability, InitializeResult, LogMessageParams, MessageType, OneOf, PositionEncodingKind,
    PublishDiagnosticsParams, ServerCapabilities, ServerInfo, TextDocumentSyncCapability, TextDocumentSyncKind,
    TextDocumentSyncOptions, TextDocumentSyncSaveOptions, Uri,
};
use serde_json::Value;

use analysis::Document;
use protocol::{uri_to_path, Answer};

/// How the client ended the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// `shutdown`, then `exit` (or a closed input).
    Cleanly,
    /// `exit` without `shutdown` first: the protocol says exit code 1.
    ExitWithoutShutdown,
}

/// Runs the server on standard input and output until the client says
/// `exit` (or closes standard input).
pub fn serve_stdio() -> Result<Ended, String> {
    let (connection, threads) = transport::stdio();
    let ended = serve(&connection)?;
    drop(connection);
    for thread in threads {
        thread.join().map_err(|_| "a transport thread failed".to_string())?;
    }
    Ok(ended)
}

fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        position_encoding: Some(PositionEncodingKind::UTF16),
        text_document_sync: Some(TextDocumentSyncCapability::Options(TextDocumentSyncOptions {
            open_close: Some(true),
            change: Some(TextDocumentSyncKind::FULL),
            save: Some(TextDocumentSyncSaveOptions::Supported(false)),
            ..TextDocumentSyncOptions::default()
        })),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(["{", "[", ".", "_", " "].map(String::from).to_vec()),
            ..CompletionOptions::default()
        }),
        definition_provider: Some(OneOf::Left(true)),
        references_provider: Some(OneOf::Left(true)),
        rename_provider: Some(OneOf::Left(true)),
        document_symbol_provider: Some(OneOf::Left(true)),
        folding_range_provider: Some(FoldingRangeProviderCapability::Simple(true)),
        document_formatting_provider: Some(OneOf::Left(true)),
        code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
            code_action_kinds: Some(vec![CodeActionKind::QUICKFIX]),
            ..CodeActionOptions::default()
        })),
        // A test file's tests, each run from the lens over it.
        code_lens_provider: Some(lsp_types::CodeLensOptions { resolve_provider: Some(false) }),
        execute_command_provider: Some(lsp_types::ExecuteCommandOptions {
            commands: vec![conversations::RUN_TESTS.to_string()],
            ..lsp_types::ExecuteCommandOptions::default()
        }),
        ..ServerCapabilities::default()
    }
}

/// Runs the server on a connection (tests use an in-memory one).
pub fn serve(connection: &Connection) -> Result<Ended, String> {
    let init = InitializeResult {
        capabilities: capabilities(),
        server_info: Some(ServerInfo { name: "blkc".into(), version: Some(env!("CARGO_PKG_VERSION").into()) }),
    };
    let init = serde_json::to_value(init).map_err(|e| e.to_string())?;
    let (id, _params) = connection.initialize_start().map_err(|e| e.to_string())?;
    connection.initialize_finish(id, init).map_err(|e| e.to_string())?;
    let mut server = Server { docs: HashMap::new(), tests: HashMap::new(), connection };
    features::write_code_pages();
    for message in &connection.receiver {
        match message {
            Message::Request(req) => {
                // After `shutdown`, an `exit` or a closed input both end it.
                if connection.handle_shutdown(&req).unwrap_or(true) {
                    return Ok(Ended::Cleanly);
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
            Message::Notification(note) if note.method == "exit" => return Ok(Ended::ExitWithoutShutdown),
            Message::Notification(note) => {
                let method = note.method.clone();
                if let Err(panic) = catch_unwind(AssertUnwindSafe(|| server.notification(note))) {
                    server.log(&format!("blkc lsp: `{method}` failed: {}", panic_text(&panic)));
                }
            }
            Message::Response(_) => {}
        }
    }
    Ok(Ended::Cleanly)
}

fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".into())
}

struct Server<'c> {
    /// Open documents by URI (as text: `Uri` caches inside, so it is no map key).
    docs: HashMap<String, Document>,
    /// Open test files (`.blkt`), by URI.
    tests: HashMap<String, conversations::TestDocument>,
    connection: &'c Connection,
}

/// A request's parameters as their protocol type.
fn params<R: req::Request>(req: &Request) -> Answer<R::Params> {
    serde_json::from_value(req.params.clone()).map_err(|e| (ErrorCode::InvalidParams, format!("`{}`: {e}", req.method)))
}

/// A notification's parameters as their protocol type (`None`: malformed,
/// ignored as the protocol says notifications are).
fn note_params<N: note::Notification>(n: &Notification) -> Option<N::Params> {
    serde_json::from_value(n.params.clone()).ok()
}

fn answer<T: serde::Serialize>(value: T) -> Answer<Value> {
    serde_json::to_value(value).map_err(|e| (ErrorCode::InternalError, e.to_string()))
}

impl Server<'_> {
    fn notify<N: note::Notification>(&self, params: N::Params) {
        if let Ok(params) = serde_json::to_value(params) {
            let note = Notification::new(N::METHOD.into(), params);
            let _ = self.connection.sender.send(Message::Notification(note));
        }
    }

    fn log(&self, message: &str) {
        self.notify::<note::LogMessage>(LogMessageParams { typ: MessageType::ERROR, message: message.into() });
    }

    fn open(&mut self, uri: Uri, text: String, version: i32) {
        let path = uri_to_path(&uri);
        let name = path
            .as_ref()
            .and_then(|p| p.file_name())
            .map_or(uri.as_str().to_string(), |n| n.to_string_lossy().into_owned());
        if path.as_ref().is_some_and(|p| p.extension().is_some_and(|e| e == crate::host::converse::EXTENSION)) {
            let docs = &self.docs;
            let bot_text = |bot: &std::path::Path| {
                docs.values().find(|d| d.path.as_deref() == Some(bot)).map(|d| d.text().to_string())
            };
            let doc = conversations::TestDocument::new(&name, path, text, version, &bot_text);
            self.publish_tests(&uri, &doc);
            self.tests.insert(uri.as_str().to_string(), doc);
            return;
        }
        let doc = Document::new(&name, path.clone(), text, version);
        self.publish(&uri, &doc);
        self.docs.insert(uri.as_str().to_string(), doc);
        // The open tests of this bot are checked against it as it now is.
        let tested: Vec<(Uri, String, i32)> = self
            .tests
            .iter()
            .filter(|(_, t)| path.is_some() && t.bot_path == path)
            .filter_map(|(u, t)| Some((u.parse().ok()?, t.text().to_string(), t.version)))
            .collect();
        for (uri, text, version) in tested {
            self.open(uri, text, version);
        }
    }

    fn publish_tests(&self, uri: &Uri, doc: &conversations::TestDocument) {
        let diagnostics = features::to_lsp(uri, &doc.shown(), &|span| doc.range(span));
        self.notify::<note::PublishDiagnostics>(PublishDiagnosticsParams {
            uri: uri.clone(),
            diagnostics,
            version: Some(doc.version),
        });
    }

    /// `blkc.runTests [uri, name]`: runs a test file's tests (or one) and
    /// shows their failures as its diagnostics.
    fn run_tests(&mut self, arguments: &[Value]) -> Answer<Value> {
        let uri = arguments.first().and_then(Value::as_str).unwrap_or_default().to_string();
        let name = arguments.get(1).and_then(Value::as_str).map(str::to_string);
        let Some(doc) = self.tests.get_mut(&uri) else {
            return Err((ErrorCode::InvalidParams, format!("`{uri}` is not an open test file")));
        };
        let (failures, said) = conversations::run(doc, name.as_deref()).map_err(|e| (ErrorCode::RequestFailed, e))?;
        let failed = failures.len();
        doc.failures = failures;
        let kind = if failed == 0 { MessageType::INFO } else { MessageType::ERROR };
        self.notify::<note::ShowMessage>(lsp_types::ShowMessageParams { typ: kind, message: said.clone() });
        if let (Ok(parsed), Some(doc)) = (uri.parse::<Uri>(), self.tests.get(&uri)) {
            self.publish_tests(&parsed, doc);
        }
        answer(serde_json::json!({ "message": said, "failed": failed }))
    }

    fn publish(&self, uri: &Uri, doc: &Document) {
        let diagnostics = features::diagnostics(uri, doc);
        self.notify::<note::PublishDiagnostics>(PublishDiagnosticsParams {
            uri: uri.clone(),
            diagnostics,
            version: Some(doc.version),
        });
        // A bot in several files: each file it includes has its own (none
        // is published for one that is open itself, which has its own).
        for (path, diagnostics) in features::included_diagnostics(doc) {
            let Ok(included) = crate::base::source::file_uri(&path).parse::<Uri>() else { continue };
            if self.docs.contains_key(included.as_str()) {
                continue;
            }
            self.notify::<note::PublishDiagnostics>(PublishDiagnosticsParams {
                uri: included,
                diagnostics,
                version: None,
            });
        }
    }

    fn notification(&mut self, n: Notification) {
        match n.method.as_str() {
            note::DidOpenTextDocument::METHOD => {
                if let Some(p) = note_params::<note::DidOpenTextDocument>(&n) {
                    self.open(p.text_document.uri, p.text_document.text, p.text_document.version);
                }
            }
            note::DidChangeTextDocument::METHOD => {
                // Full sync: the last change holds the whole text.
                if let Some(mut p) = note_params::<note::DidChangeTextDocument>(&n) {
                    if let Some(change) = p.content_changes.pop() {
                        self.open(p.text_document.uri, change.text, p.text_document.version);
                    }
                }
            }
            note::DidCloseTextDocument::METHOD => {
                if let Some(p) = note_params::<note::DidCloseTextDocument>(&n) {
                    self.docs.remove(p.text_document.uri.as_str());
                    self.tests.remove(p.text_document.uri.as_str());
                    self.notify::<note::PublishDiagnostics>(PublishDiagnosticsParams {
                        uri: p.text_document.uri,
                        diagnostics: Vec::new(),
                        version: None,
                    });
                }
            }
            // A sample written by `blkc test --save` (or by hand): every open
            // document is checked again, reading samples afresh.
            note::DidChangeWatchedFiles::METHOD => {
                let open: Vec<(Uri, String, i32)> = self
                    .docs
                    .iter()
                    .map(|(u, d)| (u, d.text(), d.version))
                    .chain(self.tests.iter().map(|(u, t)| (u, t.text(), t.version)))
                    .filter_map(|(u, text, version)| Some((u.parse().ok()?, text.to_string(), version)))
                    .collect();
                for (uri, text, version) in open {
                    self.open(uri, text, version);
                }
            }
            _ => {}
        }
    }

    fn request(&mut self, r: &Request) -> Answer<Value> {
        // A request that panics, for the tests of the server's recovery
        // (only when the environment asks for it).
        if r.method == "blkc/panic" && std::env::var_os("BLKC_LSP_TEST_PANIC").is_some() {
            panic!("a panic asked for by the tests");
        }
        if let Some(answer) = self.test_request(r) {
            return answer;
        }
        let docs = &self.docs;
        // The document and the byte offset of a position in it.
        let at = |p: &lsp_types::TextDocumentPositionParams| {
            docs.get(p.text_document.uri.as_str()).map(|d| (d, d.offset(p.position)))
        };
        match r.method.as_str() {
            req::HoverRequest::METHOD => {
                let p = params::<req::HoverRequest>(r)?;
                answer(at(&p.text_document_position_params).and_then(|(d, o)| features::hover(d, o)))
            }
            req::Completion::METHOD => {
                let p = params::<req::Completion>(r)?;
                answer(at(&p.text_document_position).map_or_else(Vec::new, |(d, o)| features::completion(d, o)))
            }
            req::GotoDefinition::METHOD => {
                let p = params::<req::GotoDefinition>(r)?;
                let uri = &p.text_document_position_params.text_document.uri;
                answer(at(&p.text_document_position_params).and_then(|(d, o)| features::definition(uri, d, o)))
            }
            req::References::METHOD => {
                let p = params::<req::References>(r)?;
                let uri = &p.text_document_position.text_document.uri;
                answer(at(&p.text_document_position).map_or_else(Vec::new, |(d, o)| features::references(uri, d, o)))
            }
            req::Rename::METHOD => {
                let p = params::<req::Rename>(r)?;
                let uri = &p.text_document_position.text_document.uri;
                let Some((d, o)) = at(&p.text_document_position) else {
                    return Err((ErrorCode::InvalidParams, "the document is not open".into()));
                };
                answer(features::rename(uri, d, o, &p.new_name)?)
            }
            req::DocumentSymbolRequest::METHOD => {
                let p = params::<req::DocumentSymbolRequest>(r)?;
                answer(docs.get(p.text_document.uri.as_str()).map(features::symbols))
            }
            req::FoldingRangeRequest::METHOD => {
                let p = params::<req::FoldingRangeRequest>(r)?;
                answer(docs.get(p.text_document.uri.as_str()).map_or_else(Vec::new, features::folding))
            }
            req::Formatting::METHOD => {
                let p = params::<req::Formatting>(r)?;
                answer(docs.get(p.text_document.uri.as_str()).and_then(features::formatting))
            }
            req::CodeActionRequest::METHOD => {
                let p = params::<req::CodeActionRequest>(r)?;
                let uri = &p.text_document.uri;
                answer(docs.get(uri.as_str()).map_or_else(Vec::new, |d| features::code_actions(uri, d, p.range)))
            }
            req::CodeLensRequest::METHOD => answer(Vec::<lsp_types::CodeLens>::new()),
            _ => Err((ErrorCode::MethodNotFound, format!("`{}` is not supported", r.method))),
        }
    }

    /// A request about a test file, or to run tests; `None` for another.
    fn test_request(&mut self, r: &Request) -> Option<Answer<Value>> {
        if r.method == req::ExecuteCommand::METHOD {
            let p = match params::<req::ExecuteCommand>(r) {
                Ok(p) => p,
                Err(e) => return Some(Err(e)),
            };
            if p.command != conversations::RUN_TESTS {
                return Some(Err((ErrorCode::InvalidParams, format!("no command `{}`", p.command))));
            }
            return Some(self.run_tests(&p.arguments));
        }
        let uri = r.params.pointer("/textDocument/uri").and_then(Value::as_str)?;
        let doc = self.tests.get(uri)?;
        let at = |p: &Value| -> Option<usize> {
            let position: lsp_types::Position = serde_json::from_value(p.get("position")?.clone()).ok()?;
            Some(doc.offset(position))
        };
        Some(match r.method.as_str() {
            req::Completion::METHOD => {
                answer(at(&r.params).map_or_else(Vec::new, |o| conversations::completion(doc, o)))
            }
            req::CodeLensRequest::METHOD => match uri.parse::<Uri>() {
                Ok(parsed) => answer(conversations::code_lenses(&parsed, doc)),
                Err(_) => answer(Vec::<lsp_types::CodeLens>::new()),
            },
            req::DocumentSymbolRequest::METHOD => answer(conversations::symbols(doc)),
            req::CodeActionRequest::METHOD => {
                let p = match params::<req::CodeActionRequest>(r) {
                    Ok(p) => p,
                    Err(e) => return Some(Err(e)),
                };
                let wanted = (doc.offset(p.range.start), doc.offset(p.range.end));
                answer(features::quick_fixes(&p.text_document.uri, &doc.shown(), wanted, &|s| doc.range(s)))
            }
            // (Hover, definitions, renames, formatting: not for tests yet.)
            _ => answer(Value::Null),
        })
    }
}
