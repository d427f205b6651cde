//! Following a block's pages (`pages { … }`): where a page's items are and
//! where the next page is. Pure: the runner sends each page.

use url::Url;

use super::render::{self, Resolved, Response};
use crate::base::data::Data;
use crate::base::urls::Destination;
use crate::language::plan::{Next, Path};

/// The items of a page: the list at `items`, or why there is none.
pub fn items(response: &Response, items: &Path) -> Result<Vec<Data>, String> {
    match render::resolve(Some(response), items) {
        Ok(Resolved::Json(Data::Array(list))) => Ok(list.to_vec()),
        Ok(Resolved::Json(Data::Null)) | Err(render::Miss::Path(_)) => Ok(Vec::new()),
        Ok(other) => Err(format!("`{}` is not a list ({})", items.text, render::resolved_json(&other))),
        Err(_) => Err(format!("`{}` cannot be read in this response", items.text)),
    }
}

/// Where the next page is, from this page's response, or `None` when this
/// is the last page (no cursor, an empty one, no next URL, no `Link`).
/// A next URL that leaves the first request's origin is refused: what a
/// server answers never changes where a request goes.
pub fn next(response: &Response, next: &Next, url: &Url, origin: &Destination) -> Option<Result<Url, String>> {
    let text = |path: &Path| -> Option<String> {
        let value = render::resolve(Some(response), path).ok()?;
        if matches!(value, Resolved::Json(Data::Null)) {
            return None;
        }
        let mut out = String::new();
        render::push_resolved(&mut out, &value);
        (!out.is_empty() && out != "false").then_some(out)
    };
    let target = match next {
        Next::Cursor { path, param } => return text(path).map(|cursor| Ok(with_param(url, param, &cursor))),
        Next::Url { path } => text(path)?,
        Next::Link => {
            let mut header = response.headers.iter().filter(|(k, _)| k.eq_ignore_ascii_case("link"));
            header.find_map(|(_, v)| next_link(v))?
        }
    };
    Some(match url.join(&target) {
        // A user name and password in it would be sent too: never taken from an answer.
        Ok(u) if !u.username().is_empty() || u.password().is_some() => Err(target),
        Ok(u) if crate::base::urls::is_http(u.scheme()) && Destination::of(&u) == *origin => Ok(u),
        Ok(u) => Err(u.to_string()),
        Err(_) => Err(target),
    })
}

/// `url` with its parameter `name` set to `value` (each earlier one of that
/// name dropped), encoded as every value in a URL is.
pub fn with_param(url: &Url, name: &str, value: &str) -> Url {
    let mut url = url.clone();
    let kept: Vec<&str> = url
        .query()
        .unwrap_or_default()
        .split('&')
        .filter(|pair| !pair.is_empty())
        .filter(|pair| {
            let key = pair.split('=').next().unwrap_or_default();
            percent_encoding::percent_decode_str(key).decode_utf8_lossy() != name
        })
        .collect();
    let mut query = kept.join("&");
    if !query.is_empty() {
        query.push('&');
    }
    query.push_str(&crate::base::urls::encode_value(name));
    query.push('=');
    query.push_str(&crate::base::urls::encode_value(value));
    url.set_query(Some(&query));
    url
}

/// The target of a `Link` header's link whose `rel` holds `next` (RFC 8288:
/// `<…>; rel="next", <…>; rel="last"`; `rel` a space-separated list, in
/// any case).
pub fn next_link(header: &str) -> Option<String> {
    let mut rest = header;
    loop {
        let open = rest.find('<')?;
        let close = open + rest[open..].find('>')?;
        let target = &rest[open + 1..close];
        // The link's parameters run to the next `,` outside a quoted string.
        let params_start = close + 1;
        let mut quoted = false;
        let mut end = rest.len();
        for (i, c) in rest[params_start..].char_indices() {
            match c {
                '"' => quoted = !quoted,
                ',' if !quoted => {
                    end = params_start + i;
                    break;
                }
                _ => {}
            }
        }
        let is_next = unquoted_split(&rest[params_start..end], ';').into_iter().any(|param| {
            let Some((key, value)) = param.split_once('=') else { return false };
            key.trim().eq_ignore_ascii_case("rel")
                && value.trim().trim_matches('"').split_ascii_whitespace().any(|r| r.eq_ignore_ascii_case("next"))
        });
        if is_next {
            return Some(target.trim().to_string());
        }
        rest = rest.get(end + 1..)?;
    }
}

/// `text` split at each `sep` outside a quoted string.
fn unquoted_split(text: &str, sep: char) -> Vec<&str> {
    let (mut out, mut start, mut quoted) = (Vec::new(), 0, false);
    for (i, c) in text.char_indices() {
        if c == '"' {
            quoted = !quoted;
        } else if c == sep && !quoted {
            out.push(&text[start..i]);
            start = i + c.len_utf8();
        }
    }
    out.push(&text[start..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_next_link_is_found_among_others_in_any_order_and_case() {
        let h =
            r#"<https://api.example.com/i?page=1>; rel="first", <https://api.example.com/i?page=3>; rel="Next last""#;
        assert_eq!(next_link(h).as_deref(), Some("https://api.example.com/i?page=3"));
        assert_eq!(next_link(r#"</p/2>; title="a, b; rel=next"; rel=prev, </p/9>; rel=next"#).as_deref(), Some("/p/9"));
        assert_eq!(next_link(r#"<https://x/1>; rel="prev""#), None);
        assert_eq!(next_link("garbage"), None);
    }

    #[test]
    fn a_cursor_replaces_its_parameter_and_is_encoded() {
        let url = Url::parse("https://api.example.com/i?per_page=5&cursor=old&x=1").unwrap();
        assert_eq!(
            with_param(&url, "cursor", "a b&c").as_str(),
            "https://api.example.com/i?per_page=5&x=1&cursor=a%20b%26c"
        );
        let bare = Url::parse("https://api.example.com/i").unwrap();
        assert_eq!(with_param(&bare, "page", "2").as_str(), "https://api.example.com/i?page=2");
    }
}
