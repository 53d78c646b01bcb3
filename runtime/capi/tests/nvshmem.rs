//! `nvshmem.h` compiles as every client compiles it: `tests/nvshmem/every_call.c`, which calls
//! every function of the header, as plain C and C++ against the host API (always), and, when
//! `nvcc` is on PATH, `every_call.cu` and the NVSHMEM guide's programs
//! (`examples/nvshmem/*.cu`) by nvcc for sm_90 with `-rdc=true`, linked with `-lnvshmem`
//! as the guide links them. Nothing runs: this machine may have no GPU
//! (`tools/gpu/nvshmem-programs.sh` runs the programs on one).
//!
//! `tests/nvshmem/names.rs` is a table of NVSHMEM's public names, each with a line that uses it:
//! the host names compile as C and C++ with no CUDA (and the device names must be absent there,
//! as in NVSHMEM), and all of them compile as CUDA by nvcc where it exists.
//! `tests/nvshmem/host_only.cpp`, a C++ program built by the system g++ with no CUDA, runs on
//! three PEs.
//!
//! nvcc's host compiler: `RSHMEM_NVCC_CCBIN` if set, else `clang-14` where it is installed
//! (CUDA 11.8 refuses GCC 12, and clang-14 is the project's CUDA front end), else nvcc's own.

mod common;
#[path = "nvshmem/names.rs"]
mod names;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{
    Outcome, build_library_and_launcher, exit_code, repo_root, require_compilers, run_tool,
    run_with_deadline, scratch_dir, tail,
};
use names::{Side, TABLE};

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
        let binary = dir.join(format!("every_call_{compiler}"));
        let command = host_compiler(compiler, language, &source, &binary);
        must_build(command, &dir, &format!("every_call as {language}"));
    }
}

/// nvcc building `source` into `binary` as the NVSHMEM guide builds its programs: sm_90, `-rdc`,
/// linked with `-lnvshmem -lcuda`.
fn nvcc(source: &Path, binary: &Path) -> Command {
    let root = repo_root();
    let ccbin = std::env::var("RSHMEM_NVCC_CCBIN")
        .ok()
        .or_else(|| installed("clang-14").then(|| "clang-14".to_string()));
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
        .arg(binary)
        .arg(source)
        .args(["-lnvshmem", "-lcuda"]);
    command
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
        must_build(
            nvcc(&source, &dir.join(&name)),
            &dir,
            &format!("nvcc {name}.cu"),
        );
    }
}

/// The program of the names table: each entry's statement on a line of its own, host entries
/// in a host function, device entries (with `device`) in a kernel. Returns the source and, per
/// line number, the name the line stands for.
fn names_program(device: bool) -> (String, Vec<(usize, &'static str)>) {
    let mut source = String::from(
        "#include <nvshmem.h>\n#include <nvshmemx.h>\n\
         #ifdef __cplusplus\n#define CHECK(condition) static_assert(condition, #condition)\n\
         #else\n#define CHECK(condition) _Static_assert(condition, #condition)\n#endif\n\
         static void host_names(void *sym, uint64_t *sig, int pe, nvshmem_team_t team, cudaStream_t stream) {\n",
    );
    let mut lines = Vec::new();
    let mut emit = |source: &mut String, side: Side| {
        for entry in TABLE.iter().filter(|entry| entry.side == side) {
            lines.push((source.lines().count() + 1, entry.name));
            source.push_str("    ");
            source.push_str(entry.statement);
            source.push('\n');
        }
    };
    emit(&mut source, Side::Host);
    source.push_str("}\n");
    if device {
        source.push_str(
            "__global__ void device_names(void *sym, uint64_t *sig, int pe, nvshmem_team_t team) {\n",
        );
        emit(&mut source, Side::Device);
        source.push_str("}\n");
    }
    source.push_str(
        "int main(void) {\n    host_names(NULL, NULL, 0, NVSHMEM_TEAM_WORLD, (cudaStream_t)0);\n    return 0;\n}\n",
    );
    (source, lines)
}

/// The table's names that the compiler's errors in `stderr` point at (`FILE:LINE:`).
fn names_with_errors(stderr: &str, file: &str, lines: &[(usize, &'static str)]) -> Vec<String> {
    let mut failed: Vec<String> = Vec::new();
    let mut last_error = "";
    for message in stderr.lines() {
        if message.contains("error:") {
            last_error = message;
        }
        let Some(rest) = message.split(&format!("{file}:")).nth(1) else {
            continue;
        };
        let Some(line) = rest.split(':').next().and_then(|n| n.parse::<usize>().ok()) else {
            continue;
        };
        let Some((_, name)) = lines.iter().find(|(at, _)| *at == line) else {
            continue;
        };
        // One report per name. An error inside a macro of the preamble (CHECK) is reported at
        // the macro, and a note then points at the table's line.
        if !failed
            .iter()
            .any(|report| report.starts_with(&format!("{name}: ")))
        {
            let why = if message.contains("error:") {
                message
            } else {
                last_error
            };
            failed.push(format!("{name}: {why}"));
        }
    }
    failed
}

/// Writes `source` to `dir/file`, compiles it with the command `compile` makes for that path,
/// and fails naming the table's names whose lines have errors.
fn must_compile_names(
    dir: &Path,
    file: &str,
    (source, lines): &(String, Vec<(usize, &'static str)>),
    compile: impl Fn(&Path) -> Command,
) {
    let path = dir.join(file);
    std::fs::write(&path, source).expect("cannot write the names program");
    let run = run_with_deadline(compile(&path), dir, file, Duration::from_secs(600));
    if let Outcome::Exited(status) = run.outcome
        && status.success()
    {
        return;
    }
    let failed = names_with_errors(&run.stderr, file, lines);
    assert!(
        !failed.is_empty(),
        "{file} did not build, and no error points at a name of the table:\n{}",
        tail(&run.stderr, 6000)
    );
    panic!(
        "{} of NVSHMEM's names do not compile against nvshmem.h ({file}):\n{}",
        failed.len(),
        failed.join("\n")
    );
}

/// The system compiler `compiler` building `source` as `language` against the headers and
/// libnvshmem, warnings as errors.
fn host_compiler(compiler: &str, language: &str, source: &Path, binary: &Path) -> Command {
    let root = repo_root();
    let mut command = Command::new(compiler);
    command
        .args(["-x", language, "-Wall", "-Wextra", "-Werror", "-I"])
        .arg(root.join("runtime/capi/include"))
        .arg(source)
        .arg("-L")
        .arg(root.join("target/release"))
        .arg(format!(
            "-Wl,-rpath,{}",
            root.join("target/release").display()
        ))
        .args(["-lnvshmem", "-o"])
        .arg(binary);
    command
}

#[test]
fn nvshmem_s_host_names_compile_as_c_and_cxx_without_cuda() {
    require_compilers();
    build_library_and_launcher();
    let dir = scratch_dir();
    let program = names_program(false);
    for (compiler, language, file) in [("cc", "c", "names.c"), ("c++", "c++", "names.cpp")] {
        let binary = dir.join(format!("{file}.bin"));
        must_compile_names(&dir, file, &program, |source| {
            host_compiler(compiler, language, source, &binary)
        });
    }
}

#[test]
fn nvshmem_s_device_names_are_absent_from_a_host_compilation() {
    require_compilers();
    let root = repo_root();
    let dir = scratch_dir();
    let mut present = Vec::new();
    for entry in TABLE.iter().filter(|entry| entry.side == Side::Device) {
        let source = dir.join(format!("{}.cpp", entry.name));
        let program = format!(
            "#include <nvshmem.h>\nvoid uses(void *sym, uint64_t *sig, int pe, nvshmem_team_t team) {{\n    {}\n}}\n",
            entry.statement
        );
        std::fs::write(&source, program).expect("cannot write a device name's program");
        let mut command = Command::new("c++");
        command
            .args(["-fsyntax-only", "-I"])
            .arg(root.join("runtime/capi/include"))
            .arg(&source);
        let run = run_with_deadline(command, &dir, entry.name, Duration::from_secs(120));
        let undeclared = run.stderr.contains(entry.name) && run.stderr.contains("not declared");
        if exit_code(&run) == Some(0) || !undeclared {
            present.push(format!("{}: {}", entry.name, tail(&run.stderr, 400)));
        }
    }
    assert!(
        present.is_empty(),
        "device-only names that a host compilation sees (NVSHMEM declares them for device code only):\n{}",
        present.join("\n")
    );
}

#[test]
fn nvcc_compiles_nvshmem_s_names_as_cuda() {
    if !installed("nvcc") {
        eprintln!("skipped: nvcc is not on PATH, so the names table was not compiled as CUDA");
        return;
    }
    build_library_and_launcher();
    let dir = scratch_dir();
    let binary = dir.join("names_cu.bin");
    must_compile_names(&dir, "names.cu", &names_program(true), |source| {
        nvcc(source, &binary)
    });
}

#[test]
fn a_cxx_host_program_built_by_the_system_compiler_runs_on_three_pes() {
    require_compilers();
    build_library_and_launcher();
    let root = repo_root();
    let dir = scratch_dir();
    let binary = dir.join("host_only");
    let source = root.join("runtime/capi/tests/nvshmem/host_only.cpp");
    must_build(
        host_compiler("c++", "c++", &source, &binary),
        &dir,
        "host_only build",
    );
    let run = run_tool(
        &dir,
        "oshrun",
        &["-np", "3", binary.to_str().expect("a UTF-8 scratch path")],
        "host_only",
        Duration::from_secs(120),
    );
    assert_eq!(
        exit_code(&run),
        Some(0),
        "host_only failed:\n{}",
        tail(&run.stderr, 4000)
    );
    assert_eq!(run.stdout.trim(), "host_only: 3 PEs agree");
}
