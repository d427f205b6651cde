//! Why a store call failed, typed: what the server does about it depends
//! on which (a busy pool is not a lost database; a file that is not a store
//! is never written to).

/// A store's failure, with the words that say it (its `Display`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreError {
    /// The database does not answer: connecting failed, or a statement got
    /// no answer within its deadline.
    Unreachable(String),
    /// The file or database is not a blkc store (or is corrupt, or is one
    /// this user must not trust: another's, or writable by others):
    /// refused, never changed.
    NotAStore(String),
    /// A store of another format than this blkc reads.
    Format(String),
    /// Every connection this process may open is in use, or another
    /// process holds the lock: try again, the store is not gone.
    Busy(String),
    /// Another process serves this SQLite store.
    Claimed(String),
    /// The file system: creating, reading or writing the store's files.
    Io(String),
    /// The database refused a statement.
    Db(String),
}

impl StoreError {
    pub(super) fn text(&self) -> &str {
        match self {
            StoreError::Unreachable(s)
            | StoreError::NotAStore(s)
            | StoreError::Format(s)
            | StoreError::Busy(s)
            | StoreError::Claimed(s)
            | StoreError::Io(s)
            | StoreError::Db(s) => s,
        }
    }
}

impl StoreError {
    /// What to do about it, in one line: the help of every report of it.
    pub fn help(&self) -> &'static str {
        match self {
            StoreError::Unreachable(_) => {
                "check that the database is up and reachable from here, and the URL's host, port, user and sslmode"
            }
            StoreError::NotAStore(_) => {
                "give another store with `--store PATH`; blkc never changes or recreates a file that is not its store"
            }
            StoreError::Format(_) => {
                "`blkc vars --store … migrate` moves an older store forward; a store a newer blkc made needs that blkc"
            }
            StoreError::Busy(_) => "another process holds the store; it frees when that run or program ends: try again",
            StoreError::Claimed(_) => {
                "stop the other `blkc serve`, or let several processes share a PostgreSQL store (docs/serve.md, \"Several processes\")"
            }
            StoreError::Io(_) => "check the path, the permissions of its folder, and the free space of its disk",
            StoreError::Db(_) => "the database refused the statement; its message above says why",
        }
    }
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.text())
    }
}

impl std::error::Error for StoreError {}
