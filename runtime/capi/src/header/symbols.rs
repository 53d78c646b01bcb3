//! The symbol test: every C function of the specification's list and of the extensions'
//! (`spec/shmemx.txt`) is defined by `libshmem.so`.
//!
//! `cargo test` builds the crate as an rlib only, so the test first builds the shared library
//! with the same cargo (`cargo build --release -p rshmem-capi`), then reads its dynamic symbols
//! with `nm -D --defined-only` and names every function of the list that is missing, grouped
//! by the list's sections.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

use super::spec;

/// Builds `libshmem.so` in release mode and returns its path.
fn build_library() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let status = Command::new(env!("CARGO"))
        .args(["build", "--release", "-p", "rshmem-capi", "--manifest-path"])
        .arg(manifest.join("Cargo.toml"))
        .status()
        .expect("run cargo build");
    assert!(
        status.success(),
        "cargo build --release -p rshmem-capi failed"
    );
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest.join("../../target"));
    target.join("release/libshmem.so")
}

/// The functions `library` defines.
fn defined(library: &PathBuf) -> BTreeSet<String> {
    let output = Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(library)
        .output()
        .expect("run nm (binutils)");
    assert!(
        output.status.success(),
        "nm -D {} failed",
        library.display()
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.split_whitespace().nth(2))
        .map(str::to_owned)
        .collect()
}

/// The templates the library defines: the specification's and the extensions of `shmemx.h`.
fn listed() -> Vec<spec::Template> {
    let mut templates = spec::templates();
    templates.extend(spec::extension_templates());
    templates
}

/// The functions of the list that `symbols` lacks, as one line per section.
fn missing(symbols: &BTreeSet<String>) -> Vec<String> {
    let mut report = Vec::new();
    for template in listed() {
        let absent: Vec<String> = template
            .expand()
            .into_iter()
            .filter(|function| !symbols.contains(&function.name))
            .filter(|function| {
                !super::INLINE_IN_HEADER
                    .iter()
                    .any(|(name, _)| *name == function.name)
            })
            .map(|function| function.name)
            .collect();
        if !absent.is_empty() {
            report.push(format!(
                "{} ({}, {} of {}): {}",
                template.name(),
                template.section,
                absent.len(),
                template.expand().len(),
                absent.join(" ")
            ));
        }
    }
    report
}

#[test]
fn library_defines_every_function_of_the_specification() {
    let symbols = defined(&build_library());
    let missing = missing(&symbols);
    assert!(
        missing.is_empty(),
        "libshmem.so lacks {} templates' functions:\n{}",
        missing.len(),
        missing.join("\n")
    );
}

#[test]
fn a_missing_function_is_named_with_its_template() {
    let symbols: BTreeSet<String> = listed()
        .iter()
        .flat_map(spec::Template::expand)
        .map(|function| function.name)
        .filter(|name| name != "shmem_ctx_long_put")
        .collect();
    let report = missing(&symbols);
    assert_eq!(report.len(), 1, "{report:?}");
    assert!(report[0].starts_with("shmem_ctx_TYPENAME_put (Remote memory access, 1 of 24)"));
    assert!(report[0].ends_with("shmem_ctx_long_put"));
}
