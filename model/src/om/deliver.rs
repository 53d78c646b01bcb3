//! Delivery: when a message may act at its target (R1), and what it does there (R5, R6, R8,
//! R11). docs/ordering.md, "The model", transition 3, gives each rule's source.
//!
//! The default is the weakest reading of the texts: nothing but the owner's consistency step
//! (or a drain) makes an InfiniBand write visible, updates of atomics included, and no get or
//! atomic over InfiniBand flushes other writes. Atomicity is kept by reading each word's
//! newest value in coherence order (its pending writes included) and by queueing an atomic's
//! update behind the word's pending writes. `pcie-read-flush` and `ib-coherent` strengthen it.

use super::machine::Machine;
use super::state::{Body, Msg, N_REGS, Rmw, State};

impl Machine<'_> {
    /// R1: a message waits for every ordered message of an earlier epoch on the same
    /// (src, dst, ctx). Gets neither wait nor are waited for. A signal `ADD` also waits while
    /// another signal `ADD` to the same word is between its read and its write (R11: signal
    /// updates with one operator are atomic with each other).
    pub(super) fn deliverable(&self, s: &State, msg: &Msg) -> bool {
        let fenced = !msg.ordered()
            || !s.in_flight.iter().any(|m| {
                m.ordered()
                    && m.src == msg.src
                    && m.dst == msg.dst
                    && m.ctx == msg.ctx
                    && m.epoch < msg.epoch
            });
        fenced && !self.signal_add_busy(s, msg) && !self.signal_behind_puts(s, msg)
    }

    /// Whether `msg` is the signal of a put-with-signal over the network transport while a
    /// put of its PE to its target is still in flight: the process backend puts the data
    /// and waits until every write it posted is delivered before the signal goes
    /// (`Endpoint::put_delivered`), so the signal waits for every such put, of any context.
    fn signal_behind_puts(&self, s: &State, msg: &Msg) -> bool {
        matches!(msg.body, Body::Signal { .. })
            && s.in_flight.iter().any(|m| {
                m.src == msg.src && m.dst == msg.dst && matches!(m.body, Body::Write { .. })
            })
    }

    /// Whether `msg` is a signal `ADD` whose word another signal `ADD` is updating.
    fn signal_add_busy(&self, s: &State, msg: &Msg) -> bool {
        let Body::PutSignal {
            signal, add: true, ..
        } = msg.body
        else {
            return false;
        };
        s.in_flight.iter().any(|m| {
            m.dst == msg.dst && matches!(m.body, Body::SignalWrite { var, .. } if var == signal)
        })
    }

    /// Delivers `s.in_flight[i]` at its target.
    pub(super) fn deliver(&self, s: &State, i: usize) -> State {
        let mut next = s.clone();
        let msg = next.in_flight.remove(i);
        let (src, dst) = (usize::from(msg.src), usize::from(msg.dst));
        let ib = self.ib[src * self.n_pes + dst];
        // `pcie-read-flush`: the NIC's PCIe read pushes the posted writes ahead of it.
        let flushes = ib && self.pcie_read_flush;
        match msg.body {
            Body::Write { var, value } => self.write(&mut next, dst, var, value, ib),
            Body::PutSignal {
                var,
                value,
                signal,
                add,
                signal_value,
            } => {
                // R5: the data word first, then the signal.
                self.write(&mut next, dst, var, value, ib);
                if add && !self.nvshmem {
                    // R11 (OpenSHMEM): an ADD is atomic only with other ADDs, so it reads now
                    // and writes in a later step, between which a SET may land (and be lost).
                    if flushes {
                        next.flush(dst, self.n_vars);
                    }
                    let old = next.newest(dst, signal, self.n_vars);
                    next.send(Msg {
                        body: Body::SignalWrite {
                            var: signal,
                            value: old.wrapping_add(signal_value),
                        },
                        blocking_fetch: false,
                        ..msg
                    });
                } else if add {
                    // NVSHMEM: signal operations are atomic with every signal operation of
                    // the datatype, so the ADD is one read-modify-write.
                    if flushes {
                        next.flush(dst, self.n_vars);
                    }
                    let old = next.newest(dst, signal, self.n_vars);
                    self.update(&mut next, dst, signal, old.wrapping_add(signal_value), ib);
                } else {
                    // A SET is an atomic update of the signal (atomic with other SETs).
                    self.update(&mut next, dst, signal, signal_value, ib);
                }
            }
            Body::SignalWrite { var, value } => self.update(&mut next, dst, var, value, ib),
            Body::Signal { var, add, value } => {
                // One native atomic of the target's CPU: every atomic of the word goes through
                // the same endpoint, so an ADD is one read-modify-write against SETs too.
                let old = next.newest(dst, var, self.n_vars);
                let new = if add { old.wrapping_add(value) } else { value };
                self.update(&mut next, dst, var, new, ib);
            }
            Body::Amo {
                var,
                op,
                reg,
                narrow,
            } => {
                if flushes {
                    next.flush(dst, self.n_vars);
                }
                // R6: the newest value in coherence order, pending writes included.
                let word = next.newest(dst, var, self.n_vars);
                let (new, old) = op.apply_width(word, narrow);
                if writes(op, old) {
                    self.update(&mut next, dst, var, new, ib);
                }
                if let Some(r) = reg {
                    next.regs[src * N_REGS + usize::from(r)] = old;
                }
            }
            Body::Get { var, reg } => {
                if flushes {
                    next.flush(dst, self.n_vars);
                }
                // R8: a get reads what is visible; drains before it give the later values.
                next.regs[src * N_REGS + usize::from(reg)] =
                    next.mem[dst * self.n_vars + usize::from(var)];
            }
        }
        next
    }

    /// A plain write arriving at `dst`: pending over InfiniBand (R8); over NVLink visible at
    /// once, or behind the word's pending writes under `ib-coherent`.
    fn write(&self, s: &mut State, dst: usize, var: u16, value: u64, ib: bool) {
        if ib || (self.ib_coherent && s.has_pending(dst, var)) {
            s.push_pending(dst, var, value);
        } else {
            s.mem[dst * self.n_vars + usize::from(var)] = value;
        }
    }

    /// An atomic's update at `dst`: pending over InfiniBand like a put (R8; visible at once
    /// under `pcie-read-flush`), and always behind the word's pending writes, so that a
    /// later drain never undoes it (R6).
    fn update(&self, s: &mut State, dst: usize, var: u16, value: u64, ib: bool) {
        if (ib && !self.pcie_read_flush) || s.has_pending(dst, var) {
            s.push_pending(dst, var, value);
        } else {
            s.mem[dst * self.n_vars + usize::from(var)] = value;
        }
    }
}

/// Whether an atomic writes the word: every one but fetch and a compare-and-swap that fails.
fn writes(op: Rmw, old: u64) -> bool {
    match op {
        Rmw::Fetch => false,
        Rmw::CompareSwap { cond, .. } => old == cond,
        _ => true,
    }
}
