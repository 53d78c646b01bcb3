//! Reductions, reduce_scatter and prefix sums against sequential references, every operator
//! on every team shape.

use rshmem::Team;
use rshmem::ops::{
    And, ArithElement, BitwiseElement, Complex64, Max, Min, Or, OrderedElement, Prod, ReduceOp,
    Sum, Xor,
};

use super::{Pe, Sample, Scratch, call_id, compare, me_and_n, mix, on_every_team, values};

/// The sequential reduction of every member's `values(call, member, len)` with `Op`.
fn reduced<T: Sample, Op: ReduceOp<T>>(call: u64, n: u32, len: usize) -> Vec<T> {
    let mut acc = values::<T>(call, 0, len);
    for member in 1..n {
        for (a, b) in acc.iter_mut().zip(values::<T>(call, member, len)) {
            *a = Op::combine(*a, b);
        }
    }
    acc
}

/// Reduces `len` random elements with `op`, in place or not, and compares.
fn check_reduce<T: Sample, Op: ReduceOp<T>>(
    shmem: &Pe,
    scratch: &Scratch,
    team: &Team,
    op: Op,
    len: usize,
    in_place: bool,
) -> Option<String> {
    let (me, n) = me_and_n(team);
    let call = call_id(&[4, len as u64, in_place.into()]) ^ mix(Op::NAME.len() as u64);
    let (source, dest) = scratch.views::<T>(len, len);
    let dest = if in_place { source } else { dest };
    shmem
        .set_local(source, &values(call, me, len))
        .expect("set_local");
    shmem.reduce(team, op, dest, source).expect("reduce");
    let what = format!(
        "{} of {len} {}{}, team PE {me}",
        Op::NAME,
        std::any::type_name::<T>(),
        if in_place { " in place" } else { "" }
    );
    compare(
        &what,
        &shmem.local(dest).expect("local"),
        &reduced::<T, Op>(call, n, len),
    )
}

/// Every operator on integer type `T`.
fn every_operator<T: Sample + BitwiseElement + OrderedElement + ArithElement>(
    shmem: &Pe,
    scratch: &Scratch,
    team: &Team,
    len: usize,
) -> Vec<String> {
    [
        check_reduce::<T, _>(shmem, scratch, team, And, len, false),
        check_reduce::<T, _>(shmem, scratch, team, Or, len, false),
        check_reduce::<T, _>(shmem, scratch, team, Xor, len, false),
        check_reduce::<T, _>(shmem, scratch, team, Max, len, false),
        check_reduce::<T, _>(shmem, scratch, team, Min, len, false),
        check_reduce::<T, _>(shmem, scratch, team, Sum, len, false),
        check_reduce::<T, _>(shmem, scratch, team, Prod, len, false),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The operators of float type `T`.
fn float_operators<T: Sample + OrderedElement + ArithElement>(
    shmem: &Pe,
    scratch: &Scratch,
    team: &Team,
    len: usize,
) -> Vec<String> {
    [
        check_reduce::<T, _>(shmem, scratch, team, Max, len, false),
        check_reduce::<T, _>(shmem, scratch, team, Min, len, false),
        check_reduce::<T, _>(shmem, scratch, team, Sum, len, false),
        check_reduce::<T, _>(shmem, scratch, team, Prod, len, true),
    ]
    .into_iter()
    .flatten()
    .collect()
}

#[test]
fn every_reduction_operator_matches_on_every_team() {
    on_every_team(|shmem, scratch, team| {
        let mut failures = every_operator::<u8>(shmem, scratch, team, 5);
        failures.extend(every_operator::<i16>(shmem, scratch, team, 9));
        failures.extend(every_operator::<i32>(shmem, scratch, team, 1));
        failures.extend(every_operator::<u64>(shmem, scratch, team, 17));
        failures.extend(float_operators::<f32>(shmem, scratch, team, 6));
        failures.extend(float_operators::<f64>(shmem, scratch, team, 11));
        failures.extend(check_reduce::<u32, _>(shmem, scratch, team, Sum, 0, false));
        failures.extend(check_reduce::<Complex64, _>(
            shmem, scratch, team, Sum, 4, false,
        ));
        failures.extend(check_reduce::<Complex64, _>(
            shmem, scratch, team, Prod, 4, true,
        ));
        failures
    });
}

#[test]
fn large_reductions_split_the_work_and_match_on_every_team() {
    on_every_team(|shmem, scratch, team| {
        // 100 000 f64 (800 KB) takes two-shot on a node and the ring across nodes.
        [
            check_reduce::<f64, _>(shmem, scratch, team, Sum, 100_000, false),
            check_reduce::<f64, _>(shmem, scratch, team, Max, 100_000, true),
            check_reduce::<i64, _>(shmem, scratch, team, Xor, 30_001, false),
        ]
        .into_iter()
        .flatten()
        .collect()
    });
}

/// Reduce-scatters `block` elements per member with `Op` and compares.
fn check_reduce_scatter<T: Sample, Op: ReduceOp<T>>(
    shmem: &Pe,
    scratch: &Scratch,
    team: &Team,
    op: Op,
    block: usize,
) -> Option<String> {
    let (me, n) = me_and_n(team);
    let call = call_id(&[5, block as u64]) ^ mix(Op::NAME.len() as u64);
    let (source, dest) = scratch.views::<T>(block * n as usize, block);
    shmem
        .set_local(source, &values(call, me, source.len()))
        .expect("set_local");
    shmem
        .reduce_scatter(team, op, dest, source)
        .expect("reduce_scatter");
    let all = reduced::<T, Op>(call, n, source.len());
    let mine = &all[me as usize * block..(me as usize + 1) * block];
    let what = format!("{} of {block} per PE, team PE {me}", Op::NAME);
    compare(&what, &shmem.local(dest).expect("local"), mine)
}

#[test]
fn reduce_scatter_leaves_each_member_its_block_on_every_team() {
    on_every_team(|shmem, scratch, team| {
        [
            check_reduce_scatter::<u32, _>(shmem, scratch, team, Sum, 0),
            check_reduce_scatter::<u32, _>(shmem, scratch, team, Sum, 3),
            check_reduce_scatter::<i64, _>(shmem, scratch, team, Min, 5),
            check_reduce_scatter::<u8, _>(shmem, scratch, team, Or, 2),
            check_reduce_scatter::<f64, _>(shmem, scratch, team, Sum, 8_000),
        ]
        .into_iter()
        .flatten()
        .collect()
    });
}

/// An inclusive or exclusive prefix sum of `len` elements, in place or not.
fn check_scan<T: Sample + ArithElement>(
    shmem: &Pe,
    scratch: &Scratch,
    team: &Team,
    inclusive: bool,
    len: usize,
    in_place: bool,
) -> Option<String> {
    let (me, _) = me_and_n(team);
    let call = call_id(&[6, len as u64, inclusive.into(), in_place.into()]);
    let (source, dest) = scratch.views::<T>(len, len);
    let dest = if in_place { source } else { dest };
    shmem
        .set_local(source, &values(call, me, len))
        .expect("set_local");
    if inclusive {
        shmem.sum_inscan(team, dest, source)
    } else {
        shmem.sum_exscan(team, dest, source)
    }
    .expect("scan");
    let upto = if inclusive { me + 1 } else { me };
    let mut want = vec![T::zeroed(); len];
    for member in 0..upto {
        for (w, v) in want.iter_mut().zip(values::<T>(call, member, len)) {
            *w = T::sum(*w, v);
        }
    }
    let kind = if inclusive { "inscan" } else { "exscan" };
    let what = format!("{kind} of {len}, team PE {me}");
    compare(&what, &shmem.local(dest).expect("local"), &want)
}

#[test]
fn prefix_sums_match_on_every_team() {
    on_every_team(|shmem, scratch, team| {
        let mut failures = Vec::new();
        for inclusive in [true, false] {
            failures.extend(check_scan::<i64>(shmem, scratch, team, inclusive, 7, false));
            failures.extend(check_scan::<u8>(shmem, scratch, team, inclusive, 3, true));
            // 40 000 f64 (320 KB) runs the chain in pieces on both machines.
            failures.extend(check_scan::<f64>(
                shmem, scratch, team, inclusive, 40_000, inclusive,
            ));
        }
        failures
    });
}
