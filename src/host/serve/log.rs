//! The operator's log, through `tracing`: the server's code emits events
//! (`tracing::info!` and the rest, with named fields), and this module
//! installs the one subscriber that writes them on standard error, one
//! line each, as text (logfmt) or JSON (`tracing-subscriber`'s JSON
//! format). Every line goes through the redactor on its way out, and a
//! line written inside [`hiding`] never shows that interaction's token.

use std::cell::RefCell;
use std::fmt::Write as _;
use std::io::Write as _;
use std::time::SystemTime;

use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::filter::Targets;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::time::FormatTime;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, MakeWriter};
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::registry::LookupSpan;

use crate::run::eval::Redactor;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    Text,
    Json,
}

/// Installs the process's log: blkc's own events at `info` and above, in
/// `format`, through `redactor`, on standard error. A second call (a
/// second server in one process) keeps the first log.
pub fn init(format: LogFormat, redactor: Redactor) {
    let stderr: Sink = Box::new(|line| {
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    });
    let _ = tracing::subscriber::set_global_default(subscriber(format, redactor, stderr));
}

/// Where finished lines go.
type Sink = Box<dyn Fn(&str) + Send + Sync>;

/// The subscriber [`init`] installs, writing to `sink`.
fn subscriber(format: LogFormat, redactor: Redactor, sink: Sink) -> Box<dyn Subscriber + Send + Sync> {
    let layer = tracing_subscriber::fmt::layer().with_writer(Out { redactor, sink });
    let only_blkc = Targets::new().with_target("blkc", Level::INFO);
    match format {
        LogFormat::Text => Box::new(tracing_subscriber::registry().with(layer.event_format(Text)).with(only_blkc)),
        LogFormat::Json => Box::new(
            tracing_subscriber::registry()
                .with(
                    layer
                        .json()
                        .flatten_event(true)
                        .with_current_span(false)
                        .with_span_list(false)
                        .with_target(false)
                        .with_timer(Millis),
                )
                .with(only_blkc),
        ),
    }
}

thread_local! {
    /// The interaction token the lines being written must not show.
    static HIDDEN: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Runs `log` (which writes lines) with `token` hidden from them: the
/// interaction's token is a credential, and an error a platform sends back
/// may quote it. The subscriber writes on the emitting thread, so the
/// hiding holds for exactly the lines `log` writes.
pub fn hiding<R>(token: Option<&str>, log: impl FnOnce() -> R) -> R {
    struct Restore(Option<String>);
    impl Drop for Restore {
        fn drop(&mut self) {
            HIDDEN.with(|h| *h.borrow_mut() = self.0.take());
        }
    }
    let Some(token) = token.filter(|t| t.len() >= 8) else { return log() };
    let _restore = Restore(HIDDEN.with(|h| h.replace(Some(token.to_string()))));
    log()
}

/// Where the lines go: the sink, each whole line at once, after the
/// redactor and the hidden token.
struct Out {
    redactor: Redactor,
    sink: Sink,
}

impl<'a> MakeWriter<'a> for Out {
    type Writer = Line<'a>;

    fn make_writer(&'a self) -> Line<'a> {
        Line { out: self, bytes: Vec::with_capacity(256) }
    }
}

/// One event's line, written out when the formatter is done with it.
struct Line<'a> {
    out: &'a Out,
    bytes: Vec<u8>,
}

impl std::io::Write for Line<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for Line<'_> {
    fn drop(&mut self) {
        if self.bytes.is_empty() {
            return;
        }
        let mut line = String::from_utf8_lossy(&self.bytes).into_owned();
        HIDDEN.with(|h| {
            if let Some(token) = &*h.borrow() {
                line = line.replace(token.as_str(), "[interaction token]");
            }
        });
        (self.out.sink)(&self.out.redactor.redact(&line));
    }
}

/// The text format: `time level message key=value…`, the values as
/// logfmt writes them, every part on one line.
struct Text;

impl<S, N> FormatEvent<S, N> for Text
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(&self, _: &FmtContext<'_, S, N>, mut out: Writer<'_>, event: &Event<'_>) -> std::fmt::Result {
        let mut fields = Fields::default();
        event.record(&mut fields);
        let level = event.metadata().level().as_str().to_ascii_lowercase();
        let message = crate::base::display::one_line(&fields.message);
        write!(out, "{} {level:<5} {message}", rfc3339(SystemTime::now()))?;
        for (name, value) in &fields.rest {
            write!(out, " {name}={}", logfmt_value(&crate::base::display::one_line(value)))?;
        }
        writeln!(out)
    }
}

/// An event's fields as text, in the order they were written.
#[derive(Default)]
struct Fields {
    message: String,
    rest: Vec<(&'static str, String)>,
}

impl Fields {
    fn put(&mut self, field: &Field, value: String) {
        match field.name() {
            "message" => self.message = value,
            name => self.rest.push((name, value)),
        }
    }
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.put(field, value.to_string());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        let mut text = String::new();
        let _ = write!(text, "{value:?}");
        self.put(field, text);
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

/// The JSON format's `timestamp`, to the millisecond, as the text's.
struct Millis;

impl FormatTime for Millis {
    fn format_time(&self, out: &mut Writer<'_>) -> std::fmt::Result {
        write!(out, "{}", rfc3339(SystemTime::now()))
    }
}

/// `2026-11-23T10:00:00.123Z`: RFC 3339 in UTC, to the millisecond.
fn rfc3339(t: SystemTime) -> String {
    chrono::DateTime::<chrono::Utc>::from(t).to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    /// The lines `log` writes in `format`, with `secret` to redact.
    fn lines(format: LogFormat, secret: &str, log: impl FnOnce()) -> String {
        let out = Arc::new(Mutex::new(String::new()));
        let o = out.clone();
        let sink: Sink = Box::new(move |line| o.lock().unwrap().push_str(line));
        let mut redactor = Redactor::default();
        redactor.add(secret, "[secret]");
        tracing::subscriber::with_default(subscriber(format, redactor, sink), log);
        let text = out.lock().unwrap().clone();
        text
    }

    #[test]
    fn a_line_is_logfmt_on_one_line_and_never_shows_a_secret_or_the_token() {
        let text = lines(LogFormat::Text, "hunter2-secret", || {
            hiding(Some("itoken-secretpart"), || {
                let error = "the platform said: itoken-secretpart and hunter2-secret";
                tracing::warn!(user = "Ada Lovelace", lines = "a\nb", error, ms = 1.5, "sent\nnot");
            });
            tracing::info!(after = "itoken-secretpart", "outside");
        });
        let mut lines = text.lines();
        let first = lines.next().unwrap();
        // A line break is written `\n`, and logfmt quotes that value.
        assert!(first.contains(" warn  sent\\nnot user=\"Ada Lovelace\" lines=\"a\\\\nb\" error="), "{first}");
        assert!(first.ends_with(" ms=1.5"), "{first}");
        assert!(first.contains("[interaction token]") && !first.contains("itoken-secretpart"), "{first}");
        assert!(!first.contains("hunter2-secret"), "{first}");
        // Outside `hiding`, the token is an ordinary value.
        assert!(lines.next().unwrap().ends_with(" info  outside after=itoken-secretpart"));
        assert_eq!(lines.next(), None);
    }

    #[test]
    fn a_json_line_has_its_fields_flat_and_no_secret() {
        let text = lines(LogFormat::Json, "hunter2-secret", || {
            tracing::error!(outcome = "failed", ms = 2.0, error = "key hunter2-secret", "interaction");
        });
        let line: serde_json::Value = serde_json::from_str(text.trim_end()).unwrap();
        assert_eq!((line["level"].as_str(), line["message"].as_str()), (Some("ERROR"), Some("interaction")));
        assert_eq!((line["outcome"].as_str(), line["ms"].as_f64()), (Some("failed"), Some(2.0)));
        assert!(!text.contains("hunter2-secret") && line["timestamp"].as_str().unwrap().ends_with('Z'), "{text}");
    }

    #[test]
    fn events_of_other_crates_are_not_written() {
        let text = lines(LogFormat::Text, "x", || tracing::info!(target: "hyper::proto", "read 5 bytes"));
        assert_eq!(text, "");
    }
}
