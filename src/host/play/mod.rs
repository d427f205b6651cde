//! `blkc play`: the bot in a browser, without the platform. `play` is
//! `blkc serve` in this process, pointed at a stand-in of the platform that
//! `play` itself serves on loopback, and a page that talks to both:
//!
//! - what the page sends (a command, a click, a form, a keystroke) becomes
//!   the interaction the platform would send, signed with `play`'s own
//!   key and posted to serve's front door, whose answer the page shows;
//! - what serve sends the platform afterwards (an edit of a deferred
//!   answer, a follow-up, a channel's message) arrives at the stand-in's
//!   API, which records it for the page.
//!
//! So the page shows exactly what the platform would be sent, by the one
//! pipeline `serve` runs (docs/play.md). It binds loopback, and refuses a
//! request whose `Host` or `Origin` is not its own (no DNS rebinding, no
//! cross-site request); the bot token is a random one, good only here.

pub mod acted;
mod files;
pub mod gateway;
mod page;
mod stand_in;
mod state;
pub mod world;

use std::sync::Arc;
use std::time::Duration;

pub use state::{Call, Play, PlayError};

/// Serves the page and the stand-in on `listener` until the process ends.
pub async fn run(play: Arc<Play>, listener: tokio::net::TcpListener) {
    loop {
        let Ok((stream, _)) = listener.accept().await else { continue };
        let play = play.clone();
        tokio::spawn(async move {
            let io = hyper_util::rt::TokioIo::new(stream);
            let service = hyper::service::service_fn(move |req| {
                let play = play.clone();
                async move { Ok::<_, std::convert::Infallible>(page::route(&play, req).await) }
            });
            // A request's head within 10 s, as serve's front door asks: a
            // half-sent one does not hold its connection open.
            let _ = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(Duration::from_secs(10))
                .serve_connection(io, service)
                .await;
        });
    }
}
