//! `blkc fmt --check` against `blkc check` on a generated file of about
//! 10 MB, whole process: on the file as generated (not in the canonical
//! layout, so a diff is printed) and on the file once formatted (the usual
//! CI case). The bar: `fmt --check` at least half as fast as `check`.
//!
//! Run with `cargo bench --bench fmt`. With
//! `BLKC_BENCH_BASELINE=/path/to/an/older/blkc`, that binary's `fmt --check`
//! runs too, alternating, and the ratio is printed.

mod support;

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

fn main() {
    let rounds = support::sized(9, 1);
    // Within the platform's 100 commands (B406), as a real file must be.
    let text = support::generate(100, support::sized(14_800, 150));
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let raw = dir.join("bench_fmt_raw.blk");
    std::fs::write(&raw, &text).unwrap();
    let blkc = PathBuf::from(env!("CARGO_BIN_EXE_blkc"));

    let mut child =
        Command::new(&blkc).args(["fmt", "-"]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = text.clone();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(out.status.success(), "the generated file must format");
    let formatted_path = dir.join("bench_fmt_formatted.blk");
    std::fs::write(&formatted_path, &out.stdout).unwrap();

    let (raw_arg, formatted_arg) = (raw.to_str().unwrap(), formatted_path.to_str().unwrap());
    let size = text.len() as f64;
    let formatted_size = out.stdout.len() as f64;
    println!("fmt: generated file {:.2} MB, {:.2} MB once formatted", size / 1e6, formatted_size / 1e6);
    let configs = [
        ("check, generated file", vec!["check", raw_arg], size),
        ("fmt --check, generated file (prints the diff)", vec!["fmt", "--check", raw_arg], size),
        ("check, formatted file", vec!["check", formatted_arg], formatted_size),
        ("fmt --check, formatted file", vec!["fmt", "--check", formatted_arg], formatted_size),
    ];
    let baseline = std::env::var_os("BLKC_BENCH_BASELINE").map(PathBuf::from);
    let mut programs = vec![blkc.as_path()];
    programs.extend(baseline.as_deref());
    let mut runs: Vec<Vec<Vec<std::time::Duration>>> =
        programs.iter().map(|_| configs.iter().map(|_| Vec::new()).collect()).collect();
    for _ in 0..rounds {
        for (i, (_, args, _)) in configs.iter().enumerate() {
            for (p, program) in programs.iter().enumerate() {
                runs[p][i].push(support::run(program, args).wall);
            }
        }
    }
    let medians: Vec<Vec<f64>> =
        runs.into_iter().map(|r| r.into_iter().map(|r| support::median(r).as_secs_f64()).collect()).collect();
    for ((label, _, size), median) in configs.iter().zip(&medians[0]) {
        println!("fmt: {label}, median of {rounds}: {:.1} ms = {:.1} MB/s", median * 1e3, size / 1e6 / median);
    }
    let m = &medians[0];
    println!(
        "fmt: fmt --check runs at {:.2}x the speed of check on the generated file, {:.2}x on the formatted one (bar: 0.5x)",
        m[0] / m[1],
        m[2] / m[3]
    );
    if let Some(b) = medians.get(1) {
        for (i, (label, _, _)) in configs.iter().enumerate() {
            println!("fmt: {label}: blkc takes {:.3}x the baseline's time", m[i] / b[i]);
        }
    }
}
