//! Puts that carry only their size (`SimBuilder::drop_payloads_from`): the same run when
//! nothing reads what they wrote, and a stopped run naming the read when something does.

#[allow(dead_code)]
mod common;
use common::{FAR, ib_pair, import_all, local, nvlink_pair, remote};

use hw::{
    AmoKind, AmoOp, AmoWidth, Cmp, Copier, Device, Launcher, MemKind, Pe, Queue, Topology, WaitSpec,
};
use sim::{Sim, SimBuilder, SimDevice, SimReport};

/// Bytes of the large put; the flag, one word, is on the next page.
const DATA: u64 = 2048;
const FLAG: u64 = 4096;

/// What PE 1 does once PE 0's flag says the data is there.
#[derive(Clone, Copy)]
enum Then {
    /// Nothing: the data is never read.
    Nothing,
    /// Reads the data.
    Read,
    /// Overwrites the data with its own stores, then reads it.
    Overwrite,
    /// An atomic on the data's first word.
    Atomic,
}

/// PE 0 puts `DATA` bytes to PE 1, fences and sets PE 1's flag; PE 1 waits for the flag and
/// then does `then`. Returns PE 1's first data word (0 unless read) and the report.
fn run(builder: SimBuilder, then: Then) -> (Result<u64, String>, SimReport) {
    let sim = builder.pes(2).build().unwrap();
    let (results, report) = sim
        .launch(move |dev: SimDevice| {
            let key = dev.create_segment(MemKind::Device, 2 * FLAG).unwrap();
            import_all(&dev, MemKind::Device, &key);
            let q = dev.create_queue().unwrap();
            if dev.pe() == Pe(0) {
                let data: Vec<u8> = (0..DATA).map(|i| i as u8 | 1).collect();
                q.put(remote(1, 0, DATA), &data, Copier::Device).unwrap();
                q.fence().unwrap();
                q.put(remote(1, FLAG, 8), &1u64.to_le_bytes(), Copier::Device)
                    .unwrap();
                q.quiet(FAR).unwrap();
                return 0;
            }
            let flag = WaitSpec {
                word: local(FLAG, 8),
                width: AmoWidth::W64,
                signed: false,
                cmp: Cmp::Eq,
                value: 1,
                purpose: "flag",
            };
            dev.wait_until(flag, FAR).unwrap();
            let mut first = [0u8; 8];
            match then {
                Then::Nothing => return 0,
                Then::Read => {}
                Then::Overwrite => dev.write_local(local(0, DATA), &vec![9; DATA as usize]),
                Then::Atomic => {
                    let op = AmoOp {
                        kind: AmoKind::Add,
                        width: AmoWidth::W64,
                        operand: 1,
                    };
                    let ticket = q.amo(remote(1, 0, 8), op, true).unwrap();
                    q.wait_ticket(ticket, FAR).unwrap();
                    return 0;
                }
            }
            dev.read_local(local(0, 8), &mut first);
            u64::from_le_bytes(first)
        })
        .unwrap();
    let pe1 = results.into_iter().nth(1).expect("two PEs");
    (pe1.map_err(|e| e.message), report)
}

fn machines() -> [(&'static str, Topology); 2] {
    [("nvlink", nvlink_pair()), ("ib", ib_pair())]
}

#[test]
fn a_run_that_never_reads_its_large_puts_is_the_same_run_without_their_bytes() {
    for (name, topology) in machines() {
        for seed in 0..4 {
            let kept = run(Sim::builder(topology.clone()).seed(seed), Then::Nothing).1;
            let dropped = Sim::builder(topology.clone())
                .seed(seed)
                .drop_payloads_from(64);
            let dropped = run(dropped, Then::Nothing).1;
            assert_eq!(dropped.failure, None, "{name}, seed {seed}");
            assert_eq!(
                (dropped.sim_time_ns, dropped.trace_hash, dropped.events),
                (kept.sim_time_ns, kept.trace_hash, kept.events),
                "{name}, seed {seed}"
            );
            // PE 1's data page is never stored; the flag's is.
            assert!(
                dropped.memory_bytes_peak < kept.memory_bytes_peak,
                "{name}: {} bytes dropped against {} kept",
                dropped.memory_bytes_peak,
                kept.memory_bytes_peak
            );
        }
    }
}

#[test]
fn reading_what_a_dropped_put_wrote_stops_the_run_naming_the_read() {
    for (name, topology) in machines() {
        for then in [Then::Read, Then::Atomic] {
            let builder = Sim::builder(topology.clone()).drop_payloads_from(1024);
            let (pe1, report) = run(builder, then);
            let failure = report.failure.unwrap_or_default();
            assert!(
                failure.contains("PE 1 read 8 bytes at offset 0x0")
                    && failure.contains("at least 1024 bytes")
                    && failure.contains("0x0..0x800")
                    && failure.contains("--drop-payloads-from"),
                "{name}: {failure}"
            );
            assert!(
                pe1.is_err() || matches!(then, Then::Read),
                "{name}: PE 1 went on past its read: {pe1:?}"
            );
        }
    }
}

#[test]
fn small_puts_and_bytes_written_again_are_read_as_ever() {
    for (name, topology) in machines() {
        // Below the size, the data keeps its bytes.
        let (pe1, report) = run(
            Sim::builder(topology.clone()).drop_payloads_from(DATA + 1),
            Then::Read,
        );
        assert_eq!(report.failure, None, "{name}");
        assert_eq!(
            pe1,
            Ok(u64::from_le_bytes([1, 1, 3, 3, 5, 5, 7, 7])),
            "{name}"
        );
        // At the size, the data is dropped, and PE 1's own stores make it readable again.
        let (pe1, report) = run(
            Sim::builder(topology).drop_payloads_from(DATA),
            Then::Overwrite,
        );
        assert_eq!(report.failure, None, "{name}");
        assert_eq!(pe1, Ok(u64::from_le_bytes([9; 8])), "{name}");
    }
}

#[test]
fn memory_with_an_address_refuses_dropped_payloads() {
    let err = Sim::builder(nvlink_pair())
        .addressable_memory(true)
        .drop_payloads_from(64)
        .build()
        .unwrap_err()
        .to_string();
    assert!(err.contains("keep the payloads"), "{err}");
}

#[test]
fn a_put_from_local_memory_that_drops_its_bytes_reads_none() {
    // PE 1 drops 2 KiB into PE 0's memory; PE 0 sends that range on to PE 1 from its own
    // segment. Reading it would stop the run; a put that carries only its size reads nothing.
    for (name, topology) in machines() {
        let sim = Sim::builder(topology)
            .pes(2)
            .drop_payloads_from(1024)
            .build()
            .unwrap();
        let (results, report) = sim
            .launch(|dev: SimDevice| {
                let key = dev.create_segment(MemKind::Device, 2 * FLAG).unwrap();
                import_all(&dev, MemKind::Device, &key);
                let q = dev.create_queue().unwrap();
                if dev.pe() == Pe(1) {
                    q.put(remote(0, 0, DATA), &vec![7; DATA as usize], Copier::Device)
                        .unwrap();
                    q.quiet(FAR).unwrap();
                }
                dev.exchange(&[], FAR).unwrap();
                if dev.pe() == Pe(0) {
                    q.put_from_local(remote(1, 0, DATA), local(0, DATA))
                        .unwrap();
                    q.quiet(FAR).unwrap();
                }
                dev.exchange(&[], FAR).unwrap();
            })
            .unwrap();
        assert_eq!(report.failure, None, "{name}");
        assert!(results.iter().all(Result::is_ok), "{name}");
        assert_eq!(report.ops.puts, 2, "{name}");
    }
}
