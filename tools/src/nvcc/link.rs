//! Linking a program for the simulator: a position-independent executable (the simulator's
//! host loads one copy per PE from a memfd, docs/c-api.md) linked with libshmem, which holds
//! the CUDA emulation, and an rpath to it, as `oshcc` links.
//!
//! `-rshmem-check` links the race detector's hooks first (LIBDIR/rshmem-check/libtsan.so,
//! compiled from check_hooks.c on first use, as `oshcc -rshmem-check` does), so the host
//! program's `__tsan_*` calls reach them; the device code's hooks were renamed to the
//! emulator's `__rsim_tsan_*` when it was compiled.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use super::args::Options;
use super::toolchain::Toolchain;

/// Builds LIBDIR/rshmem-check/libtsan.so from the hooks when it is missing or older.
fn check_hooks(tc: &Toolchain) -> anyhow::Result<PathBuf> {
    let dir = tc.lib_dir.join("rshmem-check");
    let library = dir.join("libtsan.so");
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    if modified(&library).is_none() || modified(&library) < modified(&tc.check_hooks) {
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        tc.run(
            &tc.clang,
            &[
                "-O2".into(),
                "-fPIC".into(),
                "-shared".into(),
                tc.check_hooks.display().to_string(),
                "-o".into(),
                library.display().to_string(),
                format!("-L{}", tc.lib_dir.display()),
                "-lshmem".into(),
            ],
        )
        .context("cannot build the race detector's hooks for -rshmem-check")?;
    }
    Ok(dir)
}

/// Links `objects` into the program `output`.
///
/// # Errors
/// libshmem is not built, or the linker fails (its message, with a hint when libshmem lacks
/// the CUDA emulation).
pub(crate) fn link(
    tc: &Toolchain,
    o: &Options,
    objects: &[PathBuf],
    output: &Path,
) -> anyhow::Result<()> {
    let lib = &tc.lib_dir;
    if !lib.join("libshmem.so").is_file() && !lib.join("libshmem.a").is_file() {
        bail!(
            "libshmem is not built (no libshmem.so in {}): cargo build --release -p rshmem-capi",
            lib.display()
        );
    }
    let mut args: Vec<String> = vec!["-fPIE".into(), "-pie".into()];
    args.extend(objects.iter().map(|p| p.display().to_string()));
    args.extend(o.host_flags.iter().cloned());
    args.extend(o.link_flags.iter().cloned());
    if o.check {
        let dir = check_hooks(tc)?;
        args.extend([
            format!("-L{}", dir.display()),
            format!("-Wl,-rpath,{}", dir.display()),
            "-ltsan".into(),
        ]);
    }
    args.extend([
        format!("-L{}", lib.display()),
        "-lshmem".into(),
        format!("-Wl,-rpath,{}", lib.display()),
        "-lstdc++".into(),
        "-lm".into(),
        "-lpthread".into(),
        "-ldl".into(),
        "-o".into(),
        output.display().to_string(),
    ]);
    tc.run(&tc.clangxx, &args).map(drop).map_err(|err| {
        if err.to_string().contains("undefined reference to `__rsim_") {
            err.context(format!(
                "libshmem in {} has no CUDA emulation (the __rsim_ functions): rebuild it from a \
                 checkout that has runtime/capi/src/cuda_sim (cargo build --release -p rshmem-capi)",
                lib.display()
            ))
        } else {
            err
        }
    })
}
