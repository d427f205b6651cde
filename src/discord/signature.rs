//! The platform's signature on each interaction: Ed25519 over the
//! timestamp's bytes followed by the raw body, checked against the
//! application's public key before anything of the body is read.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ed25519_dalek::{Signature, VerifyingKey};

/// How far a request's timestamp may be from this machine's clock.
pub const MAX_SKEW: Duration = Duration::from_secs(5 * 60);

/// The application's public key (from the developer portal).
#[derive(Debug, Clone)]
pub struct PublicKey(VerifyingKey);

impl PublicKey {
    /// 64 hexadecimal digits, as the portal shows it.
    pub fn from_hex(text: &str) -> Result<PublicKey, BadKey> {
        let text = text.trim();
        let mut bytes = [0u8; 32];
        hex::decode_to_slice(text, &mut bytes).map_err(|_| BadKey::NotHex { length: text.len() })?;
        VerifyingKey::from_bytes(&bytes).map(PublicKey).map_err(|_| BadKey::NotEd25519)
    }
}

/// Why a public key is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BadKey {
    /// Not 64 hexadecimal digits (the text's length).
    NotHex { length: usize },
    /// 32 bytes that are no Ed25519 key.
    NotEd25519,
}

impl std::fmt::Display for BadKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BadKey::NotHex { length } => {
                write!(f, "the public key must be 64 hexadecimal digits, not {length} characters")
            }
            BadKey::NotEd25519 => f.write_str("the public key is not a valid Ed25519 key"),
        }
    }
}

impl std::error::Error for BadKey {}

/// Why a request's signature is refused (each a 401).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// A header is missing.
    Missing,
    /// A header is not what the platform sends (not hex, not a number).
    Malformed,
    /// The timestamp is more than [`MAX_SKEW`] away from now.
    Stale,
    /// The signature does not match the key, the timestamp and the body.
    Bad,
}

impl Refused {
    pub fn as_str(self) -> &'static str {
        match self {
            Refused::Missing => "missing signature",
            Refused::Malformed => "malformed signature",
            Refused::Stale => "stale timestamp",
            Refused::Bad => "bad signature",
        }
    }
}

/// Checks `signature` (hex) over `timestamp` and `body`.
pub fn verify(
    key: &PublicKey,
    signature: Option<&[u8]>,
    timestamp: Option<&[u8]>,
    body: &[u8],
    now: SystemTime,
) -> Result<(), Refused> {
    let (Some(signature), Some(timestamp)) = (signature, timestamp) else { return Err(Refused::Missing) };
    let mut bytes = [0u8; 64];
    hex::decode_to_slice(signature, &mut bytes).map_err(|_| Refused::Malformed)?;
    let seconds: u64 = std::str::from_utf8(timestamp)
        .ok()
        .filter(|t| !t.is_empty() && t.len() <= 20 && t.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|t| t.parse().ok())
        .ok_or(Refused::Malformed)?;
    let now = now.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
    if now.abs_diff(seconds) > MAX_SKEW.as_secs() {
        return Err(Refused::Stale);
    }
    let mut message = Vec::with_capacity(timestamp.len() + body.len());
    message.extend_from_slice(timestamp);
    message.extend_from_slice(body);
    key.0.verify_strict(&message, &Signature::from_bytes(&bytes)).map_err(|_| Refused::Bad)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ed25519_dalek::{Signer, SigningKey};

    fn signed(key: &SigningKey, timestamp: &str, body: &[u8]) -> String {
        let mut message = timestamp.as_bytes().to_vec();
        message.extend_from_slice(body);
        hex::encode(key.sign(&message).to_bytes())
    }

    #[test]
    fn a_signature_holds_only_for_its_key_timestamp_and_body() {
        let signing = SigningKey::from_bytes(&[7; 32]);
        let key = PublicKey::from_hex(&hex::encode(signing.verifying_key().to_bytes())).unwrap();
        let now = SystemTime::now();
        let ts = now.duration_since(UNIX_EPOCH).unwrap().as_secs().to_string();
        let body = br#"{"type":1}"#;
        let sig = signed(&signing, &ts, body);
        assert_eq!(verify(&key, Some(sig.as_bytes()), Some(ts.as_bytes()), body, now), Ok(()));
        assert_eq!(verify(&key, Some(sig.as_bytes()), Some(ts.as_bytes()), br#"{"type":2}"#, now), Err(Refused::Bad));
        let other = (ts.parse::<u64>().unwrap() + 1).to_string();
        assert_eq!(verify(&key, Some(sig.as_bytes()), Some(other.as_bytes()), body, now), Err(Refused::Bad));
        assert_eq!(verify(&key, None, Some(ts.as_bytes()), body, now), Err(Refused::Missing));
        assert_eq!(verify(&key, Some(b"zz"), Some(ts.as_bytes()), body, now), Err(Refused::Malformed));
        let later = now + Duration::from_secs(301);
        assert_eq!(verify(&key, Some(sig.as_bytes()), Some(ts.as_bytes()), body, later), Err(Refused::Stale));
        let wrong = SigningKey::from_bytes(&[8; 32]);
        assert_eq!(
            verify(&key, Some(signed(&wrong, &ts, body).as_bytes()), Some(ts.as_bytes()), body, now),
            Err(Refused::Bad)
        );
        assert!(PublicKey::from_hex("abc").is_err());
    }
}
