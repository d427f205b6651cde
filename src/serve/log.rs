//! The operator's log: one line per interaction, per event and per
//! happening of the server, on standard error, as text (logfmt) or JSON,
//! always through the redactor, and never with an interaction's token.

use std::sync::Mutex;
use std::time::SystemTime;

use serde_json::Value as Json;

use crate::eval::Redactor;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    Text,
    Json,
}

/// The operator's log: a line per interaction and per event of the server,
/// on standard error, through the redactor.
pub struct Log {
    pub format: LogFormat,
    pub redactor: Redactor,
    pub out: Mutex<std::io::Stderr>,
}

impl Log {
    pub fn write(&self, level: &str, message: &str, fields: &[(&str, Json)], token: Option<&str>) {
        use std::io::Write as _;
        let mut line = match self.format {
            LogFormat::Json => {
                let mut o = serde_json::Map::new();
                o.insert("time".into(), rfc3339(SystemTime::now()).into());
                o.insert("level".into(), level.into());
                o.insert("message".into(), message.into());
                for (k, v) in fields {
                    o.insert((*k).into(), v.clone());
                }
                crate::display::one_line(&Json::Object(o).to_string())
            }
            LogFormat::Text => {
                let mut s = format!("{} {level:<5} {}", rfc3339(SystemTime::now()), crate::display::one_line(message));
                for (k, v) in fields {
                    let v = match v {
                        Json::String(t) => t.clone(),
                        other => other.to_string(),
                    };
                    s.push_str(&format!(" {k}={}", logfmt_value(&crate::display::one_line(&v))));
                }
                s
            }
        };
        // The interaction's token is a credential: never in the log.
        if let Some(t) = token.filter(|t| t.len() >= 8) {
            line = line.replace(t, "[interaction token]");
        }
        let line = self.redactor.redact(&line);
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        let _ = writeln!(out, "{line}");
    }
}

/// A value of a text log line as logfmt writes it: bare when it is one
/// word, else quoted with `"` and `\` escaped, so a value holding blanks
/// (a user's name, a platform's message) cannot add a field of its own
/// (`outcome=ran user=1` inside a value reads as one quoted value).
fn logfmt_value(v: &str) -> std::borrow::Cow<'_, str> {
    let bare = !v.is_empty() && !v.chars().any(|c| c.is_whitespace() || c == '"' || c == '=' || c == '\\');
    if bare {
        return v.into();
    }
    let mut out = String::with_capacity(v.len() + 2);
    out.push('"');
    for c in v.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out.into()
}

/// `2026-11-23T10:00:00.123Z`.
fn rfc3339(t: SystemTime) -> String {
    let d = t.duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Howard Hinnant's days-to-civil.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_millis()
    )
}
