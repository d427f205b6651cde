//! blkc: a compiler, checker, runner and host for `.blk` files.
//!
//! The library is five layers, each a folder, lowest first; a layer
//! imports only from itself and the layers below it (`tests/layers.rs`
//! holds the code to that, and `docs/architecture.md` draws it):
//!
//! - [`base`]: source text, diagnostics, URLs, JSON data and paths into it;
//! - [`discord`]: the platform: its wire types, limits, REST and Gateway;
//! - [`language`]: syntax, tree, checker, formatter and the plan;
//! - [`run`]: the evaluator, the variable store and guards;
//! - [`host`]: `serve`, `play` and the language server.
//!
//! The command line (`src/cli/`) is the binary, over all of them.

pub mod base;
pub mod discord;
pub mod host;
pub mod language;
pub mod run;
