//! The same C programs on the simulator (`oshrun --sim`) and under the race detector
//! (`rshmem check -n N`): reproducible from a seed, a missing fence found both ways, and a PE
//! that ends the run named.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{
    Run, build_library_and_launcher, compile_with, exit_code, repo_root, require_compilers,
    run_tool, scratch_dir,
};

/// Builds what the tests need once, and the `source` program with `extra` flags.
fn program(dir: &Path, source: &str, extra: &[&str]) -> PathBuf {
    compile_with(&repo_root(), dir, source, extra).unwrap_or_else(|why| panic!("{source}: {why}"))
}

fn setup() -> PathBuf {
    require_compilers();
    build_library_and_launcher();
    scratch_dir()
}

/// `oshrun ARGS` (or `rshmem ARGS` when `tool` is "rshmem"), with a deadline of a minute.
fn run(dir: &Path, tool: &str, args: &[&str], tag: &str) -> Run {
    run_tool(dir, tool, args, tag, Duration::from_secs(60))
}

#[test]
fn the_same_seed_gives_the_same_trace_hash_and_output_at_8_pes() {
    let dir = setup();
    let hello = program(&dir, "c/hello.c", &[]);
    let hello = hello.to_str().expect("a UTF-8 path");
    let runs: Vec<(String, String)> = (0..2)
        .map(|i| {
            let args = ["-np", "8", "--sim", "hgx8", "--seed", "1", "--json", hello];
            let r = run(&dir, "oshrun", &args, &format!("hello{i}"));
            assert_eq!(exit_code(&r), Some(0), "{}", r.stderr);
            let (output, json) = r
                .stdout
                .trim_end()
                .rsplit_once('\n')
                .expect("output and JSON");
            let report: serde_json::Value = serde_json::from_str(json).expect("a JSON report");
            assert_eq!(report["ok"], true);
            assert_eq!(report["pes"], 8);
            assert_eq!(report["exit_statuses"].as_array().map(Vec::len), Some(8));
            (
                report["trace_hash"].as_str().expect("a hash").to_owned(),
                output.to_owned(),
            )
        })
        .collect();
    assert_eq!(runs[0], runs[1], "two runs with seed 1 differ");
    let greetings = runs[0]
        .1
        .lines()
        .filter(|l| l.starts_with("hello from PE"))
        .count();
    assert_eq!(greetings, 8, "{}", runs[0].1);
}

#[test]
fn a_missing_fence_is_a_race_for_the_detector_and_a_fence_is_not() {
    let dir = setup();
    let nofence = program(&dir, "sim/flag.c", &["-rshmem-check"]);
    let fence = program(&dir, "sim/flag.c", &["-rshmem-check", "-DFENCE=1"]);
    let check = |binary: &Path, tag: &str| {
        let binary = binary.to_str().expect("a UTF-8 path");
        run(
            &dir,
            "rshmem",
            &["check", "-n", "2", "--runs", "8", binary],
            tag,
        )
    };
    let found = check(&nofence, "nofence");
    assert_eq!(
        exit_code(&found),
        Some(1),
        "{}\n{}",
        found.stdout,
        found.stderr
    );
    assert!(found.stdout.contains(": 1 race"), "{}", found.stdout);
    assert!(
        found.stdout.contains("race 1 at data+0x0 of PE 1"),
        "{}",
        found.stdout
    );
    assert!(found.stdout.contains("PE 1 local read"), "{}", found.stdout);
    assert!(
        found
            .stdout
            .contains("replay: rshmem check -n 2 --runs 1 --seed"),
        "{}",
        found.stdout
    );
    let clean = check(&fence, "fence");
    assert_eq!(
        exit_code(&clean),
        Some(0),
        "{}\n{}",
        clean.stdout,
        clean.stderr
    );
    assert!(clean.stdout.contains("no races"), "{}", clean.stdout);
}

#[test]
fn only_a_missing_fence_lets_the_simulator_show_stale_data() {
    let dir = setup();
    let stale_runs = |binary: &Path, tag: &str| {
        let binary = binary.to_str().expect("a UTF-8 path");
        (0..32)
            .filter(|seed| {
                let seed = seed.to_string();
                let args = ["-np", "2", "--sim", "hgx8", "--seed", &seed, binary];
                let r = run(&dir, "oshrun", &args, &format!("{tag}{seed}"));
                assert_eq!(exit_code(&r), Some(0), "{}", r.stderr);
                !r.stdout.contains("read sum 136")
            })
            .count()
    };
    let nofence = program(&dir, "sim/flag.c", &[]);
    let fence = program(&dir, "sim/flag.c", &["-DFENCE=1"]);
    assert!(
        stale_runs(&nofence, "stale") > 0,
        "no seed of 32 showed the flag overtaking the data"
    );
    assert_eq!(
        stale_runs(&fence, "fenced"),
        0,
        "a fenced run read stale data"
    );
}

#[test]
fn a_pe_that_ends_the_run_is_named_whatever_the_way() {
    let dir = setup();
    let ending = program(&dir, "sim/ending.c", &[]);
    let ending = ending.to_str().expect("a UTF-8 path");
    let cases: [(&str, Option<i32>, &[&str]); 5] = [
        (
            "0",
            Some(1),
            &["PE 1", "shmem_long_p", "PE 7 does not exist"],
        ),
        ("1", Some(3), &["PE 1 called exit(3)"]),
        ("2", Some(1), &["simulated PE 1 crashed with signal 11"]),
        (
            "3",
            Some(1),
            &["deadlock", "PE 0 waits for wait_until", "PE 1 waits"],
        ),
        ("4", Some(4), &["PE 1 called shmem_global_exit(4)"]),
    ];
    for (mode, status, words) in cases {
        let args = ["-np", "2", "--sim", "hgx8", ending, mode];
        let r = run(&dir, "oshrun", &args, &format!("ending{mode}"));
        assert_eq!(exit_code(&r), status, "mode {mode}: {}", r.stderr);
        for word in words {
            assert!(
                r.stderr.contains(word),
                "mode {mode} lacks `{word}`: {}",
                r.stderr
            );
        }
    }
}

#[test]
fn sixty_four_pes_on_infiniband_reach_each_others_static_data() {
    let dir = setup();
    let hello = program(&dir, "c/hello.c", &[]);
    let hello = hello.to_str().expect("a UTF-8 path");
    let r = run(
        &dir,
        "oshrun",
        &["-np", "64", "--sim", "ib-8", "--seed", "3", hello],
        "hello64",
    );
    assert_eq!(exit_code(&r), Some(0), "{}", r.stderr);
    let greetings = r
        .stdout
        .lines()
        .filter(|l| l.starts_with("hello from PE"))
        .count();
    assert_eq!(greetings, 64, "{}", r.stdout);
}

#[test]
fn options_parsed_with_getopt_reach_every_simulated_pe() {
    let dir = setup();
    let options = program(&dir, "sim/options.c", &[]);
    let options = options.to_str().expect("a UTF-8 path");
    let args = ["-n", "5", "--size", "64", "extra"];
    for (tag, launch) in [
        ("sim", &["-np", "4", "--sim", "hgx8"][..]),
        ("processes", &["-np", "2"][..]),
    ] {
        let mut all = launch.to_vec();
        all.push(options);
        all.extend(args);
        let r = run(&dir, "oshrun", &all, &format!("options-{tag}"));
        assert_eq!(exit_code(&r), Some(0), "{tag}: {}{}", r.stdout, r.stderr);
        assert!(r.stdout.contains("options: ok"), "{tag}: {}", r.stdout);
    }
}
