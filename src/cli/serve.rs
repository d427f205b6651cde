//! `blkc serve FILE`: the bot, live for chat users (docs/serve.md).

use std::time::Duration;

use blkc::discord::signature::PublicKey;
use blkc::host::serve::{self, Config, LogFormat, Shards};
use blkc::run::eval::{self, Options};

use super::args::{Format, ServeArgs};
use super::inputs::{http_limits, secret_inputs};
use super::report::{self, Exit};
use blkc::base::diagnostics::Code;

fn seconds(value: f64, flag: &str) -> Result<Duration, String> {
    Duration::try_from_secs_f64(value).map_err(|_| format!("`{flag}` must be a number of seconds, not {value}"))
}

fn config(
    args: &ServeArgs,
    plan: &blkc::language::plan::Plan,
    store: blkc::run::store::Backend,
) -> Result<Config, String> {
    use blkc::language::plan::TreeKind;
    let commands = plan.trees.iter().any(|t| t.kind == TreeKind::Command);
    // Interactions are for commands; a file of events only needs no endpoint.
    let listen = args.listen.or_else(|| commands.then(|| ([127, 0, 0, 1], 8080).into()));
    // With the public key, commands come to the HTTP endpoint (the
    // application has an Interactions Endpoint URL); without it, over the
    // Gateway, which needs only the bot token.
    let public_key = match std::env::var("BLKC_DISCORD_PUBLIC_KEY") {
        Ok(key) => Some(PublicKey::from_hex(&key).map_err(|e| format!("BLKC_DISCORD_PUBLIC_KEY: {e}"))?),
        Err(_) => None,
    };
    let answer_within = seconds(args.answer_within, "--answer-within")?;
    if answer_within >= Duration::from_millis(2900) || answer_within.is_zero() {
        return Err(format!(
            "`--answer-within {}`: the platform waits 3 seconds for the first answer; give less than 2.9",
            args.answer_within
        ));
    }
    let inputs = secret_inputs(&args.net)?;
    if commands && public_key.is_none() && inputs.bot_token.is_none() {
        return Err("commands come over the Gateway, which needs the bot token: set BLKC_BOT_TOKEN or give \
             `--bot-token-file`; or, for an application with an Interactions Endpoint URL, set \
             BLKC_DISCORD_PUBLIC_KEY to its public key (the developer portal, General Information)"
            .into());
    }
    if plan.trees.iter().any(|t| t.timer.is_some()) && inputs.bot_token.is_none() {
        return Err("the file has timed events, whose replies are posted to their channel with the bot token: set \
             BLKC_BOT_TOKEN or give `--bot-token-file`"
            .into());
    }
    if args.max_shards.is_some() && store.leases().is_none() {
        return Err("`--max-shards` caps the shards leased through a PostgreSQL store (`--store postgres://…`); with \
             this store the process holds every shard, or those `--shard ID/COUNT` names"
            .into());
    }
    super::report::warn_unversioned(args.net.platform.as_ref());
    let options = Options {
        http: http_limits(&args.net)?,
        platform: args.net.platform.clone(),
        allow_private_network: args.net.allow_private_network,
        memory: eval::Memory { run: args.net.max_run_memory, shared: Some(eval::budget::Budget::new(args.max_memory)) },
        ..Options::default()
    };
    Ok(Config {
        file: args.file.clone(),
        listen,
        reuse_port: args.reuse_port,
        public_key,
        global_rate_limit: args.global_rate_limit,
        shards: match args.shard {
            Some((id, count)) => Shards::One { id, count },
            None => Shards::Auto,
        },
        max_shards: args.max_shards,
        inputs,
        options,
        store,
        answer_within,
        workers: args.workers,
        queue: args.queue,
        max_body: args.max_body,
        max_connections: args.max_connections,
        max_connections_per_address: args.max_connections_per_address,
        drain_timeout: seconds(args.drain_timeout, "--drain-timeout")?,
        watch: args.watch,
        log: match args.log_format {
            Format::Text => LogFormat::Text,
            Format::Json => LogFormat::Json,
        },
        loaded: None,
        on_ready: None,
        hooks: None,
        clock: test_clock(),
    })
}

pub fn serve(args: &ServeArgs) -> Exit {
    // A file with errors does not start: its diagnostics, as `check` shows them.
    let opts = report::render_options(super::args::Color::Auto);
    // The file is read once: what is checked here is what is served.
    let stamp = serve::stamp(&args.file);
    let (checked, plan) =
        match super::compile(&args.file, blkc::language::load::LoadOptions::default(), Format::Text, opts) {
            Ok(compiled) => compiled,
            Err(exit) => {
                if exit == Exit::Diagnostics {
                    eprintln!("error: `{}` has errors; the server did not start", args.file.display());
                }
                return exit;
            }
        };
    let location = blkc::run::store::Location::choose(args.store.as_deref(), serve::default_store(&args.file));
    let store = match blkc::run::store::Backend::open(&location) {
        Ok(store) => store,
        Err(e) => return report::coded_error(Code::StoreFailed, &e, Some(e.help())),
    };
    let mut config = match config(args, &plan, store) {
        Ok(c) => c,
        Err(e) => return report::usage(e),
    };
    // A secret a run would need and that has no value: no user meets it.
    if let Err(missing) = eval::inputs_ready(&plan, &config.inputs) {
        eprint!(
            "{}",
            blkc::base::diagnostics::render::render_reports(&checked.source, std::slice::from_ref(&*missing), opts)
        );
        eprintln!("error: `{}` needs what is named above; the server did not start", args.file.display());
        return Exit::Usage;
    }
    config.loaded = Some(serve::Loaded { checked, plan, stamp });
    match serve::serve(config) {
        Ok(()) => Exit::Success,
        Err(serve::Stop::Store(e)) => report::coded_error(Code::StoreFailed, &e, Some(e.help())),
        // The Gateway refused for good (a wrong token, a disallowed intent).
        Err(stop @ serve::Stop::Gateway(_)) => report::error(stop, Exit::RunFailure),
        Err(stop) => report::error(stop, Exit::Usage),
    }
}

/// The clock the server's time follows: the system's, unless
/// `BLKC_TEST_CLOCK=START_MS,ANCHOR_MS,SPEED` gives the tests' faster one
/// (read here, at the edge, and given to the server in its `Config`).
pub(crate) fn test_clock() -> blkc::host::serve::clock::Clock {
    use blkc::host::serve::clock::Clock;
    std::env::var("BLKC_TEST_CLOCK").ok().and_then(|text| Clock::parse(&text)).unwrap_or_else(Clock::system)
}
