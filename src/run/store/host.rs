//! A store location as the serving processes use it ([`Host`]), and the
//! PostgreSQL database as one ([`SharedStore`]).

use std::sync::Arc;

use super::error::StoreError;
use super::later::Later;
use super::postgres::Pool;
use super::values::VarStore;

/// A store location as the runs and the serving processes use it: one
/// implementation a backend (`sqlite::SqliteHost`, and [`SharedStore`] below), so a
/// third backend is one new file and one arm of `Backend::open`. What a
/// backend does not override is what a store one process serves needs.
pub trait Host: Send + Sync + std::fmt::Debug {
    /// The store of one run.
    fn run_store(&self) -> Box<dyn VarStore + Send>;

    /// Whether processes may share this store (and it decides what was seen).
    fn shared(&self) -> bool {
        false
    }

    /// Whether no process sharing this store has seen delivery `key` (an
    /// interaction, an event) received at `at_ms`, within `keep_ms` of an
    /// earlier one. Always, for a store one process serves: its memory
    /// decides (and [`Host::remember`] keeps it across restarts).
    fn first_time(&self, _key: &str, _at_ms: i64, _keep_ms: i64) -> Result<bool, StoreError> {
        Ok(true)
    }

    /// Keeps delivery `key`, which this process claimed with
    /// [`Host::first_time`], seen until `until_ms`: a timed event's tick is
    /// claimed for a short lease, renewed while its run goes on, and kept
    /// for days once it has run (a store one process serves needs none).
    fn hold(&self, _key: &str, _until_ms: i64) -> Result<(), StoreError> {
        Ok(())
    }

    /// Notes a delivery this process took, so that a restart still knows it.
    fn remember(&self, _key: String, _expires_ms: i64) {}

    /// Writes the deliveries noted and not yet written (the server stops).
    fn finish(&self) {}

    /// The deliveries an earlier run of this server took that still count
    /// at `now_ms`.
    fn recent(&self, _now_ms: i64) -> Result<Vec<(String, i64)>, StoreError> {
        Ok(Vec::new())
    }

    /// How many `blkc serve` processes share this store, `me` among them.
    fn check_in(&self, _me: &str) -> Result<usize, StoreError> {
        Ok(1)
    }

    fn check_out(&self, _me: &str) -> Result<(), StoreError> {
        Ok(())
    }

    /// Why the store does not answer, when the last call found it so.
    fn health(&self) -> Option<String> {
        None
    }

    /// The Gateway's shards leased through this store, when processes
    /// share it (PostgreSQL's).
    fn leases(&self) -> Option<Arc<Pool>> {
        None
    }

    /// What keeps a second process from serving a store only one may.
    fn claim_for_serving(&self) -> Result<Option<ServingClaim>, StoreError> {
        Ok(None)
    }

    /// Claims for process `me` until `until_ms` the waiting work due at
    /// `now_ms` that no process holds (a lapsed claim is free again), at
    /// most [`super::later::CLAIM_BATCH`], soonest first.
    fn claim_due(&self, _now_ms: i64, _until_ms: i64, _me: &str) -> Result<Vec<Later>, StoreError> {
        Ok(Vec::new())
    }

    /// Keeps `me`'s claims of `ids` until `until_ms` (their runs go on):
    /// how many were still `me`'s.
    fn renew_later(&self, ids: &[String], _me: &str, _until_ms: i64) -> Result<usize, StoreError> {
        Ok(ids.len())
    }

    /// Removes waiting work `id`, which `me` claimed and ran.
    fn done_later(&self, _id: &str, _me: &str) -> Result<(), StoreError> {
        Ok(())
    }

    /// When the next waiting work is due (ms, the bot's clock), if any.
    fn next_due(&self) -> Result<Option<i64>, StoreError> {
        Ok(None)
    }

    /// The member's answer `text` to the wait `key` of `owner` that is not
    /// due yet at `now_ms`: in one statement, the wait becomes its
    /// answer's work, due now and claimed by `me` until `until_ms`, and is
    /// returned. None when there is no such wait, or it is due or claimed
    /// (its time-out runs instead): one of the two runs, never both.
    fn take_answer(
        &self,
        _wait: (&str, &str),
        _text: &str,
        _now_ms: i64,
        _claim: (i64, &str),
    ) -> Result<Option<Later>, StoreError> {
        Ok(None)
    }
}

/// The claim of one `blkc serve` process on an SQLite store, held while it
/// lives (an advisory lock on a file beside the store, which the kernel
/// lets go of when the process ends, however it ends).
#[derive(Debug)]
pub struct ServingClaim(#[allow(dead_code)] std::fs::File);

impl ServingClaim {
    /// The claim that holding `file` open (and its lock) makes.
    pub(super) fn new(file: std::fs::File) -> ServingClaim {
        ServingClaim(file)
    }
}

/// A PostgreSQL database as a store location that serving processes share.
#[derive(Debug)]
pub struct SharedStore(pub Arc<Pool>);

impl Host for SharedStore {
    fn run_store(&self) -> Box<dyn VarStore + Send> {
        Box::new(self.0.store())
    }

    fn shared(&self) -> bool {
        true
    }

    fn first_time(&self, key: &str, at_ms: i64, keep_ms: i64) -> Result<bool, StoreError> {
        self.0.first_time(key, at_ms, keep_ms)
    }

    fn hold(&self, key: &str, until_ms: i64) -> Result<(), StoreError> {
        self.0.hold(key, until_ms)
    }

    fn check_in(&self, me: &str) -> Result<usize, StoreError> {
        self.0.check_in(me)
    }

    fn check_out(&self, me: &str) -> Result<(), StoreError> {
        self.0.check_out(me)
    }

    fn health(&self) -> Option<String> {
        self.0.health()
    }

    fn leases(&self) -> Option<Arc<Pool>> {
        Some(self.0.clone())
    }

    fn claim_due(&self, now_ms: i64, until_ms: i64, me: &str) -> Result<Vec<Later>, StoreError> {
        self.0.claim_due(now_ms, until_ms, me)
    }

    fn renew_later(&self, ids: &[String], me: &str, until_ms: i64) -> Result<usize, StoreError> {
        self.0.renew_later(ids, me, until_ms)
    }

    fn done_later(&self, id: &str, me: &str) -> Result<(), StoreError> {
        self.0.done_later(id, me)
    }

    fn next_due(&self) -> Result<Option<i64>, StoreError> {
        self.0.next_due()
    }

    fn take_answer(
        &self,
        wait: (&str, &str),
        text: &str,
        now_ms: i64,
        claim: (i64, &str),
    ) -> Result<Option<Later>, StoreError> {
        self.0.take_answer(wait, text, now_ms, claim)
    }
}
