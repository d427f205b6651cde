//! `--shards auto` on processes sharing a PostgreSQL store: the Gateway's
//! shards divided among the live processes by leases in the store
//! (docs/serve.md, "Many machines, one bot").
//!
//! Each process keeps its leases on a beat ([`BEAT`]): it renews them with
//! each shard's session and sequence, stops at once a shard whose lease it
//! lost, and takes or gives up shards until it holds its share of the count
//! among the processes alive (at most `--max-shards`). A shard given up (a
//! process stopping, or handing a share to one that joined) is closed
//! without ending its session, and its next holder resumes it, so the
//! platform replays what it sent meanwhile; a killed process's leases run
//! out after [`LEASE`], and its shards are resumed the same way, from the
//! sequence it last kept. A process that cannot renew stops its shards
//! before its leases can run out ([`FENCE`]): a shard is never held twice.
//! The identifies take their turns through the store, so processes starting
//! together keep to the platform's limit.
//!
//! The shard count is the store's: the first process sets it from the
//! platform's recommendation, and it changes only while no lease is live.
//! A larger recommendation (`/gateway/bot` at a later start) is taken then,
//! at no cost. When the platform requires more (a shard closed with 4011),
//! the larger count is noted as wanted: every process gives its shards up,
//! and when none is held the count moves and the shards are taken again
//! under it. No shard is held under two counts.

use crate::base::stop::StopSignal;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::shared::Shared;
use crate::discord::gateway::{self, GatewayInfo, IdentifyGate, Kept, Session, Shard};
use crate::run::store::postgres::leases::{SavedSession, Standing, Turn};
use crate::run::store::postgres::Pool;

/// How long a lease lasts unrenewed: a killed process's shards are taken
/// over within this and a [`BEAT`].
pub const LEASE: Duration = Duration::from_secs(10);
/// How often leases are renewed, and shares looked at.
pub const BEAT: Duration = Duration::from_secs(1);
/// A process that could not renew stops its shards this long before its
/// leases would run out (by its own clock, counted from when it asked).
const FENCE: Duration = Duration::from_secs(3);
/// How long a process waits before its first take: processes starting
/// together see each other first, and divide the shards at once.
const FIRST_TAKE: Duration = Duration::from_millis(2_500);
/// How long a shard given up may take to close its connection.
const CLOSE_WAIT: Duration = Duration::from_secs(2);
/// Identifies of one bucket from different machines are this much further
/// apart than the platform's spacing: each is sent a network hop after its
/// turn is taken.
const TURN_MARGIN: Duration = Duration::from_millis(250);

/// A shard this process holds: its thread, and what it shares with it.
struct Held {
    stop: StopSignal,
    kept: Arc<Kept>,
    thread: std::thread::JoinHandle<()>,
}

/// The shards a [`Fence`] watches: each one's stop flag and session.
type Watched = BTreeMap<u32, (StopSignal, Arc<Kept>)>;

/// Stops the shards when their leases may run out while the keeper waits
/// on a store that does not answer (a call may take its whole deadline): a
/// thread of its own looks at the time every 100 ms, so no shard is held
/// past its lease, however long the keeper is held up.
struct Fence {
    epoch: Instant,
    /// Until when (ms after `epoch`) the leases surely hold: the last
    /// renewal's asking, and [`LEASE`] less [`FENCE`].
    until: AtomicU64,
    /// The shards held, by id: their stop flags and sessions.
    shards: Mutex<Watched>,
    /// Whether it stopped shards the keeper has not yet given up.
    fired: AtomicBool,
}

impl Fence {
    fn new() -> Fence {
        Fence { epoch: Instant::now(), until: AtomicU64::new(u64::MAX), shards: Mutex::default(), fired: false.into() }
    }

    /// The leases were renewed by a call asked at `asked`.
    fn renewed(&self, asked: Instant) {
        let until = asked.saturating_duration_since(self.epoch) + LEASE - FENCE;
        self.until.store(until.as_millis() as u64, Ordering::SeqCst);
    }

    fn shards(&self) -> std::sync::MutexGuard<'_, Watched> {
        self.shards.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Watches the time until the server stops.
    fn watch(&self, stopping: &StopSignal) {
        while !stopping.wait(Duration::from_millis(100)) {
            let late = self.epoch.elapsed().as_millis() as u64 > self.until.load(Ordering::SeqCst);
            let shards = self.shards();
            let running: Vec<u32> = shards.iter().filter(|(_, (stop, _))| !stop.is_set()).map(|(id, _)| *id).collect();
            if late && !running.is_empty() {
                for (stop, kept) in shards.values() {
                    kept.hand_over.store(true, Ordering::SeqCst);
                    stop.set();
                }
                self.fired.store(true, Ordering::SeqCst);
                tracing::error!(
                    shards = ?running,
                    "the store has not renewed the shards' leases, which may run out: stopped, so that no shard is \
                     held twice"
                );
            }
        }
    }
}

/// The identifies' turns, through the store.
struct StoreTurns(Arc<Pool>);

impl gateway::Turns for StoreTurns {
    fn turn(
        &self,
        bucket: u32,
        spacing: Duration,
    ) -> Result<Option<Duration>, Box<dyn std::error::Error + Send + Sync>> {
        let spacing = (spacing + TURN_MARGIN).as_millis() as i64;
        match self.0.identify_turn(bucket, spacing)? {
            Turn::Go => Ok(None),
            Turn::Wait(wait) => Ok(Some(wait)),
        }
    }
}

/// A shard's session as kept with its lease. The Gateway says what it is,
/// so one longer than a session id or a URL can be is not kept (its next
/// holder identifies anew) rather than written to the store each second.
fn saved(kept: &Kept) -> Option<SavedSession> {
    let (s, seq) = kept.get()?;
    (s.id.len() <= MAX_SESSION_ID && s.resume_url.len() <= MAX_RESUME_URL).then_some(SavedSession {
        id: s.id,
        seq,
        resume_url: s.resume_url,
    })
}

/// The longest session id and resume URL kept with a lease (the
/// platform's are 32 characters and a short `wss://` URL).
const MAX_SESSION_ID: usize = 256;
const MAX_RESUME_URL: usize = 2048;

/// What the shards need to connect, and where they report.
pub struct Connect {
    pub token: String,
    pub intents: crate::discord::intents::Intents,
    pub url: String,
    pub gate: Arc<IdentifyGate>,
    pub events: Arc<dyn gateway::Events>,
}

/// This process's shards, kept by lease until the server stops.
struct Keeper {
    shared: Arc<Shared>,
    pool: Arc<Pool>,
    me: String,
    connect: Connect,
    max: Option<u32>,
    held: BTreeMap<u32, Held>,
    count: u32,
    /// When the last renewal that succeeded was asked for.
    renewed: Instant,
    failing: bool,
    /// A shard closed with 4011: the platform wants more shards.
    more_wanted: Arc<AtomicBool>,
    /// Whether the log said that the shares leave shards unheld.
    said_unheld: bool,
    /// The count the platform recommended at the start.
    platform_count: u32,
    fence: Arc<Fence>,
}

/// Holds this process's share of the shards until the server stops, then
/// gives them up for the others to resume.
pub fn hold(shared: &Arc<Shared>, pool: Arc<Pool>, info: &GatewayInfo, connect: Connect, max: Option<u32>) {
    let me = super::share::me().to_string();
    if let Err(e) = pool.seed_identifies(info.session_starts_left, info.session_reset_after.as_millis() as i64) {
        tracing::warn!(error = %e, "the store could not keep the session-start budget; the identifies keep their turns");
    }
    let mut keeper = Keeper {
        shared: shared.clone(),
        pool,
        me,
        connect,
        max,
        held: BTreeMap::new(),
        count: 0,
        renewed: Instant::now(),
        failing: false,
        more_wanted: Arc::new(AtomicBool::new(false)),
        said_unheld: false,
        platform_count: info.shards,
        fence: Arc::new(Fence::new()),
    };
    let (fence, stopping) = (keeper.fence.clone(), shared.life.gateway_stop.clone());
    if let Err(e) = std::thread::Builder::new().name("blkc-lease-fence".into()).spawn(move || fence.watch(&stopping)) {
        tracing::error!(error = %e, "cannot start the leases' fence: shards are taken by no process here");
        return;
    }
    let mut gate = IdentifyGate::new(info);
    gate.turns = Some(Arc::new(StoreTurns(keeper.pool.clone())));
    keeper.connect.gate = Arc::new(gate);
    keeper.recommended(info.shards, false);
    // (Seen by the others before anything is taken.)
    keeper.renew();
    keeper.pause(FIRST_TAKE);
    while !keeper.stopping() {
        let started = Instant::now();
        keeper.beat();
        keeper.pause(BEAT.saturating_sub(started.elapsed()));
    }
    keeper.give_up_all("stopped", true);
    if let Err(e) = keeper.pool.leave(&keeper.me) {
        tracing::warn!(error = %e, "the store could not be told this process holds no shards; the others see it in 3 s");
    }
}

/// Each holder's share of `count` shards, in the holders' order (the first
/// to join first, as every process reads them): as even as their
/// `--max-shards` allow, one more to the first ones while the division
/// leaves some over, and none
/// past [`gateway::MAX_AUTO_SHARDS`]. Their sum falls short of `count` only
/// when the caps do.
pub fn shares(count: u32, most: &[Option<u32>]) -> Vec<u32> {
    let most: Vec<u32> = most.iter().map(|m| m.unwrap_or(u32::MAX).min(gateway::MAX_AUTO_SHARDS)).collect();
    let mut shares = vec![0u32; most.len()];
    let mut open: Vec<usize> = (0..most.len()).collect();
    let mut left = count;
    while !open.is_empty() {
        let n = open.len() as u32;
        let even = |rank: usize| left / n + u32::from((rank as u32) < left % n);
        // Those whose cap is below an even share get their cap; the rest
        // is divided again among the others.
        let capped: Vec<usize> =
            open.iter().enumerate().filter(|(rank, i)| most[**i] < even(*rank)).map(|(_, i)| *i).collect();
        if capped.is_empty() {
            for (rank, i) in open.iter().enumerate() {
                shares[*i] = even(rank);
            }
            break;
        }
        for i in capped {
            shares[i] = most[i];
            left -= most[i];
            open.retain(|o| *o != i);
        }
    }
    shares
}

impl Keeper {
    fn stopping(&self) -> bool {
        self.shared.life.gateway_stop.is_set()
    }

    /// Waits `wait`, or less when the server stops or a shard has a new
    /// session (kept with its lease at once: a process lost a moment after
    /// a READY leaves its next holder a session to resume).
    fn pause(&self, wait: Duration) {
        let until = Instant::now() + wait;
        let fresh = || self.held.values().any(|h| h.kept.fresh.swap(false, Ordering::SeqCst));
        // (A new session is looked for every 20 ms; a stop ends it at once.)
        while Instant::now() < until && !fresh() {
            let left = until.saturating_duration_since(Instant::now());
            if self.shared.life.gateway_stop.wait(left.min(Duration::from_millis(20))) {
                return;
            }
        }
    }

    /// The platform's recommended count, told to the store (`required`: it
    /// closed a shard with 4011): the count the shards are held under, set
    /// or moved when it can be.
    fn recommended(&mut self, recommended: u32, required: bool) {
        self.shared.metrics.shards_recommended.set(i64::from(recommended));
        match self.pool.shard_count(recommended, required) {
            Ok(standing) => {
                if standing.wanted > standing.count {
                    tracing::warn!(
                        count = standing.count,
                        recommended = standing.wanted,
                        "the platform wants more shards: every process gives its shards up, and they are taken \
                         again under the new count once none is held"
                    );
                } else if recommended > standing.count {
                    tracing::info!(
                        count = standing.count,
                        recommended,
                        "the platform recommends more shards: the bot's processes keep this count until the platform \
                         requires more (close code 4011) or no process holds a shard"
                    );
                }
                self.set_count(standing.count);
            }
            Err(e) => tracing::error!(error = %e, "the store could not say the shard count; trying again"),
        }
    }

    fn set_count(&mut self, count: u32) {
        if count != self.count && count > 0 {
            tracing::info!(count, "the bot's shards are held under this count");
            self.count = count;
            self.shared.metrics.shard_count.set(i64::from(count));
        }
    }

    /// One beat: renew, stop what was lost, follow a new count, then take
    /// or give up shards towards this process's share.
    fn beat(&mut self) {
        if self.more_wanted.swap(false, Ordering::SeqCst) {
            self.more_shards();
        }
        let Some(standing) = self.renew() else { return };
        if standing.wanted > standing.count {
            // Every process gives its shards up (their sessions end: they
            // are the old count's); the count moves when none is held.
            self.give_up_all("resharded", false);
            self.recommended(standing.wanted, true);
            return;
        }
        if standing.count == 0 {
            // The store had no count yet (its first answer failed): told
            // the platform's again.
            self.recommended(self.platform_count, false);
            return;
        }
        if self.count == 0 || standing.count != self.count {
            self.give_up_all("resharded", false);
            self.set_count(standing.count);
        }
        let most: Vec<Option<u32>> = standing.holders.iter().map(|(_, most)| *most).collect();
        let shares = shares(self.count, &most);
        let Some(mine) = standing.holders.iter().position(|(id, _)| *id == self.me) else { return };
        let unheld = self.count.saturating_sub(shares.iter().sum());
        if unheld > 0 && !std::mem::replace(&mut self.said_unheld, true) {
            tracing::warn!(
                unheld,
                count = self.count,
                "the processes' shares (128 each at most, or their --max-shards) leave shards no process may hold: \
                 their servers' events are not heard until more processes run"
            );
        } else if unheld == 0 {
            self.said_unheld = false;
        }
        let (share, held) = (shares[mine], self.held.len() as u32);
        if held > share {
            self.hand_over(held - share, standing.holders.len());
        } else if held < share {
            self.take(share - held);
        }
        self.shared.metrics.shards_held.set(self.held.len() as i64);
    }

    /// Renews the leases with each shard's session; stops at once any
    /// shard whose lease was lost. A store that does not answer leaves the
    /// shards running until their leases could run out, then stops them.
    fn renew(&mut self) -> Option<Standing> {
        let sessions: Vec<(u32, Option<SavedSession>)> =
            self.held.iter().map(|(id, h)| (*id, saved(&h.kept))).collect();
        let asked = Instant::now();
        match self.pool.renew(&self.me, self.max, &sessions, LEASE.as_millis() as i64) {
            Ok(standing) => {
                if std::mem::replace(&mut self.failing, false) {
                    tracing::info!("the store answers again: the shards' leases are renewed");
                }
                self.renewed = asked;
                self.fence.renewed(asked);
                self.shared.metrics.lease("renewed");
                if self.fence.fired.swap(false, Ordering::SeqCst) {
                    // Stopped while the store was slow: given up, each
                    // with its session, for whoever takes it next.
                    self.give_up_all("fenced", true);
                    return None;
                }
                let lost: Vec<u32> = self.held.keys().filter(|id| !standing.held.contains(id)).copied().collect();
                for (shard, _) in self.stop(&lost, true, "lost") {
                    tracing::warn!(shard, "the shard's lease ran out and another process took it: stopped here");
                }
                self.sweep();
                Some(standing)
            }
            Err(e) => {
                self.shared.metrics.lease("renew_failed");
                if !std::mem::replace(&mut self.failing, true) {
                    tracing::error!(error = %e, "the store cannot renew the shards' leases");
                }
                if !self.held.is_empty() && self.renewed.elapsed() + FENCE >= LEASE {
                    // (Unless the fence stopped them already, and said so.)
                    if !self.fence.fired.swap(false, Ordering::SeqCst) {
                        tracing::error!(
                            shards = ?self.held.keys().collect::<Vec<_>>(),
                            "the shards' leases may run out: stopped, so that no shard is held twice"
                        );
                    }
                    self.give_up_locally("fenced");
                }
                None
            }
        }
    }

    /// Gives up the shards whose thread ended by itself (a close code that
    /// retrying cannot fix, such as 4011, which the next beat acts on), so
    /// that no lease is kept for a shard no thread holds: each is taken
    /// again, by this process or another, once its reason is dealt with.
    fn sweep(&mut self) {
        let ended: Vec<u32> =
            self.held.iter().filter(|(_, h)| h.thread.is_finished() && !h.stop.is_set()).map(|(id, _)| *id).collect();
        if ended.is_empty() {
            return;
        }
        // (Their sessions ended with them.)
        let given: Vec<_> = self.stop(&ended, false, "ended").into_iter().map(|(id, _)| (id, None)).collect();
        tracing::warn!(shards = ?ended, "gave up the shards whose connection ended");
        if let Err(e) = self.pool.release(&self.me, &given) {
            tracing::warn!(error = %e, "the store could not take the shards given up; their leases run out");
        }
    }

    /// Takes up to `n` free shards and connects them, resuming the
    /// sessions their last holders left.
    fn take(&mut self, n: u32) {
        let taken = match self.pool.take(&self.me, self.count, n as usize, LEASE.as_millis() as i64) {
            Ok(taken) => taken,
            Err(e) => {
                tracing::warn!(error = %e, "the store could not give shards");
                return;
            }
        };
        for t in taken {
            let resumed = t.session.is_some();
            if t.previous.is_empty() {
                tracing::info!(shard = t.shard, resumed, "took a shard");
            } else {
                let previous = t.previous.as_str();
                tracing::info!(shard = t.shard, previous, resumed, "took over a shard");
            }
            self.shared.metrics.lease(if resumed { "resumed" } else { "identified" });
            let session = t.session.map(|s| (Session { id: s.id, resume_url: s.resume_url }, s.seq));
            self.start(t.shard, Kept::resuming(session));
        }
    }

    /// Gives up `n` shards (the highest) to a process that joined: closed
    /// without ending their sessions, which their next holders resume.
    fn hand_over(&mut self, n: u32, processes: usize) {
        let shards: Vec<u32> = self.held.keys().rev().take(n as usize).copied().collect();
        let given = self.stop(&shards, true, "handed_over");
        for (shard, _) in &given {
            tracing::info!(shard, processes, "handed a shard over, its session kept for the next holder");
        }
        if let Err(e) = self.pool.release(&self.me, &given) {
            tracing::warn!(error = %e, "the store could not take the shards given up; their leases run out instead");
        }
    }

    /// Gives up every shard (the server stops, or the count changes); with
    /// `keep`, their sessions for the next holders.
    fn give_up_all(&mut self, why: &'static str, keep: bool) {
        let shards: Vec<u32> = self.held.keys().copied().collect();
        let mut given = self.stop(&shards, keep, why);
        if !keep {
            given.iter_mut().for_each(|g| g.1 = None);
        }
        if !given.is_empty() {
            tracing::info!(shards = ?shards, why, "gave the shards up");
            if let Err(e) = self.pool.release(&self.me, &given) {
                tracing::warn!(error = %e, "the store could not take the shards given up; their leases run out");
            }
        }
        self.shared.metrics.shards_held.set(self.held.len() as i64);
    }

    /// Stops every shard without telling the store (it does not answer).
    fn give_up_locally(&mut self, why: &'static str) {
        let shards: Vec<u32> = self.held.keys().copied().collect();
        self.stop(&shards, true, why);
        self.shared.metrics.shards_held.set(0);
    }

    /// Stops shards' connections (keeping their sessions resumable when
    /// `keep`), all at once, waiting at most [`CLOSE_WAIT`] for them to
    /// close; gives each one's session as it ended.
    fn stop(&mut self, shards: &[u32], keep: bool, why: &'static str) -> Vec<(u32, Option<SavedSession>)> {
        let stopped: Vec<(u32, Held)> = shards.iter().filter_map(|id| Some((*id, self.held.remove(id)?))).collect();
        let mut fenced = self.fence.shards();
        for (id, held) in &stopped {
            fenced.remove(id);
            held.kept.hand_over.store(keep, Ordering::SeqCst);
            held.stop.set();
        }
        drop(fenced);
        let until = Instant::now() + CLOSE_WAIT;
        while stopped.iter().any(|(_, h)| !h.thread.is_finished()) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
        stopped
            .into_iter()
            .map(|(id, held)| {
                self.shared.metrics.lease(why);
                (id, saved(&held.kept))
            })
            .collect()
    }

    /// Connects shard `id` on a thread of its own.
    fn start(&mut self, id: u32, kept: Kept) {
        let stop = StopSignal::new();
        let kept = Arc::new(kept);
        let c = &self.connect;
        let shard = Shard {
            id,
            count: self.count,
            token: c.token.clone(),
            intents: c.intents,
            url: c.url.clone(),
            gate: c.gate.clone(),
            events: c.events.clone(),
            stop: stop.clone(),
            kept: kept.clone(),
        };
        let (shared, more) = (self.shared.clone(), self.more_wanted.clone());
        let spawned = std::thread::Builder::new().name(format!("blkc-gateway-{id}")).spawn(move || {
            // (The server's stop reaches the shard through the keeper.)
            match shard.run() {
                Err(fatal) if fatal.1 == Some(gateway::SHARDING_REQUIRED) => {
                    tracing::error!(shard = id, "{}", fatal.0);
                    more.store(true, Ordering::SeqCst);
                }
                Err(fatal) => shared.life.fatal(Some(id), fatal.0),
                Ok(()) => {}
            }
        });
        match spawned {
            Ok(thread) => {
                self.fence.shards().insert(id, (stop.clone(), kept.clone()));
                self.held.insert(id, Held { stop, kept, thread });
            }
            Err(e) => tracing::error!(shard = id, error = %e, "cannot start a Gateway thread"),
        }
    }

    /// A shard closed with 4011: the platform wants more shards than the
    /// count. Its `/gateway/bot` says how many; at least one more.
    fn more_shards(&mut self) {
        let loaded = self.shared.bot.loaded();
        let recommended = match super::gateway_bot::gateway_info(&self.shared, &loaded) {
            Ok(info) => info.shards,
            Err(_) => 0,
        };
        let wanted = recommended.max(self.count + 1);
        self.platform_count = self.platform_count.max(wanted);
        self.recommended(wanted, true);
    }
}

#[cfg(test)]
mod tests {
    use super::{saved, shares, Kept, Session};

    #[test]
    fn a_session_longer_than_the_platform_s_is_not_kept_with_a_lease() {
        let kept = |id: String, url: &str| saved(&Kept::resuming(Some((Session { id, resume_url: url.into() }, 41))));
        let ok = kept("9a4c".repeat(8), "wss://gateway-us-east1-b.discord.gg").unwrap();
        assert_eq!((ok.id.len(), ok.seq), (32, 41));
        assert!(kept("x".repeat(257), "wss://gateway.discord.gg").is_none());
        assert!(kept("abc".into(), &format!("wss://{}", "a".repeat(2048))).is_none());
        assert!(saved(&Kept::default()).is_none());
    }

    #[test]
    fn shares_are_even_the_first_ones_taking_what_is_over() {
        assert_eq!(shares(8, &[None, None, None]), [3, 3, 2]);
        assert_eq!(shares(8, &[None, None, None, None]), [2, 2, 2, 2]);
        assert_eq!(shares(2, &[None, None, None]), [1, 1, 0]);
        assert_eq!(shares(8, &[None]), [8]);
        assert_eq!(shares(0, &[None, None]), [0, 0]);
        assert!(shares(8, &[]).is_empty());
    }

    #[test]
    fn a_capped_process_s_rest_goes_to_the_others() {
        // 8 shards, one process holding at most 1: the others take 4 and 3.
        assert_eq!(shares(8, &[Some(1), None, None]), [1, 4, 3]);
        assert_eq!(shares(8, &[None, Some(1), None]), [4, 1, 3]);
        // A cap above the even share binds nothing.
        assert_eq!(shares(8, &[Some(5), None]), [4, 4]);
        // Caps that fall short leave shards unheld.
        assert_eq!(shares(8, &[Some(2), Some(3)]), [2, 3]);
        // One cap freed makes another bind in the next round.
        assert_eq!(shares(10, &[Some(1), Some(4), None]), [1, 4, 5]);
        assert_eq!(shares(1_000, &[None, None]), [128, 128]);
    }
}
