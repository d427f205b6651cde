//! What can be known of a URL template before any variable is filled.

use crate::language::ast::{Part, Template};

/// What a URL template says before variables are filled.
#[derive(Debug, PartialEq)]
pub enum UrlShape {
    /// Scheme and host are written out; variables only come after them.
    Known { scheme: String, host: String, port: Option<u16> },
    /// The scheme or host comes from a variable: known only at run time.
    Dynamic,
    /// Cannot be an absolute http(s) URL, whatever the variables hold.
    Invalid { reason: String, help: String },
}

/// Whether a value stands in the URL's scheme or authority: the scheme,
/// host or port come (or may come) from it. Asked of `urls::region`, as the
/// runner asks it of the URL being filled in.
pub fn host_from_value(url: &Template) -> bool {
    let mut before = String::new();
    for part in &url.parts {
        match part {
            Part::Lit(s, _) => before.push_str(s),
            Part::Var(_) | Part::Secret(_) => {
                if crate::base::urls::region(&before).chooses_destination() {
                    return true;
                }
                before.push('x');
            }
        }
    }
    false
}

/// Looks at a URL template: variables and slots stand in as `x`, and the
/// scheme and authority must be literal for the host to be known.
pub fn shape(url: &Template) -> UrlShape {
    let Some(Part::Lit(first, _)) = url.parts.first() else {
        return if url.parts.is_empty() {
            UrlShape::Invalid {
                reason: "the URL is empty".into(),
                help: "write the address of the target, like `https://api.example.com/v1/items`".into(),
            }
        } else {
            UrlShape::Dynamic
        };
    };
    let Some(scheme_end) = first.find("://") else {
        let looks_like_scheme = first.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
        if url.parts.len() > 1 && looks_like_scheme {
            // `{scheme}://…` style: the scheme is filled at run time.
            return UrlShape::Dynamic;
        }
        let with_scheme = format!("https://{first}");
        return UrlShape::Invalid {
            reason: "the URL has no `http://` or `https://` scheme".into(),
            help: format!("write the full address, like `{with_scheme}`"),
        };
    };
    let scheme = first[..scheme_end].to_ascii_lowercase();
    if !crate::base::urls::is_http(&scheme) {
        return UrlShape::Invalid {
            reason: format!("`{scheme}` is not an HTTP scheme"),
            help: "API blocks send HTTP requests: start the URL with `https://` (or `http://`)".into(),
        };
    }
    if host_from_value(url) {
        return UrlShape::Dynamic;
    }
    let mut text = String::with_capacity(url.span.len());
    for part in &url.parts {
        match part {
            Part::Lit(s, _) => text.push_str(s),
            Part::Var(_) | Part::Secret(_) => text.push('x'),
        }
    }
    match ::url::Url::parse(&text) {
        Ok(parsed) => match parsed.host_str() {
            Some(host) if !host.is_empty() => {
                UrlShape::Known { scheme, host: host.to_ascii_lowercase(), port: parsed.port() }
            }
            _ => UrlShape::Invalid {
                reason: "the URL has no host".into(),
                help: "write the host after the scheme, like `https://api.example.com/`".into(),
            },
        },
        Err(e) => UrlShape::Invalid {
            reason: format!("the URL cannot be parsed: {e}"),
            help: "write an absolute address, like `https://api.example.com/v1/items`".into(),
        },
    }
}

/// The length the URL has with every variable empty, parameters included,
/// as it would be sent (parameters percent-encoded).
pub fn literal_length(url: &Template, params: &[crate::language::ast::Pair]) -> usize {
    let literal = |t: &Template| -> String {
        t.parts
            .iter()
            .filter_map(|p| match p {
                Part::Lit(s, _) => Some(s.as_str()),
                _ => None,
            })
            .collect()
    };
    let mut len = literal(url).len();
    let literals: Vec<(&str, String)> = params.iter().map(|p| (p.key.name.as_str(), literal(&p.value))).collect();
    len += crate::base::urls::params_length(literals.iter().map(|(k, v)| (*k, v.as_str())));
    len
}
