//! Put bandwidth from PE 0 to PE 1, 8 B to 256 MiB, measured on the backend's clock.
//!
//! For each size PE 0 issues a batch of puts and one quiet (as NVSHMEM's put_bw does). A
//! batch is 1024 puts or 256 MiB, whichever is less, so small sizes measure the pipelined
//! issue rate and the fixed cost of the final quiet (one round trip) stays small beside the
//! batch at every size.

use hw::Backend;
use rshmem::{Shmem, ShmemError};

use super::{BandwidthPoint, PeOutcome};

const MAX_BYTES: u64 = 256 << 20;

pub(super) fn run<B: Backend>(sh: &Shmem<B>) -> Result<PeOutcome, ShmemError> {
    let me = sh.my_pe();
    let target = sh.malloc::<u8>(MAX_BYTES as usize)?;
    let mut curve = Vec::new();
    if me == 0 {
        let source = vec![0xa5u8; MAX_BYTES as usize];
        let mut bytes = 8u64;
        while bytes <= MAX_BYTES {
            let batch = (MAX_BYTES / bytes).clamp(1, 1024);
            let dst = target.slice(..bytes as usize)?;
            let start_ns = sh.now_ns();
            for _ in 0..batch {
                sh.put_nbi(dst, &source[..bytes as usize], 1)?;
            }
            sh.quiet()?;
            let elapsed_ns = sh.now_ns() - start_ns;
            curve.push(BandwidthPoint {
                bytes,
                gbps: (bytes * batch) as f64 / elapsed_ns.max(1) as f64,
            });
            bytes *= 2;
        }
    }
    sh.barrier_all()?;
    let landed = if me == 1 {
        sh.local(target.slice(..4096)?)?.iter().all(|&b| b == 0xa5)
    } else {
        true
    };
    sh.free(target)?;
    Ok(PeOutcome {
        ok: landed,
        detail: if landed {
            String::new()
        } else {
            "PE 1's buffer does not hold PE 0's data".into()
        },
        curve: (me == 0).then_some(curve),
        phases_ns: Vec::new(),
    })
}
