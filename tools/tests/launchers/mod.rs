//! What the tests of other launchers share: C programs built with `oshcc` (the C API's
//! `rma`, `hello` and `global_exit`, and `killed`), the MPI programs of
//! `runtime/capi/tests/mpi/` built with an MPI library's compiler flags, and a launcher run
//! under a time limit.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

pub fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

pub fn found(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|out| out.status.success())
}

/// A rank killed after the first barrier while the others wait in the second.
const KILLED: &str = r#"#include <shmem.h>
#include <signal.h>
#include <stdio.h>

int main(void) {
    shmem_init();
    shmem_barrier_all();
    if (shmem_my_pe() == shmem_n_pes() - 1) {
        raise(SIGKILL);
    }
    shmem_barrier_all();
    printf("PE %d left a barrier that a killed PE never entered\n", shmem_my_pe());
    shmem_finalize();
    return 0;
}
"#;

/// The directory of the programs, built once: `rma`, `hello` and `global_exit` of the C
/// API's tests, and `killed`. `None` (said) when the C library is not built.
pub fn programs() -> Option<&'static Path> {
    static BUILT: OnceLock<Option<PathBuf>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let root = workspace();
            if !root.join("target/release/libshmem.so").exists() {
                eprintln!(
                    "skipped: build the C library first (cargo build --release -p rshmem-capi)"
                );
                return None;
            }
            let dir = std::env::temp_dir().join(format!("rshmem-foreign-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let tests = root.join("runtime/capi/tests/c");
            std::fs::write(dir.join("killed.c"), KILLED).unwrap();
            let sources = [
                ("rma", tests.join("rma.c")),
                ("hello", tests.join("hello.c")),
                ("global_exit", tests.join("global_exit.c")),
                ("killed", dir.join("killed.c")),
            ];
            for (name, source) in sources {
                let out = Command::new(root.join("tools/osh/bin/oshcc"))
                    .arg(&source)
                    .arg("-o")
                    .arg(dir.join(name))
                    .output()
                    .unwrap();
                assert!(out.status.success(), "oshcc {name}: {}", text(&out));
            }
            Some(dir)
        })
        .as_deref()
}

/// The words `command args` prints, without the first `skip`: an MPI compiler wrapper's flags.
pub fn words_of(command: &str, args: &[&str], skip: usize) -> Vec<String> {
    let out = Command::new(command).args(args).output().unwrap();
    assert!(out.status.success(), "{command} {args:?}: {}", text(&out));
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .skip(skip)
        .map(str::to_owned)
        .collect()
}

/// Builds the MPI programs into `dir`: `init_attr` (C++, with oshc++) and `shmem_and_mpi`
/// (C, with oshcc), each with the compile and link flags `flags(wrapper)` gives for the MPI
/// compiler wrapper of its language, `cxx` or `c`.
pub fn build_mpi_programs(
    dir: &Path,
    (c, cxx): (&str, &str),
    flags: impl Fn(&str) -> (Vec<String>, Vec<String>),
) {
    std::fs::create_dir_all(dir).unwrap();
    let tests = workspace().join("runtime/capi/tests/mpi");
    let builds = [
        ("init_attr", "oshc++", cxx, "init_attr.cpp"),
        ("shmem_and_mpi", "oshcc", c, "shmem_and_mpi.c"),
    ];
    for (name, compiler, wrapper, source) in builds {
        let (compile, link) = flags(wrapper);
        let out = Command::new(workspace().join("tools/osh/bin").join(compiler))
            .args(compile)
            .arg(tests.join(source))
            .arg("-o")
            .arg(dir.join(name))
            .args(link)
            .output()
            .unwrap();
        assert!(out.status.success(), "{compiler} {name}: {}", text(&out));
    }
}

/// `launcher program args` under `timeout`, with `env`, and how long it took. The launcher's
/// own variables are removed, so that a test run under `rshmem run` does not leak its socket.
pub fn launch(
    launcher: &[&str],
    program: &Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> (Output, Duration) {
    let start = Instant::now();
    let out = Command::new("timeout")
        .args(["-k", "5", "60"])
        .args(launcher)
        .arg(program)
        .args(args)
        .env_remove("RSHMEM_BOOTSTRAP_SOCKET")
        .env_remove("RSHMEM_RANK")
        .env_remove("RSHMEM_N_RANKS")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    (out, start.elapsed())
}

/// A launcher's run of a program at `n` ranks with arguments and environment, and how long it
/// took.
pub type Run<'a> = &'a dyn Fn(&str, &Path, &[&str], &[(&str, &str)]) -> (Output, Duration);

/// `shmem_and_mpi` (`program`) at each of `ranks`, with MPI or OpenSHMEM first, over the
/// launcher's bootstrap or MPI_COMM_WORLD (by either name); then `SHMEM_INFO` names the `mpi`
/// bootstrap, and `shmem_init` before `MPI_Init` over it is refused with the fix.
pub fn check_shmem_and_mpi(program: &Path, ranks: &[&str], run: Run) {
    let cases: [(&str, &[(&str, &str)]); 4] = [
        ("mpi-first", &[]),
        ("shmem-first", &[]),
        ("mpi-first", &[("RSHMEM_BOOTSTRAP", "mpi")]),
        ("mpi-first", &[("NVSHMEM_BOOTSTRAP", "MPI")]),
    ];
    for n in ranks {
        for (order, env) in cases {
            let (out, _) = run(n, program, &[order], env);
            let said = text(&out);
            assert!(out.status.success(), "{n} ranks, {order} {env:?}: {said}");
            assert!(
                said.contains(&format!("shmem_and_mpi {order}: ok at {n} PEs")),
                "{said}"
            );
        }
    }
    // SHMEM_INFO names the bootstrap taken, where no launcher of ours prints the table.
    let env = [("RSHMEM_BOOTSTRAP", "mpi"), ("SHMEM_INFO", "1")];
    let (out, _) = run("2", program, &["mpi-first"], &env);
    assert!(
        text(&out).contains("rshmem: bootstrap: mpi (RSHMEM_BOOTSTRAP=mpi)"),
        "{}",
        text(&out)
    );
    // Over MPI_COMM_WORLD, shmem_init before MPI_Init has no communicator yet.
    let mpi = [("RSHMEM_BOOTSTRAP", "mpi")];
    let (out, took) = run("2", program, &["shmem-first"], &mpi);
    let said = text(&out);
    assert!(!out.status.success(), "{said}");
    assert!(
        said.contains("MPI is not initialised: call MPI_Init"),
        "{said}"
    );
    assert!(took < Duration::from_secs(15), "took {took:?}");
}
