//! The files serve uploads with its messages, as the stand-in keeps them:
//! read from the multipart body (by multer, the parser axum uses), each
//! given an address on the page (`/play/files/ID`), and the message's
//! `attachments` and `attachment://NAME` addresses rewritten to it, as the
//! platform answers with its CDN's. Kept in memory within a budget (the
//! oldest go first); served to the page as an image when it is one of the
//! platform's image types, else as a download, never as a page of its own.

use std::collections::VecDeque;
use std::sync::Mutex;

use hyper::body::Bytes;
use serde_json::{json, Value};

/// The most bytes of files kept; past it, the oldest are dropped.
const KEPT_BYTES: usize = 256 << 20;
/// The largest upload serve may send: 10 files at the platform's limit,
/// and the message.
pub const MAX_UPLOAD: usize =
    crate::discord::limits::FILES * (crate::discord::limits::UPLOAD_BYTES as usize) + (1 << 20);
/// The types the page shows as images (not SVG, which is a document).
const IMAGES: &[&str] = &["image/png", "image/jpeg", "image/gif", "image/webp"];

/// A file of an upload.
pub struct Upload {
    /// Its part's name (`files[n]`).
    pub part: String,
    pub filename: String,
    pub media_type: String,
    pub bytes: Bytes,
}

struct Kept {
    id: u64,
    filename: String,
    media_type: String,
    bytes: Bytes,
}

#[derive(Default)]
pub struct Uploads {
    kept: Mutex<(VecDeque<Kept>, usize)>,
}

/// A multipart body's `payload_json` and files; `None` when it is not one
/// (then nothing is kept).
pub async fn read(content_type: &str, body: Bytes) -> Option<(Bytes, Vec<Upload>)> {
    let boundary = multer::parse_boundary(content_type).ok()?;
    let mut form = multer::Multipart::with_reader(std::io::Cursor::new(body), boundary);
    let (mut payload, mut files) = (Bytes::new(), Vec::new());
    while let Some(field) = form.next_field().await.ok()? {
        let part = field.name().unwrap_or_default().to_string();
        let filename = field.file_name().map(str::to_string);
        let media_type = field.content_type().map(|m| m.to_string());
        let bytes = field.bytes().await.ok()?;
        match filename {
            _ if part == "payload_json" => payload = bytes,
            Some(filename) => files.push(Upload {
                part,
                filename,
                media_type: media_type.unwrap_or_else(|| "application/octet-stream".into()),
                bytes,
            }),
            None => {}
        }
    }
    Some((payload, files))
}

impl Uploads {
    /// Keeps `files` of `message` and rewrites the message as the platform
    /// answers it: each of its `attachments` with its address, name, type
    /// and size, and every `attachment://NAME` in it made that address.
    pub fn keep(&self, message: &mut Value, files: Vec<Upload>, next_id: &mut dyn FnMut() -> u64) {
        let listed = message["attachments"].as_array().cloned().unwrap_or_default();
        let mut attachments = Vec::new();
        let mut addresses = Vec::new();
        for file in files {
            // `files[n]` is listed with id `n` in `attachments`.
            let n = file.part.strip_prefix("files[").and_then(|p| p.strip_suffix(']')).unwrap_or_default();
            let about = listed
                .iter()
                .find(|a| a["id"].as_str() == Some(n) || a["id"].as_u64().map(|i| i.to_string()).as_deref() == Some(n));
            let id = next_id();
            let url = format!("/play/files/{id}");
            let mut attachment = json!({
                "id": id.to_string(), "filename": file.filename, "content_type": file.media_type,
                "size": file.bytes.len(), "url": url,
            });
            if let Some(about) = about {
                for field in ["description", "is_spoiler"] {
                    if !about[field].is_null() {
                        attachment[field] = about[field].clone();
                    }
                }
            }
            addresses.push((format!("attachment://{}", file.filename), url));
            attachments.push(attachment);
            self.store(Kept { id, filename: file.filename, media_type: file.media_type, bytes: file.bytes });
        }
        rewrite(message, &addresses);
        message["attachments"] = Value::Array(attachments);
    }

    fn store(&self, file: Kept) {
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        kept.1 += file.bytes.len();
        kept.0.push_back(file);
        while kept.1 > KEPT_BYTES {
            let Some(old) = kept.0.pop_front() else { break };
            kept.1 -= old.bytes.len();
        }
    }

    /// File `id`: its type as the page is given it (an image's own, else a
    /// download's), its name, and its bytes.
    pub fn get(&self, id: &str) -> Option<(&'static str, String, Bytes)> {
        let id: u64 = id.parse().ok()?;
        let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        let file = kept.0.iter().find(|f| f.id == id)?;
        let essence = crate::base::media::essence(&file.media_type);
        let shown = IMAGES.iter().find(|t| **t == essence).copied().unwrap_or("application/octet-stream");
        Some((shown, file.filename.clone(), file.bytes.clone()))
    }
}

/// Every string of `value` that is one of `addresses`' `attachment://NAME`
/// made its address.
fn rewrite(value: &mut Value, addresses: &[(String, String)]) {
    match value {
        Value::String(s) => {
            if let Some((_, url)) = addresses.iter().find(|(a, _)| a == s) {
                *s = url.clone();
            }
        }
        Value::Array(list) => list.iter_mut().for_each(|v| rewrite(v, addresses)),
        Value::Object(fields) => fields.values_mut().for_each(|v| rewrite(v, addresses)),
        _ => {}
    }
}
