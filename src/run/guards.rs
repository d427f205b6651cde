//! `require` lines: whether the member who used a command or a component
//! may run it there. One rule for `blkc serve` (the interaction's member)
//! and `blkc run` (the member its flags describe).

use std::collections::HashMap;

use crate::discord::model::Interaction;
use crate::language::plan;

/// What a `require` line is decided on: the member who used a command or
/// a component, as the interaction says, and where.
#[derive(Debug, Clone, Default)]
pub struct Standing {
    /// `None` outside a server (a direct message has no member).
    pub roles: Option<Vec<String>>,
    /// The member's permissions in the channel (`None` when not said).
    pub permissions: Option<u64>,
    pub channel: String,
}

impl Standing {
    pub fn of(interaction: &Interaction) -> Standing {
        let member = interaction.member.as_ref();
        Standing {
            roles: member.map(|m| m.roles.clone().unwrap_or_default()),
            permissions: member.and_then(|m| m.permissions.as_deref()).and_then(|p| p.parse().ok()),
            channel: interaction.channel_id.clone().unwrap_or_default(),
        }
    }
}

/// Why the member may not run a tree of these guards, as the platform's
/// client shows it to them (privately); `None` when every guard holds. A
/// role or a channel from a secret is never named (its id stays the
/// operator's); one written in the file is, as a mention that pings no one.
pub fn refusal(guards: &[plan::Guard], standing: &Standing, secrets: &HashMap<String, String>) -> Option<String> {
    refused_by(guards, standing, secrets).map(|(_, why)| why)
}

/// [`refusal`], with the word of the `require` line that refused
/// (`roles`, `channels`, `permissions`), for the operator's log.
pub fn refused_by(
    guards: &[plan::Guard],
    standing: &Standing,
    secrets: &HashMap<String, String>,
) -> Option<(&'static str, String)> {
    guards.iter().find_map(|g| one(g, standing, secrets).map(|why| (g.word(), why)))
}

/// Why one guard refuses the member, if it does.
fn one(guard: &plan::Guard, standing: &Standing, secrets: &HashMap<String, String>) -> Option<String> {
    use twilight_model::guild::Permissions;
    let ids = |ids: &[plan::Template]| -> Vec<(String, bool)> {
        ids.iter().filter_map(|t| Some((plan::fixed_text(t, secrets)?, t.has_secret()))).collect()
    };
    let shown = |ids: &[(String, bool)], mention: fn(&str) -> String| -> String {
        let written: Vec<String> = ids.iter().filter(|(_, secret)| !secret).map(|(id, _)| mention(id)).collect();
        if written.is_empty() || written.len() < ids.len() {
            String::new()
        } else {
            format!(": {}", written.join(", "))
        }
    };
    match guard {
        plan::Guard::Roles { ids: written } => {
            let wanted = ids(written);
            let Some(roles) = &standing.roles else { return Some("This can only be used in a server.".into()) };
            if !wanted.iter().any(|(id, _)| roles.contains(id)) {
                return Some(format!("You need a role this requires{}.", shown(&wanted, |id| format!("<@&{id}>"))));
            }
        }
        plan::Guard::Channels { ids: written } => {
            let wanted = ids(written);
            if !wanted.iter().any(|(id, _)| *id == standing.channel) {
                return Some(format!("This can't be used in this channel{}.", shown(&wanted, |id| format!("<#{id}>"))));
            }
        }
        plan::Guard::Permissions { bits } => {
            let Some(have) = standing.permissions else {
                return Some("This can only be used in a server.".into());
            };
            let have = Permissions::from_bits_truncate(have);
            let need = Permissions::from_bits_truncate(*bits);
            if !have.contains(Permissions::ADMINISTRATOR) && !have.contains(need) {
                // Named as a server's settings show them: `Manage Messages`.
                let missing = crate::discord::actions::titles(need - have);
                let (list, noun) = match missing.as_slice() {
                    [one] => (one.clone(), "permission"),
                    [init @ .., last] => (format!("{} and {last}", init.join(", ")), "permissions"),
                    [] => (String::new(), "permission"),
                };
                return Some(format!("You need the {list} {noun} to use this."));
            }
        }
    }
    None
}
