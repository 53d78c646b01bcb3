//! CUDA MPS for ranks that share a GPU (`--gpu --share-gpus` with more ranks than GPUs).
//!
//! Without MPS the GPU time-slices the contexts of processes: one rank's kernels run while the
//! others' wait for their turn, so ranks that share a GPU never run side by side, and a kernel
//! that waits for a peer's kernel waits out whole time slices.
//! Under MPS the ranks' kernels share the GPU's SMs at once.
//! So the launcher starts a private MPS control daemon for the run (its pipe and log folders in
//! the run's directory) when `nvidia-cuda-mps-control` is on `PATH` and no daemon is in use
//! already, hands its folders to the ranks, and quits it when the run ends.
//! `RSHMEM_MPS=0` keeps it off; a daemon the user started (`CUDA_MPS_PIPE_DIRECTORY` set, or
//! one listening in `/tmp/nvidia-mps`) is used as it is.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The variable that turns the launcher's MPS daemon off (`0`).
pub(crate) const MPS_VAR: &str = "RSHMEM_MPS";
/// The control program of CUDA MPS.
const CONTROL: &str = "nvidia-cuda-mps-control";
/// Where a daemon started with the defaults listens.
const DEFAULT_PIPE_DIR: &str = "/tmp/nvidia-mps";

/// A daemon this launcher started; quit when dropped.
#[derive(Debug)]
pub(crate) struct MpsDaemon {
    pipe_dir: PathBuf,
    log_dir: PathBuf,
}

/// What the launcher decided about MPS, and why.
#[derive(Debug)]
pub(crate) enum Mps {
    /// It started a daemon of its own for the run.
    Started(MpsDaemon),
    /// No rank shares a GPU (or the driver lists none): nothing to do.
    NotShared,
    /// Ranks share GPUs without MPS; the reason, for the user.
    Without(String),
}

impl MpsDaemon {
    /// The variables every rank needs to reach this daemon.
    pub(crate) fn env(&self) -> [(&'static str, &Path); 2] {
        [
            ("CUDA_MPS_PIPE_DIRECTORY", &self.pipe_dir),
            ("CUDA_MPS_LOG_DIRECTORY", &self.log_dir),
        ]
    }
}

impl Drop for MpsDaemon {
    fn drop(&mut self) {
        let quit = Command::new(CONTROL)
            .envs(self.env())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .and_then(|mut child| {
                if let Some(mut stdin) = child.stdin.take() {
                    stdin.write_all(b"quit\n")?;
                }
                child.wait()
            });
        if let Err(e) = quit {
            eprintln!(
                "rshmem run: cannot stop the MPS daemon of this run ({CONTROL} quit: {e}); \
                 stop it with `echo quit | CUDA_MPS_PIPE_DIRECTORY={} {CONTROL}`",
                self.pipe_dir.display()
            );
        }
    }
}

/// How many GPUs the ranks can see: `CUDA_VISIBLE_DEVICES`'s entries when it is set, else the
/// driver's list (`/proc/driver/nvidia/gpus`); 0 when neither says.
fn visible_gpus() -> usize {
    if let Ok(list) = std::env::var("CUDA_VISIBLE_DEVICES") {
        return list
            .split(',')
            .filter(|entry| !entry.trim().is_empty())
            .count();
    }
    std::fs::read_dir("/proc/driver/nvidia/gpus").map_or(0, |entries| entries.count())
}

/// What the environment says about MPS for a run of `n_ranks` ranks on `gpus` GPUs.
struct Setting {
    gpus: usize,
    turned_off: bool,
    daemon_running: bool,
    control_on_path: bool,
}

impl Setting {
    fn of_this_machine() -> Setting {
        Setting {
            gpus: visible_gpus(),
            turned_off: std::env::var(MPS_VAR).is_ok_and(|v| v == "0"),
            daemon_running: std::env::var_os("CUDA_MPS_PIPE_DIRECTORY").is_some()
                || Path::new(DEFAULT_PIPE_DIR).join("control").exists(),
            control_on_path: super::resolve(CONTROL).is_ok(),
        }
    }

    /// `Ok` when the launcher should start a daemon; else what to do instead.
    fn decide(&self, n_ranks: u32) -> Result<(), Mps> {
        if self.gpus == 0 || n_ranks as usize <= self.gpus {
            return Err(Mps::NotShared);
        }
        if self.turned_off {
            return Err(Mps::Without(format!("{MPS_VAR}=0")));
        }
        if self.daemon_running {
            return Err(Mps::Without(
                "an MPS daemon is running already; the ranks use it".to_string(),
            ));
        }
        if !self.control_on_path {
            return Err(Mps::Without(format!(
                "no {CONTROL} on PATH, so the GPU time-slices the ranks that share it"
            )));
        }
        Ok(())
    }
}

/// Starts a daemon in `run_dir` if `n_ranks` ranks share the visible GPUs and MPS is
/// available and not in use already.
pub(crate) fn for_shared_gpus(n_ranks: u32, run_dir: &Path) -> Mps {
    if let Err(instead) = Setting::of_this_machine().decide(n_ranks) {
        return instead;
    }
    let pipe_dir = run_dir.join("mps-pipe");
    let log_dir = run_dir.join("mps-log");
    for dir in [&pipe_dir, &log_dir] {
        if let Err(e) = std::fs::create_dir_all(dir) {
            return Mps::Without(format!("cannot make {}: {e}", dir.display()));
        }
    }
    let started = Command::new(CONTROL)
        .arg("-d")
        .env("CUDA_MPS_PIPE_DIRECTORY", &pipe_dir)
        .env("CUDA_MPS_LOG_DIRECTORY", &log_dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output();
    match started {
        Ok(output) if output.status.success() => Mps::Started(MpsDaemon { pipe_dir, log_dir }),
        Ok(output) => Mps::Without(format!(
            "{CONTROL} -d failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        )),
        Err(e) => Mps::Without(format!("cannot run {CONTROL} -d: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setting() -> Setting {
        Setting {
            gpus: 1,
            turned_off: false,
            daemon_running: false,
            control_on_path: true,
        }
    }

    #[test]
    fn starts_only_when_ranks_share_a_gpu() {
        assert!(setting().decide(2).is_ok());
        assert!(matches!(setting().decide(1), Err(Mps::NotShared)));
        let none = Setting {
            gpus: 0,
            ..setting()
        };
        assert!(matches!(none.decide(4), Err(Mps::NotShared)));
    }

    #[test]
    fn says_why_it_does_not_start() {
        let why = |s: Setting| match s.decide(4) {
            Err(Mps::Without(why)) => why,
            other => panic!("expected a reason, got {other:?}"),
        };
        let off = Setting {
            turned_off: true,
            ..setting()
        };
        assert!(why(off).contains("RSHMEM_MPS=0"));
        let running = Setting {
            daemon_running: true,
            ..setting()
        };
        assert!(why(running).contains("running already"));
        let missing = Setting {
            control_on_path: false,
            ..setting()
        };
        assert!(why(missing).contains("nvidia-cuda-mps-control"));
    }
}
