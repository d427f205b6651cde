//! Expectations held against what the bot did in the step before them
//! ([`Did`]); the first one that does not hold is B504, with what was
//! expected and what the bot did, and (where a value was expected) the
//! edit that writes what the bot did in its place: `blkc test --update`
//! makes it, an editor offers it.

use serde_json::Value as Json;

use super::conversation::{components, Did, Said};
use super::syntax::{At, Check, Expect, Match, MessageKind, RequestCheck, Word};
use crate::base::diagnostics::{Code, Diagnostic};
use crate::base::source::Span;

/// Holds `expect` (at `span`) against `did`, taking what it matched.
pub fn hold(expect: &Expect, span: Span, did: Option<&mut Did>) -> Result<(), Box<Diagnostic>> {
    let Some(did) = did else {
        let got = "nothing yet: take a step first".to_string();
        return Err(failed(span, "an expectation before any step", got, None, None));
    };
    did.examined = true;
    match expect {
        Expect::NothingElse => nothing_else(did, span),
        Expect::Choices(names, at) => choices(did, names, *at),
        Expect::Message { kind, checks } => message(did, kind, checks, span),
        Expect::Request { block, checks } => request(did, block, checks, span),
        Expect::Saved { name, value, at } => saved(did, name, value, *at),
        Expect::Action { action, values } => action_taken(did, action, values, span),
    }
}

/// The next action of the step the bot took as `action` (`kick`, `give
/// role`), with each value written among the values it was taken with.
fn action_taken(
    did: &mut Did,
    action: &Word,
    values: &[(String, String, At)],
    span: Span,
) -> Result<(), Box<Diagnostic>> {
    let taken = |a: &Json| format!("`{}` {}", text(&a["action"]), told(a));
    let Some(index) = did.actions.iter().position(|(a, taken)| !taken && a["action"] == action.text.as_str()) else {
        let others: Vec<String> = did.actions.iter().filter(|(_, t)| !t).map(|(a, _)| taken(a)).collect();
        let got = if others.is_empty() { "no action".to_string() } else { others.join("; ") };
        return Err(failed(span, &format!("the action `{}`", action.text), got, Some(did), None));
    };
    did.actions[index].1 = true;
    let a = did.actions[index].0.clone();
    let pairs: Vec<(String, String)> =
        a["values"].as_array().into_iter().flatten().map(|p| (text(&p[0]), text(&p[1]))).collect();
    for (word, want, at) in values {
        if pairs.iter().any(|(w, v)| w == word && v == want) {
            continue;
        }
        let what = if word.is_empty() { String::new() } else { format!("{word} ") };
        let got = pairs.iter().find(|(w, _)| w == word).map(|(_, v)| v.clone());
        let fix = got.as_ref().map(|v| (at.value, literal(v)));
        let shown = got.map_or_else(|| taken(&a), |v| format!("{what}{}", literal(&v)));
        return Err(failed(at.whole, &format!("{what}{}", literal(want)), shown, Some(did), fix));
    }
    Ok(())
}

/// An action's values as the test writes them: `"42" reason "spam"`.
pub fn told(a: &Json) -> String {
    let pairs = a["values"].as_array().into_iter().flatten();
    let words: Vec<String> = pairs
        .map(|p| match text(&p[0]) {
            w if w.is_empty() => literal(&text(&p[1])),
            w => format!("{w} {}", literal(&text(&p[1]))),
        })
        .collect();
    words.join(" ")
}

/// What the bot did in place of an expected value: where it is written
/// and the text that writes what the bot did.
type Fix = Option<(Span, String)>;

/// B504: `expected`, and what the bot did (`got`), at `span`; with the
/// run's error when it failed, and the edit that writes what it did.
fn failed(span: Span, expected: &str, got: String, did: Option<&Did>, fix: Fix) -> Box<Diagnostic> {
    let mut diag = Diagnostic::new(Code::ExpectationFailed, format!("expected {expected}"))
        .label(span, "expected here")
        .note(format!("got: {got}"));
    if let Some(error) = did.and_then(|d| d.error.as_deref()) {
        diag = diag.help(format!("the bot's run failed: {error}"));
    }
    if let Some((at, text)) = fix {
        diag = diag.fix("write what the bot did (`blkc test --update`)", at, text);
    }
    Box::new(diag)
}

/// The choices an autocomplete offered, by name, in order.
fn choices(did: &mut Did, names: &[String], at: Span) -> Result<(), Box<Diagnostic>> {
    let expected = format!("choices {}", list(names));
    let Some((offered, taken)) = &mut did.choices else {
        return Err(failed(at, &expected, "no choices: the step was not typing in an option".to_string(), None, None));
    };
    *taken = true;
    let got: Vec<String> = offered.iter().map(|c| text(&c["name"])).collect();
    match got == names {
        true => Ok(()),
        false => {
            let fix = Some((at, literals(&got)));
            Err(failed(at, &expected, format!("choices {}", list(&got)), Some(did), fix))
        }
    }
}

fn nothing_else(did: &Did, span: Span) -> Result<(), Box<Diagnostic>> {
    if let Some((offered, false)) = &did.choices {
        let got: Vec<String> = offered.iter().map(|c| text(&c["name"])).collect();
        return Err(failed(span, "nothing else", format!("choices {}", list(&got)), Some(did), None));
    }
    if let Some(said) = did.said.iter().find(|s| !s.taken) {
        let got = format!("{} {}", said.kind.describe(), shown(&said.payload));
        return Err(failed(span, "nothing else", got, Some(did), None));
    }
    if let Some((a, _)) = did.actions.iter().find(|(_, taken)| !taken) {
        let got = format!("the action `{}` {}", text(&a["action"]), told(a));
        return Err(failed(span, "nothing else", got, Some(did), None));
    }
    if let Some((r, _)) = did.requests.iter().find(|(_, taken)| !taken) {
        let got = format!("a request of block `{}`: {} {}", text(&r["block"]), text(&r["method"]), text(&r["url"]));
        return Err(failed(span, "nothing else", got, Some(did), None));
    }
    Ok(())
}

/// The next message of `kind` the bot said in the step, held to `checks`.
fn message(did: &mut Did, kind: &MessageKind, checks: &[(Check, At)], span: Span) -> Result<(), Box<Diagnostic>> {
    let same = |s: &Said| match (&s.kind, kind) {
        // A channel by its id, or by its name (`#general`) when the
        // stand-in knows it: the message's is `ID #name`.
        (MessageKind::In(a), MessageKind::In(b)) => a.text.split(' ').any(|said| said == b.text),
        (a, b) => a == b,
    };
    let Some(index) = did.said.iter().position(|s| !s.taken && same(s)) else {
        let others: Vec<String> = did
            .said
            .iter()
            .filter(|s| !s.taken)
            .map(|s| format!("{} {}", s.kind.describe(), shown(&s.payload)))
            .collect();
        let got = match others.is_empty() {
            true => match did.outcome.as_str() {
                "" | "ok" => "no message".to_string(),
                outcome => format!("no message (the run ended {outcome})"),
            },
            false => others.join("; "),
        };
        return Err(failed(span, &kind.describe(), got, Some(did), None));
    };
    did.said[index].taken = true;
    let payload = did.said[index].payload.clone();
    for (check, at) in checks {
        if let Err(miss) = check_message(check, &payload) {
            let fix = miss.fix.map(|text| (at.value, text));
            return Err(failed(at.whole, &miss.expected, miss.got, Some(did), fix));
        }
    }
    Ok(())
}

/// How a check of a message missed: what it expected, what the message
/// has, and the text of the expected value that would have held.
struct Miss {
    expected: String,
    got: String,
    fix: Option<String>,
}

/// Whether `check` holds of a message; else how it missed.
fn check_message(check: &Check, m: &Json) -> Result<(), Miss> {
    let embed = &m["embeds"][0];
    match check {
        Check::Text(want) => matched("text", want, &super::conversation::message_text(m)),
        Check::Private | Check::Public => {
            let private = m["flags"].as_u64().is_some_and(|f| f & 64 != 0);
            let (expected, got) = match (private, matches!(check, Check::Private)) {
                (a, b) if a == b => return Ok(()),
                (true, _) => ("a public message", "a private one (only the member sees it)"),
                (false, _) => ("a private message", "a public one"),
            };
            Err(Miss { expected: expected.to_string(), got: got.to_string(), fix: None })
        }
        Check::Buttons(labels) => same_list("buttons", labels, labels_of(m, 2)),
        Check::Disabled(labels) => {
            let got: Vec<String> = components(m)
                .into_iter()
                .filter(|c| c["type"] == 2 && c["disabled"] == true)
                .map(|c| text(&c["label"]))
                .collect();
            same_list("disabled", labels, got)
        }
        Check::Choices(labels) => same_list("choices", labels, labels_of(m, 3)),
        Check::EmbedTitle(want) => matched("embed title", want, &embed["title"]),
        Check::EmbedDescription(want) => matched("embed description", want, &embed["description"]),
        Check::EmbedField(name, want) => {
            let fields = embed["fields"].as_array().cloned().unwrap_or_default();
            match fields.iter().find(|f| f["name"] == name.as_str()) {
                Some(f) => matched(&format!("embed field {name:?}"), want, &f["value"]),
                None => {
                    let names: Vec<String> = fields.iter().map(|f| text(&f["name"])).collect();
                    Err(Miss {
                        expected: format!("an embed field {name:?}"),
                        got: format!("fields {}", list(&names)),
                        fix: None,
                    })
                }
            }
        }
        Check::Title(want) => matched("title", want, &m["title"]),
        Check::Poll(want) => matched("poll", want, &m["poll"]["question"]["text"]),
        Check::Files(names) => {
            let got = m["attachments"].as_array().into_iter().flatten().map(|a| text(&a["filename"])).collect();
            same_list("files", names, got)
        }
        Check::Fields(ids) => {
            let got = components(m)
                .into_iter()
                .filter(|c| c["custom_id"].is_string())
                .map(|c| text(&c["custom_id"]))
                .collect();
            same_list("fields", ids, got)
        }
    }
}

/// A list expected in full, in order.
fn same_list(what: &str, want: &[String], got: Vec<String>) -> Result<(), Miss> {
    // (`disabled` names some of the buttons: each must be disabled.)
    let holds = if what == "disabled" { want.iter().all(|w| got.contains(w)) } else { got == want };
    match holds {
        true => Ok(()),
        false => Err(Miss {
            expected: format!("{what} {}", list(want)),
            got: format!("{what} {}", list(&got)),
            fix: Some(literals(&got)),
        }),
    }
}

fn matched(what: &str, want: &Match, got: &Json) -> Result<(), Miss> {
    if got.is_string() && want.holds(&text(got)) {
        return Ok(());
    }
    let expected = format!("{what} {}", want.describe());
    // A pattern is the author's to rewrite; a text is what the bot said.
    let fix = |t: String| (!matches!(want, Match::Matches(_))).then(|| literal(&t));
    match got {
        Json::Null => Err(Miss { expected, got: format!("no {what}"), fix: None }),
        _ => Err(Miss { expected, got: format!("{:?}", text(got)), fix: fix(text(got)) }),
    }
}

/// The labels a message offers: its buttons' (`kind` 2), or its select
/// menus' choices (3).
fn labels_of(m: &Json, kind: u64) -> Vec<String> {
    let mut out = Vec::new();
    for c in components(m).into_iter().filter(|c| c["type"] == kind) {
        match kind {
            2 => out.push(text(&c["label"])),
            _ => out.extend(c["options"].as_array().into_iter().flatten().map(|o| text(&o["label"]))),
        }
    }
    out
}

fn request(did: &mut Did, block: &Word, checks: &[(RequestCheck, At)], span: Span) -> Result<(), Box<Diagnostic>> {
    let Some(index) = did.requests.iter().position(|(r, taken)| !taken && r["block"] == block.text.as_str()) else {
        let sent: Vec<String> = did.requests.iter().map(|(r, _)| format!("`{}`", text(&r["block"]))).collect();
        let got = if sent.is_empty() { "no request".to_string() } else { format!("requests of {}", sent.join(", ")) };
        return Err(failed(span, &format!("a request of block `{}`", block.text), got, Some(did), None));
    };
    did.requests[index].1 = true;
    let r = did.requests[index].0.clone();
    for (check, at) in checks {
        if let Err(miss) = check_request(check, &r) {
            let fix = miss.fix.map(|text| (at.value, text));
            return Err(failed(at.whole, &miss.expected, miss.got, Some(did), fix));
        }
    }
    Ok(())
}

fn check_request(check: &RequestCheck, r: &Json) -> Result<(), Miss> {
    match check {
        RequestCheck::Method(m) if !m.eq_ignore_ascii_case(&text(&r["method"])) => {
            Err(Miss { expected: format!("method {m}"), got: text(&r["method"]), fix: Some(text(&r["method"])) })
        }
        RequestCheck::Url(want) => matched("url", want, &r["url"]),
        RequestCheck::Body(key, want) => {
            let body = request_body(r);
            let got = &body[key.as_str()];
            match same_json(got, want) {
                true => Ok(()),
                false => Err(Miss {
                    expected: format!("body field `{key}` = {want}"),
                    got: got.to_string(),
                    fix: Some(got.to_string()),
                }),
            }
        }
        RequestCheck::Method(_) => Ok(()),
    }
}

/// A request's body as JSON: a form body's fields as strings (each field
/// once, its last value), any other body as the JSON it is.
fn request_body(r: &Json) -> Json {
    let body = text(&r["request_body"]);
    let form = r["request_headers"].as_array().into_iter().flatten().any(|h| {
        h[0].as_str().is_some_and(|k| k.eq_ignore_ascii_case("content-type"))
            && h[1].as_str().is_some_and(|v| crate::base::media::kind_of(v) == Some("form"))
    });
    if form {
        let fields =
            form_urlencoded::parse(body.as_bytes()).map(|(k, v)| (k.into_owned(), Json::String(v.into_owned())));
        return Json::Object(fields.collect());
    }
    serde_json::from_str(&body).unwrap_or(Json::Null)
}

fn saved(did: &mut Did, name: &Word, want: &Json, at: Span) -> Result<(), Box<Diagnostic>> {
    let expected = format!("`{}` saved as {want}", name.text);
    match did.saves.iter().rev().find(|s| s["name"] == name.text.as_str()) {
        Some(s) if same_json(&s["value"], want) => Ok(()),
        Some(s) => {
            let fix = Some((at, s["value"].to_string()));
            Err(failed(at, &expected, s["value"].to_string(), Some(did), fix))
        }
        None => {
            let names: Vec<String> = did.saves.iter().map(|s| format!("`{}`", text(&s["name"]))).collect();
            let got =
                if names.is_empty() { "nothing saved".to_string() } else { format!("saved {}", names.join(", ")) };
            Err(failed(at, &expected, got, Some(did), None))
        }
    }
}

/// JSON values equal as values (a number by its value: `1` and `1.0`).
fn same_json(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Number(x), Json::Number(y)) => x.as_f64() == y.as_f64(),
        (Json::Array(x), Json::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_json(a, b)),
        (Json::Object(x), Json::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same_json(v, w)))
        }
        _ => a == b,
    }
}

pub fn text(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        Json::Null => String::new(),
        other => other.to_string(),
    }
}

/// Text as a test file's string literal.
pub fn literal(text: &str) -> String {
    Json::String(text.to_string()).to_string()
}

/// A list of texts as a test file writes it: `"A", "B"`.
pub fn literals(items: &[String]) -> String {
    items.iter().map(|s| literal(s)).collect::<Vec<_>>().join(", ")
}

fn list(items: &[String]) -> String {
    if items.is_empty() {
        return "none".to_string();
    }
    items.iter().map(|s| format!("{s:?}")).collect::<Vec<_>>().join(", ")
}

/// A message in a line: its text, or its embed's title, or a form's.
fn shown(m: &Json) -> String {
    for v in [&super::conversation::message_text(m), &m["embeds"][0]["title"], &m["title"]] {
        if let Some(s) = v.as_str().filter(|s| !s.is_empty()) {
            let cut: String = s.chars().take(80).collect();
            return format!("{:?}{}", cut, if cut.len() < s.len() { "…" } else { "" });
        }
    }
    "(no text)".to_string()
}
