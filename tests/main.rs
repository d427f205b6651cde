//! Every integration test, in one binary: linking one test executable
//! instead of one per file keeps `cargo test` quick. Each module is a file
//! beside this one; `support/` holds the loopback server and the printer.

mod support {
    pub mod cli;
    pub mod gateway;
    pub mod node;
    pub mod platform;
    pub mod postgres;
    pub mod print;
    pub mod proxy;
    pub mod server;
    pub mod shapes;
    pub mod sharded;
    pub mod wait;
}

mod actions;
mod agreement;
mod attacks;
mod bodies;
mod build;
mod capacity;
mod check_fixtures;
mod cli;
mod commands;
mod components;
mod conversations;
mod docs;
mod editor;
mod first_hour;
mod fmt;
mod formats;
mod fuzz;
mod gateway;
mod hardening;
mod includes;
mod later;
mod layers;
mod loops;
mod lsp;
mod mistakes;
mod new;
mod parallel;
mod play;
mod properties;
mod registration_limits;
mod round5;
mod run;
mod run_fixtures;
mod secrets;
mod serve;
mod shards;
mod steering;
mod store;
mod store_faults;
mod surface;
mod test_cmd;
mod timers;
mod untrusted;
mod urls;
mod webhooks;
mod wire;

// The fuzz target measures memory with a counting allocator.
#[global_allocator]
static ALLOCATOR: fuzz::Counting = fuzz::Counting;
