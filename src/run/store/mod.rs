//! Custom variables that outlive a run: what a run reads and saves
//! ([`VarStore`]), what `blkc vars` does ([`Admin`]) and what a server
//! shares ([`Host`]), each a trait, with an SQLite file (`sqlite.rs`) and a
//! PostgreSQL database (`postgres.rs`) behind them. Every failure is a
//! [`StoreError`] that says its kind.
//!
//! In SQLite, each save is its own transaction; several `blkc run`
//! processes may save into one store at once (WAL journal, a busy
//! time-out, `BEGIN IMMEDIATE`). A file that is not a blkc store, or is
//! corrupt, is reported and never recreated.

mod error;
pub(crate) mod host;
mod kept;
pub mod later;
pub mod postgres;
pub(crate) mod sqlite;
pub(crate) mod values;

use std::path::PathBuf;
use std::sync::Arc;

pub use error::StoreError;
pub use host::{Host, ServingClaim, SharedStore};
pub use kept::SqliteHost;
pub use sqlite::{claim_for_serving, LazyStore, Store, DEFAULT_PATH, SCHEMA_VERSION};
pub use values::{delivery_key, Admin, Entry, MemoryStore, VarStore};

/// The store at `location` for `blkc vars`: only to read when `reading`
/// (an SQLite store is then never created or written).
pub fn admin(location: &Location, reading: bool) -> Result<Box<dyn Admin>, StoreError> {
    Ok(match location {
        Location::Sqlite(path) if reading => Box::new(Store::open_read_only(path)?),
        Location::Sqlite(path) => Box::new(Store::open(path)?),
        Location::Postgres(url) => Box::new(postgres::Pool::open(url)?.store()),
    })
}

/// Where custom variables live: an SQLite file (the default, beside the
/// `.blk` file) or a PostgreSQL database (`postgres://…`), from `--store`
/// or `BLKC_STORE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    Sqlite(PathBuf),
    Postgres(String),
}

impl Location {
    pub fn parse(text: &str) -> Location {
        if text.starts_with("postgres://") || text.starts_with("postgresql://") {
            Location::Postgres(text.to_string())
        } else {
            Location::Sqlite(PathBuf::from(text))
        }
    }

    /// `--store`, else `BLKC_STORE`, else the SQLite file at `default`.
    pub fn choose(flag: Option<&str>, default: PathBuf) -> Location {
        match flag.map(str::to_string).or_else(|| std::env::var("BLKC_STORE").ok().filter(|s| !s.is_empty())) {
            Some(text) => Location::parse(&text),
            None => Location::Sqlite(default),
        }
    }
}

/// An opened store location that runs take their stores from.
#[derive(Debug, Clone)]
pub struct Backend(Arc<dyn Host>);

impl Backend {
    /// Checks a PostgreSQL store now (an SQLite one is opened by its runs).
    pub fn open(location: &Location) -> Result<Backend, StoreError> {
        Ok(match location {
            Location::Sqlite(path) => Backend::new(SqliteHost::new(path.clone())),
            Location::Postgres(url) => Backend::new(SharedStore(postgres::Pool::open(url)?)),
        })
    }

    pub fn new(host: impl Host + 'static) -> Backend {
        Backend(Arc::new(host))
    }

    /// A store location its maker keeps a handle on too.
    pub fn from_arc(host: Arc<dyn Host>) -> Backend {
        Backend(host)
    }
}

impl std::ops::Deref for Backend {
    type Target = dyn Host;

    fn deref(&self) -> &(dyn Host + 'static) {
        &*self.0
    }
}
