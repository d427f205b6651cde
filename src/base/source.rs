//! Source files and byte spans. Line and column are computed only when a
//! diagnostic is rendered.

use std::fmt;

/// A byte range into one source file.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Span {
        Span { start: start as u32, end: end as u32 }
    }

    pub fn len(self) -> usize {
        (self.end - self.start) as usize
    }

    pub fn is_empty(self) -> bool {
        self.start == self.end
    }

    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }

    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span { start: self.start.min(other.start), end: self.end.max(other.end) }
    }
}

impl fmt::Debug for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "@{}..{}", self.start, self.end)
    }
}

impl From<Span> for miette::SourceSpan {
    fn from(span: Span) -> Self {
        (span.start as usize, span.len()).into()
    }
}

/// One `.blk` file: its name as given and its whole text. A bot in several
/// files (`include`) is one text of its files, one after the other, each
/// starting a line, with its `parts` saying which file each range is:
/// every position said of it (a line, a column, a file's name) is its own
/// file's.
#[derive(Debug, Clone)]
pub struct SourceFile {
    pub name: String,
    pub text: String,
    /// The files of a bot in several, in the order of their text (the
    /// first is the root file); empty for one file.
    pub parts: Vec<Part>,
}

/// One file of a bot in several: its name and its range of the bot's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    pub name: String,
    pub start: usize,
    pub end: usize,
}

impl SourceFile {
    /// A source file. A UTF-8 byte order mark at the start is dropped (it is
    /// invisible, and no part of the language), and a lone CR is a line
    /// break like LF everywhere (it is turned into one, byte for byte, so
    /// comments end there and line numbers agree on mixed endings).
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> SourceFile {
        let mut text: String = text.into();
        if text.starts_with('\u{feff}') {
            text.drain(..'\u{feff}'.len_utf8());
        }
        if text.contains('\r') {
            text = lone_cr_to_lf(text);
        }
        SourceFile { name: name.into(), text, parts: Vec::new() }
    }

    /// The file a byte offset is in: its part, or none for one file.
    pub fn part_at(&self, offset: usize) -> Option<&Part> {
        let k = self.parts.partition_point(|p| p.start <= offset).checked_sub(1)?;
        self.parts.get(k)
    }

    /// The name of the file a byte offset is in.
    pub fn file_at(&self, offset: usize) -> &str {
        self.part_at(offset).map_or(&self.name, |p| &p.name)
    }

    /// The file a part is, as a source file of its own (its offsets less
    /// the part's start).
    pub fn part_file(&self, part: &Part) -> SourceFile {
        let text = self.text.get(part.start..part.end).unwrap_or_default().to_string();
        SourceFile { name: part.name.clone(), text, parts: Vec::new() }
    }

    /// An index of line starts, for many line and column look-ups.
    pub fn line_index(&self) -> LineIndex<'_> {
        let mut starts = vec![0];
        starts.extend(memchr::memchr_iter(b'\n', self.text.as_bytes()).map(|i| i + 1));
        // Each part starts a line: its first line's number in the text.
        let parts = self.parts.iter().map(|p| (p.start, starts.partition_point(|&s| s < p.start), p.name.as_str()));
        let parts = parts.collect();
        LineIndex { text: &self.text, starts, parts, name: &self.name, last: Default::default() }
    }

    /// 1-based line and column (in characters) of a byte offset. Scans the
    /// text: for many look-ups, use [`SourceFile::line_index`].
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let from = self.part_at(offset).map_or(0, |p| p.start);
        let before = &self.text.as_bytes()[from..offset];
        let line = memchr::memchr_iter(b'\n', before).count() + 1;
        let line_start = memchr::memrchr(b'\n', before).map_or(from, |i| from + i + 1);
        let col = self.text[line_start..offset].chars().count() + 1;
        (line, col)
    }
}

/// Line starts of a text, for line and column look-ups in O(log lines).
#[derive(Debug, Clone)]
pub struct LineIndex<'a> {
    text: &'a str,
    starts: Vec<usize>,
    /// Each part's start, first line and name (none for one file).
    parts: Vec<(usize, usize, &'a str)>,
    name: &'a str,
    /// The last look-up: (line, offset, column). A column is counted from
    /// it when the next offset is later on the same line, so that many
    /// look-ups along one long line (a fix's edits on a pasted JSON line)
    /// cost that line once, not once each.
    last: std::cell::Cell<(usize, usize, usize)>,
}

impl<'a> LineIndex<'a> {
    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let (last_line, last_offset, last_col) = self.last.get();
        let col = if last_line == line && last_offset <= offset && last_offset >= self.starts[line] && last_col > 0 {
            last_col + self.text[last_offset..offset].chars().count()
        } else {
            self.text[self.starts[line]..offset].chars().count() + 1
        };
        self.last.set((line, offset, col));
        // (A line of a part counts from the part's first.)
        let first = self.part(offset).map_or(0, |p| p.1);
        (line + 1 - first, col)
    }

    /// The name of the file a byte offset is in.
    pub fn file(&self, offset: usize) -> &'a str {
        self.part(offset).map_or(self.name, |p| p.2)
    }

    fn part(&self, offset: usize) -> Option<&(usize, usize, &'a str)> {
        let k = self.parts.partition_point(|p| p.0 <= offset).checked_sub(1)?;
        self.parts.get(k)
    }
}

/// Every CR not followed by LF becomes LF (same length: offsets hold).
fn lone_cr_to_lf(text: String) -> String {
    let mut bytes = text.into_bytes();
    for i in 0..bytes.len() {
        if bytes[i] == b'\r' && bytes.get(i + 1) != Some(&b'\n') {
            bytes[i] = b'\n';
        }
    }
    // Only ASCII bytes were changed, for ASCII bytes.
    String::from_utf8(bytes).unwrap_or_default()
}

/// A path as a `file:` URI (editors and SARIF logs name files so), with the
/// characters a URI cannot hold percent-encoded.
pub fn file_uri(path: &str) -> String {
    format!("file://{}", uri_escaped(path))
}

/// Text with the characters a URI path cannot hold percent-encoded.
pub fn uri_escaped(text: &str) -> String {
    const PATH: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS
        .add(b' ')
        .add(b'"')
        .add(b'#')
        .add(b'%')
        .add(b'<')
        .add(b'>')
        .add(b'?')
        .add(b'`')
        .add(b'{')
        .add(b'}');
    percent_encoding::utf8_percent_encode(text, PATH).to_string()
}

#[cfg(test)]
mod tests {
    use super::SourceFile;

    #[test]
    fn the_line_index_agrees_with_a_scan_in_any_order_of_look_ups() {
        let file = SourceFile::new("t.blk", "ab\ncafé日本 x\n\nlast line é\n");
        let index = file.line_index();
        let mut offsets: Vec<usize> = (0..=file.text.len()).collect();
        // Forward, backward, and jumping between lines.
        let backward: Vec<usize> = offsets.iter().rev().copied().collect();
        offsets.extend(backward);
        offsets.extend([5, 20, 4, 21, 3, 0, 12]);
        for offset in offsets {
            assert_eq!(index.line_col(offset), file.line_col(offset), "at {offset}");
        }
    }

    #[test]
    fn many_look_ups_along_one_long_line_are_linear() {
        let line = "\"k\": 1, ".repeat(200_000);
        let file = SourceFile::new("t.blk", format!("x\n{line}\n"));
        let index = file.line_index();
        // 200,000 look-ups on a 1.6 MB line (each counted from the last).
        let last = (0..200_000).map(|i| index.line_col(2 + i * 8 + 3)).last();
        assert_eq!(last, Some((2, 199_999 * 8 + 4)));
    }
}
