//! Litmus tests: the data form (`ast`) of the text format of `docs/litmus-format.md`.

mod ast;

pub use ast::*;
