//! The instruction lines of a program (the table "Programs" of `docs/litmus-format.md`).

use super::cursor::{Cursor, PResult};
use super::error::ParseErrorKind;
use super::lex::TokKind;
use super::{Parser, register_number};
use crate::litmus::{
    AmoOp, AmoWidth, Cmp, Ctx, GetKind, Instr, PeId, PutKind, Reg, SignalOp, Value,
};

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
                let kind = match first.text {
                    "put" => PutKind::Put,
                    "p" => PutKind::P,
                    _ => PutKind::PutNbi,
                };
                let (dst, words) = self.put_target(kind, cur)?;
                cur.punct("=", "'=' after the target")?;
                let value = value(cur)?;
                let ctx = self.ctx(pe, cur)?;
                match words {
                    Some(words) => Instr::PutArray {
                        kind,
                        dst,
                        words,
                        value,
                        ctx,
                    },
                    None => Instr::Put {
                        kind,
                        dst,
                        value,
                        ctx,
                    },
                }
            }
            "pe_quiet" => Instr::PeQuiet {
                pe: self.pe_number(cur, "a PE number after 'pe_quiet'")?,
            },
            "team_sync" | "team_barrier" => Instr::Team {
                pes: self.team(pe, first.text, cur)?,
                barrier: first.text == "team_barrier",
            },
            "wait_all" => {
                let (vars, cmp, value) = self.word_list(cur)?;
                Instr::WaitAll { vars, cmp, value }
            }
            other if width_base(other).is_some_and(|(b, _)| NON_FETCHING.contains(&b)) => {
                let (base, width) = width_base(other).expect("checked by the guard");
                let dst = self.loc(cur)?;
                let op = match base {
                    "set" => {
                        cur.punct("=", "'=' after the target")?;
                        AmoOp::Set(value(cur)?)
                    }
                    "add" => AmoOp::Add(value(cur)?),
                    "and" => AmoOp::And(value(cur)?),
                    "or" => AmoOp::Or(value(cur)?),
                    "xor" => AmoOp::Xor(value(cur)?),
                    _ => AmoOp::Inc,
                };
                self.amo(pe, op, dst, None, false, width, cur)?
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
                let value = value(cur)?;
                if first.text == "wait" {
                    Instr::Wait { var, cmp, value }
                } else {
                    Instr::SignalWait { var, cmp, value }
                }
            }
            "st" => {
                let var = self.var(cur)?;
                let peer = self.at_pe(cur)?;
                cur.punct("=", "'=' after the variable")?;
                let value = value(cur)?;
                match peer {
                    Some(pe) => Instr::PeerStore {
                        dst: crate::litmus::Loc { var, pe },
                        value,
                    },
                    None => Instr::Store { var, value },
                }
            }
            other if is_fetching(other) || REGISTER_FORMS.contains(&other) => {
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
            if kind != GetKind::GetNbi && cur.at_word("until") {
                return self.spin(pe, reg, src, false, cur);
            }
            return Ok(Instr::Get {
                kind,
                reg,
                src,
                ctx: self.ctx(pe, cur)?,
            });
        }
        if let Some(instr) = self.register_form(reg, op, cur)? {
            return Ok(instr);
        }
        let (base, nbi) = match op.strip_suffix("_nbi") {
            Some(base) => (base, true),
            None => (op, false),
        };
        let Some((base, width)) = width_base(base).filter(|(b, _)| FETCHING.contains(b)) else {
            return cur.error(ParseErrorKind::UnknownInstruction(op.to_string()));
        };
        let dst = self.loc(cur)?;
        if base == "fetch" && !nbi && width == AmoWidth::W64 && cur.at_word("until") {
            return self.spin(pe, reg, dst, true, cur);
        }
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
        self.amo(pe, amo, dst, Some(reg), nbi, width, cur)
    }

    #[allow(clippy::too_many_arguments)] // the fields of `Instr::Amo`
    fn amo(
        &mut self,
        pe: PeId,
        op: AmoOp,
        dst: crate::litmus::Loc,
        fetch: Option<Reg>,
        nbi: bool,
        width: AmoWidth,
        cur: &mut Cursor<'_>,
    ) -> PResult<Instr> {
        Ok(Instr::Amo {
            op,
            dst,
            fetch,
            nbi,
            width,
            ctx: self.ctx(pe, cur)?,
        })
    }

    /// `put_signal x@P = V, s SET|ADD W [ctx C]`.
    fn put_signal(&mut self, pe: PeId, nbi: bool, cur: &mut Cursor<'_>) -> PResult<Instr> {
        let dst = self.loc(cur)?;
        cur.punct("=", "'=' after the target")?;
        let data = value(cur)?;
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
        let signal_value = value(cur)?;
        Ok(Instr::PutSignal {
            dst,
            value: data,
            signal: crate::litmus::Loc { var, pe: dst.pe },
            op,
            signal_value,
            nbi,
            ctx: self.ctx(pe, cur)?,
        })
    }

    /// An optional `ctx NAME`; contexts are numbered per PE in order of first use.
    pub(super) fn ctx(&mut self, pe: PeId, cur: &mut Cursor<'_>) -> PResult<Ctx> {
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

/// The non-fetching atomics, without a width suffix.
const NON_FETCHING: &[&str] = &["set", "add", "inc", "and", "or", "xor"];

/// Instructions that must be written `rK = ...`, beside the fetching atomics.
const REGISTER_FORMS: &[&str] = &["signal_fetch", "test", "test_any", "wait_any"];

/// `add32` is `("add", W32)`, `add` is `("add", W64)`.
pub(super) fn width_base(word: &str) -> Option<(&str, AmoWidth)> {
    match word.strip_suffix("32") {
        Some(base) if !base.is_empty() => Some((base, AmoWidth::W32)),
        Some(_) => None,
        None => Some((word, AmoWidth::W64)),
    }
}

/// Whether `word` is a fetching atomic, with or without width suffix and `_nbi`.
pub(super) fn is_fetching(word: &str) -> bool {
    let base = word.strip_suffix("_nbi").unwrap_or(word);
    width_base(base).is_some_and(|(b, _)| FETCHING.contains(&b))
}

/// Whether `word` is an atomic's mnemonic with a width suffix (`add32`, `fetch_add32_nbi`).
pub(super) fn is_sized_atomic(word: &str) -> bool {
    let base = word.strip_suffix("_nbi").unwrap_or(word);
    base.ends_with("32")
        && width_base(base).is_some_and(|(b, _)| FETCHING.contains(&b) || NON_FETCHING.contains(&b))
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

/// A value operand: a decimal literal (`-N` is 2^64 - N) or a register.
pub(super) fn value(cur: &mut Cursor<'_>) -> PResult<Value> {
    const WHAT: &str = "a value (a number or a register)";
    let Some(tok) = cur.peek().filter(|t| t.kind == TokKind::Word) else {
        return cur.expected(WHAT);
    };
    if let Some(reg) = register(cur, tok.text, tok.column)? {
        cur.bump();
        return Ok(Value::Reg(reg));
    }
    Ok(Value::Const(cur.signed_number(WHAT)?))
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
