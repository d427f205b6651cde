//! Plan to run report: executes one command or event. The only module that
//! does network I/O (through [`http`]).
//!
//! Everything that leaves the runner (events, warnings, failures, saved
//! values) passes through the [`Redactor`] first, so no secret or bot token
//! is ever shown or stored.

pub mod explore;
pub mod http;
pub mod redact;
pub mod render;

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Instant;

use serde::Serialize;
use serde_json::Value as Json;

use crate::ast::CompareOp;
use crate::diagnostics::{Code, Diagnostic, Severity};
use crate::plan::{Condition, Plan, Request, Seg, Step, Template, Tree, Val};
use crate::source::Span;
pub use redact::Redactor;
pub use render::Body;
use render::{Miss, Missing, Response};

/// Where custom variables live between runs.
pub trait VarStore {
    fn get(&mut self, name: &str) -> Result<Option<Json>, String>;
    fn set(&mut self, name: &str, value: &Json) -> Result<(), String>;
}

/// A store that keeps nothing (for `--dry-run`, and for tests of rendering).
#[derive(Debug, Default)]
pub struct MemoryStore(pub HashMap<String, Json>);

impl VarStore for MemoryStore {
    fn get(&mut self, name: &str) -> Result<Option<Json>, String> {
        Ok(self.0.get(name).cloned())
    }

    fn set(&mut self, name: &str, value: &Json) -> Result<(), String> {
        self.0.insert(name.to_string(), value.clone());
        Ok(())
    }
}

/// What a path or variable with no value renders as (docs/run.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MissingAs {
    /// The variable's own text, like `{api_x[response.a]}`, as the builder does.
    #[default]
    Text,
    Empty,
    Null,
}

#[derive(Debug, Clone, Default)]
pub struct Options {
    pub http: http::Limits,
    /// Unresolved paths and variables fail the run instead of warning.
    pub strict: bool,
    pub missing_as: MissingAs,
    /// Print the requests, send nothing.
    pub dry_run: bool,
    /// Answer every block from its sample file.
    pub offline: bool,
    /// Where sample paths are relative to (the source file's folder).
    pub base_dir: PathBuf,
    /// Replaces the file's `platform` (where `{bot_token}` may go).
    pub platform: Option<String>,
    /// Include request and response headers in request events.
    pub verbose: bool,
    /// A test request: only `{bot_token}` is substituted (spec 4.2).
    pub test_request: bool,
}

/// What a run is given from outside.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    /// Trigger variables and options (`option_city`), by name.
    pub vars: HashMap<String, String>,
    /// Secret slots, by name.
    pub secrets: HashMap<String, String>,
    pub bot_token: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "event", rename_all = "lowercase")]
pub enum Event {
    Request(RequestEvent),
    Reply { text: String },
    Save { name: String, value: Json },
    Warning(DiagnosticEvent),
}

#[derive(Debug, Clone, Serialize)]
pub struct RequestEvent {
    pub block: String,
    pub method: &'static str,
    pub url: String,
    /// `None` when nothing was sent (`--dry-run`).
    pub status: Option<u16>,
    pub duration_ms: Option<f64>,
    pub size: Option<usize>,
    pub redirects: u32,
    /// Answered from the block's sample (`--offline`).
    pub offline: bool,
    pub dry_run: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_headers: Option<Vec<(String, String)>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_body: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_headers: Option<Vec<(String, String)>>,
    #[serde(skip)]
    pub span: Span,
}

/// A diagnostic, as data (already redacted).
#[derive(Debug, Clone, Serialize)]
pub struct DiagnosticEvent {
    #[serde(skip)]
    pub diagnostic: Diagnostic,
    pub code: &'static str,
    pub severity: Severity,
    pub message: String,
    pub help: Option<String>,
    pub span: Span,
}

impl DiagnosticEvent {
    pub fn new(diagnostic: Diagnostic) -> DiagnosticEvent {
        DiagnosticEvent {
            code: diagnostic.code.as_str(),
            severity: diagnostic.severity,
            message: diagnostic.message.clone(),
            help: diagnostic.help.clone(),
            span: diagnostic.primary_span().unwrap_or_default(),
            diagnostic,
        }
    }
}

/// How a run ended: `Ok` when every node ran, or the failure that stopped it.
pub type Outcome = Result<(), Box<Diagnostic>>;

/// Runs `tree` of `plan`. Events go to `sink` as they happen; what was saved
/// before a failure stays saved.
pub fn run(
    plan: &Plan,
    tree: &Tree,
    inputs: &Inputs,
    options: &Options,
    store: &mut dyn VarStore,
    sink: &mut dyn FnMut(Event),
) -> Outcome {
    let redactor = redactor(inputs, &tree.steps);
    if !options.dry_run && !options.offline {
        preflight(&tree.steps, inputs)?;
    }
    let mut runner = Runner {
        plan,
        inputs,
        options,
        store,
        redactor,
        responses: HashMap::new(),
        client: None,
        sink,
        pending: Vec::new(),
        fatal: None,
        left_as_text: Vec::new(),
        last_headers: Vec::new(),
    };
    runner.steps(&tree.steps)
}

/// What a test request got back (every text already redacted).
#[derive(Debug, Clone)]
pub struct TestReport {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Body,
    /// Variables sent as their own text (spec 4.2: only `{bot_token}` is
    /// substituted in a test request).
    pub left_as_text: Vec<String>,
}

/// Sends one block's request the way the builder's test request does: only
/// `{bot_token}` is substituted; secret slots are filled as in a run; the
/// bot token and redirect rules of a run apply.
pub fn test_request(
    plan: &Plan,
    request: &Request,
    inputs: &Inputs,
    options: &Options,
    sink: &mut dyn FnMut(Event),
) -> Result<TestReport, Box<Diagnostic>> {
    let options = Options { test_request: true, dry_run: false, ..options.clone() };
    let steps = [Step::Request(Box::new(request.clone()))];
    let redactor = redactor(inputs, &steps);
    preflight(&steps, inputs)?;
    let mut store = MemoryStore::default();
    let mut runner = Runner {
        plan,
        inputs,
        options: &options,
        store: &mut store,
        redactor,
        responses: HashMap::new(),
        client: None,
        sink,
        pending: Vec::new(),
        fatal: None,
        left_as_text: Vec::new(),
        last_headers: Vec::new(),
    };
    runner.request(request)?;
    let Some(response) = runner.responses.remove(&request.block) else {
        unreachable!("a request that returns Ok has stored its response")
    };
    let body = match response.body {
        Body::Json(mut j) => {
            runner.redactor.redact_json(&mut j);
            Body::Json(j)
        }
        Body::Text(t) => Body::Text(runner.redactor.redact(&t)),
    };
    Ok(TestReport {
        status: response.status,
        headers: std::mem::take(&mut runner.last_headers),
        body,
        left_as_text: std::mem::take(&mut runner.left_as_text),
    })
}

/// The shortest secret blkc accepts: a shorter one would match ordinary
/// text, and could not be kept out of output reliably.
pub const MIN_SECRET_LEN: usize = 8;

/// Builds the redactor of the secrets `steps` use, and the bot token.
pub fn redactor(inputs: &Inputs, steps: &[Step]) -> Redactor {
    let mut r = Redactor::default();
    let mut used = Vec::new();
    each_template(steps, &mut |t| {
        for seg in &t.parts {
            if let Seg::Secret { name } = seg {
                used.push(name.clone());
            }
        }
    });
    for (name, value) in &inputs.secrets {
        if used.contains(name) {
            r.add(value, &format!("<{name}>"));
        }
    }
    if let Some(token) = &inputs.bot_token {
        r.add(token, "{bot_token}");
    }
    r
}

pub(crate) fn render_escaped_segment(s: &str) -> String {
    use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
    const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'~');
    utf8_percent_encode(s, SEGMENT).to_string()
}

pub(crate) fn render_escaped_query(s: &str) -> String {
    use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
    const QUERY: &AsciiSet =
        &NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'~').remove(b'/').remove(b':').remove(b'@');
    utf8_percent_encode(s, QUERY).to_string()
}

/// Every secret slot and the bot token that the tree may send must have a
/// value before the first request goes out.
fn preflight(steps: &[Step], inputs: &Inputs) -> Outcome {
    let mut missing: Vec<(String, Span)> = Vec::new();
    let mut short: Option<(String, Span)> = None;
    let mut token_needed: Option<Span> = None;
    let mut visit = |t: &Template| {
        for seg in &t.parts {
            match seg {
                Seg::Secret { name }
                    if inputs.secrets.get(name).is_some_and(|v| v.chars().count() < MIN_SECRET_LEN) =>
                {
                    short.get_or_insert((name.clone(), t.span));
                }
                Seg::Secret { name }
                    if !inputs.secrets.contains_key(name) && !missing.iter().any(|(n, _)| n == name) =>
                {
                    missing.push((name.clone(), t.span));
                }
                Seg::BotToken if inputs.bot_token.is_none() => {
                    token_needed.get_or_insert(t.span);
                }
                _ => {}
            }
        }
    };
    each_template(steps, &mut visit);
    if let Some((name, span)) = short {
        return Err(Box::new(
            Diagnostic::new(
                Code::MissingSecret,
                format!("secret `<{name}>` is shorter than {MIN_SECRET_LEN} characters"),
            )
            .label(span, "its value is too short to keep out of output")
            .help("a secret this short would match ordinary text and could not be redacted reliably; use the real key"),
        ));
    }
    if let Some((name, span)) = missing.first() {
        let others: Vec<String> = missing.iter().skip(1).map(|(n, _)| format!("`<{n}>`")).collect();
        let mut diag = Diagnostic::new(Code::MissingSecret, format!("secret `<{name}>` has no value"))
            .label(*span, "needs a value before anything is sent")
            .help(format!(
                "export BLKC_SECRET_{name}=…, or put `{name}=…` in a file given with `--secrets FILE`; nothing was sent"
            ));
        if !others.is_empty() {
            diag = diag.note(format!("also without a value: {}", others.join(", ")));
        }
        return Err(Box::new(diag));
    }
    if let Some(span) = token_needed {
        return Err(Box::new(
            Diagnostic::new(Code::MissingSecret, "the bot token has no value").label(span, "sends `{bot_token}`").help(
                "export BLKC_BOT_TOKEN=…, or give a file holding it with `--bot-token-file FILE`; nothing was sent",
            ),
        ));
    }
    Ok(())
}

/// The span of the first `save` in `steps`, in any branch.
pub fn first_save(steps: &[Step]) -> Option<Span> {
    steps.iter().find_map(|s| match s {
        Step::Save { span, .. } => Some(*span),
        Step::If { then, otherwise, .. } => first_save(then).or_else(|| first_save(otherwise)),
        _ => None,
    })
}

/// Calls `f` on every template a list of steps holds.
pub fn each_template(steps: &[Step], f: &mut impl FnMut(&Template)) {
    fn val(v: &Val, f: &mut impl FnMut(&Template)) {
        match v {
            Val::Str(t) => f(t),
            Val::Object(entries) => entries.iter().for_each(|(_, v)| val(v, f)),
            Val::Array(items) => items.iter().for_each(|v| val(v, f)),
            Val::Json(_) | Val::Ref(_) => {}
        }
    }
    for step in steps {
        match step {
            Step::Request(r) => {
                f(&r.url);
                r.params.iter().for_each(|(_, t)| f(t));
                r.headers.iter().for_each(|(_, t)| f(t));
                if let Some(b) = &r.body {
                    val(b, f);
                }
            }
            Step::Reply { text, .. } => f(text),
            Step::Save { value, .. } => val(value, f),
            Step::If { condition, then, otherwise, .. } => {
                val(&condition.left, f);
                if let Some((_, right)) = &condition.test {
                    val(right, f);
                }
                each_template(then, f);
                each_template(otherwise, f);
            }
        }
    }
}

struct Runner<'r> {
    plan: &'r Plan,
    inputs: &'r Inputs,
    options: &'r Options,
    store: &'r mut dyn VarStore,
    redactor: Redactor,
    responses: HashMap<String, Response>,
    client: Option<http::Client>,
    sink: &'r mut dyn FnMut(Event),
    /// Warnings of the current step, sent after it.
    pending: Vec<Diagnostic>,
    /// A failure found while rendering (a store that cannot be read).
    fatal: Option<Diagnostic>,
    /// Variables a test request left as their text.
    left_as_text: Vec<String>,
    /// The response headers of the last request (redacted).
    last_headers: Vec<(String, String)>,
}

impl render::Scope for Runner<'_> {
    fn response(&self, block: &str) -> Option<&Response> {
        self.responses.get(block)
    }

    fn variable(&mut self, name: &str, span: Span) -> Option<String> {
        if self.options.test_request {
            return None;
        }
        if let Some(v) = self.inputs.vars.get(name) {
            return Some(v.clone());
        }
        match self.store.get(name) {
            Ok(Some(Json::String(s))) => return Some(s),
            Ok(Some(other)) => return Some(other.to_string()),
            Ok(None) => {}
            Err(e) => {
                self.fatal.get_or_insert(store_failure(&e, span, format!("reading `{name}`")));
                return Some(String::new());
            }
        }
        self.plan.variables.iter().find(|v| v.name == name).and_then(|v| v.default.clone())
    }

    fn secret(&self, name: &str) -> Option<&str> {
        self.inputs.secrets.get(name).map(String::as_str)
    }

    fn bot_token(&self) -> Option<&str> {
        self.inputs.bot_token.as_deref()
    }

    fn missing(&mut self, what: Missing<'_>) -> String {
        let (text, diag) = match what {
            Missing::Variable { name, span } => {
                let text = format!("{{{name}}}");
                if self.options.test_request {
                    if !self.left_as_text.iter().any(|n| n == name) {
                        self.left_as_text.push(name.to_string());
                    }
                    return text;
                }
                let diag = Diagnostic::new(Code::MissingVariable, format!("`{{{name}}}` has no value in this run"))
                    .label(span, "no value")
                    .help(format!("pass it with `--var {name}=…` or in a `--vars FILE.json`"));
                (text, Some(diag))
            }
            Missing::Path { path, miss } => {
                let text = format!("{{{}}}", path.text);
                if self.options.test_request && miss == Miss::NoResponse {
                    if !self.left_as_text.contains(&path.text) {
                        self.left_as_text.push(path.text.clone());
                    }
                    return text;
                }
                if self.options.dry_run && miss == Miss::NoResponse {
                    return text;
                }
                (text, Some(path_warning(path, &miss)))
            }
        };
        if let Some(d) = diag {
            self.pending.push(d);
        }
        match self.options.missing_as {
            MissingAs::Text => text,
            MissingAs::Empty => String::new(),
            MissingAs::Null => "null".to_string(),
        }
    }
}

/// The warning for a path that did not resolve, pointing at the bad segment.
fn path_warning(path: &crate::plan::Path, miss: &Miss) -> Diagnostic {
    let (message, span, label, help) = match miss {
        Miss::NoResponse => (
            format!("block `{}` has no response in this run", path.block),
            path.span,
            "does not resolve",
            "the block did not run before this point".to_string(),
        ),
        Miss::NotJson => (
            format!("the response of block `{}` is not JSON", path.block),
            path.span,
            "does not resolve",
            format!("read the whole body with `{{api_{}[response]}}`", path.block),
        ),
        Miss::Path(m) => (
            m.message(&path.keys),
            path.keys.get(m.at).map_or(path.span, |k| k.span),
            m.label(),
            m.help(&path.block, &path.keys),
        ),
    };
    Diagnostic::new(Code::UnresolvedPath, message).label(span, label).help(help)
}

fn store_failure(e: &str, span: Span, doing: String) -> Diagnostic {
    Diagnostic::new(Code::StoreFailed, e.to_string())
        .label(span, doing)
        .help("check the store's path and permissions (`--store PATH`); a corrupt store is never recreated silently")
}

impl Runner<'_> {
    fn steps(&mut self, steps: &[Step]) -> Outcome {
        for step in steps {
            match step {
                Step::Request(r) => self.request(r)?,
                Step::Reply { text, .. } => {
                    let text = render::render(text, self);
                    self.flush()?;
                    let text = self.redactor.redact(&text);
                    (self.sink)(Event::Reply { text });
                }
                Step::Save { name, value, span } => {
                    let mut value = render::render_val(value, self);
                    self.flush()?;
                    if self.options.dry_run || self.options.test_request {
                        continue;
                    }
                    self.redactor.redact_json(&mut value);
                    if let Err(e) = self.store.set(name, &value) {
                        return Err(Box::new(store_failure(&e, *span, format!("saving `{name}`"))));
                    }
                    (self.sink)(Event::Save { name: name.clone(), value });
                }
                Step::If { condition, then, otherwise, .. } => {
                    let taken = self.condition(condition);
                    self.flush()?;
                    self.steps(if taken { then } else { otherwise })?;
                }
            }
        }
        Ok(())
    }

    /// Sends the warnings of the step just rendered, or fails with the first
    /// one under `--strict`.
    fn flush(&mut self) -> Outcome {
        if let Some(fatal) = self.fatal.take() {
            return Err(Box::new(self.redact_diag(fatal)));
        }
        for diag in std::mem::take(&mut self.pending) {
            let diag = self.redact_diag(diag);
            if self.options.strict {
                let mut diag = diag.with_severity(Severity::Error);
                diag.note = Some("--strict makes this a failure".into());
                return Err(Box::new(diag));
            }
            (self.sink)(Event::Warning(DiagnosticEvent::new(diag)));
        }
        Ok(())
    }

    fn redact_diag(&self, mut d: Diagnostic) -> Diagnostic {
        if self.redactor.is_empty() {
            return d;
        }
        d.message = self.redactor.redact(&d.message);
        d.help = d.help.map(|h| self.redactor.redact(&h));
        d.note = d.note.map(|n| self.redactor.redact(&n));
        for l in &mut d.labels {
            l.text = self.redactor.redact(&l.text);
        }
        d
    }

    fn condition(&mut self, c: &Condition) -> bool {
        let left = render::render_val(&c.left, self);
        match &c.test {
            None => truthy(&left),
            Some((op, right)) => {
                let right = render::render_val(right, self);
                compare(&left, *op, &right)
            }
        }
    }

    fn request(&mut self, r: &Request) -> Outcome {
        let fail = |code: Code, message: String, help: String| -> Outcome {
            Err(Box::new(Diagnostic::new(code, message).label(r.url.span, "once its variables are filled").help(help)))
        };
        let url_text = render::render_url(&r.url, self);
        let mut url = match url::Url::parse(&url_text) {
            Ok(u) if matches!(u.scheme(), "http" | "https") && u.host_str().is_some() => u,
            Ok(u) => {
                let url = self.redactor.redact(u.as_str());
                return fail(
                    Code::InvalidRequest,
                    format!("block `{}`: `{url}` is not an http(s) URL", r.block),
                    "the URL's variables must make an absolute http(s) address".into(),
                );
            }
            Err(e) => {
                let url = self.redactor.redact(&url_text);
                return fail(
                    Code::InvalidRequest,
                    format!("block `{}`: `{url}` is not a valid URL ({e})", r.block),
                    "the URL's variables must make an absolute http(s) address".into(),
                );
            }
        };
        if !r.params.is_empty() {
            let rendered: Vec<(String, String)> =
                r.params.iter().map(|(k, t)| (k.clone(), render::render(t, self))).collect();
            let mut query = url.query_pairs_mut();
            for (k, v) in &rendered {
                query.append_pair(k, v);
            }
        }
        let mut headers = Vec::with_capacity(r.headers.len() + 1);
        for (name, t) in &r.headers {
            let value = render::render(t, self);
            if value.contains(['\r', '\n']) || value.chars().any(|c| c.is_control() && c != '\t') {
                return fail(
                    Code::InvalidRequest,
                    format!(
                        "block `{}`: header `{name}` holds a control character once its variables are filled",
                        r.block
                    ),
                    "a value with a line break would end the header; check the variables it reads".into(),
                );
            }
            let secret = t.parts.iter().any(|s| matches!(s, Seg::Secret { .. } | Seg::BotToken));
            headers.push(http::Header { name: name.clone(), value, secret });
        }
        let body = match (&r.body, r.method) {
            (Some(b), m) if m != crate::plan::Method::GET => {
                let json = render::render_val(b, self);
                if !headers.iter().any(|h| h.name.eq_ignore_ascii_case("content-type")) {
                    headers.push(http::Header {
                        name: "Content-Type".into(),
                        value: "application/json".into(),
                        secret: false,
                    });
                }
                Some(serde_json::to_vec(&json).unwrap_or_default())
            }
            _ => None,
        };
        self.flush()?;
        let carries_token = self.carries_token(r);
        if carries_token {
            self.check_token_destination(r, &url)?;
        }

        let mut event = RequestEvent {
            block: r.block.clone(),
            method: r.method.as_str(),
            url: self.redactor.redact(url.as_str()),
            status: None,
            duration_ms: None,
            size: None,
            redirects: 0,
            offline: self.options.offline,
            dry_run: self.options.dry_run,
            request_headers: None,
            request_body: None,
            response_headers: None,
            span: r.span,
        };
        if self.options.verbose || self.options.dry_run {
            event.request_headers =
                Some(headers.iter().map(|h| (h.name.clone(), self.redactor.redact(&h.value))).collect());
            event.request_body = body.as_ref().map(|b| self.redactor.redact(&String::from_utf8_lossy(b)));
        }
        if self.options.dry_run {
            (self.sink)(Event::Request(event));
            return Ok(());
        }
        if self.options.offline {
            let response = self.sample_response(r)?;
            event.status = Some(response.status);
            event.size = Some(match &response.body {
                Body::Json(j) => j.to_string().len(),
                Body::Text(t) => t.len(),
            });
            self.responses.insert(r.block.clone(), response);
            (self.sink)(Event::Request(event));
            return Ok(());
        }

        let started = Instant::now();
        let client = self.client.get_or_insert_with(|| http::Client::new(self.options.http));
        let outgoing = http::Outgoing { method: r.method.as_str(), url, headers, body, carries_token };
        let incoming = match client.send(outgoing) {
            Ok(i) => i,
            Err(f) => return Err(Box::new(self.redact_diag(http_failure(r, f, &self.options.http)))),
        };
        event.duration_ms = Some((started.elapsed().as_secs_f64() * 1e4).round() / 10.0);
        event.status = Some(incoming.status);
        event.size = Some(incoming.body.len());
        event.redirects = incoming.redirects;
        event.url = self.redactor.redact(incoming.url.as_str());
        self.last_headers = incoming.headers.iter().map(|(k, v)| (k.clone(), self.redactor.redact(v))).collect();
        if self.options.verbose {
            event.response_headers = Some(self.last_headers.clone());
        }
        if let Some(location) = &incoming.redirect_refused {
            let diag = Diagnostic::new(
                Code::RedirectNotFollowed,
                format!("block `{}` was redirected to `{location}`; the redirect was not followed", r.block),
            )
            .label(r.url.span, "a request that carries the bot token")
            .help("a request that carries `{bot_token}` follows no redirect; its response is the redirect itself");
            self.pending.push(diag);
        }
        let body = match serde_json::from_slice::<Json>(&incoming.body) {
            Ok(json) => Body::Json(json),
            Err(_) => Body::Text(String::from_utf8_lossy(&incoming.body).into_owned()),
        };
        self.responses.insert(r.block.clone(), Response { status: incoming.status, body });
        (self.sink)(Event::Request(event));
        self.flush()
    }

    fn carries_token(&self, r: &Request) -> bool {
        let has = |t: &Template| t.parts.iter().any(|s| matches!(s, Seg::BotToken));
        let mut found = has(&r.url) || r.params.iter().any(|(_, t)| has(t)) || r.headers.iter().any(|(_, t)| has(t));
        if let Some(b) = &r.body {
            fn val_has(v: &Val, has: &dyn Fn(&Template) -> bool) -> bool {
                match v {
                    Val::Str(t) => has(t),
                    Val::Object(e) => e.iter().any(|(_, v)| val_has(v, has)),
                    Val::Array(i) => i.iter().any(|v| val_has(v, has)),
                    _ => false,
                }
            }
            found |= val_has(b, &has);
        }
        found
    }

    /// The bot token goes only over https (or to this machine) and only to
    /// the platform's API host, checked on the final URL.
    fn check_token_destination(&self, r: &Request, url: &url::Url) -> Outcome {
        let platform_text = self.options.platform.as_deref().unwrap_or(&self.plan.platform);
        let host = url.host_str().unwrap_or_default().to_ascii_lowercase();
        let loopback = is_loopback(&host);
        let refuse = |why: String| -> Outcome {
            Err(Box::new(
                Diagnostic::new(Code::TokenRefused, format!("block `{}` would send the bot token {why}", r.block))
                    .label(r.url.span, "the URL, once its variables are filled")
                    .help("the token goes only to the chat platform's API over https; nothing was sent"),
            ))
        };
        if url.scheme() != "https" && !loopback {
            return refuse(format!("over {} to `{host}`", url.scheme()));
        }
        if r.allow_bot_token {
            return Ok(());
        }
        let platform = url::Url::parse(platform_text).ok();
        let same = platform.as_ref().is_some_and(|p| {
            p.host_str().is_some_and(|h| h.eq_ignore_ascii_case(&host))
                && p.port_or_known_default() == url.port_or_known_default()
        });
        if !same {
            return refuse(format!("to `{host}`, which is not the platform's API (`{platform_text}`)"));
        }
        Ok(())
    }

    fn sample_response(&self, r: &Request) -> Result<Response, Box<Diagnostic>> {
        let Some(sample) = &r.sample else {
            return Err(Box::new(
                Diagnostic::new(Code::NoSample, format!("block `{}` has no sample to answer from", r.block))
                    .label(r.span, "no `sample` field")
                    .help(format!("record one with `blkc test FILE {} --save`, or run without `--offline`", r.block)),
            ));
        };
        let path = self.options.base_dir.join(sample);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            Box::new(
                Diagnostic::new(
                    Code::NoSample,
                    format!("sample `{sample}` of block `{}` cannot be read: {e}", r.block),
                )
                .label(r.span, "its sample")
                .help("the sample path is relative to the .blk file"),
            )
        })?;
        let json = serde_json::from_str(&text).map_err(|e| {
            Box::new(
                Diagnostic::new(
                    Code::NoSample,
                    format!("sample `{sample}` of block `{}` is not valid JSON: {e}", r.block),
                )
                .label(r.span, "its sample")
                .help("a sample holds the JSON body of a response"),
            )
        })?;
        Ok(Response { status: 200, body: Body::Json(json) })
    }
}

fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host == "localhost" || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

fn http_failure(r: &Request, f: http::Failure, limits: &http::Limits) -> Diagnostic {
    let block = &r.block;
    let (code, message, help) = match f {
        http::Failure::Connect(why) => (
            Code::ConnectFailed,
            format!("block `{block}` could not connect: {why}"),
            "check that the server is up and the URL's host and port are right".to_string(),
        ),
        http::Failure::Dns(why) => (
            Code::ConnectFailed,
            format!("block `{block}` could not connect: {why}"),
            "check the host name in the URL".to_string(),
        ),
        http::Failure::Tls(why) => (
            Code::TlsFailed,
            format!("block `{block}`: the TLS handshake failed: {why}"),
            "the server's certificate must be valid for its host name".to_string(),
        ),
        http::Failure::Timeout(why) => (
            Code::Timeout,
            format!("block `{block}` got no answer in time: {why}"),
            format!(
                "the limits are {:?} to connect and {:?} in all; raise them with `--connect-timeout` and `--timeout`",
                limits.connect_timeout, limits.timeout
            ),
        ),
        http::Failure::TooLarge(cap) => (
            Code::ResponseTooLarge,
            format!("the response of block `{block}` is larger than {cap} bytes (decoded)"),
            "raise the cap with `--max-response-size BYTES` if this response is expected".to_string(),
        ),
        http::Failure::TooManyRedirects(n) => (
            Code::TooManyRedirects,
            format!("block `{block}` was redirected more than {n} times"),
            "raise the limit with `--max-redirects N`, or point the URL at the final address".to_string(),
        ),
        http::Failure::BadRedirect(why) => (
            Code::TooManyRedirects,
            format!("block `{block}` was redirected somewhere blkc cannot follow: {why}"),
            "point the URL at the final address".to_string(),
        ),
        http::Failure::Other(why) => (
            Code::ConnectFailed,
            format!("block `{block}`: the request failed: {why}"),
            "check the URL and the server".to_string(),
        ),
    };
    Diagnostic::new(code, message).label(r.url.span, format!("the URL of block `{block}`")).help(help)
}

/// Not `""`, `false`, `null`, `0`, or an empty array or object.
fn truthy(v: &Json) -> bool {
    match v {
        Json::Null => false,
        Json::Bool(b) => *b,
        Json::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Json::String(s) => !s.is_empty() && s != "false" && s != "null" && s != "0",
        Json::Array(a) => !a.is_empty(),
        Json::Object(o) => !o.is_empty(),
    }
}

fn as_number(v: &Json) -> Option<f64> {
    match v {
        Json::Number(n) => n.as_f64(),
        Json::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn as_text(v: &Json) -> String {
    let mut s = String::new();
    render::push_json(&mut s, v);
    s
}

/// Compares numerically when both sides are numbers (or numeric text),
/// otherwise as text; `contains` looks into text or arrays.
fn compare(left: &Json, op: CompareOp, right: &Json) -> bool {
    use std::cmp::Ordering;
    if op == CompareOp::Contains {
        return match left {
            Json::Array(items) => items.iter().any(|i| i == right || as_text(i) == as_text(right)),
            _ => as_text(left).contains(&as_text(right)),
        };
    }
    let order = match (as_number(left), as_number(right)) {
        (Some(a), Some(b)) => a.partial_cmp(&b),
        _ => Some(as_text(left).cmp(&as_text(right))),
    };
    match op {
        CompareOp::Eq => order == Some(Ordering::Equal),
        CompareOp::Ne => order != Some(Ordering::Equal),
        CompareOp::Lt => order == Some(Ordering::Less),
        CompareOp::Le => matches!(order, Some(Ordering::Less | Ordering::Equal)),
        CompareOp::Gt => order == Some(Ordering::Greater),
        CompareOp::Ge => matches!(order, Some(Ordering::Greater | Ordering::Equal)),
        CompareOp::Contains => false,
    }
}
