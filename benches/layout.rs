//! A layout message of the platform's most components (40, B419) with a
//! variable in every text: its file checked and lowered (the whole front
//! end, in process), and the message rendered by a run (the reply's
//! event, every part filled in, encoded as the JSON `blkc run` prints).
//! Prints microseconds per check and per message.
//!
//! Run with `cargo bench --bench layout`.

mod support;

use std::time::{Duration, Instant};

use blkc::base::source::SourceFile;
use blkc::run::eval::{self, Event, Inputs, MemoryStore, Options};

/// A container of eight sections (a text and a thumbnail each), separators
/// and a gallery, a text, and a row of four buttons: 40 components.
fn source() -> String {
    let mut parts = String::new();
    for i in 0..8 {
        parts.push_str(&format!(
            "            section {{\n                text \"## {{user_name}}'s card {i}\"\n                thumbnail \"https://cdn.example.com/{i}.png?u={{user_id}}\" {{ description \"picture {i}\" }}\n            }}\n"
        ));
        if i < 7 {
            parts.push_str("            separator\n");
        }
    }
    format!(
        "command card \"Show a card\" {{\n    reply {{\n        container {{\n            accent \"#5865F2\"\n{parts}            gallery {{\n                media \"https://cdn.example.com/a.png\" {{ description \"a\" }}\n                media \"https://cdn.example.com/b.png\" {{ spoiler }}\n            }}\n        }}\n        text \"-# Asked by {{user_name}}\"\n        text \"-# In {{channel_id}}\"\n        button {{ label \"Rules\" url \"https://example.com/rules\" }}\n        button {{ label \"Help\" url \"https://example.com/help\" }}\n        button {{ label \"Site\" url \"https://example.com/\" }}\n        button {{ label \"More\" url \"https://example.com/more\" }}\n    }}\n}}\n"
    )
}

/// The median of `f`'s time over seven samples of `n` calls, per call.
fn median_per_call(n: usize, mut f: impl FnMut()) -> Duration {
    let mut samples: Vec<Duration> = (0..7)
        .map(|_| {
            let started = Instant::now();
            for _ in 0..n {
                f();
            }
            started.elapsed() / n as u32
        })
        .collect();
    samples.sort();
    samples[3]
}

fn main() {
    let text = source();
    let checked = blkc::language::load::check_source(SourceFile::new("card.blk", text.clone()));
    assert!(!checked.has_errors(), "{:?}", checked.diagnostics);
    let plan = blkc::language::plan::lower(&checked).expect("the card lowers");
    let vars = [("user_name", "Ada"), ("user_id", "1001"), ("channel_id", "888")];
    let inputs = Inputs { vars: vars.map(|(k, v)| (k.into(), v.into())).into(), ..Inputs::default() };
    let options = Options { offline: true, ..Options::default() };
    let render = || -> Vec<u8> {
        let mut said = Vec::new();
        let mut store = MemoryStore::default();
        eval::run(&plan, &plan.trees[0], &inputs, &options, &mut store, &mut |e| {
            if matches!(e, Event::Reply { .. }) {
                said = serde_json::to_vec(&e).expect("an event encodes");
            }
        })
        .expect("the card renders");
        said
    };
    let json: serde_json::Value = serde_json::from_slice(&render()).unwrap();
    let shown = json.to_string();
    assert!(shown.contains("Ada's card 7") && shown.contains("u=1001") && !shown.contains("{user"), "{shown}");
    let n = support::sized(2_000, 2);
    let check = median_per_call(n / 10 + 1, || {
        let checked = blkc::language::load::check_source(SourceFile::new("card.blk", text.clone()));
        std::hint::black_box(blkc::language::plan::lower(&checked).is_ok());
    });
    let rendered = median_per_call(n, || {
        std::hint::black_box(render());
    });
    println!(
        "layout: a message of 40 components, {} bytes of .blk, {} bytes of JSON rendered",
        text.len(),
        shown.len()
    );
    println!("layout: checked and lowered in {:.1} µs (median of 7)", check.as_secs_f64() * 1e6);
    println!("layout: rendered by a run, encoded, in {:.1} µs (median of 7)", rendered.as_secs_f64() * 1e6);
}
