//! What a run is given (its options, inputs and memory) and what it tells
//! as it goes (its events) and when it ends (its outcome).

use std::collections::HashMap;

use serde::Serialize;
use serde_json::Value as Json;

use super::{budget, http};
use crate::base::diagnostics::{Diagnostic, Severity};
use crate::base::source::Span;
use crate::discord::ratelimit::Limiter;

/// What a path or variable with no value renders as (docs/run.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MissingAs {
    /// The variable's own text, like `{api_x[response.a]}`, as the builder does.
    #[default]
    Text,
    Empty,
    Null,
}

#[derive(Debug, Clone, Default)]
pub struct Options {
    pub http: http::Limits,
    /// Unresolved paths and variables fail the run instead of warning.
    pub strict: bool,
    pub missing_as: MissingAs,
    /// Print the requests, send nothing.
    pub dry_run: bool,
    /// Answer every block from its sample file.
    pub offline: bool,
    /// The file's samples, which `offline` answers from: the model's (each
    /// read once, relative to the file's folder).
    pub samples: std::sync::Arc<crate::language::model::Samples>,
    /// Replaces the file's `platform` (where `{bot_token}` may go); parsed
    /// once, by the command line.
    pub platform: Option<crate::language::policy::Platform>,
    /// Include request and response headers in request events.
    pub verbose: bool,
    /// Say each variable read (an `Event::Read`): `run`'s `-v` and JSON
    /// output, `play`'s inspector. Off, a read clones no value.
    pub reads: bool,
    /// Include up to this many bytes of each response's body in its
    /// request event (`blkc play`'s inspector); 0, none.
    pub preview: usize,
    /// A test request: only `{bot_token}` is substituted (spec 4.2).
    pub test_request: bool,
    /// Hosts from values and redirects may be internal addresses
    /// (`--allow-private-network`).
    pub allow_private_network: bool,
    /// What the run's responses may hold in memory.
    pub memory: Memory,
    /// One HTTP client for every run of a process (`blkc serve`), so runs
    /// reuse connections; a run makes its own when there is none.
    pub client: Option<std::sync::Arc<http::Client>>,
    /// Waits for the platform's rate limits before a request that carries
    /// the bot token, and learns them from its answer (`blkc serve`).
    pub limiter: Option<std::sync::Arc<dyn Limiter>>,
    /// When the run's requests must be answered by (an autocomplete's: the
    /// platform's deadline); `None`, each request's own time-out.
    pub deadline: Option<std::time::Instant>,
    /// The answers a conversation test gives its request blocks, which an
    /// offline run takes before a block's sample (docs/test.md).
    pub answers: Option<std::sync::Arc<Answers>>,
    /// Say which branch of each `if` a run took (an `Event::Branch`, once
    /// a run each): `blkc test --coverage`.
    pub branches: bool,
    /// The platform is a stand-in on this machine (`blkc play`, the
    /// conversation tests): actions reach it even in an offline run.
    pub stand_in: bool,
    /// Fixes the run's random draws (`blkc run --seed`, a conversation
    /// test's); `None`, the system seeds them.
    pub seed: Option<u64>,
    /// With a seed, the runs so far: each run takes the next and draws
    /// from `seed + n` (a conversation test's runs, each its own draws,
    /// the same every time the test runs).
    pub draws: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
    /// Fixes the time now (`blkc run --now`); `None`, the clock's.
    pub now: Option<time::OffsetDateTime>,
}

/// The answers a conversation test gives request blocks, by block name;
/// changed between its steps, read by each offline run.
#[derive(Debug, Default)]
pub struct Answers(std::sync::RwLock<HashMap<String, Answer>>);

impl Answers {
    /// The answer given block `block`, if any.
    pub fn of(&self, block: &str) -> Option<Answer> {
        self.0.read().unwrap_or_else(|e| e.into_inner()).get(block).cloned()
    }

    pub fn set(&self, block: &str, answer: Answer) {
        self.0.write().unwrap_or_else(|e| e.into_inner()).insert(block.to_string(), answer);
    }

    /// Every block answered from its sample again (a new test).
    pub fn clear(&self) {
        self.0.write().unwrap_or_else(|e| e.into_inner()).clear();
    }
}

/// An answer a test gives a request block in place of its sample: a
/// response, or a failure to reach the server.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    Response {
        status: u16,
        headers: Vec<(String, String)>,
        body: Option<Json>,
    },
    /// No answer in time: the block fails as a time-out does (B303).
    Timeout,
    /// The connection refused: the block fails as it does (B301).
    Refused,
}

/// The memory budgets of a run (docs/run.md).
#[derive(Debug, Clone)]
pub struct Memory {
    /// Bytes the responses of one run may hold (`--max-run-memory`).
    pub run: u64,
    /// A budget shared by every run of the process, charged too.
    pub shared: Option<std::sync::Arc<budget::Budget>>,
}

impl Default for Memory {
    fn default() -> Memory {
        Memory { run: budget::DEFAULT_RUN_BUDGET, shared: None }
    }
}

/// Where the file a user gave as attachment option `option` is described
/// among a run's `vars` (as JSON: the platform's `url`, `filename`,
/// `content_type`, `size`), and the files of a form's upload
/// (`field_NAME`: a list of them): a name no template can read.
pub fn attachment_key(option: &str) -> String {
    format!("\u{0}attachment.{option}")
}

/// What a run is given from outside.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    /// Trigger variables and options (`option_city`), by name.
    pub vars: HashMap<String, String>,
    /// The names of `vars` whose values are objects or arrays (as JSON text).
    pub structured: std::collections::HashSet<String>,
    /// Secret slots, by name.
    pub secrets: HashMap<String, String>,
    pub bot_token: Option<String>,
    /// The users a message the run sends may ping (the command's own:
    /// its user and the users its options name), and no one else.
    pub mentions: Vec<String>,
    /// A webhook event's request, read as the response of its block
    /// `webhook` (`{api_webhook[response.…]}`, `headers.…`).
    pub received: Option<std::sync::Arc<Received>>,
}

/// A request a webhook event was triggered by: its body as JSON, and its
/// headers (names lower-case), all of it the sender's: untrusted.
#[derive(Debug, Clone)]
pub struct Received {
    pub body: crate::base::data::Data,
    pub headers: Vec<(String, String)>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "event", rename_all = "lowercase")]
pub enum Event {
    Request(RequestEvent),
    Reply {
        text: String,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        ephemeral: bool,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        embeds: Vec<crate::discord::outgoing::Embed>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        components: Vec<crate::discord::outgoing::Component>,
        /// A layout message's parts (its texts and components among them).
        #[serde(skip_serializing_if = "Vec::is_empty")]
        layout: Vec<crate::discord::outgoing::Block>,
        #[serde(skip_serializing_if = "Option::is_none")]
        poll: Option<crate::discord::outgoing::Poll>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        files: Vec<crate::discord::outgoing::File>,
        /// An edit of the message the handler's component is on.
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        update: bool,
    },
    /// A form shown as the answer.
    Form(crate::discord::outgoing::Form),
    /// A choice an autocomplete tree offers: the name shown, the value
    /// given (read as a number for a number option).
    Choice {
        name: String,
        value: String,
    },
    /// A custom variable read from the store (once a run, unless a save
    /// reads it again): its scope, the key its value is kept under
    /// (`points:user:777:1001`), and its value, or its default (`stored`
    /// false) when none is saved.
    Read {
        name: String,
        scope: &'static str,
        key: String,
        value: Json,
        stored: bool,
    },
    Save {
        name: String,
        scope: &'static str,
        key: String,
        value: Json,
    },
    /// The `if` at `span` took its branch `arm` (its `else`, written or
    /// not, is the last: `arm` = the number of conditions).
    Branch {
        span: Span,
        arm: usize,
    },
    Warning(DiagnosticEvent),
    /// An action done (or, offline and in a dry run, not sent): what it
    /// did in words, after the request events of its calls.
    Action(ActionEvent),
    /// Work kept in the store to run later (`after "10m" { … }`): the tree
    /// that will run, when (RFC 3339), its key and note, and whose it is;
    /// an `await`'s, the tree its answer runs.
    Later {
        tree: String,
        due: String,
        key: String,
        note: String,
        owner: String,
        answer: Option<String>,
    },
    /// `cancel "KEY"`: how many pieces of waiting work went.
    Cancel {
        key: String,
        removed: u64,
    },
}

/// An action, as `blkc run` prints it and `play` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct ActionEvent {
    /// As written: `give role`.
    pub action: &'static str,
    /// Its values as filled (redacted), each with its word (`""`: what it
    /// acts on), in the order read.
    pub values: Vec<(&'static str, String)>,
    /// The platform's answer's status; none when nothing was sent.
    pub status: Option<u16>,
    /// The id of what it made (a message, a channel, a thread).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub made: Option<String>,
    /// Sent later, by the process's queue (`delete message … after`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub later: bool,
    pub offline: bool,
    pub dry_run: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct RequestEvent {
    pub block: String,
    pub method: &'static str,
    pub url: String,
    /// `None` when nothing was sent (`--dry-run`).
    pub status: Option<u16>,
    pub duration_ms: Option<f64>,
    pub size: Option<usize>,
    pub redirects: u32,
    /// Answered from the store (`cache`), not sent.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub cached: bool,
    /// How many times it was sent again (`retry`).
    #[serde(skip_serializing_if = "is_zero")]
    pub retries: u32,
    /// Answered from the block's sample (`--offline`).
    pub offline: bool,
    pub dry_run: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_headers: Option<Vec<(String, String)>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_body: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_headers: Option<Vec<(String, String)>>,
    /// The start of the response's body, redacted (`Options::preview`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_body: Option<String>,
    /// A call of an action (`kick`, `send`), not a block's request: offline,
    /// answered as the platform would, not from a sample.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action: Option<&'static str>,
    #[serde(skip)]
    pub span: Span,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// A diagnostic, as data (already redacted).
#[derive(Debug, Clone, Serialize)]
pub struct DiagnosticEvent {
    #[serde(skip)]
    pub diagnostic: Diagnostic,
    pub code: &'static str,
    pub severity: Severity,
    pub message: String,
    pub help: Option<String>,
    pub span: Span,
}

impl DiagnosticEvent {
    pub fn new(diagnostic: Diagnostic) -> DiagnosticEvent {
        DiagnosticEvent {
            code: diagnostic.code.as_str(),
            severity: diagnostic.severity,
            message: diagnostic.message.clone(),
            help: diagnostic.help.clone(),
            span: diagnostic.primary_span().unwrap_or_default(),
            diagnostic,
        }
    }
}

/// How a run ended: `Ok` when every node ran, or the failure that stopped it.
pub type Outcome = Result<(), Box<Diagnostic>>;
