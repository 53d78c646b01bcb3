//! The heaps' segments at init: each PE creates one segment per heap, one exchange trades
//! every PE's heap settings and segment keys, and each PE imports every PE's segments (its
//! own included, so it reaches itself like any peer).
//!
//! Why the settings travel too: heaps are symmetric only if every PE has the same ones. PEs
//! whose environments differ fail together with a message that names the variables, instead
//! of importing segments that are not there or pairing different exchanges later.

use hw::{Device, DeviceError, Instant, MemKind, Pe, SegmentKey};

use crate::config::{
    DEFAULT_HEAP_VAR, DEVICE_HEAP_VAR, HOST_HEAP_VAR, format_size, heap_kind_name,
};
use crate::error::ShmemError;
use crate::memory::call_agreement::by_pe;
use crate::memory::heaps::Heaps;
use crate::memory::heaps::backing::next_backing;

/// What every PE must agree on: the heaps' sizes and the default heap.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct Settings {
    pub(super) device_bytes: u64,
    pub(super) host_bytes: u64,
    pub(super) default: MemKind,
}

/// The bytes of encoded [`Settings`]: two words and the default heap.
const SETTINGS_BYTES: usize = 17;
/// The bytes of a key's length, before the key.
const KEY_LEN_BYTES: usize = 8;

impl Settings {
    fn of(heaps: &Heaps) -> Settings {
        let bytes = |kind| heaps.find(kind).map_or(0, |heap| heap.size_bytes());
        Settings {
            device_bytes: bytes(MemKind::Device),
            host_bytes: bytes(MemKind::Host),
            default: heaps.default_kind(),
        }
    }

    pub(super) fn encode(self) -> [u8; SETTINGS_BYTES] {
        let mut bytes = [0; SETTINGS_BYTES];
        bytes[..8].copy_from_slice(&self.device_bytes.to_le_bytes());
        bytes[8..16].copy_from_slice(&self.host_bytes.to_le_bytes());
        bytes[16] = u8::from(self.default == MemKind::Host);
        bytes
    }

    /// The settings at the start of `message`, if it holds some.
    pub(super) fn decode(message: &[u8]) -> Option<Settings> {
        let (device, rest) = message.split_first_chunk::<8>()?;
        let (host, rest) = rest.split_first_chunk::<8>()?;
        let default = match rest.first()? {
            0 => MemKind::Device,
            1 => MemKind::Host,
            _ => return None,
        };
        Some(Settings {
            device_bytes: u64::from_le_bytes(*device),
            host_bytes: u64::from_le_bytes(*host),
            default,
        })
    }

    /// The settings as the variables that make them.
    pub(super) fn describe(self) -> String {
        format!(
            "{DEVICE_HEAP_VAR}={}, {HOST_HEAP_VAR}={}, {DEFAULT_HEAP_VAR}={}",
            format_size(self.device_bytes),
            format_size(self.host_bytes),
            heap_kind_name(self.default)
        )
    }
}

/// Creates this PE's segment of every heap in `heaps`, trades settings and keys with every
/// PE, and imports every PE's segments. The device heap's segment grows on demand
/// (`backing.rs`): it is backed now as far as the allocations already made need, in steps of
/// `GROWTH_STEP_BYTES`; the host heap's is backed whole.
///
/// # Errors
/// [`ShmemError::HeapSegment`] naming the heap's variable if the device refuses its memory;
/// [`ShmemError::Queue`] if a PE never arrives; [`ShmemError::HeapSettingsDiffer`] on every
/// PE if the PEs' settings differ; [`ShmemError::Device`] if a segment cannot be imported.
pub(crate) fn share_segments<D: Device>(
    device: &D,
    heaps: &mut Heaps,
    deadline: Instant,
) -> Result<(), ShmemError> {
    let settings = Settings::of(heaps);
    let mut mine = settings.encode().to_vec();
    for kind in [MemKind::Device, MemKind::Host] {
        let Some(heap) = heaps.find_mut(kind) else {
            continue;
        };
        let heap_bytes = heap.size_bytes();
        let backed_bytes = match kind {
            MemKind::Device => {
                next_backing(heap.high_water_bytes().max(1), 0, heap_bytes).unwrap_or(0)
            }
            // The loop is over heaps; static data is none and never comes here.
            MemKind::Host | MemKind::Static => heap_bytes,
        };
        let refused = |source| ShmemError::HeapSegment {
            kind,
            heap_bytes,
            source,
        };
        let key = match kind {
            MemKind::Device => device.create_growable_segment(kind, heap_bytes, backed_bytes),
            MemKind::Host | MemKind::Static => device.create_segment(kind, heap_bytes),
        }
        .map_err(refused)?;
        heap.set_backed_bytes(backed_bytes);
        mine.extend_from_slice(&(key.0.len() as u64).to_le_bytes());
        mine.extend_from_slice(&key.0);
    }
    let all = device.exchange(&mine, deadline)?;
    let theirs: Vec<Option<Settings>> = all.iter().map(|m| Settings::decode(m)).collect();
    if theirs.iter().any(|t| *t != Some(settings)) {
        let values = by_pe(
            theirs
                .into_iter()
                .map(|t| t.map_or_else(|| "unreadable settings".to_owned(), Settings::describe)),
        );
        return Err(ShmemError::HeapSettingsDiffer { values });
    }
    for (peer, message) in (0..).zip(&all) {
        let mut keys = message.get(SETTINGS_BYTES..).unwrap_or(&[]);
        for kind in heaps.existing().map(|heap| heap.kind()) {
            let key = take_key(&mut keys).ok_or_else(|| DeviceError::Import {
                peer: Pe(peer),
                kind,
                reason: "the exchanged key is truncated".into(),
            })?;
            device.import_segment(Pe(peer), kind, &SegmentKey(key.to_vec()))?;
        }
    }
    Ok(())
}

/// The next length-prefixed key of `keys`, which then starts after it.
fn take_key<'a>(keys: &mut &'a [u8]) -> Option<&'a [u8]> {
    let (len, rest) = keys.split_first_chunk::<KEY_LEN_BYTES>()?;
    let (key, rest) = rest.split_at_checked(usize::try_from(u64::from_le_bytes(*len)).ok()?)?;
    *keys = rest;
    Some(key)
}
