//! The SQLite store: a file beside the `.blk` file, opened by each run
//! when it first reads or saves, and the serving process's claim on it.
//!
//! Each save is its own transaction; several `blkc run` processes may
//! save into one store at once (WAL journal, a busy time-out, `BEGIN
//! IMMEDIATE`). A file that is not a blkc store, or is corrupt, is
//! reported and never recreated.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior};
use serde_json::Value as Json;

use super::error::StoreError;
use super::host::ServingClaim;

use super::later::{Full, Later, COLUMNS, MAX_PER_OWNER, MAX_PER_STORE};
use super::values::{Admin, Entry, VarStore};

/// Whether `e` says the table of waiting work was never made (no run of
/// the store has made any yet).
pub(super) fn no_table(e: &rusqlite::Error) -> bool {
    e.to_string().contains("no such table: blkc_later")
}

/// A row of `blkc_later` ([`COLUMNS`]) as waiting work.
pub(super) fn later_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Later> {
    let vars: String = r.get(6)?;
    Ok(Later {
        id: r.get(0)?,
        owner: r.get(1)?,
        key: r.get(2)?,
        due_ms: r.get(3)?,
        tree: r.get(4)?,
        note: r.get(5)?,
        vars: serde_json::from_str(&vars).unwrap_or(Json::Null),
    })
}

/// Claims the SQLite store at `path` for one serving process. A second
/// `blkc serve` on the same store is refused: what it has answered is known
/// to its own memory only, so two would both answer an interaction the
/// platform delivered twice. Processes that share a bot share a PostgreSQL
/// store instead. `blkc run` and `blkc vars` do not claim it.
pub fn claim_for_serving(path: &Path) -> Result<ServingClaim, StoreError> {
    use std::io::{Read as _, Seek as _, Write as _};
    let lock = path.with_file_name(format!(
        "{}.serving",
        path.file_name().map_or("store".into(), |n| n.to_string_lossy().into_owned())
    ));
    if let Some(dir) = lock.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| StoreError::Io(format!("cannot create `{}`: {e}", dir.display())))?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NOFOLLOW);
    let mut file = options.open(&lock).map_err(|e| StoreError::Io(format!("cannot open `{}`: {e}", lock.display())))?;
    // The standard library's advisory lock (`flock` on Unix), held while
    // the file is open: a process that dies gives it back.
    {
        if file.try_lock().is_err() {
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            let holder = holder.trim();
            let who = if holder.is_empty() { String::new() } else { format!(" (process {holder})") };
            return Err(StoreError::Claimed(format!(
                "another `blkc serve`{who} serves with the store `{}`; an SQLite store serves one process, \
                 whose memory alone knows what it answered. Several processes of one bot share a PostgreSQL \
                 store (`--store postgres://…`, see docs/serve.md, \"Several processes\")",
                path.display()
            )));
        }
    }
    let _ = file.set_len(0);
    let _ = file.rewind();
    let _ = write!(file, "{}", std::process::id());
    Ok(ServingClaim::new(file))
}

/// Where the store is when no `--store` is given, relative to the folder of
/// the `.blk` file (`blkc vars`: the current folder).
pub const DEFAULT_PATH: &str = ".blkc/store.sqlite3";

/// The format of an SQLite store this blkc reads and writes.
pub const SCHEMA_VERSION: i64 = 1;

pub struct Store {
    pub(super) conn: Connection,
    path: PathBuf,
    /// A save's transaction is open (see [`VarStore::begin`]).
    in_transaction: bool,
    /// The file opened (device and inode), when opened to write.
    identity: (u64, u64),
    /// A process's kept connection: its writers' gate, held while in a
    /// transaction, and the flag that has the log synced.
    keeping: Option<(Arc<WriteGate>, Arc<AtomicBool>)>,
}

/// How long a save waits for another process's save to finish.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

impl Store {
    /// Opens the store at `path` to read and write, creating it (mode 0600,
    /// and its folder) when absent. An existing file is checked to be a blkc
    /// store, read-only, before anything is written to it: a file that is
    /// not (empty, another program's database, not a database) is refused
    /// without a byte changed.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let shown = path.display();
        let exists = match std::fs::metadata(path) {
            Ok(meta) if meta.len() == 0 => {
                return Err(StoreError::NotAStore(format!("`{shown}` is an empty file, not a blkc store")));
            }
            Ok(_) => true,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
            Err(e) => return Err(StoreError::Io(format!("cannot read `{shown}`: {e}"))),
        };
        if !exists {
            create(path)?;
        }
        let identity = file_identity(path)?;
        // Checked without writing before it is opened to write.
        Store::open_read_only(path)?;
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NOFOLLOW;
        let conn = Connection::open_with_flags(path, flags).map_err(|e| describe(path, e))?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(|e| describe(path, e))?;
        let store = Store { conn, path: path.to_path_buf(), in_transaction: false, identity, keeping: None };
        match store.verify() {
            // SQLite needs to create its journal beside the store to write.
            Err(_) if path.parent().is_some_and(read_only_folder) => Err(StoreError::Io(format!(
                "the store `{shown}` cannot be written: its folder is read-only (a store writes its journal beside it)"
            ))),
            other => other.map(|()| store),
        }
    }

    /// Opens an existing store only to read: nothing is created or written,
    /// and a store in a folder this user cannot write is still readable.
    pub fn open_read_only(path: &Path) -> Result<Store, StoreError> {
        let shown = path.display();
        match std::fs::metadata(path) {
            Ok(meta) if meta.len() == 0 => {
                return Err(StoreError::NotAStore(format!("`{shown}` is an empty file, not a blkc store")))
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(StoreError::Io(format!("there is no store at `{shown}`")))
            }
            Err(e) => return Err(StoreError::Io(format!("cannot read `{shown}`: {e}"))),
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI;
        let conn = Connection::open_with_flags(path, flags).map_err(|e| describe(path, e))?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(|e| describe(path, e))?;
        let store = Store { conn, path: path.to_path_buf(), in_transaction: false, identity: (0, 0), keeping: None };
        match store.verify() {
            // A store in WAL mode needs its shared-memory file to be read; in a
            // folder that cannot be written, read it as an unchanging file.
            Err(_) if path.parent().is_some_and(read_only_folder) => {
                let uri = format!("file:{}?immutable=1", path.display());
                let conn = Connection::open_with_flags(uri, flags).map_err(|e| describe(path, e))?;
                let store =
                    Store { conn, path: path.to_path_buf(), in_transaction: false, identity: (0, 0), keeping: None };
                store.verify()?;
                Ok(store)
            }
            other => other.map(|()| store),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Makes this connection one a process keeps ([`Kept`]): its commits
    /// are not synced each (the log is, within a second), and its writes
    /// take their turn at `gate`.
    pub(super) fn keep(&mut self, gate: Arc<WriteGate>, dirty: Arc<AtomicBool>) -> Result<(), StoreError> {
        self.conn.pragma_update(None, "synchronous", "NORMAL").map_err(|e| describe(&self.path, e))?;
        // The kept connections' checkpoints are the syncer's (kept.rs).
        self.conn.pragma_update(None, "wal_autocheckpoint", 0).map_err(|e| describe(&self.path, e))?;
        self.keeping = Some((gate, dirty));
        Ok(())
    }

    /// A passive checkpoint: the log's committed frames into the store,
    /// the log synced before and the store after (`synchronous=FULL`).
    pub(super) fn checkpoint(&mut self) -> Result<(), StoreError> {
        self.conn.pragma_update(None, "synchronous", "FULL").map_err(|e| describe(&self.path, e))?;
        let done = self.conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
        done.map_err(|e| describe(&self.path, e))
    }

    pub(super) fn is_kept(&self) -> bool {
        self.keeping.is_some()
    }

    pub(super) fn identity(&self) -> (u64, u64) {
        self.identity
    }

    pub(super) fn in_transaction(&self) -> bool {
        self.in_transaction
    }

    /// A write of its own (outside a save's transaction: SQLite makes it
    /// one), in its turn among the process's writers.
    pub(super) fn writing<T>(&mut self, f: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> rusqlite::Result<T> {
        let gate = self.keeping.as_ref().filter(|_| !self.in_transaction);
        if let Some((gate, _)) = gate {
            gate.enter();
        }
        let done = f(&self.conn);
        if let Some((gate, dirty)) = gate {
            dirty.store(true, Ordering::Release);
            gate.leave();
        }
        done
    }

    /// A database that is not ours is refused rather than changed.
    fn verify(&self) -> Result<(), StoreError> {
        let version: Option<i64> = self
            .conn
            .query_row("SELECT value FROM blkc_meta WHERE key = 'schema'", [], |r| r.get(0))
            .optional()
            .map_err(|e| match e.sqlite_error_code() {
                Some(rusqlite::ErrorCode::NotADatabase | rusqlite::ErrorCode::DatabaseCorrupt) => {
                    describe(&self.path, e)
                }
                Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked) => {
                    describe(&self.path, e)
                }
                Some(rusqlite::ErrorCode::CannotOpen) => describe(&self.path, e),
                _ => StoreError::NotAStore(format!(
                    "`{}` is an SQLite database but not a blkc store",
                    self.path.display()
                )),
            })?;
        match version {
            Some(SCHEMA_VERSION) => Ok(()),
            Some(v) => Err(StoreError::Format(format!(
                "`{}` has store format {v}; this blkc reads format {SCHEMA_VERSION}",
                self.path.display()
            ))),
            None => Err(StoreError::NotAStore(format!(
                "`{}` is an SQLite database but not a blkc store",
                self.path.display()
            ))),
        }
    }
}

impl Admin for Store {
    fn list(&mut self) -> Result<Vec<Entry>, StoreError> {
        let failed = |e| describe(&self.path, e);
        let mut stmt = self.conn.prepare("SELECT name, value, updated_at FROM vars ORDER BY name").map_err(failed)?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, i64>(2)?)))
            .map_err(failed)?;
        let mut out = Vec::new();
        for row in rows {
            let (name, value, updated_at) = row.map_err(failed)?;
            out.push(Entry { name, value: parse(&value)?, updated_at });
        }
        Ok(out)
    }

    fn delete(&mut self, name: &str) -> Result<bool, StoreError> {
        let path = self.path.clone();
        let failed = |e| describe(&path, e);
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(failed)?;
        let n = tx.execute("DELETE FROM vars WHERE name = ?1", [name]).map_err(failed)?;
        tx.commit().map_err(failed)?;
        Ok(n > 0)
    }
}

/// What a store failure means, in words, and of which kind.
pub(super) fn describe(path: &Path, e: rusqlite::Error) -> StoreError {
    use rusqlite::ErrorCode;
    let shown = path.display();
    match e.sqlite_error_code() {
        Some(ErrorCode::NotADatabase) => {
            StoreError::NotAStore(format!("`{shown}` is not a blkc store (not an SQLite database, or corrupt)"))
        }
        Some(ErrorCode::DatabaseCorrupt) => StoreError::NotAStore(format!("`{shown}` is corrupt")),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => StoreError::Busy(format!(
            "the store `{shown}` is busy: another process (another `blkc run` saving, or a program holding it open) \
             kept it locked for {} s",
            BUSY_TIMEOUT.as_secs()
        )),
        Some(ErrorCode::ReadOnly) => {
            StoreError::Io(format!("the store `{shown}` cannot be written (read-only file or folder)"))
        }
        Some(ErrorCode::DiskFull) => StoreError::Io(format!("the disk holding the store `{shown}` is full")),
        Some(ErrorCode::SystemIoFailure) => StoreError::Io(format!(
            "the store `{shown}` could not be written (a full disk, a file size limit, or a failing disk)"
        )),
        Some(ErrorCode::CannotOpen) => StoreError::Io(format!("the store `{shown}` cannot be opened")),
        _ => StoreError::Db(format!("`{shown}`: {e}")),
    }
}

/// Creates a new store at `path` (and its folder), readable by this user
/// only, since it holds saved response data. It is built whole in a
/// private folder made for it beside `path` (`mkdtemp`: a fresh name, mode
/// 0700, so nobody else can plant a name in it, not even SQLite's journal
/// files) and linked into place, which never follows or replaces a name
/// already there: another process never sees a store half made, and if a
/// store was linked there first, that one is used (and checked, like any
/// store, by [`check_ownership`]). A folder a killed creation left behind
/// is removed by the next one.
fn create(path: &Path) -> Result<(), StoreError> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| StoreError::Io(format!("cannot create `{}`: {e}", dir.display())))?;
    let file_name = path.file_name().map_or("store".into(), |n| n.to_string_lossy().into_owned());
    let prefix = format!(".{file_name}.new-");
    remove_abandoned(dir, &prefix);
    let private = tempfile::Builder::new()
        .prefix(&format!("{prefix}{}-", std::process::id()))
        .tempdir_in(dir)
        .map_err(|e| cannot_create(path, &e))?;
    let tmp = private.path().join("store.sqlite3");
    make_new(&tmp)?;
    match std::fs::hard_link(&tmp, path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(cannot_create(path, &e)),
    }
    // `private` and what is in it are removed here.
}

fn cannot_create(path: &Path, e: &std::io::Error) -> StoreError {
    use std::io::ErrorKind;
    StoreError::Io(if matches!(e.kind(), ErrorKind::PermissionDenied | ErrorKind::ReadOnlyFilesystem) {
        let why = if e.kind() == ErrorKind::PermissionDenied { "permission denied" } else { "read-only file system" };
        format!("cannot create the store `{}`: its folder cannot be written ({why})", path.display())
    } else {
        format!("cannot create the store `{}`: {e}", path.display())
    })
}

/// Removes what a creation killed half-way left in `dir`: folders (and the
/// files of older versions) named `prefix<pid>…` whose process is gone and
/// which belong to this user. Nothing else is touched.
fn remove_abandoned(dir: &Path, prefix: &str) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        // SAFETY: geteuid has no preconditions.
        let me = unsafe { libc::geteuid() };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(rest) = name.strip_prefix(prefix) else { continue };
            let Ok(pid) = rest.split('-').next().unwrap_or_default().parse::<libc::pid_t>() else { continue };
            // SAFETY: signal 0 sends nothing; it asks whether `pid` exists.
            let alive = pid <= 0
                || unsafe { libc::kill(pid, 0) } == 0
                || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH);
            let Ok(meta) = entry.path().symlink_metadata() else { continue };
            if alive || meta.uid() != me {
                continue;
            }
            let _ =
                if meta.is_dir() { std::fs::remove_dir_all(entry.path()) } else { std::fs::remove_file(entry.path()) };
        }
    }
}

/// The file at `path` (device and inode), refused when another user owns
/// it or others may write it: such a file may have been planted for this
/// user to write saved data into (for another to read), or be changed
/// under it.
pub(super) fn file_identity(path: &Path) -> Result<(u64, u64), StoreError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        let shown = path.display();
        let meta =
            std::fs::symlink_metadata(path).map_err(|e| StoreError::Io(format!("cannot read `{shown}`: {e}")))?;
        if meta.file_type().is_symlink() {
            return Err(StoreError::NotAStore(format!(
                "`{shown}` is a symbolic link; a store must be the file itself"
            )));
        }
        if !meta.is_file() {
            return Err(StoreError::NotAStore(format!("`{shown}` is not a file, not a blkc store")));
        }
        // SAFETY: geteuid has no preconditions.
        let me = unsafe { libc::geteuid() };
        if meta.uid() != me {
            return Err(StoreError::NotAStore(format!(
                "the store `{shown}` belongs to another user (uid {}); blkc writes only a store of its own user (uid {me})",
                meta.uid()
            )));
        }
        if meta.mode() & 0o022 != 0 {
            return Err(StoreError::NotAStore(format!(
                "the store `{shown}` can be written by other users (mode {:o}); make it private with `chmod 600`",
                meta.mode() & 0o777
            )));
        }
        Ok((meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    Ok((0, 0))
}

/// A complete, empty store at `tmp` (a new name in a private folder):
/// mode 0600, WAL, the tables and the format version.
fn make_new(tmp: &Path) -> Result<(), StoreError> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(tmp).map_err(|e| StoreError::Io(format!("cannot create `{}`: {e}", tmp.display())))?;
    let conn = Connection::open_with_flags(tmp, OpenFlags::SQLITE_OPEN_READ_WRITE).map_err(|e| describe(tmp, e))?;
    conn.pragma_update(None, "journal_mode", "WAL").map_err(|e| describe(tmp, e))?;
    conn.execute_batch(&format!(
        "BEGIN;
         CREATE TABLE blkc_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
         CREATE TABLE vars (name TEXT PRIMARY KEY, value TEXT NOT NULL, updated_at INTEGER NOT NULL);
         INSERT INTO blkc_meta (key, value) VALUES ('schema', {SCHEMA_VERSION});
         COMMIT;"
    ))
    .map_err(|e| describe(tmp, e))?;
    conn.close().map_err(|(_, e)| describe(tmp, e))
}

/// Whether this user cannot create files in `dir`.
fn read_only_folder(dir: &Path) -> bool {
    let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
    let probe = dir.join(format!(".blkc-write-probe-{}", std::process::id()));
    match std::fs::File::create(&probe) {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            false
        }
        Err(_) => true,
    }
}

fn parse(text: &str) -> Result<Json, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::NotAStore(format!("a stored value is not JSON: {e}")))
}

impl VarStore for Store {
    fn get(&mut self, name: &str) -> Result<Option<Json>, StoreError> {
        let value: Option<String> = self
            .conn
            .prepare_cached("SELECT value FROM vars WHERE name = ?1")
            .and_then(|mut s| s.query_row([name], |r| r.get(0)).optional())
            .map_err(|e| describe(&self.path, e))?;
        value.map(|v| parse(&v)).transpose()
    }

    fn set(&mut self, name: &str, value: &Json) -> Result<(), StoreError> {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64);
        let upsert = "INSERT INTO vars (name, value, updated_at) VALUES (?1, ?2, ?3)
             ON CONFLICT(name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at";
        let params = rusqlite::params![name, value.to_string(), now];
        let outer = self.in_transaction;
        self.begin()?;
        let written = self.conn.prepare_cached(upsert).and_then(|mut s| s.execute(params));
        let written = written.map(|_| ()).map_err(|e| describe(&self.path, e));
        if !outer {
            self.end(written.is_ok())?;
        }
        written
    }

    /// Takes the store's write lock: the reads of a save and its write are
    /// one transaction, so concurrent read-then-save runs lose nothing.
    fn begin(&mut self) -> Result<(), StoreError> {
        if !self.in_transaction {
            if let Some((gate, _)) = &self.keeping {
                gate.enter();
            }
            if let Err(e) = self.conn.execute_batch("BEGIN IMMEDIATE") {
                if let Some((gate, _)) = &self.keeping {
                    gate.leave();
                }
                return Err(describe(&self.path, e));
            }
            self.in_transaction = true;
        }
        Ok(())
    }

    fn end(&mut self, commit: bool) -> Result<(), StoreError> {
        if !self.in_transaction {
            return Ok(());
        }
        let sql = if commit { "COMMIT" } else { "ROLLBACK" };
        let ended = self.conn.execute_batch(sql);
        if ended.is_err() && !self.conn.is_autocommit() {
            // A commit that failed (the disk is full) leaves the
            // transaction open: it is rolled back, and nothing was saved.
            let _ = self.conn.execute_batch("ROLLBACK");
        }
        self.in_transaction = false;
        if let Some((gate, dirty)) = &self.keeping {
            dirty.store(true, Ordering::Release);
            gate.leave();
        }
        ended.map_err(|e| describe(&self.path, e))
    }

    fn remove_expired(&mut self, prefix: &str, now_ms: u64) -> Result<u64, StoreError> {
        let sql = "DELETE FROM vars WHERE substr(name, 1, length(?1)) = ?1
             AND value GLOB '[0-9]*' AND value NOT GLOB '*[^0-9]*' AND CAST(value AS INTEGER) < ?2";
        let removed = self.writing(|conn| conn.execute(sql, rusqlite::params![prefix, now_ms as i64]));
        removed.map(|n| n as u64).map_err(|e| describe(&self.path, e))
    }

    fn wait_later(&mut self, item: &Later) -> Result<Result<(), Full>, StoreError> {
        self.later_table()?;
        let outer = self.in_transaction;
        self.begin()?;
        let kept = self.keep_later(item);
        if !outer {
            self.end(matches!(kept, Ok(Ok(()))))?;
        }
        kept
    }

    fn cancel_later(&mut self, owner: &str, key: &str, now_ms: i64) -> Result<u64, StoreError> {
        let sql = "DELETE FROM blkc_later WHERE owner = ?1 AND key = ?2 AND due_at > ?3 AND claim_until <= ?3";
        match self.writing(|conn| conn.execute(sql, rusqlite::params![owner, key, now_ms])) {
            Ok(n) => Ok(n as u64),
            Err(e) if no_table(&e) => Ok(0),
            Err(e) => Err(describe(&self.path, e)),
        }
    }

    fn waiting(&mut self, owner: Option<&str>) -> Result<Vec<Later>, StoreError> {
        let sql = format!(
            "SELECT {COLUMNS} FROM blkc_later WHERE ?1 IS NULL OR owner = ?1 ORDER BY due_at, id LIMIT {MAX_PER_STORE}"
        );
        let mut statement = match self.conn.prepare(&sql) {
            Ok(s) => s,
            Err(e) if no_table(&e) => return Ok(Vec::new()),
            Err(e) => return Err(describe(&self.path, e)),
        };
        let rows = statement.query_map([owner], later_row);
        rows.and_then(|rows| rows.collect::<Result<_, _>>()).map_err(|e| describe(&self.path, e))
    }
}

impl Store {
    /// Makes the table of waiting work, if no run has yet (readers of the
    /// store's format 1 pass it by, as they pass `blkc_seen`).
    pub(super) fn later_table(&self) -> Result<(), StoreError> {
        self.conn
            .execute_batch(
                "CREATE TABLE IF NOT EXISTS blkc_later (id TEXT PRIMARY KEY, owner TEXT NOT NULL, key TEXT NOT NULL,
                   due_at INTEGER NOT NULL, tree TEXT NOT NULL, note TEXT NOT NULL, vars TEXT NOT NULL,
                   claim_until INTEGER NOT NULL DEFAULT 0, claimed_by TEXT NOT NULL DEFAULT '');
                 CREATE INDEX IF NOT EXISTS blkc_later_due ON blkc_later (due_at);
                 CREATE INDEX IF NOT EXISTS blkc_later_owner ON blkc_later (owner, key);",
            )
            .map_err(|e| describe(&self.path, e))
    }

    /// [`VarStore::wait_later`] inside its transaction.
    fn keep_later(&mut self, item: &Later) -> Result<Result<(), Full>, StoreError> {
        let failed = |e| describe(&self.path, e);
        if !item.key.is_empty() {
            let sql = "DELETE FROM blkc_later WHERE owner = ?1 AND key = ?2";
            self.conn.execute(sql, rusqlite::params![item.owner, item.key]).map_err(failed)?;
        }
        let count = |sql: &str, p: &[&dyn rusqlite::ToSql]| self.conn.query_row(sql, p, |r| r.get::<_, i64>(0));
        let owned = count("SELECT count(*) FROM blkc_later WHERE owner = ?1", &[&item.owner]).map_err(failed)?;
        if owned as usize >= MAX_PER_OWNER {
            return Ok(Err(Full::Owner));
        }
        if count("SELECT count(*) FROM blkc_later", &[]).map_err(failed)? as usize >= MAX_PER_STORE {
            return Ok(Err(Full::Store));
        }
        let sql = format!("INSERT INTO blkc_later ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
        let vars = item.vars.to_string();
        let params = rusqlite::params![item.id, item.owner, item.key, item.due_ms, item.tree, item.note, vars];
        self.conn.execute(&sql, params).map_err(failed)?;
        Ok(Ok(()))
    }
}

/// The store, opened on the first read (to read only) or the first save (to
/// write): a run that uses no custom variable never touches it, and one that
/// only reads works where the store cannot be written.
pub struct LazyStore {
    path: std::path::PathBuf,
    store: Option<Store>,
    writable: bool,
    /// The process's kept connections: one is taken first, and the one
    /// used is given back when the run ends.
    kept: Option<Arc<dyn Keeper>>,
}

impl LazyStore {
    pub fn new(path: std::path::PathBuf) -> LazyStore {
        LazyStore { path, store: None, writable: false, kept: None }
    }

    /// A run's store from `kept`, a process's kept connections.
    pub fn kept(kept: Arc<dyn Keeper>) -> LazyStore {
        LazyStore { path: kept.path().to_path_buf(), store: None, writable: false, kept: Some(kept) }
    }

    fn for_reading(&mut self) -> Result<Option<&mut Store>, StoreError> {
        if self.store.is_none() {
            if let Some(store) = self.kept.as_ref().and_then(|k| k.take()) {
                self.store = Some(store);
                self.writable = true;
                return Ok(self.store.as_mut());
            }
            if !self.path.exists() {
                return Ok(None);
            }
            self.store = Some(Store::open_read_only(&self.path)?);
        }
        Ok(self.store.as_mut())
    }

    fn for_writing(&mut self) -> Result<&mut Store, StoreError> {
        if !self.writable {
            self.store = None;
            self.store = Some(match &self.kept {
                Some(kept) => kept.open()?,
                None => Store::open(&self.path)?,
            });
            self.writable = true;
        }
        self.store.as_mut().ok_or_else(|| StoreError::Io("the store is not open".to_string()))
    }
}

impl Drop for LazyStore {
    /// A run that ended in a save's transaction (it panicked) rolls it
    /// back, which gives the writers' gate back; the connection is kept.
    fn drop(&mut self) {
        let Some(mut store) = self.store.take() else { return };
        if store.in_transaction {
            let _ = store.end(false);
        }
        if let Some(kept) = &self.kept {
            kept.give_back(store);
        }
    }
}

impl VarStore for LazyStore {
    fn get(&mut self, name: &str) -> Result<Option<serde_json::Value>, StoreError> {
        if self.writable {
            return self.for_writing()?.get(name);
        }
        match self.for_reading()? {
            Some(store) => store.get(name),
            None => Ok(None),
        }
    }

    fn set(&mut self, name: &str, value: &serde_json::Value) -> Result<(), StoreError> {
        self.for_writing()?.set(name, value)
    }

    fn begin(&mut self) -> Result<(), StoreError> {
        self.for_writing()?.begin()
    }

    fn end(&mut self, commit: bool) -> Result<(), StoreError> {
        self.for_writing()?.end(commit)
    }

    fn remove_expired(&mut self, prefix: &str, now_ms: u64) -> Result<u64, StoreError> {
        self.for_writing()?.remove_expired(prefix, now_ms)
    }

    fn wait_later(&mut self, item: &Later) -> Result<Result<(), Full>, StoreError> {
        self.for_writing()?.wait_later(item)
    }

    fn cancel_later(&mut self, owner: &str, key: &str, now_ms: i64) -> Result<u64, StoreError> {
        match self.for_reading()? {
            Some(_) => self.for_writing()?.cancel_later(owner, key, now_ms),
            None => Ok(0),
        }
    }

    fn waiting(&mut self, owner: Option<&str>) -> Result<Vec<Later>, StoreError> {
        if self.writable {
            return self.for_writing()?.waiting(owner);
        }
        match self.for_reading()? {
            Some(store) => store.waiting(owner),
            None => Ok(Vec::new()),
        }
    }
}

/// Where a run's store takes a connection from and gives it back to: a
/// serving process's kept connections (`kept.rs`).
pub trait Keeper: Send + Sync {
    /// The store's path.
    fn path(&self) -> &Path;
    /// A kept connection to the store's file as it is now, if there is one.
    fn take(&self) -> Option<Store>;
    /// A kept connection, else one opened to write and made a kept one.
    fn open(&self) -> Result<Store, StoreError>;
    /// The connection a run used, for the next run.
    fn give_back(&self, store: Store);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_store_held_by_another_process_is_said_to_be_busy() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("store.sqlite3");
        let mut store = Store::open(&path).unwrap();
        store.conn.busy_timeout(Duration::from_millis(50)).unwrap();
        let other = Connection::open(&path).unwrap();
        other.execute_batch("BEGIN IMMEDIATE").unwrap();
        let error = store.set("x", &Json::from(1)).unwrap_err();
        assert!(
            matches!(&error, StoreError::Busy(why) if why.contains("is busy") && why.contains("another process")),
            "{error}"
        );
        other.execute_batch("ROLLBACK").unwrap();
        store.set("x", &Json::from(1)).unwrap();
    }

    #[test]
    fn each_refusal_says_what_kind_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty");
        std::fs::write(&empty, b"").unwrap();
        assert!(matches!(Store::open(&empty), Err(StoreError::NotAStore(_))));
        let text = dir.path().join("text");
        std::fs::write(&text, b"not a database, not at all; just some text long enough").unwrap();
        assert!(
            matches!(Store::open_read_only(&text), Err(StoreError::NotAStore(_))),
            "{:?}",
            Store::open_read_only(&text).err()
        );
        let missing = dir.path().join("missing");
        assert!(matches!(Store::open_read_only(&missing), Err(StoreError::Io(_))));
        let other = dir.path().join("other.sqlite3");
        Connection::open(&other).unwrap().execute_batch("CREATE TABLE t (x)").unwrap();
        assert!(matches!(Store::open_read_only(&other), Err(StoreError::NotAStore(_))));
        let newer = dir.path().join("newer.sqlite3");
        drop(Store::open(&newer).unwrap());
        Connection::open(&newer).unwrap().execute_batch("UPDATE blkc_meta SET value = 99").unwrap();
        assert!(matches!(Store::open_read_only(&newer), Err(StoreError::Format(_))));
        let path = dir.path().join("store.sqlite3");
        let _claim = claim_for_serving(&path).unwrap();
        assert!(matches!(claim_for_serving(&path), Err(StoreError::Claimed(_))));
    }
}
