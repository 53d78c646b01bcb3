//! Compiles programs that include the committed headers with the system's C and C++
//! compilers, warnings as errors: C11 and C17 with `-pedantic` (generic names included), C99
//! (which has no `_Generic`, so only the typed names), and C++11 (overloads). Syntax only; what
//! the calls do is tested by the C programs of the test suites.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::include_dir;

/// A C11 program that uses generic names with several types and with and without a context.
const C11_PROGRAM: &str = r#"
#include <shmem.h>
#include <shmemx.h>

static long dest[4];
static double ddest[4];
static unsigned int flags[4];
static uint64_t sig;

int main(void) {
    long src[4] = {1, 2, 3, 4};
    double dsrc[4] = {0};
    const long *csrc = src;
    shmem_ctx_t ctx = SHMEM_CTX_DEFAULT;
    int status[4] = {0};
    shmem_init();
    shmem_put(dest, src, 4, 0);
    shmem_put(ctx, dest, csrc, 4, 0);
    shmem_put(ddest, dsrc, 4, 0);
    shmem_p(dest, 5L, 1);
    shmem_p(ctx, ddest, 2.0, 1);
    long got = shmem_g(dest, 0) + shmem_g(ctx, csrc, 0);
    double dgot = shmem_g(ddest, 0);
    shmem_iput(dest, src, 1, 1, 4, 0);
    shmem_ibget(ctx, ddest, dsrc, 2, 2, 1, 2, 0);
    shmem_put_nbi(ctx, dest, src, 4, 0);
    shmem_put_signal(dest, src, 4, &sig, 1, SHMEM_SIGNAL_ADD, 0);
    got += shmem_atomic_fetch_add(dest, 1L, 0);
    got += (long) shmem_atomic_fetch_and(ctx, flags, 1u, 0);
    shmem_atomic_set(ddest, 1.0, 0);
    shmem_wait_until(flags, SHMEM_CMP_EQ, 1u);
    shmem_wait_until_all(flags, 4, status, SHMEM_CMP_NE, 0u);
    (void) shmem_test(dest, SHMEM_CMP_GE, 0L);
    shmem_sum_reduce(SHMEM_TEAM_WORLD, dest, src, 4);
    shmem_max_reduce(SHMEMX_TEAM_NODE, ddest, dsrc, 4);
    shmem_broadcast(SHMEM_TEAM_WORLD, dest, src, 4, 0);
    (void) shmem_fadd(dest, 1L, 0);
    shmem_long_sum_to_all(dest, src, 4, 0, 0, 2, src, (long *) 0);
    shmem_wait(dest, 0L);
    shmem_finalize();
    return (int) (got + (long) dgot);
}
"#;

/// A C99 program: typed names and constants only.
const C99_PROGRAM: &str = r#"
#include <shmem.h>
#include <shmemx.h>
#ifdef shmem_put
#error "C99 has no _Generic; shmem.h must not define generic names"
#endif
static long dest[4];
int main(void) {
    long src[4] = {0};
    shmem_init();
    shmem_long_put(dest, src, 4, 0);
    shmem_ctx_long_put(SHMEM_CTX_DEFAULT, dest, src, 4, 0);
    shmem_wait_until(dest, SHMEM_CMP_NE, 0);
    shmem_finalize();
    return _SHMEM_CMP_EQ == SHMEM_CMP_EQ ? 0 : 1;
}
"#;

/// A C++ program that uses the overloads.
const CXX_PROGRAM: &str = r#"
#include <shmem.h>
#include <shmemx.h>
static long dest[4];
static double ddest[4];
static unsigned int flags[4];
int main() {
    long src[4] = {0};
    double dsrc[4] = {0};
    shmem_ctx_t ctx = SHMEM_CTX_DEFAULT;
    shmem_init();
    shmem_put(dest, src, 4, 0);
    shmem_put(ctx, ddest, dsrc, 4, 0);
    shmem_p(dest, 1L, 0);
    long got = shmem_g(dest, 0);
    got += shmem_atomic_fetch_add(ctx, dest, 1L, 0);
    shmem_wait_until(flags, SHMEM_CMP_EQ, 1u);
    shmem_wait_until(dest, SHMEM_CMP_EQ, 1L);
    shmem_sum_reduce(SHMEM_TEAM_WORLD, ddest, dsrc, 4);
    shmem_finalize();
    return (int) got;
}
"#;

/// A scratch directory of this test process.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rshmem-capi-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create a scratch directory");
    dir
}

/// Compiles `source` (syntax only) with `compiler` and `flags`; panics with the diagnostics.
fn compile(compiler: &str, flags: &[&str], file: &str, source: &str) {
    let dir = scratch(file);
    let path: PathBuf = dir.join(file);
    std::fs::write(&path, source).expect("write the program");
    let output = syntax_check(compiler, flags, &path);
    assert!(
        output.status.success(),
        "{compiler} {flags:?} {file} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// Runs `compiler` on the file at `path`, syntax only, warnings as errors, with the headers'
/// directory and `tests/c` (for `check.h`) on the include path.
fn syntax_check(compiler: &str, flags: &[&str], path: &Path) -> std::process::Output {
    let tests_c = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c");
    Command::new(compiler)
        .args(flags)
        .args(["-fsyntax-only", "-Wall", "-Werror", "-I"])
        .arg(include_dir())
        .arg("-I")
        .arg(tests_c)
        .arg(path)
        .output()
        .unwrap_or_else(|err| panic!("could not run {compiler}: {err}; install gcc and g++"))
}

#[test]
fn header_compiles_as_c11_with_generics() {
    compile(
        "cc",
        &["-std=c11", "-Wextra", "-pedantic"],
        "c11.c",
        C11_PROGRAM,
    );
    compile(
        "cc",
        &["-std=c17", "-Wextra", "-pedantic"],
        "c17.c",
        C11_PROGRAM,
    );
}

#[test]
fn header_compiles_as_c99_without_generics() {
    compile(
        "cc",
        &["-std=c99", "-Wextra", "-pedantic"],
        "c99.c",
        C99_PROGRAM,
    );
}

#[test]
fn header_compiles_as_cxx_with_overloads() {
    compile("c++", &["-std=c++11"], "cxx.cpp", CXX_PROGRAM);
}

/// The programs of the generic names' tests (`tests/c/generic*.c`, `tests/cxx/generic*.cpp`),
/// which the program suite runs, compiled here as strictly as their users may: `-Wall -Wextra
/// -pedantic -Werror`, as C11, C17, C++11 and C++17.
#[test]
fn generic_test_programs_compile_pedantically() {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut checked = 0;
    for (dir, compiler, standards) in [
        ("c", "cc", ["-std=c11", "-std=c17"]),
        ("cxx", "c++", ["-std=c++11", "-std=c++17"]),
    ] {
        let entries = std::fs::read_dir(tests.join(dir)).expect("list the test programs");
        for path in entries.map(|entry| entry.expect("a directory entry").path()) {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            let program = name.ends_with(".c") || name.ends_with(".cpp");
            if !name.starts_with("generic") || !program {
                continue;
            }
            for standard in standards {
                let output = syntax_check(compiler, &[standard, "-Wextra", "-pedantic"], &path);
                assert!(
                    output.status.success(),
                    "{compiler} {standard} -Wextra -pedantic {name} failed:\n{}",
                    String::from_utf8_lossy(&output.stderr)
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 7, "only {checked} generic test programs found");
}

/// Types a generic name's table does not list select no routine, in C11 and in C++: the
/// selections take exactly the specification's tables (OpenSHMEM 1.5 sections 9.7 and
/// 9.9, SHMEM_REDUCTIONS), not a neighbouring type of the same width.
#[test]
fn a_type_outside_the_table_does_not_compile() {
    let calls = [
        // Bitwise AMO types: no short, no signed char, no long long (only unsigned long long).
        ("short", "shmem_atomic_and(x, v, 0)"),
        ("long long", "shmem_atomic_fetch_xor(x, v, 0)"),
        // Standard AMO types: no floating types, no short.
        ("float", "shmem_atomic_add(x, v, 0)"),
        ("short", "shmem_atomic_fetch_inc(x, 0)"),
        // Extended AMO types: no long double.
        ("long double", "shmem_atomic_swap(x, v, 0)"),
        // Team reductions: char has no AND; complex types have no MAX.
        ("char", "shmem_and_reduce(SHMEM_TEAM_WORLD, x, x, 1)"),
        (
            "shmem_complexd_t",
            "shmem_max_reduce(SHMEM_TEAM_WORLD, x, x, 1)",
        ),
        // Point-to-point synchronization types: no char, no floating types.
        ("char", "shmem_wait_until(x, SHMEM_CMP_EQ, v)"),
        ("double", "shmem_test(x, SHMEM_CMP_EQ, v)"),
    ];
    for (ty, call) in calls {
        for (compiler, file, flags) in [
            ("cc", "outside.c", "-std=c11"),
            ("c++", "outside.cpp", "-std=c++11"),
        ] {
            let program = format!(
                "#include <shmem.h>\nstatic {ty} target[1];\n\
                 int main(void) {{ {ty} *x = target, v = 0; (void) v; {call}; return 0; }}\n"
            );
            let dir = scratch(file);
            let path = dir.join(file);
            std::fs::write(&path, program).expect("write the program");
            let output = syntax_check(compiler, &[flags], &path);
            assert!(
                !output.status.success(),
                "{compiler}: {call} on {ty} compiled"
            );
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

#[test]
fn an_unsupported_type_does_not_compile() {
    let program = "#include <shmem.h>\nstruct s { int x; };\nstatic struct s d[1];\n\
                   int main(void) { struct s v[1]; shmem_put(d, v, 1, 0); return 0; }\n";
    let dir = scratch("bad");
    let path = dir.join("bad.c");
    std::fs::write(&path, program).expect("write the program");
    let output = Command::new("cc")
        .args(["-std=c11", "-fsyntax-only", "-I"])
        .arg(include_dir())
        .arg(&path)
        .output()
        .expect("run cc");
    assert!(
        !output.status.success(),
        "a struct pointer must not select a put"
    );
    let _ = std::fs::remove_dir_all(dir);
}
