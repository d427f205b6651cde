//! The platform's API as `play` stands in for it: what serve sends after
//! an interaction's first answer (edits, follow-ups, deletions, channel
//! messages) is recorded for the page and answered as the platform would.

use serde_json::{json, Value};

use super::state::{Call, Play};
use crate::discord::model::ErrorBody;
use crate::discord::rest::Route;

/// Answers serve's call `method path` with `body`; `authorization` is its
/// header. A route that needs the bot token refuses another.
pub fn handle(play: &Play, method: &str, path: &str, authorization: Option<&str>, body: &[u8]) -> (u16, Value) {
    let body: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let route = path.strip_prefix("/api/v10").unwrap_or(path);
    let bot = authorization == Some(format!("Bot {}", play.token).as_str());
    let refused = |status: u16, message: &str| {
        let error = ErrorBody { code: Some(0), message: Some(message.to_string()) };
        (status, serde_json::to_value(error).unwrap_or_default())
    };
    // Read as serve wrote it: the one table of routes, `discord::rest::Route`.
    let (kind, interaction, token) = match Route::parse(method, route) {
        Some(Route::FollowUp { token, .. }) => ("follow_up", of_token(token), Some(token)),
        Some(Route::EditOriginal { token, .. }) => ("edit", of_token(token), Some(token)),
        Some(Route::DeleteOriginal { token, .. }) => ("delete", of_token(token), Some(token)),
        Some(Route::Callback { interaction, token }) => ("callback", Some(interaction.to_string()), Some(token)),
        Some(Route::ChannelMessage { .. }) if bot => ("message", None, None),
        Some(Route::EditChannelMessage { .. }) if bot => ("edit_message", None, None),
        _ if route.starts_with("/channels/") && !bot => return refused(401, "401: Unauthorized"),
        Some(Route::GatewayBot) => {
            let url = play.gateway.lock().unwrap_or_else(|e| e.into_inner()).clone();
            return match url {
                Some(url) => (200, serde_json::to_value(super::world::bot_info(&url)).unwrap_or_default()),
                None => refused(503, "the Gateway is not open"),
            };
        }
        _ => ("other", None, None),
    };
    // (A webhook's token is shown as `…`: it is a credential.)
    let shown = match token.filter(|_| kind != "callback") {
        Some(token) => route.replace(token, "…"),
        None => route.to_string(),
    };
    play.record(Call { method: method.to_string(), route: shown, kind, interaction, body: body.clone() });
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
