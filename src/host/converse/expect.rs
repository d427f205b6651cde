//! Expectations held against what the bot did in the step before them
//! ([`Did`]); the first one that does not hold is B504, with what was
//! expected and what the bot did.

use serde_json::Value as Json;

use super::conversation::{components, Did, Said};
use super::syntax::{Check, Expect, MessageKind, RequestCheck, Word};
use crate::base::diagnostics::{Code, Diagnostic};
use crate::base::source::Span;

/// Holds `expect` (at `span`) against `did`, taking what it matched.
pub fn hold(expect: &Expect, span: Span, did: Option<&mut Did>) -> Result<(), Box<Diagnostic>> {
    let Some(did) = did else {
        return Err(failed(span, "an expectation before any step", "nothing yet: take a step first".to_string(), None));
    };
    did.examined = true;
    match expect {
        Expect::NothingElse => nothing_else(did, span),
        Expect::Choices(names) => choices(did, names, span),
        Expect::Message { kind, checks } => message(did, kind, checks, span),
        Expect::Request { block, checks } => request(did, block, checks, span),
        Expect::Saved { name, value } => saved(did, name, value, span),
    }
}

/// B504: `expected`, and what the bot did (`got`), at `span`; with the
/// run's error when it failed.
fn failed(span: Span, expected: &str, got: String, did: Option<&Did>) -> Box<Diagnostic> {
    let mut diag = Diagnostic::new(Code::ExpectationFailed, format!("expected {expected}"))
        .label(span, "expected here")
        .note(format!("got: {got}"));
    if let Some(error) = did.and_then(|d| d.error.as_deref()) {
        diag = diag.help(format!("the bot's run failed: {error}"));
    }
    Box::new(diag)
}

/// The choices an autocomplete offered, by name, in order.
fn choices(did: &mut Did, names: &[String], span: Span) -> Result<(), Box<Diagnostic>> {
    let expected = format!("choices {}", list(names));
    let Some((offered, taken)) = &mut did.choices else {
        return Err(failed(span, &expected, "no choices: the step was not typing in an option".to_string(), None));
    };
    *taken = true;
    let got: Vec<String> = offered.iter().map(|c| text(&c["name"])).collect();
    match got == names {
        true => Ok(()),
        false => Err(failed(span, &expected, format!("choices {}", list(&got)), Some(did))),
    }
}

fn nothing_else(did: &Did, span: Span) -> Result<(), Box<Diagnostic>> {
    if let Some((offered, false)) = &did.choices {
        let got: Vec<String> = offered.iter().map(|c| text(&c["name"])).collect();
        return Err(failed(span, "nothing else", format!("choices {}", list(&got)), Some(did)));
    }
    if let Some(said) = did.said.iter().find(|s| !s.taken) {
        return Err(failed(
            span,
            "nothing else",
            format!("{} {}", said.kind.describe(), shown(&said.payload)),
            Some(did),
        ));
    }
    if let Some((r, _)) = did.requests.iter().find(|(_, taken)| !taken) {
        let got = format!("a request of block `{}`: {} {}", text(&r["block"]), text(&r["method"]), text(&r["url"]));
        return Err(failed(span, "nothing else", got, Some(did)));
    }
    Ok(())
}

/// The next message of `kind` the bot said in the step, held to `checks`.
fn message(did: &mut Did, kind: &MessageKind, checks: &[(Check, Span)], span: Span) -> Result<(), Box<Diagnostic>> {
    let same = |s: &Said| match (&s.kind, kind) {
        (MessageKind::In(a), MessageKind::In(b)) => a.text == b.text,
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
        return Err(failed(span, &kind.describe(), got, Some(did)));
    };
    did.said[index].taken = true;
    let payload = did.said[index].payload.clone();
    for (check, at) in checks {
        if let Err((expected, got)) = check_message(check, &payload) {
            return Err(failed(*at, &expected, got, Some(did)));
        }
    }
    Ok(())
}

/// Whether `check` holds of a message; else what it expected and got.
fn check_message(check: &Check, m: &Json) -> Result<(), (String, String)> {
    let fail = |expected: String, got: String| Err((expected, got));
    let embed = &m["embeds"][0];
    match check {
        Check::Text(want) => match want.holds(text(&m["content"]).as_str()) {
            true => Ok(()),
            false => fail(format!("text {}", want.describe()), format!("{:?}", text(&m["content"]))),
        },
        Check::Private | Check::Public => {
            let private = m["flags"].as_u64().is_some_and(|f| f & 64 != 0);
            match (private, matches!(check, Check::Private)) {
                (a, b) if a == b => Ok(()),
                (true, _) => fail("a public message".into(), "a private one (only the member sees it)".into()),
                (false, _) => fail("a private message".into(), "a public one".into()),
            }
        }
        Check::Buttons(labels) => {
            let got = labels_of(m, 2);
            if &got == labels {
                Ok(())
            } else {
                fail(format!("buttons {}", list(labels)), format!("buttons {}", list(&got)))
            }
        }
        Check::Disabled(labels) => {
            let got: Vec<String> = components(m)
                .into_iter()
                .filter(|c| c["type"] == 2 && c["disabled"] == true)
                .map(|c| text(&c["label"]))
                .collect();
            match labels.iter().all(|l| got.contains(l)) {
                true => Ok(()),
                false => fail(format!("disabled {}", list(labels)), format!("disabled {}", list(&got))),
            }
        }
        Check::Choices(labels) => {
            let got = labels_of(m, 3);
            if &got == labels {
                Ok(())
            } else {
                fail(format!("choices {}", list(labels)), format!("choices {}", list(&got)))
            }
        }
        Check::EmbedTitle(want) => matched("embed title", want, &embed["title"]),
        Check::EmbedDescription(want) => matched("embed description", want, &embed["description"]),
        Check::EmbedField(name, want) => {
            let fields = embed["fields"].as_array().cloned().unwrap_or_default();
            match fields.iter().find(|f| f["name"] == name.as_str()) {
                Some(f) => matched(&format!("embed field {name:?}"), want, &f["value"]),
                None => {
                    let names: Vec<String> = fields.iter().map(|f| text(&f["name"])).collect();
                    fail(format!("an embed field {name:?}"), format!("fields {}", list(&names)))
                }
            }
        }
        Check::Title(want) => matched("title", want, &m["title"]),
        Check::Fields(ids) => {
            let got: Vec<String> =
                components(m).into_iter().filter(|c| c["type"] == 4).map(|c| text(&c["custom_id"])).collect();
            if &got == ids {
                Ok(())
            } else {
                fail(format!("fields {}", list(ids)), format!("fields {}", list(&got)))
            }
        }
    }
}

fn matched(what: &str, want: &super::syntax::Match, got: &Json) -> Result<(), (String, String)> {
    match got.is_string() && want.holds(&text(got)) {
        true => Ok(()),
        false if got.is_null() => Err((format!("{what} {}", want.describe()), format!("no {what}"))),
        false => Err((format!("{what} {}", want.describe()), format!("{:?}", text(got)))),
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

fn request(did: &mut Did, block: &Word, checks: &[(RequestCheck, Span)], span: Span) -> Result<(), Box<Diagnostic>> {
    let Some(index) = did.requests.iter().position(|(r, taken)| !taken && r["block"] == block.text.as_str()) else {
        let sent: Vec<String> = did.requests.iter().map(|(r, _)| format!("`{}`", text(&r["block"]))).collect();
        let got = if sent.is_empty() { "no request".to_string() } else { format!("requests of {}", sent.join(", ")) };
        return Err(failed(span, &format!("a request of block `{}`", block.text), got, Some(did)));
    };
    did.requests[index].1 = true;
    let r = did.requests[index].0.clone();
    for (check, at) in checks {
        let (expected, got) = match check {
            RequestCheck::Method(m) if !m.eq_ignore_ascii_case(&text(&r["method"])) => {
                (format!("method {m}"), text(&r["method"]))
            }
            RequestCheck::Url(want) if !want.holds(&text(&r["url"])) => {
                (format!("url {}", want.describe()), format!("{:?}", text(&r["url"])))
            }
            RequestCheck::Body(key, want) => {
                let body: Json = serde_json::from_str(&text(&r["request_body"])).unwrap_or(Json::Null);
                if same_json(&body[key.as_str()], want) {
                    continue;
                }
                (format!("body field `{key}` = {want}"), format!("{}", body[key.as_str()]))
            }
            _ => continue,
        };
        return Err(failed(*at, &expected, got, Some(did)));
    }
    Ok(())
}

fn saved(did: &mut Did, name: &Word, want: &Json, span: Span) -> Result<(), Box<Diagnostic>> {
    let last = did.saves.iter().rev().find(|s| s["name"] == name.text.as_str());
    match last {
        Some(s) if same_json(&s["value"], want) => Ok(()),
        Some(s) => Err(failed(span, &format!("`{}` saved as {want}", name.text), format!("{}", s["value"]), Some(did))),
        None => {
            let names: Vec<String> = did.saves.iter().map(|s| format!("`{}`", text(&s["name"]))).collect();
            let got =
                if names.is_empty() { "nothing saved".to_string() } else { format!("saved {}", names.join(", ")) };
            Err(failed(span, &format!("`{}` saved as {want}", name.text), got, Some(did)))
        }
    }
}

/// JSON values equal as values (a number by its value: `1` and `1.0`).
fn same_json(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Number(x), Json::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

fn text(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        Json::Null => String::new(),
        other => other.to_string(),
    }
}

fn list(items: &[String]) -> String {
    if items.is_empty() {
        return "none".to_string();
    }
    items.iter().map(|s| format!("{s:?}")).collect::<Vec<_>>().join(", ")
}

/// A message in a line: its text, or its embed's title, or a form's.
fn shown(m: &Json) -> String {
    for v in [&m["content"], &m["embeds"][0]["title"], &m["title"]] {
        if let Some(s) = v.as_str().filter(|s| !s.is_empty()) {
            let cut: String = s.chars().take(80).collect();
            return format!("{:?}{}", cut, if cut.len() < s.len() { "…" } else { "" });
        }
    }
    "(no text)".to_string()
}
