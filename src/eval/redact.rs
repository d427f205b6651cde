//! Keeps secrets out of every output: each secret value is replaced by its
//! slot name wherever it appears raw, percent-encoded or base64-encoded
//! (also inside a longer base64 text, such as `Basic` credentials).

use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
use base64::Engine as _;
use percent_encoding::{utf8_percent_encode, NON_ALPHANUMERIC};

#[derive(Debug, Default, Clone)]
pub struct Redactor {
    /// (text to find, what to write instead), longest first.
    needles: Vec<(String, String)>,
}

impl Redactor {
    /// Adds a secret, shown as `label` wherever it would appear.
    pub fn add(&mut self, secret: &str, label: &str) {
        if secret.is_empty() {
            return;
        }
        let mut forms = vec![
            secret.to_string(),
            utf8_percent_encode(secret, NON_ALPHANUMERIC).to_string(),
            url::form_urlencoded::byte_serialize(secret.as_bytes()).collect(),
            super::render::escape_segment(secret),
            super::render::escape_query(secret),
        ];
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
    }

    pub fn is_empty(&self) -> bool {
        self.needles.is_empty()
    }

    /// The text with every secret replaced.
    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_string();
        for (needle, label) in &self.needles {
            if out.contains(needle.as_str()) {
                out = out.replace(needle.as_str(), label);
            }
        }
        out
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
