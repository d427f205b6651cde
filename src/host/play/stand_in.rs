//! The platform's API as `play` stands in for it: what serve sends after
//! an interaction's first answer (edits, follow-ups, deletions, channel
//! messages) is recorded for the page and answered as the platform would.

use serde_json::{json, Value};

use super::state::{Call, Play};

/// Answers serve's call `method path` with `body`; `authorization` is its
/// header. A route that needs the bot token refuses another.
pub fn handle(play: &Play, method: &str, path: &str, authorization: Option<&str>, body: &[u8]) -> (u16, Value) {
    let body: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let route = path.strip_prefix("/api/v10").unwrap_or(path);
    let parts: Vec<&str> = route.trim_start_matches('/').split('/').collect();
    let bot = authorization == Some(format!("Bot {}", play.token).as_str());
    let (kind, interaction) = match (method, parts.as_slice()) {
        ("POST", ["webhooks", _, token]) => ("follow_up", of_token(token)),
        ("PATCH", ["webhooks", _, token, "messages", "@original"]) => ("edit", of_token(token)),
        ("DELETE", ["webhooks", _, token, "messages", "@original"]) => ("delete", of_token(token)),
        ("POST", ["interactions", id, _, "callback"]) => ("callback", Some(id.to_string())),
        ("POST", ["channels", _, "messages"]) if bot => ("message", None),
        ("PATCH", ["channels", _, "messages", _]) if bot => ("edit_message", None),
        ("GET", ["gateway", "bot"]) => {
            let url = play.gateway.lock().unwrap_or_else(|e| e.into_inner()).clone();
            return match url {
                Some(url) => (200, super::world::bot_info(&url)),
                None => (503, json!({ "message": "the Gateway is not open", "code": 0 })),
            };
        }
        (_, ["channels", ..]) if !bot => return (401, json!({ "message": "401: Unauthorized", "code": 0 })),
        _ => ("other", None),
    };
    let shown = match &interaction {
        Some(_) => parts
            .iter()
            .enumerate()
            .map(|(i, p)| if i == 2 && parts[0] == "webhooks" { "…" } else { p })
            .collect::<Vec<_>>()
            .join("/"),
        None => parts.join("/"),
    };
    play.record(Call { method: method.to_string(), route: format!("/{shown}"), kind, interaction, body: body.clone() });
    match kind {
        "delete" | "callback" => (204, Value::Null),
        _ => {
            let mut message = if body.is_object() { body } else { json!({}) };
            message["id"] = json!(play.id());
            (200, message)
        }
    }
}

/// The interaction a webhook's token names (`play-ID-…`, as
/// [`Play::interaction`] made it).
fn of_token(token: &str) -> Option<String> {
    let mut parts = token.splitn(3, '-');
    (parts.next() == Some("play")).then(|| parts.next().map(str::to_string)).flatten()
}
