//! Media types (RFC 9110 §8.3.1): the one rule for whether a `Content-Type`
//! header agrees with the kind of body sent, which the checker applies to
//! the header as written and the runner to the header as filled.

/// A media type's essence: `type/subtype`, lower-case, without parameters.
pub fn essence(media_type: &str) -> String {
    media_type.split(';').next().unwrap_or_default().trim().to_ascii_lowercase()
}

/// Whether a `Content-Type` header of `header` may go with a body whose
/// own type is `body`. A JSON body goes with any JSON type
/// (`application/vnd.api+json`, `application/merge-patch+json`); a
/// multipart body with none written by hand (its boundary is blkc's); any
/// other with its own essence.
pub fn agrees(body: &str, header: &str) -> bool {
    let (body, header) = (essence(body), essence(header));
    match body.as_str() {
        "application/json" => header == body || (header.starts_with("application/") && header.ends_with("+json")),
        "multipart/form-data" => false,
        _ => header == body,
    }
}

/// The body kind a `Content-Type` names, as the word of `body KIND`.
pub fn kind_of(header: &str) -> Option<&'static str> {
    let e = essence(header);
    Some(match e.as_str() {
        "application/x-www-form-urlencoded" => "form",
        "multipart/form-data" => "multipart",
        _ if e == "application/json" || (e.starts_with("application/") && e.ends_with("+json")) => "json",
        _ if e.contains('/') => "text",
        _ => return None,
    })
}

/// The media type a file's name says (its extension, as `mime_guess`
/// knows them), else `application/octet-stream`.
pub fn of_name(name: &str) -> String {
    mime_guess::from_path(name).first_or_octet_stream().essence_str().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_agrees_with_json_types_and_nothing_else() {
        assert!(agrees("application/json", "application/json; charset=utf-8"));
        assert!(agrees("application/json", "Application/VND.api+JSON"));
        assert!(!agrees("application/json", "application/x-www-form-urlencoded"));
        assert!(!agrees("application/json", "text/plain"));
        assert!(!agrees("multipart/form-data", "multipart/form-data"));
        assert!(agrees("text/csv", "text/csv; charset=utf-8"));
        assert!(!agrees("text/plain; charset=utf-8", "text/csv"));
        assert_eq!(kind_of("application/x-www-form-urlencoded"), Some("form"));
        assert_eq!(kind_of("multipart/form-data; boundary=x"), Some("multipart"));
        assert_eq!(kind_of("application/problem+json"), Some("json"));
        assert_eq!(kind_of("text/csv"), Some("text"));
        assert_eq!(kind_of("{x}"), None);
    }
}
