//! The host layer: `serve`, `play` and the language server, over the
//! runner. Nothing in the library imports it.

pub mod converse;
pub mod lsp;
pub mod play;
pub mod serve;
