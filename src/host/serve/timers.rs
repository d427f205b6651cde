//! Timed events in `blkc serve`: one thread keeps each timed tree's next
//! tick (src/language/schedule.rs computes it) and, when it comes, queues the tree's
//! run as an event's, posting to the channel its value names.
//!
//! - **One run a tick**, across every process sharing a PostgreSQL store:
//!   the tick is claimed in the store (`~tick.NAME.SECOND`, as a Gateway
//!   delivery is) for a short lease ([`LEASE`]) that its process renews
//!   while the run goes on, and keeps for days once it has run. A process
//!   that loses the claim skips the tick, and tries the claim again after
//!   the lease for a while ([`TAKEOVER`]): when the claimer was killed
//!   mid-run its lease lapses, and another process takes the tick over. So
//!   a tick runs **at least once** while some process lives, and twice
//!   only when a process dies after its run posted and before it kept the
//!   claim.
//! - **Fail closed**: while the store cannot say who has a tick, no process
//!   runs it. The tick is skipped, logged as unclaimed and counted
//!   (`outcome="unclaimed"`); N processes never post N copies.
//! - **No replay of missed ticks**: a server started after a tick does not
//!   run it, and a tick noticed later than [`GRACE`] after it came (the
//!   process was stopped, or suspended) is skipped and logged, with every
//!   other one missed: the next is the first after now. A tick noticed late
//!   within the grace (a busy moment) still runs.
//! - The next ticks are logged when the server starts, and each timed
//!   tree's next one is on `/metrics` (`blkc_timer_next_tick_seconds`).
//!
//! The clock is the server's `Config::clock` (`serve::clock::Clock`): the
//! system's, or a faster one the tests give through the command line
//! (`BLKC_TEST_CLOCK`) that every process computes alike, to see an hour
//! of ticks in seconds. Cooldowns and click limits follow the same clock.

use crate::base::stop::StopSignal;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::claim::TickHold;
use super::clock::Clock;
use super::ending::{ended, Ended, Ending};
use super::loaded::Loaded;
use super::shared::Shared;
use super::shared::{Queued, Work};
use super::trigger::{About, Outcome, Trigger};
use crate::language::plan::TreeKind;
use crate::language::schedule::{rfc3339, Schedule};

/// How late a tick may be noticed and still run (the system's time: a
/// process stopped or suspended longer than this skips the tick).
pub const GRACE: Duration = Duration::from_secs(60);

/// A tick's claim while its run goes on: renewed every third of it, so a
/// process killed mid-run leaves the tick to another within this.
pub const LEASE: Duration = Duration::from_secs(15);

/// How long after a tick a process that lost its claim tries again.
pub const TAKEOVER: Duration = Duration::from_secs(600);

/// How many next ticks the start lists.
const LISTED: usize = 3;

/// The thread of the timed events, until [`Timers::stop`].
pub struct Timers {
    stop: StopSignal,
    /// Dropped to wake the thread where it waits for a hook's tick.
    wake: crossbeam_channel::Sender<()>,
    thread: std::thread::JoinHandle<()>,
}

impl Timers {
    pub fn stop(self) {
        self.stop.set();
        drop(self.wake);
        let _ = self.thread.join();
    }
}

/// Starts the thread; it idles while the file has no timed event (a reload
/// may add one).
pub fn start(shared: &Arc<Shared>) -> std::io::Result<Timers> {
    let stop = StopSignal::new();
    let (wake, woken) = crossbeam_channel::bounded::<()>(0);
    let (shared, stopped) = (shared.clone(), stop.clone());
    let thread = std::thread::Builder::new().name("blkc-timers".into()).spawn(move || {
        let clock = shared.clock.clone();
        let mut ticks = Ticks::default();
        while !stopped.is_set() && !shared.life.draining() {
            let loaded = shared.bot.loaded();
            let wait = ticks.step(&shared, &loaded, clock.now_ms(), &clock);
            let wait = wait.clamp(Duration::from_millis(5), Duration::from_secs(1));
            // `blkc play` may ask for a tick at once, while this waits; a
            // stop wakes it at once too.
            let Some(hooks) = shared.hooks.as_ref() else {
                stopped.wait(wait);
                continue;
            };
            crossbeam_channel::select! {
                recv(hooks.ticks) -> name => match name {
                    Ok(name) => tick_now(&shared, &shared.bot.loaded(), &mut ticks, &name, &clock),
                    Err(_) => {
                        stopped.wait(wait);
                    }
                },
                recv(woken) -> _ => {}
                default(wait) => {}
            }
        }
    })?;
    Ok(Timers { stop, wake, thread })
}

/// Each timed tree's schedule and next tick (Unix seconds), by name; the
/// ticks this process claimed and runs, and those it lost and may take over.
#[derive(Default)]
struct Ticks {
    next: HashMap<String, (Schedule, i64)>,
    listed: bool,
    held: Vec<Held>,
    lost: Vec<Lost>,
}

/// A tick claimed and queued: its lease is renewed until its run is done.
struct Held {
    key: String,
    done: Arc<AtomicBool>,
    renewed: std::time::Instant,
}

/// A tick another process claimed: tried again once its lease could have
/// lapsed, until [`TAKEOVER`] after it was lost.
struct Lost {
    name: String,
    at: i64,
    key: String,
    retry: std::time::Instant,
    until: std::time::Instant,
}

impl Ticks {
    /// Runs the ticks that have come, sets the next ones, and says how long
    /// to wait for the earliest.
    fn step(&mut self, shared: &Arc<Shared>, loaded: &Arc<Loaded>, now_ms: i64, clock: &Clock) -> Duration {
        let now = now_ms.div_euclid(1000);
        let timed: Vec<(usize, &str, &Schedule)> = loaded
            .plan
            .trees
            .iter()
            .enumerate()
            .filter(|(_, t)| t.kind == TreeKind::Event)
            .filter_map(|(i, t)| Some((i, t.name.as_str(), &t.timer.as_ref()?.schedule)))
            .collect();
        // A tree gone or rescheduled by a reload starts again from now.
        self.next.retain(|name, (schedule, _)| timed.iter().any(|(_, n, s)| n == name && *s == schedule));
        for (_, name, schedule) in &timed {
            if !self.next.contains_key(*name) {
                if let Some(at) = schedule.next_after(now) {
                    self.next.insert(name.to_string(), ((*schedule).clone(), at));
                }
            }
        }
        if !self.listed {
            self.listed = true;
            list(&timed, now);
        }
        for (index, name, schedule) in &timed {
            let Some((_, at)) = self.next.get(*name).cloned() else { continue };
            if now_ms < at * 1000 {
                continue;
            }
            // Within the grace, a tick is run however late this loop saw
            // it, and the next one follows it (a busy moment skips none);
            // past it, the ticks missed are skipped, and the next is the
            // first after now.
            let late = clock.real(now_ms - at * 1000);
            let after = if late <= GRACE {
                self.fire(shared, loaded, *index, at, None);
                at
            } else {
                tracing::warn!(event = *name, tick = %rfc3339(at), late_s = late.as_secs(), "a tick came while the server could not run it: skipped");
                let about = About::tick(name, at);
                ended(shared, Ended::Before { about, received: std::time::Instant::now() }, Ending::of(Outcome::Late));
                now
            };
            match schedule.next_after(after) {
                Some(next) => self.next.insert(name.to_string(), ((*schedule).clone(), next)),
                None => self.next.remove(*name),
            };
        }
        self.renew(shared);
        self.take_over(shared, loaded);
        for (name, (_, at)) in &self.next {
            shared.metrics.timer_next(name, *at);
        }
        shared.metrics.timers_only(self.next.keys());
        let earliest = self.next.values().map(|(_, at)| *at).min();
        earliest.map_or(Duration::from_secs(1), |at| clock.until(at * 1000))
    }
}

impl Ticks {
    /// Claims tick `at` of tree `index` and queues its run; a tick another
    /// process claimed is noted to be tried again. A tick by hand, asked
    /// for at `by_hand` (ms), is claimed as its own.
    fn fire(&mut self, shared: &Arc<Shared>, loaded: &Arc<Loaded>, index: usize, at: i64, by_hand: Option<i64>) {
        let name = &loaded.plan.trees[index].name;
        let key = match by_hand {
            None => format!("~tick.{name}.{at}"),
            Some(ms) => format!("~tick.{name}.{at}.hand.{ms}"),
        };
        match claim(shared, &key) {
            Claim::Won => self.run(shared, loaded, index, at, key),
            Claim::Lost => {
                let now = std::time::Instant::now();
                let retry = now + LEASE + Duration::from_secs(1);
                self.lost.push(Lost { name: name.clone(), at, key, retry, until: now + TAKEOVER });
            }
            Claim::Unknown => {
                let about = About::tick(name, at);
                ended(
                    shared,
                    Ended::Before { about, received: std::time::Instant::now() },
                    Ending::of(Outcome::Unclaimed),
                );
            }
        }
    }

    /// Queues the run of a tick this process claimed, holding its claim.
    fn run(&mut self, shared: &Arc<Shared>, loaded: &Arc<Loaded>, index: usize, at: i64, key: String) {
        let done = Arc::new(AtomicBool::new(false));
        let hold = TickHold::new(key.clone(), shared.bot.store.clone(), done.clone());
        if fire(shared, loaded, index, at, hold) {
            self.held.push(Held { key, done, renewed: std::time::Instant::now() });
        }
    }

    /// Renews the leases of the ticks whose runs go on.
    fn renew(&mut self, shared: &Arc<Shared>) {
        self.held.retain(|h| !h.done.load(Ordering::SeqCst));
        for held in self.held.iter_mut().filter(|h| h.renewed.elapsed() >= LEASE / 3) {
            let until = super::clock::epoch_ms() + LEASE.as_millis() as i64;
            if let Err(e) = shared.bot.store.hold(&held.key, until) {
                tracing::warn!(tick = held.key.as_str(), error = %e, "a running tick's claim could not be renewed");
            }
            held.renewed = std::time::Instant::now();
        }
    }

    /// Tries again the claims of ticks another process took: one whose
    /// process died mid-run has a lapsed lease, and is run here.
    fn take_over(&mut self, shared: &Arc<Shared>, loaded: &Arc<Loaded>) {
        let now = std::time::Instant::now();
        self.lost.retain(|l| l.until > now);
        let due: Vec<usize> = (0..self.lost.len()).filter(|&i| self.lost[i].retry <= now).collect();
        for i in due.into_iter().rev() {
            let Some(index) = loaded.plan.trees.iter().position(|t| t.timer.is_some() && t.name == self.lost[i].name)
            else {
                self.lost.swap_remove(i);
                continue;
            };
            match claim(shared, &self.lost[i].key) {
                Claim::Won => {
                    let lost = self.lost.swap_remove(i);
                    tracing::warn!(event = lost.name.as_str(), tick = %rfc3339(lost.at), "took over a tick whose process stopped before its run was done");
                    self.run(shared, loaded, index, lost.at, lost.key);
                }
                Claim::Lost | Claim::Unknown => self.lost[i].retry = now + LEASE / 3,
            }
        }
    }
}

/// What claiming a tick in the store found.
enum Claim {
    Won,
    /// Another process holds it, or ran it.
    Lost,
    /// The store could not say: nobody runs it (fail closed).
    Unknown,
}

/// Claims tick `key` for a [`LEASE`], by the store's clock of the system's
/// now (the store prunes by it, whatever clock the ticks follow).
fn claim(shared: &Arc<Shared>, key: &str) -> Claim {
    match shared.bot.store.first_time(key, super::clock::epoch_ms(), LEASE.as_millis() as i64) {
        Ok(true) => Claim::Won,
        Ok(false) => Claim::Lost,
        Err(e) => {
            tracing::warn!(tick = key, error = %e, "a tick was not run: the store could not say whether another process has it");
            Claim::Unknown
        }
    }
}

/// The start's line per timed tree: its next ticks.
fn list(timed: &[(usize, &str, &Schedule)], now: i64) {
    for (_, name, schedule) in timed {
        let next: Vec<String> = schedule.next_ticks(now, LISTED).into_iter().map(rfc3339).collect();
        tracing::info!(event = *name, next = %next.join(", "), "timed event");
    }
}

/// A tick asked for by hand (`blkc play`'s "tick now"): the timed tree
/// `name` runs at once, as at a tick of its schedule, which is unchanged.
fn tick_now(shared: &Arc<Shared>, loaded: &Arc<Loaded>, ticks: &mut Ticks, name: &str, clock: &Clock) {
    let timed = |t: &&crate::language::plan::Tree| t.kind == TreeKind::Event && t.timer.is_some() && t.name == name;
    let Some(index) = loaded.plan.trees.iter().position(|t| timed(&t)) else {
        tracing::warn!(event = name, "no timed event of that name to tick");
        return;
    };
    let now_ms = clock.now_ms();
    ticks.fire(shared, loaded, index, now_ms.div_euclid(1000), Some(now_ms));
}

/// Queues tree `index`'s run for its tick `at`, claimed by `hold`, once its
/// channel is known: whether it was queued.
fn fire(shared: &Arc<Shared>, loaded: &Arc<Loaded>, index: usize, at: i64, hold: TickHold) -> bool {
    let tree = &loaded.plan.trees[index];
    let Some(timer) = &tree.timer else { return false };
    let mut store = shared.bot.store.run_store();
    let channel = match crate::run::eval::timer_channel(&loaded.plan, timer, &shared.bot.inputs, store.as_mut()) {
        Ok(channel) => channel,
        Err(d) => {
            let (code, error) = (d.code.as_str(), d.message.as_str());
            tracing::error!(event = tree.name.as_str(), tick = %rfc3339(at), code, error, "a tick could not run");
            let about = About::tick(&tree.name, at);
            ended(shared, Ended::Before { about, received: std::time::Instant::now() }, Ending::of(Outcome::Failed));
            return false;
        }
    };
    let trigger = Trigger::from_timer(loaded.clone(), index, channel, at, hold);
    let work = Work { _queued: Queued::new(shared), trigger };
    if let Err(full) = shared.queue.events.try_send(work) {
        tracing::warn!(event = tree.name.as_str(), "a tick dropped: the run queue is full");
        ended(shared, Ended::Trigger(&full.into_inner().trigger), Ending::of(Outcome::Busy));
        return false;
    }
    true
}
