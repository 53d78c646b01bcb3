//! A one-host Slurm for the tests that run programs under `srun`: the one `SLURM_CONF` names,
//! or one that `slurm-one-host.sh` (next to this file) starts as root and stops when dropped.
//! Test binaries include this file by path (`tools/tests/foreign_launchers.rs`,
//! `tests/conformance/tests/process.rs`), so that both start and skip Slurm alike.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Whether `tool` is on the `PATH`.
pub fn found(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|out| out.status.success())
}

/// A running one-host Slurm; the daemons listen on fixed ports, so a test binary holds one
/// at a time.
pub struct Slurm {
    conf: PathBuf,
    started: Option<PathBuf>,
}

/// `slurm-one-host.sh`, found from this file's directory in the workspace.
fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|dir| dir.join("tools/launch/slurm-one-host.sh"))
        .find(|script| script.exists())
        .expect("tools/launch/slurm-one-host.sh in the workspace")
}

impl Slurm {
    /// The Slurm of `SLURM_CONF`, or one started here; `None`, said on stderr, where Slurm's
    /// tools are missing or this process is not root.
    ///
    /// # Panics
    /// If the script fails to start the daemons, with its output.
    pub fn get() -> Option<Slurm> {
        if let Some(conf) = std::env::var_os("SLURM_CONF") {
            return Some(Slurm {
                conf: PathBuf::from(conf),
                started: None,
            });
        }
        let tools = ["srun", "slurmctld", "slurmd", "munged"];
        if let Some(missing) = tools.iter().find(|tool| !found(tool)) {
            eprintln!(
                "skipped: {missing} is missing (apt-get install -y slurmctld slurmd \
                 slurm-client munge)"
            );
            return None;
        }
        let root = Command::new("id").arg("-u").output().ok()?;
        if String::from_utf8_lossy(&root.stdout).trim() != "0" {
            eprintln!(
                "skipped: a one-host Slurm needs root (or export SLURM_CONF of a running one)"
            );
            return None;
        }
        let dir = std::env::temp_dir().join(format!("rshmem-slurm-{}", std::process::id()));
        let out = Command::new(script())
            .arg("start")
            .env("RSHMEM_SLURM_DIR", &dir)
            .output()
            .expect("slurm-one-host.sh runs");
        assert!(
            out.status.success(),
            "slurm-one-host.sh start: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        Some(Slurm {
            conf: dir.join("slurm.conf"),
            started: Some(dir),
        })
    }

    /// The configuration to export as `SLURM_CONF` for `srun`.
    pub fn conf(&self) -> &Path {
        &self.conf
    }
}

impl Drop for Slurm {
    fn drop(&mut self) {
        if let Some(dir) = &self.started {
            let _ = Command::new(script())
                .arg("stop")
                .env("RSHMEM_SLURM_DIR", dir)
                .output();
        }
    }
}
