//! The platform layer: the chat platform (Discord), below the language,
//! the runner and the host. Everything blkc knows of the platform is here:
//! its vocabulary, its limits, and its wire format, typed.
//!
//! - [`actions`]: the actions a tree can take: their words, routes,
//!   permissions and limits.
//! - [`options`]: option types and their numbers, the API's default URL.
//! - [`limits`]: what a command, a message, an embed, components and a
//!   form may hold, and the row layout of components.
//! - [`custom_id`]: the id blkc gives a component or a form.
//! - [`outgoing`]: a message as blkc sends it, in its own terms, and how
//!   it is cut and split to the limits.
//! - [`model`]: what the platform sends (interactions, Gateway frames and
//!   dispatches, its answers), read into structs of blkc's own that take
//!   only the fields blkc uses and treat a field of another type as absent.
//! - [`message`]: what blkc sends, built from the neutral
//!   [`crate::discord::outgoing::Message`] into `twilight-model`'s types.
//! - [`registration`]: the commands' registration payload's types (a file's
//!   payload is built by `language::registration`).
//! - [`events`]: the event kinds, their dispatches, intents and variables;
//!   [`intents`]: what they ask of the Gateway.
//! - [`signature`], [`rest`] (the API client) with [`ratelimit`], and
//!   [`gateway`].
//!
//! Nothing here imports the language, the checker, the runner or the
//! server (`tests/layers.rs` holds it to that). Why inbound payloads are blkc's own structs and outbound ones
//! `twilight-model`'s: docs/architecture.md, "The platform boundary".

pub mod actions;
pub mod custom_id;
pub(crate) mod emoji;
pub mod events;
pub(crate) mod gateway;
pub mod intents;
pub mod limits;
pub(crate) mod message;
pub(crate) mod model;
pub(crate) mod names;
pub mod options;
pub mod outgoing;
pub mod ratelimit;
pub mod registration;
pub mod rest;
pub mod signature;

/// `{user_mention}`: the platform's mention of the user whose ID is `user_id`.
/// Every place that provides `user_id` derives it here.
pub fn user_mention(user_id: &str) -> String {
    format!("<@{user_id}>")
}

/// Whether `id` is a snowflake, the only form of id the platform makes:
/// decimal digits, at most 20 (a 64-bit number). Every id the platform
/// sends is checked with this before it goes into a path with the bot
/// token: an id is untrusted, and `645/../../guilds/77/bans/1?x=` must
/// never become a route.
pub fn is_snowflake(id: &str) -> bool {
    (1..=20).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_digit())
}

/// Whether `token` can stand in a webhook path as an interaction token:
/// the platform's are URL-safe base64 and dots, well under 500 characters.
pub fn is_interaction_token(token: &str) -> bool {
    (1..=500).contains(&token.len()) && token.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
}
