//! The conformance bodies on the CUDA backend, and a kernel of the device-side API launched
//! through the runtime's handle, as a program: run it alone (a thread per GPU)
//! or as the processes of `rshmem run -n N` (one PE each), which is how the multi-process
//! launcher and the sharing of GPU memory between processes are checked on GPU machines.
//!
//! ```text
//! cargo build --release -p conformance --example cuda_conformance
//! rshmem run -n 2 target/release/examples/cuda_conformance
//! ```
//!
//! Prints one line per body for each PE of this process; exits 1 if any failed. A PE's body
//! errors name the PE. Arguments name the bodies to run (default: all).

use std::process::ExitCode;

use conformance::BodyError;
use conformance::bodies;
use hw::cuda::{Cuda, CudaBackend, KernelArg};
use rshmem::{Config, Shmem};

type Body = fn(&Shmem<CudaBackend>) -> Result<(), BodyError>;

const BODIES: [(&str, Body); 9] = [
    ("ring", bodies::ring),
    ("fenced_message_passing", bodies::fenced_message_passing),
    ("signal_message_passing", bodies::signal_message_passing),
    ("fetch_add_counter", bodies::fetch_add_counter),
    ("get_after_barrier", bodies::get_after_barrier),
    ("on_stream", bodies::on_stream),
    ("heap_growth", bodies::heap_growth),
    ("device_api_ring", device_api_ring),
    ("device_api_calls", device_api_calls),
];

/// A kernel of the device-side API: each PE puts its number plus one into the next PE's
/// slot, then every PE meets in `barrier_all` (across processes under `rshmem run -n`).
const RING_KERNEL: &str = r#"
extern "C" __global__ void ring(unsigned long long *slot, int next) {
    rshmem_p(slot, (unsigned long long)rshmem_my_pe() + 1, next);
    rshmem_barrier_all();
}
"#;

/// [`RING_KERNEL`] launched through the runtime's handle: the slot must hold the previous
/// PE's number plus one.
fn device_api_ring(sh: &Shmem<CudaBackend>) -> Result<(), BodyError> {
    let slot = sh.calloc::<u64>(1)?;
    sh.barrier_all()?;
    let kernel = sh
        .device()
        .compile_kernel(RING_KERNEL, "ring")
        .map_err(|e| BodyError::Violated(format!("compiling: {e}")))?;
    // Every PE has loaded its kernel before any launches: loading a module can wait for the
    // kernels running on the GPU, and a launched kernel waits in barrier_all for the others.
    sh.barrier_all()?;
    let (me, n) = (sh.my_pe(), sh.n_pes());
    let next = ((me + 1) % n) as i32;
    let args = [KernelArg::Heap(slot.addr().0), KernelArg::I32(next)];
    // SAFETY: the kernel takes (unsigned long long *, int) as passed, writes one word of the
    // heap on `next`, and calls barrier_all from its one block, once on every PE.
    unsafe { kernel.launch(sh.queue(), (1, 1, 1), (1, 1, 1), &args) }
        .map_err(|e| BodyError::Violated(format!("launching: {e}")))?;
    sh.quiet()?;
    sh.barrier_all()?;
    let got = sh.local(slot)?[0];
    let want = u64::from((me + n - 1) % n) + 1;
    sh.free(slot)?;
    if got == want {
        Ok(())
    } else {
        Err(BodyError::Violated(format!(
            "PE {me}'s slot holds {got}, expected {want} from its left neighbour's kernel"
        )))
    }
}

/// Kernel calls of every kind to the next and previous PEs, by one block of [`CALLS_THREADS`]
/// threads per PE; on the network path each is a request through the PE's kernel proxy
/// (docs/multi-node.md). `data` holds `me * 1_000_000 + i`; after the kernel `landing` and `got`
/// hold the previous PE's, `counter` the previous PE's adds, `sig` its signal, `sum` the sum
/// over PEs (pushed in chunks: `n` ints of every PE are more than the scratch holds), and
/// `gathered` every PE's first `GATHER` ints.
const CALLS_KERNEL: &str = r#"
#define GATHER 1024
extern "C" __global__ void calls(int *data, int *landing, int *got, unsigned long long *counter,
                                 unsigned long long *sig, int *sum, int *gathered, int n) {
    int me = rshmem_my_pe(), npes = rshmem_n_pes();
    int next = (me + 1) % npes, prev = (me + npes - 1) % npes;
    rshmem_putmem_nbi_block(landing, data, (size_t)n * sizeof(int), next);
    if (threadIdx.x == 0) {
        rshmem_fence();
        rshmem_put_signal(sig + 1, sig + 2, 8, sig, 1ull, RSHMEM_SIGNAL_ADD, next);
    }
    rshmem_atomic_add(counter, 1ull, next);
    rshmem_atomic_fetch_add(counter + 1, 2ull, next);
    if (threadIdx.x == 0) rshmem_signal_wait_until(sig, RSHMEM_CMP_GE, 1ull);
    rshmem_barrier_all();
    rshmem_getmem_block(got, data, (size_t)n * sizeof(int), prev);
    rshmem_sum_reduce_block(sum, data, (size_t)n);
    rshmem_fcollect_block(gathered, data, GATHER);
    rshmem_barrier_all();
}
"#;

/// Threads of [`CALLS_KERNEL`]'s block, and the ints each PE moves (1.2 MB: a put of many
/// proxy chunks, and a reduction of more than the scratch).
const CALLS_THREADS: u32 = 256;
const CALLS_INTS: usize = 300_000;
const CALLS_GATHER: usize = 1024;

/// [`CALLS_KERNEL`] launched through the runtime's handle, its results checked on the host.
fn device_api_calls(sh: &Shmem<CudaBackend>) -> Result<(), BodyError> {
    let (me, n) = (sh.my_pe(), sh.n_pes());
    let value = |pe: u32, i: usize| (pe as i32) * 1_000_000 + i as i32;
    let data = sh.malloc::<i32>(CALLS_INTS)?;
    let values: Vec<i32> = (0..CALLS_INTS).map(|i| value(me, i)).collect();
    sh.set_local(data, &values)?;
    let landing = sh.calloc::<i32>(CALLS_INTS)?;
    let got = sh.calloc::<i32>(CALLS_INTS)?;
    let counter = sh.calloc::<u64>(2)?;
    let sig = sh.calloc::<u64>(3)?;
    let sum = sh.calloc::<i32>(CALLS_INTS)?;
    let gathered = sh.calloc::<i32>(CALLS_GATHER * n as usize)?;
    let kernel = sh
        .device()
        .compile_kernel(CALLS_KERNEL, "calls")
        .map_err(|e| BodyError::Violated(format!("compiling: {e}")))?;
    sh.barrier_all()?;
    let heap = |addr: rshmem::SymAddr| KernelArg::Heap(addr.0);
    let args = [
        heap(data.addr()),
        heap(landing.addr()),
        heap(got.addr()),
        heap(counter.addr()),
        heap(sig.addr()),
        heap(sum.addr()),
        heap(gathered.addr()),
        KernelArg::I32(CALLS_INTS as i32),
    ];
    // SAFETY: the arguments are the kernel's parameters in order, each a heap array of the
    // length it uses; its one block calls the collectives and barriers once on every PE.
    unsafe { kernel.launch(sh.queue(), (1, 1, 1), (CALLS_THREADS, 1, 1), &args) }
        .map_err(|e| BodyError::Violated(format!("launching: {e}")))?;
    sh.quiet()?;
    sh.barrier_all()?;
    let prev = (me + n - 1) % n;
    let mut wrong = Vec::new();
    let theirs: Vec<i32> = (0..CALLS_INTS).map(|i| value(prev, i)).collect();
    if sh.local(landing)? != theirs {
        wrong.push("landing (a block put from the previous PE)".to_string());
    }
    if sh.local(got)? != theirs {
        wrong.push("got (a block get from the previous PE)".to_string());
    }
    let threads = u64::from(CALLS_THREADS);
    if sh.local(counter)? != [threads, 2 * threads] {
        wrong.push(format!(
            "counter {:?}, want [{threads}, {}]",
            sh.local(counter)?,
            2 * threads
        ));
    }
    if sh.local(sig)?[0] != 1 {
        wrong.push(format!("signal {}, want 1", sh.local(sig)?[0]));
    }
    let sums: Vec<i32> = (0..CALLS_INTS)
        .map(|i| (0..n).map(|pe| value(pe, i)).sum())
        .collect();
    if sh.local(sum)? != sums {
        wrong.push("sum (a reduction over every PE)".to_string());
    }
    let all: Vec<i32> = (0..n)
        .flat_map(|pe| (0..CALLS_GATHER).map(move |i| value(pe, i)))
        .collect();
    if sh.local(gathered)? != all {
        wrong.push("gathered (an fcollect)".to_string());
    }
    for sym in [data, landing, got, sum, gathered] {
        sh.free(sym)?;
    }
    sh.free(counter)?;
    sh.free(sig)?;
    match wrong.is_empty() {
        true => Ok(()),
        false => Err(BodyError::Violated(format!(
            "PE {me}: wrong {}",
            wrong.join("; ")
        ))),
    }
}

fn main() -> ExitCode {
    let names: Vec<String> = std::env::args().skip(1).collect();
    if let Some(unknown) = names.iter().find(|n| BODIES.iter().all(|(b, _)| b != n)) {
        let known: Vec<&str> = BODIES.iter().map(|(b, _)| *b).collect();
        eprintln!(
            "no body named {unknown:?}; the bodies are {}",
            known.join(", ")
        );
        return ExitCode::from(2);
    }
    let chosen: Vec<(&str, Body)> = BODIES
        .iter()
        .filter(|(b, _)| names.is_empty() || names.iter().any(|n| n == b))
        .copied()
        .collect();
    let cuda = match Cuda::builder().build() {
        Ok(cuda) => cuda,
        Err(e) => {
            eprintln!("cannot start CUDA PEs: {e}");
            return ExitCode::from(2);
        }
    };
    // One run for every body: a process of `rshmem run` joins the launcher's bootstrap once.
    let config = Config::default().device_heap_size(256 << 20);
    let output = rshmem::run(cuda, config, |sh| {
        chosen
            .iter()
            .map(|(name, body)| (*name, body(sh).map_err(|e| e.to_string())))
            .collect::<Vec<_>>()
    });
    let output = match output {
        Ok(output) => output,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let mut failed = false;
    for result in output.results {
        match result {
            Ok(bodies) => {
                for (name, outcome) in bodies {
                    match outcome {
                        Ok(()) => println!("{name}: ok"),
                        Err(e) => {
                            failed = true;
                            println!("{name}: FAILED: {e}");
                        }
                    }
                }
            }
            Err(e) => {
                failed = true;
                println!("FAILED: {e}");
            }
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
