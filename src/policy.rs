//! Where credentials may go: the one destination policy.
//!
//! `blkc check` applies it to a URL as written (when its scheme, host and
//! port are written out), and the runner applies the same functions to the
//! URL as sent and after every redirect, so a file that checks clean is
//! never refused at run time for a reason that was visible in the file.

use url::Url;

use crate::vocab::Method;

/// The chat platform's API base: the one place `{bot_token}` may be sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Platform {
    pub scheme: String,
    pub host: String,
    /// The port written in the URL, if any (the scheme's default is left out).
    pub port: Option<u16>,
}

impl Platform {
    /// An absolute http(s) URL with a host, or nothing.
    pub fn parse(text: &str) -> Option<Platform> {
        let url = Url::parse(text).ok()?;
        if !matches!(url.scheme(), "http" | "https") {
            return None;
        }
        Some(Platform {
            scheme: url.scheme().to_string(),
            host: url.host_str()?.to_ascii_lowercase(),
            port: url.port(),
        })
    }

    pub fn default_platform() -> Platform {
        Platform::parse(crate::vocab::DEFAULT_PLATFORM).expect("the default platform URL is valid")
    }

    /// `https://discord.com`, for messages.
    pub fn origin(&self) -> String {
        match self.port {
            Some(p) => format!("{}://{}:{p}", self.scheme, self.host),
            None => format!("{}://{}", self.scheme, self.host),
        }
    }

    fn destination(&self) -> Destination {
        Destination::new(&self.scheme, &self.host, self.port)
    }
}

/// Where a request goes: scheme, host and the port it connects to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Destination {
    pub scheme: String,
    /// Lower-case; an IPv6 address without its brackets.
    pub host: String,
    pub port: u16,
}

impl Destination {
    /// `port` is the one written in the URL; without it, the scheme's default.
    pub fn new(scheme: &str, host: &str, port: Option<u16>) -> Destination {
        let scheme = scheme.to_ascii_lowercase();
        let default = if scheme == "https" { 443 } else { 80 };
        let host = host.trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase();
        Destination { port: port.unwrap_or(default), scheme, host }
    }

    pub fn of(url: &Url) -> Destination {
        Destination::new(url.scheme(), url.host_str().unwrap_or_default(), url.port())
    }

    /// This machine: `localhost` or a loopback address.
    pub fn is_loopback(&self) -> bool {
        self.host == "localhost" || self.host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
    }
}

/// Scheme, host and port alike: what "the same server" means for
/// credentials and redirects.
pub fn same_origin(a: &Url, b: &Url) -> bool {
    Destination::of(a) == Destination::of(b)
}

/// Why the bot token may not go to a destination.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenRefusal {
    /// Plain http to another machine: anyone on the way could read it.
    Plaintext { scheme: String, host: String },
    /// Not the chat platform's API.
    NotPlatform { host: String, platform: String },
}

impl TokenRefusal {
    /// "over http to `example.com`", to follow "would send the bot token".
    pub fn describe(&self) -> String {
        match self {
            TokenRefusal::Plaintext { scheme, host } => format!("over {scheme} to `{host}`, unencrypted"),
            TokenRefusal::NotPlatform { host, platform } => {
                format!("to `{host}`, which is not the platform's API (`{platform}`)")
            }
        }
    }

    pub fn help(&self) -> String {
        match self {
            TokenRefusal::Plaintext { .. } => {
                "the token goes only over https (plain http only to this machine): write `https://`".to_string()
            }
            TokenRefusal::NotPlatform { platform, .. } => format!(
                "`{{bot_token}}` is only for the chat platform's API ({platform}); other APIs take their own key \
                 in a `<SECRET>` slot; if this really must be sent, add `allow bot_token` to the block"
            ),
        }
    }
}

/// Whether the bot token may be sent to `to`: over https (plain http only
/// to this machine), and to the platform's host and port unless the block
/// says `allow bot_token`. Applies to every hop: a request that carries
/// the token follows no redirect ([`follows_redirects`]).
pub fn token_destination(to: &Destination, platform: &Platform, allow_bot_token: bool) -> Result<(), TokenRefusal> {
    if to.scheme != "https" && !to.is_loopback() {
        return Err(TokenRefusal::Plaintext { scheme: to.scheme.clone(), host: to.host.clone() });
    }
    let home = platform.destination();
    if !allow_bot_token && (to.host != home.host || to.port != home.port) {
        return Err(TokenRefusal::NotPlatform { host: to.host.clone(), platform: platform.origin() });
    }
    Ok(())
}

/// Where in a request a value goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    Url,
    Param,
    Header,
    Body,
}

impl Place {
    /// "in the URL", "in a header".
    pub fn words(self) -> &'static str {
        match self {
            Place::Url => "in the URL",
            Place::Param => "in a URL parameter",
            Place::Header => "in a header",
            Place::Body => "in the body",
        }
    }
}

/// The bot token goes in a header: URLs and bodies end up in logs and
/// caches. `allow bot_token` lifts this.
pub fn token_may_go_in(place: Place, allow_bot_token: bool) -> bool {
    place == Place::Header || allow_bot_token
}

/// Headers whose name says they carry a credential, whatever their value:
/// never forwarded to another origin, and a literal value in one is
/// suspected of being a key written in the file.
pub fn is_credential_header(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    matches!(n.as_str(), "authorization" | "proxy-authorization" | "cookie")
        || ["token", "key", "secret", "password", "auth", "session"].iter().any(|w| n.contains(w))
}

/// Whether a header goes on to another origin after a redirect: not when
/// its value holds a secret slot or the bot token, nor when its name says
/// it is a credential.
pub fn forwarded_across_origins(name: &str, holds_secret: bool) -> bool {
    !holds_secret && !is_credential_header(name)
}

/// A request that carries the bot token follows no redirect: its response
/// is the redirect itself.
pub fn follows_redirects(carries_token: bool) -> bool {
    !carries_token
}

/// The method after a redirect with `status`: 303 turns any method into
/// GET, and 301 and 302 turn POST into GET (as browsers do); the body goes
/// with the change. `None` keeps the method and the body.
pub fn redirected_method(status: u16, method: Method) -> Option<Method> {
    (status == 303 || (matches!(status, 301 | 302) && method == Method::POST)).then_some(Method::GET)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn to(url: &str) -> Destination {
        Destination::of(&Url::parse(url).unwrap())
    }

    #[test]
    fn the_token_goes_over_https_to_the_platform_only() {
        let discord = Platform::default_platform();
        assert_eq!(token_destination(&to("https://discord.com/api/v10/users/@me"), &discord, false), Ok(()));
        assert_eq!(token_destination(&to("https://DISCORD.com:443/api"), &discord, false), Ok(()));
        assert!(matches!(
            token_destination(&to("http://discord.com/api/v10/users/@me"), &discord, false),
            Err(TokenRefusal::Plaintext { .. })
        ));
        assert!(matches!(
            token_destination(&to("https://discord.com:8443/api"), &discord, false),
            Err(TokenRefusal::NotPlatform { .. })
        ));
        assert!(matches!(
            token_destination(&to("https://evil.example/api"), &discord, false),
            Err(TokenRefusal::NotPlatform { .. })
        ));
        // `allow bot_token` lifts the host rule, never the https rule.
        assert_eq!(token_destination(&to("https://evil.example/api"), &discord, true), Ok(()));
        assert!(token_destination(&to("http://evil.example/api"), &discord, true).is_err());
        let local = Platform::parse("http://127.0.0.1:8080/api").unwrap();
        assert_eq!(token_destination(&to("http://127.0.0.1:8080/api/x"), &local, false), Ok(()));
        assert!(token_destination(&to("http://127.0.0.1:8081/api/x"), &local, false).is_err());
        assert_eq!(token_destination(&to("http://[::1]:9/x"), &local, true), Ok(()));
    }

    #[test]
    fn credentials_stay_with_their_origin() {
        for name in ["Authorization", "cookie", "X-Api-Key", "X-Auth-Token", "Session-Id"] {
            assert!(!forwarded_across_origins(name, false), "{name}");
        }
        assert!(forwarded_across_origins("Accept", false));
        assert!(!forwarded_across_origins("Accept", true), "a header holding a secret slot");
        let a = Url::parse("https://a.example/x").unwrap();
        assert!(same_origin(&a, &Url::parse("https://A.example:443/y").unwrap()));
        assert!(!same_origin(&a, &Url::parse("http://a.example/x").unwrap()));
        assert!(!same_origin(&a, &Url::parse("https://a.example:444/x").unwrap()));
    }
}
