//! `blkc check` throughput and peak memory, whole process, on a generated
//! file of 20,000 api blocks over 100 commands and events (the platform's
//! most commands), and on a file of a million one-line `save`s (where the
//! nodes themselves are the memory).
//!
//! Run with `cargo bench --bench front_end`; `cargo test` runs it once at
//! tiny sizes, so that it stays runnable. Prints MB/s (10^6 bytes per
//! second, median of the runs) and peak RSS as a multiple of the file size.
//! With `BLKC_BENCH_BASELINE=/path/to/an/older/blkc`, that binary runs each
//! configuration too, alternating with this one, and the ratio is printed.

mod support;

use std::path::PathBuf;

/// Trees of the generated file: within the platform's 100 commands (B406),
/// five of them events.
const TREES: usize = 100;

fn main() {
    let rounds = support::sized(15, 1);
    let blocks = support::sized(20_000, 200);
    let text = support::generate(TREES, blocks);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let path = dir.join("bench_front_end.blk");
    std::fs::write(&path, &text).unwrap();
    let size = text.len() as f64;
    let blkc = PathBuf::from(env!("CARGO_BIN_EXE_blkc"));
    let path_arg = path.to_str().unwrap();

    let first = support::run(&blkc, &["check", path_arg]);
    assert_eq!(first.status, 0, "the generated file must check clean: run `blkc check {path_arg}`");
    // The same file with a sample on every block: 50 files of about 100 KB,
    // shared among the blocks.
    let with_samples = dir.join("bench_front_end_samples.blk");
    std::fs::write(&with_samples, support::generate_with(TREES, blocks, 50)).unwrap();
    std::fs::create_dir_all(dir.join("samples")).unwrap();
    let mut sample_bytes = 0;
    for n in 0..50 {
        let text = support::sample(n);
        sample_bytes += text.len();
        std::fs::write(dir.join(format!("samples/s{n:02}.json")), text).unwrap();
    }
    let samples_arg = with_samples.to_str().unwrap();
    let samples_size = std::fs::metadata(&with_samples).unwrap().len() as f64;
    let first = support::run(&blkc, &["check", samples_arg]);
    assert_eq!(first.status, 0, "the file with samples must check clean: run `blkc check {samples_arg}`");

    // The shape of file whose nodes are most of its memory: a million
    // one-line saves in one command (9 MB).
    let saves = dir.join("bench_front_end_saves.blk");
    let mut saves_text = String::from("command c {\n");
    let saves_count = support::sized(1_000_000, 1_000);
    saves_text.push_str(&"save v=1\n".repeat(saves_count));
    saves_text.push_str("}\n");
    std::fs::write(&saves, &saves_text).unwrap();
    let saves_arg = saves.to_str().unwrap();
    let saves_size = saves_text.len() as f64;
    let first = support::run(&blkc, &["check", saves_arg]);
    assert_eq!(first.status, 0, "the file of saves must check clean: run `blkc check {saves_arg}`");

    println!("front_end: file {:.2} MB, {blocks} blocks in {TREES} trees", size / 1e6);
    println!(
        "front_end: the samples variant is {:.2} MB (a sample line per block) and reads 50 sample files, {:.1} MB in all (MB/s counts the .blk file only)",
        samples_size / 1e6,
        sample_bytes as f64 / 1e6
    );
    let configs = [
        ("default threads", vec!["check", path_arg], size),
        ("one thread (--jobs 1)", vec!["check", "--jobs", "1", path_arg], size),
        ("with samples, default threads", vec!["check", samples_arg], samples_size),
        ("one-line saves in one command", vec!["check", saves_arg], saves_size),
    ];
    // Round-robin (and alternating with the baseline, if any), so that a
    // change in the machine's load falls on every configuration alike.
    let baseline = std::env::var_os("BLKC_BENCH_BASELINE").map(PathBuf::from);
    let programs: Vec<&std::path::Path> = std::iter::once(blkc.as_path()).chain(baseline.as_deref()).collect();
    let mut runs: Vec<Vec<Vec<support::Run>>> =
        programs.iter().map(|_| configs.iter().map(|_| Vec::new()).collect()).collect();
    for _ in 0..rounds {
        for (i, (_, args, _)) in configs.iter().enumerate() {
            for (p, program) in programs.iter().enumerate() {
                runs[p][i].push(support::run(program, args));
            }
        }
    }
    let mut medians = vec![Vec::new(); programs.len()];
    for (p, program_runs) in runs.iter().enumerate() {
        let who = if p == 0 { "blkc" } else { "baseline" };
        for ((label, _, size), runs) in configs.iter().zip(program_runs) {
            let median = support::median(runs.iter().map(|r| r.wall).collect());
            medians[p].push(median);
            let peak = runs.iter().map(|r| r.max_rss_kib).max().unwrap() as f64 * 1024.0;
            println!(
                "front_end: {who} check, {label}, whole process, median of {rounds}: {:.1} ms = {:.1} MB/s; peak RSS {:.1} MB = {:.1}x the file",
                median.as_secs_f64() * 1e3,
                size / 1e6 / median.as_secs_f64(),
                peak / 1e6,
                peak / size
            );
        }
    }
    if programs.len() == 2 {
        for (i, (label, _, _)) in configs.iter().enumerate() {
            println!(
                "front_end: {label}: blkc takes {:.3}x the baseline's time",
                medians[0][i].as_secs_f64() / medians[1][i].as_secs_f64()
            );
        }
    }
}
