//! `blkc invite FILE`: the permissions the bot needs in a server for the
//! file's actions (each with the actions that need it), their integer, and
//! the link a server's owner opens to add the bot with them.

use blkc::discord::actions;
use blkc::language::load::LoadOptions;

use super::args::{Format, InviteArgs};
use super::report::{self, Exit};

pub fn invite(args: &InviteArgs) -> Exit {
    let opts = report::render_options(args.output.color);
    let (checked, plan) = match super::compile(&args.file, LoadOptions::default(), args.output.format, opts) {
        Ok(p) => p,
        Err(exit) => return exit,
    };
    let needed = blkc::language::registration::permissions(&checked.ast);
    let application = match args.application_id.clone().or_else(|| std::env::var("BLKC_APPLICATION_ID").ok()) {
        Some(a) if !a.is_empty() && a.bytes().all(|b| b.is_ascii_digit()) => Some(a),
        Some(a) => {
            return report::usage(format!(
                "the application ID is a number, not `{}`",
                blkc::base::display::one_line(&a)
            ))
        }
        None => None,
    };
    let url = application.as_deref().map(|a| actions::invite_url(a, plan.permissions()));
    if args.output.format == Format::Json {
        let listed: Vec<_> = needed
            .iter()
            .map(|(bit, by)| {
                let name = bit.iter_names().next().map_or(String::new(), |(n, _)| n.to_ascii_lowercase());
                serde_json::json!({ "permission": name, "bits": bit.bits().to_string(), "actions": by })
            })
            .collect();
        let doc = serde_json::json!({ "permissions": plan.permissions.to_string(), "needed": listed, "url": url });
        println!("{}", report::json(&doc, true));
        return Exit::Success;
    }
    if needed.is_empty() {
        println!("The bot needs no permission for actions: `{}` takes none.", args.file.display());
    } else {
        println!("The bot needs, in each server:");
        for (bit, by) in &needed {
            let title = actions::titles(*bit).join("");
            println!("  {title:<26} for {}", by.iter().map(|v| format!("`{v}`")).collect::<Vec<_>>().join(", "));
        }
        println!("Permissions integer: {}", plan.permissions);
    }
    match url {
        Some(url) => println!("Add the bot with: {url}"),
        None => println!(
            "Give the application's ID (`--application-id`, or BLKC_APPLICATION_ID; the developer portal, General Information) for the link that adds the bot."
        ),
    }
    Exit::Success
}
