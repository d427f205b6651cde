//! Platform calls that wait (`delete message … after "30s"`): a run hands
//! its call over and goes on, and one thread of the process sends each
//! when it is due, in order, through the same rate limiter. At most
//! [`MAX_WAITING`] wait at once, so no number of runs can make the queue
//! grow without bound; a run whose call does not fit is told (B334).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::http;
use super::request::Built;
use crate::discord::ratelimit::Limiter;

/// How many calls may wait at once in a process.
pub const MAX_WAITING: usize = 10_000;

/// A call waiting for its time.
struct Waiting {
    due: Instant,
    order: u64,
    built: Built,
    client: Option<Arc<http::Client>>,
    limits: http::Limits,
    limiter: Option<Arc<dyn Limiter>>,
}

impl PartialEq for Waiting {
    fn eq(&self, other: &Self) -> bool {
        (self.due, self.order) == (other.due, other.order)
    }
}
impl Eq for Waiting {}
impl PartialOrd for Waiting {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Waiting {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.due, self.order).cmp(&(other.due, other.order))
    }
}

#[derive(Default)]
struct Queue {
    heap: Mutex<(BinaryHeap<Reverse<Waiting>>, u64)>,
    changed: Condvar,
}

static QUEUE: OnceLock<Arc<Queue>> = OnceLock::new();

/// The queue is full: the call was not taken.
#[derive(Debug)]
pub struct Full;

/// Hands `built` over, to be sent `after` from now with `client` (or one
/// of the queue's own) and `limiter`.
pub fn send_after(
    after: Duration,
    built: Built,
    client: Option<Arc<http::Client>>,
    limits: http::Limits,
    limiter: Option<Arc<dyn Limiter>>,
) -> Result<(), Full> {
    let queue = QUEUE.get_or_init(start).clone();
    let mut guard = queue.heap.lock().unwrap_or_else(|e| e.into_inner());
    if guard.0.len() >= MAX_WAITING {
        return Err(Full);
    }
    guard.1 += 1;
    let order = guard.1;
    guard.0.push(Reverse(Waiting { due: Instant::now() + after, order, built, client, limits, limiter }));
    drop(guard);
    queue.changed.notify_one();
    Ok(())
}

/// The queue, and its thread.
fn start() -> Arc<Queue> {
    let queue = Arc::new(Queue::default());
    let worker = queue.clone();
    let spawned = std::thread::Builder::new().name("blkc-later".to_string()).spawn(move || run(&worker));
    if let Err(e) = spawned {
        tracing::error!("the thread for calls that wait could not start: {e}");
    }
    queue
}

fn run(queue: &Queue) {
    let mut own: Option<http::Client> = None;
    loop {
        let next = {
            let mut guard = queue.heap.lock().unwrap_or_else(|e| e.into_inner());
            loop {
                let now = Instant::now();
                match guard.0.peek() {
                    Some(Reverse(w)) if w.due <= now => break guard.0.pop().map(|Reverse(w)| w),
                    Some(Reverse(w)) => {
                        let wait = w.due - now;
                        guard = queue.changed.wait_timeout(guard, wait).unwrap_or_else(|e| e.into_inner()).0;
                    }
                    None => guard = queue.changed.wait(guard).unwrap_or_else(|e| e.into_inner()),
                }
            }
        };
        let Some(w) = next else { continue };
        send(w, &mut own);
    }
}

fn send(w: Waiting, own: &mut Option<http::Client>) {
    use crate::discord::ratelimit::{Heard, Unsent};
    let route = format!("{} {}", w.built.method.as_str(), w.built.url.path());
    let deadline = Instant::now() + w.limits.timeout;
    let attempt = || match &w.client {
        Some(shared) => shared.send(w.built.clone()),
        None => own.get_or_insert_with(|| http::Client::new(w.limits)).send(w.built.clone()),
    };
    fn heard(i: &http::Incoming) -> Heard<'_> {
        Heard { status: i.status, headers: &i.headers, body: &i.body }
    }
    let url = w.built.url.clone();
    match crate::discord::ratelimit::send(
        w.limiter.as_deref(),
        (w.built.method.as_str(), &url),
        deadline,
        attempt,
        heard,
    ) {
        Ok(i) if (200..300).contains(&i.status) => tracing::debug!(route, "a call that waited was sent"),
        Ok(i) => tracing::warn!(route, status = i.status, "the platform refused a call that waited"),
        Err(Unsent::Wait(why)) => tracing::warn!(route, "a call that waited was not sent: {why}"),
        Err(Unsent::Failed(f)) => tracing::warn!(route, "a call that waited failed: {f:?}"),
    }
}
