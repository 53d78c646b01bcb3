//! Litmus tests: the data form (`ast`) of the text format of `docs/litmus-format.md`, and its
//! parser.

mod ast;
mod config;
mod instr;
mod parse;
mod validity;

pub use ast::*;
pub use config::{Config, Hang, Modifier, Platform};
pub use instr::{Instr, NONE_SATISFIED};
pub use parse::{KEYWORDS, ParseError, ParseErrorKind, parse};
pub use validity::{DoesNotApply, Undefined, does_not_apply, undefined_behaviour};
