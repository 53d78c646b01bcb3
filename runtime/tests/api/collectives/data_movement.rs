//! Broadcast, collect, fcollect, alltoall and alltoalls against sequential references on every
//! team shape, and what simulated time says of a broadcast within and across nodes.

use rshmem::{Team, TeamConfig};

use super::{
    HGX8, IB2, Pe, Scratch, call_id, compare, me_and_n, on_every_team, run_on_machine, values,
};

#[test]
fn broadcast_matches_the_root_on_every_team() {
    on_every_team(|shmem, scratch, team| {
        let (me, n) = me_and_n(team);
        let mut failures = Vec::new();
        for len in [0, 1, 7, 24_000] {
            for root in [0, n - 1, n / 2] {
                let call = call_id(&[1, len as u64, root.into()]);
                let (source, dest) = scratch.views::<u64>(len, len + 3);
                shmem
                    .set_local(source, &values(call, me, len))
                    .expect("set_local");
                let before: Vec<u64> = values(call ^ 1, me, 3);
                shmem
                    .set_local(dest.slice(len..).expect("tail"), &before)
                    .expect("set_local");
                shmem
                    .broadcast(team, dest, source, root)
                    .expect("broadcast");
                let mut want = values::<u64>(call, root, len);
                want.extend(before);
                let what = format!("{len} elements from root {root}, team PE {me}");
                failures.extend(compare(&what, &shmem.local(dest).expect("local"), &want));
            }
        }
        failures
    });
}

/// collect (`fixed` false, lengths differ between members, some zero) or fcollect.
fn check_collect(shmem: &Pe, scratch: &Scratch, team: &Team, fixed: bool) -> Vec<String> {
    let (me, n) = me_and_n(team);
    let mut failures = Vec::new();
    for size in [0, 3, 10_000] {
        let len_of = |member: u32| {
            if fixed {
                size
            } else {
                size + (member as usize * 7 + size) % 5
            }
        };
        let call = call_id(&[2, size as u64, fixed.into()]);
        let total: usize = (0..n).map(len_of).sum();
        let (source, dest) = scratch.views::<u32>(len_of(me), total);
        shmem
            .set_local(source, &values(call, me, len_of(me)))
            .expect("set_local");
        if fixed {
            shmem.fcollect(team, dest, source).expect("fcollect");
        } else {
            shmem.collect(team, dest, source).expect("collect");
        }
        let want: Vec<u32> = (0..n)
            .flat_map(|member| values::<u32>(call, member, len_of(member)))
            .collect();
        let what = format!("blocks of about {size}, team PE {me}");
        failures.extend(compare(&what, &shmem.local(dest).expect("local"), &want));
    }
    failures
}

#[test]
fn collect_concatenates_blocks_of_every_length_on_every_team() {
    on_every_team(|shmem, scratch, team| check_collect(shmem, scratch, team, false));
}

#[test]
fn fcollect_concatenates_equal_blocks_on_every_team() {
    on_every_team(|shmem, scratch, team| check_collect(shmem, scratch, team, true));
}

/// What member `receiver` finds in dest after an alltoalls of `nelems` with the strides, where
/// dest held `before`.
fn alltoalls_reference(
    call: u64,
    receiver: u32,
    n: u32,
    (dst, src, nelems): (usize, usize, usize),
    before: &[i32],
) -> Vec<i32> {
    let mut want = before.to_vec();
    for sender in 0..n {
        let source: Vec<i32> = values(call, sender, before_len(n, src, nelems));
        for k in 0..nelems {
            let from = (receiver as usize * nelems + k) * src;
            want[(sender as usize * nelems + k) * dst] = source[from];
        }
    }
    want
}

/// The elements a strided buffer of `n` blocks of `nelems` spans.
fn before_len(n: u32, stride: usize, nelems: usize) -> usize {
    (n as usize * nelems).saturating_sub(1) * stride + usize::from(n as usize * nelems > 0)
}

fn check_alltoalls(shmem: &Pe, scratch: &Scratch, team: &Team, strided: bool) -> Vec<String> {
    let (me, n) = me_and_n(team);
    let shapes: &[(usize, usize, usize)] = if strided {
        &[(2, 3, 4), (1, 2, 5), (3, 1, 1), (2, 2, 0)]
    } else {
        &[(1, 1, 0), (1, 1, 2), (1, 1, 3_000)]
    };
    let mut failures = Vec::new();
    for &(dst, src, nelems) in shapes {
        let call = call_id(&[3, dst as u64, src as u64, nelems as u64]);
        let (source, dest) =
            scratch.views::<i32>(before_len(n, src, nelems), before_len(n, dst, nelems));
        shmem
            .set_local(source, &values(call, me, source.len()))
            .expect("set_local");
        let before: Vec<i32> = values(call ^ 1, me, dest.len());
        shmem.set_local(dest, &before).expect("set_local");
        if strided {
            shmem.alltoalls(team, dest, source, dst, src, nelems)
        } else {
            shmem.alltoall(team, dest, source)
        }
        .expect("alltoall");
        let want = alltoalls_reference(call, me, n, (dst, src, nelems), &before);
        let what = format!("strides {dst}/{src}, {nelems} per block, team PE {me}");
        failures.extend(compare(&what, &shmem.local(dest).expect("local"), &want));
    }
    failures
}

#[test]
fn alltoall_exchanges_blocks_on_every_team() {
    on_every_team(|shmem, scratch, team| check_alltoalls(shmem, scratch, team, false));
}

#[test]
fn alltoalls_exchanges_strided_blocks_on_every_team() {
    on_every_team(|shmem, scratch, team| check_alltoalls(shmem, scratch, team, true));
}

/// OpenSHMEM forbids no overlap of dest and source for these: in place, the very same array.
#[test]
fn broadcast_fcollect_and_alltoall_work_in_place_on_every_team() {
    on_every_team(|shmem, scratch, team| {
        let (me, n) = me_and_n(team);
        let len = 5;
        let (buffer, _) = scratch.views::<u64>(len * n as usize, 0);
        let mut failures = Vec::new();
        let call = call_id(&[4, len as u64]);
        let root = n - 1;
        let mine = buffer.slice(..len).expect("first block");
        shmem
            .set_local(mine, &values(call, me, len))
            .expect("set_local");
        shmem.broadcast(team, mine, mine, root).expect("broadcast");
        let what = format!("broadcast in place from {root}, team PE {me}");
        failures.extend(compare(
            &what,
            &shmem.local(mine).expect("local"),
            &values::<u64>(call, root, len),
        ));
        // fcollect whose source is the first block of its dest, on every member alike.
        let first = buffer.slice(..len).expect("first block");
        shmem
            .set_local(first, &values(call ^ 1, me, len))
            .expect("set_local");
        shmem
            .fcollect(team, buffer, first)
            .expect("fcollect in place");
        let want: Vec<u64> = (0..n).flat_map(|m| values(call ^ 1, m, len)).collect();
        let what = format!("fcollect in place, team PE {me}");
        failures.extend(compare(&what, &shmem.local(buffer).expect("local"), &want));
        // alltoall with source == dest: block j goes to member j's block me.
        let sent: Vec<u64> = (0..n)
            .flat_map(|to| values(call ^ (2 + u64::from(to)), me, len))
            .collect();
        shmem.set_local(buffer, &sent).expect("set_local");
        shmem
            .alltoall(team, buffer, buffer)
            .expect("alltoall in place");
        let want: Vec<u64> = (0..n)
            .flat_map(|from| values(call ^ (2 + u64::from(me)), from, len))
            .collect();
        let what = format!("alltoall in place, team PE {me}");
        failures.extend(compare(&what, &shmem.local(buffer).expect("local"), &want));
        failures
    });
}

#[test]
fn a_broadcast_within_a_node_takes_less_simulated_time_than_across_nodes() {
    // The same 64 KiB broadcast over 8 PEs: on one node (NVLink) and spread over two nodes
    // (InfiniBand between them). Simulated time must show NVLink's edge.
    let timed = |machine: (&str, u32)| {
        let (times, _) = run_on_machine(machine, |shmem| {
            let world = shmem.team_world();
            let team = if shmem.n_pes() == 8 {
                Some(world.clone())
            } else {
                shmem
                    .team_split_strided(world, 4, 1, 8, TeamConfig::default())
                    .expect("split")
            };
            let buffer = shmem.malloc::<u8>(64 << 10).expect("malloc");
            let dest = shmem.malloc::<u8>(64 << 10).expect("malloc");
            shmem.barrier_all().expect("barrier");
            team.map(|team| {
                let start = shmem.now_ns();
                shmem.broadcast(&team, dest, buffer, 0).expect("broadcast");
                (start, shmem.now_ns())
            })
        });
        let times: Vec<(u64, u64)> = times.into_iter().flatten().collect();
        let start = times.iter().map(|t| t.0).min().expect("a member");
        times.iter().map(|t| t.1).max().expect("a member") - start
    };
    let (node_ns, cross_ns) = (timed(HGX8), timed(IB2));
    println!("64 KiB broadcast over 8 PEs: {node_ns} ns on one node, {cross_ns} ns across two");
    assert!(node_ns * 2 < cross_ns, "{node_ns} ns vs {cross_ns} ns");
}

#[test]
fn collect_unsized_fills_the_total_the_members_bring() {
    let seen = crate::common::run_ok("hgx8", 3, |shmem| {
        let me = shmem.my_pe();
        let whole = shmem.malloc::<u32>(3).expect("malloc");
        let source = whole.slice(..me as usize + 1).expect("slice");
        let dest = shmem.calloc::<u32>(6).expect("calloc");
        shmem
            .put(source, &vec![me; me as usize + 1], me)
            .expect("put");
        shmem.quiet().expect("quiet");
        shmem
            .collect_unsized(shmem.team_world(), dest.addr(), source)
            .expect("collect");
        shmem.local(dest).expect("local")
    });
    for dest in seen {
        assert_eq!(dest, [0, 1, 1, 2, 2, 2]);
    }
}
