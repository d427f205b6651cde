//! `blkc play FILE`: the bot in a browser, without the platform
//! (docs/play.md). `serve` runs in this process, pointed at `play`'s own
//! stand-in of the platform; `play` serves the page.

use std::sync::Arc;
use std::time::Duration;

use blkc::host::play::Play;
use blkc::host::serve::{self, Config, LogFormat, Shards};

use super::args::{Format, PlayArgs};
use super::inputs::{http_limits, secret_inputs};
use super::report::{self, Exit};
use blkc::base::diagnostics::Code;

/// How much of each response the inspector shows.
const PREVIEW: usize = 16 * 1024;

pub fn play(args: &PlayArgs) -> Exit {
    let opts = report::render_options(super::args::Color::Auto);
    let (checked, plan) =
        match super::compile(&args.file, blkc::language::load::LoadOptions::default(), Format::Text, opts) {
            Ok(compiled) => compiled,
            Err(exit) => return exit,
        };
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(r) => r,
        Err(e) => return report::usage(format!("cannot start: {e}")),
    };
    let (listener, address) = match listen(args, &runtime) {
        Ok(l) => l,
        Err(why) => return report::usage(why),
    };
    let play = match Play::new(address, args.file.clone()) {
        Ok(p) => Arc::new(p),
        Err(e) => return report::usage(e),
    };
    let _ = play.file(&args.file);
    match blkc::host::play::gateway::start(play.clone()) {
        Ok(url) => *play.gateway.lock().unwrap_or_else(|e| e.into_inner()) = Some(url),
        Err(e) => return report::usage(e),
    }
    // A throwaway store unless one is named: what a play saves is gone
    // with it.
    let scratch = tempfile::tempdir();
    let store = match open_store(args, &scratch) {
        Ok(store) => store,
        Err(exit) => return exit,
    };
    let config = match config(args, &play, store) {
        Ok(c) => c,
        Err(e) => return report::usage(e),
    };
    let stamp = serve::stamp(&args.file);
    let mut config = config;
    play.webhook_secrets(&plan, &mut config.inputs);
    config.loaded = Some(serve::Loaded { checked, plan, stamp });
    config.hooks = Some(play.hooks());
    let _ = play.store.set(config.store.clone());
    let _ = play.clock.set(config.clock.clone());
    // The page is offered once the bot serves, or not at all.
    let (started, serving) = std::sync::mpsc::channel::<Result<(), String>>();
    let ready = (play.clone(), started.clone());
    config.on_ready = Some(Box::new(move |at| {
        *ready.0.serve.lock().unwrap_or_else(|e| e.into_inner()) = Some(format!("http://{at}/interactions"));
        let _ = ready.1.send(Ok(()));
    }));
    std::thread::spawn(move || {
        let stopped = serve::serve(config).map_err(|e| stop_reason(&e));
        let _ = started.send(stopped.and(Err("the bot stopped".to_string())));
    });
    match serving.recv_timeout(Duration::from_secs(60)) {
        Ok(Ok(())) => {}
        Ok(Err(why)) => return report::error(format!("the bot did not start: {why}"), Exit::RunFailure),
        Err(_) => return report::error("the bot did not start within 60 seconds".to_string(), Exit::RunFailure),
    }
    // serve takes Ctrl-C and SIGTERM, drains and returns: play ends then.
    std::thread::spawn(move || {
        let code = match serving.recv() {
            Ok(Err(why)) if why != "the bot stopped" => {
                eprintln!("error: {why}");
                1
            }
            _ => 0,
        };
        std::process::exit(code);
    });
    eprintln!("blkc play: open {} (Ctrl-C ends it)", play.url());
    runtime.block_on(blkc::host::play::run(play, listener));
    Exit::Success
}

/// The page's listener, on loopback unless `--expose` says otherwise (with
/// a warning of what that exposes), and its address.
fn listen(
    args: &PlayArgs,
    runtime: &tokio::runtime::Runtime,
) -> Result<(tokio::net::TcpListener, std::net::SocketAddr), String> {
    let at = args.listen.unwrap_or(([127, 0, 0, 1], 0).into());
    if !at.ip().is_loopback() {
        let exposes = "whoever reaches it runs the bot's commands with your secrets and bot token, and reads every run's requests, responses and variables in the inspector";
        if !args.expose {
            return Err(format!(
                "play serves its page on loopback only; {at} is reachable from other machines, and {exposes}. Give `--expose` to mean it"
            ));
        }
        eprintln!("warning: the page listens on {at}, beyond this machine: {exposes}");
    }
    let listener =
        runtime.block_on(tokio::net::TcpListener::bind(at)).map_err(|e| format!("cannot listen on {at}: {e}"))?;
    let address = listener.local_addr().map_err(|e| e.to_string())?;
    Ok((listener, address))
}

/// The store `--store` names, or a throwaway one in `scratch`.
fn open_store(
    args: &PlayArgs,
    scratch: &std::io::Result<tempfile::TempDir>,
) -> Result<blkc::run::store::Backend, Exit> {
    let location = match (&args.store, scratch) {
        (Some(s), _) => blkc::run::store::Location::parse(s),
        (None, Ok(dir)) => blkc::run::store::Location::Sqlite(dir.path().join("play.sqlite3")),
        (None, Err(e)) => return Err(report::usage(format!("cannot make a throwaway store: {e}"))),
    };
    blkc::run::store::Backend::open(&location).map_err(|e| report::coded_error(Code::StoreFailed, &e, Some(e.help())))
}

fn stop_reason(stop: &serve::Stop) -> String {
    stop.to_string()
}

/// `serve` as `play` runs it: on a free loopback port, its interactions
/// signed by `play`, its platform `play`'s stand-in, with a token good
/// only there.
fn config(args: &PlayArgs, play: &Play, store: blkc::run::store::Backend) -> Result<Config, String> {
    let mut inputs = secret_inputs(&args.net)?;
    inputs.bot_token = Some(play.token.clone());
    let platform = blkc::language::policy::Platform::parse(&play.api()).ok_or("the stand-in's address is no URL")?;
    let options = blkc::run::eval::Options {
        http: http_limits(&args.net)?,
        platform: Some(platform),
        offline: args.offline,
        allow_private_network: args.net.allow_private_network,
        // The inspector shows each request's headers and the start of its
        // response, redacted.
        verbose: true,
        reads: true,
        preview: PREVIEW,
        // Actions reach the stand-in, offline too.
        stand_in: true,
        ..blkc::run::eval::Options::default()
    };
    Ok(Config {
        file: args.file.clone(),
        listen: Some(([127, 0, 0, 1], 0).into()),
        reuse_port: false,
        public_key: Some(blkc::discord::signature::PublicKey::from_hex(&play.public_key()).map_err(|e| e.to_string())?),
        global_rate_limit: 50,
        shards: Shards::Auto,
        max_shards: None,
        inputs,
        options,
        store,
        answer_within: Duration::from_millis(2500),
        workers: 4,
        queue: 64,
        max_body: 1 << 20,
        max_connections: 64,
        max_connections_per_address: 0,
        drain_timeout: Duration::from_secs(5),
        // Saved, the file is served again (a file with errors keeps the
        // last good plan, as serve keeps it).
        watch: true,
        log: LogFormat::Text,
        loaded: None,
        on_ready: None,
        hooks: None,
        clock: super::serve::test_clock().moved_by(play.moved.clone()),
    })
}
