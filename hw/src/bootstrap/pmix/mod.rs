//! PMIx, what `mpirun`, `prterun` and `srun --mpi=pmix` serve, through `libpmix.so.2` loaded
//! at run time: the workspace builds and runs where PMIx is absent, and only a process that
//! takes this bootstrap needs the library. PMIx's wire protocol is private to the library, so
//! there is no way around it.
//!
//! The allgather is PMIx's usual one: each rank puts its bytes under a key of the round with
//! global scope, commits, fences with `PMIX_COLLECT_DATA`, then gets every rank's value.

mod abi;

pub use abi::PMIX_ABI;

use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::BootstrapError;
use super::job::{Bootstrap, NodeIdentity};
use abi::{ByteObject, Info, Proc, Value};

/// The library's name on the default search path (Debian's `libpmix2` links it there).
const LIBRARY: &str = "libpmix.so.2";

/// How long `global_exit` waits for `PMIx_Abort`, which may not return before the launcher
/// ends this process.
const ABORT_WAIT: Duration = Duration::from_secs(1);

const NAME: &str = "pmix";

/// `PMIx_Finalize`, once the client is initialised: called when the bootstrap is dropped or,
/// for a program that exits with its PE still running (a C program returning from `main`),
/// at exit. A launcher such as `mpirun` counts a rank that exits without it as failed.
static FINALIZE: OnceLock<abi::FinalizeFn> = OnceLock::new();
static FINALIZED: AtomicBool = AtomicBool::new(false);

fn finalize_once() {
    if let Some(finalize) = FINALIZE.get()
        && !FINALIZED.swap(true, Ordering::AcqRel)
    {
        // SAFETY: no info; the client was initialised, and this runs once.
        let _ = unsafe { finalize(std::ptr::null(), 0) };
    }
}

extern "C" fn finalize_at_exit() {
    finalize_once();
}

/// The functions of the library, which stays loaded for the rest of the process.
#[derive(Clone, Copy)]
struct Api {
    init: abi::InitFn,
    get: abi::GetFn,
    put: abi::PutFn,
    commit: abi::CommitFn,
    fence: abi::FenceFn,
    abort: abi::AbortFn,
    finalize: abi::FinalizeFn,
    value_load: abi::ValueLoadFn,
    value_destruct: abi::ValueDestructFn,
    info_load: abi::InfoLoadFn,
    error_string: abi::ErrorStringFn,
}

impl Api {
    fn load() -> Result<Api, BootstrapError> {
        let failed = |what: String| BootstrapError::Launcher {
            bootstrap: NAME,
            what: format!(
                "{what}; install OpenPMIx (Debian: `apt-get install libpmix2`), or start the \
                 program with `oshrun -np N` or `srun --mpi=pmi2` and RSHMEM_BOOTSTRAP=pmi2"
            ),
        };
        // SAFETY: loading runs the library's initialisers; OpenPMIx's only set up its state.
        let library = unsafe { libloading::Library::new(LIBRARY) }
            .map_err(|e| failed(format!("cannot load {LIBRARY}: {e}")))?;
        // Unloading a library whose progress thread may still run after PMIx_Finalize would
        // pull its code from under that thread: it stays loaded.
        let library: &'static libloading::Library = Box::leak(Box::new(library));
        macro_rules! symbol {
            ($name:literal) => {
                // SAFETY: the type is the one `pmix.h` declares for this name (abi.rs, checked
                // by the layout test); the library stays loaded, so the pointer stays valid.
                *unsafe { library.get(concat!($name, "\0").as_bytes()) }
                    .map_err(|e| failed(format!("{LIBRARY} lacks {}: {e}", $name)))?
            };
        }
        Ok(Api {
            init: symbol!("PMIx_Init"),
            get: symbol!("PMIx_Get"),
            put: symbol!("PMIx_Put"),
            commit: symbol!("PMIx_Commit"),
            fence: symbol!("PMIx_Fence"),
            abort: symbol!("PMIx_Abort"),
            finalize: symbol!("PMIx_Finalize"),
            value_load: symbol!("PMIx_Value_load"),
            value_destruct: symbol!("PMIx_Value_destruct"),
            info_load: symbol!("PMIx_Info_load"),
            error_string: symbol!("PMIx_Error_string"),
        })
    }

    /// The failure of `call` with `status`, in PMIx's words.
    fn error(&self, call: &str, status: c_int) -> BootstrapError {
        // SAFETY: PMIx_Error_string returns a static string for any status.
        let text = unsafe { CStr::from_ptr((self.error_string)(status)) };
        BootstrapError::Launcher {
            bootstrap: NAME,
            what: format!(
                "{call} failed: {} ({status}); check that the launcher that started this \
                 process serves PMIx (`mpirun`, `srun --mpi=pmix`)",
                text.to_string_lossy()
            ),
        }
    }

    fn check(&self, call: &str, status: c_int) -> Result<(), BootstrapError> {
        if status == abi::SUCCESS {
            Ok(())
        } else {
            Err(self.error(call, status))
        }
    }
}

/// A job's bootstrap over PMIx.
pub(crate) struct Pmix {
    api: Api,
    me: Proc,
    size: u32,
    node: NodeIdentity,
    round: u64,
}

impl std::fmt::Debug for Pmix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pmix")
            .field("rank", &self.me.rank)
            .field("size", &self.size)
            .field("node", &self.node)
            .finish_non_exhaustive()
    }
}

// SAFETY: the PMIx client library is thread-safe (its calls hand work to its progress
// thread); `Pmix` holds only plain data and function pointers.
unsafe impl Send for Pmix {}

fn c_key(key: &str) -> CString {
    // Keys are this module's own literals and formats: never an interior NUL.
    CString::new(key).unwrap_or_default()
}

impl Pmix {
    /// Loads the library, initialises the client and reads the job's size and this rank's
    /// node. `PMIx_Init` takes no deadline: it returns or fails as the launcher's server
    /// answers, which serves its own children.
    pub(crate) fn init() -> Result<Pmix, BootstrapError> {
        let api = Api::load()?;
        let mut me = Proc {
            nspace: [0; abi::NSPACE_BYTES],
            rank: 0,
        };
        // SAFETY: `me` is a valid pmix_proc_t to fill; no info.
        api.check("PMIx_Init", unsafe {
            (api.init)(&mut me, std::ptr::null_mut(), 0)
        })?;
        if FINALIZE.set(api.finalize).is_ok() {
            // SAFETY: registers a plain function; a failure to register only loses the
            // finalize at exit, which the launcher then reports.
            unsafe { libc::atexit(finalize_at_exit) };
        }
        let mut pmix = Pmix {
            api,
            me,
            size: 0,
            node: NodeIdentity {
                node_id: 0,
                local_rank: 0,
                local_size: 0,
            },
            round: 0,
        };
        let job = Proc {
            rank: abi::RANK_WILDCARD,
            ..me
        };
        pmix.size = pmix.get_u32(&job, "pmix.job.size")?.unwrap_or(0);
        if me.rank >= pmix.size {
            return Err(BootstrapError::Launcher {
                bootstrap: NAME,
                what: format!(
                    "PMIx gave rank {} of a job of {} ranks (pmix.job.size)",
                    me.rank, pmix.size
                ),
            });
        }
        let local_size = pmix.get_u32(&job, "pmix.local.size")?;
        let local_rank = pmix.get_u32(&me, "pmix.lrank")?;
        let node_id = pmix.get_u32(&me, "pmix.nodeid")?;
        pmix.node = match (node_id, local_rank, local_size) {
            (Some(node_id), Some(local_rank), Some(local_size)) => NodeIdentity {
                node_id,
                local_rank,
                local_size,
            },
            missing => {
                return Err(BootstrapError::Launcher {
                    bootstrap: NAME,
                    what: format!(
                        "the launcher gave no node identity (pmix.nodeid, pmix.lrank, \
                         pmix.local.size: {missing:?}); use a launcher of PMIx 2 or later"
                    ),
                });
            }
        };
        Ok(pmix)
    }

    /// `key` of `proc` as a number; `None` when the launcher has no such key.
    fn get_u32(&self, proc: &Proc, key: &str) -> Result<Option<u32>, BootstrapError> {
        let Some(value) = self.get(proc, key)? else {
            return Ok(None);
        };
        // SAFETY: `value` came from PMIx_Get and is read as its type tag says.
        let (kind, number) = unsafe {
            let data = (*value).data.as_ptr().cast::<u8>();
            let kind = (*value).kind;
            let number = match kind {
                abi::UINT16 => Some(u32::from(data.cast::<u16>().read())),
                abi::UINT32 | abi::PROC_RANK | abi::UINT | abi::INT | abi::INT32 => {
                    Some(data.cast::<u32>().read())
                }
                abi::UINT64 | abi::SIZE => u32::try_from(data.cast::<u64>().read()).ok(),
                _ => None,
            };
            (kind, number)
        };
        self.release(value);
        number.map(Some).ok_or_else(|| BootstrapError::Launcher {
            bootstrap: NAME,
            what: format!("{key} came as PMIx type {kind}, not a number"),
        })
    }

    /// `PMIx_Get` of `key` of `proc`: `None` when the launcher has no such key.
    fn get(&self, proc: &Proc, key: &str) -> Result<Option<*mut Value>, BootstrapError> {
        let key_c = c_key(key);
        let mut value: *mut Value = std::ptr::null_mut();
        // SAFETY: valid proc and key; PMIx allocates `value` on success.
        let status =
            unsafe { (self.api.get)(proc, key_c.as_ptr(), std::ptr::null(), 0, &mut value) };
        if status != abi::SUCCESS || value.is_null() {
            // PMIx's "not found" codes vary between versions; a key that matters is checked
            // by the caller, which names it.
            return Ok(None);
        }
        Ok(Some(value))
    }

    /// Frees a value PMIx_Get allocated (`PMIX_VALUE_RELEASE`).
    fn release(&self, value: *mut Value) {
        // SAFETY: `value` came from PMIx_Get, which allocates it with malloc.
        unsafe {
            (self.api.value_destruct)(value);
            libc::free(value.cast());
        }
    }

    /// Info for a fence: collect data or not, and a timeout in whole seconds (at least 1).
    fn fence(&self, collect: bool, deadline: Instant) -> Result<(), BootstrapError> {
        let left = deadline.saturating_duration_since(Instant::now());
        let seconds: c_int = c_int::try_from(left.as_secs().max(1)).unwrap_or(c_int::MAX);
        // SAFETY: pmix_info_t is plain data, all-zero a valid empty info.
        let mut infos: [Info; 2] = unsafe { std::mem::zeroed() };
        let flag = true;
        // SAFETY: each info is loaded with a key literal and data of the type named.
        unsafe {
            (self.api.info_load)(
                &mut infos[0],
                c"pmix.timeout".as_ptr(),
                (&seconds as *const c_int).cast(),
                abi::INT,
            );
            (self.api.info_load)(
                &mut infos[1],
                c"pmix.collect".as_ptr(),
                (&flag as *const bool).cast(),
                abi::BOOL,
            );
        }
        let n_infos = if collect { 2 } else { 1 };
        let started = Instant::now();
        // SAFETY: no procs (the whole namespace) and `n_infos` loaded infos.
        let status = unsafe { (self.api.fence)(std::ptr::null(), 0, infos.as_ptr(), n_infos) };
        if status != abi::SUCCESS && started.elapsed() + Duration::from_millis(500) >= left {
            return Err(BootstrapError::Deadline { waited_for: vec![] });
        }
        self.api.check("PMIx_Fence", status)
    }
}

impl Bootstrap for Pmix {
    fn name(&self) -> &'static str {
        NAME
    }

    fn rank(&self) -> u32 {
        self.me.rank
    }

    fn size(&self) -> u32 {
        self.size
    }

    fn node(&self) -> NodeIdentity {
        self.node
    }

    fn allgather(
        &mut self,
        mine: &[u8],
        deadline: Instant,
    ) -> Result<Vec<Vec<u8>>, BootstrapError> {
        BootstrapError::check_len(mine)?;
        self.round += 1;
        let key = c_key(&format!("rshmem-allgather-{}", self.round));
        let object = ByteObject {
            bytes: mine.as_ptr().cast::<c_char>().cast_mut(),
            size: mine.len(),
        };
        // SAFETY: pmix_value_t is plain data; PMIx_Value_load copies the bytes, PMIx_Put
        // copies the value, and the copy is destructed after.
        unsafe {
            let mut value: Value = std::mem::zeroed();
            (self.api.value_load)(
                &mut value,
                (&object as *const ByteObject).cast::<c_void>(),
                abi::BYTE_OBJECT,
            );
            let status = (self.api.put)(abi::GLOBAL, key.as_ptr(), &mut value);
            (self.api.value_destruct)(&mut value);
            self.api.check("PMIx_Put", status)?;
            self.api.check("PMIx_Commit", (self.api.commit)())?;
        }
        self.fence(true, deadline)?;
        let mut all = Vec::with_capacity(self.size as usize);
        for rank in 0..self.size {
            let peer = Proc { rank, ..self.me };
            let value = self
                .get(&peer, key.to_str().unwrap_or_default())?
                .ok_or_else(|| {
                    BootstrapError::Protocol(format!(
                        "PMIx had no allgather {} value of rank {rank} after the fence",
                        self.round
                    ))
                })?;
            // SAFETY: read as a byte object only when the tag says so.
            let bytes = unsafe {
                ((*value).kind == abi::BYTE_OBJECT).then(|| {
                    let object = (*value).data.as_ptr().cast::<ByteObject>().read();
                    if object.size == 0 {
                        Vec::new()
                    } else {
                        std::slice::from_raw_parts(object.bytes.cast::<u8>(), object.size).to_vec()
                    }
                })
            };
            self.release(value);
            all.push(bytes.ok_or_else(|| {
                BootstrapError::Protocol(format!(
                    "PMIx gave rank {rank}'s allgather value as another type than bytes"
                ))
            })?);
        }
        Ok(all)
    }

    fn barrier(&mut self, deadline: Instant) -> Result<(), BootstrapError> {
        self.fence(false, deadline)
    }

    fn global_exit(&self, status: i32) -> Result<(), BootstrapError> {
        let abort = self.api.abort;
        let (done, wait) = std::sync::mpsc::channel();
        // PMIx_Abort may block until the launcher ends this process: wait for it a second at
        // most, then let the caller exit.
        std::thread::spawn(move || {
            let message = c"rshmem: shmem_global_exit";
            // SAFETY: a static message and no procs (the whole namespace).
            let rc = unsafe { abort(status, message.as_ptr(), std::ptr::null_mut(), 0) };
            let _ = done.send(rc);
        });
        match wait.recv_timeout(ABORT_WAIT) {
            Ok(rc) => self.api.check("PMIx_Abort", rc),
            Err(_) => Ok(()),
        }
    }
}

impl Drop for Pmix {
    fn drop(&mut self) {
        finalize_once();
    }
}
