//! A file loaded for serving (checked clean and lowered to its plan), or
//! why it cannot be served; and where serving listens and keeps its store.

use std::path::{Path, PathBuf};

use crate::base::diagnostics::render::{render_terminal, RenderOptions};
use crate::language::load::LoadOptions;
use crate::language::model::Checked;
use crate::language::plan::Plan;

/// A file loaded for serving: checked clean and lowered to its plan.
#[derive(Debug)]
pub struct Loaded {
    pub checked: Checked,
    pub plan: Plan,
    /// The file's modification time and size when read (for `--watch`).
    pub stamp: Option<(std::time::SystemTime, u64)>,
}

/// Why a file cannot be served: its diagnostics rendered for a terminal
/// (the refused start prints them), and each as fields for the log (a
/// refused reload logs them, one line each).
#[derive(Debug)]
pub struct Refused {
    pub rendered: String,
    pub problems: Vec<Problem>,
}

/// One diagnostic of a refused file, as log fields.
#[derive(Debug)]
pub struct Problem {
    pub code: &'static str,
    /// The file it is in (a bot in several files: one of them).
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub message: String,
    pub help: Option<String>,
}

impl Refused {
    fn new(source: &crate::base::source::SourceFile, diagnostics: &[crate::base::diagnostics::Diagnostic]) -> Refused {
        let index = source.line_index();
        let problems = diagnostics
            .iter()
            .filter(|d| d.severity == crate::base::diagnostics::Severity::Error)
            .map(|d| {
                let at = d.primary_span().map_or(0, |s| s.start as usize);
                let (line, column) = index.line_col(at);
                let file = index.file(at).to_string();
                Problem { code: d.code.as_str(), file, line, column, message: d.message.clone(), help: d.help.clone() }
            })
            .collect();
        Refused { rendered: render_terminal(source, diagnostics, RenderOptions { color: false, width: 100 }), problems }
    }

    /// A file that could not be read: no diagnostics, only why.
    fn unreadable(why: String) -> Refused {
        Refused { rendered: why, problems: Vec::new() }
    }
}

impl From<Refused> for String {
    fn from(r: Refused) -> String {
        r.rendered
    }
}

/// Reads, checks and lowers `path`.
pub fn load(path: &Path) -> Result<Loaded, Refused> {
    let stamp = stamp(path);
    let checked =
        crate::language::load::load(path, LoadOptions::default()).map_err(|e| Refused::unreadable(e.to_string()))?;
    if checked.has_errors() {
        return Err(Refused::new(&checked.source, &checked.diagnostics));
    }
    let plan = crate::language::plan::lower(&checked).map_err(|d| Refused::new(&checked.source, &[*d]))?;
    Ok(Loaded { checked, plan, stamp })
}

/// `loaded`, when every secret and the bot token its runs may send has a
/// value in `inputs`; else what is missing.
pub fn ready(loaded: Loaded, inputs: &crate::run::eval::Inputs) -> Result<Loaded, Refused> {
    match crate::run::eval::inputs_ready(&loaded.plan, inputs) {
        Ok(()) => Ok(loaded),
        Err(missing) => Err(Refused::new(&loaded.checked.source, &[*missing])),
    }
}

/// `--listen`: `IP:PORT`, `localhost:PORT`, or a port alone (`8080`,
/// `:8080`), which listens on 127.0.0.1 as the default does: a bot is put
/// behind a TLS proxy on the same machine, and every interface is asked
/// for by name (`0.0.0.0:8080`).
pub fn listen_address(text: &str) -> Result<std::net::SocketAddr, NotAnAddress> {
    use std::net::{Ipv4Addr, SocketAddr};
    let port = |p: &str| p.parse::<u16>().ok();
    let loopback = |p: u16| SocketAddr::from((Ipv4Addr::LOCALHOST, p));
    if let Ok(address) = text.parse::<SocketAddr>() {
        return Ok(address);
    }
    let found = match text.rsplit_once(':') {
        None => port(text).map(loopback),
        Some(("" | "localhost", p)) => port(p).map(loopback),
        Some(_) => None,
    };
    found.ok_or_else(|| NotAnAddress(text.to_string()))
}

/// What `--listen` was given that is no address to listen on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotAnAddress(pub String);

impl std::fmt::Display for NotAnAddress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "`{}` is not an address to listen on: write a port (`8080`), or `IP:PORT` like `127.0.0.1:8080` or `0.0.0.0:8080`",
            self.0
        )
    }
}

impl std::error::Error for NotAnAddress {}

/// What `--watch` compares: the file's modification time and size.
pub fn stamp(path: &Path) -> Option<(std::time::SystemTime, u64)> {
    let (mut latest, mut size) = one_stamp(path)?;
    // A bot in several files changes when any of them does.
    for file in included(path) {
        if let Some((modified, len)) = one_stamp(&file) {
            latest = latest.max(modified);
            size = size.wrapping_add(len).wrapping_add(1);
        }
    }
    Some((latest, size))
}

fn one_stamp(path: &Path) -> Option<(std::time::SystemTime, u64)> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}

/// The files `path` includes, and the files they include (each once), by
/// their `include "…"` lines. A file's list is read again only when its
/// stamp changed, so that watching costs the files' metadata.
fn included(path: &Path) -> Vec<PathBuf> {
    type Lists = std::collections::HashMap<PathBuf, ((std::time::SystemTime, u64), Vec<PathBuf>)>;
    static READ: std::sync::Mutex<Option<Lists>> = std::sync::Mutex::new(None);
    let mut read = READ.lock().unwrap_or_else(|e| e.into_inner());
    let lists = read.get_or_insert_with(Lists::default);
    let (mut out, mut next) = (Vec::new(), vec![path.to_path_buf()]);
    while let Some(file) = next.pop() {
        let Some(now) = one_stamp(&file) else { continue };
        let list = match lists.get(&file) {
            Some((seen, list)) if *seen == now => list.clone(),
            _ => {
                let list = include_lines(&file);
                lists.insert(file.clone(), (now, list.clone()));
                list
            }
        };
        for f in list {
            if f != path && !out.contains(&f) && out.len() < crate::language::load::MAX_FILES {
                out.push(f.clone());
                next.push(f);
            }
        }
    }
    out
}

/// The paths of a file's `include "…"` lines, from its folder.
fn include_lines(file: &Path) -> Vec<PathBuf> {
    let Ok(text) = std::fs::read_to_string(file) else { return Vec::new() };
    if memchr::memmem::find(text.as_bytes(), b"include").is_none() {
        return Vec::new();
    }
    let folder = file.parent().unwrap_or(Path::new(""));
    text.lines()
        .filter_map(|l| l.trim_start().strip_prefix("include")?.trim_start().strip_prefix('"')?.split('"').next())
        .map(|p| folder.join(p))
        .collect()
}

/// The store beside the file, wherever blkc is run from (as for `run`).
pub fn default_store(file: &Path) -> PathBuf {
    file.parent().unwrap_or(Path::new("")).join(crate::run::store::DEFAULT_PATH)
}

#[cfg(test)]
mod tests {
    use super::listen_address;

    #[test]
    fn a_port_alone_listens_on_this_machine_and_an_address_as_written() {
        for (given, address) in [
            (":0", "127.0.0.1:0"),
            ("8080", "127.0.0.1:8080"),
            (":8080", "127.0.0.1:8080"),
            ("localhost:8080", "127.0.0.1:8080"),
            ("0.0.0.0:8080", "0.0.0.0:8080"),
            ("[::1]:9000", "[::1]:9000"),
        ] {
            assert_eq!(listen_address(given).map(|a| a.to_string()), Ok(address.to_string()), "{given}");
        }
        for refused in ["", ":", "eighty", "example.com:80", "127.0.0.1:99999", "localhost"] {
            let error = listen_address(refused).unwrap_err();
            assert!(error.to_string().contains("write a port"), "{refused}: {error}");
        }
    }
}
