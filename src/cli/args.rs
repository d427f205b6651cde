//! Command-line types (clap). No logic here.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(name = "blkc", version, about = "Compile, check and run .blk chat-bot commands and their API request blocks")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Write a new bot's folder: the bot, its tests, samples, a README
    /// (`--template` minimal, moderation, tickets or economy)
    New(NewArgs),
    /// Check files for every mistake that can be seen before a request is sent
    Check(CheckArgs),
    /// Rewrite files in the one canonical layout, comments kept
    Fmt(FmtArgs),
    /// Run a command or event, sending its requests for real
    Run(RunArgs),
    /// Send one block's test request, show the response and every path into it
    Test(TestArgs),
    /// Compile a file to its plan, as versioned JSON (docs/plan.md)
    Build {
        file: PathBuf,
        /// Where to write the plan (default: standard output)
        #[arg(long, short = 'o')]
        output: Option<PathBuf>,
    },
    /// List, read, set and delete custom variables in a store
    Vars {
        /// The store: a file, or `postgres://…` (default: BLKC_STORE, else
        /// .blkc/store.sqlite3 in the current folder); before or after the
        /// action, like `--user`, `--server` and `--channel`
        #[arg(long, global = true)]
        store: Option<String>,
        #[command(flatten)]
        scope: ScopeArgs,
        #[command(subcommand)]
        action: VarsAction,
    },
    /// Serve the bot to chat users: interactions over the Gateway (just a
    /// bot token) or, signed, to an HTTP endpoint, and events (docs/serve.md)
    Serve(ServeArgs),
    /// Register the file's commands with the platform (one bulk overwrite)
    Deploy(DeployArgs),
    /// Print the permissions the bot needs for the file's actions, and the
    /// link a server's owner opens to add it with them
    Invite(InviteArgs),
    /// Play the bot in a browser, without the platform: a local page where
    /// its commands run through `serve`'s own pipeline (docs/play.md)
    Play(PlayArgs),
    /// Run the language server on standard input and output, for editors
    /// (docs/editor.md)
    Lsp,
    /// Print the documentation page of a diagnostic code, like `blkc explain B101`
    Explain {
        /// The code, like B101
        code: String,
    },
}

#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// The .blk files to check; `-` reads standard input
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// How to print the findings (docs/cli.md)
    #[arg(long, value_enum, default_value_t = CheckFormat::Text)]
    pub format: CheckFormat,
    /// When to use colour in text output
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    pub color: Color,
    /// Treat warnings as errors (exit code 1)
    #[arg(long)]
    pub deny_warnings: bool,
    /// Threads for parsing large files (default: the number of cores)
    #[arg(long, short = 'j')]
    pub jobs: Option<usize>,
    /// Make the fixes that are certain (a misspelled keyword, `:` for `=`)
    /// in the files, then report what is left; for standard input, print
    /// the fixed text on standard output
    #[arg(long)]
    pub fix: bool,
    /// The file standard input stands for: reports name it, and samples are
    /// read from its folder
    #[arg(long, value_name = "NAME")]
    pub stdin_filename: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct FmtArgs {
    /// The .blk files to format in place; `-` formats standard input to
    /// standard output
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Change nothing: print a unified diff of each file that is not
    /// formatted, and exit 1 if there is one
    #[arg(long)]
    pub check: bool,
    /// The file standard input stands for (reports name it)
    #[arg(long, value_name = "NAME")]
    pub stdin_filename: Option<PathBuf>,
    /// When to use colour in reports of syntax errors
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    pub color: Color,
}

/// The formats of `blkc check`'s findings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CheckFormat {
    /// Reports with the source, on standard error
    Text,
    /// One JSON document with every file's diagnostics
    Json,
    /// `file:line:col: severity[CODE]: message`, a line each
    Short,
    /// GitHub Actions annotations (`::error file=…::…`)
    Github,
    /// A SARIF 2.1.0 log, for code-scanning services
    Sarif,
}

/// Which scope of a `per user`, `per server` or `per channel` variable
/// `blkc vars` reads or writes (none: the global value).
#[derive(Debug, Clone, clap::Args)]
pub struct ScopeArgs {
    /// A user's value (with `--server`, theirs in that server)
    #[arg(long, value_name = "ID", global = true, conflicts_with = "channel")]
    pub user: Option<String>,
    /// A server's value (or, with `--user`, the user's in it)
    #[arg(long, value_name = "ID", global = true)]
    pub server: Option<String>,
    /// A channel's value
    #[arg(long, value_name = "ID", global = true, conflicts_with = "server")]
    pub channel: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum VarsAction {
    /// List every custom variable and its value
    List {
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// List the work waiting to run (`after … { … }`), soonest first: every
    /// piece, or those of `--user` (with `--server`) or `--server`
    Waiting {
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Print one variable's value
    Get { name: String },
    /// Set a variable (the value is text unless --json)
    Set {
        name: String,
        /// The value; `-` reads it from standard input (for values too long
        /// for a command line)
        value: String,
        /// Read VALUE as JSON
        #[arg(long)]
        json: bool,
    },
    /// Delete a variable
    Delete { name: String },
    /// Show who holds each of the Gateway's shards leased through a
    /// PostgreSQL store, and for how long
    Shards {
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Create the store's tables in an empty PostgreSQL database, or move
    /// an older store format forward (an SQLite store is created by its
    /// first save)
    Migrate,
}

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The .blk file
    pub file: PathBuf,
    /// The command to run (may be left out when the file has one command);
    /// a subcommand by its whole name, `--command "settings role add"`
    #[arg(long, conflicts_with_all = ["event", "component", "form", "autocomplete"])]
    pub command: Option<String>,
    /// The event to run
    #[arg(long, conflicts_with_all = ["component", "form", "autocomplete"])]
    pub event: Option<String>,
    /// A webhook event's request body, a JSON file (by default its `sample`)
    #[arg(long, value_name = "FILE", requires = "event")]
    pub body: Option<PathBuf>,
    /// A webhook event's request header, `--header X-GitHub-Event=push`
    /// (repeatable)
    #[arg(long = "header", value_name = "NAME=VALUE", requires = "event")]
    pub headers: Vec<String>,
    /// Run an option's autocomplete, by its command's whole name and the
    /// option's (`--autocomplete "weather city" --var typed_text=Par`)
    #[arg(long, value_name = "COMMAND OPTION", conflicts_with_all = ["component", "form"])]
    pub autocomplete: Option<String>,
    /// Run the handler a button or select menu names, as if clicked: its
    /// name, or a component's whole id (`blk2:vote:1a2b3c4d:yes`)
    #[arg(long, value_name = "HANDLER|ID", conflicts_with = "form")]
    pub component: Option<String>,
    /// The values chosen, comma-separated (`{values}`; `{value}` is the
    /// first, or the button's value from a whole id)
    #[arg(long, value_name = "A,B,…", requires = "component")]
    pub values: Option<String>,
    /// Run the handler a form names, as if sent
    #[arg(long, value_name = "HANDLER")]
    pub form: Option<String>,
    /// What was typed in a form's input, `--field topic=Bugs` (repeatable)
    #[arg(long = "field", value_name = "INPUT=VALUE", requires = "form")]
    pub fields: Vec<String>,
    /// A trigger variable or option, like `--var option_city=Paris` (repeatable)
    #[arg(long = "var", value_name = "NAME=VALUE")]
    pub vars: Vec<String>,
    /// A JSON object of trigger variables and options
    #[arg(long = "vars", value_name = "FILE.json")]
    pub vars_file: Option<PathBuf>,
    /// The member's roles, for the tree's `require roles` (their ids, comma-separated; none when left out)
    #[arg(long, value_name = "ID,…")]
    pub roles: Option<String>,
    /// The member's permissions, for the tree's `require permissions` (the platform's words, comma-separated; none when left out)
    #[arg(long, value_name = "WORD,…")]
    pub permissions: Option<String>,
    #[command(flatten)]
    pub net: NetArgs,
    /// The custom variable store: a file, or `postgres://…` (default:
    /// BLKC_STORE, else .blkc/store.sqlite3 beside the file)
    #[arg(long, value_name = "PATH|URL")]
    pub store: Option<String>,
    #[command(flatten)]
    pub output: Output,
    /// Show request and response headers
    #[arg(long, short = 'v')]
    pub verbose: bool,
    /// Print the requests that would be sent; send nothing, save nothing
    #[arg(long, conflicts_with = "offline")]
    pub dry_run: bool,
    /// Answer every block from its `sample` file instead of the network
    #[arg(long)]
    pub offline: bool,
    /// Fail the run when a path or variable has no value
    #[arg(long)]
    pub strict: bool,
    /// What a path or variable with no value renders as (default: its own
    /// text). An optional option left out is empty, as the platform gives
    /// it, unless this is given
    #[arg(long, value_enum)]
    pub missing: Option<MissingAs>,
    /// Fix the run's random draws (`{random 1 6}`, `{chance 25}`,
    /// `|pick`, `|shuffle`): the same seed draws the same values again
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Fix the time now (`{now}`, `|from_now`): RFC 3339, like
    /// `2026-12-24T18:00:00Z`
    #[arg(long, value_name = "TIME", value_parser = time_now)]
    pub now: Option<time::OffsetDateTime>,
}

/// `--now`: an RFC 3339 time, as `{now}` is written.
fn time_now(text: &str) -> Result<time::OffsetDateTime, String> {
    blkc::base::when::time_of(&serde_json::Value::String(text.to_string()))
        .map_err(|is| format!("{is} is not a time: write it like 2026-12-24T18:00:00Z"))
}

#[derive(Debug, clap::Args)]
pub struct PlayArgs {
    /// The .blk file
    pub file: PathBuf,
    /// The address of the page: `HOST:PORT`, or a port alone, on
    /// 127.0.0.1 (default: a free port on 127.0.0.1)
    #[arg(long, value_name = "ADDR", value_parser = blkc::host::serve::listen_address)]
    pub listen: Option<std::net::SocketAddr>,
    /// Let `--listen` be an address other than loopback: whoever reaches
    /// it runs the bot's commands with your secrets and reads every run's
    /// record
    #[arg(long)]
    pub expose: bool,
    /// Answer every request block from its sample: nothing is sent
    #[arg(long)]
    pub offline: bool,
    /// The custom variable store: a file, or `postgres://…` (default: a
    /// throwaway one, gone when `play` ends)
    #[arg(long, value_name = "PATH|URL")]
    pub store: Option<String>,
    #[command(flatten)]
    pub net: NetArgs,
}

/// Secrets, the bot token and the limits of requests: shared by `run` and `test`.
#[derive(Debug, clap::Args)]
pub struct NetArgs {
    /// A file of secrets, `NAME=value` per line (or a JSON object)
    #[arg(long, value_name = "FILE")]
    pub secrets: Option<PathBuf>,
    /// A file holding the bot token (or set BLKC_BOT_TOKEN)
    #[arg(long, value_name = "FILE")]
    pub bot_token_file: Option<PathBuf>,
    /// Seconds to wait for a connection
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    pub connect_timeout: f64,
    /// Seconds for a whole request, redirects and body included
    #[arg(long, value_name = "SECS", default_value_t = 30.0)]
    pub timeout: f64,
    /// The most bytes of a decoded response body
    #[arg(long, value_name = "BYTES", default_value_t = 10 * 1024 * 1024)]
    pub max_response_size: u64,
    /// The most redirects one request follows
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub max_redirects: u32,
    /// The most memory a run's responses may hold at once (B321)
    #[arg(long, value_name = "BYTES", default_value_t = blkc::run::eval::budget::DEFAULT_RUN_BUDGET)]
    pub max_run_memory: u64,
    /// The chat platform's API base URL, instead of the file's `platform`
    #[arg(long, value_name = "URL", value_parser = platform_url)]
    pub platform: Option<blkc::language::policy::Platform>,
    /// Let hosts that come from values or redirects be internal addresses
    /// (this machine, private networks), as `allow private_network` does for one block
    #[arg(long)]
    pub allow_private_network: bool,
}

#[derive(Debug, clap::Args)]
pub struct TestArgs {
    /// The .blk file whose block to send; or, with no BLOCK, a .blk or
    /// .blkt file, or a folder, whose conversation tests to run
    pub file: PathBuf,
    /// The api block to send (without it, the conversation tests run)
    pub block: Option<String>,
    /// Conversation tests: run only the tests whose name contains TEXT
    #[arg(long, value_name = "TEXT")]
    pub filter: Option<String>,
    /// Conversation tests: how many run at once (each on a server of its
    /// own); default: the machine's cores
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Conversation tests: write what the bot did into the tests (an
    /// expected value it did not meet; the expectations of a step with none)
    #[arg(long, conflicts_with = "block")]
    pub update: bool,
    /// Conversation tests: say which commands, handlers, events and
    /// branches of `if`s no test reached
    #[arg(long, conflicts_with = "block")]
    pub coverage: bool,
    /// The command the block is in, when its name alone is ambiguous
    #[arg(long, conflicts_with = "event")]
    pub command: Option<String>,
    /// The event the block is in, when its name alone is ambiguous
    #[arg(long)]
    pub event: Option<String>,
    /// Write the response as the block's sample: to its `sample` path, or to PATH
    #[arg(long, value_name = "PATH", num_args = 0..=1, default_missing_value = "")]
    pub save: Option<String>,
    /// With --save: save the response even when its status is not 2xx (a
    /// sample normally records a success)
    #[arg(long, requires = "save")]
    pub save_error_status: bool,
    #[command(flatten)]
    pub net: NetArgs,
    #[command(flatten)]
    pub output: TestOutput,
}

#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// The .blk file
    pub file: PathBuf,
    /// The address to listen on for interactions: `HOST:PORT`, or a port
    /// alone (`8080`, `:8080`) on 127.0.0.1; `0` as the port picks a free
    /// one. Default 127.0.0.1:8080 when the file has commands
    #[arg(long, value_name = "ADDR", value_parser = blkc::host::serve::listen_address)]
    pub listen: Option<std::net::SocketAddr>,
    /// Share the port with other `blkc serve` processes on this machine
    /// (SO_REUSEPORT: the kernel spreads new connections over them); on
    /// SIGTERM this one stops taking connections at once, so the others
    /// take them while it finishes its runs
    #[arg(long)]
    pub reuse_port: bool,
    /// Hold Gateway shard ID of COUNT, like `--shard 0/4` (for events)
    #[arg(long, value_name = "ID/COUNT", value_parser = shard, conflicts_with = "shards")]
    pub shard: Option<(u32, u32)>,
    /// Hold every shard the platform recommends (the default); with a
    /// PostgreSQL store, the shards are divided among the processes sharing
    /// it, by leases in the store
    #[arg(long, value_name = "auto", value_parser = ["auto"])]
    pub shards: Option<String>,
    /// The most shards this process holds of those leased through a
    /// PostgreSQL store
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..), conflicts_with = "shard")]
    pub max_shards: Option<u32>,
    #[command(flatten)]
    pub net: NetArgs,
    /// The custom variable store: a file, or `postgres://…` shared by
    /// several servers (default: BLKC_STORE, else .blkc/store.sqlite3
    /// beside the file)
    #[arg(long, value_name = "PATH|URL")]
    pub store: Option<String>,
    /// The most memory the responses of all runs at once may hold (B321)
    #[arg(long, value_name = "BYTES", default_value_t = 1024 * 1024 * 1024)]
    pub max_memory: u64,
    /// Seconds within which the first answer goes out: the run's first
    /// reply if it has one by then, else "thinking" and an edit later
    /// (the platform allows 3)
    #[arg(long, value_name = "SECS", default_value_t = 2.5)]
    pub answer_within: f64,
    /// The most runs at once: the pool keeps about one running thread a
    /// core, and adds threads (up to this) while runs wait in the queue and
    /// its threads wait on the network, as they do on slow APIs
    #[arg(long, value_name = "N", default_value_t = 64)]
    pub workers: usize,
    /// Runs waiting for a worker; past it, users are told the bot is busy
    #[arg(long, value_name = "N", default_value_t = 4096)]
    pub queue: usize,
    /// The largest interaction body read
    #[arg(long, value_name = "BYTES", default_value_t = 1024 * 1024)]
    pub max_body: usize,
    /// Connections open at once; more are closed at once
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    pub max_connections: usize,
    /// Connections one client address may hold (an IPv6 machine by its
    /// /64); 0: half of `--max-connections`. Behind a reverse proxy every
    /// connection comes from its address: give it the whole cap
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub max_connections_per_address: usize,
    /// Seconds to let runs in flight finish after SIGTERM or SIGINT
    #[arg(long, value_name = "SECS", default_value_t = 30.0)]
    pub drain_timeout: f64,
    /// Requests a second to the platform across routes: the bot's global
    /// limit, 50 unless the platform has granted it more; processes sharing
    /// a PostgreSQL store share it evenly
    #[arg(long, value_name = "N", default_value_t = 50)]
    pub global_rate_limit: usize,
    /// Reload the file when it changes (as SIGHUP does)
    #[arg(long)]
    pub watch: bool,
    /// How to write the log (standard error)
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub log_format: Format,
}

#[derive(Debug, clap::Args)]
pub struct DeployArgs {
    /// The .blk file
    pub file: PathBuf,
    /// Register in this server only (they appear at once; for testing)
    #[arg(long, value_name = "ID")]
    pub guild: Option<String>,
    /// Print the registration's JSON, and what it would change when the
    /// application ID and bot token are set; register nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Deploy even when it removes every registered command (a file with
    /// no commands)
    #[arg(long)]
    pub remove_all: bool,
    /// The application's ID (or set BLKC_APPLICATION_ID)
    #[arg(long, value_name = "ID")]
    pub application_id: Option<String>,
    /// A file holding the bot token (or set BLKC_BOT_TOKEN)
    #[arg(long, value_name = "FILE")]
    pub bot_token_file: Option<PathBuf>,
    /// The chat platform's API base URL, instead of the file's `platform`
    #[arg(long, value_name = "URL", value_parser = platform_url)]
    pub platform: Option<blkc::language::policy::Platform>,
    #[command(flatten)]
    pub output: Output,
}

#[derive(Debug, clap::Args)]
pub struct InviteArgs {
    /// The .blk file
    pub file: PathBuf,
    /// The application's ID (or set BLKC_APPLICATION_ID)
    #[arg(long, value_name = "ID")]
    pub application_id: Option<String>,
    #[command(flatten)]
    pub output: Output,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MissingAs {
    /// The variable's own text, as the builder shows it
    Text,
    /// Nothing
    Empty,
    /// The text `null`
    Null,
}

#[derive(Debug, clap::Args)]
pub struct Output {
    /// How to print results and diagnostics
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// When to use colour in text output
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    pub color: Color,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// `blkc test`'s output: a test request's (text or JSON), or a run of
/// conversation tests' (also TAP and JUnit XML, for CI systems).
#[derive(Debug, clap::Args)]
pub struct TestOutput {
    /// How to print results and diagnostics (`tap` and `junit` for
    /// conversation tests)
    #[arg(long, value_enum, default_value_t = TestFormat::Text)]
    pub format: TestFormat,
    /// When to use colour in text output
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    pub color: Color,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TestFormat {
    Text,
    Json,
    Tap,
    Junit,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Color {
    Auto,
    Always,
    Never,
}

/// `--shard ID/COUNT`: a shard below its count.
fn shard(text: &str) -> Result<(u32, u32), String> {
    let parsed =
        text.split_once('/').and_then(|(id, count)| Some((id.parse::<u32>().ok()?, count.parse::<u32>().ok()?)));
    match parsed {
        Some((id, count)) if id < count => Ok((id, count)),
        _ => Err(format!("`{text}` is not a shard: write ID/COUNT with ID below COUNT, like `0/4`")),
    }
}

/// `--platform`: an absolute http(s) URL with a host, or a usage error.
fn platform_url(text: &str) -> Result<blkc::language::policy::Platform, String> {
    blkc::language::policy::Platform::parse(text).ok_or_else(|| {
        format!("`{text}` is not an absolute http(s) URL with a host, like `https://discord.com/api/v10`")
    })
}

#[derive(Debug, clap::Args)]
pub struct NewArgs {
    /// The folder to write (it must not exist, or be empty); its name is
    /// the project's
    pub name: PathBuf,
    /// What kind of bot to start from
    #[arg(long, value_enum, default_value_t = Template::Minimal)]
    pub template: Template,
}

/// The kinds of bot `blkc new` starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Template {
    /// A greeting, a button that counts, and a request to an API
    Minimal,
    /// Warnings, timeouts, kicks and bans, guarded and logged
    Moderation,
    /// A support desk: private ticket channels opened from a panel
    Tickets,
    /// Coins per member, a daily bonus, gifts and a leaderboard
    Economy,
}

impl Template {
    pub fn name(self) -> &'static str {
        match self {
            Template::Minimal => "minimal",
            Template::Moderation => "moderation",
            Template::Tickets => "tickets",
            Template::Economy => "economy",
        }
    }
}
