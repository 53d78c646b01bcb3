//! `+nbi-unfenced` on a backend: the hardware contract has no non-blocking flag, so the
//! runner gives the backend a program in which fence cannot order the non-blocking operations.
//!
//! Each non-blocking put, atomic and put-with-signal moves from its context `C` to a shadow
//! context of its own, which no fence ever names: fence on `C` then orders only the blocking
//! operations, and nothing orders the non-blocking ones (the model's rule: they neither wait
//! for earlier epochs nor are waited for). Whatever completes `C` completes its shadow too:
//! every `quiet C` is followed by a quiet of the shadow, and a `barrier_all` (which quiets the
//! default context) is preceded by a quiet of the default context's shadow. Inserted
//! instructions carry the line of the instruction they complete for, so hangs name the line
//! of the original program.

use model::litmus::{Ctx, Instr, Litmus, PutKind};

/// `test` with its non-blocking operations on shadow contexts (see the module docs).
/// Programs with 128 contexts or more, which leave no room for shadows, are returned as they
/// are.
pub(crate) fn unfence_nbi(test: &Litmus) -> Litmus {
    let n_ctxs = test
        .programs
        .iter()
        .flatten()
        .filter_map(|(instr, _)| ctx_of(instr))
        .map(|c| usize::from(c.0) + 1)
        .max()
        .unwrap_or(1);
    if n_ctxs >= 128 {
        return test.clone();
    }
    let shadow = |c: Ctx| Ctx(c.0 + n_ctxs as u8);
    let mut out = test.clone();
    for program in &mut out.programs {
        let mut rewritten = Vec::with_capacity(program.len());
        for (instr, span) in program.drain(..) {
            let mut instr = instr;
            match &mut instr {
                Instr::Put {
                    kind: PutKind::PutNbi,
                    ctx,
                    ..
                }
                | Instr::Amo { nbi: true, ctx, .. }
                | Instr::PutSignal { nbi: true, ctx, .. } => *ctx = shadow(*ctx),
                Instr::BarrierAll => rewritten.push((
                    Instr::Quiet {
                        ctx: shadow(Ctx::DEFAULT),
                    },
                    span,
                )),
                _ => {}
            }
            let then_quiet = match instr {
                Instr::Quiet { ctx } => Some(shadow(ctx)),
                _ => None,
            };
            rewritten.push((instr, span));
            if let Some(ctx) = then_quiet {
                rewritten.push((Instr::Quiet { ctx }, span));
            }
        }
        *program = rewritten;
    }
    out
}

/// The context an instruction is issued on, if it has one.
fn ctx_of(instr: &Instr) -> Option<Ctx> {
    match instr {
        Instr::Put { ctx, .. }
        | Instr::Get { ctx, .. }
        | Instr::Amo { ctx, .. }
        | Instr::PutSignal { ctx, .. }
        | Instr::Fence { ctx }
        | Instr::Quiet { ctx } => Some(*ctx),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::litmus::{Config, Modifier, parse};

    /// The model under `+nbi-unfenced` and the model on the rewritten program agree: the
    /// rewriting is the modifier's rule.
    #[test]
    fn the_rewritten_program_has_the_outcomes_of_the_modifier() {
        let bodies = [
            "pes 2\nP0:\n  put_nbi x@1 = 1\n  fence\n  put f@1 = 1\nP1:\n  wait f == 1\n  r0 = ld x\nexists (P1:r0 == 0)\n",
            "pes 2\nP0:\n  put x@1 = 1\n  fence\n  put_signal_nbi f@1 = 1, s SET 1\n  quiet\n  r0 = fetch_add_nbi y@1 1\n  quiet\nP1:\n  signal_wait s == 1\n  r1 = ld x\nexists (P1:r1 == 0)\n",
            "pes 2\nP0:\n  put_nbi x@1 = 1\n  barrier_all\nP1:\n  barrier_all\n  r0 = ld x\nexists (P1:r0 == 0)\n",
        ];
        for body in bodies {
            let text = format!("litmus t\nsource \"unit\"\n{body}");
            let test = parse("t.litmus", &text).unwrap();
            for platform in [Config::NV_NVL, Config::NV_IB] {
                let modified = model::om::allowed_outcomes(
                    &test,
                    &platform.clone().with(Modifier::NbiUnfenced),
                )
                .unwrap();
                let rewritten =
                    model::om::allowed_outcomes(&unfence_nbi(&test), &platform).unwrap();
                assert_eq!(modified.outcomes, rewritten.outcomes, "{platform}: {body}");
                assert_eq!(modified.hangs, rewritten.hangs, "{platform}: {body}");
            }
        }
    }
}
