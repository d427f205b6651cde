//! Custom variables that outlive a run, in an embedded SQLite database.
//!
//! Each save is its own transaction; several `blkc run` processes may save
//! into one store at once (WAL journal, a busy time-out, `BEGIN IMMEDIATE`).
//! A file that is not a blkc store, or is corrupt, is reported and never
//! recreated.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior};
use serde_json::Value as Json;

use crate::eval::VarStore;

/// Where the store is when no `--store` is given: in the current folder.
pub const DEFAULT_PATH: &str = ".blkc/store.sqlite3";

const SCHEMA_VERSION: i64 = 1;

pub struct Store {
    conn: Connection,
    path: PathBuf,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub name: String,
    pub value: Json,
    /// Seconds since the Unix epoch.
    pub updated_at: i64,
}

impl Store {
    /// Opens the store at `path`, creating it (and its folder) when absent.
    pub fn open(path: &Path) -> Result<Store, String> {
        let shown = path.display();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
        }
        let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE)
            .map_err(|e| format!("cannot open `{shown}`: {e}"))?;
        conn.busy_timeout(Duration::from_secs(30)).map_err(|e| format!("`{shown}`: {e}"))?;
        let describe = |e: rusqlite::Error| -> String {
            match e.sqlite_error_code() {
                Some(rusqlite::ErrorCode::NotADatabase) => {
                    format!("`{shown}` is not a blkc store (not an SQLite database, or corrupt)")
                }
                Some(rusqlite::ErrorCode::DatabaseCorrupt) => format!("`{shown}` is corrupt"),
                _ => format!("`{shown}`: {e}"),
            }
        };
        conn.pragma_update(None, "journal_mode", "WAL").map_err(describe)?;
        let mut store = Store { conn, path: path.to_path_buf() };
        store.init().map_err(describe)?;
        store.verify()?;
        Ok(store)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn init(&mut self) -> rusqlite::Result<()> {
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let tables: i64 = tx.query_row("SELECT count(*) FROM sqlite_master WHERE type = 'table'", [], |r| r.get(0))?;
        if tables == 0 {
            tx.execute_batch(
                "CREATE TABLE blkc_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
                 CREATE TABLE vars (name TEXT PRIMARY KEY, value TEXT NOT NULL, updated_at INTEGER NOT NULL);",
            )?;
            tx.execute("INSERT INTO blkc_meta (key, value) VALUES ('schema', ?1)", [SCHEMA_VERSION])?;
        }
        tx.commit()
    }

    /// A database that is not ours is refused rather than changed.
    fn verify(&self) -> Result<(), String> {
        let version: Option<i64> = self
            .conn
            .query_row("SELECT value FROM blkc_meta WHERE key = 'schema'", [], |r| r.get(0))
            .optional()
            .map_err(|_| format!("`{}` is an SQLite database but not a blkc store", self.path.display()))?;
        match version {
            Some(SCHEMA_VERSION) => Ok(()),
            Some(v) => {
                Err(format!("`{}` has store format {v}; this blkc reads format {SCHEMA_VERSION}", self.path.display()))
            }
            None => Err(format!("`{}` is an SQLite database but not a blkc store", self.path.display())),
        }
    }

    pub fn list(&self) -> Result<Vec<Entry>, String> {
        let mut stmt =
            self.conn.prepare("SELECT name, value, updated_at FROM vars ORDER BY name").map_err(|e| e.to_string())?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, i64>(2)?)))
            .map_err(|e| e.to_string())?;
        let mut out = Vec::new();
        for row in rows {
            let (name, value, updated_at) = row.map_err(|e| e.to_string())?;
            out.push(Entry { name, value: parse(&value)?, updated_at });
        }
        Ok(out)
    }

    pub fn delete(&mut self, name: &str) -> Result<bool, String> {
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(|e| e.to_string())?;
        let n = tx.execute("DELETE FROM vars WHERE name = ?1", [name]).map_err(|e| e.to_string())?;
        tx.commit().map_err(|e| e.to_string())?;
        Ok(n > 0)
    }
}

fn parse(text: &str) -> Result<Json, String> {
    serde_json::from_str(text).map_err(|e| format!("a stored value is not JSON: {e}"))
}

impl VarStore for Store {
    fn get(&mut self, name: &str) -> Result<Option<Json>, String> {
        let value: Option<String> = self
            .conn
            .query_row("SELECT value FROM vars WHERE name = ?1", [name], |r| r.get(0))
            .optional()
            .map_err(|e| e.to_string())?;
        value.map(|v| parse(&v)).transpose()
    }

    fn set(&mut self, name: &str, value: &Json) -> Result<(), String> {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64);
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(|e| e.to_string())?;
        tx.execute(
            "INSERT INTO vars (name, value, updated_at) VALUES (?1, ?2, ?3)
             ON CONFLICT(name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
            rusqlite::params![name, value.to_string(), now],
        )
        .map_err(|e| e.to_string())?;
        tx.commit().map_err(|e| e.to_string())
    }
}
