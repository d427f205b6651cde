//! The platform's API as `play` stands in for it: what serve sends after
//! an interaction's first answer (edits, follow-ups, deletions, channel
//! messages) and what runs' actions ask (`acted`) is recorded for the page
//! and answered as the platform would.

use serde_json::{json, Value};

use super::state::{Call, Play};
use crate::discord::model::ErrorBody;
use crate::discord::rest::Route;

/// A call to the stand-in's API: its method, its path and query, its
/// `Authorization` and its audit-log reason (percent-encoded, as sent).
pub struct Asked<'a> {
    pub method: &'a str,
    pub path: &'a str,
    pub query: &'a str,
    pub authorization: Option<&'a str>,
    pub reason: Option<&'a str>,
}

/// Answers serve's call with `body` (and the files of an upload, which
/// the message then shows by their addresses on the page). A route that
/// needs the bot token refuses another.
pub fn handle(play: &Play, asked: &Asked<'_>, body: &[u8], files: Vec<super::files::Upload>) -> (u16, Value) {
    let (method, path) = (asked.method, asked.path);
    let mut body: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    if !files.is_empty() && body.is_object() {
        play.uploads.keep(&mut body, files, &mut || play.id().parse().unwrap_or_default());
    }
    // A new message is sent now, on the bot's clock.
    let new_message = matches!(
        Route::parse(method, path.strip_prefix("/api/v10").unwrap_or(path)),
        Some(Route::FollowUp { .. } | Route::ChannelMessage { .. })
    );
    if new_message && body.is_object() {
        body["timestamp"] = json!(play.now_rfc3339());
    }
    let route = path.strip_prefix("/api/v10").unwrap_or(path);
    let bot = asked.authorization == Some(format!("Bot {}", play.token).as_str());
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
        Some(Route::EditChannelMessage { .. }) if bot => ("edit_message", None, None),
        _ if (route.starts_with("/channels/") || route.starts_with("/guilds/") || route.starts_with("/users/"))
            && !bot =>
        {
            return refused(401, "401: Unauthorized")
        }
        Some(Route::GatewayBot) => {
            let url = play.gateway.lock().unwrap_or_else(|e| e.into_inner()).clone();
            return match url {
                Some(url) => (200, serde_json::to_value(super::world::bot_info(&url)).unwrap_or_default()),
                None => refused(503, "the Gateway is not open"),
            };
        }
        _ if bot => return acted(play, asked, route, body),
        _ => ("other", None, None),
    };
    // (A webhook's token is shown as `…`: it is a credential.)
    let shown = match token.filter(|_| kind != "callback") {
        Some(token) => route.replace(token, "…"),
        None => route.to_string(),
    };
    // A new message has its id from the start: what the page is told is
    // what serve is answered.
    if kind == "follow_up" && body.is_object() {
        body["id"] = json!(play.id());
    }
    play.record(Call { method: method.to_string(), route: shown, kind, interaction, body: body.clone() });
    match kind {
        "delete" | "callback" => (204, Value::Null),
        _ => {
            let mut message = if body.is_object() { body } else { json!({}) };
            if message["id"].is_null() {
                message["id"] = json!(play.id());
            }
            (200, message)
        }
    }
}

/// A call with the bot token that is not an interaction's: a channel's
/// message (`message`, or `dm` in a direct-message channel), or another
/// action, answered by the world of actions and recorded for the page with
/// what came of it (`status`, `answer`) and its audit-log reason.
fn acted(play: &Play, asked: &Asked<'_>, route: &str, body: Value) -> (u16, Value) {
    let (status, answer) = {
        let mut acted = play.acted.lock().unwrap_or_else(|e| e.into_inner());
        let answered = acted.answer(asked.method, route, asked.query, &body, &mut || play.id());
        answered.unwrap_or_else(|| (404, json!({ "message": "404: Not Found", "code": 0 })))
    };
    let parts: Vec<&str> = route.trim_start_matches('/').split('/').collect();
    let dm = match parts.as_slice() {
        ["channels", channel, "messages"] => play.acted.lock().unwrap_or_else(|e| e.into_inner()).dm_user(channel),
        _ => None,
    };
    let kind = match (asked.method, parts.as_slice()) {
        ("POST", ["channels", _, "messages"]) if status < 300 && dm.is_some() => "dm",
        ("POST", ["channels", _, "messages"]) if status < 300 => "message",
        _ => "action",
    };
    let reason = asked.reason.map(|r| percent_encoding::percent_decode_str(r).decode_utf8_lossy().into_owned());
    let mut recorded = match kind {
        "action" => json!({ "sent": body, "status": status, "answer": answer, "reason": reason }),
        _ => answer.clone(),
    };
    if let Some(user) = &dm {
        recorded["dm_user"] = json!(user);
    }
    // A message in a channel not the page's own says where it is.
    if let Some(channel) = recorded["channel_id"].as_str().filter(|c| kind == "message" && *c != super::world::CHANNEL)
    {
        let name = play.acted.lock().unwrap_or_else(|e| e.into_inner()).channel_name(channel);
        recorded["channel_name"] = json!(name.unwrap_or_else(|| channel.to_string()));
    }
    let route = if asked.query.is_empty() { route.to_string() } else { format!("{route}?{}", asked.query) };
    play.record(Call { method: asked.method.to_string(), route, kind, interaction: None, body: recorded });
    (status, answer)
}

/// The interaction a webhook's token names (`play-ID-…`, as
/// [`Play::interaction`] made it).
fn of_token(token: &str) -> Option<String> {
    let mut parts = token.splitn(3, '-');
    (parts.next() == Some("play")).then(|| parts.next().map(str::to_string)).flatten()
}
