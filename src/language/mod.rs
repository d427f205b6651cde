//! The language layer: the `.blk` syntax, its tree, the checker, the
//! formatter and the plan a checked file lowers to. It imports the base
//! and the platform layers only.

pub mod ast;
pub(crate) mod check;
pub mod format;
pub mod helpers;
pub mod load;
pub(crate) mod message;
pub mod model;
pub mod plan;
pub mod policy;
pub mod registration;
pub mod schedule;
pub mod syntax;
pub mod vocab;
pub mod webhook;
