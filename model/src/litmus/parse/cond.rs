//! The condition line and the `expect` lines.

use super::cursor::{Cursor, PResult};
use super::error::ParseErrorKind;
use super::instr::{cmp, register};
use super::{Parser, pe_label};
use crate::litmus::{
    Condition, Config, Expectation, Modifier, Observable, Observation, PeId, Platform, Prop,
    Quantifier, Reg, Span,
};

/// The deepest nesting of `~` and `(` a condition may have.
const MAX_NESTING: u32 = 64;

impl Parser {
    /// `exists PROP`, `forall PROP` or `~exists PROP`.
    pub(super) fn condition_line(&mut self, cur: &mut Cursor<'_>) -> PResult<()> {
        if self.condition.is_some() {
            return cur.error(ParseErrorKind::DuplicateCondition);
        }
        self.need_pes(cur)?;
        // The condition ends the programs, so every register it names must be written by now.
        self.current = None;
        let quantifier = if cur.eat_punct("~") {
            if !cur.at_word("exists") {
                return cur.expected("'exists' after '~'");
            }
            Quantifier::NotExists
        } else if cur.at_word("exists") {
            Quantifier::Exists
        } else {
            Quantifier::Forall
        };
        cur.bump();
        let prop = self.or(cur, 0)?;
        cur.end()?;
        self.condition = Some(Condition { quantifier, prop });
        Ok(())
    }

    /// `depth` counts the `~` and `(` around this part of the condition.
    fn or(&mut self, cur: &mut Cursor<'_>, depth: u32) -> PResult<Prop> {
        let mut lhs = self.and(cur, depth)?;
        while cur.eat_punct("\\/") {
            lhs = Prop::Or(Box::new(lhs), Box::new(self.and(cur, depth)?));
        }
        Ok(lhs)
    }

    fn and(&mut self, cur: &mut Cursor<'_>, depth: u32) -> PResult<Prop> {
        let mut lhs = self.unary(cur, depth)?;
        while cur.eat_punct("/\\") {
            lhs = Prop::And(Box::new(lhs), Box::new(self.unary(cur, depth)?));
        }
        Ok(lhs)
    }

    fn unary(&mut self, cur: &mut Cursor<'_>, depth: u32) -> PResult<Prop> {
        // Why a limit: each level is a frame of this recursive descent, so a line of many
        // thousand `~` or `(` would overflow the stack instead of getting an error.
        if (cur.at_punct("~") || cur.at_punct("(")) && depth >= MAX_NESTING {
            return cur.expected(&format!(
                "an atom: a condition nests at most {MAX_NESTING} '~' and '(' deep"
            ));
        }
        if cur.eat_punct("~") {
            return Ok(Prop::Not(Box::new(self.unary(cur, depth + 1)?)));
        }
        if cur.eat_punct("(") {
            let prop = self.or(cur, depth + 1)?;
            cur.punct(")", "')'")?;
            return Ok(prop);
        }
        let lhs = self.observable(cur)?;
        let cmp = cmp(cur)?;
        let rhs = cur.signed_number("a number to compare with")?;
        Ok(Prop::Atom { lhs, cmp, rhs })
    }

    /// `P<k>:rN` or `x@P`.
    fn observable(&mut self, cur: &mut Cursor<'_>) -> PResult<Observable> {
        let Some(tok) = cur.peek() else {
            return cur.expected("'P<k>:rN' or 'x@P'");
        };
        let Some(pe) = pe_label(tok.text) else {
            return Ok(Observable::Mem(self.loc(cur)?));
        };
        let n_pes = self.need_pes(cur)?;
        if pe >= u64::from(n_pes) {
            return cur.error(ParseErrorKind::PeOutOfRange { pe, n_pes });
        }
        let pe = pe as PeId;
        cur.bump();
        cur.punct(":", "':' after the PE")?;
        let span = cur.span();
        let reg_tok = cur.word("a register after ':'")?;
        let Some(reg) = register(cur, reg_tok.text, reg_tok.column)? else {
            return Err((
                span,
                ParseErrorKind::Expected {
                    expected: "a register after ':'".to_string(),
                    found: format!("'{}'", reg_tok.text),
                },
            ));
        };
        if !self.writes(pe, reg) {
            return Err((
                span,
                ParseErrorKind::RegisterNeverWritten { pe, reg: reg.0 },
            ));
        }
        Ok(Observable::Reg { pe, reg })
    }

    /// Whether some instruction of `pe` writes `reg`.
    fn writes(&self, pe: PeId, reg: Reg) -> bool {
        self.programs[pe as usize]
            .iter()
            .any(|(instr, _)| instr.written_reg() == Some(reg))
    }

    /// `expect PLATFORM[+MODIFIER...] OBSERVATION [hangs] [(model)]`.
    pub(super) fn expect_line(&mut self, cur: &mut Cursor<'_>) -> PResult<()> {
        let n_pes = self.need_pes(cur)?;
        cur.bump();
        let config_span = cur.span();
        let platform = match cur
            .word("a configuration (nv-nvl, nv-ib, nv-mix(...), os, os-net)")?
            .text
        {
            "nv-nvl" => Platform::NvNvl,
            "nv-ib" => Platform::NvIb,
            "os" => Platform::Os,
            "os-net" => Platform::OsNet,
            "nv-mix" => Platform::NvMix {
                hosts: mix_hosts(cur, n_pes, config_span)?,
            },
            other => {
                return Err((
                    config_span,
                    ParseErrorKind::Expected {
                        expected: "a configuration (nv-nvl, nv-ib, nv-mix(...), os, os-net)"
                            .to_string(),
                        found: format!("'{other}'"),
                    },
                ));
            }
        };
        let mut config = Config::from(platform);
        while cur.eat_punct("+") {
            let span = cur.span();
            let known = Modifier::ALL.map(Modifier::name).join(", ");
            let name = cur.word(&format!("a modifier ({known})"))?.text;
            let Some(modifier) = Modifier::from_name(name) else {
                return Err((
                    span,
                    ParseErrorKind::Expected {
                        expected: format!("a modifier ({known})"),
                        found: format!("'{name}'"),
                    },
                ));
            };
            if config.has(modifier) {
                return Err((span, ParseErrorKind::DuplicateModifier(name.to_string())));
            }
            config = config.with(modifier);
        }
        let observation = match cur.peek().map(|t| t.text) {
            Some("always") => Observation::Always,
            Some("sometimes") => Observation::Sometimes,
            Some("never") => Observation::Never,
            Some("undefined") => Observation::Undefined,
            _ => return cur.expected("'always', 'sometimes', 'never' or 'undefined'"),
        };
        cur.bump();
        let hangs = cur.at_word("hangs");
        if hangs {
            cur.bump();
        }
        let model_derived = cur.eat_punct("(");
        if model_derived {
            if !cur.at_word("model") {
                return cur.expected("'model' inside '( )'");
            }
            cur.bump();
            cur.punct(")", "')'")?;
        }
        cur.end()?;
        if self.expect.iter().any(|e| e.config == config) {
            return Err((
                config_span,
                ParseErrorKind::DuplicateExpect(config.to_string()),
            ));
        }
        self.expect.push(Expectation {
            config,
            observation,
            model_derived,
            hangs,
        });
        Ok(())
    }
}

/// `(0|1 2)`: hosts separated by `|`, PEs by spaces; every PE exactly once. Host numbers are
/// made canonical (in order of the lowest PE of each host), so equal partitions compare equal.
fn mix_hosts(cur: &mut Cursor<'_>, n_pes: u32, config_span: Span) -> PResult<Vec<u32>> {
    cur.punct("(", "'(' after 'nv-mix'")?;
    let mut hosts: Vec<Option<u32>> = vec![None; n_pes as usize];
    let mut group = 0u32;
    loop {
        let span = cur.span();
        let pe = cur.number("a PE number")?;
        if pe >= u64::from(n_pes) {
            return Err((span, ParseErrorKind::PeOutOfRange { pe, n_pes }));
        }
        if hosts[pe as usize].replace(group).is_some() {
            return Err((span, ParseErrorKind::MixPeTwice(pe)));
        }
        if cur.eat_punct("|") {
            group += 1;
        } else if cur.eat_punct(")") {
            break;
        } else if !cur
            .peek()
            .is_some_and(|t| t.kind == super::lex::TokKind::Word)
        {
            return cur.expected("a PE number, '|' or ')'");
        }
    }
    if let Some(pe) = hosts.iter().position(Option::is_none) {
        return Err((config_span, ParseErrorKind::MixPeMissing(pe as PeId)));
    }
    let mut renumber: Vec<Option<u32>> = vec![None; group as usize + 1];
    let mut next = 0;
    Ok(hosts
        .into_iter()
        .map(|h| {
            let h = h.expect("every PE is placed, checked above") as usize;
            *renumber[h].get_or_insert_with(|| {
                next += 1;
                next - 1
            })
        })
        .collect())
}
