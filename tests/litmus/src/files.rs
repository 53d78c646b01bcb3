//! Finding and parsing litmus files: paths may name files or folders (searched recursively
//! for `*.litmus`, in name order so that runs list tests in a stable order).

use std::path::{Path, PathBuf};

use model::litmus::Litmus;

/// A parsed test and where it came from.
#[derive(Debug)]
pub struct LitmusFile {
    /// The file.
    pub path: PathBuf,
    /// Its test.
    pub test: Litmus,
}

/// Why litmus files could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// A path could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// A file is not a valid litmus test (the message names file, line and column).
    #[error(transparent)]
    Parse(#[from] model::litmus::ParseError),
    /// A folder held no litmus file.
    #[error("{0} holds no .litmus file; give litmus files or folders that hold some")]
    Empty(PathBuf),
    /// A path that is neither a folder nor a regular file (a device or a pipe, which reading
    /// could block on or never finish).
    #[error("{0} is not a litmus file: it is neither a regular file nor a folder")]
    NotAFile(PathBuf),
}

/// The environment variable that names the catalogue folder, for test binaries run away from
/// the machine that built them.
pub const LITMUS_DIR_VAR: &str = "RSHMEM_LITMUS_DIR";

/// The folder of the litmus catalogue: `$RSHMEM_LITMUS_DIR` if set; else
/// `tests/litmus/catalogue` of the checkout that built this crate, if it exists; else
/// `tests/litmus/catalogue` under the current directory (a test binary carried to another
/// machine and run from the repository root).
pub fn catalogue_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os(LITMUS_DIR_VAR) {
        return PathBuf::from(dir);
    }
    let built_here = Path::new(env!("CARGO_MANIFEST_DIR")).join("catalogue");
    if built_here.is_dir() {
        built_here
    } else {
        PathBuf::from("tests/litmus/catalogue")
    }
}

/// Loads every litmus file `paths` name, files as given and folders recursively.
///
/// # Errors
/// The first path that cannot be read or parsed, or a folder without tests.
pub fn load_paths(paths: &[PathBuf]) -> Result<Vec<LitmusFile>, LoadError> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let before = files.len();
            collect(path, &mut files)?;
            if files.len() == before {
                return Err(LoadError::Empty(path.clone()));
            }
        } else if path.exists() && !path.is_file() {
            return Err(LoadError::NotAFile(path.clone()));
        } else {
            files.push(path.clone());
        }
    }
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).map_err(|source| LoadError::Io {
                path: path.clone(),
                source,
            })?;
            let test = model::litmus::parse(&path.display().to_string(), &text)?;
            Ok(LitmusFile { path, test })
        })
        .collect()
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), LoadError> {
    let io = |source| LoadError::Io {
        path: dir.to_path_buf(),
        source,
    };
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()
        .map_err(io)?;
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "litmus") {
            out.push(path);
        }
    }
    Ok(())
}
