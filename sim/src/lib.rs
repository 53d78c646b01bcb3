//! placeholder
pub mod topology;
