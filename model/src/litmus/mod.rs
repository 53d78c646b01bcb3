//! Litmus tests: the data form (`ast`) of the text format of `docs/litmus-format.md`, and its
//! parser.

mod ast;
mod config;
mod parse;

pub use ast::*;
pub use config::{Config, Hang, Modifier, Platform};
pub use parse::{ParseError, ParseErrorKind, parse};
