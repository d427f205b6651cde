//! The text of every runtime failure and warning: what went wrong, where,
//! and what to do. Pure: the runner decides when to say them.

use super::http;
use super::render::Miss;
use super::request::Refusal;
use crate::base::diagnostics::{Code, Diagnostic};
use crate::base::source::Span;
use crate::language::plan::{Path, Request};

pub fn refused(r: &Request, refusal: &Refusal) -> Diagnostic {
    let block = &r.block;
    let url_help = "the URL's variables must make an absolute http(s) address";
    let (code, message, help) = match refusal {
        Refusal::NotHttp { url } => {
            (Code::InvalidRequest, format!("block `{block}`: `{url}` is not an http(s) URL"), url_help.to_string())
        }
        Refusal::NotAUrl { url, why } => {
            (Code::InvalidRequest, format!("block `{block}`: `{url}` is not a valid URL ({why})"), url_help.to_string())
        }
        Refusal::HeaderControl { name } => (
            Code::InvalidRequest,
            format!("block `{block}`: header `{name}` holds a control character once its variables are filled"),
            "a value with a line break would end the header; check the variables it reads".to_string(),
        ),
        Refusal::Steered { value, part } => (
            Code::RequestSteered,
            format!("block `{block}`: the value `{value}` would change the {part} the request goes to"),
            "values in the scheme or host may only be a scheme or a host name (letters, digits, `-`, `.`), and a URL \
             carries no user name or password; write the host in the file, or check the variable; nothing was sent"
                .to_string(),
        ),
        Refusal::DotSegment { segment } => (
            Code::PathTraversal,
            format!("block `{block}`: a value makes the path segment `{segment}`, which would move the request"),
            "a value in the path may not be `.` or `..` (in any spelling): the URL parser resolves them and the \
             request would go to another path; nothing was sent"
                .to_string(),
        ),
        Refusal::Structured { place } => (
            Code::InvalidRequest,
            format!("block `{block}`: an object or array would be written into the {place}"),
            "address one value inside it, like `api_x[response.items.0.id]`; JSON text in a URL or header is never \
             what a server expects; nothing was sent"
                .to_string(),
        ),
        Refusal::TooLong { len } => (
            Code::UrlTooLongFilled,
            format!(
                "block `{block}`: the GET URL is {len} characters once filled, more than {}",
                crate::language::vocab::MAX_GET_URL
            ),
            "servers and proxies refuse longer URLs; send the data in a body with POST, or shorten the values; \
             nothing was sent"
                .to_string(),
        ),
        Refusal::HeaderTooLong { name, len } => (
            Code::InvalidRequest,
            format!(
                "block `{block}`: header `{name}` is {len} bytes once its variables are filled, more than {}",
                crate::language::vocab::MAX_HEADER_VALUE
            ),
            "servers refuse longer header lines (most at 8 KiB); send the data in a body, or check the variables              the header reads; nothing was sent"
                .to_string(),
        ),
        Refusal::ContentType { header, body } => (
            Code::InvalidRequest,
            format!("block `{block}`: its `Content-Type` is `{header}` once filled, but the body is `{body}`"),
            "the header and the body's kind must agree: leave the header out (blkc sets it from the body), or \
             choose the body kind it names (`body form`, `body text … type`); nothing was sent"
                .to_string(),
        ),
        Refusal::Part { name, why } => (
            Code::InvalidRequest,
            format!("block `{block}`: the multipart part `{name}` cannot be sent: {why}"),
            "a file part reads a file beside the .blk or the response of a block that ran before; nothing was sent"
                .to_string(),
        ),
        Refusal::Token(t) => (
            Code::TokenRefused,
            format!("block `{block}` would send the bot token {}", t.describe()),
            format!("{}; nothing was sent", t.help()),
        ),
    };
    Diagnostic::new(code, message).label(r.url.span, "once its variables are filled").help(help)
}

pub fn redirect_not_followed(r: &Request, location: &str, why: http::NotFollowed) -> Diagnostic {
    let (label, help) = match why {
        http::NotFollowed::CarriesToken => (
            "a request that carries the bot token",
            "a request that carries `{bot_token}` follows no redirect; its response is the redirect itself",
        ),
        http::NotFollowed::SecretBody => (
            "its body holds a secret",
            "a 307 or 308 redirect to another origin would send the body there, secrets included; its response is \
             the redirect itself: point the URL at the final address",
        ),
    };
    Diagnostic::new(
        Code::RedirectNotFollowed,
        format!("block `{}` was redirected to `{location}`; the redirect was not followed", r.block),
    )
    .label(r.url.span, label)
    .help(help)
}

/// A scoped variable read or saved by a run without its scope's id.
pub fn scope_without_id(name: &str, scope: crate::language::vocab::VarScope, needed: &str, span: Span) -> Diagnostic {
    Diagnostic::new(
        Code::ScopeIdMissing,
        format!("`{name}` is kept per {}, and this run has no `{needed}` that is an ID", scope.as_str()),
    )
    .label(span, "read or saved here")
    .help(format!("from a shell, give it as a number: `--var {needed}=…`; a run the platform triggers always has it"))
}

/// B325: `with user WHOSE { … }` where `whose` holds no id.
pub fn with_no_id(whose: &str, scope: crate::language::vocab::VarScope, value: &str, span: Span) -> Diagnostic {
    let shown: String = value.chars().take(40).collect();
    let what = match scope {
        crate::language::vocab::VarScope::User => "a user id or a mention like `<@123…>`",
        crate::language::vocab::VarScope::Channel => "a channel id or a mention like `<#123…>`",
        _ => "a server id",
    };
    Diagnostic::new(Code::ScopeIdMissing, format!("`{whose}` is \"{shown}\", not {what}"))
        .label(span, "whose values these are")
        .help(format!("name the {} with a variable that holds one: an option of type {}, a trigger variable like `target_user_id`, or an element of a saved list of ids", scope.as_str(), scope.as_str()))
}

/// The platform's rate limit leaves no turn for the request in its time.
pub fn rate_limited(r: &Request, why: &str) -> Diagnostic {
    Diagnostic::new(Code::Timeout, format!("block `{}` was not sent: {why}", r.block))
        .label(r.span, "this block")
        .help("the platform limits how fast a bot may call it; the run waited as long as its time-out allows")
}

/// The `failure_kind` a failed request gives a block's `failed` branch.
pub fn failure_kind_of(f: &http::Failure) -> &'static str {
    match f {
        http::Failure::Timeout(_) => "timeout",
        http::Failure::TooLarge(_) => "too_large",
        http::Failure::Internal { .. } => "refused",
        http::Failure::Connect(_)
        | http::Failure::Dns(_)
        | http::Failure::Tls(_)
        | http::Failure::TooManyRedirects(_)
        | http::Failure::BadRedirect(_)
        | http::Failure::Broken(_)
        | http::Failure::Other(_) => "connection",
    }
}

/// A failure in a few words, for a retry's warning.
pub fn short_failure(f: &http::Failure) -> String {
    match f {
        http::Failure::Timeout(_) => "it did not answer in time".to_string(),
        http::Failure::Connect(why) | http::Failure::Dns(why) => format!("it could not connect ({why})"),
        http::Failure::Broken(why) => format!("its answer broke off ({why})"),
        other => format!("{other:?}"),
    }
}

/// B328: a page's `items` is not a list.
pub fn pages_not_a_list(r: &Request, why: &str) -> Diagnostic {
    Diagnostic::new(Code::NotAList, format!("block `{}`: {why}", r.block)).label(r.span, "its pages").help(
        "`items` names the list each page holds, like `items response.data`; check it against a page with `blkc test`",
    )
}

/// B331: a block's pages that were not read: more than its `max`, or a
/// next page that was a page read before (the server goes round).
pub fn pages_left(r: &Request, read: u32, round: bool) -> Diagnostic {
    let (message, help) = if round {
        (
            format!("block `{}`: page {} points back to a page already read; its pages stop there", r.block, read),
            "the server gave the same next page twice; the items read so far are kept".to_string(),
        )
    } else {
        (
            format!("block `{}` has more pages than its `max {read}`; the rest are not read", r.block),
            format!("raise `max` (at most {}) or ask the API for larger pages", crate::language::vocab::MAX_REQUESTS),
        )
    };
    Diagnostic::new(Code::PagesLeft, message).label(r.span, "its pages").help(help)
}

/// B330: a block's answer was refused with 401, so the token it sends, kept
/// by block `token`, is fetched again and the request sent again, once.
pub fn kept_refused(r: &Request, token: &str) -> Diagnostic {
    Diagnostic::new(
        Code::RequestRetried,
        format!("block `{}` was refused (401): the kept answer of block `{token}` is fetched again, and the request sent again once", r.block),
    )
    .label(r.url.span, "sent again")
    .help("a kept token can stop being taken before it expires (revoked, or the server restarted); blkc fetches it again once a run")
}

/// B330: a block's request is sent again (`retry`).
pub fn retrying(r: &Request, why: &str, wait: std::time::Duration, attempt: u32, of: u32) -> Diagnostic {
    Diagnostic::new(
        Code::RequestRetried,
        format!(
            "block `{}`: {why}; sending it again in {:.1} s (attempt {attempt} of {of})",
            r.block,
            wait.as_secs_f64()
        ),
    )
    .label(r.url.span, "sent again")
    .help("the block's `retry` sends it again after a time-out, a failed connection or a status it lists")
}

pub fn http_failure(r: &Request, f: http::Failure, limits: &http::Limits) -> Diagnostic {
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
        http::Failure::Internal { host, address } => (
            Code::InternalAddress,
            format!("block `{block}`: `{host}` is the internal address {address}; nothing was sent"),
            "a host that comes from a value or a redirect may not reach this machine or a private network; if this \
             block should, add `allow private_network` to it, or run with `--allow-private-network`"
                .to_string(),
        ),
        http::Failure::Broken(why) => (
            Code::ResponseBroken,
            format!("the response of block `{block}` broke off: {why}"),
            "the server closed the connection before the whole response arrived; try again, or check the server"
                .to_string(),
        ),
        http::Failure::Other(why) => (
            Code::ConnectFailed,
            format!("block `{block}`: the request failed: {why}"),
            "check the URL and the server".to_string(),
        ),
    };
    Diagnostic::new(code, message).label(r.url.span, format!("the URL of block `{block}`")).help(help)
}

/// The warning for a path that did not resolve, pointing at the bad segment.
pub fn path_warning(path: &Path, miss: &Miss) -> Diagnostic {
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
        Miss::NoHeader(name) if path.block == crate::language::ast::Webhook::BLOCK => (
            format!("the request that triggered the webhook has no header `{name}`"),
            path.keys.first().map_or(path.span, |k| k.span),
            "no such header",
            format!("header names are read in any case; the sender did not send this one (by hand: `blkc run … --header {name}=VALUE`)"),
        ),
        Miss::NoHeader(name) => (
            format!("the response of block `{}` has no header `{name}`", path.block),
            path.keys.first().map_or(path.span, |k| k.span),
            "no such header",
            "header names are read in any case; the server did not send this one (try `blkc test` to see the \
             headers it sends)"
                .to_string(),
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

pub fn store_failure(e: &crate::run::store::StoreError, span: Span, doing: String) -> Diagnostic {
    Diagnostic::new(Code::StoreFailed, e.to_string())
        .label(span, doing)
        .help("a busy store frees when the other run ends, and a full disk once space is freed; saves before this one are kept; a file that is not a blkc store is never changed or recreated (`--store PATH` names another)")
}

/// A save refused because a variable the run read has changed since.
pub fn changed_by_another_run(saving: &str, changed: &str, span: Span) -> Diagnostic {
    Diagnostic::new(
        Code::ChangedByAnotherRun,
        format!("`{changed}` was changed by another run after this run read it: `{saving}` was not saved"),
    )
    .label(span, "not saved")
    .help(format!(
        "this run decided on a value of `{changed}` that is no longer current, so its save would overwrite another run's; run it again to decide on the current value"
    ))
}

pub fn lossy_json(r: &Request) -> Diagnostic {
    Diagnostic::new(
        Code::LossyJson,
        format!("the response of block `{}` is JSON with bytes that are not UTF-8", r.block),
    )
    .label(r.url.span, "its response")
    .help("each bad byte reads as `\u{fffd}`; the rest of the response is read as sent")
}

/// An error status that no step of the tree looks at.
pub fn status_not_read(r: &Request, status: u16, retry_after: Option<&str>) -> Diagnostic {
    let mut help = format!(
        "later steps read this response as if it had succeeded; test `api_{}[status]` in an `if` to handle it",
        r.block
    );
    if let Some(retry) = retry_after {
        help.push_str(&format!("; the server asks to wait (Retry-After: {retry})"));
    }
    let what = match status {
        429 => "too many requests",
        400..=499 => "a client error",
        _ => "a server error",
    };
    Diagnostic::new(Code::StatusNotRead, format!("block `{}` got status {status} ({what})", r.block))
        .label(r.url.span, format!("answered {status}"))
        .help(help)
}

/// B306: a secret too short to be redacted reliably.
pub fn secret_too_short(name: &str, span: Span) -> Diagnostic {
    Diagnostic::new(
        Code::MissingSecret,
        format!("secret `<{name}>` is shorter than {} characters", super::redact::MIN_SECRET_LEN),
    )
    .label(span, "its value is too short to keep out of output")
    .help("a secret this short would match ordinary text and could not be redacted reliably; use the real key")
}

/// B306: secrets without a value (the first, and the others in a note).
pub fn missing_secret(name: &str, span: Span, others: &[&str]) -> Diagnostic {
    let diag = Diagnostic::new(Code::MissingSecret, format!("secret `<{name}>` has no value"))
        .label(span, "needs a value before anything is sent")
        .help(format!(
            "export BLKC_SECRET_{name}=…, or put `{name}=…` in a file given with `--secrets FILE`; nothing was sent"
        ));
    if others.is_empty() {
        return diag;
    }
    let others: Vec<String> = others.iter().map(|n| format!("`<{n}>`")).collect();
    diag.note(format!("also without a value: {}", others.join(", ")))
}

/// B306: the bot token without a value.
pub fn missing_token(span: Span) -> Diagnostic {
    Diagnostic::new(Code::MissingSecret, "the bot token has no value")
        .label(span, "sends `{bot_token}`")
        .help("export BLKC_BOT_TOKEN=…, or give a file holding it with `--bot-token-file FILE`; nothing was sent")
}

/// B313: a variable without a value in this run.
pub fn missing_variable(name: &str, span: Span) -> Diagnostic {
    Diagnostic::new(Code::MissingVariable, format!("`{{{name}}}` has no value in this run"))
        .label(span, "no value")
        .help(format!("pass it with `--var {name}=…` or in a `--vars FILE.json`"))
}

/// B312: `--offline` and a block without a sample.
pub fn no_sample(r: &Request) -> Diagnostic {
    Diagnostic::new(Code::NoSample, format!("block `{}` has no sample to answer from", r.block))
        .label(r.span, "no `sample` field")
        .help(format!("record one with `blkc test FILE {} --save`, or run without `--offline`", r.block))
}

/// B312: `--offline` and a sample that cannot be read (`why`, from the model).
pub fn sample_unreadable(r: &Request, sample: &str, why: &str) -> Diagnostic {
    let help = if why.starts_with("is not valid JSON") {
        "a sample holds the JSON body of a response"
    } else {
        "the sample path is relative to the .blk file"
    };
    Diagnostic::new(Code::NoSample, format!("sample `{sample}` of block `{}` {why}", r.block))
        .label(r.span, "its sample")
        .help(help)
}

/// B313: a declared custom variable with no default that was never saved:
/// read as empty.
pub fn unset_variable(name: &str, span: Span) -> Diagnostic {
    Diagnostic::new(
        Code::MissingVariable,
        format!("`{{{name}}}` has never been saved and has no default: read as empty"),
    )
    .label(span, "empty in this run")
    .help(format!("give it a default where it is declared, like `var {name} = 0`, or `save` it before it is read"))
}

/// A response that does not fit in the run's memory budget (or the budget
/// every run of a server shares).
pub fn over_budget(r: &Request, exceeded: super::budget::Exceeded) -> Diagnostic {
    let block = &r.block;
    let (message, help) = if exceeded.shared {
        (
            format!(
                "the response of block `{block}` does not fit in the memory every run shares ({} bytes)",
                exceeded.limit
            ),
            "other runs hold the rest; raise the shared budget with `--max-memory BYTES`, or ask the API for less"
                .to_string(),
        )
    } else {
        (
            format!(
                "with the response of block `{block}`, this run's responses would hold more than {} bytes in memory",
                exceeded.limit
            ),
            "raise the budget with `--max-run-memory BYTES` if these responses are expected, or ask the API for less (paging, filters)".to_string(),
        )
    };
    Diagnostic::new(Code::MemoryBudget, message).label(r.span, "this response does not fit").help(help)
}

/// B328: a loop's source holds something other than a list.
pub fn not_a_list(l: &crate::language::plan::LoopStep, found: &serde_json::Value) -> Diagnostic {
    let what = kind_of(found);
    Diagnostic::new(
        Code::NotAList,
        format!("`{}` is {what}, not a list: loop `{}` cannot run over it", l.source.text, l.item),
    )
    .label(l.source.span, format!("{what} in this run"))
    .help("loop over the list inside it (`for x in api_b[response.items]`), or check its shape with a sample")
}

/// What a JSON value is, in words.
fn kind_of(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Object(_) => "an object",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Null => "null",
        serde_json::Value::Array(_) => "a list",
    }
}

/// B328: a list operation on a variable that holds something else.
pub fn list_op_on(name: &str, op: crate::language::ast::SaveOp, found: &serde_json::Value, span: Span) -> Diagnostic {
    let what = kind_of(found);
    Diagnostic::new(Code::NotAList, format!("`{name}` holds {what}, not a list: `{}` needs a list", op.as_str()))
        .label(span, "nothing was saved")
        .help(format!("start the list with `save {name} = []`, or declare it `var {name} = []`"))
}

/// B328: `save NAME[path]` where the path cannot be made (`why`).
pub fn field_save(written: &str, why: &str, span: Span) -> Diagnostic {
    Diagnostic::new(Code::NotAList, format!("`{written}` cannot be saved: {why}"))
        .label(span, "nothing was saved")
        .help("a field is made where it is missing, but an element of a list must exist, and text or a number has no fields; save the whole value first (`save NAME = { … }`)")
}

/// B328: `remove at` with an index that is not a whole number.
pub fn list_index(name: &str, value: &serde_json::Value, span: Span) -> Diagnostic {
    Diagnostic::new(Code::NotAList, format!("`remove at` needs a whole number, and was given {}", kind_of(value)))
        .label(span, "not an index")
        .help(format!("an index counts from 0 (`save {name} remove at 0`); -1 is the last element"))
}

/// B307 (a warning): `remove at` an index the list does not have.
pub fn list_index_missing(name: &str, index: i64, len: usize, span: Span) -> Diagnostic {
    Diagnostic::new(Code::UnresolvedPath, format!("`{name}` has no element at {index}: it holds {len}"))
        .label(span, "nothing was removed")
        .help("an index counts from 0; -1 is the last element")
}

/// B327: an append that would take a list past its bound.
pub fn list_too_long(name: &str, span: Span) -> Diagnostic {
    let max = crate::base::display::count(crate::language::vocab::MAX_LIST);
    Diagnostic::new(Code::RunBound, format!("`{name}` holds {max} elements, the most a list variable holds"))
        .label(span, "nothing was appended")
        .help(format!("remove elements first (`save {name} remove at 0`), or keep fewer"))
}

/// B327: a save that would make a variable's value larger than a variable
/// holds.
pub fn value_too_large(name: &str, bytes: usize, span: Span) -> Diagnostic {
    let max = crate::base::display::count(crate::language::vocab::MAX_VALUE_BYTES);
    Diagnostic::new(
        Code::RunBound,
        format!("`{name}` would be {} bytes saved; a variable holds at most {max}", crate::base::display::count(bytes)),
    )
    .label(span, "nothing was saved")
    .help(format!(
        "keep less in `{name}`: remove elements first, or save shorter values (a form's input takes a `max`)"
    ))
}

/// B321: a variable read from the store that does not fit in the memory
/// the run (or every run) may hold.
pub fn read_over_budget(name: &str, exceeded: super::budget::Exceeded, span: Span) -> Diagnostic {
    let whose = if exceeded.shared { "every run shares" } else { "this run may hold" };
    Diagnostic::new(
        Code::MemoryBudget,
        format!("the value of `{name}` does not fit in the memory {whose} ({} bytes)", exceeded.limit),
    )
    .label(span, "read here")
    .help("raise `--max-memory` (or `--max-run-memory`), or keep less in the variable")
}

/// B328: a loop's `limit` read from a value that is not a whole number.
pub fn loop_limit(l: &crate::language::plan::LoopStep, value: &serde_json::Value) -> Result<usize, Box<Diagnostic>> {
    let text = match value {
        serde_json::Value::String(s) => s.trim().to_string(),
        other => other.to_string(),
    };
    match text.parse::<u64>() {
        Ok(n) => Ok(usize::try_from(n).unwrap_or(usize::MAX)),
        Err(_) => Err(Box::new(
            Diagnostic::new(
                Code::NotAList,
                format!(
                    "the limit of loop `{}` is `{}`, not a whole number",
                    l.item,
                    crate::base::display::one_line(&text)
                ),
            )
            .label(l.span, "this loop")
            .help("a limit is a whole number from 0; check the value it is read from"),
        )),
    }
}

/// B327: a loop that would take the run past its bound of loop runs.
pub fn too_many_runs(l: &crate::language::plan::LoopStep, runs: usize, done: usize) -> Diagnostic {
    use crate::base::display::count;
    let max = count(crate::language::vocab::MAX_LOOP_RUNS);
    let after = if done == 0 { String::new() } else { format!(", after {} loop runs", count(done)) };
    Diagnostic::new(
        Code::RunBound,
        format!("loop `{}` would run {} times{after}: a run makes at most {max}", l.item, count(runs)),
    )
    .label(l.span, "nothing of this loop ran")
    .help("give the loop a `limit` (`limit 10`), or ask the API for fewer elements")
}

/// B327: a joined text past its bound, as its pieces are added.
pub fn text_past_join_bound(span: Span) -> Diagnostic {
    Diagnostic::new(Code::RunBound, "the loop's joined text would pass 1 MiB")
        .label(span, "this piece is past the bound")
        .help("give the loop a `limit`, or add a shorter piece (a field of the element, not the whole of it)")
}

/// B327: a joined text that its separators would take past its bound.
pub fn joined_too_long(l: &crate::language::plan::LoopStep, bytes: usize) -> Diagnostic {
    Diagnostic::new(
        Code::RunBound,
        format!(
            "the text loop `{}` joins would be {} bytes: a join holds at most 1 MiB",
            l.item,
            crate::base::display::count(bytes)
        ),
    )
    .label(l.span, "this loop's join")
    .help("use a shorter separator, or give the loop a `limit`")
}

/// B327: a request past the run's bound of requests.
pub fn too_many_requests(r: &Request) -> Diagnostic {
    let max = crate::language::vocab::MAX_REQUESTS;
    Diagnostic::new(
        Code::RunBound,
        format!("block `{}` would send request number {}: a run sends at most {max}", r.block, max + 1),
    )
    .label(r.span, "not sent")
    .help("an `api` block in a loop sends once per element: lower the loop's `limit`, or fetch the list in one request")
}

/// B425 at run time: a component's id, with its value filled in, would be
/// longer than the platform takes.
pub fn custom_id_too_long(why: &str, span: Span) -> Diagnostic {
    Diagnostic::new(Code::CustomIdTooLong, why.to_string())
        .label(span, "this reply's component")
        .help("a component's `value` travels in its id: keep it short, and longer state in a `var`")
}

/// B337: a file a message carries that cannot be had (no such file, a
/// block with no response, a user's upload the platform did not give) or
/// is larger than the platform takes: nothing of the message is sent.
pub fn file_unsent(name: &str, why: &str, span: Span) -> Diagnostic {
    Diagnostic::new(Code::FileUnsent, format!("file `{name}` cannot be sent: {why}"))
        .label(span, "this message's file")
        .help(format!(
            "the platform takes files of at most {} MiB each, 10 a message; send a link to a larger file instead",
            crate::discord::limits::UPLOAD_BYTES >> 20
        ))
}

/// B326: what an embed needed changed for the platform to take it (a part
/// cut to its limit, or left out for not being of its form).
pub fn embed_adjusted(what: &str, span: Span) -> Diagnostic {
    Diagnostic::new(Code::EmbedAdjusted, what.to_string())
        .label(span, "this reply")
        .help("the value came from the run; `blkc check` holds what is written in the file to the limits")
}

/// B334: an action's value, once filled, that is not what it acts on.
pub fn action_value(a: &crate::language::plan::ActionStep, what: &str, value: &str, expected: &str) -> Diagnostic {
    let written = a.verb.spec().written;
    let shown = if value.is_empty() { "nothing".to_string() } else { format!("`{value}`") };
    Diagnostic::new(Code::ActionValue, format!("`{written}`: {what} is {shown}, not {expected}"))
        .label(a.span, "not sent")
        .help("check the value it is given (an option, a variable, a secret) or the name written; nothing was sent for this action")
}

/// B332 or B333: the platform's refusal of an action, in words: the
/// permission the bot lacks (or a role above its own), a user who takes
/// no direct message, what it names gone.
pub fn action_refused(
    a: &crate::language::plan::ActionStep,
    name: &str,
    method: crate::language::plan::Method,
    refusal: &crate::discord::rest::Refusal,
) -> Diagnostic {
    use crate::discord::actions::{self, Refused, Verb};
    let spec = a.verb.spec();
    let written = spec.written;
    let needs = actions::titles(spec.permissions);
    let needs = match needs.as_slice() {
        [] => "the permission it takes".to_string(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    };
    let said = format!("the platform answered {refusal}");
    let (code, message, help) = match Refused::of(refusal.code) {
        Refused::DmClosed => (
            Code::DmClosed,
            format!("`{written}`: the user does not take direct messages from the bot"),
            "they closed their direct messages, or share no server with the bot; answer them in the channel instead (a `failed { … }` can)".to_string(),
        ),
        Refused::MissingPermissions if matches!(a.verb, Verb::GiveRole | Verb::TakeRole) => (
            Code::ActionRefused,
            format!("`{written}`: the bot lacks {needs} in this server, or the role is above the bot's highest role"),
            format!("{said}; in the server's settings, give the bot's role {needs} and drag it above the roles it gives"),
        ),
        Refused::MissingPermissions if matches!(a.verb, Verb::Timeout | Verb::Kick | Verb::Ban | Verb::Nickname) => (
            Code::ActionRefused,
            format!("`{written}`: the bot lacks {needs} in this server, or the member's highest role is above the bot's"),
            format!("{said}; give the bot's role {needs} and drag it above the members it acts on (the server's owner and administrators cannot be acted on)"),
        ),
        Refused::MissingPermissions => (
            Code::ActionRefused,
            format!("`{written}`: the bot lacks {needs} in this server or channel"),
            format!("{said}; give the bot's role {needs} (`blkc invite` lists what the file needs)"),
        ),
        Refused::MissingAccess => (
            Code::ActionRefused,
            format!("`{written}`: the bot cannot see the channel"),
            format!("{said}; give the bot's role View Channel there"),
        ),
        Refused::Unknown(what) => (
            Code::ActionRefused,
            format!("`{written}`: the platform knows no such {what}"),
            format!("{said}; it was deleted, or the id names something else"),
        ),
        Refused::TooOld => (
            Code::ActionRefused,
            format!("`{written}`: a message is older than 14 days"),
            format!("{said}; the platform deletes only younger messages in bulk"),
        ),
        Refused::Other => (
            Code::ActionRefused,
            format!("`{written}` ({} {name}): the platform refused it", method.as_str()),
            said,
        ),
    };
    Diagnostic::new(code, message).label(a.span, "refused").help(help)
}
