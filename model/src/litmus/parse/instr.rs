//! The instruction lines of a program (the table "Programs" of `docs/litmus-format.md`).

use super::cursor::{Cursor, PResult};
use super::error::ParseErrorKind;
use super::lex::TokKind;
use super::{Parser, register_number};
use crate::litmus::{AmoOp, Cmp, Ctx, GetKind, Instr, PeId, PutKind, Reg, SignalOp, Value};

impl Parser {
    /// One instruction of PE `pe`; the caller checks the end of the line.
    pub(super) fn instruction(&mut self, pe: PeId, cur: &mut Cursor<'_>) -> PResult<Instr> {
        let first = cur.word("an instruction")?;
        if let Some(reg) = register(cur, first.text, first.column)? {
            cur.punct("=", "'=' after the register")?;
            let span = cur.span();
            let op = cur.word("an instruction after '='")?;
            return self.fetching(pe, reg, op.text, cur).map_err(|e| match e.1 {
                ParseErrorKind::UnknownInstruction(_) => (span, e.1),
                _ => e,
            });
        }
        let column = first.column;
        let instr = match first.text {
            "put" | "p" | "put_nbi" => {
                let dst = self.loc(cur)?;
                cur.punct("=", "'=' after the target")?;
                let value = value(cur)?;
                let kind = match first.text {
                    "put" => PutKind::Put,
                    "p" => PutKind::P,
                    _ => PutKind::PutNbi,
                };
                Instr::Put {
                    kind,
                    dst,
                    value,
                    ctx: self.ctx(pe, cur)?,
                }
            }
            "set" => {
                let dst = self.loc(cur)?;
                cur.punct("=", "'=' after the target")?;
                let op = AmoOp::Set(value(cur)?);
                self.amo(pe, op, dst, None, false, cur)?
            }
            "add" | "and" | "or" | "xor" => {
                let dst = self.loc(cur)?;
                let v = value(cur)?;
                let op = match first.text {
                    "add" => AmoOp::Add(v),
                    "and" => AmoOp::And(v),
                    "or" => AmoOp::Or(v),
                    _ => AmoOp::Xor(v),
                };
                self.amo(pe, op, dst, None, false, cur)?
            }
            "inc" => {
                let dst = self.loc(cur)?;
                self.amo(pe, AmoOp::Inc, dst, None, false, cur)?
            }
            "put_signal" | "put_signal_nbi" => {
                self.put_signal(pe, first.text == "put_signal_nbi", cur)?
            }
            "fence" => Instr::Fence {
                ctx: self.ctx(pe, cur)?,
            },
            "quiet" => Instr::Quiet {
                ctx: self.ctx(pe, cur)?,
            },
            "barrier_all" => Instr::BarrierAll,
            "sync_all" => Instr::SyncAll,
            "wait" | "signal_wait" => {
                let var = self.var(cur)?;
                let cmp = cmp(cur)?;
                let value = cur.number("a number to compare with")?;
                if first.text == "wait" {
                    Instr::Wait { var, cmp, value }
                } else {
                    Instr::SignalWait { var, cmp, value }
                }
            }
            "st" => {
                let var = self.var(cur)?;
                cur.punct("=", "'=' after the variable")?;
                Instr::Store {
                    var,
                    value: value(cur)?,
                }
            }
            other
                if FETCHING.contains(&other)
                    || other.ends_with("_nbi")
                        && FETCHING.contains(&other.trim_end_matches("_nbi")) =>
            {
                return Err((
                    cur.span_of(first),
                    ParseErrorKind::Expected {
                        expected: format!("'rK =' before '{other}'"),
                        found: format!("'{other}'"),
                    },
                ));
            }
            other => {
                return Err((
                    crate::litmus::Span {
                        line: cur.span().line,
                        column,
                    },
                    ParseErrorKind::UnknownInstruction(other.to_string()),
                ));
            }
        };
        Ok(instr)
    }

    /// `rK = ...`: the instructions that write a register.
    fn fetching(&mut self, pe: PeId, reg: Reg, op: &str, cur: &mut Cursor<'_>) -> PResult<Instr> {
        let get_kind = match op {
            "get" => Some(GetKind::Get),
            "g" => Some(GetKind::G),
            "get_nbi" => Some(GetKind::GetNbi),
            _ => None,
        };
        if let Some(kind) = get_kind {
            let src = self.loc(cur)?;
            return Ok(Instr::Get {
                kind,
                reg,
                src,
                ctx: self.ctx(pe, cur)?,
            });
        }
        if op == "ld" {
            return Ok(Instr::Load {
                reg,
                var: self.var(cur)?,
            });
        }
        let (base, nbi) = match op.strip_suffix("_nbi") {
            Some(base) => (base, true),
            None => (op, false),
        };
        if !FETCHING.contains(&base) {
            return cur.error(ParseErrorKind::UnknownInstruction(op.to_string()));
        }
        let dst = self.loc(cur)?;
        let amo = match base {
            "fetch" => AmoOp::Fetch,
            "swap" => AmoOp::Swap(value(cur)?),
            "compare_swap" => {
                let cond = value(cur)?;
                AmoOp::CompareSwap {
                    cond,
                    new: value(cur)?,
                }
            }
            "fetch_add" => AmoOp::Add(value(cur)?),
            "fetch_inc" => AmoOp::Inc,
            "fetch_and" => AmoOp::And(value(cur)?),
            "fetch_or" => AmoOp::Or(value(cur)?),
            _ => AmoOp::Xor(value(cur)?),
        };
        self.amo(pe, amo, dst, Some(reg), nbi, cur)
    }

    fn amo(
        &mut self,
        pe: PeId,
        op: AmoOp,
        dst: crate::litmus::Loc,
        fetch: Option<Reg>,
        nbi: bool,
        cur: &mut Cursor<'_>,
    ) -> PResult<Instr> {
        Ok(Instr::Amo {
            op,
            dst,
            fetch,
            nbi,
            ctx: self.ctx(pe, cur)?,
        })
    }

    /// `put_signal x@P = V, s SET|ADD W [ctx C]`.
    fn put_signal(&mut self, pe: PeId, nbi: bool, cur: &mut Cursor<'_>) -> PResult<Instr> {
        let dst = self.loc(cur)?;
        cur.punct("=", "'=' after the target")?;
        let value = value(cur)?;
        cur.punct(",", "',' and the signal after the value")?;
        let var = self.var(cur)?;
        if cur.at_punct("@") {
            cur.bump();
            let span = cur.span();
            let signal_pe = cur.number("a PE number after '@'")?;
            if signal_pe != u64::from(dst.pe) {
                return Err((
                    span,
                    ParseErrorKind::SignalOnOtherPe {
                        data_pe: dst.pe,
                        signal_pe,
                    },
                ));
            }
        }
        let op = match cur.peek().map(|t| t.text) {
            Some("SET") => SignalOp::Set,
            Some("ADD") => SignalOp::Add,
            _ => return cur.expected("'SET' or 'ADD' after the signal"),
        };
        cur.bump();
        let signal_value = cur.number("the signal operand")?;
        Ok(Instr::PutSignal {
            dst,
            value,
            signal: crate::litmus::Loc { var, pe: dst.pe },
            op,
            signal_value,
            nbi,
            ctx: self.ctx(pe, cur)?,
        })
    }

    /// An optional `ctx NAME`; contexts are numbered per PE in order of first use.
    fn ctx(&mut self, pe: PeId, cur: &mut Cursor<'_>) -> PResult<Ctx> {
        if !cur.at_word("ctx") {
            return Ok(Ctx::DEFAULT);
        }
        cur.bump();
        let name = match cur.peek() {
            Some(t)
                if t.kind == TokKind::Word
                    && t.text.starts_with(|c: char| c.is_ascii_uppercase())
                    && t.text
                        .bytes()
                        .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_') =>
            {
                t.text
            }
            _ => return cur.expected("a context name in upper case after 'ctx'"),
        };
        let names = &mut self.ctx_names[pe as usize];
        let idx = match names.iter().position(|n| n == name) {
            Some(idx) => idx,
            None => {
                if names.len() >= usize::from(u8::MAX) {
                    return cur.error(ParseErrorKind::TooManyContexts);
                }
                names.push(name.to_string());
                names.len() - 1
            }
        };
        cur.bump();
        Ok(Ctx(idx as u8 + 1))
    }
}

/// The fetching atomics, without `_nbi`.
const FETCHING: &[&str] = &[
    "fetch",
    "swap",
    "compare_swap",
    "fetch_add",
    "fetch_inc",
    "fetch_and",
    "fetch_or",
    "fetch_xor",
];

/// `Some(reg)` if `word` is a register, an error if it is spelled like one beyond `r15`.
pub(super) fn register(cur: &Cursor<'_>, word: &str, column: u32) -> PResult<Option<Reg>> {
    match register_number(word) {
        None => Ok(None),
        Some(n) if n <= 15 => Ok(Some(Reg(n as u8))),
        Some(_) => Err((
            crate::litmus::Span {
                line: cur.span().line,
                column,
            },
            ParseErrorKind::RegisterOutOfRange(word.to_string()),
        )),
    }
}

/// A value operand: a decimal literal or a register.
fn value(cur: &mut Cursor<'_>) -> PResult<Value> {
    const WHAT: &str = "a value (a number or a register)";
    let Some(tok) = cur.peek().filter(|t| t.kind == TokKind::Word) else {
        return cur.expected(WHAT);
    };
    if let Some(reg) = register(cur, tok.text, tok.column)? {
        cur.bump();
        return Ok(Value::Reg(reg));
    }
    Ok(Value::Const(cur.number(WHAT)?))
}

/// A comparison operator.
pub(super) fn cmp(cur: &mut Cursor<'_>) -> PResult<Cmp> {
    let cmp = match cur
        .peek()
        .filter(|t| t.kind == TokKind::Punct)
        .map(|t| t.text)
    {
        Some("==") => Cmp::Eq,
        Some("!=") => Cmp::Ne,
        Some(">") => Cmp::Gt,
        Some(">=") => Cmp::Ge,
        Some("<") => Cmp::Lt,
        Some("<=") => Cmp::Le,
        _ => return cur.expected("a comparison ('==', '!=', '>', '>=', '<', '<=')"),
    };
    cur.bump();
    Ok(cmp)
}
