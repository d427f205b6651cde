//! `blkc run FILE --command NAME`: runs a command or event with real HTTP,
//! printing replies (text) or one JSON event per line.

use std::io::{IsTerminal, Write};
use std::path::Path;

use blkc::base::diagnostics::render::{diagnostic_json, render_reports, span_json, RenderOptions};
use blkc::base::diagnostics::{did_you_mean, Severity};
use blkc::base::display;
use blkc::base::source::SourceFile;
use blkc::language::load::LoadOptions;
use blkc::language::plan::TreeKind;
use blkc::run::eval::{self, Event, Options, VarStore};
use blkc::run::store;

use super::args::{Format, MissingAs, RunArgs};
use super::inputs::{http_limits, inputs};
use super::report::{self, Exit};

fn options(args: &RunArgs, samples: std::sync::Arc<blkc::language::model::Samples>) -> Result<Options, String> {
    super::report::warn_unversioned(args.net.platform.as_ref());
    Ok(Options {
        http: http_limits(&args.net)?,
        strict: args.strict,
        missing_as: match args.missing.unwrap_or(MissingAs::Text) {
            MissingAs::Text => eval::MissingAs::Text,
            MissingAs::Empty => eval::MissingAs::Empty,
            MissingAs::Null => eval::MissingAs::Null,
        },
        dry_run: args.dry_run,
        offline: args.offline,
        samples,
        platform: args.net.platform.clone(),
        verbose: args.verbose,
        reads: args.verbose || args.output.format == Format::Json,
        preview: 0,
        test_request: false,
        allow_private_network: args.net.allow_private_network,
        memory: super::inputs::memory(&args.net),
        client: None,
        limiter: None,
        deadline: None,
        answers: None,
        branches: false,
        stand_in: false,
        seed: args.seed,
        draws: None,
        now: args.now,
    })
}

/// The tree `--command` or `--event` names, or why there is none.
fn find_tree<'p>(
    plan: &'p blkc::language::plan::Plan,
    args: &RunArgs,
) -> Result<&'p blkc::language::plan::Tree, String> {
    let handler =
        args.component.as_deref().map(|c| blkc::discord::custom_id::parse_custom_id(c).map_or(c, |(h, _, _)| h));
    let (kind, name) = match (&args.command, &args.event, handler.or(args.form.as_deref())) {
        _ if args.autocomplete.is_some() => (TreeKind::Autocomplete, args.autocomplete.as_deref().unwrap_or_default()),
        (Some(c), _, _) => (TreeKind::Command, c.as_str()),
        (None, Some(e), _) => (TreeKind::Event, e.as_str()),
        (None, None, Some(h)) => (TreeKind::Handler, h),
        (None, None, None) => {
            // A file of one command runs it.
            let mut commands = plan.trees.iter().filter(|t| t.kind == TreeKind::Command);
            return match (commands.next(), commands.next()) {
                (Some(only), None) => Ok(only),
                _ => Err("give `--command NAME`, `--event NAME`, `--component HANDLER` or `--form HANDLER`".into()),
            };
        }
    };
    if let Some(tree) = plan.trees.iter().find(|t| t.kind == kind && t.name == name) {
        return Ok(tree);
    }
    let names: Vec<&str> = plan.trees.iter().filter(|t| t.kind == kind).map(|t| t.name.as_str()).collect();
    let hint = match did_you_mean(name, names.iter().copied()) {
        Some(s) => format!("did you mean `{s}`?"),
        None if names.is_empty() => format!("the file has no {}s", kind.as_str()),
        None => format!("the file's {}s are {}", kind.as_str(), names.join(", ")),
    };
    Err(format!("`{}` has no {} `{name}`; {hint}", args.file.display(), kind.as_str()))
}

/// The tree's `require` lines, held before the run starts: how `run`
/// exits when they refuse it (or a secret they read has no value).
fn held(
    args: &RunArgs,
    (plan, tree): (&blkc::language::plan::Plan, &blkc::language::plan::Tree),
    inputs: &eval::Inputs,
    source: &SourceFile,
    (format, opts): (Format, RenderOptions),
) -> Option<Exit> {
    if let Err(diag) = eval::guards_ready(tree, inputs) {
        report_failure(source, &diag, format, opts);
        return Some(Exit::RunFailure);
    }
    match refused(args, (plan, tree), inputs) {
        Ok(None) => None,
        Ok(Some(why)) => {
            eprintln!("{}: the run did not start: {why}", args.file.display());
            eprintln!(
                "  (`require` decides on the member `--roles`, `--permissions` and `--var channel_id=…` describe)"
            );
            Some(Exit::RunFailure)
        }
        Err(e) => Some(report::usage(e)),
    }
}

/// What the tree's `require` lines say of the member `--roles` and
/// `--permissions` describe, in the channel of `--var channel_id` (as
/// `serve` decides on an interaction's member): why they refuse it, if so.
fn refused(
    args: &RunArgs,
    (plan, tree): (&blkc::language::plan::Plan, &blkc::language::plan::Tree),
    inputs: &eval::Inputs,
) -> Result<Option<String>, String> {
    let list = |s: &Option<String>| -> Vec<String> {
        s.iter().flat_map(|s| s.split(',')).map(|w| w.trim().to_string()).filter(|w| !w.is_empty()).collect()
    };
    let mut bits = 0;
    for word in list(&args.permissions) {
        match blkc::discord::registration::permission(&word) {
            Some(p) => bits |= p.bits(),
            None => {
                let known = blkc::discord::registration::permission_words();
                let hint = did_you_mean(&word, known.iter().map(String::as_str))
                    .map_or(String::new(), |w| format!("; did you mean `{w}`?"));
                return Err(format!("`--permissions {word}`: no permission is called `{word}`{hint}"));
            }
        }
    }
    // A component's whole id adds the guards of the tree that shows it, as
    // `serve` holds a click to them.
    let mut guards = tree.guards.clone();
    if let Some((handler, key, _)) = args.component.as_deref().and_then(blkc::discord::custom_id::parse_custom_id) {
        guards
            .extend(blkc::language::plan::component(plan, handler, key).map(|c| c.guards.clone()).unwrap_or_default());
    }
    if guards.is_empty() {
        return Ok(None);
    }
    let standing = blkc::run::guards::Standing {
        roles: Some(list(&args.roles)),
        permissions: Some(bits),
        channel: inputs.vars.get("channel_id").cloned().unwrap_or_default(),
    };
    Ok(blkc::run::guards::refusal(&guards, &standing, &inputs.secrets))
}

/// Every `--var` and `--vars` key names a variable of the tree (a trigger
/// variable, an option as `option_<name>`, or a custom variable): a name
/// that is none of them would be sent as its literal `{…}`, so it is a usage
/// error before anything is sent.
fn known_variables(
    checked: &blkc::language::model::Checked,
    tree: &blkc::language::plan::Tree,
    inputs: &eval::Inputs,
) -> Result<(), String> {
    let Some(model) = checked.model.trees.iter().find(|t| t.kind.as_str() == tree.kind.as_str() && t.name == tree.name)
    else {
        return Ok(());
    };
    let mut typed: Vec<(&String, &String)> = inputs.vars.iter().collect();
    typed.sort();
    // (An autocomplete's options are as typed so far: any text.)
    let autocomplete = tree.kind == blkc::language::plan::TreeKind::Autocomplete;
    for (name, value) in typed.into_iter().filter(|_| !autocomplete) {
        if let Err(e) = tree.check_option_value(name, value) {
            return Err(format!("`--var {name}={}`: {e}", blkc::base::display::one_line(value)));
        }
    }
    let mut unknown: Vec<&String> = inputs.vars.keys().filter(|k| *k == "bot_token" || !model.knows(k)).collect();
    unknown.sort();
    let Some(name) = unknown.first() else { return Ok(()) };
    let names: Vec<String> = model.all_variables().filter(|v| v.name != "bot_token").map(|v| v.name).collect();
    let what = format!("{} `{}`", tree.kind.as_str(), tree.name);
    let option = format!("option_{name}");
    let suggestion =
        if model.knows(&option) { Some(option.as_str()) } else { did_you_mean(name, names.iter().map(String::as_str)) };
    let hint = match suggestion {
        Some(s) => format!("did you mean `{s}`?"),
        None if *name == "bot_token" => "the bot token is given with BLKC_BOT_TOKEN or `--bot-token-file`".into(),
        None => format!("its variables are {}", names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")),
    };
    Err(format!("`{name}` is not a variable of {what}, so `--var {name}=…` would fill nothing; {hint}"))
}

/// What `--component … --values …` or `--form … --field …` gives a
/// handler's run: as the platform's interaction would (`serve` fills the
/// same variables from it).
fn handler_inputs(
    args: &RunArgs,
    plan: &blkc::language::plan::Plan,
    tree: &blkc::language::plan::Tree,
    inputs: &mut eval::Inputs,
) -> Result<(), String> {
    if tree.kind != TreeKind::Handler {
        return Ok(());
    }
    let values: Vec<&str> = args.values.as_deref().map_or(Vec::new(), |v| v.split(',').map(str::trim).collect());
    let from_id = args.component.as_deref().and_then(blkc::discord::custom_id::parse_custom_id).map(|(_, _, v)| v);
    let value = values.first().copied().or(from_id).unwrap_or_default();
    let mut set = |k: &str, v: &str| {
        inputs.vars.entry(k.to_string()).or_insert_with(|| v.to_string());
    };
    set("value", value);
    set("values", &values.join(", "));
    let known = blkc::language::plan::form_inputs(plan, &tree.name);
    for field in &args.fields {
        let Some((name, value)) = field.split_once('=') else {
            return Err(format!("`--field {field}`: write `--field INPUT=VALUE`"));
        };
        if !known.contains(&name) {
            let hint = match did_you_mean(name, known.iter().copied()) {
                Some(s) => format!("did you mean `{s}`?"),
                None if known.is_empty() => format!("no form runs handler `{}`", tree.name),
                None => format!("its inputs are {}", known.join(", ")),
            };
            return Err(format!(
                "`--field {name}=…`: `{name}` is not an input of a form running `{}`; {hint}",
                tree.name
            ));
        }
        set(&format!("field_{name}"), value);
    }
    for name in known {
        set(&format!("field_{name}"), "");
    }
    Ok(())
}

/// A webhook event's request, by hand: `--body FILE`, else its sample.
fn received(
    args: &RunArgs,
    checked: &blkc::language::model::Checked,
    tree: &blkc::language::plan::Tree,
) -> Result<Option<std::sync::Arc<eval::Received>>, String> {
    let Some(hook) = &tree.webhook else {
        return match (&args.body, args.headers.is_empty()) {
            (None, true) => Ok(None),
            _ => Err(format!("`--body` and `--header` give a webhook event's request; `{}` is not one", tree.name)),
        };
    };
    let mut headers = Vec::new();
    for h in &args.headers {
        let Some((name, value)) = h.split_once('=') else {
            return Err(format!("`--header {h}`: write `--header NAME=VALUE`"));
        };
        headers.push((name.trim().to_ascii_lowercase(), value.to_string()));
    }
    let bytes = match &args.body {
        Some(path) => {
            let bytes = std::fs::read(path).map_err(|e| format!("`--body {}`: {e}", path.display()))?;
            if bytes.len() > blkc::base::webhook::MAX_BODY {
                return Err(format!(
                    "`--body {}` is larger than a webhook's {} bytes",
                    path.display(),
                    blkc::base::webhook::MAX_BODY
                ));
            }
            bytes
        }
        None => {
            let model = checked
                .model
                .trees
                .iter()
                .find(|t| t.kind == blkc::language::ast::TreeKind::Event && t.name == tree.name);
            let block = model.and_then(|m| m.block(blkc::language::ast::Webhook::BLOCK));
            match block.and_then(|b| checked.model.sample(b)) {
                Some(sample) => match sample.as_ref() {
                    Ok(data) => data.to_json().to_string().into_bytes(),
                    Err(why) => return Err(format!("the sample of webhook `{}` {why}", tree.name)),
                },
                None => return Err(format!(
                    "webhook `{}` has no `sample`: give its request with `--body FILE` (JSON, as the sender posts it to {})",
                    tree.name, hook.path
                )),
            }
        }
    };
    let body = blkc::base::data::Data::parse(&bytes).map_err(|e| format!("the webhook's body is not JSON: {e}"))?.data;
    Ok(Some(std::sync::Arc::new(eval::Received { body, headers })))
}

pub fn run(args: &RunArgs) -> Exit {
    let opts = report::render_options(args.output.color);
    let format = args.output.format;
    let (checked, plan) = match super::compile(&args.file, LoadOptions::default(), format, opts) {
        Ok(p) => p,
        Err(exit) => return exit,
    };
    let prepared = find_tree(&plan, args).and_then(|tree| {
        let mut inputs = inputs(args)?;
        handler_inputs(args, &plan, tree, &mut inputs)?;
        known_variables(&checked, tree, &inputs)?;
        left_out_options(args, tree, &mut inputs)?;
        inputs.received = received(args, &checked, tree)?;
        Ok((tree, inputs, options(args, checked.model.samples.clone())?))
    });
    let (tree, mut inputs, options) = match prepared {
        Ok(p) => p,
        Err(e) => return report::usage(e),
    };
    if let Some(exit) = held(args, (&plan, tree), &inputs, &checked.source, (format, opts)) {
        return exit;
    }
    let mut memory = eval::MemoryStore::default();
    // The store is beside the file, wherever blkc is run from.
    let default = args.file.parent().unwrap_or(Path::new("")).join(store::DEFAULT_PATH);
    let backend = match store::Backend::open(&store::Location::choose(args.store.as_deref(), default)) {
        Ok(b) => b,
        Err(e) => return report::coded_error(blkc::base::diagnostics::Code::StoreFailed, &e, Some(e.help())),
    };
    let mut lazy = backend.run_store();
    // Dry and offline runs never touch the real store.
    let store: &mut dyn VarStore = if args.dry_run || args.offline { &mut memory } else { lazy.as_mut() };
    let source = &checked.source;
    if let Err(diag) = tick_inputs(&plan, tree, &mut inputs, store) {
        report_failure(source, &diag, format, opts);
        return Exit::RunFailure;
    }

    // Replies are line-buffered on a terminal and block-buffered otherwise,
    // as C's stdio does; JSON events stream one line at a time for editors.
    let stream = format == Format::Json || std::io::stdout().is_terminal();
    let mut out = std::io::BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
    let mut sink = |event: Event| {
        match format {
            Format::Json => {
                let _ = out.write_all(report::json(&event_json(&event, source), false).as_bytes());
                let _ = writeln!(out);
            }
            Format::Text => {
                if matches!(event, Event::Warning(_)) || args.verbose {
                    // Keep standard output in step with what goes to standard error.
                    let _ = out.flush();
                }
                print_event(&mut out, &event, source, opts, args.verbose);
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
                println!("{}", report::json(&serde_json::json!({ "event": "done", "ok": true }), false));
            }
            Exit::Success
        }
        Err(diag) => {
            report_failure(source, &diag, format, opts);
            Exit::RunFailure
        }
    }
}

/// An optional option left out reads as the platform gives it (empty),
/// unless `--missing` asks for the missing-variable rendering.
fn left_out_options(
    args: &RunArgs,
    tree: &blkc::language::plan::Tree,
    inputs: &mut eval::Inputs,
) -> Result<(), String> {
    if args.missing.is_some() {
        return Ok(());
    }
    // (An autocomplete is given its options as typed so far, none left out.)
    let typed = tree.kind == blkc::language::plan::TreeKind::Autocomplete;
    if typed {
        inputs.vars.entry("typed_text".into()).or_default();
    }
    for option in tree.options.iter().filter(|o| !o.required || typed) {
        if let std::collections::hash_map::Entry::Vacant(slot) = inputs.vars.entry(format!("option_{}", option.name)) {
            slot.insert(if typed { String::new() } else { blkc::language::plan::Tree::left_out(option)? });
        }
    }
    Ok(())
}

/// A timed event's tick, by hand: its time is now, and its channel the one
/// its value names (unless `--var` gives them).
fn tick_inputs(
    plan: &blkc::language::plan::Plan,
    tree: &blkc::language::plan::Tree,
    inputs: &mut eval::Inputs,
    store: &mut dyn VarStore,
) -> Result<(), Box<blkc::base::diagnostics::Diagnostic>> {
    let Some(timer) = &tree.timer else { return Ok(()) };
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let tick = blkc::language::schedule::rfc3339(i64::try_from(now).unwrap_or(0));
    inputs.vars.entry("tick_time".into()).or_insert(tick);
    if !inputs.vars.contains_key("channel_id") {
        let channel = eval::timer_channel(plan, timer, inputs, store)?;
        inputs.vars.insert("channel_id".into(), channel);
    }
    Ok(())
}

/// An event as a JSON line. A warning is the diagnostic object of
/// `blkc check --format json` with `"event": "warning"`; a request carries
/// the span of its block, in the same span object.
fn event_json(event: &Event, source: &SourceFile) -> serde_json::Value {
    let index = source.line_index();
    let mut value = match event {
        Event::Warning(w) => diagnostic_json(source, &index, &w.diagnostic),
        _ => serde_json::to_value(event).unwrap_or_default(),
    };
    if let Some(obj) = value.as_object_mut() {
        match event {
            Event::Warning(_) => {
                obj.insert("event".into(), "warning".into());
            }
            Event::Request(r) => {
                obj.insert("file".into(), source.name.clone().into());
                obj.insert("span".into(), span_json(&index, r.span));
            }
            _ => {}
        }
    }
    value
}

/// Buttons and menus as the terminal shows them, a row a line:
/// `[Yes] [No]` (→ the handler each runs), then each menu's choices.
fn print_components(out: &mut dyn Write, components: &[blkc::discord::outgoing::Component]) {
    use blkc::discord::outgoing::Component;
    for row in blkc::discord::outgoing::rows(components) {
        let mut line = Vec::new();
        for c in row {
            match c {
                Component::Button(b) => {
                    let label =
                        [b.emoji.as_deref(), b.label.as_deref()].into_iter().flatten().collect::<Vec<_>>().join(" ");
                    let to = match (&b.handler, &b.url, &b.sku) {
                        (Some(h), _, _) => format!(" → {h}"),
                        (None, Some(u), _) => format!(" → {u}"),
                        (None, None, Some(sku)) => format!("premium → buys SKU {sku}"),
                        _ => String::new(),
                    };
                    let off = if b.disabled { " (disabled)" } else { "" };
                    line.push(format!("[{}]{}{off}", display::one_line(&label), display::one_line(&to)));
                }
                Component::Select(m) => {
                    let shown = m.placeholder.as_deref().unwrap_or("choose");
                    let mut text = format!("[{} ▾] → {}", display::one_line(shown), m.handler);
                    if m.of != "choices" {
                        text.push_str(&format!(" (one of the server's {})", m.of));
                    }
                    let choices: Vec<String> = m
                        .choices
                        .iter()
                        .map(|c| format!("{} = {}", display::one_line(&c.label), display::one_line(&c.value)))
                        .collect();
                    if !choices.is_empty() {
                        text.push_str(&format!(": {}", choices.join(", ")));
                    }
                    line.push(text);
                }
            }
        }
        let _ = writeln!(out, "{}", line.join(" "));
    }
}

/// A layout message as the terminal shows it, a line each: its texts, a
/// container's parts behind its bar (`┃`), a section's texts with what
/// stands beside them, a separator's line, a gallery's images, rows of
/// components as a reply's.
fn layout_lines(blocks: &[blkc::discord::outgoing::Block], files: &[blkc::discord::outgoing::File]) -> Vec<String> {
    use blkc::discord::outgoing::{Accessory, Block, Media};
    let media = |word: &str, m: &Media| {
        let mut line = format!("▣ {word} {}", display::one_line(&m.url));
        if let Some(d) = &m.description {
            line.push_str(&format!(" ({})", display::one_line(d)));
        }
        if m.spoiler {
            line.push_str(" (spoiler)");
        }
        line
    };
    let mut out = Vec::new();
    for block in blocks {
        match block {
            Block::Text { text } => out.extend(display::lines(text).lines().map(str::to_string)),
            Block::Components { components } => {
                let mut buffer = Vec::new();
                print_components(&mut buffer, components);
                out.extend(String::from_utf8_lossy(&buffer).lines().map(str::to_string));
            }
            Block::Container { accent, spoiler, parts } => {
                let mut about: Vec<String> = accent.iter().map(|c| format!("accent #{c:06X}")).collect();
                if *spoiler {
                    about.push("spoiler".into());
                }
                if !about.is_empty() {
                    out.push(format!("┃ ({})", about.join(", ")));
                }
                out.extend(layout_lines(parts, files).into_iter().map(|l| format!("┃ {l}")));
            }
            Block::Section { texts, accessory } => {
                for t in texts {
                    out.extend(display::lines(t).lines().map(str::to_string));
                }
                match accessory {
                    Accessory::Thumbnail(m) => out.push(format!("  beside it: {}", media("thumbnail", m))),
                    Accessory::Component(c) => {
                        let mut buffer = Vec::new();
                        print_components(&mut buffer, std::slice::from_ref(c));
                        out.push(format!("  beside it: {}", String::from_utf8_lossy(&buffer).trim_end()));
                    }
                }
            }
            Block::Separator { large, invisible } => out.push(match (large, invisible) {
                (_, true) => String::new(),
                (true, false) => "━━━━━━━━━━━━━━━━━━━━".into(),
                (false, false) => "────────────────────".into(),
            }),
            Block::Gallery { media: items } => out.extend(items.iter().map(|m| media("image", m))),
            Block::File { name, .. } => out.extend(files.iter().filter(|f| &f.name == name).map(file_line)),
        }
    }
    out
}

/// A file a message carries, as the terminal shows it: its name, type and
/// size (a name or description from a value is shown on one line).
fn file_line(f: &blkc::discord::outgoing::File) -> String {
    let size = f.bytes.len();
    let shown = match size {
        0..1024 => format!("{size} bytes"),
        1024..1_048_576 => format!("{:.1} KiB", size as f64 / 1024.0),
        _ => format!("{:.1} MiB", size as f64 / 1_048_576.0),
    };
    let mut line = format!("📎 {} ({}, {shown})", display::one_line(&f.name), f.media_type.as_deref().unwrap_or("?"));
    if let Some(d) = &f.description {
        line.push_str(&format!(" \"{}\"", display::one_line(d)));
    }
    if f.spoiler {
        line.push_str(" (spoiler)");
    }
    line
}

/// A poll as the terminal shows it: its question, an answer a line, how
/// long it is open.
fn print_poll(out: &mut dyn Write, p: &blkc::discord::outgoing::Poll) {
    let _ = writeln!(out, "📊 {}", display::one_line(&p.question));
    for a in &p.answers {
        let emoji = a.emoji.as_deref().map(|e| format!("{} ", display::one_line(e))).unwrap_or_default();
        let _ = writeln!(out, "  ○ {emoji}{}", display::one_line(&a.text));
    }
    let choose = if p.multiple { "choose any" } else { "choose one" };
    let _ = writeln!(out, "  ({choose}; open {} hours)", p.hours);
}

/// A form as the terminal shows it: its title, then an input a line.
fn print_form(out: &mut dyn Write, form: &blkc::discord::outgoing::Form) {
    let _ = writeln!(out, "(shows a form; sending it runs {})", form.handler);
    let _ = writeln!(out, "┌ {}", display::one_line(&form.title));
    use blkc::discord::outgoing::InputKind;
    for (place, i) in form.inputs.iter().enumerate() {
        for (_, t) in form.texts.iter().filter(|(at, _)| *at == place) {
            let _ = writeln!(out, "│ {}", display::lines(t).replace('\n', "\n│ "));
        }
        let kind = match i.kind {
            InputKind::Text if i.paragraph => "paragraph",
            InputKind::Text => "line",
            other => other.describe().trim_start_matches("a ").trim_start_matches("an "),
        };
        let need = if i.required || i.kind == InputKind::Checkbox { "" } else { ", optional" };
        let mut line = format!("│ {} ({kind}{need})", display::one_line(&i.label));
        if !i.choices.is_empty() {
            let choices: Vec<String> = i.choices.iter().map(|c| display::one_line(&c.label)).collect();
            line.push_str(&format!(": {}", choices.join(" / ")));
        }
        let _ = writeln!(out, "{line} → {{field_{}}}", i.name);
    }
    for (_, t) in form.texts.iter().filter(|(at, _)| *at >= form.inputs.len()) {
        let _ = writeln!(out, "│ {}", display::lines(t).replace('\n', "\n│ "));
    }
}

/// An embed as the terminal shows it: each part on lines of its own
/// behind a bar, every value shown so that none can forge a line.
fn print_embed(out: &mut dyn Write, e: &blkc::discord::outgoing::Embed) {
    // A value's later lines stand under its first, a label's width in, and
    // indented as continuations (so that no value can forge a line).
    let mut line = |label: &str, value: &str| {
        let under = format!("\n│ {}", " ".repeat(label.chars().count()));
        let value = display::lines(value).replace('\n', &under);
        let _ = writeln!(out, "│ {label}{value}");
    };
    let author = e.author.as_ref().map(|a| match &e.author_url {
        Some(url) => format!("{a} ({url})"),
        None => a.clone(),
    });
    let parts = [
        ("", &author),
        ("", &e.title),
        ("", &e.url),
        ("", &e.description),
        ("image: ", &e.image),
        ("thumbnail: ", &e.thumbnail),
    ];
    for (label, value) in parts {
        if let Some(v) = value {
            line(label, v);
        }
    }
    for f in &e.fields {
        line(&format!("{}{}: ", display::one_line(&f.name), if f.inline { " (inline)" } else { "" }), &f.value);
    }
    let footer = [e.footer.as_deref(), e.timestamp.as_deref()].into_iter().flatten().collect::<Vec<_>>().join(" · ");
    if !footer.is_empty() {
        line("", &footer);
    }
    if let Some(c) = e.color {
        line("colour ", &format!("#{c:06X}"));
    }
}

/// An action as the terminal shows it: `→ kick 42, reason: spam`, and
/// what came of it.
fn print_action(out: &mut dyn Write, a: &blkc::run::eval::ActionEvent) {
    let mut line = format!("→ {}", a.action);
    for (i, (word, value)) in a.values.iter().enumerate() {
        let value = display::one_line(value);
        let value = if value.contains(' ') || value.is_empty() { format!("\"{value}\"") } else { value };
        match (i, word.is_empty()) {
            (_, true) => line.push_str(&format!(" {value}")),
            (0, false) => line.push_str(&format!(" {word} {value}")),
            _ => line.push_str(&format!(", {word} {value}")),
        }
    }
    if let Some(made) = &a.made {
        line.push_str(&format!(" (made {made})"));
    }
    let how = match (a.dry_run, a.offline, a.later, a.status) {
        (true, ..) => " — dry run: not sent".to_string(),
        (_, true, ..) => " — offline: not sent".to_string(),
        (_, _, true, _) => " — sent when its time comes".to_string(),
        (_, _, _, Some(status)) => format!(" — {status}"),
        _ => String::new(),
    };
    let _ = writeln!(out, "{line}{how}");
}

/// Work kept to run later, or taken back: `⏲ waits until …: `remind#9169a528``.
fn print_later(out: &mut dyn Write, event: &Event) {
    match event {
        Event::Later { tree, due, answer: Some(answer), .. } => {
            let _ = writeln!(
                out,
                "⏲ waits until {due} for the member's next message in this channel: `{answer}` runs with it, else `{tree}` — `blkc serve` runs it"
            );
        }
        Event::Later { tree, due, key, note, .. } => {
            let mut line = format!("⏲ waits until {due}: `{tree}`");
            for (word, value) in [("key", key), ("note", note)].into_iter().filter(|(_, v)| !v.is_empty()) {
                line.push_str(&format!(", {word} \"{}\"", display::one_line(value)));
            }
            let _ = writeln!(out, "{line} — `blkc serve` runs it when due");
        }
        Event::Cancel { key, removed } => {
            let _ = writeln!(out, "⏲ cancelled {removed} waiting under key \"{}\"", display::one_line(key));
        }
        _ => {}
    }
}

/// A reply as the terminal shows it.
fn print_reply(out: &mut dyn Write, event: &Event) {
    let Event::Reply { text, ephemeral, embeds, components, layout, poll, files, update } = event else { return };
    if *update {
        let _ = writeln!(out, "(updates the message the component is on)");
    }
    if *ephemeral {
        let _ = writeln!(out, "(only the user who ran it sees this reply)");
    }
    if !layout.is_empty() {
        for line in layout_lines(layout, files) {
            let _ = writeln!(out, "{line}");
        }
        return;
    }
    if !text.is_empty() || (embeds.is_empty() && poll.is_none() && files.is_empty() && !*update) {
        let _ = writeln!(out, "{}", display::lines(text));
    }
    for f in files {
        let _ = writeln!(out, "{}", file_line(f));
    }
    for e in embeds {
        print_embed(out, e);
    }
    if let Some(p) = poll {
        print_poll(out, p);
    }
    print_components(out, components);
}

fn print_event(out: &mut dyn Write, event: &Event, source: &SourceFile, opts: RenderOptions, verbose: bool) {
    match event {
        // A reply holds chat users' values: shown so that none can forge a
        // line or send the terminal a control sequence.
        Event::Reply { .. } => print_reply(out, event),
        Event::Form(form) => print_form(out, form),
        Event::Action(a) => print_action(out, a),
        Event::Choice { name, value } => {
            let _ = writeln!(out, "choice {} = {}", display::one_line(name), display::one_line(value));
        }
        Event::Save { name, value, .. } if verbose => {
            eprintln!("saved {name} = {}", display::one_line(&value.to_string()));
        }
        Event::Read { name, value, stored, .. } if verbose => {
            let how = if *stored { "" } else { " (its default: nothing saved)" };
            eprintln!("read {name} = {}{how}", display::one_line(&value.to_string()));
        }
        Event::Save { .. } | Event::Read { .. } | Event::Branch { .. } => {}
        Event::Later { .. } | Event::Cancel { .. } => print_later(out, event),
        Event::Warning(w) => {
            eprint!("{}", render_reports(source, std::slice::from_ref(&w.diagnostic), opts));
        }
        Event::Request(r) => {
            if r.dry_run {
                let _ = writeln!(out, "{} {}", r.method, display::one_line(&r.url));
                for (k, v) in r.request_headers.iter().flatten() {
                    let _ = writeln!(out, "{k}: {}", display::one_line(v));
                }
                if let Some(body) = &r.request_body {
                    let _ = writeln!(out, "\n{}", display::lines(body));
                }
                let _ = writeln!(out);
            } else if verbose {
                eprintln!("> {} {}", r.method, display::one_line(&r.url));
                for (k, v) in r.request_headers.iter().flatten() {
                    eprintln!("> {k}: {}", display::one_line(v));
                }
                let mut how = match (r.offline, r.action) {
                    (true, Some(_)) => " (offline: not sent)".to_string(),
                    (true, None) => " (offline: from the sample)".to_string(),
                    (false, _) => String::new(),
                };
                if r.retries > 0 {
                    how.push_str(&format!(", after {} retr{}", r.retries, if r.retries == 1 { "y" } else { "ies" }));
                }
                eprintln!(
                    "< {} {} bytes{}{how}",
                    r.status.map_or("-".into(), |s| s.to_string()),
                    r.size.unwrap_or(0),
                    r.duration_ms.map_or(String::new(), |d| format!(", {d} ms"))
                );
                for (k, v) in r.response_headers.iter().flatten() {
                    eprintln!("< {}: {}", display::one_line(k), display::one_line(v));
                }
            }
        }
    }
}

fn report_failure(
    source: &SourceFile,
    diag: &blkc::base::diagnostics::Diagnostic,
    format: Format,
    opts: RenderOptions,
) {
    match format {
        Format::Text => eprint!("{}", render_reports(source, std::slice::from_ref(diag), opts)),
        Format::Json => {
            let mut value = diagnostic_json(source, &source.line_index(), diag);
            if let Some(obj) = value.as_object_mut() {
                obj.insert("event".into(), "error".into());
                obj.insert("severity".into(), serde_json::to_value(Severity::Error).unwrap_or_default());
            }
            println!("{}", report::json(&value, false));
            println!("{}", report::json(&serde_json::json!({ "event": "done", "ok": false }), false));
        }
    }
}
