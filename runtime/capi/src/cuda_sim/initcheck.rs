//! Initcheck: reads of `__shared__` bytes that no thread of the block wrote, which a GPU
//! gives an undefined value (compute-sanitizer's `--tool initcheck` finds them; here a block's
//! bytes start zeroed, which would hide them).
//!
//! Why only programs built with `rshmem-nvcc -rshmem-check`: telling written bytes from
//! unwritten ones needs every plain store, which only the thread-sanitizer hooks of such a
//! build report (`__rsim_tsan_*`, `tsan_hooks.rs`). A program is checked when its loaded object
//! imports those hooks (read once from its ELF file), so a program without them never gets a
//! report, false or true. Each (kernel, variable, offset) is reported once, on standard error,
//! and the run goes on.

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::ops::Range;
use std::sync::{Arc, Mutex};

use object::{Object, ObjectKind, ObjectSymbol};

use crate::cuda_sim::fiber;

/// What initcheck knows of one loaded object.
#[derive(Debug, Default)]
pub(crate) struct ObjectFacts {
    /// Whether its code calls the hooks.
    hooked: bool,
    /// Its data symbols: run-time address range and name, for naming shared variables.
    symbols: Vec<(Range<usize>, String)>,
}

static FACTS: Mutex<Option<HashMap<usize, Arc<ObjectFacts>>>> = Mutex::new(None);
/// The reads reported so far: (kernel, variable, offset).
static REPORTED: Mutex<Option<HashSet<(String, String, usize)>>> = Mutex::new(None);

/// The facts of the object loaded at `base` (0: unknown, never checked).
pub(crate) fn facts(base: usize) -> Arc<ObjectFacts> {
    let mut facts = FACTS.lock().unwrap_or_else(|p| p.into_inner());
    let facts = facts.get_or_insert_with(HashMap::new);
    Arc::clone(
        facts
            .entry(base)
            .or_insert_with(|| Arc::new(read_facts(base).unwrap_or_default())),
    )
}

fn read_facts(base: usize) -> Option<ObjectFacts> {
    if base == 0 {
        return None;
    }
    // SAFETY: dladdr reads the loader's tables; `info` is written by it.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let found = unsafe { libc::dladdr(base as *const libc::c_void, &mut info) } != 0;
    let path = (found && !info.dli_fname.is_null())
        .then(|| {
            // SAFETY: a NUL-terminated path of the loader's.
            unsafe { std::ffi::CStr::from_ptr(info.dli_fname) }
                .to_string_lossy()
                .into_owned()
        })
        .filter(|p| !p.is_empty());
    let bytes = path
        .and_then(|p| std::fs::read(p).ok())
        .or_else(|| std::fs::read("/proc/self/exe").ok())?;
    let file = object::File::parse(&*bytes).ok()?;
    let bias = if file.kind() == ObjectKind::Executable {
        0
    } else {
        base
    };
    let hooked = file
        .dynamic_symbols()
        .chain(file.symbols())
        .any(|s| s.is_undefined() && s.name().is_ok_and(|n| n.starts_with("__rsim_tsan_read")));
    let symbols = file
        .symbols()
        .filter(|s| s.kind() == object::SymbolKind::Data && s.size() > 0)
        .filter_map(|s| {
            let start = bias + s.address() as usize;
            Some((start..start + s.size() as usize, s.name().ok()?.to_owned()))
        })
        .collect();
    Some(ObjectFacts { hooked, symbols })
}

/// The written bytes of each block of one launch, for a checked program.
pub(crate) struct Shadow {
    facts: Arc<ObjectFacts>,
    places: Vec<Range<usize>>,
    block_bytes: usize,
    /// Per block, one flag per shared byte; made at the block's first write.
    written: std::cell::RefCell<Vec<Option<Box<[bool]>>>>,
}

impl Shadow {
    /// The shadow of a launch of `n_blocks` over `places`, if the program is checked.
    pub(crate) fn new(
        facts: Arc<ObjectFacts>,
        places: &[Range<usize>],
        n_blocks: usize,
    ) -> Option<Shadow> {
        facts.hooked.then(|| Shadow {
            facts: Arc::clone(&facts),
            places: places.to_vec(),
            block_bytes: places.iter().map(ExactSizeIterator::len).sum(),
            written: std::cell::RefCell::new((0..n_blocks).map(|_| None).collect()),
        })
    }

    /// The offset in a block's bytes of the shared byte at `addr`, if it is one.
    fn offset(&self, addr: usize) -> Option<usize> {
        let mut before = 0;
        for place in &self.places {
            if place.contains(&addr) {
                return Some(before + addr - place.start);
            }
            before += place.len();
        }
        None
    }
}

/// A hook or atomic reads `len` bytes at `addr`: reports the first unwritten shared byte.
pub(crate) fn read(addr: usize, len: usize, what: &str) {
    let Some(fiber) = fiber::running() else {
        return;
    };
    let Some(shadow) = &fiber.grid().initcheck else {
        return;
    };
    let written = shadow.written.borrow();
    let block = written[fiber.block()].as_deref();
    let unwritten = (addr..addr + len)
        .filter_map(|byte| shadow.offset(byte).map(|offset| (byte, offset)))
        .find(|&(_, offset)| !block.is_some_and(|flags| flags[offset]));
    let Some((byte, _)) = unwritten else { return };
    let (variable, offset) = shadow
        .facts
        .symbols
        .iter()
        .find(|(range, _)| range.contains(&byte))
        .map_or_else(
            || ("__shared__".to_owned(), 0),
            |(range, name)| (super::launch::demangle(name), byte - range.start),
        );
    let kernel = fiber.grid().kernel_name();
    let key = (kernel.clone(), variable.clone(), offset);
    let mut reported = REPORTED.lock().unwrap_or_else(|p| p.into_inner());
    if !reported.get_or_insert_with(HashSet::new).insert(key) {
        return;
    }
    let message = format!(
        "PE {}: {}: read {len} uninitialised bytes of __shared__ memory at {variable}+{offset:#x} \
         ({what}); a GPU gives this read an undefined value (compute-sanitizer --tool initcheck \
         reports it)",
        fiber.grid().pe,
        fiber.place()
    );
    // Why ignore a failed write: a warning, and stderr is all there is.
    let _ = writeln!(std::io::stderr(), "rshmem: {message}");
}

/// A hook or atomic wrote `len` bytes at `addr`: marks the shared ones written.
pub(crate) fn write(addr: usize, len: usize) {
    let Some(fiber) = fiber::running() else {
        return;
    };
    let Some(shadow) = &fiber.grid().initcheck else {
        return;
    };
    let mut written = shadow.written.borrow_mut();
    for byte in addr..addr + len {
        if let Some(offset) = shadow.offset(byte) {
            let flags = written[fiber.block()]
                .get_or_insert_with(|| vec![false; shadow.block_bytes].into_boxed_slice());
            flags[offset] = true;
        }
    }
}
