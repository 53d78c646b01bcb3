//! Litmus tests: the data form (`ast`) of the text format of `docs/litmus-format.md`, and its
//! parser.

mod ast;
mod parse;

pub use ast::*;
pub use parse::{ParseError, ParseErrorKind, parse};
