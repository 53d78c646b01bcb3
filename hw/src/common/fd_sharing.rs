//! Sharing memory between the processes of a multi-process run (`rshmem run -n`) as file
//! descriptors, for every backend that runs one PE per process (CUDA, process).
//!
//! A segment made for sharing is a file descriptor in its owner (a CUDA export, a memfd). Its
//! key ([`SharedMemory`]) carries the owner's process id, the descriptor's number and the
//! mapped size. An importer copies the descriptor out of the owner with `pidfd_getfd`
//! (Linux 5.6) and maps it at an address of its own. Taking a descriptor this way needs ptrace
//! permission over the owner; under Yama's default policy only a parent has it, so every
//! process of a run first allows it with `prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY)`
//! ([`allow_peers_to_take_fds`]). This keeps the bootstrap to plain bytes: no descriptor
//! passing over the launcher's socket.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// What an importer needs to map an exported allocation: where to take the descriptor from,
/// and how much to map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SharedMemory {
    pub(crate) pid: u32,
    pub(crate) fd: i32,
    pub(crate) size: u64,
}

/// The bytes of a [`SharedMemory`].
pub(crate) const SHARED_MEMORY_BYTES: usize = 16;

impl SharedMemory {
    /// The descriptor `fd` of this process, for `size` bytes.
    pub(crate) fn of(fd: &OwnedFd, size: usize) -> SharedMemory {
        SharedMemory {
            pid: std::process::id(),
            fd: fd.as_raw_fd(),
            size: size as u64,
        }
    }

    /// Whether the memory is this process's own.
    #[cfg(feature = "cuda")]
    pub(crate) fn is_local(&self) -> bool {
        self.pid == std::process::id()
    }

    /// The key's bytes: pid, descriptor and size, little-endian.
    pub(crate) fn to_bytes(self) -> Vec<u8> {
        let mut bytes = self.pid.to_le_bytes().to_vec();
        bytes.extend_from_slice(&self.fd.to_le_bytes());
        bytes.extend_from_slice(&self.size.to_le_bytes());
        bytes
    }

    /// The key [`SharedMemory::to_bytes`] wrote; `None` for any other length.
    pub(crate) fn from_bytes(bytes: &[u8]) -> Option<SharedMemory> {
        let bytes: &[u8; SHARED_MEMORY_BYTES] = bytes.try_into().ok()?;
        let (pid, rest) = bytes.split_first_chunk::<4>()?;
        let (fd, size) = rest.split_first_chunk::<4>()?;
        Some(SharedMemory {
            pid: u32::from_le_bytes(*pid),
            fd: i32::from_le_bytes(*fd),
            size: u64::from_le_bytes(size.try_into().ok()?),
        })
    }
}

/// Lets the run's other processes take descriptors from this one (see the module docs).
///
/// # Errors
/// What `prctl` said, unless it says Yama is not there (then nothing needs allowing).
pub(crate) fn allow_peers_to_take_fds() -> io::Result<()> {
    // SAFETY: PR_SET_PTRACER takes an integer argument; no memory is passed.
    let done = unsafe { libc::prctl(libc::PR_SET_PTRACER, libc::PR_SET_PTRACER_ANY, 0, 0, 0) };
    if done == 0 {
        return Ok(());
    }
    let error = io::Error::last_os_error();
    if error.raw_os_error() == Some(libc::EINVAL) {
        // No Yama: ptrace permission follows the usual same-user rule.
        return Ok(());
    }
    Err(error)
}

/// A copy of descriptor `fd` of process `pid`.
fn take_fd(pid: u32, fd: i32) -> io::Result<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
    if pidfd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the kernel just opened `pidfd` for us.
    let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd as i32) };
    // SAFETY: pidfd_getfd takes a pidfd, a descriptor number and flags, and returns a new
    // descriptor or -1.
    let taken = unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), fd, 0) };
    if taken < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the kernel just opened `taken` for us.
    Ok(unsafe { OwnedFd::from_raw_fd(taken as i32) })
}

/// A descriptor of another process's exported memory, in this process, and its size.
///
/// # Errors
/// Taking the descriptor failed (the owner exited, or ptrace permission is missing), as text
/// that names the fix.
pub(crate) fn take_shared(shared: &SharedMemory) -> Result<(OwnedFd, usize), String> {
    let fd = take_fd(shared.pid, shared.fd).map_err(|e| {
        format!(
            "cannot take descriptor {} of process {} ({e}); the process may have exited, or \
             ptrace permission is missing (a seccomp or Yama policy that forbids \
             pidfd_getfd between the run's processes)",
            shared.fd, shared.pid
        )
    })?;
    let size = usize::try_from(shared.size).map_err(|_| "the size does not fit".to_string())?;
    Ok((fd, size))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_memory_round_trips_through_bytes() {
        let shared = SharedMemory {
            pid: 4242,
            fd: 17,
            size: 2 << 20,
        };
        assert_eq!(SharedMemory::from_bytes(&shared.to_bytes()), Some(shared));
        assert_eq!(SharedMemory::from_bytes(&shared.to_bytes()[1..]), None);
    }

    #[test]
    fn a_descriptor_of_this_process_can_be_taken() {
        let file = std::fs::File::open("/proc/self/stat").expect("a file to open");
        let fd = OwnedFd::from(file);
        allow_peers_to_take_fds().expect("prctl");
        match take_fd(std::process::id(), fd.as_raw_fd()) {
            Ok(copy) => assert_ne!(copy.as_raw_fd(), fd.as_raw_fd()),
            // Kernels before 5.6 lack the call: say so. Anything else is a failure.
            Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => {
                eprintln!("skipped: pidfd_getfd is not in this kernel");
            }
            Err(e) => panic!("taking our own descriptor failed: {e}"),
        }
    }
}
