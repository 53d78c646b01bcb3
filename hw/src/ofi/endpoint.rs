//! One RDM endpoint of one provider, with the objects it needs: the fabric, the domain, an
//! address vector of the peers, a completion queue, and counters of completed writes and
//! reads; its address, its peers, memory registration and progress. The operations on it
//! are in `operations.rs`.

use std::cell::{Cell, RefCell};
use std::ffi::{CStr, c_int, c_void};
use std::ptr::null_mut;
use std::time::Duration;

use super::abi::{self, FiAddr};
use super::sources::Sources;
use super::{Api, InfoList, OfiError};

/// A region of this process's memory that peers may read and write: what they need to
/// reach it, which travels through the bootstrap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RemoteKey {
    /// The provider's key of the registration.
    pub key: u64,
    /// What a peer adds an offset to: the region's address where the provider addresses
    /// registered memory by virtual address (`FI_MR_VIRT_ADDR`), else 0.
    pub base: u64,
}

/// How long an operation may take by default: the runtime's default wait deadline.
const DEFAULT_PATIENCE: Duration = Duration::from_secs(60);

/// One endpoint and the objects under it; closed, in reverse order, when dropped.
pub struct Endpoint {
    pub(super) api: &'static Api,
    /// The provider's offer this endpoint was opened with (a copy, freed on drop).
    info: *mut abi::Info,
    fabric: *mut abi::Fabric,
    domain: *mut abi::Domain,
    av: *mut abi::Av,
    cq: *mut abi::Cq,
    /// The completion queue's file descriptor, readable when the endpoint has something to
    /// move, where the provider offers one ([`Endpoint::wait_fd`]).
    wait_fd: Option<c_int>,
    /// Completed writes and atomics without a result; completed reads and fetching atomics.
    pub(super) writes: *mut abi::Cntr,
    pub(super) reads: *mut abi::Cntr,
    pub(super) ep: *mut abi::Ep,
    /// Whether the provider addresses registered memory by virtual address.
    virtual_addresses: bool,
    /// Operations posted so far, per counter.
    pub(super) writes_posted: Cell<u64>,
    pub(super) reads_posted: Cell<u64>,
    /// The sources of writes posted and not yet seen complete, kept until they are.
    pub(super) sources: RefCell<Sources>,
    next_key: Cell<u64>,
    /// The memory registrations, closed before the endpoint.
    regions: RefCell<Vec<*mut abi::Mr>>,
    /// How long an operation may take before it is given up ([`Endpoint::set_patience`]).
    pub(super) patience: Cell<Duration>,
    provider: String,
}

// SAFETY: libfabric's objects are not tied to the thread that opened them; an endpoint is not
// `Sync`, so one thread at a time uses it (its owner, or whoever holds a `Mutex` around it),
// which every threading level of libfabric's allows.
unsafe impl Send for Endpoint {}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("provider", &self.provider)
            .finish_non_exhaustive()
    }
}

/// What a call into libfabric returned, as an error naming the call.
pub(super) fn check(what: &'static str, code: c_int, api: &Api) -> Result<(), OfiError> {
    if code == 0 {
        Ok(())
    } else {
        Err(OfiError::Call {
            call: what,
            code,
            message: api.error_text(code),
        })
    }
}

/// Closes an object of libfabric's.
///
/// # Safety
/// `fid` is an open object, not used afterwards.
unsafe fn close(fid: *mut abi::Fid) {
    // SAFETY: the caller's promise; every object's table has `close`.
    let _ = unsafe { ((*(*fid).ops).close)(fid) };
}

impl Endpoint {
    /// Opens an endpoint of the first provider that offers RDM endpoints with RMA and atomics
    /// (of `provider` only, if named, else as `FI_PROVIDER` says), able to address up to
    /// `max_peers` peers (itself included).
    ///
    /// # Errors
    /// [`OfiError::Load`] without libfabric; [`OfiError::NoProvider`] if no provider offers
    /// such endpoints in registration modes this handles; [`OfiError::Call`] naming the call
    /// that failed.
    pub fn open(provider: Option<&CStr>, max_peers: usize) -> Result<Endpoint, OfiError> {
        let api = Api::shared()?;
        let no_provider = || OfiError::NoProvider {
            provider: provider.map(|p| p.to_string_lossy().into_owned()),
        };
        let list = InfoList::get(api, provider)?.ok_or_else(no_provider)?;
        // Modes that need the transport's local buffers registered, or its registrations
        // bound to the endpoint, are not handled yet: take the first offer without them.
        let unhandled = abi::FI_MR_LOCAL | abi::FI_MR_ENDPOINT;
        let chosen = list
            .iter()
            // SAFETY: every offer fi_getinfo returns has its domain attributes.
            .find(|info| unsafe { (*info.domain_attr).mr_mode } & unhandled == 0)
            .ok_or_else(no_provider)?;
        // SAFETY: a valid element of the list; the copy is this endpoint's to free.
        let info = unsafe { (api.dup_info)(chosen) };
        drop(list);
        if info.is_null() {
            return Err(OfiError::out_of_memory("fi_dupinfo"));
        }
        let mut endpoint = Endpoint {
            api,
            info,
            fabric: null_mut(),
            domain: null_mut(),
            av: null_mut(),
            cq: null_mut(),
            wait_fd: None,
            writes: null_mut(),
            reads: null_mut(),
            ep: null_mut(),
            virtual_addresses: false,
            writes_posted: Cell::new(0),
            reads_posted: Cell::new(0),
            sources: RefCell::new(Sources::default()),
            next_key: Cell::new(1),
            regions: RefCell::new(Vec::new()),
            patience: Cell::new(DEFAULT_PATIENCE),
            // SAFETY: the copy's fabric attributes and name, which live as long as it.
            provider: unsafe { super::text((*(*info).fabric_attr).prov_name) },
        };
        // The objects are stored as they are opened, so that a failure part way closes
        // those already open (`Drop`).
        endpoint.open_objects(max_peers)?;
        Ok(endpoint)
    }

    fn open_objects(&mut self, max_peers: usize) -> Result<(), OfiError> {
        let api = self.api;
        // SAFETY: each call is the C function of its comment with objects opened just before
        // and attribute structures that live for the call; libfabric fills in every table
        // these read.
        unsafe {
            let info = self.info;
            (*(*info).tx_attr).op_flags |= abi::FI_DELIVERY_COMPLETE;
            self.virtual_addresses = (*(*info).domain_attr).mr_mode & abi::FI_MR_VIRT_ADDR != 0;
            // fi_fabric, fi_domain.
            let code = (api.fabric)((*info).fabric_attr, &mut self.fabric, null_mut());
            check("fi_fabric", code, api)?;
            let code =
                ((*(*self.fabric).ops).domain)(self.fabric, info, &mut self.domain, null_mut());
            check("fi_domain", code, api)?;
            let domain_ops = &*(*self.domain).ops;
            // fi_av_open: peers numbered in the order inserted.
            let mut av_attr = abi::AvAttr {
                kind: abi::FI_AV_TABLE,
                rx_ctx_bits: 0,
                count: max_peers,
                ep_per_node: 0,
                name: std::ptr::null(),
                map_addr: null_mut(),
                flags: 0,
            };
            let code = (domain_ops.av_open)(self.domain, &mut av_attr, &mut self.av, null_mut());
            check("fi_av_open", code, api)?;
            // fi_cq_open: only failures are reported (selective completion below).
            // With a file descriptor to wait on where the provider has one, else without.
            for wait_obj in [abi::FI_WAIT_FD, abi::FI_WAIT_NONE] {
                let mut cq_attr = abi::CqAttr {
                    size: 0,
                    flags: 0,
                    format: abi::FI_CQ_FORMAT_CONTEXT,
                    wait_obj,
                    signaling_vector: 0,
                    wait_cond: 0,
                    wait_set: null_mut(),
                };
                let code =
                    (domain_ops.cq_open)(self.domain, &mut cq_attr, &mut self.cq, null_mut());
                if code != 0 && wait_obj == abi::FI_WAIT_FD {
                    continue;
                }
                check("fi_cq_open", code, api)?;
                if wait_obj == abi::FI_WAIT_FD {
                    let mut fd: c_int = -1;
                    let cq = self.cq.cast::<abi::Fid>();
                    let code = ((*(*cq).ops).control)(cq, abi::FI_GETWAIT, (&raw mut fd).cast());
                    self.wait_fd = (code == 0 && fd >= 0).then_some(fd);
                }
                break;
            }
            // fi_cntr_open, twice.
            for counter in [&mut self.writes, &mut self.reads] {
                let mut attr = abi::CntrAttr {
                    events: abi::FI_CNTR_EVENTS_COMP,
                    wait_obj: abi::FI_WAIT_NONE,
                    wait_set: null_mut(),
                    flags: 0,
                };
                let code = (domain_ops.cntr_open)(self.domain, &mut attr, counter, null_mut());
                check("fi_cntr_open", code, api)?;
            }
            // fi_endpoint, then fi_ep_bind of each object and fi_enable.
            let code = (domain_ops.endpoint)(self.domain, info, &mut self.ep, null_mut());
            check("fi_endpoint", code, api)?;
            let ep_fid = &mut (*self.ep).fid as *mut abi::Fid;
            let bind = (*(*ep_fid).ops).bind;
            let bindings: [(*mut abi::Fid, u64, &'static str); 4] = [
                (&mut (*self.av).fid, 0, "fi_ep_bind(av)"),
                (
                    &mut (*self.cq).fid,
                    abi::FI_SEND | abi::FI_RECV | abi::FI_SELECTIVE_COMPLETION,
                    "fi_ep_bind(cq)",
                ),
                (
                    &mut (*self.writes).fid,
                    abi::FI_WRITE,
                    "fi_ep_bind(write counter)",
                ),
                (
                    &mut (*self.reads).fid,
                    abi::FI_READ,
                    "fi_ep_bind(read counter)",
                ),
            ];
            for (fid, flags, what) in bindings {
                check(what, bind(ep_fid, fid, flags), api)?;
            }
            let code = ((*(*ep_fid).ops).control)(ep_fid, abi::FI_ENABLE, null_mut());
            check("fi_enable", code, api)?;
        }
        Ok(())
    }

    /// The provider this endpoint runs on (`tcp;ofi_rxm`).
    pub fn provider(&self) -> &str {
        &self.provider
    }

    /// How long an operation may wait to be queued or completed before it fails with
    /// [`OfiError::Stalled`], so that a peer that stopped never hangs this PE (default 60 s).
    pub fn set_patience(&self, patience: Duration) {
        self.patience.set(patience);
    }

    /// This endpoint's address, which peers insert ([`Endpoint::insert_peers`]); it travels
    /// through the bootstrap.
    ///
    /// # Errors
    /// [`OfiError::Call`] if the provider cannot say.
    pub fn name(&self) -> Result<Vec<u8>, OfiError> {
        let mut name = vec![0u8; 256];
        let mut len = name.len();
        // SAFETY: fi_getname of the enabled endpoint into a buffer of `len` bytes.
        let code = unsafe {
            ((*(*self.ep).cm).getname)(&mut (*self.ep).fid, name.as_mut_ptr().cast(), &mut len)
        };
        check("fi_getname", code, self.api)?;
        name.truncate(len);
        Ok(name)
    }

    /// Inserts the peers' addresses ([`Endpoint::name`] of each), in order: peer `i` of
    /// later operations is `names[i]`. Call once, with every peer.
    ///
    /// # Errors
    /// [`OfiError::Call`] if the provider refuses an address.
    pub fn insert_peers(&self, names: &[Vec<u8>]) -> Result<(), OfiError> {
        for name in names {
            let mut index: FiAddr = 0;
            // SAFETY: fi_av_insert of one address of the provider's format, read during the
            // call.
            let inserted = unsafe {
                ((*(*self.av).ops).insert)(
                    self.av,
                    name.as_ptr().cast(),
                    1,
                    &mut index,
                    0,
                    null_mut(),
                )
            };
            if inserted != 1 {
                return Err(OfiError::Call {
                    call: "fi_av_insert",
                    code: inserted,
                    message: self.api.error_text(inserted),
                });
            }
        }
        Ok(())
    }

    /// Registers `len` bytes at `base` for peers to read and write, for as long as the
    /// endpoint lives, and returns what peers need to reach them.
    ///
    /// # Safety
    /// The memory stays allocated, and is only accessed as peers' writes may change it
    /// (through atomics or volatile reads), until the endpoint is dropped.
    ///
    /// # Errors
    /// [`OfiError::Call`] if the provider refuses the registration.
    pub unsafe fn register(&self, base: *mut u8, len: usize) -> Result<RemoteKey, OfiError> {
        let access = abi::FI_READ | abi::FI_WRITE | abi::FI_REMOTE_READ | abi::FI_REMOTE_WRITE;
        let requested_key = self.next_key.get();
        self.next_key.set(requested_key + 1);
        let mut mr: *mut abi::Mr = null_mut();
        // SAFETY: fi_mr_reg on the open domain; the caller keeps the memory allocated.
        let code = unsafe {
            ((*(*self.domain).mr).reg)(
                &mut (*self.domain).fid,
                base.cast::<c_void>(),
                len,
                access,
                0,
                requested_key,
                0,
                &mut mr,
                null_mut(),
            )
        };
        check("fi_mr_reg", code, self.api)?;
        self.regions.borrow_mut().push(mr);
        // SAFETY: the registration just made.
        let key = unsafe { (*mr).key };
        let base = if self.virtual_addresses {
            base as u64
        } else {
            0
        };
        Ok(RemoteKey { key, base })
    }

    /// Whether the provider moves data by itself (`FI_PROGRESS_AUTO`), without calls into
    /// [`Endpoint::progress`].
    pub fn progresses_itself(&self) -> bool {
        // SAFETY: the endpoint's own copy of its offer, with its domain attributes.
        unsafe { (*(*self.info).domain_attr).data_progress == abi::FI_PROGRESS_AUTO }
    }

    /// A file descriptor that becomes readable when this endpoint has something to move, for
    /// a thread to wait on with `poll` after [`Endpoint::may_wait`] said yes; `None` where the
    /// provider has none.
    pub fn wait_fd(&self) -> Option<c_int> {
        self.wait_fd
    }

    /// Whether a thread may now wait on [`Endpoint::wait_fd`] without missing work
    /// (`fi_trywait`): false while the endpoint has something to move already.
    pub fn may_wait(&self) -> bool {
        let mut cq = self.cq.cast::<abi::Fid>();
        // SAFETY: fi_trywait of this endpoint's fabric over its open completion queue.
        self.wait_fd.is_some()
            && unsafe { ((*(*self.fabric).ops).trywait)(self.fabric, &mut cq, 1) } == 0
    }

    /// Reads the completion queue and the counters, which is what moves data on a provider
    /// with manual progress.
    ///
    /// # Errors
    /// [`OfiError::Failed`] if an operation of this endpoint failed.
    pub fn progress(&self) -> Result<(), OfiError> {
        let mut entry = [0u64; 4];
        // SAFETY: fi_cq_read of at most one entry of the context format into `entry`.
        let read = unsafe { ((*(*self.cq).ops).read)(self.cq, entry.as_mut_ptr().cast(), 1) };
        // Selective completion: an entry is only ever written for a failure; `-FI_EAVAIL`
        // (259) says a failure is waiting.
        const FI_EAVAIL: isize = 259;
        // SAFETY: fi_cntr_readerr of the open counters.
        let failed_ops = unsafe {
            ((*(*self.writes).ops).readerr)(self.writes)
                + ((*(*self.reads).ops).readerr)(self.reads)
        };
        if read > 0 || read == -FI_EAVAIL || failed_ops > 0 {
            return Err(OfiError::Failed {
                provider: self.provider.clone(),
            });
        }
        self.retire_sources();
        Ok(())
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        // SAFETY: the objects opened in `open_objects` and the registrations, endpoint
        // first, each closed once; a null one was never opened.
        unsafe {
            // Every object starts with its `struct fid` (abi.rs), so each casts to it.
            let regions: Vec<*mut abi::Fid> = self
                .regions
                .get_mut()
                .drain(..)
                .map(|mr| mr.cast())
                .collect();
            let rest: [*mut abi::Fid; 6] = [
                self.reads.cast(),
                self.writes.cast(),
                self.cq.cast(),
                self.av.cast(),
                self.domain.cast(),
                self.fabric.cast(),
            ];
            let objects = std::iter::once(self.ep.cast()).chain(regions).chain(rest);
            for object in objects.filter(|o: &*mut abi::Fid| !o.is_null()) {
                close(object);
            }
            (self.api.free_info)(self.info);
        }
    }
}
