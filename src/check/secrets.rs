//! Rules that keep secrets secret: where `{bot_token}` may go, literals that
//! look like credentials, and secrets where they would be shown.

use super::url::{shape, UrlShape};
use super::Scope;
use crate::ast::visit::{self, Site, Visitor};
use crate::ast::{ApiBlock, Ident, Part, Tree};
use crate::diagnostics::{Code, Diagnostic};
use crate::policy::{self, Destination, Place, TokenRefusal};
use crate::source::Span;

pub fn check_tree(scope: &Scope<'_>, tree: &Tree, out: &mut Vec<Diagnostic>) {
    let mut walk = Walk { scope, out };
    visit::walk_nodes(&mut walk, &tree.body);
}

struct Walk<'s, 'a> {
    scope: &'s Scope<'a>,
    out: &'s mut Vec<Diagnostic>,
}

impl<'a> Visitor<'a> for Walk<'_, 'a> {
    fn block(&mut self, block: &'a ApiBlock) {
        check_token(self.scope, block, self.out);
        check_destination(block, self.out);
        check_literals(block, self.out);
    }

    /// Replies and saves are shown or stored: no secret may go there.
    fn secret(&mut self, slot: &'a Ident, site: Site) {
        self.in_output(slot.span, format!("secret `<{}>`", slot.name), site);
    }

    fn bot_token(&mut self, span: Span, site: Site) {
        self.in_output(span, "the bot token".to_string(), site);
    }
}

impl Walk<'_, '_> {
    fn in_output(&mut self, span: Span, what: String, site: Site) {
        let (place, shown) = match site {
            Site::Reply => ("reply", "would be shown to users"),
            Site::Save => ("save", "would be stored in plain text"),
            // Block fields are requests, where secrets belong; a condition
            // is neither shown nor stored.
            _ => return,
        };
        self.out.push(
            Diagnostic::new(Code::SecretInOutput, format!("{what} in a {place}"))
                .label(span, shown)
                .help("secrets are only sent in requests, never shown or saved; remove it from here"),
        );
    }
}

/// The first secret slot or `{bot_token}` a block sends, anywhere.
fn first_secret(block: &ApiBlock) -> Option<(Span, String)> {
    struct First(Option<(Span, String)>);
    impl<'a> Visitor<'a> for First {
        fn secret(&mut self, slot: &'a Ident, _: Site) {
            self.0.get_or_insert((slot.span, format!("secret `<{}>`", slot.name)));
        }
        fn bot_token(&mut self, span: Span, _: Site) {
            self.0.get_or_insert((span, "the bot token".to_string()));
        }
    }
    let mut first = First(None);
    visit::walk_block(&mut first, block);
    first.0
}

/// Where a request goes must be written in the file when it carries a
/// secret: its scheme, host and port, and a `/` (or `?`) before any value,
/// so that no value can choose the server that receives the secret. Without
/// a secret a host from a value is a warning; the run keeps such a value to
/// a host name (B314) and off internal addresses (B316).
fn check_destination(block: &ApiBlock, out: &mut Vec<Diagnostic>) {
    let Some(url) = block.url() else { return };
    if shape(url) != UrlShape::Dynamic {
        return;
    }
    let value = url.parts.iter().find_map(|p| match p {
        Part::Var(v) => Some(v.span()),
        Part::Secret(id) => Some(id.span),
        Part::Lit(..) => None,
    });
    let at = value.unwrap_or(url.span);
    let literal_start = match url.parts.first() {
        Some(Part::Lit(text, _)) => text.to_string(),
        _ => String::new(),
    };
    let fixed = match literal_start.split_once("://") {
        Some((_, host)) if !host.is_empty() => format!("{literal_start}/…"),
        _ => "https://api.example.com/…".to_string(),
    };
    match first_secret(block) {
        Some((secret_span, what)) => out.push(
            Diagnostic::new(
                Code::SecretToTemplatedHost,
                format!("block `{}` sends {what} to a host that a value chooses", block.name.name),
            )
            .label(at, "this value is part of the scheme, host or port")
            .related(secret_span, format!("{what} is sent"))
            .help(format!(
                "write the scheme, host and port in the file and start the path with `/` before any value, like `{fixed}`; \
                 a value there could send the secret to any server"
            )),
        ),
        None => out.push(
            Diagnostic::new(
                Code::TemplatedHost,
                format!("the host of block `{}` comes from a value", block.name.name),
            )
            .label(at, "this value is part of the scheme, host or port")
            .help(format!(
                "at run time the value may only be a host name, never an internal address (unless `allow private_network`); \
                 if the value is a path, start it with `/` in the file, like `{fixed}`"
            )),
        ),
    }
}

/// Every `{bot_token}` of a block, with where it goes in the request.
fn token_places(block: &ApiBlock) -> Vec<(Span, Place)> {
    struct Tokens(Vec<(Span, Place)>);
    impl<'a> Visitor<'a> for Tokens {
        fn bot_token(&mut self, span: Span, site: Site) {
            self.0.extend(site.request_place().map(|place| (span, place)));
        }
    }
    let mut tokens = Tokens(Vec::new());
    visit::walk_block(&mut tokens, block);
    tokens.0
}

/// `{bot_token}` goes in a header ([`policy::token_may_go_in`]) of a request
/// whose URL, as written, the policy lets it reach
/// ([`policy::token_destination`]).
fn check_token(scope: &Scope<'_>, block: &ApiBlock, out: &mut Vec<Diagnostic>) {
    let allowed = block.allows_bot_token();
    let places = token_places(block);
    for &(span, place) in places.iter().filter(|(_, place)| !policy::token_may_go_in(*place, allowed)) {
        let place = place.words();
        out.push(
            Diagnostic::new(Code::TokenOutsideHeader, format!("`{{bot_token}}` {place} of block `{}`", block.name.name))
                .label(span, format!("the bot token {place}"))
                .help(
                    "send the token in a header, `Authorization = \"Bot {bot_token}\"`: URLs and bodies end up in logs and caches; \
                     if this really must be sent, add `allow bot_token` to the block",
                ),
        );
    }
    let (Some(&(first, _)), Some(url)) = (places.first(), block.url()) else { return };
    let UrlShape::Known { scheme, host, port } = shape(url) else { return };
    let destination = Destination::new(&scheme, &host, port);
    if let Err(refusal) = policy::token_destination(&destination, &scope.platform, allowed) {
        let code = match refusal {
            TokenRefusal::Plaintext { .. } => Code::TokenPlaintext,
            TokenRefusal::NotPlatform { .. } => Code::TokenWrongHost,
        };
        out.push(
            Diagnostic::new(
                code,
                format!("block `{}` would send the bot token {}", block.name.name, refusal.describe()),
            )
            .label(first, "the bot token")
            .related(url.span, format!("the request goes to `{scheme}://{host}`"))
            .help(refusal.help()),
        );
    }
}

/// A long run of token characters with letters and digits mixed.
fn looks_random(s: &str) -> bool {
    s.split(|c: char| !(c.is_ascii_alphanumeric() || "-_.+/=".contains(c))).any(|run| {
        run.len() >= 24 && run.bytes().any(|b| b.is_ascii_digit()) && run.bytes().any(|b| b.is_ascii_alphabetic())
    })
}

/// A header whose value is written out and looks like a credential.
fn check_literals(block: &ApiBlock, out: &mut Vec<Diagnostic>) {
    for header in block.headers() {
        for part in &header.value.parts {
            let Part::Lit(text, span) = part else {
                continue;
            };
            let trimmed = text.trim();
            let scheme = ["Bearer ", "Basic ", "Bot ", "Token "].iter().find(|s| trimmed.starts_with(**s));
            let after_scheme = scheme.map_or(trimmed, |s| trimmed[s.len()..].trim());
            let suspicious = looks_random(trimmed)
                || (scheme.is_some() && after_scheme.len() >= 8)
                || (policy::is_credential_header(&header.key.name)
                    && scheme.is_none()
                    && trimmed.len() >= 12
                    && !trimmed.contains(' '));
            if suspicious {
                let slot = header.key.name.to_ascii_uppercase().replace('-', "_");
                let example = match scheme {
                    Some(s) => format!("{}<{}>", s, if slot == "AUTHORIZATION" { "API_TOKEN" } else { &slot }),
                    None => format!("<{slot}>"),
                };
                out.push(
                    Diagnostic::new(Code::SecretLiteral, format!("header `{}` looks like it holds a secret written in the file", header.key.name))
                        .label(*span, "looks like a credential")
                        .help(format!(
                            "put the value in a secret slot, `{} = \"{example}\"`, and supply it at run time; a key in the file is shared with everyone who sees it",
                            header.key.name
                        )),
                );
                break;
            }
        }
    }
}
