//! Unit tests of the heap set and of the settings PEs trade at init.

use hw::MemKind;

use super::segments::Settings;
use super::*;
use crate::memory::allocator::MIN_ALIGN_BYTES;

fn access(offset: u64) -> Access {
    Access {
        offset,
        len_bytes: 8,
        align: 8,
        owner: None,
    }
}

#[test]
fn both_heaps_allocate_in_their_own_windows() {
    let config = Config::default()
        .device_heap_size(1 << 20)
        .host_heap_size(1 << 20);
    let mut heaps = Heaps::new(&config).expect("valid");
    let mut alloc = |kind| {
        heaps
            .get_mut(kind, String::new)
            .expect("exists")
            .alloc(8, MIN_ALIGN_BYTES, false)
            .expect("fits")
            .offset
    };
    let device = alloc(MemKind::Device);
    let host = alloc(MemKind::Host);
    assert_eq!((device, host), (0, space::base_of(MemKind::Host)));
    for (offset, kind) in [(device, MemKind::Device), (host, MemKind::Host)] {
        let span = heaps.check(access(offset)).expect("live");
        assert_eq!(space::locate(span.offset), (kind, 0));
    }
    assert_eq!(heaps.existing().count(), 2);
}

#[test]
fn a_missing_heap_refuses_addresses_and_requests() {
    let mut heaps = Heaps::new(&Config::default()).expect("valid");
    let host = space::base_of(MemKind::Host);
    assert!(matches!(
        heaps.check(access(host)),
        Err(ShmemError::NotInHeap { offset }) if offset == host
    ));
    assert!(matches!(
        heaps.holding_mut(host),
        Err(ShmemError::NotInHeap { .. })
    ));
    let err = heaps
        .get_mut(MemKind::Host, || "a test".to_owned())
        .expect_err("no host heap");
    let message = err.to_string();
    assert!(
        message.starts_with("a test asks for the host heap"),
        "{message}"
    );
    assert!(message.contains("set SHMEM_SYMMETRIC_SIZE"), "{message}");
}

#[test]
fn the_default_heap_must_exist() {
    let err = Heaps::new(&Config::default().default_heap(MemKind::Host)).expect_err("no host");
    let message = err.to_string();
    assert!(
        message.starts_with("SHMEM_SYMMETRIC_HEAP_DEFAULT=HOST asks for the host heap"),
        "{message}"
    );
    assert!(message.contains("SHMEM_SYMMETRIC_SIZE=1g"), "{message}");
    let err = Heaps::new(&Config::default().device_heap_size(0)).expect_err("no device");
    assert!(
        err.to_string().contains("set SHMEM_DEVICE_SYMMETRIC_SIZE"),
        "{err}"
    );
}

#[test]
fn a_heap_larger_than_its_window_names_its_variable() {
    let config = Config::default().host_heap_size(u64::MAX);
    let err = Heaps::new(&config).expect_err("too large");
    assert!(matches!(
        err,
        ShmemError::Config(ConfigError::Invalid {
            name: "SHMEM_SYMMETRIC_SIZE",
            ..
        })
    ));
    assert!(Heaps::new(&Config::default().device_heap_size(space::WINDOW_BYTES)).is_ok());
}

#[test]
fn settings_round_trip_and_name_their_variables() {
    let settings = Settings {
        device_bytes: 1 << 30,
        host_bytes: 64 << 20,
        default: MemKind::Host,
        static_bytes: 0,
    };
    let mut message = settings.encode().to_vec();
    message.extend_from_slice(b"keys follow");
    assert_eq!(Settings::decode(&message), Some(settings));
    assert_eq!(Settings::decode(&message[..16]), None);
    assert_eq!(
        settings.describe(),
        "SHMEM_DEVICE_SYMMETRIC_SIZE=1g, SHMEM_SYMMETRIC_SIZE=64m, \
         SHMEM_SYMMETRIC_HEAP_DEFAULT=HOST"
    );
    let with_statics = Settings {
        static_bytes: 8192,
        ..settings
    };
    assert_eq!(Settings::decode(&with_statics.encode()), Some(with_statics));
    assert!(
        with_statics
            .describe()
            .ends_with("8192 bytes of static data (PEs must run the same program)")
    );
}
