//! The conformance bodies. Each checks one promise of docs/ordering.md on every PE.

use hw::Backend;
use rshmem::ops::Sum;
use rshmem::{Cmp, MemKind, Shmem, SignalOp, TeamConfig};

use crate::BodyError;

/// A check that did not hold, as an error the harness reports with the seed.
fn violated(what: String) -> BodyError {
    BodyError::Violated(what)
}

/// Each PE puts to the next, quiet, barrier: every PE holds its left neighbour's value
/// (R2 quiet + R4 barrier make a completed put visible).
pub fn ring<B: Backend>(sh: &Shmem<B>) -> Result<(), BodyError> {
    let (me, n) = (sh.my_pe(), sh.n_pes());
    let slot = sh.calloc::<u64>(4)?;
    sh.put(slot, &[u64::from(me); 4], (me + 1) % n)?;
    sh.quiet()?;
    sh.barrier_all()?;
    let got = sh.local(slot)?;
    let left = u64::from((me + n - 1) % n);
    sh.free(slot)?;
    if got != [left; 4] {
        return Err(violated(format!(
            "PE {me} holds {got:?}, expected its left neighbour's {left}"
        )));
    }
    Ok(())
}

/// PE 0 sends data then sets a flag with a fence between; every other PE waits on its flag
/// and must then see the data (R1 fence, R3 wait_until).
pub fn fenced_message_passing<B: Backend>(sh: &Shmem<B>) -> Result<(), BodyError> {
    let (me, n) = (sh.my_pe(), sh.n_pes());
    let data = sh.calloc::<u64>(8)?;
    let flag = sh.calloc::<u64>(1)?;
    if me == 0 {
        for pe in 1..n {
            sh.put(data, &[u64::from(pe) * 10; 8], pe)?;
            sh.fence()?;
            sh.atomic_set(flag, 1, pe)?;
        }
        sh.quiet()?;
    } else {
        sh.wait_until(flag, Cmp::Eq, 1)?;
        let got = sh.local(data)?;
        if got != [u64::from(me) * 10; 8] {
            return Err(violated(format!("PE {me} saw the flag but data {got:?}")));
        }
    }
    sh.barrier_all()?;
    sh.free(flag)?;
    sh.free(data)?;
    Ok(())
}

/// Put-with-signal: once the signal is seen, that put's data is delivered (R5).
pub fn signal_message_passing<B: Backend>(sh: &Shmem<B>) -> Result<(), BodyError> {
    let (me, n) = (sh.my_pe(), sh.n_pes());
    let data = sh.calloc::<u32>(64)?;
    let signal = sh.calloc::<u64>(1)?;
    let to = (me + 1) % n;
    let payload: Vec<u32> = (0..64).map(|i| me * 1000 + i).collect();
    sh.put_signal(data, &payload, signal, 1, SignalOp::Add, to)?;
    sh.signal_wait_until(signal, Cmp::Ge, 1)?;
    let from = (me + n - 1) % n;
    let got = sh.local(data)?;
    sh.barrier_all()?;
    sh.free(signal)?;
    sh.free(data)?;
    if got
        .iter()
        .enumerate()
        .any(|(i, &v)| v != from * 1000 + i as u32)
    {
        return Err(violated(format!(
            "PE {me} saw the signal before PE {from}'s data"
        )));
    }
    Ok(())
}

/// Every PE adds to one counter on PE 0 with fetch_add: the fetched values are distinct and
/// the final count is exact (R6 atomicity).
pub fn fetch_add_counter<B: Backend>(sh: &Shmem<B>) -> Result<(), BodyError> {
    let (me, n) = (sh.my_pe(), sh.n_pes());
    let counter = sh.calloc::<u64>(1)?;
    let seen = sh.calloc::<u64>(n as usize * 4)?;
    let mut mine = Vec::new();
    for _ in 0..4 {
        mine.push(sh.atomic_fetch_add(counter, 1, 0)?);
    }
    sh.put(seen.slice(me as usize * 4..me as usize * 4 + 4)?, &mine, 0)?;
    sh.barrier_all()?;
    let mut result = Ok(());
    if me == 0 {
        let mut all = sh.local(seen)?;
        all.sort_unstable();
        let total = sh.local(counter)?[0];
        if all != (0..u64::from(n) * 4).collect::<Vec<_>>() || total != u64::from(n) * 4 {
            result = Err(violated(format!("fetched {all:?}, counter {total}")));
        }
    }
    sh.barrier_all()?;
    sh.free(seen)?;
    sh.free(counter)?;
    result
}

/// Gets see every put completed before a barrier, on any path (R4, R8 with the owner's
/// consistency step at the barrier).
pub fn get_after_barrier<B: Backend>(sh: &Shmem<B>) -> Result<(), BodyError> {
    let (me, n) = (sh.my_pe(), sh.n_pes());
    let cell = sh.malloc::<i64>(16)?;
    sh.set_local(cell, &[-i64::from(me); 16])?;
    sh.barrier_all()?;
    for pe in 0..n {
        let got = sh.get(cell, pe)?;
        let one = sh.g(cell.at(15)?, pe)?;
        if got != [-i64::from(pe); 16] || one != -i64::from(pe) {
            return Err(violated(format!(
                "PE {me} read {got:?} / {one} from PE {pe}"
            )));
        }
    }
    sh.barrier_all()?;
    sh.free(cell)?;
    Ok(())
}

/// Every other PE sets its flag on PE 0, which waits for any of them and then for all:
/// wait_until_any returns a flag that is set, and each flag is set once wait_until_all
/// returns (R3 on many words; the backend's `wait_until_any` blocks on them all at once).
pub fn wait_on_many_words<B: Backend>(sh: &Shmem<B>) -> Result<(), BodyError> {
    let (me, n) = (sh.my_pe(), sh.n_pes());
    let flags = sh.calloc::<u64>(n as usize)?;
    let mut result = Ok(());
    if me == 0 {
        // PE 0 has no flag of its own to wait for.
        let mut others = vec![0; n as usize];
        others[0] = 1;
        let any = sh.wait_until_any(flags, Some(&others), Cmp::Eq, 1)?;
        let set = match any {
            Some(i) => sh.local(flags.at(i)?)? == [1],
            None => n == 1,
        };
        sh.wait_until_all(flags, Some(&others), Cmp::Eq, 1)?;
        let all = sh.local(flags)?;
        if !set || all[1..].iter().any(|&flag| flag != 1) {
            result = Err(violated(format!(
                "wait_until_any returned {any:?}, then the flags were {all:?}"
            )));
        }
    } else {
        sh.atomic_set(flags.at(me as usize)?, 1, 0)?;
    }
    sh.barrier_all()?;
    sh.free(flags)?;
    result
}

/// Teams and their collectives: on the world and on the team of even PEs, a broadcast from
/// the team's last PE, a sum reduction and an fcollect each give every member the values a
/// sequential reference computes.
pub fn team_collectives<B: Backend>(sh: &Shmem<B>) -> Result<(), BodyError> {
    let (me, n) = (sh.my_pe(), sh.n_pes());
    let evens =
        sh.team_split_strided(sh.team_world(), 0, 2, n.div_ceil(2), TeamConfig::default())?;
    let source = sh.calloc::<u64>(4)?;
    let dest = sh.calloc::<u64>(4)?;
    let gathered = sh.calloc::<u64>(n as usize)?;
    let mut result = Ok(());
    for team in [Some(sh.team_world().clone()), evens.clone()]
        .into_iter()
        .flatten()
    {
        let (team_me, size) = (team.my_pe()?, team.n_pes()?);
        let world_of = |pe: u32| sh.team_translate_pe(&team, pe, sh.team_world());
        sh.set_local(source, &[u64::from(me) * 10 + 1; 4])?;
        sh.broadcast(&team, dest, source, size - 1)?;
        let root_world = u64::from(world_of(size - 1)?.unwrap_or(0));
        let broadcast = sh.local(dest)?;
        sh.reduce(&team, Sum, dest, source)?;
        let sum: u64 = (0..size)
            .map(|pe| u64::from(world_of(pe).ok().flatten().unwrap_or(0)) * 10 + 1)
            .sum();
        let reduced = sh.local(dest)?;
        let part = gathered.slice(0..size as usize)?;
        sh.fcollect(&team, part, source.at(0)?)?;
        let collected = sh.local(part)?;
        let want: Vec<u64> = (0..size)
            .map(|pe| u64::from(world_of(pe).ok().flatten().unwrap_or(0)) * 10 + 1)
            .collect();
        if broadcast != [root_world * 10 + 1; 4] || reduced != [sum; 4] || collected != want {
            result = Err(violated(format!(
                "PE {me} (team PE {team_me} of {size}): broadcast {broadcast:?}, sum {reduced:?} \
                 (want {sum}), fcollect {collected:?} (want {want:?})"
            )));
        }
    }
    if let Some(evens) = evens {
        sh.team_destroy(&evens)?;
    }
    sh.barrier_all()?;
    sh.free(gathered)?;
    sh.free(dest)?;
    sh.free(source)?;
    result
}

/// On-stream operations: each PE puts a symmetric source to the next with `put_on_stream`,
/// then signals it on the stream; the receiver waits for the signal and must see the data,
/// gets its own copy back with `get_on_stream`, and a put-with-signal on the stream carries a
/// second block. Runs on a context of its own, so its stream is not the default one.
pub fn on_stream<B: Backend>(sh: &Shmem<B>) -> Result<(), BodyError> {
    // Small: the shuttle suites run the bodies on heaps of 16 KiB.
    const WORDS: usize = 64;
    let (me, n) = (sh.my_pe(), sh.n_pes());
    let (to, from) = ((me + 1) % n, (me + n - 1) % n);
    let source = sh.malloc::<u64>(WORDS)?;
    let landed = sh.calloc::<u64>(WORDS)?;
    let echoed = sh.calloc::<u64>(WORDS)?;
    let signal = sh.calloc::<u64>(1)?;
    let mine: Vec<u64> = (0..WORDS as u64).map(|i| u64::from(me) << 32 | i).collect();
    sh.set_local(source, &mine)?;
    sh.barrier_all()?;
    let stream = sh.ctx_create(rshmem::CtxOptions::default())?;
    stream.put_on_stream(landed, source, to)?;
    stream.signal_op_on_stream(signal, 1, SignalOp::Add, to)?;
    stream.quiet_on_stream()?;
    sh.signal_wait_until(signal, Cmp::Ge, 1)?;
    let expected: Vec<u64> = (0..WORDS as u64)
        .map(|i| u64::from(from) << 32 | i)
        .collect();
    let got = sh.local(landed)?;
    if got != expected {
        return Err(violated(format!(
            "PE {me} saw the on-stream signal but data {:?}.. from PE {from}",
            &got[..4]
        )));
    }
    // The block this PE received is the one it sent, moved by one PE: get it back from
    // `to`, on the stream, and compare with the source.
    sh.barrier_all()?;
    stream.get_on_stream(echoed, landed, to)?;
    stream.quiet()?;
    if sh.local(echoed)? != mine {
        return Err(violated(format!(
            "PE {me}'s get_on_stream from PE {to} did not return the block it put there"
        )));
    }
    sh.barrier_all()?;
    let doubled: Vec<u64> = mine.iter().map(|v| v * 2).collect();
    sh.set_local(source, &doubled)?;
    stream.put_signal_on_stream(landed, source, signal, 2, SignalOp::Add, to)?;
    sh.signal_wait_until(signal, Cmp::Ge, 3)?;
    let got = sh.local(landed)?;
    let expected: Vec<u64> = expected.iter().map(|v| v * 2).collect();
    if got != expected {
        return Err(violated(format!(
            "PE {me} saw the put_signal_on_stream signal but data {:?}..",
            &got[..4]
        )));
    }
    sh.barrier_all_on_stream(&stream)?;
    sh.ctx_destroy(stream)?;
    sh.free(signal)?;
    sh.free(echoed)?;
    sh.free(landed)?;
    sh.free(source)?;
    Ok(())
}

/// Arrays that together take most of the device heap are usable at both ends from every
/// PE. On CUDA the heap's memory grows as allocations need it (`Device::grow_segment`, in
/// 64 MiB steps), so with a heap larger than one step the second array lies in memory that
/// every PE mapped only when it was allocated. `malloc`, not `calloc`: only the words used
/// are touched, so a large heap costs the simulator nothing.
pub fn heap_growth<B: Backend>(sh: &Shmem<B>) -> Result<(), BodyError> {
    let (me, n) = (sh.my_pe(), sh.n_pes());
    let (to, from) = ((me + 1) % n, (me + n - 1) % n);
    let free = sh.heap_size_bytes(MemKind::Device) - sh.heap_used_bytes(MemKind::Device);
    let words = |fraction: u64| usize::try_from(free / fraction / 8).unwrap_or(usize::MAX);
    let arrays = [sh.malloc::<u64>(words(8))?, sh.malloc::<u64>(words(2))?];
    for (k, array) in (1..).zip(arrays) {
        let ends = [array.slice(..1)?, array.slice(array.len() - 1..)?];
        for (end, word) in (0..).zip(ends) {
            sh.p(word, u64::from(me) * 100 + k * 10 + end, to)?;
        }
        sh.barrier_all()?;
        for (end, word) in (0..).zip(ends) {
            let got = sh.local(word)?[0];
            let expected = u64::from(from) * 100 + k * 10 + end;
            if got != expected {
                return Err(violated(format!(
                    "PE {me}: array {k} of {} words holds {got} at its {} (expected {expected} \
                     from PE {from})",
                    array.len(),
                    if end == 0 { "start" } else { "end" }
                )));
            }
        }
    }
    sh.barrier_all()?;
    for array in arrays.into_iter().rev() {
        sh.free(array)?;
    }
    Ok(())
}
