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
//!
//! Every call has a deadline. The connections are tokio-postgres's, each
//! with a small runtime that the waiting thread drives; each statement
//! waits for its answer at most [`DEADLINE`] (connects
//! [`CONNECT_DEADLINE`]), and a connection that missed one is closed, never
//! reused. A process opens at most [`MAX_CONNECTIONS`], and a run holds one
//! only for a statement or a save's transaction. A network that drops packets, or a proxy that takes bytes and
//! never answers, fails a call in time instead of holding it for as long as
//! TCP keeps trying. While the database does not answer, the pool says so
//! ([`Pool::health`]) and fails calls at once, trying again at most once a
//! second, so runs do not queue behind it.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value as Json;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Config, Row, Statement, ToStatement};

use super::error::StoreError;
use super::values::{Admin, Entry, VarStore};

mod later;
pub mod leases;

/// The format of the tables this blkc reads and writes: 1 kept when an
/// interaction was seen (`seen_at`, seconds); 2 keeps until when a delivery
/// (an interaction or an event) counts as seen (`expires_at`, milliseconds),
/// and which `blkc serve` processes are alive (`blkc_processes`); 3 leases
/// the Gateway's shards (`blkc_shards`, held by `blkc_shard_holders`) and
/// spaces the identifies (`blkc_identify`).
pub const SCHEMA_VERSION: i64 = 4;

/// The table of store format 4.
const LATER_TABLE: &str = "CREATE TABLE blkc_later (id TEXT PRIMARY KEY, owner TEXT NOT NULL, key TEXT NOT NULL,
       due_at BIGINT NOT NULL, tree TEXT NOT NULL, note TEXT NOT NULL, vars TEXT NOT NULL,
       claim_until BIGINT NOT NULL DEFAULT 0, claimed_by TEXT NOT NULL DEFAULT '');
     CREATE INDEX blkc_later_due ON blkc_later (due_at);
     CREATE INDEX blkc_later_owner ON blkc_later (owner, key);";

/// The tables format 3 adds to format 2.
const SHARD_TABLES: &str = "CREATE TABLE blkc_shards (
        shard INT PRIMARY KEY, holder TEXT NOT NULL DEFAULT '', expires_at BIGINT NOT NULL DEFAULT 0,
        session_id TEXT, seq BIGINT, resume_url TEXT);
     CREATE TABLE blkc_shard_holders (
        id TEXT PRIMARY KEY, most INT, seen_at BIGINT NOT NULL, joined_at BIGINT NOT NULL);
     CREATE TABLE blkc_identify (bucket INT PRIMARY KEY, last_at BIGINT NOT NULL, left_count BIGINT NOT NULL DEFAULT 0);";

/// How often (in calls) [`Pool::first_time`] removes expired deliveries.
const PRUNE_EVERY: u64 = 1024;

/// A `blkc serve` process counts as alive this long after it last checked
/// in ([`Pool::check_in`]; it does twice a second).
pub const PROCESS_ALIVE_MS: i64 = 2_000;

/// The advisory lock every save takes (an arbitrary constant: "blkc").
const SAVE_LOCK: i64 = 0x626c_6b63;

/// The longest one statement waits for the database's answer (and the
/// database's own `statement_timeout`, unless the URL sets `options`).
pub const DEADLINE: Duration = Duration::from_secs(5);
/// The longest a new connection (TCP, TLS and start-up) may take, unless
/// the URL sets `connect_timeout`.
pub const CONNECT_DEADLINE: Duration = Duration::from_secs(10);
/// While the database does not answer, a call tries it at most this often;
/// the others fail at once.
const RETRY_EVERY: Duration = Duration::from_secs(1);
/// The most connections one process opens to the database. A run holds one
/// only for a statement, or for a save's transaction, so this many carry
/// far more runs at once; past it, a call waits for one to be given back
/// for at most [`DEADLINE`], then fails (B311).
pub const MAX_CONNECTIONS: usize = 32;

/// The connections open, against [`MAX_CONNECTIONS`].
#[derive(Debug, Default)]
struct Slots {
    open: Mutex<usize>,
    freed: std::sync::Condvar,
}

/// One of the connections allowed; given back when dropped.
struct Slot(Arc<Slots>);

impl Drop for Slot {
    fn drop(&mut self) {
        *self.0.open.lock().unwrap_or_else(|e| e.into_inner()) -= 1;
        self.0.freed.notify_one();
    }
}

impl Slots {
    /// A place for a new connection, waiting up to `wait` for one.
    fn take(self: &Arc<Slots>, wait: Duration) -> Result<Slot, Failure> {
        let until = Instant::now() + wait;
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        while *open >= MAX_CONNECTIONS {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Failure::Busy(format!(
                    "all {MAX_CONNECTIONS} of the process's connections to the database were in use for {} s",
                    wait.as_secs()
                )));
            }
            open = self.freed.wait_timeout(open, left).unwrap_or_else(|e| e.into_inner()).0;
        }
        *open += 1;
        Ok(Slot(self.clone()))
    }
}

/// A connection's own runtime: one the calling thread drives while it
/// waits, so a statement's bytes move on that thread with no hand-over
/// (one runtime for every connection, on a thread of its own, halved the
/// saves a second at 8 and 32 at once: every statement crossed threads
/// twice).
fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::Runtime(format!("cannot start a runtime for the store: {e}")))
}

/// Why a call failed: the database's error, or no answer in time.
#[derive(Debug)]
pub enum Failure {
    Db(tokio_postgres::Error),
    /// No answer within the deadline (what was waited for, and how long).
    NoAnswer(&'static str, Duration),
    /// The store's own runtime could not start.
    Runtime(String),
    /// Every connection this process may open is in use: the database is
    /// busy, not gone.
    Busy(String),
}

impl Failure {
    /// Whether the database cannot be reached (rather than refused a
    /// statement): the pool is then marked down.
    fn unreachable(&self) -> bool {
        match self {
            Failure::Db(e) => e.is_closed() || e.as_db_error().is_none(),
            Failure::NoAnswer(..) | Failure::Runtime(_) => true,
            Failure::Busy(_) => false,
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Db(e) => f.write_str(&why(e)),
            Failure::NoAnswer(what, after) => write!(
                f,
                "no answer to {what} within {} s (the network to the database may be lost)",
                after.as_secs_f64()
            ),
            Failure::Runtime(e) | Failure::Busy(e) => f.write_str(e),
        }
    }
}

impl From<tokio_postgres::Error> for Failure {
    fn from(e: tokio_postgres::Error) -> Failure {
        Failure::Db(e)
    }
}

/// Waits for `future` on `runtime`, for at most `deadline`.
fn within<T>(
    runtime: &tokio::runtime::Runtime,
    what: &'static str,
    deadline: Duration,
    future: impl Future<Output = Result<T, tokio_postgres::Error>>,
) -> Result<T, Failure> {
    // The timer is made inside the runtime, which it needs.
    match runtime.block_on(async move { tokio::time::timeout(deadline, future).await }) {
        Ok(result) => result.map_err(Failure::Db),
        Err(_) => Err(Failure::NoAnswer(what, deadline)),
    }
}

/// Connections to one database, kept for the runs that follow.
pub struct Pool {
    config: Config,
    tls: tokio_postgres_rustls::MakeRustlsConnect,
    idle: Mutex<Vec<Conn>>,
    slots: Arc<Slots>,
    /// Whether the database answers, as the last call found.
    health: Mutex<Health>,
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

/// Whether the database answers.
#[derive(Debug, Default)]
struct Health {
    /// Since when it has not, and why.
    down: Option<(Instant, String)>,
    /// When a call last tried it while it was down.
    tried: Option<Instant>,
}

/// A connection and its prepared statements (prepared once: each would
/// otherwise cost a round trip of its own on every use).
struct Conn {
    client: tokio_postgres::Client,
    /// Its runtime, where the task that moves its bytes lives (driven by
    /// the thread that waits on a call).
    runtime: Option<tokio::runtime::Runtime>,
    get: Option<Statement>,
    set: Option<Statement>,
    /// A call on it got no answer in time: it is closed, never reused.
    broken: bool,
    /// Its place among the process's connections (given back last).
    _slot: Slot,
}

impl Drop for Conn {
    fn drop(&mut self) {
        // Ends the task and closes the socket, even when the other end takes
        // bytes and never answers; without blocking, wherever it is dropped.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

impl Conn {
    fn rt(&self) -> Result<&tokio::runtime::Runtime, Failure> {
        self.runtime.as_ref().ok_or_else(|| Failure::Runtime("the connection is closed".into()))
    }

    fn execute<S: ?Sized + ToStatement>(&mut self, sql: &S, params: &[&(dyn ToSql + Sync)]) -> Result<u64, Failure> {
        let result = within(self.rt()?, "a statement", DEADLINE, self.client.execute(sql, params));
        self.broken |= matches!(result, Err(Failure::NoAnswer(..)));
        result
    }

    fn query<S: ?Sized + ToStatement>(&mut self, sql: &S, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>, Failure> {
        let result = within(self.rt()?, "a query", DEADLINE, self.client.query(sql, params));
        self.broken |= matches!(result, Err(Failure::NoAnswer(..)));
        result
    }

    fn query_one<S: ?Sized + ToStatement>(&mut self, sql: &S, params: &[&(dyn ToSql + Sync)]) -> Result<Row, Failure> {
        let result = within(self.rt()?, "a query", DEADLINE, self.client.query_one(sql, params));
        self.broken |= matches!(result, Err(Failure::NoAnswer(..)));
        result
    }

    fn query_opt<S: ?Sized + ToStatement>(
        &mut self,
        sql: &S,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<Row>, Failure> {
        let result = within(self.rt()?, "a query", DEADLINE, self.client.query_opt(sql, params));
        self.broken |= matches!(result, Err(Failure::NoAnswer(..)));
        result
    }

    fn batch_execute(&mut self, sql: &str) -> Result<(), Failure> {
        let result = within(self.rt()?, "a statement", DEADLINE, self.client.batch_execute(sql));
        self.broken |= matches!(result, Err(Failure::NoAnswer(..)));
        result
    }

    fn prepare(&mut self, sql: &str) -> Result<Statement, Failure> {
        let result = within(self.rt()?, "a statement's preparation", DEADLINE, self.client.prepare(sql));
        self.broken |= matches!(result, Err(Failure::NoAnswer(..)));
        result
    }

    /// Whether it can be kept for another call.
    fn reusable(&self) -> bool {
        !self.broken && !self.client.is_closed()
    }
}

/// `postgres://user:password@host/db` without the password, for messages:
/// neither the user-info's nor libpq's query form (`?password=…`), nor a
/// `sslpassword`.
pub fn shown(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) => {
            if u.password().is_some() {
                let _ = u.set_password(Some("***"));
            }
            let secret = |key: &str| key.eq_ignore_ascii_case("password") || key.eq_ignore_ascii_case("sslpassword");
            if u.query_pairs().any(|(k, _)| secret(&k)) {
                let pairs: Vec<(String, String)> = u
                    .query_pairs()
                    .map(|(k, v)| {
                        let v = if secret(&k) { "***".to_string() } else { v.into_owned() };
                        (k.into_owned(), v)
                    })
                    .collect();
                u.query_pairs_mut().clear().extend_pairs(&pairs);
            }
            u.to_string()
        }
        Err(_) => "the PostgreSQL store".to_string(),
    }
}

/// TLS as ureq has it (rustls, ring), trusting the public roots, or only
/// the certificates of `sslrootcert` when the URL names a file.
fn tls(root_file: Option<&str>) -> Result<tokio_postgres_rustls::MakeRustlsConnect, StoreError> {
    let bad = StoreError::Unreachable;
    let roots = match root_file {
        None => rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() },
        Some(path) => {
            use rustls::pki_types::pem::PemObject as _;
            let mut roots = rustls::RootCertStore::empty();
            let certificates = rustls::pki_types::CertificateDer::pem_file_iter(path)
                .map_err(|e| bad(format!("cannot read the sslrootcert file `{path}`: {e}")))?;
            for certificate in certificates {
                let certificate = certificate
                    .map_err(|e| bad(format!("the sslrootcert file `{path}` is not PEM certificates: {e}")))?;
                roots.add(certificate).map_err(|e| bad(format!("a certificate in `{path}` cannot be used: {e}")))?;
            }
            if roots.is_empty() {
                return Err(bad(format!("the sslrootcert file `{path}` holds no certificate")));
            }
            roots
        }
    };
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| bad(format!("TLS: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
}

/// The connection settings of a URL, and its `sslrootcert` file. As with
/// libpq: `sslrootcert=FILE` trusts that file's certificates (a private
/// certificate authority) instead of the public ones, and `sslmode`
/// `verify-ca` or `verify-full` insists on TLS (rustls always checks the
/// certificate and the host's name, so both are `require` here).
fn settings(url: &str, shown: &str) -> Result<(Config, Option<String>), StoreError> {
    let invalid = |e: &dyn std::fmt::Display| StoreError::Unreachable(format!("{shown} is not a PostgreSQL URL: {e}"));
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
    pub fn open(url: &str) -> Result<Arc<Pool>, StoreError> {
        let pool = Pool::unchecked(url)?;
        let mut conn = pool.conn(true).map_err(|e| match pool.failed(&e) {
            StoreError::Db(why) | StoreError::Unreachable(why) => {
                StoreError::Unreachable(format!("cannot connect to {why}"))
            }
            other => other,
        })?;
        match version(&mut conn, &pool.shown)? {
            Some(SCHEMA_VERSION) => {}
            Some(v) if v > SCHEMA_VERSION => {
                return Err(StoreError::Format(format!(
                    "{} has store format {v}; this blkc reads format {SCHEMA_VERSION} (a newer blkc made it)",
                    pool.shown
                )))
            }
            Some(v) => {
                return Err(StoreError::Format(format!(
                    "{} has store format {v}; move it to format {SCHEMA_VERSION} with `blkc vars --store URL migrate`",
                    pool.shown
                )))
            }
            None => {
                return Err(StoreError::NotAStore(format!(
                    "{} holds no blkc store; create one with `blkc vars --store URL migrate` (blkc never writes into a database it did not set up)",
                    pool.shown
                )))
            }
        }
        pool.give_back(conn);
        Ok(Arc::new(pool))
    }

    fn unchecked(url: &str) -> Result<Pool, StoreError> {
        let shown = shown(url);
        let (mut config, root_file) = settings(url, &shown)?;
        // A database that does not answer (a lost network) fails a run in
        // time rather than holding it, unless the URL says otherwise: the
        // kernel gives up on data it cannot deliver, and the database on a
        // statement, by the deadline too.
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_DEADLINE);
        }
        if !url.contains("tcp_user_timeout") {
            config.tcp_user_timeout(DEADLINE);
        }
        if config.get_options().is_none() {
            config.options(format!("-c statement_timeout={}", DEADLINE.as_millis()));
        }
        let tls = tls(root_file.as_deref()).map_err(|e| StoreError::Unreachable(format!("{shown}: {}", e.text())))?;
        Ok(Pool {
            config,
            tls,
            idle: Mutex::new(Vec::new()),
            slots: Arc::default(),
            health: Mutex::new(Health::default()),
            deliveries: Default::default(),
            shown,
        })
    }

    /// Why the database does not answer, and since how long; `None` while
    /// it does (as far as the last call found).
    pub fn health(&self) -> Option<String> {
        let health = self.health.lock().unwrap_or_else(|e| e.into_inner());
        health
            .down
            .as_ref()
            .map(|(since, why)| format!("{} has not answered for {} s: {why}", self.shown, since.elapsed().as_secs()))
    }

    /// Notes what a call found: the database answered, or cannot be
    /// reached (then the kept connections are let go: they are as lost).
    fn note<T>(&self, result: &Result<T, Failure>) {
        let mut health = self.health.lock().unwrap_or_else(|e| e.into_inner());
        match result {
            Err(e) if e.unreachable() => {
                if health.down.is_none() {
                    health.down = Some((Instant::now(), e.to_string()));
                }
                drop(health);
                self.idle.lock().unwrap_or_else(|e| e.into_inner()).clear();
            }
            _ => health.down = None,
        }
    }

    /// A kept connection, else a new one. While the database does not
    /// answer, only one call a second (or a `probe`) tries it; the others
    /// fail at once with why.
    fn conn(&self, probe: bool) -> Result<Conn, Failure> {
        {
            let mut health = self.health.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((_, why)) = &health.down {
                let recent = health.tried.is_some_and(|t| t.elapsed() < RETRY_EVERY);
                if recent && !probe {
                    return Err(Failure::Runtime(format!("the database does not answer: {why}")));
                }
                health.tried = Some(Instant::now());
            }
        }
        while let Some(c) = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop() {
            if c.reusable() {
                return Ok(c);
            }
        }
        let conn = self.connect();
        self.note(&conn);
        conn
    }

    fn connect(&self) -> Result<Conn, Failure> {
        let runtime = runtime()?;
        let slot = self.slots.take(DEADLINE)?;
        let deadline = self.config.get_connect_timeout().map_or(CONNECT_DEADLINE, |t| *t + Duration::from_secs(1));
        let (client, connection) = within(&runtime, "the connection", deadline, self.config.connect(self.tls.clone()))?;
        runtime.spawn(async move {
            let _ = connection.await;
        });
        Ok(Conn { client, runtime: Some(runtime), get: None, set: None, broken: false, _slot: slot })
    }

    /// A failure as the store says it: where, and why.
    fn failed(&self, e: &Failure) -> StoreError {
        let said = format!("{}: {e}", self.shown);
        match e {
            Failure::Busy(_) => StoreError::Busy(said),
            e if e.unreachable() => StoreError::Unreachable(said),
            _ => StoreError::Db(said),
        }
    }

    /// Runs `f` on a kept connection, and once more on a new one when the
    /// kept one turns out to have been dropped by the database (a restart,
    /// a fail-over, an idle time-out): nothing was done on it.
    fn with_conn<T>(&self, probe: bool, f: impl Fn(&mut Conn) -> Result<T, Failure>) -> Result<T, StoreError> {
        let mut conn = self.conn(probe).map_err(|e| self.failed(&e))?;
        let mut result = f(&mut conn);
        if matches!(&result, Err(e) if dropped(e, &conn)) {
            drop(conn); // its place, for the new one
            conn = self.connect().map_err(|e| self.failed(&e))?;
            result = f(&mut conn);
        }
        self.note(&result);
        self.give_back(conn);
        result.map_err(|e| self.failed(&e))
    }

    fn give_back(&self, conn: Conn) {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if conn.reusable() && idle.len() < 64 {
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
    pub fn first_time(&self, key: &str, at_ms: i64, keep_ms: i64) -> Result<bool, StoreError> {
        let prune = self.deliveries.fetch_add(1, std::sync::atomic::Ordering::Relaxed).is_multiple_of(PRUNE_EVERY);
        self.with_conn(false, |conn| {
            if prune {
                conn.execute("DELETE FROM blkc_seen WHERE expires_at < $1", &[&(now() * 1000)])?;
            }
            let claimed = conn.execute(
                "INSERT INTO blkc_seen (id, expires_at) VALUES ($1, $2)
                 ON CONFLICT (id) DO UPDATE SET expires_at = excluded.expires_at WHERE blkc_seen.expires_at <= $3",
                &[&key, &(at_ms + keep_ms), &at_ms],
            )?;
            Ok(claimed == 1)
        })
    }

    /// Keeps delivery `key` seen until `until_ms` (`Host::hold`).
    pub fn hold(&self, key: &str, until_ms: i64) -> Result<(), StoreError> {
        self.with_conn(false, |conn| {
            conn.execute("UPDATE blkc_seen SET expires_at = $2 WHERE id = $1", &[&key, &until_ms])?;
            Ok(())
        })
    }

    /// Says that `blkc serve` process `me` is alive, and how many are
    /// (itself included): they share the platform's global rate limit.
    /// Times are the database's clock, so machines' clocks need not agree.
    pub fn check_in(&self, me: &str) -> Result<usize, StoreError> {
        // The statement sees the table as it was before its own write.
        let sql = "WITH clock AS (SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS ms),
                  mine AS (INSERT INTO blkc_processes (id, seen_at) SELECT $1, ms FROM clock
                           ON CONFLICT (id) DO UPDATE SET seen_at = excluded.seen_at RETURNING id),
                  gone AS (DELETE FROM blkc_processes USING clock WHERE seen_at < clock.ms - 60000 RETURNING id)
             SELECT 1 + count(*) FROM blkc_processes, clock WHERE seen_at > clock.ms - $2 AND id <> $1";
        // It probes the database while it does not answer: the check-ins
        // are what find it answering again.
        let alive =
            self.with_conn(true, |conn| Ok(conn.query_one(sql, &[&me, &PROCESS_ALIVE_MS])?.try_get::<_, i64>(0)?))?;
        Ok(alive.max(1) as usize)
    }

    /// Process `me` stops: the others may use its share at once.
    pub fn check_out(&self, me: &str) -> Result<(), StoreError> {
        self.with_conn(false, |conn| conn.execute("DELETE FROM blkc_processes WHERE id = $1", &[&me]).map(|_| ()))
    }

    /// A store for one run (or one `blkc vars` command).
    pub fn store(self: &Arc<Pool>) -> PgStore {
        PgStore { pool: self.clone(), client: None, in_transaction: false }
    }
}

/// The store's format, `None` when the database has no blkc tables.
fn version(conn: &mut Conn, shown: &str) -> Result<Option<i64>, StoreError> {
    let has_meta: bool = conn
        .query_one("SELECT to_regclass('blkc_meta') IS NOT NULL", &[])
        .and_then(|r| Ok(r.try_get(0)?))
        .map_err(|e| StoreError::Db(format!("cannot read {shown}: {e}")))?;
    if !has_meta {
        return Ok(None);
    }
    let row = conn
        .query_opt("SELECT value FROM blkc_meta WHERE key = 'schema'", &[])
        .map_err(|e| StoreError::NotAStore(format!("{shown} has a `blkc_meta` table that is not blkc's: {e}")))?;
    row.map(|r| r.try_get::<_, i64>(0)).transpose().map_err(|e| StoreError::NotAStore(format!("{shown}: {e}")))
}

/// `blkc vars migrate`: creates the store's tables in an empty database, or
/// moves an older format forward; says what it did.
pub fn migrate(url: &str) -> Result<String, StoreError> {
    let pool = Pool::unchecked(url)?;
    let mut conn = pool.conn(true).map_err(|e| match pool.failed(&e) {
        StoreError::Db(why) | StoreError::Unreachable(why) => {
            StoreError::Unreachable(format!("cannot connect to {why}"))
        }
        other => other,
    })?;
    // Dropping the connection before the commit (an early return) ends
    // the transaction unmade.
    conn.batch_execute("BEGIN").map_err(|e| pool.failed(&e))?;
    conn.execute("SELECT pg_advisory_xact_lock($1)", &[&SAVE_LOCK]).map_err(|e| pool.failed(&e))?;
    let current = version(&mut conn, &pool.shown)?;
    let done = match current {
        Some(SCHEMA_VERSION) => {
            return Ok(format!("{} is at store format {SCHEMA_VERSION}; nothing to do", pool.shown))
        }
        Some(v) if v > SCHEMA_VERSION => {
            return Err(StoreError::Format(format!(
                "{} has store format {v}, newer than this blkc's {SCHEMA_VERSION}; left unchanged",
                pool.shown
            )))
        }
        // Format 1 to 2: the deliveries seen are kept by expiry, in
        // milliseconds. They are minutes old at most; they start afresh.
        Some(1) => conn
            .batch_execute(&format!(
                "DROP TABLE blkc_seen;
                 CREATE TABLE blkc_seen (id TEXT PRIMARY KEY, expires_at BIGINT NOT NULL);
                 CREATE TABLE blkc_processes (id TEXT PRIMARY KEY, seen_at BIGINT NOT NULL);
                 {SHARD_TABLES}
                 {}
                 UPDATE blkc_meta SET value = {SCHEMA_VERSION} WHERE key = 'schema';",
                LATER_TABLE
            ))
            .map(|()| format!("moved {} from store format 1 to {SCHEMA_VERSION}", pool.shown)),
        // Format 2 to 3: the shards' leases and the identifies' turns; 3
        // to 4: the waiting work.
        Some(2) => conn
            .batch_execute(&format!(
                "{SHARD_TABLES}
                 {}
                 UPDATE blkc_meta SET value = {SCHEMA_VERSION} WHERE key = 'schema';",
                LATER_TABLE
            ))
            .map(|()| format!("moved {} from store format 2 to {SCHEMA_VERSION}", pool.shown)),
        Some(3) => conn
            .batch_execute(&format!(
                "{}
                 UPDATE blkc_meta SET value = {SCHEMA_VERSION} WHERE key = 'schema';",
                LATER_TABLE
            ))
            .map(|()| format!("moved {} from store format 3 to {SCHEMA_VERSION}", pool.shown)),
        Some(v) => {
            return Err(StoreError::Format(format!(
                "{} has store format {v}, which no blkc wrote; left unchanged",
                pool.shown
            )))
        }
        None => conn
            .batch_execute(&format!(
                "CREATE TABLE blkc_meta (key TEXT PRIMARY KEY, value BIGINT NOT NULL);
                 CREATE TABLE blkc_vars (name TEXT PRIMARY KEY, value TEXT NOT NULL, updated_at BIGINT NOT NULL);
                 CREATE TABLE blkc_seen (id TEXT PRIMARY KEY, expires_at BIGINT NOT NULL);
                 CREATE TABLE blkc_processes (id TEXT PRIMARY KEY, seen_at BIGINT NOT NULL);
                 {SHARD_TABLES}
                 {}
                 INSERT INTO blkc_meta (key, value) VALUES ('schema', {SCHEMA_VERSION});",
                LATER_TABLE
            ))
            .map(|()| format!("created the store (format {SCHEMA_VERSION}) in {}", pool.shown)),
    };
    let cannot = |e: &dyn std::fmt::Display| StoreError::Db(format!("cannot migrate the store in {}: {e}", pool.shown));
    let done = done.map_err(|e| cannot(&e))?;
    conn.batch_execute("COMMIT").map_err(|e| cannot(&e))?;
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
                let _ = c.batch_execute("ROLLBACK");
            }
            self.pool.give_back(c);
        }
    }
}

/// An error and what caused it (a TLS handshake's failure says why only
/// in its source: an unknown authority, a name that does not match).
fn why(e: &tokio_postgres::Error) -> String {
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

fn parse(text: &str) -> Result<Json, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::NotAStore(format!("a stored value is not JSON: {e}")))
}

fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}

/// Whether `error` came of the database having dropped the connection.
/// (A call that got no answer is not tried again: it would wait as long.)
fn dropped(error: &Failure, conn: &Conn) -> bool {
    use tokio_postgres::error::SqlState;
    let Failure::Db(error) = error else { return false };
    error.is_closed()
        || conn.client.is_closed()
        || matches!(error.code(), Some(c) if *c == SqlState::ADMIN_SHUTDOWN || *c == SqlState::CRASH_SHUTDOWN)
}

impl PgStore {
    /// Runs `f` on the run's connection (taken from the pool on first
    /// use). When the first statement on a kept connection finds it
    /// dropped, it runs once more on a new one; later in a run, a dropped
    /// connection is an error (a transaction on it is gone).
    ///
    /// Outside a save's transaction the connection goes back to the pool
    /// after each statement: a run waiting on the network holds none.
    fn with_conn<T>(&mut self, f: impl Fn(&mut Conn) -> Result<T, Failure>) -> Result<T, StoreError> {
        let first_use = self.client.is_none();
        let pool = self.pool.clone();
        let conn = match &mut self.client {
            Some(c) => c,
            None => self.client.insert(pool.conn(false).map_err(|e| pool.failed(&e))?),
        };
        let mut result = f(conn);
        if first_use && matches!(&result, Err(e) if dropped(e, conn)) {
            self.client = None; // its place, for the new one
            let conn = self.client.insert(pool.connect().map_err(|e| pool.failed(&e))?);
            result = f(conn);
        }
        pool.note(&result);
        if !self.in_transaction {
            if let Some(conn) = self.client.take() {
                pool.give_back(conn);
            }
        }
        result.map_err(|e| pool.failed(&e))
    }

    /// A row a blkc store would never hold: the database is another's.
    fn foreign(&self, what: &str, e: &tokio_postgres::Error) -> StoreError {
        StoreError::NotAStore(format!(
            "{}: {what} in `blkc_vars` is not of blkc's form ({e}); is the table another program's?",
            self.pool.shown
        ))
    }
}

impl Admin for PgStore {
    fn list(&mut self) -> Result<Vec<Entry>, StoreError> {
        let rows = self.with_conn(|c| c.query("SELECT name, value, updated_at FROM blkc_vars ORDER BY name", &[]))?;
        rows.iter()
            .map(|r| {
                let name: String = r.try_get(0).map_err(|e| self.foreign("a name", &e))?;
                let value = parse(&stored_text(r, &name, &self.pool.shown)?)?;
                let updated_at: i64 = r.try_get(2).map_err(|e| self.foreign("a time", &e))?;
                Ok(Entry { name, value, updated_at })
            })
            .collect()
    }

    fn delete(&mut self, name: &str) -> Result<bool, StoreError> {
        let n = self.with_conn(|c| c.execute("DELETE FROM blkc_vars WHERE name = $1", &[&name]))?;
        Ok(n > 0)
    }
}

/// The stored text of the value in `row` (its column `value`), or what is
/// wrong with it: blkc writes every value as JSON text, never NULL, so a
/// NULL or a value of another type is a table blkc did not write. Decoded
/// without panicking: a foreign row fails its run, not the server.
fn stored_text(row: &Row, name: &str, shown: &str) -> Result<String, StoreError> {
    let column = if row.len() > 1 { 1 } else { 0 };
    match row.try_get::<_, Option<String>>(column) {
        Ok(Some(text)) => Ok(text),
        Ok(None) => Err(StoreError::NotAStore(format!(
            "{shown}: the stored value of `{name}` is NULL; blkc writes every value as JSON text, so the table is not blkc's"
        ))),
        Err(e) => Err(StoreError::NotAStore(format!(
            "{shown}: the stored value of `{name}` is not text ({e}); the table is not blkc's"
        ))),
    }
}

/// `conn`'s prepared statement in `slot` (made on first use).
fn prepared(conn: &mut Conn, slot: fn(&mut Conn) -> &mut Option<Statement>, sql: &str) -> Result<Statement, Failure> {
    if let Some(statement) = slot(conn) {
        return Ok(statement.clone());
    }
    let statement = conn.prepare(sql)?;
    *slot(conn) = Some(statement.clone());
    Ok(statement)
}

impl VarStore for PgStore {
    fn get(&mut self, name: &str) -> Result<Option<Json>, StoreError> {
        let row = self.with_conn(|conn| {
            let statement = prepared(conn, |c| &mut c.get, "SELECT value FROM blkc_vars WHERE name = $1")?;
            conn.query_opt(&statement, &[&name])
        })?;
        row.map(|r| stored_text(&r, name, &self.pool.shown).and_then(|t| parse(&t))).transpose()
    }

    fn set(&mut self, name: &str, value: &Json) -> Result<(), StoreError> {
        let text = value.to_string();
        let at = now();
        self.with_conn(|conn| {
            let sql = "INSERT INTO blkc_vars (name, value, updated_at) VALUES ($1, $2, $3)
                 ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at";
            let statement = prepared(conn, |c| &mut c.set, sql)?;
            conn.execute(&statement, &[&name, &text, &at]).map(|_| ())
        })
    }

    /// Every process's saves take their turn: what a save reads and writes
    /// is one transaction, and no other save runs between them.
    fn begin(&mut self) -> Result<(), StoreError> {
        if self.in_transaction {
            return Ok(());
        }
        // One round trip: the transaction and its turn.
        let sql = format!("BEGIN; SELECT pg_advisory_xact_lock({SAVE_LOCK})");
        // Held from here: the connection stays the run's until the end.
        self.in_transaction = true;
        let begun = self.with_conn(|conn| conn.batch_execute(&sql));
        if begun.is_err() {
            self.in_transaction = false;
            // What the failed statement left open is not given back.
            self.client = None;
        }
        begun
    }

    fn end(&mut self, commit: bool) -> Result<(), StoreError> {
        if !self.in_transaction {
            return Ok(());
        }
        self.in_transaction = false;
        let sql = if commit { "COMMIT" } else { "ROLLBACK" };
        self.with_conn(|conn| conn.batch_execute(sql))
    }

    fn remove_expired(&mut self, prefix: &str, now_ms: u64) -> Result<u64, StoreError> {
        // A value that is not a whole number is never cast (CASE, as
        // PostgreSQL may test an AND's sides in any order).
        let sql = "DELETE FROM blkc_vars WHERE starts_with(name, $1)
             AND (CASE WHEN value ~ '^[0-9]{1,18}$' THEN value::bigint END) < $2";
        let now = now_ms as i64;
        self.with_conn(|conn| conn.execute(sql, &[&prefix, &now]))
    }

    fn wait_later(
        &mut self,
        item: &crate::run::store::later::Later,
    ) -> Result<Result<(), crate::run::store::later::Full>, StoreError> {
        self.keep_later(item)
    }

    fn cancel_later(&mut self, owner: &str, key: &str, now_ms: i64) -> Result<u64, StoreError> {
        self.cancel(owner, key, now_ms)
    }

    fn waiting(&mut self, owner: Option<&str>) -> Result<Vec<crate::run::store::later::Later>, StoreError> {
        self.pending(owner)
    }
}

#[cfg(test)]
mod tests {
    use super::shown;

    #[test]
    fn a_password_is_never_shown_in_either_form() {
        assert_eq!(shown("postgres://ada:hunter2@db:5432/bot"), "postgres://ada:***@db:5432/bot");
        let both = shown("postgres://ada@db/bot?sslmode=require&password=hunter2&sslpassword=k3y");
        assert!(!both.contains("hunter2") && !both.contains("k3y"), "{both}");
        assert!(both.contains("sslmode=require") && both.contains("password=***"), "{both}");
        let upper = shown("postgresql://db/bot?PASSWORD=hunter2");
        assert!(!upper.contains("hunter2"), "{upper}");
    }
}
