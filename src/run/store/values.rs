//! What a run reads and saves ([`VarStore`]), what `blkc vars` does
//! ([`Admin`]), a listed value ([`Entry`]), and the store that keeps
//! nothing ([`MemoryStore`]).

use serde_json::Value as Json;

use super::error::StoreError;

pub trait VarStore {
    fn get(&mut self, name: &str) -> Result<Option<Json>, StoreError>;
    fn set(&mut self, name: &str, value: &Json) -> Result<(), StoreError>;
    /// Starts a save: what it reads and what it writes are one transaction.
    fn begin(&mut self) -> Result<(), StoreError> {
        Ok(())
    }
    /// Ends a save: commits it, or rolls it back.
    fn end(&mut self, _commit: bool) -> Result<(), StoreError> {
        Ok(())
    }
    /// Removes the values whose name starts with `prefix` and which are a
    /// time (ms since the epoch) before `now_ms`: cooldowns that have
    /// passed. How many went.
    fn remove_expired(&mut self, _prefix: &str, _now_ms: u64) -> Result<u64, StoreError> {
        Ok(0)
    }
}

/// What `blkc vars` does with a store beside what runs do: every value,
/// and removing one.
pub trait Admin: VarStore {
    /// Every value, by name.
    fn list(&mut self) -> Result<Vec<Entry>, StoreError>;
    /// Removes the value `name`; false when there was none.
    fn delete(&mut self, name: &str) -> Result<bool, StoreError>;
}

#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub name: String,
    pub value: Json,
    /// Seconds since the Unix epoch.
    pub updated_at: i64,
}

/// A store that keeps nothing between runs (for `--dry-run`, and for
/// tests of rendering).
#[derive(Debug, Default)]
pub struct MemoryStore(pub std::collections::HashMap<String, Json>);

impl VarStore for MemoryStore {
    fn get(&mut self, name: &str) -> Result<Option<Json>, StoreError> {
        Ok(self.0.get(name).cloned())
    }

    fn set(&mut self, name: &str, value: &Json) -> Result<(), StoreError> {
        self.0.insert(name.to_string(), value.clone());
        Ok(())
    }

    fn remove_expired(&mut self, prefix: &str, now_ms: u64) -> Result<u64, StoreError> {
        let before = self.0.len();
        self.0.retain(|k, v| !(k.starts_with(prefix) && v.as_u64().is_some_and(|t| t < now_ms)));
        Ok((before - self.0.len()) as u64)
    }
}

/// The key a delivery is claimed by in the store: `kind:identity`, or the
/// identity's digest when it is long (what the platform sends is not
/// trusted to be short, and a key must stay small enough to index).
pub fn delivery_key(kind: &str, identity: &str) -> String {
    use sha2::Digest as _;
    if identity.len() > 100 {
        format!("{kind}:#{}", hex::encode(sha2::Sha256::digest(identity.as_bytes())))
    } else {
        format!("{kind}:{identity}")
    }
}
