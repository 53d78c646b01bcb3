//! Compiles the C API's `long double` arithmetic (`csrc/long_double.c`), which Rust cannot
//! express, into the library.

fn main() {
    println!("cargo::rerun-if-changed=csrc/long_double.c");
    cc::Build::new()
        .file("csrc/long_double.c")
        .warnings(true)
        .compile("rshmem_capi_long_double");
}
