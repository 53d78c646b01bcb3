//! The stressed kernel of a litmus test: many instances of the test in one launch, each PE's
//! part of each instance on a thread the host chose ([`crate::LaunchPlan`]), the other
//! threads hammering memory meanwhile.
//!
//! Every PE launches the same kernel, a grid of blocks; each thread:
//!
//! 1. if it runs an instance, resets its PE's copies of the instance's words (at the slots the
//!    plan gave them);
//! 2. waits at the start gate with every block of every PE (a counter on PE 0 that each block
//!    bumps; all blocks are resident, so the instances start together);
//! 3. if it runs an instance: hammers the stress targets for the pre-stress iterations, spins
//!    for a random time, runs its PE's program on the instance's words, and records its
//!    registers in the instance's record;
//! 4. otherwise hammers the stress targets with the launch's pattern until its iterations are
//!    done or every instance of its PE has finished (a count the test threads bump), so that
//!    stress lasts as long as the tests and no longer.
//!
//! `barrier_all` and `sync_all` become a barrier of the instance's threads alone (a counter
//! word of the instance on PE 0, after a system fence): the device API's barrier needs the
//! whole block of one PE. A team's `team_sync` or `team_barrier` is the same on a counter
//! word of its own, on the team's lowest member (`team_barrier` quiets first). The final memory values are read by the host after every PE's
//! kernel has finished.

use std::fmt::Write as _;

use model::litmus::{Instr, Litmus, Observable, VarId};

use crate::gpu_instr::{DEVICE_HELPERS, NotOnGpu, Spelling, longest_program, program_cases};
use crate::gpu_run::initial_value;

/// The stressed kernel's name.
pub(crate) const STRESS_KERNEL: &str = "litmus_stress";

/// Whether a program of `test` meets the others at a barrier.
fn has_barrier(test: &Litmus) -> bool {
    test.programs
        .iter()
        .flatten()
        .any(|(i, _)| matches!(i, Instr::BarrierAll | Instr::SyncAll))
}

/// The words of one instance: the test's variables, then a barrier counter if it needs one,
/// then a counter per team (`team_sets` in `gpu_instr.rs`).
pub fn instance_words(test: &Litmus) -> u32 {
    test.vars.len() as u32 + u32::from(has_barrier(test)) + test.team_sets().len() as u32
}

/// The registers PE `pe` records per instance, in the order of `test.observables()`: the
/// host reads the memory observables itself.
pub(crate) fn recorded_registers(test: &Litmus, pe: u32) -> Vec<u8> {
    test.observables()
        .into_iter()
        .filter_map(|o| match o {
            Observable::Reg { pe: p, reg } if p == pe => Some(reg.0),
            _ => None,
        })
        .collect()
}

/// The widest record of any PE, in words (at least 1): the records' stride.
pub(crate) fn record_width(test: &Litmus) -> u32 {
    (0..test.n_pes)
        .map(|pe| recorded_registers(test, pe).len() as u32)
        .max()
        .unwrap_or(0)
        .max(1)
}

/// The stress loop, shared by the stress threads and the test threads' pre-stress.
const STRESS_LOOP: &str = r"// Hammers one of the launch's target words, the pattern's two accesses an iteration, until
// the iterations are done or (if `finished` is given) every instance of this PE has finished.
__device__ inline void litmus_hammer(unsigned long long *vars, const unsigned int *targets,
                                     unsigned int n_targets, unsigned int iterations,
                                     unsigned int pattern, unsigned int tid,
                                     const unsigned int *finished, unsigned int instances) {
  if (n_targets == 0 || iterations == 0) return;
  volatile unsigned long long *a = vars + targets[tid % n_targets];
  unsigned long long sink = 0;
  for (unsigned int i = 0; i < iterations; ++i) {
    switch (pattern) {
    case 0: *a = i; *a = i + 1; break;
    case 1: *a = i; sink += *a; break;
    case 2: sink += *a; *a = i; break;
    default: sink += *a; sink += *a; break;
    }
    if (finished && i % 16 == 15 && *(const volatile unsigned int *)finished >= instances) break;
  }
  (void)sink;
}
";

/// The CUDA source of `test`'s stressed kernel, `litmus_stress(vars, roles, slots, targets,
/// records, gate, gate_target, finished, instances, n_targets, stress_iterations, pattern,
/// pre_stress_iterations, max_delay_cycles, seed)`.
///
/// # Errors
/// [`NotOnGpu`] if the test holds an instruction the generator does not translate.
pub fn stress_kernel_source(test: &Litmus) -> Result<String, NotOnGpu> {
    let words = instance_words(test);
    let n_vars = test.vars.len() as u32;
    let n_pes = test.n_pes;
    let var = |v: VarId| format!("v[{}]", v.0);
    let barrier = |k: usize| {
        format!(
            "__threadfence_system(); {{ unsigned long long *b = (unsigned long long \
             *)rshmem_detail_remote(v[{n_vars}], 0); atomicAdd_system(b, 1ull); \
             rshmem_detail_poll((const unsigned long long *)b, RSHMEM_CMP_GE, {}ull, \
             \"the instance's barrier\"); }} __threadfence_system();",
            k as u64 * u64::from(n_pes)
        )
    };
    let first_team = n_vars + u32::from(has_barrier(test));
    let team_counter = |t: usize| format!("v[{}]", first_team as usize + t);
    let program = program_cases(
        test,
        &Spelling {
            var: &var,
            barrier: &barrier,
            team_counter: &team_counter,
        },
        "    ",
    )?;
    let width = record_width(test);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "// {} (generated from the litmus test; stressed, many instances a launch)",
        test.name
    );
    s.push_str(STRESS_LOOP);
    s.push_str(DEVICE_HELPERS);
    let _ = writeln!(
        s,
        "extern \"C\" __global__ void {STRESS_KERNEL}(unsigned long long *vars, const unsigned \
         int *roles, const unsigned int *slots, const unsigned int *targets, unsigned long long \
         *records, unsigned long long *gate, unsigned long long gate_target, unsigned int \
         *finished, unsigned int instances, unsigned int n_targets, unsigned int stress_iterations, unsigned int pattern, unsigned int \
         pre_stress_iterations, unsigned int max_delay_cycles, unsigned long long seed) {{"
    );
    s.push_str("  const int me = rshmem_my_pe();\n");
    s.push_str("  const unsigned int tid = blockIdx.x * blockDim.x + threadIdx.x;\n");
    s.push_str("  const unsigned int role = roles[tid];\n");
    let _ = writeln!(s, "  unsigned long long *v[{words}];");
    // 1. Reset this PE's copies of the instance's words.
    s.push_str("  if (role != 0xffffffffu) {\n");
    let _ = writeln!(
        s,
        "    for (int w = 0; w < {words}; ++w) v[w] = vars + slots[role * {words}u + w];"
    );
    s.push_str("    switch (me) {\n");
    for pe in 0..n_pes {
        let _ = writeln!(s, "    case {pe}:");
        for w in 0..words {
            let init = if w < n_vars {
                initial_value(test, pe, w as usize)
            } else {
                0
            };
            let _ = writeln!(
                s,
                "      *(volatile unsigned long long *)v[{w}] = {init}ull;"
            );
        }
        s.push_str("      break;\n");
    }
    s.push_str("    }\n  }\n");
    // 2. The start gate: every block of every PE.
    s.push_str(
        "  __syncthreads();\n  if (threadIdx.x == 0) {\n    __threadfence_system();\n    \
         unsigned long long *g = (unsigned long long *)rshmem_detail_remote(gate, 0);\n    \
         atomicAdd_system(g, 1ull);\n    rshmem_detail_poll((const unsigned long long *)g, \
         RSHMEM_CMP_GE, gate_target, \"the start gate (every block of every PE must be \
         resident at once: fewer blocks)\");\n  }\n  __syncthreads();\n",
    );
    // 3. The instance: pre-stress, a random spin, the program, the records.
    s.push_str("  if (role != 0xffffffffu) {\n");
    s.push_str(
        "    litmus_hammer(vars, targets, n_targets, pre_stress_iterations, pattern, tid, 0, 0);\n",
    );
    s.push_str(
        "    unsigned long long rng = seed ^ (0x9e3779b97f4a7c15ull * (unsigned long long)(tid + \
         1)) ^ ((unsigned long long)me << 48);\n    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng \
         << 17;\n    if (max_delay_cycles) { long long until = clock64() + (long long)(rng % \
         max_delay_cycles); while (clock64() < until) {} }\n",
    );
    let _ = writeln!(s, "    unsigned long long src[{}];", longest_program(test));
    let _ = writeln!(s, "    unsigned long long r[{}] = {{0}};", crate::N_REGS);
    s.push_str(&program);
    s.push_str("    switch (me) {\n");
    for pe in 0..n_pes {
        let _ = writeln!(s, "    case {pe}:");
        for (k, reg) in recorded_registers(test, pe).iter().enumerate() {
            let _ = writeln!(
                s,
                "      records[(unsigned long long)role * {width} + {k}] = r[{reg}];"
            );
        }
        s.push_str("      break;\n");
    }
    s.push_str("    }\n    atomicAdd(finished, 1u);\n");
    // 4. Everyone else hammers while the instances run.
    s.push_str(
        "  } else {\n    litmus_hammer(vars, targets, n_targets, stress_iterations, pattern, \
         tid, finished, instances);\n  }\n}\n",
    );
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{catalogue_dir, load_paths};

    fn catalogue_test(file: &str) -> Litmus {
        load_paths(&[catalogue_dir().join(file)])
            .expect("the test loads")
            .remove(0)
            .test
    }

    /// Message passing, stressed: each instance's words come from its slots, the reset and
    /// the gate come before the program, the reader records its register per instance, and
    /// the threads without an instance hammer.
    #[test]
    fn message_passing_runs_per_instance_behind_the_gate() {
        let source = stress_kernel_source(&catalogue_test("a1-mp-put-put.litmus")).unwrap();
        let at = |what: &str| {
            source
                .find(what)
                .unwrap_or_else(|| panic!("no `{what}` in:\n{source}"))
        };
        assert!(at("v[w] = vars + slots[role * 2u + w]") < at("atomicAdd_system(g, 1ull)"));
        assert!(at("atomicAdd_system(g, 1ull)") < at("rshmem_put(v[0], &src[0], 1, 1)"));
        assert!(at("rshmem_put(v[0]") < at("rshmem_put(v[1]"));
        assert!(at("rshmem_wait_until(v[1], RSHMEM_CMP_EQ, 1ull)") < at("r[0] = *(volatile"));
        assert!(source.contains("records[(unsigned long long)role * 1 + 0] = r[0];"));
        assert!(source.contains(
            "} else {\n    litmus_hammer(vars, targets, n_targets, stress_iterations, pattern, \
             tid, finished, instances);"
        ));
        assert!(at("pre_stress_iterations, pattern, tid, 0, 0)") < at("clock64()"));
        assert!(at("records[(unsigned long long)role") < at("atomicAdd(finished, 1u)"));
        // The device API's block-wide barrier cannot serve many instances.
        assert!(!source.contains("rshmem_barrier_all"));
    }

    /// A test with barriers gets a counter word per instance, and its k-th barrier waits
    /// for k arrivals of every PE.
    #[test]
    fn barriers_count_the_instances_threads() {
        let test = catalogue_test("d6-mp-put-barrier-third-g.litmus");
        assert_eq!(instance_words(&test), test.vars.len() as u32 + 1);
        let source = stress_kernel_source(&test).unwrap();
        let n_vars = test.vars.len();
        assert!(
            source.contains(&format!("rshmem_detail_remote(v[{n_vars}], 0)")),
            "{source}"
        );
        assert!(source.contains("RSHMEM_CMP_GE, 3ull"), "{source}");
    }

    /// Initial values are the test's, on the PE whose copy they are, in every catalogue test
    /// not listed as refused.
    #[test]
    fn resets_write_each_pes_initial_values() {
        for (test, source) in crate::gpu_instr::catalogue_sources(stress_kernel_source) {
            for &(loc, value) in &test.init {
                let case = source
                    .split(&format!("    case {}:\n", loc.pe))
                    .nth(1)
                    .expect("the PE's reset case");
                let line = format!(
                    "*(volatile unsigned long long *)v[{}] = {value}ull;",
                    loc.var.0
                );
                assert!(
                    case[..case.find("break;").unwrap()].contains(&line),
                    "{}",
                    test.name
                );
            }
        }
    }
}
