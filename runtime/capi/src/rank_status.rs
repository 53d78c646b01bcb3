//! This rank's status page for the launcher (`hw::bootstrap::RankStatus`): the call it is in,
//! which the launcher's timeout report names (docs/launcher.md). Only a rank started by the
//! launcher has one; simulated runs and programs started alone do not.

use std::path::PathBuf;
use std::sync::OnceLock;

use hw::bootstrap::{RANK_VAR, RankStatus, SOCKET_VAR};

/// The page, made on the first call (`shmem_init`); `None` outside the launcher's runs.
static STATUS: OnceLock<Option<RankStatus>> = OnceLock::new();

fn open() -> Option<RankStatus> {
    let socket = PathBuf::from(std::env::var_os(SOCKET_VAR)?);
    let rank = std::env::var(RANK_VAR).ok()?.parse().ok()?;
    // Why no error: the page serves the launcher's report only, which then says less.
    RankStatus::create(&socket, rank).ok()
}

/// The rank is inside a call until this is dropped.
pub(crate) struct InCall(Option<&'static RankStatus>);

impl InCall {
    /// Notes that the rank entered `call`.
    pub(crate) fn enter(call: &'static str) -> InCall {
        let status = STATUS.get_or_init(open).as_ref();
        if let Some(status) = status {
            status.enter(call);
        }
        InCall(status)
    }
}

impl Drop for InCall {
    fn drop(&mut self) {
        if let Some(status) = self.0 {
            status.leave();
        }
    }
}
