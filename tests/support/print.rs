//! Prints an AST back as canonical source, for the round-trip property.

use blkc::language::ast::*;

pub fn file(f: &File) -> String {
    let mut out = String::new();
    for item in &f.items {
        match item {
            Item::Tree(t) => tree(t, &mut out),
            Item::Var(v) => {
                out.push_str(&format!("var {}", v.name.name));
                if let Some(s) = &v.scope {
                    out.push_str(&format!(" per {}", s.name));
                }
                if let Some(d) = &v.default {
                    out.push_str(&format!(" = {}", fixed(d)));
                }
                if let Some(e) = &v.expires {
                    out.push_str(&format!(" expires {}", text(&e.value)));
                }
                out.push('\n');
            }
            Item::Platform(p) => out.push_str(&format!("platform {}\n", text(&p.url.value))),
            Item::Include(i) => out.push_str(&format!("include {}\n", text(&i.path.value))),
            Item::Failed(b, _) => {
                out.push_str("failed {\n");
                nodes(&b.body, 1, &mut out);
                out.push_str("}\n");
            }
        }
    }
    out
}

fn tree(t: &Tree, out: &mut String) {
    match &t.menu {
        Some(m) => out.push_str(&format!("{} {} for {}", t.kind.as_str(), text(&t.name.name), m.target.name)),
        None => out.push_str(&format!("{} {}", t.kind.as_str(), t.name.name)),
    }
    if let Some(d) = &t.description {
        out.push_str(&format!(" {}", text(&d.value)));
    }
    if let Some(s) = &t.schedule {
        out.push_str(&format!(" {} {}", s.written.as_str(), text(&s.when.value)));
        if let Some(zone) = &s.zone {
            out.push_str(&format!(" in {}", text(&zone.value)));
        }
        out.push_str(&format!(" channel {}", template(&s.channel)));
    }
    if let Some(w) = &t.webhook {
        out.push_str(&blkc::language::format::webhook_head(w));
    }
    if let Some(c) = &t.cooldown {
        out.push_str(&settings(std::slice::from_ref(c)));
    }
    out.push_str(" {\n");
    nodes(&t.body, 1, out);
    out.push_str("}\n");
}

fn indent(level: usize) -> String {
    "    ".repeat(level)
}

fn nodes(ns: &[Node], level: usize, out: &mut String) {
    for n in ns {
        out.push_str(&indent(level));
        match n {
            Node::Option(o) => option(o, level, out),
            Node::Sub(s) => {
                out.push_str(&format!("{} {}", s.keyword(), s.word.name));
                if let Some(d) = &s.tree.description {
                    out.push_str(&format!(" {}", text(&d.value)));
                }
                if let Some(c) = &s.tree.cooldown {
                    out.push_str(&settings(std::slice::from_ref(c)));
                }
                out.push_str(" {\n");
                nodes(&s.tree.body, level + 1, out);
                out.push_str(&indent(level));
                out.push_str("}\n");
            }
            Node::Choice(c) => out.push_str(&format!("choice {} {}\n", template(&c.name), template(&c.value))),
            Node::Register(r) => register(r, out),
            Node::Guard(g) => guard(g, out),
            Node::Reply(r) => reply(r, out),
            Node::Form(f) => {
                out.push_str(&format!("form {} {{{}", f.handler.name, settings(&f.settings)));
                f.texts.iter().for_each(|t| reply_item(t, out));
                for i in &f.inputs {
                    out.push_str(&format!(" input {} {{{}", i.name.name, settings(&i.settings)));
                    for c in &i.choices {
                        out.push_str(&format!(" choice {} {}", template(&c.label), template(&c.value)));
                    }
                    out.push_str(" }");
                }
                out.push_str(" }\n");
            }
            Node::Save(s) if s.op == SaveOp::Clear => out.push_str(&format!("save {} clear\n", s.name.name)),
            Node::Save(s) => {
                out.push_str(&format!("save {} {} {}\n", s.name.name, s.op.as_str(), value(&s.value, level)))
            }
            Node::SaveField(f) => {
                let path: Vec<&str> = f.path.iter().map(|s| s.text.as_str()).collect();
                let target = format!("{}[{}]", f.save.name.name, path.join("."));
                match f.save.op {
                    SaveOp::Clear => out.push_str(&format!("save {target} clear\n")),
                    op => out.push_str(&format!("save {target} {} {}\n", op.as_str(), value(&f.save.value, level))),
                }
            }
            Node::Api(b) => api(b, level, out),
            Node::If(i) => {
                if_node(i, level, out);
                out.push('\n');
            }
            Node::For(f) => {
                out.push_str(&format!("for {} in {}", f.item.name, loop_source(&f.source)));
                if let Some(o) = &f.order {
                    out.push_str(&format!(" by {}{}", loop_source(&o.key), if o.descending { " desc" } else { "" }));
                }
                if let Some(limit) = &f.limit {
                    out.push_str(&format!(" limit {}", value(limit, level)));
                }
                if let Some(j) = &f.join {
                    out.push_str(&format!(" join {} into {}", template(&j.separator), j.into.name));
                }
                out.push_str(" {\n");
                nodes(&f.body.body, level + 1, out);
                out.push_str(&indent(level));
                out.push_str("}\n");
            }
            Node::Text(t, _) => out.push_str(&format!("text {}\n", template(t))),
            Node::Stop(_) => out.push_str("stop\n"),
            Node::Action(a) => action(a, out),
            Node::Failed(b, _) => {
                out.push_str("failed {\n");
                nodes(&b.body, level + 1, out);
                out.push_str(&indent(level));
                out.push_str("}\n");
            }
            Node::With(w) => {
                out.push_str(&format!("with {} {} {{\n", w.scope.name, w.whose.name));
                nodes(&w.body.body, level + 1, out);
                out.push_str(&indent(level));
                out.push_str("}\n");
            }
            Node::Together(b, _) => {
                out.push_str("together {\n");
                nodes(&b.body, level + 1, out);
                out.push_str(&indent(level));
                out.push_str("}\n");
            }
            Node::Later(l) => {
                out.push_str(&format!("{} {}", if l.at { "at" } else { "after" }, template(&l.when)));
                if let Some(k) = &l.key {
                    out.push_str(&format!(" key {}", template(k)));
                }
                if let Some(n) = &l.note {
                    out.push_str(&format!(" note {}", template(n)));
                }
                if let Some(s) = &l.scope {
                    out.push_str(&format!(" per {}", s.name));
                }
                out.push_str(" {\n");
                nodes(&l.body.body, level + 1, out);
                out.push_str(&indent(level));
                out.push_str("}\n");
            }
            Node::Cancel(c) => {
                out.push_str(&format!("cancel {}", template(&c.key)));
                if let Some(s) = &c.scope {
                    out.push_str(&format!(" per {}", s.name));
                }
                out.push('\n');
            }
            Node::Await(a) => {
                out.push_str(&format!("await message {} as {} {{\n", template(&a.wait), a.name.name));
                nodes(&a.body.body, level + 1, out);
                out.push_str(&indent(level));
                out.push('}');
                if let Some(t) = &a.timeout {
                    out.push_str(" timeout {\n");
                    nodes(&t.body, level + 1, out);
                    out.push_str(&indent(level));
                    out.push('}');
                }
                out.push('\n');
            }
        }
    }
}

/// `option NAME "…" TYPE [min N] [max N] [required] [in …] [choices { … } | autocomplete { … }]`.
fn option(o: &OptionDecl, level: usize, out: &mut String) {
    out.push_str(&format!("option {}", o.name.name));
    if let Some(d) = &o.description {
        out.push_str(&format!(" {}", text(&d.value)));
    }
    if let Some(k) = &o.kind {
        out.push_str(&format!(" {}", k.name));
    }
    for b in &o.bounds {
        out.push_str(&format!(" {} {}", if b.max { "max" } else { "min" }, b.value));
    }
    if o.required.is_some() {
        out.push_str(" required");
    }
    if let Some(w) = &o.channels {
        out.push_str(&format!(" in {}", words(w)));
    }
    if let Some((_, t)) = &o.file_types {
        out.push_str(&format!(" types {}", text(&t.value)));
    }
    if let Some(c) = &o.choices {
        out.push_str(" choices {");
        for choice in &c.entries {
            let value = match &choice.value {
                ChoiceValue::Text(t) => text(&t.value),
                ChoiceValue::Number(n, _) => n.to_string(),
            };
            out.push_str(&format!(" {} = {value},", text(&choice.name.name)));
        }
        out.push_str(" }");
    }
    if let Some(a) = &o.autocomplete {
        out.push_str(" autocomplete {\n");
        nodes(&a.tree.body, level + 1, out);
        out.push_str(&indent(level));
        out.push('}');
    }
    out.push('\n');
}

/// A reply on one line: `reply "…"`, or `reply { text "…" ephemeral
/// embed { title "…" field "…" "…" inline } }`.
/// `VERB [KIND] [SUBJECT] [WORD VALUE, …]… [MESSAGE]`.
fn action(a: &Action, out: &mut String) {
    out.push_str(&a.verb.name);
    if let Some(k) = &a.kind {
        out.push_str(&format!(" {}", k.name));
    }
    let value = |v: &ActionValue| match v {
        ActionValue::Text(t) => template(t),
        ActionValue::Number(n, _) => n.to_string(),
        ActionValue::Name(n) => n.name.to_string(),
    };
    if let Some(s) = &a.subject {
        out.push_str(&format!(" {}", value(s)));
    }
    for arg in &a.args {
        out.push_str(&format!(" {}", arg.word.name));
        let values: Vec<String> = arg.values.iter().map(value).collect();
        if !values.is_empty() {
            out.push_str(&format!(" {}", values.join(", ")));
        }
    }
    match &a.message {
        Some(m) => {
            out.push(' ');
            message(m, out);
        }
        None => out.push('\n'),
    }
}

fn reply(r: &Reply, out: &mut String) {
    out.push_str(r.keyword());
    out.push(' ');
    message(r, out);
}

/// A message's parts: `"text"`, or `{ text … embed … button … }`.
fn message(r: &Reply, out: &mut String) {
    if let (false, Some(t)) = (r.block, r.text()) {
        out.push_str(&format!("{}\n", template(t)));
        return;
    }
    out.push('{');
    r.items.iter().for_each(|item| reply_item(item, out));
    out.push_str(" }\n");
}

/// A part of a message, after a blank.
fn reply_item(item: &ReplyItem, out: &mut String) {
    match item {
        ReplyItem::Text { value, .. } => out.push_str(&format!(" text {}", template(value))),
        ReplyItem::Ephemeral(_) => out.push_str(" ephemeral"),
        ReplyItem::Translation(t) => out.push_str(&format!(" text {} {}", t.locale.name, template(&t.value))),
        ReplyItem::Embed(e) => {
            out.push_str(" embed {");
            for i in &e.items {
                match i {
                    EmbedItem::Part { part, value, .. } => {
                        out.push_str(&format!(" {} {}", part.as_str(), template(value)))
                    }
                    EmbedItem::Field { name, value, inline, .. } => {
                        let inline = if inline.is_some() { " inline" } else { "" };
                        out.push_str(&format!(" field {} {}{inline}", template(name), template(value)))
                    }
                }
            }
            out.push_str(" }");
        }
        ReplyItem::Component(c) => {
            out.push_str(&format!(" {}", c.kind.as_str()));
            if let Some(h) = &c.handler {
                out.push_str(&format!(" {}", h.name));
            }
            out.push_str(&format!(" {{{}", settings(&c.settings)));
            for choice in &c.choices {
                if let Some(l) = &choice.each {
                    out.push_str(&format!(" for {} in {}", l.item.name, loop_source(&l.source)));
                    if let Some(limit) = &l.limit {
                        out.push_str(&format!(" limit {}", value(limit, 0)));
                    }
                    out.push_str(" {");
                }
                out.push_str(&format!(" choice {} {}", template(&choice.label), template(&choice.value)));
                if !choice.settings.is_empty() {
                    out.push_str(&format!(" {{{} }}", settings(&choice.settings)));
                }
                if choice.each.is_some() {
                    out.push_str(" }");
                }
            }
            out.push_str(" }");
        }
        ReplyItem::Poll(p) => {
            out.push_str(&format!(" poll {{{}", settings(&p.settings)));
            for a in &p.answers {
                out.push_str(&format!(" answer {}", template(&a.text)));
                if !a.settings.is_empty() {
                    out.push_str(&format!(" {{{} }}", settings(&a.settings)));
                }
            }
            out.push_str(" }");
        }
        ReplyItem::Layout(l) => {
            out.push_str(&format!(" {}", l.kind.as_str()));
            if l.kind == blkc::language::ast::LayoutKind::Separator && l.settings.is_empty() {
                return;
            }
            out.push_str(&format!(" {{{}", settings(&l.settings)));
            for m in &l.media {
                let word = if l.kind == blkc::language::ast::LayoutKind::Section { "thumbnail" } else { "media" };
                out.push_str(&format!(" {word} {}", template(&m.url)));
                if !m.settings.is_empty() {
                    out.push_str(&format!(" {{{} }}", settings(&m.settings)));
                }
            }
            l.items.iter().for_each(|item| reply_item(item, out));
            out.push_str(" }");
        }
        ReplyItem::File(f) => {
            out.push_str(&format!(" file {}", file_source(&f.source)));
            if !f.settings.is_empty() {
                out.push_str(&format!(" {{{} }}", settings(&f.settings)));
            }
        }
    }
}

/// Where a file's bytes come from, as written.
fn file_source(source: &FileSource) -> String {
    match source {
        FileSource::Path(p) => text(&p.value),
        FileSource::Name(n) => n.name.to_string(),
        FileSource::Text(t) => format!("text {}", template(t)),
    }
}

/// Settings on one line, each after a blank: ` label "Yes" max 3 disabled`.
fn settings(list: &[Setting]) -> String {
    list.iter()
        .map(|s| {
            let line = match &s.value {
                None => format!(" {}", s.key.name),
                Some(SettingValue::Text(t)) => format!(" {} {}", s.key.name, template(t)),
                Some(SettingValue::Number(n, _)) => format!(" {} {n}", s.key.name),
            };
            match &s.scope {
                Some(scope) => format!("{line} per {}", scope.name),
                None => line,
            }
        })
        .collect()
}

fn if_node(i: &IfNode, level: usize, out: &mut String) {
    for (n, link) in i.links.iter().enumerate() {
        if n > 0 {
            out.push_str(" else ");
        }
        out.push_str(&format!("if {}", value(&link.condition.left, level)));
        if let Some((op, _, right)) = &link.condition.test {
            out.push_str(&format!(" {} {}", op.as_str(), value(right, level)));
        }
        out.push_str(" {\n");
        nodes(&link.then.body, level + 1, out);
        out.push_str(&indent(level));
        out.push('}');
    }
    if let Some(b) = &i.otherwise {
        out.push_str(" else {\n");
        nodes(&b.body, level + 1, out);
        out.push_str(&indent(level));
        out.push('}');
    }
}

fn api(b: &ApiBlock, level: usize, out: &mut String) {
    out.push_str(&format!("api {} {{\n", b.name.name));
    for f in &b.fields {
        out.push_str(&indent(level + 1));
        match &f.kind {
            FieldKind::Method(m) => out.push_str(&format!("method {}", m.name)),
            FieldKind::Url(u) => out.push_str(&format!("url {}", template(u))),
            FieldKind::Params(ps) => out.push_str(&format!("params {}", pairs(ps))),
            FieldKind::Headers(hs) => out.push_str(&format!("headers {}", pairs(hs))),
            FieldKind::Body(b) => out.push_str(&format!("body {}", body(b, level + 1))),
            FieldKind::Sample(samples) => {
                let texts: Vec<String> = samples.iter().map(|s| text(&s.value)).collect();
                out.push_str(&format!("sample {}", texts.join(", ")));
            }
            FieldKind::Cache(c) => match &**c {
                Cache::For(t) => out.push_str(&format!("cache {}", text(&t.value))),
                Cache::From(k) => out.push_str(&format!("cache {}", key(&k.name))),
            },
            FieldKind::Pages(p) => {
                let settings: Vec<String> = p
                    .settings
                    .iter()
                    .map(|s| match s {
                        PageSetting::Items(_, k) => format!("items {}", key(&k.name)),
                        PageSetting::Cursor(_, k, p) => format!("cursor {} param {}", key(&k.name), key(&p.name)),
                        PageSetting::Next(_, k) => format!("next {}", key(&k.name)),
                        PageSetting::NextLink(_) => "next link".to_string(),
                        PageSetting::Max(_, n) => format!("max {}", n.value),
                        PageSetting::Limit(_, n) => format!("limit {}", n.value),
                    })
                    .collect();
                out.push_str(&format!("pages {{ {} }}", settings.join(" ")));
            }
            FieldKind::Allow(a) => out.push_str(&format!("allow {}", a.name)),
            FieldKind::Auth(a) => {
                let values: Vec<String> = a.values.iter().map(template).collect();
                out.push_str(&format!("auth {} {}", a.scheme.name, values.join(" ")))
            }
            FieldKind::Timeout(t) => out.push_str(&format!("timeout {}", text(&t.value))),
            FieldKind::Retry(r) => {
                out.push_str(&format!("retry {}{}", r.times.value, statuses(&r.on)));
                if let Some(b) = &r.backoff {
                    out.push_str(&format!(" backoff {}", text(&b.value)));
                }
            }
            FieldKind::Failed(f) => {
                out.push_str(&format!("failed{} {{\n", statuses(&f.on)));
                nodes(&f.branch.body, level + 2, out);
                out.push_str(&indent(level + 1));
                out.push('}');
            }
        }
        out.push('\n');
    }
    out.push_str(&indent(level));
    out.push_str("}\n");
}

fn statuses(on: &[Text]) -> String {
    if on.is_empty() {
        return String::new();
    }
    format!(" on {}", on.iter().map(|s| s.value.to_string()).collect::<Vec<_>>().join(", "))
}

fn body(b: &Body, level: usize) -> String {
    match b {
        Body::Json(v @ (Value::Object(..) | Value::Array(..))) => value(v, level),
        Body::Json(v) => format!("json {}", value(v, level)),
        Body::Form(es) => format!("form {}", entries(es, level)),
        Body::Text { text: t, media_type } => match media_type {
            Some(m) => format!("text {} type {}", template(t), text(&m.value)),
            None => format!("text {}", template(t)),
        },
        Body::Multipart(parts) => {
            let items: Vec<String> = parts
                .iter()
                .map(|p| {
                    let v = match &p.value {
                        PartValue::Field(t) => template(t),
                        PartValue::File(f) => {
                            let mut s = format!("file {}", file_source(&f.source));
                            for (w, t) in &f.settings {
                                s.push_str(&format!(" {} {}", w.name, template(t)));
                            }
                            s
                        }
                    };
                    format!("{} = {}", key(&p.key.name), v)
                })
                .collect();
            format!("multipart {{ {} }}", items.join(", "))
        }
    }
}

fn pairs(ps: &[Pair]) -> String {
    let items: Vec<String> = ps.iter().map(|p| format!("{} = {}", key(&p.key.name), template(&p.value))).collect();
    format!("{{ {} }}", items.join(", "))
}

fn entries(es: &[Entry], level: usize) -> String {
    let items: Vec<String> = es.iter().map(|e| format!("{} = {}", key(&e.key.name), value(&e.value, level))).collect();
    format!("{{ {} }}", items.join(", "))
}

/// A `var`'s default: its strings are plain text.
fn fixed(v: &Value) -> String {
    match v {
        Value::Str(t) => text(&t.as_literal().unwrap_or_default()),
        Value::Object(es, _) => {
            let items: Vec<String> = es.iter().map(|e| format!("{} = {}", key(&e.key.name), fixed(&e.value))).collect();
            format!("{{ {} }}", items.join(", "))
        }
        Value::Array(items, _) => format!("[{}]", items.iter().map(fixed).collect::<Vec<_>>().join(", ")),
        other => value(other, 0),
    }
}

pub fn value(v: &Value, level: usize) -> String {
    match v {
        Value::Str(t) => template(t),
        Value::Number(n, _) => n.to_string(),
        Value::Bool(b, _) => b.to_string(),
        Value::Null(_) => "null".into(),
        Value::Ref(r) => reference(r),
        Value::Var(name) => name.name.to_string(),
        Value::Element(e) => element(e),
        Value::Object(es, _) => entries(es, level),
        Value::Array(items, _) => {
            let items: Vec<String> = items.iter().map(|i| value(i, level)).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Arith(e) => expr(e, level),
    }
}

fn expr(e: &Expr, level: usize) -> String {
    match e {
        Expr::Value(v) => value(v, level),
        Expr::Var(name) => name.name.to_string(),
        Expr::Binary(b) => format!("{} {} {}", expr(&b.left, level), b.op.as_str(), expr(&b.right, level)),
        Expr::Group(inner, _) => format!("({})", expr(inner, level)),
    }
}

fn key(k: &str) -> String {
    let bare = !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c));
    if bare {
        k.to_string()
    } else {
        text(k)
    }
}

fn loop_source(source: &LoopSource) -> String {
    match source {
        LoopSource::Ref(r) => reference(r),
        LoopSource::Element(e) => element(e),
        LoopSource::Name(n) => n.name.to_string(),
    }
}

fn element(e: &ElementRef) -> String {
    format!("{}[{}]", e.item.name, e.path_text())
}

fn reference(r: &Reference) -> String {
    format!("api_{}[{}]", r.block.name, r.path_text())
}

fn escape(s: &str, braces: bool) -> String {
    let mut out = String::new();
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '{' | '}' | '<' if braces => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// A plain string literal (braces are text).
pub fn text(s: &str) -> String {
    format!("\"{}\"", escape(s, false))
}

pub fn template(t: &Template) -> String {
    let mut out = String::from("\"");
    for part in &t.parts {
        match part {
            // A `$` right before a variable is written `\$` (a bare `${…}`
            // warns, B134).
            Part::Lit(s, _) => match s.strip_suffix('$') {
                Some(rest) => {
                    out.push_str(&escape(rest, true));
                    out.push_str("\\$");
                }
                None => out.push_str(&escape(s, true)),
            },
            Part::Secret(id) => out.push_str(&format!("<{}>", id.name)),
            Part::Var(Var::BotToken(_)) => out.push_str("{bot_token}"),
            Part::Var(Var::Draw(d)) => out.push_str(&format!("{{{}}}", d.draw.written())),
            Part::Var(Var::Named(id)) => out.push_str(&format!("{{{}}}", id.name)),
            Part::Var(Var::Ref(r)) => out.push_str(&format!("{{{}}}", reference(r))),
            Part::Var(Var::Element(e)) => out.push_str(&format!("{{{}}}", element(e))),
            Part::Var(Var::Helped(h)) => {
                let base = match &h.base {
                    Var::Named(id) => id.name.to_string(),
                    Var::Ref(r) => reference(r),
                    Var::Element(e) => element(e),
                    Var::Draw(d) => d.draw.written(),
                    Var::BotToken(_) | Var::Helped(_) => unreachable!("no helper takes these"),
                };
                out.push_str(&format!("{{{base}{}}}", blkc::language::helpers::written(&h.helpers)));
            }
        }
    }
    out.push('"');
    out
}

fn words(w: &Words) -> String {
    w.words.iter().map(|i| i.name.as_str()).collect::<Vec<_>>().join(", ")
}

fn register(r: &Register, out: &mut String) {
    out.push_str(r.keyword());
    match r {
        Register::Permissions(w) | Register::Contexts(w) | Register::Installs(w) => {
            out.push_str(&format!(" {}", words(w)))
        }
        Register::Nsfw(_) => {}
        Register::Locale(l) => {
            out.push_str(&format!(" {} {}", l.locale.name, text(&l.name.value)));
            if let Some(d) = &l.description {
                out.push_str(&format!(" {}", text(&d.value)));
            }
            out.push_str(" {");
            for o in &l.options {
                out.push_str(&format!(" {} {}", o.option.name, text(&o.name.value)));
                if let Some(d) = &o.description {
                    out.push_str(&format!(" {}", text(&d.value)));
                }
            }
            out.push_str(" }");
        }
    }
    out.push('\n');
}

fn guard(g: &Guard, out: &mut String) {
    let values: Vec<String> = g
        .values
        .iter()
        .map(|v| match v {
            GuardValue::Text(t) => template(t),
            GuardValue::Word(w) => w.name.to_string(),
        })
        .collect();
    out.push_str(&format!("require {} {}\n", g.what.name, values.join(", ")));
}
