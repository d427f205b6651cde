//! The `custom_id` blkc gives a component or a form, and reads back from
//! a click or a submission: `blk2:HANDLER:KEY:VALUE`.

/// The prefix and version of every `custom_id` blkc writes: `blk2:`, the
/// handler's name, `:`, the component's key (`plan::ComponentStep::key`:
/// what it is among its handler's components, which no edit elsewhere in
/// the file moves), `:`, then its value as written. A form's id is
/// made the same way, with no value.
///
/// `blk1:` ids carried the component's number among all of the file's
/// components, which a reload that added one above moved: a click on an
/// earlier message then found another component's gates, or none. blkc
/// answers them as stale.
pub const CUSTOM_ID_PREFIX: &str = "blk2:";

/// The characters of a component's key.
pub const COMPONENT_KEY: usize = 8;

/// A component's or a form's `custom_id` (docs/language.md, "Handlers").
pub fn custom_id(handler: &str, key: &str, value: &str) -> String {
    format!("{CUSTOM_ID_PREFIX}{handler}:{key}:{value}")
}

/// The handler, the component's key and the value of a `custom_id` blkc
/// wrote, or `None` for any other text (an older version's id included).
pub fn parse_custom_id(id: &str) -> Option<(&str, &str, &str)> {
    // blkc never writes a longer one (B425).
    if id.chars().count() > super::limits::CUSTOM_ID {
        return None;
    }
    let rest = id.strip_prefix(CUSTOM_ID_PREFIX)?;
    let (handler, rest) = rest.split_once(':')?;
    let (key, value) = rest.split_once(':')?;
    let name_ok = !handler.is_empty()
        && handler.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !handler.as_bytes()[0].is_ascii_digit();
    let key_ok =
        (1..=COMPONENT_KEY).contains(&key.len()) && key.bytes().all(|b| b.is_ascii_digit() || b.is_ascii_lowercase());
    (name_ok && key_ok).then_some((handler, key, value))
}

/// The handler an id of blkc's names, in this version's ids or an earlier
/// one's (`blk1:`): said when a click is stale.
pub fn named_handler(id: &str) -> Option<&str> {
    if let Some((handler, _, _)) = parse_custom_id(id) {
        return Some(handler);
    }
    let handler = id.strip_prefix("blk1:")?.split(':').next()?;
    let ok =
        !handler.is_empty() && handler.len() <= 32 && handler.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    ok.then_some(handler)
}
