//! A process's SQLite store ([`SqliteHost`]): the connections it keeps
//! open between its runs ([`Kept`]), and the deliveries it took
//! ([`SqliteSeen`]). (`sqlite.rs` is the store itself, which this file
//! builds on: one connection, its checks, and the gate of one writer at a
//! time.)
//!
//! Opening the store is most of what a saving run used to cost (three
//! connections, each checked to be a blkc store: a dozen system calls and
//! the file's header read and parsed each time). A serving process keeps
//! the connections its runs used, each checked once when it was opened, and
//! gives one to the next run. Before one is given, the file at the store's
//! path is checked to be the same file (device and inode), still this
//! user's and private: a store moved, removed or replaced is opened anew,
//! as before, so nothing is ever saved into a file no longer there.
//!
//! Kept connections commit without an fsync each (`synchronous=NORMAL` in
//! WAL mode): a commit is in the log once written, so a process killed
//! (`kill -9`) or crashed loses no save it acknowledged, and the store is
//! never corrupt. Nor do they move the log into the store when it grows
//! (SQLite's automatic checkpoint, two fsyncs made by whichever save
//! crossed the line, while it holds the write lock): a thread does, within
//! a tenth of a second of a commit, syncing the log first, so a power cut
//! loses at most the saves of the last tenth of a second and no save waits
//! on the disk.
//!
//! The process's own writers take their turn at [`WriteGate`] before
//! SQLite's write lock: SQLite's busy handler sleeps and polls (1, 2, 5, 10
//! ms and longer), which at dozens of saving runs at once made the slowest
//! wait 100 ms and more; the gate wakes the next writer when one commits.
//! Another process's writer (`blkc run`, `blkc vars`) still meets SQLite's
//! lock, with its time-out.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior};

use super::error::StoreError;
use super::host::{Host, ServingClaim};
use super::later::{Later, ANSWER_TEXT, ANSWER_TREE, CLAIM_BATCH, COLUMNS};
use super::sqlite::{claim_for_serving, describe, later_row, no_table, Keeper, LazyStore, Store, WriteGate};
use super::values::VarStore;

/// Connections kept beyond this many are closed when given back.
const MAX_IDLE: usize = 64;

/// How soon after a commit the log is synced and moved into the store.
const SYNC_EVERY: Duration = Duration::from_millis(100);

/// The kept connections of the store at `path`.
pub struct Kept {
    path: PathBuf,
    idle: Mutex<Vec<Store>>,
    gate: Arc<WriteGate>,
    /// Something was committed since the log was last synced.
    dirty: Arc<AtomicBool>,
    syncer: Mutex<bool>,
    /// Itself, for the syncer's thread (which ends with the last handle).
    me: Weak<Kept>,
}

impl std::fmt::Debug for Kept {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kept").field("path", &self.path).finish_non_exhaustive()
    }
}

impl Kept {
    pub fn new(path: PathBuf) -> Arc<Kept> {
        Arc::new_cyclic(|me| Kept {
            path,
            idle: Mutex::new(Vec::new()),
            gate: Arc::new(WriteGate::default()),
            dirty: Arc::new(AtomicBool::new(false)),
            syncer: Mutex::new(false),
            me: me.clone(),
        })
    }

    /// The gate the process's writers take their turn at.
    pub fn gate(&self) -> Arc<WriteGate> {
        self.gate.clone()
    }

    /// A writer of its own connection committed: the syncer moves the log
    /// into the store within a tenth of a second.
    pub fn committed(&self) {
        self.dirty.store(true, Ordering::Release);
    }

    /// Moves the log's committed saves into the store (a passive
    /// checkpoint: no writer waits on it), syncing the log first and the
    /// store after, on a connection of the syncer's own (`own`, opened
    /// when first needed and again when the store's file changed).
    fn checkpoint(&self, own: &mut Option<Store>) {
        if own.as_ref().is_some_and(|s| super::sqlite::file_identity(&self.path).ok() != Some(s.identity())) {
            *own = None;
        }
        // The syncer never makes a store: one removed is made by the next
        // save, as a run's would be.
        if own.is_none() && super::sqlite::file_identity(&self.path).is_ok() {
            *own = Store::open(&self.path).ok();
        }
        let Some(store) = own else { return };
        if let Err(e) = store.checkpoint() {
            tracing::warn!(error = %e, store = %self.path.display(), "the store's log could not be moved into it");
        }
    }

    /// Starts the thread that syncs the log after commits, once; it ends
    /// with the last handle on `self`.
    pub fn start_syncer(&self) {
        let mut started = self.syncer.lock().unwrap_or_else(|e| e.into_inner());
        if *started {
            return;
        }
        let weak = self.me.clone();
        let spawned = std::thread::Builder::new().name("blkc-store-sync".into()).spawn(move || {
            let mut own: Option<Store> = None;
            loop {
                std::thread::sleep(SYNC_EVERY);
                let Some(kept) = weak.upgrade() else { return };
                if kept.dirty.swap(false, Ordering::AcqRel) {
                    kept.checkpoint(&mut own);
                }
            }
        });
        *started = spawned.is_ok();
    }
}

impl Keeper for Kept {
    /// A connection to write with: a kept one whose file is still the
    /// store's, else one opened (and the store created) as
    /// [`Store::open`] does.
    fn open(&self) -> Result<Store, StoreError> {
        if let Some(store) = self.take() {
            return Ok(store);
        }
        let mut store = Store::open(&self.path)?;
        store.keep(self.gate.clone(), self.dirty.clone())?;
        self.start_syncer();
        Ok(store)
    }

    /// A kept connection, if there is one and the file at the path is the
    /// one it has open (else every kept one is closed).
    fn take(&self) -> Option<Store> {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        let top = idle.last()?;
        if super::sqlite::file_identity(&self.path).ok() != Some(top.identity()) {
            idle.clear();
            return None;
        }
        idle.pop()
    }

    /// Keeps `store` for the next run, unless it is in a transaction (a
    /// run that failed half-way: closing it rolls back) or enough are kept.
    fn give_back(&self, store: Store) {
        if store.in_transaction() || !store.is_kept() {
            return;
        }
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if idle.len() < MAX_IDLE {
            idle.push(store);
        }
    }

    fn path(&self) -> &Path {
        &self.path
    }
}

/// Where custom variables live between runs: what a run reads and saves.
/// An SQLite file: opened by the first run that reads or saves, its
/// connections kept for the next runs ([`Kept`]); the deliveries the one
/// serving process took are kept in it too.
#[derive(Debug)]
pub struct SqliteHost {
    path: PathBuf,
    seen: SqliteSeen,
    kept: Arc<Kept>,
}

impl SqliteHost {
    pub fn new(path: PathBuf) -> SqliteHost {
        let kept = Kept::new(path.clone());
        SqliteHost { seen: SqliteSeen::new(path.clone(), kept.clone()), kept, path }
    }

    /// `f` on a kept connection (or one opened), given back after.
    fn with_store<T>(&self, f: impl FnOnce(&mut Store) -> Result<T, StoreError>) -> Result<T, StoreError> {
        let mut store = self.kept.open()?;
        let done = f(&mut store);
        self.kept.give_back(store);
        done
    }
}

impl Host for SqliteHost {
    fn run_store(&self) -> Box<dyn VarStore + Send> {
        Box::new(LazyStore::kept(self.kept.clone()))
    }

    fn remember(&self, key: String, expires_ms: i64) {
        self.seen.remember(key, expires_ms);
    }

    fn finish(&self) {
        self.seen.finish();
    }

    fn recent(&self, now_ms: i64) -> Result<Vec<(String, i64)>, StoreError> {
        self.seen.recent(now_ms)
    }

    fn claim_for_serving(&self) -> Result<Option<ServingClaim>, StoreError> {
        claim_for_serving(&self.path).map(Some)
    }

    fn claim_due(&self, now_ms: i64, until_ms: i64, me: &str) -> Result<Vec<Later>, StoreError> {
        self.with_store(|store| {
            store.later_table()?;
            let sql = format!(
                "UPDATE blkc_later SET claim_until = ?2, claimed_by = ?3 WHERE id IN (SELECT id FROM blkc_later
                 WHERE due_at <= ?1 AND claim_until <= ?1 ORDER BY due_at LIMIT {CLAIM_BATCH}) RETURNING {COLUMNS}"
            );
            let claimed: rusqlite::Result<Vec<Later>> = store.writing(|conn| {
                let mut statement = conn.prepare_cached(&sql)?;
                let rows = statement.query_map(rusqlite::params![now_ms, until_ms, me], later_row)?;
                rows.collect::<Result<_, _>>()
            });
            let mut claimed = claimed.map_err(|e| describe(&self.path, e))?;
            claimed.sort_by_key(|l| l.due_ms);
            Ok(claimed)
        })
    }

    fn renew_later(&self, ids: &[String], me: &str, until_ms: i64) -> Result<usize, StoreError> {
        self.with_store(|store| {
            store
                .writing(|conn| {
                    let mut kept = 0;
                    for id in ids {
                        let sql = "UPDATE blkc_later SET claim_until = ?3 WHERE id = ?1 AND claimed_by = ?2";
                        kept += conn.prepare_cached(sql)?.execute(rusqlite::params![id, me, until_ms])?;
                    }
                    Ok(kept)
                })
                .map_err(|e| describe(&self.path, e))
        })
    }

    fn done_later(&self, id: &str, me: &str) -> Result<(), StoreError> {
        let sql = "DELETE FROM blkc_later WHERE id = ?1 AND claimed_by = ?2";
        self.with_store(|store| {
            let done = store.writing(|conn| conn.prepare_cached(sql)?.execute(rusqlite::params![id, me]));
            done.map(|_| ()).map_err(|e| describe(&self.path, e))
        })
    }

    fn take_answer(
        &self,
        wait: (&str, &str),
        text: &str,
        now_ms: i64,
        claim: (i64, &str),
    ) -> Result<Option<Later>, StoreError> {
        if !self.path.exists() {
            return Ok(None);
        }
        let sql = format!(
            "UPDATE blkc_later SET tree = json_extract(vars, '$.\"{ANSWER_TREE}\"'),
             vars = json_set(vars, '$.\"{ANSWER_TEXT}\"', ?3), key = '', due_at = ?4, claim_until = ?5, claimed_by = ?6
             WHERE owner = ?1 AND key = ?2 AND due_at > ?4 AND claim_until <= ?4
             AND json_extract(vars, '$.\"{ANSWER_TREE}\"') IS NOT NULL RETURNING {COLUMNS}"
        );
        let params = rusqlite::params![wait.0, wait.1, text, now_ms, claim.0, claim.1];
        self.with_store(|store| {
            match store.writing(|conn| conn.prepare_cached(&sql)?.query_row(params, later_row).optional()) {
                Err(e) if no_table(&e) => Ok(None),
                other => other.map_err(|e| describe(&self.path, e)),
            }
        })
    }

    fn next_due(&self) -> Result<Option<i64>, StoreError> {
        if !self.path.exists() {
            return Ok(None);
        }
        let store = Store::open_read_only(&self.path)?;
        let next = store.conn.query_row("SELECT min(due_at) FROM blkc_later", [], |r| r.get::<_, Option<i64>>(0));
        match next {
            Ok(next) => Ok(next),
            Err(e) if no_table(&e) => Ok(None),
            Err(e) => Err(describe(&self.path, e)),
        }
    }
}

/// The deliveries the serving process took, in its SQLite store (a table
/// beside the variables, `blkc_seen`, made when first needed; readers of
/// the store's format 1 pass it by), so that a restarted server still
/// knows them. The process's memory decides while it lives; the store is
/// written behind it, by a thread of its own, many deliveries a
/// transaction, so no answer waits on the disk.
pub struct SqliteSeen {
    path: PathBuf,
    writer: std::sync::Mutex<Option<Writer>>,
    /// The process's kept connections ([`Kept`]): a batch takes its turn
    /// at their writers' gate, rather than meet a run's save at SQLite's
    /// lock, whose busy handler sleeps, and their syncer moves the log
    /// into the store.
    kept: Arc<Kept>,
}

/// The thread that writes the deliveries, and its queue.
type Writer = (crossbeam_channel::Sender<(String, i64)>, std::thread::JoinHandle<()>);

impl std::fmt::Debug for SqliteSeen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteSeen").field("path", &self.path).finish_non_exhaustive()
    }
}

/// Deliveries waiting to be written, past which one is left to memory.
const SEEN_BACKLOG: usize = 65_536;

impl SqliteSeen {
    fn new(path: PathBuf, kept: Arc<Kept>) -> SqliteSeen {
        SqliteSeen { path, writer: std::sync::Mutex::new(None), kept }
    }

    /// The store's connection with its table of deliveries (the store is
    /// checked to be a blkc store, and created, before it is written).
    fn connect(&self) -> Result<Connection, StoreError> {
        let conn = Store::open(&self.path)?.conn;
        // A delivery lost to a power cut at most: not worth an fsync each;
        // the log is moved into the store by the kept connections' syncer.
        conn.pragma_update(None, "synchronous", "NORMAL").map_err(|e| describe(&self.path, e))?;
        conn.pragma_update(None, "wal_autocheckpoint", 0).map_err(|e| describe(&self.path, e))?;
        conn.execute_batch("CREATE TABLE IF NOT EXISTS blkc_seen (id TEXT PRIMARY KEY, expires_at INTEGER NOT NULL)")
            .map_err(|e| describe(&self.path, e))?;
        Ok(conn)
    }

    /// The deliveries taken that still count at `now_ms`: their keys and
    /// when each stops counting (ms since the epoch), soonest first.
    pub fn recent(&self, now_ms: i64) -> Result<Vec<(String, i64)>, StoreError> {
        let conn = self.connect()?;
        let mut statement = conn
            .prepare("SELECT id, expires_at FROM blkc_seen WHERE expires_at > ?1 ORDER BY expires_at")
            .map_err(|e| describe(&self.path, e))?;
        let rows = statement
            .query_map([now_ms], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))
            .map_err(|e| describe(&self.path, e))?;
        rows.collect::<Result<_, _>>().map_err(|e| describe(&self.path, e))
    }

    /// Notes delivery `key` taken, counting until `expires_ms`: written in
    /// the background.
    pub fn remember(&self, key: String, expires_ms: i64) {
        let mut writer = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        if writer.is_none() {
            let (tx, rx) = crossbeam_channel::bounded(SEEN_BACKLOG);
            let Ok(conn) = self.connect() else { return };
            let (path, kept) = (self.path.clone(), self.kept.clone());
            kept.start_syncer();
            let started =
                std::thread::Builder::new().name("blkc-seen".into()).spawn(move || write_seen(conn, &path, &kept, &rx));
            let Ok(thread) = started else { return };
            *writer = Some((tx, thread));
        }
        if let Some((tx, _)) = writer.as_ref() {
            let _ = tx.try_send((key, expires_ms));
        }
    }

    /// Writes what waits, and stops the writer (the server stops).
    pub fn finish(&self) {
        let writer = self.writer.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some((tx, thread)) = writer {
            drop(tx);
            let _ = thread.join();
        }
    }
}

/// Writes the deliveries as they come, those waiting together in one
/// transaction; now and then removes those that stopped counting.
fn write_seen(mut conn: Connection, path: &Path, kept: &Kept, rx: &crossbeam_channel::Receiver<(String, i64)>) {
    let mut batches = 0u64;
    while let Ok(first) = rx.recv() {
        let batch: Vec<(String, i64)> = std::iter::once(first).chain(rx.try_iter().take(4096)).collect();
        let gate = kept.gate();
        gate.enter();
        let written = (|| -> rusqlite::Result<()> {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            {
                let mut insert =
                    tx.prepare_cached("INSERT OR REPLACE INTO blkc_seen (id, expires_at) VALUES (?1, ?2)")?;
                for (key, expires) in &batch {
                    insert.execute(rusqlite::params![key, expires])?;
                }
            }
            if batches.is_multiple_of(256) {
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_millis() as i64);
                tx.execute("DELETE FROM blkc_seen WHERE expires_at < ?1", [now])?;
            }
            tx.commit()
        })();
        kept.committed();
        gate.leave();
        if let Err(e) = written {
            // The process's memory still refuses replays while it lives.
            eprintln!("blkc: cannot note deliveries in {}: {}", path.display(), describe(path, e));
        }
        batches += 1;
    }
}
