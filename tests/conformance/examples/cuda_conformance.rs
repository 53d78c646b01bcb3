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
//! errors name the PE. Arguments name the bodies to run (default: all), so that a run whose
//! peers are on the network path, which kernels do not reach, can leave out the kernel's.

use std::process::ExitCode;

use conformance::BodyError;
use conformance::bodies;
use hw::cuda::{Cuda, CudaBackend, KernelArg};
use rshmem::{Config, Shmem};

type Body = fn(&Shmem<CudaBackend>) -> Result<(), BodyError>;

const BODIES: [(&str, Body); 8] = [
    ("ring", bodies::ring),
    ("fenced_message_passing", bodies::fenced_message_passing),
    ("signal_message_passing", bodies::signal_message_passing),
    ("fetch_add_counter", bodies::fetch_add_counter),
    ("get_after_barrier", bodies::get_after_barrier),
    ("on_stream", bodies::on_stream),
    ("heap_growth", bodies::heap_growth),
    ("device_api_ring", device_api_ring),
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
