//! The exchange of a run whose PEs are on the network path, over the network instead of the
//! launcher: each PE puts its bytes into a slot of every peer's exchange region, then sets
//! the slot's round number there with an atomic; a PE has every contribution once each slot
//! shows the round.
//!
//! Why: the launcher's exchanges (a PMIx fence) cross Slurm's daemons once the job spans
//! nodes, which cost tens of milliseconds each here (docs/multi-node.md); the runtime agrees on
//! every `shmem_malloc` and `shmem_free` through an exchange, so a program that allocates
//! often spent most of its time there.
//!
//! Why two slots per source: a PE that has every contribution of round `r` goes on to round
//! `r + 1` and writes into its peers' slots of that round's parity while they may still read
//! round `r`'s; it cannot reach round `r + 2` before every peer gave its `r + 1`, which each
//! gives only after it read round `r`.
//!
//! A contribution larger than a slot is announced by its length alone, and then every PE,
//! having seen every header, takes the launcher's exchange for that round instead.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::network::{LauncherAllgather, Network};
use crate::ofi::RemoteKey;
use crate::types::Pe;

/// The bytes of a contribution a slot carries; a larger one goes through the launcher.
const SLOT_PAYLOAD_BYTES: usize = 4096;

/// A slot: the round number (set last, by an atomic), the length, the bytes.
const SLOT_BYTES: usize = 16 + SLOT_PAYLOAD_BYTES;

/// The most PEs whose exchanges go over the network: each PE sends a put and an atomic to
/// every peer and waits for each, which beyond this costs more than a launcher's tree.
pub(crate) const MAX_PES: usize = 64;

/// How long the first round, which connects every pair, may take.
const WARM_UP: Duration = Duration::from_secs(60);

/// How often a waiter looks at its slots once it stopped spinning.
const NAP: Duration = Duration::from_micros(20);

/// What an exchange over the network found.
pub(crate) enum Gathered {
    /// Every PE's bytes, in PE order.
    All(Vec<Vec<u8>>),
    /// Some PE's bytes did not fit a slot: every PE takes the launcher's exchange instead.
    TooLarge,
}

/// This PE's exchange region and every PE's key of theirs.
pub(crate) struct NetworkAllgather {
    me: Pe,
    /// Two slots per PE, as `u64` words so that the round numbers are aligned.
    region: Box<[AtomicU64]>,
    keys: Vec<RemoteKey>,
    /// The last round this PE finished.
    round: Mutex<u64>,
}

impl std::fmt::Debug for NetworkAllgather {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NetworkAllgather")
            .field("me", &self.me)
            .finish_non_exhaustive()
    }
}

impl NetworkAllgather {
    /// Registers PE `me`'s region with `network` and trades keys with every PE through
    /// `allgather` (collective).
    ///
    /// # Errors
    /// A message saying what failed: the registration, the exchange, a malformed key.
    pub(crate) fn open(
        me: Pe,
        n_pes: usize,
        network: &Network,
        allgather: LauncherAllgather<'_>,
    ) -> Result<NetworkAllgather, String> {
        let words = 2 * n_pes * SLOT_BYTES / 8;
        let region: Box<[AtomicU64]> = (0..words).map(|_| AtomicU64::new(0)).collect();
        // SAFETY: the region lives as long as this value, which its owner drops before the
        // network (`Network`'s field order); peers write it only with puts and atomics, and
        // this PE reads it with atomics and copies after a round number's Acquire load.
        let keys = unsafe {
            network.share_region(region.as_ptr() as *mut u8, words * 8, allgather, "exchange")
        }?;
        let gather = NetworkAllgather {
            me,
            region,
            keys,
            round: Mutex::new(0),
        };
        // Why a first round now: libfabric connects each pair on its first operation, which
        // across nodes can take longer than a program's short wait timeout gives its first
        // exchange (RSHMEM_WAIT_TIMEOUT_MS); joining has a deadline of its own for that.
        gather.exchange(network, &[], Instant::now() + WARM_UP, &|sleep| sleep())?;
        Ok(gather)
    }

    /// The byte offset of source `pe`'s slot of `parity`.
    fn slot(&self, parity: u64, pe: Pe) -> usize {
        (parity as usize * self.keys.len() + pe.idx()) * SLOT_BYTES
    }

    /// The word at byte `offset` of this PE's region.
    fn word(&self, offset: usize) -> &AtomicU64 {
        &self.region[offset / 8]
    }

    /// Gives `mine` to every PE over `network` and gathers theirs, waiting until `until`
    /// (sleeping inside `around_sleep` between looks once it stopped spinning).
    ///
    /// # Errors
    /// A message naming the PEs whose bytes had not arrived by `until`, or the network's
    /// error for a peer that is gone.
    pub(crate) fn exchange(
        &self,
        network: &Network,
        mine: &[u8],
        until: Instant,
        around_sleep: &dyn Fn(&mut dyn FnMut()),
    ) -> Result<Gathered, String> {
        let mut round = self.round.lock().unwrap_or_else(|e| e.into_inner());
        let r = *round + 1;
        let parity = r % 2;
        let mut slot = Vec::with_capacity(8 + mine.len().min(SLOT_PAYLOAD_BYTES));
        slot.extend_from_slice(&(mine.len() as u64).to_le_bytes());
        if mine.len() <= SLOT_PAYLOAD_BYTES {
            slot.extend_from_slice(mine);
        }
        let n = self.keys.len();
        let offset = self.slot(parity, self.me) as u64;
        for peer in (0..n as u32).map(Pe).filter(|&p| p != self.me) {
            network
                .put_and_ring(
                    peer,
                    self.keys[peer.idx()],
                    (offset + 8, &slot),
                    (offset, r),
                )
                .map_err(|e| e.to_string())?;
        }
        let mut spins = 0u32;
        loop {
            let missing: Vec<Pe> = (0..n as u32)
                .map(Pe)
                .filter(|&p| p != self.me)
                .filter(|&p| self.word(self.slot(parity, p)).load(Ordering::Acquire) != r)
                .collect();
            if missing.is_empty() {
                break;
            }
            if Instant::now() >= until {
                return Err(format!(
                    "the exchange over the network: no contribution of round {r} yet from {}",
                    crate::common::paths::list(&missing)
                ));
            }
            network.progress();
            spins += 1;
            if spins < 256 {
                std::thread::yield_now();
            } else {
                around_sleep(&mut || std::thread::sleep(NAP));
            }
        }
        *round = r;
        let mut all = Vec::with_capacity(n);
        for pe in (0..n as u32).map(Pe) {
            if pe == self.me {
                all.push(mine.to_vec());
                continue;
            }
            let at = self.slot(parity, pe);
            let len = self.word(at + 8).load(Ordering::Relaxed) as usize;
            if len > SLOT_PAYLOAD_BYTES {
                return Ok(Gathered::TooLarge);
            }
            let mut bytes = vec![0u8; len];
            // SAFETY: `len` bytes of the slot's payload, inside the region; the source wrote
            // them before the round number this PE read with Acquire, and writes the slot
            // again only in round `r + 2`, after this PE's contribution to `r + 1`.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    (self.region.as_ptr() as *const u8).add(at + 16),
                    bytes.as_mut_ptr(),
                    len,
                );
            }
            all.push(bytes);
        }
        if mine.len() > SLOT_PAYLOAD_BYTES {
            return Ok(Gathered::TooLarge);
        }
        Ok(Gathered::All(all))
    }
}
