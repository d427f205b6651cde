//! `blkc serve`: the bot, live. The platform's interactions arrive over
//! HTTP, signed; each command runs its tree on a bounded pool of threads,
//! and its replies go back as the answer, an edit of a deferred answer, or
//! follow-ups (docs/serve.md).
//!
//! The front door is hyper's HTTP/1.1 on a small tokio runtime, so a slow
//! or idle client costs a task, not a thread; the runs are the synchronous
//! runner of `blkc run`, each on a pool thread with its own responses.

mod claim;
pub mod clock;
pub(crate) mod door;
mod ending;
pub(crate) mod events;
mod front;
pub(crate) mod gate;
mod gateway_bot;
mod keystrokes;
mod later;
mod leases;
mod loaded;
pub(crate) mod log;
pub(crate) mod metrics;
mod pipeline;
mod pool;
mod replay;
mod server;
mod shards;
mod share;
mod shared;
mod timers;
pub(crate) mod trigger;
pub(crate) mod webhooks;

pub use loaded::{default_store, listen_address, load, ready, stamp, Loaded, Problem, Refused};
pub use log::LogFormat;
pub use server::serve;
pub use shared::{Config, Hooks, Shards, Stop};
