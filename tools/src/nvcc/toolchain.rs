//! Where rshmem-nvcc's pieces are (clang 14, binutils, the sim's headers, libshmem) and how it
//! runs them.
//!
//! The layout is found from the `rshmem` binary itself: installed, `PREFIX/bin/rshmem` has the
//! headers in `PREFIX/include/rshmem-cuda-sim` and `PREFIX/include` and the library in
//! `PREFIX/lib`; in the build tree, the headers are in `runtime/capi/include-cuda-sim` and
//! `runtime/capi/include` and the library beside the binary (`target/release`). The sim's
//! `cuda_runtime.h` is installed in its own directory so that a GPU build using the prefix's
//! `nvshmem.h` never picks it up instead of CUDA's.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

/// The clang release rshmem-nvcc is written for: the IR rewrite reads its textual IR.
const CLANG: &str = "clang-14";
const CLANGXX: &str = "clang++-14";

/// The tools and directories of one build.
#[derive(Clone, Debug)]
pub(crate) struct Toolchain {
    /// The sim's CUDA headers, then libshmem's.
    pub(crate) include_dirs: Vec<PathBuf>,
    /// libshmem's directory.
    pub(crate) lib_dir: PathBuf,
    /// The race detector's hooks (check_hooks.c), compiled for `-rshmem-check` links.
    pub(crate) check_hooks: PathBuf,
    pub(crate) clang: String,
    pub(crate) clangxx: String,
    /// Print commands before running them.
    pub(crate) verbose: bool,
}

impl Toolchain {
    /// Finds the layout from the running binary and checks that clang 14 is installed.
    ///
    /// # Errors
    /// clang-14 missing (naming the package), or headers not found.
    pub(crate) fn find(verbose: bool) -> anyhow::Result<Toolchain> {
        let exe = std::env::current_exe().context("cannot find the rshmem binary's path")?;
        let bin = exe.parent().unwrap_or(Path::new("."));
        let prefix = bin.join("..");
        let toolchain = if prefix
            .join("include/rshmem-cuda-sim/cuda_runtime.h")
            .is_file()
        {
            Toolchain::at(
                vec![
                    prefix.join("include/rshmem-cuda-sim"),
                    prefix.join("include"),
                ],
                prefix.join("lib"),
                prefix.join("share/rshmem/check_hooks.c"),
                verbose,
            )
        } else {
            let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
            let capi = root.join("runtime/capi");
            Toolchain::at(
                vec![capi.join("include-cuda-sim"), capi.join("include")],
                bin.to_path_buf(),
                capi.join("csrc/check_hooks.c"),
                verbose,
            )
        };
        if !toolchain.include_dirs[0].join("cuda_runtime.h").is_file() {
            bail!(
                "the simulator's CUDA headers are not in {}: is this checkout or install \
                 complete? (reinstall with cargo xtask install --prefix DIR)",
                toolchain.include_dirs[0].display()
            );
        }
        if !installed(CLANGXX) {
            bail!(
                "{CLANGXX} is not installed: rshmem-nvcc compiles CUDA with clang 14's CUDA front end (apt-get install clang-14 llvm-14)"
            );
        }
        Ok(toolchain)
    }

    fn at(
        include_dirs: Vec<PathBuf>,
        lib_dir: PathBuf,
        check_hooks: PathBuf,
        verbose: bool,
    ) -> Toolchain {
        Toolchain {
            include_dirs,
            lib_dir,
            check_hooks,
            clang: CLANG.into(),
            clangxx: CLANGXX.into(),
            verbose,
        }
    }

    /// Runs `program args`, failing with its standard error when it fails.
    ///
    /// # Errors
    /// The program cannot start or exits non-zero; the error holds what it printed.
    pub(crate) fn run(&self, program: &str, args: &[String]) -> anyhow::Result<Vec<u8>> {
        if self.verbose {
            eprintln!("rshmem-nvcc: {program} {}", args.join(" "));
        }
        let output = Command::new(program).args(args).output().with_context(|| {
            format!("cannot run {program}: is it installed (clang-14, llvm-14, binutils)?")
        })?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            bail!("{}{program} failed ({})", stderr, output.status);
        }
        // Warnings go on to the user as the compiler printed them.
        if !output.stderr.is_empty() {
            eprint!("{}", String::from_utf8_lossy(&output.stderr));
        }
        Ok(output.stdout)
    }
}

/// Whether `program` is on PATH.
pub(crate) fn installed(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

/// A scratch directory for one run's intermediate files, removed when dropped.
#[derive(Debug)]
pub(crate) struct Scratch {
    pub(crate) dir: PathBuf,
}

impl Scratch {
    /// Makes a fresh directory under the system's temporary directory.
    ///
    /// # Errors
    /// It cannot be created.
    pub(crate) fn new() -> anyhow::Result<Scratch> {
        use std::sync::atomic::{AtomicU32, Ordering};
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "rshmem-nvcc-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        Ok(Scratch { dir })
    }

    /// A path in the directory.
    pub(crate) fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
