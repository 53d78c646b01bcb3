//! Threads of a simulated PE (`oshrun --sim`, `rshmem check`): programs of `tests/sim/` whose
//! threads call SHMEM, each at two seeds; the same seed giving the same run; a deadlock among
//! a PE's threads ending the run with a report that names them; the race detector running
//! threaded programs, and finding the races between the threads of one PE.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{
    Run, build_library_and_launcher, compile_with, exit_code, repo_root, require_compilers,
    run_tool, scratch_dir,
};

/// The seeds every program runs at.
const SEEDS: [&str; 2] = ["1", "2"];

/// Builds the library once and the `source` program with `extra` flags.
fn program(source: &str, extra: &[&str]) -> (PathBuf, PathBuf) {
    require_compilers();
    build_library_and_launcher();
    let dir = scratch_dir();
    let binary = compile_with(&repo_root(), &dir, source, extra)
        .unwrap_or_else(|why| panic!("{source}: {why}"));
    (dir, binary)
}

/// `oshrun -np PES --sim hgx8 --seed SEED BINARY`, with a deadline of a minute.
fn simulate(dir: &Path, binary: &Path, pes: &str, seed: &str, tag: &str) -> Run {
    let binary = binary.to_str().expect("a UTF-8 path");
    let args = ["-np", pes, "--sim", "hgx8", "--seed", seed, binary];
    run_tool(dir, "oshrun", &args, tag, Duration::from_secs(60))
}

/// Runs `source` at `pes` PEs at every seed and checks that it passes.
fn passes_at_every_seed(source: &str, pes: &str) {
    let (dir, binary) = program(source, &[]);
    for seed in SEEDS {
        let r = simulate(&dir, &binary, pes, seed, &format!("seed{seed}"));
        assert_eq!(
            exit_code(&r),
            Some(0),
            "{source} at seed {seed}:\n{}\n{}",
            r.stdout,
            r.stderr
        );
        assert!(r.stdout.contains(": ok at"), "{source}: {}", r.stdout);
    }
}

#[test]
fn threads_each_with_a_private_context_put_and_quiet() {
    passes_at_every_seed("sim/threads_contexts.c", "4");
}

#[test]
fn threads_hand_work_over_a_mutex_and_a_condition_while_one_waits_in_wait_until() {
    passes_at_every_seed("sim/threads_handoff.c", "3");
}

#[test]
fn a_distributed_lock_contended_by_threads_of_several_pes_excludes() {
    passes_at_every_seed("sim/threads_lock.c", "3");
}

#[test]
fn a_plain_store_of_one_thread_ends_another_threads_wait_on_its_own_pe() {
    let (dir, binary) = program("sim/threads_store_wakes.c", &[]);
    passes_as_processes_and_at_every_seed(&dir, &binary, "2");
}

#[test]
fn the_same_seed_gives_the_same_threaded_run() {
    let (dir, binary) = program("sim/threads_handoff.c", &[]);
    let runs: Vec<(String, String)> = (0..2)
        .map(|i| {
            let r = simulate(&dir, &binary, "3", "5", &format!("run{i}"));
            assert_eq!(exit_code(&r), Some(0), "{}\n{}", r.stdout, r.stderr);
            // The summary on stderr also says how long the run took, which varies.
            let hash = r
                .stderr
                .split_once("trace hash ")
                .and_then(|(_, rest)| rest.split([',', ' ', '\n']).next())
                .unwrap_or_else(|| panic!("no trace hash in {}", r.stderr))
                .to_owned();
            (hash, r.stdout)
        })
        .collect();
    assert_eq!(runs[0], runs[1], "two runs with seed 5 differ");
}

#[test]
fn a_deadlock_between_two_threads_is_reported_with_what_each_waits_for() {
    let (dir, binary) = program("sim/threads_deadlock.c", &[]);
    for seed in SEEDS {
        let r = simulate(&dir, &binary, "2", seed, &format!("seed{seed}"));
        assert_eq!(exit_code(&r), Some(1), "{}\n{}", r.stdout, r.stderr);
        let report = format!("{}{}", r.stdout, r.stderr);
        for expected in [
            "deadlock",
            "PE 0 waits for its threads: thread 0 waits to join thread 1",
            "thread 1 waits for mutex",
            "held by thread 2",
            "thread 2 waits for mutex",
            "held by thread 1",
        ] {
            assert!(report.contains(expected), "no {expected:?} in:\n{report}");
        }
    }
}

#[test]
fn the_race_detector_runs_a_threaded_program() {
    let (dir, binary) = program("sim/threads_contexts.c", &["-rshmem-check"]);
    let binary = binary.to_str().expect("a UTF-8 path");
    let args = ["check", "-n", "2", "--runs", "2", binary];
    let r = run_tool(&dir, "rshmem", &args, "check", Duration::from_secs(60));
    assert_eq!(exit_code(&r), Some(0), "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("no races"), "{}", r.stdout);
}

/// `rshmem check -n PES --runs RUNS BINARY`.
fn check(dir: &Path, binary: &Path, pes: &str, runs: &str, tag: &str) -> Run {
    let binary = binary.to_str().expect("a UTF-8 path");
    let args = ["check", "-n", pes, "--runs", runs, binary];
    run_tool(dir, "rshmem", &args, tag, Duration::from_secs(120))
}

#[test]
fn threads_that_hand_work_over_a_mutex_a_condition_and_a_put_to_their_own_pe_do_not_race() {
    let (dir, binary) = program("sim/threads_handoff.c", &["-rshmem-check"]);
    let r = check(&dir, &binary, "3", "4", "handoff");
    assert_eq!(exit_code(&r), Some(0), "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("no races"), "{}", r.stdout);
}

#[test]
fn threads_of_one_pe_that_add_without_a_lock_race_and_with_a_lock_do_not() {
    let (dir, binary) = program("sim/threads_counter.c", &["-rshmem-check"]);
    let r = check(&dir, &binary, "2", "2", "unlocked");
    assert_eq!(exit_code(&r), Some(1), "{}\n{}", r.stdout, r.stderr);
    for expected in [
        // The static tally, by its symbol, and the malloc'ed one, by its address.
        "at tally+0x0 of PE 0",
        "at address 0x",
        "on its own memory by thread 1",
        "on its own memory by thread 2",
        "two threads of the PE's program access symmetric memory with no pthread_create",
    ] {
        assert!(
            r.stdout.contains(expected),
            "no {expected:?} in:\n{}",
            r.stdout
        );
    }
    let (dir, binary) = program("sim/threads_counter.c", &["-rshmem-check", "-DLOCKED"]);
    let r = check(&dir, &binary, "2", "4", "locked");
    assert_eq!(exit_code(&r), Some(0), "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("no races"), "{}", r.stdout);
    passes_as_processes_and_at_every_seed(&dir, &binary, "3");
}

#[test]
fn an_atomic_flag_orders_a_buffer_between_threads_and_a_plain_flag_does_not() {
    let (dir, binary) = program("sim/threads_flag.c", &["-rshmem-check"]);
    let r = check(&dir, &binary, "2", "4", "atomic");
    assert_eq!(exit_code(&r), Some(0), "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("no races"), "{}", r.stdout);
    // The main thread spins on the atomic with no call in the loop while the other thread
    // waits for a put: the atomic's hook lets that thread and time go on.
    passes_as_processes_and_at_every_seed(&dir, &binary, "3");
    let (dir, binary) = program("sim/threads_flag.c", &["-rshmem-check", "-DPLAIN_FLAG"]);
    let r = check(&dir, &binary, "2", "2", "plain");
    assert_eq!(exit_code(&r), Some(1), "{}\n{}", r.stdout, r.stderr);
    for expected in [
        "at ready+0x0 of PE 0",
        "at buffer+0x0 of PE 0",
        "by thread 0 (main)",
    ] {
        assert!(
            r.stdout.contains(expected),
            "no {expected:?} in:\n{}",
            r.stdout
        );
    }
    // The plain flag's loop calls sched_yield, which lets time go on as well.
    passes_as_processes_and_at_every_seed(&dir, &binary, "2");
}

/// Runs `binary` at `pes` PEs as processes and on the simulator at every seed.
fn passes_as_processes_and_at_every_seed(dir: &Path, binary: &Path, pes: &str) {
    for seed in SEEDS {
        let r = simulate(dir, binary, pes, seed, &format!("seed{seed}"));
        assert_eq!(
            exit_code(&r),
            Some(0),
            "seed {seed}: {}\n{}",
            r.stdout,
            r.stderr
        );
        assert!(r.stdout.contains(": ok at"), "{}", r.stdout);
    }
    let path = binary.to_str().expect("a UTF-8 path");
    let r = run_tool(
        dir,
        "oshrun",
        &["-np", pes, path],
        "processes",
        Duration::from_secs(60),
    );
    assert_eq!(exit_code(&r), Some(0), "{}\n{}", r.stdout, r.stderr);
}

#[test]
fn an_openmp_program_runs_with_teams_of_one_on_the_simulator_and_of_many_as_processes() {
    let (dir, binary) = program("sim/openmp_tasks.c", &["-fopenmp"]);
    for seed in SEEDS {
        let r = simulate(&dir, &binary, "4", seed, &format!("omp{seed}"));
        assert_eq!(exit_code(&r), Some(0), "seed {seed}: {}", r.stderr);
        assert!(r.stderr.contains("uses OpenMP"), "{}", r.stderr);
    }
    let binary = binary.to_str().expect("a UTF-8 path");
    let args = ["-np", "2", binary];
    let r = run_tool(
        &dir,
        "oshrun",
        &args,
        "omp-processes",
        Duration::from_secs(60),
    );
    assert_eq!(exit_code(&r), Some(0), "{}", r.stderr);
}
