//! Exhaustive exploration: every execution the simulator can produce for a small program.
//!
//! # Why
//!
//! A litmus test (two to four PEs, a handful of operations) is checked by comparing the set of
//! outcomes the simulator produces with the set the ordering rules allow. Seeds sample that
//! set; an exploration enumerates it, so a missing or extra outcome is found for sure, and
//! each outcome comes with a [`Choices`] string that replays it.
//!
//! # How
//!
//! [`SimBuilder::explore`](crate::SimBuilder::explore) switches the world's choice source to a
//! script (see [`crate::choice`]) and its timing to a coarse, discrete model in which every
//! chance event is a choice of a few values, a whole number of *rounds*:
//!
//! - **Forward traversals.** An operation travelling to its target (a put, a get's request,
//!   an atomic, a put-with-signal) is delayed by `c × round_ns`, `c` in `0..rounds`, on top of
//!   its route's fixed cost. Return traversals (acknowledgements, responses) get no delay and
//!   make no choice: they only decide when the source learns of completion, and whatever the
//!   source does after that is an operation (with its own choice) or a local access (below).
//!   The fence rule still applies on top of the chosen delay.
//! - **InfiniBand drains.** A write pending at its target (NVSHMEM semantics, through a NIC)
//!   drains on its own at `delivery + 1 + c × round_ns`; a consistency step, or a read or
//!   atomic through a NIC, still makes it visible earlier.
//! - **Local accesses.** Before a plain load (`read_local`) or store (`write_local`) of its
//!   own memory a PE stalls for `c × round_ns`, so that the access falls before or after
//!   remote writes arriving in between. The stall advances the PE's clock before the PE
//!   yields to the world, so the access happens only once every event before the new clock
//!   has happened: posting ahead of the world (`ISSUE_LOOKAHEAD_NS`) never lets a load see
//!   memory "from the past". Waits and tests make no choice about when they return: they
//!   return when satisfied.
//! - **Late consistency steps.** Before a consistency step (a satisfied wait or test, a
//!   quiet) a PE that has pending InfiniBand writes at its clock stalls for `c × round_ns`:
//!   a PE may be slow to take the step, and until it does, peers reading its memory over
//!   NVLink see the old values (a third PE reading after a barrier whose target has not
//!   flushed yet). A step with nothing pending shows nothing, so it makes no choice.
//!
//! Nothing else chooses: setup (segments, the bootstrap exchange, imports, queues) is
//! deterministic, and so are ties (events at one instant run in the order they were queued).
//! A program with `k` operations, `l` local loads and stores, `d` InfiniBand writes and `s`
//! consistency steps with pending writes thus makes `k + l + d + s` choices of arity
//! `rounds`: at most `rounds^(k+l+d+s)` executions.
//!
//! Three rounds give every pair of concurrent events both orders, not every order of many:
//! an outcome that needs a chain of four events to land in one order (one operation issued
//! after another completed, racing a third) may need `rounds: 4`.
//!
//! The round is long enough (by default 16 times the longest path of the machine, plus
//! 10 µs) that the choices, not the topology's fixed latencies, decide what overtakes what:
//! an operation delayed by one more round arrives after anything issued at about the same
//! time, and a load stalled by one more round comes after it.
//!
//! # The search
//!
//! Executions are searched depth first without keeping state ([`dfs`], [`Dfs`]): run with a
//! prefix (first the empty one), take the record of the choices made, find the last choice
//! whose value can still grow, and run again with the record cut after it and that value
//! plus one. Because a run is deterministic given its prefix, this visits every sequence of
//! choices the simulator can make exactly once, in lexicographic order.

use hw::{Pe, Topology};

use crate::choice::Choices;
use crate::costs::Timing;

/// How an exploration runs (see the [module docs](self)).
#[derive(Clone, Debug)]
pub struct Explore {
    /// The choices to take first; every later choice takes 0.
    pub prefix: Choices,
    /// How many values each timing choice has: delays of `0..rounds` rounds (default 3).
    pub rounds: u32,
    /// The length of a round in nanoseconds (`None`: [`Explore::default_round_ns`]).
    pub round_ns: Option<u64>,
}

impl Explore {
    /// The exploration of the execution named by `prefix`, with default rounds.
    pub fn new(prefix: Choices) -> Explore {
        Explore {
            prefix,
            rounds: 3,
            round_ns: None,
        }
    }
}

impl Default for Explore {
    fn default() -> Explore {
        Explore::new(Choices::default())
    }
}

/// The exploration timing the world uses, with the round resolved.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rounds {
    pub(crate) rounds: u32,
    pub(crate) round_ns: u64,
}

impl Rounds {
    /// A delay of a chosen number of rounds, `value` being the choice.
    pub(crate) fn delay_ns(&self, value: u64) -> u64 {
        value * self.round_ns
    }
}

impl Explore {
    /// The round [`Explore::round_ns`] defaults to for `n_pes` PEs on `topology` with `timing`
    /// (the machine's NIC and transfer costs): 16 times the
    /// longest path among them, NIC costs included, plus 10 µs. Finding it costs a route
    /// search per PE, as much as a small run: a search over many runs should find it once.
    pub fn default_round_ns(topology: &Topology, timing: &Timing, n_pes: u32) -> u64 {
        16 * longest_path_ns(topology, timing, n_pes) + 10_000
    }
}

/// The timing of `explore` on the first `n_pes` GPUs of `topology`.
pub(crate) fn rounds(
    explore: &Explore,
    topology: &Topology,
    timing: &Timing,
    n_pes: u32,
) -> Rounds {
    let round_ns = explore
        .round_ns
        .unwrap_or_else(|| Explore::default_round_ns(topology, timing, n_pes));
    Rounds {
        rounds: explore.rounds,
        round_ns,
    }
}

/// The longest one-way trip of a small transfer between two of the first `n_pes` GPUs, NICs
/// and the transfer's start-up included.
fn longest_path_ns(topology: &Topology, timing: &Timing, n_pes: u32) -> u64 {
    let nic_ns = timing.nic_ns;
    let start_up_ns = timing.transfer_ns;
    let mut longest = 0;
    for src in 0..n_pes {
        topology
            .routes_from(Pe(src))
            .for_each_path(topology, |dst, path| {
                if dst.0 < n_pes {
                    let trip_ns = path.latency_ns + u64::from(path.nics) * nic_ns + start_up_ns;
                    longest = longest.max(trip_ns);
                }
            });
    }
    longest
}

/// A stateless depth-first search over choice strings, one execution at a time.
///
/// Call [`Dfs::next_prefix`] for the prefix of the next execution, run it, and hand its
/// choice trace to [`Dfs::record`]; repeat until `next_prefix` returns `None`. [`dfs`] is
/// this loop.
#[derive(Clone, Debug)]
pub struct Dfs {
    /// The prefix of the next execution, with the arity of each choice (known from the
    /// execution it was derived from).
    next: Option<Vec<(u32, u32)>>,
    executions: u64,
    limit: u64,
}

impl Dfs {
    /// A search that stops after `limit` executions.
    pub fn new(limit: u64) -> Dfs {
        Dfs {
            next: Some(Vec::new()),
            executions: 0,
            limit,
        }
    }

    /// The prefix of the next execution; `None` when every execution was visited or the
    /// limit was reached.
    pub fn next_prefix(&self) -> Option<Choices> {
        if self.executions >= self.limit {
            return None;
        }
        self.next.as_deref().map(Choices::from_trace)
    }

    /// Takes the choice trace, `(value, arity)` per choice, of the execution just run with
    /// the last prefix.
    ///
    /// A run makes at least the choices of its prefix (it makes them as the run it was
    /// derived from did), so a shorter trace means the run failed before it could report;
    /// an empty one will do. The prefix stands in for it, and the search goes on with the
    /// next execution that is not an extension of the failed one.
    pub fn record(&mut self, trace: &[(u32, u32)]) {
        self.executions += 1;
        let mut done = self.next.take().unwrap_or_default();
        if trace.len() >= done.len() {
            done.clear();
            done.extend_from_slice(trace);
        }
        // The last choice that can still take a larger value; everything after it restarts
        // from 0, which is what a prefix ending there means.
        self.next = done
            .iter()
            .rposition(|&(value, arity)| value + 1 < arity)
            .map(|i| {
                done.truncate(i + 1);
                done[i].0 += 1;
                done
            });
    }

    /// What the search did so far.
    pub fn summary(&self) -> Summary {
        Summary {
            executions: self.executions,
            complete: self.next.is_none(),
        }
    }
}

/// What a search did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Summary {
    /// Executions run.
    pub executions: u64,
    /// Whether every execution was visited (false: the limit stopped the search).
    pub complete: bool,
}

/// Runs every execution, at most `limit` of them, depth first.
///
/// `execute` runs the execution named by a prefix (typically: build a [`crate::Sim`] with
/// [`SimBuilder::explore`](crate::SimBuilder::explore), launch the program, keep its
/// outcome with [`Choices::from_trace`] of the trace as its name) and returns the choice
/// trace it made ([`SimReport::choice_trace`](crate::SimReport::choice_trace)), or an empty
/// trace if it failed without one (see [`Dfs::record`]).
pub fn dfs(limit: u64, mut execute: impl FnMut(&Choices) -> Vec<(u32, u32)>) -> Summary {
    let mut search = Dfs::new(limit);
    while let Some(prefix) = search.next_prefix() {
        let trace = execute(&prefix);
        search.record(&trace);
    }
    search.summary()
}

/// A random execution with at most `depth` late events: the simulator's counterpart of PCT
/// (probabilistic concurrency testing), for programs too large to search exhaustively.
///
/// PCT finds a bug that needs `d` scheduling decisions to go a particular way with a
/// probability of about `1 / (n k^(d-1))` per run. Here a run of the program with every choice
/// 0 (nothing late) made `n_choices` choices; this picks `depth` of those positions uniformly
/// (with `seed`) and gives each a delay of 1 to `rounds - 1` rounds; every other choice stays
/// 0. An ordering bug that needs `d ≤ depth` events to be late thus shows with a probability
/// of about `(depth/n_choices)^d` per run, whatever the interleaving of the PEs. The prefix
/// replays with [`Explore`] like any other; if the program takes another path, positions past
/// its last choice are ignored and values above a choice's arity are clamped to it.
pub fn random_delays(seed: u64, n_choices: u64, depth: u32, rounds: u32) -> Choices {
    if n_choices == 0 || depth == 0 || rounds < 2 {
        return Choices::default();
    }
    let mut entropy = crate::Entropy::from_seed(seed);
    let mut values = Vec::new();
    for _ in 0..depth {
        let at = entropy.below(n_choices) as usize;
        let delay = 1 + entropy.below(u64::from(rounds - 1)) as u32;
        if values.len() <= at {
            values.resize(at + 1, 0);
        }
        values[at] = delay;
    }
    Choices(values)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::choice::Chooser;

    /// A synthetic "program" whose choices depend on earlier ones: the first choice picks
    /// how many more choices follow, and the arity of the last depends on the second.
    fn program(prefix: &Choices) -> (Vec<u64>, Vec<(u32, u32)>) {
        let mut c = Chooser::scripted(prefix);
        let mut values = vec![c.below(3)];
        for i in 0..values[0] {
            let arity = if i == 1 { values[1] + 2 } else { 2 };
            values.push(c.below(arity));
        }
        (values, c.trace().unwrap())
    }

    /// Every execution's result and choice string, in search order.
    fn search(limit: u64) -> (Vec<(Choices, Vec<u64>)>, Summary) {
        let mut seen = Vec::new();
        let summary = dfs(limit, |prefix| {
            let (result, trace) = program(prefix);
            seen.push((Choices::from_trace(&trace), result));
            trace
        });
        (seen, summary)
    }

    #[test]
    fn dfs_visits_every_sequence_of_choices_once_in_order() {
        let (seen, summary) = search(1000);
        // First choice 0: one execution; 1: two; 2: second in {0, 1}, then 2 or 3 values.
        let want: Vec<Vec<u64>> = vec![
            vec![0],
            vec![1, 0],
            vec![1, 1],
            vec![2, 0, 0],
            vec![2, 0, 1],
            vec![2, 1, 0],
            vec![2, 1, 1],
            vec![2, 1, 2],
        ];
        let results: Vec<Vec<u64>> = seen.iter().map(|e| e.1.clone()).collect();
        assert_eq!(results, want);
        let distinct: BTreeSet<_> = seen.iter().map(|e| &e.0).collect();
        assert_eq!(distinct.len(), want.len());
        assert_eq!(
            summary,
            Summary {
                executions: 8,
                complete: true
            }
        );
    }

    #[test]
    fn each_choice_string_replays_its_execution() {
        for (choices, result) in search(1000).0 {
            let replayed = program(&choices.to_string().parse().unwrap());
            assert_eq!(replayed.0, result, "{choices}");
        }
    }

    #[test]
    fn the_limit_stops_the_search() {
        let (seen, summary) = search(3);
        assert_eq!(seen.len(), 3);
        assert!(!summary.complete);
        let (seen, summary) = search(0);
        assert!(seen.is_empty() && !summary.complete);
    }

    #[test]
    fn a_run_without_choices_is_one_execution() {
        let mut prefixes = Vec::new();
        let summary = dfs(10, |prefix| {
            prefixes.push(prefix.to_string());
            Vec::new()
        });
        assert_eq!(prefixes, [""]);
        assert!(summary.complete);
    }

    #[test]
    fn the_search_steps_past_a_failed_execution() {
        // The second execution fails and has no trace.
        let mut runs = 0;
        let mut prefixes = Vec::new();
        let summary = dfs(100, |prefix| {
            runs += 1;
            prefixes.push(prefix.to_string());
            if runs == 2 {
                Vec::new()
            } else {
                program(prefix).1
            }
        });
        assert!(summary.complete);
        // "1" failed, so its subtree ("1.0" was its own trace, "1.1" is skipped) is gone.
        assert_eq!(prefixes, ["", "1", "2", "2.0.1", "2.1", "2.1.1", "2.1.2"]);
    }

    #[test]
    fn random_delays_are_few_in_range_and_reproducible() {
        for seed in 0..50 {
            let c = random_delays(seed, 1000, 3, 3);
            assert!(c.0.len() <= 1000);
            let late: Vec<u32> = c.0.iter().copied().filter(|&v| v > 0).collect();
            assert!((1..=3).contains(&late.len()), "{c}");
            assert!(late.iter().all(|&v| (1..3).contains(&v)), "{c}");
            assert_eq!(c, random_delays(seed, 1000, 3, 3));
        }
        assert_ne!(random_delays(1, 1000, 3, 3), random_delays(2, 1000, 3, 3));
        assert_eq!(random_delays(1, 0, 3, 3), Choices::default());
    }
}
