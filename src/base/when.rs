//! Times and durations as values: how a time is read from a value (RFC
//! 3339 text, a date, or a number of seconds since 1970), how it is written
//! (RFC 3339 in UTC, to the second), the platform's timestamp markup
//! (`<t:1700000000:R>`, drawn in each reader's own zone and language), and
//! a pattern (`%Y-%m-%d %H:%M`, chrono's strftime) in a zone of the IANA
//! database. Durations are [`crate::language::vocab::parse_duration`]'s
//! one rule, which this module does not repeat.

use serde_json::Value as Json;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

/// The platform's timestamp styles (its reference, "Timestamp Styles"),
/// with what each shows; `f` is the platform's default.
pub const STYLES: [(char, &str); 9] = [
    ('t', "short time: 16:20"),
    ('T', "medium time: 16:20:30"),
    ('d', "short date: 20/04/2021"),
    ('D', "long date: April 20, 2021"),
    ('f', "long date, short time: April 20, 2021 at 16:20"),
    ('F', "full date, short time: Tuesday, April 20, 2021 at 16:20"),
    ('s', "short date, short time: 20/04/2021, 16:20"),
    ('S', "short date, medium time: 20/04/2021, 16:20:30"),
    ('R', "relative: in 3 hours, 4 years ago"),
];

/// The earliest and latest times blkc reads: years 1 to 9999, what RFC 3339
/// can write.
const MIN_UNIX: i64 = -62_135_596_800;
const MAX_UNIX: i64 = 253_402_300_799;

/// A value as a time: RFC 3339 text (`2026-11-28T09:00:00Z`, any offset),
/// a date (`2026-11-28`, midnight UTC), or seconds since 1970 (a number, or
/// text that holds one). Why not, in words, otherwise.
pub fn time_of(value: &Json) -> Result<OffsetDateTime, String> {
    let text = match value {
        Json::Number(n) => n.as_str().to_string(),
        Json::String(s) => s.trim().to_string(),
        Json::Null => return Err("null".into()),
        Json::Bool(b) => return Err(b.to_string()),
        Json::Array(_) => return Err("a list".into()),
        Json::Object(_) => return Err("an object".into()),
    };
    if crate::base::values::is_json_number(&text) {
        let seconds: f64 = text.parse().map_err(|_| shown(&text))?;
        if !(MIN_UNIX as f64..=MAX_UNIX as f64).contains(&seconds) {
            return Err(format!("{} seconds since 1970, past the year 9999", shown(&text)));
        }
        return OffsetDateTime::from_unix_timestamp(seconds.floor() as i64).map_err(|_| shown(&text));
    }
    if let Ok(t) = OffsetDateTime::parse(&text, &Rfc3339) {
        return Ok(t);
    }
    let date = time::format_description::parse_borrowed::<2>("[year]-[month]-[day]").ok();
    if let Some(date) = date.and_then(|f| time::Date::parse(&text, &f).ok()) {
        return Ok(date.midnight().assume_utc());
    }
    Err(if text.is_empty() { "empty".into() } else { shown(&text) })
}

fn shown(text: &str) -> String {
    let cut: String = text.chars().take(40).collect();
    if cut.len() < text.len() {
        format!("\"{cut}…\"")
    } else {
        format!("\"{cut}\"")
    }
}

/// A time as blkc writes it: RFC 3339 in UTC, to the second.
pub fn written(t: OffsetDateTime) -> String {
    let t = t.to_offset(time::UtcOffset::UTC);
    let t = t.replace_nanosecond(0).unwrap_or(t);
    t.format(&Rfc3339).unwrap_or_default()
}

/// `t` moved by `seconds` (back when negative), within the years blkc
/// reads.
pub fn moved(t: OffsetDateTime, seconds: i64) -> Result<OffsetDateTime, String> {
    t.checked_add(time::Duration::seconds(seconds))
        .filter(|t| (MIN_UNIX..=MAX_UNIX).contains(&t.unix_timestamp()))
        .ok_or_else(|| "a time past the year 9999 or before the year 1".to_string())
}

/// The platform's markup for `t` in `style` (one of [`STYLES`]).
pub fn markup(t: OffsetDateTime, style: char) -> String {
    format!("<t:{}:{style}>", t.unix_timestamp())
}

/// Whether `pattern` is a strftime pattern chrono can write (every `%`
/// followed by a specifier it knows); the specifier it cannot, otherwise.
pub fn pattern_ok(pattern: &str) -> Result<(), String> {
    use chrono::format::{Item, StrftimeItems};
    match StrftimeItems::new(pattern).find(|i| matches!(i, Item::Error)) {
        None => Ok(()),
        Some(_) => Err("a `%` that starts no specifier chrono knows (`%Y`, `%m`, `%d`, `%H`, `%M`, `%S`, `%A`, `%B`…; `%%` is a `%`)".into()),
    }
}

/// Whether `zone` is a zone of the IANA database (`Europe/Paris`, `UTC`).
pub fn zone_ok(zone: &str) -> bool {
    zone.parse::<chrono_tz::Tz>().is_ok()
}

/// `t` written with a strftime `pattern`, in `zone` (UTC without one). A
/// pattern or zone [`pattern_ok`] and [`zone_ok`] refuse writes nothing
/// (the checker has refused them first).
pub fn format(t: OffsetDateTime, pattern: &str, zone: Option<&str>) -> String {
    use chrono::TimeZone as _;
    if pattern_ok(pattern).is_err() {
        return String::new();
    }
    let tz: chrono_tz::Tz = zone.and_then(|z| z.parse().ok()).unwrap_or(chrono_tz::UTC);
    match tz.timestamp_opt(t.unix_timestamp(), 0).single() {
        Some(local) => {
            let mut out = String::new();
            // (Written into a String: a pattern chrono cannot write is
            // an error here, never a panic.)
            let _ = std::fmt::Write::write_fmt(&mut out, format_args!("{}", local.format(pattern)));
            out
        }
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn times_are_read_from_text_dates_and_seconds() {
        let at = |v: Json| time_of(&v).map(written);
        assert_eq!(at(json!("2026-11-28T10:30:00+01:00")), Ok("2026-11-28T09:30:00Z".into()));
        assert_eq!(at(json!("2026-11-28T09:30:00.999Z")), Ok("2026-11-28T09:30:00Z".into()));
        assert_eq!(at(json!("2026-11-28")), Ok("2026-11-28T00:00:00Z".into()));
        assert_eq!(at(json!(1700000000)), Ok("2023-11-14T22:13:20Z".into()));
        assert_eq!(at(json!("1700000000.9")), Ok("2023-11-14T22:13:20Z".into()));
        assert_eq!(at(json!(-1)), Ok("1969-12-31T23:59:59Z".into()));
        assert_eq!(at(json!("tomorrow")), Err("\"tomorrow\"".into()));
        assert_eq!(at(json!("")), Err("empty".into()));
        assert_eq!(at(json!(null)), Err("null".into()));
        assert!(at(json!(1e300)).unwrap_err().contains("past the year 9999"));
        let t = time_of(&json!("2026-11-28T09:30:00Z")).unwrap();
        assert_eq!(moved(t, 9000).map(written), Ok("2026-11-28T12:00:00Z".into()));
        assert!(moved(t, i64::MAX / 2).is_err());
        assert_eq!(markup(t, 'R'), "<t:1795858200:R>");
    }

    #[test]
    fn patterns_write_in_a_zone_and_a_wrong_one_is_said() {
        let t = time_of(&json!("2026-07-01T09:05:00Z")).unwrap();
        assert_eq!(format(t, "%Y-%m-%d %H:%M", None), "2026-07-01 09:05");
        assert_eq!(format(t, "%A %-d %B, %H:%M", Some("Europe/Paris")), "Wednesday 1 July, 11:05");
        assert_eq!(format(t, "%H:%M %Z", Some("America/New_York")), "05:05 EDT");
        assert!(pattern_ok("%Y-%m-%d").is_ok());
        assert!(pattern_ok("100%").is_err());
        assert!(pattern_ok("%Q").is_err());
        assert_eq!(format(t, "%Q", None), "");
        assert!(zone_ok("Asia/Tokyo") && zone_ok("UTC") && !zone_ok("Mars/Olympus"));
    }
}
