//! What each rank of a launched run was doing, for the report when `--timeout-s` passes: the
//! ranks' libraries publish the call they are in (`hw::bootstrap::RankStatus`), and the
//! launcher, which looks at its children every few milliseconds anyway, notes when each
//! rank's call count last moved, which says since when the rank has been where it is.

use std::path::Path;
use std::time::{Duration, Instant};

use hw::bootstrap::{RankActivity, StatusReader};

/// One rank's page and what the launcher saw of it.
struct Watched {
    reader: StatusReader,
    /// The last activity read, and when it last changed.
    last: Option<(RankActivity, Instant)>,
}

/// The launcher's view of every rank's activity.
pub(crate) struct RankActivities {
    ranks: Vec<Watched>,
}

impl RankActivities {
    /// Readers of the pages of `n_ranks` ranks in the run's directory `dir`.
    pub(crate) fn new(dir: &Path, n_ranks: u32) -> RankActivities {
        RankActivities {
            ranks: (0..n_ranks)
                .map(|rank| Watched {
                    reader: StatusReader::new(dir, rank),
                    last: None,
                })
                .collect(),
        }
    }

    /// Reads every page, noting `now` for the ranks whose activity changed.
    pub(crate) fn poll(&mut self, now: Instant) {
        for watched in &mut self.ranks {
            let Some(activity) = watched.reader.read() else {
                continue;
            };
            if watched
                .last
                .as_ref()
                .is_none_or(|(last, _)| *last != activity)
            {
                watched.last = Some((activity, now));
            }
        }
    }

    /// What `rank` was doing at `now`, in a user's words.
    pub(crate) fn describe(&self, rank: u32, now: Instant) -> String {
        let Some(watched) = self.ranks.get(rank as usize) else {
            return String::new();
        };
        match &watched.last {
            None => "it had not started rshmem (no shmem_init or nvshmem_init seen)".to_string(),
            Some((activity, since)) => describe_activity(activity, now.duration_since(*since)),
        }
    }
}

/// `activity`, unchanged for `unchanged`, in a user's words.
fn describe_activity(activity: &RankActivity, unchanged: Duration) -> String {
    let seconds = unchanged.as_secs_f64();
    let call = &activity.call;
    match (activity.in_call, call.as_str()) {
        (true, "shmem_init" | "shmem_init_thread") => {
            format!("it was in {call} (start-up) for the last {seconds:.1} s")
        }
        (true, _) => format!(
            "past start-up, it was in {call} (call {} of its library) for the last {seconds:.1} s",
            activity.calls
        ),
        (false, _) => format!(
            "past start-up, it was running its own code: its last call of the library, {call}, \
             returned {seconds:.1} s before"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn activity(in_call: bool, call: &str) -> RankActivity {
        RankActivity {
            calls: 12,
            in_call,
            call: call.into(),
        }
    }

    #[test]
    fn activities_read_as_where_the_rank_was_and_since_when() {
        let long = Duration::from_millis(38_250);
        assert_eq!(
            describe_activity(&activity(true, "shmem_barrier_all"), long),
            "past start-up, it was in shmem_barrier_all (call 12 of its library) for the last \
             38.2 s"
        );
        assert_eq!(
            describe_activity(&activity(false, "shmem_putmem"), long),
            "past start-up, it was running its own code: its last call of the library, \
             shmem_putmem, returned 38.2 s before"
        );
        assert_eq!(
            describe_activity(&activity(true, "shmem_init"), long),
            "it was in shmem_init (start-up) for the last 38.2 s"
        );
    }
}
