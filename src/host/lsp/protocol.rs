//! What the protocol's messages carry: documents named by `file:` URIs,
//! and a request's answer or its error.

use std::path::PathBuf;

use lsp_server::ErrorCode;
use lsp_types::Uri;

/// A request's answer, or the protocol's error code and message.
pub(crate) type Answer<T> = Result<T, (ErrorCode, String)>;

/// The path of a `file:` URI.
pub fn uri_to_path(uri: &Uri) -> Option<PathBuf> {
    let rest = uri.as_str().strip_prefix("file://")?;
    let decoded = percent_encoding::percent_decode_str(rest).decode_utf8().ok()?;
    Some(PathBuf::from(decoded.as_ref()))
}

/// The `file:` URI of a path.
pub fn path_to_uri(path: &std::path::Path) -> Option<Uri> {
    crate::base::source::file_uri(&path.to_string_lossy()).parse().ok()
}
