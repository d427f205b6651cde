//! One URL layout (src/base/urls.rs) for the checker and the runner: for
//! generated URL templates and hostile values, a file `blkc check` accepts
//! is never refused by the request builder for a reason visible in the file;
//! a value outside the scheme and authority never changes where the request
//! goes; and a value sends the same bytes whether written in the URL's query
//! or in `params`.

use std::collections::HashMap;

use blkc::base::source::{SourceFile, Span};
use blkc::base::urls::Destination;
use blkc::language::plan::{Request, Step};
use blkc::run::eval::render::{Missing, Response, Scope};
use blkc::run::eval::{Redactor, Refusal};
use proptest::prelude::*;

struct Values(HashMap<String, String>, blkc::base::world::Real);

impl Scope for Values {
    fn response(&mut self, _: &blkc::language::plan::Path) -> Option<&Response> {
        None
    }
    fn variable(&mut self, name: &str, _: Span) -> Option<String> {
        self.0.get(name).cloned()
    }
    fn secret(&self, _: &str) -> Option<&str> {
        None
    }
    fn bot_token(&self) -> Option<&str> {
        None
    }
    fn world(&mut self) -> &mut dyn blkc::base::world::World {
        &mut self.1
    }
    fn missing(&mut self, _: Missing<'_>) -> String {
        String::new()
    }
}

const OPTIONS: [&str; 4] = ["s", "h", "p", "v"];

/// The file with `url` (and `params`, if any) in one block, checked: the
/// plan's request, or `None` when `blkc check` finds an error.
fn request(url: &str, params: &str) -> Option<Request> {
    let options: String = OPTIONS.iter().map(|o| format!("    option {o}\n")).collect();
    let text = format!(
        "command c {{\n{options}    api a {{\n        method GET\n        url \"{url}\"\n{params}    }}\n    reply \"done\"\n}}\n"
    );
    let checked = blkc::language::load::check_source(SourceFile::new("u.blk", text));
    if checked.diagnostics.iter().any(|d| d.is_error()) {
        return None;
    }
    let plan = blkc::language::plan::lower(&checked).ok()?;
    plan.trees[0].steps.iter().find_map(|s| match s {
        Step::Request(r) => Some((**r).clone()),
        _ => None,
    })
}

fn build(r: &Request, values: &HashMap<String, String>) -> Result<blkc::run::eval::request::Built, Refusal> {
    let platform = blkc::language::policy::Platform::default_platform();
    blkc::run::eval::request::build(
        r,
        &mut Values(values.clone(), Default::default()),
        Some(&platform),
        false,
        &Redactor::default(),
    )
}

fn url_template() -> impl Strategy<Value = String> {
    let scheme = prop::sample::select(vec!["https://", "http://", "{option_s}://"]);
    let host = prop::sample::select(vec![
        "api.example.com",
        "{option_h}",
        "api.{option_h}.example.com",
        "127.0.0.1:8080",
        "api.example.com:{option_p}",
    ]);
    let path = proptest::collection::vec(
        prop::sample::select(vec!["/v1", "/{option_v}", "/a{option_v}b", "/{option_v}/x", "/", "/%2e"]),
        0..4,
    );
    let query = prop::sample::select(vec!["", "?q={option_v}", "?a=1&q={option_v}", "?q=x{option_v}#f{option_v}"]);
    (scheme, host, path, query).prop_map(|(s, h, p, q)| format!("{s}{h}{}{q}", p.concat()))
}

fn hostile() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "..",
            ".",
            "%2e%2e",
            "a b+c",
            "x/../../admin",
            "evil.com",
            "evil.com#",
            "user@evil.com",
            "127.0.0.1",
            "[::1]",
            "a?b=c&d",
            "#frag",
            "\u{e9}t\u{e9}",
            "%00",
            "a%2Fb",
            "localhost:22",
            "https",
            "javascript",
            "",
            "+",
            "\\",
            "a\"b",
            "{x}",
            "<KEY>",
        ])
        .prop_map(String::from),
        "\\PC{0,12}",
    ]
}

/// Refusals that a value, not the file, causes.
fn caused_by_a_value(refusal: &Refusal) -> bool {
    matches!(refusal, Refusal::Steered { .. } | Refusal::DotSegment { .. } | Refusal::TooLong { .. })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn what_check_accepts_the_runner_refuses_only_for_a_value(
        url in url_template(),
        values in proptest::collection::vec(hostile(), 4),
    ) {
        let Some(r) = request(&url, "") else { return Ok(()) };
        let benign: HashMap<String, String> =
            OPTIONS.iter().map(|o| (format!("option_{o}"), if *o == "s" { "https".into() } else if *o == "p" { "8443".into() } else { "x1".into() })).collect();
        let plain = build(&r, &benign);
        prop_assert!(plain.is_ok(), "{url}: checked clean, refused with ordinary values: {:?}", plain.err());
        let plain = plain.unwrap_or_else(|_| unreachable!());
        let hostile: HashMap<String, String> =
            OPTIONS.iter().zip(&values).map(|(o, v)| (format!("option_{o}"), v.clone())).collect();
        match build(&r, &hostile) {
            Ok(built) => {
                // Only a value in the scheme or authority may move the request.
                let steers = url.contains("{option_s}") || url.contains("{option_h}") || url.contains("{option_p}");
                if !steers {
                    prop_assert_eq!(Destination::of(&built.url), Destination::of(&plain.url), "{} with {:?}", url, values);
                }
                prop_assert_eq!(built.guarded, plain.guarded);
            }
            Err(refusal) => prop_assert!(caused_by_a_value(&refusal), "{url} with {values:?}: {refusal:?}"),
        }
    }

    #[test]
    fn a_value_is_encoded_alike_in_the_url_and_in_params(value in hostile()) {
        let values: HashMap<String, String> = [("option_v".to_string(), value.clone())].into();
        let inline = request("https://api.example.com/s?q={option_v}", "").expect("checks clean");
        let params = request("https://api.example.com/s", "        params { q = \"{option_v}\" }\n").expect("checks clean");
        let (inline, params) = (build(&inline, &values), build(&params, &values));
        let (inline, params) = (inline.expect("built"), params.expect("built"));
        prop_assert_eq!(inline.url.as_str(), params.url.as_str(), "{:?}", value);
    }
}

#[test]
fn the_issue_s_example_sends_the_same_bytes() {
    let values: HashMap<String, String> = [("option_v".to_string(), "a b+c".to_string())].into();
    let inline = build(&request("https://api.example.com/s?q={option_v}", "").unwrap(), &values).unwrap();
    let params =
        build(&request("https://api.example.com/s", "        params { q = \"{option_v}\" }\n").unwrap(), &values)
            .unwrap();
    assert_eq!(inline.url.as_str(), "https://api.example.com/s?q=a%20b%2Bc");
    assert_eq!(params.url.as_str(), "https://api.example.com/s?q=a%20b%2Bc");
}
