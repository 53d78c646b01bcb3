//! The watchdog of a PE's kernel waits: a wait of the device-side API that passes its
//! timeout (`wait_timeout_ns` of the bound state, the run's `RSHMEM_WAIT_TIMEOUT_MS`) writes
//! a record into pinned host memory mapped to the GPU (`rshmem_hang_t` of
//! `rshmem_device.cuh`, byte for byte) and traps. A thread of the PE's process polls the
//! record; once it is ready, the thread prints the wait in the format the simulator prints
//! too ([`KernelWait`]), with the word named in the program's terms ([`WordNames`]), and ends
//! the job through the bootstrap's global exit, so that the launcher reports it.
//!
//! The trap also makes the program's next CUDA call fail, and the program may exit on that
//! before the thread's next poll: [`report_pending_hangs`] checks every record once more, and
//! runs at the process's exit and before libshmem reports a failed call.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering, fence};
use std::sync::{Arc, Mutex, Once, PoisonError, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

use super::device_api::sync_words;
use super::error::DriverCallError;
use super::memory::Pinned;
use super::world::World;
use crate::amo::Cmp;
use crate::hang_report::{KernelWait, WordNames};
use crate::types::MemKind;

/// The size of `rshmem_hang_t`.
pub(crate) const HANG_RECORD_BYTES: usize = 256;
/// Offsets of `rshmem_hang_t`'s fields.
const READY: usize = 4;
const PE: usize = 8;
const CMP: usize = 12;
const BLOCK: usize = 16;
const THREAD: usize = 28;
const WORD: usize = 40;
const VALUE: usize = 48;
const SEEN: usize = 56;
const WAITED_NS: usize = 64;
const CALL: usize = 72;
const CALL_BYTES: usize = 48;
const FUNCTION: usize = CALL + CALL_BYTES;
const FUNCTION_BYTES: usize = HANG_RECORD_BYTES - FUNCTION;

/// How often the thread looks at the record: a hang is reported within this of the trap.
const POLL: Duration = Duration::from_millis(20);

/// Where a PE's own memory starts, to name the words its kernels wait on.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bases {
    /// The device heap: a word's offset in it is what [`WordNames`] know.
    pub(crate) heap: u64,
    /// The synchronisation memory of barriers and collectives ([`sync_words`]).
    pub(crate) sync: u64,
}

/// What reads one PE's record and reports it, once.
struct Reporter {
    /// The record's address (on the host; the same on the GPU through unified addressing).
    record: u64,
    bases: Bases,
    names: Arc<WordNames>,
    world: Arc<World>,
    reported: AtomicBool,
}

// SAFETY: `record` is the address of pinned memory the owning `Watchdog` keeps until the
// reporter's thread has stopped and no registry entry can reach it (a `Weak`); reads of it are
// volatile loads of plain bytes.
unsafe impl Send for Reporter {}
// SAFETY: as for `Send`; the other fields are `Sync`.
unsafe impl Sync for Reporter {}

impl Reporter {
    fn byte(&self, offset: usize) -> u8 {
        // SAFETY: the record is HANG_RECORD_BYTES long and alive (see `Send`).
        unsafe { std::ptr::read_volatile((self.record as *const u8).add(offset)) }
    }

    fn u32_at(&self, offset: usize) -> u32 {
        u32::from_le_bytes(std::array::from_fn(|i| self.byte(offset + i)))
    }

    fn u64_at(&self, offset: usize) -> u64 {
        u64::from_le_bytes(std::array::from_fn(|i| self.byte(offset + i)))
    }

    fn text_at(&self, offset: usize, len: usize) -> String {
        let bytes: Vec<u8> = (offset..offset + len)
            .map(|i| self.byte(i))
            .take_while(|&b| b != 0)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// The wait the record holds, if a thread has completed it.
    fn wait(&self) -> Option<(KernelWait, u64)> {
        if self.u32_at(READY) != 1 {
            return None;
        }
        // Pairs with the GPU's system fence before `ready`: the fields are complete.
        fence(Ordering::Acquire);
        let word = self.u64_at(WORD);
        let function = self.text_at(FUNCTION, FUNCTION_BYTES);
        let wait = KernelWait {
            pe: self.u32_at(PE),
            kernel: if function.is_empty() {
                "(function not known on the GPU)".to_string()
            } else {
                function
            },
            block: std::array::from_fn(|i| self.u32_at(BLOCK + 4 * i)),
            thread: std::array::from_fn(|i| self.u32_at(THREAD + 4 * i)),
            call: self.text_at(CALL, CALL_BYTES),
            word: self.describe(word),
            cmp: cmp_of_code(self.u32_at(CMP)),
            value: self.u64_at(VALUE),
            seen: self.u64_at(SEEN),
        };
        Some((wait, self.u64_at(WAITED_NS)))
    }

    /// The word at device address `word`, in the program's terms where it is in the heap,
    /// by the call that waits on it where it is in the synchronisation memory.
    fn describe(&self, word: u64) -> String {
        let in_sync = word
            .checked_sub(self.bases.sync)
            .and_then(sync_words::describe);
        match (in_sync, word.checked_sub(self.bases.heap)) {
            (Some(described), _) => described,
            (None, Some(offset)) => self.names.describe(MemKind::Device, offset),
            (None, None) => format!("the word at {word:#x} (outside the symmetric heap)"),
        }
    }

    /// Prints the record's wait once it is ready; whether it did (now or before).
    fn report_if_ready(&self) -> bool {
        if self.reported.load(Ordering::Acquire) {
            return true;
        }
        let Some((wait, waited_ns)) = self.wait() else {
            return false;
        };
        if !self.reported.swap(true, Ordering::AcqRel) {
            // Why ignore a failed write: the job ends either way, and stderr is all there is.
            let _ = writeln!(
                std::io::stderr(),
                "rshmem: {wait} (RSHMEM_WAIT_TIMEOUT_MS passed: it waited {} ms); the kernel \
                 trapped, so this GPU's context is lost and the program's next CUDA call fails",
                waited_ns / 1_000_000
            );
        }
        true
    }
}

/// `rshmem_device.cuh`'s comparison code as a [`Cmp`] (its `RSHMEM_CMP_*` order).
fn cmp_of_code(code: u32) -> Cmp {
    match code {
        0 => Cmp::Eq,
        1 => Cmp::Ne,
        2 => Cmp::Gt,
        3 => Cmp::Ge,
        4 => Cmp::Lt,
        _ => Cmp::Le,
    }
}

/// Every live reporter of this process, for [`report_pending_hangs`].
static REPORTERS: Mutex<Vec<Weak<Reporter>>> = Mutex::new(Vec::new());

/// Prints every kernel wait of this process that timed out and was not reported yet: for the
/// paths on which the process ends before its watchdog's next poll (a failed CUDA call the
/// program exits on, a failed libshmem call).
pub fn report_pending_hangs() {
    let reporters = REPORTERS.lock().unwrap_or_else(PoisonError::into_inner);
    for reporter in reporters.iter().filter_map(Weak::upgrade) {
        reporter.report_if_ready();
    }
}

extern "C" fn report_pending_hangs_at_exit() {
    report_pending_hangs();
}

/// One PE's hang record and the thread that watches it; dropping it stops the thread.
pub(crate) struct Watchdog {
    reporter: Arc<Reporter>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    /// Dropped last: the record the thread and the GPU write.
    _record: Pinned,
}

impl std::fmt::Debug for Watchdog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watchdog")
            .field("record", &format_args!("{:#x}", self.reporter.record))
            .finish_non_exhaustive()
    }
}

impl Watchdog {
    /// A zeroed record in pinned memory of `gpu`'s context, watched by a new thread.
    ///
    /// # Errors
    /// If the pinned memory cannot be had.
    pub(crate) fn start(
        gpu: &Arc<cudarc::driver::CudaContext>,
        world: Arc<World>,
        bases: Bases,
        names: Arc<WordNames>,
    ) -> Result<Watchdog, DriverCallError> {
        let mut record = Pinned::new(gpu, HANG_RECORD_BYTES)?;
        // SAFETY: no kernel knows the record yet.
        unsafe { record.bytes_mut(HANG_RECORD_BYTES) }.fill(0);
        let reporter = Arc::new(Reporter {
            record: record.addr(),
            bases,
            names,
            world,
            reported: AtomicBool::new(false),
        });
        REPORTERS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Arc::downgrade(&reporter));
        static AT_EXIT: Once = Once::new();
        AT_EXIT.call_once(|| {
            // SAFETY: registering a plain `extern "C"` function; a failure only loses the
            // report at exit, which the thread makes anyway if it gets to.
            unsafe { libc::atexit(report_pending_hangs_at_exit) };
        });
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let reporter = Arc::clone(&reporter);
            let stop = Arc::clone(&stop);
            std::thread::Builder::new()
                .name("rshmem-kernel-watchdog".into())
                .spawn(move || watch(&reporter, &stop))
                .ok()
        };
        Ok(Watchdog {
            reporter,
            stop,
            thread,
            _record: record,
        })
    }

    /// The record's address, for the kernels' state.
    pub(crate) fn record_addr(&self) -> u64 {
        self.reporter.record
    }
}

/// Polls the record until it is ready, then reports it and ends the job: a global exit, so the
/// launcher ends the other ranks and names this one, then this process's exit.
fn watch(reporter: &Reporter, stop: &AtomicBool) {
    while !stop.load(Ordering::Relaxed) {
        if reporter.report_if_ready() {
            reporter.world.global_exit(1);
            std::process::exit(1);
        }
        std::thread::sleep(POLL);
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::device_api::HEADER;

    #[test]
    fn the_header_has_the_same_record() {
        for line in [
            format!("#define RSHMEM_HANG_CALL_BYTES {CALL_BYTES}\n"),
            format!("#define RSHMEM_HANG_FUNCTION_BYTES {FUNCTION_BYTES}\n"),
            format!("sizeof(rshmem_hang_t) == {HANG_RECORD_BYTES}"),
        ] {
            assert!(HEADER.contains(&line), "the header lacks {line:?}");
        }
        // The fields before the strings, in order: two flags, pe, cmp, block[3], thread[3],
        // then four 64-bit words.
        assert_eq!((READY, PE, CMP, BLOCK, THREAD), (4, 8, 12, 16, 28));
        assert_eq!((WORD, VALUE, SEEN, WAITED_NS, CALL), (40, 48, 56, 64, 72));
    }

    #[test]
    fn comparison_codes_follow_the_header() {
        let header_order = ["EQ", "NE", "GT", "GE", "LT", "LE"];
        for (code, name) in (0u32..).zip(header_order) {
            assert!(HEADER.contains(&format!("#define RSHMEM_CMP_{name} {code}\n")));
            assert_eq!(
                crate::nvshmem_cmp_name(cmp_of_code(code)),
                format!("NVSHMEM_CMP_{name}")
            );
        }
    }
}
