//! The run pool: as many threads as keep the machine's cores busy, up to
//! `--workers`.
//!
//! A run holds its thread while it waits for its requests, so the number
//! of threads that is best depends on the APIs: against a fast API a few
//! threads keep the cores busy and more only add switching (with 64 on two
//! cores, a command with one request answered 0.56× the interactions a
//! second of 4 threads), while against a slow one every waiting run needs a
//! thread of its own. So the pool keeps about one *running* thread a core:
//! it starts with one thread a core, and counts every [`SAMPLE`] its threads
//! that run (neither waiting on the network, `eval::http::blocked`, nor
//! idle). Every [`TICK`], with runs waiting in the queue: fewer running
//! than cores on average — the others wait on the network, so it grows to
//! the size at which as many would run (`cores × threads ÷ running`, the
//! textbook `cores × (1 + wait ÷ compute)`); clearly more running than
//! cores — they only take turns, so half of those beyond the cores retire
//! after their runs. A thread
//! idle for [`IDLE_EXIT`] leaves too. Never fewer than one a core, never
//! more than `--workers`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError};

use super::pipeline::{self, Work};
use super::server::Shared;

/// How often the pool counts its running threads.
pub const SAMPLE: Duration = Duration::from_millis(5);
/// How often it resizes, on the mean of its counts.
pub const TICK: Duration = Duration::from_millis(25);
/// A thread with nothing to run this long leaves (down to one a core).
pub const IDLE_EXIT: Duration = Duration::from_secs(10);
/// The most threads added in one tick.
const MOST_ADDED: usize = 16;
/// Below this share of the machine's CPU time idle, it has no core to
/// spare.
const SATURATED: f64 = 0.1;
/// The ticks over which the machine's idle time is measured (its clock
/// counts hundredths of a second).
const IDLE_WINDOW: usize = 2;

/// The pool's size: its bounds, its threads, and retirements asked for.
pub struct Pool {
    least: usize,
    most: usize,
    cores: usize,
    live: AtomicUsize,
    /// Threads waiting for work.
    idle: AtomicUsize,
    /// Threads asked to leave once their run is done.
    retiring: AtomicUsize,
    queue: Receiver<Work>,
}

impl Pool {
    /// A pool of at most `most` threads (at least one), taking from `queue`;
    /// `cores` threads to start with.
    pub fn new(most: usize, cores: usize, queue: Receiver<Work>) -> Arc<Pool> {
        let most = most.max(1);
        Arc::new(Pool {
            least: cores.clamp(1, most),
            most,
            cores: cores.max(1),
            live: AtomicUsize::new(0),
            idle: AtomicUsize::new(0),
            retiring: AtomicUsize::new(0),
            queue,
        })
    }

    /// Threads now.
    pub fn live(&self) -> usize {
        self.live.load(Ordering::SeqCst)
    }

    /// How many threads to add or retire, given how many runs wait in the
    /// queue, and how many of the pool's threads ran (neither idle nor
    /// waiting on the network) and were busy (not idle), on average since
    /// the last tick.
    pub fn decide(&self, waiting: usize, running: f64, busy: f64, machine_idle: Option<f64>) -> Change {
        let (live, cores) = (self.live(), self.cores as f64);
        let retiring = self.retiring.load(Ordering::SeqCst) > 0;
        // No core to spare: a thread added would only take turns with the
        // others, whatever they wait on (an API on this machine is slow
        // *because* the cores are busy).
        let saturated = machine_idle.is_some_and(|idle| idle < SATURATED);
        // Threads beyond what was busy and a core's worth to spare (a
        // burst of slow requests over, the API fast again) leave, half
        // of them a tick: idle ones cost the busy ones their turns.
        let spare = live as f64 - busy.ceil() - cores;
        if waiting > 0 && saturated && live > 2 * self.cores && !retiring {
            Change::Retire((live - 2 * self.cores).min(live - self.least))
        } else if waiting > 0 && !saturated && running < cores * 0.9 && live < self.most {
            // The size at which a core's worth would run; twice the threads
            // when none ran at all.
            let target = if running >= 0.5 { (cores * live as f64 / running).ceil() as usize } else { live * 2 };
            let add = target.saturating_sub(live).clamp(1, MOST_ADDED).min(waiting);
            Change::Add(add.min(self.most - live))
        } else if live > self.least && !retiring && spare >= 1.0 {
            Change::Retire(((spare / 2.0).ceil() as usize).min(live - self.least))
        } else if waiting > 0 && running > cores * 1.5 && live > self.least && !retiring {
            // Half of the threads that only take turns leave, each after its
            // run (one a tick left a pool grown for a slow API too large for
            // a fast one for many ticks).
            Change::Retire((((running - cores) / 2.0).ceil() as usize).min(live - self.least))
        } else {
            Change::Keep
        }
    }

    /// Threads that run now: neither idle nor waiting on the network.
    /// (`blocked` may count a thread outside the pool, one of the platform's
    /// calls: it only makes the pool a little larger.)
    fn running(&self, blocked: usize) -> usize {
        self.live().saturating_sub(self.idle.load(Ordering::SeqCst)).saturating_sub(blocked)
    }

    /// Takes one thread's place, if the pool has room.
    fn enter(&self) -> bool {
        self.live.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| (n < self.most).then_some(n + 1)).is_ok()
    }

    /// Gives a place back if the pool is over one a core: for a thread that
    /// was asked to retire, or has been idle.
    fn leave(&self) -> bool {
        self.live.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| (n > self.least).then_some(n - 1)).is_ok()
    }

    /// Whether this thread, its run done, should leave: one was asked to.
    fn asked_to_leave(&self) -> bool {
        let asked = self.retiring.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1)).is_ok();
        asked && self.leave()
    }
}

/// What the pool does after a look at the machine.
#[derive(Debug, PartialEq, Eq)]
pub enum Change {
    Add(usize),
    /// This many threads leave, each after its next run.
    Retire(usize),
    Keep,
}

/// Starts the pool's first threads (one a core) and the thread that sizes it.
pub fn start(shared: &Arc<Shared>, pool: &Arc<Pool>) -> Result<(), String> {
    for _ in 0..pool.least {
        add(shared, pool)?;
    }
    let (shared, pool) = (shared.clone(), pool.clone());
    std::thread::Builder::new()
        .name("blkc-pool".into())
        .spawn(move || size(&shared, &pool))
        .map_err(|e| format!("cannot start a thread: {e}"))?;
    Ok(())
}

/// Counts the threads every tick and adds or retires some, until the
/// queue closes.
fn size(shared: &Arc<Shared>, pool: &Arc<Pool>) {
    let samples = (TICK.as_millis() / SAMPLE.as_millis()).max(1) as usize;
    let mut cpu = std::collections::VecDeque::with_capacity(IDLE_WINDOW + 1);
    loop {
        let (mut running, mut busy) = (0, 0);
        for _ in 0..samples {
            std::thread::sleep(SAMPLE);
            running += pool.running(crate::eval::http::blocked());
            busy += pool.live().saturating_sub(pool.idle.load(Ordering::SeqCst));
        }
        if pool.live() == 0 {
            return;
        }
        let mean = |n: usize| n as f64 / samples as f64;
        if let Some(now) = cpu_times() {
            cpu.push_back(now);
            if cpu.len() > IDLE_WINDOW + 1 {
                cpu.pop_front();
            }
        }
        let machine_idle = match (cpu.front(), cpu.back()) {
            (Some(&(busy_then, total_then)), Some(&(busy_now, total_now))) if total_now >= total_then + 4 => {
                Some(1.0 - (busy_now - busy_then) as f64 / (total_now - total_then) as f64)
            }
            _ => None,
        };
        match pool.decide(pool.queue.len(), mean(running), mean(busy), machine_idle) {
            Change::Add(n) => {
                for _ in 0..n {
                    if add(shared, pool).is_err() {
                        break;
                    }
                }
            }
            Change::Retire(n) => {
                pool.retiring.fetch_add(n, Ordering::SeqCst);
            }
            Change::Keep => {}
        }
        shared.metrics.workers.set(pool.live() as i64);
    }
}

/// The machine's CPU time, busy and in all, in clock ticks since it
/// started (`/proc/stat`; `None` where there is none: the pool then goes by
/// its own threads alone).
fn cpu_times() -> Option<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    let times: Vec<u64> =
        text.lines().next()?.strip_prefix("cpu ")?.split_whitespace().map_while(|t| t.parse().ok()).take(8).collect();
    let idle = times.get(3)? + times.get(4).copied().unwrap_or(0);
    let total: u64 = times.iter().sum();
    Some((total.checked_sub(idle)?, total))
}

/// Starts one more thread, if the pool has room.
fn add(shared: &Arc<Shared>, pool: &Arc<Pool>) -> Result<(), String> {
    if !pool.enter() {
        return Ok(());
    }
    let (shared, worker_pool) = (shared.clone(), pool.clone());
    let started = std::thread::Builder::new().name("blkc-run".into()).spawn(move || work(&shared, &worker_pool));
    started.map(|_| ()).map_err(|e| {
        pool.live.fetch_sub(1, Ordering::SeqCst);
        format!("cannot start a run thread: {e}")
    })
}

/// One thread: runs what the queue holds until it is asked to leave, has
/// been idle long enough, or the queue closes.
fn work(shared: &Arc<Shared>, pool: &Pool) {
    loop {
        pool.idle.fetch_add(1, Ordering::SeqCst);
        let next = pool.queue.recv_timeout(IDLE_EXIT);
        pool.idle.fetch_sub(1, Ordering::SeqCst);
        match next {
            Ok(work) => {
                // A run's own panics are caught inside it, where its user
                // can be told; this keeps the thread for anything else.
                if let Err(panicked) = pipeline::caught(|| pipeline::run(shared, work)) {
                    tracing::error!(error = panicked, "a run failed");
                }
                if pool.asked_to_leave() {
                    return;
                }
            }
            Err(RecvTimeoutError::Timeout) => {
                if pool.leave() {
                    return;
                }
            }
            Err(RecvTimeoutError::Disconnected) => {
                pool.live.fetch_sub(1, Ordering::SeqCst);
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool(most: usize, cores: usize, live: usize) -> Arc<Pool> {
        let (_, queue) = crossbeam_channel::bounded(1);
        let pool = Pool::new(most, cores, queue);
        pool.live.store(live, Ordering::SeqCst);
        pool
    }

    #[test]
    fn waiting_runs_get_threads_while_the_threads_wait_on_the_network() {
        // Two cores, two threads, both waiting on a slow API: twice as many.
        assert_eq!(pool(64, 2, 2).decide(100, 0.0, 64.0, None), Change::Add(2));
        assert_eq!(pool(64, 2, 32).decide(100, 0.0, 64.0, None), Change::Add(MOST_ADDED));
        assert_eq!(pool(64, 2, 2).decide(1, 0.0, 64.0, None), Change::Add(1));
        // Half the time waiting: twice the cores (2 × 2 ÷ 1).
        assert_eq!(pool(64, 2, 2).decide(100, 1.0, 64.0, None), Change::Add(2));
        assert_eq!(pool(64, 2, 4).decide(100, 2.0, 64.0, None), Change::Keep);
        // Never past the most.
        assert_eq!(pool(64, 2, 62).decide(100, 0.0, 64.0, None), Change::Add(2));
        assert_eq!(pool(64, 2, 64).decide(100, 0.0, 64.0, None), Change::Keep);
    }

    #[test]
    fn running_threads_beyond_the_cores_retire_and_none_are_added() {
        // Runs wait, but the threads run: more would only take turns.
        assert_eq!(pool(64, 2, 2).decide(100, 2.0, 64.0, None), Change::Keep);
        assert_eq!(pool(64, 2, 30).decide(100, 20.0, 30.0, None), Change::Retire(9));
        assert_eq!(pool(64, 2, 3).decide(100, 20.0, 30.0, None), Change::Retire(1), "never under one a core");
        assert_eq!(pool(64, 2, 30).decide(100, 2.5, 30.0, None), Change::Keep);
        // Never under one a core.
        assert_eq!(pool(64, 2, 2).decide(100, 4.0, 2.0, None), Change::Keep);
        // Nothing waits and all were busy (on the network): they stay.
        assert_eq!(pool(64, 2, 30).decide(0, 0.0, 30.0, None), Change::Keep);
        // Nothing waits and most were idle: half of the spare ones leave
        // (30 threads, 4 busy, 2 cores: 24 spare, 12 leave).
        assert_eq!(pool(64, 2, 30).decide(0, 1.0, 4.0, None), Change::Retire(12));
        assert_eq!(pool(64, 2, 5).decide(0, 1.0, 2.0, None), Change::Retire(1));
        assert_eq!(pool(64, 2, 4).decide(0, 1.0, 2.0, None), Change::Keep);
        // Idle threads are not running ones.
        let p = pool(64, 2, 30);
        p.idle.store(28, Ordering::SeqCst);
        assert_eq!(p.running(0), 2);
        assert_eq!(p.running(5), 0);
    }

    #[test]
    fn with_no_core_to_spare_none_are_added_and_many_retire() {
        // Runs wait on an API that is slow because it shares the busy
        // cores: more threads would make it slower.
        assert_eq!(pool(64, 2, 4).decide(100, 0.5, 4.0, Some(0.02)), Change::Keep);
        assert_eq!(pool(64, 2, 40).decide(100, 0.5, 40.0, Some(0.02)), Change::Retire(36));
        // The same waits with idle cores: they wait on the network.
        assert_eq!(pool(64, 2, 4).decide(100, 0.5, 4.0, Some(0.6)), Change::Add(12));
        assert_eq!(cpu_times().is_some(), cfg!(target_os = "linux"));
    }

    #[test]
    fn a_retiring_thread_leaves_only_above_one_a_core() {
        let p = pool(64, 2, 3);
        p.retiring.store(5, Ordering::SeqCst);
        assert!(p.asked_to_leave());
        assert_eq!(p.live(), 2);
        assert!(!p.asked_to_leave(), "at one a core, a thread stays");
        assert_eq!(p.live(), 2);
        // `--workers 1` on a machine of many cores: one thread.
        assert_eq!(pool(1, 8, 0).least, 1);
    }
}
