//! The NVSHMEM guide's CUDA programs (`runtime/capi/examples/nvshmem/`), built unchanged by
//! `rshmem-nvcc` and run on simulated GPUs: each prints what the guide says at 2, 4 and 8 PEs
//! (`NAME.N.expected`, compared line by line in any order, since PEs print side by side), the
//! bugs the guide's code has are named, and the race detector finds the ring's race and none in
//! the programs beyond the guide (signal ring, atomics, block reductions, wait and test) and
//! races between the threads of a block, and C++ programs of our own (`tests/cuda/`) print what
//! they should and end as they should (a heap grown past 1 GiB, a failed allocation, a PE's
//! `exit`).

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use common::{
    Outcome, Run, build_library_and_launcher, exit_code, repo_root, run_tool, run_with_deadline,
    scratch_dir, tail,
};

/// Where the guide's programs are.
fn examples() -> PathBuf {
    repo_root().join("runtime/capi/examples/nvshmem")
}

/// Whether clang 14, which `rshmem-nvcc` drives, is here; says why a test does nothing if not.
fn have_clang() -> bool {
    let found = Command::new("clang++-14")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        eprintln!(
            "skipped: clang++-14 is missing (apt-get install -y clang-14); rshmem-nvcc needs it"
        );
    }
    found
}

fn setup() -> Option<PathBuf> {
    if !have_clang() {
        return None;
    }
    build_library_and_launcher();
    Some(scratch_dir())
}

/// Builds the guide's `name.cu` with `rshmem-nvcc` and `extra` flags, once for all tests.
fn build(dir: &Path, name: &str, extra: &[&str]) -> PathBuf {
    build_from(dir, &examples(), name, extra)
}

/// Builds `name.cu` of `sources` with `rshmem-nvcc` and `extra` flags, once for all tests.
fn build_from(dir: &Path, sources: &Path, name: &str, extra: &[&str]) -> PathBuf {
    build_files(dir, sources, name, &[&format!("{name}.cu")], extra)
}

/// Builds the program `name` of the `files` of `sources` with `rshmem-nvcc` and `extra` flags,
/// once for all tests.
fn build_files(dir: &Path, sources: &Path, name: &str, files: &[&str], extra: &[&str]) -> PathBuf {
    static BUILT: Mutex<BTreeMap<String, PathBuf>> = Mutex::new(BTreeMap::new());
    let key = format!("{name}{}", extra.concat().replace(['-', '='], "_"));
    let mut built = BUILT.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(binary) = built.get(&key) {
        return binary.clone();
    }
    let binary = dir.join(&key);
    let mut command = Command::new(repo_root().join("tools/osh/bin/rshmem-nvcc"));
    command
        .args(["-O2", "-rdc=true"])
        .args(extra)
        .arg("-o")
        .arg(&binary)
        .args(files.iter().map(|file| sources.join(file)));
    let run = run_with_deadline(
        command,
        dir,
        &format!("{name}.build"),
        Duration::from_secs(300),
    );
    match run.outcome {
        Outcome::Exited(status) if status.success() => {
            built.insert(key, binary.clone());
            binary
        }
        _ => panic!("rshmem-nvcc {name}.cu failed:\n{}", tail(&run.stderr, 4000)),
    }
}

/// `oshrun ARGS` (or `rshmem ARGS` when `tool` is "rshmem"), with a deadline of two minutes.
fn run(dir: &Path, tool: &str, args: &[&str], tag: &str) -> Run {
    run_tool(dir, tool, args, tag, Duration::from_secs(120))
}

/// The lines of `text`, sorted: PEs print in an order the seed decides.
fn sorted_lines(text: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = text.lines().filter(|l| !l.is_empty()).collect();
    lines.sort_unstable();
    lines
}

/// Runs `oshrun ARGS binary` and checks that it exits 0 having printed the lines of
/// `expected`, in any order.
fn assert_prints(dir: &Path, binary: &str, args: &[&str], expected: &str, tag: &str) {
    let r = run(dir, "oshrun", &[args, &[binary]].concat(), tag);
    assert_eq!(exit_code(&r), Some(0), "{tag}:\n{}\n{}", r.stdout, r.stderr);
    assert_eq!(
        sorted_lines(&r.stdout),
        sorted_lines(expected),
        "{tag} printed:\n{}\nstderr:\n{}",
        r.stdout,
        tail(&r.stderr, 3000)
    );
}

/// Every guide program with expected output, at 2, 4 and 8 PEs on `topology`.
fn guide_programs_print_what_the_guide_shows_on(topology: &str, seed: &str) {
    let Some(dir) = setup() else { return };
    let mut names: Vec<String> = std::fs::read_dir(examples())
        .expect("the examples")
        .filter_map(|entry| {
            let name = entry.ok()?.file_name().into_string().ok()?;
            name.strip_suffix(".cu").map(str::to_owned)
        })
        .collect();
    names.sort();
    let mut checked = 0;
    for name in &names {
        let binary = build(&dir, name, &[]);
        let binary = binary.to_str().expect("a UTF-8 path");
        for n in ["2", "4", "8"] {
            let expected = examples().join(format!("{name}.{n}.expected"));
            let Ok(expected) = std::fs::read_to_string(&expected) else {
                continue;
            };
            let tag = format!("{name}-{topology}-{n}");
            assert_prints(
                &dir,
                binary,
                &["-np", n, "--sim", topology, "--seed", seed],
                &expected,
                &tag,
            );
            checked += 1;
        }
    }
    assert!(checked >= 30, "only {checked} runs had an expected output");
}

#[test]
fn guide_programs_print_what_the_guide_shows_on_nvlink() {
    guide_programs_print_what_the_guide_shows_on("hgx8", "1");
}

#[test]
fn guide_programs_print_what_the_guide_shows_on_infiniband() {
    guide_programs_print_what_the_guide_shows_on("ib-2", "7");
}

#[test]
fn hello_and_a_small_matmul_run_to_the_end() {
    let Some(dir) = setup() else { return };
    let hello = build(&dir, "hello", &[]);
    let matmul = build(&dir, "matmul", &["-DM=64", "-DK=64", "-DN=64"]);
    for (binary, tag) in [(&hello, "hello"), (&matmul, "matmul")] {
        for exact in [false, true] {
            let binary = binary.to_str().expect("a UTF-8 path");
            let mut args = vec!["-np", "4", "--sim", "hgx8"];
            if exact {
                args.push("--exact");
            }
            args.push(binary);
            let r = run(&dir, "oshrun", &args, &format!("{tag}-{exact}"));
            assert_eq!(
                exit_code(&r),
                Some(0),
                "{tag} (exact {exact}):\n{}\n{}",
                r.stdout,
                r.stderr
            );
        }
    }
}

/// The guide's bugs that rshmem names: a program with `NAME.N.error` (or `NAME.error`) must
/// fail at N PEs (2, 4 and 8 for `NAME.error`), and say each line of the file.
#[test]
fn the_guide_s_bugs_are_named() {
    let Some(dir) = setup() else { return };
    let mut checked = 0;
    for entry in std::fs::read_dir(examples()).expect("the examples") {
        let file = entry
            .expect("an entry")
            .file_name()
            .into_string()
            .expect("a UTF-8 name");
        let Some(stem) = file.strip_suffix(".error") else {
            continue;
        };
        let (name, counts) = match stem.split_once('.') {
            Some((name, n)) => (name, vec![n.to_owned()]),
            None => (stem, vec!["2".into(), "4".into(), "8".into()]),
        };
        let says = std::fs::read_to_string(examples().join(&file)).expect("the error file");
        let binary = build(&dir, name, &[]);
        let binary = binary.to_str().expect("a UTF-8 path");
        for n in &counts {
            let r = run(
                &dir,
                "oshrun",
                &["-np", n, "--sim", "hgx8", binary],
                &format!("{name}-error-{n}"),
            );
            assert_ne!(exit_code(&r), Some(0), "{name} at {n} PEs:\n{}", r.stdout);
            for line in says.lines().filter(|l| !l.is_empty()) {
                assert!(
                    r.stderr.contains(line),
                    "{name} at {n} PEs does not say {line:?}:\n{}",
                    r.stderr
                );
            }
            // Named where it happened: the kernel, block and thread.
            assert!(
                r.stderr.contains("kernel ") && r.stderr.contains("block ("),
                "{}",
                r.stderr
            );
            checked += 1;
        }
    }
    assert!(checked >= 4, "only {checked} runs of programs with bugs");
}

#[test]
fn the_ring_s_race_is_caught_by_the_detector() {
    let Some(dir) = setup() else { return };
    let ring = build(&dir, "ring", &["-rshmem-check"]);
    let ring = ring.to_str().expect("a UTF-8 path");
    let r = run(
        &dir,
        "rshmem",
        &["check", "-n", "2", "--runs", "8", ring],
        "ring-check",
    );
    assert_eq!(exit_code(&r), Some(1), "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("race 1 at heap+0x"), "{}", r.stdout);
    assert!(r.stdout.contains("local write"), "{}", r.stdout);
    assert!(r.stdout.contains("put"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("replay: rshmem check -n 2 --runs 1 --seed"),
        "{}",
        r.stdout
    );
    // The same binary still prints the ring on a plain simulated run.
    let r = run(
        &dir,
        "oshrun",
        &["-np", "4", "--sim", "hgx8", "--seed", "1", ring],
        "ring-plain",
    );
    assert_eq!(exit_code(&r), Some(0), "{}", r.stderr);
    assert_eq!(
        r.stdout.lines().filter(|l| l.contains("received")).count(),
        4,
        "{}",
        r.stdout
    );
}

#[test]
fn the_vector_sum_s_uninitialised_shared_read_is_reported() {
    let Some(dir) = setup() else { return };
    let sum = build(&dir, "vector_sum", &["-rshmem-check"]);
    let sum = sum.to_str().expect("a UTF-8 path");
    let r = run(
        &dir,
        "oshrun",
        &["-np", "4", "--sim", "hgx8", sum],
        "vector-sum-initcheck",
    );
    assert_eq!(exit_code(&r), Some(0), "{}", r.stderr);
    assert_eq!(r.stdout.trim(), "Global sum: 10.000000", "{}", r.stderr);
    assert!(r.stderr.contains("uninitialised"), "{}", r.stderr);
    assert!(r.stderr.contains("shared_sum"), "{}", r.stderr);
}

#[test]
fn a_seed_replays_a_kernel_run_exactly() {
    let Some(dir) = setup() else { return };
    let ring = build(&dir, "ring", &[]);
    let ring = ring.to_str().expect("a UTF-8 path");
    let hashes: Vec<String> = (0..2)
        .map(|i| {
            let args = ["-np", "8", "--sim", "hgx8", "--seed", "3", "--json", ring];
            let r = run(&dir, "oshrun", &args, &format!("ring-json{i}"));
            assert_eq!(exit_code(&r), Some(0), "{}", r.stderr);
            let json = r
                .stdout
                .trim_end()
                .rsplit_once('\n')
                .map_or(r.stdout.trim(), |(_, j)| j);
            let report: serde_json::Value = serde_json::from_str(json).expect("a JSON report");
            report["trace_hash"].as_str().expect("a hash").to_owned()
        })
        .collect();
    assert_eq!(hashes[0], hashes[1]);
}

/// A kernel that spins on `nvshmem_int_test` makes progress: each failed test lets the other
/// PEs' threads run, and the yield after it must suspend the thread that tested, not the last
/// of theirs. The programs beyond the guide are correct ones: the race detector finds nothing.
#[test]
fn a_kernel_spinning_on_test_and_the_other_programs_are_race_free() {
    let Some(dir) = setup() else { return };
    for name in ["wait_test", "signal_ring", "atomics", "block_reductions"] {
        assert_race_free(&dir, &build(&dir, name, &["-rshmem-check"]), name);
    }
}

/// `rshmem check -n 4 --runs 4 binary` finds no race.
fn assert_race_free(dir: &Path, binary: &Path, name: &str) {
    let binary = binary.to_str().expect("a UTF-8 path");
    let args = ["check", "-n", "4", "--runs", "4", binary];
    let r = run(dir, "rshmem", &args, &format!("{name}-check"));
    assert_eq!(
        exit_code(&r),
        Some(0),
        "{name}:\n{}\n{}",
        r.stdout,
        r.stderr
    );
    assert!(r.stdout.contains("no races"), "{name}: {}", r.stdout);
}

/// A kernel that spins on `nvshmem_signal_fetch` until a put-with-signal lands, then reads the
/// put's data, ends, and is race-free: the fetch that sees the signal orders the data before
/// the reads (`tests/cuda/cxx_signal_spin.cu`).
#[test]
fn a_kernel_spinning_on_signal_fetch_then_reading_the_data_is_race_free() {
    let Some(dir) = setup() else { return };
    let sources = repo_root().join("runtime/capi/tests/cuda");
    let binary = build_from(&dir, &sources, "cxx_signal_spin", &["-rshmem-check"]);
    assert_race_free(&dir, &binary, "cxx_signal_spin");
}

/// Threads of a block that read a `__shared__` word and a symmetric word that thread 0 stores
/// race without a `__syncthreads` in between (named by kernel, block and thread), and are
/// race-free with it (`tests/cuda/thread_race.cu`).
#[test]
fn races_between_the_threads_of_a_block_are_caught_and_sync_threads_clears_them() {
    let Some(dir) = setup() else { return };
    let sources = repo_root().join("runtime/capi/tests/cuda");
    let racy = build_from(&dir, &sources, "thread_race", &["-rshmem-check"]);
    let racy = racy.to_str().expect("a UTF-8 path");
    let args = ["check", "-n", "2", "--runs", "2", racy];
    let r = run(&dir, "rshmem", &args, "thread-race-check");
    assert_eq!(exit_code(&r), Some(1), "{}\n{}", r.stdout, r.stderr);
    for says in [
        "race 1 at __shared__+0x0 of PE 0",
        "at heap+0x",
        "by block (0,0,0) thread (0,0,0)",
        "by block (0,0,0) thread (1,0,0)",
        "two threads of kernel publish(int*, int*) access __shared__ memory",
        "access symmetric memory",
    ] {
        assert!(
            r.stdout.contains(says),
            "does not say {says:?}:\n{}",
            r.stdout
        );
    }
    let synced = build_from(&dir, &sources, "thread_race", &["-rshmem-check", "-DSYNC"]);
    let synced = synced.to_str().expect("a UTF-8 path");
    let args = ["check", "-n", "2", "--runs", "2", synced];
    let r = run(&dir, "rshmem", &args, "thread-race-synced-check");
    assert_eq!(exit_code(&r), Some(0), "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("no races"), "{}", r.stdout);
    // The synchronised program computes what it should: every thread saw both stores.
    let r = run(
        &dir,
        "oshrun",
        &["-np", "2", "--sim", "hgx8", synced],
        "thread-race-run",
    );
    assert_eq!(exit_code(&r), Some(0), "{}", r.stderr);
    assert_eq!(
        r.stdout
            .lines()
            .filter(|l| l.contains("64 of 64 threads saw 12"))
            .count(),
        2,
        "{}",
        r.stdout
    );
}

/// C++ CUDA programs of our own (`tests/cuda/cxx_*.cu`), written as applications are: libstdc++
/// on the host (`<iostream>`, `<vector>`, `<chrono>`, `<thread>`, `<random>`), exceptions
/// thrown on failed CUDA calls, templated kernels taking `__device__` lambdas, a kernel that puts
/// to its neighbour and one that spins on a signal, on-stream collectives between kernels; a
/// program of two `.cu` files and a `.cpp` file whose kernel calls another file's
/// `extern __device__` function, and one whose kernels and host code use device variables that
/// another `.cu` file defines (`extern __device__`, `extern __constant__`); half and bfloat16
/// puts, `p`, `g` and sum reductions in kernels; `cudaMemcpy` of a wild pointer or a huge size
/// refused with `cudaErrorInvalidValue`; one allocation of the driver API (`cuMemCreate`) mapped
/// twice, a kernel's stores through one mapping read through the other, and its misuse refused
/// with CUDA's codes (`vmm_alias.cu`); such a buffer registered as symmetric memory on every
/// PE, put into by a neighbour's kernel and reduced on a stream, unregistered and registered
/// again (`register_symmetric.cu`); two such buffers at once, unregistered below and above a
/// growth of the heap (`register_two_buffers.cu`); buffers refused on every PE alike, one PE's
/// bad buffer among good ones too, and nothing left behind (`register_refusals.cu`). Built as
/// C++17 and C++20, each prints what `NAME.N.expected` says at 2 and 4 PEs.
#[test]
fn cxx_programs_with_the_standard_library_print_what_they_should() {
    let Some(dir) = setup() else { return };
    let sources = repo_root().join("runtime/capi/tests/cuda");
    let programs: [(&str, &[&str]); 11] = [
        ("cxx_neighbour_put", &["cxx_neighbour_put.cu"]),
        ("cxx_signal_spin", &["cxx_signal_spin.cu"]),
        ("cxx_stream_collectives", &["cxx_stream_collectives.cu"]),
        (
            "cxx_rdc_main",
            &[
                "cxx_rdc_main.cu",
                "cxx_rdc_weights.cu",
                "cxx_rdc_report.cpp",
            ],
        ),
        ("half_ring", &["half_ring.cu"]),
        ("memcpy_wild_pointer", &["memcpy_wild_pointer.cu"]),
        ("vmm_alias", &["vmm_alias.cu"]),
        ("register_symmetric", &["register_symmetric.cu"]),
        ("register_two_buffers", &["register_two_buffers.cu"]),
        ("register_refusals", &["register_refusals.cu"]),
        (
            "rdc_histogram",
            &["rdc_histogram.cu", "rdc_counters.cu", "rdc_summary.cpp"],
        ),
    ];
    for (name, files) in programs {
        for standard in ["-std=c++17", "-std=c++20"] {
            // `--extended-lambda`: the flag nvcc needs for `__device__` lambdas, which
            // rshmem-nvcc accepts and needs not.
            let flags = [standard, "--extended-lambda"];
            let binary = build_files(&dir, &sources, name, files, &flags);
            let binary = binary.to_str().expect("a UTF-8 path");
            for n in ["2", "4"] {
                let expected = sources.join(format!("{name}.{n}.expected"));
                let expected = std::fs::read_to_string(&expected).expect("the expected output");
                let tag = format!("{name}{standard}-{n}");
                assert_prints(
                    &dir,
                    binary,
                    &["-np", n, "--sim", "hgx8", "--seed", "3"],
                    &expected,
                    &tag,
                );
            }
        }
    }
}

/// As processes without GPUs a buffer cannot become heap memory (there is no device heap, and
/// the peers' processes do not map the program's own memory): `nvshmemx_buffer_register_symmetric`
/// returns NULL on every PE and names where it works, and `register_symmetric.cu` ends with
/// status 1.
#[test]
fn registering_a_buffer_as_processes_fails_at_run_time_naming_the_simulator() {
    let Some(dir) = setup() else { return };
    let sources = repo_root().join("runtime/capi/tests/cuda");
    let binary = build_from(&dir, &sources, "register_symmetric", &[]);
    let binary = binary.to_str().expect("a UTF-8 path");
    let r = run(
        &dir,
        "oshrun",
        &["-np", "2", binary],
        "register_symmetric-processes",
    );
    assert_ne!(exit_code(&r), Some(0), "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr
            .contains("nvshmemx_buffer_register_symmetric: buf_ptr: cannot register the 2097152-byte buffer as symmetric memory: the run has no device heap to take it into (SHMEM_DEVICE_SYMMETRIC_SIZE is 0); buffers are registered on GPUs (oshrun --gpu) and on the simulator (oshrun --sim)"),
        "{}",
        r.stderr
    );
}

#[path = "nvshmem_programs/ends.rs"]
mod ends;
