//! `rshmem nvcc` on the corpus in tests/cuda: every program compiles (host pass, device pass,
//! IR rewrite) to an object with its kernels' trampolines and the module's registration;
//! programs that use a construct the simulator does not emulate fail with the text their
//! `// error:` lines give; and, once libshmem has the CUDA emulation, each program links and
//! prints its `// expect:` line under `rshmem run -n 1` and `rshmem oshrun -np 2 --sim hgx8`.
//!
//! Skips, saying why, when clang-14 is not installed, and runs nothing (saying so) when the
//! libshmem beside the rshmem binary has not been built.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The corpus directory.
fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cuda")
}

fn clang_missing() -> bool {
    let missing = Command::new("clang++-14")
        .arg("--version")
        .output()
        .is_err();
    if missing {
        eprintln!("skipping: clang++-14 is not installed (apt-get install clang-14 llvm-14)");
    }
    missing
}

/// Whether libshmem beside the rshmem binary has the CUDA emulation, so programs link and run.
fn emulation_built() -> bool {
    let lib = Path::new(env!("CARGO_BIN_EXE_rshmem")).with_file_name("libshmem.so");
    Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(&lib)
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("__rsim_register_module"))
}

fn nvcc(args: &[&str], extra: &[PathBuf]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_rshmem"));
    command.arg("nvcc").args(args).args(extra);
    command.output().expect("rshmem runs")
}

/// The lines of `source` that start with `// KEY: `.
fn directives(source: &str, key: &str) -> Vec<String> {
    let prefix = format!("// {key}: ");
    source
        .lines()
        .filter_map(|l| l.strip_prefix(&prefix).map(str::to_string))
        .collect()
}

/// A scratch directory of one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nvcc-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn symbols(object: &Path) -> String {
    let out = Command::new("nm").arg(object).output().expect("nm runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_corpus_compiles_links_and_runs_or_fails_as_each_file_says() {
    if clang_missing() {
        return;
    }
    let dir = scratch("corpus");
    let run = emulation_built();
    if !run {
        eprintln!(
            "compiling only: no libshmem with the CUDA emulation beside the rshmem binary \
             (cargo build --release -p rshmem-capi)"
        );
    }
    if !run {
        eprintln!("compiling only: libshmem has no CUDA emulation (runtime/capi/src/cuda_sim) yet");
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "cu"))
        .collect();
    files.sort();
    assert!(files.len() >= 10, "the corpus is in {}", corpus().display());
    for file in files {
        let source = std::fs::read_to_string(&file).unwrap();
        let name = file.file_stem().unwrap().to_string_lossy().into_owned();
        let object = dir.join(format!("{name}.o"));
        let out = nvcc(&["-O2", "-c"], &[file.clone(), "-o".into(), object.clone()]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let errors = directives(&source, "error");
        if !errors.is_empty() {
            assert!(!out.status.success(), "{name} compiled; it should fail");
            for text in errors {
                assert!(stderr.contains(&text), "{name}: no `{text}` in:\n{stderr}");
            }
            continue;
        }
        assert!(out.status.success(), "{name} did not compile:\n{stderr}");
        let nm = symbols(&object);
        for symbol in [
            "__rsim_trampoline.0",
            "__rsim_module_ctor",
            "U __rsim_register_module",
            "U __rsim_cudaLaunchKernel",
        ] {
            assert!(nm.contains(symbol), "{name}.o has no {symbol}:\n{nm}");
        }
        if !run {
            continue;
        }
        let program = dir.join(&name);
        let out = nvcc(&[], &[object, "-o".into(), program.clone()]);
        assert!(
            out.status.success(),
            "{name} did not link:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        for launcher in [
            vec!["run", "-n", "1"],
            vec!["oshrun", "-np", "2", "--sim", "hgx8"],
        ] {
            let out = Command::new(env!("CARGO_BIN_EXE_rshmem"))
                .args(&launcher)
                .arg(&program)
                .output()
                .unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success(),
                "{name} under {launcher:?} failed:\n{stdout}{}",
                String::from_utf8_lossy(&out.stderr)
            );
            for line in directives(&source, "expect") {
                assert!(
                    stdout.contains(&line),
                    "{name} under {launcher:?}: no `{line}` in:\n{stdout}"
                );
            }
        }
    }
}

#[test]
fn checked_builds_rename_the_device_codes_sanitizer_hooks() {
    if clang_missing() {
        return;
    }
    let dir = scratch("check");
    let object = dir.join("block_reduce.o");
    let out = nvcc(
        &["-rshmem-check", "-c"],
        &[
            corpus().join("block_reduce.cu"),
            "-o".into(),
            object.clone(),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let nm = symbols(&object);
    // The host pass calls the program's hooks, the device code the emulator's.
    assert!(nm.contains("U __tsan_func_entry"), "{nm}");
    assert!(
        nm.contains("U __rsim_tsan_write4") && nm.contains("U __rsim_tsan_read4"),
        "{nm}"
    );
}

#[test]
fn nvcc_options_are_taken_and_unknown_ones_named() {
    if clang_missing() {
        return;
    }
    let dir = scratch("options");
    let object = dir.join("k.o");
    let out = nvcc(
        &[
            "-arch=sm_90",
            "-gencode",
            "arch=compute_90,code=sm_90",
            "-rdc=true",
            "--expt-relaxed-constexpr",
            "-lineinfo",
            "-std=c++17",
            "-DUNUSED=1",
            "-c",
        ],
        &[corpus().join("grid_2d.cu"), "-o".into(), object.clone()],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(object.is_file());
    let out = nvcc(&["--frobnicate", "-c"], &[corpus().join("grid_2d.cu")]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("unknown option --frobnicate"),
        "{stderr}"
    );
    let help = nvcc(&["--help"], &[]);
    assert!(String::from_utf8_lossy(&help.stdout).contains("-rshmem-check"));
}
