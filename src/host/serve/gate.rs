//! What may keep a run from starting: a cooldown that has not passed (of
//! its command, handler or event, or of the button or menu used), or a
//! button already clicked its `max_clicks` times on its message. Both are
//! kept in the store and decided in one of its transactions, so processes
//! sharing a store agree: every click is counted once.

use crate::discord::model::{Interaction, InteractionType};
use crate::language::plan::{self, Cooldown, Plan};
use crate::language::vocab::{self, VarScope};
use crate::run::store::{StoreError, VarStore};

/// The gates one trigger passes through before it runs.
#[derive(Debug, Default)]
pub struct Gates {
    /// Each cooldown's store key, and how long it lasts.
    cooldowns: Vec<(String, Cooldown)>,
    /// The store key of a button's clicks on its message, and its most.
    clicks: Option<(String, u32)>,
    /// When a component with `expires` stops working (ms since 1970): its
    /// message's time and the setting's; `Some(0)` when the message says
    /// no time (a limit that cannot be told holds: it has expired).
    expires_at: Option<i64>,
    /// The button's id and the message it is on, to disable it there after
    /// its last click.
    pub button: Option<Button>,
}

/// A button with `max_clicks`, as the click saw its message.
#[derive(Debug)]
pub struct Button {
    pub custom_id: String,
    pub components: Vec<twilight_model::channel::message::Component>,
    /// A private message: it cannot be edited with the bot token.
    pub ephemeral: bool,
}

/// Whether the trigger runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Passage {
    /// It runs; `last_click` when it is the button's last: the button is
    /// disabled on its message.
    Open { last_click: bool },
    /// A cooldown has this long to go.
    Cooling { wait_ms: u64, per: VarScope },
    /// The button was clicked its `max` times already.
    UsedUp { max: u32 },
    /// The component's `expires` has passed since its message was sent.
    Expired,
}

impl Gates {
    /// The gates of a run of `tree`, with its trigger variables: its own
    /// cooldown, and for a click the clicked component's, found by the
    /// handler and key of its id (a click that matches no component never
    /// gets this far: `trigger::clicked` answers it as stale).
    pub fn of(plan: &Plan, tree: &plan::Tree, vars: &[(String, String)], interaction: Option<&Interaction>) -> Gates {
        let mut gates = Gates::default();
        if let Some(c) = tree.cooldown {
            let key = cooldown_key(&format!("~cooldown.{}.{}", tree.kind.as_str(), tree.name), c, vars);
            gates.cooldowns.push((key, Cooldown { per: effective_scope(c.per, vars), ..c }));
        }
        // A component's gates are a click's or a choice's (a form's id
        // names no component).
        let clicked = interaction.filter(|i| i.kind() == Ok(InteractionType::MessageComponent));
        let Some(interaction) = clicked else { return gates };
        let Some((handler, key, _)) = crate::discord::custom_id::parse_custom_id(interaction.custom_id()) else {
            return gates;
        };
        let Some(component) = plan::component(plan, handler, key) else { return gates };
        if let Some(c) = component.cooldown {
            let name = format!("{COOLDOWN_PREFIX}component.{handler}.{key}");
            gates.cooldowns.push((cooldown_key(&name, c, vars), Cooldown { per: effective_scope(c.per, vars), ..c }));
        }
        if let Some(seconds) = component.expires {
            let sent = interaction.message.as_ref().and_then(|m| m.sent_ms());
            let lasting = i64::try_from(seconds.saturating_mul(1000)).unwrap_or(i64::MAX);
            gates.expires_at = Some(sent.map_or(0, |at| at.saturating_add(lasting)));
        }
        if let Some(max) = component.max_clicks {
            // A message id is digits; anything else counts in a key of its
            // own, never in another message's.
            let message = interaction.message_id().filter(|m| is_snowflake(m)).unwrap_or("unknown");
            gates.clicks = Some((format!("~clicks.{message}.{handler}.{key}"), max));
            let on = interaction.message.as_ref();
            gates.button = Some(Button {
                custom_id: interaction.custom_id().to_string(),
                components: on.and_then(|m| m.components.clone()).unwrap_or_default(),
                ephemeral: on.is_some_and(|m| m.ephemeral()),
            });
        }
        gates
    }

    pub fn is_empty(&self) -> bool {
        self.cooldowns.is_empty() && self.clicks.is_none()
    }

    /// Decides in one transaction of `store`, at `now_ms`: a cooldown still
    /// running or a button used up keeps the run from starting and changes
    /// nothing; else every cooldown starts again and the click is counted.
    pub fn pass(&self, store: &mut dyn VarStore, now_ms: u64) -> Result<Passage, StoreError> {
        // (Told by the clock alone: nothing is counted for an expired click.)
        if self.expires_at.is_some_and(|at| i128::from(now_ms) >= i128::from(at)) {
            return Ok(Passage::Expired);
        }
        if self.is_empty() {
            return Ok(Passage::Open { last_click: false });
        }
        store.begin()?;
        let decided = self.decide(store, now_ms);
        let commit = matches!(decided, Ok(Passage::Open { .. }));
        let ended = store.end(commit);
        let passage = decided?;
        ended?;
        Ok(passage)
    }

    fn decide(&self, store: &mut dyn VarStore, now_ms: u64) -> Result<Passage, StoreError> {
        let mut longest: Option<(u64, VarScope)> = None;
        for (key, c) in &self.cooldowns {
            let until = store.get(key)?.and_then(|v| v.as_u64()).unwrap_or(0);
            if until > now_ms && longest.is_none_or(|(wait, _)| until - now_ms > wait) {
                longest = Some((until - now_ms, c.per));
            }
        }
        if let Some((wait_ms, per)) = longest {
            return Ok(Passage::Cooling { wait_ms, per });
        }
        let mut last_click = false;
        if let Some((key, max)) = &self.clicks {
            let clicks = store.get(key)?.and_then(|v| v.as_u64()).unwrap_or(0);
            if clicks >= u64::from(*max) {
                return Ok(Passage::UsedUp { max: *max });
            }
            store.set(key, &(clicks + 1).into())?;
            last_click = clicks + 1 == u64::from(*max);
        }
        for (key, c) in &self.cooldowns {
            store.set(key, &(now_ms + c.seconds * 1000).into())?;
        }
        Ok(Passage::Open { last_click })
    }
}

/// Where every cooldown's key starts.
const COOLDOWN_PREFIX: &str = "~cooldown.";
/// How often a process removes the cooldowns that have passed.
const SWEEP_EVERY_MS: u64 = 60_000;

/// Removes the cooldowns that have passed (one reads as none, so without
/// this the store would keep a key for every user who ever waited), at
/// most once a minute a process, and only where cooldowns are used.
pub fn sweep(gates: &Gates, store: &mut dyn VarStore, now_ms: u64) {
    use std::sync::atomic::{AtomicU64, Ordering};
    static LAST: AtomicU64 = AtomicU64::new(0);
    let last = LAST.load(Ordering::Relaxed);
    if gates.cooldowns.is_empty() || now_ms < last.saturating_add(SWEEP_EVERY_MS) {
        return;
    }
    if LAST.compare_exchange(last, now_ms, Ordering::Relaxed, Ordering::Relaxed).is_err() {
        return;
    }
    match store.remove_expired(COOLDOWN_PREFIX, now_ms) {
        Ok(n) => tracing::debug!(removed = n, "cooldowns that have passed"),
        Err(e) => tracing::warn!(error = %e, "the cooldowns that have passed could not be removed"),
    }
}

impl Passage {
    /// What the user is told when it keeps them from running anything
    /// (privately).
    pub fn refusal(self) -> Option<String> {
        Some(match self {
            Passage::Open { .. } => return None,
            Passage::Cooling { wait_ms, per } => {
                let wait = vocab::describe_wait(wait_ms);
                match per {
                    VarScope::Server => format!("This can be used again in this server in {wait}."),
                    VarScope::Channel => format!("This can be used again in this channel in {wait}."),
                    VarScope::User | VarScope::Global => format!("You can use this again in {wait}."),
                }
            }
            Passage::UsedUp { max: 1 } => "This button has been used already.".to_string(),
            Passage::UsedUp { max } => format!("This button has been used its {max} times."),
            Passage::Expired => "This has expired: it no longer does anything.".to_string(),
        })
    }
}

/// A cooldown's key in the store: one per user in a server, per server or
/// per channel, from the run's trigger variables (`vocab::VarScope::key`).
/// Outside a server (a direct message) a `per server` cooldown is the
/// channel's: with no server id its key would be one for every direct
/// message, and one user's use would refuse everyone else's.
fn cooldown_key(name: &str, c: Cooldown, vars: &[(String, String)]) -> String {
    let var = |id: &str| vars.iter().find(|(k, _)| k == id).map_or("", |(_, v)| v.as_str());
    let per = effective_scope(c.per, vars);
    let ids: Vec<&str> = per.ids().iter().map(|id| var(id)).collect();
    per.key(name, &ids)
}

/// The scope a cooldown is kept in for a run with `vars`: `per server`
/// outside a server is per channel (a direct message's channel is the
/// user's own with the bot).
fn effective_scope(per: VarScope, vars: &[(String, String)]) -> VarScope {
    let in_server = vars.iter().any(|(k, v)| k == "server_id" && !v.is_empty());
    if per == VarScope::Server && !in_server {
        VarScope::Channel
    } else {
        per
    }
}

fn is_snowflake(id: &str) -> bool {
    !id.is_empty() && id.len() <= 20 && id.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::store::MemoryStore;

    fn gates(cooldown: Option<Cooldown>, clicks: Option<u32>) -> Gates {
        let vars = vec![("server_id".to_string(), "1".to_string()), ("user_id".to_string(), "7".to_string())];
        Gates {
            cooldowns: cooldown.map(|c| (cooldown_key("~cooldown.command.daily", c, &vars), c)).into_iter().collect(),
            clicks: clicks.map(|max| ("~clicks.5.0".to_string(), max)),
            expires_at: None,
            button: None,
        }
    }

    #[test]
    fn an_expired_click_is_refused_by_the_clock_and_counts_nothing() {
        let mut store = MemoryStore::default();
        let g = Gates { expires_at: Some(10_000), ..gates(None, Some(3)) };
        assert_eq!(g.pass(&mut store, 9_999).ok(), Some(Passage::Open { last_click: false }));
        assert_eq!(g.pass(&mut store, 10_000).ok(), Some(Passage::Expired));
        assert_eq!(store.0.get("~clicks.5.0"), Some(&serde_json::json!(1)), "the expired click is not counted");
        let unknown = Gates { expires_at: Some(0), ..gates(None, None) };
        assert_eq!(unknown.pass(&mut store, 1).ok(), Some(Passage::Expired), "no time: expired");
    }

    #[test]
    fn a_cooldown_refuses_until_it_passes_and_starts_again_only_on_a_run() {
        let mut store = MemoryStore::default();
        let g = gates(Some(Cooldown { seconds: 30, per: VarScope::User }), None);
        assert_eq!(g.pass(&mut store, 1_000).ok(), Some(Passage::Open { last_click: false }));
        assert!(store.0.contains_key("~cooldown.command.daily:user:1:7"), "{:?}", store.0);
        assert_eq!(g.pass(&mut store, 6_000).ok(), Some(Passage::Cooling { wait_ms: 25_000, per: VarScope::User }));
        // A refusal does not start it again.
        assert_eq!(g.pass(&mut store, 30_999).ok(), Some(Passage::Cooling { wait_ms: 1, per: VarScope::User }));
        assert_eq!(g.pass(&mut store, 31_000).ok(), Some(Passage::Open { last_click: false }));
        let refusal = Passage::Cooling { wait_ms: 25_000, per: VarScope::User }.refusal();
        assert_eq!(refusal.as_deref(), Some("You can use this again in 25 seconds."));
    }

    #[test]
    fn cooldowns_that_have_passed_are_swept_once_a_minute() {
        let mut store = MemoryStore::default();
        let g = gates(Some(Cooldown { seconds: 30, per: VarScope::User }), None);
        g.pass(&mut store, 1_000).unwrap();
        store.0.insert("~cooldown.command.other:user:1:8".into(), serde_json::json!(500));
        store.0.insert("~clicks.5.0".into(), serde_json::json!(1));
        store.0.insert("points".into(), serde_json::json!(1));
        sweep(&g, &mut store, 2_000_000);
        let mut left: Vec<&String> = store.0.keys().collect();
        left.sort();
        assert_eq!(left, ["points", "~clicks.5.0"], "only the cooldowns over");
        g.pass(&mut store, 2_000_000).unwrap();
        sweep(&g, &mut store, 2_010_000);
        assert_eq!(store.0.len(), 3, "not again within the minute");
    }

    #[test]
    fn a_per_server_cooldown_outside_a_server_is_the_channel_s() {
        let c = Cooldown { seconds: 30, per: VarScope::Server };
        let dm = |user: &str, channel: &str| {
            let vars = [("server_id", ""), ("channel_id", channel), ("user_id", user)];
            vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<Vec<_>>()
        };
        assert_eq!(cooldown_key("~cooldown.command.daily", c, &dm("1", "10")), "~cooldown.command.daily:channel:10");
        assert_ne!(cooldown_key("x", c, &dm("1", "10")), cooldown_key("x", c, &dm("2", "20")));
        assert_eq!(effective_scope(VarScope::Server, &dm("1", "10")), VarScope::Channel);
    }

    #[test]
    fn clicks_are_counted_to_the_most_and_the_last_is_said() {
        let mut store = MemoryStore::default();
        let g = gates(None, Some(2));
        assert_eq!(g.pass(&mut store, 0).ok(), Some(Passage::Open { last_click: false }));
        assert_eq!(g.pass(&mut store, 0).ok(), Some(Passage::Open { last_click: true }));
        assert_eq!(g.pass(&mut store, 0).ok(), Some(Passage::UsedUp { max: 2 }));
        assert_eq!(store.0.get("~clicks.5.0"), Some(&serde_json::json!(2)), "a refused click is not counted");
    }

    #[test]
    fn a_click_refused_by_a_cooldown_is_not_counted() {
        let mut store = MemoryStore::default();
        let g = gates(Some(Cooldown { seconds: 10, per: VarScope::Server }), Some(5));
        assert_eq!(g.pass(&mut store, 0).ok(), Some(Passage::Open { last_click: false }));
        assert!(matches!(g.pass(&mut store, 1_000), Ok(Passage::Cooling { per: VarScope::Server, .. })));
        assert_eq!(store.0.get("~clicks.5.0"), Some(&serde_json::json!(1)));
    }
}
