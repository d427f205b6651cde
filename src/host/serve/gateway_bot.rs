//! Asking the platform where the Gateway is and how many shards it
//! recommends (`GET /gateway/bot`).

use std::time::{Duration, Instant};

use super::loaded::Loaded;
use super::shared::Shared;
use crate::discord::gateway::GatewayInfo;

/// Why `GET /gateway/bot` gave no Gateway: worth trying again (no answer,
/// a 5xx, a 429), or not (a refused token: no retry makes it right).
pub(super) enum NoGateway {
    Again(String),
    Never(String),
}

/// Where the Gateway is, and how many shards the platform recommends.
pub(super) fn gateway_info(shared: &Shared, loaded: &Loaded) -> Result<GatewayInfo, NoGateway> {
    let platform = shared.bot.platform(loaded);
    let host = url::Url::parse(platform.base()).ok().and_then(|u| u.host_str().map(str::to_string)).unwrap_or_default();
    let (answer, body) = platform
        .gateway_bot(Instant::now() + Duration::from_secs(30))
        .map_err(|e| NoGateway::Again(format!("`GET /gateway/bot` at {host} got no answer: {e}")))?;
    if !answer.is_success() {
        let why = format!(
            "{host} refused `GET /gateway/bot` ({}): {}{}",
            answer.status,
            answer.message(),
            if answer.status == 401 { "; the bot token is wrong" } else { "" }
        );
        let again = answer.status >= 500 || answer.status == 429 || answer.status == 408;
        return Err(if again { NoGateway::Again(why) } else { NoGateway::Never(why) });
    }
    let body =
        body.ok_or_else(|| NoGateway::Again(format!("{host}'s /gateway/bot answer is not the platform's JSON")))?;
    GatewayInfo::from_wire(body).map_err(|e| NoGateway::Again(e.to_string()))
}
