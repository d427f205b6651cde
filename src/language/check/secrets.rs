//! Rules that keep secrets secret: where `{bot_token}` may go, literals that
//! look like credentials, and secrets where they would be shown.

use super::scope::Scope;
use super::url::{shape, UrlShape};
use crate::base::diagnostics::{Code, Diagnostic, Findings};
use crate::base::source::Span;
use crate::base::urls::Destination;
use crate::language::ast::visit::{self, Site, Visitor};
use crate::language::ast::{ApiBlock, Entry, FieldKind, Ident, Part, Reference, Template, Tree, Value};
use crate::language::policy::{self, Place, TokenRefusal};

pub fn check_tree(scope: &Scope<'_>, tree: &Tree, out: &mut Findings) {
    let mut walk = Walk { scope, out };
    visit::walk_nodes(&mut walk, &tree.body);
}

struct Walk<'s, 'a> {
    scope: &'s Scope<'a>,
    out: &'s mut Findings,
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

    /// A whole response saved or shown, from a request that sent a secret:
    /// whatever the server echoes back (a token in an error message, a
    /// signed URL) would be stored or shown with it.
    fn reference(&mut self, r: &'a Reference, site: Site, _in_text: bool) {
        let place = match site {
            Site::Reply => "shown in a reply",
            Site::Save => "saved",
            _ => return,
        };
        if r.root() != Some(crate::base::path::Root::Response) || !r.segments.is_empty() {
            return;
        }
        let Some(blocks) = self.scope.blocks.get(r.block.name.as_str()) else { return };
        let Some((_, secret)) = blocks.iter().find_map(|(_, b)| first_secret(b)) else { return };
        self.out.push(
            Diagnostic::new(
                Code::WholeResponseOfSecretRequest,
                format!("the whole response of block `{}`, which sends {secret}, is {place}", r.block.name),
            )
            .label(r.span, format!("the whole response, {place}"))
            .help(format!(
                "a server may echo what it was sent (an error that quotes the token); {} only the values needed, like `{{api_{}[response.id]}}` (blkc redacts known secrets at run time, but not what a server derives from them)",
                if site == Site::Save { "save" } else { "show" },
                r.block.name
            )),
        );
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
fn check_destination(block: &ApiBlock, out: &mut Findings) {
    let Some(url) = block.url() else { return };
    if !super::url::host_from_value(url) {
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
fn check_token(scope: &Scope<'_>, block: &ApiBlock, out: &mut Findings) {
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

/// What in a block can hold a literal credential: a header, a URL
/// parameter, a body entry or a query pair written in the URL.
struct Literal<'a> {
    place: &'static str,
    key: &'a str,
    text: &'a str,
    span: Span,
}

/// Every literal a block sends under a name: headers, parameters, body
/// entries (at any depth) and the query pairs written in its URL.
fn literals(block: &ApiBlock) -> Vec<Literal<'_>> {
    fn lits<'a>(place: &'static str, key: &'a str, t: &'a Template, out: &mut Vec<Literal<'a>>) {
        for part in &t.parts {
            if let Part::Lit(text, span) = part {
                out.push(Literal { place, key, text, span: *span });
            }
        }
    }
    fn body<'a>(entries: &'a [Entry], out: &mut Vec<Literal<'a>>) {
        for e in entries {
            match &e.value {
                Value::Str(t) => lits("body entry", &e.key.name, t, out),
                Value::Object(inner, _) => body(inner, out),
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    block.headers().iter().for_each(|h| lits("header", &h.key.name, &h.value, &mut out));
    block.params().iter().for_each(|p| lits("URL parameter", &p.key.name, &p.value, &mut out));
    match block.body() {
        Some((crate::language::ast::Body::Text { text, .. }, _)) => lits("body", "text", text, &mut out),
        Some((crate::language::ast::Body::Multipart(parts), _)) => {
            for p in parts {
                if let crate::language::ast::PartValue::Field(t) = &p.value {
                    lits("part", &p.key.name, t, &mut out);
                }
            }
        }
        Some((b, _)) => body(b.entries().unwrap_or(&[]), &mut out),
        None => {}
    }
    for field in &block.fields {
        if let FieldKind::Auth(auth) = &field.kind {
            auth.values.iter().for_each(|t| lits("auth", &auth.scheme.name, t, &mut out));
        }
    }
    for part in block.url().map_or(&[][..], |u| &u.parts[..]) {
        let Part::Lit(text, span) = part else { continue };
        let Some(q) = text.find('?') else { continue };
        // Where the literal's text stands in the source one for one (no
        // escapes in it), a value's own span; else the literal's.
        let exact = span.len() == text.len();
        let base = span.start as usize;
        let mut at = q + 1;
        for pair in text[q + 1..].split(['&', '#']) {
            if let Some((key, value)) = pair.split_once('=') {
                let start = at + key.len() + 1;
                let value_span = if exact { Span::new(base + start, base + start + value.len()) } else { *span };
                out.push(Literal { place: "URL query parameter", key, text: value, span: value_span });
            }
            at += pair.len() + 1;
        }
    }
    out
}

/// Whether a literal looks like a credential, and the scheme word before
/// it (`Bearer `) if any.
fn credential(lit: &Literal<'_>) -> Option<Option<&'static str>> {
    let trimmed = lit.text.trim();
    let scheme = ["Bearer ", "Basic ", "Bot ", "Token "].into_iter().find(|s| trimmed.starts_with(*s));
    let after_scheme = scheme.map_or(trimmed, |s| trimmed[s.len()..].trim());
    let suspicious = looks_random(trimmed)
        || (scheme.is_some() && after_scheme.len() >= 8)
        || (policy::is_credential_header(lit.key) && scheme.is_none() && trimmed.len() >= 12 && !trimmed.contains(' '));
    suspicious.then_some(scheme)
}

/// A literal that looks like a credential (B118), credentials in the URL
/// (B129), and slots written so that they are not slots (B130).
fn check_literals(block: &ApiBlock, out: &mut Findings) {
    let mut flagged = Vec::new();
    for lit in literals(block) {
        let Some(scheme) = credential(&lit) else { continue };
        if flagged.contains(&(lit.place, lit.key)) {
            continue;
        }
        flagged.push((lit.place, lit.key));
        let slot = lit.key.to_ascii_uppercase().replace('-', "_");
        let slot = if slot == "AUTHORIZATION" || slot.is_empty() { "API_TOKEN".to_string() } else { slot };
        let example = format!("{}<{slot}>", scheme.unwrap_or(""));
        out.push(
            Diagnostic::new(
                Code::SecretLiteral,
                format!("{} `{}` looks like it holds a secret written in the file", lit.place, lit.key),
            )
            .label(lit.span, "looks like a credential")
            .help(format!(
                "put the value in a secret slot, `{} = \"{example}\"`, and supply it at run time; a key in the file is shared with everyone who sees it",
                lit.key
            )),
        );
    }
    check_userinfo(block, out);
    check_near_slots(block, out);
}

/// `https://user:pass@host/`: refused, since the password would be sent,
/// logged and shown with the URL; credentials go in a header.
fn check_userinfo(block: &ApiBlock, out: &mut Findings) {
    let Some(Part::Lit(first, span)) = block.url().and_then(|u| u.parts.first()) else { return };
    let Some(authority) = crate::base::urls::authority(first) else { return };
    if authority.contains('@') {
        out.push(
            Diagnostic::new(Code::CredentialsInUrl, format!("the URL of block `{}` holds a user name or password", block.name.name))
                .label(*span, "credentials before `@`")
                .help("send credentials in a header with a secret slot, like `Authorization = \"Basic <API_BASIC>\"`, and write the URL without `user:password@`"),
        );
    }
}

/// `<api_key>` or `<API-KEY>` is sent as those characters: a slot is
/// written `<API_KEY>`, in capitals, digits and `_`.
fn check_near_slots(block: &ApiBlock, out: &mut Findings) {
    struct Near<'o>(&'o mut Findings);
    impl<'a> Visitor<'a> for Near<'_> {
        fn template(&mut self, t: &'a Template, _: Site) {
            for part in &t.parts {
                if let Part::Lit(text, span) = part {
                    for name in near_slots(text) {
                        let slot = name.to_ascii_uppercase().replace('-', "_");
                        self.0.push(
                            Diagnostic::new(Code::NearSlot, format!("`<{name}>` is sent as text, not as a secret slot"))
                                .label(*span, format!("holds `<{name}>`"))
                                .help(format!("a secret slot is written in capitals, digits and `_`: `<{slot}>`; write `\\<` for a literal `<`")),
                        );
                    }
                }
            }
        }
    }
    visit::walk_block(&mut Near(out), block);
}

/// Names in `<…>` that would be a slot if written in capitals with `_`.
fn near_slots(text: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('<') {
        rest = &rest[open + 1..];
        let Some(close) = rest.find('>') else { break };
        let name = &rest[..close];
        let shaped = name.starts_with(|c: char| c.is_ascii_alphabetic())
            && name.len() >= 3
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        let is_slot = name.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
        if shaped && !is_slot && (name.contains(['_', '-']) || name.bytes().any(|b| b.is_ascii_uppercase())) {
            found.push(name);
        }
    }
    found
}
