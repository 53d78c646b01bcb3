//! libfabric, the network library the remote path between nodes is built on
//! (docs/multi-node.md): loaded at run time from `libfabric.so.1`, so the workspace builds and
//! runs where it is absent, and asked which of its providers offer what a SHMEM transport
//! needs: reliable unconnected endpoints (`FI_EP_RDM`) with one-sided RMA and atomics.
//!
//! What each provider says about ordering decides what a fence must do on it: a put followed
//! by a signal atomic needs nothing where the provider orders writes across RMA and atomics
//! (`FI_ORDER_WAW`), and an `FI_FENCE` or a quiet where it orders them only within a class
//! (`tcp;ofi_rxm` in libfabric 1.17). `FI_PROVIDER` narrows the search as libfabric itself
//! reads it.
//!
//! Above the endpoint: a PE's network path (`network.rs`: its endpoint, progress thread and
//! peers' keys) and the run's exchanges over it (`allgather.rs`), which the process and CUDA
//! backends share.

mod abi;
pub(crate) mod allgather;
mod endpoint;
pub(crate) mod network;
mod operations;
mod sources;

pub use endpoint::{Endpoint, RemoteKey};
pub use operations::{AtomicOp, AtomicWidth, Place};

use std::ffi::{CStr, c_char, c_void};
use std::fmt;

use abi::Info;

/// The library's name on the default search path (Debian's `libfabric1` links it there).
const LIBRARY: &str = "libfabric.so.1";

/// What to install or set when the library or a provider is missing.
const INSTALL: &str = "install libfabric (Debian: `apt-get install libfabric1`), or point \
                       LD_LIBRARY_PATH at the site's libfabric";

/// Why libfabric could not be asked.
#[derive(Debug, thiserror::Error)]
pub enum OfiError {
    /// The library is not there, or lacks a function this needs.
    #[error("libfabric: cannot load {library}: {why}; {INSTALL}")]
    Load {
        /// The library looked for.
        library: String,
        /// What the loader said.
        why: String,
    },
    /// No provider offers RDM endpoints with RMA and atomics in the registration modes
    /// handled.
    #[error(
        "libfabric: no provider{} offers RDM endpoints with RMA and atomics that rshmem can \
         use; `rshmem info` lists those that offer them, `fi_info -l` every provider",
        provider.as_ref().map(|p| format!(" named {p}")).or_else(|| std::env::var("FI_PROVIDER").ok().map(|p| format!(" of FI_PROVIDER={p}"))).unwrap_or_default()
    )]
    NoProvider {
        /// The provider asked for, if one was.
        provider: Option<String>,
    },
    /// A call into libfabric failed.
    #[error("libfabric: {call} failed: {message} (error {code})")]
    Call {
        /// The call (`fi_domain`, `fi_write`).
        call: &'static str,
        /// The negative error code it returned.
        code: i32,
        /// `fi_strerror` of it.
        message: String,
    },
    /// An operation posted earlier failed at the provider or the peer.
    #[error(
        "libfabric: an operation over {provider} failed (a peer's process ended, or its \
         memory registration is gone)"
    )]
    Failed {
        /// The endpoint's provider.
        provider: String,
    },
    /// An operation did not complete within the endpoint's patience
    /// ([`Endpoint::set_patience`]).
    #[error(
        "libfabric: an operation over {provider} did not complete within {waited_ms} ms: the \
         peer's process stopped calling into libfabric, or ended without a word"
    )]
    Stalled {
        /// The endpoint's provider.
        provider: String,
        /// How long it waited.
        waited_ms: u64,
    },
    /// `fi_getinfo` failed for another reason than finding nothing.
    #[error("libfabric: fi_getinfo failed: {message} (error {code})")]
    GetInfo {
        /// The negative error code it returned.
        code: i32,
        /// `fi_strerror` of it.
        message: String,
    },
}

/// How a provider moves data: on its own, or only when the application calls into it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress {
    /// `FI_PROGRESS_AUTO`.
    Auto,
    /// `FI_PROGRESS_MANUAL`: a target's memory is updated only while a thread there calls
    /// into libfabric, so a transport over it needs a progress thread.
    Manual,
    /// Not said.
    Unspecified,
}

/// One provider's offer of RDM endpoints with RMA and atomics, as `fi_getinfo` describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Provider {
    /// The provider, layered ones joined by `;` as in `FI_PROVIDER` (`tcp;ofi_rxm`).
    pub name: String,
    /// The fabric it offers them on (`127.0.0.0/8`).
    pub fabric: String,
    /// The domain, a NIC or an interface (`lo`).
    pub domain: String,
    /// Whether it offers the `FI_FENCE` flag on operations.
    pub fence: bool,
    /// Whether it registers device memory directly (`FI_HMEM`).
    pub hmem: bool,
    /// The orderings between operations of one endpoint to one target, as names
    /// (`rma-waw`, `atomic-raw`, `waw` across RMA and atomics, ...).
    pub ordering: Vec<&'static str>,
    /// The memory registration modes it requires, as names (`prov-key`, `virt-addr`, ...).
    pub mr_mode: Vec<&'static str>,
    /// Whether data moves on its own or only while the application calls in.
    pub data_progress: Progress,
    /// The largest message it sends as data inside the request (`inject_size`).
    pub inject_bytes: usize,
    /// The largest message of one operation.
    pub max_message_bytes: usize,
}

impl Provider {
    /// Whether a write is ordered before a later atomic to the same target without a fence:
    /// what put-with-signal needs.
    pub fn orders_puts_before_atomics(&self) -> bool {
        self.ordering.contains(&"waw")
    }
}

impl Progress {
    /// The name `rshmem info` prints.
    pub fn name(self) -> &'static str {
        match self {
            Progress::Auto => "auto",
            Progress::Manual => "manual",
            Progress::Unspecified => "unspecified",
        }
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let or_none = |names: &[&str]| {
            if names.is_empty() {
                "none".to_owned()
            } else {
                names.join(",")
            }
        };
        write!(
            f,
            "{} on {} ({}): ordering {}; {}; mr_mode {}; progress {}; inject {} B",
            self.name,
            self.domain,
            self.fabric,
            or_none(&self.ordering),
            if self.orders_puts_before_atomics() {
                "puts ordered before atomics"
            } else {
                "a fence between a put and an atomic"
            },
            or_none(&self.mr_mode),
            self.data_progress.name(),
            self.inject_bytes,
        )?;
        if self.fence {
            write!(f, "; FI_FENCE")?;
        }
        if self.hmem {
            write!(f, "; device memory (FI_HMEM)")?;
        }
        Ok(())
    }
}

/// What libfabric offers on this machine.
#[derive(Clone, Debug)]
pub struct Offer {
    /// The library's version (`1.17`).
    pub version: String,
    /// The providers with RDM endpoints, RMA and atomics, in libfabric's order of preference;
    /// empty if none (or none of those `FI_PROVIDER` names) has them.
    pub providers: Vec<Provider>,
}

/// The functions of the library, which stays loaded for the rest of the process.
struct Api {
    fabric: abi::FabricFn,
    version: abi::VersionFn,
    get_info: abi::GetInfoFn,
    dup_info: abi::DupInfoFn,
    free_info: abi::FreeInfoFn,
    strerror: abi::StrErrorFn,
}

impl Api {
    /// The library on the default search path, loaded once for the process.
    fn shared() -> Result<&'static Api, OfiError> {
        static SHARED: std::sync::OnceLock<Api> = std::sync::OnceLock::new();
        if let Some(api) = SHARED.get() {
            return Ok(api);
        }
        let api = Api::load(LIBRARY)?;
        Ok(SHARED.get_or_init(|| api))
    }

    fn load(library: &str) -> Result<Api, OfiError> {
        let failed = |why: String| OfiError::Load {
            library: library.to_owned(),
            why,
        };
        // SAFETY: loading runs the library's initialisers, which only set up its state.
        let loaded = unsafe { libloading::os::unix::Library::new(library) }
            .map_err(|e| failed(e.to_string()))?;
        // The library stays loaded: its providers may keep threads, and the functions below
        // are kept as plain pointers.
        let handle = loaded.into_raw();
        let symbol = |name: &str, version: Option<&str>| -> Result<*mut c_void, OfiError> {
            let c_name = std::ffi::CString::new(name).expect("no NUL in a symbol name");
            let pointer = match version {
                Some(version) => {
                    let c_version = std::ffi::CString::new(version).expect("no NUL");
                    // SAFETY: `handle` is a loaded library; both strings are NUL-terminated.
                    unsafe { libc::dlvsym(handle, c_name.as_ptr(), c_version.as_ptr()) }
                }
                // SAFETY: as above.
                None => unsafe { libc::dlsym(handle, c_name.as_ptr()) },
            };
            if pointer.is_null() {
                let which = version.map_or(String::new(), |v| format!(" of version {v}"));
                return Err(failed(format!(
                    "it has no {name}{which} (libfabric 1.3 or later is needed)"
                )));
            }
            Ok(pointer)
        };
        let versioned = Some(abi::SYMBOL_VERSION);
        // SAFETY: each pointer is the library's function of that name (and symbol version),
        // whose C signature the type spells (abi.rs).
        unsafe {
            Ok(Api {
                fabric: std::mem::transmute::<*mut c_void, abi::FabricFn>(symbol(
                    "fi_fabric",
                    Some(abi::FABRIC_SYMBOL_VERSION),
                )?),
                version: std::mem::transmute::<*mut c_void, abi::VersionFn>(symbol(
                    "fi_version",
                    None,
                )?),
                get_info: std::mem::transmute::<*mut c_void, abi::GetInfoFn>(symbol(
                    "fi_getinfo",
                    versioned,
                )?),
                dup_info: std::mem::transmute::<*mut c_void, abi::DupInfoFn>(symbol(
                    "fi_dupinfo",
                    versioned,
                )?),
                free_info: std::mem::transmute::<*mut c_void, abi::FreeInfoFn>(symbol(
                    "fi_freeinfo",
                    versioned,
                )?),
                strerror: std::mem::transmute::<*mut c_void, abi::StrErrorFn>(symbol(
                    "fi_strerror",
                    None,
                )?),
            })
        }
    }
}

/// Asks libfabric (`libfabric.so.1`) which providers offer RDM endpoints with RMA and
/// atomics here, honouring `FI_PROVIDER` and libfabric's other variables.
///
/// # Errors
/// [`OfiError::Load`] naming what to install if the library is missing;
/// [`OfiError::GetInfo`] if libfabric fails otherwise. Finding no provider is not an error:
/// the offer's list is empty.
pub fn probe() -> Result<Offer, OfiError> {
    offer(Api::shared()?)
}

/// [`probe`] of another library than libfabric's usual one (the tests' missing ones).
#[cfg(test)]
fn probe_library(library: &str) -> Result<Offer, OfiError> {
    offer(&Api::load(library)?)
}

/// What `api`'s library offers.
fn offer(api: &Api) -> Result<Offer, OfiError> {
    // SAFETY: fi_version takes nothing and returns the library's version.
    let version = version_text(unsafe { (api.version)() });
    let Some(list) = InfoList::get(api, None)? else {
        return Ok(Offer {
            version,
            providers: Vec::new(),
        });
    };
    let mut providers: Vec<Provider> = Vec::new();
    for info in list.iter() {
        // SAFETY: an element of the list fi_getinfo returned, which `list` keeps.
        let provider = unsafe { describe(info) };
        // One entry per provider and domain is enough to say what it offers.
        if !providers
            .iter()
            .any(|p| p.name == provider.name && p.domain == provider.domain)
        {
            providers.push(provider);
        }
    }
    Ok(Offer { version, providers })
}

/// What `fi_getinfo` returned, freed when dropped.
struct InfoList<'a> {
    api: &'a Api,
    head: *mut Info,
}

impl<'a> InfoList<'a> {
    /// The offers of RDM endpoints with RMA and atomics in the registration modes this
    /// module handles, of provider `provider` only if named (else as `FI_PROVIDER` says);
    /// `None` if there is none.
    fn get(api: &'a Api, provider: Option<&CStr>) -> Result<Option<InfoList<'a>>, OfiError> {
        // SAFETY: fi_dupinfo(NULL) allocates a zeroed fi_info with every attribute structure.
        let hints = unsafe { (api.dup_info)(std::ptr::null()) };
        if hints.is_null() {
            return Err(OfiError::out_of_memory("fi_allocinfo"));
        }
        // SAFETY: `hints` and its attribute structures were just allocated by the library;
        // the fields written are in the prefixes abi.rs spells, and the provider's name is
        // a copy that fi_freeinfo frees.
        unsafe {
            (*hints).caps = abi::FI_RMA | abi::FI_ATOMIC;
            (*(*hints).ep_attr).kind = abi::FI_EP_RDM;
            // The registration modes handled: keys and addresses from the provider, traded
            // through the bootstrap, and registered local buffers.
            (*(*hints).domain_attr).mr_mode = abi::FI_MR_LOCAL
                | abi::FI_MR_VIRT_ADDR
                | abi::FI_MR_ALLOCATED
                | abi::FI_MR_PROV_KEY
                | abi::FI_MR_ENDPOINT;
            if let Some(name) = provider {
                (*(*hints).fabric_attr).prov_name = libc::strdup(name.as_ptr());
            }
        }
        let mut head: *mut Info = std::ptr::null_mut();
        // SAFETY: no node or service; `hints` is a valid fi_info; `head` receives the list.
        let code = unsafe {
            (api.get_info)(
                abi::API_VERSION,
                std::ptr::null(),
                std::ptr::null(),
                0,
                hints,
                &mut head,
            )
        };
        // SAFETY: allocated by fi_dupinfo above and no longer used.
        unsafe { (api.free_info)(hints) };
        // -FI_ENODATA: no provider matches.
        const FI_ENODATA: i32 = 61;
        if code == -FI_ENODATA || (code == 0 && head.is_null()) {
            return Ok(None);
        }
        if code != 0 {
            return Err(OfiError::GetInfo {
                code,
                message: api.error_text(code),
            });
        }
        Ok(Some(InfoList { api, head }))
    }

    fn iter(&self) -> impl Iterator<Item = &Info> {
        let mut at = self.head;
        std::iter::from_fn(move || {
            // SAFETY: an element of the list this value owns, or null at its end.
            let info = unsafe { at.as_ref() }?;
            at = info.next;
            Some(info)
        })
    }
}

impl Drop for InfoList<'_> {
    fn drop(&mut self) {
        // SAFETY: the list fi_getinfo returned, no longer used.
        unsafe { (self.api.free_info)(self.head) };
    }
}

impl OfiError {
    /// What a failed allocation by libfabric's `call` is.
    fn out_of_memory(call: &str) -> OfiError {
        OfiError::GetInfo {
            code: -12,
            message: format!("{call}: out of memory"),
        }
    }
}

impl Api {
    /// `fi_strerror` of a negative code.
    fn error_text(&self, code: i32) -> String {
        // SAFETY: fi_strerror returns a static string for any code.
        unsafe { text((self.strerror)(code.saturating_neg())) }
    }
}

/// `FI_VERSION`'s two halves as `major.minor`.
fn version_text(version: u32) -> String {
    format!("{}.{}", version >> 16, version & 0xffff)
}

/// A C string of libfabric's, or `?` for none.
///
/// # Safety
/// `s` is null or a NUL-terminated string that lives for the call.
unsafe fn text(s: *const c_char) -> String {
    if s.is_null() {
        return "?".to_owned();
    }
    // SAFETY: the caller's promise.
    unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned()
}

/// The names of the bits of `table` that `value` has set.
fn names_of(value: u64, table: &[(u64, &'static str)]) -> Vec<&'static str> {
    table
        .iter()
        .filter(|&&(bit, _)| value & bit != 0)
        .map(|&(_, name)| name)
        .collect()
}

/// The provider one `fi_info` describes.
///
/// # Safety
/// `info` is an element of a list `fi_getinfo` returned, with its attribute structures.
unsafe fn describe(info: &Info) -> Provider {
    // SAFETY: fi_getinfo fills in every attribute structure of what it returns.
    let (tx, ep, domain, fabric) = unsafe {
        (
            &*info.tx_attr,
            &*info.ep_attr,
            &*info.domain_attr,
            &*info.fabric_attr,
        )
    };
    let ordering = names_of(
        tx.msg_order,
        &[
            (abi::FI_ORDER_WAW, "waw"),
            (abi::FI_ORDER_RAW, "raw"),
            (abi::FI_ORDER_RMA_WAW, "rma-waw"),
            (abi::FI_ORDER_RMA_RAW, "rma-raw"),
            (abi::FI_ORDER_ATOMIC_WAW, "atomic-waw"),
            (abi::FI_ORDER_ATOMIC_RAW, "atomic-raw"),
        ],
    );
    let mr_mode = names_of(
        u64::from(domain.mr_mode.cast_unsigned()),
        &[
            (abi::FI_MR_LOCAL, "local"),
            (abi::FI_MR_VIRT_ADDR, "virt-addr"),
            (abi::FI_MR_ALLOCATED, "allocated"),
            (abi::FI_MR_PROV_KEY, "prov-key"),
            (abi::FI_MR_ENDPOINT, "endpoint"),
            (abi::FI_MR_HMEM, "hmem"),
        ]
        .map(|(bit, name)| (u64::from(bit.cast_unsigned()), name)),
    );
    let caps = info.caps;
    // SAFETY: fi_getinfo's strings live as long as the list.
    let (name, fabric_name, domain_name) =
        unsafe { (text(fabric.prov_name), text(fabric.name), text(domain.name)) };
    Provider {
        name,
        fabric: fabric_name,
        domain: domain_name,
        fence: caps & abi::FI_FENCE != 0,
        hmem: caps & abi::FI_HMEM != 0,
        ordering,
        mr_mode,
        data_progress: match domain.data_progress {
            abi::FI_PROGRESS_AUTO => Progress::Auto,
            abi::FI_PROGRESS_MANUAL => Progress::Manual,
            _ => Progress::Unspecified,
        },
        inject_bytes: tx.inject_size,
        max_message_bytes: ep.max_msg_size,
    }
}

#[cfg(test)]
mod tests;
