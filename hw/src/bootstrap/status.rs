//! What each rank is doing, for the launcher's timeout report: a page per rank in the
//! launcher's private directory (beside the bootstrap socket), which the rank's library writes
//! on every call ([`RankStatus::enter`], [`RankStatus::leave`]) and the launcher reads
//! ([`StatusReader`]). Plain stores to shared memory, so a call pays a few nanoseconds and no
//! system call; the launcher notes when a rank's call count last moved, which says since when
//! it has been in its call.
//!
//! The page: the number of calls entered (`u64`), whether the rank is inside a call (`u32`),
//! the length of the call's name (`u32`), then the name (at most [`NAME_BYTES`]).

use std::fs::OpenOptions;
use std::io;
use std::path::{Path, PathBuf};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};

/// The page's size.
const PAGE_BYTES: usize = 64;
const CALLS: usize = 0;
const IN_CALL: usize = 8;
const NAME_LEN: usize = 12;
const NAME: usize = 16;
/// The longest call name a page holds (longer ones are cut).
pub const NAME_BYTES: usize = PAGE_BYTES - NAME;

/// The page of `rank` in the launcher's directory `dir`.
pub fn status_path(dir: &Path, rank: u32) -> PathBuf {
    dir.join(format!("status.{rank}"))
}

/// A shared mapping of a status page.
#[derive(Debug)]
struct Page {
    base: NonNull<u8>,
}

// SAFETY: the mapping is shared memory accessed only through atomics and volatile byte
// copies; it lives until `Drop`.
unsafe impl Send for Page {}
// SAFETY: as for `Send`.
unsafe impl Sync for Page {}

impl Page {
    /// Maps the page at `path`, creating it (zeroed) if `create`.
    fn map(path: &Path, create: bool) -> io::Result<Page> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(create)
            .truncate(false)
            .open(path)?;
        if create {
            file.set_len(PAGE_BYTES as u64)?;
        } else if file.metadata()?.len() < PAGE_BYTES as u64 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "a short status page",
            ));
        }
        use std::os::fd::AsRawFd;
        // SAFETY: a fresh shared mapping of PAGE_BYTES of an open file that long.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                PAGE_BYTES,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let base = NonNull::new(base.cast::<u8>()).ok_or_else(io::Error::last_os_error)?;
        Ok(Page { base })
    }

    fn u64_at(&self, offset: usize) -> &AtomicU64 {
        // SAFETY: in the page and 8-aligned (the mapping is page-aligned).
        unsafe { AtomicU64::from_ptr(self.base.as_ptr().add(offset).cast()) }
    }

    fn u32_at(&self, offset: usize) -> &AtomicU32 {
        // SAFETY: in the page and 4-aligned (the mapping is page-aligned).
        unsafe { AtomicU32::from_ptr(self.base.as_ptr().add(offset).cast()) }
    }

    fn name_byte(&self, i: usize) -> *mut u8 {
        // SAFETY: `i < NAME_BYTES`, so in the page.
        unsafe { self.base.as_ptr().add(NAME + i) }
    }
}

impl Drop for Page {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `map`, unmapped once.
        unsafe { libc::munmap(self.base.as_ptr().cast(), PAGE_BYTES) };
    }
}

/// A rank's own status page, written on every call of its library.
#[derive(Debug)]
pub struct RankStatus {
    page: Page,
    /// The name last written, by address: calls repeat, and an unchanged name is not copied.
    last_name: AtomicUsize,
}

impl RankStatus {
    /// Creates `rank`'s page in the directory of the launcher's bootstrap socket `socket`.
    ///
    /// # Errors
    /// If the page cannot be created or mapped.
    pub fn create(socket: &Path, rank: u32) -> io::Result<RankStatus> {
        let dir = socket.parent().unwrap_or(Path::new("."));
        Ok(RankStatus {
            page: Page::map(&status_path(dir, rank), true)?,
            last_name: AtomicUsize::new(0),
        })
    }

    /// Notes that the rank entered the call `name`.
    pub fn enter(&self, name: &'static str) {
        let page = &self.page;
        if self
            .last_name
            .swap(name.as_ptr() as usize, Ordering::Relaxed)
            != name.as_ptr() as usize
        {
            let bytes = &name.as_bytes()[..name.len().min(NAME_BYTES)];
            for (i, &b) in bytes.iter().enumerate() {
                // SAFETY: `i < NAME_BYTES`; the launcher only reads these bytes.
                unsafe { page.name_byte(i).write_volatile(b) };
            }
            page.u32_at(NAME_LEN)
                .store(bytes.len() as u32, Ordering::Release);
        }
        page.u32_at(IN_CALL).store(1, Ordering::Relaxed);
        let calls = page.u64_at(CALLS);
        calls.store(calls.load(Ordering::Relaxed) + 1, Ordering::Release);
    }

    /// Notes that the rank returned from its call.
    pub fn leave(&self) {
        self.page.u32_at(IN_CALL).store(0, Ordering::Release);
    }
}

/// What the launcher read of a rank's page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankActivity {
    /// How many calls of the library the rank entered.
    pub calls: u64,
    /// Whether it is inside one now.
    pub in_call: bool,
    /// The last call it entered.
    pub call: String,
}

/// The launcher's reader of one rank's page.
#[derive(Debug)]
pub struct StatusReader {
    path: PathBuf,
    page: Option<Page>,
}

impl StatusReader {
    /// A reader of `rank`'s page in `dir`; the page need not exist yet.
    pub fn new(dir: &Path, rank: u32) -> StatusReader {
        StatusReader {
            path: status_path(dir, rank),
            page: None,
        }
    }

    /// What the page says now; `None` until the rank has created it (its library is not
    /// initialised, or it is no rshmem program).
    pub fn read(&mut self) -> Option<RankActivity> {
        if self.page.is_none() {
            self.page = Page::map(&self.path, false).ok();
        }
        let page = self.page.as_ref()?;
        let calls = page.u64_at(CALLS).load(Ordering::Acquire);
        let len = (page.u32_at(NAME_LEN).load(Ordering::Acquire) as usize).min(NAME_BYTES);
        // SAFETY: `i < NAME_BYTES`; a name being rewritten reads as a mix, which the call
        // count's next move corrects.
        let name: Vec<u8> = (0..len)
            .map(|i| unsafe { page.name_byte(i).read_volatile() })
            .collect();
        Some(RankActivity {
            calls,
            in_call: page.u32_at(IN_CALL).load(Ordering::Acquire) == 1,
            call: String::from_utf8_lossy(&name).into_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_launcher_reads_what_the_rank_wrote() {
        let dir = std::env::temp_dir().join(format!("rshmem-status-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let socket = dir.join("bootstrap.sock");
        let mut reader = StatusReader::new(&dir, 3);
        assert_eq!(reader.read(), None, "no page before the rank makes it");
        let status = RankStatus::create(&socket, 3).unwrap();
        status.enter("shmem_barrier_all");
        status.leave();
        status.enter("shmem_long_wait_until");
        assert_eq!(
            reader.read(),
            Some(RankActivity {
                calls: 2,
                in_call: true,
                call: "shmem_long_wait_until".into(),
            })
        );
        status.leave();
        status.enter("a_call_whose_name_is_much_longer_than_a_status_page_holds");
        let read = reader.read().unwrap();
        assert_eq!(read.call.len(), NAME_BYTES);
        assert!(read.call.starts_with("a_call_whose_name"));
        drop(status);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
