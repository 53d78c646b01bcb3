//! Multi-heaps on the CUDA backend (docs/heaps.md), as a program: a device and a host heap at
//! once, with the settings of the environment (`SHMEM_SYMMETRIC_SIZE`,
//! `SHMEM_DEVICE_SYMMETRIC_SIZE`, `SHMEM_SYMMETRIC_HEAP_DEFAULT`).
//!
//! ```text
//! cargo build -p conformance --example cuda_heaps
//! SHMEM_SYMMETRIC_SIZE=4m target/debug/examples/cuda_heaps             # PEs as threads
//! SHMEM_SYMMETRIC_SIZE=4m rshmem run -n 2 target/debug/examples/cuda_heaps   # a process per PE
//! ```
//!
//! Each PE puts into, reads and updates the next PE's objects of both heaps, reallocates one
//! so that it moves, and checks that `ptr` gives an address for every PE: with PEs as threads
//! (host heap in pinned memory) and with a process per PE (host heap in memfds every PE maps).
//! Under `RSHMEM_TRANSPORT=ofi` every peer is on the network path, which maps nothing: `ptr`
//! must then give an address for the PE itself and none for its peers.
//! Prints one line per PE; exits 1 if any failed.

use std::process::ExitCode;

use conformance::BodyError;
use hw::cuda::{Cuda, CudaBackend};
use rshmem::{Config, MallocHints, MemKind, Shmem};

/// Both heaps through puts, gets, atomics, realloc and `ptr`.
fn both_heaps(sh: &Shmem<CudaBackend>) -> Result<String, BodyError> {
    let violated = |what: String| Err(BodyError::Violated(what));
    let (me, n) = (sh.my_pe(), sh.n_pes());
    let next = (me + 1) % n;
    let mut log = Vec::new();
    for (hints, kind) in [
        (MallocHints::DEVICE_HEAP, MemKind::Device),
        (MallocHints::HOST_HEAP, MemKind::Host),
    ] {
        let sym = sh.malloc_with_hints::<u64>(4, hints)?;
        if sh.heap_kind_of(sym)? != kind {
            return violated(format!("{sym:?} is not in the {kind:?} heap"));
        }
        sh.put(sym, &[u64::from(me) + 10; 4], next)?;
        sh.barrier_all()?;
        sh.atomic_add(sym.at(0)?, 5, next)?;
        let blocker = sh.malloc_with_hints::<u8>(1, hints)?;
        let moved = sh.realloc(sym, 512)?;
        let got = sh.get(moved.slice(..4)?, next)?;
        let want = [
            u64::from(me) + 15,
            u64::from(me) + 10,
            u64::from(me) + 10,
            u64::from(me) + 10,
        ];
        if got != want {
            return violated(format!(
                "{kind:?} heap: PE {next} holds {got:?}, not {want:?}"
            ));
        }
        let addrs = (0..n)
            .map(|pe| Ok(sh.ptr(moved, pe)?.and_then(|p| p.addr)))
            .collect::<Result<Vec<_>, BodyError>>()?;
        let over_network = std::env::var("RSHMEM_TRANSPORT").is_ok_and(|v| v == "ofi");
        let wrong = |(pe, a): (u32, &Option<u64>)| match over_network && pe != me {
            true => a.is_some(),
            false => a.is_none_or(|a| a == 0),
        };
        if (0..n).zip(&addrs).any(wrong) {
            return violated(format!("{kind:?} heap: ptr gave {addrs:x?}"));
        }
        log.push(format!("{kind:?} ptr {addrs:x?}"));
        sh.free(blocker)?;
        sh.free(moved)?;
    }
    Ok(log.join(", "))
}

fn main() -> ExitCode {
    let config = match Config::from_env() {
        Ok(config) => config,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let cuda = match Cuda::builder().pes(2).share_gpus(true).build() {
        Ok(cuda) => cuda,
        Err(e) => {
            eprintln!("cannot start CUDA PEs: {e}");
            return ExitCode::from(2);
        }
    };
    let output = match rshmem::run(cuda, config, both_heaps) {
        Ok(output) => output,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let mut failed = false;
    for (pe, result) in output.results.into_iter().enumerate() {
        match result {
            Ok(Ok(log)) => println!("PE {pe}: ok: {log}"),
            Ok(Err(e)) => {
                failed = true;
                println!("PE {pe}: FAILED: {e}");
            }
            Err(e) => {
                failed = true;
                println!("PE {pe}: FAILED: {e}");
            }
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
