//! A block's answer kept in the store (`cache "10m"`, `cache
//! response.expires_in`): one entry a block, shared by every process of the
//! bot, found again only by the same request. Pure: the runner reads and
//! writes the store.

use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

use super::request::Built;

/// The store's key of a block's kept answer (no variable's name starts with
/// `~`).
pub fn key(block: &str) -> String {
    format!("~cache.{block}")
}

/// What identifies a request: its method, URL, headers and body, hashed
/// (the secrets in them are never kept).
pub fn digest(built: &Built) -> String {
    let mut h = Sha256::new();
    h.update(built.method.as_str());
    h.update([0]);
    h.update(built.url.as_str());
    let mut headers: Vec<(String, &str)> =
        built.headers.iter().map(|x| (x.name.to_ascii_lowercase(), x.value.as_str())).collect();
    headers.sort();
    for (name, value) in headers {
        h.update([0]);
        h.update(name);
        h.update([1]);
        h.update(value);
    }
    h.update([0]);
    h.update(built.body.as_deref().unwrap_or_default());
    hex::encode(h.finalize())
}

/// A kept answer, or a process fetching one (`filling_until`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Entry {
    pub digest: String,
    /// Until when (ms since the epoch) the answer may be used; 0: none kept.
    #[serde(default)]
    pub expires_ms: u64,
    /// Another process is fetching it, until then at the latest.
    #[serde(default)]
    pub filling_until: u64,
    #[serde(default)]
    pub status: u16,
    #[serde(default)]
    pub headers: Vec<(String, String)>,
    #[serde(default)]
    pub body: String,
}

/// What to do with the entry a lookup found.
#[derive(Debug, PartialEq)]
pub enum Found {
    /// Its answer is the request's and still fresh.
    Fresh,
    /// Another process is fetching the same: wait for it.
    Filling,
    /// Fetch it (and say so in the store first).
    Fetch,
}

pub fn judge(entry: Option<&Entry>, digest: &str, now_ms: u64) -> Found {
    match entry {
        Some(e) if e.digest == digest && e.expires_ms > now_ms => Found::Fresh,
        Some(e) if e.digest == digest && e.filling_until > now_ms => Found::Filling,
        _ => Found::Fetch,
    }
}

/// How long an answer that says it lives `seconds` is kept: a tenth less
/// (at most a minute less), so that a token is fetched again before the
/// server stops taking it.
pub fn lifetime_ms(seconds: f64) -> u64 {
    let ms = (seconds.max(0.0) * 1000.0).min(366.0 * 86_400_000.0) as u64;
    ms - (ms / 10).min(60_000)
}

/// A kept answer as `blkc vars` lists it: when it expires and how large it
/// is, never what it holds (a kept token is a secret).
pub fn listed(name: &str, value: &serde_json::Value) -> Option<serde_json::Value> {
    if !name.starts_with("~cache.") {
        return None;
    }
    let entry: Entry = serde_json::from_value(value.clone()).ok()?;
    Some(serde_json::json!({
        "kept answer": { "status": entry.status, "bytes": entry.body.len(), "expires_ms": entry.expires_ms }
    }))
}

pub fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_is_fresh_only_for_its_own_request_and_before_it_expires() {
        let e = Entry { digest: "a".into(), expires_ms: 100, ..Entry::default() };
        assert_eq!(judge(Some(&e), "a", 99), Found::Fresh);
        assert_eq!(judge(Some(&e), "a", 100), Found::Fetch);
        assert_eq!(judge(Some(&e), "b", 1), Found::Fetch);
        let filling = Entry { digest: "a".into(), filling_until: 50, ..Entry::default() };
        assert_eq!(judge(Some(&filling), "a", 49), Found::Filling);
        assert_eq!(judge(Some(&filling), "a", 50), Found::Fetch);
        assert_eq!(judge(None, "a", 0), Found::Fetch);
        assert_eq!(lifetime_ms(3600.0), 3_540_000);
        assert_eq!(lifetime_ms(10.0), 9_000);
    }
}
