//! Rules on the files a message carries (`file "report.pdf"`): their
//! settings, at most 10 a message, one name each, never in an `update`, and
//! every `attachment://NAME` of the message naming one of them (B434).
//! Where each file's bytes come from is `references`' (B153).

use crate::base::diagnostics::{Code, Diagnostic, Findings};
use crate::discord::limits;
use crate::language::ast::{setting, EmbedItem, FileSource, Reply, ReplyFile, ReplyItem, SettingValue, Template};
use crate::language::vocab::{self, EmbedPart};

pub fn check(r: &Reply, out: &mut Findings) {
    let files: Vec<&ReplyFile> = r.files().collect();
    for (n, f) in files.iter().enumerate() {
        one(f, out);
        if n == limits::FILES {
            out.push(
                Diagnostic::new(Code::TooManyComponents, "a message carries at most 10 files")
                    .label(f.keyword, "the 11th")
                    .help("send the rest in another reply, or put them in one archive"),
            );
        }
        if r.update {
            out.push(
                Diagnostic::new(Code::MisplacedUpdate, "an `update` cannot carry files")
                    .label(f.keyword, "a file in an edit")
                    .help("send the file in a new message: `reply { file … }`"),
            );
        }
    }
    let names: Vec<Option<String>> = files.iter().map(|f| f.literal_name()).collect();
    for (i, name) in names.iter().enumerate() {
        let Some(name) = name else { continue };
        if let Some(first) = names[..i].iter().position(|n| n.as_ref() == Some(name)) {
            out.push(
                Diagnostic::new(Code::ReplyPartTwice, format!("two files of this message are named `{name}`"))
                    .label(files[i].keyword, "named again here")
                    .related(files[first].keyword, "first here")
                    .help("give one a `filename \"…\"` of its own: `attachment://NAME` names one file"),
            );
        }
    }
    // A file whose name a value fills may be any: only literal names are
    // held to their references.
    let known: Option<Vec<&str>> = names.iter().map(|n| n.as_deref()).collect();
    for (address, embed) in addresses(&r.items) {
        let Some(text) = address.as_literal() else { continue };
        let Some(name) = vocab::attachment_name(text.trim()) else { continue };
        if let Some(known) = &known {
            if !known.contains(&name) {
                let carried = if known.is_empty() {
                    "this message carries no file".to_string()
                } else {
                    format!(
                        "this message carries {}",
                        known.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
                    )
                };
                out.push(
                    Diagnostic::new(Code::BadAttachment, format!("`attachment://{name}` names no file of this message"))
                        .label(address.span, carried)
                        .help(format!("attach it in the same message: `file \"{name}\"` (a file beside the .blk), or `file api_x {{ filename \"{name}\" }}`")),
                );
                continue;
            }
        }
        let extension = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default();
        if embed && !vocab::EMBED_IMAGE_TYPES.contains(&extension.as_str()) {
            out.push(
                Diagnostic::new(Code::BadAttachment, format!("an embed cannot show `{name}`"))
                    .label(address.span, "not a .png, .jpg, .jpeg, .gif or .webp")
                    .help("an embed shows attached images of those types only; show another file in the message as it is (without an embed), or in a layout message's `gallery`"),
            );
        }
    }
}

/// The names of the files the images of a message show by their
/// `attachment://` addresses, as written.
pub fn shown(r: &Reply) -> Vec<String> {
    addresses(&r.items)
        .into_iter()
        .filter_map(|(t, _)| t.as_literal())
        .filter_map(|text| vocab::attachment_name(text.trim()).map(str::to_string))
        .collect()
}

/// One file's settings: known, of their forms; text has a name.
fn one(f: &ReplyFile, out: &mut Findings) {
    super::components::settings(&f.settings, vocab::FILE_SETTINGS, "a file", out);
    let filename = setting(&f.settings, "filename");
    if matches!(f.source, FileSource::Text(_)) && filename.is_none() {
        out.push(
            Diagnostic::new(Code::BadSetting, "a file of text needs its `filename`")
                .label(f.keyword, "no name to send it under")
                .help("name it, with the extension that says what it holds: `file text \"…\" { filename \"report.csv\" }`"),
        );
    }
    if let Some(SettingValue::Text(t)) = filename.and_then(|s| s.value.as_ref()) {
        if let Some(name) = t.as_literal() {
            if name.trim().is_empty() || name.contains(['/', '\\']) {
                let help = "write the name alone, with the extension that says what it holds";
                bad(t, "a file's `filename` is a name without a folder: `\"report.csv\"`", help, out);
            }
        }
    }
    if let Some(SettingValue::Text(t)) = setting(&f.settings, "type").and_then(|s| s.value.as_ref()) {
        if let Some(media_type) = t.as_literal() {
            if !crate::base::multipart::is_media_type(&media_type) {
                let help = "leave it out to have blkc tell it from the file's name";
                bad(t, "a file's `type` is a media type: `\"text/csv\"`, `\"image/png\"`", help, out);
            }
        }
    }
}

fn bad(t: &Template, message: &str, help: &str, out: &mut Findings) {
    let shown = crate::base::display::one_line(&t.as_literal().unwrap_or_default());
    out.push(
        Diagnostic::new(Code::BadSetting, message.to_string())
            .label(t.span, format!("`{shown}` is not one"))
            .help(help.to_string()),
    );
}

/// Every image address of a message's parts, and whether it is an embed's.
fn addresses(items: &[ReplyItem]) -> Vec<(&Template, bool)> {
    let mut out = Vec::new();
    for item in items {
        match item {
            ReplyItem::Embed(e) => out.extend(e.items.iter().filter_map(|i| match i {
                EmbedItem::Part {
                    part: EmbedPart::Image | EmbedPart::Thumbnail | EmbedPart::AuthorIcon | EmbedPart::FooterIcon,
                    value,
                    ..
                } => Some((value, true)),
                _ => None,
            })),
            ReplyItem::Layout(l) => {
                out.extend(l.media.iter().map(|m| (&m.url, false)));
                out.extend(addresses(&l.items));
            }
            _ => {}
        }
    }
    out
}
