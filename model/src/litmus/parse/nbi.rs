//! The registers of nbi fetches (`get_nbi`, `fetch_add_nbi`, ...) are undefined until a quiet
//! on their context completes the fetch (R2): reading one earlier is refused at its line,
//! since the model and a backend would disagree on a value no rule defines.

use super::Parser;
use super::cursor::PResult;
use super::error::ParseErrorKind;
use crate::litmus::{Ctx, GetKind, Instr, PeId, Reg, Span};

/// An nbi fetch no quiet has completed yet.
#[derive(Clone, Debug)]
pub(super) struct Pending {
    reg: Reg,
    ctx: Ctx,
    target: PeId,
    line: u32,
}

impl Parser {
    /// Refuses `instr` if it reads the register of an incomplete nbi fetch of `pe`, then
    /// updates which fetches are incomplete after it.
    pub(super) fn check_nbi_registers(
        &mut self,
        pe: PeId,
        instr: &Instr,
        span: Span,
    ) -> PResult<()> {
        let pending = &self.nbi_fetches[pe as usize];
        for reg in instr.read_regs() {
            if let Some(fetch) = pending.iter().find(|p| p.reg == reg) {
                let completer = match fetch.ctx {
                    Ctx::DEFAULT => "quiet".to_string(),
                    Ctx(c) => format!(
                        "quiet ctx {}",
                        self.ctx_names[pe as usize][usize::from(c) - 1]
                    ),
                };
                return Err((
                    span,
                    ParseErrorKind::NbiRegisterRead {
                        reg: reg.0,
                        fetch_line: fetch.line,
                        completer,
                    },
                ));
            }
        }
        let pending = &mut self.nbi_fetches[pe as usize];
        match instr {
            Instr::Quiet { ctx } => pending.retain(|p| p.ctx != *ctx),
            Instr::BarrierAll | Instr::Team { barrier: true, .. } => {
                pending.retain(|p| p.ctx != Ctx::DEFAULT);
            }
            Instr::PeQuiet { pe: target } => {
                pending.retain(|p| p.ctx != Ctx::DEFAULT || p.target != *target);
            }
            _ => {}
        }
        // A later write of the register replaces the fetch's value (the runner waits for the
        // fetch first), so the register is defined again.
        if let Some(reg) = instr.written_reg() {
            pending.retain(|p| p.reg != reg);
        }
        let nbi_fetch = match *instr {
            Instr::Get {
                kind: GetKind::GetNbi,
                reg,
                src,
                ctx,
            } => Some((reg, src.pe, ctx)),
            Instr::Amo {
                fetch: Some(reg),
                nbi: true,
                dst,
                ctx,
                ..
            } => Some((reg, dst.pe, ctx)),
            _ => None,
        };
        if let Some((reg, target, ctx)) = nbi_fetch {
            pending.push(Pending {
                reg,
                ctx,
                target,
                line: span.line,
            });
        }
        Ok(())
    }
}
