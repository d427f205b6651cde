//! The chat platform's API as blkc's own client: the routes blkc calls
//! (registration, the Gateway's address, the answers to interactions and
//! channel messages), each through the one rate limiter per process that
//! the runs' own requests with the bot token share (docs/serve.md, "Rate
//! limits").

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::model::{ErrorBody, GatewayBot};
use super::ratelimit::{self, Heard, RateLimiter, Unsent, Wait};
use super::{is_interaction_token, is_snowflake};

/// What blkc tells the platform it is, as the platform asks of bots.
pub const USER_AGENT: &str = concat!("DiscordBot (https://github.com/blkc, ", env!("CARGO_PKG_VERSION"), ") blkc");

/// A route of the platform's API that blkc calls. Every id and token in it
/// is checked to be of the platform's form before it becomes a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route<'a> {
    /// `GET /gateway/bot`: where the Gateway is, and how many shards.
    GatewayBot,
    /// `PUT /applications/{app}/commands` (or a server's).
    Commands { application: &'a str, guild: Option<&'a str> },
    /// `GET /applications/{app}/commands` (or a server's): what is registered.
    RegisteredCommands { application: &'a str, guild: Option<&'a str> },
    /// `POST /interactions/{id}/{token}/callback`: the first answer to an
    /// interaction that came over the Gateway.
    Callback { interaction: &'a str, token: &'a str },
    /// `PATCH /webhooks/{app}/{token}/messages/@original`: the deferred answer.
    EditOriginal { application: &'a str, token: &'a str },
    /// `POST /webhooks/{app}/{token}`: a follow-up.
    FollowUp { application: &'a str, token: &'a str },
    /// `DELETE /webhooks/{app}/{token}/messages/@original`: a deferred
    /// answer ("thinking…") taken back, for a private message to follow.
    DeleteOriginal { application: &'a str, token: &'a str },
    /// `POST /channels/{channel}/messages`.
    ChannelMessage { channel: &'a str },
    /// `PATCH /channels/{channel}/messages/{message}`: the message a
    /// component is on, edited with the bot token (when the interaction's
    /// own answer is another message).
    EditChannelMessage { channel: &'a str, message: &'a str },
}

impl<'a> Route<'a> {
    /// The route a request for `method` and `path` (below the API's base)
    /// is: the inverse of [`Route::method`] and the path, for a stand-in of
    /// the platform (`blkc play`) reading what serve sent.
    pub fn parse(method: &str, path: &'a str) -> Option<Route<'a>> {
        let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        Some(match (method, parts.as_slice()) {
            ("GET", ["gateway", "bot"]) => Route::GatewayBot,
            ("PUT", ["applications", application, "commands"]) => Route::Commands { application, guild: None },
            ("PUT", ["applications", application, "guilds", guild, "commands"]) => {
                Route::Commands { application, guild: Some(guild) }
            }
            ("GET", ["applications", application, "commands"]) => {
                Route::RegisteredCommands { application, guild: None }
            }
            ("GET", ["applications", application, "guilds", guild, "commands"]) => {
                Route::RegisteredCommands { application, guild: Some(guild) }
            }
            ("POST", ["interactions", interaction, token, "callback"]) => Route::Callback { interaction, token },
            ("PATCH", ["webhooks", application, token, "messages", "@original"]) => {
                Route::EditOriginal { application, token }
            }
            ("DELETE", ["webhooks", application, token, "messages", "@original"]) => {
                Route::DeleteOriginal { application, token }
            }
            ("POST", ["webhooks", application, token]) => Route::FollowUp { application, token },
            ("POST", ["channels", channel, "messages"]) => Route::ChannelMessage { channel },
            ("PATCH", ["channels", channel, "messages", message]) => Route::EditChannelMessage { channel, message },
            _ => return None,
        })
    }
}

impl Route<'_> {
    pub fn method(&self) -> &'static str {
        match self {
            Route::GatewayBot | Route::RegisteredCommands { .. } => "GET",
            Route::Commands { .. } => "PUT",
            Route::EditOriginal { .. } | Route::EditChannelMessage { .. } => "PATCH",
            Route::DeleteOriginal { .. } => "DELETE",
            Route::FollowUp { .. } | Route::ChannelMessage { .. } | Route::Callback { .. } => "POST",
        }
    }

    /// Whether the route takes the bot token (an interaction's webhook is
    /// its own credential).
    fn with_token(&self) -> bool {
        !matches!(
            self,
            Route::EditOriginal { .. } | Route::DeleteOriginal { .. } | Route::FollowUp { .. } | Route::Callback { .. }
        )
    }

    fn is_webhook(&self) -> bool {
        !self.with_token()
    }

    /// The path, or why a part of it is not of the platform's form.
    fn path(&self) -> Result<String, PlatformError> {
        let id = |what: &'static str, v: &str| if is_snowflake(v) { Ok(()) } else { Err(PlatformError::NotAnId(what)) };
        let token = |v: &str| if is_interaction_token(v) { Ok(()) } else { Err(PlatformError::NotAnId("token")) };
        Ok(match *self {
            Route::GatewayBot => "/gateway/bot".to_string(),
            Route::Commands { application, guild } | Route::RegisteredCommands { application, guild } => {
                id("application", application)?;
                match guild {
                    Some(g) => {
                        id("server", g)?;
                        format!("/applications/{application}/guilds/{g}/commands")
                    }
                    None => format!("/applications/{application}/commands"),
                }
            }
            Route::EditOriginal { application, token: t } | Route::DeleteOriginal { application, token: t } => {
                id("application", application)?;
                token(t)?;
                format!("/webhooks/{application}/{t}/messages/@original")
            }
            Route::Callback { interaction, token: t } => {
                id("interaction", interaction)?;
                token(t)?;
                format!("/interactions/{interaction}/{t}/callback")
            }
            Route::FollowUp { application, token: t } => {
                id("application", application)?;
                token(t)?;
                format!("/webhooks/{application}/{t}")
            }
            Route::ChannelMessage { channel } => {
                id("channel", channel)?;
                format!("/channels/{channel}/messages")
            }
            Route::EditChannelMessage { channel, message } => {
                id("channel", channel)?;
                id("message", message)?;
                format!("/channels/{channel}/messages/{message}")
            }
        })
    }

    /// The route as a log may show it: no interaction token.
    pub fn shown(&self) -> String {
        let path = match *self {
            Route::EditOriginal { application, .. } | Route::DeleteOriginal { application, .. } => {
                format!("/webhooks/{application}/[interaction token]/messages/@original")
            }
            Route::FollowUp { application, .. } => format!("/webhooks/{application}/[interaction token]"),
            Route::Callback { interaction, .. } => format!("/interactions/{interaction}/[interaction token]/callback"),
            _ => self.path().unwrap_or_else(|e| e.to_string()),
        };
        format!("{} {path}", self.method())
    }
}

/// Why a call to the platform got no answer.
#[derive(Debug, Clone, PartialEq)]
pub enum PlatformError {
    /// The API base and path make no URL.
    BadUrl(String),
    /// The route needs the bot token, and there is none.
    NoToken,
    /// An id or token that would stand in the path is not of the
    /// platform's form (it came from outside: never made a path).
    NotAnId(&'static str),
    /// The rate limit's turn is past the deadline.
    RateLimited(Wait),
    /// No answer: connecting, TLS, a time-out, a dropped connection.
    Transport { route: String, error: String },
    /// The answer's body could not be read (or is over 1 MiB).
    Body(String),
    /// The platform answered, and refused.
    Refused(Refusal),
}

/// The platform's refusal of a request: its HTTP status, its JSON error
/// code when it gave one (`50013`: Missing Permissions), and its message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub status: u16,
    pub code: Option<u64>,
    /// Safe to show on one line.
    pub message: String,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.code {
            Some(code) => write!(f, "({}, code {code}): {}", self.status, self.message),
            None => write!(f, "({}): {}", self.status, self.message),
        }
    }
}

impl std::fmt::Display for PlatformError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PlatformError::BadUrl(e) => write!(f, "bad platform URL: {e}"),
            PlatformError::NoToken => f.write_str("no bot token (set BLKC_BOT_TOKEN or --bot-token-file)"),
            PlatformError::NotAnId(what) => write!(f, "the {what} is not of the platform's form; nothing was sent"),
            PlatformError::RateLimited(wait) => wait.fmt(f),
            PlatformError::Transport { route, error } => write!(f, "{route}: {error}"),
            PlatformError::Body(e) => write!(f, "the platform's answer could not be read: {e}"),
            PlatformError::Refused(refusal) => write!(f, "the platform refused it {refusal}"),
        }
    }
}

impl std::error::Error for PlatformError {}

/// How the platform answered.
#[derive(Debug, Clone)]
pub struct Answer {
    pub status: u16,
    pub body: Vec<u8>,
    /// "Unknown webhook" answers tried again before this one.
    pub unknown_webhook: u8,
}

impl Answer {
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The platform's `message` of an error, made safe to show on one line.
    pub fn message(&self) -> String {
        let said: Option<String> = serde_json::from_slice::<ErrorBody>(&self.body).ok().and_then(|e| e.message);
        let text = said.unwrap_or_else(|| String::from_utf8_lossy(&self.body[..self.body.len().min(300)]).into_owned());
        crate::base::display::one_line(&text)
    }

    /// The answer when the platform took the request; its refusal when not.
    pub fn refusal(&self) -> Result<(), Refusal> {
        if self.is_success() {
            return Ok(());
        }
        let code = serde_json::from_slice::<ErrorBody>(&self.body).ok().and_then(|e| e.code);
        Err(Refusal { status: self.status, code, message: self.message() })
    }
}

/// The platform's API at `base` (`https://discord.com/api`, or `--platform`).
#[derive(Debug, Clone)]
pub struct Platform {
    agent: ureq::Agent,
    base: String,
    token: Option<String>,
    pub limiter: Arc<RateLimiter>,
}

/// How often an "unknown webhook" is tried again, and how far apart: the
/// platform may not know an interaction's webhook until the answer on the
/// HTTP exchange has reached it.
const WEBHOOK_RETRIES: u8 = 3;
const WEBHOOK_RETRY_WAIT: Duration = Duration::from_millis(300);

impl Platform {
    pub fn new(base: &str, token: Option<String>, limiter: Arc<RateLimiter>) -> Platform {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .timeout_connect(Some(Duration::from_secs(10)))
            .timeout_global(Some(Duration::from_secs(30)))
            .user_agent(USER_AGENT)
            .build();
        Platform { agent: config.into(), base: base.trim_end_matches('/').to_string(), token, limiter }
    }

    pub fn base(&self) -> &str {
        &self.base
    }

    /// Where the Gateway is and how many shards the platform recommends.
    pub fn gateway_bot(&self, deadline: Instant) -> Result<(Answer, Option<GatewayBot>), PlatformError> {
        let answer = self.send(Route::GatewayBot, None::<&()>, deadline)?;
        let info = answer.is_success().then(|| serde_json::from_slice(&answer.body).ok()).flatten();
        Ok((answer, info))
    }

    /// Sends `route` with a JSON body. Waits for the rate limits, and once
    /// for a 429, as long as `deadline` allows; a webhook the platform does
    /// not know yet is tried again a few times.
    pub fn send<B: Serialize + ?Sized>(
        &self,
        route: Route<'_>,
        body: Option<&B>,
        deadline: Instant,
    ) -> Result<Answer, PlatformError> {
        let body = match body {
            Some(b) => Some(serde_json::to_vec(b).map_err(|e| PlatformError::Body(e.to_string()))?),
            None => None,
        };
        self.exchange(route, body.as_deref().map(|b| (b, "application/json")), deadline)
    }

    /// Sends `route` with a message's body and its files, as the platform
    /// takes an upload (`message::with_files`: multipart, the body as
    /// `payload_json`). Waits and tries again as [`Platform::send`] does.
    pub fn send_files<B: Serialize + ?Sized>(
        &self,
        route: Route<'_>,
        body: &B,
        files: &[crate::discord::outgoing::File],
        deadline: Instant,
    ) -> Result<Answer, PlatformError> {
        let json = serde_json::to_vec(body).map_err(|e| PlatformError::Body(e.to_string()))?;
        let (bytes, content_type) = crate::discord::message::with_files(&json, files).map_err(PlatformError::Body)?;
        self.exchange(route, Some((&bytes, &content_type)), deadline)
    }

    /// One request with its body and type; a webhook the platform does not
    /// know yet is tried again a few times.
    fn exchange(
        &self,
        route: Route<'_>,
        body: Option<(&[u8], &str)>,
        deadline: Instant,
    ) -> Result<Answer, PlatformError> {
        let mut answer = self.call(route, body, deadline)?;
        while route.is_webhook() && answer.status == 404 && answer.unknown_webhook < WEBHOOK_RETRIES {
            let tried = answer.unknown_webhook + 1;
            std::thread::sleep(WEBHOOK_RETRY_WAIT);
            answer = self.call(route, body, deadline)?;
            answer.unknown_webhook = tried;
        }
        Ok(answer)
    }

    fn call(&self, route: Route<'_>, body: Option<(&[u8], &str)>, deadline: Instant) -> Result<Answer, PlatformError> {
        let _waiting = crate::base::waiting::Blocking::start();
        let method = route.method();
        let url = format!("{}{}", self.base, route.path()?);
        let parsed = url::Url::parse(&url).map_err(|e| PlatformError::BadUrl(e.to_string()))?;
        let token = match (route.with_token(), &self.token) {
            (true, Some(t)) => Some(t.as_str()),
            (true, None) => return Err(PlatformError::NoToken),
            (false, _) => None,
        };
        let transport = |e: String| PlatformError::Transport { route: route.shown(), error: e };
        let attempt = || -> Result<(Answer, Vec<(String, String)>), PlatformError> {
            let mut request = ureq::http::Request::builder().method(method).uri(url.as_str());
            if let Some(t) = token {
                request = request.header("Authorization", format!("Bot {t}"));
            }
            let sent = match body {
                Some((b, content_type)) => {
                    let request = request.header("Content-Type", content_type).body(b.to_vec());
                    self.agent.run(request.map_err(|e| transport(e.to_string()))?)
                }
                None => self.agent.run(request.body(()).map_err(|e| transport(e.to_string()))?),
            };
            let mut response = sent.map_err(|e| transport(e.to_string()))?;
            let status = response.status().as_u16();
            let headers: Vec<(String, String)> = response
                .headers()
                .iter()
                .map(|(k, v)| (k.as_str().to_string(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
                .collect();
            let body = response
                .body_mut()
                .with_config()
                .limit(1024 * 1024)
                .read_to_vec()
                .map_err(|e| PlatformError::Body(e.to_string()))?;
            Ok((Answer { status, body, unknown_webhook: 0 }, headers))
        };
        fn heard((a, headers): &(Answer, Vec<(String, String)>)) -> Heard<'_> {
            Heard { status: a.status, headers, body: &a.body }
        }
        match ratelimit::send(Some(&*self.limiter), (method, &parsed), deadline, attempt, heard) {
            Ok((answer, _)) => Ok(answer),
            Err(Unsent::Wait(wait)) => Err(PlatformError::RateLimited(wait)),
            Err(Unsent::Failed(e)) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_route_reads_back_from_its_method_and_path() {
        let (app, token) = ("1400000000000000000", "play-1-abcdef");
        let routes = [
            Route::GatewayBot,
            Route::Commands { application: app, guild: None },
            Route::Commands { application: app, guild: Some("777") },
            Route::RegisteredCommands { application: app, guild: None },
            Route::RegisteredCommands { application: app, guild: Some("777") },
            Route::Callback { interaction: "9101", token },
            Route::EditOriginal { application: app, token },
            Route::FollowUp { application: app, token },
            Route::DeleteOriginal { application: app, token },
            Route::ChannelMessage { channel: "888" },
            Route::EditChannelMessage { channel: "888", message: "5" },
        ];
        for route in routes {
            let path = route.path().unwrap();
            assert_eq!(Route::parse(route.method(), &path), Some(route), "{path}");
        }
        assert_eq!(Route::parse("GET", "/channels/888/messages"), None);
    }

    #[test]
    fn a_route_holds_only_ids_and_tokens_of_the_platform_s_form_and_shows_no_token() {
        let edit = Route::EditOriginal { application: "1", token: "secret-token" };
        assert_eq!(edit.path().unwrap(), "/webhooks/1/secret-token/messages/@original");
        assert_eq!(edit.shown(), "PATCH /webhooks/1/[interaction token]/messages/@original");
        assert_eq!(
            Route::ChannelMessage { channel: "645/../../guilds/77/bans/1?x=" }.path(),
            Err(PlatformError::NotAnId("channel"))
        );
        assert_eq!(Route::FollowUp { application: "1", token: "a/b" }.path(), Err(PlatformError::NotAnId("token")));
        assert_eq!(
            Route::Commands { application: "1", guild: Some("2") }.path().unwrap(),
            "/applications/1/guilds/2/commands"
        );
        assert!(!edit.with_token() && Route::ChannelMessage { channel: "1" }.with_token());
    }
}
