//! The litmus text format (`docs/litmus-format.md`) to [`Litmus`].
//!
//! The format is line-oriented: the header (`litmus`, `source`, `pes`, `init`), the programs
//! (`P<k>:` then one instruction per line), one condition line, then `expect` lines. Each line
//! is tokenised on its own (`lex`), read with a `Cursor`, and checked as soon as the facts it
//! depends on are known. `pes` must come before `init`, the programs and `expect`, because
//! PE numbers in them are checked against it.
//!
//! Choices the format document leaves open, decided here:
//! - the signal of a put-with-signal is written as a bare variable (`s SET 1`) and lives on
//!   the data's PE; `s@P` is accepted only when `P` is that PE, and rejected otherwise, since
//!   the AST (and SHMEM) have no put-with-signal whose signal is on another PE;
//! - a variable may not be named like a keyword or mnemonic (`g`, `p`, `and`, `ctx`, ...) nor
//!   like a register;
//! - `nv-mix` host numbers are canonical (the host of P0 is 0, then in order of first PE),
//!   so `nv-mix(1|0)` and `nv-mix(0|1)` are the same configuration (and duplicates).

mod cond;
mod cursor;
mod error;
mod idioms;
mod instr;
mod lex;
mod nbi;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_second_edition;

pub use error::{ParseError, ParseErrorKind};

use cursor::{Cursor, Located, PResult};
use lex::TokKind;

use super::{Condition, Expectation, Instr, Litmus, Loc, PeId, Span, VarId};

/// Parses the text of a litmus file. `file_name` only labels errors.
///
/// # Errors
///
/// The first violation of `docs/litmus-format.md`, located at its line and column.
pub fn parse(file_name: &str, text: &str) -> Result<Litmus, ParseError> {
    let mut parser = Parser::default();
    parser.file(text).map_err(|(span, kind)| ParseError {
        file: file_name.to_string(),
        line: span.line,
        column: span.column,
        kind,
    })?;
    parser.finish(text).map_err(|(span, kind)| ParseError {
        file: file_name.to_string(),
        line: span.line,
        column: span.column,
        kind,
    })
}

/// What is known so far about the file.
#[derive(Default)]
struct Parser {
    name: Option<String>,
    source: Option<String>,
    n_pes: Option<u32>,
    vars: Vec<String>,
    init: Vec<(Loc, u64)>,
    programs: Vec<Vec<(Instr, Span)>>,
    /// The line of each PE's `P<k>:`, for duplicate reports.
    program_lines: Vec<Option<u32>>,
    /// The PE whose program the following instructions belong to.
    current: Option<PeId>,
    /// Per PE, the names of its contexts; `Ctx(i + 1)` is `ctx_names[pe][i]`.
    ctx_names: Vec<Vec<String>>,
    condition: Option<Condition>,
    expect: Vec<Expectation>,
    /// The arrays declared so far (`array buf 4`).
    arrays: Vec<Array>,
    /// Per PE, the nbi fetches whose register no quiet has completed yet.
    nbi_fetches: Vec<Vec<nbi::Pending>>,
}

/// An array variable: `len` words interned as `name[0]`, `name[1]`, ... from `first` on.
#[derive(Clone)]
struct Array {
    name: String,
    first: VarId,
    len: u16,
}

impl Parser {
    fn file(&mut self, text: &str) -> PResult<()> {
        for (idx, raw) in text.lines().enumerate() {
            let line_no = idx as u32 + 1;
            let line = lex::strip_comment(raw);
            if line.trim().is_empty() {
                continue;
            }
            if self.name.is_none() {
                self.name = Some(name_line(line, line_no)?);
                continue;
            }
            let toks = lex::lex(line).map_err(|(column, kind)| {
                (
                    Span {
                        line: line_no,
                        column,
                    },
                    kind,
                )
            })?;
            let end_column = line.trim_end().chars().count() as u32 + 1;
            let mut cur = Cursor::new(toks, line_no, end_column);
            self.line(&mut cur)?;
        }
        Ok(())
    }

    /// One line that is not the `litmus` line.
    fn line(&mut self, cur: &mut Cursor<'_>) -> PResult<()> {
        let first = cur.peek().expect("blank lines are skipped before lexing");
        let is_word = |w: &str| first.kind == TokKind::Word && first.text == w;
        if is_word("litmus") {
            return cur.error(ParseErrorKind::DuplicateHeader("litmus"));
        }
        if is_word("source") {
            return self.source_line(cur);
        }
        if is_word("pes") {
            return self.pes_line(cur);
        }
        if is_word("init") {
            return self.init_line(cur);
        }
        if is_word("array") {
            return self.array_line(cur);
        }
        if is_word("expect") {
            return self.expect_line(cur);
        }
        if is_word("exists")
            || is_word("forall")
            || (first.kind == TokKind::Punct && first.text == "~")
        {
            return self.condition_line(cur);
        }
        if self.condition.is_some() {
            return cur.expected("'expect CONFIG OBSERVATION' after the condition");
        }
        if let Some(pe) = program_header(cur) {
            return self.program_header(cur, pe);
        }
        let Some(pe) = self.current else {
            return cur.error(ParseErrorKind::InstructionOutsideProgram);
        };
        let span = cur.span();
        let instr = self.instruction(pe, cur)?;
        cur.end()?;
        self.check_nbi_registers(pe, &instr, span)?;
        self.programs[pe as usize].push((instr, span));
        Ok(())
    }

    /// `array NAME N`: a variable of `N` words, declared before any use of it.
    fn array_line(&mut self, cur: &mut Cursor<'_>) -> PResult<()> {
        cur.bump();
        let span = cur.span();
        let name = cur.word("an array name after 'array'")?.text.to_string();
        if self.vars.contains(&name) || self.arrays.iter().any(|a| a.name == name) {
            return Err((span, ParseErrorKind::ArrayAfterUse(name)));
        }
        self.check_var_name(&name, span)?;
        let len_span = cur.span();
        let len = cur.number("the array's length in words")?;
        if !(1..=MAX_ARRAY_WORDS).contains(&len) {
            return Err((len_span, ParseErrorKind::ArrayLength(len)));
        }
        cur.end()?;
        let first = VarId(self.vars.len() as u16);
        self.vars.extend((0..len).map(|i| format!("{name}[{i}]")));
        self.arrays.push(Array {
            name,
            first,
            len: len as u16,
        });
        Ok(())
    }

    fn source_line(&mut self, cur: &mut Cursor<'_>) -> PResult<()> {
        if self.source.is_some() {
            return cur.error(ParseErrorKind::DuplicateHeader("source"));
        }
        cur.bump();
        match cur.peek() {
            Some(t) if t.kind == TokKind::Str => {
                cur.bump();
                cur.end()?;
                self.source = Some(t.text.to_string());
                Ok(())
            }
            _ => cur.expected("a quoted text after 'source'"),
        }
    }

    fn pes_line(&mut self, cur: &mut Cursor<'_>) -> PResult<()> {
        if self.n_pes.is_some() {
            return cur.error(ParseErrorKind::DuplicateHeader("pes"));
        }
        cur.bump();
        let span = cur.span();
        let n = cur.number("a number of PEs after 'pes'")?;
        if !(1..=8).contains(&n) {
            return Err((span, ParseErrorKind::PesOutOfRange(n)));
        }
        cur.end()?;
        self.n_pes = Some(n as u32);
        self.programs = vec![Vec::new(); n as usize];
        self.program_lines = vec![None; n as usize];
        self.ctx_names = vec![Vec::new(); n as usize];
        self.nbi_fetches = vec![Vec::new(); n as usize];
        Ok(())
    }

    fn init_line(&mut self, cur: &mut Cursor<'_>) -> PResult<()> {
        self.need_pes(cur)?;
        cur.bump();
        loop {
            let loc = self.loc(cur)?;
            cur.punct("=", "'=' after the location")?;
            let value = cur.number("an initial value")?;
            self.init.retain(|(l, _)| *l != loc);
            if value != 0 {
                self.init.push((loc, value));
            }
            if !cur.eat_punct(";") || cur.peek().is_none() {
                return cur.end();
            }
        }
    }

    fn program_header(&mut self, cur: &mut Cursor<'_>, pe: u64) -> PResult<()> {
        let n_pes = self.need_pes(cur)?;
        if pe >= u64::from(n_pes) {
            return cur.error(ParseErrorKind::PeOutOfRange { pe, n_pes });
        }
        let pe = pe as PeId;
        if let Some(first_line) = self.program_lines[pe as usize] {
            return cur.error(ParseErrorKind::DuplicateProgram { pe, first_line });
        }
        self.program_lines[pe as usize] = Some(cur.span().line);
        self.current = Some(pe);
        cur.bump();
        cur.bump();
        cur.end()
    }

    /// The PE count, or an error at this line if `pes` has not come yet.
    fn need_pes(&self, cur: &Cursor<'_>) -> PResult<u32> {
        match self.n_pes {
            Some(n) => Ok(n),
            None => cur.error(ParseErrorKind::Missing("'pes N' before this line")),
        }
    }

    /// `x@P`, with `P` checked against `pes`.
    fn loc(&mut self, cur: &mut Cursor<'_>) -> PResult<Loc> {
        let var = self.var(cur)?;
        cur.punct("@", "'@' and a PE number after the variable")?;
        let pe = self.pe_number(cur, "a PE number after '@'")?;
        Ok(Loc { var, pe })
    }

    /// A PE number below `pes`.
    fn pe_number(&self, cur: &mut Cursor<'_>, what: &str) -> PResult<PeId> {
        let n_pes = self.need_pes(cur)?;
        let span = cur.span();
        let pe = cur.number(what)?;
        if pe >= u64::from(n_pes) {
            return Err((span, ParseErrorKind::PeOutOfRange { pe, n_pes }));
        }
        Ok(pe as PeId)
    }

    /// A variable name, interned in order of first appearance, or one word of an array
    /// (`buf[2]`).
    fn var(&mut self, cur: &mut Cursor<'_>) -> PResult<VarId> {
        let span = cur.span();
        let tok = cur.word("a variable name")?;
        let name = tok.text;
        if let Some(array) = self.arrays.iter().find(|a| a.name == name) {
            let array = array.clone();
            if !cur.eat_punct("[") {
                return Err((span, ParseErrorKind::ArrayNeedsIndex(array.name, array.len)));
            }
            let index_span = cur.span();
            let index = cur.number("a word index after '['")?;
            if index >= u64::from(array.len) {
                return Err((
                    index_span,
                    ParseErrorKind::ArrayIndex {
                        name: array.name,
                        index,
                        len: array.len,
                    },
                ));
            }
            cur.punct("]", "']' after the index")?;
            return Ok(VarId(array.first.0 + index as u16));
        }
        self.check_var_name(name, span)?;
        if cur.at_punct("[") {
            return Err((cur.span(), ParseErrorKind::NotAnArray(name.to_string())));
        }
        let idx = match self.vars.iter().position(|v| v == name) {
            Some(idx) => idx,
            None => {
                self.vars.push(name.to_string());
                self.vars.len() - 1
            }
        };
        Ok(VarId(idx as u16))
    }

    /// A name that may name a variable: lower case, not a keyword, not a register.
    fn check_var_name(&self, name: &str, span: Span) -> PResult<()> {
        let valid = name.starts_with(|c: char| c.is_ascii_lowercase())
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
        if !valid {
            return Err((
                span,
                ParseErrorKind::Expected {
                    expected: "a variable name (lower case)".to_string(),
                    found: format!("'{name}'"),
                },
            ));
        }
        if KEYWORDS.contains(&name)
            || instr::is_sized_atomic(name)
            || register_number(name).is_some()
        {
            return Err((span, ParseErrorKind::ReservedName(name.to_string())));
        }
        Ok(())
    }

    /// The checks that need the whole file.
    fn finish(self, text: &str) -> Result<Litmus, Located> {
        let eof = Span {
            line: text.lines().count() as u32 + 1,
            column: 1,
        };
        let name = self
            .name
            .ok_or((eof, ParseErrorKind::Missing("'litmus NAME' line")))?;
        let source = self
            .source
            .ok_or((eof, ParseErrorKind::Missing("'source \"...\"' line")))?;
        let n_pes = self
            .n_pes
            .ok_or((eof, ParseErrorKind::Missing("'pes N' line")))?;
        let condition = self.condition.ok_or((
            eof,
            ParseErrorKind::Missing("condition ('exists', 'forall' or '~exists')"),
        ))?;
        Ok(Litmus {
            name,
            source,
            n_pes,
            vars: self.vars,
            init: self.init,
            programs: self.programs,
            condition,
            expect: self.expect,
        })
    }
}

/// Names that cannot be variables: line keywords and instruction mnemonics.
pub const KEYWORDS: &[&str] = &[
    "litmus",
    "source",
    "pes",
    "init",
    "exists",
    "forall",
    "expect",
    "ctx",
    "put",
    "p",
    "put_nbi",
    "get",
    "g",
    "get_nbi",
    "set",
    "add",
    "inc",
    "and",
    "or",
    "xor",
    "fetch",
    "swap",
    "compare_swap",
    "fetch_add",
    "fetch_inc",
    "fetch_and",
    "fetch_or",
    "fetch_xor",
    "fetch_nbi",
    "swap_nbi",
    "compare_swap_nbi",
    "fetch_add_nbi",
    "fetch_inc_nbi",
    "fetch_and_nbi",
    "fetch_or_nbi",
    "fetch_xor_nbi",
    "put_signal",
    "put_signal_nbi",
    "fence",
    "quiet",
    "barrier_all",
    "sync_all",
    "wait",
    "signal_wait",
    "ld",
    "st",
    "array",
    "signal_fetch",
    "test",
    "test_any",
    "wait_all",
    "wait_any",
    "pe_quiet",
    "team_sync",
    "team_barrier",
    "until",
];

/// The longest array, in words.
const MAX_ARRAY_WORDS: u64 = 64;

/// `Some(n)` if `word` is spelled like a register (`r` and digits), whatever `n` is.
fn register_number(word: &str) -> Option<u64> {
    let digits = word.strip_prefix('r')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(digits.parse::<u64>().unwrap_or(u64::MAX))
}

/// `P<k>:` alone on its line: returns `k`.
fn program_header(cur: &Cursor<'_>) -> Option<u64> {
    let pe = pe_label(cur.peek()?.text)?;
    let colon = cur.peek2()?;
    (colon.kind == TokKind::Punct && colon.text == ":").then_some(pe)
}

/// `P<k>` as used by program headers and condition atoms.
fn pe_label(word: &str) -> Option<u64> {
    let digits = word.strip_prefix('P')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(digits.parse::<u64>().unwrap_or(u64::MAX))
}

/// The first line: `litmus NAME`, where the name may hold any character but white space.
fn name_line(line: &str, line_no: u32) -> PResult<String> {
    let at = |byte: usize| Span {
        line: line_no,
        column: line[..byte].chars().count() as u32 + 1,
    };
    let start = line.len() - line.trim_start().len();
    let body = line.trim_end();
    let first_end = body[start..]
        .find(char::is_whitespace)
        .map_or(body.len(), |i| start + i);
    if &body[start..first_end] != "litmus" {
        return Err((
            at(start),
            ParseErrorKind::Expected {
                expected: "'litmus NAME' as the first line".to_string(),
                found: format!("'{}'", &body[start..first_end]),
            },
        ));
    }
    let name_start = body.len() - body[first_end..].trim_start().len();
    if name_start == body.len() {
        return Err((
            at(body.len()),
            ParseErrorKind::Expected {
                expected: "a test name after 'litmus'".to_string(),
                found: "end of line".to_string(),
            },
        ));
    }
    let name_end = body[name_start..]
        .find(char::is_whitespace)
        .map_or(body.len(), |i| name_start + i);
    if name_end != body.len() {
        let extra_start = body.len() - body[name_end..].trim_start().len();
        let extra = body[extra_start..].split_whitespace().next().unwrap_or("");
        return Err((
            at(extra_start),
            ParseErrorKind::Expected {
                expected: "end of line after the test name (names have no spaces)".to_string(),
                found: format!("'{extra}'"),
            },
        ));
    }
    Ok(body[name_start..].to_string())
}
