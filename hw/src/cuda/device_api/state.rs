//! The state a kernel of the device-side API reads: `rshmem_state_t` of the header, packed
//! byte for byte, and the sizes the header and the runtime must agree on.

/// The most PEs a kernel's state describes: `RSHMEM_MAX_PES` of the header. The state is
/// `__constant__` memory, so its arrays have a fixed length; 128 covers an NVL72 rack.
pub(crate) const MAX_PES: usize = 128;

/// Bytes of synchronisation memory per PE (`RSHMEM_SYNC_BYTES`): the header's
/// `rshmem_sync_t` (barrier and pushed-reduction epochs and a slot per PE for each, and the
/// counters of team barriers per team slot) in the first 8 KiB (it `static_assert`s so; its
/// words are named in hang reports by `super::sync_words`), then the collectives' scratch,
/// where the sum reduction's pushes land. 2 MiB is the VMM granularity of the GPUs the backend targets, so
/// the scratch takes no memory a smaller size would not.
pub(crate) const SYNC_BYTES: u64 = 2 << 20;

/// The size of `rshmem_state_t`: two `int`s, the heap size, the wait timeout, the hang
/// record's and the channel's addresses, and two arrays of addresses.
pub(crate) const STATE_BYTES: usize = 4 + 4 + 8 + 8 + 8 + 8 + 2 * 8 * MAX_PES;

/// The name of the `__constant__` state in the header.
pub(crate) const STATE_SYMBOL: &str = "rshmem_state";

/// One PE's view of the run, as its kernels see it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct State {
    pub(crate) my_pe: u32,
    /// The smallest device heap of the run, in bytes.
    pub(crate) heap_bytes: u64,
    /// How long a kernel's wait may go unsatisfied before it reports and traps; 0: forever.
    pub(crate) wait_timeout_ns: u64,
    /// The address of the PE's hang record (`super::super::watchdog`); 0: none.
    pub(crate) hang_record: u64,
    /// The address of the PE's kernel channel (`crate::cuda::remote::KernelProxy`); 0: every
    /// peer is reached by loads and stores.
    pub(crate) channel: u64,
    /// Every PE's device heap base address, by PE; 0 for a PE of another node, which kernels
    /// reach through the channel.
    pub(crate) heap_base: Vec<u64>,
    /// Every PE's synchronisation memory base address, by PE; 0 for a PE of another node.
    pub(crate) sync_base: Vec<u64>,
}

impl State {
    /// The struct's bytes as the GPU lays it out (little-endian, no padding: every field is
    /// naturally aligned at its offset).
    ///
    /// # Panics
    /// If the run has more than [`MAX_PES`] PEs or the arrays differ in length (callers
    /// check both first).
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let n_pes = self.heap_base.len();
        assert!(
            n_pes <= MAX_PES && self.sync_base.len() == n_pes,
            "state of {n_pes} PEs"
        );
        let mut bytes = Vec::with_capacity(STATE_BYTES);
        bytes.extend_from_slice(&self.my_pe.to_le_bytes());
        bytes.extend_from_slice(&(n_pes as u32).to_le_bytes());
        bytes.extend_from_slice(&self.heap_bytes.to_le_bytes());
        bytes.extend_from_slice(&self.wait_timeout_ns.to_le_bytes());
        bytes.extend_from_slice(&self.hang_record.to_le_bytes());
        bytes.extend_from_slice(&self.channel.to_le_bytes());
        for array in [&self.heap_base, &self.sync_base] {
            let padded = array.iter().copied().chain(std::iter::repeat(0));
            for address in padded.take(MAX_PES) {
                bytes.extend_from_slice(&address.to_le_bytes());
            }
        }
        bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::device_api::HEADER;

    #[test]
    fn the_header_has_the_same_sizes() {
        for line in [
            format!("#define RSHMEM_MAX_PES {MAX_PES}\n"),
            format!("#define RSHMEM_SYNC_BYTES {SYNC_BYTES}\n"),
            format!("__constant__ rshmem_state_t {STATE_SYMBOL};\n"),
        ] {
            assert!(HEADER.contains(&line), "the header lacks {line:?}");
        }
    }

    #[test]
    fn fields_sit_at_their_c_offsets() {
        let state = State {
            my_pe: 1,
            heap_bytes: 0x1000,
            wait_timeout_ns: 60_000_000_000,
            hang_record: 0xc0,
            channel: 0xd0,
            heap_base: vec![0xa0, 0xa1],
            sync_base: vec![0xb0, 0xb1],
        };
        let bytes = state.to_bytes();
        assert_eq!(bytes.len(), STATE_BYTES);
        let word =
            |offset: usize| u64::from_le_bytes(bytes[offset..offset + 8].try_into().unwrap());
        assert_eq!(bytes[0..8], [1, 0, 0, 0, 2, 0, 0, 0], "my_pe, n_pes");
        assert_eq!(word(8), 0x1000, "heap_bytes");
        assert_eq!(word(16), 60_000_000_000, "wait_timeout_ns");
        assert_eq!(word(24), 0xc0, "hang_record");
        assert_eq!(word(32), 0xd0, "channel");
        assert_eq!((word(40), word(48), word(56)), (0xa0, 0xa1, 0), "heap_base");
        let sync = 40 + 8 * MAX_PES;
        assert_eq!(
            (word(sync), word(sync + 8), word(sync + 16)),
            (0xb0, 0xb1, 0)
        );
    }
}
