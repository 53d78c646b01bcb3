//! Multi-heaps end to end on the simulator (docs/heaps.md): a device and a host heap at once,
//! the default heap and its settings, malloc_with_hints, realloc, the heap queries, the errors
//! that name the variable to set, and `ptr` on NVLink and InfiniBand machines. Runs are
//! deterministic; the seed of each is printed so a failure can be replayed.

use rshmem::{Config, MallocHints, MemKind, PeError, PeerPtr, Shmem, ShmemError, SymAddr, run};
use sim::{Sim, SimBackend};

use crate::common::{config, run_values, sim};

/// Small heaps of both kinds and a short deadline.
fn both_heaps() -> Config {
    config().host_heap_size(1 << 20)
}

/// Runs a program that does nothing and returns each PE's init error.
fn init_errors(machine: Sim, config: Config) -> Vec<ShmemError> {
    let output = run(machine, config, |_: &Shmem<SimBackend>| ()).expect("the PEs launch");
    output
        .results
        .into_iter()
        .map(|result| match result {
            Err(PeError::Init { source, .. }) => source,
            other => panic!("init should fail: {other:?}"),
        })
        .collect()
}

/// Puts, gets and atomics go to the heap each object is in, across NVLink and InfiniBand: two
/// objects at the same segment offset of the two heaps keep different data.
#[test]
fn both_heaps_at_once_keep_their_data_apart() {
    let seen = run_values(sim("ib-2", 16, 0), both_heaps(), |shmem| {
        let (me, n) = (shmem.my_pe(), shmem.n_pes());
        let across = (me + 8) % n;
        let device = shmem
            .malloc_with_hints::<u64>(4, MallocHints::DEVICE_HEAP)
            .expect("device");
        // Why the padding: it puts the host object at the device object's segment offset, so
        // only separate segments keep their data apart.
        let padding = usize::try_from(device.addr().0).expect("a small offset");
        shmem
            .malloc_with_hints::<u8>(padding, MallocHints::HOST_HEAP)
            .expect("padding");
        let host = shmem
            .malloc_with_hints::<u64>(4, MallocHints::HOST_HEAP)
            .expect("host");
        assert_eq!(host.addr().0 - (1 << 62), device.addr().0);
        let plain = shmem.calloc::<u64>(1).expect("calloc");
        let kinds = [device, host, plain].map(|s| shmem.heap_kind_of(s).expect("live"));
        assert_eq!(kinds, [MemKind::Device, MemKind::Host, MemKind::Device]);
        shmem
            .put(device, &[u64::from(me) + 100; 4], across)
            .expect("put device");
        shmem
            .put(host, &[u64::from(me) + 200; 4], across)
            .expect("put host");
        let host_word = host.at(3).expect("element");
        let device_word = device.at(3).expect("element");
        shmem.barrier_all().expect("barrier");
        shmem.atomic_add(host_word, 1, across).expect("add host");
        shmem
            .atomic_fetch_add(device_word, 10, across)
            .expect("fetch_add device");
        shmem.barrier_all().expect("barrier");
        let remote = (
            shmem
                .get(device.slice(..3).expect("view"), across)
                .expect("get"),
            shmem.g(host_word, across).expect("g"),
        );
        (
            shmem.local(device).expect("local"),
            shmem.local(host).expect("local"),
            remote,
        )
    });
    for (me, (device, host, (remote_device, remote_host))) in (0u64..).zip(seen) {
        let from = (me + 8) % 16;
        assert_eq!(device, [from + 100, from + 100, from + 100, from + 110]);
        assert_eq!(host, [from + 200, from + 200, from + 200, from + 201]);
        assert_eq!(remote_device, [me + 100; 3]);
        assert_eq!(remote_host, me + 201);
    }
}

/// Environment variables, as (name, value).
type Vars = &'static [(&'static str, &'static str)];

/// The default heap is DEVICE unless SHMEM_SYMMETRIC_HEAP_DEFAULT says otherwise, and the
/// sizes come from their variables (suffixes in any case).
#[test]
fn the_default_heap_and_sizes_follow_the_environment() {
    let lookup = |vars: Vars| {
        Config::from_lookup(|name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (*v).to_owned())
        })
        .expect("valid")
    };
    let cases: [(Vars, MemKind, u64, u64); 3] = [
        (&[], MemKind::Device, 1 << 30, 0),
        (
            &[
                ("SHMEM_SYMMETRIC_SIZE", "2M"),
                ("SHMEM_DEVICE_SYMMETRIC_SIZE", "4m"),
            ],
            MemKind::Device,
            4 << 20,
            2 << 20,
        ),
        (
            &[
                ("SHMEM_SYMMETRIC_SIZE", "1m"),
                ("SHMEM_DEVICE_SYMMETRIC_SIZE", "0"),
                ("SHMEM_SYMMETRIC_HEAP_DEFAULT", "Host"),
            ],
            MemKind::Host,
            0,
            1 << 20,
        ),
    ];
    for (vars, default, device_bytes, host_bytes) in cases {
        let seen = run_values(sim("hgx8", 2, 0), lookup(vars), |shmem| {
            let sym = shmem.malloc::<u32>(2).expect("malloc");
            shmem.put(sym, &[7, 8], 1 - shmem.my_pe()).expect("put");
            shmem.barrier_all().expect("barrier");
            (
                shmem.default_heap_kind(),
                shmem.heap_kind_of(sym).expect("live"),
                shmem.heap_size_bytes(MemKind::Device),
                shmem.heap_size_bytes(MemKind::Host),
                shmem.local(sym).expect("local"),
            )
        });
        for pe in seen {
            assert_eq!(
                pe,
                (default, default, device_bytes, host_bytes, vec![7, 8]),
                "{vars:?}"
            );
        }
    }
}

/// Heap hints pick the heap, usage hints change nothing, both heap hints are an error on
/// every PE, and the heaps stay usable after it.
#[test]
fn hints_pick_the_heap_and_usage_hints_are_advisory() {
    run_values(sim("hgx8", 2, 0), both_heaps(), |shmem| {
        let usage = MallocHints::ATOMICS_REMOTE | MallocHints::SIGNAL_REMOTE;
        for (hints, want) in [
            (MallocHints::NONE, MemKind::Device),
            (usage, MemKind::Device),
            (usage | MallocHints::HOST_HEAP, MemKind::Host),
            (MallocHints::DEVICE_HEAP, MemKind::Device),
        ] {
            let sym = shmem.malloc_with_hints::<u64>(1, hints).expect("alloc");
            assert_eq!(shmem.heap_kind_of(sym).expect("live"), want, "{hints:?}");
            shmem.atomic_inc(sym, 0).expect("inc");
        }
        let err = shmem
            .malloc_with_hints::<u64>(1, MallocHints::HOST_HEAP | MallocHints::DEVICE_HEAP)
            .expect_err("both heaps");
        assert!(matches!(err, ShmemError::ConflictingHeapHints), "{err}");
        assert!(err.to_string().contains("pass one of them"), "{err}");
        let after = shmem
            .malloc_with_hints::<u64>(1, MallocHints::HOST_HEAP)
            .expect("after the error");
        shmem.p(after, 3, 1 - shmem.my_pe()).expect("p");
    });
}

/// A heap that does not exist, asked for by a hint or as the default, is an error naming the
/// variable that creates it; with a host heap only, a CPU-centric program runs.
#[test]
fn a_missing_heap_is_an_error_naming_the_variable_to_set() {
    run_values(
        sim("hgx8", 2, 0),
        Config::default().wait_timeout_ms(100),
        |shmem| {
            let err = shmem
                .malloc_with_hints::<u8>(8, MallocHints::HOST_HEAP)
                .expect_err("no host heap");
            assert!(
                matches!(
                    err,
                    ShmemError::NoSuchHeap {
                        kind: MemKind::Host,
                        ..
                    }
                ),
                "{err}"
            );
            let message = err.to_string();
            assert!(
                message.contains("malloc_with_hints(HOST_HEAP)"),
                "{message}"
            );
            assert!(message.contains("set SHMEM_SYMMETRIC_SIZE"), "{message}");
            let err = shmem
                .g(SymAddr(1 << 62).cast::<u64>(1), 0)
                .expect_err("no host heap");
            assert!(matches!(err, ShmemError::NotInHeap { .. }), "{err}");
        },
    );

    let no_host = Config::default().default_heap(MemKind::Host);
    for err in init_errors(sim("hgx8", 2, 0), no_host) {
        let message = err.to_string();
        assert!(
            message.contains("SHMEM_SYMMETRIC_HEAP_DEFAULT=HOST")
                && message.contains("set SHMEM_SYMMETRIC_SIZE"),
            "{message}"
        );
    }
    let no_device = Config::default().device_heap_size(0);
    for err in init_errors(sim("hgx8", 2, 0), no_device) {
        assert!(
            err.to_string().contains("set SHMEM_DEVICE_SYMMETRIC_SIZE"),
            "{err}"
        );
    }

    let host_only = Config::default()
        .device_heap_size(0)
        .host_heap_size(1 << 20)
        .default_heap(MemKind::Host);
    let seen = run_values(sim("hgx8", 2, 0), host_only, |shmem| {
        let sym = shmem.calloc::<u32>(1).expect("calloc");
        shmem.atomic_add(sym, shmem.my_pe() + 1, 0).expect("add");
        shmem.barrier_all().expect("barrier");
        let err = shmem
            .malloc_with_hints::<u8>(1, MallocHints::DEVICE_HEAP)
            .expect_err("no device heap");
        assert!(
            err.to_string().contains("set SHMEM_DEVICE_SYMMETRIC_SIZE"),
            "{err}"
        );
        (
            shmem.g(sym, 0).expect("g"),
            shmem.heap_used_bytes(MemKind::Device),
        )
    });
    assert_eq!(seen, vec![(3, 0); 2]);
}

/// Each heap's exhaustion names its own variable and a size that would do; a heap the device
/// cannot provide names its variable at init.
#[test]
fn an_exhausted_heap_names_the_variable_to_raise() {
    run_values(sim("hgx8", 2, 0), both_heaps(), |shmem| {
        // Why: the host heap is empty (the teams' areas are in the default heap), and a
        // request of all of it would fit.
        shmem
            .malloc_with_hints::<u64>(1, MallocHints::HOST_HEAP)
            .expect("alloc");
        for (hints, var) in [
            (MallocHints::HOST_HEAP, "SHMEM_SYMMETRIC_SIZE=2m"),
            (MallocHints::DEVICE_HEAP, "SHMEM_DEVICE_SYMMETRIC_SIZE=2m"),
        ] {
            let err = shmem
                .malloc_with_hints::<u8>(1 << 20, hints)
                .expect_err("larger than the heap");
            assert!(matches!(err, ShmemError::HeapExhausted { .. }), "{err}");
            assert!(err.to_string().contains(var), "{err}");
        }
    });
    let huge_host = both_heaps().host_heap_size(1 << 50);
    let errors = init_errors(sim("hgx8", 1, 0), huge_host);
    assert!(
        matches!(
            errors[0],
            ShmemError::HeapSegment {
                kind: MemKind::Host,
                ..
            }
        ),
        "{}",
        errors[0]
    );
    assert!(
        errors[0].to_string().contains("set SHMEM_SYMMETRIC_SIZE"),
        "{}",
        errors[0]
    );
}

/// realloc keeps the contents on every PE whether it resizes in place or moves, stays in the
/// object's heap, and invalidates the old handle.
#[test]
fn realloc_preserves_contents_in_place_and_when_it_moves() {
    let seen = run_values(sim("ib-2", 16, 0), both_heaps(), |shmem| {
        let (me, n) = (shmem.my_pe(), shmem.n_pes());
        let next = (me + 1) % n;
        let mut log = Vec::new();
        for hints in [MallocHints::DEVICE_HEAP, MallocHints::HOST_HEAP] {
            let first = shmem.malloc_with_hints::<u32>(4, hints).expect("alloc");
            shmem
                .put(first, &[me, me + 1, me + 2, me + 3], next)
                .expect("put");
            // Grows in place: nothing follows it yet.
            let grown = shmem.realloc(first, 6).expect("grow");
            let err = shmem.local(first).expect_err("old handle");
            assert!(matches!(err, ShmemError::FreedAllocation { .. }), "{err}");
            let blocker = shmem.malloc_with_hints::<u8>(1, hints).expect("alloc");
            // Must move: the blocker follows it.
            let moved = shmem.realloc(grown, 64).expect("move");
            assert_ne!(moved.addr(), grown.addr());
            shmem.barrier_all().expect("barrier");
            let kept = shmem
                .get(moved.slice(..4).expect("view"), next)
                .expect("get");
            let shrunk = shmem.realloc(moved, 2).expect("shrink");
            log.push((
                shmem.heap_kind_of(shrunk).expect("live"),
                grown.addr() == first.addr(),
                shrunk.addr() == moved.addr(),
                shmem.local(shrunk).expect("local"),
                kept,
            ));
            shmem.free(blocker).expect("free");
            shmem.free(shrunk).expect("free");
        }
        log
    });
    for (me, log) in (0u32..).zip(seen) {
        let prev = (me + 15) % 16;
        let mut kinds = Vec::new();
        for (kind, grew_in_place, shrank_in_place, local, kept) in log {
            kinds.push(kind);
            assert!(grew_in_place && shrank_in_place);
            assert_eq!(local, [prev, prev + 1]);
            assert_eq!(kept, [me, me + 1, me + 2, me + 3]);
        }
        assert_eq!(kinds, [MemKind::Device, MemKind::Host]);
    }
}

/// PEs that resize to different sizes all fail, and the object survives.
#[test]
fn realloc_arguments_must_agree() {
    run_values(sim("hgx8", 3, 0), both_heaps(), |shmem| {
        let me = shmem.my_pe();
        let sym = shmem.calloc::<u64>(2).expect("calloc");
        let err = shmem
            .realloc(sym, if me == 1 { 5 } else { 4 })
            .expect_err("sizes differ");
        let message = err.to_string();
        assert!(
            matches!(err, ShmemError::CollectiveMismatch { .. }),
            "{message}"
        );
        assert!(message.contains("realloc arguments differ"), "{message}");
        assert!(message.contains("PEs 0, 2: realloc("), "{message}");
        assert!(message.contains("PE 1: realloc("), "{message}");
        shmem
            .p(sym.at(1).expect("element"), 9, 0)
            .expect("still valid");
    });
}

/// Sizes and use are reported per heap; use counts 8-byte granules.
#[test]
fn heap_sizes_and_use_are_reported() {
    let seen = run_values(sim("hgx8", 2, 0), both_heaps(), |shmem| {
        let before = shmem.heap_used_bytes(MemKind::Host);
        let sym = shmem
            .malloc_with_hints::<u8>(20, MallocHints::HOST_HEAP)
            .expect("alloc");
        let during = shmem.heap_used_bytes(MemKind::Host);
        shmem.free(sym).expect("free");
        (
            shmem.heap_size_bytes(MemKind::Host),
            before,
            during,
            shmem.heap_used_bytes(MemKind::Host),
            shmem.heap_used_bytes(MemKind::Device) > 0,
        )
    });
    assert_eq!(seen, vec![(1 << 20, 0, 24, 0, true); 2]);
}

/// On an NVSwitch board every PE is load/store reachable; across InfiniBand only the PEs of
/// the same host are. The simulator gives no address.
#[test]
fn ptr_is_some_for_nvlink_peers_and_none_across_nodes() {
    let seen = run_values(sim("hgx8", 8, 0), both_heaps(), |shmem| {
        let sym = shmem
            .malloc_with_hints::<u32>(3, MallocHints::HOST_HEAP)
            .expect("alloc");
        (0..shmem.n_pes())
            .map(|pe| shmem.ptr(sym, pe).expect("valid"))
            .collect::<Vec<_>>()
    });
    for ptrs in seen {
        for (pe, ptr) in (0..).zip(ptrs) {
            let ptr: PeerPtr = ptr.expect("every PE of hgx8 is an NVLink peer");
            assert_eq!(
                (ptr.world_pe, ptr.heap, ptr.len_bytes, ptr.addr),
                (pe, MemKind::Host, 12, None)
            );
        }
    }

    let seen = run_values(sim("ib-2", 16, 0), both_heaps(), |shmem| {
        let sym = shmem.malloc::<u64>(1).expect("malloc");
        let me = shmem.my_pe();
        let reachable: Vec<bool> = (0..shmem.n_pes())
            .map(|pe| shmem.ptr(sym, pe).expect("valid").is_some())
            .collect();
        let node = shmem.team_node();
        let by_team = shmem
            .team_ptr(node, sym, 7)
            .expect("valid")
            .map(|ptr| ptr.world_pe);
        let err = shmem.team_ptr(node, sym, 8).expect_err("a node has 8 PEs");
        assert!(matches!(err, ShmemError::PeNotInTeam { .. }), "{err}");
        let err = shmem.ptr(sym, 16).expect_err("16 PEs");
        assert!(matches!(err, ShmemError::PeOutOfRange { .. }), "{err}");
        (me, reachable, by_team)
    });
    for (me, reachable, by_team) in seen {
        let host = me / 8;
        let want: Vec<bool> = (0..16).map(|pe| pe / 8 == host).collect();
        assert_eq!(reachable, want, "PE {me}");
        assert_eq!(by_team, Some(host * 8 + 7));
    }
}
