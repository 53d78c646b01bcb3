//! MPI programs on the simulator (`oshrun --sim`): C programs of `tests/sim/` that use MPI
//! beside OpenSHMEM, built against Open MPI's `mpi.h` and `libmpi` with `oshcc`, and an
//! NVSHMEM program that starts with MPI built with `rshmem-nvcc`. Ranks and PEs agree, the
//! same seed gives the same run, a call not served and misuse end the run naming them. Each
//! test says why it does nothing where Open MPI's `mpicc` (or clang 14) is missing.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::{
    Outcome, Run, build_library_and_launcher, exit_code, repo_root, require_compilers, run_tool,
    run_with_deadline, scratch_dir, tail,
};

/// Open MPI's compile and link flags (`mpicc --showme:compile`, `--showme:link`), or `None`,
/// saying why, where `mpicc` is missing.
fn mpi_flags() -> Option<Vec<String>> {
    let show = |what: &str| {
        Command::new("mpicc")
            .arg(format!("--showme:{what}"))
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
    };
    let (Some(compile), Some(link)) = (show("compile"), show("link")) else {
        eprintln!("skipped: Open MPI's mpicc is missing (apt-get install -y libopenmpi-dev)");
        return None;
    };
    // Why --no-as-needed: the flags come before the source, where an as-needed link would
    // drop libmpi.
    let mut flags = vec!["-Wl,--no-as-needed".to_owned()];
    flags.extend(compile.split_whitespace().map(str::to_owned));
    flags.extend(link.split_whitespace().map(str::to_owned));
    Some(flags)
}

/// Builds the library once and `source` of `tests/` with `oshcc` against Open MPI; `None`
/// where Open MPI is missing.
fn program(source: &str) -> Option<(PathBuf, PathBuf)> {
    let flags = mpi_flags()?;
    require_compilers();
    build_library_and_launcher();
    let dir = scratch_dir();
    let root = repo_root();
    let name = source.replace(['/', '.'], "_");
    let binary = dir.join(&name);
    let mut build = Command::new(root.join("tools/osh/bin/oshcc"));
    build
        .args(["-std=c11", "-O1", "-g", "-Wall"])
        .args(&flags)
        .arg("-o")
        .arg(&binary)
        .arg(root.join("runtime/capi/tests").join(source));
    build_in(build, &dir, &name);
    Some((dir, binary))
}

/// Runs the compiler command `build` in `dir` (its output in `NAME.build`), failing the test
/// with the compiler's message unless it succeeds.
fn build_in(build: Command, dir: &Path, name: &str) {
    let build = run_with_deadline(
        build,
        dir,
        &format!("{name}.build"),
        Duration::from_secs(300),
    );
    assert!(
        matches!(build.outcome, Outcome::Exited(s) if s.success()),
        "the build failed: {}",
        tail(&build.stderr, 4000)
    );
}

/// `oshrun -np PES --sim hgx8 --seed SEED BINARY ARGS`, with a deadline of a minute.
fn simulate(dir: &Path, binary: &Path, pes: &str, args: &[&str], tag: &str) -> Run {
    let binary = binary.to_str().expect("a UTF-8 path");
    let mut all = vec!["-np", pes, "--sim", "hgx8", "--seed", "1", "--json", binary];
    all.extend(args);
    run_tool(dir, "oshrun", &all, tag, Duration::from_secs(60))
}

/// What the PEs printed and the report's trace hash.
fn output_and_hash(run: &Run) -> (String, String) {
    let (output, json) = run
        .stdout
        .trim_end()
        .rsplit_once('\n')
        .expect("output and JSON");
    let report: serde_json::Value = serde_json::from_str(json).expect("a JSON report");
    assert_eq!(report["ok"], true, "{}", run.stdout);
    let hash = report["trace_hash"].as_str().expect("a hash").to_owned();
    (output.to_owned(), hash)
}

#[test]
fn mpi_beside_shmem_agrees_and_the_same_seed_gives_the_same_run() {
    let Some((dir, binary)) = program("sim/mpi_shmem.c") else {
        return;
    };
    for pes in ["4", "8"] {
        let runs: Vec<(String, String)> = (0..2)
            .map(|i| {
                let r = simulate(&dir, &binary, pes, &[], &format!("mpi{pes}_{i}"));
                assert_eq!(exit_code(&r), Some(0), "{}\n{}", r.stdout, r.stderr);
                output_and_hash(&r)
            })
            .collect();
        assert_eq!(runs[0], runs[1], "two runs with seed 1 at {pes} PEs differ");
        let ranks = runs[0].0.lines().filter(|l| l.starts_with("rank ")).count();
        assert_eq!(ranks.to_string(), pes, "{}", runs[0].0);
        assert!(
            runs[0]
                .0
                .contains(&format!("rank 0 of {pes} on rshmem-sim-host0")),
            "{}",
            runs[0].0
        );
    }
}

#[test]
fn an_mpi_call_the_simulator_does_not_serve_ends_the_run_naming_it() {
    let Some((dir, binary)) = program("sim/mpi_unserved.c") else {
        return;
    };
    let r = simulate(&dir, &binary, "2", &[], "unserved");
    assert_eq!(exit_code(&r), Some(1), "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr
            .contains("MPI_Scatter: is not served on the simulator"),
        "{}",
        r.stderr
    );
    assert!(!r.stdout.contains("scattered"), "{}", r.stdout);
}

#[test]
fn tests_probes_scans_and_a_scattered_reduction_give_what_mpi_says() {
    let Some((dir, binary)) = program("sim/mpi_progress.c") else {
        return;
    };
    for pes in ["2", "4"] {
        let r = simulate(&dir, &binary, pes, &[], &format!("progress{pes}"));
        assert_eq!(exit_code(&r), Some(0), "{}\n{}", r.stdout, r.stderr);
        let (output, _) = output_and_hash(&r);
        let ok = output
            .lines()
            .filter(|l| l.contains("progress ok (polled)"))
            .count();
        assert_eq!(ok.to_string(), pes, "{output}");
    }
}

#[test]
fn mpi_misuse_ends_the_run_naming_the_problem() {
    let Some((dir, binary)) = program("sim/mpi_misuse.c") else {
        return;
    };
    let cases = [
        (
            "bcast",
            "MPI_Bcast: the ranks of the communicator disagree on the sizes",
        ),
        (
            "send",
            "MPI_Send: rank 2 is out of range for a communicator of 2 ranks",
        ),
        ("handle", "MPI_Barrier: the communicator argument"),
        (
            "recv",
            "MPI_Recv: waited 10 s of simulated time for a message from rank 1 with tag 5",
        ),
    ];
    for (what, said) in cases {
        let r = simulate(&dir, &binary, "2", &[what], what);
        assert_eq!(exit_code(&r), Some(1), "{what}: {}\n{}", r.stdout, r.stderr);
        assert!(r.stderr.contains(said), "{what}: {}", r.stderr);
        assert!(
            !r.stdout.contains("rank 0: not refused"),
            "{what}: {}",
            r.stdout
        );
    }
}

/// Builds `source` (from the repository's root) with `rshmem-nvcc` and Open MPI's flags, into
/// the scratch directory; None, said, where `mpicc` or clang 14 is missing. With
/// `cxx_bindings`, as `mpicxx` builds C++: Open MPI's C++ bindings in, and `libmpi_cxx`, whose
/// static constructors ask `MPI_Initialized` as each PE's copy of the program loads.
fn nvcc_mpi_program(source: &str, name: &str, cxx_bindings: bool) -> Option<(PathBuf, PathBuf)> {
    let flags = mpi_flags()?;
    let clang = Command::new("clang++-14").arg("--version").output();
    if !clang.is_ok_and(|o| o.status.success()) {
        eprintln!(
            "skipped: clang++-14 is missing (apt-get install -y clang-14); rshmem-nvcc needs it"
        );
        return None;
    }
    build_library_and_launcher();
    let dir = scratch_dir();
    let root = repo_root();
    let binary = dir.join(name);
    let mut build = Command::new(root.join("tools/osh/bin/rshmem-nvcc"));
    // Why -DOMPI_SKIP_MPICXX: NVSHMEM's MPI programs use MPI's C API, without Open MPI's C++
    // bindings (which need libmpi_cxx).
    match cxx_bindings {
        true => build.arg("-lmpi_cxx"),
        false => build.arg("-DOMPI_SKIP_MPICXX"),
    };
    build
        .args(
            flags
                .iter()
                .filter(|f| f.starts_with("-I") || f.starts_with("-L") || f.starts_with("-l")),
        )
        .arg("-o")
        .arg(&binary)
        .arg(root.join(source));
    build_in(build, &dir, name);
    Some((dir, binary))
}

#[test]
fn an_nvshmem_program_built_with_rshmem_nvcc_starts_with_mpi() {
    let Some((dir, binary)) = nvcc_mpi_program(
        "runtime/capi/tests/sim/mpi_nvshmem.cu",
        "mpi_nvshmem",
        false,
    ) else {
        return;
    };
    let r = simulate(&dir, &binary, "4", &[], "mpi_nvshmem");
    assert_eq!(exit_code(&r), Some(0), "{}\n{}", r.stdout, r.stderr);
    let (output, _) = output_and_hash(&r);
    for pe in 0..4 {
        let line = format!(
            "rank {pe} of 4 is PE {pe}, got {}, sum 10",
            (pe + 3) % 4 + 1
        );
        assert!(output.contains(&line), "{line}:\n{output}");
    }
}

/// The GPU machine's programs that initialise NVSHMEM through `nvshmemx_init_attr`, by the MPI
/// communicator and by a unique id sent with `MPI_Bcast`, run unchanged on the simulator too,
/// built with Open MPI's C++ bindings or without.
#[test]
fn nvshmem_programs_initialised_by_communicator_or_unique_id_run_on_the_simulator() {
    for (name, says, cxx_bindings) in [
        (
            "mpi_init",
            "mpi_init: PE {pe} (MPI rank {pe}) received {from}",
            false,
        ),
        (
            "mpi_init",
            "mpi_init: PE {pe} (MPI rank {pe}) received {from}",
            true,
        ),
        ("uid_init", "uid_init: PE {pe} of 4 received {from}", false),
    ] {
        let source = format!("runtime/capi/tests/cuda/{name}.cu");
        let Some((dir, binary)) = nvcc_mpi_program(&source, name, cxx_bindings) else {
            return;
        };
        let r = simulate(&dir, &binary, "4", &[], name);
        assert_eq!(exit_code(&r), Some(0), "{name}: {}\n{}", r.stdout, r.stderr);
        for pe in 0..4 {
            let line = says
                .replace("{pe}", &pe.to_string())
                .replace("{from}", &((pe + 3) % 4).to_string());
            assert!(r.stdout.contains(&line), "{line}:\n{}", r.stdout);
        }
    }
}
