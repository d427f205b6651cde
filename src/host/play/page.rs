//! `play`'s HTTP routes: the page and its assets (in the binary), the
//! page's API, and the platform stand-in serve calls. Every request must
//! name `play`'s own address as its `Host`, and a browser's `Origin` must
//! be `play`'s own page: another web page (or a DNS name rebound to
//! 127.0.0.1) gets 403 and drives nothing.

use std::sync::Arc;
use std::time::Duration;

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{json, Value};

use super::state::Play;

const INDEX: &str = include_str!("assets/index.html");
const SCRIPT: &str = include_str!("assets/play.js");
const STYLE: &str = include_str!("assets/play.css");

/// The largest request body the page or serve may send.
const MAX_BODY: usize = 1 << 20;
/// How long a poll for serve's calls waits when there is none.
const POLL: Duration = Duration::from_secs(20);

type Reply = Response<Full<Bytes>>;

fn respond(status: StatusCode, content_type: &str, body: impl Into<Bytes>) -> Reply {
    let mut r = Response::new(Full::new(body.into()));
    *r.status_mut() = status;
    let headers = r.headers_mut();
    if let Ok(v) = hyper::header::HeaderValue::from_str(content_type) {
        headers.insert(hyper::header::CONTENT_TYPE, v);
    }
    // The page's scripts, styles and connections are its own (images may
    // also come over https, as an embed's do), and no other page frames it.
    headers.insert(
        hyper::header::CONTENT_SECURITY_POLICY,
        hyper::header::HeaderValue::from_static(
            "default-src 'self'; img-src 'self' data: https:; frame-ancestors 'none'; base-uri 'none'",
        ),
    );
    headers.insert(hyper::header::X_CONTENT_TYPE_OPTIONS, hyper::header::HeaderValue::from_static("nosniff"));
    headers.insert(hyper::header::CACHE_CONTROL, hyper::header::HeaderValue::from_static("no-store"));
    r
}

fn json_reply(status: StatusCode, value: &Value) -> Reply {
    respond(status, "application/json", serde_json::to_vec(value).unwrap_or_default())
}

/// Whether the request is `play`'s own: its `Host` is `play`'s address (by
/// IP, or `localhost` with its port), and an `Origin`, when a browser sends
/// one, is `play`'s page.
fn own(play: &Play, req: &Request<Incoming>) -> bool {
    let port = play.address.port();
    let ours = |host: &str| {
        host == play.address.to_string() || host == format!("localhost:{port}") || host == format!("127.0.0.1:{port}")
    };
    let header = |name| req.headers().get(name).and_then(|v| v.to_str().ok());
    let host_ok = header(hyper::header::HOST).is_some_and(ours);
    let origin_ok = match header(hyper::header::ORIGIN) {
        None => true,
        Some(origin) => origin.strip_prefix("http://").is_some_and(ours),
    };
    host_ok && origin_ok
}

/// `GET /play/waiting`: the work waiting, and the bot's clock; `POST
/// /play/clock` with `{"forward": "10m"}`: the clock moves, and what came
/// due runs.
async fn clock(play: &Arc<Play>, method: &Method, body: &[u8]) -> Reply {
    let play = play.clone();
    if method == Method::GET {
        let listed = tokio::task::spawn_blocking(move || play.waiting()).await.unwrap_or(Value::Null);
        return json_reply(StatusCode::OK, &listed);
    }
    let asked: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let by = asked["forward"].as_str().unwrap_or_default().to_string();
    match tokio::task::spawn_blocking(move || play.move_clock(&by)).await {
        Ok(Ok((now, ran))) => json_reply(StatusCode::OK, &json!({ "now": now, "ran": ran })),
        Ok(Err(why)) => json_reply(StatusCode::BAD_REQUEST, &json!({ "error": why.to_string() })),
        Err(_) => json_reply(StatusCode::INTERNAL_SERVER_ERROR, &json!({ "error": "the clock did not move" })),
    }
}

pub async fn route(play: &Arc<Play>, req: Request<Incoming>) -> Reply {
    if !own(play, &req) {
        return respond(StatusCode::FORBIDDEN, "text/plain", "this is blkc play's own address: open it as printed\n");
    }
    let (method, path) = (req.method().clone(), req.uri().path().to_string());
    let query = req.uri().query().unwrap_or_default().to_string();
    let authorization =
        req.headers().get(hyper::header::AUTHORIZATION).and_then(|v| v.to_str().ok()).map(str::to_string);
    let reason = req.headers().get("x-audit-log-reason").and_then(|v| v.to_str().ok()).map(str::to_string);
    let content_type = req.headers().get(hyper::header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).map(str::to_string);
    // Serve's uploads (a message with files) may be larger than the rest.
    let upload =
        path.starts_with("/api/v10/") && content_type.as_deref().is_some_and(|t| t.starts_with("multipart/form-data"));
    let limit = if upload { super::files::MAX_UPLOAD } else { MAX_BODY };
    let body = match Limited::new(req.into_body(), limit).collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => return respond(StatusCode::PAYLOAD_TOO_LARGE, "text/plain", "too large\n"),
    };
    match (&method, path.as_str()) {
        (&Method::GET, "/") => respond(StatusCode::OK, "text/html; charset=utf-8", INDEX),
        (&Method::GET, "/play.js") => respond(StatusCode::OK, "text/javascript; charset=utf-8", SCRIPT),
        (&Method::GET, "/play.css") => respond(StatusCode::OK, "text/css; charset=utf-8", STYLE),
        (&Method::GET, "/play/file") => {
            let (play, path) = (play.clone(), play.path.clone());
            match tokio::task::spawn_blocking(move || play.file(&path)).await {
                Ok(file) => json_reply(StatusCode::OK, &file),
                Err(_) => {
                    json_reply(StatusCode::INTERNAL_SERVER_ERROR, &json!({ "error": "the file could not be read" }))
                }
            }
        }
        (&Method::GET, "/play/calls") => {
            // `after=now`: none, and the number of the next (a page that
            // opens starts there: the answers before it are not its own).
            let asked = query.strip_prefix("after=").unwrap_or_default();
            let (after, wait) = match asked {
                "now" => (usize::MAX, Duration::ZERO),
                n => (n.parse().unwrap_or(0), POLL),
            };
            let (calls, next) = play.calls_after(after, wait).await;
            let after = after.min(next);
            json_reply(StatusCode::OK, &json!({ "after": after, "next": next, "calls": calls }))
        }
        (&Method::POST, "/play/interaction") => interaction(play, &body).await,
        (&Method::GET, "/play/waiting") | (&Method::POST, "/play/clock") => clock(play, &method, &body).await,
        (&Method::POST, "/play/event") => {
            let asked: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            // (A webhook is posted to serve: off the page's threads.)
            let (fired, kind) = (play.clone(), asked["kind"].clone());
            let result = tokio::task::spawn_blocking(move || {
                fired.fire(asked["kind"].as_str().unwrap_or_default(), &asked["given"])
            })
            .await
            .unwrap_or(Err(super::state::PlayError::NotServing));
            let asked = json!({ "kind": kind });
            match result {
                Ok(_) => json_reply(StatusCode::OK, &json!({ "fired": asked["kind"] })),
                Err(why) => json_reply(StatusCode::BAD_REQUEST, &json!({ "error": why.to_string() })),
            }
        }
        (&Method::GET, p) if p.starts_with("/play/files/") => uploaded(play, &p["/play/files/".len()..]),
        (_, p) if p.starts_with("/api/v10/") => {
            let asked = super::stand_in::Asked {
                method: method.as_str(),
                path: p,
                query: &query,
                authorization: authorization.as_deref(),
                reason: reason.as_deref(),
            };
            stand_in(play, &asked, content_type.as_deref().filter(|_| upload), body).await
        }
        _ => respond(StatusCode::NOT_FOUND, "text/plain", "not found\n"),
    }
}

/// `GET /play/files/ID`: a file serve uploaded with a message, as an image
/// when it is one of the platform's image types, else as a download; never
/// a page of this origin (its own policy sandboxes it).
fn uploaded(play: &Play, id: &str) -> Reply {
    let Some((media_type, name, bytes)) = play.uploads.get(id) else {
        return respond(StatusCode::NOT_FOUND, "text/plain", "no such file\n");
    };
    let mut r = respond(StatusCode::OK, media_type, bytes);
    let headers = r.headers_mut();
    headers.insert(
        hyper::header::CONTENT_SECURITY_POLICY,
        hyper::header::HeaderValue::from_static("default-src 'none'; sandbox"),
    );
    if media_type == "application/octet-stream" {
        let name: String = name.chars().filter(|c| c.is_ascii_graphic() && *c != '"' && *c != '\\').collect();
        if let Ok(v) = hyper::header::HeaderValue::from_str(&format!("attachment; filename=\"{name}\"")) {
            headers.insert(hyper::header::CONTENT_DISPOSITION, v);
        }
    }
    r
}

/// A call to the stand-in's API: an upload's files read first (`upload`:
/// its multipart type), then answered as the platform would.
async fn stand_in(play: &Play, asked: &super::stand_in::Asked<'_>, upload: Option<&str>, body: Bytes) -> Reply {
    let (body, files) = match upload {
        Some(t) => match super::files::read(t, body).await {
            Some(read) => read,
            None => {
                return json_reply(StatusCode::BAD_REQUEST, &json!({ "message": "Invalid Form Body", "code": 50035 }))
            }
        },
        None => (body, Vec::new()),
    };
    let (status, value) = super::stand_in::handle(play, asked, &body, files);
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
    if value.is_null() {
        respond(status, "application/json", Bytes::new())
    } else {
        json_reply(status, &value)
    }
}

/// `POST /play/interaction`: what the page asked for, as the platform's
/// interaction, sent to serve; its answer, and the interaction it was.
async fn interaction(play: &Arc<Play>, body: &[u8]) -> Reply {
    let Ok(asked) = serde_json::from_slice::<Value>(body) else {
        return json_reply(StatusCode::BAD_REQUEST, &json!({ "error": "not JSON" }));
    };
    if !asked.is_object() || !asked["data"].is_object() {
        return json_reply(StatusCode::BAD_REQUEST, &json!({ "error": "an interaction needs `type` and `data`" }));
    }
    // Who plays, as the page names them: a permission that is none is said.
    if let Some(written) = asked["member"]["permissions"].as_str() {
        if let Err(why) = crate::discord::registration::permission_bits(written) {
            return json_reply(StatusCode::BAD_REQUEST, &json!({ "error": format!("Playing as: {why}") }));
        }
    }
    let interaction = play.interaction(&asked);
    let id = interaction["id"].clone();
    let sent = {
        let (play, interaction) = (play.clone(), interaction.clone());
        tokio::task::spawn_blocking(move || play.send(&interaction)).await
    };
    match sent {
        Ok(Ok(mut answered)) => {
            answered["interaction"] = id;
            json_reply(StatusCode::OK, &answered)
        }
        Ok(Err(why)) => json_reply(StatusCode::BAD_GATEWAY, &json!({ "error": why.to_string() })),
        Err(_) => json_reply(StatusCode::INTERNAL_SERVER_ERROR, &json!({ "error": "the send failed" })),
    }
}
