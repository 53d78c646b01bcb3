//! A program's own buffer registered as symmetric memory (`Shmem::register_buffer`) where the
//! backend cannot take one: the simulator's backend leaves buffers to the C API's emulated
//! driver, so here every PE must be refused alike and the heap must be as before. The CUDA
//! backend's path runs on GPUs (runtime/capi/tests/cuda/register_symmetric.cu).

use rshmem::{MemKind, Sym};

use crate::common::{config, run_values, sim};

#[test]
fn a_backend_without_buffers_refuses_every_pe_alike_and_leaves_the_heap_as_it_was() {
    // Why a larger heap: the buffer's range lies past the backed first 64 MiB, inside the heap.
    let results = run_values(
        sim("hgx8", 4, 3),
        config().device_heap_size(256 << 20),
        |shmem| {
            let before = shmem.malloc::<u64>(8).expect("malloc");
            let used = shmem.heap_used_bytes(MemKind::Device);
            let refused = shmem
                .register_buffer(0x7000_0000, 2 << 20)
                .expect_err("the simulator's backend takes no buffer");
            assert_eq!(shmem.heap_used_bytes(MemKind::Device), used);
            let after = shmem.malloc::<u64>(8).expect("malloc after");
            assert_eq!(
                after.addr().0,
                before.addr().0 + 64,
                "first fit, as if nothing happened"
            );
            refused.to_string()
        },
    );
    for message in &results {
        assert!(
            message.contains("cannot register the 2097152-byte buffer")
                && message.contains("cannot make a program's own buffer part of a symmetric heap"),
            "{message}"
        );
    }
}

#[test]
fn register_sizes_must_agree_and_only_registered_buffers_unregister() {
    let results = run_values(sim("hgx8", 2, 5), config(), |shmem| {
        let len = if shmem.my_pe() == 0 { 2 << 20 } else { 4 << 20 };
        let mismatch = shmem
            .register_buffer(0x7000_0000, len)
            .expect_err("sizes differ");
        let plain = shmem.malloc::<u8>(64).expect("malloc");
        let not_registered = shmem
            .unregister_buffer(plain, 64)
            .expect_err("never registered");
        shmem.free(plain).expect("a plain allocation frees");
        let _: Sym<u8> = plain;
        (mismatch.to_string(), not_registered.to_string())
    });
    for (mismatch, not_registered) in &results {
        assert!(
            mismatch.contains("registered buffer sizes differ between PEs")
                && mismatch.contains("PE 0: register_buffer(2097152 bytes)")
                && mismatch.contains("PE 1: register_buffer(4194304 bytes)"),
            "{mismatch}"
        );
        assert!(
            not_registered.contains(
                "is not the address of a buffer of that length that register_buffer registered"
            ),
            "{not_registered}"
        );
    }
}

/// A buffer the caller maps itself takes an aligned allocation of the default heap; when one
/// PE's mapping fails, every PE fails, the others unmap theirs, and the heap is as before; a
/// registered buffer is refused by `free` and given back by its own call.
#[test]
fn a_caller_mapped_buffer_fails_on_every_pe_when_one_mapping_fails_and_unmaps_the_rest() {
    let results = run_values(sim("hgx8", 4, 7), config(), |shmem| {
        let me = shmem.my_pe();
        let used = shmem.heap_used_bytes(MemKind::Device);
        let mut unmapped = 0;
        let refused = shmem
            .register_buffer_with(
                4096,
                4096,
                |_| match me {
                    2 => Err("PE 2's pages are gone".to_owned()),
                    _ => Ok(()),
                },
                |_| {
                    unmapped += 1;
                    Ok(())
                },
            )
            .expect_err("PE 2 fails");
        assert_eq!(shmem.heap_used_bytes(MemKind::Device), used);
        let sym = shmem
            .register_buffer_with(4096, 4096, |_| Ok(()), |_| Ok(()))
            .expect("every mapping succeeds");
        assert_eq!(sym.addr().0 % 4096, 0, "aligned as asked");
        let freed = shmem
            .free(sym)
            .expect_err("a registered buffer is not freed");
        shmem
            .unregister_buffer_with(sym, 4096, |_| Ok(()))
            .expect("given back");
        assert_eq!(shmem.heap_used_bytes(MemKind::Device), used);
        (me, unmapped, refused.to_string(), freed.to_string())
    });
    for (me, unmapped, refused, freed) in &results {
        let (want_unmapped, want) = match me {
            2 => (0, "PE 2's pages are gone"),
            _ => (1, "PE 2's buffer was refused (its own error says why)"),
        };
        assert_eq!(*unmapped, want_unmapped, "PE {me}");
        assert!(refused.contains(want), "PE {me}: {refused}");
        assert!(
            freed.contains("unregister it instead of freeing it"),
            "{freed}"
        );
    }
}
