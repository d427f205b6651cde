//! Waiting work in PostgreSQL (`blkc_later`, store format 4): what runs
//! keep (under the saves' lock, so an owner's bound holds across
//! processes), and what serving processes claim, renew and remove.
//! `FOR UPDATE SKIP LOCKED` lets processes claim at once without waiting
//! on one another's rows; a claim lapses when its lease does.

use serde_json::Value as Json;

use super::{Failure, PgStore, Pool, StoreError};
use crate::run::store::later::{
    Full, Later, ANSWER_TEXT, ANSWER_TREE, CLAIM_BATCH, COLUMNS, MAX_PER_OWNER, MAX_PER_STORE,
};

/// A row of [`COLUMNS`] as waiting work.
fn later_row(r: &tokio_postgres::Row) -> Result<Later, Failure> {
    let vars: String = r.try_get(6)?;
    Ok(Later {
        id: r.try_get(0)?,
        owner: r.try_get(1)?,
        key: r.try_get(2)?,
        due_ms: r.try_get(3)?,
        tree: r.try_get(4)?,
        note: r.try_get(5)?,
        vars: serde_json::from_str(&vars).unwrap_or(Json::Null),
    })
}

impl Pool {
    pub fn claim_due(&self, now_ms: i64, until_ms: i64, me: &str) -> Result<Vec<Later>, StoreError> {
        let sql = format!(
            "UPDATE blkc_later SET claim_until = $2, claimed_by = $3 WHERE id IN (SELECT id FROM blkc_later
             WHERE due_at <= $1 AND claim_until <= $1 ORDER BY due_at LIMIT {CLAIM_BATCH} FOR UPDATE SKIP LOCKED)
             RETURNING {COLUMNS}"
        );
        let mut claimed = self.with_conn(false, |conn| {
            conn.query(&sql, &[&now_ms, &until_ms, &me])?.iter().map(later_row).collect::<Result<Vec<_>, _>>()
        })?;
        claimed.sort_by_key(|l| l.due_ms);
        Ok(claimed)
    }

    pub fn renew_later(&self, ids: &[String], me: &str, until_ms: i64) -> Result<usize, StoreError> {
        let ids = ids.to_vec();
        self.with_conn(false, |conn| {
            let sql = "UPDATE blkc_later SET claim_until = $3 WHERE id = ANY($1) AND claimed_by = $2";
            conn.execute(sql, &[&ids, &me, &until_ms]).map(|n| n as usize)
        })
    }

    pub fn done_later(&self, id: &str, me: &str) -> Result<(), StoreError> {
        self.with_conn(false, |conn| {
            conn.execute("DELETE FROM blkc_later WHERE id = $1 AND claimed_by = $2", &[&id, &me]).map(|_| ())
        })
    }

    pub fn take_answer(
        &self,
        wait: (&str, &str),
        text: &str,
        now_ms: i64,
        claim: (i64, &str),
    ) -> Result<Option<Later>, StoreError> {
        // A claim or a take of the same row made at once waits for the
        // other's, and finds the row no longer matches (READ COMMITTED
        // checks an updated row again): one of the two wins.
        let sql = format!(
            "UPDATE blkc_later SET tree = vars::jsonb ->> '{ANSWER_TREE}',
             vars = (vars::jsonb || jsonb_build_object('{ANSWER_TEXT}', $3::text))::text, key = '',
             due_at = $4, claim_until = $5, claimed_by = $6
             WHERE owner = $1 AND key = $2 AND due_at > $4 AND claim_until <= $4
             AND vars::jsonb ? '{ANSWER_TREE}' RETURNING {COLUMNS}"
        );
        let (owner, key, text) = (wait.0.to_string(), wait.1.to_string(), text.to_string());
        let (until, me) = (claim.0, claim.1.to_string());
        self.with_conn(false, |conn| {
            conn.query_opt(&sql, &[&owner, &key, &text, &now_ms, &until, &me])?.as_ref().map(later_row).transpose()
        })
    }

    pub fn next_due(&self) -> Result<Option<i64>, StoreError> {
        self.with_conn(false, |conn| {
            Ok(conn.query_one("SELECT min(due_at) FROM blkc_later", &[])?.try_get::<_, Option<i64>>(0)?)
        })
    }
}

impl PgStore {
    /// `VarStore::wait_later`: under the saves' lock, in the save's
    /// transaction when there is one.
    pub(super) fn keep_later(&mut self, item: &Later) -> Result<Result<(), Full>, StoreError> {
        let outer = self.in_transaction;
        if !outer {
            crate::run::store::values::VarStore::begin(self)?;
        }
        let item = item.clone();
        let kept = self.with_conn(|conn| {
            if !item.key.is_empty() {
                conn.execute("DELETE FROM blkc_later WHERE owner = $1 AND key = $2", &[&item.owner, &item.key])?;
            }
            let count = |conn: &mut super::Conn, sql: &str, p: &[&(dyn tokio_postgres::types::ToSql + Sync)]| {
                Ok::<i64, Failure>(conn.query_one(sql, p)?.try_get::<_, i64>(0)?)
            };
            if count(conn, "SELECT count(*) FROM blkc_later WHERE owner = $1", &[&item.owner])? as usize
                >= MAX_PER_OWNER
            {
                return Ok(Err(Full::Owner));
            }
            if count(conn, "SELECT count(*) FROM blkc_later", &[])? as usize >= MAX_PER_STORE {
                return Ok(Err(Full::Store));
            }
            let sql = format!("INSERT INTO blkc_later ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)");
            let vars = item.vars.to_string();
            conn.execute(&sql, &[&item.id, &item.owner, &item.key, &item.due_ms, &item.tree, &item.note, &vars])?;
            Ok(Ok(()))
        });
        if !outer {
            let commit = matches!(kept, Ok(Ok(())));
            crate::run::store::values::VarStore::end(self, commit)?;
        }
        kept
    }

    /// (A claim of the same row made at once waits for this statement, or
    /// this one for it, and finds the row no longer matches: the piece is
    /// cancelled or runs, never both.)
    pub(super) fn cancel(&mut self, owner: &str, key: &str, now_ms: i64) -> Result<u64, StoreError> {
        let (owner, key) = (owner.to_string(), key.to_string());
        let sql = "DELETE FROM blkc_later WHERE owner = $1 AND key = $2 AND due_at > $3 AND claim_until <= $3";
        self.with_conn(|conn| conn.execute(sql, &[&owner, &key, &now_ms]))
    }

    pub(super) fn pending(&mut self, owner: Option<&str>) -> Result<Vec<Later>, StoreError> {
        let sql = format!(
            "SELECT {COLUMNS} FROM blkc_later WHERE $1::text IS NULL OR owner = $1 ORDER BY due_at, id LIMIT {MAX_PER_STORE}"
        );
        let owner = owner.map(str::to_string);
        self.with_conn(|conn| conn.query(&sql, &[&owner])?.iter().map(later_row).collect())
    }
}
