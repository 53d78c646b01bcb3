//! Teams on the simulator: the predefined teams, splits, translation, team barriers, slot
//! reuse, and every error a caller can hit.

use crate::common::{config, run_all, run_ok};
use rshmem::{CtxOptions, ShmemError, TeamConfig};

#[test]
fn predefined_teams_follow_the_topology() {
    // One NVSwitch node: every team is the world.
    let seen = run_ok("hgx8", 8, |shmem| {
        [shmem.team_world(), shmem.team_shared(), shmem.team_node()]
            .map(|team| (team.my_pe().unwrap(), team.n_pes().unwrap()))
    });
    for (pe, sizes) in (0..).zip(seen) {
        assert_eq!(sizes, [(pe, 8); 3]);
    }
    // Two nodes on InfiniBand: node and shared are the PE's own 8 GPUs.
    let seen = run_ok("ib-2", 16, |shmem| {
        [shmem.team_world(), shmem.team_shared(), shmem.team_node()]
            .map(|team| (team.my_pe().unwrap(), team.n_pes().unwrap()))
    });
    for (pe, sizes) in (0..).zip(seen) {
        assert_eq!(sizes, [(pe, 16), (pe % 8, 8), (pe % 8, 8)]);
    }
}

#[test]
fn a_strided_split_numbers_its_members_and_translates() {
    let seen = run_ok("hgx8", 8, |shmem| {
        let world = shmem.team_world();
        let odd = shmem
            .team_split_strided(world, 1, 2, 4, TeamConfig::default())
            .unwrap();
        let Some(odd) = odd else {
            assert_eq!(shmem.my_pe() % 2, 0, "only even PEs are left out");
            return None;
        };
        let me = odd.my_pe().unwrap();
        let as_world = shmem.team_translate_pe(&odd, me, world).unwrap();
        let pe_6_in_odd = shmem.team_translate_pe(world, 6, &odd).unwrap();
        shmem.team_sync(&odd).unwrap();
        Some((me, odd.n_pes().unwrap(), as_world, pe_6_in_odd))
    });
    for (pe, got) in (0u32..).zip(seen) {
        let want = (pe % 2 == 1).then_some((pe / 2, 4, Some(pe), None));
        assert_eq!(got, want, "PE {pe}");
    }
}

#[test]
fn a_split_of_a_split_composes_strides() {
    let seen = run_ok("ib-2", 16, |shmem| {
        let evens = shmem
            .team_split_strided(shmem.team_world(), 0, 2, 8, TeamConfig::default())
            .unwrap();
        let evens = evens?;
        // Every other even PE: world PEs 2, 6, 10, 14.
        let quarter = shmem
            .team_split_strided(&evens, 1, 2, 4, TeamConfig::default())
            .unwrap()?;
        shmem.team_sync(&quarter).unwrap();
        let world = shmem
            .team_translate_pe(&quarter, quarter.my_pe().unwrap(), shmem.team_world())
            .unwrap();
        Some(world)
    });
    for (pe, got) in (0u32..).zip(seen) {
        let want = (pe % 4 == 2).then_some(Some(pe));
        assert_eq!(got, want, "PE {pe}");
    }
}

#[test]
fn split_2d_makes_rows_and_columns() {
    let seen = run_ok("hgx8", 8, |shmem| {
        let (row, column) = shmem
            .team_split_2d(
                shmem.team_world(),
                3,
                TeamConfig::default(),
                TeamConfig::default(),
            )
            .unwrap();
        shmem.team_sync(&row).unwrap();
        shmem.team_sync(&column).unwrap();
        (
            row.my_pe().unwrap(),
            row.n_pes().unwrap(),
            column.my_pe().unwrap(),
            column.n_pes().unwrap(),
        )
    });
    // Rows {0,1,2} {3,4,5} {6,7}; columns {0,3,6} {1,4,7} {2,5}.
    for (pe, got) in (0u32..).zip(seen) {
        let row_size = if pe >= 6 { 2 } else { 3 };
        let column_size = if pe % 3 == 2 { 2 } else { 3 };
        assert_eq!(got, (pe % 3, row_size, pe / 3, column_size), "PE {pe}");
    }
}

#[test]
fn a_team_barrier_completes_the_members_puts() {
    let seen = run_ok("ib-2", 16, |shmem| {
        let slots = shmem.calloc::<u64>(16).unwrap();
        let node = shmem.team_node();
        let me = node.my_pe().unwrap();
        // Every member writes its world PE into its slot on the node's first PE.
        let first = shmem
            .team_translate_pe(node, 0, shmem.team_world())
            .unwrap()
            .unwrap();
        shmem
            .p(
                slots.slice(me as usize..me as usize + 1).unwrap(),
                u64::from(shmem.my_pe()),
                first,
            )
            .unwrap();
        shmem.team_barrier(node).unwrap();
        (me == 0).then(|| shmem.local(slots).unwrap()[..8].to_vec())
    });
    assert_eq!(seen[0], Some((0..8).collect()));
    assert_eq!(seen[8], Some((8..16).collect()));
}

#[test]
fn destroyed_slots_are_reused_beyond_the_slot_count() {
    let seen = run_ok("hgx8", 4, |shmem| {
        for round in 0..40u32 {
            let start = round % 2;
            let team = shmem
                .team_split_strided(shmem.team_world(), start, 2, 2, TeamConfig::default())
                .unwrap();
            if let Some(team) = team {
                shmem.team_sync(&team).unwrap();
                shmem.team_sync(&team).unwrap();
                shmem.team_destroy(&team).unwrap();
            }
        }
        shmem.sync_all().unwrap();
    });
    assert_eq!(seen.len(), 4);
}

#[test]
fn bad_splits_fail_on_every_pe_and_name_the_fix() {
    let results = run_all("hgx8", 4, config(), |shmem| {
        let world = shmem.team_world();
        let past_end = shmem
            .team_split_strided(world, 1, 2, 3, TeamConfig::default())
            .unwrap_err();
        let empty = shmem
            .team_split_strided(world, 0, 1, 0, TeamConfig::default())
            .unwrap_err();
        // PE 3 disagrees about the stride.
        let stride = if shmem.my_pe() == 3 { 2 } else { 1 };
        let mismatch = shmem
            .team_split_strided(world, 0, stride, 2, TeamConfig::default())
            .unwrap_err();
        let zero_width = shmem
            .team_split_2d(world, 0, TeamConfig::default(), TeamConfig::default())
            .unwrap_err();
        [past_end, empty, mismatch, zero_width].map(|err| err.to_string())
    });
    for result in results {
        let [past_end, empty, mismatch, zero_width] = result.expect("every PE returns its errors");
        assert!(
            past_end.contains("reach parent PE 5") && past_end.contains("shrink"),
            "{past_end}"
        );
        assert!(empty.contains("size is 0"), "{empty}");
        assert!(
            mismatch.contains("team_split_strided arguments") && mismatch.contains("[3]"),
            "{mismatch}"
        );
        assert!(zero_width.contains("xrange is 0"), "{zero_width}");
    }
}

#[test]
fn running_out_of_team_slots_is_an_error_naming_the_variable() {
    let results = run_all("hgx8", 2, config().teams_max(4), |shmem| {
        let world = shmem.team_world();
        let first = shmem.team_split_strided(world, 0, 1, 2, TeamConfig::default());
        let second = shmem.team_split_strided(world, 0, 1, 2, TeamConfig::default());
        (first.map(|team| team.is_some()), second.map(|_| ()))
    });
    for result in results {
        let (first, second) = result.expect("the PE returns");
        assert!(first.unwrap(), "slot 3 is free");
        let err = second.unwrap_err();
        assert!(matches!(err, ShmemError::TeamsExhausted { max: 4 }));
        assert!(err.to_string().contains("RSHMEM_TEAMS_MAX"), "{err}");
    }
}

#[test]
fn destroyed_and_predefined_teams_are_refused() {
    let results = run_all("hgx8", 4, config(), |shmem| {
        let world_destroy = shmem.team_destroy(shmem.team_world()).unwrap_err();
        let pair = shmem
            .team_split_strided(shmem.team_world(), 0, 1, 4, TeamConfig::default())
            .unwrap()
            .expect("every PE is in it");
        let ctx = shmem.team_create_ctx(&pair, CtxOptions::default()).unwrap();
        let sym = shmem.malloc::<u64>(1).unwrap();
        let beyond = ctx.p(sym, 1, 4).unwrap_err();
        ctx.quiet().unwrap();
        shmem.team_destroy(&pair).unwrap();
        let after = [
            pair.my_pe().unwrap_err(),
            shmem.team_sync(&pair).unwrap_err(),
            ctx.p(sym, 1, 0).unwrap_err(),
            shmem.team_destroy(&pair).unwrap_err(),
        ];
        shmem.ctx_destroy(ctx).unwrap();
        (world_destroy, beyond, after)
    });
    for result in results {
        let (world_destroy, beyond, after) = result.expect("the PE returns");
        assert!(
            matches!(world_destroy, ShmemError::PredefinedTeam { .. }),
            "{world_destroy}"
        );
        assert!(
            matches!(
                beyond,
                ShmemError::PeNotInTeam {
                    pe: 4,
                    n_pes: 4,
                    ..
                }
            ),
            "{beyond}"
        );
        for err in after {
            assert!(matches!(err, ShmemError::TeamDestroyed { .. }), "{err}");
            assert!(err.to_string().contains("team_split"), "{err}");
        }
    }
}

#[test]
fn a_team_made_by_its_members_alone_works_and_leaves_its_scratch_zero() {
    // PEs 1 and 3 of 4 make their team while 0 and 2 do something else.
    let seen = run_ok("hgx8", 4, |shmem| {
        let scratch = shmem
            .calloc::<i64>(rshmem::TEAM_CREATE_SCRATCH_WORDS)
            .expect("calloc");
        let mine = if shmem.my_pe() % 2 == 1 {
            let team = shmem.team_create_strided(1, 2, 2, scratch).expect("create");
            shmem.team_sync(&team).expect("sync");
            let left: Vec<i64> = shmem.local(scratch).expect("local");
            Some((team.my_pe().unwrap(), team.n_pes().unwrap(), left))
        } else {
            None
        };
        shmem.barrier_all().expect("barrier");
        mine
    });
    assert_eq!(seen[1], Some((0, 2, vec![0; 3])));
    assert_eq!(seen[3], Some((1, 2, vec![0; 3])));
    assert_eq!(seen[0], None);
}
