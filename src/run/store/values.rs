//! What a run reads and saves ([`VarStore`]), what `blkc vars` does
//! ([`Admin`]), a listed value ([`Entry`]), and the store that keeps
//! nothing ([`MemoryStore`]).

use serde_json::Value as Json;

use super::error::StoreError;
use super::later::{Full, Later};

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
    /// Keeps a piece of waiting work, in place of its owner's piece of the
    /// same key if there is one; `Full` when a bound is reached (nothing
    /// is kept then).
    fn wait_later(&mut self, _item: &Later) -> Result<Result<(), Full>, StoreError> {
        Err(StoreError::Io("this store keeps no waiting work".to_string()))
    }
    /// Removes the owner's waiting work of `key` that is not due at
    /// `now_ms` nor claimed by a process (its run may have begun): how
    /// many went.
    fn cancel_later(&mut self, _owner: &str, _key: &str, _now_ms: i64) -> Result<u64, StoreError> {
        Ok(0)
    }
    /// The waiting work of `owner` (of every owner: `None`), soonest first.
    fn waiting(&mut self, _owner: Option<&str>) -> Result<Vec<Later>, StoreError> {
        Ok(Vec::new())
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

    /// Kept in memory, under a name no variable has, for the run's life.
    fn wait_later(&mut self, item: &Later) -> Result<Result<(), Full>, StoreError> {
        let mut all = self.waiting(None)?;
        all.retain(|l| !(l.owner == item.owner && !item.key.is_empty() && l.key == item.key));
        if all.iter().filter(|l| l.owner == item.owner).count() >= super::later::MAX_PER_OWNER {
            return Ok(Err(Full::Owner));
        }
        all.push(item.clone());
        self.0.insert(MEMORY_LATER.to_string(), Json::Array(all.iter().map(later_json).collect()));
        Ok(Ok(()))
    }

    fn cancel_later(&mut self, owner: &str, key: &str, now_ms: i64) -> Result<u64, StoreError> {
        let mut all = self.waiting(None)?;
        let before = all.len();
        all.retain(|l| !(l.owner == owner && l.key == key && l.due_ms > now_ms));
        let gone = (before - all.len()) as u64;
        self.0.insert(MEMORY_LATER.to_string(), Json::Array(all.iter().map(later_json).collect()));
        Ok(gone)
    }

    fn waiting(&mut self, owner: Option<&str>) -> Result<Vec<Later>, StoreError> {
        let kept = self.0.get(MEMORY_LATER).and_then(Json::as_array).cloned().unwrap_or_default();
        let mut all: Vec<Later> = kept.iter().filter_map(later_of).collect();
        all.retain(|l| owner.is_none_or(|o| l.owner == o));
        all.sort_by_key(|l| l.due_ms);
        Ok(all)
    }
}

/// Where [`MemoryStore`] keeps waiting work (no variable's name has a `~`).
const MEMORY_LATER: &str = "~later";

fn later_json(l: &Later) -> Json {
    serde_json::json!([l.id, l.owner, l.key, l.due_ms, l.tree, l.note, l.vars])
}

fn later_of(j: &Json) -> Option<Later> {
    Some(Later {
        id: j[0].as_str()?.to_string(),
        owner: j[1].as_str()?.to_string(),
        key: j[2].as_str()?.to_string(),
        due_ms: j[3].as_i64()?,
        tree: j[4].as_str()?.to_string(),
        note: j[5].as_str()?.to_string(),
        vars: j[6].clone(),
    })
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
