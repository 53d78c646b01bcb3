//! The executor: one coroutine per PE, resumed when the world says so.

use std::cell::RefCell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::Rc;

use corosensei::{Coroutine, CoroutineResult, Yielder};
use hw::{LaunchError, Pe, PeFailure};

use crate::device::SimDevice;
use crate::handle::{PeHandle, Shared};

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
    let results: RefCell<Vec<Option<Result<R, PeFailure>>>> =
        RefCell::new((0..n_pes).map(|_| None).collect());
    let mut coroutines = Vec::with_capacity(n_pes as usize);
    for pe in 0..n_pes {
        let stack = crate::stacks::take(stack_bytes).map_err(|e| {
            LaunchError::Init(format!(
                "cannot allocate a {stack_bytes}-byte stack for PE {pe}: {e}"
            ))
        })?;
        let shared = Rc::clone(shared);
        let results = &results;
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
            results.borrow_mut()[pe as usize] = Some(outcome);
            failure
        };
        // SAFETY: the body borrows `pe_main` and `results`, which outlive `coroutines`: it is
        // declared after them, so it is dropped (and any unfinished coroutine unwound) first.
        let coroutine = unsafe { Coroutine::with_stack_unchecked(stack, body) };
        coroutines.push(coroutine);
    }
    let _run = crate::threads::enter_run(shared);
    loop {
        let next = shared.world.borrow_mut().next_pe();
        let Some(pe) = next else { break };
        shared.world.borrow_mut().running = Some(pe);
        let step = coroutines[pe as usize].resume(());
        let mut world = shared.world.borrow_mut();
        world.running = None;
        if let CoroutineResult::Return(failure) = step {
            world.finish(pe, failure);
        }
    }
    // A run that ended abnormally leaves handles of unfinished PEs, whose threads go first.
    for handle in shared
        .handles
        .borrow_mut()
        .iter_mut()
        .filter_map(Option::take)
    {
        handle.threads.abandon();
    }
    for coroutine in coroutines {
        // A finished coroutine's stack serves the next run; an unfinished one (a run that
        // ended abnormally) is unwound and freed by its drop.
        if coroutine.done() {
            crate::stacks::give_back(stack_bytes, coroutine.into_stack());
        }
    }
    let results = results.into_inner();
    Ok(results
        .into_iter()
        .enumerate()
        .map(|(pe, r)| {
            r.unwrap_or_else(|| {
                Err(PeFailure {
                    pe: Pe(pe as u32),
                    message: "never finished".to_string(),
                })
            })
        })
        .collect())
}
