//! The SQLite connections a process keeps open between its runs, and the
//! one writer at a time among its threads.
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
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::Duration;

use super::error::StoreError;
use super::sqlite::Store;

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
}

impl std::fmt::Debug for Kept {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kept").field("path", &self.path).finish_non_exhaustive()
    }
}

impl Kept {
    pub fn new(path: PathBuf) -> Arc<Kept> {
        Arc::new(Kept {
            path,
            idle: Mutex::new(Vec::new()),
            gate: Arc::new(WriteGate::default()),
            dirty: Arc::new(AtomicBool::new(false)),
            syncer: Mutex::new(false),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
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

    /// A connection to write with: a kept one whose file is still the
    /// store's, else one opened (and the store created) as
    /// [`Store::open`] does.
    pub fn open(self: &Arc<Kept>) -> Result<Store, StoreError> {
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
    pub fn take(&self) -> Option<Store> {
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
    pub fn give_back(&self, store: Store) {
        if store.in_transaction() || !store.is_kept() {
            return;
        }
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if idle.len() < MAX_IDLE {
            idle.push(store);
        }
    }

    /// Moves the log's committed saves into the store (a passive
    /// checkpoint: no writer waits on it), syncing the log first and the
    /// store after, on a connection of the syncer's own (`own`, opened
    /// when first needed and again when the store's file changed).
    fn checkpoint(&self, own: &mut Option<Store>) {
        if own.as_ref().is_some_and(|s| super::sqlite::file_identity(&self.path).ok() != Some(s.identity())) {
            *own = None;
        }
        if own.is_none() {
            *own = Store::open(&self.path).ok();
        }
        let Some(store) = own else { return };
        if let Err(e) = store.checkpoint() {
            tracing::warn!(error = %e, store = %self.path.display(), "the store's log could not be moved into it");
        }
    }

    /// Starts the thread that syncs the log after commits, once; it ends
    /// with the last handle on `self`.
    pub fn start_syncer(self: &Arc<Kept>) {
        let mut started = self.syncer.lock().unwrap_or_else(|e| e.into_inner());
        if *started {
            return;
        }
        let weak: Weak<Kept> = Arc::downgrade(self);
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

/// One writer at a time among a process's kept connections.
#[derive(Debug, Default)]
pub struct WriteGate {
    busy: Mutex<bool>,
    free: Condvar,
}

impl WriteGate {
    /// Waits for the gate to be free, and takes it.
    pub fn enter(&self) {
        let mut busy = self.busy.lock().unwrap_or_else(|e| e.into_inner());
        while *busy {
            busy = self.free.wait(busy).unwrap_or_else(|e| e.into_inner());
        }
        *busy = true;
    }

    /// Gives the gate to the next writer.
    pub fn leave(&self) {
        *self.busy.lock().unwrap_or_else(|e| e.into_inner()) = false;
        self.free.notify_one();
    }
}
