//! `blkc serve FILE`: the bot, live for chat users (docs/serve.md).

use std::time::Duration;

use blkc::eval::{self, Options};
use blkc::serve::{self, signature::PublicKey, Config, LogFormat};

use super::args::{Format, ServeArgs};
use super::inputs::{http_limits, secret_inputs};
use super::report::{self, Exit};

fn seconds(value: f64, flag: &str) -> Result<Duration, String> {
    Duration::try_from_secs_f64(value).map_err(|_| format!("`{flag}` must be a number of seconds, not {value}"))
}

fn config(args: &ServeArgs) -> Result<Config, String> {
    let key = std::env::var("BLKC_DISCORD_PUBLIC_KEY").map_err(|_| {
        "set BLKC_DISCORD_PUBLIC_KEY to the application's public key (the developer portal, General Information)"
            .to_string()
    })?;
    let public_key = PublicKey::from_hex(&key).map_err(|e| format!("BLKC_DISCORD_PUBLIC_KEY: {e}"))?;
    let answer_within = seconds(args.answer_within, "--answer-within")?;
    if answer_within >= Duration::from_millis(2900) || answer_within.is_zero() {
        return Err(format!(
            "`--answer-within {}`: the platform waits 3 seconds for the first answer; give less than 2.9",
            args.answer_within
        ));
    }
    let inputs = secret_inputs(&args.net)?;
    let options = Options {
        http: http_limits(&args.net)?,
        platform: args.net.platform.clone(),
        allow_private_network: args.net.allow_private_network,
        memory: eval::Memory { run: args.net.max_run_memory, shared: Some(eval::budget::Budget::new(args.max_memory)) },
        ..Options::default()
    };
    Ok(Config {
        file: args.file.clone(),
        listen: args.listen,
        public_key,
        inputs,
        options,
        store: args.store.clone().unwrap_or_else(|| serve::default_store(&args.file)),
        answer_within,
        workers: args.workers,
        queue: args.queue,
        max_body: args.max_body,
        max_connections: args.max_connections,
        drain_timeout: seconds(args.drain_timeout, "--drain-timeout")?,
        watch: args.watch,
        log: match args.log_format {
            Format::Text => LogFormat::Text,
            Format::Json => LogFormat::Json,
        },
        on_ready: None,
    })
}

pub fn serve(args: &ServeArgs) -> Exit {
    // A file with errors does not start: its diagnostics, as `check` shows them.
    let opts = report::render_options(super::args::Color::Auto);
    if let Err(exit) = super::compile(&args.file, blkc::LoadOptions::default(), Format::Text, opts) {
        if exit == Exit::Diagnostics {
            eprintln!("error: `{}` has errors; the server did not start", args.file.display());
        }
        return exit;
    }
    let config = match config(args) {
        Ok(c) => c,
        Err(e) => return report::usage(e),
    };
    match serve::serve(config) {
        Ok(()) => Exit::Success,
        Err(e) => report::error(e, Exit::Usage),
    }
}
