//! What the bot did in a step, written as the expectations that hold of
//! it: `blkc test --update` adds them after a step that has none, as a
//! snapshot of the conversation.

use serde_json::Value as Json;

use super::conversation::{components, Did};
use super::expect::{literal, literals, text};
use super::syntax::MessageKind;

/// The lines of expectations that hold of `did`, each indented by `indent`.
pub fn expectations(did: &Did, indent: &str) -> String {
    let mut lines: Vec<String> = Vec::new();
    if let Some((choices, _)) = &did.choices {
        let names: Vec<String> = choices.iter().map(|c| text(&c["name"])).collect();
        lines.push(format!("expect choices {}", literals(&names)).trim_end().to_string());
    }
    for (request, _) in &did.requests {
        lines.extend(request_lines(request));
    }
    for said in &did.said {
        lines.extend(message_lines(&said.kind, &said.payload));
    }
    // The actions besides the messages they sent, by their values.
    for (action, taken) in &did.actions {
        if !taken {
            lines.push(
                format!("expect action {} {}", text(&action["action"]), super::expect::told(action))
                    .trim_end()
                    .to_string(),
            );
        }
    }
    // The last value of each variable saved.
    let mut saved: Vec<(&str, &Json)> = Vec::new();
    for save in &did.saves {
        let name = save["name"].as_str().unwrap_or_default();
        match saved.iter_mut().find(|(n, _)| *n == name) {
            Some(s) => s.1 = &save["value"],
            None => saved.push((name, &save["value"])),
        }
    }
    lines.extend(saved.iter().map(|(name, value)| format!("expect saved {name} = {value}")));
    lines.push("expect nothing else".to_string());
    let mut out = String::new();
    for line in lines {
        for part in line.split('\n') {
            out.push_str(indent);
            out.push_str(part);
            out.push('\n');
        }
    }
    out
}

fn request_lines(r: &Json) -> Vec<String> {
    let block = text(&r["block"]);
    vec![format!(
        "expect request {block} {{\n    method {}\n    url {}\n}}",
        text(&r["method"]),
        literal(&text(&r["url"]))
    )]
}

/// A message as the expectation that holds of it: its text, whether it
/// is private, its buttons and choices, its embed's title and description,
/// a form's title and fields.
fn message_lines(kind: &MessageKind, m: &Json) -> Vec<String> {
    let head = match kind {
        MessageKind::Reply => "expect reply".to_string(),
        MessageKind::Update => "expect update".to_string(),
        MessageKind::Form => "expect form".to_string(),
        // By the channel's name when the stand-in knows one (`ID #name`).
        MessageKind::In(channel) => {
            let shown = channel.text.rsplit(' ').next().unwrap_or_default();
            format!("expect message in {}", literal(shown))
        }
    };
    let mut checks = Vec::new();
    if *kind == MessageKind::Form {
        checks.push(format!("title {}", literal(&text(&m["title"]))));
        let fields: Vec<String> =
            components(m).into_iter().filter(|c| c["custom_id"].is_string()).map(|c| text(&c["custom_id"])).collect();
        checks.push(format!("fields {}", literals(&fields)));
        return vec![block(&head, &checks)];
    }
    let content = super::conversation::message_text(m);
    if let Some(content) = content.as_str().filter(|c| !c.is_empty()) {
        checks.push(format!("text {}", literal(content)));
    }
    if m["flags"].as_u64().is_some_and(|f| f & 64 != 0) {
        checks.push("private".to_string());
    }
    let buttons: Vec<String> =
        components(m).into_iter().filter(|c| c["type"] == 2).map(|c| text(&c["label"])).collect();
    if !buttons.is_empty() {
        checks.push(format!("buttons {}", literals(&buttons)));
    }
    let choices: Vec<String> = components(m)
        .into_iter()
        .filter(|c| c["type"] == 3)
        .flat_map(|c| c["options"].as_array().cloned().unwrap_or_default())
        .map(|o| text(&o["label"]))
        .collect();
    if !choices.is_empty() {
        checks.push(format!("choices {}", literals(&choices)));
    }
    let embed = &m["embeds"][0];
    for (part, key) in [("title", "title"), ("description", "description")] {
        if let Some(t) = embed[key].as_str() {
            checks.push(format!("embed {part} {}", literal(t)));
        }
    }
    match checks.as_slice() {
        [one] if one.starts_with("text ") => vec![format!("{head} {}", &one["text ".len()..])],
        _ => vec![block(&head, &checks)],
    }
}

fn block(head: &str, checks: &[String]) -> String {
    if checks.is_empty() {
        return head.to_string();
    }
    let inner: Vec<String> = checks.iter().map(|c| format!("    {c}")).collect();
    format!("{head} {{\n{}\n}}", inner.join("\n"))
}
