//! A fuzz target of the whole front end, on stable Rust: parse, check,
//! render diagnostics as text and as JSON, and build the plan, for inputs
//! made by mutating every example, fixture and documentation snippet.
//!
//! Finding classes: a panic (the test fails with the input), an abort (the
//! test binary dies; run `blkc check` on the printed input), more than 1 s
//! for an input under 1 MB, or more than 20× the input's size in memory
//! (measured by the test binary's counting allocator, above a floor of
//! 8 MiB: every finding is a diagnostic with its JSON, so a small input full
//! of mistakes costs more than 20× itself without growing faster than it).
//!
//! `cargo test` runs 2,000 inputs; `BLKC_FUZZ_CASES=20000 cargo test
//! --release fuzz` runs the issue's 20,000 (and `BLKC_FUZZ_SEED` picks
//! another sequence). Every input is made from the seed alone, so a finding
//! is reproduced by its case number: `BLKC_FUZZ_CASE=N BLKC_FUZZ_DUMP=FILE`
//! writes input N to FILE.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::time::{Duration, Instant};

use blkc::base::diagnostics::render::{render_json, render_terminal, RenderOptions};
use blkc::base::diagnostics::{apply_certain, formats};

/// Counts live heap bytes and their peak, for the memory finding class, per
/// thread: the tests run side by side, and another test's allocations must
/// not count against the input being measured (the front end parses inputs
/// under 1 MiB on the calling thread).
pub struct Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as is to the system allocator.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            // `try_with`: a thread being torn down has no counters left.
            let _ = LIVE.try_with(|live| {
                let now = live.get() + layout.size() as isize;
                live.set(now);
                let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
            });
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let _ = LIVE.try_with(|live| live.set(live.get() - layout.size() as isize));
        // SAFETY: forwarded as is to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// Every `.blk` the project has: examples, fixtures, and the examples in
/// the documentation.
fn seeds() -> Vec<Vec<u8>> {
    let root = env!("CARGO_MANIFEST_DIR");
    let mut seeds = Vec::new();
    for dir in ["examples", "tests/fixtures/check", "tests/fixtures/run", "tests/fixtures/mistakes"] {
        let mut paths: Vec<_> = std::fs::read_dir(format!("{root}/{dir}"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "blk"))
            .collect();
        paths.sort();
        seeds.extend(paths.iter().map(|p| std::fs::read(p).unwrap()));
    }
    let mut docs: Vec<_> =
        std::fs::read_dir(format!("{root}/docs/codes")).unwrap().map(|e| e.unwrap().path()).collect();
    docs.sort();
    docs.push(format!("{root}/docs/language.md").into());
    for doc in docs {
        let text = std::fs::read_to_string(doc).unwrap();
        for block in text.split("```blk").skip(1) {
            let body = block.split_once('\n').map_or("", |(_, rest)| rest);
            seeds.push(body.split("```").next().unwrap_or_default().as_bytes().to_vec());
        }
    }
    seeds
}

/// proptest's deterministic generator, seeded per case: every input is
/// made again from the seed and the case number alone.
struct Rng(proptest::test_runner::TestRng);

impl Rng {
    fn new(seed: u64, case: usize) -> Rng {
        let mut bytes = [0u8; 32];
        bytes[..8].copy_from_slice(&seed.to_le_bytes());
        bytes[8..16].copy_from_slice(&(case as u64).to_le_bytes());
        Rng(proptest::test_runner::TestRng::from_seed(proptest::test_runner::RngAlgorithm::ChaCha, &bytes))
    }

    fn next(&mut self) -> u64 {
        proptest::prelude::Rng::next_u64(&mut self.0)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Tokens that matter to the grammar, the scanners and the renderer.
const TOKENS: &[&[u8]] = &[
    b"{",
    b"}",
    b"[",
    b"]",
    b"\"",
    b"\\",
    b"<",
    b">",
    b"=",
    b".",
    b",",
    b"#",
    b"\n",
    b"\r",
    b"\r\n",
    b"\t",
    b" ",
    b"api_x[",
    b"{api_x[response.",
    b"response",
    b"status",
    b"else if 1 == 1 { }",
    b"if ",
    b"else ",
    b"command ",
    b"event ",
    b"api a { method GET url \"https://a.example/{x}\" }",
    b"<SECRET>",
    b"{bot_token}",
    b"\xef\xbb\xbf",
    b"\xff",
    b"\xe2\x80\xa8",
    b"0",
    b"-1",
    b"01",
    b"99999999999999999999999",
    b"\\u{110000}",
    b"save v = ",
    b"kick \"{option_x}\" reason \"r\" ",
    b"send to \"#log\" as log { text \"t\" } ",
    b"give role \"@R\" to ",
    b"create channel name \"n\" private visible \"1\", \"2\" ",
    b"timeout ",
    b" for \"10m\" ",
    b" as ",
    b"delete message log after \"1s\" ",
    b"purge 900 ",
];

/// One mutated input: a seed with 1 to 8 edits.
fn mutate(seeds: &[Vec<u8>], rng: &mut Rng) -> Vec<u8> {
    mutate_with(seeds, rng, TOKENS)
}

/// [`mutate`] with the tokens of another grammar.
fn mutate_with(seeds: &[Vec<u8>], rng: &mut Rng, tokens: &[&[u8]]) -> Vec<u8> {
    let mut bytes = seeds[rng.below(seeds.len())].clone();
    for _ in 0..1 + rng.below(8) {
        let at = rng.below(bytes.len() + 1);
        match rng.below(7) {
            0 if !bytes.is_empty() => {
                let end = (at + 1 + rng.below(16)).min(bytes.len());
                bytes.drain(at.min(end)..end);
            }
            1 | 2 => {
                let token = tokens[rng.below(tokens.len())];
                bytes.splice(at..at, token.iter().copied());
            }
            3 => {
                // A run of one token: deep nesting, long lines, long chains.
                let token = tokens[rng.below(tokens.len())];
                let times = 1 + rng.below(3000);
                let run: Vec<u8> = token.iter().copied().cycle().take(token.len() * times).collect();
                bytes.splice(at..at, run);
            }
            4 => {
                // A slice of another seed spliced in.
                let other = &seeds[rng.below(seeds.len())];
                let from = rng.below(other.len());
                let to = (from + rng.below(400)).min(other.len());
                bytes.splice(at..at, other[from..to].iter().copied());
            }
            5 if !bytes.is_empty() => {
                let i = at.min(bytes.len() - 1);
                bytes[i] = rng.next() as u8;
            }
            _ => {
                // Duplicate a slice in place.
                let to = (at + rng.below(200)).min(bytes.len());
                let slice = bytes[at..to].to_vec();
                bytes.splice(at..at, slice);
            }
        }
    }
    bytes
}

/// The whole front end on one input: parse, check, render in every format,
/// make the certain fixes, build.
fn front_end(bytes: Vec<u8>) {
    let (source, bad_utf8) = blkc::language::load::source_from_bytes("fuzz.blk", bytes);
    let checked = match bad_utf8 {
        Some(d) => blkc::language::model::Checked::unreadable(source, d),
        None => blkc::language::load::check_source(source),
    };
    let text = render_terminal(&checked.source, &checked.diagnostics, RenderOptions::default());
    let json = render_json(&checked.source, &checked.diagnostics);
    assert!(!text.is_empty() && json.is_object());
    let short = formats::short(&checked.source, &checked.diagnostics);
    assert_eq!(short.lines().count(), checked.diagnostics.len());
    let _ = formats::github(&checked.source, &checked.diagnostics);
    let _ = formats::sarif(&[(&checked.source, checked.diagnostics.as_slice())]);
    // The certain fixes apply to any file.
    let _ = apply_certain(&checked.source.text, &checked.diagnostics);
    if let Ok(plan) = blkc::language::plan::lower(&checked) {
        assert!(serde_json::to_string(&plan).is_ok());
    }
}

#[test]
fn the_front_end_survives_mutated_programs() {
    let cases: usize = std::env::var("BLKC_FUZZ_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(2_000);
    let seed: u64 = std::env::var("BLKC_FUZZ_SEED").ok().and_then(|n| n.parse().ok()).unwrap_or(0x05ee_db1c);
    let seeds = seeds();
    assert!(seeds.len() > 60, "every example, fixture and doc snippet is a seed: {}", seeds.len());
    let mut slowest = (Duration::ZERO, 0);
    let mut heaviest = (0.0f64, 0);
    for case in 0..cases {
        let mut rng = Rng::new(seed, case);
        let input = mutate(&seeds, &mut rng);
        let size = input.len();
        if let Some(dump) = std::env::var_os("BLKC_FUZZ_DUMP")
            .filter(|_| std::env::var("BLKC_FUZZ_CASE").ok() == Some(case.to_string()))
        {
            std::fs::write(dump, &input).unwrap();
        }
        let shown = String::from_utf8_lossy(&input[..size.min(300)]).into_owned();
        let base = LIVE.with(Cell::get);
        PEAK.with(|p| p.set(base));
        let started = Instant::now();
        let outcome = std::panic::catch_unwind(|| front_end(input));
        let took = started.elapsed();
        let peak = (PEAK.with(Cell::get) - base).max(0) as usize;
        assert!(outcome.is_ok(), "case {case} panicked; input starts {shown:?}");
        // Debug builds are several times slower than release: the bar scales.
        let limit = if cfg!(debug_assertions) { Duration::from_secs(5) } else { Duration::from_secs(1) };
        assert!(size >= 1 << 20 || took < limit, "case {case} took {took:?} for {size} bytes; input starts {shown:?}");
        let times = peak as f64 / size.max(1) as f64;
        assert!(
            peak < 8 << 20 || times <= 20.0,
            "case {case} used {times:.1}x its {size} bytes; input starts {shown:?}"
        );
        slowest = slowest.max((took, case));
        if size >= 4096 && times > heaviest.0 {
            heaviest = (times, case);
        }
    }
    println!(
        "fuzz: {cases} inputs, slowest {:?} (case {}), most memory {:.1}x (case {})",
        slowest.0, slowest.1, heaviest.0, heaviest.1
    );
}

/// Tokens of conversation tests (`.blkt`) that matter to their grammar
/// and its readers.
const TEST_TOKENS: &[&[u8]] = &[
    b"{",
    b"}",
    b"[",
    b"]",
    b"\"",
    b"\\",
    b"=",
    b":",
    b",",
    b"#",
    b"\n",
    b"\r\n",
    b" ",
    b"test \"t\" { ",
    b"command hello ",
    b"command \"Quote\" for message { content = \"x\" }",
    b"type look city \"P\"",
    b"click \"Vote\"",
    b"click handler vote",
    b"choose \"Red\", \"Blue\"",
    b"submit { who = \"a\" }",
    b"event member_join { user_name = \"z\" }",
    b"tick hourly",
    b"wait \"10s\"",
    b"wait \"99999999999999999999d\"",
    b"respond thing status 500 body {\"a\": [1, 2]}",
    b"respond thing timeout",
    b"expect reply ",
    b"expect reply { text contains \"x\" private buttons \"A\" embed field \"F\" \"v\" }",
    b"expect reply matches \"(\"",
    b"expect update ",
    b"expect form { fields \"a\" }",
    b"expect message in \"1\" ",
    b"expect action kick \"1\" reason \"r\" ",
    b"expect action give role \"2\" to \"1\"",
    b"expect choices ",
    b"expect request thing { body who = [1, {\"a\": null}] url contains \"x\" method GET }",
    b"expect saved votes = ",
    b"expect nothing else",
    b"as \"ann\" id \"1\" roles \"2\", \"3\" permissions kick_members, 8 ",
    b"secret API_KEY = \"x\"",
    b"bot \"bot.blk\"",
    b"\\u{110000}",
    b"\\ud800",
    b"\xef\xbb\xbf",
    b"\xff",
    b"-1",
    b"1e999",
];

/// A test file's front end on one input: read it, check it against the
/// runner's fixture bot, render its diagnostics, and write the
/// expectations `--update` would of a step that did nothing.
fn test_file_front_end(bytes: Vec<u8>, bot: &(blkc::language::model::Checked, blkc::language::plan::Plan)) {
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let source = blkc::base::source::SourceFile::new("fuzz.blkt", text);
    let diags = match blkc::host::converse::syntax::parse(&source) {
        Ok((file, mut problems)) => {
            problems.extend(blkc::host::converse::check::check(&file, &bot.0, &bot.1));
            problems
        }
        Err(diags) => diags,
    };
    let rendered = render_terminal(&source, &diags, RenderOptions::default());
    assert!(diags.is_empty() || !rendered.is_empty());
    assert!(render_json(&source, &diags).is_object());
    for d in &diags {
        let span = d.primary_span().expect("every diagnostic of a test file has a span");
        assert!(span.end as usize <= source.text.len() && span.start <= span.end, "{d:?}");
        assert!(d.help.is_some(), "{} has no help line: {d:?}", d.code.as_str());
    }
}

/// Every test file the project has (the examples' and the runner's
/// fixtures), mutated, is read and checked without a panic, with every
/// diagnostic placed in the file and helped, in bounded time.
#[test]
fn test_files_survive_mutation() {
    let cases: usize = std::env::var("BLKC_FUZZ_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(2_000);
    let seed: u64 = std::env::var("BLKC_FUZZ_SEED").ok().and_then(|n| n.parse().ok()).unwrap_or(0x05ee_db1c);
    let root = env!("CARGO_MANIFEST_DIR");
    let mut seeds = Vec::new();
    for dir in ["examples", "tests/fixtures/conversations"] {
        let mut paths: Vec<_> = std::fs::read_dir(format!("{root}/{dir}"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "blkt"))
            .collect();
        paths.sort();
        seeds.extend(paths.iter().map(|p| std::fs::read(p).unwrap()));
    }
    assert!(seeds.len() >= 20, "every test file is a seed: {}", seeds.len());
    let bot_path = std::path::Path::new(root).join("tests/fixtures/conversations/bot.blk");
    let checked = blkc::language::load::load(&bot_path, blkc::language::load::LoadOptions::default()).unwrap();
    let plan = blkc::language::plan::lower(&checked).unwrap();
    let bot = (checked, plan);
    let mut slowest = (Duration::ZERO, 0);
    for case in 0..cases {
        let mut rng = Rng::new(seed ^ 0x7e57, case);
        let input = mutate_with(&seeds, &mut rng, TEST_TOKENS);
        let shown = String::from_utf8_lossy(&input[..input.len().min(300)]).into_owned();
        let size = input.len();
        let started = Instant::now();
        let outcome = std::panic::catch_unwind(|| test_file_front_end(input, &bot));
        let took = started.elapsed();
        assert!(outcome.is_ok(), "case {case} panicked; input starts {shown:?}");
        let limit = if cfg!(debug_assertions) { Duration::from_secs(5) } else { Duration::from_secs(1) };
        assert!(took < limit, "case {case} took {took:?} for {size} bytes; input starts {shown:?}");
        slowest = slowest.max((took, case));
    }
    println!("fuzz of test files: {cases} inputs, slowest {:?} (case {})", slowest.0, slowest.1);
}
