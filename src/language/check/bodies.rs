//! Rules on a block's body kind and its settings for credentials, time and
//! failure: `body form|multipart|text|json`, `auth`, `timeout`, `retry`,
//! `failed` (B152–B156).

use super::scope::Scope;
use crate::base::diagnostics::{did_you_mean, Code, Diagnostic, Findings};
use crate::base::media;
use crate::language::ast::{
    ApiBlock, Auth, Body, Cache, Field, FieldKind, FileSource, PageSetting, Pages, Part, PartValue, Retry, Text, Value,
};
use crate::language::vocab::{self, Method};

/// A tree's `failed { … }` stands at its top, once.
pub fn check_tree_failed(tree: &crate::language::ast::Tree, out: &mut Findings) {
    use crate::language::ast::Node;
    let mut first = None;
    for n in &tree.body {
        if let Node::Failed(_, span) = n {
            match first {
                None => first = Some(*span),
                Some(f) => out.push(
                    Diagnostic::new(
                        Code::BadRetry,
                        format!("{} `{}` has two `failed`", tree.kind.as_str(), tree.name.name),
                    )
                    .label(*span, "a second one")
                    .related(f, "the first")
                    .help("keep one `failed { … }` a tree: it runs whichever step failed"),
                ),
            }
        }
    }
    crate::language::ast::visit::each_in_branch(&tree.body, &mut |n| {
        if let Node::Failed(_, span) = n {
            out.push(
                Diagnostic::new(Code::BadRetry, "`failed { … }` inside a branch, a loop or another `failed`")
                    .label(*span, "not at the top of the tree")
                    .help("a tree's `failed` stands at its top and runs whichever step failed; a block's own is `failed { … }` inside the block"),
            );
        }
    });
}

pub fn check_block(scope: &Scope<'_>, tree: &crate::language::ast::Tree, block: &ApiBlock, out: &mut Findings) {
    if let Some((body, span)) = block.body() {
        content_type(block, body, span, out);
        match body {
            Body::Form(entries) => {
                for e in entries {
                    if let Value::Object(_, s) | Value::Array(_, s) = &e.value {
                        out.push(
                            Diagnostic::new(Code::BadBody, format!("form field `{}` is an object or an array", e.key.name))
                                .label(*s, "a form field holds text")
                                .help("a form is `key=value` pairs: give the field text, a number or a boolean, or send nested data as JSON with `body { … }`"),
                        );
                    }
                }
            }
            Body::Multipart(parts) => parts.iter().for_each(|p| part(scope, tree, p, out)),
            Body::Json(_) | Body::Text { .. } => {}
        }
    }
    for field in &block.fields {
        match &field.kind {
            FieldKind::Auth(auth) => check_auth(block, field, auth, out),
            FieldKind::Timeout(t) => match vocab::parse_millis(&t.value) {
                Ok(ms) if ms > vocab::MAX_BLOCK_TIMEOUT_MS => {
                    out.push(bad_retry(t, "longer than 2 minutes", "a block may wait at most `timeout \"2m\"`"))
                }
                Ok(_) => {}
                Err(why) => {
                    out.push(bad_retry(t, &format!("not {why}"), "write `timeout \"5s\"` or `timeout \"500ms\"`"))
                }
            },
            FieldKind::Retry(r) => check_retry(block, field, r, out),
            FieldKind::Failed(f) => statuses(&f.on, false, out),
            FieldKind::Pages(p) => check_pages(scope, block, p, out),
            FieldKind::Cache(c) => check_cache(scope, block, field, c, out),
            _ => {}
        }
    }
}

/// `auth basic` with two values, `auth bearer` with one, and no
/// `Authorization` header beside it.
fn check_auth(block: &ApiBlock, field: &Field, auth: &Auth, out: &mut Findings) {
    let wants = match auth.scheme.name.as_str() {
        "basic" => Some(2),
        "bearer" => Some(1),
        _ => None,
    };
    match wants {
        None => {
            let meant = did_you_mean(&auth.scheme.name, ["basic", "bearer"]);
            out.push(
                Diagnostic::new(Code::BadAuth, format!("`auth {}` is not a scheme blkc knows", auth.scheme.name))
                    .label(auth.scheme.span, "unknown")
                    .meant(
                        auth.scheme.span,
                        meant,
                        "blkc knows `auth basic \"<USER>\" \"<PASSWORD>\"` and `auth bearer \"<TOKEN>\"`",
                    ),
            );
        }
        Some(n) if auth.values.len() != n => out.push(
            Diagnostic::new(
                Code::BadAuth,
                format!(
                    "`auth {}` takes {n} value{}, not {}",
                    auth.scheme.name,
                    if n == 1 { "" } else { "s" },
                    auth.values.len()
                ),
            )
            .label(field.span, "here")
            .help(if n == 2 {
                "write the user and the password: `auth basic \"<USER>\" \"<PASSWORD>\"`"
            } else {
                "write the token alone: `auth bearer \"<TOKEN>\"` (blkc writes `Bearer `)"
            }),
        ),
        Some(_) => {}
    }
    if let Some(h) = block.headers().iter().find(|h| h.key.name.eq_ignore_ascii_case("authorization")) {
        out.push(
            Diagnostic::new(Code::BadAuth, "`auth` beside an `Authorization` header")
                .label(h.key.span, "written by hand here")
                .related(field.keyword, "and by `auth` here")
                .help("keep one: `auth` writes the `Authorization` header itself"),
        );
    }
}

/// A count from 1 to 10, known statuses, a backoff of a minute at most; a
/// POST or PATCH retried only with `allow retry`.
fn check_retry(block: &ApiBlock, field: &Field, r: &Retry, out: &mut Findings) {
    match r.times.value.parse::<u64>() {
        Ok(n) if (1..=vocab::MAX_RETRIES).contains(&n) => {}
        _ => out.push(bad_retry(&r.times, "not from 1 to 10", "write how many times to send it again: `retry 3`")),
    }
    statuses(&r.on, true, out);
    if let Some(b) = &r.backoff {
        match vocab::parse_millis(&b.value) {
            Ok(ms) if ms > vocab::MAX_BACKOFF_MS => {
                out.push(bad_retry(b, "longer than a minute", "a first wait is at most `backoff \"1m\"`"))
            }
            Ok(_) => {}
            Err(why) => out.push(bad_retry(b, &format!("not {why}"), "write `backoff \"500ms\"` or `backoff \"2s\"`")),
        }
    }
    let method = block.method().and_then(|m| Method::parse(&m.name));
    if method.is_some_and(|m| !m.idempotent()) && !block.allows("retry") {
        let m = method.map_or("POST", |m| m.as_str());
        out.push(
            Diagnostic::new(Code::RetryNotRepeatable, format!("block `{}` is a {m} and is not retried", block.name.name))
                .label(field.keyword, "ignored")
                .help(format!("a {m} sent again may be carried out twice; add `allow retry` if the server makes it safe to repeat, or remove `retry`")),
        );
    }
}

fn bad_retry(t: &Text, label: &str, help: &str) -> Diagnostic {
    Diagnostic::new(Code::BadRetry, format!("`{}` is not understood here", t.value))
        .label(t.span, label.to_string())
        .help(help.to_string())
}

/// Each status a status (`503`) or a class (`5xx`); never a success in `failed on`.
fn statuses(on: &[Text], retry: bool, out: &mut Findings) {
    for s in on {
        match vocab::parse_status(&s.value) {
            None => out.push(bad_retry(
                s,
                "not a status from 100 to 599 or a class like `5xx`",
                "write `on 429, 503` or `on 5xx`",
            )),
            Some((lo, hi)) if (200..300).contains(&lo) || (200..300).contains(&hi) => out.push(bad_retry(
                s,
                "a success",
                if retry {
                    "a success is never retried: name the failures, like `on 429, 5xx`"
                } else {
                    "a success is not a failure: name the failures, like `on 404, 5xx`"
                },
            )),
            Some(_) => {}
        }
    }
}

/// The `Content-Type` written by hand agrees with the body's kind (the rule
/// is `base::media::agrees`, which the runner applies to the value filled in).
fn content_type(block: &ApiBlock, body: &Body, body_span: crate::base::source::Span, out: &mut Findings) {
    let Some(header) = block.headers().iter().find(|h| h.key.name.eq_ignore_ascii_case("content-type")) else { return };
    // Only a value written whole is judged here; one with a variable is judged when filled.
    let [Part::Lit(value, _)] = header.value.parts.as_slice() else { return };
    let own = match body {
        Body::Json(_) => "application/json",
        Body::Form(_) => "application/x-www-form-urlencoded",
        Body::Multipart(_) => "multipart/form-data",
        Body::Text { media_type, .. } => media_type.as_ref().map_or("text/plain", |t| t.value.as_str()),
    };
    if media::agrees(own, value) {
        return;
    }
    let help = match (body, media::kind_of(value)) {
        (Body::Multipart(_), _) => {
            "remove the header: blkc writes `multipart/form-data` with the boundary the parts are separated by"
                .to_string()
        }
        (Body::Json(Value::Object(..)), Some("form")) => {
            "a form is `body form { … }`: write `form` after `body`, and remove the header (blkc sets it)".to_string()
        }
        (Body::Text { .. }, _) => format!("give the type with the body, `type \"{value}\"`, and remove the header"),
        (_, Some(kind)) => format!(
            "send the kind the header names (`body {kind} …`), or remove the header: blkc sets it from the body"
        ),
        (_, None) => "remove the header: blkc sets it from the body".to_string(),
    };
    out.push(
        Diagnostic::new(
            Code::BodyTypeMismatch,
            format!("block `{}` says its body is `{value}` but sends {}", block.name.name, describe(body)),
        )
        .label(header.value.span, "the header says this")
        .related(body_span, "the body is this")
        .help(help),
    );
}

fn describe(body: &Body) -> &'static str {
    match body {
        Body::Json(_) => "JSON",
        Body::Form(_) => "a form (`application/x-www-form-urlencoded`)",
        Body::Multipart(_) => "multipart parts",
        Body::Text { .. } => "text of another type",
    }
}

/// A multipart part's file exists beside the bot; its settings are known.
fn part(scope: &Scope<'_>, tree: &crate::language::ast::Tree, p: &crate::language::ast::PartDecl, out: &mut Findings) {
    let PartValue::File(file) = &p.value else { return };
    let mut seen: Vec<&str> = Vec::new();
    for (word, _) in &file.settings {
        let w = word.name.as_str();
        // The grammar reads only `type` and `filename`: each once.
        if seen.contains(&w) {
            out.push(
                Diagnostic::new(Code::BadBody, format!("`{w}` is given twice in file part `{}`", p.key.name))
                    .label(word.span, "given again here")
                    .help("a file part takes `type \"…\"` and `filename \"…\"`, once each; keep one"),
            );
        }
        seen.push(w);
    }
    file_source(scope, tree, &file.source, &format!("of part `{}`", p.key.name), out);
}

/// Where a file's bytes come from, as a multipart part or a message names
/// it (`what`: "of part `doc`"): a regular file beside the bot, an
/// attachment option of the tree, or a block's response (whether that
/// block has run is the flow's to say: `references`).
pub fn file_source(
    scope: &Scope<'_>,
    tree: &crate::language::ast::Tree,
    source: &FileSource,
    what: &str,
    out: &mut Findings,
) {
    match source {
        FileSource::Path(path) => {
            if let Some(Err(why)) = scope.samples.file(&path.value) {
                out.push(
                    Diagnostic::new(Code::BadBody, format!("the file `{}` {what} {why}", path.value))
                        .label(path.span, "cannot be sent")
                        .help(format!(
                            "name a regular file beside the .blk (at most {} MiB), by its path from the .blk's folder",
                            crate::language::model::MAX_UPLOAD_SIZE >> 20
                        )),
                );
            }
        }
        FileSource::Name(name) => {
            let attachment = name.name.strip_prefix("option_").map(|o| {
                tree.options().any(|opt| {
                    opt.name.name == o && opt.option_type() == crate::discord::options::OptionType::Attachment
                })
            });
            let (message, help) = match attachment {
                Some(true) => return,
                Some(false) => (
                    format!("`file {}` names no attachment option of this {}", name.name, tree.kind.as_str()),
                    "a file is one a user gave as an option of type `attachment`: `option doc \"A file\" attachment`, then `file option_doc`",
                ),
                // (A form's upload is the flow's to find: `references`.)
                None if name.name.starts_with("api_") || name.name.starts_with("field_") => return,
                None => (
                    format!("`file {}` names no block's response and no option", name.name),
                    "a file comes from beside the .blk (`file \"chart.png\"`), a block's response (`file api_chart`), a user's file (`file option_doc`, or a form's upload `file field_work`) or text (`file text \"…\"`)",
                ),
            };
            out.push(Diagnostic::new(Code::BadBody, message).label(name.span, "nothing to send").help(help));
        }
        FileSource::Text(_) => {}
    }
}

/// `items` once, one way to the next page, paths into the response, bounds
/// within the run's; the items a list in the sample.
fn check_pages(scope: &Scope<'_>, block: &ApiBlock, pages: &Pages, out: &mut Findings) {
    let bad = |span, message: String, help: &str| {
        Diagnostic::new(Code::BadPages, message).label(span, "here").help(help.to_string())
    };
    let mut seen: Vec<&str> = Vec::new();
    for s in &pages.settings {
        let word = s.word();
        if seen.contains(&word) {
            out.push(bad(
                s.span(),
                format!("`{word}` is given twice in `pages`"),
                "keep one: a block follows its pages one way",
            ));
        }
        seen.push(word);
        match s {
            PageSetting::Items(_, k) => path_of(k, false, out),
            PageSetting::Cursor(_, k, _) | PageSetting::Next(_, k) => path_of(k, true, out),
            PageSetting::Max(_, n) => match n.value.parse::<usize>() {
                Ok(m) if (1..=vocab::MAX_REQUESTS).contains(&m) => {}
                _ => out.push(bad(
                    n.span,
                    format!("`max {}` pages is not from 1 to {}", n.value, vocab::MAX_REQUESTS),
                    "a run sends a bounded number of requests, each page one of them",
                )),
            },
            PageSetting::Limit(_, n) => {
                if n.value.parse::<u32>().map_or(true, |l| l == 0) {
                    out.push(bad(
                        n.span,
                        format!("`limit {}` is not a number of items", n.value),
                        "write how many items to keep at most, like `limit 100`",
                    ));
                }
            }
            PageSetting::NextLink(_) => {}
        }
    }
    if !seen.contains(&"items") {
        out.push(bad(
            pages.span,
            "`pages` has no `items`".to_string(),
            "say where each page holds its list: `items response.data`",
        ));
    }
    if !seen.contains(&"cursor") && !seen.contains(&"next") {
        out.push(bad(
            pages.span,
            "`pages` has no way to the next page".to_string(),
            "write `cursor response.meta.next param cursor`, `next response.links.next` or `next link`",
        ));
    }
    if seen.contains(&"cursor") && seen.contains(&"next") {
        out.push(bad(
            pages.span,
            "`pages` has both a `cursor` and a `next`".to_string(),
            "keep the one the API gives: a cursor for a parameter, or the next page's URL",
        ));
    }
    let (Some(key), Some(loaded)) = (pages.items(), super::samples::sample_of(scope.samples, block)) else { return };
    if let Ok(sample) = loaded.as_ref() {
        if key.name.starts_with("response") && super::samples::items_of(block, sample).is_none() {
            out.push(
                bad(
                    key.span,
                    format!("`{}` is not a list in the sample", key.name),
                    "name the list each page holds, as the sample shows it",
                )
                .note(format!("checked against the sample `{}`", block.sample().map_or("", |s| s.value.as_str()))),
            );
        }
    }
}

/// A path of `pages`: `response…`, or (for a cursor or next URL)
/// `headers.NAME`; each segment a key or an index.
fn path_of(key: &crate::language::ast::Key, header_ok: bool, out: &mut Findings) {
    let mut segments = crate::base::path::segments(&key.name);
    let root = segments.next().map(|(_, r)| r).unwrap_or_default();
    let rest: Vec<&str> = segments.map(|(_, s)| s).collect();
    let ok = match crate::base::path::root(root) {
        Some(crate::base::path::Root::Response) => rest.iter().all(|s| crate::base::path::check_segment(s).is_ok()),
        Some(crate::base::path::Root::Headers) => header_ok && rest.len() == 1,
        _ => false,
    };
    if !ok {
        let help = if header_ok {
            "write a path into the response, like `response.meta.next`, or a header, like `headers.x-next-cursor`"
        } else {
            "write a path into the response, like `response.data` (or `response` when the page is the list)"
        };
        out.push(
            Diagnostic::new(Code::BadPages, format!("`{}` is not a path into the response", key.name))
                .label(key.span, "here")
                .help(help),
        );
    }
}

/// `cache "…"` a duration on a GET; `cache response.…` a number of seconds
/// in the answer (a token's `expires_in`); never beside `pages`.
fn check_cache(scope: &Scope<'_>, block: &ApiBlock, field: &Field, cache: &Cache, out: &mut Findings) {
    let bad = |span, message: String, help: &str| {
        Diagnostic::new(Code::BadCache, message).label(span, "here").help(help.to_string())
    };
    let method = block.method().and_then(|m| Method::parse(&m.name));
    match cache {
        Cache::For(t) => {
            if let Err(why) = vocab::parse_millis(&t.value) {
                out.push(bad(
                    t.span,
                    format!("`{}` is not {why}", t.value),
                    "write how long to keep the answer: `cache \"10m\"`",
                ));
            }
            if method.is_some_and(|m| m != Method::GET) {
                out.push(bad(field.keyword, format!("block `{}` is not a GET: its answer is not kept for a fixed time", block.name.name), "a GET's answer is kept for a time; a token's (a POST) for as long as it says: `cache response.expires_in`"));
            }
        }
        Cache::From(k) => {
            let mut segments = crate::base::path::segments(&k.name);
            let root_ok = segments.next().map(|(_, r)| r) == Some("response");
            let rest: Vec<&str> = segments.map(|(_, s)| s).collect();
            if !root_ok || rest.is_empty() || rest.iter().any(|s| crate::base::path::check_segment(s).is_err()) {
                out.push(bad(
                    k.span,
                    format!("`{}` is not a path into the response", k.name),
                    "name the answer's number of seconds to keep it: `cache response.expires_in`",
                ));
            } else if let Some(loaded) = super::samples::sample_of(scope.samples, block) {
                if let Ok(sample) = loaded.as_ref() {
                    let here = crate::base::path::walk(sample, &rest);
                    if !matches!(here, Ok(crate::base::data::Data::Number(_))) {
                        out.push(
                            bad(
                                k.span,
                                format!("`{}` is not a number of seconds in the sample", k.name),
                                "name the answer's number of seconds to keep it, like `response.expires_in`",
                            )
                            .note(format!(
                                "checked against the sample `{}`",
                                block.sample().map_or("", |s| s.value.as_str())
                            )),
                        );
                    }
                }
            }
        }
    }
    if block.pages().is_some() {
        out.push(bad(
            field.keyword,
            format!("block `{}` follows pages and is not kept", block.name.name),
            "keep one page's answer, or none: a block with `pages` is read afresh",
        ));
    }
}

/// The file's `failed { … }`: it may run after any tree's step, so it reads
/// only what every run has, the failure's variables and the custom
/// variables, and sends no request (B115, B155).
pub fn check_file_failed(scope: &Scope<'_>, file: &crate::language::ast::File, out: &mut Findings) {
    use crate::language::ast::visit::{self, Site, Visitor};
    use crate::language::ast::{Ident, Item, Reference};
    struct Walk<'s, 'a> {
        scope: &'s Scope<'a>,
        out: &'s mut Findings,
    }
    impl<'a> Visitor<'a> for Walk<'_, 'a> {
        fn block(&mut self, b: &'a ApiBlock) {
            self.out.push(
                Diagnostic::new(Code::BadRetry, format!("block `{}` in the file's `failed`", b.name.name))
                    .label(b.name.span, "sends a request")
                    .help("the file's `failed` runs after any tree's step failed and sends nothing; give the tree a `failed { … }` of its own to send a request there"),
            );
        }
        fn named(&mut self, name: &'a Ident, _site: Site) {
            let n = name.name.as_str();
            if vocab::FAILURE_VARIABLES.iter().any(|(v, _)| *v == n) || self.scope.first_values.has(n) {
                return;
            }
            self.out.push(
                Diagnostic::new(Code::UnknownVariable, format!("unknown variable `{{{n}}}` in the file's `failed`"))
                    .label(name.span, "not known in every run")
                    .help("the file's `failed` runs for any command, event or handler: it reads the failure's variables (`{failure_kind}`, `{failure_message}`, …) and custom variables; a tree's own `failed { … }` reads its options and trigger variables"),
            );
        }
        fn reference(&mut self, r: &'a Reference, _site: Site, _in_text: bool) {
            self.out.push(
                Diagnostic::new(Code::UnknownVariable, format!("`api_{}[…]` in the file's `failed`", r.block.name))
                    .label(r.span, "no response here")
                    .help("the file's `failed` runs after a step of any tree failed: no block's response is known to exist there"),
            );
        }
    }
    let mut first = None;
    for item in &file.items {
        if let Item::Failed(b, span) = item {
            if let Some(first) = first.replace(*span) {
                out.push(
                    Diagnostic::new(Code::DuplicateDeclaration, "the file's `failed` is declared twice")
                        .label(*span, "declared again here")
                        .related(first, "first declared here")
                        .help("keep one `failed { … }` at the top of the file; a tree can have its own"),
                );
            }
            visit::walk_nodes(&mut Walk { scope, out }, &b.body);
        }
    }
}
