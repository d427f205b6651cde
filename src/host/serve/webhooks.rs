//! `POST` to a webhook event's path: another service (GitHub, Stripe, a
//! deploy script) triggering an event. Its size is bounded before a byte
//! is held, its signature checked before its body is read as anything
//! (401 otherwise), its body read as JSON, and the run queued and answered
//! `202 Accepted` at once; a delivery the sender names runs once across the
//! processes that share the store.

use std::sync::Arc;
use std::time::Duration;

use hyper::body::Incoming;
use hyper::{Request, StatusCode};

use super::loaded::Loaded;
use super::shared::{Queued, Shared, Work};
use super::trigger::{Outcome, Trigger};
use crate::base::webhook::MAX_BODY;
use crate::language::plan::Hook;

/// How long a delivery counts as seen: a retry of it within this runs
/// nothing (the senders retry for minutes to hours).
pub const SEEN: Duration = Duration::from_secs(24 * 60 * 60);
/// The most headers kept for the run (`{api_webhook[headers.…]}`), and
/// the longest value.
const MAX_HEADERS: usize = 64;
const MAX_HEADER: usize = 1024;

/// The webhook event whose path is `path` in `loaded`: its tree's index
/// and head.
pub fn find(loaded: &Loaded, path: &str) -> Option<(usize, Hook)> {
    loaded.plan.trees.iter().enumerate().find_map(|(i, t)| {
        let hook = t.webhook.as_ref().filter(|h| h.path == path)?;
        Some((i, hook.clone()))
    })
}

/// What a POST is answered: a status and its text, or a body refused as
/// the front door refuses one.
pub enum Answer {
    Status(StatusCode, &'static str),
    Body(super::door::BodyRefused),
}

fn respond(status: StatusCode, _: &str, text: &'static str) -> Answer {
    Answer::Status(status, text)
}

/// Answers a POST to webhook `tree` of `loaded`.
pub async fn post(
    shared: &Arc<Shared>,
    req: Request<Incoming>,
    (loaded, tree, hook): (Arc<Loaded>, usize, Hook),
) -> Answer {
    let name = loaded.plan.trees[tree].name.clone();
    let count = |outcome: Outcome| shared.metrics.event(&format!("webhook:{name}"), outcome);
    if shared.life.draining() && !shared.life.handing_over() {
        return respond(StatusCode::SERVICE_UNAVAILABLE, "text/plain", "draining\n");
    }
    let declared = req.headers().get(hyper::header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_BODY as u64) {
        count(Outcome::TooLarge);
        return respond(StatusCode::PAYLOAD_TOO_LARGE, "text/plain", "too large\n");
    }
    let headers = kept_headers(&req);
    let body = match super::door::read(req.into_body(), MAX_BODY, &shared.front.bodies).await {
        Ok(body) => body,
        Err(refused) => {
            if refused == super::door::BodyRefused::TooLarge {
                count(Outcome::TooLarge);
            }
            return Answer::Body(refused);
        }
    };
    let header = |n: &str| headers.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
    // Unsigned bytes are never read as anything: the signature first.
    let verified = match shared.bot.inputs.secrets.get(&hook.secret) {
        Some(secret) => hook.scheme.verify(secret, &header, &body.bytes, super::clock::epoch_ms() / 1000),
        None => Err(crate::base::webhook::Refused::Wrong),
    };
    if let Err(why) = verified {
        count(Outcome::Unauthorized);
        tracing::warn!(webhook = name, status = 401, why = %why, "refused");
        return respond(StatusCode::UNAUTHORIZED, "text/plain", "invalid signature\n");
    }
    let parsed = match crate::base::data::Data::parse(&body.bytes) {
        Ok(parsed) => parsed.data,
        Err(e) => {
            count(Outcome::Malformed);
            tracing::warn!(webhook = name, status = 400, error = %e, "a body that is not JSON");
            return respond(StatusCode::BAD_REQUEST, "text/plain", "the body is not JSON\n");
        }
    };
    let delivery = delivery(&hook, &header, &parsed);
    let dedupe = delivery.as_ref().filter(|_| shared.bot.store.shared()).map(|d| {
        let key = crate::run::store::delivery_key(&format!("webhook:{}", hook.path), d);
        (key, super::clock::epoch_ms(), SEEN)
    });
    // A credential the sender sent (a bearer webhook's secret) stays out of the run.
    let headers = headers.into_iter().filter(|(k, _)| !CREDENTIALS.contains(&k.as_str())).collect();
    let request = crate::run::eval::Received { body: parsed, headers };
    let trigger = Trigger::from_webhook((loaded, tree), request, delivery, dedupe);
    let work = Work { _queued: Queued::new(shared), trigger };
    if let Err(full) = shared.queue.events.try_send(work) {
        let trigger = full.into_inner().trigger;
        tracing::warn!(webhook = name, "webhook refused: the run queue is full");
        super::ending::ended(shared, super::ending::Ended::Trigger(&trigger), super::ending::Ending::of(Outcome::Busy));
        return respond(StatusCode::SERVICE_UNAVAILABLE, "text/plain", "busy\n");
    }
    respond(StatusCode::ACCEPTED, "text/plain", "accepted\n")
}

/// Credentials a sender may send, never given to the run: a bearer
/// webhook's `Authorization` is its secret.
const CREDENTIALS: [&str; 3] = ["authorization", "proxy-authorization", "cookie"];

/// The request's headers: names lower-case, values that are text, within
/// bounds.
fn kept_headers(req: &Request<Incoming>) -> Vec<(String, String)> {
    let visible =
        req.headers().iter().filter_map(|(k, v)| Some((k.as_str().to_string(), v.to_str().ok()?.to_string())));
    visible.filter(|(_, v)| v.len() <= MAX_HEADER).take(MAX_HEADERS).collect()
}

/// The delivery's id: the header the file or the scheme names, or a
/// Stripe event's `id`; at most 200 characters.
fn delivery(hook: &Hook, header: &dyn Fn(&str) -> Option<String>, body: &crate::base::data::Data) -> Option<String> {
    let id = match hook.delivery_header() {
        Some(h) => header(h),
        None => match body.to_json().get("id") {
            Some(serde_json::Value::String(s)) => Some(s.clone()),
            _ => None,
        },
    };
    id.filter(|d| !d.is_empty() && d.len() <= 200)
}
