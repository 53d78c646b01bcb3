//! The OpenSHMEM tools as a user runs them: `oshcc`/`oshc++`/`oshCC` (scripts in
//! tools/osh/bin, checked through `-showme`, which needs no library) and `rshmem oshrun` (what
//! the `oshrun` script execs).
//!
//! The autoconf-style probe (compile a program that includes shmem.h with `oshcc`, run it with
//! `oshrun -np 2`) runs when the C library has been built (`cargo build --release -p
//! rshmem-capi`) and says that it skipped otherwise: this crate does not build the library.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn osh(tool: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("osh/bin")
        .join(tool)
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `tool args` with `RSHMEM_CC`/`RSHMEM_CXX` unset, and its standard output.
fn show(tool: &str, args: &[&str]) -> String {
    let out = Command::new(osh(tool))
        .args(args)
        .env_remove("RSHMEM_CC")
        .env_remove("RSHMEM_CXX")
        .output()
        .expect("the script runs");
    assert!(
        out.status.success(),
        "{tool} {args:?}: {}",
        text(&out.stderr)
    );
    text(&out.stdout).trim().to_string()
}

#[test]
fn the_wrappers_add_the_headers_and_when_linking_the_library_with_an_rpath() {
    let linked = show("oshcc", &["-showme", "prog.c", "-o", "prog"]);
    let words: Vec<&str> = linked.split(' ').collect();
    assert_eq!(words[0], "cc", "{linked}");
    assert!(words[1].starts_with("-I") && words[1].ends_with("runtime/capi/include"));
    assert_eq!(&words[2..5], ["prog.c", "-o", "prog"], "{linked}");
    assert!(words.contains(&"-lshmem"), "{linked}");
    assert!(
        words
            .iter()
            .any(|w| w.starts_with("-Wl,-rpath,") && w.ends_with("target/release")),
        "{linked}"
    );
    for compile_only in ["-c", "-E", "-S", "-M", "-MM"] {
        let line = show("oshcc", &["--showme", compile_only, "prog.c"]);
        assert!(!line.contains("-lshmem"), "{compile_only}: {line}");
    }
    assert!(show("oshc++", &["-show", "a.cc"]).starts_with("c++ -I"));
    assert!(show("oshCC", &["-showme:command"]) == "c++");
    assert!(show("oshcc", &["-showme:compile"]).starts_with("-I"));
    assert!(show("oshcc", &["-showme:link"]).contains("-lshmem -Wl,-rpath,"));
    assert_eq!(show("oshcc", &["-showme:libs"]), "shmem pthread dl m");
}

#[test]
fn the_compiler_can_be_chosen_and_a_missing_one_is_named() {
    let out = Command::new(osh("oshcc"))
        .args(["-showme:command"])
        .env("RSHMEM_CC", "ccache gcc")
        .output()
        .unwrap();
    assert_eq!(text(&out.stdout).trim(), "ccache gcc");
    let out = Command::new(osh("oshc++"))
        .args(["-c", "x.cc"])
        .env("RSHMEM_CXX", "no-such-compiler-rshmem")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("oshc++: the C++ compiler 'no-such-compiler-rshmem' is not in PATH")
            && err.contains("RSHMEM_CXX"),
        "{err}"
    );
    let out = Command::new(osh("oshcc"))
        .arg("-showme:nonsense")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("-showme:compile"));
}

fn oshrun(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rshmem"))
        .arg("oshrun")
        .args(args)
        .output()
        .expect("the binary runs")
}

#[test]
fn oshrun_takes_open_mpis_command_line() {
    let out = oshrun(&[
        "--allow-run-as-root",
        "--oversubscribe",
        "-mca",
        "osc",
        "^rdma",
        "-x",
        "OSH_TEST=yes",
        "-np",
        "3",
        "/bin/sh",
        "-c",
        r##"test "$OSH_TEST" = yes && test "$RSHMEM_N_RANKS" = 3 && echo "$1""##,
        "sh",
        "-np",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "-np\n-np\n-np\n");
    let out = oshrun(&["--help"]);
    assert!(out.status.success());
    assert!(text(&out.stdout).contains("Usage: oshrun -np N"));
    let out = oshrun(&["--frobnicate", "-np", "2", "/bin/true"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("unknown option --frobnicate"));
}

#[test]
fn oshrun_fails_when_a_pe_fails_and_ends_the_others() {
    let start = Instant::now();
    let out = oshrun(&[
        "-n",
        "2",
        "/bin/sh",
        "-c",
        r#"if [ "$RSHMEM_RANK" = 0 ]; then exit 9; fi; exec sleep 30"#,
    ]);
    assert_eq!(out.status.code(), Some(9), "{}", text(&out.stderr));
    assert!(start.elapsed() < Duration::from_secs(10));
    assert!(text(&out.stderr).contains("rank 0 exited with status 9"));
}

/// `name.c` of `source` in `dir`, built with `oshcc` into `dir/name`.
fn oshcc(dir: &Path, name: &str, source: &str) -> PathBuf {
    let file = dir.join(format!("{name}.c"));
    std::fs::write(&file, source).unwrap();
    let program = dir.join(name);
    let out = Command::new(osh("oshcc"))
        .arg(&file)
        .arg("-o")
        .arg(&program)
        .output()
        .unwrap();
    assert!(out.status.success(), "oshcc: {}", text(&out.stderr));
    program
}

#[test]
fn the_autoconf_probe_compiles_and_runs_when_the_library_is_built() {
    let root = workspace();
    let built = root.join("target/release/libshmem.so").exists()
        && root.join("runtime/capi/include/shmem.h").exists();
    if !built {
        eprintln!("skipped: build the C library first (cargo build --release -p rshmem-capi)");
        return;
    }
    let dir = std::env::temp_dir().join(format!("rshmem-osh-probe-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let program = oshcc(
        &dir,
        "conftest",
        "#include <shmem.h>\nlong data;\nint main(void) { shmem_init(); \
         shmem_long_p(&data, 0, 0); shmem_finalize(); return 0; }\n",
    );
    let out = oshrun(&["-np", "2", program.to_str().unwrap()]);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success(), "oshrun: {}", text(&out.stderr));
}

/// A program whose PE 0 waits for a word that nobody sets while PE 1 waits in a barrier for
/// PE 0: built with `oshcc`, or `None` (said) when the C library is not built.
fn build_stuck_program(dir: &Path) -> Option<PathBuf> {
    if !workspace().join("target/release/libshmem.so").exists() {
        eprintln!("skipped: build the C library first (cargo build --release -p rshmem-capi)");
        return None;
    }
    std::fs::create_dir_all(dir).unwrap();
    let program = oshcc(
        dir,
        "stuck",
        r#"#include <shmem.h>
#include <stdio.h>

int main(void) {
    shmem_init();
    long *scratch = shmem_malloc(64);
    long *go = shmem_calloc(2, sizeof(long));
    shmem_barrier_all();
    if (shmem_my_pe() == 0) {
        /* The PE that should set it was never written: this waits forever. */
        shmem_long_wait_until(&go[1], SHMEM_CMP_EQ, 1);
    }
    shmem_barrier_all();
    printf("PE %d done\n", shmem_my_pe());
    shmem_free(go);
    shmem_free(scratch);
    shmem_finalize();
    return 0;
}
"#,
    );
    Some(program)
}

#[test]
fn the_launcher_s_timeout_says_which_call_each_rank_was_in() {
    let dir = std::env::temp_dir().join(format!("rshmem-osh-stuck-{}", std::process::id()));
    let Some(program) = build_stuck_program(&dir) else {
        return;
    };
    let out = oshrun(&["-np", "2", "--timeout-s", "3", program.to_str().unwrap()]);
    let says = text(&out.stderr);
    assert!(!out.status.success(), "{says}");
    for line in [
        "rank 0 was killed by the launcher: --timeout-s 3 passed; past start-up, it was in \
         shmem_long_wait_until (call ",
        "rank 1 was killed by the launcher: --timeout-s 3 passed; past start-up, it was in \
         shmem_barrier_all (call ",
    ] {
        assert!(says.contains(line), "does not say {line:?}:\n{says}");
    }
    assert!(!says.contains("to connect or to join"), "{says}");

    // With a wait timeout, the PEs name their waits in the program's terms.
    let out = oshrun(&[
        "-np",
        "2",
        "--timeout-s",
        "30",
        "-x",
        "RSHMEM_WAIT_TIMEOUT_MS=1000",
        program.to_str().unwrap(),
    ]);
    let _ = std::fs::remove_dir_all(&dir);
    let says = text(&out.stderr);
    assert!(!out.status.success(), "{says}");
    assert!(
        says.contains("shmem_calloc'ed object #2 (16 bytes) + 8 to become == 1 (it holds 0)")
            || says.contains("TEAM_WORLD's barrier counter of round 0 (PE 0 adds to it)"),
        "{says}"
    );
    assert!(!says.contains("word at offset"), "{says}");
}
