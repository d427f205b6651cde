//! This process's share of the platform's global rate limit, with the
//! other processes of the bot that share its store.

use crate::base::stop::StopSignal;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use super::shared::{Shared, Stop};

/// How often a process says it is alive in a shared store.
const CHECK_IN_EVERY: Duration = Duration::from_millis(500);

/// This process's part in sharing the platform's global rate limit with
/// the other processes of the bot: they check in to the shared store, and
/// each takes an even share.
pub struct Share {
    me: String,
    stop: StopSignal,
    thread: std::thread::JoinHandle<()>,
    store: crate::run::store::Backend,
}

impl Share {
    /// Stops checking in, and leaves the others its share.
    pub fn stop(self) {
        self.stop.set();
        let _ = self.thread.join();
        let _ = self.store.check_out(&self.me);
    }
}

/// This process's name among those sharing the store, unique: its host,
/// its process id and when it started (one name for the process's
/// check-ins and its shards' leases).
pub fn me() -> &'static str {
    static ME: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    ME.get_or_init(|| {
        let mut host = [0u8; 256];
        // SAFETY: the buffer is as long as said; the name ends at its NUL.
        let named = unsafe { libc::gethostname(host.as_mut_ptr().cast(), host.len()) } == 0;
        let host = if named {
            String::from_utf8_lossy(host.split(|b| *b == 0).next().unwrap_or_default()).into_owned()
        } else {
            "host".to_string()
        };
        let nanos = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
        format!("{host}:{}:{nanos:x}", std::process::id())
    })
}

/// With a shared store: checks in before anything is sent (so the first
/// requests already keep to the share), then twice a second; the share
/// follows processes starting and stopping. A store that cannot be reached
/// leaves the last share in place.
pub fn share_global_limit(shared: &Arc<Shared>) -> Result<Option<Share>, Stop> {
    if !shared.bot.store.shared() {
        shared.metrics.global_limit.set(shared.bot.limiter.share(1) as i64);
        return Ok(None);
    }
    let me = me().to_string();
    let processes = shared.bot.store.check_in(&me).map_err(Stop::Store)?;
    let mut known = processes;
    // Said in the "serving" line.
    shared.metrics.global_limit.set(shared.bot.limiter.share(processes) as i64);
    let stop = StopSignal::new();
    let (s, halt, name) = (shared.clone(), stop.clone(), me.clone());
    let thread = std::thread::Builder::new()
        .name("blkc-share".into())
        .spawn(move || {
            let mut failing = false;
            while !halt.wait(CHECK_IN_EVERY) {
                // Each call has the store's deadline: a lost network fails
                // it in time, and the check-ins are what see it come back.
                match s.bot.store.check_in(&name) {
                    Ok(n) => {
                        if failing {
                            tracing::info!("the store answers again");
                        }
                        failing = false;
                        if n != known {
                            known = n;
                            note_share(&s, n);
                        }
                    }
                    Err(e) if !failing => {
                        failing = true;
                        tracing::error!(
                            error = %e,
                            "the store does not answer: runs that read or save fail, /healthz answers 503; \
                             keeping the share of the global rate limit"
                        );
                    }
                    Err(_) => {}
                }
            }
        })
        .map_err(|error| Stop::Start { what: "the check-ins' thread", error })?;
    Ok(Some(Share { me, stop, thread, store: shared.bot.store.clone() }))
}

fn note_share(shared: &Shared, processes: usize) {
    let share = shared.bot.limiter.share(processes);
    shared.metrics.global_limit.set(share as i64);
    tracing::info!(processes, per_second = share, "sharing the platform's global rate limit");
}
