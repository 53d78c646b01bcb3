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

/// `FI_VERSION(1, 9)`: the interface version asked for; what the providers offer is the same
/// from 1.9 on for endpoints with RMA and atomics.
pub(super) const API_VERSION: u32 = (1 << 16) | 9;

// Capabilities (`fi_info::caps`, `fi_tx_attr::caps`).
pub(super) const FI_RMA: u64 = 1 << 2;
pub(super) const FI_ATOMIC: u64 = 1 << 4;
pub(super) const FI_FENCE: u64 = 1 << 21;
pub(super) const FI_HMEM: u64 = 1 << 47;

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
