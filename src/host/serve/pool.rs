//! The run pool: as many threads as keep its cores busy, up to
//! `--workers`.
//!
//! A run holds its thread while it waits for its requests, so the number
//! of threads that is best depends on the APIs: against a fast API a few
//! threads keep the cores busy and more only add switching (with 64 on two
//! cores, a command with one request answered 0.56× the interactions a
//! second of 4 threads), while against a slow one every waiting run needs a
//! thread of its own. So the pool keeps about one *running* thread a core:
//! it starts with one thread a core, and counts every [`SAMPLE`] its threads
//! that run (neither waiting on the network, `base::waiting::blocked`, nor
//! idle). Every [`TICK`], with runs waiting in the queue: fewer running
//! than cores on average — the others wait on the network, so it grows to
//! the size at which as many would run (`cores × threads ÷ running`, the
//! textbook `cores × (1 + wait ÷ compute)`); clearly more running than
//! cores — they only take turns, so half of those beyond the cores retire
//! after their runs. A thread
//! idle for [`IDLE_EXIT`] leaves too. Never fewer than one a core, never
//! more than `--workers`.
//!
//! The pool goes by what *this process* does, never by the machine: a bot
//! shares its host with other programs, and a run that waits on the
//! network costs no CPU whatever the others do. (It once refused to grow
//! while the machine had little idle CPU, even when that CPU went to
//! programs at the lowest priority: beside two `nice -n 19` busy loops,
//! 1,000 runs waiting 4 s each on an API were delivered 58 in 117 s, on 9
//! threads.) Its own CPU time is read with `getrusage`: the pool stops
//! adding threads only when this process already keeps its cores busy.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError};

use super::pipeline;
use super::shared::Shared;
use super::shared::{Stop, Work};

/// How often the pool counts its running threads.
pub const SAMPLE: Duration = Duration::from_millis(5);
/// How often it resizes, on the mean of its counts.
pub const TICK: Duration = Duration::from_millis(25);
/// A thread with nothing to run this long leaves (down to one a core).
pub const IDLE_EXIT: Duration = Duration::from_secs(10);
/// The most threads added in one tick.
const MOST_ADDED: usize = 16;
/// Past this share of its cores' time busy in this process, the process
/// has no core to spare.
const SATURATED: f64 = 0.9;
/// The ticks over which this process's CPU time is measured.
const CPU_WINDOW: usize = 2;

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
    /// The pool of commands, clicks and events, whose size `/metrics`
    /// shows (`blkc_workers`); the keystrokes' share is not it.
    metered: bool,
}

impl Pool {
    /// A pool of at most `most` threads (at least one), taking from `queue`;
    /// `cores` threads to start with.
    pub fn new(most: usize, cores: usize, queue: Receiver<Work>) -> Arc<Pool> {
        Pool::with(most, cores, queue, true)
    }

    fn with(most: usize, cores: usize, queue: Receiver<Work>, metered: bool) -> Arc<Pool> {
        let most = most.max(1);
        Arc::new(Pool {
            least: cores.clamp(1, most),
            most,
            cores: cores.max(1),
            live: AtomicUsize::new(0),
            idle: AtomicUsize::new(0),
            retiring: AtomicUsize::new(0),
            queue,
            metered,
        })
    }

    /// A pool of at most `most` threads, one to start, not shown on
    /// `/metrics`: the autocomplete keystrokes' share, so that a flood of
    /// them never takes the threads commands answer on.
    pub fn share(most: usize, queue: Receiver<Work>) -> Arc<Pool> {
        Pool::with(most, 1, queue, false)
    }

    /// Threads now.
    pub fn live(&self) -> usize {
        self.live.load(Ordering::SeqCst)
    }

    /// How many threads to add or retire, given how many runs wait in the
    /// queue, and how many of the pool's threads ran (neither idle nor
    /// waiting on the network) and were busy (not idle), on average since
    /// the last tick; `own_cpu` is the share of the cores' time this
    /// process used over the last ticks (1.0: all of its cores).
    pub fn decide(&self, waiting: usize, running: f64, busy: f64, own_cpu: Option<f64>) -> Change {
        let (live, cores) = (self.live(), self.cores as f64);
        let retiring = self.retiring.load(Ordering::SeqCst) > 0;
        // This process keeps its cores busy: a thread added would only take
        // turns with the others. What other programs do is not counted.
        let saturated = own_cpu.is_some_and(|used| used >= SATURATED);
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

/// What the pool does after a look at its threads.
#[derive(Debug, PartialEq, Eq)]
pub enum Change {
    Add(usize),
    /// This many threads leave, each after its next run.
    Retire(usize),
    Keep,
}

/// Starts the pool's first threads (one a core) and the thread that sizes it.
pub fn start(shared: &Arc<Shared>, pool: &Arc<Pool>) -> Result<(), Stop> {
    for _ in 0..pool.least {
        add(shared, pool)?;
    }
    let (shared, pool) = (shared.clone(), pool.clone());
    std::thread::Builder::new()
        .name("blkc-pool".into())
        .spawn(move || size(&shared, &pool))
        .map_err(|error| Stop::Start { what: "the pool's sizing thread", error })?;
    Ok(())
}

/// Counts the threads every tick and adds or retires some, until the
/// queue closes.
fn size(shared: &Arc<Shared>, pool: &Arc<Pool>) {
    let samples = (TICK.as_millis() / SAMPLE.as_millis()).max(1) as usize;
    let mut cpu = std::collections::VecDeque::with_capacity(CPU_WINDOW + 1);
    loop {
        let (mut running, mut busy) = (0, 0);
        for _ in 0..samples {
            std::thread::sleep(SAMPLE);
            running += pool.running(crate::base::waiting::blocked());
            busy += pool.live().saturating_sub(pool.idle.load(Ordering::SeqCst));
        }
        if pool.live() == 0 {
            return;
        }
        let mean = |n: usize| n as f64 / samples as f64;
        if let Some(used) = own_cpu_time() {
            cpu.push_back((used, std::time::Instant::now()));
            if cpu.len() > CPU_WINDOW + 1 {
                cpu.pop_front();
            }
        }
        let own_cpu = match (cpu.front(), cpu.back()) {
            (Some(&(used_then, then)), Some(&(used_now, now))) if now > then => {
                let wall = now.duration_since(then).as_secs_f64() * pool.cores as f64;
                Some(used_now.saturating_sub(used_then).as_secs_f64() / wall)
            }
            _ => None,
        };
        match pool.decide(pool.queue.len(), mean(running), mean(busy), own_cpu) {
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
        if pool.metered {
            shared.metrics.workers.set(pool.live() as i64);
        }
    }
}

/// The CPU time this process has used, in user and system mode, all of its
/// threads together (`None` where the system cannot say: the pool then
/// goes by its threads' counts alone).
fn own_cpu_time() -> Option<Duration> {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a whole `rusage` to a pointer of one.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) } != 0 {
        return None;
    }
    // SAFETY: it returned 0, so it wrote the struct (and zeroed is valid).
    let usage = unsafe { usage.assume_init() };
    let time = |t: libc::timeval| Duration::new(t.tv_sec.max(0) as u64, (t.tv_usec.clamp(0, 999_999) * 1000) as u32);
    Some(time(usage.ru_utime) + time(usage.ru_stime))
}

/// Starts one more thread, if the pool has room.
fn add(shared: &Arc<Shared>, pool: &Arc<Pool>) -> Result<(), Stop> {
    if !pool.enter() {
        return Ok(());
    }
    let (shared, worker_pool) = (shared.clone(), pool.clone());
    let started = std::thread::Builder::new().name("blkc-run".into()).spawn(move || work(&shared, &worker_pool));
    started.map(|_| ()).map_err(|error| {
        pool.live.fetch_sub(1, Ordering::SeqCst);
        Stop::Start { what: "a run thread", error }
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
                    tracing::error!(error = %panicked, "a run failed");
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
    fn with_no_core_of_its_own_to_spare_none_are_added_and_many_retire() {
        // This process keeps its cores busy: more threads would only take
        // turns.
        assert_eq!(pool(64, 2, 4).decide(100, 0.5, 4.0, Some(0.98)), Change::Keep);
        assert_eq!(pool(64, 2, 40).decide(100, 0.5, 40.0, Some(0.95)), Change::Retire(36));
        // The same waits while this process uses little CPU, however busy
        // the machine is with other programs: they wait on the network.
        assert_eq!(pool(64, 2, 4).decide(100, 0.5, 4.0, Some(0.05)), Change::Add(12));
        let before = own_cpu_time().expect("getrusage");
        let spin = std::time::Instant::now();
        while spin.elapsed() < Duration::from_millis(30) {
            std::hint::black_box(0);
        }
        assert!(own_cpu_time().unwrap() > before, "this process's own time counts");
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
