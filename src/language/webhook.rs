//! A webhook event's head read: where serve listens for it, how its
//! sender signs, the secret, and which header names a delivery. The one
//! reading of `webhook "/path" signed … secret … sample … delivery …`: the
//! checker reports what it refuses (B163), the plan keeps what it reads.

use crate::base::diagnostics::{did_you_mean, Code, Diagnostic};
use crate::base::webhook::{Scheme, SCHEMES};
use crate::language::ast::{Webhook, WebhookValue};

/// The settings a webhook takes, with what each says.
pub const WORDS: &[(&str, &str)] = &[
    ("signed", "how the sender signs: `github` (X-Hub-Signature-256), `stripe` (Stripe-Signature) or `bearer` (Authorization: Bearer)"),
    ("secret", "the secret it signs with, a secret slot: `\"<GITHUB_WEBHOOK_SECRET>\"`"),
    ("sample", "a JSON file of a body it sends, relative to the .blk file: `{api_webhook[response.…]}` is checked against it"),
    ("delivery", "the header that names a delivery (a retry of one runs once); by default the scheme's: `X-GitHub-Delivery`, a Stripe event's `id`, `Idempotency-Key`"),
];

/// The paths serve answers itself.
pub const RESERVED: [&str; 3] = ["/interactions", "/healthz", "/metrics"];

/// What a webhook's head says, read.
#[derive(Debug, Clone, PartialEq)]
pub struct Read {
    pub path: String,
    pub scheme: Scheme,
    /// The secret slot's name (`GITHUB_WEBHOOK_SECRET`).
    pub secret: String,
    /// The header that names a delivery, lower-case.
    pub delivery: Option<String>,
}

/// Reads a webhook's head: what it says, or what is wrong with it (B163),
/// each with its span and help.
pub fn read(w: &Webhook) -> Result<Read, Vec<Diagnostic>> {
    let mut out = Vec::new();
    path(w, &mut out);
    let mut seen: Vec<&str> = Vec::new();
    for (word, _) in &w.words {
        let known = WORDS.iter().map(|(k, _)| *k);
        if !WORDS.iter().any(|(k, _)| *k == word.name) {
            let help = match did_you_mean(&word.name, known) {
                Some(k) => format!("did you mean `{k}`?"),
                None => format!(
                    "a webhook takes {}",
                    WORDS.iter().map(|(k, _)| format!("`{k}`")).collect::<Vec<_>>().join(", ")
                ),
            };
            out.push(bad(format!("a webhook has no `{}`", word.name), word.span, "not a webhook's setting", help));
        } else if seen.contains(&word.name.as_str()) {
            out.push(bad(format!("`{}` is given twice", word.name), word.span, "again", "give it once".into()));
        }
        seen.push(&word.name);
    }
    let scheme = scheme(w, &mut out);
    let secret = secret(w, &mut out);
    let delivery = delivery(w, &mut out);
    if !out.is_empty() {
        return Err(out);
    }
    match (scheme, secret) {
        (Some(scheme), Some(secret)) => Ok(Read { path: w.path.value.to_string(), scheme, secret, delivery }),
        _ => Err(out),
    }
}

fn bad(message: String, span: crate::base::source::Span, label: &str, help: String) -> Diagnostic {
    Diagnostic::new(Code::BadWebhook, message).label(span, label.to_string()).help(help)
}

/// The path: `/` and then letters, digits and `-._~/`, no empty or dot
/// segment, not one serve answers itself.
fn path(w: &Webhook, out: &mut Vec<Diagnostic>) {
    let p = w.path.value.as_str();
    let chars = p.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~/".contains(&b));
    let segments_ok = p.split('/').skip(1).all(|s| !s.is_empty() && s != "." && s != "..");
    let why = if !p.starts_with('/') {
        Some("a path starts with `/`")
    } else if p.len() > 200 {
        Some("a path is at most 200 characters")
    } else if !chars {
        Some("a path holds letters, digits and `-._~/` only")
    } else if !segments_ok {
        Some("a path has no empty, `.` or `..` part")
    } else if RESERVED.contains(&p) {
        Some("serve answers this path itself")
    } else {
        None
    };
    if let Some(why) = why {
        out.push(bad(
            format!("`{p}` cannot be a webhook's path"),
            w.path.span,
            why,
            "give it a path of its own on serve's listener: `webhook \"/hooks/github\" …`".into(),
        ));
    }
}

fn scheme(w: &Webhook, out: &mut Vec<Diagnostic>) -> Option<Scheme> {
    let Some(v) = w.setting("signed") else {
        out.push(bad(
            "a webhook without `signed`".into(),
            w.keyword,
            "anyone could trigger it",
            "say how the sender signs: `signed github`, `signed stripe` or `signed bearer`, with its `secret`".into(),
        ));
        return None;
    };
    let scheme = Scheme::parse(v.text());
    if scheme.is_none() {
        let help = match did_you_mean(v.text(), SCHEMES) {
            Some(s) => format!("did you mean `{s}`?"),
            None => format!("blkc checks {}", SCHEMES.map(|s| format!("`{s}`")).join(", ")),
        };
        out.push(bad(format!("`{}` is not a signature blkc checks", v.text()), v.span(), "not known", help));
    }
    scheme
}

fn secret(w: &Webhook, out: &mut Vec<Diagnostic>) -> Option<String> {
    let Some(v) = w.setting("secret") else {
        out.push(bad(
            "a webhook without its `secret`".into(),
            w.keyword,
            "nothing to check the signature with",
            "name the secret the sender signs with: `secret \"<GITHUB_WEBHOOK_SECRET>\"` (set as BLKC_SECRET_GITHUB_WEBHOOK_SECRET)".into(),
        ));
        return None;
    };
    let slot = match v {
        WebhookValue::Text(t) => t.value.strip_prefix('<').and_then(|s| s.strip_suffix('>')),
        WebhookValue::Word(_) => None,
    };
    let named =
        slot.filter(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_'));
    if named.is_none() {
        out.push(bad(
            "a webhook's secret is a secret slot".into(),
            v.span(),
            "not a slot",
            "write its slot, `\"<NAME>\"`, and set its value outside the file (BLKC_SECRET_NAME): a secret is never written in a .blk".into(),
        ));
    }
    named.map(str::to_string)
}

fn delivery(w: &Webhook, out: &mut Vec<Diagnostic>) -> Option<String> {
    let v = w.setting("delivery")?;
    let name = v.text();
    let token = !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b));
    if !token {
        out.push(bad(
            format!("`{name}` is not a header's name"),
            v.span(),
            "not a header",
            "name the header that carries the delivery's id: `delivery \"X-Request-Id\"`".into(),
        ));
        return None;
    }
    Some(name.to_ascii_lowercase())
}
