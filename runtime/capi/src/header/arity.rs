//! The generic names of untyped functions: each stands for C functions of different numbers
//! of parameters and picks one by the number of arguments of the call.
//!
//! - `shmem_sync(team)` is `shmem_team_sync(team)` (OpenSHMEM 1.5 section 9.9, SHMEM_SYNC, C11
//!   synopsis), while the deprecated active-set `shmem_sync(PE_start, logPE_stride, PE_size,
//!   pSync)` of the same section keeps its C function and symbol.
//! - `shmem_signal_add(ctx, sig_addr, signal, pe)` and `shmem_signal_set(ctx, ...)` take the
//!   optional context first (OpenSHMEM 1.6 section 9.8, C11 synopses): with four arguments
//!   they are `shmem_ctx_signal_add`/`set`, with three the C functions of their own name.
//!
//! The arities come from the prototypes of the list, so the names cannot drift from them.
//! A count no function has picks the function of the next larger arity (or the largest), so
//! the compiler's complaint names a real prototype ("too few arguments to `shmem_sync`").

use super::generic::{forwarding_overload, params};
use super::spec::Template;

/// Each generic name and the C functions it stands for.
const NAMES: [(&str, [&str; 2]); 3] = [
    ("shmem_sync", ["shmem_team_sync", "shmem_sync"]),
    (
        "shmem_signal_add",
        ["shmem_signal_add", "shmem_ctx_signal_add"],
    ),
    (
        "shmem_signal_set",
        ["shmem_signal_set", "shmem_ctx_signal_set"],
    ),
];

/// One C function a name stands for.
#[derive(Debug)]
struct Candidate {
    /// Its number of parameters.
    arity: usize,
    /// Its name.
    function: &'static str,
    /// Its prototype, `;` included.
    prototype: &'static str,
}

/// A generic name picked by the number of arguments.
#[derive(Debug)]
pub(crate) struct ArityName {
    /// The generic name.
    name: &'static str,
    /// The functions it stands for, fewest parameters first.
    candidates: Vec<Candidate>,
}

/// The names, each with its functions' prototypes from `templates`.
///
/// # Panics
/// When the list lacks a function of [`NAMES`] or two of a name's functions have the same
/// arity (the list is committed data; the tests run this).
pub(crate) fn arity_names(templates: &[Template]) -> Vec<ArityName> {
    NAMES
        .iter()
        .map(|(name, functions)| {
            let mut candidates: Vec<Candidate> = functions
                .iter()
                .map(|function| {
                    let template = templates
                        .iter()
                        .find(|template| template.name() == *function)
                        .unwrap_or_else(|| panic!("{function} is not in the list"));
                    Candidate {
                        arity: params(template.prototype).len(),
                        function,
                        prototype: template.prototype,
                    }
                })
                .collect();
            candidates.sort_by_key(|candidate| candidate.arity);
            assert!(
                candidates.windows(2).all(|w| w[0].arity < w[1].arity),
                "{name}: two functions of one arity cannot be told apart"
            );
            ArityName { name, candidates }
        })
        .collect()
}

impl ArityName {
    /// The largest number of parameters of its functions.
    pub(crate) fn max_arity(&self) -> usize {
        self.candidates
            .last()
            .map_or(0, |candidate| candidate.arity)
    }

    /// The function a call of `count` arguments gets.
    fn pick(&self, count: usize) -> &'static str {
        self.candidates
            .iter()
            .find(|candidate| candidate.arity >= count)
            .or(self.candidates.last())
            .map_or(self.name, |candidate| candidate.function)
    }

    /// The C11 macro: `RSHMEM_ARG<max>` over the arguments and then the functions for
    /// `max`, ..., 1 arguments picks the function of the call's count.
    pub(crate) fn c11_macro(&self) -> String {
        let max = self.max_arity();
        let functions: Vec<&str> = (1..=max).rev().map(|count| self.pick(count)).collect();
        format!(
            "#define {}(...) RSHMEM_ARG{max}(__VA_ARGS__, {}, 0)(__VA_ARGS__)\n",
            self.name,
            functions.join(", ")
        )
    }

    /// The C++ overloads: one per function of another name, under the generic name.
    pub(crate) fn cxx_overloads(&self) -> String {
        self.candidates
            .iter()
            .filter(|candidate| candidate.function != self.name)
            .map(|candidate| {
                let declared = candidate.prototype.replace(candidate.function, self.name);
                forwarding_overload(&declared, candidate.function)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::spec::templates;
    use super::*;

    #[test]
    fn sync_is_picked_by_its_argument_count() {
        let names = arity_names(&templates());
        let sync = names.iter().find(|n| n.name == "shmem_sync").unwrap();
        assert_eq!(
            sync.c11_macro(),
            "#define shmem_sync(...) RSHMEM_ARG4(__VA_ARGS__, shmem_sync, shmem_sync, \
             shmem_sync, shmem_team_sync, 0)(__VA_ARGS__)\n"
        );
        assert_eq!(
            sync.cxx_overloads(),
            "static inline int shmem_sync(shmem_team_t team) { return shmem_team_sync(team); }\n"
        );
    }

    #[test]
    fn signal_updates_take_an_optional_context() {
        let names = arity_names(&templates());
        let add = names.iter().find(|n| n.name == "shmem_signal_add").unwrap();
        assert!(
            add.c11_macro()
                .contains("RSHMEM_ARG4(__VA_ARGS__, shmem_ctx_signal_add, shmem_signal_add,"),
            "{}",
            add.c11_macro()
        );
        assert!(
            add.cxx_overloads()
                .contains("shmem_signal_add(shmem_ctx_t ctx")
        );
    }
}
