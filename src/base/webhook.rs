//! Webhooks from other services: how a sender signs its POST, and how
//! blkc holds it to that before it reads a byte of the body as anything.
//! One place for each scheme's header, format and replay window, read by
//! the checker (the words a file may write), `blkc serve` (which verifies)
//! and `blkc play` and the conversation tests (which sign, as the sender
//! would).
//!
//! - `github`: `X-Hub-Signature-256: sha256=HEX`, the HMAC-SHA256 of the
//!   body with the secret; the delivery's id in `X-GitHub-Delivery`.
//! - `stripe`: `Stripe-Signature: t=UNIX,v1=HEX[,v1=HEX…]`, the
//!   HMAC-SHA256 of `UNIX.body`; a timestamp more than [`WINDOW`] from now
//!   is refused (a replayed request), and the delivery is the event's `id`.
//! - `bearer`: `Authorization: Bearer SECRET`, compared in constant time;
//!   the delivery's id in `Idempotency-Key`, when the sender gives one.

use hmac::{Hmac, Mac};
use sha2::Sha256;
use subtle::ConstantTimeEq;

/// How far a signed timestamp may be from now (Stripe's own tolerance).
pub const WINDOW: std::time::Duration = std::time::Duration::from_secs(5 * 60);
/// The largest body a webhook may post (GitHub's pushes are under 25 MB
/// but almost all under 1 MB; a larger one is refused with 413).
pub const MAX_BODY: usize = 4 * 1024 * 1024;

/// How a sender signs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scheme {
    Github,
    Stripe,
    Bearer,
}

/// The schemes, as a file writes them.
pub const SCHEMES: [&str; 3] = ["github", "stripe", "bearer"];

/// Why a request was refused (401): never what the secret is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// The header that carries the signature is not there.
    Missing(&'static str),
    /// It is there but not in the scheme's form.
    Malformed(&'static str),
    /// The signature is not the body's.
    Wrong,
    /// The signed timestamp is outside the window (a replay).
    Stale,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::Missing(h) => write!(f, "no `{h}` header"),
            Refused::Malformed(h) => write!(f, "a `{h}` header not in the sender's form"),
            Refused::Wrong => f.write_str("a signature that is not the body's with the secret"),
            Refused::Stale => write!(f, "a timestamp more than {} s from now (a replay?)", WINDOW.as_secs()),
        }
    }
}

impl Scheme {
    pub fn parse(word: &str) -> Option<Scheme> {
        match word {
            "github" => Some(Scheme::Github),
            "stripe" => Some(Scheme::Stripe),
            "bearer" => Some(Scheme::Bearer),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Scheme::Github => "github",
            Scheme::Stripe => "stripe",
            Scheme::Bearer => "bearer",
        }
    }

    /// The header that carries the signature.
    pub fn header(self) -> &'static str {
        match self {
            Scheme::Github => "x-hub-signature-256",
            Scheme::Stripe => "stripe-signature",
            Scheme::Bearer => "authorization",
        }
    }

    /// The header that names a delivery, when the scheme has one (a
    /// Stripe event's id is in its body).
    pub fn delivery_header(self) -> Option<&'static str> {
        match self {
            Scheme::Github => Some("x-github-delivery"),
            Scheme::Stripe => None,
            Scheme::Bearer => Some("idempotency-key"),
        }
    }

    /// Holds a request to the scheme: `header(name)` is a request header
    /// (any case), `now` Unix seconds. Reads only the signature's header
    /// and the body's bytes.
    pub fn verify(
        self,
        secret: &str,
        header: &dyn Fn(&str) -> Option<String>,
        body: &[u8],
        now: i64,
    ) -> Result<(), Refused> {
        let name = self.header();
        let value = header(name).ok_or(Refused::Missing(name))?;
        match self {
            Scheme::Github => {
                let hex = value.trim().strip_prefix("sha256=").ok_or(Refused::Malformed(name))?;
                let given = hex::decode(hex).map_err(|_| Refused::Malformed(name))?;
                mac(secret, &[body]).verify_slice(&given).map_err(|_| Refused::Wrong)
            }
            Scheme::Stripe => {
                let (mut at, mut given) = (None, Vec::new());
                for part in value.split(',') {
                    match part.trim().split_once('=') {
                        Some(("t", t)) => at = t.parse::<i64>().ok(),
                        Some(("v1", v)) => given.extend(hex::decode(v).ok()),
                        _ => {}
                    }
                }
                let at = at.ok_or(Refused::Malformed(name))?;
                if given.is_empty() {
                    return Err(Refused::Malformed(name));
                }
                let signed = at.to_string();
                let good = given.iter().any(|g| mac(secret, &[signed.as_bytes(), b".", body]).verify_slice(g).is_ok());
                if !good {
                    return Err(Refused::Wrong);
                }
                if now.abs_diff(at) > WINDOW.as_secs() {
                    return Err(Refused::Stale);
                }
                Ok(())
            }
            Scheme::Bearer => {
                let token = value.trim().strip_prefix("Bearer ").ok_or(Refused::Malformed(name))?;
                match bool::from(token.as_bytes().ct_eq(secret.as_bytes())) {
                    true => Ok(()),
                    false => Err(Refused::Wrong),
                }
            }
        }
    }

    /// The headers a sender sends with `body` signed with `secret` at
    /// `now` (Unix seconds): what `blkc play` and the tests post.
    pub fn sign(self, secret: &str, body: &[u8], now: i64) -> Vec<(&'static str, String)> {
        match self {
            Scheme::Github => {
                let sig = hex::encode(mac(secret, &[body]).finalize().into_bytes());
                vec![("X-Hub-Signature-256", format!("sha256={sig}"))]
            }
            Scheme::Stripe => {
                let signed = now.to_string();
                let sig = hex::encode(mac(secret, &[signed.as_bytes(), b".", body]).finalize().into_bytes());
                vec![("Stripe-Signature", format!("t={now},v1={sig}"))]
            }
            Scheme::Bearer => vec![("Authorization", format!("Bearer {secret}"))],
        }
    }
}

fn mac(secret: &str, parts: &[&[u8]]) -> Hmac<Sha256> {
    // (HMAC takes a key of any length: this cannot fail.)
    let mut m = <Hmac<Sha256> as Mac>::new_from_slice(secret.as_bytes()).expect("HMAC takes any key length");
    for p in parts {
        m.update(p);
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(list: Vec<(&'static str, String)>) -> impl Fn(&str) -> Option<String> {
        move |name: &str| list.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.clone())
    }

    #[test]
    fn each_scheme_verifies_what_it_signs_and_nothing_else() {
        let body = br#"{"ref":"refs/heads/main"}"#;
        for scheme in [Scheme::Github, Scheme::Stripe, Scheme::Bearer] {
            let signed = scheme.sign("s3cret", body, 1_700_000_000);
            assert_eq!(scheme.verify("s3cret", &headers(signed.clone()), body, 1_700_000_010), Ok(()), "{scheme:?}");
            let wrong = scheme.verify("other", &headers(signed.clone()), body, 1_700_000_010);
            assert_eq!(wrong, Err(Refused::Wrong), "{scheme:?}");
            if scheme != Scheme::Bearer {
                let tampered = scheme.verify("s3cret", &headers(signed), b"{\"ref\":\"x\"}", 1_700_000_010);
                assert_eq!(tampered, Err(Refused::Wrong), "{scheme:?}");
            }
            assert_eq!(scheme.verify("s3cret", &headers(vec![]), body, 0), Err(Refused::Missing(scheme.header())));
        }
        // GitHub's own example (docs.github.com, "Validating webhook deliveries").
        let theirs = headers(vec![(
            "X-Hub-Signature-256",
            "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17".to_string(),
        )]);
        assert_eq!(Scheme::Github.verify("It's a Secret to Everybody", &theirs, b"Hello, World!", 0), Ok(()));
        // A Stripe signature from long ago is a replay.
        let old = Scheme::Stripe.sign("s3cret", body, 1_700_000_000);
        let late = 1_700_000_000 + WINDOW.as_secs() as i64 + 1;
        assert_eq!(Scheme::Stripe.verify("s3cret", &headers(old), body, late), Err(Refused::Stale));
        let malformed = headers(vec![("X-Hub-Signature-256", "md5=abc".to_string())]);
        assert_eq!(Scheme::Github.verify("s", &malformed, body, 0), Err(Refused::Malformed("x-hub-signature-256")));
        let basic = headers(vec![("Authorization", "Basic czNjcmV0".to_string())]);
        assert_eq!(Scheme::Bearer.verify("s3cret", &basic, body, 0), Err(Refused::Malformed("authorization")));
    }
}
