//! The executor: one coroutine per PE, resumed when the world says so.

use std::cell::RefCell;
use std::marker::PhantomData;
use std::ops::Range;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::Rc;

use corosensei::{Coroutine, CoroutineResult, Yielder};
use hw::{LaunchError, Pe, PeFailure};

use crate::device::SimDevice;
use crate::handle::{PeHandle, Shared};
use crate::stacks::LazyStack;

/// The message of a caught panic.
pub(crate) fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with a non-string payload".to_string()
    }
}

/// Runs `pe_main` once per PE as coroutines on this thread until every PE has returned.
pub(crate) fn run_pes<R, F>(
    shared: &Rc<Shared>,
    stack_bytes: usize,
    pe_main: &F,
) -> Result<Vec<Result<R, PeFailure>>, LaunchError>
where
    F: Fn(SimDevice) -> R,
{
    let n_pes = shared.world.borrow().n_pes;
    let mut pes = PeTasks::spawn(shared, stack_bytes, pe_main, 0..n_pes)?;
    pes.run();
    Ok(pes.finish())
}

/// Each PE's result once its program returned, shared with the coroutines that write them.
type Results<R> = Rc<RefCell<Vec<Option<Result<R, PeFailure>>>>>;

/// The coroutines of some PEs of one world (all of them, or one partition's), with their
/// results as they return. Borrows the PEs' program for `'a`.
pub(crate) struct PeTasks<'a, R> {
    shared: Rc<Shared>,
    stack_bytes: usize,
    first_pe: u32,
    /// `first_pe + i`'s coroutine at `i`. Declared before `results`, so dropped (and any
    /// unfinished one unwound) before the results its body writes.
    coroutines: Vec<Coroutine<(), (), Option<String>, LazyStack>>,
    results: Results<R>,
    program: PhantomData<&'a ()>,
}

impl<'a, R> PeTasks<'a, R> {
    /// A coroutine of `pe_main` for each PE of `pes`, none started yet.
    pub(crate) fn spawn<F>(
        shared: &Rc<Shared>,
        stack_bytes: usize,
        pe_main: &'a F,
        pes: Range<u32>,
    ) -> Result<Self, LaunchError>
    where
        F: Fn(SimDevice) -> R,
    {
        let first_pe = pes.start;
        let results: Results<R> = Rc::new(RefCell::new(pes.clone().map(|_| None).collect()));
        let mut coroutines = Vec::with_capacity(pes.len());
        for pe in pes {
            let stack = crate::stacks::take(stack_bytes).map_err(|e| {
                LaunchError::Init(format!(
                    "cannot allocate a {stack_bytes}-byte stack for PE {pe}: {e}"
                ))
            })?;
            let shared = Rc::clone(shared);
            let results = Rc::clone(&results);
            let stack_range = crate::threads::range_of(&stack);
            let body = move |yielder: &Yielder<(), ()>, ()| -> Option<String> {
                let handle = PeHandle::new(Rc::clone(&shared), pe, yielder);
                handle.threads.set_first_stack(stack_range);
                shared.handles.borrow_mut()[pe as usize] = Some(handle.clone());
                let device = SimDevice::new(handle);
                let outcome = catch_unwind(AssertUnwindSafe(|| pe_main(device)));
                // Threads the program left running end with its first thread, as a process's
                // threads end at its exit.
                if let Some(handle) = shared.handles.borrow_mut()[pe as usize].take() {
                    handle.threads.abandon();
                }
                let outcome = outcome.map_err(|p| PeFailure {
                    pe: Pe(pe),
                    message: panic_message(p),
                });
                let failure = outcome.as_ref().err().map(|f| f.message.clone());
                results.borrow_mut()[(pe - first_pe) as usize] = Some(outcome);
                failure
            };
            // SAFETY: the body borrows `pe_main` for `'a`, which `PeTasks<'a, _>` cannot
            // outlive, and every coroutine is finished or unwound when `PeTasks` drops.
            let coroutine = unsafe { Coroutine::with_stack_unchecked(stack, body) };
            coroutines.push(coroutine);
        }
        Ok(PeTasks {
            shared: Rc::clone(shared),
            stack_bytes,
            first_pe,
            coroutines,
            results,
            program: PhantomData,
        })
    }

    /// Resumes PEs as the world says until it has none to resume: the run is over, or, for a
    /// partition of a parallel run, its window is (`crate::parallel`).
    pub(crate) fn run(&mut self) {
        let shared = &self.shared;
        let _run = crate::threads::enter_run(shared);
        loop {
            let next = shared.world.borrow_mut().next_pe();
            let Some(pe) = next else { break };
            shared.world.borrow_mut().running = Some(pe);
            let step = self.coroutines[(pe - self.first_pe) as usize].resume(());
            let mut world = shared.world.borrow_mut();
            world.running = None;
            if let CoroutineResult::Return(failure) = step {
                world.finish(pe, failure);
            }
        }
    }

    /// Each PE's result, in PE order; a PE that never returned failed.
    pub(crate) fn finish(self) -> Vec<Result<R, PeFailure>> {
        // A run that ended abnormally leaves handles of unfinished PEs, whose threads go first.
        for handle in self
            .shared
            .handles
            .borrow_mut()
            .iter_mut()
            .filter_map(Option::take)
        {
            handle.threads.abandon();
        }
        for coroutine in self.coroutines {
            // A finished coroutine's stack serves the next run; an unfinished one (a run that
            // ended abnormally) is unwound and freed by its drop.
            if coroutine.done() {
                crate::stacks::give_back(self.stack_bytes, coroutine.into_stack());
            }
        }
        let first_pe = self.first_pe;
        let results = std::mem::take(&mut *self.results.borrow_mut());
        results
            .into_iter()
            .zip(first_pe..)
            .map(|(r, pe)| {
                r.unwrap_or_else(|| {
                    Err(PeFailure {
                        pe: Pe(pe),
                        message: "never finished".to_string(),
                    })
                })
            })
            .collect()
    }
}
