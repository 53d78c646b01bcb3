//! One PE of a benchmark on the CUDA backend, as both `rshmem bench` and
//! `rshmem bench --collectives` use it: its device and queue, the host barrier between
//! measurements, the kernels of the benchmark's sources, and launches timed with CUDA events
//! on the queue's stream (`CudaQueue::time_on_stream`), as NVSHMEM's benchmarks time theirs.

use hw::cuda::{CudaDevice, CudaQueue, DeviceKernel, KernelArg, KernelOptions};
use hw::{Device, Instant};

/// A wait not satisfied in this long traps the kernel instead of hanging the GPU.
const WAIT_TIMEOUT_NS: u64 = 30_000_000_000;

/// How long a host barrier or a heap exchange may take before the PE gives up.
const HOST_WAIT_NS: u64 = 120_000_000_000;

/// The benchmark's CUDA sources: the only code a [`BenchPe`] launches.
#[derive(Clone, Copy, Debug)]
pub(super) enum Kernels {
    /// kernels.cu: the two-PE metrics (puts, ping-pongs, fetch-add).
    PointToPoint,
    /// collectives.cu: the collectives over every PE, and the fills of their data.
    Collectives,
}

impl Kernels {
    fn source(self) -> &'static str {
        match self {
            Kernels::PointToPoint => include_str!("kernels.cu"),
            Kernels::Collectives => include_str!("collectives.cu"),
        }
    }
}

/// One PE of a benchmark: its device, its queue and its number.
pub(super) struct BenchPe<'a> {
    pub(super) dev: &'a CudaDevice,
    pub(super) queue: CudaQueue,
    pub(super) me: u32,
}

impl<'a> BenchPe<'a> {
    /// The PE of `dev`, with a queue of its own.
    pub(super) fn new(dev: &'a CudaDevice) -> Result<BenchPe<'a>, String> {
        Ok(BenchPe {
            dev,
            queue: dev.create_queue().map_err(|e| e.to_string())?,
            me: dev.pe().0,
        })
    }

    /// When a host-side wait of this PE gives up.
    pub(super) fn deadline(&self) -> Instant {
        Instant(self.dev.now().0 + HOST_WAIT_NS)
    }

    /// Every PE reaches this point.
    pub(super) fn sync(&self) -> Result<(), String> {
        self.dev
            .exchange(&[], self.deadline())
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    /// Kernel `name` of `source`, compiled behind the device API's header with waits that
    /// trap after [`WAIT_TIMEOUT_NS`].
    pub(super) fn kernel(&self, source: Kernels, name: &str) -> Result<DeviceKernel, String> {
        let options = KernelOptions {
            wait_timeout_ns: Some(WAIT_TIMEOUT_NS),
        };
        self.dev
            .compile_kernel_with(source.source(), name, &options)
            .map_err(|e| e.to_string())
    }

    /// The median of `repeats` runs of `measure`.
    pub(super) fn median_of(
        &self,
        repeats: usize,
        mut measure: impl FnMut() -> Result<f64, String>,
    ) -> Result<f64, String> {
        let mut samples = (0..repeats)
            .map(|_| measure())
            .collect::<Result<Vec<f64>, String>>()?;
        samples.sort_by(f64::total_cmp);
        Ok(samples[repeats / 2])
    }

    /// Launches `kernel` and returns the GPU milliseconds from before the launch to its end.
    pub(super) fn timed(
        &self,
        kernel: &DeviceKernel,
        grid: u32,
        block: u32,
        args: &[KernelArg],
    ) -> Result<f64, String> {
        self.timed_launches(kernel, grid, block, args, 1)
    }

    /// Launches `kernel` `launches` times back to back on the stream and returns the GPU
    /// milliseconds from before the first launch to the end of the last.
    pub(super) fn timed_launches(
        &self,
        kernel: &DeviceKernel,
        grid: u32,
        block: u32,
        args: &[KernelArg],
        launches: u32,
    ) -> Result<f64, String> {
        let ((), ms) = self
            .queue
            .time_on_stream(|q| {
                for _ in 0..launches {
                    // SAFETY: `kernel` is one of [`Kernels`] (the only sources `kernel()`
                    // compiles), and their callers in this module's siblings pass each kernel
                    // the arguments it declares (heap offsets inside the heap they shared for
                    // pointers, then the integers), so that it touches only the heaps within
                    // those ranges; collective calls are made by whole warps or blocks;
                    // barrier_all and the collectives by one block per PE, the same number of
                    // times on every PE; and the kernels that wait for each other (ping-pongs,
                    // collectives) are launched by every PE between the same two host
                    // barriers, so they run at once.
                    unsafe { kernel.launch(q, (grid, 1, 1), (block, 1, 1), args) }
                        .map_err(|e| hw::QueueError::Lost(e.to_string()))?;
                }
                Ok::<(), hw::QueueError>(())
            })
            .map_err(|e| format!("{}: {e}", kernel.name()))?;
        Ok(ms)
    }
}
