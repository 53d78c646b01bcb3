//! C++ CUDA programs of `tests/cuda/` that end in a particular way or need the simulator's
//! views and teams: a kernel wait nothing satisfies (for one word or any of several), large
//! heaps and a small limit, a PE's `exit` (from `main` or a thread), kernels on split teams,
//! and loads and stores through `nvshmem_ptr`.

use super::*;

/// Kernel waits that nothing satisfies end the run with the wait named as the GPU's watchdog
/// names it (PE, kernel, block, thread, what it waits for) and the host barriers of the other
/// PEs saying which PE they wait for, never a segment offset. `tests/cuda/hang_signal.cu`: a
/// signal nobody sets, named as the `nvshmem_calloc`'ed object and offset with the comparison
/// in NVSHMEM's words. `tests/cuda/team_barrier_hang.cu`: a block's barrier on the even PEs'
/// team that PE 2 never enters.
#[test]
fn a_kernel_wait_that_nothing_satisfies_is_named_in_the_program_s_terms() {
    let Some(dir) = setup() else { return };
    let sources = repo_root().join("runtime/capi/tests/cuda");
    let hangs: [(&str, &str, &[&str]); 2] = [
        (
            "hang_signal",
            "2",
            &[
                "PE 0: kernel wait_for_work(unsigned long*, int*): block (",
                ") thread (0,0,0): nvshmem_signal_wait_until waits for nvshmem_calloc'ed object \
                 #3 (16 bytes) + 8 to be NVSHMEM_CMP_GE 3; it holds 0",
                "PE 1 waits for team_sync: TEAM_WORLD's barrier counter of round 0 (PE 0 adds to it)",
            ],
        ),
        (
            "team_barrier_hang",
            "4",
            &[
                "PE 0: kernel meet_partner(int, int*): block (0,0,0) thread (",
                "): nvshmem_barrier: deadlock",
                "PE 0 waits for a team barrier in a kernel: a split team's barrier counter of \
                 round 0 (PE 2 adds to it) to become >= 1 (it holds 0)",
                "PE 2 waits for team_sync: TEAM_WORLD's barrier counter of round 1 (PE 0 adds to it)",
            ],
        ),
    ];
    for (name, pes, says) in hangs {
        let binary = build_from(&dir, &sources, name, &[]);
        let binary = binary.to_str().expect("a UTF-8 path");
        for seed in ["1", "2"] {
            let r = run(
                &dir,
                "oshrun",
                &["-np", pes, "--sim", "hgx8", "--seed", seed, binary],
                &format!("{name}-{seed}"),
            );
            assert_ne!(exit_code(&r), Some(0), "{}", r.stdout);
            for said in says {
                assert!(
                    r.stderr.contains(said),
                    "{name} does not say {said:?}:\n{}",
                    r.stderr
                );
            }
            assert!(!r.stderr.contains("word at offset"), "{}", r.stderr);
            assert!(!r.stdout.contains("done"), "{}", r.stdout);
        }
    }
}

/// A kernel's `nvshmem_int_wait_until_any` for flags nobody sets
/// (`tests/cuda/exit_wait_any_timeout.cu`): past `RSHMEM_WAIT_TIMEOUT_MS` of the PE's clock
/// the run ends with the wait named as `nvshmem_wait_until`'s report names it, its first flag
/// included (PE 1's `ready[0]` is the object itself, PE 0's `ready[1]` the object + 4: which
/// PE's deadline passes first depends on the timing of start-up).
#[test]
fn a_kernel_wait_for_any_word_reports_at_its_deadline() {
    let Some(dir) = setup() else { return };
    let ends = Ends {
        name: "exit_wait_any_timeout",
        pes: "2",
        env: &[("RSHMEM_WAIT_TIMEOUT_MS", "2")],
        status: 1,
        expected: "exit_wait_any_timeout.2.expected",
        stderr: &[
            "kernel wait_for_any_peer(int*, int const*, int, int*): block (0,0,0) thread (0,0,0): \
             nvshmem_wait_until_any waits for nvshmem_calloc'ed object #2 (8 bytes)",
            "to be NVSHMEM_CMP_EQ 1; it holds 0",
            "none of its words held within RSHMEM_WAIT_TIMEOUT_MS (2 ms",
        ],
    };
    assert_ends(&dir, &ends);
}

/// How a program of `tests/cuda/` must end on the simulator: its status, the lines it printed
/// (`NAME.N.expected`, any order) and words the launcher's report or the library says on stderr.
struct Ends {
    name: &'static str,
    pes: &'static str,
    env: &'static [(&'static str, &'static str)],
    status: i32,
    expected: &'static str,
    stderr: &'static [&'static str],
}

/// Runs `ends.name` built from `tests/cuda/` under `oshrun --sim` and checks how it ends.
fn assert_ends(dir: &Path, ends: &Ends) {
    let sources = repo_root().join("runtime/capi/tests/cuda");
    let binary = build_from(dir, &sources, ends.name, &[]);
    let tag = format!("{}-{}-{}", ends.name, ends.pes, ends.env.len());
    let mut command = Command::new(repo_root().join("tools/osh/bin/oshrun"));
    command
        .args(["-np", ends.pes, "--sim", "hgx8", "--seed", "5"])
        .arg(&binary)
        .envs(ends.env.iter().copied());
    let r = run_with_deadline(command, dir, &tag, Duration::from_secs(120));
    assert_eq!(
        exit_code(&r),
        Some(ends.status),
        "{tag}:\n{}\n{}",
        r.stdout,
        r.stderr
    );
    let expected = std::fs::read_to_string(sources.join(ends.expected)).expect("expected output");
    assert_eq!(
        sorted_lines(&r.stdout),
        sorted_lines(&expected),
        "{tag} printed:\n{}\nstderr:\n{}",
        r.stdout,
        tail(&r.stderr, 3000)
    );
    for words in ends.stderr {
        assert!(
            r.stderr.contains(words),
            "{tag}: no {words:?} in:\n{}",
            r.stderr
        );
    }
}

/// NVSHMEM's heap grows past 1 GiB on demand, and so does ours: two 512 MiB buffers whose far
/// ends a kernel puts to and the host reads and writes. With a limit set small (NVSHMEM's
/// name for it) `nvshmem_malloc` returns NULL on every PE, each says why once, and the
/// program's own `exit(1)` ends each PE.
#[test]
fn two_512_mib_buffers_fit_and_a_small_limit_says_why_malloc_failed() {
    let Some(dir) = setup() else { return };
    for (pes, expected) in [
        ("2", "heap_two_halves.2.expected"),
        ("4", "heap_two_halves.4.expected"),
    ] {
        let ends = Ends {
            name: "heap_two_halves",
            pes,
            env: &[],
            status: 0,
            expected,
            stderr: &[],
        };
        assert_ends(&dir, &ends);
    }
    let small = Ends {
        name: "heap_two_halves",
        pes: "2",
        env: &[("NVSHMEM_MAX_MEMORY_PER_GPU", "768m")],
        status: 1,
        expected: "heap_two_halves.small.expected",
        stderr: &[
            "rshmem: PE 0: shmem_malloc: host heap exhausted: asked for 536870912 bytes (512m)",
            "rshmem: PE 1: shmem_malloc: host heap exhausted",
            "bytes (768m) are in use",
            "raise its limit, e.g. set SHMEM_SYMMETRIC_SIZE=2g; it returns NULL",
            "PE 0 exited with status 1",
            "PE 1 exited with status 1",
        ],
    };
    assert_ends(&dir, &small);
}

/// A PE that calls `exit` from C++ code (a frame holding a `std::vector` or a `std::string`),
/// from its `main` or from a `std::thread` it started, ends alone: the others finish what needs no more of it, and a barrier that waits for it
/// is reported as a deadlock that names it, never a hang nor a barrier passed without it.
#[test]
fn a_cuda_program_s_exit_ends_only_its_pe() {
    let Some(dir) = setup() else { return };
    let early = Ends {
        name: "exit_early",
        pes: "4",
        env: &[],
        status: 1,
        expected: "exit_early.4.expected",
        stderr: &[
            "CUDA error at",
            "PE 3 exited with status 1",
            "already finished: PEs 3",
        ],
    };
    assert_ends(&dir, &early);
    let barrier = Ends {
        name: "exit_before_barrier",
        pes: "4",
        env: &[],
        status: 1,
        expected: "exit_before_barrier.4.expected",
        stderr: &[
            "input of PE 3 is negative (-1), giving up",
            "PE 3 exited with status 1",
            "deadlock",
            "already finished: PEs 3",
        ],
    };
    assert_ends(&dir, &barrier);
    // From a std::thread the PE started, while `main` joins it: the PE's atexit handler runs
    // and PE 2 alone ends.
    let thread = Ends {
        name: "exit_from_thread",
        pes: "4",
        env: &[],
        status: 2,
        expected: "exit_from_thread.4.expected",
        stderr: &[
            "PE 2: no samples to load, giving up",
            "PE 2: atexit handler ran",
            "PE 2 exited with status 2",
            "already finished: PEs 2",
        ],
    };
    assert_ends(&dir, &thread);
}

/// Kernels on teams split from the world, at 4 PEs, agree with what each member computes and
/// the race detector finds no race. `tests/cuda/team_even_collectives.cu`: the even PEs'
/// numbering, barriers and syncs at thread, warp and block scope, an alltoall and a sum
/// reduction, the odd PEs taking no part. `tests/cuda/team_split_collectives.cu`: barriers,
/// syncs, fcollect, alltoall, broadcast from the team's PE 1, sum and max at thread, warp and
/// block scope on the even PEs, the last three and the rows and columns of a 2-d split, made
/// and destroyed three times so that later teams take the slots of earlier ones.
#[test]
fn kernels_synchronise_and_exchange_on_split_teams() {
    let Some(dir) = setup() else { return };
    let sources = repo_root().join("runtime/capi/tests/cuda");
    for (name, seed) in [
        ("team_even_collectives", "5"),
        ("team_split_collectives", "7"),
    ] {
        let expected = std::fs::read_to_string(sources.join(format!("{name}.4.expected")))
            .expect("the expected output");
        for flags in [&[][..], &["-rshmem-check"][..]] {
            let binary = build_from(&dir, &sources, name, flags);
            let binary = binary.to_str().expect("a UTF-8 path");
            let args = ["-np", "4", "--sim", "hgx8", "--seed", seed];
            assert_prints(&dir, binary, &args, &expected, &format!("{name}{flags:?}"));
        }
        let checked = build_from(&dir, &sources, name, &["-rshmem-check"]);
        assert_race_free(&dir, &checked, name);
    }
}

/// A transpose through `nvshmem_ptr`: built with `-rshmem-check`, each kernel store through
/// the pointer is a put and each load a get, so it runs on the simulator, the host copies from
/// a peer through its pointer, and the race detector finds no race with the barrier and the
/// peers' stores racing with the reads without it; built without, the kernel's `nvshmem_ptr`
/// stops the run saying to build with `-rshmem-check` (`tests/cuda/ptr_transpose.cu`).
#[test]
fn loads_and_stores_through_nvshmem_ptr_are_simulated_operations() {
    let Some(dir) = setup() else { return };
    let sources = repo_root().join("runtime/capi/tests/cuda");
    let name = "ptr_transpose";
    let checked = build_from(&dir, &sources, name, &["-rshmem-check"]);
    let expected = std::fs::read_to_string(sources.join(format!("{name}.4.expected")))
        .expect("the expected output");
    let args = ["-np", "4", "--sim", "hgx8", "--seed", "2"];
    let binary = checked.to_str().expect("a UTF-8 path");
    assert_prints(&dir, binary, &args, &expected, name);
    assert_race_free(&dir, &checked, name);

    let racy = build_from(&dir, &sources, name, &["-rshmem-check", "-DRACY"]);
    let racy = racy.to_str().expect("a UTF-8 path");
    let r = run(
        &dir,
        "rshmem",
        &["check", "-n", "4", "--runs", "2", racy],
        "ptr-racy",
    );
    assert_eq!(exit_code(&r), Some(1), "{}\n{}", r.stdout, r.stderr);
    for says in ["local read of 8 B at heap+", "put of 8 B at heap+"] {
        assert!(
            r.stdout.contains(says),
            "does not say {says:?}:\n{}",
            r.stdout
        );
    }

    let plain = build_from(&dir, &sources, name, &[]);
    let plain = plain.to_str().expect("a UTF-8 path");
    let r = run(&dir, "oshrun", &[&args[..], &[plain]].concat(), "ptr-plain");
    assert_ne!(exit_code(&r), Some(0), "{}", r.stdout);
    assert!(
        r.stderr.contains("nvshmem_ptr: PE ") && r.stderr.contains("rshmem-nvcc -rshmem-check"),
        "{}",
        r.stderr
    );
}
