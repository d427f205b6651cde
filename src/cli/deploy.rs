//! `blkc deploy FILE`: registers the file's commands with the platform, in
//! one bulk overwrite (docs/serve.md).

use std::time::{Duration, Instant};

use blkc::discord::intents;
use blkc::discord::ratelimit::RateLimiter;
use blkc::discord::registration::{Changes, Registered};
use blkc::discord::rest::{Platform, Route};
use blkc::LoadOptions;

use super::args::{DeployArgs, Format};
use super::report::{self, Exit};

pub fn deploy(args: &DeployArgs) -> Exit {
    let opts = report::render_options(args.output.color);
    let (checked, plan) = match super::compile(&args.file, LoadOptions::default(), args.output.format, opts) {
        Ok(p) => p,
        Err(exit) => return exit,
    };
    let payload = match blkc::check::platform::registration(&checked.ast) {
        Ok(p) => p,
        Err(diagnostics) => {
            report::print_check(&checked, &diagnostics, args.output.format, opts);
            return Exit::Diagnostics;
        }
    };
    let names: Vec<String> = payload.iter().map(|c| format!("/{}", c.name)).collect();
    let scope = match &args.guild {
        Some(g) => format!("in server {g}"),
        None => "globally".to_string(),
    };
    // Events are not registered; what the Gateway will be asked for is said.
    let intents_line = intents_line(&checked.ast);
    let said = |line: String| {
        eprintln!("{line}");
        if let Some(line) = &intents_line {
            eprintln!("{line}");
        }
    };
    if let Some(g) = args.guild.as_ref().filter(|g| g.is_empty() || !g.bytes().all(|b| b.is_ascii_digit())) {
        return report::usage(format!("`--guild` takes a server's ID, a number, not `{}`", blkc::display::one_line(g)));
    }
    // A dry run without credentials shows the payload only; with them it
    // reads what is registered and says what would change.
    let credentials = match credentials(args) {
        Ok(c) => Some(c),
        Err(_) if args.dry_run => None,
        Err(why) => return report::usage(why),
    };
    let Some((application, token)) = credentials else {
        println!("{}", serde_json::to_string_pretty(&payload).unwrap_or_default());
        said(format!(
            "would register {} command{} {scope}: {} (set BLKC_APPLICATION_ID and BLKC_BOT_TOKEN to see what it would \
             add, change and remove)",
            names.len(),
            plural(names.len()),
            if names.is_empty() { "none".to_string() } else { names.join(", ") }
        ));
        return Exit::Success;
    };
    let base = match &args.platform {
        Some(p) => p.base_url(),
        None => plan.platform.clone(),
    };
    // The token goes over https only, as for runs (plain http to this machine).
    if let Some(p) = blkc::policy::Platform::parse(&base) {
        let to = blkc::policy::Destination::new(&p.scheme, &p.host, p.port);
        if let Err(refusal) = blkc::policy::token_destination(&to, &p, false) {
            return report::usage(format!("the bot token would go {}; {}", refusal.describe(), refusal.help()));
        }
    }
    let platform = Platform::new(&base, Some(token.clone()), std::sync::Arc::new(RateLimiter::new()));
    let deadline = Instant::now() + Duration::from_secs(60);
    let guild = args.guild.as_deref();
    // What is registered now, so that the deploy says what it changes.
    let listed = platform.send::<()>(Route::RegisteredCommands { application: &application, guild }, None, deadline);
    let registered: Vec<Registered> = match listed {
        Ok(answer) if answer.is_success() => match serde_json::from_slice(&answer.body) {
            Ok(list) => list,
            Err(e) => {
                return report::error(
                    format!("the platform's list of registered commands could not be read: {e}"),
                    Exit::RunFailure,
                )
            }
        },
        Ok(answer) => return refused("reading the registered commands", &answer, &token),
        Err(e) => return unsent("reading the registered commands", &e, &token),
    };
    let changes = Changes::between(&payload, &registered);
    if args.dry_run {
        println!("{}", serde_json::to_string_pretty(&payload).unwrap_or_default());
        said(format!("would register {} command{} {scope}: {}", names.len(), plural(names.len()), changes.summary()));
        return Exit::Success;
    }
    if payload.is_empty() && !registered.is_empty() && !args.remove_all {
        let listed: Vec<String> = registered.iter().map(|c| format!("/{}", c.name)).collect();
        return report::usage(format!(
            "`{}` has no commands, so deploying it would remove every command registered {scope} ({}); nothing was \
             changed. Add `--remove-all` if that is what you want",
            args.file.display(),
            listed.join(", ")
        ));
    }
    match platform.send(Route::Commands { application: &application, guild }, Some(&payload), deadline) {
        Ok(answer) if answer.is_success() => {
            if args.output.format == Format::Json {
                let doc = serde_json::json!({
                    "registered": names, "scope": scope, "added": changes.added,
                    "changed": changes.changed.iter().map(|(n, what)| serde_json::json!({ "name": n, "what": what })).collect::<Vec<_>>(),
                    "removed": changes.removed, "unchanged": changes.unchanged,
                });
                println!("{}", report::json(&doc, false));
            }
            said(format!("registered {} command{} {scope}: {}", names.len(), plural(names.len()), changes.summary()));
            Exit::Success
        }
        Ok(answer) => refused("the registration", &answer, &token),
        Err(e) => unsent("the registration", &e, &token),
    }
}

/// The platform answered `what` with an error.
fn refused(what: &str, answer: &blkc::discord::rest::Answer, token: &str) -> Exit {
    let why = answer.message().replace(token, "[bot token]");
    let hint = match answer.status {
        401 => "; the bot token was refused: copy it again from the developer portal (Bot, Reset Token)",
        403 => "; the token's application may not be the one given, or the bot is not in that server",
        404 => "; check the application ID (and the server ID)",
        429 => "; the platform's rate limit: try again in a minute",
        _ => "",
    };
    report::error(format!("the platform refused {what} ({}): {why}{hint}", answer.status), Exit::RunFailure)
}

/// `what` got no answer.
fn unsent(what: &str, e: &blkc::discord::rest::PlatformError, token: &str) -> Exit {
    report::error(format!("{what} was not sent: {}", e.to_string().replace(token, "[bot token]")), Exit::RunFailure)
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// What `blkc serve` will ask the Gateway for, when the file has events.
fn intents_line(file: &blkc::ast::File) -> Option<String> {
    let wanted = blkc::check::platform::intents(file);
    (!wanted.is_empty()).then(|| {
        let privileged: Vec<String> = intents::privileged(wanted)
            .iter()
            .map(|(name, switch)| format!("{name}: enable {switch} in the developer portal"))
            .collect();
        let privileged =
            if privileged.is_empty() { String::new() } else { format!(" (privileged {})", privileged.join("; ")) };
        format!(
            "`blkc serve` will ask the Gateway for intents {} = {}{privileged}",
            intents::names(wanted),
            wanted.bits()
        )
    })
}

/// The application's ID and the bot token, checked; or what is wrong.
fn credentials(args: &DeployArgs) -> Result<(String, String), String> {
    let application = match args.application_id.clone().or_else(|| std::env::var("BLKC_APPLICATION_ID").ok()) {
        Some(a) if !a.is_empty() && a.bytes().all(|b| b.is_ascii_digit()) => a,
        Some(a) => {
            return Err(format!(
                "the application ID is a number, not `{}`",
                blkc::display::one_line(&a)
            ))
        }
        None => {
            return Err(
                "give the application's ID with `--application-id` or BLKC_APPLICATION_ID (the developer portal, General Information)".into(),
            )
        }
    };
    let token = match &args.bot_token_file {
        Some(path) => match std::fs::read_to_string(path) {
            Ok(t) => t.trim().to_string(),
            Err(e) => return Err(format!("cannot read `{}`: {e}", path.display())),
        },
        None => std::env::var("BLKC_BOT_TOKEN").unwrap_or_default(),
    };
    if token.is_empty() {
        return Err("registering needs the bot token: set BLKC_BOT_TOKEN or give `--bot-token-file`".into());
    }
    Ok((application, token))
}
