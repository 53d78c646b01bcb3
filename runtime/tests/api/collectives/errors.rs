//! The errors of collectives: disagreeing PEs, bad roots, buffers and strides, destroyed
//! teams; each PE gets one, and the team stays usable.

use rshmem::ops::{Max, Sum};
use rshmem::{ShmemError, TeamConfig};

use super::{HGX8, Pe, run_on_machine};

/// Runs `body`, which checks the errors it meets, on every PE of `machine`; each PE returns
/// its last error, so the run shows every PE got one.
fn errors_on_every_pe(machine: (&str, u32), body: impl Fn(&Pe) -> ShmemError + Sync) {
    let (errors, _) = run_on_machine(machine, body);
    assert_eq!(errors.len(), machine.1 as usize);
}

#[test]
fn mismatched_lengths_fail_on_every_pe_and_leave_the_team_usable() {
    errors_on_every_pe(HGX8, |shmem| {
        let team = shmem.team_world();
        let words = shmem.malloc::<u64>(64).expect("malloc");
        let (source, dest) = (words.slice(..8).unwrap(), words.slice(32..).unwrap());
        let short = if shmem.my_pe() == 3 { 5 } else { 8 };
        let source_here = source.slice(..short).unwrap();
        for err in [
            shmem.broadcast(team, dest, source_here, 0).unwrap_err(),
            shmem.reduce(team, Sum, dest, source_here).unwrap_err(),
            shmem.fcollect(team, dest, source_here).unwrap_err(),
            shmem.sum_inscan(team, dest, source_here).unwrap_err(),
        ] {
            assert!(
                matches!(err, ShmemError::CollectiveMismatch { .. }),
                "{err}"
            );
            assert!(err.to_string().contains("PE 3: 5 elements"), "{err}");
        }
        // Disagreement on the operator or root is caught too.
        let op_err = if shmem.my_pe() == 0 {
            shmem.reduce(team, Max, dest.slice(..8).unwrap(), source)
        } else {
            shmem.reduce(team, Sum, dest.slice(..8).unwrap(), source)
        }
        .unwrap_err();
        assert!(
            matches!(op_err, ShmemError::CollectiveMismatch { .. }),
            "{op_err}"
        );
        let root = if shmem.my_pe() == 2 { 1 } else { 0 };
        let root_err = shmem.broadcast(team, dest, source, root).unwrap_err();
        assert!(
            matches!(root_err, ShmemError::CollectiveMismatch { .. }),
            "{root_err}"
        );
        // Nothing moved, no counter counts a stray arrival: the next call works.
        shmem
            .set_local(source, &[u64::from(shmem.my_pe()); 8])
            .unwrap();
        shmem
            .reduce(team, Sum, dest.slice(..8).unwrap(), source)
            .unwrap();
        assert_eq!(shmem.local(dest.slice(..8).unwrap()).unwrap(), [28; 8]);
        root_err
    });
}

#[test]
fn bad_roots_buffers_and_strides_are_typed_errors_on_every_pe() {
    errors_on_every_pe(HGX8, |shmem| {
        let world = shmem.team_world();
        let config = TeamConfig::default();
        let half = shmem
            .team_split_strided(world, 0, 2, 4, config)
            .expect("split");
        let words = shmem.malloc::<u64>(64).expect("malloc");
        let (source, dest) = (words.slice(..8).unwrap(), words.slice(32..).unwrap());

        let err = shmem.broadcast(world, dest, source, 8).unwrap_err();
        assert!(
            matches!(err, ShmemError::PeOutOfRange { pe: 8, .. }),
            "{err}"
        );
        if let Some(half) = &half {
            let err = shmem.broadcast(half, dest, source, 4).unwrap_err();
            assert!(
                matches!(err, ShmemError::PeNotInTeam { pe: 4, .. }),
                "{err}"
            );
        }
        // A root bad on one PE only: that PE says why, the others who refused.
        let root = if shmem.my_pe() == 5 { 9 } else { 0 };
        let err = shmem.broadcast(world, dest, source, root).unwrap_err();
        if shmem.my_pe() == 5 {
            assert!(
                matches!(err, ShmemError::PeOutOfRange { pe: 9, .. }),
                "{err}"
            );
        } else {
            assert!(
                matches!(err, ShmemError::CollectiveFailedOnPeer { .. })
                    && err.to_string().contains("team PE 5"),
                "{err}"
            );
        }

        let err = shmem
            .broadcast(world, dest.slice(..4).unwrap(), source, 0)
            .unwrap_err();
        assert!(
            matches!(
                err,
                ShmemError::CollectiveBufferTooSmall {
                    needed: 8,
                    len: 4,
                    ..
                }
            ),
            "{err}"
        );
        // collect learns the total only from the agreement, and refuses on every PE too.
        let err = shmem.collect(world, dest, source).unwrap_err();
        assert!(
            matches!(err, ShmemError::CollectiveBufferTooSmall { needed: 64, .. }),
            "{err}"
        );
        let err = shmem
            .reduce(world, Sum, words.slice(4..12).unwrap(), source)
            .unwrap_err();
        assert!(matches!(err, ShmemError::CollectiveOverlap { .. }), "{err}");
        assert!(err.to_string().contains("very same array"), "{err}");
        let err = shmem
            .alltoall(world, dest, source.slice(..7).unwrap())
            .unwrap_err();
        assert!(
            matches!(
                err,
                ShmemError::CollectiveUnevenBlocks {
                    len: 7,
                    n_pes: 8,
                    ..
                }
            ),
            "{err}"
        );
        let err = shmem
            .reduce_scatter(world, Sum, dest, words.slice(..9).unwrap())
            .unwrap_err();
        assert!(
            matches!(err, ShmemError::CollectiveUnevenBlocks { .. }),
            "{err}"
        );
        let err = shmem.alltoalls(world, dest, source, 0, 1, 1).unwrap_err();
        assert!(
            matches!(err, ShmemError::CollectiveZeroStride { .. }),
            "{err}"
        );
        let err = shmem.alltoalls(world, dest, source, 1, 2, 1).unwrap_err();
        assert!(
            matches!(
                err,
                ShmemError::CollectiveBufferTooSmall {
                    buffer: "source",
                    needed: 15,
                    ..
                }
            ),
            "{err}"
        );
        err
    });
}

#[test]
fn collectives_on_a_destroyed_team_fail_on_every_member() {
    errors_on_every_pe(HGX8, |shmem| {
        let world = shmem.team_world();
        let words = shmem.malloc::<u64>(16).expect("malloc");
        let (row, column) = shmem
            .team_split_2d(world, 4, TeamConfig::default(), TeamConfig::default())
            .expect("split_2d");
        shmem.team_destroy(&row).expect("destroy");
        let (source, dest) = (words.slice(..1).unwrap(), words.slice(8..).unwrap());
        let err = shmem.broadcast(&row, dest, source, 0).unwrap_err();
        assert!(matches!(err, ShmemError::TeamDestroyed { .. }), "{err}");
        let err = shmem.reduce(&row, Sum, dest, source).unwrap_err();
        assert!(matches!(err, ShmemError::TeamDestroyed { .. }), "{err}");
        // The column team is untouched.
        shmem
            .broadcast(&column, dest, source, 0)
            .expect("broadcast");
        err
    });
}
