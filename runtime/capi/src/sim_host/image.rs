//! The program's image as the host of a simulated run loads it: the bytes of the executable,
//! made loadable by `dlopen`, and the symbols that name its `main` and its static data.
//!
//! Why patch the image: glibc refuses to `dlopen` a position-independent executable
//! ("cannot dynamically load position-independent executable"), which it recognises by the
//! `DF_1_PIE` flag of `DT_FLAGS_1`. Without that flag the same bytes load like a shared
//! object: the code is position independent, so each copy runs at its own address with its
//! own globals. Nothing else in the image changes.

use std::path::Path;

use object::elf::{DF_1_PIE, DT_FLAGS_1, PT_DYNAMIC, PT_TLS};
use object::read::elf::{ElfFile64, FileHeader, ProgramHeader};
use object::{Endianness, Object, ObjectSymbol, SymbolKind};

use crate::sim_host::HostError;

/// A symbol of the program's data: a global or static variable.
#[derive(Clone, Debug)]
pub(crate) struct DataSymbol {
    pub(crate) name: String,
    /// Its address relative to the image's load base.
    pub(crate) vaddr: u64,
    pub(crate) size_bytes: u64,
}

/// The executable, ready to be loaded once per PE.
#[derive(Debug)]
pub(crate) struct Image {
    /// The file's bytes with `DF_1_PIE` cleared.
    pub(crate) bytes: Vec<u8>,
    /// Where `main` is, relative to the load base.
    pub(crate) main_vaddr: u64,
    /// The program's data symbols, sorted by address, for naming addresses in reports.
    pub(crate) data_symbols: Vec<DataSymbol>,
    /// Whether it was built for the race detector (`oshcc -rshmem-check`): it calls the
    /// thread sanitizer's hooks.
    pub(crate) instrumented: bool,
}

impl Image {
    /// Reads the executable at `path` (the host's own, `/proc/self/exe`).
    ///
    /// # Errors
    /// [`HostError::Image`] if the file is not a 64-bit little-endian ELF position-independent
    /// executable with a `main`, or has thread-local variables.
    pub(crate) fn read(path: &Path) -> Result<Image, HostError> {
        let bad = |reason: String| HostError::Image {
            path: path.display().to_string(),
            reason,
        };
        let mut bytes = std::fs::read(path).map_err(|e| bad(e.to_string()))?;
        let (main_vaddr, data_symbols, flags_at, instrumented) = {
            let elf = ElfFile64::<Endianness>::parse(&*bytes).map_err(|e| bad(e.to_string()))?;
            if elf.elf_header().e_type(elf.endian()) != object::elf::ET_DYN {
                return Err(bad(
                    "it is not position independent; build it with oshcc (which makes PIE \
                     executables, the default of Debian's cc) or add -fPIE -pie"
                        .into(),
                ));
            }
            let (main_vaddr, data_symbols) = symbols(&elf).map_err(bad)?;
            let instrumented = elf
                .dynamic_symbols()
                .any(|s| s.is_undefined() && s.name() == Ok("__tsan_func_entry"));
            (
                main_vaddr,
                data_symbols,
                flags_offset(&elf).map_err(bad)?,
                instrumented,
            )
        };
        if let Some(at) = flags_at {
            let flags = u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
            bytes[at..at + 8].copy_from_slice(&(flags & !u64::from(DF_1_PIE)).to_le_bytes());
        }
        Ok(Image {
            bytes,
            main_vaddr,
            data_symbols,
            instrumented,
        })
    }

    /// The data symbol holding `vaddr` (relative to the load base), and the offset in it.
    pub(crate) fn symbol_at(&self, vaddr: u64) -> Option<(&str, u64)> {
        let index = self.data_symbols.partition_point(|s| s.vaddr <= vaddr);
        let symbol = &self.data_symbols[index.checked_sub(1)?];
        let offset = vaddr - symbol.vaddr;
        (offset < symbol.size_bytes.max(1)).then_some((symbol.name.as_str(), offset))
    }
}

/// `main`'s address and the data symbols, from the symbol table (or, in a stripped program,
/// the dynamic one, which has `main` when the program was linked with oshcc).
fn symbols(elf: &ElfFile64<'_, Endianness>) -> Result<(u64, Vec<DataSymbol>), String> {
    if elf
        .elf_program_headers()
        .iter()
        .any(|h| h.p_type(elf.endian()) == PT_TLS)
    {
        return Err(
            "it has thread-local variables (__thread, thread_local), which the \
                    simulator's copies of a program cannot each have; run it with oshrun \
                    without --sim"
                .into(),
        );
    }
    let mut main = None;
    let mut data = Vec::new();
    for symbol in elf.symbols().chain(elf.dynamic_symbols()) {
        let Ok(name) = symbol.name() else { continue };
        if symbol.is_undefined() {
            continue;
        }
        match symbol.kind() {
            SymbolKind::Text if name == "main" => main = Some(symbol.address()),
            SymbolKind::Data if symbol.size() > 0 => data.push(DataSymbol {
                name: name.to_owned(),
                vaddr: symbol.address(),
                size_bytes: symbol.size(),
            }),
            _ => {}
        }
    }
    data.sort_by_key(|s| s.vaddr);
    data.dedup_by_key(|s| s.vaddr);
    let main = main.ok_or_else(|| {
        "it has no symbol `main` (a stripped program); rebuild it with oshcc, which exports \
         main, or without -s"
            .to_owned()
    })?;
    Ok((main, data))
}

/// The file offset of the value of `DT_FLAGS_1`, if the dynamic section has one.
fn flags_offset(elf: &ElfFile64<'_, Endianness>) -> Result<Option<usize>, String> {
    let endian = elf.endian();
    for header in elf.elf_program_headers() {
        if header.p_type(endian) != PT_DYNAMIC {
            continue;
        }
        let start = header.p_offset(endian) as usize;
        let len = header.p_filesz(endian) as usize;
        // An Elf64_Dyn is a tag and a value of 8 bytes each.
        for entry in (start..start + len).step_by(16) {
            let data = elf.data();
            let word = |at: usize| {
                data.get(at..at + 8)
                    .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
                    .ok_or_else(|| "its dynamic section is cut short".to_owned())
            };
            match word(entry)? {
                0 => return Ok(None),
                tag if tag == u64::from(DT_FLAGS_1) => return Ok(Some(entry + 8)),
                _ => {}
            }
        }
    }
    Ok(None)
}
