//! The front door's bounds: what anyone on the internet can make the
//! process hold before a signature is checked. Open files (the soft limit
//! raised to the hard one, and the connections capped by what is left for
//! the runs), connections per client address, connections that send
//! nothing, and the memory of the request bodies in flight, in total.

use prometheus_client::metrics::gauge::Gauge;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http_body_util::BodyExt as _;
use hyper::body::Incoming;

/// How long a new connection may stay silent: the platform sends its
/// request as soon as it connects, and a connection that has sent nothing
/// must not hold a slot for long.
pub const FIRST_BYTE: Duration = Duration::from_secs(3);

/// How long a client has to send a whole body.
pub const BODY_TIME: Duration = Duration::from_secs(10);

/// Open files kept for each run thread beside the connections: its HTTP
/// connections, a store (SQLite's database, journal and shared memory, or
/// a PostgreSQL connection), a resolver's socket.
const FILES_PER_WORKER: u64 = 8;
/// Open files kept for the rest: the log, the listener, the Gateway, the
/// platform's client, the runtime's own.
const FILES_KEPT: u64 = 128;

/// Raises the soft limit of open files to the hard one (the default soft
/// limit, 1,024 on most systems and under systemd, is far below what a
/// busy server holds). Returns the soft limit before and after.
pub fn raise_open_files() -> (u64, u64) {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit and setrlimit on a struct this function owns.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return (1024, 1024);
        }
        let before = limit.rlim_cur;
        if limit.rlim_cur < limit.rlim_max {
            let raised = libc::rlimit { rlim_cur: limit.rlim_max, rlim_max: limit.rlim_max };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                return (before, limit.rlim_max);
            }
        }
        (before, before)
    }
}

/// The connections the process may hold: what `--max-connections` asks,
/// within the open files left once every run thread has its own.
pub fn connection_cap(asked: usize, open_files: u64, workers: usize) -> usize {
    let kept = FILES_KEPT + FILES_PER_WORKER * workers as u64;
    let left = open_files.saturating_sub(kept).max(16);
    asked.min(usize::try_from(left).unwrap_or(usize::MAX)).max(1)
}

/// The key of a client address: IPv4 as it is, IPv6 by its /64 (one
/// machine is given a whole /64).
fn address_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let mut s = v6.segments();
                s[4..].fill(0);
                IpAddr::V6(s.into())
            }
        },
    }
}

/// The connections held, in all and by client address, each with its
/// [`Slot`].
///
/// At capacity, a connection that is idle (it has sent no request yet, or
/// sits between requests) gives way to a new one: the one idle longest is
/// asked to close (`Slot::evict`), as nginx and hyper servers reclaim idle
/// keep-alive connections under pressure. So idle sockets, from however
/// many addresses, never keep a signed interaction out; only connections
/// that are all in the middle of requests do.
#[derive(Debug)]
pub struct Door {
    max: usize,
    per_address_max: usize,
    held: Mutex<Held>,
    next: AtomicU64,
    opened: Instant,
}

#[derive(Debug, Default)]
struct Held {
    count: usize,
    by_address: HashMap<IpAddr, usize>,
    slots: HashMap<u64, Arc<Slot>>,
}

/// One connection's state, for the door to find the idle ones.
#[derive(Debug)]
pub struct Slot {
    /// When it became idle (ms since the door opened), or [`BUSY`].
    idle_since: AtomicU64,
    /// Asked to give way already.
    leaving: AtomicBool,
    /// Woken when the connection should close.
    pub evict: tokio::sync::Notify,
}

/// A slot in the middle of a request.
const BUSY: u64 = u64::MAX;

impl Slot {
    /// A request is being answered: the connection is not idle.
    pub fn busy(&self) {
        self.idle_since.store(BUSY, Ordering::SeqCst);
    }

    /// The request was answered: idle from `now` (ms since the door opened).
    fn idle_at(&self, now: u64) {
        self.idle_since.store(now, Ordering::SeqCst);
    }
}

/// A connection let in; it gives its place back when dropped.
#[derive(Debug)]
pub struct Admitted {
    door: Arc<Door>,
    key: IpAddr,
    id: u64,
    pub slot: Arc<Slot>,
}

impl Admitted {
    /// The request was answered: the connection is idle now.
    pub fn idle(door: &Door, slot: &Slot) {
        slot.idle_at(door.now());
    }
}

impl Drop for Admitted {
    fn drop(&mut self) {
        let mut held = self.door.held.lock().unwrap_or_else(|e| e.into_inner());
        held.count -= 1;
        held.slots.remove(&self.id);
        if let Some(n) = held.by_address.get_mut(&self.key) {
            *n -= 1;
            if *n == 0 {
                held.by_address.remove(&self.key);
            }
        }
    }
}

/// Why a connection was not let in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    Full,
    Address,
}

impl Door {
    /// At most `max` connections, and `per_address` from one address (0:
    /// half of `max`, so no one address can hold every place).
    pub fn new(max: usize, per_address: usize) -> Arc<Door> {
        let per_address_max = if per_address == 0 { (max / 2).max(1) } else { per_address.min(max) };
        Arc::new(Door {
            max,
            per_address_max,
            held: Mutex::new(Held::default()),
            next: AtomicU64::new(0),
            opened: Instant::now(),
        })
    }

    pub fn max(&self) -> usize {
        self.max
    }

    pub fn per_address_max(&self) -> usize {
        self.per_address_max
    }

    /// Milliseconds since the door opened.
    fn now(&self) -> u64 {
        self.opened.elapsed().as_millis() as u64
    }

    /// Lets a connection from `ip` in: at capacity, the connection idle
    /// longest is asked to close and this one takes its place (the count
    /// may pass the most by the connections on their way out, each closing
    /// at once); with none idle, it is refused.
    pub fn admit(self: &Arc<Door>, ip: IpAddr) -> Result<Admitted, Refused> {
        let key = address_key(ip);
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        if held.by_address.get(&key).copied().unwrap_or(0) >= self.per_address_max {
            return Err(Refused::Address);
        }
        if held.count >= self.max {
            let leaving = held.slots.values().filter(|s| s.leaving.load(Ordering::SeqCst)).count();
            let idlest = held
                .slots
                .values()
                .filter(|s| !s.leaving.load(Ordering::SeqCst) && s.idle_since.load(Ordering::SeqCst) != BUSY)
                .min_by_key(|s| s.idle_since.load(Ordering::SeqCst));
            match idlest {
                // (At most as many on their way out as the door holds.)
                Some(slot) if leaving < self.max => {
                    slot.leaving.store(true, Ordering::SeqCst);
                    slot.evict.notify_one();
                }
                _ => return Err(Refused::Full),
            }
        }
        *held.by_address.entry(key).or_insert(0) += 1;
        held.count += 1;
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let slot = Arc::new(Slot {
            idle_since: AtomicU64::new(self.now()),
            leaving: AtomicBool::new(false),
            evict: Default::default(),
        });
        held.slots.insert(id, slot.clone());
        Ok(Admitted { door: self.clone(), key, id, slot })
    }
}

/// The bytes of request bodies in flight, in two tiers: the first
/// [`SMALL`] bytes of each body (where every real interaction fits) and
/// what a body holds beyond them. A client that fills the second tier with
/// slow large bodies holds no room a small one needs.
#[derive(Debug)]
pub struct Bodies {
    small: AtomicUsize,
    large: AtomicUsize,
    small_max: usize,
    large_max: usize,
    /// What `/metrics` says of them: how many, and their bytes.
    count: Gauge,
    bytes: Gauge,
}

/// The part of a body counted in the first tier.
pub const SMALL: usize = 64 * 1024;

impl Bodies {
    /// Bodies of at most `max_body` bytes each: room for 512 small ones and
    /// 16 of the largest, at once.
    /// `count` and `bytes` are the metrics that show them.
    pub fn new(max_body: usize, count: Gauge, bytes: Gauge) -> Arc<Bodies> {
        Arc::new(Bodies {
            small: AtomicUsize::new(0),
            large: AtomicUsize::new(0),
            small_max: 512 * SMALL,
            large_max: 16 * max_body.saturating_sub(SMALL),
            count,
            bytes,
        })
    }

    /// Takes room for a body growing from `had` bytes by `more`.
    fn charge(&self, had: usize, more: usize) -> bool {
        let small = (had + more).min(SMALL).saturating_sub(had.min(SMALL));
        let large = more - small;
        let take = |tier: &AtomicUsize, n: usize, max: usize| {
            n == 0
                || tier
                    .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |now| (now + n <= max).then_some(now + n))
                    .is_ok()
        };
        if !take(&self.small, small, self.small_max) {
            return false;
        }
        if !take(&self.large, large, self.large_max) {
            self.small.fetch_sub(small, Ordering::SeqCst);
            return false;
        }
        if had == 0 && more > 0 {
            self.count.inc();
        }
        self.bytes.inc_by(more as i64);
        true
    }

    fn release(&self, had: usize) {
        let small = had.min(SMALL);
        self.small.fetch_sub(small, Ordering::SeqCst);
        self.large.fetch_sub(had - small, Ordering::SeqCst);
        if had > 0 {
            self.count.dec();
            self.bytes.dec_by(had as i64);
        }
    }
}

/// Why a body was not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyRefused {
    /// Over `--max-body`.
    TooLarge,
    /// The bodies in flight hold all the room there is.
    Busy,
    TooSlow,
    /// The client went away, or sent what is not HTTP.
    Broken,
}

/// A body read, holding its room in the budget until it is dropped.
pub struct Body {
    pub bytes: Vec<u8>,
    bodies: Arc<Bodies>,
}

impl Drop for Body {
    fn drop(&mut self) {
        self.bodies.release(self.bytes.len());
    }
}

/// Reads a body of at most `max` bytes within [`BODY_TIME`], taking room
/// in `bodies` as its bytes arrive (never ahead, on a declared length).
pub async fn read(body: Incoming, max: usize, bodies: &Arc<Bodies>) -> Result<Body, BodyRefused> {
    let mut out = Body { bytes: Vec::new(), bodies: bodies.clone() };
    let mut body = body;
    let reading = async {
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|_| BodyRefused::Broken)?;
            let Ok(data) = frame.into_data() else { continue };
            if out.bytes.len() + data.len() > max {
                return Err(BodyRefused::TooLarge);
            }
            if !bodies.charge(out.bytes.len(), data.len()) {
                return Err(BodyRefused::Busy);
            }
            out.bytes.extend_from_slice(&data);
        }
        Ok(())
    };
    match tokio::time::timeout(BODY_TIME, reading).await {
        Ok(Ok(())) => Ok(out),
        Ok(Err(refused)) => Err(refused),
        Err(_) => Err(BodyRefused::TooSlow),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_connection_cap_leaves_room_for_the_runs() {
        assert_eq!(connection_cap(10_000, 1_048_576, 64), 10_000);
        assert_eq!(connection_cap(10_000, 1024, 64), 1024 - 128 - 8 * 64);
        assert_eq!(connection_cap(10_000, 100, 64), 16);
    }

    #[test]
    fn one_address_holds_at_most_its_share_and_places_come_back() {
        let door = Door::new(6, 2);
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let b: IpAddr = "2001:db8::1".parse().unwrap();
        let same_machine: IpAddr = "2001:db8::2".parse().unwrap();
        let (a1, _a2) = (door.admit(a).unwrap(), door.admit(a).unwrap());
        assert_eq!(door.admit(a).unwrap_err(), Refused::Address);
        // An IPv6 machine is known by its /64.
        let (_b1, _b2) = (door.admit(b).unwrap(), door.admit(same_machine).unwrap());
        assert_eq!(door.admit(b).unwrap_err(), Refused::Address);
        assert_eq!(Door::new(4, 0).per_address_max(), 2);
        drop(a1);
        assert!(door.admit(a).is_ok());
    }

    #[test]
    fn at_capacity_the_connection_idle_longest_gives_way_and_busy_ones_never_do() {
        let door = Door::new(2, 2);
        let (a, b, c): (IpAddr, IpAddr, IpAddr) =
            ("10.0.0.1".parse().unwrap(), "10.0.0.2".parse().unwrap(), "10.0.0.3".parse().unwrap());
        let (first, second) = (door.admit(a).unwrap(), door.admit(b).unwrap());
        // Idle since 10 and 20 ms: the first is idle longest.
        first.slot.idle_at(10);
        second.slot.idle_at(20);
        // Both idle: the older is asked to leave, and the new one comes in.
        let third = door.admit(c).unwrap();
        assert!(first.slot.leaving.load(Ordering::SeqCst) && !second.slot.leaving.load(Ordering::SeqCst));
        // The one leaving is not asked twice; the next idle one is.
        second.slot.busy();
        third.slot.busy();
        assert_eq!(door.admit(c).unwrap_err(), Refused::Full, "every other connection is mid-request");
        second.slot.idle_at(30);
        let fourth = door.admit(c).unwrap();
        assert!(second.slot.leaving.load(Ordering::SeqCst));
        drop((first, second));
        assert_eq!(door.held.lock().unwrap().count, 2);
        drop((third, fourth));
        assert_eq!(door.held.lock().unwrap().count, 0);
    }

    #[test]
    fn large_bodies_cannot_take_the_room_of_small_ones() {
        let bodies = Bodies::new(1024 * 1024, Gauge::default(), Gauge::default());
        // Sixteen large bodies fill the second tier.
        for _ in 0..16 {
            assert!(bodies.charge(0, 1024 * 1024));
        }
        assert!(!bodies.charge(SMALL, 1));
        // A small body still fits.
        assert!(bodies.charge(0, 4096));
        bodies.release(4096);
        for _ in 0..16 {
            bodies.release(1024 * 1024);
        }
        assert_eq!((bodies.small.load(Ordering::SeqCst), bodies.large.load(Ordering::SeqCst)), (0, 0));
    }
}
