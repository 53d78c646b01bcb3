//! The heaps' segments at init: each PE creates one segment per heap, one exchange trades
//! every PE's heap settings and segment keys, and each PE imports every PE's segments (its
//! own included, so it reaches itself like any peer) in one call, `Device::import_segments`,
//! which the simulator answers for all its PEs at once: a loop over the peers here ran `n²`
//! times per run.
//!
//! Why the settings travel too: heaps are symmetric only if every PE has the same ones. PEs
//! whose environments differ fail together with a message that names the variables, instead
//! of importing segments that are not there or pairing different exchanges later.

use hw::{Device, Instant, MemKind, append_segment_key};

use crate::config::{
    DEFAULT_HEAP_VAR, DEVICE_HEAP_VAR, HOST_HEAP_VAR, format_size, heap_kind_name,
};
use crate::error::ShmemError;
use crate::memory::call_agreement::by_pe;
use crate::memory::heaps::Heaps;
use crate::memory::heaps::backing::next_backing;

/// What every PE must agree on: the heaps' sizes, the default heap, and the length of the
/// static data (0 where the backend shares none), which differs only if the PEs run
/// different programs.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct Settings {
    pub(super) device_bytes: u64,
    pub(super) host_bytes: u64,
    pub(super) default: MemKind,
    pub(super) static_bytes: u64,
}

/// The bytes of encoded [`Settings`]: two words, the default heap and a word.
const SETTINGS_BYTES: usize = 25;

impl Settings {
    fn of(heaps: &Heaps) -> Settings {
        let bytes = |kind| heaps.find(kind).map_or(0, |heap| heap.size_bytes());
        Settings {
            device_bytes: bytes(MemKind::Device),
            host_bytes: bytes(MemKind::Host),
            default: heaps.default_kind(),
            static_bytes: bytes(MemKind::Static),
        }
    }

    pub(super) fn encode(self) -> [u8; SETTINGS_BYTES] {
        let mut bytes = [0; SETTINGS_BYTES];
        bytes[..8].copy_from_slice(&self.device_bytes.to_le_bytes());
        bytes[8..16].copy_from_slice(&self.host_bytes.to_le_bytes());
        bytes[16] = u8::from(self.default == MemKind::Host);
        bytes[17..].copy_from_slice(&self.static_bytes.to_le_bytes());
        bytes
    }

    /// The settings at the start of `message`, if it holds some.
    pub(super) fn decode(message: &[u8]) -> Option<Settings> {
        let (device, rest) = message.split_first_chunk::<8>()?;
        let (host, rest) = rest.split_first_chunk::<8>()?;
        let (default, rest) = rest.split_first()?;
        let default = match default {
            0 => MemKind::Device,
            1 => MemKind::Host,
            _ => return None,
        };
        let (static_bytes, _) = rest.split_first_chunk::<8>()?;
        Some(Settings {
            device_bytes: u64::from_le_bytes(*device),
            host_bytes: u64::from_le_bytes(*host),
            default,
            static_bytes: u64::from_le_bytes(*static_bytes),
        })
    }

    /// The settings as the variables that make them.
    pub(super) fn describe(self) -> String {
        let statics = if self.static_bytes == 0 {
            String::new()
        } else {
            format!(
                ", {} bytes of static data (PEs must run the same program)",
                self.static_bytes
            )
        };
        format!(
            "{DEVICE_HEAP_VAR}={}, {HOST_HEAP_VAR}={}, {DEFAULT_HEAP_VAR}={}{statics}",
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
    // Why first: the static data's length is one of the settings the PEs agree on.
    let static_key = match device.share_static_data()? {
        Some((key, len_bytes)) => {
            heaps.add_static(len_bytes)?;
            Some(key)
        }
        None => None,
    };
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
            // The loop is over the heaps; static data was added above, backed whole.
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
        append_segment_key(&mut mine, &key);
    }
    if let Some(key) = static_key {
        append_segment_key(&mut mine, &key);
    }
    let all = device.exchange(&mine, deadline)?;
    // Why no loop over the PEs: whether every message starts alike is worked out once for
    // every PE holding `all`; decoded only to explain a difference.
    let same_settings = all.common_prefix_bytes() >= SETTINGS_BYTES
        && all.first().and_then(|first| first.get(..SETTINGS_BYTES))
            == Some(&mine[..SETTINGS_BYTES]);
    if !same_settings {
        let values = by_pe(all.iter().map(|m| {
            Settings::decode(m).map_or_else(|| "unreadable settings".to_owned(), Settings::describe)
        }));
        return Err(ShmemError::HeapSettingsDiffer { values });
    }
    let kinds: Vec<MemKind> = heaps.existing().map(|heap| heap.kind()).collect();
    device.import_segments(&all, SETTINGS_BYTES, &kinds)?;
    Ok(())
}
