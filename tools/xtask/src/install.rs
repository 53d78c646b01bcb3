//! `cargo xtask install --prefix DIR`: build the launcher and the C library (release) and
//! install what a C or C++ OpenSHMEM user needs under DIR:
//! `bin/{rshmem,oshrun,oshcc,oshc++,oshCC,rshmem-nvcc}`, `lib/libshmem.{so,a}`,
//! `include/{shmem.h,shmemx.h}`, `include/mpp/` (the path older programs include),
//! `include/rshmem/` (the device primitives) and `include/rshmem-cuda-sim/` (the simulator's
//! CUDA headers, in a directory of their own so that a GPU build with `-IPREFIX/include` never
//! takes its `cuda_runtime.h` for CUDA's).
//!
//! The layout is a plan ([`plan`]) applied by [`apply`], so that a test checks the layout on a
//! fake tree without building. The wrapper scripts need no editing when installed: they find
//! `include/` and `lib/` beside their own `bin/` (tools/osh/bin/oshcc). `oshc++` and `oshCC`
//! are symlinks, as in the source tree, since the name picks the language. Each file is
//! removed before it is written, so that reinstalling over a running `rshmem` works (a busy
//! executable cannot be opened for writing, but can be unlinked).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context, bail};

/// `cargo xtask install`'s options.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// The directory to install into (bin/, lib/ and include/ are made under it).
    #[arg(long, value_name = "DIR")]
    prefix: PathBuf,
}

/// One step of an installation.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// Copy `from` to `to` with permissions `mode`.
    Copy {
        from: PathBuf,
        to: PathBuf,
        mode: u32,
    },
    /// Make `to` a symlink to `target` (a name in the same directory).
    Link { to: PathBuf, target: &'static str },
}

/// The installation of the workspace at `root`, whose release build is in `release`, under
/// `prefix`.
pub(crate) fn plan(root: &Path, release: &Path, prefix: &Path) -> Vec<Step> {
    let (bin, lib, include) = (
        prefix.join("bin"),
        prefix.join("lib"),
        prefix.join("include"),
    );
    let osh = root.join("tools/osh/bin");
    let headers = root.join("runtime/capi/include");
    let copy = |from: PathBuf, to: PathBuf, mode| Step::Copy { from, to, mode };
    let mut steps = vec![
        copy(release.join("rshmem"), bin.join("rshmem"), 0o755),
        copy(osh.join("oshrun"), bin.join("oshrun"), 0o755),
        copy(osh.join("oshcc"), bin.join("oshcc"), 0o755),
        copy(osh.join("rshmem-nvcc"), bin.join("rshmem-nvcc"), 0o755),
        Step::Link {
            to: bin.join("oshc++"),
            target: "oshcc",
        },
        Step::Link {
            to: bin.join("oshCC"),
            target: "oshc++",
        },
        copy(release.join("libshmem.so"), lib.join("libshmem.so"), 0o755),
        copy(release.join("libshmem.a"), lib.join("libshmem.a"), 0o644),
        // NVSHMEM's programs link with -lnvshmem: the same library.
        Step::Link {
            to: lib.join("libnvshmem.so"),
            target: "libshmem.so",
        },
        copy(headers.join("shmem.h"), include.join("shmem.h"), 0o644),
        copy(headers.join("shmemx.h"), include.join("shmemx.h"), 0o644),
        copy(headers.join("nvshmem.h"), include.join("nvshmem.h"), 0o644),
        copy(
            headers.join("nvshmemx.h"),
            include.join("nvshmemx.h"),
            0o644,
        ),
        // The <mpp/shmem.h> path of older programs.
        copy(
            headers.join("mpp/shmem.h"),
            include.join("mpp/shmem.h"),
            0o644,
        ),
        copy(
            headers.join("mpp/shmemx.h"),
            include.join("mpp/shmemx.h"),
            0o644,
        ),
        // The race detector's hooks, which `oshcc -rshmem-check` compiles on first use.
        copy(
            root.join("runtime/capi/csrc/check_hooks.c"),
            prefix.join("share/rshmem/check_hooks.c"),
            0o644,
        ),
    ];
    // Header directories, file by file as they are in the tree.
    for (from, to) in [
        (headers.join("rshmem"), include.join("rshmem")),
        (
            root.join("runtime/capi/include-cuda-sim"),
            include.join("rshmem-cuda-sim"),
        ),
    ] {
        for file in files_under(&from) {
            let relative = file.strip_prefix(&from).unwrap_or(&file).to_path_buf();
            steps.push(copy(file, to.join(relative), 0o644));
        }
    }
    steps
}

/// The files under `dir`, recursively, sorted; none when it does not exist.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return files;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(files_under(&path));
        } else {
            files.push(path);
        }
    }
    files.sort();
    files
}

/// Carries out `steps`, checking first that every source exists, so that a missing file
/// installs nothing.
///
/// # Errors
/// A missing source (naming it), or a file that cannot be removed, copied or linked.
pub(crate) fn apply(steps: &[Step]) -> anyhow::Result<()> {
    for step in steps {
        if let Step::Copy { from, .. } = step
            && !from.is_file()
        {
            bail!(
                "{} does not exist: build it with `cargo build --release -p tools -p \
                 rshmem-capi` (or check that runtime/capi/include has the generated headers)",
                from.display()
            );
        }
    }
    for step in steps {
        let to = match step {
            Step::Copy { to, .. } | Step::Link { to, .. } => to,
        };
        if let Some(dir) = to.parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        // `symlink_metadata`: a dangling symlink left by an earlier install is still removed.
        if to.symlink_metadata().is_ok() {
            std::fs::remove_file(to).with_context(|| format!("cannot remove {}", to.display()))?;
        }
        match step {
            Step::Copy { from, to, mode } => {
                std::fs::copy(from, to).with_context(|| {
                    format!("cannot copy {} to {}", from.display(), to.display())
                })?;
                std::fs::set_permissions(to, std::fs::Permissions::from_mode(*mode))
                    .with_context(|| format!("cannot set the mode of {}", to.display()))?;
            }
            Step::Link { to, target } => std::os::unix::fs::symlink(target, to)
                .with_context(|| format!("cannot link {} to {target}", to.display()))?,
        }
    }
    Ok(())
}

/// Builds (release) and installs under `--prefix`.
///
/// # Errors
/// The build fails, or [`apply`] does.
pub(crate) fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let root = root
        .canonicalize()
        .with_context(|| format!("cannot find the workspace at {}", root.display()))?;
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .current_dir(&root)
        .args(["build", "--release", "-p", "tools", "-p", "rshmem-capi"])
        .status()
        .context("cannot run cargo")?;
    if !status.success() {
        bail!("cargo build --release -p tools -p rshmem-capi failed ({status})");
    }
    let release = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| root.join("target"), PathBuf::from)
        .join("release");
    let prefix = std::path::absolute(&args.prefix)
        .with_context(|| format!("cannot resolve --prefix {}", args.prefix.display()))?;
    apply(&plan(&root, &release, &prefix))?;
    eprintln!(
        "installed under {}: put {} on PATH, then `oshcc prog.c -o prog && oshrun -np 2 ./prog`",
        prefix.display(),
        prefix.join("bin").display()
    );
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scratch directory of this test alone.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("xtask-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn the_plan_installs_the_agreed_layout() {
        let steps = plan(
            Path::new("/src"),
            Path::new("/src/target/release"),
            Path::new("/p"),
        );
        let mut installed: Vec<String> = steps
            .iter()
            .map(|s| match s {
                Step::Copy { to, .. } | Step::Link { to, .. } => to.display().to_string(),
            })
            .collect();
        installed.sort();
        assert_eq!(
            installed,
            [
                "/p/bin/oshCC",
                "/p/bin/oshc++",
                "/p/bin/oshcc",
                "/p/bin/oshrun",
                "/p/bin/rshmem",
                "/p/bin/rshmem-nvcc",
                "/p/include/mpp/shmem.h",
                "/p/include/mpp/shmemx.h",
                "/p/include/nvshmem.h",
                "/p/include/nvshmemx.h",
                "/p/include/shmem.h",
                "/p/include/shmemx.h",
                "/p/lib/libnvshmem.so",
                "/p/lib/libshmem.a",
                "/p/lib/libshmem.so",
                "/p/share/rshmem/check_hooks.c",
            ]
        );
        assert!(steps.contains(&Step::Copy {
            from: PathBuf::from("/src/target/release/libshmem.so"),
            to: PathBuf::from("/p/lib/libshmem.so"),
            mode: 0o755
        }));
    }

    #[test]
    fn an_installed_oshcc_finds_the_prefix_and_a_missing_file_installs_nothing() {
        let root = scratch("root");
        let release = root.join("target/release");
        let headers = root.join("runtime/capi/include");
        let osh = root.join("tools/osh/bin");
        for dir in [&release, &headers, &osh] {
            std::fs::create_dir_all(dir).unwrap();
        }
        let prefix = scratch("prefix");
        let steps = plan(&root, &release, &prefix);
        let err = apply(&steps).unwrap_err().to_string();
        assert!(err.contains("rshmem does not exist"), "{err}");
        assert!(!prefix.join("bin").exists(), "nothing installed");

        // The real scripts, fake binaries and headers.
        let real_osh = Path::new(env!("CARGO_MANIFEST_DIR")).join("../osh/bin");
        for script in ["oshcc", "oshrun", "rshmem-nvcc"] {
            std::fs::copy(real_osh.join(script), osh.join(script)).unwrap();
        }
        for file in ["rshmem", "libshmem.so", "libshmem.a"] {
            std::fs::write(release.join(file), b"fake").unwrap();
        }
        std::fs::create_dir_all(headers.join("mpp")).unwrap();
        for file in [
            "shmem.h",
            "shmemx.h",
            "nvshmem.h",
            "nvshmemx.h",
            "mpp/shmem.h",
            "mpp/shmemx.h",
        ] {
            std::fs::write(headers.join(file), b"/* fake */").unwrap();
        }
        let csrc = root.join("runtime/capi/csrc");
        std::fs::create_dir_all(&csrc).unwrap();
        std::fs::write(csrc.join("check_hooks.c"), b"/* fake */").unwrap();
        apply(&steps).unwrap();
        // Twice: reinstalling over an installation works.
        apply(&steps).unwrap();
        let out = Command::new(prefix.join("bin/oshCC"))
            .args(["-showme", "x.cc"])
            .env_remove("RSHMEM_CXX")
            .output()
            .unwrap();
        let line = String::from_utf8_lossy(&out.stdout).into_owned();
        let prefix_text = prefix.canonicalize().unwrap().display().to_string();
        assert!(
            line.starts_with(&format!("c++ -I{prefix_text}/include x.cc")),
            "{line}"
        );
        assert!(
            line.contains(&format!("-Wl,-rpath,{prefix_text}/lib")),
            "{line}"
        );
        let mode = std::fs::metadata(prefix.join("bin/oshrun"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o755);
        let _ = std::fs::remove_dir_all(&root);
        let _ = std::fs::remove_dir_all(&prefix);
    }
}
