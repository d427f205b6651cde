//! `blkc new NAME [--template KIND]`: a project in one command. A folder
//! with the bot (`bot.blk`), its conversation tests (`bot.blkt`), the
//! samples its requests are answered from offline, a `.gitignore` for the
//! store and a README of the commands that check, play, test, deploy and
//! serve it. Each template is one of the examples, so that it is checked,
//! formatted and tested with them (tests/new.rs writes each and plays it).

use std::path::Path;

use super::args::{NewArgs, Template};
use super::report::{self, Exit};

/// A template: the example it is, and the samples that example reads.
struct Kind {
    /// The example's name, as in `examples/NAME.blk`.
    example: &'static str,
    bot: &'static str,
    tests: &'static str,
    samples: &'static [(&'static str, &'static str)],
    /// What the bot is, for the project's README.
    what: &'static str,
}

fn kind(template: Template) -> Kind {
    match template {
        Template::Minimal => Kind {
            example: "hello",
            bot: include_str!("../../examples/hello.blk"),
            tests: include_str!("../../examples/hello.blkt"),
            samples: &[("samples/catfact.json", include_str!("../../examples/samples/catfact.json"))],
            what: "A first bot: a greeting with a button that counts its waves, and a command that asks an API.",
        },
        Template::Moderation => Kind {
            example: "moderation",
            bot: include_str!("../../examples/moderation.blk"),
            tests: include_str!("../../examples/moderation.blkt"),
            samples: &[],
            what: "A moderators' bot: warnings, timeouts, kicks and bans, each guarded by its permission and logged to a channel.",
        },
        Template::Tickets => Kind {
            example: "tickets",
            bot: include_str!("../../examples/tickets.blk"),
            tests: include_str!("../../examples/tickets.blkt"),
            samples: &[("samples/messages.json", include_str!("../../examples/samples/messages.json"))],
            what: "A support desk: a panel whose button opens a private ticket channel, closed with its transcript logged.",
        },
        Template::Economy => Kind {
            example: "economy",
            bot: include_str!("../../examples/economy.blk"),
            tests: include_str!("../../examples/economy.blkt"),
            samples: &[],
            what: "An economy: coins per member, a daily bonus, coins given from one member to another, a leaderboard.",
        },
    }
}

/// What stays out of version control: the store `serve` and `run` keep
/// beside the file, and a secrets file.
const GITIGNORE: &str = "# The store blkc keeps beside the bot (its saved variables).
.blkc/
# Secrets: give them with `--secrets secrets.env`, never commit them.
secrets.env
";

pub fn new(args: &NewArgs) -> Exit {
    let folder = &args.name;
    if folder.exists() && std::fs::read_dir(folder).map_or(true, |mut d| d.next().is_some()) {
        return report::usage(format!(
            "{} already exists and is not empty: blkc new writes a new folder (give another name)",
            folder.display()
        ));
    }
    let kind = kind(args.template);
    let name = folder.file_name().map_or("bot".into(), |n| n.to_string_lossy().into_owned());
    let mut files: Vec<(String, String)> = vec![
        ("bot.blk".into(), renamed(kind.bot, kind.example)),
        ("bot.blkt".into(), renamed(kind.tests, kind.example)),
        (".gitignore".into(), GITIGNORE.into()),
        ("README.md".into(), readme(&name, &kind)),
    ];
    files.extend(kind.samples.iter().map(|(path, text)| (path.to_string(), text.to_string())));
    for (path, text) in &files {
        if let Err(e) = write(&folder.join(path), text) {
            return report::usage(format!("cannot write {}: {e}", folder.join(path).display()));
        }
    }
    let shown = folder.display();
    println!("Created {shown}/ from the {} template: bot.blk, its tests and a README.", args.template.name());
    println!();
    println!("  cd {shown}");
    println!("  blkc play bot.blk --offline     the bot in a browser, now");
    println!("  blkc test bot.blkt              its conversation tests");
    Exit::Success
}

fn write(path: &Path, text: &str) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, text)
}

/// The example's text as the project's: it names itself `bot.blk`.
fn renamed(text: &str, example: &str) -> String {
    text.replace(&format!("examples/{example}.blk"), "bot.blk").replace(&format!("{example}.blk"), "bot.blk")
}

/// The secret slots the bot reads (`<NAME>`), in order of first use.
fn secrets(bot: &str) -> Vec<&str> {
    let mut found: Vec<&str> = Vec::new();
    for (start, _) in bot.match_indices('<') {
        let rest = &bot[start + 1..];
        let len = rest.find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')).unwrap_or(0);
        if len > 0 && rest[len..].starts_with('>') && !found.contains(&&rest[..len]) {
            found.push(&rest[..len]);
        }
    }
    found
}

fn readme(name: &str, kind: &Kind) -> String {
    let secrets = secrets(kind.bot);
    let exports = if secrets.is_empty() {
        String::new()
    } else {
        let lines: Vec<String> =
            secrets.iter().map(|s| format!("export BLKC_SECRET_{s}=…   # fills <{s}>\n")).collect();
        lines.concat()
    };
    format!(
        "# {name}

{what}

Written in blkc's language: `bot.blk` is the bot, `bot.blkt` its
conversation tests, `samples/` what its requests are answered with offline.

## Try it

```sh
blkc check bot.blk              # every mistake, before anything is sent
blkc play bot.blk --offline     # the bot in a browser, without the platform
blkc test bot.blkt              # its conversation tests
```

## Put it live

With an application from the developer portal
(https://discord.com/developers/applications):

```sh
export BLKC_APPLICATION_ID=… BLKC_BOT_TOKEN=…   # from the developer portal
{exports}blkc invite bot.blk                          # the link that adds the bot to a server
blkc deploy bot.blk --guild YOUR_SERVER_ID   # register its commands
blkc serve bot.blk                           # live: commands come over the Gateway
```

The store (`.blkc/`) keeps what the bot saves; it is left out of git.
",
        what = kind.what,
    )
}
