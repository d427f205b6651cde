//! Work that waits (`after "10m" { … }`, docs/language.md "Work that
//! waits"): each piece is a row of the store (`blkc_later`), due at a time
//! of the bot's clock, owned by a user (or a server), found again by its
//! key. A run puts it there ([`super::VarStore::wait_later`]); a serving
//! process claims what is due for a lease ([`super::Host::claim_due`]),
//! runs it, and removes it ([`super::Host::done_later`]); a process killed
//! mid-run leaves its lease to lapse, and another takes the work over.

use serde_json::Value as Json;

/// The most pieces of waiting work one owner (a user in a server, or a
/// server) may have at once.
pub const MAX_PER_OWNER: usize = 25;

/// The most pieces of waiting work a store holds at once.
pub const MAX_PER_STORE: usize = 100_000;

/// The most bytes a piece's kept variables, key and note take together.
pub const MAX_KEPT_BYTES: usize = 16 * 1024;

/// The most pieces one claim takes.
pub const CLAIM_BATCH: usize = 200;

/// A piece of waiting work.
#[derive(Debug, Clone, PartialEq)]
pub struct Later {
    /// Its own id (random).
    pub id: String,
    /// Whose it is: `user:SERVER:USER` or `server:SERVER`.
    pub owner: String,
    /// The key it is cancelled and replaced by (empty: none).
    pub key: String,
    /// When it is due: ms since the epoch, on the bot's clock.
    pub due_ms: i64,
    /// The plan's tree that runs (`remind#9169a528`: `plan::hoist_later` names it).
    pub tree: String,
    /// What `{waiting}` shows of it.
    pub note: String,
    /// The variables of the run that made it, as a JSON object of texts.
    pub vars: Json,
}

impl Later {
    /// What `{waiting}` holds of it: its key, note and due time.
    pub fn shown(&self) -> Json {
        serde_json::json!({
            "key": self.key,
            "note": self.note,
            "due": crate::base::when::written(
                time::OffsetDateTime::from_unix_timestamp(self.due_ms.div_euclid(1000))
                    .unwrap_or(time::OffsetDateTime::UNIX_EPOCH)
            ),
        })
    }

    /// Whether it is a wait for the member's answer (`await message`).
    pub fn is_answer_wait(&self) -> bool {
        self.key.starts_with("~message:")
    }

    /// The bytes it keeps, held to [`MAX_KEPT_BYTES`].
    pub fn kept_bytes(&self) -> usize {
        self.vars.to_string().len() + self.key.len() + self.note.len()
    }
}

/// How blkc's own keys start; an author's cannot.
pub const RESERVED: &str = "~";

/// The variable of an `await`'s piece naming the tree its answer runs.
pub const ANSWER_TREE: &str = "~answer";
/// The variable of an `await`'s piece naming the answer's text in it.
pub const ANSWER_NAME: &str = "~as";
/// The variable the answer's text is put in when the member answers.
pub const ANSWER_TEXT: &str = "~said";

/// The key of a member's wait for their next message in `channel`.
pub fn answer_key(channel: &str) -> String {
    format!("~message:{channel}")
}

/// Why a piece of work was not kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Full {
    /// Its owner has [`MAX_PER_OWNER`] already.
    Owner,
    /// The store has [`MAX_PER_STORE`] already.
    Store,
}

/// A new piece's id: 16 random bytes, in hex.
pub fn new_id() -> String {
    use rand::TryRngCore as _;
    let mut bytes = [0u8; 16];
    if rand::rngs::OsRng.try_fill_bytes(&mut bytes).is_err() {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        bytes = nanos.to_le_bytes();
    }
    hex::encode(bytes)
}

/// The columns of `blkc_later`, as both backends write them.
pub const COLUMNS: &str = "id, owner, key, due_at, tree, note, vars";
