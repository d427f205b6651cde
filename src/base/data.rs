//! JSON documents as blkc holds them: samples and responses alike.
//!
//! A `serde_json::Value` (with exact numbers and ordered keys) costs about
//! 100 bytes per value: a 10 MB body of `[0,0,…]` took almost 1 GB. [`Data`]
//! costs 24 bytes per value and 40 per object entry, in slices allocated
//! at their exact size (a first pass over the text counts each container's
//! elements), so a response costs at most about 12 times its size in
//! memory, and [`Parsed::cost`] says how much before anything is kept.
//!
//! Keys are unique, the last one written winning (as `serde_json` reads
//! them); the order of first appearance is kept.

use std::cell::Cell;

use ecow::EcoString;
use rustc_hash::FxHashMap;
use serde::de::DeserializeSeed as _;
use serde_json::Value as Json;

use crate::base::path::Kind;

/// Bodies below this size are parsed in one pass: their memory does not
/// matter, their speed does.
const SMALL: usize = 64 * 1024;

/// A parsed document and what it costs.
#[derive(Debug)]
pub struct Parsed {
    pub data: Data,
    /// The bytes it takes in memory, about (an upper bound).
    pub cost: u64,
}

/// A JSON document in a compact form: boxed slices sized exactly; keys,
/// strings and numbers' exact text as inline strings, which most of them
/// fit without an allocation. A value takes 24 bytes, an object's entry 40.
#[derive(Debug, Clone, PartialEq)]
pub enum Data {
    Null,
    Bool(bool),
    /// A number's JSON text, exactly as written.
    Number(EcoString),
    String(EcoString),
    Array(Box<[Data]>),
    Object(Box<[(EcoString, Data)]>),
}

impl Data {
    /// The data as a `serde_json` value (numbers exact).
    pub fn to_json(&self) -> Json {
        match self {
            Data::Null => Json::Null,
            Data::Bool(b) => Json::Bool(*b),
            Data::Number(n) => {
                serde_json::from_str::<serde_json::Number>(n).map_or_else(|_| Json::String(n.to_string()), Json::Number)
            }
            Data::String(s) => Json::String(s.to_string()),
            Data::Array(items) => Json::Array(items.iter().map(Data::to_json).collect()),
            Data::Object(entries) => Json::Object(entries.iter().map(|(k, v)| (k.to_string(), v.to_json())).collect()),
        }
    }
}

/// A key or a number's text, read straight into an inline string (no
/// `String` in between).
struct Text(EcoString);

impl<'de> serde::Deserialize<'de> for Text {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Text, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Text;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E>(self, s: &str) -> Result<Text, E> {
                Ok(Text(EcoString::from(s)))
            }
        }
        d.deserialize_str(V)
    }
}

impl serde::Serialize for Data {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self {
            Data::Null => s.serialize_unit(),
            Data::Bool(b) => s.serialize_bool(*b),
            Data::Number(_) => self.to_json().serialize(s),
            Data::String(v) => s.serialize_str(v),
            Data::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for i in items.iter() {
                    seq.serialize_element(i)?;
                }
                seq.end()
            }
            Data::Object(entries) => {
                let mut map = s.serialize_map(Some(entries.len()))?;
                for (k, v) in entries.iter() {
                    map.serialize_entry(k.as_str(), v)?;
                }
                map.end()
            }
        }
    }
}

impl crate::base::path::Document for Data {
    fn kind(&self) -> Kind {
        match self {
            Data::Null => Kind::Null,
            Data::Bool(_) => Kind::Boolean,
            Data::Number(_) => Kind::Number,
            Data::String(_) => Kind::String,
            Data::Array(_) => Kind::Array,
            Data::Object(_) => Kind::Object,
        }
    }

    fn get(&self, key: &str) -> Option<&Data> {
        match self {
            Data::Object(entries) => entries.iter().find(|(k, _)| &**k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    fn element(&self, index: usize) -> Option<&Data> {
        match self {
            Data::Array(items) => items.get(index),
            _ => None,
        }
    }

    fn keys(&self) -> Vec<&str> {
        match self {
            Data::Object(entries) => entries.iter().map(|(k, _)| &**k).collect(),
            _ => Vec::new(),
        }
    }

    fn array_len(&self) -> usize {
        match self {
            Data::Array(items) => items.len(),
            _ => 0,
        }
    }
}

impl Data {
    /// Parses a JSON text (all of it: trailing text is an error).
    pub fn parse(bytes: &[u8]) -> Result<Parsed, serde_json::Error> {
        let shape = Shape::of(bytes);
        let data = Data::parse_shaped(bytes, &shape)?;
        Ok(Parsed { data, cost: shape.cost(bytes.len()) })
    }

    /// Parses a JSON text whose [`Shape`] was taken first (to charge its
    /// cost before it is built).
    pub fn parse_shaped(bytes: &[u8], shape: &Shape) -> Result<Data, serde_json::Error> {
        if bytes.len() >= SMALL {
            // The sizes are exact only for valid JSON: check it first, so a
            // broken text never reserves room for elements it does not have.
            let mut check = serde_json::Deserializer::from_slice(bytes);
            <serde::de::IgnoredAny as serde::Deserialize>::deserialize(&mut check)?;
            check.end()?;
        }
        let sizes = if bytes.len() >= SMALL { &shape.sizes[..] } else { &[] };
        let next = Cell::new(0);
        let mut de = serde_json::Deserializer::from_slice(bytes);
        let data = Seed { sizes, next: &next }.deserialize(&mut de)?;
        de.end()?;
        Ok(data)
    }

    /// The bytes this document takes in memory, counted by walking it (for
    /// one that was not parsed from text just now).
    pub fn footprint(&self) -> u64 {
        let text = |s: &EcoString| if s.len() > 15 { s.len() as u64 + 16 } else { 0 };
        24 + match self {
            Data::Number(s) | Data::String(s) => text(s),
            Data::Array(items) => items.iter().map(Data::footprint).sum(),
            Data::Object(entries) => entries.iter().map(|(k, v)| 16 + text(k) + v.footprint()).sum(),
            _ => 0,
        }
    }

    /// Every string and key, changed in place by `f` (secrets redacted).
    pub fn each_string_mut(&mut self, f: &mut impl FnMut(&mut EcoString)) {
        match self {
            Data::String(s) => f(s),
            Data::Array(items) => items.iter_mut().for_each(|i| i.each_string_mut(f)),
            Data::Object(entries) => {
                for (k, v) in entries.iter_mut() {
                    f(k);
                    v.each_string_mut(f);
                }
            }
            _ => {}
        }
    }

    /// Appends the data as compact JSON text.
    pub fn write_json(&self, out: &mut String) {
        // Writing into a String through serde_json cannot fail, and it
        // writes UTF-8 only.
        let mut bytes = std::mem::take(out).into_bytes();
        let _ = serde_json::to_writer(&mut bytes, self);
        *out = String::from_utf8(bytes).unwrap_or_default();
    }

    pub fn is_structured(&self) -> bool {
        matches!(self, Data::Object(_) | Data::Array(_))
    }
}

/// What a first pass over the text learns: how many elements each
/// container has, in the order the containers open, and how many values
/// and object entries there are in all.
pub struct Shape {
    sizes: Vec<u32>,
    elements: u64,
    entries: u64,
}

impl Shape {
    pub fn of(bytes: &[u8]) -> Shape {
        struct Open {
            index: usize,
            commas: u32,
            filled: bool,
            object: bool,
        }
        let mut shape = Shape { sizes: Vec::new(), elements: 0, entries: 0 };
        let mut open: Vec<Open> = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'"' => {
                    if let Some(top) = open.last_mut() {
                        top.filled = true;
                    }
                    i += 1;
                    while let Some(at) = memchr::memchr2(b'"', b'\\', &bytes[i..]) {
                        i += at;
                        if bytes[i] == b'\\' {
                            i += 2;
                        } else {
                            break;
                        }
                    }
                }
                b'[' | b'{' => {
                    if let Some(top) = open.last_mut() {
                        top.filled = true;
                    }
                    shape.sizes.push(0);
                    open.push(Open {
                        index: shape.sizes.len() - 1,
                        commas: 0,
                        filled: false,
                        object: bytes[i] == b'{',
                    });
                }
                b']' | b'}' => {
                    if let Some(done) = open.pop() {
                        let size = if done.filled { done.commas.saturating_add(1) } else { 0 };
                        shape.sizes[done.index] = size;
                        if done.object {
                            shape.entries += u64::from(size);
                        } else {
                            shape.elements += u64::from(size);
                        }
                    }
                }
                b',' => {
                    if let Some(top) = open.last_mut() {
                        top.commas = top.commas.saturating_add(1);
                    }
                }
                b' ' | b'\t' | b'\n' | b'\r' | b':' => {}
                _ => {
                    if let Some(top) = open.last_mut() {
                        top.filled = true;
                    }
                }
            }
            i += 1;
        }
        shape
    }

    /// An upper bound of the memory the parsed document takes: 24 bytes a
    /// value, 40 an object entry, and the text of strings too long to be
    /// inline (at most the text's length again, with their headers).
    pub fn cost(&self, len: usize) -> u64 {
        let values = self.elements + 1;
        24 * values + 40 * self.entries + 2 * len as u64 + 4 * self.sizes.len() as u64
    }
}

/// Reads a value with each container's room reserved from [`Shape`]
/// (`sizes` empty: as it comes).
#[derive(Clone, Copy)]
struct Seed<'s> {
    sizes: &'s [u32],
    next: &'s Cell<usize>,
}

impl Seed<'_> {
    /// The room to reserve for the container that opens now.
    fn room(self) -> usize {
        let at = self.next.get();
        self.next.set(at + 1);
        self.sizes.get(at).map_or(0, |&n| n as usize)
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for Seed<'_> {
    type Value = Data;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Data, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Seed<'_> {
    type Value = Data;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("JSON")
    }
    fn visit_unit<E>(self) -> Result<Data, E> {
        Ok(Data::Null)
    }
    fn visit_bool<E>(self, b: bool) -> Result<Data, E> {
        Ok(Data::Bool(b))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Data, E> {
        Ok(Data::Number(ecow::eco_format!("{n}")))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Data, E> {
        Ok(Data::Number(ecow::eco_format!("{n}")))
    }
    fn visit_f64<E>(self, n: f64) -> Result<Data, E> {
        Ok(Data::Number(ecow::eco_format!("{n}")))
    }
    fn visit_str<E>(self, s: &str) -> Result<Data, E> {
        Ok(Data::String(s.into()))
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Data, A::Error> {
        let mut items = Vec::with_capacity(self.room());
        while let Some(item) = seq.next_element_seed(self)? {
            items.push(item);
        }
        Ok(Data::Array(items.into_boxed_slice()))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Data, A::Error> {
        let Some(Text(first)) = map.next_key::<Text>()? else {
            self.room();
            return Ok(Data::Object(Box::new([])));
        };
        // serde_json hands a number over as a one-entry map when numbers
        // are kept exactly (arbitrary_precision); it is no container.
        if first == "$serde_json::private::Number" {
            let Text(text) = map.next_value()?;
            return Ok(Data::Number(text));
        }
        let mut entries: Vec<(EcoString, Data)> = Vec::with_capacity(self.room());
        // Past a few entries, a repeated key is found through an index.
        let mut index: Option<FxHashMap<EcoString, usize>> = None;
        let mut key = Some(first);
        while let Some(k) = key {
            let value = map.next_value_seed(self)?;
            let seen = match &mut index {
                Some(index) => index.get(&k).copied(),
                None => entries.iter().position(|(e, _)| *e == k),
            };
            match seen {
                Some(at) => entries[at].1 = value,
                None => {
                    if let Some(index) = &mut index {
                        index.insert(k.clone(), entries.len());
                    }
                    entries.push((k, value));
                    if index.is_none() && entries.len() == 32 {
                        index = Some(entries.iter().enumerate().map(|(i, (k, _))| (k.clone(), i)).collect());
                    }
                }
            }
            key = map.next_key::<Text>()?.map(|Text(k)| k);
        }
        Ok(Data::Object(entries.into_boxed_slice()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_keeps_every_value_exactly() {
        let text = r#"{"a": [1, -2.50, 123456789012345678901234567890, 1e400, 0.1], "b\u00e9 long key here": {"s": "x\"y", "t": true, "n": null}}"#;
        let sample: Data = Data::parse(text.as_bytes()).unwrap().data;
        let json: Json = serde_json::from_str(text).unwrap();
        assert_eq!(sample.to_json(), json);
        assert_eq!(serde_json::to_string(&sample).unwrap(), serde_json::to_string(&json).unwrap());
        use crate::base::path::Document as _;
        assert_eq!(
            sample.get("a").and_then(|a| a.element(2)),
            Some(&Data::Number("123456789012345678901234567890".into()))
        );
    }

    #[test]
    fn a_large_document_reads_as_a_small_one_does() {
        // Above and below the size where sizes are counted first.
        for n in [10, 40_000] {
            let mut text = String::from("{\"list\": [");
            for i in 0..n {
                text.push_str(&format!(
                    "{}{{\"id\": {i}, \"s\": \"a\\\"]}},[\", \"e\": [], \"o\": {{}}}}",
                    if i > 0 { "," } else { "" }
                ));
            }
            text.push_str("], \"last\": true, \"last\": false}");
            let parsed = Data::parse(text.as_bytes()).unwrap();
            let json: Json = serde_json::from_str(&text).unwrap();
            assert_eq!(parsed.data.to_json(), json, "n = {n}");
            let Data::Object(root) = &parsed.data else { panic!() };
            assert_eq!(root.len(), 2, "a repeated key is one entry, the last value");
            assert!(parsed.cost >= text.len() as u64, "{} < {}", parsed.cost, text.len());
            assert!(parsed.cost >= parsed.data.footprint(), "{} < {}", parsed.cost, parsed.data.footprint());
        }
        // Broken text is an error, however large.
        let broken = format!("[{}", ",".repeat(100_000));
        assert!(Data::parse(broken.as_bytes()).is_err());
        assert!(Data::parse(b"[1] x").is_err());
    }
}
