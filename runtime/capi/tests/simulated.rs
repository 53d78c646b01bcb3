//! The same C programs on the simulator (`oshrun --sim`) and under the race detector
//! (`rshmem check -n N`): reproducible from a seed, a missing fence found both ways, a PE
//! that ends the run named, and a PE's `exit` ending that PE as it ends a process.

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

/// How one way of ending `sim/ending.c` must end the run: the same status as processes and
/// on the simulator (where processes define it), and the words each says on stderr.
struct Ending {
    mode: &'static str,
    status: i32,
    simulated: &'static [&'static str],
    /// `None`: not run as processes (a deadlock there waits for its deadline).
    processes: Option<&'static [&'static str]>,
}

#[test]
fn a_pe_that_ends_the_run_is_named_whatever_the_way() {
    let dir = setup();
    let ending = program(&dir, "sim/ending.c", &[]);
    let ending = ending.to_str().expect("a UTF-8 path");
    const HEAP_LINE: &str = "shmem_malloc: host heap exhausted: asked for 1099511627776 bytes";
    let cases = [
        Ending {
            mode: "0",
            status: 1,
            simulated: &["PE 1", "shmem_long_p", "PE 7 does not exist"],
            processes: Some(&["PE 1", "shmem_long_p", "PE 7 does not exist"]),
        },
        // The others go on; the one that waits for PE 1 is told it finished.
        Ending {
            mode: "1",
            status: 3,
            simulated: &["PE 1 exited with status 3", "already finished: PEs 1"],
            processes: Some(&["rank 1 exited with status 3"]),
        },
        Ending {
            mode: "2",
            status: 128 + 11,
            simulated: &["simulated PE 1 crashed with signal 11 (SIGSEGV)"],
            processes: Some(&["rank 1 was killed by signal 11"]),
        },
        Ending {
            mode: "3",
            status: 1,
            simulated: &["deadlock", "PE 0 waits for wait_until", "PE 1 waits"],
            processes: None,
        },
        Ending {
            mode: "4",
            status: 4,
            simulated: &["PE 1 called shmem_global_exit(4)"],
            processes: Some(&["rank 1 called shmem_global_exit(4)"]),
        },
        Ending {
            mode: "5",
            status: 128 + 6,
            simulated: &["simulated PE 1 crashed with signal 6 (SIGABRT)"],
            processes: Some(&["rank 1 was killed by signal 6"]),
        },
        // OpenSHMEM 1.5 section 9.1.5: the status goes to the environment; 0 is a success.
        Ending {
            mode: "6",
            status: 0,
            simulated: &["PE 1 called shmem_global_exit(0)", ": ok"],
            processes: Some(&["rank 1 called shmem_global_exit(0)"]),
        },
        // OpenSHMEM 1.5 section 9.3.1: NULL on every PE; each PE says why once, and the
        // crash of the PE that used the NULL names the allocation.
        Ending {
            mode: "7",
            status: 128 + 11,
            simulated: &[
                HEAP_LINE,
                "SHMEM_SYMMETRIC_SIZE",
                "it returns NULL",
                "simulated PE 1 crashed with signal 11 (SIGSEGV) after shmem_malloc returned NULL",
            ],
            processes: Some(&[HEAP_LINE, "SHMEM_SYMMETRIC_SIZE", "it returns NULL"]),
        },
        Ending {
            mode: "8",
            status: 5,
            simulated: &["PE 1 exited with status 5"],
            processes: Some(&["rank 1 exited with status 5"]),
        },
        Ending {
            mode: "9",
            status: 6,
            simulated: &["PE 1 exited with status 6"],
            processes: Some(&["rank 1 exited with status 6"]),
        },
        // From a thread of PE 1: its process ends, so on the simulator PE 1 ends, as in mode 1.
        Ending {
            mode: "10",
            status: 4,
            simulated: &["PE 1 exited with status 4", "already finished: PEs 1"],
            processes: Some(&["rank 1 exited with status 4"]),
        },
    ];
    for case in cases {
        let mode = case.mode;
        let sim = ["-np", "2", "--sim", "hgx8", ending, mode];
        let processes = ["-np", "2", ending, mode];
        let launches = [
            (&sim[..], Some(case.simulated)),
            (&processes[..], case.processes),
        ];
        for (args, words) in launches {
            let Some(words) = words else { continue };
            let r = run(
                &dir,
                "oshrun",
                args,
                &format!("ending{mode}-{}", args.len()),
            );
            assert_eq!(
                exit_code(&r),
                Some(case.status),
                "mode {mode} {args:?}: {}",
                r.stderr
            );
            for word in words {
                assert!(
                    r.stderr.contains(word),
                    "mode {mode} {args:?} lacks `{word}`: {}",
                    r.stderr
                );
            }
            // PE 1 never reaches exit or the end of main, so its handler never runs.
            assert!(
                !r.stdout.contains("atexit: PE 1"),
                "mode {mode} {args:?}: {}",
                r.stdout
            );
        }
    }
}

#[test]
fn a_pe_that_exits_early_is_in_the_report_with_its_status() {
    let dir = setup();
    let ending = program(&dir, "sim/ending.c", &[]);
    let ending = ending.to_str().expect("a UTF-8 path");
    let args = ["-np", "4", "--sim", "hgx8", "--json", ending, "1"];
    let r = run(&dir, "oshrun", &args, "ending1-json");
    assert_eq!(exit_code(&r), Some(3), "{}", r.stderr);
    let json = r.stdout.trim_end().lines().last().expect("a JSON report");
    let report: serde_json::Value = serde_json::from_str(json).expect("a JSON report");
    assert_eq!(report["ok"], false);
    assert_eq!(report["exit_statuses"][1], 3, "{report}");
    let failures = report["failures"].to_string();
    assert!(failures.contains("PE 1 exited with status 3"), "{failures}");
}

/// The lines `pe` printed that start with a handler's prefix, in order.
fn handler_lines(stdout: &str, pe: usize) -> Vec<String> {
    let me = format!(" PE {pe} ");
    stdout
        .lines()
        .filter(|l| (l.starts_with("atexit:") || l.starts_with("destructor:")) && l.contains(&me))
        .map(|l| l.replace(&me, " PE n "))
        .collect()
}

#[test]
fn each_pe_runs_its_own_atexit_handlers_once_in_reverse_order_as_processes_do() {
    let dir = setup();
    // C11 7.22.4.4 and C++17 [basic.start.term]: newest first, a function-local static's
    // destructor in the place of its construction.
    let cases: [(&str, &[&str]); 3] = [
        (
            "sim/exit_after_finalize.c",
            &[
                "atexit: PE n registered_second (after 0)",
                "atexit: PE n registered_first (after 1)",
            ],
        ),
        ("sim/exit_without_finalize.c", &["atexit: PE n done"]),
        (
            "sim/static_destructor.cpp",
            &[
                "atexit: PE n after_tally",
                "destructor: PE n tally",
                "atexit: PE n before_tally",
            ],
        ),
    ];
    for (source, want) in cases {
        let binary = program(&dir, source, &[]);
        let binary = binary.to_str().expect("a UTF-8 path");
        for (tag, launch) in [
            ("sim", &["-np", "4", "--sim", "hgx8"][..]),
            ("processes", &["-np", "4"][..]),
        ] {
            let mut args = launch.to_vec();
            args.push(binary);
            let r = run(
                &dir,
                "oshrun",
                &args,
                &format!("{source}-{tag}").replace('/', "_"),
            );
            assert_eq!(
                exit_code(&r),
                Some(0),
                "{source} {tag}: {}{}",
                r.stdout,
                r.stderr
            );
            for pe in 0..4 {
                assert_eq!(
                    handler_lines(&r.stdout, pe),
                    want,
                    "{source} {tag} PE {pe}: {}",
                    r.stdout
                );
            }
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
