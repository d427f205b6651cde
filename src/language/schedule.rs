//! When a timed event runs: every interval (`every "15m"`), at a time of
//! day (`at "09:00" in "Europe/Paris"`) or on a cron pattern (`cron "0 9 * *
//! 1-5" in "Europe/Paris"`). The one place that reads a schedule and says
//! when its next tick is; the checker, `blkc run` and `blkc serve` call it.
//!
//! Ticks are instants every process computes alike: an interval's ticks are
//! the multiples of it since the Unix epoch, a time of day's and a cron
//! pattern's are croner's in the time zone (chrono-tz's database, built in,
//! so every machine agrees). A tick is identified by its Unix second.

use std::str::FromStr;

use chrono::{DateTime, TimeZone, Utc};
use chrono_tz::Tz;
use serde::{Deserialize, Serialize};

/// Where the check that a pattern ever comes starts (2026-01-01T00:00Z).
const NEVER_FROM: i64 = 1_767_225_600;

/// The shortest interval.
pub const MIN_INTERVAL: u64 = 60;

/// A schedule, read and checked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Schedule {
    /// Every this many seconds, at the multiples of it since the epoch.
    Every(u64),
    /// A cron pattern (a time of day is one: `09:30` is `30 9 * * *`) in a
    /// time zone (UTC when none is named).
    Cron { pattern: String, zone: String },
}

/// How a file writes a schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    Every,
    At,
    Cron,
}

impl Written {
    pub fn as_str(self) -> &'static str {
        match self {
            Written::Every => "every",
            Written::At => "at",
            Written::Cron => "cron",
        }
    }
}

/// Why a schedule cannot be read: what is wrong, and a help line.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    pub message: String,
    pub help: String,
    /// The time zone was the problem (not the schedule's own text).
    pub in_zone: bool,
}

fn refuse(message: impl Into<String>, help: impl Into<String>) -> Refusal {
    Refusal { message: message.into(), help: help.into(), in_zone: false }
}

/// Reads a schedule as the file writes it.
pub fn read(written: Written, text: &str, zone: Option<&str>) -> Result<Schedule, Refusal> {
    let zone_name = match zone {
        Some(z) => {
            tz(z)?;
            z.to_string()
        }
        None => "UTC".to_string(),
    };
    match written {
        Written::Every => {
            if zone.is_some() {
                return Err(Refusal {
                    message: "an interval runs at the same instants in every time zone".into(),
                    help: "leave out `in …`, or say a time of day: `at \"09:00\" in \"Europe/Paris\"`".into(),
                    in_zone: true,
                });
            }
            let seconds = crate::language::vocab::parse_duration(text)
                .map_err(|why| refuse(why, "write it like `\"15m\"`, `\"2h\"` or `\"1d\"`"))?;
            if seconds < MIN_INTERVAL {
                return Err(refuse(
                    format!("`every \"{text}\"` is shorter than a minute"),
                    "a timed event runs at most once a minute: `every \"1m\"` or longer",
                ));
            }
            Ok(Schedule::Every(seconds))
        }
        Written::At => {
            let (hour, minute) = time_of_day(text)?;
            Ok(Schedule::Cron { pattern: format!("{minute} {hour} * * *"), zone: zone_name })
        }
        Written::Cron => {
            let fields = text.split_whitespace().count();
            if fields != 5 && !text.trim_start().starts_with('@') {
                return Err(refuse(
                    format!("a cron pattern has five fields (minute hour day month weekday), and this has {fields}"),
                    "like `\"0 9 * * 1-5\"`: at 09:00, Monday to Friday",
                ));
            }
            croner::Cron::from_str(text.trim()).map_err(|e| {
                refuse(
                    format!("`{text}` is not a cron pattern: {e}"),
                    "like `\"0 9 * * 1-5\"`: at 09:00, Monday to Friday",
                )
            })?;
            let schedule = Schedule::Cron { pattern: text.trim().to_string(), zone: zone_name };
            // A pattern of a day that does not exist (`0 0 30 2 *`) never comes.
            if schedule.next_after(NEVER_FROM).is_none() {
                return Err(refuse(
                    format!("`{text}` names no time that comes: it would never run"),
                    "check the day and month: February has no 30th",
                ));
            }
            Ok(schedule)
        }
    }
}

/// `HH:MM` (24-hour).
fn time_of_day(text: &str) -> Result<(u32, u32), Refusal> {
    let bad = || {
        refuse(format!("`{text}` is not a time of day"), "write hours and minutes, 24-hour: `\"09:00\"`, `\"18:30\"`")
    };
    let (h, m) = text.trim().split_once(':').ok_or_else(bad)?;
    let (hour, minute): (u32, u32) = (h.parse().map_err(|_| bad())?, m.parse().map_err(|_| bad())?);
    if hour > 23 || minute > 59 || m.len() != 2 || h.is_empty() || h.len() > 2 {
        return Err(bad());
    }
    Ok((hour, minute))
}

/// A time zone of the IANA database, by its name (`Europe/Paris`).
fn tz(name: &str) -> Result<Tz, Refusal> {
    Tz::from_str(name).map_err(|_| {
        let names = chrono_tz::TZ_VARIANTS.iter().map(|z| z.name());
        let help = match crate::base::diagnostics::did_you_mean(name, names) {
            Some(s) => format!("did you mean `{s}`?"),
            None => "name a zone of the IANA database, like `Europe/Paris`, `America/New_York` or `UTC`".into(),
        };
        Refusal { message: format!("`{name}` is not a time zone"), help, in_zone: true }
    })
}

impl Schedule {
    /// The first tick strictly after `after` (Unix seconds), if any comes.
    pub fn next_after(&self, after: i64) -> Option<i64> {
        match self {
            Schedule::Every(seconds) => {
                let step = i64::try_from(*seconds).ok()?;
                Some((after.div_euclid(step) + 1) * step)
            }
            Schedule::Cron { pattern, zone } => {
                let cron = croner::Cron::from_str(pattern).ok()?;
                let zone = Tz::from_str(zone).ok()?;
                let start: DateTime<Tz> =
                    zone.from_utc_datetime(&DateTime::<Utc>::from_timestamp(after, 0)?.naive_utc());
                let next = cron.find_next_occurrence(&start, false).ok()?;
                Some(next.timestamp())
            }
        }
    }

    /// The next `n` ticks after `after`.
    pub fn next_ticks(&self, after: i64, n: usize) -> Vec<i64> {
        let mut out = Vec::with_capacity(n);
        let mut at = after;
        while out.len() < n {
            match self.next_after(at) {
                Some(t) => {
                    out.push(t);
                    at = t;
                }
                None => break,
            }
        }
        out
    }
}

/// A tick's instant as RFC 3339 in UTC (`2026-11-24T09:00:00Z`).
pub fn rfc3339(tick: i64) -> String {
    DateTime::<Utc>::from_timestamp(tick, 0).map_or_else(String::new, |t| t.format("%Y-%m-%dT%H:%M:%SZ").to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> i64 {
        DateTime::parse_from_rfc3339(text).unwrap().timestamp()
    }

    #[test]
    fn intervals_tick_on_their_multiples_since_the_epoch() {
        let s = read(Written::Every, "15m", None).unwrap();
        assert_eq!(s.next_after(at("2026-11-24T10:07:00Z")), Some(at("2026-11-24T10:15:00Z")));
        assert_eq!(s.next_after(at("2026-11-24T10:15:00Z")), Some(at("2026-11-24T10:30:00Z")));
        assert!(read(Written::Every, "30s", None).unwrap_err().message.contains("shorter than a minute"));
        assert!(read(Written::Every, "5m", Some("Europe/Paris")).unwrap_err().in_zone);
    }

    #[test]
    fn a_time_of_day_follows_its_zone_across_summer_time() {
        let s = read(Written::At, "09:00", Some("Europe/Paris")).unwrap();
        // Winter: UTC+1; summer: UTC+2.
        assert_eq!(s.next_after(at("2026-01-10T12:00:00Z")), Some(at("2026-01-11T08:00:00Z")));
        assert_eq!(s.next_after(at("2026-07-10T12:00:00Z")), Some(at("2026-07-11T07:00:00Z")));
        let ticks = s.next_ticks(at("2026-03-27T12:00:00Z"), 3);
        assert_eq!(ticks, [at("2026-03-28T08:00:00Z"), at("2026-03-29T07:00:00Z"), at("2026-03-30T07:00:00Z")]);
        assert!(read(Written::At, "9h", None).unwrap_err().message.contains("not a time of day"));
        assert!(read(Written::At, "24:00", None).is_err());
        let zone = read(Written::At, "09:00", Some("Europe/Pariss")).unwrap_err();
        assert!(zone.in_zone && zone.help.contains("Europe/Paris"), "{zone:?}");
    }

    proptest::proptest! {
        /// Whatever a file writes, reading it and asking for its ticks ends
        /// without a panic (croner, chrono-tz and the duration reader see
        /// the text as written).
        #[test]
        fn any_text_is_read_or_refused(text in "[0-9*/,#LW?@a-zA-Z: -]{0,24}", zone in proptest::option::of("[A-Za-z/_+-]{0,16}")) {
            for written in [Written::Every, Written::At, Written::Cron] {
                if let Ok(s) = read(written, &text, zone.as_deref()) {
                    let _ = s.next_ticks(NEVER_FROM, 3);
                }
            }
        }
    }

    #[test]
    fn a_cron_pattern_is_read_by_croner_in_its_zone() {
        let s = read(Written::Cron, "0 9 * * 1-5", Some("America/New_York")).unwrap();
        // Saturday 2026-11-28: the next weekday is Monday the 30th, 09:00 EST.
        assert_eq!(s.next_after(at("2026-11-28T12:00:00Z")), Some(at("2026-11-30T14:00:00Z")));
        assert!(read(Written::Cron, "0 9 * *", None).unwrap_err().message.contains("five fields"));
        assert!(read(Written::Cron, "0 99 * * *", None).is_err());
        assert!(read(Written::Cron, "0 0 30 2 *", None).unwrap_err().message.contains("never run"));
        assert!(read(Written::Cron, "@yearly", None).is_ok());
        assert_eq!(rfc3339(at("2026-11-30T14:00:00Z")), "2026-11-30T14:00:00Z");
    }
}
