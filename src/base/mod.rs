//! The base layer: source text, spans and diagnostics, URLs, JSON data
//! and paths into it. It imports nothing of blkc.

pub mod data;
pub mod diagnostics;
pub mod display;
pub mod media;
pub mod multipart;
pub mod numbers;
pub mod path;
pub mod source;
pub(crate) mod stop;
pub mod urls;
pub(crate) mod values;
pub(crate) mod waiting;
pub mod webhook;
pub mod when;
pub mod world;
