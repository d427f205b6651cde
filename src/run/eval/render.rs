//! Resolving response paths and rendering templates. Pure: no I/O.

use std::fmt::Write as _;

use serde_json::Value as Json;

use crate::base::data::Data;

use crate::base::path;
use crate::base::urls::Region;
use crate::language::plan::{Path, Seg, Template, Val};

/// A block's response, as the later nodes of the run see it.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    pub status: u16,
    pub body: Body,
    /// Its headers, names lower-case, in the order received.
    pub headers: Vec<(String, String)>,
    /// Its bytes as received, kept only for a block a later multipart
    /// body sends as a file.
    pub bytes: Option<std::sync::Arc<[u8]>>,
}

impl Response {
    pub fn new(status: u16, body: Body) -> Response {
        Response { status, body, headers: Vec::new(), bytes: None }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    Json(Data),
    /// A body that is not JSON, kept as text.
    Text(String),
}

/// A file part's bytes, with the name and type its source gives (a user's
/// upload has its own), which the part's `filename` and `type` override.
#[derive(Debug, Clone)]
pub struct FileBytes {
    pub bytes: std::sync::Arc<[u8]>,
    pub name: Option<String>,
    pub media_type: Option<String>,
}

impl FileBytes {
    pub fn bytes(bytes: std::sync::Arc<[u8]>) -> FileBytes {
        FileBytes { bytes, name: None, media_type: None }
    }
}

/// Why a reference did not resolve.
#[derive(Debug, Clone, PartialEq)]
pub enum Miss {
    /// The block has not run in this run (a branch skipped it, or `--dry-run`).
    NoResponse,
    /// The response is not JSON, so it has no fields.
    NotJson,
    /// The response has no header of this name.
    NoHeader(String),
    /// The path does not reach a value of the response.
    Path(path::Miss),
}

/// What a reference reads, before it is turned into text.
#[derive(Debug, Clone, PartialEq)]
pub enum Resolved<'a> {
    Json(&'a Data),
    Text(&'a str),
    Status(u16),
}

/// `path` with each key written `{name}` made that variable's value (one
/// key, whatever it holds: a map keyed by a value, `{votes[{user_id}]}`).
fn keyed<'p>(path: &'p Path, scope: &mut dyn Scope) -> std::borrow::Cow<'p, Path> {
    if !path.keys.iter().any(|k| k.name.starts_with('{')) {
        return std::borrow::Cow::Borrowed(path);
    }
    let mut owned = path.clone();
    for key in &mut owned.keys {
        let Some(name) = path::key_variable(&key.name).map(str::to_string) else { continue };
        let value = scope.variable(&name, key.span).unwrap_or_else(|| {
            scope.missing(Missing::Variable { name: &name, span: key.span });
            String::new()
        });
        key.index = path::index(&value);
        key.name = value;
    }
    std::borrow::Cow::Owned(owned)
}

/// Whether key `at` of `path` was written `{name}` (its text says how it
/// was written; a response's path has its root before its keys).
pub fn key_was_variable(path: &Path, at: usize) -> bool {
    let Some(inside) = path.text.split_once('[').and_then(|(_, rest)| rest.strip_suffix(']')) else { return false };
    let skip = usize::from(!path.element);
    path::segments(inside).nth(at + skip).is_some_and(|(_, written)| path::key_variable(written).is_some())
}

pub fn resolve<'a>(response: Option<&'a Response>, path: &Path) -> Result<Resolved<'a>, Miss> {
    let response = response.ok_or(Miss::NoResponse)?;
    if path.status {
        return Ok(Resolved::Status(response.status));
    }
    if path.headers {
        let name = path.keys.first().map_or("", |k| k.name.as_str());
        return match response.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)) {
            Some((_, v)) => Ok(Resolved::Text(v)),
            None => Err(Miss::NoHeader(name.to_string())),
        };
    }
    match &response.body {
        Body::Json(json) => path::walk(json, &path.keys).map(Resolved::Json).map_err(Miss::Path),
        Body::Text(text) if path.keys.is_empty() => Ok(Resolved::Text(text)),
        Body::Text(_) => Err(Miss::NotJson),
    }
}

/// Appends a JSON value as text: a string as itself, a number as its JSON
/// text (integers exactly), anything else as compact JSON. Never
/// `[Object object]`.
pub fn push_json(out: &mut String, v: &Data) {
    match v {
        Data::String(s) => out.push_str(s),
        Data::Number(n) => out.push_str(n),
        Data::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Data::Null => out.push_str("null"),
        Data::Array(_) | Data::Object(_) => v.write_json(out),
    }
}

pub fn push_resolved(out: &mut String, r: &Resolved<'_>) {
    match r {
        Resolved::Json(v) => push_json(out, v),
        Resolved::Text(t) => out.push_str(t),
        Resolved::Status(s) => {
            let _ = write!(out, "{s}");
        }
    }
}

pub fn resolved_json(r: &Resolved<'_>) -> Json {
    match r {
        Resolved::Json(v) => v.to_json(),
        Resolved::Text(t) => Json::String((*t).to_string()),
        Resolved::Status(s) => Json::from(*s),
    }
}

/// The values a template can read. Implemented by the runner; lets
/// rendering stay free of I/O.
pub trait Scope {
    /// The response a path reads: its block's, or (for an element path)
    /// the element of the enclosing loop it names, as a response.
    fn response(&mut self, path: &Path) -> Option<&Response>;
    /// A trigger, option or custom variable's text.
    fn variable(&mut self, name: &str, span: crate::base::source::Span) -> Option<String>;
    /// A variable's value itself: a saved list stays a list.
    fn variable_json(&mut self, name: &str, span: crate::base::source::Span) -> Option<Json> {
        self.variable(name, span).map(Json::String)
    }
    fn secret(&self, name: &str) -> Option<&str>;
    /// Whether the variable's value is an object or an array (given so in
    /// `--vars FILE.json`): it is never written into a URL or a header.
    fn is_structured(&self, _name: &str) -> bool {
        false
    }
    fn bot_token(&self) -> Option<&str>;
    /// The time now and the run's random draws.
    fn world(&mut self) -> &mut dyn crate::base::world::World;
    /// Told about each reference or variable that has no value; returns
    /// what to write instead.
    fn missing(&mut self, what: Missing<'_>) -> String;
    /// Told that a calculation failed (a value that is not a number, a
    /// division by zero): the step fails with it.
    fn failed(&mut self, _diagnostic: crate::base::diagnostics::Diagnostic) {}
    /// The bytes a multipart body's file part sends, or why there are none.
    fn file(&mut self, _from: &crate::language::plan::FileFrom) -> Result<FileBytes, String> {
        Err("no file can be read here".to_string())
    }
}

/// Something a template read that had no value.
#[derive(Debug)]
pub enum Missing<'a> {
    Path { path: &'a Path, miss: Miss },
    Variable { name: &'a str, span: crate::base::source::Span },
}

/// How a variable's value is written into the text around it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Escape {
    None,
    /// The scheme or authority of a URL: written as is; the request builder
    /// checks that the value is only a scheme or a host name
    /// ([`crate::language::policy::host_value_ok`]).
    Authority,
    /// A URL path segment: everything but unreserved characters encoded.
    PathSegment,
    /// A URL query component (or the fragment).
    Query,
}

fn push_escaped(out: &mut String, value: &str, escape: Escape) {
    match escape {
        Escape::None | Escape::Authority => out.push_str(value),
        Escape::PathSegment | Escape::Query => out.push_str(&crate::base::urls::encode_value(value)),
    }
}

/// Renders a template into text.
pub fn render(t: &Template, scope: &mut dyn Scope) -> String {
    render_with(t, scope, |_| Escape::None).text
}

/// Renders a template, and says whether an object or array was written
/// into it (as JSON text): for a URL parameter or a header, an error.
pub fn render_field(t: &Template, scope: &mut dyn Scope) -> RenderedUrl {
    render_with(t, scope, |_| Escape::None)
}

/// A URL once its values are filled in, with where each value went.
#[derive(Debug, Clone, PartialEq)]
pub struct RenderedUrl {
    pub text: String,
    /// The byte ranges of `text` that came from a value, and how each was
    /// written (so the builder can tell a value in the host from one in the
    /// path).
    pub values: Vec<(std::ops::Range<usize>, Escape)>,
    /// An object or array was written into the text as JSON.
    pub structured: bool,
}

impl RenderedUrl {
    /// A control character other than tab (a line break would end a header).
    pub fn value_is_control(&self) -> bool {
        self.text.chars().any(|c| c.is_control() && c != '\t')
    }
}

/// A value with its list helpers applied. A missing value (a variable
/// without one, a path that does not resolve) is told to the scope, as any
/// is, and is an empty list: `{api_s[response.items]|count}` is `0`.
/// A number helper on a value that is not a number fails the step (B323).
fn helped(
    base: &Seg,
    helpers: &[crate::language::helpers::Helper],
    span: crate::base::source::Span,
    scope: &mut dyn Scope,
) -> Json {
    let value = match base {
        Seg::Var { name, span } => scope.variable_json(name, *span).unwrap_or_else(|| {
            scope.missing(Missing::Variable { name, span: *span });
            Json::Null
        }),
        Seg::Ref(path) => ref_json(path, scope),
        Seg::Draw { draw, span } => drawn(draw, *span, scope),
        // The scanner gives helpers no other base.
        _ => Json::Null,
    };
    crate::language::helpers::apply(value, helpers, scope.world()).unwrap_or_else(|e| {
        scope.failed(e.diagnostic(span));
        Json::Null
    })
}

/// The value a draw or a helped `{…}` makes.
fn computed(seg: &Seg, scope: &mut dyn Scope) -> Json {
    match seg {
        Seg::Draw { draw, span } => drawn(draw, *span, scope),
        Seg::Helped { base, helpers, span } => helped(base, helpers, *span, scope),
        _ => Json::Null,
    }
}

/// A draw's value: its variable bounds read as any variable is; one that is
/// not a number fails the step (B323).
fn drawn(draw: &crate::language::helpers::Draw, span: crate::base::source::Span, scope: &mut dyn Scope) -> Json {
    let mut values = Vec::new();
    for name in draw.variables() {
        let value = scope.variable_json(name, span).unwrap_or_else(|| {
            scope.missing(Missing::Variable { name, span });
            Json::Null
        });
        values.push((name, value));
    }
    let mut bound = |name: &str| values.iter().find(|(n, _)| *n == name).map_or(Json::Null, |(_, v)| v.clone());
    crate::language::helpers::drawn_value(draw, &mut bound, scope.world()).unwrap_or_else(|e| {
        scope.failed(e.diagnostic("a bound of the draw", span));
        Json::Null
    })
}

/// Renders a URL template: values after the authority are percent-encoded
/// (as a path segment, or as a query component after `?`), so a value
/// cannot change the URL's structure; values in the scheme or authority are
/// written as is and judged by the request builder.
pub fn render_url(t: &Template, scope: &mut dyn Scope) -> RenderedUrl {
    render_with(t, scope, |so_far| match crate::base::urls::region(so_far) {
        Region::Scheme | Region::Authority | Region::Port => Escape::Authority,
        Region::Path => Escape::PathSegment,
        Region::Query | Region::Fragment => Escape::Query,
    })
}

type Values = Vec<(std::ops::Range<usize>, Escape)>;

fn render_with(t: &Template, scope: &mut dyn Scope, escape_at: impl Fn(&str) -> Escape) -> RenderedUrl {
    let mut out = String::new();
    let mut values = Values::new();
    let mut structured = false;
    for seg in &t.parts {
        let start = out.len();
        let escape = escape_at(&out);
        let filled = match seg {
            Seg::Text(s) => {
                out.push_str(s);
                false
            }
            Seg::Var { name, span } => match scope.variable(name, *span) {
                Some(v) => {
                    structured |= scope.is_structured(name);
                    push_escaped(&mut out, &v, escape);
                    true
                }
                None => {
                    let text = scope.missing(Missing::Variable { name, span: *span });
                    out.push_str(&text);
                    false
                }
            },
            Seg::BotToken => match scope.bot_token() {
                Some(tok) => {
                    push_escaped(&mut out, tok, escape);
                    true
                }
                None => {
                    out.push_str("{bot_token}");
                    false
                }
            },
            Seg::Secret { name } => match scope.secret(name) {
                Some(s) => {
                    push_escaped(&mut out, s, escape);
                    true
                }
                None => {
                    let _ = write!(out, "<{name}>");
                    false
                }
            },
            Seg::Draw { .. } | Seg::Helped { .. } => {
                let value = computed(seg, scope);
                structured |= value.is_array() || value.is_object();
                let mut s = String::new();
                crate::base::values::push_value(&mut s, &value);
                push_escaped(&mut out, &s, escape);
                true
            }
            Seg::Ref(path) => {
                let path = &*keyed(path, scope);
                match resolve(scope.response(path), path) {
                    Ok(r) => {
                        structured |= matches!(r, Resolved::Json(d) if d.is_structured());
                        if matches!(escape, Escape::None | Escape::Authority) {
                            push_resolved(&mut out, &r);
                        } else {
                            let mut s = String::new();
                            push_resolved(&mut s, &r);
                            push_escaped(&mut out, &s, escape);
                        }
                        true
                    }
                    Err(miss) => {
                        let text = scope.missing(Missing::Path { path, miss });
                        out.push_str(&text);
                        false
                    }
                }
            }
        };
        if filled {
            values.push((start..out.len(), escape));
        }
    }
    RenderedUrl { text: out, values, structured }
}

/// The JSON value a path reads (its keys from values filled in), or null
/// when it reads nothing (told to the scope).
fn ref_json(path: &Path, scope: &mut dyn Scope) -> Json {
    let path = &*keyed(path, scope);
    match resolve(scope.response(path), path) {
        Ok(r) => resolved_json(&r),
        Err(miss) => {
            scope.missing(Missing::Path { path, miss });
            Json::Null
        }
    }
}

/// Renders a JSON value template: strings are templates, an unquoted
/// reference inserts the JSON value itself.
pub fn render_val(v: &Val, scope: &mut dyn Scope) -> Json {
    match v {
        Val::Str(t) => Json::String(render(t, scope)),
        Val::Json(j) => j.clone(),
        Val::Ref(path) => ref_json(path, scope),
        Val::Object(entries) => Json::Object(entries.iter().map(|(k, v)| (k.clone(), render_val(v, scope))).collect()),
        Val::Array(items) => Json::Array(items.iter().map(|i| render_val(i, scope)).collect()),
        Val::Var { name, span } => match scope.variable_json(name, *span) {
            Some(value) => value,
            None => {
                scope.missing(Missing::Variable { name, span: *span });
                Json::Null
            }
        },
        Val::Arith(c) => match calculate(c, scope) {
            Ok(n) => super::arith::to_json(&n),
            Err(d) => {
                scope.failed(*d);
                Json::Null
            }
        },
    }
}

/// A calculation's result, or the diagnostic of the operand or operation
/// that failed, at its span.
fn calculate(
    c: &crate::language::plan::Calc,
    scope: &mut dyn Scope,
) -> Result<bigdecimal::BigDecimal, Box<crate::base::diagnostics::Diagnostic>> {
    use super::arith;
    use crate::language::plan::Calc;
    match c {
        Calc::Value { value, span } => {
            let v = render_val(value, scope);
            arith::number(&v).map_err(|e| Box::new(e.diagnostic("this value", *span)))
        }
        Calc::Var { name, span } => match scope.variable(name, *span) {
            Some(text) => arith::parse(text.trim()).map_err(|e| Box::new(e.diagnostic(&format!("`{name}`"), *span))),
            None => {
                scope.missing(Missing::Variable { name, span: *span });
                let why = arith::CalcError::NotANumber("without a value".into());
                Err(Box::new(why.diagnostic(&format!("`{name}`"), *span)))
            }
        },
        Calc::Op { op, left, right, span } => {
            let l = calculate(left, scope)?;
            let r = calculate(right, scope)?;
            arith::apply(*op, &l, &r).map_err(|e| Box::new(e.diagnostic(op.as_str(), *span)))
        }
    }
}
