//! `nvshmem.h` compiles as every client compiles it: `tests/nvshmem/every_call.c`, which calls
//! every function of the header, as plain C and C++ against the host API (always), and, when
//! `nvcc` is on PATH, `every_call.cu` and the NVSHMEM guide's programs
//! (`examples/nvshmem/*.cu`) by nvcc for sm_90 with `-rdc=true`, linked with `-lnvshmem`
//! as the guide links them. Nothing runs: this machine may have no GPU
//! (`tools/gpu/nvshmem-programs.sh` runs the programs on one).
//!
//! nvcc's host compiler: `RSHMEM_NVCC_CCBIN` if set, else `clang-14` where it is installed
//! (CUDA 11.8 refuses GCC 12, and clang-14 is the project's CUDA front end), else nvcc's own.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{
    Outcome, build_library_and_launcher, repo_root, require_compilers, run_with_deadline,
    scratch_dir, tail,
};

/// Runs `command` in `dir` (its output kept there under `tag`) and fails with its errors.
fn must_build(command: Command, dir: &Path, tag: &str) {
    let run = run_with_deadline(command, dir, tag, Duration::from_secs(600));
    match run.outcome {
        Outcome::Exited(status) if status.success() => {}
        _ => panic!("{tag} failed:\n{}", tail(&run.stderr, 6000)),
    }
}

/// Whether `program --version` runs.
fn installed(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn the_header_compiles_as_c_and_cxx_and_links_with_libshmem() {
    require_compilers();
    build_library_and_launcher();
    let root = repo_root();
    let dir = scratch_dir();
    let source = root.join("runtime/capi/tests/nvshmem/every_call.c");
    for (compiler, language) in [("cc", "c"), ("c++", "c++")] {
        let mut command = Command::new(compiler);
        command
            .args(["-x", language, "-Wall", "-Wextra", "-Werror", "-I"])
            .arg(root.join("runtime/capi/include"))
            .arg(&source)
            .arg("-L")
            .arg(root.join("target/release"))
            .args(["-lnvshmem", "-o"])
            .arg(dir.join(format!("every_call_{compiler}")));
        must_build(command, &dir, &format!("every_call as {language}"));
    }
}

#[test]
fn nvcc_compiles_every_call_and_the_guides_programs() {
    if !installed("nvcc") {
        eprintln!("skipped: nvcc is not on PATH, so nvshmem.h was not compiled as CUDA");
        return;
    }
    build_library_and_launcher();
    let root = repo_root();
    let dir = scratch_dir();
    let ccbin = std::env::var("RSHMEM_NVCC_CCBIN")
        .ok()
        .or_else(|| installed("clang-14").then(|| "clang-14".to_string()));
    let mut sources = vec![root.join("runtime/capi/tests/nvshmem/every_call.cu")];
    let mut programs: Vec<_> = std::fs::read_dir(root.join("runtime/capi/examples/nvshmem"))
        .expect("the examples' folder")
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|e| e == "cu"))
        .collect();
    programs.sort();
    sources.extend(programs);
    for source in sources {
        let name = source.file_stem().unwrap().to_string_lossy().into_owned();
        let mut command = Command::new("nvcc");
        if let Some(ccbin) = &ccbin {
            command.args(["-ccbin", ccbin]);
        }
        command
            .args(["-arch=sm_90", "-rdc=true", "-I"])
            .arg(root.join("runtime/capi/include"))
            .arg("-L")
            .arg(root.join("target/release"))
            .arg("-o")
            .arg(dir.join(&name))
            .arg(&source)
            .args(["-lnvshmem", "-lcuda"]);
        must_build(command, &dir, &format!("nvcc {name}.cu"));
    }
}
