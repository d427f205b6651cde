//! Custom variables in PostgreSQL, for several `blkc serve` processes (on
//! one machine or many) sharing one bot's state. The same behaviour as the
//! SQLite store: a save's reads and its write are one transaction, taken
//! in turn by every process (a transaction-scoped advisory lock, as SQLite's
//! `BEGIN IMMEDIATE`), so no read-then-save loses an update; a database
//! that is not a blkc store, or of a newer format, is refused unchanged;
//! the schema is created and moved forward only by `blkc vars migrate`.
//!
//! Connections go over TLS when the server offers it (rustls, as ureq
//! uses), and must with `sslmode=require` (or libpq's `verify-ca` and
//! `verify-full`); `sslrootcert=FILE` trusts a private authority.

use std::sync::{Arc, Mutex};

use postgres::{Client, Config};
use serde_json::Value as Json;

use super::Entry;
use crate::eval::VarStore;

/// The format of the tables this blkc reads and writes: 1 kept when an
/// interaction was seen (`seen_at`, seconds); 2 keeps until when a delivery
/// (an interaction or an event) counts as seen (`expires_at`, milliseconds),
/// and which `blkc serve` processes are alive (`blkc_processes`).
pub const SCHEMA_VERSION: i64 = 2;

/// How often (in calls) [`Pool::first_time`] removes expired deliveries.
const PRUNE_EVERY: u64 = 1024;

/// A `blkc serve` process counts as alive this long after it last checked
/// in ([`Pool::check_in`]; it does twice a second).
pub const PROCESS_ALIVE_MS: i64 = 2_000;

/// The advisory lock every save takes (an arbitrary constant: "blkc").
const SAVE_LOCK: i64 = 0x626c_6b63;

/// Connections to one database, kept for the runs that follow.
pub struct Pool {
    config: Config,
    tls: tokio_postgres_rustls::MakeRustlsConnect,
    idle: Mutex<Vec<Conn>>,
    /// Calls of [`Pool::first_time`], to prune now and then.
    deliveries: std::sync::atomic::AtomicU64,
    /// Where, for messages (the URL without its password).
    shown: String,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool").field("database", &self.shown).finish_non_exhaustive()
    }
}

/// A connection and its prepared statements (prepared once: each would
/// otherwise cost a round trip of its own on every use).
struct Conn {
    client: Client,
    get: Option<postgres::Statement>,
    set: Option<postgres::Statement>,
}

/// `postgres://user:password@host/db` without the password, for messages.
pub fn shown(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) => {
            if u.password().is_some() {
                let _ = u.set_password(Some("***"));
            }
            u.to_string()
        }
        Err(_) => "the PostgreSQL store".to_string(),
    }
}

/// TLS as ureq has it (rustls, ring), trusting the public roots, or only
/// the certificates of `sslrootcert` when the URL names a file.
fn tls(root_file: Option<&str>) -> Result<tokio_postgres_rustls::MakeRustlsConnect, String> {
    let roots = match root_file {
        None => rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() },
        Some(path) => {
            use rustls::pki_types::pem::PemObject as _;
            let mut roots = rustls::RootCertStore::empty();
            let certificates = rustls::pki_types::CertificateDer::pem_file_iter(path)
                .map_err(|e| format!("cannot read the sslrootcert file `{path}`: {e}"))?;
            for certificate in certificates {
                let certificate =
                    certificate.map_err(|e| format!("the sslrootcert file `{path}` is not PEM certificates: {e}"))?;
                roots.add(certificate).map_err(|e| format!("a certificate in `{path}` cannot be used: {e}"))?;
            }
            if roots.is_empty() {
                return Err(format!("the sslrootcert file `{path}` holds no certificate"));
            }
            roots
        }
    };
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
}

/// The connection settings of a URL, and its `sslrootcert` file. As with
/// libpq: `sslrootcert=FILE` trusts that file's certificates (a private
/// certificate authority) instead of the public ones, and `sslmode`
/// `verify-ca` or `verify-full` insists on TLS (rustls always checks the
/// certificate and the host's name, so both are `require` here).
fn settings(url: &str, shown: &str) -> Result<(Config, Option<String>), String> {
    let invalid = |e: &dyn std::fmt::Display| format!("{shown} is not a PostgreSQL URL: {e}");
    if !url.contains("sslrootcert") && !url.contains("sslmode=verify-") {
        return Ok((url.parse().map_err(|e| invalid(&e))?, None));
    }
    let mut parsed = url::Url::parse(url).map_err(|e| invalid(&e))?;
    let mut root_file = None;
    let mut kept: Vec<(String, String)> = Vec::new();
    for (key, value) in parsed.query_pairs() {
        match (&*key, &*value) {
            ("sslrootcert", file) => root_file = Some(file.to_string()),
            ("sslmode", "verify-ca" | "verify-full") => kept.push(("sslmode".into(), "require".into())),
            _ => kept.push((key.into_owned(), value.into_owned())),
        }
    }
    if kept.is_empty() {
        parsed.set_query(None);
    } else {
        parsed.query_pairs_mut().clear().extend_pairs(&kept);
    }
    let config: Config = parsed.as_str().parse().map_err(|e| invalid(&e))?;
    Ok((config, root_file))
}

impl Pool {
    /// Connects to `url` and checks that the database holds a blkc store
    /// of this format; refuses it, unchanged, otherwise.
    pub fn open(url: &str) -> Result<Arc<Pool>, String> {
        let pool = Pool::unchecked(url)?;
        let mut conn = pool.conn()?;
        match version(&mut conn.client, &pool.shown)? {
            Some(SCHEMA_VERSION) => {}
            Some(v) if v > SCHEMA_VERSION => {
                return Err(format!(
                    "{} has store format {v}; this blkc reads format {SCHEMA_VERSION} (a newer blkc made it)",
                    pool.shown
                ))
            }
            Some(v) => {
                return Err(format!(
                    "{} has store format {v}; move it to format {SCHEMA_VERSION} with `blkc vars --store URL migrate`",
                    pool.shown
                ))
            }
            None => {
                return Err(format!(
                    "{} holds no blkc store; create one with `blkc vars --store URL migrate` (blkc never writes into a database it did not set up)",
                    pool.shown
                ))
            }
        }
        pool.give_back(conn);
        Ok(Arc::new(pool))
    }

    fn unchecked(url: &str) -> Result<Pool, String> {
        let shown = shown(url);
        let (mut config, root_file) = settings(url, &shown)?;
        // A database that does not answer (a lost network) fails a run in
        // time rather than holding it, unless the URL says otherwise.
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(std::time::Duration::from_secs(10));
        }
        let tls = tls(root_file.as_deref()).map_err(|e| format!("{shown}: {e}"))?;
        Ok(Pool { config, tls, idle: Mutex::new(Vec::new()), deliveries: Default::default(), shown })
    }

    /// A kept connection, else a new one.
    fn conn(&self) -> Result<Conn, String> {
        if let Some(c) = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop() {
            if !c.client.is_closed() {
                return Ok(c);
            }
        }
        self.connect()
    }

    fn connect(&self) -> Result<Conn, String> {
        let client = self
            .config
            .connect(self.tls.clone())
            .map_err(|e| format!("cannot connect to {}: {}", self.shown, why(&e)))?;
        Ok(Conn { client, get: None, set: None })
    }

    /// Runs `f` on a kept connection, and once more on a new one when the
    /// kept one turns out to have been dropped by the database (a restart,
    /// a fail-over, an idle time-out): nothing was done on it.
    fn with_conn<T>(&self, f: impl Fn(&mut Conn) -> Result<T, postgres::Error>) -> Result<T, String> {
        let mut conn = self.conn()?;
        let mut result = f(&mut conn);
        if matches!(&result, Err(e) if dropped(e, &conn)) {
            conn = self.connect()?;
            result = f(&mut conn);
        }
        self.give_back(conn);
        result.map_err(|e| format!("{}: {}", self.shown, why(&e)))
    }

    fn give_back(&self, conn: Conn) {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if !conn.client.is_closed() && idle.len() < 64 {
            idle.push(conn);
        }
    }

    /// Whether this is the first time any process sharing the database has
    /// seen delivery `key` (an interaction id, or an event's identity): the
    /// platform may deliver one twice, or to two processes. A delivery
    /// received at `at_ms` (milliseconds since the epoch) counts as seen
    /// until `keep_ms` later; one seen before but expired by `at_ms` is new
    /// again. Whichever process asks first wins: the row is claimed in one
    /// statement.
    pub fn first_time(&self, key: &str, at_ms: i64, keep_ms: i64) -> Result<bool, String> {
        let prune = self.deliveries.fetch_add(1, std::sync::atomic::Ordering::Relaxed).is_multiple_of(PRUNE_EVERY);
        self.with_conn(|conn| {
            if prune {
                conn.client.execute("DELETE FROM blkc_seen WHERE expires_at < $1", &[&(now() * 1000)])?;
            }
            let claimed = conn.client.execute(
                "INSERT INTO blkc_seen (id, expires_at) VALUES ($1, $2)
                 ON CONFLICT (id) DO UPDATE SET expires_at = excluded.expires_at WHERE blkc_seen.expires_at <= $3",
                &[&key, &(at_ms + keep_ms), &at_ms],
            )?;
            Ok(claimed == 1)
        })
    }

    /// Says that `blkc serve` process `me` is alive, and how many are
    /// (itself included): they share the platform's global rate limit.
    /// Times are the database's clock, so machines' clocks need not agree.
    pub fn check_in(&self, me: &str) -> Result<usize, String> {
        // The statement sees the table as it was before its own write.
        let sql = "WITH clock AS (SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS ms),
                  mine AS (INSERT INTO blkc_processes (id, seen_at) SELECT $1, ms FROM clock
                           ON CONFLICT (id) DO UPDATE SET seen_at = excluded.seen_at RETURNING id),
                  gone AS (DELETE FROM blkc_processes USING clock WHERE seen_at < clock.ms - 60000 RETURNING id)
             SELECT 1 + count(*) FROM blkc_processes, clock WHERE seen_at > clock.ms - $2 AND id <> $1";
        let alive =
            self.with_conn(|conn| conn.client.query_one(sql, &[&me, &PROCESS_ALIVE_MS])?.try_get::<_, i64>(0))?;
        Ok(alive.max(1) as usize)
    }

    /// Process `me` stops: the others may use its share at once.
    pub fn check_out(&self, me: &str) -> Result<(), String> {
        self.with_conn(|conn| conn.client.execute("DELETE FROM blkc_processes WHERE id = $1", &[&me]).map(|_| ()))
    }

    /// A store for one run (or one `blkc vars` command).
    pub fn store(self: &Arc<Pool>) -> PgStore {
        PgStore { pool: self.clone(), client: None, in_transaction: false }
    }
}

/// The store's format, `None` when the database has no blkc tables.
fn version(client: &mut Client, shown: &str) -> Result<Option<i64>, String> {
    let has_meta: bool = client
        .query_one("SELECT to_regclass('blkc_meta') IS NOT NULL", &[])
        .and_then(|r| r.try_get(0))
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    if !has_meta {
        return Ok(None);
    }
    let row = client
        .query_opt("SELECT value FROM blkc_meta WHERE key = 'schema'", &[])
        .map_err(|e| format!("{shown} has a `blkc_meta` table that is not blkc's: {e}"))?;
    row.map(|r| r.try_get::<_, i64>(0)).transpose().map_err(|e| format!("{shown}: {e}"))
}

/// `blkc vars migrate`: creates the store's tables in an empty database, or
/// moves an older format forward; says what it did.
pub fn migrate(url: &str) -> Result<String, String> {
    let pool = Pool::unchecked(url)?;
    let mut conn = pool.conn()?;
    let mut tx = conn.client.transaction().map_err(|e| e.to_string())?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SAVE_LOCK]).map_err(|e| e.to_string())?;
    let current = {
        let has_meta: bool = tx
            .query_one("SELECT to_regclass('blkc_meta') IS NOT NULL", &[])
            .and_then(|r| r.try_get(0))
            .map_err(|e| e.to_string())?;
        if has_meta {
            tx.query_opt("SELECT value FROM blkc_meta WHERE key = 'schema'", &[])
                .map_err(|e| e.to_string())?
                .map(|r| r.get::<_, i64>(0))
        } else {
            None
        }
    };
    let done = match current {
        Some(SCHEMA_VERSION) => {
            return Ok(format!("{} is at store format {SCHEMA_VERSION}; nothing to do", pool.shown))
        }
        Some(v) if v > SCHEMA_VERSION => {
            return Err(format!(
                "{} has store format {v}, newer than this blkc's {SCHEMA_VERSION}; left unchanged",
                pool.shown
            ))
        }
        // Format 1 to 2: the deliveries seen are kept by expiry, in
        // milliseconds. They are minutes old at most; they start afresh.
        Some(1) => tx
            .batch_execute(&format!(
                "DROP TABLE blkc_seen;
                 CREATE TABLE blkc_seen (id TEXT PRIMARY KEY, expires_at BIGINT NOT NULL);
                 CREATE TABLE blkc_processes (id TEXT PRIMARY KEY, seen_at BIGINT NOT NULL);
                 UPDATE blkc_meta SET value = {SCHEMA_VERSION} WHERE key = 'schema';"
            ))
            .map(|()| format!("moved {} from store format 1 to {SCHEMA_VERSION}", pool.shown)),
        Some(v) => return Err(format!("{} has store format {v}, which no blkc wrote; left unchanged", pool.shown)),
        None => tx
            .batch_execute(&format!(
                "CREATE TABLE blkc_meta (key TEXT PRIMARY KEY, value BIGINT NOT NULL);
                 CREATE TABLE blkc_vars (name TEXT PRIMARY KEY, value TEXT NOT NULL, updated_at BIGINT NOT NULL);
                 CREATE TABLE blkc_seen (id TEXT PRIMARY KEY, expires_at BIGINT NOT NULL);
                 CREATE TABLE blkc_processes (id TEXT PRIMARY KEY, seen_at BIGINT NOT NULL);
                 INSERT INTO blkc_meta (key, value) VALUES ('schema', {SCHEMA_VERSION});"
            ))
            .map(|()| format!("created the store (format {SCHEMA_VERSION}) in {}", pool.shown)),
    };
    let done = done.map_err(|e| format!("cannot migrate the store in {}: {e}", pool.shown))?;
    tx.commit().map_err(|e| format!("cannot migrate the store in {}: {e}", pool.shown))?;
    Ok(done)
}

/// One run's use of the database: a connection from the pool, held while
/// the run needs it.
pub struct PgStore {
    pool: Arc<Pool>,
    client: Option<Conn>,
    in_transaction: bool,
}

impl Drop for PgStore {
    fn drop(&mut self) {
        if let Some(mut c) = self.client.take() {
            if self.in_transaction {
                let _ = c.client.batch_execute("ROLLBACK");
            }
            self.pool.give_back(c);
        }
    }
}

/// An error and what caused it (a TLS handshake's failure says why only
/// in its source: an unknown authority, a name that does not match).
fn why(e: &postgres::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        let more = s.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = s.source();
    }
    text
}

fn parse(text: &str) -> Result<Json, String> {
    serde_json::from_str(text).map_err(|e| format!("a stored value is not JSON: {e}"))
}

fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}

/// Whether `error` came of the database having dropped the connection.
fn dropped(error: &postgres::Error, conn: &Conn) -> bool {
    use postgres::error::SqlState;
    error.is_closed()
        || conn.client.is_closed()
        || matches!(error.code(), Some(c) if *c == SqlState::ADMIN_SHUTDOWN || *c == SqlState::CRASH_SHUTDOWN)
}

impl PgStore {
    /// Runs `f` on the run's connection (taken from the pool on first
    /// use). When the first statement on a kept connection finds it
    /// dropped, it runs once more on a new one; later in a run, a dropped
    /// connection is an error (a transaction on it is gone).
    fn with_conn<T>(&mut self, f: impl Fn(&mut Conn) -> Result<T, postgres::Error>) -> Result<T, String> {
        let first_use = self.client.is_none();
        let conn = match &mut self.client {
            Some(c) => c,
            None => self.client.insert(self.pool.conn()?),
        };
        let mut result = f(conn);
        if first_use && matches!(&result, Err(e) if dropped(e, conn)) {
            *conn = self.pool.connect()?;
            result = f(conn);
        }
        result.map_err(|e| format!("{}: {}", self.pool.shown, why(&e)))
    }

    pub fn list(&mut self) -> Result<Vec<Entry>, String> {
        let rows =
            self.with_conn(|c| c.client.query("SELECT name, value, updated_at FROM blkc_vars ORDER BY name", &[]))?;
        rows.iter()
            .map(|r| Ok(Entry { name: r.get(0), value: parse(r.get::<_, &str>(1))?, updated_at: r.get(2) }))
            .collect()
    }

    pub fn delete(&mut self, name: &str) -> Result<bool, String> {
        let n = self.with_conn(|c| c.client.execute("DELETE FROM blkc_vars WHERE name = $1", &[&name]))?;
        Ok(n > 0)
    }
}

/// `conn`'s prepared statement in `slot` (made on first use).
fn prepared(
    client: &mut Client,
    slot: &mut Option<postgres::Statement>,
    sql: &str,
) -> Result<postgres::Statement, postgres::Error> {
    match slot {
        Some(statement) => Ok(statement.clone()),
        None => Ok(slot.insert(client.prepare(sql)?).clone()),
    }
}

impl VarStore for PgStore {
    fn get(&mut self, name: &str) -> Result<Option<Json>, String> {
        let text = self.with_conn(|conn| {
            let statement = prepared(&mut conn.client, &mut conn.get, "SELECT value FROM blkc_vars WHERE name = $1")?;
            let row = conn.client.query_opt(&statement, &[&name])?;
            Ok(row.map(|r| r.get::<_, String>(0)))
        })?;
        text.map(|t| parse(&t)).transpose()
    }

    fn set(&mut self, name: &str, value: &Json) -> Result<(), String> {
        let text = value.to_string();
        let at = now();
        self.with_conn(|conn| {
            let sql = "INSERT INTO blkc_vars (name, value, updated_at) VALUES ($1, $2, $3)
                 ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at";
            let statement = prepared(&mut conn.client, &mut conn.set, sql)?;
            conn.client.execute(&statement, &[&name, &text, &at]).map(|_| ())
        })
    }

    /// Every process's saves take their turn: what a save reads and writes
    /// is one transaction, and no other save runs between them.
    fn begin(&mut self) -> Result<(), String> {
        if self.in_transaction {
            return Ok(());
        }
        // One round trip: the transaction and its turn.
        let sql = format!("BEGIN; SELECT pg_advisory_xact_lock({SAVE_LOCK})");
        self.with_conn(|conn| conn.client.batch_execute(&sql))?;
        self.in_transaction = true;
        Ok(())
    }

    fn end(&mut self, commit: bool) -> Result<(), String> {
        if !self.in_transaction {
            return Ok(());
        }
        self.in_transaction = false;
        let sql = if commit { "COMMIT" } else { "ROLLBACK" };
        self.with_conn(|conn| conn.client.batch_execute(sql))
    }
}
