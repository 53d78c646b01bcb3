//! The device code of a litmus program, one call of the device API (`rshmem_device.cuh`) per
//! instruction, shared by the plain kernel ([`crate::kernel_source`]) and the stressed one
//! ([`crate::stress_kernel_source`]): they differ only in where a test's words live and in
//! how the PEs meet at a barrier or a team's rendezvous, which [`Spelling`] says.
//!
//! The format's second edition maps onto the device API as follows. `signal_fetch` is
//! `rshmem_signal_fetch`; a peer's `ld` and `st` go through `rshmem_ptr`; a spin is a loop of
//! `rshmem_atomic_fetch` or `rshmem_g`; `wait_all` is a `rshmem_wait_until` per word; a 32-bit
//! atomic is the API's `unsigned int` atomic on the word's low half; a put of an array is a
//! put of each word (the stressed kernel places every word at its own slot, so the words are
//! not contiguous; the API's putmem is the same stores). The API has no `test`, `test_any`,
//! `wait_any` or teams: [`DEVICE_HELPERS`] builds them from its acquire load, its comparison
//! and its poll, and a team's rendezvous from a counter word as the stressed kernel's
//! barrier. It has no per-PE quiet either: `pe_quiet` is `rshmem_quiet`, stronger than the
//! rules ask, which can hide an allowed outcome but never produce a forbidden one.
//!
//! An instruction the generator does not know (the format grows) is refused with
//! [`NotOnGpu`], never guessed at.

use std::fmt::Write as _;

use model::litmus::{
    AmoOp, AmoWidth, Cmp, GetKind, Instr, Litmus, PutKind, SignalOp, Value, VarId,
};

/// How a kernel spells what differs between the plain and the stressed kernels.
pub(crate) struct Spelling<'a> {
    /// The C expression (an `unsigned long long *`) of the issuing PE's copy of a variable;
    /// the device API translates it to a peer's copy.
    pub var: &'a dyn Fn(VarId) -> String,
    /// The device code of a PE's `k`-th `barrier_all` or `sync_all` (1-based).
    pub barrier: &'a dyn Fn(usize) -> String,
    /// The C expression (an `unsigned long long *`) of the issuing PE's copy of team `t`'s
    /// counter word (`Litmus::team_sets` numbers the teams); the copy on the team's lowest member
    /// counts the arrivals.
    pub team_counter: &'a dyn Fn(usize) -> String,
}

/// The device functions the generated programs call besides the device API: a spin's time
/// limit, `test`, `test_any`, `wait_any` and the team rendezvous. Both kernels put it before
/// their own code.
pub(crate) const DEVICE_HELPERS: &str = r#"// True while a spin that started at `start_ns` is within RSHMEM_WAIT_TIMEOUT_NS; past it,
// prints what spun and traps, as a wait of the device API does, so a spin that cannot end
// fails the kernel instead of hanging the GPU.
__device__ inline bool litmus_within(unsigned long long start_ns, const char *what) {
  if (RSHMEM_WAIT_TIMEOUT_NS && rshmem_detail_now_ns() - start_ns > (unsigned long long)RSHMEM_WAIT_TIMEOUT_NS) {
    printf("litmus: PE %d: %s timed out after %llu ns\n", rshmem_my_pe(), what, (unsigned long long)RSHMEM_WAIT_TIMEOUT_NS);
    __trap();
  }
  return true;
}
// `test`: one acquire load of this PE's word (the acquire a satisfied wait ends with), 1 if
// it satisfies the comparison, else 0.
__device__ inline unsigned long long litmus_test(const unsigned long long *word, int cmp, unsigned long long value) {
  return rshmem_detail_holds(rshmem_detail_load_acquire(word), cmp, value) ? 1ull : 0ull;
}
// `test_any`: the index of the first of the `n` words that satisfies the comparison, one
// acquire load each in order, or -1 (as a 64-bit word) if none does.
__device__ inline unsigned long long litmus_test_any(const unsigned long long *const *words, int n, int cmp, unsigned long long value) {
  for (int i = 0; i < n; ++i) {
    if (litmus_test(words[i], cmp, value)) return (unsigned long long)i;
  }
  return ~0ull;
}
// `wait_any`: `test_any` again until some word satisfies the comparison.
__device__ inline unsigned long long litmus_wait_any(const unsigned long long *const *words, int n, int cmp, unsigned long long value) {
  unsigned long long start_ns = RSHMEM_WAIT_TIMEOUT_NS ? rshmem_detail_now_ns() : 0;
  unsigned long long found;
  while ((found = litmus_test_any(words, n, cmp, value)) == ~0ull && litmus_within(start_ns, "wait_any")) {}
  return found;
}
// A team's rendezvous, as the stressed kernel's barrier_all: a system fence, one arrival on
// the counter's copy on PE `owner` (the team's lowest member), a wait for `arrivals` in all,
// and a system fence. The counter's copies are reset before each execution.
__device__ inline void litmus_team_arrive(unsigned long long *counter, int owner, unsigned long long arrivals) {
  __threadfence_system();
  unsigned long long *c = (unsigned long long *)rshmem_detail_remote(counter, owner);
  atomicAdd_system(c, 1ull);
  rshmem_detail_poll((const unsigned long long *)c, RSHMEM_CMP_GE, arrivals, "a team's rendezvous");
  __threadfence_system();
}
"#;

/// A test holds an instruction that the kernel generator does not translate.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{test}: P{pe}'s instruction at line {line} ({instr}) is not on GPU: the kernel generator \
     does not translate it; check this test on the model and the simulator (`rshmem litmus`) \
     instead, or teach tests/litmus/src/gpu_instr.rs the instruction"
)]
pub struct NotOnGpu {
    /// The test.
    pub test: String,
    /// The PE whose program holds it.
    pub pe: u32,
    /// Its line in the litmus file.
    pub line: u32,
    /// The instruction, as the parser gave it.
    pub instr: String,
}

fn value(v: &Value) -> String {
    match v {
        Value::Const(c) => format!("{c}ull"),
        Value::Reg(r) => format!("r[{}]", r.0),
    }
}

fn cmp(c: Cmp) -> &'static str {
    match c {
        Cmp::Eq => "RSHMEM_CMP_EQ",
        Cmp::Ne => "RSHMEM_CMP_NE",
        Cmp::Gt => "RSHMEM_CMP_GT",
        Cmp::Ge => "RSHMEM_CMP_GE",
        Cmp::Lt => "RSHMEM_CMP_LT",
        Cmp::Le => "RSHMEM_CMP_LE",
    }
}

/// The device code of an atomic on `pe`'s copy of `d`, its old value into `fetch` if any. A
/// 32-bit atomic is the device API's `unsigned int` atomic on the word's first four bytes,
/// its low half (the GPUs are little-endian), with its operands cut to 32 bits; the old
/// value it fetches is the low half, zero-extended.
fn amo(op: &AmoOp, d: &str, pe: u32, fetch: Option<model::litmus::Reg>, width: AmoWidth) -> String {
    let narrow = width == AmoWidth::W32;
    let d = if narrow {
        format!("(unsigned int *){d}")
    } else {
        d.to_string()
    };
    let v = |x: &Value| {
        if narrow {
            format!("(unsigned int){}", value(x))
        } else {
            value(x)
        }
    };
    let one = if narrow { "1u" } else { "1ull" };
    let call = match op {
        AmoOp::Fetch => format!("rshmem_atomic_fetch({d}, {pe})"),
        AmoOp::Set(x) => return format!("rshmem_atomic_set({d}, {}, {pe});", v(x)),
        AmoOp::Swap(x) => format!("rshmem_atomic_swap({d}, {}, {pe})", v(x)),
        AmoOp::CompareSwap { cond, new } => format!(
            "rshmem_atomic_compare_swap({d}, {}, {}, {pe})",
            v(cond),
            v(new)
        ),
        AmoOp::Add(x) => format!("rshmem_atomic_fetch_add({d}, {}, {pe})", v(x)),
        AmoOp::Inc => format!("rshmem_atomic_fetch_add({d}, {one}, {pe})"),
        AmoOp::And(x) => format!("rshmem_atomic_fetch_and({d}, {}, {pe})", v(x)),
        AmoOp::Or(x) => format!("rshmem_atomic_fetch_or({d}, {}, {pe})", v(x)),
        AmoOp::Xor(x) => format!("rshmem_atomic_fetch_xor({d}, {}, {pe})", v(x)),
    };
    match fetch {
        Some(r) => format!("r[{}] = {call};", r.0),
        None => format!("(void){call};"),
    }
}

/// The device code of a one-word put of `v` (already spelled) to `pe`'s copy of `d`, its
/// source in `src[k]` (set by the caller for `put` and `put_nbi`).
fn put_word(kind: PutKind, d: &str, v: &str, pe: u32, k: usize) -> String {
    match kind {
        PutKind::P => format!("rshmem_p({d}, {v}, {pe});"),
        PutKind::Put => format!("rshmem_put({d}, &src[{k}], 1, {pe});"),
        PutKind::PutNbi => format!("rshmem_putmem_nbi({d}, &src[{k}], 8, {pe});"),
    }
}

/// The device code of a put: its source `src[k] = v` (`put`, `put_nbi`), then one
/// [`put_word`] per word of `words`.
fn put(kind: PutKind, words: &[String], v: &str, pe: u32, k: usize) -> String {
    let mut code = match kind {
        PutKind::P => String::new(),
        PutKind::Put | PutKind::PutNbi => format!("src[{k}] = {v}; "),
    };
    let puts: Vec<String> = words.iter().map(|d| put_word(kind, d, v, pe, k)).collect();
    code.push_str(&puts.join(" "));
    code
}

/// `{ const unsigned long long *w[] = {a, b}; r[K] = f(w, 2, CMP, V); }`: a call of a
/// device helper over a list of the PE's own words.
fn over_words(f: &str, reg: u8, words: &[String], c: Cmp, v: &Value) -> String {
    format!(
        "{{ const unsigned long long *w[] = {{{}}}; r[{reg}] = {f}(w, {}, {}, {}); }}",
        words.join(", "),
        words.len(),
        cmp(c),
        value(v)
    )
}

/// Where PE `pe`'s program is: the instruction's number `k` (for its source temporary
/// `src[k]`), and how many barriers and rendezvous of each team it has passed, this one
/// included.
struct Position {
    k: usize,
    barriers: usize,
    team_episodes: Vec<usize>,
}

/// The device code of one instruction. `None` for an instruction the generator does not
/// know.
fn instruction(instr: &Instr, at: &Position, teams: &[Vec<u32>], s: &Spelling) -> Option<String> {
    let var = s.var;
    let k = at.k;
    // New instructions of the format land in the wildcard arm, which is unreachable only until
    // the format grows.
    #[allow(unreachable_patterns)]
    let code = match instr {
        Instr::Put {
            kind,
            dst,
            value: v,
            ..
        } => put(*kind, &[var(dst.var)], &value(v), dst.pe, k),
        Instr::PutArray {
            kind,
            dst,
            words,
            value: v,
            ..
        } => {
            let words: Vec<String> = (0..*words).map(|i| var(VarId(dst.var.0 + i))).collect();
            put(*kind, &words, &value(v), dst.pe, k)
        }
        Instr::Get { kind, reg, src, .. } => {
            let (s, pe, r) = (var(src.var), src.pe, reg.0);
            match kind {
                GetKind::G => format!("r[{r}] = rshmem_g({s}, {pe});"),
                GetKind::Get => format!("rshmem_get(&r[{r}], {s}, 1, {pe});"),
                GetKind::GetNbi => format!("rshmem_getmem_nbi(&r[{r}], {s}, 8, {pe});"),
            }
        }
        Instr::Amo {
            op,
            dst,
            fetch,
            width,
            ..
        } => amo(op, &var(dst.var), dst.pe, *fetch, *width),
        Instr::PutSignal {
            dst,
            value: v,
            signal,
            op,
            signal_value,
            ..
        } => {
            let sig_op = match op {
                SignalOp::Set => "RSHMEM_SIGNAL_SET",
                SignalOp::Add => "RSHMEM_SIGNAL_ADD",
            };
            format!(
                "src[{k}] = {}; rshmem_put_signal({}, &src[{k}], 8, {}, {}, {sig_op}, {});",
                value(v),
                var(dst.var),
                var(signal.var),
                value(signal_value),
                dst.pe
            )
        }
        Instr::Fence { .. } => "rshmem_fence();".into(),
        // The device API has no per-PE quiet: the quiet of every PE is stronger than the
        // rules ask, which can hide an allowed outcome but never produce a forbidden one.
        Instr::Quiet { .. } | Instr::PeQuiet { .. } => "rshmem_quiet();".into(),
        Instr::BarrierAll | Instr::SyncAll => (s.barrier)(at.barriers),
        Instr::Team { pes, barrier } => {
            let t = teams.iter().position(|set| set == pes)?;
            let arrivals = at.team_episodes[t] as u64 * pes.len() as u64;
            let arrive = format!(
                "litmus_team_arrive({}, {}, {arrivals}ull);",
                (s.team_counter)(t),
                pes[0]
            );
            if *barrier {
                format!("rshmem_quiet(); {arrive}")
            } else {
                arrive
            }
        }
        Instr::Wait {
            var: v,
            cmp: c,
            value: x,
        } => format!("rshmem_wait_until({}, {}, {});", var(*v), cmp(*c), value(x)),
        Instr::WaitAll {
            vars,
            cmp: c,
            value: x,
        } => {
            let waits: Vec<String> = vars
                .iter()
                .map(|v| format!("rshmem_wait_until({}, {}, {});", var(*v), cmp(*c), value(x)))
                .collect();
            waits.join(" ")
        }
        Instr::WaitAny {
            reg,
            vars,
            cmp: c,
            value: x,
        } => over_words(
            "litmus_wait_any",
            reg.0,
            &vars.iter().map(|v| var(*v)).collect::<Vec<_>>(),
            *c,
            x,
        ),
        Instr::Test {
            reg,
            var: v,
            cmp: c,
            value: x,
        } => format!(
            "r[{}] = litmus_test({}, {}, {});",
            reg.0,
            var(*v),
            cmp(*c),
            value(x)
        ),
        Instr::TestAny {
            reg,
            vars,
            cmp: c,
            value: x,
        } => over_words(
            "litmus_test_any",
            reg.0,
            &vars.iter().map(|v| var(*v)).collect::<Vec<_>>(),
            *c,
            x,
        ),
        Instr::SignalWait {
            var: v,
            cmp: c,
            value: x,
        } => format!(
            "rshmem_signal_wait_until({}, {}, {});",
            var(*v),
            cmp(*c),
            value(x)
        ),
        Instr::SignalFetch { reg, var: v } => {
            format!("r[{}] = rshmem_signal_fetch({});", reg.0, var(*v))
        }
        Instr::Spin {
            reg,
            src,
            atomic,
            cmp: c,
            value: x,
            ..
        } => {
            let read = if *atomic {
                "rshmem_atomic_fetch"
            } else {
                "rshmem_g"
            };
            format!(
                "{{ unsigned long long t0 = RSHMEM_WAIT_TIMEOUT_NS ? rshmem_detail_now_ns() : 0; \
                 do {{ r[{r}] = {read}({s}, {pe}); }} while (!rshmem_detail_holds(r[{r}], {c}, \
                 {x}) && litmus_within(t0, \"the spin into r{r}\")); }}",
                r = reg.0,
                s = var(src.var),
                pe = src.pe,
                c = cmp(*c),
                x = value(x),
            )
        }
        Instr::Load { reg, var: v } => format!(
            "r[{}] = *(volatile unsigned long long *){};",
            reg.0,
            var(*v)
        ),
        Instr::Store { var: v, value: x } => format!(
            "*(volatile unsigned long long *){} = {};",
            var(*v),
            value(x)
        ),
        Instr::PeerLoad { reg, src } => format!(
            "r[{}] = *(volatile unsigned long long *)rshmem_ptr({}, {});",
            reg.0,
            var(src.var),
            src.pe
        ),
        Instr::PeerStore { dst, value: x } => format!(
            "*(volatile unsigned long long *)rshmem_ptr({}, {}) = {};",
            var(dst.var),
            dst.pe,
            value(x)
        ),
        _ => return None,
    };
    Some(code)
}

/// `switch (me) { case P: ...program... break; }` for every PE of `test`, each line indented
/// by `indent`.
///
/// # Errors
/// [`NotOnGpu`] for the first instruction the generator does not translate.
pub(crate) fn program_cases(
    test: &Litmus,
    spelling: &Spelling,
    indent: &str,
) -> Result<String, NotOnGpu> {
    let teams = test.team_sets();
    let mut s = format!("{indent}switch (me) {{\n");
    for (pe, program) in test.programs.iter().enumerate() {
        let _ = writeln!(s, "{indent}case {pe}:");
        let mut at = Position {
            k: 0,
            barriers: 0,
            team_episodes: vec![0; teams.len()],
        };
        for (k, (instr, span)) in program.iter().enumerate() {
            at.k = k;
            match instr {
                Instr::BarrierAll | Instr::SyncAll => at.barriers += 1,
                Instr::Team { pes, .. } => {
                    if let Some(t) = teams.iter().position(|set| set == pes) {
                        at.team_episodes[t] += 1;
                    }
                }
                _ => {}
            }
            let code = instruction(instr, &at, &teams, spelling).ok_or_else(|| NotOnGpu {
                test: test.name.clone(),
                pe: pe as u32,
                line: span.line,
                instr: format!("{instr:?}"),
            })?;
            let _ = writeln!(s, "{indent}  {code}");
        }
        let _ = writeln!(s, "{indent}  break;");
    }
    let _ = writeln!(s, "{indent}}}");
    Ok(s)
}

/// The most instructions of any PE's program: the size of the kernel's `src` array.
pub(crate) fn longest_program(test: &Litmus) -> usize {
    test.programs.iter().map(Vec::len).max().unwrap_or(0).max(1)
}

/// The catalogue tests the kernel generator refuses, each with why: a test refused and not
/// listed, or listed and translated, fails the kernels' tests until someone decides.
#[cfg(test)]
pub(crate) const REFUSED: &[(&str, &str)] = &[];

/// Every catalogue test through `source` (a kernel generator): the tests of [`REFUSED`] are
/// refused, every other one translates; returns those with their source.
#[cfg(test)]
pub(crate) fn catalogue_sources(
    source: impl Fn(&Litmus) -> Result<String, NotOnGpu>,
) -> Vec<(Litmus, String)> {
    let mut translated = Vec::new();
    for file in crate::load_paths(&[crate::catalogue_dir()]).expect("the catalogue loads") {
        let test = file.test;
        let refused = REFUSED.iter().find(|(name, _)| *name == test.name);
        match (source(&test), refused) {
            (Ok(s), None) => translated.push((test, s)),
            (Err(e), Some(_)) => assert_eq!(e.test, test.name),
            (Ok(_), Some((_, why))) => panic!(
                "{}: listed as refused ({why}) but translated: take it off the list",
                test.name
            ),
            (Err(e), None) => panic!("{e}; if that is right, list the test in REFUSED with why"),
        }
    }
    translated
}

#[cfg(test)]
mod tests;
