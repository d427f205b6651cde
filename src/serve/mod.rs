//! `blkc serve`: the bot, live. The platform's interactions arrive over
//! HTTP, signed; each command runs its tree on a bounded pool of threads,
//! and its replies go back as the answer, an edit of a deferred answer, or
//! follow-ups (docs/serve.md).
//!
//! The front door is hyper's HTTP/1.1 on a small tokio runtime, so a slow
//! or idle client costs a task, not a thread; the runs are the synchronous
//! runner of `blkc run`, each on a pool thread with its own responses.

pub mod door;
pub mod events;
mod front;
pub mod log;
pub mod metrics;
mod pipeline;
mod server;
mod shards;
mod share;
pub mod trigger;

pub use log::LogFormat;
pub use server::{serve, Config, Shards, Stop};

use std::path::{Path, PathBuf};

use crate::diagnostics::{render_terminal, RenderOptions};
use crate::plan::Plan;
use crate::{Checked, LoadOptions};

/// A file loaded for serving: checked clean and lowered to its plan.
#[derive(Debug)]
pub struct Loaded {
    pub checked: Checked,
    pub plan: Plan,
    /// The file's modification time and size when read (for `--watch`).
    pub stamp: Option<(std::time::SystemTime, u64)>,
}

/// Reads, checks and lowers `path`; the error is the diagnostics, rendered
/// without colour for the log.
pub fn load(path: &Path) -> Result<Loaded, String> {
    let stamp = stamp(path);
    let checked = crate::load(path, LoadOptions::default()).map_err(|e| e.to_string())?;
    let opts = RenderOptions { color: false, width: 100 };
    if checked.has_errors() {
        return Err(render_terminal(&checked.source, &checked.diagnostics, opts));
    }
    let plan = crate::plan::lower(&checked).map_err(|d| render_terminal(&checked.source, &[*d], opts))?;
    Ok(Loaded { checked, plan, stamp })
}

/// `loaded`, when every secret and the bot token its runs may send has a
/// value in `inputs`; else what is missing, rendered.
pub fn ready(loaded: Loaded, inputs: &crate::eval::Inputs) -> Result<Loaded, String> {
    match crate::eval::inputs_ready(&loaded.plan, inputs) {
        Ok(()) => Ok(loaded),
        Err(missing) => {
            Err(render_terminal(&loaded.checked.source, &[*missing], RenderOptions { color: false, width: 100 }))
        }
    }
}

/// What `--watch` compares: the file's modification time and size.
pub fn stamp(path: &Path) -> Option<(std::time::SystemTime, u64)> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}

/// The store beside the file, wherever blkc is run from (as for `run`).
pub fn default_store(file: &Path) -> PathBuf {
    file.parent().unwrap_or(Path::new("")).join(crate::store::DEFAULT_PATH)
}
