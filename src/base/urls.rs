//! The one definition of a URL's layout: which region (scheme, authority,
//! path, query, fragment) a place in a URL belongs to, how a value is
//! encoded there, and which values choose where a request goes.
//!
//! The checker asks it of a URL as written (variables stand in as
//! placeholders), the runner of a URL as it is filled in, value by value;
//! both ask the same function, so they cannot disagree about where the
//! authority ends or whether a value is in the host. A value in the path,
//! the query or the fragment is percent-encoded so that it can never change
//! the URL's structure; a value in the scheme or authority is written as is
//! and must pass `policy::host_value_ok` (or `scheme_value_ok`) at run time.

use std::ops::Range;

use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

/// A region of a URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Region {
    Scheme,
    /// Userinfo and host: what follows `://`, up to the first `/`, `?` or
    /// `#` (and the port's `:`).
    Authority,
    /// After the host's `:`, in the authority.
    Port,
    Path,
    Query,
    Fragment,
}

impl Region {
    /// Whether a value here chooses where the request goes (its scheme,
    /// host or port): the one test of "a value steers the destination".
    pub fn chooses_destination(self) -> bool {
        matches!(self, Region::Scheme | Region::Authority | Region::Port)
    }
}

/// The region that text written after `before` falls in, `before` being
/// the URL so far (as written, or as filled in).
pub fn region(before: &str) -> Region {
    let Some(i) = before.find("://") else {
        // No `://` yet: the scheme, while only scheme characters came.
        return if before.bytes().all(is_scheme_byte) { Region::Scheme } else { Region::Path };
    };
    let rest = &before[i + 3..];
    if rest.contains('#') {
        Region::Fragment
    } else if rest.contains('?') {
        Region::Query
    } else if rest.contains('/') {
        Region::Path
    } else {
        // `user:pass@` is userinfo, `[::1]` an address: the port's `:` is
        // the one after both.
        let host = rest.rsplit('@').next().unwrap_or(rest);
        let after_address = match host.rfind(']') {
            Some(i) => &host[i + 1..],
            None if host.starts_with('[') => "",
            None => host,
        };
        if after_address.contains(':') {
            Region::Port
        } else {
            Region::Authority
        }
    }
}

fn is_scheme_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.')
}

/// The scheme and what follows `://`, if the text has a scheme.
pub fn split_scheme(url: &str) -> Option<(&str, &str)> {
    let (scheme, rest) = url.split_once("://")?;
    (!scheme.is_empty() && scheme.bytes().all(is_scheme_byte)).then_some((scheme, rest))
}

/// The authority of a URL (what follows `://`, up to the first `/`, `?` or
/// `#`), if it has a scheme.
pub fn authority(url: &str) -> Option<&str> {
    let (_, rest) = split_scheme(url)?;
    Some(&rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())])
}

/// The byte range of the path (from its first `/`, without the query or
/// fragment), if the URL has a scheme and a path.
pub fn path_range(url: &str) -> Option<Range<usize>> {
    let (scheme, rest) = split_scheme(url)?;
    let after = scheme.len() + 3;
    let start = after + rest.find(['/', '?', '#']).filter(|&j| rest.as_bytes()[j] == b'/')?;
    let end = url[start..].find(['?', '#']).map_or(url.len(), |j| start + j);
    Some(start..end)
}

/// The schemes a request block sends with.
pub fn is_http(scheme: &str) -> bool {
    scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https")
}

/// The port a scheme connects to when the URL names none.
pub fn default_port(scheme: &str) -> u16 {
    if scheme.eq_ignore_ascii_case("https") {
        443
    } else {
        80
    }
}

/// RFC 3986's unreserved characters (`A-Z a-z 0-9 - . _ ~`) stay; every
/// other byte is percent-encoded.
const VALUE: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'~');

/// A value written into a path segment, the query or the fragment, whether
/// inside the URL (`/users/{id}`, `?q={x}`) or as a key or value of `params`:
/// the one encoder of values in a URL. A space is `%20`, never `+` (a `+`
/// means a space to a form decoder and a plus to others; `%20` and `%2B`
/// mean the same to both). docs/run.md says why.
pub fn encode_value(value: &str) -> String {
    utf8_percent_encode(value, VALUE).to_string()
}

/// `params` appended to the URL's query (after what the URL already has),
/// each key and value through [`encode_value`].
pub fn append_params<'a>(url: &mut url::Url, params: impl IntoIterator<Item = (&'a str, &'a str)>) {
    let mut query = url.query().unwrap_or_default().to_string();
    let mut any = false;
    for (key, value) in params {
        any = true;
        if !query.is_empty() {
            query.push('&');
        }
        query.push_str(&encode_value(key));
        query.push('=');
        query.push_str(&encode_value(value));
    }
    if any {
        url.set_query(Some(&query));
    }
}

/// A form body (`application/x-www-form-urlencoded`) as the WHATWG URL
/// standard's form encoder writes it (a space as `+`): what an OAuth2 token
/// endpoint and every HTML form reader expects.
pub fn encode_form<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    form_urlencoded::Serializer::new(String::new()).extend_pairs(pairs).finish()
}

/// The length of `params` once appended to a URL (`?` or `&` included).
pub fn params_length<'a>(params: impl IntoIterator<Item = (&'a str, &'a str)>) -> usize {
    params.into_iter().map(|(k, v)| 2 + encode_value(k).len() + encode_value(v).len()).sum()
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
        let default = default_port(&scheme);
        let host = host.trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase();
        Destination { port: port.unwrap_or(default), scheme, host }
    }

    pub fn of(url: &url::Url) -> Destination {
        Destination::new(url.scheme(), url.host_str().unwrap_or_default(), url.port())
    }

    /// This machine: `localhost` or a loopback address.
    pub fn is_loopback(&self) -> bool {
        self.host == "localhost" || self.host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions() {
        assert_eq!(region(""), Region::Scheme);
        assert_eq!(region("https"), Region::Scheme);
        assert_eq!(region("https://"), Region::Authority);
        assert_eq!(region("https://api.example.com:"), Region::Port);
        assert_eq!(region("https://user:pw@api."), Region::Authority);
        assert_eq!(region("https://[::1]:"), Region::Port);
        assert_eq!(region("https://[::"), Region::Authority);
        assert_eq!(region("https://api.example.com/v1/"), Region::Path);
        assert_eq!(region("https://api.example.com/v1?q="), Region::Query);
        assert_eq!(region("https://api.example.com?q="), Region::Query);
        assert_eq!(region("https://api.example.com/a?b#"), Region::Fragment);
        assert_eq!(region("api.example.com/"), Region::Path);
        assert!(Region::Authority.chooses_destination() && !Region::Path.chooses_destination());
    }

    #[test]
    fn parts_of_a_url() {
        assert_eq!(authority("https://u@h:1/p?q#f"), Some("u@h:1"));
        assert_eq!(authority("https://h?q"), Some("h"));
        let url = "https://h/a/b?q=1#f";
        assert_eq!(&url[path_range(url).unwrap()], "/a/b");
        assert_eq!(path_range("https://h?q=/x"), None);
        assert_eq!(default_port("HTTPS"), 443);
        assert_eq!(default_port("http"), 80);
    }

    #[test]
    fn one_encoding_for_query_values() {
        assert_eq!(encode_value("a b+c/d?e&f=g#h"), "a%20b%2Bc%2Fd%3Fe%26f%3Dg%23h");
        assert_eq!(encode_value("é~._-"), "%C3%A9~._-");
        let mut url = url::Url::parse("https://h/p?x=1#frag").unwrap();
        append_params(&mut url, [("q", "a b+c"), ("k y", "")]);
        assert_eq!(url.as_str(), "https://h/p?x=1&q=a%20b%2Bc&k%20y=#frag");
        assert_eq!(params_length([("q", "a b+c"), ("k y", "")]), "?q=a%20b%2Bc&k%20y=".len());
    }
}
