//! A multipart/form-data body (RFC 7578), written by ureq's encoder: the
//! one encoder for an API block's `body multipart` and for a message's
//! files (`discord::message::with_files`).

use std::sync::Arc;

/// One part: its name, its file name for a file, its type, its bytes.
pub struct Part {
    pub name: String,
    pub filename: Option<String>,
    pub media_type: Option<String>,
    pub bytes: Arc<[u8]>,
}

/// A name or file name as the WHATWG form encoder escapes it in a part's
/// header (`"` as `%22`, CR and LF as `%0D` and `%0A`): no value can end
/// its header line or its quote.
pub fn escape(s: &str) -> String {
    s.replace('"', "%22").replace('\r', "%0D").replace('\n', "%0A")
}

/// Whether `text` is a media type: `type/subtype` of token characters
/// (RFC 9110), parameters after a `;`, nothing that could end a header.
pub fn is_media_type(text: &str) -> bool {
    let essence = text.split(';').next().unwrap_or_default().trim();
    let token = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(&b));
    essence.split_once('/').is_some_and(|(a, b)| token(a) && token(b))
        && !text.contains(['\r', '\n'])
        && text.parse::<ureq::http::HeaderValue>().is_ok()
}

/// The body and its `Content-Type` with the boundary; names and file
/// names escaped ([`escape`]); a type that is no media type is refused,
/// with the place of its part.
pub fn encode(parts: &[Part]) -> Result<(Vec<u8>, String), (usize, String)> {
    use std::io::Read as _;
    let escaped: Vec<(String, Option<String>)> =
        parts.iter().map(|p| (escape(&p.name), p.filename.as_deref().map(escape))).collect();
    let mut form = ureq::unversioned::multipart::Form::new();
    for (n, (part, (name, filename))) in parts.iter().zip(&escaped).enumerate() {
        let mut encoded = ureq::unversioned::multipart::Part::bytes(&part.bytes);
        if let Some(f) = filename {
            encoded = encoded.file_name(f);
        }
        if let Some(t) = &part.media_type {
            if !is_media_type(t) {
                return Err((n, format!("its type `{}` is not a media type", t.escape_debug())));
            }
            encoded = encoded.mime_str(t).map_err(|e| (n, e.to_string()))?;
        }
        form = form.part(name, encoded);
    }
    let content_type = format!("multipart/form-data; boundary={}", form.boundary());
    let mut bytes = Vec::new();
    form.read_to_end(&mut bytes).map_err(|e| (parts.len(), e.to_string()))?;
    Ok((bytes, content_type))
}
