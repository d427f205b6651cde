//! Interpolation alone: one template with 1,000 response-path lookups into a
//! 100 KB response, rendered over and over. Prints nanoseconds per lookup
//! (lookup and render into the output text).
//!
//! Run with `cargo bench --bench interpolation`.

mod support;

use std::time::Instant;

use blkc::base::source::{SourceFile, Span};
use blkc::language::ast::{Item, Node};
use blkc::language::plan;
use blkc::run::eval::render::{self, Body, Missing, Response, Scope};

struct Bench {
    response: Response,
    world: blkc::base::world::Real,
}

impl Scope for Bench {
    fn response(&mut self, _path: &blkc::language::plan::Path) -> Option<&Response> {
        Some(&self.response)
    }
    fn variable(&mut self, _name: &str, _span: Span) -> Option<String> {
        None
    }
    fn secret(&self, _name: &str) -> Option<&str> {
        None
    }
    fn bot_token(&self) -> Option<&str> {
        None
    }
    fn world(&mut self) -> &mut dyn blkc::base::world::World {
        &mut self.world
    }
    fn missing(&mut self, _what: Missing<'_>) -> String {
        panic!("every path of the benchmark resolves")
    }
}

/// About 100 KB of JSON: 600 items, each with nested objects and arrays.
fn response() -> serde_json::Value {
    let items: Vec<_> = (0..600)
        .map(|i| {
            serde_json::json!({
                "id": 1_000_000_000_000u64 + i,
                "name": format!("item number {i}"),
                "price": i as f64 * 1.25,
                "tags": ["alpha", "beta", "gamma"],
                "owner": { "login": format!("user{i}"), "profile": { "city": "Paris", "stars": i } },
                "active": i % 2 == 0,
            })
        })
        .collect();
    serde_json::json!({ "data": { "total": 600, "items": items } })
}

/// The template of `slots` (1,000 `{…}`, each followed by a space) in a
/// reply of a command whose block `r` the bench answers.
fn template(slots: &[String]) -> plan::Template {
    let mut text = String::from("command c {\n    api r { method GET url \"https://x.io\" }\n    reply \"");
    for slot in slots {
        text.push_str(slot);
        text.push(' ');
    }
    text.push_str("\"\n}\n");
    let checked = blkc::language::load::check_source(SourceFile::new("bench.blk", text));
    assert!(!checked.has_errors(), "{:?}", checked.diagnostics.first());
    let Item::Tree(tree) = &checked.ast.items[0] else { unreachable!() };
    let Node::Reply(reply) = &tree.body[1] else { unreachable!() };
    plan::template(reply.text().expect("a reply with text"))
}

/// Nanoseconds per `{…}` rendered (the median of seven samples, the best
/// and the worst).
fn measure(template: &plan::Template, scope: &mut Bench) -> [f64; 3] {
    let rounds = support::sized(2000, 2);
    let mut samples = Vec::new();
    for _ in 0..7 {
        let start = Instant::now();
        for _ in 0..rounds {
            std::hint::black_box(render::render(std::hint::black_box(template), scope));
        }
        samples.push(start.elapsed().as_nanos() as f64 / (rounds * 1000) as f64);
    }
    samples.sort_by(f64::total_cmp);
    [samples[3], samples[0], samples[6]]
}

fn main() {
    let json = response();
    let size = json.to_string().len();
    let fields =
        ["id", "name", "price", "tags.1", "owner.login", "owner.profile.city", "owner.profile.stars", "active"];
    let lookups: Vec<String> = (0..1000)
        .map(|i| format!("{{api_r[response.data.items.{}.{}]}}", i * 7 % 600, fields[i % fields.len()]))
        .collect();
    // The data helpers and random (issue 53): each kind in a template of
    // its own.
    type Slot = dyn Fn(&str) -> String;
    let kinds: [(&str, &Slot); 8] = [
        ("`|upper` of a text", &|item| format!("{{{item}.name]|upper}}")),
        ("`|round 1` of a number", &|item| format!("{{{item}.price]|round 1}}")),
        ("`|join ' '` of a list", &|item| format!("{{{item}.tags]|join ' '}}")),
        ("`|replace|pad` of a text", &|item| format!("{{{item}.owner.login]|replace 'user' 'member'|pad 12}}")),
        ("`|count` of a list", &|item| format!("{{{item}.tags]|count}}")),
        ("`|pick` of a list", &|item| format!("{{{item}.tags]|pick}}")),
        ("`{random 1 6}`", &|_| "{random 1 6}".to_string()),
        ("`{dice 2d6|sum}`", &|_| "{dice 2d6|sum}".to_string()),
    ];
    let helpers: Vec<(&str, Vec<String>)> = kinds
        .iter()
        .map(|(what, slot)| {
            (*what, (0..1000).map(|i| slot(&format!("api_r[response.data.items.{}", i * 7 % 600))).collect())
        })
        .collect();
    let data = blkc::base::data::Data::parse(json.to_string().as_bytes()).unwrap().data;
    let mut scope = Bench { response: Response::new(200, Body::Json(data)), world: Default::default() };
    let mut templates = vec![("a lookup", template(&lookups))];
    templates.extend(helpers.iter().map(|(what, slots)| (*what, template(slots))));
    for (what, template) in &templates {
        let out = render::render(template, &mut scope);
        assert!(!out.contains("{api_r") && !out.contains("{random") && !out.contains("{dice"), "{what}: {out}");
    }
    assert!(render::render(&templates[0].1, &mut scope).contains("item number 3"));
    assert!(render::render(&templates[1].1, &mut scope).contains("ITEM NUMBER 7"));
    println!(
        "interpolation: response {:.0} KB, 1000 {{…}} per template, {} renders per sample",
        size as f64 / 1e3,
        support::sized(2000, 2)
    );
    for (what, template) in &templates {
        let [median, best, worst] = measure(template, &mut scope);
        println!("interpolation: {what}: median {median:.1} ns a {{…}} rendered (best {best:.1}, worst {worst:.1})");
    }
}
