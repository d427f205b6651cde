//! A message as blkc sends it, held to the platform's published shape: the
//! schemas of its API description (tests/fixtures/platform/message-schemas.json,
//! taken from discord/discord-api-spec), read by the JSON Schema keywords
//! they use. Stricter than the description in one way: a field it does not
//! name is a mistake (a misspelt field is silently dropped by the
//! platform, which is how a bot loses what it meant to send).

use serde_json::Value;

fn description() -> &'static Value {
    static DESCRIPTION: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    DESCRIPTION.get_or_init(|| {
        serde_json::from_str(include_str!("../fixtures/platform/message-schemas.json")).expect("the schemas")
    })
}

/// Whether `value` is a `kind` of the fixture's roots ("channel message",
/// "edit", "answer", "update", "follow-up", "edit of an answer", "form"),
/// else every way it is not.
pub fn check(kind: &str, value: &Value) -> Result<(), Vec<String>> {
    let name = description()["roots"][kind].as_str().unwrap_or_else(|| panic!("no root {kind}"));
    let mut problems = Vec::new();
    valid(&schema(name), value, "", &mut problems);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

/// Asserts [`check`], saying every way it is not.
pub fn assert_shape(kind: &str, value: &Value) {
    if let Err(problems) = check(kind, value) {
        panic!("not a {kind} as the platform describes one:\n  {}\n{value:#}", problems.join("\n  "));
    }
}

fn schema(name: &str) -> Value {
    description()["schemas"][name].clone()
}

fn valid(s: &Value, v: &Value, at: &str, out: &mut Vec<String>) {
    if let Some(r) = s["$ref"].as_str() {
        return valid(&schema(r.rsplit('/').next().unwrap_or_default()), v, at, out);
    }
    for part in s["allOf"].as_array().into_iter().flatten() {
        valid(part, v, at, out);
    }
    if let Some(options) = s["oneOf"].as_array() {
        let fits: Vec<Vec<String>> = options
            .iter()
            .map(|o| {
                let mut p = Vec::new();
                valid(o, v, at, &mut p);
                p
            })
            .collect();
        match fits.iter().filter(|p| p.is_empty()).count() {
            1 => {}
            0 => {
                // The nearest miss says most.
                let nearest = fits.into_iter().min_by_key(Vec::len).unwrap_or_default();
                out.push(format!("{at}: none of its {} forms fits; nearest: {}", options.len(), nearest.join("; ")));
            }
            n => out.push(format!("{at}: fits {n} of its forms")),
        }
    }
    if !type_fits(&s["type"], v) {
        out.push(format!("{at}: is {v}, not of type {}", s["type"]));
        return;
    }
    if let Some(allowed) = s["enum"].as_array() {
        if !allowed.contains(v) {
            out.push(format!("{at}: {v} is not one of {}", s["enum"]));
        }
    }
    if !s["const"].is_null() && s["const"] != *v {
        out.push(format!("{at}: {v} is not {}", s["const"]));
    }
    match v {
        Value::String(text) => string(s, text, at, out),
        Value::Number(n) => {
            let n = n.as_f64().unwrap_or_default();
            if s["minimum"].as_f64().is_some_and(|m| n < m) || s["maximum"].as_f64().is_some_and(|m| n > m) {
                out.push(format!("{at}: {n} is outside {}..{}", s["minimum"], s["maximum"]));
            }
        }
        Value::Array(items) => {
            let n = items.len() as u64;
            if s["minItems"].as_u64().is_some_and(|m| n < m) || s["maxItems"].as_u64().is_some_and(|m| n > m) {
                out.push(format!("{at}: {n} items, outside {}..{}", s["minItems"], s["maxItems"]));
            }
            for (i, item) in items.iter().enumerate() {
                valid(&s["items"], item, &format!("{at}[{i}]"), out);
            }
        }
        Value::Object(fields) => object(s, fields, at, out),
        _ => {}
    }
}

fn string(s: &Value, text: &str, at: &str, out: &mut Vec<String>) {
    let n = text.chars().count() as u64;
    if s["minLength"].as_u64().is_some_and(|m| n < m) || s["maxLength"].as_u64().is_some_and(|m| n > m) {
        out.push(format!("{at}: {n} characters, outside {}..{}", s["minLength"], s["maxLength"]));
    }
    if let Some(re) = s["pattern"].as_str().and_then(|p| regex::Regex::new(p).ok()) {
        if !re.is_match(text) {
            out.push(format!("{at}: {text:?} does not match {re}"));
        }
    }
}

fn object(s: &Value, fields: &serde_json::Map<String, Value>, at: &str, out: &mut Vec<String>) {
    let properties = s["properties"].as_object();
    for need in s["required"].as_array().into_iter().flatten().filter_map(Value::as_str) {
        if !fields.contains_key(need) {
            out.push(format!("{at}: lacks `{need}`"));
        }
    }
    // (A schema of `allOf`/`oneOf` parts names its fields in them.)
    let Some(properties) = properties else { return };
    for (k, v) in fields {
        match properties.get(k) {
            Some(p) => valid(p, v, &format!("{at}.{k}"), out),
            None => out.push(format!("{at}: has `{k}`, which the description does not name")),
        }
    }
}

fn type_fits(t: &Value, v: &Value) -> bool {
    let one = |t: &str| match t {
        "null" => v.is_null(),
        "boolean" => v.is_boolean(),
        "integer" => v.is_i64() || v.is_u64(),
        "number" => v.is_number(),
        "string" => v.is_string(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        _ => true,
    };
    match t {
        Value::String(t) => one(t),
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).any(one),
        _ => true,
    }
}
