//! Runtime configuration: the one table of environment variables, and the only code that reads
//! the process environment.
//!
//! Every knob is a row of [`table`] (name, type, default, meaning), so `rshmem info`, the
//! `SHMEM_INFO` log and the parser cannot drift apart.

#[cfg(test)]
mod tests;

use hw::MemKind;

use crate::TRACING_TARGET;

/// The variable that sizes the host heap (docs/heaps.md).
pub(crate) const HOST_HEAP_VAR: &str = "SHMEM_SYMMETRIC_SIZE";
/// The variable that sizes the device heap (docs/heaps.md).
pub(crate) const DEVICE_HEAP_VAR: &str = "SHMEM_DEVICE_SYMMETRIC_SIZE";
/// The variable that picks the heap `malloc` uses (docs/heaps.md).
pub(crate) const DEFAULT_HEAP_VAR: &str = "SHMEM_SYMMETRIC_HEAP_DEFAULT";
/// NVSHMEM's limit of its growing symmetric heap, read as the limit of the heap `malloc` uses
/// when that heap's own variable is unset (docs/heaps.md).
pub(crate) const NVSHMEM_MAX_VAR: &str = "NVSHMEM_MAX_MEMORY_PER_GPU";
/// NVSHMEM's size of its symmetric heap, read as the least the heap `malloc` uses may hold
/// when that heap's own variable is unset (docs/heaps.md).
pub(crate) const NVSHMEM_SIZE_VAR: &str = "NVSHMEM_SYMMETRIC_SIZE";

/// The variable that sizes the heap of `kind`, for messages that tell the user what to set.
pub(crate) fn heap_size_var(kind: MemKind) -> &'static str {
    match kind {
        MemKind::Host => HOST_HEAP_VAR,
        MemKind::Device => DEVICE_HEAP_VAR,
        // The program's static data is sized by the program, not by a variable.
        MemKind::Static => "(none: the program's static data is as large as the program makes it)",
    }
}

/// The name of a heap kind as [`DEFAULT_HEAP_VAR`] spells it.
pub(crate) fn heap_kind_name(kind: MemKind) -> &'static str {
    match kind {
        MemKind::Host => "HOST",
        MemKind::Device => "DEVICE",
        MemKind::Static => "STATIC",
    }
}

/// The type of a configuration variable's value.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum VarKind {
    /// A size in bytes: digits with an optional suffix k, m, g or t (powers of 1024,
    /// case-insensitive), itself optionally followed by `b` or `ib` ("512m", "1G", "2GiB").
    Size,
    /// An unsigned 64-bit integer.
    U64,
    /// A boolean: `1`, `true`, `yes`, `on`, `y` or empty for true; `0`, `false`, `no`, `off`, `n`
    /// for false (case-insensitive).
    Bool,
    /// A heap kind: `HOST` or `DEVICE` (case-insensitive).
    Heap,
}

impl VarKind {
    /// The type's name, for tables.
    pub fn name(self) -> &'static str {
        match self {
            VarKind::Size => "size",
            VarKind::U64 => "u64",
            VarKind::Bool => "bool",
            VarKind::Heap => "heap",
        }
    }

    /// What a valid value looks like, for error messages.
    fn expected(self) -> &'static str {
        match self {
            VarKind::Size => {
                "a size in bytes below 16 EiB, with an optional k/m/g/t suffix (powers of 1024)"
            }
            VarKind::U64 => "an unsigned integer below 2^64",
            VarKind::Bool => "a boolean (1/0, true/false, yes/no, on/off)",
            VarKind::Heap => "a heap kind, HOST or DEVICE",
        }
    }

    /// A valid value, for error messages.
    fn example(self) -> &'static str {
        match self {
            VarKind::Size => "2g",
            VarKind::U64 => "60000",
            VarKind::Bool => "1",
            VarKind::Heap => "DEVICE",
        }
    }
}

/// How a variable reads and writes its field of [`Config`]. Non-capturing closures, so the
/// table stays plain static data.
#[derive(Clone, Copy, Debug)]
enum Field {
    Size {
        get: fn(&Config) -> u64,
        set: fn(&mut Config, u64),
    },
    U64 {
        get: fn(&Config) -> u64,
        set: fn(&mut Config, u64),
    },
    Bool {
        get: fn(&Config) -> bool,
        set: fn(&mut Config, bool),
    },
    Heap {
        get: fn(&Config) -> MemKind,
        set: fn(&mut Config, MemKind),
    },
}

/// One environment variable the runtime reads.
#[derive(Debug)]
pub struct ConfigVar {
    /// The variable's name.
    pub name: &'static str,
    /// Its default, written as a user would write it.
    pub default: &'static str,
    /// What it does, in one line.
    pub doc: &'static str,
    field: Field,
}

impl ConfigVar {
    /// The type of the variable's value.
    pub fn kind(&self) -> VarKind {
        match self.field {
            Field::Size { .. } => VarKind::Size,
            Field::U64 { .. } => VarKind::U64,
            Field::Bool { .. } => VarKind::Bool,
            Field::Heap { .. } => VarKind::Heap,
        }
    }

    /// The variable's value in `config`, written as a user would write it.
    pub fn value_in(&self, config: &Config) -> String {
        match self.field {
            Field::Size { get, .. } => format_size(get(config)),
            Field::U64 { get, .. } => get(config).to_string(),
            Field::Bool { get, .. } => u8::from(get(config)).to_string(),
            Field::Heap { get, .. } => heap_kind_name(get(config)).to_owned(),
        }
    }

    /// Parses `raw` and stores it in `config`.
    fn apply(&self, config: &mut Config, raw: &str) -> Result<(), ConfigError> {
        let invalid = || ConfigError::Invalid {
            name: self.name,
            value: raw.to_owned(),
            expected: self.kind().expected(),
            example: self.kind().example(),
        };
        match self.field {
            Field::Size { set, .. } => set(config, parse_size(raw).ok_or_else(invalid)?),
            Field::U64 { set, .. } => set(config, raw.trim().parse().map_err(|_| invalid())?),
            Field::Bool { set, .. } => set(config, parse_bool(raw).ok_or_else(invalid)?),
            Field::Heap { set, .. } => set(config, parse_heap_kind(raw).ok_or_else(invalid)?),
        }
        Ok(())
    }
}

static TABLE: [ConfigVar; 9] = [
    ConfigVar {
        name: HOST_HEAP_VAR,
        default: "0",
        doc: "size of each PE's host heap (pinned host memory); 0: no host heap",
        field: Field::Size {
            get: |c| c.host_heap_bytes,
            set: |c, v| c.host_heap_bytes = v,
        },
    },
    ConfigVar {
        name: DEVICE_HEAP_VAR,
        default: "1g",
        doc: "size of each PE's device heap (GPU memory, maybe mapped lazily); 0: no device heap",
        field: Field::Size {
            get: |c| c.device_heap_bytes,
            set: |c, v| c.device_heap_bytes = v,
        },
    },
    ConfigVar {
        name: DEFAULT_HEAP_VAR,
        default: "DEVICE",
        doc: "the heap malloc, calloc and align use, HOST or DEVICE; it must exist",
        field: Field::Heap {
            get: |c| c.default_heap,
            set: |c, v| c.default_heap = v,
        },
    },
    ConfigVar {
        name: NVSHMEM_MAX_VAR,
        default: "0",
        doc: "NVSHMEM's name: the limit of the heap malloc uses, unless that heap's variable \
              is set; 0: unset",
        field: Field::Size {
            get: |c| c.nvshmem_max_memory_bytes,
            set: |c, v| c.nvshmem_max_memory_bytes = v,
        },
    },
    ConfigVar {
        name: NVSHMEM_SIZE_VAR,
        default: "0",
        doc: "NVSHMEM's name: the least the heap malloc uses may hold (raises its limit), \
              unless that heap's variable is set; 0: unset",
        field: Field::Size {
            get: |c| c.nvshmem_symmetric_bytes,
            set: |c, v| c.nvshmem_symmetric_bytes = v,
        },
    },
    ConfigVar {
        name: "RSHMEM_WAIT_TIMEOUT_MS",
        default: "60000",
        doc: "deadline of every blocking wait in the backend's clock (virtual time on the simulator)",
        field: Field::U64 {
            get: |c| c.wait_timeout_ms,
            set: |c, v| c.wait_timeout_ms = v,
        },
    },
    ConfigVar {
        name: "RSHMEM_TEAMS_MAX",
        default: "16",
        doc: "team slots each PE reserves in the default heap, 3 predefined included (3 to 64)",
        field: Field::U64 {
            get: |c| c.teams_max.into(),
            set: |c, v| c.teams_max = u32::try_from(v).unwrap_or(u32::MAX),
        },
    },
    ConfigVar {
        name: "RSHMEM_CONTEXTS_MAX",
        default: "32",
        doc: "contexts at once on each predefined team, the default context included",
        field: Field::U64 {
            get: |c| c.contexts_max.into(),
            set: |c, v| c.contexts_max = u32::try_from(v).unwrap_or(u32::MAX),
        },
    },
    ConfigVar {
        name: "SHMEM_INFO",
        default: "0",
        doc: "log the resolved configuration table at init (tracing; rshmem run prints it)",
        field: Field::Bool {
            get: |c| c.info,
            set: |c, v| c.info = v,
        },
    },
];

/// Every environment variable the runtime reads, in a fixed order.
pub fn table() -> &'static [ConfigVar] {
    &TABLE
}

/// A configuration value that cannot be used.
#[derive(Clone, PartialEq, Eq, Debug, thiserror::Error)]
pub enum ConfigError {
    /// A variable's value does not parse.
    #[error("invalid {name}={value:?}: expected {expected}, e.g. {name}={example}")]
    Invalid {
        /// The variable.
        name: &'static str,
        /// The value it had.
        value: String,
        /// What a valid value looks like.
        expected: &'static str,
        /// A valid value.
        example: &'static str,
    },
}

/// The resolved configuration of a run.
///
/// Built from the environment with [`Config::from_env`], or from defaults with the builder
/// setters (tests and embedders that do not want the environment to matter).
#[derive(Clone, PartialEq, Eq, Debug)]
#[non_exhaustive]
pub struct Config {
    /// The size of each PE's host heap in bytes, 0 for none (`SHMEM_SYMMETRIC_SIZE`).
    pub host_heap_bytes: u64,
    /// The size of each PE's device heap in bytes, 0 for none
    /// (`SHMEM_DEVICE_SYMMETRIC_SIZE`).
    pub device_heap_bytes: u64,
    /// The heap `malloc` uses (`SHMEM_SYMMETRIC_HEAP_DEFAULT`).
    pub default_heap: MemKind,
    /// NVSHMEM's limit of its symmetric heap in bytes, 0 when unset
    /// (`NVSHMEM_MAX_MEMORY_PER_GPU`); already applied to the default heap's size.
    pub nvshmem_max_memory_bytes: u64,
    /// NVSHMEM's size of its symmetric heap in bytes, 0 when unset (`NVSHMEM_SYMMETRIC_SIZE`);
    /// already applied to the default heap's size.
    pub nvshmem_symmetric_bytes: u64,
    /// The deadline of every blocking wait, in milliseconds of the backend's clock
    /// (`RSHMEM_WAIT_TIMEOUT_MS`).
    pub wait_timeout_ms: u64,
    /// Whether init logs the resolved table (`SHMEM_INFO`).
    pub info: bool,
    /// Team slots each PE reserves, predefined teams included (`RSHMEM_TEAMS_MAX`).
    pub teams_max: u32,
    /// Contexts at once on each predefined team, the default included
    /// (`RSHMEM_CONTEXTS_MAX`).
    pub contexts_max: u32,
}

impl Default for Config {
    fn default() -> Self {
        // Why no host heap and a 1 GiB device heap: rshmem is GPU-centric, so code written
        // for it keeps using GPU memory (the multi-heap proposal's goal 2), and a host heap
        // costs pinned memory that CUDA multi-process runs cannot share yet; docs/heaps.md.
        Config {
            host_heap_bytes: 0,
            device_heap_bytes: 1 << 30,
            default_heap: MemKind::Device,
            nvshmem_max_memory_bytes: 0,
            nvshmem_symmetric_bytes: 0,
            wait_timeout_ms: 60_000,
            info: false,
            teams_max: 16,
            contexts_max: 32,
        }
    }
}

impl Config {
    /// Reads every variable of [`table`] from the process environment; unset ones keep their
    /// defaults.
    ///
    /// # Errors
    /// [`ConfigError::Invalid`] naming the first variable whose value does not parse
    /// (a value that is not Unicode never parses).
    pub fn from_env() -> Result<Config, ConfigError> {
        Config::from_lookup(|name| match std::env::var(name) {
            Ok(value) => Some(value),
            Err(std::env::VarError::NotPresent) => None,
            // Why: a non-Unicode value is an error the user must see, not an unset variable.
            Err(std::env::VarError::NotUnicode(raw)) => Some(raw.to_string_lossy().into_owned()),
        })
    }

    /// Like [`Config::from_env`], but reads variables through `lookup` (a name to its value,
    /// `None` when unset), for tests and launchers that carry the environment themselves.
    ///
    /// # Errors
    /// [`ConfigError::Invalid`] naming the first variable whose value does not parse.
    pub fn from_lookup(lookup: impl FnMut(&str) -> Option<String>) -> Result<Config, ConfigError> {
        Config::default().with_lookup(lookup)
    }

    /// This configuration with the variables `lookup` sets (a name to its value, `None` when
    /// unset) applied over it: how a library with defaults of its own reads the environment.
    ///
    /// NVSHMEM's names size the heap `malloc` uses, which is NVSHMEM's symmetric heap, when
    /// `lookup` does not set that heap's own variable: `NVSHMEM_MAX_MEMORY_PER_GPU` is its
    /// limit, and `NVSHMEM_SYMMETRIC_SIZE` raises the limit to at least its value (NVSHMEM
    /// maps that much at start and grows past it), so a program that ran under NVSHMEM with
    /// either set gets a heap at least as large.
    ///
    /// # Errors
    /// [`ConfigError::Invalid`] naming the first variable whose value does not parse.
    pub fn with_lookup(
        mut self,
        mut lookup: impl FnMut(&str) -> Option<String>,
    ) -> Result<Config, ConfigError> {
        let mut set = Vec::new();
        for var in table() {
            if let Some(raw) = lookup(var.name) {
                var.apply(&mut self, &raw)?;
                set.push(var.name);
            }
        }
        let own_var = heap_size_var(self.default_heap);
        if !set.contains(&own_var) {
            let kind = self.default_heap;
            let mut bytes = self.heap_bytes(kind);
            if set.contains(&NVSHMEM_MAX_VAR) && self.nvshmem_max_memory_bytes > 0 {
                bytes = self.nvshmem_max_memory_bytes;
            }
            if set.contains(&NVSHMEM_SIZE_VAR) {
                bytes = bytes.max(self.nvshmem_symmetric_bytes);
            }
            self.set_heap_bytes(kind, bytes);
        }
        Ok(self)
    }

    /// Sets the size of each PE's host heap (`SHMEM_SYMMETRIC_SIZE`); 0 for none.
    pub fn host_heap_size(mut self, bytes: u64) -> Self {
        self.host_heap_bytes = bytes;
        self
    }

    /// Sets the size of each PE's device heap (`SHMEM_DEVICE_SYMMETRIC_SIZE`); 0 for none.
    pub fn device_heap_size(mut self, bytes: u64) -> Self {
        self.device_heap_bytes = bytes;
        self
    }

    /// Sets the heap `malloc` uses (`SHMEM_SYMMETRIC_HEAP_DEFAULT`).
    pub fn default_heap(mut self, kind: MemKind) -> Self {
        self.default_heap = kind;
        self
    }

    /// The size of the heap of `kind` in bytes; 0 when it does not exist.
    pub fn heap_bytes(&self, kind: MemKind) -> u64 {
        match kind {
            MemKind::Host => self.host_heap_bytes,
            MemKind::Device => self.device_heap_bytes,
            // Static data is no heap.
            MemKind::Static => 0,
        }
    }

    /// Sets the size of the heap of `kind` in bytes (static data has none to set).
    fn set_heap_bytes(&mut self, kind: MemKind, bytes: u64) {
        match kind {
            MemKind::Host => self.host_heap_bytes = bytes,
            MemKind::Device => self.device_heap_bytes = bytes,
            MemKind::Static => {}
        }
    }

    /// Sets the deadline of every blocking wait.
    pub fn wait_timeout_ms(mut self, ms: u64) -> Self {
        self.wait_timeout_ms = ms;
        self
    }

    /// Sets the number of team slots each PE reserves (`RSHMEM_TEAMS_MAX`).
    pub fn teams_max(mut self, slots: u32) -> Self {
        self.teams_max = slots;
        self
    }

    /// Sets the number of contexts at once on each predefined team (`RSHMEM_CONTEXTS_MAX`).
    pub fn contexts_max(mut self, contexts: u32) -> Self {
        self.contexts_max = contexts;
        self
    }

    /// Sets whether init logs the resolved table.
    pub fn info(mut self, on: bool) -> Self {
        self.info = on;
        self
    }

    /// Every variable of [`table`] with its value in this configuration.
    pub fn resolved(&self) -> Vec<(&'static ConfigVar, String)> {
        table()
            .iter()
            .map(|var| (var, var.value_in(self)))
            .collect()
    }

    /// Logs the resolved table at level info, one event per variable.
    pub(crate) fn log(&self) {
        for (var, value) in self.resolved() {
            tracing::info!(
                target: TRACING_TARGET,
                name = var.name,
                value = %value,
                default = var.default,
                kind = var.kind().name(),
                doc = var.doc,
                "config"
            );
        }
    }
}

/// The binary size suffixes, largest first.
const SIZE_UNITS: [(char, u32); 4] = [('t', 40), ('g', 30), ('m', 20), ('k', 10)];

/// Parses a size such as `4096`, `512m`, `1G`, `2GiB` or `64kb`; `None` if malformed or too
/// large for 64 bits.
pub fn parse_size(raw: &str) -> Option<u64> {
    let lower = raw.trim().to_ascii_lowercase();
    // Why: "ib" only makes sense after a unit letter ("2gib"), while a bare "b" may follow
    // digits ("512b") or a unit ("4mb").
    let (body, needs_unit) = match lower.strip_suffix("ib") {
        Some(body) => (body, true),
        None => (lower.strip_suffix('b').unwrap_or(&lower), false),
    };
    let unit = SIZE_UNITS
        .iter()
        .find(|(letter, _)| body.ends_with(*letter));
    let (digits, shift) = match unit {
        Some((_, shift)) => (&body[..body.len() - 1], *shift),
        None if needs_unit => return None,
        None => (body, 0),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse::<u64>().ok()?.checked_mul(1u64 << shift)
}

/// Writes `bytes` with the largest suffix that divides it exactly ("1g", "1536", "3m").
pub(crate) fn format_size(bytes: u64) -> String {
    SIZE_UNITS
        .iter()
        .find(|(_, shift)| bytes != 0 && bytes.trailing_zeros() >= *shift)
        .map_or_else(
            || bytes.to_string(),
            |(letter, shift)| format!("{}{letter}", bytes >> shift),
        )
}

/// Parses a heap kind, as [`heap_kind_name`] writes it, in any case.
fn parse_heap_kind(raw: &str) -> Option<MemKind> {
    match raw.trim().to_ascii_uppercase().as_str() {
        "HOST" => Some(MemKind::Host),
        "DEVICE" => Some(MemKind::Device),
        _ => None,
    }
}

/// Parses a boolean; an empty value means "set", so true.
fn parse_bool(raw: &str) -> Option<bool> {
    match raw.trim().to_ascii_lowercase().as_str() {
        "" | "1" | "true" | "yes" | "on" | "y" => Some(true),
        "0" | "false" | "no" | "off" | "n" => Some(false),
        _ => None,
    }
}
