//! Keeps secrets out of every output: each secret value is replaced by its
//! slot name wherever it appears in a form that blkc itself produces or that
//! a server commonly echoes: raw, lower-cased (host names), percent-encoded
//! (each of blkc's encode sets, every byte, upper- or lower-case hex),
//! form-encoded, as a URL's user name or password, JSON-escaped, as JSON
//! `\u` escapes, hex, and base64 (also inside a longer base64 text, such as
//! `Basic` credentials).

use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
use base64::Engine as _;
use percent_encoding::{utf8_percent_encode, NON_ALPHANUMERIC};

/// The shortest secret blkc accepts: a shorter one would match ordinary
/// text, and could not be kept out of output reliably.
pub const MIN_SECRET_LEN: usize = 8;

#[derive(Debug, Default, Clone)]
pub struct Redactor {
    /// (text to find, what to write instead), longest first.
    needles: Vec<(String, String)>,
    /// All the needles in one automaton: text is searched once, whatever
    /// the number of forms. Built when first needed (not at each `add`),
    /// and shared by every redactor of the same needles on the thread: a
    /// server's runs redact the same secrets and bot token, and building the
    /// automaton is most of what a short run would cost.
    automaton: std::sync::OnceLock<Option<std::sync::Arc<aho_corasick::AhoCorasick>>>,
}

thread_local! {
    /// The automatons this thread built, by their needles: the few sets a
    /// process redacts (its secrets and bot token, as the trees use them).
    /// A thread's own, so that the runs of a server's many threads never
    /// wait on one another for them.
    static BUILT: std::cell::RefCell<Vec<(Vec<String>, std::sync::Arc<aho_corasick::AhoCorasick>)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// How many automatons [`BUILT`] keeps a thread (the last ones built).
const KEPT_AUTOMATONS: usize = 16;

/// The automaton of `needles` (in their order), built once a thread.
fn automaton_of(needles: &[(String, String)]) -> Option<std::sync::Arc<aho_corasick::AhoCorasick>> {
    if needles.is_empty() {
        return None;
    }
    let same = |kept: &Vec<String>| kept.len() == needles.len() && kept.iter().zip(needles).all(|(k, (n, _))| k == n);
    let found = BUILT.with(|built| built.borrow().iter().find(|(kept, _)| same(kept)).map(|(_, a)| a.clone()));
    if found.is_some() {
        return found;
    }
    let automaton = aho_corasick::AhoCorasick::builder()
        .match_kind(aho_corasick::MatchKind::LeftmostLongest)
        .build(needles.iter().map(|(n, _)| n))
        .ok()
        .map(std::sync::Arc::new)?;
    BUILT.with(|built| {
        let mut built = built.borrow_mut();
        if built.len() >= KEPT_AUTOMATONS {
            built.remove(0);
        }
        built.push((needles.iter().map(|(n, _)| n.clone()).collect(), automaton.clone()));
    });
    Some(automaton)
}

impl Redactor {
    /// Adds a secret, shown as `label` wherever it would appear.
    pub fn add(&mut self, secret: &str, label: &str) {
        if secret.is_empty() {
            return;
        }
        let mut forms = vec![
            secret.to_string(),
            // A host name is lower-cased by the URL parser.
            secret.to_ascii_lowercase(),
            utf8_percent_encode(secret, NON_ALPHANUMERIC).to_string(),
            url::form_urlencoded::byte_serialize(secret.as_bytes()).collect(),
            crate::base::urls::encode_value(secret),
            userinfo_encoded(secret),
            // As JSON writes it: `"` and `\` escaped (`--format json`, bodies).
            json_escaped(secret),
            hex(secret.as_bytes(), false),
            hex(secret.as_bytes(), true),
            every_byte_percent(secret.as_bytes(), false),
            every_byte_percent(secret.as_bytes(), true),
            every_char_unicode_escape(secret, false),
            every_char_unicode_escape(secret, true),
        ];
        // Percent-encoding with lower-case hex digits, as some servers echo it.
        let lower_hex: Vec<String> = forms.iter().filter(|f| f.contains('%')).map(|f| lower_percent_hex(f)).collect();
        forms.extend(lower_hex);
        for engine in [&STANDARD, &STANDARD_NO_PAD, &URL_SAFE, &URL_SAFE_NO_PAD] {
            forms.push(engine.encode(secret));
        }
        forms.extend(base64_cores(secret.as_bytes()));
        for form in forms {
            if !form.is_empty() && !self.needles.iter().any(|(n, _)| *n == form) {
                self.needles.push((form, label.to_string()));
            }
        }
        self.needles.sort_by_key(|(n, _)| std::cmp::Reverse(n.len()));
        self.automaton = std::sync::OnceLock::new();
    }

    fn automaton(&self) -> Option<&aho_corasick::AhoCorasick> {
        self.automaton.get_or_init(|| automaton_of(&self.needles)).as_deref()
    }

    pub fn is_empty(&self) -> bool {
        self.needles.is_empty()
    }

    /// The text with every secret replaced (the longest form wherever two
    /// overlap).
    pub fn redact(&self, text: &str) -> String {
        let Some(automaton) = self.automaton() else { return text.to_string() };
        let labels: Vec<&str> = self.needles.iter().map(|(_, label)| label.as_str()).collect();
        automaton.replace_all(text, &labels)
    }

    /// Redacts every string and key of a JSON document.
    pub fn redact_data(&self, v: &mut crate::base::data::Data) {
        if self.needles.is_empty() {
            return;
        }
        v.each_string_mut(&mut |s| {
            let redacted = self.redact(s);
            if redacted != s.as_str() {
                *s = redacted.into();
            }
        });
    }

    /// Redacts every string inside a JSON value.
    pub fn redact_json(&self, v: &mut serde_json::Value) {
        use serde_json::Value as J;
        match v {
            J::String(s) => *s = self.redact(s),
            J::Array(items) => items.iter_mut().for_each(|i| self.redact_json(i)),
            J::Object(map) => {
                let entries: Vec<_> = std::mem::take(map).into_iter().collect();
                for (k, mut val) in entries {
                    self.redact_json(&mut val);
                    map.insert(self.redact(&k), val);
                }
            }
            _ => {}
        }
    }
}

/// The secret as the URL parser writes it in a URL's user name or password.
fn userinfo_encoded(secret: &str) -> String {
    let Ok(mut url) = url::Url::parse("http://host/") else { return String::new() };
    let _ = url.set_password(Some(secret));
    url.password().unwrap_or_default().to_string()
}

/// The inside of the JSON string holding `secret`.
fn json_escaped(secret: &str) -> String {
    let quoted = serde_json::Value::String(secret.to_string()).to_string();
    quoted[1..quoted.len() - 1].to_string()
}

fn hex(bytes: &[u8], upper: bool) -> String {
    bytes.iter().map(|b| if upper { format!("{b:02X}") } else { format!("{b:02x}") }).collect()
}

/// `%73%65…`: every byte percent-encoded, letters and digits too.
fn every_byte_percent(bytes: &[u8], upper: bool) -> String {
    bytes.iter().map(|b| if upper { format!("%{b:02X}") } else { format!("%{b:02x}") }).collect()
}

/// `\u0073\u0065…`: every character as a JSON unicode escape.
fn every_char_unicode_escape(secret: &str, upper: bool) -> String {
    secret.encode_utf16().map(|u| if upper { format!("\\u{u:04X}") } else { format!("\\u{u:04x}") }).collect()
}

/// The same percent-encoded text with the hex digits after each `%` in
/// lower case.
fn lower_percent_hex(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('%') {
        out.push_str(&rest[..i]);
        let code = rest.get(i..i + 3).unwrap_or(&rest[i..]);
        out.push_str(&code.to_ascii_lowercase());
        rest = &rest[i + code.len()..];
    }
    out.push_str(rest);
    out
}

/// The part of base64 text that encodes `secret` whatever bytes come before
/// and after it: for each of the three alignments, the characters fully
/// determined by the secret's bits. Too short a core would match by chance,
/// so cores under 8 characters are left out.
fn base64_cores(secret: &[u8]) -> Vec<String> {
    let mut cores = Vec::new();
    for pad in 0..3usize {
        for engine in [&STANDARD_NO_PAD, &URL_SAFE_NO_PAD] {
            let mut bytes = vec![0u8; pad];
            bytes.extend_from_slice(secret);
            let encoded = engine.encode(&bytes);
            // Leading characters mixed with the unknown bytes before.
            let skip = match pad {
                0 => 0,
                1 => 2,
                _ => 3,
            };
            // Trailing characters mixed with the unknown bytes after.
            let total = pad + secret.len();
            let full_chars = total / 3 * 4;
            let keep_tail = match total % 3 {
                0 => 0,
                1 => 1,
                _ => 2,
            };
            let end = (full_chars + keep_tail).min(encoded.len());
            if end > skip && end - skip >= 8 {
                cores.push(encoded[skip..end].to_string());
            }
        }
    }
    cores
}
