//! Where credentials may go: the one destination policy.
//!
//! `blkc check` applies it to a URL as written (when its scheme, host and
//! port are written out), and the runner applies the same functions to the
//! URL as sent and after every redirect, so a file that checks clean is
//! never refused at run time for a reason that was visible in the file.

use url::Url;

use crate::base::urls::Destination;
use crate::language::vocab::Method;

/// The chat platform's API base: the one place `{bot_token}` may be sent.
#[derive(Debug, Clone)]
pub struct Platform {
    pub scheme: String,
    pub host: String,
    /// The port written in the URL, if any (the scheme's default is left out).
    pub port: Option<u16>,
    /// The API's path (`/api`), for blkc's own calls; two platforms are
    /// the same by their origin alone.
    pub path: String,
}

impl PartialEq for Platform {
    fn eq(&self, other: &Platform) -> bool {
        (&self.scheme, &self.host, self.port) == (&other.scheme, &other.host, other.port)
    }
}

impl Eq for Platform {}

impl Platform {
    /// An absolute http(s) URL with a host, or nothing.
    pub fn parse(text: &str) -> Option<Platform> {
        let url = Url::parse(text).ok()?;
        if !crate::base::urls::is_http(url.scheme()) {
            return None;
        }
        Some(Platform {
            scheme: url.scheme().to_string(),
            host: url.host_str()?.to_ascii_lowercase(),
            port: url.port(),
            path: url.path().trim_end_matches('/').to_string(),
        })
    }

    /// Discord's own API with no `/vN` segment in the path: its calls
    /// reach the platform's old default version.
    pub fn is_unversioned_discord(&self) -> bool {
        let discord = self.host == "discord.com" || self.host.ends_with(".discord.com");
        let versioned = self
            .path
            .split('/')
            .any(|s| s.strip_prefix('v').is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())));
        discord && !versioned
    }

    pub fn default_platform() -> Platform {
        Platform::parse(crate::discord::options::DEFAULT_PLATFORM).expect("the default platform URL is valid")
    }

    /// The API's base URL, `https://discord.com/api`.
    pub fn base_url(&self) -> String {
        format!("{}{}", self.origin(), self.path)
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
    ["authorization", "proxy-authorization", "cookie"].iter().any(|w| name.eq_ignore_ascii_case(w))
        || ["token", "key", "secret", "password", "auth", "session"].iter().any(|w| contains_ignore_case(name, w))
}

/// Whether `text` holds `word` (lowercase ASCII), in any case: without the
/// lowercased copy a check of every header of a file would allocate.
fn contains_ignore_case(text: &str, word: &str) -> bool {
    text.as_bytes().windows(word.len()).any(|w| w.eq_ignore_ascii_case(word.as_bytes()))
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

/// A value written into a URL's authority may only name a host: letters,
/// digits, `-` and `.` (no `@`, `:`, `/`, brackets or anything else that
/// would make it userinfo, a port, a path or another host).
pub fn host_value_ok(value: &str) -> bool {
    !value.is_empty() && value.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.')
}

/// A value written where the scheme goes may only be `http` or `https`.
pub fn scheme_value_ok(value: &str) -> bool {
    value.eq_ignore_ascii_case("http") || value.eq_ignore_ascii_case("https")
}

/// A port a value may write: digits, 1 to 65535.
pub fn port_value_ok(value: &str) -> bool {
    !value.is_empty()
        && value.len() <= 5
        && value.bytes().all(|b| b.is_ascii_digit())
        && value.parse::<u16>().is_ok_and(|p| p > 0)
}

/// A path segment the URL parser resolves as `.` or `..` (also written
/// `%2e`): a value that makes one would move the request along its path.
pub fn is_dot_segment(segment: &str) -> bool {
    // Decoded twice: a value's own `%2E` arrives here encoded as `%252E`,
    // and a server that decodes once more would resolve it.
    let once = percent_encoding::percent_decode_str(segment).decode_utf8_lossy().to_string();
    let twice = percent_encoding::percent_decode_str(&once).decode_utf8_lossy().to_string();
    [segment, &once, &twice].iter().any(|s| matches!(s.to_ascii_lowercase().replace("%2e", ".").as_str(), "." | ".."))
}

/// Addresses a request whose host came from a value or a redirect may not
/// reach unless the author allows it: every address of the IANA IPv4 and
/// IPv6 special-purpose registries that is not globally reachable (this
/// machine, private and shared networks, link-local, documentation,
/// benchmarking, reserved), unspecified, multicast and broadcast. An IPv6
/// address that embeds an IPv4 one (mapped, compatible, NAT64, 6to4,
/// Teredo) is judged by the IPv4 it embeds. The addresses of this machine's
/// own interfaces are refused too, by the resolver (`eval/http.rs`), which
/// can see them.
pub fn is_internal(ip: std::net::IpAddr) -> bool {
    use std::net::IpAddr;
    match ip {
        IpAddr::V4(v4) => ipv4_internal(v4),
        IpAddr::V6(v6) => match embedded_ipv4(v6) {
            Some(embedded) => embedded.iter().any(|v4| ipv4_internal(*v4)),
            None => ipv6_internal(v6),
        },
    }
}

/// The IPv4 special-purpose registry's ranges that are not globally
/// reachable, with multicast and the reserved 240/4.
fn ipv4_internal(v4: std::net::Ipv4Addr) -> bool {
    let [a, b, c, d] = v4.octets();
    a == 0 // "this network"
        || a == 10
        || a == 127
        || (a == 100 && (64..128).contains(&b)) // shared address space (CGNAT)
        || (a == 169 && b == 254)
        || (a == 172 && (16..32).contains(&b))
        || (a == 192 && b == 0 && c == 0 && d != 9 && d != 10) // IETF protocol assignments (.9 and .10 are global)
        || (a == 192 && b == 0 && c == 2) // TEST-NET-1
        || (a == 192 && b == 88 && c == 99) // 6to4 relay anycast (deprecated)
        || (a == 192 && b == 168)
        || (a == 198 && (b & 0xfe) == 18) // benchmarking, 198.18.0.0/15
        || (a == 198 && b == 51 && c == 100) // TEST-NET-2
        || (a == 203 && b == 0 && c == 113) // TEST-NET-3
        || a >= 224 // multicast, reserved and broadcast
}

/// The IPv6 special-purpose registry's ranges that are not globally
/// reachable (after embedded IPv4 is taken out), with multicast and the
/// deprecated site-local range.
fn ipv6_internal(v6: std::net::Ipv6Addr) -> bool {
    let s = v6.segments();
    let in_range = |prefix: &[u16], bits: u32| {
        let mut left = bits;
        for (i, segment) in s.iter().enumerate() {
            let want = prefix.get(i).copied().unwrap_or(0);
            let take = left.min(16);
            if take == 0 {
                break;
            }
            let mask = if take == 16 { 0xffff } else { !(0xffffu16 >> take) };
            if segment & mask != want & mask {
                return false;
            }
            left -= take;
        }
        true
    };
    // Globally reachable exceptions inside 2001::/23.
    let global_in_2001 = in_range(&[0x2001, 0x1, 0, 0, 0, 0, 0, 0x1], 128) // port control protocol anycast
        || in_range(&[0x2001, 0x1, 0, 0, 0, 0, 0, 0x2], 128) // TURN anycast
        || in_range(&[0x2001, 0x3], 32) // AMT
        || in_range(&[0x2001, 0x4, 0x112], 48) // AS112
        || in_range(&[0x2001, 0x20], 28) // ORCHIDv2
        || in_range(&[0x2001, 0x30], 28); // drone remote ID
    v6.is_loopback()
        || v6.is_unspecified()
        || in_range(&[0x64, 0xff9b, 0x1], 48) // local-use IPv4/IPv6 translation
        || in_range(&[0x100], 64) // discard-only
        || (in_range(&[0x2001], 23) && !global_in_2001) // IETF protocol assignments, benchmarking
        || in_range(&[0x2001, 0xdb8], 32) // documentation
        || in_range(&[0x3fff], 20) // documentation
        || in_range(&[0x5f00], 16) // segment routing SIDs
        || in_range(&[0xfc00], 7) // unique-local
        || in_range(&[0xfe80], 10) // link-local
        || in_range(&[0xfec0], 10) // site-local (deprecated)
        || in_range(&[0xff00], 8) // multicast
}

/// The IPv4 addresses an IPv6 address carries: IPv4-mapped, -compatible,
/// NAT64 (`64:ff9b::/96`), 6to4 (`2002::/16`) and Teredo (`2001::/32`, the
/// server's address and the client's, which Teredo stores inverted).
fn embedded_ipv4(v6: std::net::Ipv6Addr) -> Option<Vec<std::net::Ipv4Addr>> {
    use std::net::Ipv4Addr;
    let s = v6.segments();
    let join = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    if let Some(mapped) = v6.to_ipv4_mapped() {
        return Some(vec![mapped]);
    }
    // `::` and `::1` are themselves, not IPv4-compatible forms.
    if s[..6] == [0; 6] && !v6.is_unspecified() && !v6.is_loopback() {
        return Some(vec![join(s[6], s[7])]);
    }
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return Some(vec![join(s[6], s[7])]);
    }
    if s[0] == 0x2002 {
        return Some(vec![join(s[1], s[2])]);
    }
    if s[0] == 0x2001 && s[1] == 0 {
        return Some(vec![join(s[2], s[3]), join(!s[6], !s[7])]);
    }
    None
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
    fn internal_addresses_in_every_spelling() {
        for internal in [
            "127.0.0.1",
            "127.1.2.3",
            "0.0.0.0",
            "10.0.0.1",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "255.255.255.255",
            "::1",
            "::",
            "fe80::1",
            "fc00::1",
            "fd12::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "64:ff9b::7f00:1",
            "::127.0.0.1",
            "198.18.0.1",
            "198.19.255.254",
            "192.0.0.1",
            "192.0.0.170",
            "192.0.2.1",
            "198.51.100.7",
            "203.0.113.5",
            "240.0.0.1",
            "224.0.0.1",
            "2002:7f00:1::",
            "2002:a00:1::1",
            "2001:0:4136:e378:8000:63bf:80ff:fffe",
            "2001:0:7f00:1::",
            "64:ff9b::a00:1",
            "64:ff9b:1::1",
            "100::1",
            "2001:db8::1",
            "2001:2::1",
            "3fff::1",
            "5f00::1",
            "fec0::1",
            "ff02::1",
            "::ffff:198.18.0.1",
        ] {
            assert!(is_internal(internal.parse().unwrap()), "{internal}");
        }
        for public in [
            "93.184.216.34",
            "1.1.1.1",
            "2606:4700::1111",
            "::ffff:93.184.216.34",
            "172.32.0.1",
            "192.0.0.9",
            "198.20.0.1",
            "2002:5db8:d822::1",
            "64:ff9b::5db8:d822",
            "2001:4860:4860::8888",
            "2001:20::1",
            "2001:0:5db8:d822::a247:27dd",
        ] {
            assert!(!is_internal(public.parse().unwrap()), "{public}");
        }
        // The URL parser reads these as 127.0.0.1 before any address is judged.
        for spelled in ["http://2130706433/", "http://0x7f.1/", "http://017700000001/", "http://127.1/"] {
            let url = Url::parse(spelled).unwrap();
            assert_eq!(url.host_str(), Some("127.0.0.1"), "{spelled}");
        }
    }

    #[test]
    fn values_may_only_name_a_host() {
        for ok in ["api", "eu-west.example.com", "127.0.0.1", "0x7f.1"] {
            assert!(host_value_ok(ok), "{ok}");
        }
        for bad in ["", "@127.0.0.1:9/steal", "a:1", "a/b", "[::1]", "a b", "a?b", "a#b", "a\\b", "user@host"] {
            assert!(!host_value_ok(bad), "{bad}");
        }
        for dots in [".", "..", "%2e%2E", ".%2E", "%2e"] {
            assert!(is_dot_segment(dots), "{dots}");
        }
        assert!(is_dot_segment("%252E%252E"), "a value `%2E%2E`, encoded once more");
        assert!(!is_dot_segment("...") && !is_dot_segment(".a") && !is_dot_segment("a%2E"));
    }

    #[test]
    fn discord_s_api_without_a_version_is_told_apart() {
        let unversioned = |u: &str| Platform::parse(u).unwrap().is_unversioned_discord();
        assert!(unversioned("https://discord.com/api") && unversioned("https://canary.discord.com/api/"));
        assert!(!unversioned("https://discord.com/api/v10") && !unversioned("https://discord.com/api/v9/"));
        assert!(!unversioned("http://127.0.0.1:9000/api"), "a stand-in's path is its own");
        assert!(!unversioned(crate::discord::options::DEFAULT_PLATFORM));
    }

    #[test]
    fn credentials_stay_with_their_origin() {
        for name in ["Authorization", "PROXY-AUTHORIZATION", "cookie", "X-Api-Key", "X-Auth-Token", "Session-Id", "KEY"]
        {
            assert!(!forwarded_across_origins(name, false), "{name}");
        }
        for name in ["Accept", "K", "Ke", "Cookies-Allowed"] {
            assert!(forwarded_across_origins(name, false), "{name}");
        }
        assert!(!forwarded_across_origins("Accept", true), "a header holding a secret slot");
        let a = Url::parse("https://a.example/x").unwrap();
        assert!(same_origin(&a, &Url::parse("https://A.example:443/y").unwrap()));
        assert!(!same_origin(&a, &Url::parse("http://a.example/x").unwrap()));
        assert!(!same_origin(&a, &Url::parse("https://a.example:444/x").unwrap()));
    }
}
