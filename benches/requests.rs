//! Per-request overhead on loopback: one `blkc run` process running a
//! command of 100 GET blocks (a run's bound of requests) (one URL parameter and one header each, one
//! field of each response used in a reply), beside one `curl` process
//! fetching the same 100 URLs with keep-alive (`curl -K` with a config file).
//! Both talk to the same small Rust server (raw sockets, keep-alive); runs
//! alternate, medians compared.
//!
//! Run with `cargo bench --bench requests` (needs curl on the PATH). With
//! `BLKC_BENCH_BASELINE=/path/to/an/older/blkc`, that binary runs in the
//! same alternation too, and the ratio of the two blkc builds is printed.

mod support;

use std::path::PathBuf;
use std::process::Command;

fn main() {
    // A run sends at most MAX_REQUESTS requests (B327).
    let blocks = support::sized(blkc::language::vocab::MAX_REQUESTS, 5);
    let rounds = support::sized(15, 1);
    if Command::new("curl").arg("--version").output().is_err() {
        support::missing("requests: curl is not installed; nothing to compare with");
        return;
    }
    let port = support::json_server();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bench_requests");
    std::fs::create_dir_all(&dir).unwrap();

    let mut program = String::from("command many {\n");
    // The same blocks with a time-out, retries and a failure path: what they
    // cost when every request succeeds (issue 50's bench line).
    let mut resilient = String::from("command many {\n");
    let mut curl = String::from("silent\nheader = \"X-Api-Key: bench-key-value\"\n");
    for i in 0..blocks {
        let head = format!(
            "    api b{i} {{\n        method GET\n        url \"http://127.0.0.1:{port}/item/{i}\"\n        params {{ q = \"{i}\" }}\n        headers {{ X-Api-Key = \"<BENCH_KEY>\" }}\n"
        );
        let tail = format!("    }}\n    reply \"{{api_b{i}[response.name]}}\"\n");
        program.push_str(&format!("{head}{tail}"));
        resilient.push_str(&format!(
            "{head}        timeout \"5s\"\n        retry 2 on 429, 5xx backoff \"100ms\"\n        failed {{ reply \"b{i} failed\" }}\n{tail}"
        ));
        curl.push_str(&format!("url = \"http://127.0.0.1:{port}/item/{i}?q={i}\"\noutput = \"/dev/null\"\n"));
    }
    program.push_str("}\n");
    resilient.push_str("}\n");
    let resilient_blk = dir.join("resilient.blk");
    std::fs::write(&resilient_blk, resilient).unwrap();
    let blk = dir.join("many.blk");
    let cfg = dir.join("curl.cfg");
    std::fs::write(&blk, program).unwrap();
    std::fs::write(&cfg, curl).unwrap();
    let store = dir.join("store.sqlite3");
    let secrets = dir.join("secrets.env");
    std::fs::write(&secrets, "BENCH_KEY=bench-key-value\n").unwrap();
    let blkc = PathBuf::from(env!("CARGO_BIN_EXE_blkc"));
    let blkc_args = [
        "run",
        blk.to_str().unwrap(),
        "--command",
        "many",
        "--store",
        store.to_str().unwrap(),
        "--secrets",
        secrets.to_str().unwrap(),
    ];
    let curl_path = PathBuf::from("curl");
    let curl_bin = which(&curl_path);
    let curl_args = ["-K", cfg.to_str().unwrap()];

    // Warm up both, and check blkc really got every response.
    let out = Command::new(&blkc).args(blkc_args).output().unwrap();
    assert!(out.status.success() && out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), blocks);
    assert_eq!(support::run(&curl_bin, &curl_args).status, 0);

    let mut resilient_args = blkc_args;
    resilient_args[1] = resilient_blk.to_str().unwrap();
    let out = Command::new(&blkc).args(resilient_args).output().unwrap();
    assert!(out.status.success() && out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), blocks);

    let baseline = std::env::var_os("BLKC_BENCH_BASELINE").map(PathBuf::from);
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    let (mut ours_cpu, mut base, mut base_cpu) = (Vec::new(), Vec::new(), Vec::new());
    let (mut guarded, mut guarded_cpu) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let run = support::run(&blkc, &blkc_args);
        ours.push(run.wall);
        ours_cpu.push(run.cpu);
        let run = support::run(&blkc, &resilient_args);
        guarded.push(run.wall);
        guarded_cpu.push(run.cpu);
        theirs.push(support::run(&curl_bin, &curl_args).wall);
        if let Some(b) = &baseline {
            let run = support::run(b, &blkc_args);
            base.push(run.wall);
            base_cpu.push(run.cpu);
        }
    }
    let ratio = |a: Vec<std::time::Duration>, b: Vec<std::time::Duration>| {
        support::median(a).as_secs_f64() / support::median(b).as_secs_f64()
    };
    println!(
        "requests: blocks with a time-out, retries and a failure path / plain blocks, every request a success: wall {:.2}, CPU {:.2}",
        ratio(guarded, ours.clone()),
        ratio(guarded_cpu, ours_cpu.clone())
    );
    if let Some(b) = &baseline {
        let ratio = |a: Vec<_>, b: Vec<_>| support::median(a).as_secs_f64() / support::median(b).as_secs_f64();
        println!(
            "requests: this blkc / baseline ({}): wall {:.2}, CPU {:.2}",
            b.display(),
            ratio(ours.clone(), base),
            ratio(ours_cpu, base_cpu)
        );
    }
    let (ours, theirs) = (support::median(ours), support::median(theirs));
    println!("requests: {blocks} GET requests on loopback, whole process, median of {rounds} alternating runs");
    println!(
        "requests: blkc run  {:.1} ms ({:.0} µs per request)",
        ours.as_secs_f64() * 1e3,
        ours.as_secs_f64() * 1e6 / blocks as f64
    );
    println!(
        "requests: curl -K   {:.1} ms ({:.0} µs per request)",
        theirs.as_secs_f64() * 1e3,
        theirs.as_secs_f64() * 1e6 / blocks as f64
    );
    println!("requests: blkc / curl = {:.2} (the bar: at most 0.75)", ours.as_secs_f64() / theirs.as_secs_f64());
}

fn which(name: &std::path::Path) -> PathBuf {
    std::env::var_os("PATH")
        .and_then(|paths| std::env::split_paths(&paths).map(|p| p.join(name)).find(|p| p.is_file()))
        .unwrap_or_else(|| name.to_path_buf())
}
