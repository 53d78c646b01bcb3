//! Where simulated machines come from: built-in presets and TOML topology files.
//!
//! [`load`] is the one entry point the CLI and tests use: it takes either a preset name
//! ([`presets::names`]) or a path to a file in the format of `docs/topology-format.md`;
//! [`write::to_toml`] writes a topology in that format.

pub mod file;
pub mod presets;
pub mod write;

use std::path::PathBuf;

use hw::topology::Topology;

use crate::costs::Timing;

pub use file::FileError;

/// A machine the simulator runs: its topology (GPUs, switches, NICs, links) and what its
/// operations cost beyond the links.
///
/// A [`Topology`] alone is a machine whose operations have [`Timing::default`] costs, which
/// is what tests written against a small topology want (`Sim::builder(topology)`).
#[derive(Clone, Debug)]
pub struct Machine {
    /// The graph of the machine.
    pub topology: Topology,
    /// The costs of its operations.
    pub timing: Timing,
}

impl From<Topology> for Machine {
    fn from(topology: Topology) -> Machine {
        Machine {
            topology,
            timing: Timing::default(),
        }
    }
}

/// Why [`load`] could not produce a topology.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The name is no preset and no file by that name exists.
    #[error(
        "unknown topology {name:?}: it is not a preset (h200x2, hgx8, ib-N with 1 <= N <= {max}) \
         and no file has that path; give a preset name or the path to a .toml topology file",
        max = presets::MAX_IB_HOSTS
    )]
    Unknown {
        /// What the caller asked for.
        name: String,
    },
    /// The file exists, or looks like a path, but could not be read.
    #[error("cannot read topology file {}", path.display())]
    Io {
        /// The path as given.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// The path names something that is not a regular file (a directory, a device, a pipe),
    /// or a file too large to be a topology; reading it could take forever.
    #[error(
        "{} is not a topology file: {reason}; give the path to a .toml topology file",
        path.display()
    )]
    NotAFile {
        /// The path as given.
        path: PathBuf,
        /// What it is instead.
        reason: String,
    },
    /// The file was read but is not a valid topology.
    #[error(transparent)]
    File(#[from] FileError),
}

/// The topology called `name_or_path`: a preset if one has that name, else the TOML file at
/// that path.
///
/// Presets win over files, so a file named `hgx8` in the working directory is reached as
/// `./hgx8`.
///
/// # Errors
/// [`LoadError::Unknown`] when the name is no preset and does not look like a path to an
/// existing file, [`LoadError::Io`] when reading the file fails, and [`LoadError::File`] when
/// its contents are invalid.
pub fn load(name_or_path: &str) -> Result<Machine, LoadError> {
    if let Some(machine) = presets::preset(name_or_path) {
        return Ok(machine);
    }
    let path = PathBuf::from(name_or_path);
    // A bare word such as "hgx9" is far more likely a mistyped preset than a missing file, so
    // it gets the message listing the presets; anything path-like gets the IO error.
    let looks_like_path = name_or_path.contains(std::path::MAIN_SEPARATOR)
        || name_or_path.contains('/')
        || path.extension().is_some();
    if !path.exists() && !looks_like_path {
        return Err(LoadError::Unknown {
            name: name_or_path.to_string(),
        });
    }
    let text = read_file(&path)?;
    Ok(file::parse(&text, name_or_path)?)
}

/// The largest topology file [`load`] reads: far above any machine's (`ib-1024` writes about
/// 6 MiB, and a preset's text grows with its hosts).
pub const MAX_FILE_BYTES: u64 = 64 << 20;

/// The text of the topology file at `path`, refusing what is no regular file before opening
/// it (opening a pipe blocks, reading `/dev/zero` never ends) and what is too large.
fn read_file(path: &std::path::Path) -> Result<String, LoadError> {
    use std::io::Read;
    let io = |source| LoadError::Io {
        path: path.to_path_buf(),
        source,
    };
    let not_a_file = |reason: String| LoadError::NotAFile {
        path: path.to_path_buf(),
        reason,
    };
    let metadata = std::fs::metadata(path).map_err(io)?;
    if !metadata.is_file() {
        return Err(not_a_file(format!("it is a {}", file_type(&metadata))));
    }
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_FILE_BYTES + 1).read_to_string(&mut text))
        .map_err(io)?;
    if text.len() as u64 > MAX_FILE_BYTES {
        return Err(not_a_file(format!(
            "it is larger than {} MiB",
            MAX_FILE_BYTES >> 20
        )));
    }
    Ok(text)
}

/// What kind of file system object `metadata` describes, in words.
fn file_type(metadata: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let kind = metadata.file_type();
    if kind.is_dir() {
        "directory"
    } else if kind.is_char_device() || kind.is_block_device() {
        "device"
    } else if kind.is_fifo() {
        "pipe"
    } else if kind.is_socket() {
        "socket"
    } else {
        "special file"
    }
}

/// A link as (end, end, kind, latency in ns, bandwidth in bytes/s), ends sorted.
#[cfg(test)]
type LinkRow = (String, String, String, u64, u64);

/// Every GPU (in PE order) and every link with its ends, for comparing topologies in tests.
#[cfg(test)]
fn shape(t: &Topology) -> (Vec<String>, std::collections::BTreeSet<LinkRow>) {
    let gpus = (0..t.n_gpus())
        .map(|pe| t.graph()[t.gpu_node(hw::Pe(pe))].name.clone())
        .collect();
    let links = (0..t.n_links())
        .map(|i| {
            let id = hw::topology::LinkId(i);
            let (a, b) = t.link_ends(id);
            let (a, b) = if a <= b { (a, b) } else { (b, a) };
            let link = t.link(id);
            (
                a.to_string(),
                b.to_string(),
                link.kind.word().to_string(),
                link.latency_ns,
                link.bandwidth_bytes_per_s,
            )
        })
        .collect();
    (gpus, links)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_load_by_name() {
        assert_eq!(load("hgx8").unwrap().topology.n_gpus(), 8);
        assert_eq!(load("ib-3").unwrap().topology.n_gpus(), 24);
    }

    #[test]
    fn unknown_word_lists_presets_and_mentions_files() {
        let err = load("hgx9").unwrap_err();
        assert!(matches!(err, LoadError::Unknown { .. }));
        let message = err.to_string();
        for name in ["h200x2", "hgx8", "ib-N"] {
            assert!(message.contains(name), "{message}");
        }
        assert!(message.contains(".toml"), "{message}");
        assert!(matches!(load("ib-0"), Err(LoadError::Unknown { .. })));
    }

    #[test]
    fn missing_file_names_the_path() {
        let err = load("no/such/topology.toml").unwrap_err();
        assert!(matches!(err, LoadError::Io { .. }));
        assert!(err.to_string().contains("no/such/topology.toml"));
    }

    #[test]
    fn devices_and_directories_are_refused_without_reading() {
        // `/dev/zero` once read until memory ran out.
        for (path, what) in [("/dev/zero", "device"), ("/", "directory")] {
            let err = load(path).unwrap_err();
            assert!(matches!(err, LoadError::NotAFile { .. }), "{err}");
            assert!(err.to_string().contains(what), "{err}");
        }
    }

    #[test]
    fn shipped_files_load() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/topologies");
        for file in ["h200x2.toml", "pcie4.toml"] {
            let path = format!("{dir}/{file}");
            let t = load(&path).unwrap_or_else(|e| panic!("{e}")).topology;
            assert!(t.n_gpus() >= 2);
        }
    }
}
