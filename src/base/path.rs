//! Response paths: the one definition of what `api_<block>[response.a.0.b]`
//! can say and what it reads.
//!
//! Everything that judges or follows a path calls this module: the scanner
//! splits a path with [`segments`], the checker judges its form with
//! [`root`] and [`check_segment`] (B114) and walks it through a sample's
//! shape with [`walk`] (B201–B205), the plan pre-computes each segment's
//! [`index`], the runner walks the live response with the same [`walk`]
//! (B307), and `blkc test` lists only the keys [`addressable`] accepts. A
//! miss reads the same wherever it is found ([`Miss::message`]).

use std::fmt::Write as _;

use serde_json::Value as Json;

use crate::base::diagnostics::did_you_mean;

/// What a path reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Root {
    /// `response…`: the JSON body, or a place in it.
    Response,
    /// `status`: the HTTP status code (no segments).
    Status,
    /// `headers.NAME`: a response header, by its name in any case (one
    /// segment).
    Headers,
    /// `items…`: the items of a block's pages, as one list.
    Items,
}

/// The words a path may start with.
pub const ROOTS: [&str; 4] = ["response", "status", "headers", "items"];

/// The root a path starts with, if it is one.
pub fn root(text: &str) -> Option<Root> {
    match text {
        "response" => Some(Root::Response),
        "status" => Some(Root::Status),
        "headers" => Some(Root::Headers),
        "items" => Some(Root::Items),
        _ => None,
    }
}

/// Splits the text inside `[…]` on dots: each piece with its byte offset in
/// `path`. The first piece is the root.
pub fn segments(path: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut offset = 0;
    path.split('.').map(move |piece| {
        let at = offset;
        offset += piece.len() + 1;
        (at, piece)
    })
}

/// The index a segment stands for on an array: a whole number from 0,
/// written without a sign or leading zeros (`01` is a key, never an index,
/// so a path reads one element whatever the response holds). A number too
/// large for any array is still an index: past the end of every array.
pub fn index(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let canonical = match bytes {
        [] => false,
        [b'0'] => true,
        [first, ..] => *first != b'0' && bytes.iter().all(u8::is_ascii_digit),
    };
    canonical.then(|| text.parse().unwrap_or(usize::MAX))
}

/// The variable a segment written `{name}` takes its key from (`{votes[{user_id}]}`,
/// `save votes[{option_pick}] = …`): the key is that variable's value when
/// the path is read, one key whatever it holds.
pub fn key_variable(text: &str) -> Option<&str> {
    let name = text.strip_prefix('{')?.strip_suffix('}')?;
    let mut bytes = name.bytes();
    let ident = matches!(bytes.next(), Some(b) if b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_');
    ident.then_some(name)
}

/// The segments before the first whose key is a variable's value: what a
/// sample or a declared value can check.
pub fn until_variable<S: Segment>(segments: &[S]) -> &[S] {
    let known = segments.iter().position(|s| key_variable(s.text()).is_some()).unwrap_or(segments.len());
    &segments[..known]
}

/// [`check_segment`] of a path written in a template, whose key may also be
/// a variable's value (`{name}`).
pub fn check_key(text: &str) -> Result<(), SegmentError> {
    match key_variable(text) {
        Some(_) => Ok(()),
        None => check_segment(text),
    }
}

/// What is wrong with the form of one segment after the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SegmentError {
    /// Nothing between two dots.
    Empty,
    /// `-1`: indexes count from 0.
    Negative,
    /// `items[0]`: brackets are not path syntax.
    Brackets { key: String, index: String },
    /// A character no path can hold (it would end the path or the string).
    Forbidden(char),
}

/// Characters a key in a path cannot hold: `.` separates segments, the
/// brackets and braces end the path or the variable, and a quote or
/// backslash ends or escapes the string around it.
const FORBIDDEN: &[char] = &['.', '[', ']', '{', '}', '"', '\\'];

/// Judges the form of one segment: the rule B114 applies, and the rule that
/// decides which keys of a response `blkc test` lists as addressable.
pub fn check_segment(text: &str) -> Result<(), SegmentError> {
    if text.is_empty() {
        return Err(SegmentError::Empty);
    }
    if text.len() > 1 && text.starts_with('-') && text[1..].bytes().all(|b| b.is_ascii_digit()) {
        return Err(SegmentError::Negative);
    }
    if let Some(open) = text.find('[') {
        let (key, index) = text.split_at(open);
        let index = index.trim_start_matches('[').trim_end_matches(']');
        return Err(SegmentError::Brackets { key: key.to_string(), index: index.to_string() });
    }
    match text.chars().find(|c| FORBIDDEN.contains(c) || c.is_control()) {
        Some(c) => Err(SegmentError::Forbidden(c)),
        None => Ok(()),
    }
}

impl SegmentError {
    /// The message, the label on the segment and the help, in that order;
    /// `parent` is the path before the segment (`response.a`).
    pub fn text(&self, segment: &str, parent: &str) -> (String, String, String) {
        match self {
            SegmentError::Empty => (
                "empty segment in a response path".into(),
                "nothing between the dots".into(),
                "write one key or index between each pair of dots, like `response.items.0.name`".into(),
            ),
            SegmentError::Negative => (
                format!("`{segment}` is a negative index"),
                "indexes count from 0".into(),
                "address array elements by a whole number from 0: the first element is `0`".into(),
            ),
            SegmentError::Brackets { key, index } => (
                format!("`{segment}` uses brackets for an index"),
                "brackets are not path syntax".into(),
                format!("write the index as its own segment: `{key}.{index}`"),
            ),
            SegmentError::Forbidden(c) => (
                format!("`{segment}` holds `{}`, which a path cannot hold", c.escape_debug()),
                "not possible in a path".into(),
                format!(
                    "a key with `.`, brackets, braces, quotes, backslashes or control characters cannot be \
                     addressed; read the object around it, `{parent}`"
                ),
            ),
        }
    }
}

/// Whether a response key can be written as a segment (the key `0` can: on
/// an object it is read as a key).
pub fn addressable(key: &str) -> bool {
    check_segment(key).is_ok()
}

/// Why a key cannot be addressed, for `blkc test`'s listing.
pub fn why_not_addressable(key: &str) -> Option<String> {
    check_segment(key).err().map(|e| match e {
        SegmentError::Empty => "cannot be addressed: the key is empty".to_string(),
        SegmentError::Negative => "cannot be addressed: the key reads as a negative index".to_string(),
        SegmentError::Brackets { .. } => "cannot be addressed: the key holds `[`".to_string(),
        SegmentError::Forbidden(c) => format!("cannot be addressed: the key holds `{}`", c.escape_debug()),
    })
}

/// `response.a.b`: the first segments of a path as written.
pub fn display<'s>(segments: impl IntoIterator<Item = &'s str>) -> String {
    display_from("response", segments)
}

/// A path from `root` (`response`, or a loop's element name) as dotted text.
pub fn display_from<'s>(root: &str, segments: impl IntoIterator<Item = &'s str>) -> String {
    let mut out = String::from(root);
    for s in segments {
        out.push('.');
        out.push_str(s);
    }
    out
}

/// `{api_b[response.a.b]}`: a path as a variable in a template.
pub fn variable(block: &str, path: &str) -> String {
    format!("{{api_{block}[{path}]}}")
}

/// One segment of a path, as the walk reads it. The plan's keys carry their
/// index pre-computed; the AST's are computed with [`index`].
pub trait Segment {
    fn text(&self) -> &str;
    fn index(&self) -> Option<usize> {
        index(self.text())
    }
}

impl Segment for &str {
    fn text(&self) -> &str {
        self
    }
}

/// The JSON types, named as messages say them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Null,
    Boolean,
    Number,
    String,
    Array,
    Object,
}

impl Kind {
    pub fn of(v: &Json) -> Kind {
        match v {
            Json::Null => Kind::Null,
            Json::Bool(_) => Kind::Boolean,
            Json::Number(_) => Kind::Number,
            Json::String(_) => Kind::String,
            Json::Array(_) => Kind::Array,
            Json::Object(_) => Kind::Object,
        }
    }

    /// `a string`, `an array`, `null`.
    pub fn words(self) -> &'static str {
        match self {
            Kind::Null => "null",
            Kind::Boolean => "a boolean",
            Kind::Number => "a number",
            Kind::String => "a string",
            Kind::Array => "an array",
            Kind::Object => "an object",
        }
    }
}

/// A JSON document a path can walk: a live response, or a sample's shape.
pub trait Document: Sized {
    fn kind(&self) -> Kind;
    /// The value under `key`, when this is an object that has it.
    fn get(&self, key: &str) -> Option<&Self>;
    /// The element at `index`, when this is an array that long.
    fn element(&self, index: usize) -> Option<&Self>;
    /// An object's keys, in order.
    fn keys(&self) -> Vec<&str>;
    /// An array's length (0 for anything else).
    fn array_len(&self) -> usize;
}

impl Document for Json {
    fn kind(&self) -> Kind {
        Kind::of(self)
    }

    fn get(&self, key: &str) -> Option<&Json> {
        match self {
            // Small objects (most API objects) are faster to scan than to hash.
            Json::Object(map) if map.len() <= 16 => map.iter().find(|(k, _)| *k == key).map(|(_, v)| v),
            Json::Object(map) => map.get(key),
            _ => None,
        }
    }

    fn element(&self, index: usize) -> Option<&Json> {
        self.as_array()?.get(index)
    }

    fn keys(&self) -> Vec<&str> {
        self.as_object().map(|m| m.keys().map(String::as_str).collect()).unwrap_or_default()
    }

    fn array_len(&self) -> usize {
        self.as_array().map_or(0, Vec::len)
    }
}

/// Why a path does not reach a value, at segment `at` (from 0, after the root).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Miss {
    pub at: usize,
    pub kind: MissKind,
    /// The keys of the object where a key was missing, for "did you mean".
    pub keys: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MissKind {
    /// The object has no such key.
    NoKey,
    /// An index on an object that has no key of that name.
    IndexOnObject,
    /// An array read with something other than an index.
    NotAnIndex { len: usize },
    /// The index is past the end of the array.
    OutOfRange { len: usize },
    /// The path goes on past a string, number, boolean or null.
    PastScalar { found: Kind },
}

/// Follows `path` into `doc`. On an object a segment is read as a key (so
/// `0` works as a key too); on an array it must be an [`index`].
pub fn walk<'d, D: Document, S: Segment>(doc: &'d D, path: &[S]) -> Result<&'d D, Miss> {
    let mut here = doc;
    for (at, seg) in path.iter().enumerate() {
        let miss = |kind| Miss { at, kind, keys: Vec::new() };
        here = match here.kind() {
            Kind::Object => match here.get(seg.text()) {
                Some(v) => v,
                None => {
                    let kind = if seg.index().is_some() { MissKind::IndexOnObject } else { MissKind::NoKey };
                    let keys = here.keys().into_iter().map(str::to_string).collect();
                    return Err(Miss { at, kind, keys });
                }
            },
            Kind::Array => match seg.index().or_else(|| from_end(seg.text(), here.array_len())) {
                Some(i) => here.element(i).ok_or(miss(MissKind::OutOfRange { len: here.array_len() }))?,
                None => return Err(miss(MissKind::NotAnIndex { len: here.array_len() })),
            },
            found => return Err(miss(MissKind::PastScalar { found })),
        };
    }
    Ok(here)
}

/// `-1` (the last element) to `-len` (the first) as an index of an array of
/// `len` elements; one past the start is out of range. (Only a custom
/// variable's path may count from the end: the checker refuses `-1` in a
/// response's, B114.)
fn from_end(text: &str, len: usize) -> Option<usize> {
    let back = index(text.strip_prefix('-')?)?;
    (back > 0).then(|| len.checked_sub(back).unwrap_or(usize::MAX))
}

/// How many keys a help line lists before it sums up the rest.
const KEYS_LISTED: usize = 8;

impl Miss {
    /// What is wrong, in the same words for a sample and a live response.
    pub fn message<S: Segment>(&self, path: &[S]) -> String {
        self.message_from("response", path)
    }

    /// [`Miss::message`] for a path from `root` (a loop's element).
    pub fn message_from<S: Segment>(&self, root: &str, path: &[S]) -> String {
        let at = display_from(root, path[..self.at].iter().map(Segment::text));
        let key = path[self.at].text();
        match &self.kind {
            MissKind::NoKey => format!("`{at}` has no key `{key}`"),
            MissKind::IndexOnObject => format!("`{at}` is an object; `{key}` is not one of its keys"),
            MissKind::NotAnIndex { len } => format!("`{at}` is an array of {len}; `{key}` is not an index"),
            MissKind::OutOfRange { len: 1 } => format!("`{at}` has 1 element; index {key} is past its end"),
            MissKind::OutOfRange { len } => format!("`{at}` has {len} elements; index {key} is past its end"),
            MissKind::PastScalar { found } => format!("`{at}` is {}; it has no `{key}`", found.words()),
        }
    }

    /// The label on the segment at fault.
    pub fn label(&self) -> &'static str {
        match self.kind {
            MissKind::NoKey => "not one of its keys",
            MissKind::IndexOnObject => "an index on an object",
            MissKind::NotAnIndex { .. } => "a key on an array",
            MissKind::OutOfRange { .. } => "past the end of the array",
            MissKind::PastScalar { .. } => "nothing to read here",
        }
    }

    /// What to do about it; `block` names the block in a corrected path.
    pub fn help<S: Segment>(&self, block: &str, path: &[S]) -> String {
        self.help_from("response", &|p| format!("api_{block}[{p}]"), path)
    }

    /// [`Miss::help`] for a path from `root`; `whole` writes a corrected
    /// path as a reference (`api_b[…]`, `item[…]`).
    pub fn help_from<S: Segment>(&self, root: &str, whole: &dyn Fn(&str) -> String, path: &[S]) -> String {
        let at = display_from(root, path[..self.at].iter().map(Segment::text));
        let key = path[self.at].text();
        match &self.kind {
            MissKind::NoKey => match did_you_mean(key, self.keys.iter().map(String::as_str)) {
                Some(k) => format!("did you mean `{k}`?"),
                None if self.keys.is_empty() => format!("`{at}` is an empty object"),
                None => {
                    let listed: Vec<String> = self.keys.iter().take(KEYS_LISTED).map(|k| format!("`{k}`")).collect();
                    let mut help = format!("the keys of `{at}` are {}", listed.join(", "));
                    if self.keys.len() > KEYS_LISTED {
                        let _ = write!(help, " and {} more", self.keys.len() - KEYS_LISTED);
                    }
                    help
                }
            },
            MissKind::IndexOnObject => match self.keys.first() {
                Some(k) => format!("objects are read by key, like `{at}.{k}`"),
                None => format!("objects are read by key; `{at}` has none"),
            },
            MissKind::NotAnIndex { .. } if key.bytes().all(|b| b.is_ascii_digit()) => {
                let digits = key.trim_start_matches('0');
                format!(
                    "write the index without leading zeros: `{at}.{}`",
                    if digits.is_empty() { "0" } else { digits }
                )
            }
            MissKind::NotAnIndex { .. } => {
                let rest: Vec<&str> = path[self.at..].iter().map(Segment::text).collect();
                let fixed = whole(&format!("{at}.0.{}", rest.join(".")));
                format!("an array element must be addressed by its index from 0 (the spec's rule 3), like `{fixed}`")
            }
            MissKind::OutOfRange { len: 0 } => format!("`{at}` is empty: no index reads a value"),
            MissKind::OutOfRange { len: 1 } => format!("indexes count from 0: the only element is `{at}.0`"),
            MissKind::OutOfRange { len } => {
                format!("indexes count from 0: the last of {len} elements is `{at}.{}`", len - 1)
            }
            MissKind::PastScalar { .. } => format!("end the path at `{at}`"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_key_from_a_value_is_a_variable_s_name_in_braces_and_ends_what_is_checked() {
        assert_eq!(key_variable("{user_id}"), Some("user_id"));
        assert_eq!(key_variable("{_x1}"), Some("_x1"));
        for not in ["user_id", "{}", "{1x}", "{a b}", "{a", "a}", "{a.b}", "{{a}}"] {
            assert_eq!(key_variable(not), None, "{not}");
        }
        assert_eq!(until_variable(&["a", "b", "{c}", "d"]), ["a", "b"]);
        assert_eq!(until_variable(&["a"]), ["a"]);
        assert_eq!(check_key("{c}"), Ok(()));
        assert!(check_segment("{c}").is_err(), "a block's own paths take no variable");
        assert!(check_key("{c").is_err());
    }

    #[test]
    fn an_index_is_a_canonical_whole_number() {
        assert_eq!(index("0"), Some(0));
        assert_eq!(index("12"), Some(12));
        assert_eq!(index("01"), None, "a leading zero makes a key");
        assert_eq!(index("-1"), None);
        assert_eq!(index(""), None);
        assert_eq!(index("1e3"), None);
        assert_eq!(index("99999999999999999999999"), Some(usize::MAX), "past the end of every array");
    }

    #[test]
    fn segments_keep_their_offsets() {
        let got: Vec<_> = segments("response.a..b").collect();
        assert_eq!(got, [(0, "response"), (9, "a"), (11, ""), (12, "b")]);
    }

    #[test]
    fn the_segment_rule_is_the_addressable_rule() {
        for bad in ["", "-3", "a[0]", "x\"y", "a}b", "a{b", "back\\slash", "line\nbreak", "a]"] {
            assert!(check_segment(bad).is_err() && !addressable(bad), "{bad:?}");
            assert!(why_not_addressable(bad).is_some());
        }
        for good in ["a", "0", "01", "two words", "ünïcødé", "-", "a-b", "$ref", "@id"] {
            assert!(check_segment(good).is_ok() && addressable(good), "{good:?}");
        }
    }

    #[test]
    fn every_miss_is_found_and_worded() {
        let doc = json!({ "a": { "b": 1 }, "list": [ { "x": 1 } ], "o": { "k": true } });
        let miss = |p: &[&str]| walk(&doc, p).unwrap_err();
        let cases: [(&[&str], MissKind, &str); 6] = [
            (&["a", "c"], MissKind::NoKey, "`response.a` has no key `c`"),
            (&["o", "0"], MissKind::IndexOnObject, "`response.o` is an object; `0` is not one of its keys"),
            (&["list", "x"], MissKind::NotAnIndex { len: 1 }, "`response.list` is an array of 1; `x` is not an index"),
            (
                &["list", "01"],
                MissKind::NotAnIndex { len: 1 },
                "`response.list` is an array of 1; `01` is not an index",
            ),
            (&["list", "4"], MissKind::OutOfRange { len: 1 }, "`response.list` has 1 element; index 4 is past its end"),
            (
                &["a", "b", "c"],
                MissKind::PastScalar { found: Kind::Number },
                "`response.a.b` is a number; it has no `c`",
            ),
        ];
        for (p, kind, message) in cases {
            let m = miss(p);
            assert_eq!(m.kind, kind, "{p:?}");
            assert_eq!(m.message(p), message);
        }
        assert_eq!(
            miss(&["list", "01"]).help("r", &["list", "01"]),
            "write the index without leading zeros: `response.list.1`"
        );
        assert_eq!(miss(&["a", "bb"]).help("r", &["a", "bb"]), "did you mean `b`?");
        assert_eq!(walk(&doc, &["list", "0", "x"]).unwrap(), &json!(1));
        assert_eq!(walk(&doc, &[] as &[&str]).unwrap(), &doc);
    }
}
