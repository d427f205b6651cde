//! `blkc run`, `blkc build` and `blkc vars`: gather inputs, call the
//! library, print events, pick the exit code.

use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use blkc::diagnostics::{did_you_mean, render_reports, RenderOptions, Severity};
use blkc::eval::{self, Event, Inputs, Options, VarStore};
use blkc::plan::{self, Plan};
use blkc::source::SourceFile;
use blkc::store::{self, Store};

use crate::cli::{Format, MissingAs, NetArgs, RunArgs, VarsAction};
use crate::{render_options, EXIT_DIAGNOSTICS, EXIT_RUN_FAILURE, EXIT_USAGE};

fn usage(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(EXIT_USAGE)
}

/// Reads and checks a file; prints its diagnostics (errors stop here).
fn compile(path: &Path, format: Format, opts: RenderOptions) -> Result<(SourceFile, Plan), ExitCode> {
    let mut checked = blkc::check_path(path, Default::default())
        .map_err(|e| usage(format!("cannot read `{}`: {e}", path.display())))?;
    // Hints are for `blkc check`; a run shows what is wrong or doubtful.
    checked.diagnostics.retain(|d| d.severity != Severity::Advice);
    if !checked.diagnostics.is_empty() {
        match format {
            Format::Text => {
                eprint!("{}", blkc::diagnostics::render_terminal(&checked.source, &checked.diagnostics, opts))
            }
            Format::Json => {
                let report = blkc::diagnostics::render_json(&checked.source, &checked.diagnostics);
                println!("{}", serde_json::json!({ "event": "check", "report": report }));
            }
        }
    }
    if checked.has_errors() {
        return Err(ExitCode::from(EXIT_DIAGNOSTICS));
    }
    let plan = plan::lower(&checked.ast, &checked.source.name);
    Ok((checked.source, plan))
}

pub fn build(file: &Path, output: Option<&Path>) -> ExitCode {
    let opts = render_options(crate::cli::Color::Auto);
    let (_, plan) = match compile(file, Format::Text, opts) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let json = match serde_json::to_string_pretty(&plan) {
        Ok(j) => j,
        Err(e) => return usage(format!("cannot write the plan: {e}")),
    };
    match output {
        Some(path) => {
            if let Err(e) = std::fs::write(path, json + "\n") {
                return usage(format!("cannot write `{}`: {e}", path.display()));
            }
        }
        None => println!("{json}"),
    }
    ExitCode::SUCCESS
}

/// `NAME=value` lines (blank lines and `#` comments skipped), or a JSON
/// object when the text starts with `{`.
fn parse_pairs(text: &str, what: &str) -> Result<HashMap<String, String>, String> {
    if text.trim_start().starts_with('{') {
        let map: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(text).map_err(|e| format!("{what} is not a JSON object: {e}"))?;
        return Ok(map
            .into_iter()
            .map(|(k, v)| {
                let text = match v {
                    serde_json::Value::String(s) => s,
                    other => other.to_string(),
                };
                (k, text)
            })
            .collect());
    }
    let mut out = HashMap::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (k, v) = line.split_once('=').ok_or_else(|| format!("{what}, line {}: expected NAME=value", n + 1))?;
        out.insert(k.trim().to_string(), v.trim().to_string());
    }
    Ok(out)
}

fn read_text(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("cannot read `{}`: {e}", path.display()))
}

fn inputs(args: &RunArgs) -> Result<Inputs, String> {
    let mut inputs = secret_inputs(&args.net)?;
    if let Some(path) = &args.vars_file {
        let text = read_text(path)?;
        if !text.trim_start().starts_with('{') {
            return Err(format!("`{}` must hold a JSON object", path.display()));
        }
        inputs.vars = parse_pairs(&text, &format!("`{}`", path.display()))?;
    }
    for pair in &args.vars {
        let (k, v) = pair.split_once('=').ok_or_else(|| format!("`--var {pair}`: expected NAME=VALUE"))?;
        inputs.vars.insert(k.to_string(), v.to_string());
    }
    Ok(inputs)
}

/// Secrets from `BLKC_SECRET_*` and `--secrets`; the bot token from
/// `BLKC_BOT_TOKEN` or `--bot-token-file`.
pub fn secret_inputs(net: &NetArgs) -> Result<Inputs, String> {
    let mut inputs = Inputs::default();
    for (key, value) in std::env::vars() {
        if let Some(name) = key.strip_prefix("BLKC_SECRET_") {
            inputs.secrets.insert(name.to_string(), value);
        }
    }
    if let Some(path) = &net.secrets {
        let text = read_text(path)?;
        inputs.secrets.extend(parse_pairs(&text, &format!("`{}`", path.display()))?);
    }
    inputs.bot_token = match &net.bot_token_file {
        Some(path) => Some(read_text(path)?.trim().to_string()),
        None => std::env::var("BLKC_BOT_TOKEN").ok().filter(|t| !t.is_empty()),
    };
    Ok(inputs)
}

pub fn http_limits(net: &NetArgs) -> Result<eval::http::Limits, String> {
    let secs = |s: f64, flag: &str| {
        Duration::try_from_secs_f64(s)
            .ok()
            .filter(|d| !d.is_zero())
            .ok_or(format!("`{flag}` takes a positive number of seconds"))
    };
    Ok(eval::http::Limits {
        connect_timeout: secs(net.connect_timeout, "--connect-timeout")?,
        timeout: secs(net.timeout, "--timeout")?,
        max_body: net.max_response_size,
        max_redirects: net.max_redirects,
    })
}

fn options(args: &RunArgs, file: &Path) -> Result<Options, String> {
    Ok(Options {
        http: http_limits(&args.net)?,
        strict: args.strict,
        missing_as: match args.missing {
            MissingAs::Text => eval::MissingAs::Text,
            MissingAs::Empty => eval::MissingAs::Empty,
            MissingAs::Null => eval::MissingAs::Null,
        },
        dry_run: args.dry_run,
        offline: args.offline,
        base_dir: file.parent().map(Path::to_path_buf).unwrap_or_default(),
        platform: args.net.platform.clone(),
        verbose: args.verbose,
        test_request: false,
    })
}

pub fn run(args: &RunArgs) -> ExitCode {
    let opts = render_options(args.output.color);
    let format = args.output.format;
    let (source, plan) = match compile(&args.file, format, opts) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let (kind, name) = match (&args.command, &args.event) {
        (Some(c), _) => (blkc::ast::TreeKind::Command, c.as_str()),
        (None, Some(e)) => (blkc::ast::TreeKind::Event, e.as_str()),
        (None, None) => return usage("give `--command NAME` or `--event NAME`"),
    };
    let Some(tree) = plan.trees.iter().find(|t| t.kind == kind && t.name == name) else {
        let names: Vec<&str> = plan.trees.iter().filter(|t| t.kind == kind).map(|t| t.name.as_str()).collect();
        let hint = match did_you_mean(name, names.iter().copied()) {
            Some(s) => format!("did you mean `{s}`?"),
            None if names.is_empty() => format!("the file has no {}s", kind.as_str()),
            None => format!("the file's {}s are {}", kind.as_str(), names.join(", ")),
        };
        return usage(format!("`{}` has no {} `{name}`; {hint}", args.file.display(), kind.as_str()));
    };
    let inputs = match inputs(args) {
        Ok(i) => i,
        Err(e) => return usage(e),
    };
    let options = match options(args, &args.file) {
        Ok(o) => o,
        Err(e) => return usage(e),
    };
    let mut memory = eval::MemoryStore::default();
    let mut lazy = LazyStore { path: args.store.clone().unwrap_or_else(|| store::DEFAULT_PATH.into()), store: None };
    let store: &mut dyn VarStore = if args.dry_run { &mut memory } else { &mut lazy };

    // Replies are line-buffered on a terminal and block-buffered otherwise,
    // as C's stdio does; JSON events stream one line at a time for editors.
    let stream = format == Format::Json || std::io::stdout().is_terminal();
    let mut out = std::io::BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
    let mut sink = |event: Event| {
        match format {
            Format::Json => {
                let _ = serde_json::to_writer(&mut out, &event_json(&event, &source));
                let _ = writeln!(out);
            }
            Format::Text => {
                if matches!(event, Event::Warning(_)) || args.verbose {
                    // Keep standard output in step with what goes to standard error.
                    let _ = out.flush();
                }
                print_event(&mut out, &event, &source, opts, args.verbose);
            }
        }
        if stream {
            let _ = out.flush();
        }
    };
    let outcome = eval::run(&plan, tree, &inputs, &options, store, &mut sink);
    let _ = out.flush();
    drop(out);
    match outcome {
        Ok(()) => {
            if format == Format::Json {
                println!("{}", serde_json::json!({ "event": "done", "ok": true }));
            }
            ExitCode::SUCCESS
        }
        Err(diag) => {
            report_failure(&source, &diag, format, opts);
            ExitCode::from(EXIT_RUN_FAILURE)
        }
    }
}

/// The store, opened on the first read or save: a run that uses no custom
/// variable never touches it.
struct LazyStore {
    path: std::path::PathBuf,
    store: Option<Store>,
}

impl LazyStore {
    fn open(&mut self) -> Result<&mut Store, String> {
        if self.store.is_none() {
            self.store = Some(Store::open(&self.path)?);
        }
        Ok(self.store.as_mut().expect("opened just above"))
    }
}

impl VarStore for LazyStore {
    fn get(&mut self, name: &str) -> Result<Option<serde_json::Value>, String> {
        self.open()?.get(name)
    }

    fn set(&mut self, name: &str, value: &serde_json::Value) -> Result<(), String> {
        self.open()?.set(name, value)
    }
}

fn position(source: &SourceFile, span: blkc::source::Span) -> serde_json::Value {
    let (line, column) = source.line_col(span.start as usize);
    serde_json::json!({ "file": source.name, "line": line, "column": column })
}

fn event_json(event: &Event, source: &SourceFile) -> serde_json::Value {
    let mut value = serde_json::to_value(event).unwrap_or_default();
    let span = match event {
        Event::Request(r) => Some(r.span),
        Event::Warning(w) => Some(w.span),
        _ => None,
    };
    if let (Some(span), Some(obj)) = (span, value.as_object_mut()) {
        obj.insert("at".into(), position(source, span));
    }
    value
}

fn print_event(out: &mut dyn Write, event: &Event, source: &SourceFile, opts: RenderOptions, verbose: bool) {
    match event {
        Event::Reply { text } => {
            let _ = writeln!(out, "{text}");
        }
        Event::Save { name, value } if verbose => {
            eprintln!("saved {name} = {value}");
        }
        Event::Save { .. } => {}
        Event::Warning(w) => {
            eprint!("{}", render_reports(source, std::slice::from_ref(&w.diagnostic), opts));
        }
        Event::Request(r) => {
            if r.dry_run {
                let _ = writeln!(out, "{} {}", r.method, r.url);
                for (k, v) in r.request_headers.iter().flatten() {
                    let _ = writeln!(out, "{k}: {v}");
                }
                if let Some(body) = &r.request_body {
                    let _ = writeln!(out, "\n{body}");
                }
                let _ = writeln!(out);
            } else if verbose {
                eprintln!("> {} {}", r.method, r.url);
                for (k, v) in r.request_headers.iter().flatten() {
                    eprintln!("> {k}: {v}");
                }
                let how = if r.offline { " (offline: from the sample)".to_string() } else { String::new() };
                eprintln!(
                    "< {} {} bytes{}{how}",
                    r.status.map_or("-".into(), |s| s.to_string()),
                    r.size.unwrap_or(0),
                    r.duration_ms.map_or(String::new(), |d| format!(", {d} ms"))
                );
                for (k, v) in r.response_headers.iter().flatten() {
                    eprintln!("< {k}: {v}");
                }
            }
        }
    }
}

fn report_failure(source: &SourceFile, diag: &blkc::diagnostics::Diagnostic, format: Format, opts: RenderOptions) {
    match format {
        Format::Text => eprint!("{}", render_reports(source, std::slice::from_ref(diag), opts)),
        Format::Json => {
            let mut value = serde_json::json!({
                "event": "error",
                "code": diag.code.as_str(),
                "severity": Severity::Error,
                "message": diag.message,
                "help": diag.help,
            });
            if let (Some(span), Some(obj)) = (diag.primary_span(), value.as_object_mut()) {
                obj.insert("at".into(), position(source, span));
            }
            println!("{value}");
            println!("{}", serde_json::json!({ "event": "done", "ok": false }));
        }
    }
}

pub fn vars(store_path: Option<&Path>, action: &VarsAction) -> ExitCode {
    let path = store_path.map_or_else(|| store::DEFAULT_PATH.into(), Path::to_path_buf);
    let mut store = match Store::open(&path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error[B311]: {e}");
            eprintln!("help: give another store with `--store PATH`; blkc never recreates a store it cannot read");
            return ExitCode::from(EXIT_RUN_FAILURE);
        }
    };
    let failed = |e: String| {
        eprintln!("error[B311]: {e}");
        ExitCode::from(EXIT_RUN_FAILURE)
    };
    match action {
        VarsAction::List { format } => match store.list() {
            Ok(entries) => {
                for e in &entries {
                    match format {
                        Format::Text => println!("{} = {}", e.name, e.value),
                        Format::Json => {
                            println!(
                                "{}",
                                serde_json::json!({ "name": e.name, "value": e.value, "updated_at": e.updated_at })
                            )
                        }
                    }
                }
                ExitCode::SUCCESS
            }
            Err(e) => failed(e),
        },
        VarsAction::Get { name } => match store.get(name) {
            Ok(Some(serde_json::Value::String(s))) => {
                println!("{s}");
                ExitCode::SUCCESS
            }
            Ok(Some(v)) => {
                println!("{v}");
                ExitCode::SUCCESS
            }
            Ok(None) => usage(format!("no custom variable `{name}` in `{}`", path.display())),
            Err(e) => failed(e),
        },
        VarsAction::Set { name, value, json } => {
            let value = if *json {
                match serde_json::from_str(value) {
                    Ok(v) => v,
                    Err(e) => return usage(format!("`{value}` is not JSON: {e}")),
                }
            } else {
                serde_json::Value::String(value.clone())
            };
            match store.set(name, &value) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => failed(e),
            }
        }
        VarsAction::Delete { name } => match store.delete(name) {
            Ok(true) => ExitCode::SUCCESS,
            Ok(false) => usage(format!("no custom variable `{name}` in `{}`", path.display())),
            Err(e) => failed(e),
        },
    }
}
