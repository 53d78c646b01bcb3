//! The built-in workloads of `rshmem run`, as a library: the `rshmem` binary runs them by
//! name, and the examples in `tools/examples` run the NVSHMEM guide's examples one by one.

pub mod workloads;
