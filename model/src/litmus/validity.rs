//! What makes a test meaningless rather than wrong: undefined behaviour, which no outcome
//! describes, and a configuration under which an instruction cannot be written at all.
//!
//! Both are decided from the program text, so they are reported once, at a line, instead of
//! being explored:
//! - the source of an nbi put (the register its value comes from) written again before a
//!   quiet completes the put (OpenSHMEM: the source must not be modified until then);
//! - atomics of different widths on one word (atomics are atomic only with atomics of the
//!   same width);
//! - `ld x@P` / `st x@P` of a peer on another host (over InfiniBand, or over the network
//!   transport of `os-net`), where `shmem_ptr` returns NULL.

use std::collections::BTreeMap;

use super::{AmoWidth, Config, Ctx, Instr, Litmus, Loc, PeId, PutKind, Reg, Value};

/// Undefined behaviour of a test, at the line of the instruction that makes it so.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Undefined {
    /// The line.
    pub line: u32,
    /// What is undefined.
    pub what: String,
}

/// Why a test does not apply under a configuration, at the line of the instruction.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct DoesNotApply {
    /// The line.
    pub line: u32,
    /// Why.
    pub what: String,
}

/// The first undefined behaviour of `test`, by line, if it has any.
pub fn undefined_behaviour(test: &Litmus) -> Option<Undefined> {
    let mut found: Vec<Undefined> = Vec::new();
    for (pe, program) in test.programs.iter().enumerate() {
        found.extend(nbi_source_reuse(pe as PeId, program));
    }
    found.extend(mixed_widths(test));
    found.into_iter().min_by_key(|u| u.line)
}

/// The first `ld`/`st` of a peer that `config` places on another host, if any: across
/// InfiniBand (`nv-ib`, `nv-mix`), or across the network transport of `os-net`, where every
/// PE is on its own node. Every other instruction has a form on both transports: puts and
/// gets as RDMA writes and reads, every atomic (32- and 64-bit) as a native libfabric atomic.
pub fn does_not_apply(test: &Litmus, config: &Config) -> Option<DoesNotApply> {
    for (pe, program) in test.programs.iter().enumerate() {
        let pe = pe as PeId;
        for (instr, span) in program {
            let (peer, what) = match instr {
                Instr::PeerLoad { src, .. } => (src.pe, "ld"),
                Instr::PeerStore { dst, .. } => (dst.pe, "st"),
                _ => continue,
            };
            if !config.across_hosts(pe, peer) {
                continue;
            }
            let path = if config.network_transport() {
                "over the libfabric network transport (each PE on its own node)"
            } else {
                "over InfiniBand"
            };
            return Some(DoesNotApply {
                line: span.line,
                what: format!(
                    "P{pe} reaches P{peer} {path} under {config}, where shmem_ptr gives no \
                     address, so '{what}' of P{peer}'s memory cannot be written (drop the \
                     expect line for {config}, or use get/put)"
                ),
            });
        }
    }
    None
}

/// An nbi put whose source register no quiet has released yet.
struct NbiSource {
    reg: Reg,
    ctx: Ctx,
    target: PeId,
    line: u32,
}

fn nbi_source_reuse(pe: PeId, program: &[(Instr, super::Span)]) -> Option<Undefined> {
    let mut sources: Vec<NbiSource> = Vec::new();
    for (instr, span) in program {
        if let Some(reg) = instr.written_reg()
            && let Some(put) = sources.iter().find(|s| s.reg == reg)
        {
            return Some(Undefined {
                line: span.line,
                what: format!(
                    "P{pe} writes r{}, the source of the nbi put of line {}, before a quiet \
                     completes that put (the source of an nbi put must not change until then)",
                    reg.0, put.line
                ),
            });
        }
        match instr {
            Instr::Quiet { ctx } => sources.retain(|s| s.ctx != *ctx),
            Instr::BarrierAll | Instr::Team { barrier: true, .. } => {
                sources.retain(|s| s.ctx != Ctx::DEFAULT);
            }
            Instr::PeQuiet { pe: target } => {
                sources.retain(|s| s.ctx != Ctx::DEFAULT || s.target != *target);
            }
            _ => {}
        }
        let nbi_put = match *instr {
            Instr::Put {
                kind: PutKind::PutNbi,
                dst,
                value: Value::Reg(reg),
                ctx,
            }
            | Instr::PutArray {
                kind: PutKind::PutNbi,
                dst,
                value: Value::Reg(reg),
                ctx,
                ..
            }
            | Instr::PutSignal {
                nbi: true,
                dst,
                value: Value::Reg(reg),
                ctx,
                ..
            } => Some((reg, dst.pe, ctx)),
            _ => None,
        };
        if let Some((reg, target, ctx)) = nbi_put {
            sources.push(NbiSource {
                reg,
                ctx,
                target,
                line: span.line,
            });
        }
    }
    None
}

/// The atomics of every PE on each word, with their widths; the first that differs from an
/// earlier one on its word (in line order) is undefined.
fn mixed_widths(test: &Litmus) -> Option<Undefined> {
    let mut atomics: Vec<(u32, Loc, AmoWidth)> = Vec::new();
    for (instr, span) in test.programs.iter().flatten() {
        match *instr {
            Instr::Amo { dst, width, .. } => atomics.push((span.line, dst, width)),
            Instr::PutSignal { signal, .. } => atomics.push((span.line, signal, AmoWidth::W64)),
            Instr::Spin {
                src, atomic: true, ..
            } => atomics.push((span.line, src, AmoWidth::W64)),
            _ => {}
        }
    }
    atomics.sort_by_key(|a| a.0);
    let mut first: BTreeMap<Loc, (u32, AmoWidth)> = BTreeMap::new();
    for (line, loc, width) in atomics {
        let (first_line, first_width) = *first.entry(loc).or_insert((line, width));
        if first_width != width {
            let bits = |w: AmoWidth| if w == AmoWidth::W32 { 32 } else { 64 };
            let name = &test.vars[usize::from(loc.var.0)];
            return Some(Undefined {
                line,
                what: format!(
                    "a {}-bit atomic on {name}@{}, which the {}-bit atomic of line {first_line} \
                     also updates (atomics are atomic only with atomics of the same width)",
                    bits(width),
                    loc.pe,
                    bits(first_width)
                ),
            });
        }
    }
    None
}
