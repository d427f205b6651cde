//! Every payload `blkc deploy` can produce, held to the platform's published
//! limits for application commands: each deploy fixture and each example,
//! registered with `--dry-run`, is read here as the platform would read it.
//!
//! The rules are written out again from the platform's reference, on
//! purpose: an oracle that called blkc's own checker would hold it to
//! itself. (The name pattern is the reference's, as written there.)

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

const NAME: &str = r"^[-_'\p{L}\p{N}\p{sc=Deva}\p{sc=Thai}]{1,32}$";

const LOCALES: &[&str] = &[
    "id", "da", "de", "en-GB", "en-US", "es-ES", "es-419", "fr", "hr", "it", "lt", "hu", "nl", "no", "pl", "pt-BR",
    "ro", "fi", "sv-SE", "vi", "tr", "cs", "el", "bg", "ru", "uk", "hi", "th", "zh-CN", "ja", "zh-TW", "ko",
];

fn chars(v: &Value) -> usize {
    v.as_str().map_or(0, |s| s.chars().count())
}

/// Whether `name` is a slash command's or an option's name.
fn slash_name(name: &str) -> bool {
    let lower = name.chars().all(|c| c.to_lowercase().eq(std::iter::once(c)));
    regex::Regex::new(NAME).unwrap().is_match(name) && lower
}

/// The longest of a field and its localizations, as the 8,000 counts it.
fn longest(object: &Value, field: &str) -> usize {
    let own = chars(&object[field]);
    let localized = object[format!("{field}_localizations")].as_object();
    localized.into_iter().flatten().map(|(_, v)| chars(v)).fold(own, usize::max)
}

/// What the platform would refuse in one command, in words.
fn problems(command: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let mut bad = |ok: bool, what: String| {
        if !ok {
            out.push(what);
        }
    };
    let kind = command["type"].as_u64().unwrap_or(0);
    let name = command["name"].as_str().unwrap_or_default();
    bad(matches!(kind, 1..=3), format!("type {kind}"));
    let options = command["options"].as_array().cloned().unwrap_or_default();
    if kind == 1 {
        bad(slash_name(name), format!("name {name:?}"));
        bad((1..=100).contains(&chars(&command["description"])), "description length".into());
        bad(options.len() <= 25, "more than 25 options".into());
    } else {
        bad((1..=32).contains(&name.chars().count()), format!("menu name {name:?}"));
        bad(command["description"] == "", "a menu command's description".into());
        bad(options.is_empty(), "a menu command's options".into());
    }
    if let Some(p) = command.get("default_member_permissions") {
        bad(p.as_str().is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())), "permissions".into());
    }
    let within = |key: &str, max: u64| {
        command
            .get(key)
            .is_none_or(|v| v.as_array().is_some_and(|a| a.iter().all(|x| x.as_u64().is_some_and(|x| x <= max))))
    };
    bad(within("contexts", 2), "contexts".into());
    bad(within("integration_types", 1), "integration_types".into());
    bad(command.get("nsfw").is_none_or(Value::is_boolean), "nsfw".into());
    localizations(command, kind == 1, &mut bad);
    let size = longest(command, "name") + longest(command, "description") + level(&options, 0, &mut bad);
    bad(size <= 8000, format!("{size} characters"));
    out
}

/// A level of options: a command's (`depth` 0), a group's (1) or a
/// subcommand's. Subcommands (type 1) and groups (2) stand alone at a
/// level, a group only at the command's, and hold up to 25 each; the
/// characters toward the 8,000.
fn level(options: &[Value], depth: usize, bad: &mut impl FnMut(bool, String)) -> usize {
    let kinds: Vec<u64> = options.iter().map(|o| o["type"].as_u64().unwrap_or(0)).collect();
    let subs = kinds.iter().filter(|k| matches!(k, 1 | 2)).count();
    bad(subs == 0 || subs == kinds.len(), "subcommands mixed with options".into());
    bad(options.len() <= 25, "more than 25 options".into());
    let mut size = 0;
    let mut optional = false;
    for (o, kind) in options.iter().zip(kinds) {
        if !matches!(kind, 1 | 2) {
            size += option(o, bad, &mut optional);
            continue;
        }
        let allowed = if kind == 2 { depth == 0 } else { depth < 2 };
        bad(allowed, format!("a {} at depth {depth}", if kind == 2 { "group" } else { "subcommand" }));
        bad(slash_name(o["name"].as_str().unwrap_or_default()), format!("subcommand name {}", o["name"]));
        bad((1..=100).contains(&chars(&o["description"])), "subcommand description".into());
        bad(o.get("required").is_none_or(|r| r == false), "a required subcommand".into());
        localizations(o, true, bad);
        let inner = o["options"].as_array().cloned().unwrap_or_default();
        if kind == 2 {
            bad(
                !inner.is_empty() && inner.iter().all(|i| i["type"] == 1),
                "a group of anything but subcommands".into(),
            );
        }
        size += longest(o, "name") + longest(o, "description") + level(&inner, depth + 1, bad);
    }
    size
}

fn localizations(object: &Value, slash: bool, bad: &mut impl FnMut(bool, String)) {
    for field in ["name", "description"] {
        for (locale, text) in object[format!("{field}_localizations")].as_object().into_iter().flatten() {
            bad(LOCALES.contains(&locale.as_str()), format!("locale {locale}"));
            let ok = match (field, slash) {
                ("name", true) => slash_name(text.as_str().unwrap_or_default()),
                _ => (1..=if field == "name" { 32 } else { 100 }).contains(&chars(text)),
            };
            bad(ok, format!("{field} in {locale}: {text}"));
        }
    }
}

/// One option's problems; its characters toward the 8,000.
fn option(o: &Value, bad: &mut impl FnMut(bool, String), optional: &mut bool) -> usize {
    let kind = o["type"].as_u64().unwrap_or(0);
    bad((3..=11).contains(&kind), format!("option type {kind}"));
    bad(o.get("options").is_none(), "options of an option".into());
    bad(slash_name(o["name"].as_str().unwrap_or_default()), format!("option name {}", o["name"]));
    bad((1..=100).contains(&chars(&o["description"])), "option description".into());
    let required = o["required"].as_bool().unwrap_or(false);
    bad(!(required && *optional), "a required option after an optional one".into());
    *optional |= !required;
    let choices = o["choices"].as_array().cloned().unwrap_or_default();
    if o.get("autocomplete").is_some_and(|a| a == true) {
        bad(matches!(kind, 3 | 4 | 10) && choices.is_empty(), "autocomplete on a type or with choices".into());
    }
    bad(choices.is_empty() || matches!(kind, 3 | 4 | 10), "choices on a type that takes none".into());
    bad(choices.len() <= 25, "more than 25 choices".into());
    let mut size = longest(o, "name") + longest(o, "description");
    for c in &choices {
        bad((1..=100).contains(&chars(&c["name"])), "choice name".into());
        let value = &c["value"];
        let ok = match kind {
            3 => (1..=100).contains(&chars(value)),
            4 => value.as_i64().is_some_and(|n| n.unsigned_abs() < 1 << 53),
            _ => value.as_f64().is_some_and(|n| n.abs() <= 9_007_199_254_740_992.0),
        };
        bad(ok, format!("choice value {value}"));
        size += chars(&c["name"]) + if value.is_string() { chars(value) } else { value.to_string().len() };
    }
    let numbers = ["min_value", "max_value"].iter().any(|k| o.get(*k).is_some());
    bad(!numbers || matches!(kind, 4 | 10), "min_value or max_value on a type that takes none".into());
    for (key, least) in [("min_length", 0), ("max_length", 1)] {
        if let Some(n) = o.get(key) {
            bad(kind == 3 && n.as_u64().is_some_and(|n| (least..=6000).contains(&n)), format!("{key} {n}"));
        }
    }
    if let Some(types) = o.get("channel_types") {
        let known = |t: &Value| t.as_u64().is_some_and(|t| matches!(t, 0..=5 | 10..=16));
        bad(kind == 7 && types.as_array().is_some_and(|t| t.iter().all(known)), "channel_types".into());
    }
    // The platform's File Type Filtering: a group or a dot-prefixed
    // extension, at most 10, on an attachment option.
    if let Some(types) = o.get("file_types") {
        let known = |t: &Value| {
            t.as_str().is_some_and(|t| matches!(t, "image" | "video" | "audio") || t.starts_with('.') && t.len() > 1)
        };
        let listed = types.as_array().is_some_and(|t| t.len() <= 10 && t.iter().all(known));
        bad(kind == 11 && listed, "file_types".into());
    }
    localizations(o, true, bad);
    size
}

fn deployable() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in ["tests/fixtures/deploy", "examples"] {
        for entry in std::fs::read_dir(Path::new(ROOT).join(dir)).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if name.ends_with(".blk") && !name.starts_with("err_") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

#[test]
fn every_payload_deploy_makes_is_one_the_platform_takes() {
    let mut kinds = [0usize; 4];
    let (mut seen, mut groups, mut autocompletes) = (0, 0, 0);
    for file in deployable() {
        let out = Command::new(env!("CARGO_BIN_EXE_blkc"))
            .args(["deploy", "--dry-run"])
            .arg(&file)
            .env_remove("BLKC_BOT_TOKEN")
            .env_remove("BLKC_APPLICATION_ID")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}: {}", file.display(), String::from_utf8_lossy(&out.stderr));
        let payload: Value = serde_json::from_slice(&out.stdout).unwrap();
        let commands = payload.as_array().unwrap();
        let mut per_type = [0usize; 4];
        for c in commands {
            let text = c.to_string();
            groups += text.matches("\"type\":2,").count() * usize::from(c["type"] == 1);
            autocompletes += text.matches("\"autocomplete\":true").count();
            let problems = problems(c);
            assert!(problems.is_empty(), "{}: {} {problems:?}", file.display(), c["name"]);
            let kind = c["type"].as_u64().unwrap() as usize;
            per_type[kind] += 1;
            let twin = commands.iter().filter(|d| d["type"] == c["type"] && d["name"] == c["name"]).count();
            assert_eq!(twin, 1, "{}: {} twice", file.display(), c["name"]);
        }
        assert!(per_type[1] <= 100 && per_type[2] <= 5 && per_type[3] <= 5, "{}: {per_type:?}", file.display());
        (0..4).for_each(|k| kinds[k] += per_type[k]);
        seen += commands.len();
    }
    // Every kind of command was held to them.
    assert!(kinds[1] > 10 && kinds[2] > 0 && kinds[3] > 0, "{kinds:?}");
    assert!(groups > 0 && autocompletes > 0, "{groups} groups, {autocompletes} autocompleted options");
    assert!(seen > 15);
}

/// The oracle itself refuses what the platform does: a test that cannot
/// fail proves nothing.
#[test]
fn the_limits_refuse_what_the_platform_refuses() {
    let ok = serde_json::json!({ "type": 1, "name": "café", "description": "x", "options": [] });
    assert!(problems(&ok).is_empty());
    for (key, value) in [
        ("name", serde_json::json!("Café")),
        ("name", serde_json::json!("ping pong")),
        ("description", serde_json::json!("")),
        ("contexts", serde_json::json!([3])),
        ("name_localizations", serde_json::json!({ "fr-FR": "café" })),
        ("options", serde_json::json!([{ "type": 3, "name": "a", "description": "x", "min_value": 1 }])),
        ("options", serde_json::json!([{ "type": 3, "name": "a", "description": "x", "channel_types": [0] }])),
        // A subcommand beside an option; a group in a group; autocomplete
        // on a boolean.
        (
            "options",
            serde_json::json!([{ "type": 1, "name": "s", "description": "x" }, { "type": 3, "name": "a", "description": "x" }]),
        ),
        (
            "options",
            serde_json::json!([{ "type": 2, "name": "g", "description": "x", "options": [
                { "type": 2, "name": "h", "description": "x", "options": [{ "type": 1, "name": "s", "description": "x" }] }
            ] }]),
        ),
        ("options", serde_json::json!([{ "type": 5, "name": "a", "description": "x", "autocomplete": true }])),
        (
            "options",
            serde_json::json!([{ "type": 4, "name": "a", "description": "x", "choices": [{ "name": "n", "value": 9_007_199_254_740_992_u64 }] }]),
        ),
    ] {
        let mut bad = ok.clone();
        bad[key] = value;
        assert!(!problems(&bad).is_empty(), "{bad}");
    }
}
