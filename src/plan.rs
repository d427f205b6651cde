//! The checked AST lowered to a Plan: plain data the runner executes.
//!
//! Templates are compiled into literal and variable parts and response paths
//! are pre-split, so the runner never sees source syntax. `blkc build` writes
//! a Plan as versioned JSON (docs/plan.md). Secrets and the bot token appear
//! only as their slots, never as values.

use serde::{Deserialize, Serialize};

use crate::ast::{self, CompareOp, Else, FieldKind, Item, Node, Part, TreeKind, Value, Var};
use crate::source::Span;

/// The version of the Plan's JSON format.
pub const FORMAT: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub format: u32,
    /// The source file the plan was built from, for positions in messages.
    pub source: String,
    /// The chat platform's API base URL, where `{bot_token}` may be sent.
    pub platform: String,
    /// Declared custom variables and their defaults.
    pub variables: Vec<Variable>,
    pub trees: Vec<Tree>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Variable {
    pub name: String,
    pub default: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tree {
    pub kind: TreeKind,
    pub name: String,
    pub options: Vec<String>,
    pub steps: Vec<Step>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "step", rename_all = "lowercase")]
pub enum Step {
    Request(Box<Request>),
    Reply { text: Template, span: Span },
    Save { name: String, value: Val, span: Span },
    If { condition: Condition, then: Vec<Step>, otherwise: Vec<Step>, span: Span },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Method {
    GET,
    POST,
    PUT,
    DELETE,
    PATCH,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::GET => "GET",
            Method::POST => "POST",
            Method::PUT => "PUT",
            Method::DELETE => "DELETE",
            Method::PATCH => "PATCH",
        }
    }

    fn parse(s: &str) -> Option<Method> {
        Some(match s {
            "GET" => Method::GET,
            "POST" => Method::POST,
            "PUT" => Method::PUT,
            "DELETE" => Method::DELETE,
            "PATCH" => Method::PATCH,
            _ => return None,
        })
    }
}

/// One API block, ready to send.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    pub block: String,
    pub method: Method,
    pub url: Template,
    pub params: Vec<(String, Template)>,
    pub headers: Vec<(String, Template)>,
    /// The JSON body (always an object), if the block has one.
    pub body: Option<Val>,
    /// The sample file, as written in the block (relative to the source).
    pub sample: Option<String>,
    pub allow_bot_token: bool,
    pub span: Span,
}

/// A compiled string template.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Template {
    pub parts: Vec<Seg>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Seg {
    Text(String),
    /// A trigger, option or custom variable.
    Var {
        name: String,
        span: Span,
    },
    BotToken,
    /// A secret slot, filled at run time.
    Secret {
        name: String,
    },
    Ref(Path),
}

/// A pre-split response path: `api_<block>[response.a.0]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Path {
    pub block: String,
    /// `true` for `[status]`, `false` for `[response…]`.
    pub status: bool,
    pub keys: Vec<Key>,
    /// The path as written, for messages and for rendering it as text.
    pub text: String,
    pub span: Span,
}

/// One level of a path: a key, and its index when it is one
/// ([`crate::path::index`], computed once here).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Key {
    pub name: String,
    pub index: Option<usize>,
    pub span: Span,
}

impl crate::path::Segment for Key {
    fn text(&self) -> &str {
        &self.name
    }

    fn index(&self) -> Option<usize> {
        self.index
    }
}

/// A JSON value template.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Val {
    Str(Template),
    Json(serde_json::Value),
    Ref(Path),
    Object(Vec<(String, Val)>),
    Array(Vec<Val>),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Condition {
    pub left: Val,
    pub test: Option<(CompareOp, Val)>,
    pub span: Span,
}

/// Lowers a checked file (one without errors) to a Plan.
pub fn lower(file: &ast::File, source: &str) -> Plan {
    let mut plan = Plan {
        format: FORMAT,
        source: source.to_string(),
        platform: crate::vocab::DEFAULT_PLATFORM.to_string(),
        variables: Vec::new(),
        trees: Vec::new(),
    };
    for item in &file.items {
        match item {
            Item::Platform(p) => plan.platform = p.url.value.to_string(),
            Item::Var(v) => plan.variables.push(Variable {
                name: v.name.name.to_string(),
                default: v.default.as_ref().map(|d| d.value.to_string()),
            }),
            Item::Tree(t) => plan.trees.push(Tree {
                kind: t.kind,
                name: t.name.name.to_string(),
                options: t
                    .body
                    .iter()
                    .filter_map(|n| match n {
                        Node::Option(o) => Some(o.name.name.to_string()),
                        _ => None,
                    })
                    .collect(),
                steps: steps(&t.body),
            }),
        }
    }
    plan
}

fn steps(nodes: &[Node]) -> Vec<Step> {
    nodes.iter().filter_map(step).collect()
}

fn step(node: &Node) -> Option<Step> {
    Some(match node {
        Node::Option(_) => return None,
        Node::Api(b) => Step::Request(Box::new(request(b))),
        Node::Reply(r) => Step::Reply { text: template(&r.text), span: r.span },
        Node::Save(s) => Step::Save { name: s.name.name.to_string(), value: val(&s.value), span: s.span },
        Node::If(i) => if_step(i),
    })
}

fn if_step(node: &ast::IfNode) -> Step {
    let otherwise = match &node.otherwise {
        Some(Else::If(i)) => vec![if_step(i)],
        Some(Else::Branch(b)) => steps(&b.body),
        None => Vec::new(),
    };
    Step::If {
        condition: Condition {
            left: val(&node.condition.left),
            test: node.condition.test.as_ref().map(|(op, _, right)| (*op, val(right))),
            span: node.condition.span,
        },
        then: steps(&node.then.body),
        otherwise,
        span: node.span,
    }
}

fn request(block: &ast::ApiBlock) -> Request {
    let pairs = |ps: &[ast::Pair]| ps.iter().map(|p| (p.key.name.to_string(), template(&p.value))).collect();
    Request {
        block: block.name.name.to_string(),
        // The checker guarantees a known method; GET is never reached for a
        // checked file without one.
        method: block.method().and_then(|m| Method::parse(&m.name)).unwrap_or(Method::GET),
        url: block.url().map(template).unwrap_or(Template { parts: Vec::new(), span: block.span }),
        params: pairs(block.params()),
        headers: pairs(block.headers()),
        body: block.body().map(|(entries, _)| object(entries)),
        sample: block.fields.iter().find_map(|f| match &f.kind {
            FieldKind::Sample(s) => Some(s.value.to_string()),
            _ => None,
        }),
        allow_bot_token: block.allows_bot_token(),
        span: block.span,
    }
}

fn object(entries: &[ast::Entry]) -> Val {
    Val::Object(entries.iter().map(|e| (e.key.name.to_string(), val(&e.value))).collect())
}

fn val(v: &Value) -> Val {
    match v {
        Value::Str(t) => Val::Str(template(t)),
        Value::Number(n, _) => Val::Json(serde_json::from_str(n).unwrap_or(serde_json::Value::Null)),
        Value::Bool(b, _) => Val::Json(serde_json::Value::Bool(*b)),
        Value::Null(_) => Val::Json(serde_json::Value::Null),
        Value::Ref(r) => Val::Ref(path(r)),
        Value::Object(entries, _) => object(entries),
        Value::Array(items, _) => Val::Array(items.iter().map(val).collect()),
    }
}

pub fn template(t: &ast::Template) -> Template {
    let parts = t
        .parts
        .iter()
        .map(|p| match p {
            Part::Lit(s, _) => Seg::Text(s.to_string()),
            Part::Secret(id) => Seg::Secret { name: id.name.to_string() },
            Part::Var(Var::BotToken(_)) => Seg::BotToken,
            Part::Var(Var::Named(id)) => Seg::Var { name: id.name.to_string(), span: id.span },
            Part::Var(Var::Ref(r)) => Seg::Ref(path(r)),
        })
        .collect();
    Template { parts, span: t.span }
}

fn path(r: &ast::Reference) -> Path {
    Path {
        block: r.block.name.to_string(),
        status: r.root.name == "status",
        keys: r
            .segments
            .iter()
            .map(|s| Key { name: s.text.to_string(), index: crate::path::index(&s.text), span: s.span })
            .collect(),
        text: format!("api_{}[{}]", r.block.name, r.path_text()),
        span: r.span,
    }
}
