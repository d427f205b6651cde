//! What `run` and `test` gather from outside the file: trigger variables,
//! secrets, the bot token and the limits of requests.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use blkc::run::eval::{self, Inputs};

use super::args::{NetArgs, RunArgs};

/// A JSON object of names and values (a value that is not a string is
/// written as its JSON text).
fn json_pairs(text: &str, what: &str) -> Result<HashMap<String, String>, String> {
    let map: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(text).map_err(|e| format!("{what} is not a JSON object: {e}"))?;
    Ok(map
        .into_iter()
        .map(|(k, v)| {
            let text = match v {
                serde_json::Value::String(s) => s,
                other => other.to_string(),
            };
            (k, text)
        })
        .collect())
}

/// The keys of a JSON object whose values are objects or arrays.
fn structured_keys(text: &str) -> std::collections::HashSet<String> {
    let map: serde_json::Map<String, serde_json::Value> = serde_json::from_str(text).unwrap_or_default();
    map.into_iter().filter(|(_, v)| v.is_object() || v.is_array()).map(|(k, _)| k).collect()
}

/// A secrets file: a JSON object when it starts with `{`, otherwise the
/// dotenv format as the `dotenvy` crate reads it (`KEY=value`, quotes,
/// `export KEY=…`, comments, escapes in double quotes).
pub(crate) fn secret_pairs(text: &str, what: &str) -> Result<HashMap<String, String>, String> {
    if text.trim_start().starts_with('{') {
        return json_pairs(text, what);
    }
    let mut out = HashMap::new();
    for item in dotenvy::from_read_iter(text.as_bytes()) {
        let (k, v) = item.map_err(|e| match e {
            dotenvy::Error::LineParse(line, at) => format!("{what}: cannot read `{line}` (at character {at})"),
            other => format!("{what}: {other}"),
        })?;
        out.insert(k, v);
    }
    Ok(out)
}

fn read_text(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("cannot read `{}`: {e}", path.display()))
}

pub fn inputs(args: &RunArgs) -> Result<Inputs, String> {
    let mut inputs = secret_inputs(&args.net)?;
    if let Some(path) = &args.vars_file {
        let text = read_text(path)?;
        if !text.trim_start().starts_with('{') {
            return Err(format!("`{}` must hold a JSON object", path.display()));
        }
        let what = format!("`{}`", path.display());
        inputs.structured = structured_keys(&text);
        inputs.vars = json_pairs(&text, &what)?;
    }
    for pair in &args.vars {
        let (k, v) = pair.split_once('=').ok_or_else(|| format!("`--var {pair}`: expected NAME=VALUE"))?;
        inputs.vars.insert(k.to_string(), v.to_string());
        inputs.structured.remove(k);
    }
    // `{user_mention}` follows from `user_id`, as a triggered run's does.
    if let Some(id) = inputs.vars.get("user_id").filter(|id| !id.is_empty()) {
        let mention = blkc::discord::user_mention(id);
        inputs.vars.entry("user_mention".into()).or_insert(mention);
    }
    Ok(inputs)
}

/// Secrets from `BLKC_SECRET_*` and `--secrets`; the bot token from
/// `BLKC_BOT_TOKEN` or `--bot-token-file`.
pub fn secret_inputs(net: &NetArgs) -> Result<Inputs, String> {
    let mut inputs = Inputs::default();
    // `vars_os`: a variable that is not UTF-8 is not ours, and must not stop the run.
    let vars = std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)));
    for (key, value) in vars {
        if let Some(name) = key.strip_prefix("BLKC_SECRET_") {
            inputs.secrets.insert(name.to_string(), value);
        }
    }
    if let Some(path) = &net.secrets {
        let text = read_text(path)?;
        inputs.secrets.extend(secret_pairs(&text, &format!("`{}`", path.display()))?);
    }
    inputs.bot_token = match &net.bot_token_file {
        Some(path) => Some(read_text(path)?.trim().to_string()),
        None => std::env::var("BLKC_BOT_TOKEN").ok().filter(|t| !t.is_empty()),
    };
    Ok(inputs)
}

pub fn http_limits(net: &NetArgs) -> Result<eval::http::Limits, String> {
    let secs = |s: f64, flag: &str| {
        Duration::try_from_secs_f64(s)
            .ok()
            .filter(|d| !d.is_zero())
            .ok_or(format!("`{flag}` takes a positive number of seconds"))
    };
    Ok(eval::http::Limits {
        connect_timeout: secs(net.connect_timeout, "--connect-timeout")?,
        timeout: secs(net.timeout, "--timeout")?,
        max_body: net.max_response_size,
        max_redirects: net.max_redirects,
    })
}

/// The memory budget of a run, from the flags.
pub fn memory(net: &NetArgs) -> eval::Memory {
    eval::Memory { run: net.max_run_memory, shared: None }
}
