//! The source rules of `tidy`: which names may not appear in which folders, and which code a
//! rule looks past (tests, code the model checkers never build, an item that says why with
//! an `#[allow]` of the matching clippy lint).
//!
//! The rules read code only: comments and string literals are blanked first (`crate::lex`),
//! so prose may name what code may not.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::Context;

use super::Violation;
use crate::lex::{self, Truth};

/// A name a rule forbids.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Name {
    /// This text with no identifier character right before it (`HashMap`, `host::`), and
    /// none right after it when it ends in one (so `HashMap` is not `HashMapExt`).
    Word(&'static str),
    /// A path from `root` to `child`, written out (`std::sync`) or in a group
    /// (`std::{sync::Arc, ..}`).
    Path(&'static str, &'static str),
}

impl Name {
    fn shown(self) -> String {
        match self {
            Name::Word(word) => word.trim_end_matches(':').to_owned(),
            Name::Path(root, child) => format!("{root}::{child}"),
        }
    }

    /// Where in `code` the name stands.
    fn find(self, code: &str) -> Vec<usize> {
        match self {
            Name::Word(word) => words(code, word),
            Name::Path(root, child) => words(code, &format!("{root}::"))
                .into_iter()
                .filter(|&at| path_names(code, at + root.len() + 2, child))
                .collect(),
        }
    }
}

/// Where `word` stands in `code` as a whole word.
fn words(code: &str, word: &str) -> Vec<usize> {
    let c = code.as_bytes();
    let ends_in_ident = word.bytes().last().is_some_and(lex::is_ident);
    code.match_indices(word)
        .map(|(at, _)| at)
        .filter(|&at| at == 0 || !lex::is_ident(c[at - 1]))
        .filter(|&at| !ends_in_ident || !c.get(at + word.len()).is_some_and(|&b| lex::is_ident(b)))
        .collect()
}

/// Whether the path continuing at `at` (right after `root::`) names `child` next, directly
/// or as one of the top-level members of a `{..}` group.
fn path_names(code: &str, at: usize, child: &str) -> bool {
    let rest = code[at..].trim_start();
    let starts_with_child = |text: &str| {
        text.strip_prefix(child)
            .is_some_and(|after| !after.bytes().next().is_some_and(lex::is_ident))
    };
    if !rest.starts_with('{') {
        return starts_with_child(rest);
    }
    let open = code.len() - rest.len();
    let Some(close) = lex::matching_close(code.as_bytes(), open) else {
        return false;
    };
    let mut depth = 0usize;
    let mut member_start = open + 1;
    for (j, b) in code.bytes().enumerate().take(close + 1).skip(open + 1) {
        match b {
            b'{' => depth += 1,
            b'}' if depth > 0 => depth -= 1,
            b',' | b'}' if depth == 0 => {
                if starts_with_child(code[member_start..j].trim_start()) {
                    return true;
                }
                member_start = j + 1;
            }
            _ => {}
        }
    }
    false
}

/// Code a ban looks past.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Skip {
    /// Code compiled only for tests, and `tests.rs` files.
    pub(crate) tests: bool,
    /// Code that neither `rshmem_loom` nor `rshmem_shuttle` builds compile: loom and shuttle
    /// cannot miss what is not there.
    pub(crate) absent_under_checkers: bool,
    /// Items with `#[allow(clippy::LINT ..)]`: the clippy ban's escape hatch, which must say
    /// why (`reason = ".."`), so one `#[allow]` answers both checks.
    pub(crate) allowed_lint: Option<&'static str>,
}

impl Skip {
    /// Looks past nothing.
    pub(crate) const NOTHING: Skip = Skip {
        tests: false,
        absent_under_checkers: false,
        allowed_lint: None,
    };
}

/// One forbidden name and what the rule looks past for it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ban {
    pub(crate) name: Name,
    pub(crate) skip: Skip,
}

/// A rule: names that may not appear in some source files.
#[derive(Debug)]
pub(crate) struct SourceRule {
    /// The rule's short name, printed with each violation.
    pub(crate) name: &'static str,
    /// Folders (every `.rs` file below) and files, relative to the repository root.
    pub(crate) scope: &'static [&'static str],
    /// Files of the scope the rule does not read: the one room where the names belong.
    pub(crate) except: &'static [&'static str],
    pub(crate) bans: &'static [Ban],
    /// Why the rule exists, after "names X: ".
    pub(crate) why: &'static str,
    /// What to do instead.
    pub(crate) fix: &'static str,
}

impl SourceRule {
    /// The violations of this rule in the file at `path` (relative to the root) with `text`.
    pub(crate) fn check(&self, path: &str, text: &str) -> Vec<Violation> {
        let code = lex::code_only(text);
        let is_tests_file = path.ends_with("/tests.rs") || path.contains("/tests/");
        let test_only = lex::test_only_ranges(&code);
        let absent_under_checkers = lex::attributed_items(&code, &|attr| {
            lex::cfg_predicate(attr).is_some_and(|pred| {
                ["rshmem_loom", "rshmem_shuttle"].iter().all(|checker| {
                    let known = |name: &str| (name == *checker).then_some(true);
                    lex::eval_cfg(pred, &known) == Truth::False
                })
            })
        });
        let inside =
            |ranges: &[(usize, usize)], at: usize| ranges.iter().any(|&(s, e)| s <= at && at < e);
        let mut violations = Vec::new();
        for ban in self.bans {
            if ban.skip.tests && is_tests_file {
                continue;
            }
            let allowed = ban.skip.allowed_lint.map_or_else(Vec::new, |lint| {
                let allow = format!("clippy::{lint}");
                lex::attributed_items(&code, &|attr| {
                    attr.starts_with("allow") && attr.contains(allow.as_str())
                })
            });
            for at in ban.name.find(&code) {
                let skipped = (ban.skip.tests && inside(&test_only, at))
                    || (ban.skip.absent_under_checkers && inside(&absent_under_checkers, at))
                    || inside(&allowed, at);
                if !skipped {
                    violations.push(Violation {
                        path: path.to_owned(),
                        line: lex::line_of(text, at),
                        rule: self.name,
                        message: format!("names `{}`: {}", ban.name.shown(), self.why),
                        fix: self.fix.to_owned(),
                    });
                }
            }
        }
        // One report a line: a line that names two banned things needs one fix.
        violations.sort_by_key(|v| v.line);
        violations.dedup_by_key(|v| v.line);
        violations
    }
}

/// Every `.rs` file of `scope` under `root`, as paths relative to `root` with `/`, sorted.
pub(crate) fn rust_files(root: &Path, scope: &[&str]) -> anyhow::Result<Vec<String>> {
    let mut files = Vec::new();
    let mut pending: Vec<PathBuf> = scope.iter().map(|s| root.join(s)).collect();
    while let Some(path) = pending.pop() {
        if path.is_dir() {
            for entry in
                fs::read_dir(&path).with_context(|| format!("listing {}", path.display()))?
            {
                pending.push(entry?.path());
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            let relative = path.strip_prefix(root).unwrap_or(&path);
            files.push(relative.to_string_lossy().replace('\\', "/"));
        }
    }
    files.sort();
    Ok(files)
}

const fn ban(name: Name, skip: Skip) -> Ban {
    Ban { name, skip }
}

const IN_TESTS_TOO: Skip = Skip::NOTHING;
const NOT_IN_TESTS: Skip = Skip {
    tests: true,
    ..Skip::NOTHING
};
const UNLESS_ABSENT_UNDER_CHECKERS: Skip = Skip {
    absent_under_checkers: true,
    ..Skip::NOTHING
};
/// Clocks and threads: tests may time themselves; the clippy ban is `disallowed_methods`.
const CLOCK_OR_THREAD: Skip = Skip {
    tests: true,
    allowed_lint: Some("disallowed_methods"),
    ..Skip::NOTHING
};
/// Hash maps and sets: in tests too, where an iterated one makes a flaky test; the clippy
/// ban is `disallowed_types`.
const HASHED: Skip = Skip {
    allowed_lint: Some("disallowed_types"),
    ..IN_TESTS_TOO
};

/// The host backend takes every atomic, lock and thread from the facade.
const HOST_FACADE: SourceRule = SourceRule {
    name: "host-facade",
    scope: &["hw/src/host", "hw/src/common"],
    except: &[],
    bans: &[
        ban(Name::Path("std", "sync"), UNLESS_ABSENT_UNDER_CHECKERS),
        ban(Name::Path("std", "thread"), UNLESS_ABSENT_UNDER_CHECKERS),
    ],
    why: "the host backend's synchronisation must come from the facade, or loom and shuttle \
          cannot see it",
    fix: "import it from `crate::sync` (hw/src/sync.rs), adding it there for std, loom and \
          shuttle; or put the code under #[cfg(not(any(rshmem_loom, rshmem_shuttle)))]",
};

/// The simulator is a function of its seed.
const SIM_DETERMINISM: SourceRule = SourceRule {
    name: "sim-determinism",
    scope: &["sim/src"],
    // A parallel run's threads: what each runs, and the order the network takes what they
    // sent, follow from the partitions alone (docs/sim-parallel.md), which a test checks by
    // running each workload on one thread and on two.
    except: &["sim/src/parallel/mod.rs"],
    bans: &[
        ban(Name::Word("Instant::now"), CLOCK_OR_THREAD),
        ban(Name::Word("SystemTime::now"), CLOCK_OR_THREAD),
        ban(Name::Path("std", "thread"), CLOCK_OR_THREAD),
        ban(Name::Word("HashMap"), HASHED),
        ban(Name::Word("HashSet"), HASHED),
    ],
    why: "the simulator's runs must follow from the seed alone, and the OS clock, OS threads \
          and a hash map's random order do not",
    fix: "use the virtual clock (World::now_ns), the simulator's PE tasks, or a BTreeMap / \
          BTreeSet; if the map is never iterated, keep it under \
          #[allow(clippy::disallowed_types, reason = \"..\")] (sim/clippy.toml)",
};

/// The runtime is generic over the backend.
const RUNTIME_NAMES_NO_BACKEND: SourceRule = SourceRule {
    name: "runtime-names-no-backend",
    scope: &["runtime/src"],
    except: &[],
    bans: &[
        ban(Name::Word("sim::"), NOT_IN_TESTS),
        ban(Name::Word("SimBackend"), NOT_IN_TESTS),
        ban(Name::Path("hw", "host"), NOT_IN_TESTS),
        ban(Name::Word("HostBackend"), NOT_IN_TESTS),
        ban(Name::Path("hw", "cuda"), NOT_IN_TESTS),
        ban(Name::Word("CudaBackend"), NOT_IN_TESTS),
    ],
    why: "the runtime is generic over `B: hw::Backend` and never names a concrete backend",
    fix: "write it against the traits of `hw` (branch on `hw::Caps`), or move it into \
          #[cfg(test)] code or a tests.rs file",
};

/// Backends share code through `hw`'s own modules, never through each other: the files of
/// `scope` may not name what `bans` names.
const fn backends_apart(scope: &'static [&'static str], bans: &'static [Ban]) -> SourceRule {
    SourceRule {
        name: "backends-apart",
        scope,
        except: &[],
        bans,
        why: "one backend may not import another",
        fix: "move what both backends need into a module of `hw` that neither backend owns \
              (hw/src/common, as the rendezvous and the thread launch loop are)",
    }
}

// The CUDA backend has a `process` module of its own (`super::process`), so only the crate
// path names the process backend there.
const CUDA_APART: SourceRule = backends_apart(
    &["hw/src/cuda"],
    &[
        ban(Name::Word("host::"), IN_TESTS_TOO),
        ban(Name::Path("crate", "host"), IN_TESTS_TOO),
        ban(Name::Path("super", "host"), IN_TESTS_TOO),
        ban(Name::Path("crate", "process"), IN_TESTS_TOO),
    ],
);

const HOST_APART: SourceRule = backends_apart(
    &["hw/src/host"],
    &[
        ban(Name::Word("cuda::"), IN_TESTS_TOO),
        ban(Name::Path("crate", "cuda"), IN_TESTS_TOO),
        ban(Name::Path("super", "cuda"), IN_TESTS_TOO),
        ban(Name::Word("process::"), IN_TESTS_TOO),
        ban(Name::Path("crate", "process"), IN_TESTS_TOO),
        ban(Name::Path("super", "process"), IN_TESTS_TOO),
    ],
);

const PROCESS_APART: SourceRule = backends_apart(
    &["hw/src/process"],
    &[
        ban(Name::Word("host::"), IN_TESTS_TOO),
        ban(Name::Path("crate", "host"), IN_TESTS_TOO),
        ban(Name::Path("super", "host"), IN_TESTS_TOO),
        ban(Name::Word("cuda::"), IN_TESTS_TOO),
        ban(Name::Path("crate", "cuda"), IN_TESTS_TOO),
        ban(Name::Path("super", "cuda"), IN_TESTS_TOO),
    ],
);

/// Every chance draw of the simulator's world is made in one file, so that the draws a run
/// makes, and their order, can be read in one place.
const SIM_CHANCE_IN_ONE_ROOM: SourceRule = SourceRule {
    name: "sim-chance-in-one-room",
    scope: &["sim/src"],
    except: &["sim/src/world/chance.rs"],
    bans: &[ban(Name::Word("chooser.below"), NOT_IN_TESTS)],
    why: "every chance draw of the world is made in sim/src/world/chance.rs, where a reader sees \
          all of them and their order",
    fix: "add a function to sim/src/world/chance.rs that makes the draw, and call it",
};

/// Every source rule, in the order they are reported.
pub(crate) const SOURCE_RULES: [SourceRule; 7] = [
    HOST_FACADE,
    SIM_DETERMINISM,
    SIM_CHANCE_IN_ONE_ROOM,
    RUNTIME_NAMES_NO_BACKEND,
    CUDA_APART,
    HOST_APART,
    PROCESS_APART,
];

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(rule: &SourceRule, path: &str, text: &str) -> Vec<usize> {
        rule.check(path, text).into_iter().map(|v| v.line).collect()
    }

    #[test]
    fn no_backend_may_import_another() {
        // The two lines hw/src/cuda had when this rule was written.
        let text = "use crate::host::rendezvous::Rendezvous;\n\
                    use crate::host::single_host;\n\
                    use crate::{host, threads};\n\
                    // the host backend's rendezvous: prose may say host::\n\
                    fn f() { single_host::x(); MemKind::Host; }\n";
        assert_eq!(lines(&CUDA_APART, "hw/src/cuda/world.rs", text), [1, 2, 3]);
        let text = "use crate::cuda::CudaBackend;\nuse super::{cuda, sync};\n";
        assert_eq!(lines(&HOST_APART, "hw/src/host/mod.rs", text), [1, 2]);
        let text = "use crate::host::HostDevice;\nuse crate::cuda::Cuda;\n\
                    use crate::common::fd_sharing;\n";
        assert_eq!(lines(&PROCESS_APART, "hw/src/process/mod.rs", text), [1, 2]);
        let text = "use super::process::map_shared;\nuse crate::process::ProcessDevice;\n";
        assert_eq!(lines(&CUDA_APART, "hw/src/cuda/world.rs", text), [2]);
    }

    #[test]
    fn the_host_backend_takes_its_synchronisation_from_the_facade() {
        let text = "use std::sync::Arc;\n\
                    use std::{thread, time::Duration};\n\
                    use crate::sync::{Mutex, scope};\n\
                    #[cfg(not(any(rshmem_loom, rshmem_shuttle)))]\n\
                    fn spawn() { std::thread::Builder::new(); }\n\
                    #[cfg(not(rshmem_loom))]\n\
                    fn lock() { std::sync::Mutex::new(0); }\n";
        assert_eq!(lines(&HOST_FACADE, "hw/src/host/queue.rs", text), [1, 2, 7]);
    }

    #[test]
    fn the_simulator_bans_clocks_and_threads_outside_tests_and_hash_maps_everywhere() {
        let text = "let t = Instant::now();\n\
                    let m: HashMap<u32, u32> = HashMap::new();\n\
                    #[allow(clippy::disallowed_types, reason = \"never iterated\")]\n\
                    use std::collections::HashMap;\n\
                    let m: BTreeMap<u32, u32> = BTreeMap::new();\n\
                    #[cfg(test)]\n\
                    mod tests { fn f() { Instant::now(); std::thread::spawn(g); HashSet::new(); } }\n";
        assert_eq!(lines(&SIM_DETERMINISM, "sim/src/world.rs", text), [1, 2, 7]);
    }

    #[test]
    fn the_simulator_draws_chances_only_in_its_chance_room() {
        let text = "let d = self.chooser.below(8);\n\
                    let n = self.chooser.choices();\n\
                    #[cfg(test)]\n\
                    mod tests { fn f(w: &mut World) { w.chooser.below(2); } }\n";
        assert_eq!(
            lines(&SIM_CHANCE_IN_ONE_ROOM, "sim/src/world/issue.rs", text),
            [1]
        );
        // The ban matches the draws the chance room really makes, so it is not vacuous.
        let room = include_str!("../../../../sim/src/world/chance.rs");
        assert!(!lines(&SIM_CHANCE_IN_ONE_ROOM, "sim/src/world/chance.rs", room).is_empty());
    }

    #[test]
    fn the_runtime_names_backends_only_in_tests() {
        let text = "use hw::{Backend, host::HostBackend};\n\
                    fn f<B: hw::Backend>() {}\n\
                    #[cfg(test)]\n\
                    mod tests { use sim::SimBackend; }\n";
        assert_eq!(
            lines(&RUNTIME_NAMES_NO_BACKEND, "runtime/src/rma.rs", text),
            [1]
        );
        let text = "use sim::{Sim, SimBackend};\n";
        assert!(
            lines(
                &RUNTIME_NAMES_NO_BACKEND,
                "runtime/src/collectives/tests.rs",
                text
            )
            .is_empty()
        );
    }
}
