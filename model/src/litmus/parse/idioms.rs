//! The instruction forms of the format's second edition: waits and tests on lists of words,
//! `signal_fetch`, teams, spin loops, loads of a peer's copy and puts of whole arrays.

use super::Parser;
use super::cursor::{Cursor, PResult};
use super::error::ParseErrorKind;
use super::instr::{cmp, value};
use crate::litmus::{Cmp, Instr, Loc, PeId, PutKind, Reg, Value, VarId};

impl Parser {
    /// The register forms `rK = OP ...` of this edition, `None` if `op` is none of them.
    pub(super) fn register_form(
        &mut self,
        reg: Reg,
        op: &str,
        cur: &mut Cursor<'_>,
    ) -> PResult<Option<Instr>> {
        let instr = match op {
            "ld" => {
                let var = self.var(cur)?;
                match self.at_pe(cur)? {
                    Some(pe) => Instr::PeerLoad {
                        reg,
                        src: Loc { var, pe },
                    },
                    None => Instr::Load { reg, var },
                }
            }
            "signal_fetch" => Instr::SignalFetch {
                reg,
                var: self.var(cur)?,
            },
            "test" => {
                let var = self.var(cur)?;
                let cmp = cmp(cur)?;
                Instr::Test {
                    reg,
                    var,
                    cmp,
                    value: value(cur)?,
                }
            }
            "test_any" | "wait_any" => {
                let (vars, cmp, value) = self.word_list(cur)?;
                if op == "test_any" {
                    Instr::TestAny {
                        reg,
                        vars,
                        cmp,
                        value,
                    }
                } else {
                    Instr::WaitAny {
                        reg,
                        vars,
                        cmp,
                        value,
                    }
                }
            }
            _ => return Ok(None),
        };
        Ok(Some(instr))
    }

    /// `@P` after a variable, if it is there.
    pub(super) fn at_pe(&mut self, cur: &mut Cursor<'_>) -> PResult<Option<PeId>> {
        if !cur.eat_punct("@") {
            return Ok(None);
        }
        self.pe_number(cur, "a PE number after '@'").map(Some)
    }

    /// `x y z CMP V`: one or more of the PE's own words, a comparison and its operand.
    pub(super) fn word_list(&mut self, cur: &mut Cursor<'_>) -> PResult<(Vec<VarId>, Cmp, Value)> {
        let mut vars = vec![self.var(cur)?];
        while cur
            .peek()
            .is_some_and(|t| t.kind == super::lex::TokKind::Word)
        {
            vars.push(self.var(cur)?);
        }
        let cmp = cmp(cur)?;
        Ok((vars, cmp, value(cur)?))
    }

    /// `{0,2}`: the members of a team, which must include `pe`, the PE that runs it.
    pub(super) fn team(
        &mut self,
        pe: PeId,
        what: &str,
        cur: &mut Cursor<'_>,
    ) -> PResult<Vec<PeId>> {
        let open = cur.span();
        cur.punct("{", "'{' and the team's PEs (as in '{0,2}')")?;
        let mut pes = Vec::new();
        loop {
            let span = cur.span();
            let member = self.pe_number(cur, "a PE number")?;
            if pes.contains(&member) {
                return Err((span, ParseErrorKind::TeamPeTwice(member)));
            }
            pes.push(member);
            if cur.eat_punct("}") {
                break;
            }
            cur.punct(",", "',' or '}' after a PE of the team")?;
        }
        pes.sort_unstable();
        if !pes.contains(&pe) {
            return Err((
                open,
                ParseErrorKind::NotTeamMember {
                    pe,
                    what: what.to_string(),
                },
            ));
        }
        Ok(pes)
    }

    /// `until CMP V [ctx C]` after the source of a fetch or get.
    pub(super) fn spin(
        &mut self,
        pe: PeId,
        reg: Reg,
        src: Loc,
        atomic: bool,
        cur: &mut Cursor<'_>,
    ) -> PResult<Instr> {
        cur.bump();
        let cmp = cmp(cur)?;
        let value = value(cur)?;
        Ok(Instr::Spin {
            reg,
            src,
            atomic,
            cmp,
            value,
            ctx: self.ctx(pe, cur)?,
        })
    }

    /// The target of a put: `x@P` (one word, `None`) or `buf@P` for an array (all of its
    /// words, `Some(len)`); `p` puts one word only.
    pub(super) fn put_target(
        &mut self,
        kind: PutKind,
        cur: &mut Cursor<'_>,
    ) -> PResult<(Loc, Option<u16>)> {
        let span = cur.span();
        let whole = cur
            .peek()
            .and_then(|t| self.arrays.iter().find(|a| a.name == t.text).cloned())
            .filter(|_| cur.peek2().is_some_and(|t| t.text == "@"));
        let Some(array) = whole else {
            return Ok((self.loc(cur)?, None));
        };
        if kind == PutKind::P {
            return Err((span, ParseErrorKind::ArrayInP(array.name)));
        }
        cur.bump();
        cur.punct("@", "'@' and a PE number after the array")?;
        let pe = self.pe_number(cur, "a PE number after '@'")?;
        Ok((
            Loc {
                var: array.first,
                pe,
            },
            Some(array.len),
        ))
    }
}
