//! Many independent simulations on every core, with results in their input order: what the
//! commands that make many runs (`rshmem swarm`, `rshmem litmus`) share. Each simulation is
//! deterministic and touches nothing of another's, so the threads change only how long the
//! whole takes, never a result or the order it is reported in.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The threads to use: `jobs` if given (at least one), else one per CPU.
pub(crate) fn threads(jobs: Option<usize>) -> usize {
    jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
        .max(1)
}

/// `run` on every item, on `threads` threads taking the items in order; `done` is told of
/// each result as it comes (a progress bar). The results are in the items' order.
pub(crate) fn run_in_order<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    run: impl Fn(&T) -> R + Sync,
    done: impl Fn(&T, &R) + Sync,
) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new(items.iter().map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..threads.min(items.len()).max(1) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    let result = run(item);
                    done(item, &result);
                    results.lock().expect("no run panics holding the lock")[i] = Some(result);
                }
            });
        }
    });
    results
        .into_inner()
        .expect("no run panics holding the lock")
        .into_iter()
        .map(|r| r.expect("every item ran"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::run_in_order;

    #[test]
    fn results_keep_the_input_order_on_any_number_of_threads() {
        let items: Vec<u64> = (0..100).collect();
        for threads in [1, 2, 7] {
            let squares = run_in_order(&items, threads, |&i| i * i, |_, _| {});
            assert_eq!(squares, items.iter().map(|i| i * i).collect::<Vec<_>>());
        }
        assert!(run_in_order(&[] as &[u64], 2, |&i| i, |_, _| {}).is_empty());
    }
}
