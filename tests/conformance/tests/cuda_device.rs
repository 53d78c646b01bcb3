//! The device-side API of the CUDA backend (`hw::cuda::device_api`): kernels compiled with
//! the header call SHMEM on their PE's GPU. Each test runs on 1 PE (sending to itself) and
//! on 2 PEs (sending to the peer; they share the GPU on a machine with one), and skips,
//! printing why, without CUDA. The kernels are in `cuda_device_kernels.cu`; each check counts failures
//! on the GPU and the host reads the memory back itself as well.

use conformance::cuda::unavailable;
use hw::cuda::{
    CudaDevice, CudaQueue, DeviceApiError, DeviceKernel, KernelArg, KernelOptions, NvrtcError,
};
use hw::{Copier, Device, Instant, Launcher, LocalRange, MemKind, Pe, Queue};

const KERNELS: &str = include_str!("cuda_device_kernels.cu");
/// Each PE's device heap.
const HEAP_BYTES: u64 = 8 << 20;
/// A wait on the GPU longer than this is a bug: it traps instead of hanging the test.
const WAIT_TIMEOUT_NS: u64 = 20_000_000_000;

/// One PE of a test: its device, a queue, and the test kernels' module.
struct Pe1<'a> {
    dev: &'a CudaDevice,
    queue: CudaQueue,
}

impl Pe1<'_> {
    fn deadline(&self) -> Instant {
        Instant(self.dev.now().0 + 60_000_000_000)
    }

    /// Compiles `name` on every PE and returns once every PE has: a kernel that waits for
    /// a peer must not be running while the peer still loads its module, in case both PEs
    /// share a GPU (loading waits for the GPU's running kernels).
    fn kernel(&self, name: &str) -> Result<DeviceKernel, String> {
        let options = KernelOptions {
            wait_timeout_ns: Some(WAIT_TIMEOUT_NS),
        };
        let kernel = self
            .dev
            .compile_kernel_with(KERNELS, name, &options)
            .map_err(|e| e.to_string());
        self.dev
            .exchange(&[], self.deadline())
            .map_err(|e| e.to_string())?;
        kernel
    }

    /// Launches `name` with `blocks` blocks of `threads` threads and waits for it.
    fn run(&self, name: &str, blocks: u32, threads: u32, args: &[KernelArg]) -> Result<(), String> {
        let kernel = self.kernel(name)?;
        self.launch(&kernel, blocks, threads, args)
    }

    fn launch(
        &self,
        kernel: &DeviceKernel,
        blocks: u32,
        threads: u32,
        args: &[KernelArg],
    ) -> Result<(), String> {
        // SAFETY: every test kernel takes the arguments its caller below passes (pointers as
        // heap offsets inside HEAP_BYTES, then unsigned ints or u64s as declared), touches
        // only the heaps, and makes its collective calls with whole blocks, one block per PE
        // for the barrier; blocks that wait for each other are two, always co-resident.
        unsafe { kernel.launch(&self.queue, (blocks, 1, 1), (threads, 1, 1), args) }
            .map_err(|e| e.to_string())?;
        self.queue
            .quiet(self.deadline())
            .map_err(|e| format!("{}: {e}", kernel.name()))
    }

    /// `n` words of the PE's heap from byte `offset`.
    fn words(&self, offset: u64, n: usize) -> Vec<u64> {
        let mut bytes = vec![0u8; n * 8];
        let range = LocalRange {
            kind: MemKind::Device,
            offset,
            len: bytes.len() as u64,
        };
        self.dev.read_local(range, &mut bytes);
        bytes
            .chunks_exact(8)
            .map(|w| u64::from_le_bytes(w.try_into().expect("8 bytes")))
            .collect()
    }

    /// The PE after this one, to which the kernels send, and the one before it.
    fn to(&self) -> u64 {
        u64::from((self.dev.pe().0 + 1) % self.dev.n_pes())
    }
    fn from(&self) -> u64 {
        u64::from((self.dev.pe().0 + self.dev.n_pes() - 1) % self.dev.n_pes())
    }
}

/// Runs `body` on each PE of a run of `n_pes` after every PE made its device heap and
/// imported every other's; fails with every PE's error.
fn on_pes(n_pes: u32, body: impl Fn(&Pe1) -> Result<(), String> + Sync) -> Result<(), String> {
    let cuda = conformance::cuda::cuda(n_pes).map_err(|e| e.to_string())?;
    let (results, _) = cuda
        .launch(|dev| {
            let deadline = Instant(dev.now().0 + 60_000_000_000);
            hw::cuda::share_device_heap(&dev, HEAP_BYTES, deadline).map_err(|e| e.to_string())?;
            let queue = dev.create_queue().map_err(|e| e.to_string())?;
            body(&Pe1 { dev: &dev, queue }).map_err(|e| format!("{}: {e}", dev.pe()))
        })
        .map_err(|e| e.to_string())?;
    let failures: Vec<String> = results
        .into_iter()
        .filter_map(|r| match r {
            Ok(Ok(())) => None,
            Ok(Err(e)) => Some(e),
            Err(failure) => Some(format!("{} panicked: {}", failure.pe, failure.message)),
        })
        .collect();
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("\n"))
    }
}

/// Runs `body` on 1 and on 2 PEs (sharing a GPU where there is one), skipping (and saying
/// so) without CUDA.
fn on_1_and_2_pes(body: impl Fn(&Pe1) -> Result<(), String> + Sync) {
    for n_pes in [1, 2] {
        if let Some(reason) = unavailable(n_pes) {
            eprintln!("skipped {n_pes} PEs: {reason}");
            continue;
        }
        if let Err(e) = on_pes(n_pes, &body) {
            panic!("{n_pes} PEs:\n{e}");
        }
    }
}

/// Fails with `what` unless `got` is `want`.
fn expect<T: PartialEq + std::fmt::Debug>(what: &str, got: T, want: T) -> Result<(), String> {
    if got == want {
        Ok(())
    } else {
        Err(format!("{what}: got {got:?}, wanted {want:?}"))
    }
}

#[test]
fn p_and_g_to_self() {
    on_1_and_2_pes(|pe| {
        pe.run("p_g_self", 1, 1, &[KernelArg::Heap(0), KernelArg::Heap(64)])?;
        let me = u64::from(pe.dev.pe().0);
        let n = u64::from(pe.dev.n_pes());
        expect(
            "my_pe, n_pes, g(u64), g(u32), g(double) == 2.5, ptr(self) == x, ptr(n_pes) == NULL",
            pe.words(64, 7),
            vec![me, n, 42 + me, 7, 1, 1, 1],
        )?;
        expect(
            "the word p'd, read by the host",
            pe.words(0, 1),
            vec![42 + me],
        )
    });
}

#[test]
fn a_compile_error_returns_the_log_with_the_line() {
    let source = "extern \"C\" __global__ void broken(unsigned long long *x) {\n    \
                  rshmem_p(x, 1ull, 0);\n    no_such_function(x);\n}\n";
    on_1_and_2_pes(|pe| {
        if pe.dev.pe() != Pe(0) {
            return Ok(());
        }
        match pe.dev.compile_kernel(source, "broken") {
            Err(DeviceApiError::Compile(NvrtcError::Compile { log, .. })) => {
                if log.contains("broken.cu(3)") && log.contains("no_such_function") {
                    Ok(())
                } else {
                    Err(format!("the log does not name broken.cu(3):\n{log}"))
                }
            }
            Err(e) => Err(format!("not a compile error: {e}")),
            Ok(_) => Err("a call of an undefined function compiled".into()),
        }?;
        match pe
            .dev
            .compile_kernel("extern \"C\" __global__ void k() {}", "other")
        {
            Err(DeviceApiError::NoKernel { name }) => {
                expect("missing kernel", name, "other".into())
            }
            other => Err(format!("a missing kernel gave {other:?}")),
        }
    });
}

#[test]
fn fenced_message_passing() {
    const WORDS: u32 = 256;
    const ROUNDS: u32 = 200;
    on_1_and_2_pes(|pe| {
        let (data, flag, ack, bad) = (0, 1 << 20, (1 << 20) + 64, (1 << 20) + 128);
        pe.run(
            "message_passing",
            2,
            32,
            &[
                KernelArg::Heap(data),
                KernelArg::Heap(flag),
                KernelArg::Heap(ack),
                KernelArg::Heap(bad),
                KernelArg::U32(WORDS),
                KernelArg::U32(ROUNDS),
            ],
        )?;
        expect(
            "words out of date when the flag was seen",
            pe.words(bad, 1)[0],
            0,
        )?;
        let rounds = u64::from(ROUNDS);
        expect(
            "flag, ack",
            (pe.words(flag, 1)[0], pe.words(ack, 1)[0]),
            (rounds, rounds),
        )?;
        let last: Vec<u64> = (0..u64::from(WORDS))
            .map(|i| u64::from(ROUNDS) * 100_000 + i)
            .collect();
        expect("the last message", pe.words(data, WORDS as usize), last)
    });
}

#[test]
fn put_signal_and_signal_wait_until() {
    const WORDS: u32 = 512;
    const ROUNDS: u32 = 100;
    on_1_and_2_pes(|pe| {
        let (src, data, sig) = (0, 1 << 20, 2 << 20);
        let (ack, bad) = (sig + 64, sig + 128);
        pe.run(
            "signal_passing",
            2,
            32,
            &[
                KernelArg::Heap(src),
                KernelArg::Heap(data),
                KernelArg::Heap(sig),
                KernelArg::Heap(ack),
                KernelArg::Heap(bad),
                KernelArg::U32(WORDS),
                KernelArg::U32(ROUNDS),
            ],
        )?;
        expect("signals or words wrong when seen", pe.words(bad, 1)[0], 0)?;
        expect(
            "the signal, added to once per round",
            pe.words(sig, 1)[0],
            u64::from(ROUNDS),
        )?;
        let last: Vec<u64> = (0..u64::from(WORDS))
            .map(|i| u64::from(ROUNDS) * 100_000 + i)
            .collect();
        expect("the last message", pe.words(data, WORDS as usize), last)
    });
}

#[test]
fn block_scope_putmem_and_getmem_of_one_mib() {
    const NBYTES: u64 = 1 << 20;
    on_1_and_2_pes(|pe| {
        let (src, dst, got, bad) = (0, NBYTES, 2 * NBYTES, 3 * NBYTES);
        pe.run(
            "block_copy",
            1,
            256,
            &[
                KernelArg::Heap(src),
                KernelArg::Heap(dst),
                KernelArg::Heap(got),
                KernelArg::Heap(bad),
                KernelArg::U64(NBYTES),
            ],
        )?;
        expect("words wrong on the GPU", pe.words(bad, 1)[0], 0)?;
        let n = (NBYTES / 8) as usize;
        let put: Vec<u64> = (0..n as u64).map(|i| (pe.from() << 40) | i).collect();
        expect("the previous PE's put", pe.words(dst, n) == put, true)?;
        let fetched: Vec<u64> = (0..n as u64).map(|i| (pe.to() << 40) | i).collect();
        expect(
            "the next PE's source, got",
            pe.words(got, n) == fetched,
            true,
        )
    });
}

#[test]
fn fetch_add_from_every_thread_and_each_atomic() {
    const THREADS: u32 = 256;
    on_1_and_2_pes(|pe| {
        let (counter, olds, word, results) = (0, 64, 4096, 4160);
        pe.run(
            "atomics",
            1,
            THREADS,
            &[
                KernelArg::Heap(counter),
                KernelArg::Heap(olds),
                KernelArg::Heap(word),
                KernelArg::Heap(results),
            ],
        )?;
        expect("my counter", pe.words(counter, 1)[0], u64::from(THREADS))?;
        let mut fetched = pe.words(olds, THREADS as usize);
        fetched.sort_unstable();
        expect(
            "old values fetched (sorted)",
            fetched,
            (0..u64::from(THREADS)).collect(),
        )?;
        expect(
            "swap, compare_swap hit and miss, fetch_and, fetch_or, fetch_xor, fetch",
            pe.words(results, 7),
            vec![5, 7, 9, 9, 8, 11, 15],
        )?;
        expect("my word", pe.words(word, 1)[0], 15)
    });
}

#[test]
fn barrier_all_a_hundred_times_in_two_launches() {
    const ROUNDS: u32 = 100;
    on_1_and_2_pes(|pe| {
        let (slot, bad) = (0, 64);
        let kernel = pe.kernel("barrier_loop")?;
        for first in [1, 1 + ROUNDS] {
            let args = [
                KernelArg::Heap(slot),
                KernelArg::Heap(bad),
                KernelArg::U32(ROUNDS),
                KernelArg::U32(first),
            ];
            pe.launch(&kernel, 1, 128, &args)?;
        }
        expect(
            "rounds whose slot was stale after the barrier",
            pe.words(bad, 1)[0],
            0,
        )?;
        expect(
            "the last round",
            pe.words(slot, 1)[0],
            u64::from(2 * ROUNDS),
        )
    });
}

/// Sum reduction, broadcast, fcollect and alltoall of the device-side API, 1000 words per
/// PE, one block of 256 threads per PE: every element checked on the GPU.
#[test]
fn collectives_sum_broadcast_fcollect_alltoall() {
    on_1_and_2_pes(|pe| {
        const N: u64 = 1000;
        let (src, dst, bad) = (0, 64 << 10, 128 << 10);
        let kernel = pe.kernel("collectives")?;
        let args = [
            KernelArg::Heap(src),
            KernelArg::Heap(dst),
            KernelArg::Heap(bad),
            KernelArg::U64(N),
        ];
        pe.launch(&kernel, 1, 256, &args)?;
        expect("wrong elements", pe.words(bad, 1)[0], 0)
    });
}

/// Arguments and block sizes are checked before anything is launched.
#[test]
fn a_heap_offset_past_the_end_or_a_huge_block_is_refused() {
    on_1_and_2_pes(|pe| {
        let kernel = pe.kernel("p_g_self")?;
        let in_heap = [KernelArg::Heap(0), KernelArg::Heap(64)];
        // SAFETY: the launch is refused before the kernel runs.
        let refused = unsafe {
            kernel.launch(
                &pe.queue,
                (1, 1, 1),
                (1, 1, 1),
                &[KernelArg::Heap(0), KernelArg::Heap(HEAP_BYTES + 8)],
            )
        };
        match refused {
            Err(DeviceApiError::ArgOutsideHeap { index: 1, .. }) => Ok(()),
            other => Err(format!("an offset past the heap gave {other:?}")),
        }?;
        // SAFETY: as above.
        match unsafe { kernel.launch(&pe.queue, (1, 1, 1), (64, 64, 1), &in_heap) } {
            Err(DeviceApiError::BlockTooLarge { threads: 4096, .. }) => Ok(()),
            other => Err(format!("a block of 4096 threads gave {other:?}")),
        }
    });
}

/// A growable device segment (`Device::create_growable_segment`): backed 2 MiB at first of
/// its 32 MiB, grown to 24 MiB collectively, after which a put lands at its far end on the
/// peer and the new memory reads zero; growing past its room fails on every PE, naming it.
#[test]
fn a_growable_segment_grows_on_every_pe_and_refuses_past_its_room() {
    const ROOM: u64 = 32 << 20;
    for n_pes in [1, 2] {
        if let Some(reason) = unavailable(n_pes) {
            eprintln!("skipped {n_pes} PEs: {reason}");
            continue;
        }
        let cuda = conformance::cuda::cuda(n_pes).expect("a launcher");
        let (results, _) = cuda
            .launch(|dev| grow_and_use(&dev, ROOM))
            .expect("the PEs launch");
        for (pe, result) in results.into_iter().enumerate() {
            match result {
                Ok(Ok(())) => {}
                Ok(Err(e)) => panic!("{n_pes} PEs: PE {pe}: {e}"),
                Err(failure) => panic!("{n_pes} PEs: PE {pe} panicked: {}", failure.message),
            }
        }
    }
}

/// One PE of [`a_growable_segment_grows_on_every_pe_and_refuses_past_its_room`].
fn grow_and_use(dev: &CudaDevice, room: u64) -> Result<(), String> {
    let deadline = Instant(dev.now().0 + 60_000_000_000);
    let key = dev
        .create_growable_segment(MemKind::Device, room, 2 << 20)
        .map_err(|e| e.to_string())?;
    let keys = dev.exchange(&key.0, deadline).map_err(|e| e.to_string())?;
    for (peer, bytes) in (0..).zip(keys.iter().cloned()) {
        dev.import_segment(Pe(peer), MemKind::Device, &hw::SegmentKey(bytes))
            .map_err(|e| e.to_string())?;
    }
    dev.grow_segment(MemKind::Device, 24 << 20, deadline)
        .map_err(|e| format!("growing to 24 MiB: {e}"))?;
    let queue = dev.create_queue().map_err(|e| e.to_string())?;
    let (me, n) = (dev.pe().0, dev.n_pes());
    let far = (24 << 20) - 8;
    let next = hw::RemoteRange {
        pe: Pe((me + 1) % n),
        kind: MemKind::Device,
        offset: far,
        len: 8,
    };
    queue
        .put(next, &u64::from(me + 1).to_le_bytes(), Copier::Device)
        .map_err(|e| e.to_string())?;
    queue.quiet(deadline).map_err(|e| e.to_string())?;
    dev.exchange(&[], deadline).map_err(|e| e.to_string())?;
    let mut word = [0u8; 8];
    dev.read_local(
        LocalRange {
            kind: MemKind::Device,
            offset: far,
            len: 8,
        },
        &mut word,
    );
    let from = (me + n - 1) % n;
    expect(
        "the word put at the far end",
        u64::from_le_bytes(word),
        u64::from(from + 1),
    )?;
    dev.read_local(
        LocalRange {
            kind: MemKind::Device,
            offset: far - 8,
            len: 8,
        },
        &mut word,
    );
    expect("new memory", u64::from_le_bytes(word), 0)?;
    match dev.grow_segment(MemKind::Device, room * 2, deadline) {
        Err(e) if e.to_string().contains("Device") => Ok(()),
        Err(e) => Err(format!(
            "growing past the room failed without naming the kind: {e}"
        )),
        Ok(()) => Err("growing past the room was allowed".into()),
    }
}
