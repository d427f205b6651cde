//! The Gateway's shards leased through the store: which `blkc serve`
//! process holds each shard, until when, and the session it leaves for the
//! next holder to resume; the shard count every lease is under; and the
//! identifies' turns, so that processes starting together keep to the
//! platform's identify limit (docs/serve.md, "Many machines, one bot").
//!
//! `blkc_identify` has a row per `max_concurrency` bucket (`last_at`: its
//! last identify) and row -1, the session-start budget (`left_count`
//! starts left until `last_at`).
//!
//! Times are the database's clock (`clock_timestamp()`), so the machines'
//! clocks need not agree. Every change is one statement, or one transaction
//! under [`SHARD_LOCK`]: two processes never both take one shard, and the
//! shard count changes only while no lease is live, so a shard is never
//! held under two counts.

use super::{Conn, Failure, Pool, StoreError};

/// The advisory lock of the shard count and the identifies' turns.
const SHARD_LOCK: i64 = 0x626c_6b73;

/// The database's clock, in milliseconds since the epoch, as SQL.
const CLOCK: &str = "(extract(epoch FROM clock_timestamp()) * 1000)::bigint";

/// A shard's session, kept with its lease for the next holder to resume.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedSession {
    pub id: String,
    pub seq: u64,
    pub resume_url: String,
}

/// A shard taken: its id, who held it before (empty if nobody had), and
/// the session they left.
#[derive(Debug, Clone)]
pub struct Taken {
    pub shard: u32,
    pub previous: String,
    pub session: Option<SavedSession>,
}

/// What the store says of the shards at a beat.
#[derive(Debug, Clone, Default)]
pub struct Standing {
    /// The shard count every lease is under (0 before any is set).
    pub count: u32,
    /// A larger count the platform required (close code 4011): every
    /// process gives up its shards, and the count moves when none is held.
    pub wanted: u32,
    /// The shards this process still holds (the others' leases it lost).
    pub held: Vec<u32>,
    /// The processes holding shards through the store (this one among
    /// them), with the most each may hold (`--max-shards`): the first to
    /// join first (by the database's clock, then by name), so a newcomer
    /// comes last and takes the smaller share, and the shards that move
    /// when one joins are only those it takes.
    pub holders: Vec<(String, Option<u32>)>,
}

/// A process taking part in the leases counts as alive this long after its
/// last renewal (it renews every second).
pub const HOLDER_ALIVE_MS: i64 = 3_000;

/// One shard's lease, as `blkc vars shards` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    pub shard: u32,
    /// Its live holder's name (host:pid:start), or empty.
    pub holder: String,
    pub left_ms: u64,
    /// A session is kept with it, which its next holder resumes.
    pub resumable: bool,
}

/// Whose turn it is to identify.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Turn {
    Go,
    /// Not before this long: the bucket's spacing, or the session-start
    /// budget's reset.
    Wait(std::time::Duration),
}

/// Runs `f` in a transaction under [`SHARD_LOCK`]; rolled back when it
/// fails.
fn locked<T>(conn: &mut Conn, f: impl FnOnce(&mut Conn) -> Result<T, Failure>) -> Result<T, Failure> {
    conn.batch_execute("BEGIN")?;
    let done = conn.execute("SELECT pg_advisory_xact_lock($1)", &[&SHARD_LOCK]).and_then(|_| f(conn));
    match done {
        Ok(value) => conn.batch_execute("COMMIT").map(|()| value),
        Err(e) => {
            let _ = conn.batch_execute("ROLLBACK");
            Err(e)
        }
    }
}

fn meta(conn: &mut Conn, key: &str) -> Result<Option<i64>, Failure> {
    Ok(conn.query_opt("SELECT value FROM blkc_meta WHERE key = $1", &[&key])?.map(|r| r.get(0)))
}

fn set_meta(conn: &mut Conn, key: &str, value: i64) -> Result<(), Failure> {
    conn.execute(
        "INSERT INTO blkc_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        &[&key, &value],
    )
    .map(drop)
}

fn session(row: &tokio_postgres::Row, at: usize) -> Option<SavedSession> {
    let id: Option<String> = row.get(at);
    let seq: Option<i64> = row.get(at + 1);
    let resume_url: Option<String> = row.get(at + 2);
    Some(SavedSession { id: id?, seq: u64::try_from(seq?).ok()?, resume_url: resume_url? })
}

impl Pool {
    /// The shard count leases are under. `recommended` (the platform's) is
    /// taken when no count is set, or when it is larger and no lease is
    /// live (nothing to give up; the old sessions are dropped, they are the
    /// old count's); else the count set stays. A `required` count (the
    /// platform closed a shard with 4011) larger than the one set, while
    /// leases are live, is noted as wanted: every process gives its shards
    /// up, and a later call moves the count once none is live.
    pub fn shard_count(&self, recommended: u32, required: bool) -> Result<Standing, StoreError> {
        let recommended = i64::from(recommended.max(1));
        self.with_conn(false, |conn| {
            locked(conn, |conn| {
                let count = meta(conn, "shard_count")?.unwrap_or(0);
                let mut wanted = meta(conn, "shard_count_wanted")?.unwrap_or(0);
                if required {
                    wanted = wanted.max(recommended);
                }
                let sql = format!("SELECT count(*) FROM blkc_shards WHERE holder <> '' AND expires_at > {CLOCK}");
                let live: i64 = conn.query_one(sql.as_str(), &[])?.get(0);
                let target = wanted.max(recommended);
                let moved = if count == 0 || (target > count && live == 0) { target } else { count };
                if moved != count {
                    set_meta(conn, "shard_count", moved)?;
                    conn.execute("DELETE FROM blkc_shards", &[])?;
                    let ids = i32::try_from(moved).unwrap_or(i32::MAX) - 1;
                    conn.execute("INSERT INTO blkc_shards (shard) SELECT generate_series(0, $1)", &[&ids])?;
                }
                let wanted = if wanted > moved { wanted } else { 0 };
                set_meta(conn, "shard_count_wanted", wanted)?;
                Ok(Standing { count: moved as u32, wanted: wanted as u32, ..Standing::default() })
            })
        })
    }

    /// Renews `me`'s leases for `ttl_ms`, keeping each shard's session as
    /// it stands, and `me`'s place among the holders (with `most`, its
    /// `--max-shards`); gives the count, a wanted count, the shards `me`
    /// still holds (a lease that ran out and was taken is not renewed) and
    /// the live holders.
    pub fn renew(
        &self,
        me: &str,
        most: Option<u32>,
        sessions: &[(u32, Option<SavedSession>)],
        ttl_ms: i64,
    ) -> Result<Standing, StoreError> {
        let sql = format!(
            "UPDATE blkc_shards SET expires_at = {CLOCK} + $2,
                 session_id = COALESCE($3, session_id), seq = COALESCE($4, seq), resume_url = COALESCE($5, resume_url)
             WHERE holder = $1 AND shard = $6 AND expires_at > {CLOCK}"
        );
        let here = format!(
            "INSERT INTO blkc_shard_holders (id, most, seen_at, joined_at) VALUES ($1, $2, {CLOCK}, {CLOCK})
             ON CONFLICT (id) DO UPDATE SET most = excluded.most, seen_at = excluded.seen_at"
        );
        let live =
            format!("SELECT id, most FROM blkc_shard_holders WHERE seen_at > {CLOCK} - $1 ORDER BY joined_at, id");
        let gone = format!("DELETE FROM blkc_shard_holders WHERE seen_at < {CLOCK} - 60000");
        let most = most.map(|m| i32::try_from(m).unwrap_or(i32::MAX));
        self.with_conn(false, |conn| {
            let mut held = Vec::new();
            for (shard, saved) in sessions {
                let (id, seq, url) = match saved {
                    Some(s) => (Some(s.id.as_str()), i64::try_from(s.seq).ok(), Some(s.resume_url.as_str())),
                    None => (None, None, None),
                };
                let shard_id = *shard as i32;
                if conn.execute(sql.as_str(), &[&me, &ttl_ms, &id, &seq, &url, &shard_id])? == 1 {
                    held.push(*shard);
                }
            }
            conn.execute(here.as_str(), &[&me, &most])?;
            conn.execute(gone.as_str(), &[])?;
            let holders = conn
                .query(live.as_str(), &[&HOLDER_ALIVE_MS])?
                .iter()
                .map(|r| (r.get::<_, String>(0), r.get::<_, Option<i32>>(1).map(|m| m.max(0) as u32)))
                .collect();
            let count = meta(conn, "shard_count")?.unwrap_or(0) as u32;
            let wanted = meta(conn, "shard_count_wanted")?.unwrap_or(0) as u32;
            Ok(Standing { count, wanted, held, holders })
        })
    }

    /// `me` holds shards no more (it stops): the others count without it
    /// at once.
    pub fn leave(&self, me: &str) -> Result<(), StoreError> {
        self.with_conn(false, |conn| conn.execute("DELETE FROM blkc_shard_holders WHERE id = $1", &[&me]).map(drop))
    }

    /// Takes up to `n` shards no one holds (never held, given up, or whose
    /// lease ran out: `expires_at` passed) for `ttl_ms`, the lowest first;
    /// gives each with whom it was taken from and the session they left. A
    /// shard is taken by one process: rows another is taking are skipped.
    /// None is taken unless the shard count is still `count` (the one the
    /// caller's shards connect under): a count moved since is not mixed in.
    pub fn take(&self, me: &str, count: u32, n: usize, ttl_ms: i64) -> Result<Vec<Taken>, StoreError> {
        let sql = format!(
            "WITH free AS (
                 SELECT shard, holder, session_id, seq, resume_url FROM blkc_shards
                 WHERE (holder = '' OR expires_at <= {CLOCK})
                   AND (SELECT value FROM blkc_meta WHERE key = 'shard_count') = $4
                 ORDER BY shard LIMIT $3 FOR UPDATE SKIP LOCKED)
             UPDATE blkc_shards s SET holder = $1, expires_at = {CLOCK} + $2
             FROM free WHERE s.shard = free.shard
             RETURNING s.shard, free.holder, free.session_id, free.seq, free.resume_url"
        );
        let n = n as i64;
        self.with_conn(false, |conn| {
            let rows = conn.query(sql.as_str(), &[&me, &ttl_ms, &n, &i64::from(count)])?;
            Ok(rows
                .iter()
                .map(|r| Taken { shard: r.get::<_, i32>(0) as u32, previous: r.get(1), session: session(r, 2) })
                .collect())
        })
    }

    /// Gives up `me`'s shards, each with the session the next holder
    /// resumes (none: it identifies anew).
    pub fn release(&self, me: &str, shards: &[(u32, Option<SavedSession>)]) -> Result<(), StoreError> {
        // (The holder stays named: the next says whom it took over from.)
        let sql = "UPDATE blkc_shards SET expires_at = 0, session_id = $3, seq = $4, resume_url = $5
                   WHERE holder = $1 AND shard = $2";
        self.with_conn(false, |conn| {
            for (shard, saved) in shards {
                let (id, seq, url) = match saved {
                    Some(s) => (Some(s.id.as_str()), i64::try_from(s.seq).ok(), Some(s.resume_url.as_str())),
                    None => (None, None, None),
                };
                conn.execute(sql, &[&me, &(*shard as i32), &id, &seq, &url])?;
            }
            Ok(())
        })
    }

    /// Who holds each shard now (live leases only), by shard: what an
    /// operator's query of `blkc_shards` reads, and what the tests and the
    /// bench hold the processes to.
    pub fn holders(&self) -> Result<Vec<(u32, String)>, StoreError> {
        let sql =
            format!("SELECT shard, holder FROM blkc_shards WHERE holder <> '' AND expires_at > {CLOCK} ORDER BY shard");
        self.with_conn(false, |conn| {
            Ok(conn.query(sql.as_str(), &[])?.iter().map(|r| (r.get::<_, i32>(0) as u32, r.get(1))).collect())
        })
    }

    /// Every shard's lease as it stands, for `blkc vars shards`: the count
    /// and a larger one wanted, and for each shard its holder (empty when
    /// none), how long its lease has left in ms (0 when none is live), and
    /// whether a session is kept for the next holder to resume.
    pub fn leases(&self) -> Result<(Standing, Vec<Lease>), StoreError> {
        let sql = format!(
            "SELECT shard, holder, greatest(expires_at - {CLOCK}, 0), session_id IS NOT NULL
             FROM blkc_shards ORDER BY shard"
        );
        self.with_conn(false, |conn| {
            let count = meta(conn, "shard_count")?.unwrap_or(0) as u32;
            let wanted = meta(conn, "shard_count_wanted")?.unwrap_or(0) as u32;
            let leases = conn
                .query(sql.as_str(), &[])?
                .iter()
                .map(|r| {
                    let left: i64 = r.get(2);
                    let holder: String = r.get(1);
                    Lease {
                        shard: r.get::<_, i32>(0) as u32,
                        holder: if left > 0 { holder } else { String::new() },
                        left_ms: left.max(0) as u64,
                        resumable: r.get(3),
                    }
                })
                .collect();
            Ok((Standing { count, wanted, ..Standing::default() }, leases))
        })
    }

    /// Starts the session-start budget from what the platform said
    /// (`left` starts until `reset_after_ms` from now), unless the store's
    /// window is still open: its count is the truth for every process.
    pub fn seed_identifies(&self, left: u64, reset_after_ms: i64) -> Result<(), StoreError> {
        let left = i64::try_from(left).unwrap_or(i64::MAX);
        let sql = format!(
            "INSERT INTO blkc_identify (bucket, last_at, left_count) VALUES (-1, {CLOCK} + $2, $1)
             ON CONFLICT (bucket) DO UPDATE SET last_at = excluded.last_at, left_count = excluded.left_count
             WHERE blkc_identify.last_at <= {CLOCK}"
        );
        self.with_conn(false, |conn| conn.execute(sql.as_str(), &[&left, &reset_after_ms]).map(drop))
    }

    /// Whether `bucket` may identify now: none of any process's identifies
    /// in that bucket in the last `spacing_ms`, and a session start left in
    /// the budget. A turn taken is counted at once.
    pub fn identify_turn(&self, bucket: u32, spacing_ms: i64) -> Result<Turn, StoreError> {
        let wait = |ms: i64| Turn::Wait(std::time::Duration::from_millis(ms.max(1) as u64));
        self.with_conn(false, |conn| {
            locked(conn, |conn| {
                let now: i64 = conn.query_one(format!("SELECT {CLOCK}").as_str(), &[])?.get(0);
                let budget = conn.query_opt("SELECT last_at, left_count FROM blkc_identify WHERE bucket = -1", &[])?;
                let (reset_at, left) = budget.map_or((0, 1), |r| (r.get::<_, i64>(0), r.get::<_, i64>(1)));
                if left <= 0 && now < reset_at {
                    return Ok(wait(reset_at - now));
                }
                let last =
                    conn.query_opt("SELECT last_at FROM blkc_identify WHERE bucket = $1", &[&(bucket as i32)])?;
                if let Some(last) = last.map(|r| r.get::<_, i64>(0)) {
                    if now - last < spacing_ms {
                        return Ok(wait(spacing_ms - (now - last)));
                    }
                }
                conn.execute(
                    "INSERT INTO blkc_identify (bucket, last_at) VALUES ($1, $2)
                     ON CONFLICT (bucket) DO UPDATE SET last_at = excluded.last_at",
                    &[&(bucket as i32), &now],
                )?;
                // Past its reset, the budget is the platform's daily 1,000
                // until a process reads the platform's own count again.
                let (left, reset_at) =
                    if now >= reset_at && left <= 0 { (1000, now + 86_400_000) } else { (left, reset_at) };
                conn.execute(
                    "UPDATE blkc_identify SET left_count = $1, last_at = $2 WHERE bucket = -1",
                    &[&(left - 1), &reset_at],
                )?;
                Ok(Turn::Go)
            })
        })
    }
}
