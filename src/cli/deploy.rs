//! `blkc deploy FILE`: registers the file's commands with the platform, in
//! one bulk overwrite (docs/serve.md).

use std::time::{Duration, Instant};

use blkc::discord::intents;
use blkc::discord::ratelimit::RateLimiter;
use blkc::discord::registration::{self, Changes, Registered};
use blkc::discord::rest::{Platform, Route};
use blkc::language::load::LoadOptions;

use super::args::{DeployArgs, Format};
use super::report::{self, Exit};

pub fn deploy(args: &DeployArgs) -> Exit {
    let opts = report::render_options(args.output.color);
    let (checked, plan) = match super::compile(&args.file, LoadOptions::default(), args.output.format, opts) {
        Ok(p) => p,
        Err(exit) => return exit,
    };
    // The payload the plan computed; none when a description is missing.
    let Some(payload) = plan.commands.clone() else {
        let diagnostics = blkc::language::registration::missing_descriptions(&checked.ast);
        report::print_check(&checked, &diagnostics, args.output.format, opts);
        return Exit::Diagnostics;
    };
    if let Some(g) = args.guild.as_ref().filter(|g| g.is_empty() || !g.bytes().all(|b| b.is_ascii_digit())) {
        return report::usage(format!(
            "`--guild` takes a server's ID, a number, not `{}`",
            blkc::base::display::one_line(g)
        ));
    }
    let said = Said {
        names: payload.iter().map(|c| registration::shown(c.kind, &c.name)).collect(),
        scope: args.guild.as_ref().map_or("globally".to_string(), |g| format!("in server {g}")),
        intents: intents_line(&plan),
        permissions: permissions_line(
            &plan,
            args.application_id.clone().or_else(|| std::env::var("BLKC_APPLICATION_ID").ok()),
        ),
    };
    // A dry run without credentials shows the payload only; with them it
    // reads what is registered and says what would change.
    let (application, token) = match credentials(args) {
        Ok(c) => c,
        Err(_) if args.dry_run => {
            println!("{}", serde_json::to_string_pretty(&payload).unwrap_or_default());
            let names = if said.names.is_empty() { "none".to_string() } else { said.names.join(", ") };
            said.line(
                "would register",
                &format!(
                    "{names} (set BLKC_APPLICATION_ID and BLKC_BOT_TOKEN to see what it would add, change and remove)"
                ),
            );
            return Exit::Success;
        }
        Err(why) => return report::usage(why),
    };
    let platform = match platform(args, &plan, &token) {
        Ok(p) => p,
        Err(exit) => return exit,
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    let guild = args.guild.as_deref();
    let registered =
        match registered(&platform, Route::RegisteredCommands { application: &application, guild }, deadline, &token) {
            Ok(r) => r,
            Err(exit) => return exit,
        };
    let changes = Changes::between(&payload, &registered);
    if args.dry_run {
        println!("{}", serde_json::to_string_pretty(&payload).unwrap_or_default());
        said.line("would register", &changes.summary());
        return Exit::Success;
    }
    if payload.is_empty() && !registered.is_empty() && !args.remove_all {
        return wiping(args, &said.scope, &registered);
    }
    match platform.send(Route::Commands { application: &application, guild }, Some(&payload), deadline) {
        Ok(answer) if answer.is_success() => {
            said.registered(args.output.format, &changes);
            Exit::Success
        }
        Ok(answer) => refused("the registration", &answer, &token),
        Err(e) => unsent("the registration", &e, &token),
    }
}

/// What a deploy says on standard error: the commands, where, and the
/// intents `blkc serve` will ask the Gateway for (events are not registered).
struct Said {
    names: Vec<String>,
    scope: String,
    intents: Option<String>,
    permissions: Option<String>,
}

impl Said {
    /// A registration done: what it changed (and, with `--format json`, the
    /// same as fields on standard output).
    fn registered(&self, format: Format, changes: &Changes) {
        if format == Format::Json {
            let changed: Vec<_> =
                changes.changed.iter().map(|(n, what)| serde_json::json!({ "name": n, "what": what })).collect();
            let doc = serde_json::json!({
                "registered": self.names, "scope": self.scope, "added": changes.added,
                "changed": changed, "removed": changes.removed, "unchanged": changes.unchanged,
            });
            println!("{}", report::json(&doc, false));
        }
        self.line("registered", &changes.summary());
    }

    /// `registered 2 commands globally: 1 added (/a), 1 unchanged`.
    fn line(&self, done: &str, what: &str) {
        let n = self.names.len();
        eprintln!("{done} {n} command{} {}: {what}", plural(n), self.scope);
        for line in self.intents.iter().chain(&self.permissions) {
            eprintln!("{line}");
        }
    }
}

/// The refusal of a deploy that would remove every registered command.
fn wiping(args: &DeployArgs, scope: &str, registered: &[Registered]) -> Exit {
    let listed: Vec<String> = registered.iter().map(|c| registration::shown(c.kind, &c.name)).collect();
    report::usage(format!(
        "`{}` has no commands, so deploying it would remove every command registered {scope} ({}); nothing was \
         changed. Add `--remove-all` if that is what you want",
        args.file.display(),
        listed.join(", ")
    ))
}

/// The platform's API client, when the bot token may go to its base URL:
/// over https only, as for runs (plain http to this machine).
fn platform(args: &DeployArgs, plan: &blkc::language::plan::Plan, token: &str) -> Result<Platform, Exit> {
    report::warn_unversioned(args.platform.as_ref());
    let base = args.platform.as_ref().map_or_else(|| plan.platform.clone(), |p| p.base_url());
    if let Some(p) = blkc::language::policy::Platform::parse(&base) {
        let to = blkc::base::urls::Destination::new(&p.scheme, &p.host, p.port);
        if let Err(refusal) = blkc::language::policy::token_destination(&to, &p, false) {
            return Err(report::usage(format!("the bot token would go {}; {}", refusal.describe(), refusal.help())));
        }
    }
    Ok(Platform::new(&base, Some(token.to_string()), std::sync::Arc::new(RateLimiter::new())))
}

/// The commands registered now, so that the deploy says what it changes.
fn registered(platform: &Platform, route: Route<'_>, deadline: Instant, token: &str) -> Result<Vec<Registered>, Exit> {
    const WHAT: &str = "reading the registered commands";
    match platform.send::<()>(route, None, deadline) {
        Ok(answer) if answer.is_success() => blkc::discord::registration::read(&answer.body).map_err(|e| {
            report::error(
                format!("the platform's list of registered commands could not be read: {e}"),
                Exit::RunFailure,
            )
        }),
        Ok(answer) => Err(refused(WHAT, &answer, token)),
        Err(e) => Err(unsent(WHAT, &e, token)),
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
fn intents_line(plan: &blkc::language::plan::Plan) -> Option<String> {
    let wanted = plan.intents();
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

/// The permissions the bot needs for the file's actions, and the link
/// that adds it with them when the application is known.
fn permissions_line(plan: &blkc::language::plan::Plan, application: Option<String>) -> Option<String> {
    let wanted = plan.permissions();
    (!wanted.is_empty()).then(|| {
        let titles = blkc::discord::actions::titles(wanted).join(", ");
        let link = match application.filter(|a| !a.is_empty() && a.bytes().all(|b| b.is_ascii_digit())) {
            Some(a) => format!("; add it with {}", blkc::discord::actions::invite_url(&a, wanted)),
            None => "; `blkc invite` prints the link that adds it".to_string(),
        };
        format!("the bot needs {titles} in each server (permissions {}){link}", wanted.bits())
    })
}

/// The application's ID and the bot token, checked; or what is wrong.
fn credentials(args: &DeployArgs) -> Result<(String, String), String> {
    let application = match args.application_id.clone().or_else(|| std::env::var("BLKC_APPLICATION_ID").ok()) {
        Some(a) if !a.is_empty() && a.bytes().all(|b| b.is_ascii_digit()) => a,
        Some(a) => {
            return Err(format!(
                "the application ID is a number, not `{}`",
                blkc::base::display::one_line(&a)
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
