//! Rules that keep secrets secret: where `{bot_token}` may go, literals that
//! look like credentials, and secrets where they would be shown.

use super::references::value_parts;
use super::url::{shape, UrlShape};
use super::Scope;
use crate::ast::{each_block, ApiBlock, Else, IfNode, Node, Part, Template, Tree, Var};
use crate::diagnostics::{Code, Diagnostic};
use crate::policy::{self, Destination, Place, TokenRefusal};
use crate::source::Span;

pub fn check_tree(scope: &Scope<'_>, tree: &Tree, out: &mut Vec<Diagnostic>) {
    each_block(&tree.body, &mut |block| {
        check_token(scope, block, out);
        check_literals(block, out);
    });
    check_output(&tree.body, out);
}

fn token_spans(t: &Template) -> impl Iterator<Item = Span> + '_ {
    t.parts.iter().filter_map(|p| match p {
        Part::Var(Var::BotToken(span)) => Some(*span),
        _ => None,
    })
}

/// `{bot_token}` goes in a header ([`policy::token_may_go_in`]) of a request
/// whose URL, as written, the policy lets it reach
/// ([`policy::token_destination`]).
fn check_token(scope: &Scope<'_>, block: &ApiBlock, out: &mut Vec<Diagnostic>) {
    let allowed = block.allows_bot_token();
    let mut places = Vec::new();
    if let Some(url) = block.url() {
        places.extend(token_spans(url).map(|s| (s, Place::Url)));
    }
    for p in block.params() {
        places.extend(token_spans(&p.value).map(|s| (s, Place::Param)));
    }
    for h in block.headers() {
        places.extend(token_spans(&h.value).map(|s| (s, Place::Header)));
    }
    if let Some((entries, _)) = block.body() {
        for e in entries {
            value_parts(&e.value, &mut |t| places.extend(token_spans(t).map(|s| (s, Place::Body))), &mut |_| {});
        }
    }
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

/// Replies and saves are shown or stored: no secret may go there.
fn check_output(nodes: &[Node], out: &mut Vec<Diagnostic>) {
    let mut report = |t: &Template, what: &str| {
        for part in &t.parts {
            let (span, name) = match part {
                Part::Secret(id) => (id.span, format!("secret `<{}>`", id.name)),
                Part::Var(Var::BotToken(span)) => (*span, "the bot token".to_string()),
                _ => continue,
            };
            out.push(
                Diagnostic::new(Code::SecretInOutput, format!("{name} in a {what}"))
                    .label(
                        span,
                        format!("would be {}", if what == "reply" { "shown to users" } else { "stored in plain text" }),
                    )
                    .help("secrets are only sent in requests, never shown or saved; remove it from here"),
            );
        }
    };
    walk_output(nodes, &mut report);
}

fn walk_output(nodes: &[Node], report: &mut impl FnMut(&Template, &str)) {
    for node in nodes {
        match node {
            Node::Reply(r) => report(&r.text, "reply"),
            Node::Save(s) => value_parts(&s.value, &mut |t| report(t, "save"), &mut |_| {}),
            Node::If(i) => walk_output_if(i, report),
            // Block fields are requests, where secrets belong.
            Node::Api(_) | Node::Option(_) => {}
        }
    }
}

fn walk_output_if(node: &IfNode, report: &mut impl FnMut(&Template, &str)) {
    walk_output(&node.then.body, report);
    match &node.otherwise {
        Some(Else::If(i)) => walk_output_if(i, report),
        Some(Else::Branch(b)) => walk_output(&b.body, report),
        None => {}
    }
}
