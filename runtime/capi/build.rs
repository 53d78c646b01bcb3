//! Compiles the C API's `long double` arithmetic (`csrc/long_double.c`), which Rust cannot
//! express, into the library, puts `libnvshmem.so` beside `libshmem.so` in the profile's
//! output folder (a link to it, for NVSHMEM's programs that link with `-lnvshmem`), and builds
//! the simulator's MPI shim, which the library embeds (`build_mpi_shim.rs`).

#[path = "build_mpi_shim.rs"]
mod mpi_shim;

fn main() {
    println!("cargo::rerun-if-changed=csrc/long_double.c");
    cc::Build::new()
        .file("csrc/long_double.c")
        .warnings(true)
        .compile("rshmem_capi_long_double");
    link_nvshmem();
    mpi_shim::build();
}

/// `libnvshmem.so -> libshmem.so` in the output folder (`target/<profile>`, three levels above
/// `OUT_DIR`). Cargo has no output for a second library name, so the link is made here; a
/// failure only warns, as `cargo xtask install` makes the same link.
fn link_nvshmem() {
    let Some(out) = std::env::var_os("OUT_DIR") else {
        return;
    };
    let Some(profile_dir) = std::path::Path::new(&out).ancestors().nth(3) else {
        return;
    };
    let link = profile_dir.join("libnvshmem.so");
    if link.symlink_metadata().is_ok() {
        return;
    }
    #[cfg(unix)]
    if let Err(e) = std::os::unix::fs::symlink("libshmem.so", &link) {
        println!("cargo::warning=cannot link {}: {e}", link.display());
    }
}
