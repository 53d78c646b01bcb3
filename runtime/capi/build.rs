//! Compiles the C parts of the library into it: the `long double` arithmetic
//! (`csrc/long_double.c`), which Rust cannot express, and the entry points of programs
//! compiled for the race detector (`csrc/check_hooks.c`), whose atomics C states directly.

fn main() {
    for file in ["csrc/long_double.c", "csrc/check_hooks.c"] {
        println!("cargo::rerun-if-changed={file}");
    }
    cc::Build::new()
        .file("csrc/long_double.c")
        .file("csrc/check_hooks.c")
        .warnings(true)
        .compile("rshmem_capi_c");
}
