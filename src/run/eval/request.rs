//! Building a request from a plan step: the URL with its parameters, the
//! headers, the JSON body, and the destination policy applied to the URL as
//! it will be sent. Pure: values come through the [`Scope`], nothing is
//! sent, so every case is unit-tested without a network.

use url::Url;

use super::redact::Redactor;
use super::render::{self, Escape, Scope};
use crate::base::urls::Destination;
use crate::base::urls::Region;
use crate::language::plan::{Auth, Body, BodyPart, Method, PartValue, Request};
use crate::language::policy::{self, Platform, TokenRefusal};

#[derive(Debug, Clone)]
pub struct Header {
    pub name: String,
    pub value: String,
    /// Holds a secret slot or the bot token: never sent to another host.
    pub secret: bool,
}

/// A request the runner refuses to send once its variables are filled.
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    /// The URL, filled in, is not an absolute http(s) URL (already redacted).
    NotHttp {
        url: String,
    },
    NotAUrl {
        url: String,
        why: String,
    },
    /// A header value holds a control character once filled.
    HeaderControl {
        name: String,
    },
    /// The bot token may not go where the URL points.
    Token(TokenRefusal),
    /// An object or array would be written into the URL, a parameter or a header.
    Structured {
        place: String,
    },
    /// A GET URL longer than the limit once its values are filled.
    TooLong {
        len: usize,
    },
    /// A header value longer than the limit once its values are filled.
    HeaderTooLong {
        name: String,
        len: usize,
    },
    /// A value would change where the request goes: it is not only a host
    /// name (or a scheme), or the URL carries a user name and password.
    Steered {
        value: String,
        part: &'static str,
    },
    /// A value makes a path segment `.` or `..`.
    DotSegment {
        segment: String,
    },
    /// The `Content-Type` header, filled in, says another kind of body
    /// than the one sent.
    ContentType {
        header: String,
        body: String,
    },
    /// A multipart body's part could not be made.
    Part {
        name: String,
        why: String,
    },
}

/// A request ready to send.
#[derive(Debug, Clone)]
pub struct Built {
    pub method: Method,
    pub url: Url,
    pub headers: Vec<Header>,
    pub body: Option<Vec<u8>>,
    /// The request sends the bot token somewhere: it follows no redirect.
    pub carries_token: bool,
    /// The body holds a secret slot or the bot token: it never goes on to
    /// another origin.
    pub body_secret: bool,
    /// The host came from a value (and the block does not say `allow
    /// private_network`): it may not reach an internal address.
    pub guarded: bool,
    /// `allow private_network`, or `--allow-private-network`: a redirect
    /// to another origin is not guarded either.
    pub allow_private_network: bool,
    /// The whole time it may take, when shorter than the client's time-out
    /// (an autocomplete's run must end by the platform's deadline).
    pub within: Option<std::time::Duration>,
    /// The block's own `timeout`, in place of the client's.
    pub timeout: Option<std::time::Duration>,
}

/// Renders `r` through `scope`. `platform` is where the bot token may go
/// (the file's `platform`, or `--platform`); `allow_private` is
/// `--allow-private-network`; `redactor` keeps secrets out
/// of the URL a refusal quotes.
pub fn build(
    r: &Request,
    scope: &mut dyn Scope,
    platform: Option<&Platform>,
    allow_private: bool,
    redactor: &Redactor,
) -> Result<Built, Refusal> {
    // Rendered in the order of the block's fields, so warnings come in that order.
    let url = url(r, scope, redactor);
    let mut structured = None;
    let mut params = Vec::with_capacity(r.params.len());
    for (k, t) in &r.params {
        let rendered = render::render_field(t, scope);
        if rendered.structured {
            structured.get_or_insert(format!("URL parameter `{k}`"));
        }
        params.push((k.as_str(), rendered.text));
    }
    let headers = headers(r, scope);
    let body = body(r, scope);
    let ((mut url, host_from_value), headers) = (url?, headers?);
    if let Some(place) = structured.or(headers.1) {
        return Err(Refusal::Structured { place });
    }
    let mut headers = headers.0;
    if let Some(auth) = &r.auth {
        headers.push(authorization(auth, scope));
    }
    let body = body?;
    crate::base::urls::append_params(&mut url, params.iter().map(|(k, v)| (*k, v.as_str())));
    if r.method == Method::GET && url.as_str().len() > crate::language::vocab::MAX_GET_URL {
        return Err(Refusal::TooLong { len: url.as_str().len() });
    }
    let body = match body {
        Some((bytes, media_type)) => {
            content_type(&mut headers, media_type)?;
            Some(bytes)
        }
        None => None,
    };
    let carries_token = r.carries_token();
    if carries_token {
        token_destination(&url, platform, r.allow_bot_token).map_err(Refusal::Token)?;
    }
    let body_secret = r.body.as_ref().filter(|_| body.is_some()).is_some_and(|b| {
        let mut secret = false;
        b.each_template(&mut |t| secret |= t.has_secret());
        secret
    });
    let allow_private_network = r.allow_private_network || allow_private;
    let guarded = host_from_value && !allow_private_network;
    Ok(Built {
        method: r.method,
        url,
        headers,
        body,
        carries_token,
        body_secret,
        guarded,
        allow_private_network,
        within: None,
        timeout: None,
    })
}

/// The bot token's destination, by the policy `blkc check` applies to the
/// URL as written.
pub fn token_destination(url: &Url, platform: Option<&Platform>, allow_bot_token: bool) -> Result<(), TokenRefusal> {
    let to = Destination::of(url);
    match platform {
        Some(platform) => policy::token_destination(&to, platform, allow_bot_token),
        None => Err(TokenRefusal::NotPlatform { host: to.host, platform: "no valid platform URL".into() }),
    }
}

/// The URL as it will be sent, and whether its host came from a value.
fn url(r: &Request, scope: &mut dyn Scope, redactor: &Redactor) -> Result<(Url, bool), Refusal> {
    let rendered = render::render_url(&r.url, scope);
    if rendered.structured {
        return Err(Refusal::Structured { place: "URL".to_string() });
    }
    let text = &rendered.text;
    // Values in the scheme or the authority first: what a value wrote there
    // is refused as steering (B314), whatever the URL parser makes of it.
    let mut host_from_value = false;
    for (range, escape) in &rendered.values {
        let value = &text[range.clone()];
        if *escape == Escape::Authority {
            host_from_value = true;
            let (ok, part) = match crate::base::urls::region(&text[..range.start]) {
                // Followed by `://`, the value is the scheme; a value that
                // begins the URL without one (`{base}/list.json`) may also be
                // a bare host name, and the URL is then no URL (B310).
                Region::Scheme if text[range.end..].starts_with("://") => (policy::scheme_value_ok(value), "scheme"),
                Region::Scheme => (policy::scheme_value_ok(value) || policy::host_value_ok(value), "scheme"),
                Region::Port => (policy::port_value_ok(value), "port"),
                _ => (policy::host_value_ok(value), "host"),
            };
            if !ok {
                return Err(Refusal::Steered { value: redactor.redact(value), part });
            }
        }
    }
    let url = match Url::parse(text) {
        Ok(u) if crate::base::urls::is_http(u.scheme()) && u.host_str().is_some() => u,
        Ok(u) => return Err(Refusal::NotHttp { url: redactor.redact(u.as_str()) }),
        Err(e) => return Err(Refusal::NotAUrl { url: redactor.redact(text), why: e.to_string() }),
    };
    if !url.username().is_empty() || url.password().is_some() {
        return Err(Refusal::Steered { value: redactor.redact(url.username()), part: "user name and password" });
    }
    dot_segments(&rendered, redactor)?;
    Ok((url, host_from_value))
}

/// A path segment that a value makes `.` or `..`: the URL parser would
/// resolve it and move the request to another path.
fn dot_segments(rendered: &render::RenderedUrl, redactor: &Redactor) -> Result<(), Refusal> {
    let text = &rendered.text;
    let Some(path) = crate::base::urls::path_range(text) else { return Ok(()) };
    let (path_start, path_end) = (path.start, path.end);
    let mut start = path_start + 1;
    for segment in text[path_start + 1..path_end].split('/') {
        let end = start + segment.len();
        let from_value = rendered.values.iter().any(|(r, _)| r.start < end.max(start + 1) && r.end > start);
        if from_value && policy::is_dot_segment(segment) {
            return Err(Refusal::DotSegment { segment: redactor.redact(segment) });
        }
        start = end + 1;
    }
    Ok(())
}

/// The headers, and the first one an object or array was written into.
fn headers(r: &Request, scope: &mut dyn Scope) -> Result<(Vec<Header>, Option<String>), Refusal> {
    let mut headers = Vec::with_capacity(r.headers.len() + 1);
    let mut structured = None;
    for (name, t) in &r.headers {
        let rendered = render::render_field(t, scope);
        if rendered.value_is_control() {
            return Err(Refusal::HeaderControl { name: name.clone() });
        }
        if rendered.structured {
            structured.get_or_insert(format!("header `{name}`"));
        }
        if rendered.text.len() > crate::language::vocab::MAX_HEADER_VALUE {
            return Err(Refusal::HeaderTooLong { name: name.clone(), len: rendered.text.len() });
        }
        headers.push(Header { name: name.clone(), value: rendered.text, secret: t.has_secret() });
    }
    Ok((headers, structured))
}

/// The body's bytes and its `Content-Type`, encoded as its kind says.
fn body(r: &Request, scope: &mut dyn Scope) -> Result<Option<(Vec<u8>, String)>, Refusal> {
    let Some(b) = r.body.as_ref().filter(|_| r.method.takes_body()) else { return Ok(None) };
    let media_type = b.media_type().to_string();
    Ok(Some(match b {
        // Serializing a JSON value into bytes cannot fail.
        Body::Json { value } => (serde_json::to_vec(&render::render_val(value, scope)).unwrap_or_default(), media_type),
        Body::Form { fields } => {
            let mut pairs = Vec::with_capacity(fields.len());
            for (name, value) in fields {
                let text = form_text(render::render_val(value, scope))
                    .ok_or_else(|| Refusal::Structured { place: format!("form field `{name}`") })?;
                pairs.push((name.as_str(), text));
            }
            let encoded = crate::base::urls::encode_form(pairs.iter().map(|(k, v)| (*k, v.as_str())));
            (encoded.into_bytes(), media_type)
        }
        Body::Text { text, .. } => (render::render_field(text, scope).text.into_bytes(), media_type),
        Body::Multipart { parts } => multipart(parts, scope)?,
    }))
}

/// A form field's value as text: a string as it is, a number or a boolean
/// as JSON writes it, `null` as nothing; an object or an array has none.
fn form_text(value: serde_json::Value) -> Option<String> {
    use serde_json::Value as Json;
    match value {
        Json::String(s) => Some(s),
        Json::Null => Some(String::new()),
        Json::Number(n) => Some(n.to_string()),
        Json::Bool(b) => Some(b.to_string()),
        Json::Array(_) | Json::Object(_) => None,
    }
}

/// A multipart/form-data body (RFC 7578) by the one encoder
/// (`base::multipart`), and its `Content-Type` with the boundary.
fn multipart(parts: &[BodyPart], scope: &mut dyn Scope) -> Result<(Vec<u8>, String), Refusal> {
    use crate::base::multipart::Part;
    let mut owned: Vec<Part> = Vec::with_capacity(parts.len());
    for part in parts {
        let refusal = |why: String| Refusal::Part { name: part.name.clone(), why };
        match &part.value {
            PartValue::Field { text } => {
                let text = render::render_field(text, scope).text;
                owned.push(Part {
                    name: part.name.clone(),
                    filename: None,
                    media_type: None,
                    bytes: text.into_bytes().into(),
                });
            }
            PartValue::File { from, media_type, filename } => {
                let file = scope.file(from).map_err(refusal)?;
                let media_type = media_type.as_ref().map(|t| render::render_field(t, scope).text).or(file.media_type);
                let filename = match (filename, file.name) {
                    (Some(t), _) => render::render_field(t, scope).text,
                    (None, Some(name)) => name,
                    (None, None) => from.default_name(),
                };
                owned.push(Part { name: part.name.clone(), filename: Some(filename), media_type, bytes: file.bytes });
            }
        }
    }
    crate::base::multipart::encode(&owned)
        .map_err(|(n, why)| Refusal::Part { name: owned.get(n).map(|p| p.name.clone()).unwrap_or_default(), why })
}

/// The `Content-Type` the body is sent with: set from the body's kind, or
/// the author's own when it agrees with it (`application/vnd.api+json` for
/// JSON); one that says another kind is refused, never sent.
fn content_type(headers: &mut Vec<Header>, media_type: String) -> Result<(), Refusal> {
    match headers.iter().find(|h| h.name.eq_ignore_ascii_case("content-type")) {
        Some(h) if crate::base::media::agrees(&media_type, &h.value) => Ok(()),
        Some(h) => Err(Refusal::ContentType { header: h.value.clone(), body: media_type }),
        None => {
            headers.push(Header { name: "Content-Type".into(), value: media_type, secret: false });
            Ok(())
        }
    }
}

/// The `Authorization` header of `auth basic` (RFC 7617: user and password
/// joined by `:`, in base64) or `auth bearer` (RFC 6750).
fn authorization(auth: &Auth, scope: &mut dyn Scope) -> Header {
    use base64::Engine as _;
    let (value, secret) = match auth {
        Auth::Basic { user, password } => {
            let joined =
                format!("{}:{}", render::render_field(user, scope).text, render::render_field(password, scope).text);
            let value = format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(joined));
            (value, user.has_secret() || password.has_secret())
        }
        Auth::Bearer { token } => {
            (format!("Bearer {}", render::render_field(token, scope).text), token.has_secret() || token.has_token())
        }
    };
    Header { name: "Authorization".into(), value, secret }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::base::source::Span;
    use crate::language::plan::{Seg, Template, Val};
    use crate::run::eval::render::{Missing, Response};

    #[derive(Default)]
    struct Values {
        vars: HashMap<&'static str, &'static str>,
        token: Option<&'static str>,
        world: crate::base::world::Real,
    }

    impl Scope for Values {
        fn response(&mut self, _: &crate::language::plan::Path) -> Option<&Response> {
            None
        }
        fn variable(&mut self, name: &str, _: Span) -> Option<String> {
            self.vars.get(name).map(|v| v.to_string())
        }
        fn secret(&self, name: &str) -> Option<&str> {
            (name == "KEY").then_some("secret-value-123")
        }
        fn bot_token(&self) -> Option<&str> {
            self.token
        }
        fn world(&mut self) -> &mut dyn crate::base::world::World {
            &mut self.world
        }
        fn missing(&mut self, _: Missing<'_>) -> String {
            String::new()
        }
    }

    fn template(parts: Vec<Seg>) -> Template {
        Template { parts, span: Span::default() }
    }

    fn text(s: &str) -> Seg {
        Seg::Text(s.into())
    }

    fn request(method: Method, url: Vec<Seg>) -> Request {
        Request {
            block: "b".into(),
            method,
            url: template(url),
            params: Vec::new(),
            headers: Vec::new(),
            body: None,
            sample: None,
            allow_bot_token: false,
            allow_private_network: false,
            auth: None,
            timeout_ms: None,
            retry: None,
            failed: None,
            keep_bytes: false,
            more_samples: Vec::new(),
            pages: None,
            cache: None,
            span: Span::default(),
        }
    }

    fn platform() -> Option<&'static Platform> {
        static PLATFORM: std::sync::OnceLock<Platform> = std::sync::OnceLock::new();
        Some(PLATFORM.get_or_init(|| Platform::parse("https://discord.com/api").unwrap()))
    }

    #[test]
    fn values_after_the_host_are_encoded_and_params_appended() {
        let mut r = request(
            Method::GET,
            vec![text("https://api.example.com/users/"), Seg::Var { name: "id".into(), span: Span::default() }],
        );
        r.params = vec![("q".into(), template(vec![Seg::Var { name: "q".into(), span: Span::default() }]))];
        let mut scope = Values { vars: HashMap::from([("id", "a/b?c"), ("q", "x&y=z")]), ..Values::default() };
        let built = build(&r, &mut scope, platform(), false, &Redactor::default()).unwrap();
        assert_eq!(built.url.as_str(), "https://api.example.com/users/a%2Fb%3Fc?q=x%26y%3Dz");
        assert!(built.body.is_none() && built.headers.is_empty() && !built.carries_token);
    }

    #[test]
    fn a_body_is_json_with_its_content_type_and_never_on_get() {
        let mut r = request(Method::POST, vec![text("https://api.example.com/items")]);
        r.body = Some(crate::language::plan::Body::Json {
            value: Val::Object(vec![("n".into(), Val::Json(serde_json::json!(1)))]),
        });
        let built = build(&r, &mut Values::default(), platform(), false, &Redactor::default()).unwrap();
        assert_eq!(built.body.as_deref(), Some(&b"{\"n\":1}"[..]));
        assert_eq!(built.headers[0].name, "Content-Type");
        r.method = Method::GET;
        assert!(build(&r, &mut Values::default(), platform(), false, &Redactor::default()).unwrap().body.is_none());
    }

    #[test]
    fn secret_headers_are_marked_and_control_characters_refused() {
        let mut r = request(Method::GET, vec![text("https://api.example.com/")]);
        r.headers = vec![
            ("X-Key".into(), template(vec![Seg::Secret { name: "KEY".into() }])),
            ("Accept".into(), template(vec![text("application/json")])),
        ];
        let built = build(&r, &mut Values::default(), platform(), false, &Redactor::default()).unwrap();
        assert!(built.headers[0].secret && !built.headers[1].secret);
        assert_eq!(built.headers[0].value, "secret-value-123");
        r.headers = vec![("X-Name".into(), template(vec![Seg::Var { name: "n".into(), span: Span::default() }]))];
        let mut scope = Values { vars: HashMap::from([("n", "a\r\nX-Evil: 1")]), ..Values::default() };
        assert_eq!(
            build(&r, &mut scope, platform(), false, &Redactor::default()).unwrap_err(),
            Refusal::HeaderControl { name: "X-Name".into() }
        );
    }

    #[test]
    fn the_token_goes_only_where_the_policy_allows() {
        let mut r = request(Method::GET, vec![text("https://discord.com/api/v10/users/@me")]);
        r.headers = vec![("Authorization".into(), template(vec![text("Bot "), Seg::BotToken]))];
        let mut scope = Values { token: Some("tok.en.value"), ..Values::default() };
        let built = build(&r, &mut scope, platform(), false, &Redactor::default()).unwrap();
        assert!(built.carries_token);
        r.url = template(vec![text("http://discord.com/api/v10/users/@me")]);
        assert!(matches!(
            build(&r, &mut scope, platform(), false, &Redactor::default()),
            Err(Refusal::Token(TokenRefusal::Plaintext { .. }))
        ));
        r.url = template(vec![text("https://"), Seg::Var { name: "host".into(), span: Span::default() }]);
        scope.vars.insert("host", "evil.example");
        assert!(matches!(
            build(&r, &mut scope, platform(), false, &Redactor::default()),
            Err(Refusal::Token(TokenRefusal::NotPlatform { .. }))
        ));
    }

    #[test]
    fn a_url_that_is_not_http_is_refused_with_its_secrets_hidden() {
        let r = request(Method::GET, vec![text("ftp://files.example.com/"), Seg::Secret { name: "KEY".into() }]);
        let mut redactor = Redactor::default();
        redactor.add("secret-value-123", "<KEY>");
        let refusal = build(&r, &mut Values::default(), platform(), false, &redactor).unwrap_err();
        assert_eq!(refusal, Refusal::NotHttp { url: "ftp://files.example.com/<KEY>".into() });
    }
}
