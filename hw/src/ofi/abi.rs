//! The part of libfabric's C interface that finding providers needs, written from
//! `<rdma/fabric.h>` of libfabric 1.17 (Debian 12's `libfabric-dev`).
//!
//! Why by hand and versioned: the functions are looked up with their symbol version
//! `FABRIC_1.3`, whose structures libfabric only ever extends at the end (it allocates them
//! itself), so these prefixes stay right for every later 1.x and 2.x library that keeps the
//! version; nothing here needs libfabric's headers at build time.

use std::ffi::{c_char, c_int, c_void};

/// The symbol version of `fi_getinfo`, `fi_dupinfo` and `fi_freeinfo` these layouts belong to.
pub(super) const SYMBOL_VERSION: &str = "FABRIC_1.3";
/// The symbol version of `fi_fabric`, whose `fi_fabric_attr` is the prefix below.
pub(super) const FABRIC_SYMBOL_VERSION: &str = "FABRIC_1.1";

/// `FI_VERSION(1, 9)`: the interface version asked for; what the providers offer is the same
/// from 1.9 on for endpoints with RMA and atomics.
pub(super) const API_VERSION: u32 = (1 << 16) | 9;

// Capabilities (`fi_info::caps`, `fi_tx_attr::caps`).
pub(super) const FI_RMA: u64 = 1 << 2;
pub(super) const FI_ATOMIC: u64 = 1 << 4;
pub(super) const FI_FENCE: u64 = 1 << 21;
pub(super) const FI_HMEM: u64 = 1 << 47;
pub(super) const FI_DELIVERY_COMPLETE: u64 = 1 << 28;

// Ordering (`fi_tx_attr::msg_order`): the legacy bits across all classes of operation, then
// the per-class bits of libfabric 1.17.
pub(super) const FI_ORDER_RAW: u64 = 1 << 1;
pub(super) const FI_ORDER_WAW: u64 = 1 << 4;
pub(super) const FI_ORDER_RMA_RAW: u64 = 1 << 33;
pub(super) const FI_ORDER_RMA_WAW: u64 = 1 << 35;
pub(super) const FI_ORDER_ATOMIC_RAW: u64 = 1 << 37;
pub(super) const FI_ORDER_ATOMIC_WAW: u64 = 1 << 39;

// Memory registration modes (`fi_domain_attr::mr_mode`).
pub(super) const FI_MR_LOCAL: c_int = 1 << 2;
pub(super) const FI_MR_VIRT_ADDR: c_int = 1 << 4;
pub(super) const FI_MR_ALLOCATED: c_int = 1 << 5;
pub(super) const FI_MR_PROV_KEY: c_int = 1 << 6;
pub(super) const FI_MR_ENDPOINT: c_int = 1 << 9;
pub(super) const FI_MR_HMEM: c_int = 1 << 10;

/// `enum fi_ep_type`: `FI_EP_RDM`, reliable unconnected endpoints.
pub(super) const FI_EP_RDM: c_int = 3;

/// `enum fi_progress`.
pub(super) const FI_PROGRESS_AUTO: c_int = 1;
pub(super) const FI_PROGRESS_MANUAL: c_int = 2;

/// `struct fi_tx_attr`.
#[repr(C)]
pub(super) struct TxAttr {
    pub(super) caps: u64,
    pub(super) mode: u64,
    pub(super) op_flags: u64,
    pub(super) msg_order: u64,
    pub(super) comp_order: u64,
    pub(super) inject_size: usize,
    pub(super) size: usize,
    pub(super) iov_limit: usize,
    pub(super) rma_iov_limit: usize,
    pub(super) tclass: u32,
}

/// `struct fi_ep_attr`, as far as this reads and writes it.
#[repr(C)]
pub(super) struct EpAttr {
    pub(super) kind: c_int,
    pub(super) protocol: u32,
    pub(super) protocol_version: u32,
    pub(super) max_msg_size: usize,
}

/// `struct fi_domain_attr`, as far as this reads it.
#[repr(C)]
pub(super) struct DomainAttr {
    pub(super) domain: *mut c_void,
    pub(super) name: *const c_char,
    pub(super) threading: c_int,
    pub(super) control_progress: c_int,
    pub(super) data_progress: c_int,
    pub(super) resource_mgmt: c_int,
    pub(super) av_type: c_int,
    pub(super) mr_mode: c_int,
    pub(super) mr_key_size: usize,
}

/// `struct fi_fabric_attr`.
#[repr(C)]
pub(super) struct FabricAttr {
    pub(super) fabric: *mut c_void,
    pub(super) name: *const c_char,
    pub(super) prov_name: *const c_char,
    pub(super) prov_version: u32,
    pub(super) api_version: u32,
}

/// `struct fi_info`.
#[repr(C)]
pub(super) struct Info {
    pub(super) next: *mut Info,
    pub(super) caps: u64,
    pub(super) mode: u64,
    pub(super) addr_format: u32,
    pub(super) src_addrlen: usize,
    pub(super) dest_addrlen: usize,
    pub(super) src_addr: *mut c_void,
    pub(super) dest_addr: *mut c_void,
    pub(super) handle: *mut c_void,
    pub(super) tx_attr: *mut TxAttr,
    pub(super) rx_attr: *mut c_void,
    pub(super) ep_attr: *mut EpAttr,
    pub(super) domain_attr: *mut DomainAttr,
    pub(super) fabric_attr: *mut FabricAttr,
    pub(super) nic: *mut c_void,
}

/// `uint32_t fi_version(void)`.
pub(super) type VersionFn = unsafe extern "C" fn() -> u32;
/// `int fi_getinfo(uint32_t version, const char *node, const char *service, uint64_t flags,
/// const struct fi_info *hints, struct fi_info **info)`.
pub(super) type GetInfoFn = unsafe extern "C" fn(
    u32,
    *const c_char,
    *const c_char,
    u64,
    *const Info,
    *mut *mut Info,
) -> c_int;
/// `struct fi_info *fi_dupinfo(const struct fi_info *info)`; with NULL, a zeroed `fi_info`
/// with its attributes allocated (what `fi_allocinfo` does).
pub(super) type DupInfoFn = unsafe extern "C" fn(*const Info) -> *mut Info;
/// `void fi_freeinfo(struct fi_info *info)`.
pub(super) type FreeInfoFn = unsafe extern "C" fn(*mut Info);
/// `const char *fi_strerror(int errnum)`.
pub(super) type StrErrorFn = unsafe extern "C" fn(c_int) -> *const c_char;

// The objects of a connection, from `<rdma/fabric.h>`, `fi_domain.h`, `fi_endpoint.h`,
// `fi_cm.h`, `fi_eq.h`, `fi_rma.h` and `fi_atomic.h`: each object starts with `struct fid`,
// and its operations are function pointers in tables libfabric fills in. Pointers this
// module never calls are kept as `Slot`s, for the layout.

/// A function pointer of a table that is never called from here.
type Slot = *const c_void;

/// `fi_addr_t`: a peer's index in an address vector.
pub(super) type FiAddr = u64;

// Operation flags and memory access (`fi_mr_reg`).
pub(super) const FI_READ: u64 = 1 << 8;
pub(super) const FI_WRITE: u64 = 1 << 9;
pub(super) const FI_RECV: u64 = 1 << 10;
pub(super) const FI_SEND: u64 = 1 << 11;
pub(super) const FI_REMOTE_READ: u64 = 1 << 12;
pub(super) const FI_REMOTE_WRITE: u64 = 1 << 13;
pub(super) const FI_SELECTIVE_COMPLETION: u64 = 1 << 59;

/// `FI_ENABLE`, the control command that enables an endpoint.
pub(super) const FI_ENABLE: c_int = 6;
/// `FI_AV_TABLE`: peers are numbered 0, 1, ... in the order inserted.
pub(super) const FI_AV_TABLE: c_int = 2;
/// `FI_GETWAIT`, the control command that returns an object's wait object.
pub(super) const FI_GETWAIT: c_int = 5;
/// `FI_WAIT_NONE`, `FI_WAIT_FD`, `FI_CQ_FORMAT_CONTEXT`, `FI_CNTR_EVENTS_COMP`.
pub(super) const FI_WAIT_NONE: c_int = 0;
pub(super) const FI_WAIT_FD: c_int = 3;
pub(super) const FI_CQ_FORMAT_CONTEXT: c_int = 1;
pub(super) const FI_CNTR_EVENTS_COMP: c_int = 0;
/// `-FI_EAGAIN`: the operation could not be queued now; progress and retry.
pub(super) const FI_EAGAIN: isize = 11;

// `enum fi_datatype` and `enum fi_op`, the members used.
pub(super) const FI_UINT32: c_int = 5;
pub(super) const FI_UINT64: c_int = 7;
pub(super) const FI_SUM: c_int = 2;
pub(super) const FI_BOR: c_int = 6;
pub(super) const FI_BAND: c_int = 7;
pub(super) const FI_BXOR: c_int = 9;
pub(super) const FI_ATOMIC_READ: c_int = 10;
pub(super) const FI_ATOMIC_WRITE: c_int = 11;
pub(super) const FI_CSWAP: c_int = 12;

/// `struct fi_ops`: the operations every object has.
#[repr(C)]
pub(super) struct FidOps {
    pub(super) size: usize,
    pub(super) close: unsafe extern "C" fn(*mut Fid) -> c_int,
    pub(super) bind: unsafe extern "C" fn(*mut Fid, *mut Fid, u64) -> c_int,
    pub(super) control: unsafe extern "C" fn(*mut Fid, c_int, *mut c_void) -> c_int,
}

/// `struct fid`.
#[repr(C)]
pub(super) struct Fid {
    pub(super) fclass: usize,
    pub(super) context: *mut c_void,
    pub(super) ops: *const FidOps,
}

/// `struct fi_ops_fabric`, up to `trywait`.
#[repr(C)]
pub(super) struct FabricOps {
    pub(super) size: usize,
    pub(super) domain:
        unsafe extern "C" fn(*mut Fabric, *mut Info, *mut *mut Domain, *mut c_void) -> c_int,
    _passive_ep: *const c_void,
    _eq_open: *const c_void,
    _wait_open: *const c_void,
    pub(super) trywait: unsafe extern "C" fn(*mut Fabric, *mut *mut Fid, c_int) -> c_int,
}

/// `struct fid_fabric`.
#[repr(C)]
pub(super) struct Fabric {
    pub(super) fid: Fid,
    pub(super) ops: *const FabricOps,
}

/// `struct fi_av_attr`.
#[repr(C)]
pub(super) struct AvAttr {
    pub(super) kind: c_int,
    pub(super) rx_ctx_bits: c_int,
    pub(super) count: usize,
    pub(super) ep_per_node: usize,
    pub(super) name: *const c_char,
    pub(super) map_addr: *mut c_void,
    pub(super) flags: u64,
}

/// `struct fi_cq_attr`.
#[repr(C)]
pub(super) struct CqAttr {
    pub(super) size: usize,
    pub(super) flags: u64,
    pub(super) format: c_int,
    pub(super) wait_obj: c_int,
    pub(super) signaling_vector: c_int,
    pub(super) wait_cond: c_int,
    pub(super) wait_set: *mut c_void,
}

/// `struct fi_cntr_attr`.
#[repr(C)]
pub(super) struct CntrAttr {
    pub(super) events: c_int,
    pub(super) wait_obj: c_int,
    pub(super) wait_set: *mut c_void,
    pub(super) flags: u64,
}

/// `struct fi_ops_domain`, up to `cntr_open`.
#[repr(C)]
pub(super) struct DomainOps {
    pub(super) size: usize,
    pub(super) av_open:
        unsafe extern "C" fn(*mut Domain, *mut AvAttr, *mut *mut Av, *mut c_void) -> c_int,
    pub(super) cq_open:
        unsafe extern "C" fn(*mut Domain, *mut CqAttr, *mut *mut Cq, *mut c_void) -> c_int,
    pub(super) endpoint:
        unsafe extern "C" fn(*mut Domain, *mut Info, *mut *mut Ep, *mut c_void) -> c_int,
    pub(super) scalable_ep: Slot,
    pub(super) cntr_open:
        unsafe extern "C" fn(*mut Domain, *mut CntrAttr, *mut *mut Cntr, *mut c_void) -> c_int,
}

/// `struct fi_ops_mr`, up to `reg`.
#[repr(C)]
pub(super) struct MrOps {
    pub(super) size: usize,
    pub(super) reg: unsafe extern "C" fn(
        *mut Fid,
        *const c_void,
        usize,
        u64,
        u64,
        u64,
        u64,
        *mut *mut Mr,
        *mut c_void,
    ) -> c_int,
}

/// `struct fid_domain`.
#[repr(C)]
pub(super) struct Domain {
    pub(super) fid: Fid,
    pub(super) ops: *const DomainOps,
    pub(super) mr: *const MrOps,
}

/// `struct fid_mr`.
#[repr(C)]
pub(super) struct Mr {
    pub(super) fid: Fid,
    pub(super) mem_desc: *mut c_void,
    pub(super) key: u64,
}

/// `struct fi_ops_av`, up to `insert`.
#[repr(C)]
pub(super) struct AvOps {
    pub(super) size: usize,
    pub(super) insert:
        unsafe extern "C" fn(*mut Av, *const c_void, usize, *mut FiAddr, u64, *mut c_void) -> c_int,
}

/// `struct fid_av`.
#[repr(C)]
pub(super) struct Av {
    pub(super) fid: Fid,
    pub(super) ops: *const AvOps,
}

/// `struct fi_ops_cq`, up to `read`.
#[repr(C)]
pub(super) struct CqOps {
    pub(super) size: usize,
    pub(super) read: unsafe extern "C" fn(*mut Cq, *mut c_void, usize) -> isize,
}

/// `struct fid_cq`.
#[repr(C)]
pub(super) struct Cq {
    pub(super) fid: Fid,
    pub(super) ops: *const CqOps,
}

/// `struct fi_ops_cntr`, up to `read`.
#[repr(C)]
pub(super) struct CntrOps {
    pub(super) size: usize,
    pub(super) read: unsafe extern "C" fn(*mut Cntr) -> u64,
    pub(super) readerr: unsafe extern "C" fn(*mut Cntr) -> u64,
}

/// `struct fid_cntr`.
#[repr(C)]
pub(super) struct Cntr {
    pub(super) fid: Fid,
    pub(super) ops: *const CntrOps,
}

/// `struct fi_ops_cm`, up to `getname`.
#[repr(C)]
pub(super) struct CmOps {
    pub(super) size: usize,
    pub(super) setname: Slot,
    pub(super) getname: unsafe extern "C" fn(*mut Fid, *mut c_void, *mut usize) -> c_int,
}

/// `fi_read` and `fi_write` through the table: the endpoint, the local buffer (`const` for a
/// write, which is the same in the ABI), its length and descriptor, the peer, the remote
/// address and key, and the operation's context.
pub(super) type RmaFn = unsafe extern "C" fn(
    *mut Ep,
    *mut c_void,
    usize,
    *mut c_void,
    FiAddr,
    u64,
    u64,
    *mut c_void,
) -> isize;

/// `struct fi_ops_rma`, up to `write`.
#[repr(C)]
pub(super) struct RmaOps {
    pub(super) size: usize,
    pub(super) read: RmaFn,
    pub(super) readv: Slot,
    pub(super) readmsg: Slot,
    pub(super) write: RmaFn,
}

/// `struct fi_ops_atomic`, up to `compwrite`.
#[repr(C)]
pub(super) struct AtomicOps {
    pub(super) size: usize,
    pub(super) write: unsafe extern "C" fn(
        *mut Ep,
        *const c_void,
        usize,
        *mut c_void,
        FiAddr,
        u64,
        u64,
        c_int,
        c_int,
        *mut c_void,
    ) -> isize,
    pub(super) writev: Slot,
    pub(super) writemsg: Slot,
    pub(super) inject: Slot,
    pub(super) readwrite: unsafe extern "C" fn(
        *mut Ep,
        *const c_void,
        usize,
        *mut c_void,
        *mut c_void,
        *mut c_void,
        FiAddr,
        u64,
        u64,
        c_int,
        c_int,
        *mut c_void,
    ) -> isize,
    pub(super) readwritev: Slot,
    pub(super) readwritemsg: Slot,
    pub(super) compwrite: unsafe extern "C" fn(
        *mut Ep,
        *const c_void,
        usize,
        *mut c_void,
        *const c_void,
        *mut c_void,
        *mut c_void,
        *mut c_void,
        FiAddr,
        u64,
        u64,
        c_int,
        c_int,
        *mut c_void,
    ) -> isize,
}

/// `struct fid_ep`.
#[repr(C)]
pub(super) struct Ep {
    pub(super) fid: Fid,
    pub(super) ops: Slot,
    pub(super) cm: *const CmOps,
    pub(super) msg: Slot,
    pub(super) rma: *const RmaOps,
    pub(super) tagged: Slot,
    pub(super) atomic: *const AtomicOps,
}

/// `int fi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context)`.
pub(super) type FabricFn =
    unsafe extern "C" fn(*mut FabricAttr, *mut *mut Fabric, *mut c_void) -> c_int;
