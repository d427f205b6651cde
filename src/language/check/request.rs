//! Rules on each api block's own fields: names, methods, URL, headers, body.

use rustc_hash::FxHashMap as HashMap;

use super::scope::Scope;
use super::url::{literal_length, shape, UrlShape};
use crate::base::diagnostics::{did_you_mean, Code, Diagnostic, Findings};
use crate::base::source::Span;
use crate::language::ast::visit::each_block;
use crate::language::ast::visit::{self, Site, Visitor};
use crate::language::ast::{ApiBlock, Entry, FieldKind, Pair, Part, Template, Tree, Value};
use crate::language::vocab::{self, Method};

pub fn check_tree(scope: &Scope<'_>, tree: &Tree, out: &mut Findings) {
    super::bodies::check_tree_failed(tree, out);
    let mut names: HashMap<&str, Span> = HashMap::default();
    each_block(&tree.body, &mut |block| {
        let name = block.name.name.as_str();
        if let Some(first) = names.insert(name, block.name.span) {
            out.push(
                Diagnostic::new(
                    Code::DuplicateBlock,
                    format!("block name `{name}` is used twice in {} `{}`", tree.kind.as_str(), tree.name.name),
                )
                .label(block.name.span, "defined again here")
                .related(first, "first defined here")
                .help(format!(
                    "rename one of them: `{{api_{name}[…]}}` must name exactly one block, or their responses are confused"
                )),
            );
        }
        check_block(block, out);
        super::bodies::check_block(scope, tree, block, out);
    });
}

fn check_block(block: &ApiBlock, out: &mut Findings) {
    check_fields(block, out);
    let method = block.method().and_then(|m| Method::parse(&m.name));
    if let Some(m) = block.method() {
        check_method(m.name.as_str(), m.span, out);
    }
    check_body_on_get(block, method, out);
    if let Some(url) = block.url() {
        check_url(block, url, method, out);
    }
    for header in block.headers() {
        check_header(header, out);
    }
    check_body_keys(block, out);
    check_templated_keys(block, out);
    check_allow(block, out);
}

/// Keys are sent as written: a `{variable}` or `<SLOT>` in a parameter or
/// body key would be sent as its own text, so it is an error.
fn check_templated_keys(block: &ApiBlock, out: &mut Findings) {
    fn check(key: &crate::language::ast::Key, place: &str, out: &mut Findings) {
        let name = key.name.as_str();
        let variable = name.find('{').is_some_and(|i| name[i..].contains('}'));
        let slot = name.find('<').is_some_and(|i| name[i..].contains('>'));
        if variable || slot {
            out.push(
                Diagnostic::new(
                    Code::TemplatedKey,
                    format!("{place} key `{name}` holds a variable, which keys do not fill"),
                )
                .label(key.span, "sent as these very characters")
                .help("keys are sent as written; put the variable in the value, or write a fixed key"),
            );
        }
    }
    fn entries(list: &[Entry], out: &mut Findings) {
        for e in list {
            check(&e.key, "body", out);
            if let Value::Object(inner, _) = &e.value {
                entries(inner, out);
            }
        }
    }
    block.params().iter().for_each(|p| check(&p.key, "parameter", out));
    match block.body() {
        Some((crate::language::ast::Body::Multipart(parts), _)) => {
            parts.iter().for_each(|p| check(&p.key, "part", out));
        }
        Some((body, _)) => entries(body.entries().unwrap_or(&[]), out),
        None => {}
    }
}

/// Each field once; `method` and `url` required.
fn check_fields(block: &ApiBlock, out: &mut Findings) {
    let mut seen: HashMap<&str, Span> = HashMap::default();
    for field in &block.fields {
        let keyword = field.kind.keyword();
        if let Some(first) = seen.insert(keyword, field.keyword) {
            out.push(
                Diagnostic::new(
                    Code::DuplicateField,
                    format!("`{keyword}` is given twice in block `{}`", block.name.name),
                )
                .label(field.keyword, "given again here")
                .related(first, "first given here")
                .help(format!("keep one `{keyword}`; blkc would not know which to use")),
            );
        }
    }
    for (keyword, example) in [("method", "method GET"), ("url", "url \"https://api.example.com/v1/items\"")] {
        if !seen.contains_key(keyword) {
            out.push(
                Diagnostic::new(Code::MissingField, format!("block `{}` has no `{keyword}`", block.name.name))
                    .label(block.name.span, format!("`{keyword}` missing in this block"))
                    .help(format!("every API block needs a {keyword}: add `{example}`")),
            );
        }
    }
}

fn check_body_on_get(block: &ApiBlock, method: Option<Method>, out: &mut Findings) {
    if let (Some(m), Some((_, body_span))) = (method.filter(|m| !m.takes_body()), block.body()) {
        let method_span = block.method().map_or(block.name.span, |m| m.span);
        out.push(
            Diagnostic::new(Code::BodyOnGet, format!("block `{}` sends a body with {}", block.name.name, m.as_str()))
                .label(body_span, format!("a {} request carries no body", m.as_str()))
                .related(method_span, format!("the method is {}", m.as_str()))
                .help("move the values into `params { … }`, or use POST, PUT or PATCH to send a body"),
        );
    }
}

/// An absolute http(s) URL; a GET URL no longer than the limit.
fn check_url(block: &ApiBlock, url: &Template, method: Option<Method>, out: &mut Findings) {
    match shape(url) {
        UrlShape::Invalid { reason, help } => out.push(
            Diagnostic::new(
                Code::InvalidUrl,
                format!("the URL of block `{}` is not an absolute http(s) address", block.name.name),
            )
            .label(url.span, reason)
            .help(help),
        ),
        UrlShape::Known { .. } | UrlShape::Dynamic if method == Some(Method::GET) => {
            let len = literal_length(url, block.params());
            if len > vocab::MAX_GET_URL {
                out.push(
                    Diagnostic::new(
                        Code::UrlTooLong,
                        format!(
                            "the GET URL of block `{}` is {len} characters before any variable is filled, more than {}",
                            block.name.name,
                            vocab::MAX_GET_URL
                        ),
                    )
                    .label(url.span, format!("{len} characters with its parameters"))
                    .help("send the data in a body with POST, or shorten the parameters"),
                );
            }
        }
        _ => {}
    }
}

/// Headers that decide how a message is framed or routed: HTTP writes them
/// itself, and a hand-written one half-sends or confuses the request.
const FRAMING_HEADERS: &[&str] = &[
    "content-length",
    "transfer-encoding",
    "host",
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "upgrade",
];

/// A header's name is an RFC 9110 token, not one HTTP writes itself; its
/// value has no line break.
fn check_header(header: &Pair, out: &mut Findings) {
    if FRAMING_HEADERS.iter().any(|h| header.key.name.eq_ignore_ascii_case(h)) {
        out.push(
            Diagnostic::new(Code::FramingHeader, format!("header `{}` is written by HTTP itself", header.key.name))
                .label(header.key.span, "decides how the request is framed or routed")
                .help("remove it: blkc sets the length and connection of each request from what it sends; a hand-written value would cut or confuse the request"),
        );
    }
    if !is_token(&header.key.name) {
        let bad = header.key.name.chars().find(|c| !is_tchar(*c));
        let label = match bad {
            Some(c) => format!("`{}` cannot appear in a header name", c.escape_debug()),
            None => "a header name cannot be empty".to_string(),
        };
        out.push(
            Diagnostic::new(Code::InvalidHeaderName, format!("`{}` is not a valid header name", header.key.name))
                .label(header.key.span, label)
                .help("header names are letters, digits and `!#$%&'*+-.^_`|~`, like `X-Api-Key`"),
        );
    }
    for part in &header.value.parts {
        if let Part::Lit(text, span) = part {
            if text.contains(['\r', '\n']) {
                out.push(
                    Diagnostic::new(
                        Code::HeaderValueNewline,
                        format!("header `{}` has a line break in its value", header.key.name),
                    )
                    .label(*span, "CR or LF here")
                    .help("remove the `\\r` or `\\n`: a line break would end the header and could inject another"),
                );
            }
        }
    }
}

fn check_allow(block: &ApiBlock, out: &mut Findings) {
    for field in &block.fields {
        if let FieldKind::Allow(what) = &field.kind {
            if !vocab::ALLOWS.iter().any(|(name, _)| *name == what.name) {
                let names = vocab::ALLOWS.iter().map(|(name, _)| *name);
                let help = match did_you_mean(&what.name, names) {
                    Some(s) => format!("did you mean `allow {s}`?"),
                    None => format!(
                        "a block can allow {}",
                        vocab::ALLOWS.iter().map(|(n, why)| format!("`{n}` ({why})")).collect::<Vec<_>>().join(" or ")
                    ),
                };
                out.push(
                    Diagnostic::new(
                        Code::UnknownAllow,
                        format!("`allow {}` is not something blkc can allow", what.name),
                    )
                    .label(what.span, "unknown")
                    .help(help),
                );
            }
        }
    }
}

fn check_method(name: &str, span: Span, out: &mut Findings) {
    if Method::parse(name).is_some() {
        return;
    }
    let upper = name.to_ascii_uppercase();
    if let Some((m, why)) = vocab::UNSUPPORTED_METHODS.iter().find(|(m, _)| *m == upper) {
        out.push(
            Diagnostic::new(Code::UnsupportedMethod, format!("API blocks do not support {m}"))
                .label(span, "not supported")
                .help(format!("{m} is not used: {why}; use one of GET, POST, PUT, DELETE, PATCH")),
        );
        return;
    }
    let diag =
        Diagnostic::new(Code::UnknownMethod, format!("`{name}` is not an HTTP method")).label(span, "unknown method");
    let diag = if Method::parse(&upper).is_some() {
        diag.help(format!("methods are written in capitals: `method {upper}`")).fix(
            format!("write `{upper}`"),
            span,
            upper,
        )
    } else {
        let meant = did_you_mean(name, Method::ALL.iter().map(|m| m.as_str()));
        diag.meant(span, meant, "the methods are GET, POST, PUT, DELETE and PATCH")
    };
    out.push(diag);
}

/// Each object of a body, at any depth, has one value per key.
fn check_body_keys(block: &ApiBlock, out: &mut Findings) {
    struct Keys<'o>(&'o mut Findings);
    impl<'a> Visitor<'a> for Keys<'_> {
        fn value(&mut self, v: &'a Value, site: Site) {
            if let Value::Object(entries, _) = v {
                duplicate_keys(entries, self.0);
            }
            visit::walk_value(self, v, site);
        }
    }
    if let Some((body, _)) = block.body() {
        if let Some(entries) = body.entries() {
            duplicate_keys(entries, out);
        }
        visit::walk_block(&mut Keys(out), block);
    }
}

fn duplicate_keys(entries: &[Entry], out: &mut Findings) {
    let mut seen: HashMap<&str, Span> = HashMap::default();
    for entry in entries {
        if let Some(first) = seen.insert(entry.key.name.as_str(), entry.key.span) {
            out.push(
                Diagnostic::new(
                    Code::DuplicateKey,
                    format!("key `{}` is given twice in one body object", entry.key.name),
                )
                .label(entry.key.span, "given again here")
                .related(first, "first given here")
                .help("keep one: a JSON object has one value per key, and servers disagree on which one wins"),
            );
        }
    }
}

/// RFC 9110 `tchar`.
fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

fn is_token(s: &str) -> bool {
    !s.is_empty() && s.chars().all(is_tchar)
}
