//! Parsing tests. They never touch the process environment: variables come from a map.

use std::collections::BTreeMap;

use super::*;

/// Resolves a configuration from `vars` alone.
fn from_vars(vars: &[(&str, &str)]) -> Result<Config, ConfigError> {
    let map: BTreeMap<&str, &str> = vars.iter().copied().collect();
    Config::from_lookup(|name| map.get(name).map(|v| (*v).to_owned()))
}

#[test]
fn unset_variables_keep_defaults() {
    assert_eq!(from_vars(&[]), Ok(Config::default()));
}

#[test]
fn table_defaults_match_config_default() {
    let vars: Vec<(&str, &str)> = table().iter().map(|v| (v.name, v.default)).collect();
    assert_eq!(from_vars(&vars), Ok(Config::default()));
    for (var, value) in Config::default().resolved() {
        assert_eq!(value, var.default, "{}", var.name);
    }
}

#[test]
fn sizes_accept_suffixes() {
    for (raw, want) in [
        ("0", 0),
        ("4096", 4096),
        ("512b", 512),
        ("1k", 1 << 10),
        ("512m", 512 << 20),
        ("1G", 1 << 30),
        ("2GiB", 2 << 30),
        ("4mb", 4 << 20),
        (" 3T ", 3 << 40),
        ("16kIB", 16 << 10),
    ] {
        assert_eq!(parse_size(raw), Some(want), "{raw:?}");
    }
}

#[test]
fn sizes_reject_garbage() {
    for raw in [
        "",
        "b",
        "g",
        "ib",
        "2ib",
        "1.5g",
        "-1",
        "1 g",
        "12bb",
        "0x10",
        "1p",
        "99999999999t",
    ] {
        assert_eq!(parse_size(raw), None, "{raw:?}");
    }
}

#[test]
fn sizes_format_with_the_largest_exact_suffix() {
    for (bytes, want) in [
        (0, "0"),
        (1536, "1536"),
        (1 << 30, "1g"),
        (3 << 20, "3m"),
        (5 << 40, "5t"),
    ] {
        assert_eq!(format_size(bytes), want);
        assert_eq!(parse_size(want), Some(bytes));
    }
}

#[test]
fn every_variable_is_applied() {
    let config = from_vars(&[
        ("SHMEM_SYMMETRIC_SIZE", "2g"),
        ("SHMEM_DEVICE_SYMMETRIC_SIZE", "512M"),
        ("SHMEM_SYMMETRIC_HEAP_DEFAULT", "host"),
        ("RSHMEM_WAIT_TIMEOUT_MS", "250"),
        ("SHMEM_INFO", "yes"),
    ]);
    let want = Config::default()
        .host_heap_size(2 << 30)
        .device_heap_size(512 << 20)
        .default_heap(MemKind::Host)
        .wait_timeout_ms(250)
        .info(true);
    assert_eq!(config, Ok(want));
    assert_eq!(from_vars(&[("SHMEM_INFO", "")]).map(|c| c.info), Ok(true));
    assert_eq!(
        from_vars(&[("SHMEM_INFO", "Off")]).map(|c| c.info),
        Ok(false)
    );
}

#[test]
fn malformed_values_name_variable_value_and_example() {
    for (name, raw) in [
        ("SHMEM_SYMMETRIC_SIZE", "lots"),
        ("SHMEM_DEVICE_SYMMETRIC_SIZE", "1.5g"),
        ("SHMEM_SYMMETRIC_HEAP_DEFAULT", "GPU"),
        ("RSHMEM_WAIT_TIMEOUT_MS", "-5"),
        ("SHMEM_INFO", "maybe"),
    ] {
        let err = from_vars(&[(name, raw)]).expect_err(name);
        let message = err.to_string();
        assert!(message.contains(name), "{message}");
        assert!(message.contains(raw), "{message}");
        assert!(message.contains("e.g."), "{message}");
    }
}

#[test]
fn the_defaults_are_a_device_heap_only() {
    let config = Config::default();
    assert_eq!(config.heap_bytes(MemKind::Device), 1 << 30);
    assert_eq!(config.heap_bytes(MemKind::Host), 0);
    assert_eq!(config.default_heap, MemKind::Device);
}

#[test]
fn heap_kinds_parse_in_any_case_and_print_upper_case() {
    for (raw, want) in [
        ("HOST", MemKind::Host),
        ("host", MemKind::Host),
        (" Device ", MemKind::Device),
    ] {
        assert_eq!(parse_heap_kind(raw), Some(want), "{raw:?}");
    }
    for raw in ["", "gpu", "HOSTS", "cpu"] {
        assert_eq!(parse_heap_kind(raw), None, "{raw:?}");
    }
    let host = Config::default().default_heap(MemKind::Host);
    let resolved = host.resolved();
    let (_, value) = resolved
        .iter()
        .find(|(var, _)| var.name == "SHMEM_SYMMETRIC_HEAP_DEFAULT")
        .expect("in the table");
    assert_eq!(value, "HOST");
}

#[test]
fn every_variable_has_a_name_a_default_and_a_meaning() {
    let names: Vec<&str> = table().iter().map(|v| v.name).collect();
    for name in [
        "SHMEM_SYMMETRIC_SIZE",
        "SHMEM_DEVICE_SYMMETRIC_SIZE",
        "SHMEM_SYMMETRIC_HEAP_DEFAULT",
        "RSHMEM_WAIT_TIMEOUT_MS",
        "RSHMEM_TEAMS_MAX",
        "RSHMEM_CONTEXTS_MAX",
        "SHMEM_INFO",
        "NVSHMEM_SYMMETRIC_SIZE",
        "NVSHMEM_MAX_MEMORY_PER_GPU",
    ] {
        assert!(names.contains(&name), "{name} is missing from {names:?}");
    }
    let mut sorted = names.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), names.len(), "a name appears twice: {names:?}");
    for var in table() {
        assert!(
            !var.default.is_empty() && !var.doc.is_empty(),
            "{}",
            var.name
        );
    }
}

#[test]
fn nvshmem_s_limit_sizes_the_heap_malloc_uses() {
    let device = from_vars(&[("NVSHMEM_MAX_MEMORY_PER_GPU", "4g")]).expect("valid");
    assert_eq!(device.heap_bytes(MemKind::Device), 4 << 30);
    assert_eq!(device.nvshmem_max_memory_bytes, 4 << 30);
    let host = from_vars(&[
        ("SHMEM_SYMMETRIC_HEAP_DEFAULT", "HOST"),
        ("SHMEM_SYMMETRIC_SIZE", "1g"),
        ("NVSHMEM_MAX_MEMORY_PER_GPU", "4g"),
    ])
    .expect("valid");
    // The host heap's own variable is set, so it wins; the device heap is not malloc's.
    assert_eq!(host.heap_bytes(MemKind::Host), 1 << 30);
    assert_eq!(host.heap_bytes(MemKind::Device), 1 << 30);
    let host = from_vars(&[
        ("SHMEM_SYMMETRIC_HEAP_DEFAULT", "host"),
        ("NVSHMEM_MAX_MEMORY_PER_GPU", "4g"),
    ])
    .expect("valid");
    assert_eq!(host.heap_bytes(MemKind::Host), 4 << 30);
}

#[test]
fn nvshmem_s_symmetric_size_only_raises_the_limit() {
    let size = |vars: &[(&str, &str)]| from_vars(vars).expect("valid").heap_bytes(MemKind::Device);
    assert_eq!(size(&[("NVSHMEM_SYMMETRIC_SIZE", "2g")]), 2 << 30);
    assert_eq!(size(&[("NVSHMEM_SYMMETRIC_SIZE", "512m")]), 1 << 30);
    let both = [
        ("NVSHMEM_MAX_MEMORY_PER_GPU", "4g"),
        ("NVSHMEM_SYMMETRIC_SIZE", "8g"),
    ];
    assert_eq!(size(&both), 8 << 30);
    let both = [
        ("NVSHMEM_MAX_MEMORY_PER_GPU", "4g"),
        ("NVSHMEM_SYMMETRIC_SIZE", "1g"),
    ];
    assert_eq!(size(&both), 4 << 30);
}

#[test]
fn the_heap_s_own_variable_wins_over_nvshmem_s_names() {
    let config = from_vars(&[
        ("SHMEM_DEVICE_SYMMETRIC_SIZE", "256m"),
        ("NVSHMEM_MAX_MEMORY_PER_GPU", "4g"),
        ("NVSHMEM_SYMMETRIC_SIZE", "2g"),
    ])
    .expect("valid");
    assert_eq!(config.heap_bytes(MemKind::Device), 256 << 20);
}

#[test]
fn nvshmem_s_names_apply_over_a_library_s_own_defaults() {
    // What libshmem does: its defaults first, then the environment, which sets only
    // NVSHMEM's name; the defaults' value of the heap's variable does not count as set.
    let defaults = Config::default()
        .with_lookup(|name| (name == "SHMEM_DEVICE_SYMMETRIC_SIZE").then(|| "128g".to_owned()))
        .expect("valid");
    let env = defaults
        .clone()
        .with_lookup(|name| (name == "NVSHMEM_MAX_MEMORY_PER_GPU").then(|| "8g".to_owned()))
        .expect("valid");
    assert_eq!(defaults.heap_bytes(MemKind::Device), 128 << 30);
    assert_eq!(env.heap_bytes(MemKind::Device), 8 << 30);
}

#[test]
fn a_malformed_nvshmem_size_names_the_variable() {
    let err = from_vars(&[("NVSHMEM_SYMMETRIC_SIZE", "3.1M")]).expect_err("a fraction");
    let message = err.to_string();
    assert!(message.contains("NVSHMEM_SYMMETRIC_SIZE"), "{message}");
    assert!(
        message.contains("e.g. NVSHMEM_SYMMETRIC_SIZE=2g"),
        "{message}"
    );
}
