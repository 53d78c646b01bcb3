//! The simulator's MPI shim, `libshmem_mpi_shim.so`: a library with every name Open MPI's
//! `libmpi.so.40` exports (`csrc/mpi/libmpi.so.40.exports`), put first in a simulated
//! program's lookup order (`src/sim_host/mpi/preload.rs`), so that none of its MPI calls
//! reaches the real library.
//!
//! Each function is two instructions of assembly: a served one jumps to `rshmem_sim_NAME` in
//! `libshmem` (any `MPI_X` or `PMPI_X` whose `rshmem_sim_MPI_X` the sources under
//! `src/sim_host/mpi/` define), any other passes its own name to `rshmem_sim_mpi_unserved`,
//! which ends the run naming it. Each predefined handle object (`MPI_COMM_WORLD` is
//! `&ompi_mpi_comm_world`) has Open MPI's size, for the copy relocations programs make of
//! them, and holds a tag and its own name, by which `libshmem` knows it wherever a copy
//! relocation put it. Why generated assembly: the shim must not depend on the signatures,
//! and 1600 names are a list, not code.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The first 8 bytes of every handle object the shim or `libshmem` makes (`rshmMPI\0`, little
/// endian); `libshmem` reads it as `RSHMEM_MPI_HANDLE_TAG`.
const HANDLE_TAG: u64 = u64::from_le_bytes(*b"rshmMPI\0");

pub(crate) fn build() {
    println!("cargo::rustc-env=RSHMEM_MPI_HANDLE_TAG={HANDLE_TAG}");
    let exports = Path::new("csrc/mpi/libmpi.so.40.exports");
    let served_dir = Path::new("src/sim_host/mpi");
    println!("cargo::rerun-if-changed={}", exports.display());
    println!("cargo::rerun-if-changed={}", served_dir.display());
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let shim = out.join("libshmem_mpi_shim.so");
    let outcome = std::fs::read_to_string(exports)
        .map_err(|e| format!("reading {}: {e}", exports.display()))
        .and_then(|list| {
            let assembly = out.join("mpi_shim.S");
            std::fs::write(&assembly, shim_assembly(&list, &served(served_dir)))
                .map_err(|e| format!("writing {}: {e}", assembly.display()))?;
            link(&assembly, &shim)
        });
    if let Err(why) = outcome {
        // Why a warning and an empty shim: the library builds without a C compiler; only an
        // MPI program on the simulator needs the shim, and it is then refused with this reason.
        println!("cargo::warning=the simulator's MPI shim was not built: {why}");
        std::fs::write(&shim, b"").expect("writing to OUT_DIR");
    }
}

/// The `MPI_X` whose `rshmem_sim_MPI_X` the sources under `dir` define.
fn served(dir: &Path) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let files = std::fs::read_dir(dir).into_iter().flatten().flatten();
    for file in files {
        let Ok(text) = std::fs::read_to_string(file.path()) else {
            continue;
        };
        for piece in text.split("fn rshmem_sim_MPI_").skip(1) {
            let name: String = piece
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            names.insert(format!("MPI_{name}"));
        }
    }
    names
}

/// The shim's assembly from the export list (`function NAME`, `object NAME SIZE`).
fn shim_assembly(list: &str, served: &BTreeSet<String>) -> String {
    let mut text = String::from(".intel_syntax noprefix\n");
    let mut names = String::new();
    for (i, line) in list.lines().enumerate() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        match fields.as_slice() {
            ["function", name] => {
                let target = name.strip_prefix('P').unwrap_or(name);
                let _ = writeln!(
                    text,
                    ".text\n.globl {name}\n.type {name},@function\n{name}:"
                );
                if served.contains(target) {
                    let _ = writeln!(text, "  jmp rshmem_sim_{target}@PLT");
                } else {
                    let _ = writeln!(
                        text,
                        "  lea rdi, [rip + .Lname{i}]\n  jmp rshmem_sim_mpi_unserved@PLT"
                    );
                    let _ = writeln!(names, ".Lname{i}: .asciz \"{name}\"");
                }
                let _ = writeln!(text, ".size {name}, .-{name}");
            }
            ["object", name, size] => {
                let size: usize = size.parse().expect("a size in the export list");
                let _ = writeln!(
                    text,
                    ".data\n.balign 64\n.globl {name}\n.type {name},@object\n.size {name}, {size}\n{name}:\n  .quad {HANDLE_TAG}\n  .asciz \"{name}\"\n  .zero {}",
                    size - 8 - name.len() - 1
                );
            }
            _ => {}
        }
    }
    let _ = writeln!(
        text,
        ".data\n.globl rshmem_sim_mpi_shim\n.type rshmem_sim_mpi_shim,@object\n.size rshmem_sim_mpi_shim, 8\nrshmem_sim_mpi_shim: .quad 1"
    );
    text + ".section .rodata\n" + &names + ".section .note.GNU-stack,\"\",@progbits\n"
}

/// Assembles and links `assembly` into the shared library `shim`, with the C compiler.
fn link(assembly: &Path, shim: &Path) -> Result<(), String> {
    let compiler = cc::Build::new()
        .try_get_compiler()
        .map_err(|e| e.to_string())?;
    let status = compiler
        .to_command()
        .args([
            "-shared",
            "-nostdlib",
            "-Wl,-soname,libshmem_mpi_shim.so",
            "-o",
        ])
        .arg(shim)
        .arg(assembly)
        .status()
        .map_err(|e| format!("running the C compiler: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("the C compiler failed ({status})"))
    }
}
