//! Mapped loads for kernels on the simulator: the table through which
//! `rshmem/device_sim.h`'s inline `g` reads a load/store peer's memory with a plain load, and
//! the charge of the bytes it read.
//!
//! Why inline in the program: the guide's matrix multiplication makes 2^30 `g` calls per PE,
//! which as simulator events would take hours; as loads through the table they take seconds
//! ([`hw::Device::mapped_load_addr`] says when that is exact: for data no one writes
//! meanwhile). The program counts the bytes per peer in the table, and the next device call
//! (or the end of the launch) charges them to the PE's clock ([`charge`]). Where the backend
//! gives no address (InfiniBand peers, `--exact`, the race detector), the table's base is 0
//! and `g` is a get operation.

use std::cell::RefCell;

use crate::state::Pe;

/// The heaps a table holds at most (device, host, static data).
const MAX_HEAPS: usize = 4;

/// One heap in the table, as `device_sim.h` declares it.
#[repr(C)]
#[derive(Debug)]
pub(crate) struct MappedHeap {
    local_base: u64,
    len_bytes: u64,
    /// One base per PE; 0 where loads must be operations.
    peer_base: *const u64,
}

/// A PE's table, as `device_sim.h` declares it (`struct rsim_mapped`).
#[repr(C)]
#[derive(Debug)]
pub(crate) struct MappedTable {
    n_heaps: u32,
    n_pes: u32,
    heaps: [MappedHeap; MAX_HEAPS],
    /// Bytes loaded from each PE since the last charge.
    peer_bytes: *mut u64,
    /// Their sum, so that a charge with nothing to charge costs one load.
    loaded_bytes: u64,
}

/// The table of the PE whose GPU thread runs now; null outside kernels. Device code reads it
/// on every `g` (`device_sim.h`), the emulator points it at the running PE's table before it
/// resumes a GPU thread ([`enter`]).
#[unsafe(no_mangle)]
pub static mut __rsim_mapped: *mut MappedTable = std::ptr::null_mut();

thread_local! {
    /// Every PE's table, by PE number, made at its first kernel and kept for the run (the
    /// heaps' addresses do not change). One OS thread runs a simulated run's PEs.
    static TABLES: RefCell<Vec<Option<&'static mut MappedTable>>> = const { RefCell::new(Vec::new()) };
}

/// `pe`'s table, made now if this is its first kernel.
pub(crate) fn table(pe: &Pe) -> *mut MappedTable {
    let me = pe.shmem.my_pe() as usize;
    TABLES.with_borrow_mut(|tables| {
        if tables.len() <= me {
            tables.resize_with(me + 1, || None);
        }
        let table = tables[me].get_or_insert_with(|| Box::leak(Box::new(table_of(pe))));
        std::ptr::from_mut::<MappedTable>(table)
    })
}

/// Points [`__rsim_mapped`] at `table` (from [`table`]), the running PE's, or at nothing.
pub(crate) fn enter(table: *mut MappedTable) {
    // SAFETY: one OS thread runs every PE of a run and their GPU threads, so nothing reads
    // the pointer while it changes.
    unsafe { __rsim_mapped = table };
}

/// Charges `pe` for the bytes its GPU threads loaded through the running table since the
/// last charge.
pub(crate) fn charge(pe: &Pe) {
    // SAFETY: see `enter`; the table, if any, is the running PE's and lives for the run.
    charge_table(unsafe { __rsim_mapped }, pe);
}

/// Charges `pe` for the bytes loaded through its `table` since the last charge.
pub(crate) fn charge_table(table: *mut MappedTable, pe: &Pe) {
    // SAFETY: tables live for the run, and one OS thread uses them.
    let Some(table) = (unsafe { table.as_mut() }) else {
        return;
    };
    if table.loaded_bytes == 0 {
        return;
    }
    table.loaded_bytes = 0;
    for peer in 0..table.n_pes as usize {
        // SAFETY: `peer_bytes` holds `n_pes` words (`table_of`).
        let bytes = unsafe { &mut *table.peer_bytes.add(peer) };
        if *bytes > 0 {
            pe.shmem.note_mapped_loads(peer as u32, *bytes);
            *bytes = 0;
        }
    }
}

/// `pe`'s table, from the runtime's mapped heaps; its arrays are leaked with it.
fn table_of(pe: &Pe) -> MappedTable {
    let n_pes = pe.shmem.n_pes();
    let empty = || MappedHeap {
        local_base: 0,
        len_bytes: 0,
        peer_base: std::ptr::null(),
    };
    let mut heaps = [empty(), empty(), empty(), empty()];
    let mapped = pe.shmem.mapped_heaps();
    for (slot, heap) in heaps.iter_mut().zip(&mapped) {
        let bases: Vec<u64> = heap.peer_bases.iter().map(|b| b.unwrap_or(0)).collect();
        *slot = MappedHeap {
            local_base: heap.local_base,
            len_bytes: heap.len_bytes,
            peer_base: bases.leak().as_ptr(),
        };
    }
    MappedTable {
        n_heaps: mapped.len().min(MAX_HEAPS) as u32,
        n_pes,
        heaps,
        peer_bytes: vec![0u64; n_pes as usize].leak().as_mut_ptr(),
        loaded_bytes: 0,
    }
}
