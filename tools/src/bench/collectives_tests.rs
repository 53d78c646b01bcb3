//! `rshmem bench --collectives` without a GPU: the spec's lines, sizes and iterations, the
//! arguments, the check of results and the tables.

use std::ffi::OsString;

use clap::Parser;

use super::super::BenchArgs;
use super::super::collectives_pe::{first_wrong_word, pattern_word, reduced_value};
use super::*;

#[derive(Parser, Debug)]
struct Bench {
    #[command(flatten)]
    args: BenchArgs,
}

fn bench(args: &str) -> Result<BenchArgs, String> {
    let argv = std::iter::once("bench").chain(args.split_whitespace());
    Bench::try_parse_from(argv.map(OsString::from))
        .map(|b| b.args)
        .map_err(|e| e.to_string())
}

#[test]
fn the_lines_are_named_as_the_spec_names_them() {
    let names: Vec<String> = Collective::ALL
        .iter()
        .flat_map(|c| Form::ALL.map(|f| c.line_name(f)))
        .collect();
    assert_eq!(
        names,
        [
            "barrier_all_on_stream",
            "barrier_all_in_kernel",
            "broadcast_on_stream",
            "broadcast_in_kernel",
            "fcollect_on_stream",
            "fcollect_in_kernel",
            "alltoall_on_stream",
            "alltoall_in_kernel",
            "sum_reduce_on_stream",
            "sum_reduce_in_kernel",
        ]
    );
}

#[test]
fn sizes_run_from_8_bytes_to_64_mib() {
    assert_eq!(SIZES[0], 8);
    assert_eq!(MAX_BYTES, 64 << 20);
    // Up by 8 to 16 MiB, then 64 MiB.
    assert!(SIZES[..8].windows(2).all(|w| w[1] == 8 * w[0]), "{SIZES:?}");
    assert_eq!(SIZES[7], 16 << 20);
}

#[test]
fn iterations_follow_the_size() {
    let c = Collective::Broadcast;
    assert_eq!(iters(Collective::BarrierAll, 0), 1000);
    assert_eq!(iters(c, 8), 1000);
    assert_eq!(iters(c, 32 << 10), 1000);
    assert_eq!(iters(c, 256 << 10), 100);
    assert_eq!(iters(c, 2 << 20), 100);
    assert_eq!(iters(c, 16 << 20), 20);
    assert_eq!(iters(c, 64 << 20), 20);
    assert_eq!(warmup_ops(1000), 10);
    assert_eq!(warmup_ops(20), 10);
    assert_eq!(warmup_ops(3), 3);
    assert_eq!(REPEATS, 3);
}

#[test]
fn bandwidth_counts_what_one_pe_receives() {
    assert_eq!(Collective::Broadcast.received_bytes(8, 4096), 4096);
    assert_eq!(Collective::SumReduce.received_bytes(8, 4096), 4096);
    assert_eq!(Collective::Fcollect.received_bytes(8, 4096), 8 * 4096);
    assert_eq!(Collective::Alltoall.received_bytes(4, 4096), 4 * 4096);
    assert_eq!(Collective::BarrierAll.dest_bytes(8, 0), 0);
}

#[test]
fn pe_counts_default_to_4_and_8_and_take_lists_and_repeats() {
    assert_eq!(pe_counts(&bench("--collectives").unwrap().pes), [4, 8]);
    assert_eq!(
        pe_counts(&bench("--collectives --pes 2,4").unwrap().pes),
        [2, 4]
    );
    let repeated = bench("--collectives --pes 8 --pes 4 --pes 8").unwrap();
    assert_eq!(pe_counts(&repeated.pes), [8, 4]);
    assert_eq!(steps(2), 2 * (1 + 4 * 9));
}

#[test]
fn a_pe_count_below_2_is_refused_with_the_reason() {
    for bad in ["0", "1", "4,1"] {
        let e = bench(&format!("--collectives --pes {bad}")).unwrap_err();
        assert!(e.contains("a collective needs 2 PEs or more"), "{e}");
    }
    let e = bench("--collectives --pes four").unwrap_err();
    assert!(e.contains("not a PE count"), "{e}");
    let e = bench("--collectives --pes 129").unwrap_err();
    assert!(e.contains("at most 128"), "{e}");
}

#[test]
fn pes_needs_collectives() {
    let e = bench("--pes 4").unwrap_err();
    assert!(e.contains("--collectives"), "{e}");
}

#[test]
fn too_few_gpus_without_sharing_names_the_fixes() {
    let e = check_gpus(&[4, 8], 1, false).unwrap_err().to_string();
    assert!(e.contains("up to 8 PEs") && e.contains("1 GPU(s)"), "{e}");
    assert!(e.contains("--share-gpus") && e.contains("--pes"), "{e}");
    check_gpus(&[4, 8], 1, true).unwrap();
    check_gpus(&[4, 8], 8, false).unwrap();
}

#[test]
fn without_cuda_the_command_says_what_is_missing() {
    if probe().is_ok() {
        return; // A machine with CUDA would measure instead.
    }
    let e = main(&[4], true, None, None, None).unwrap_err();
    let e = format!("{e:#}");
    assert!(e.contains("measures the CUDA backend"), "{e}");
}

#[test]
fn a_log_without_collectives_is_refused_before_any_measurement() {
    let path = std::env::temp_dir().join(format!("rshmem-coll-{}.log", std::process::id()));
    std::fs::write(&path, "put_bw bytes=4096 GBps=12.3\n").unwrap();
    let e = main(&[4], true, Some(&path), None, None)
        .unwrap_err()
        .to_string();
    std::fs::remove_file(&path).unwrap();
    assert!(e.contains("holds no collective result"), "{e}");
}

/// PE `me`'s dest after `collective` of `bytes`, as a right implementation leaves it.
fn right_dest(collective: Collective, n_pes: u32, me: u32, bytes: u64) -> Vec<u8> {
    let words = bytes / 4;
    let word = |i: u64| match collective {
        Collective::Broadcast => pattern_word(0, i),
        Collective::Fcollect => pattern_word((i / words) as u32, i % words),
        Collective::Alltoall => pattern_word((i / words) as u32, u64::from(me) * words + i % words),
        _ => (0..n_pes)
            .map(|pe| reduced_value(pe, i))
            .sum::<f32>()
            .to_bits(),
    };
    (0..collective.dest_bytes(n_pes, bytes) / 4)
        .flat_map(|i| word(i).to_le_bytes())
        .collect()
}

#[test]
fn the_check_accepts_right_results_and_names_the_first_wrong_word() {
    for collective in &Collective::ALL[1..] {
        let mut dest = right_dest(*collective, 4, 2, 64);
        first_wrong_word(*collective, 4, 2, 64, &dest).unwrap();
        // Word 5 of the dest: for fcollect and alltoall, PE 0's part.
        dest[20..24].copy_from_slice(&[0xFF; 4]);
        let e = first_wrong_word(*collective, 4, 2, 64, &dest).unwrap_err();
        assert!(e.starts_with("PE 2's dest word 5 is 0xffffffff"), "{e}");
        assert!(e.ends_with("did not write it"), "{e}");
    }
}

#[test]
fn the_check_knows_whose_word_belongs_where() {
    // Alltoall: PE 1's dest holds, from PE 3, block 1 of PE 3's source.
    let mut dest = right_dest(Collective::Alltoall, 4, 1, 8);
    first_wrong_word(Collective::Alltoall, 4, 1, 8, &dest).unwrap();
    dest.swap(24, 28);
    let e = first_wrong_word(Collective::Alltoall, 4, 1, 8, &dest).unwrap_err();
    assert!(
        e.contains("dest word 6") && e.contains("PE 3's source word 2"),
        "{e}"
    );
    // The same bytes are not PE 0's alltoall result.
    let right_for_1 = right_dest(Collective::Alltoall, 4, 1, 8);
    assert!(first_wrong_word(Collective::Alltoall, 4, 0, 8, &right_for_1).is_err());
}

#[test]
fn every_pe_has_its_own_pattern_and_sums_are_exact() {
    for i in [0, 1, 1 << 20, (64 << 20) / 4 * 8 - 1] {
        let mut words: Vec<u32> = (0..128).map(|pe| pattern_word(pe, i)).collect();
        words.sort_unstable();
        words.dedup();
        assert_eq!(words.len(), 128, "word {i}");
    }
    let largest: f32 = (0..128).map(|pe| reduced_value(pe, 1023)).sum();
    assert!(largest < (1 << 24) as f32, "{largest}");
}

fn measured(name: &str, n_pes: u32, bytes: u64, us: f64) -> [Line; 2] {
    [
        Line::new(name, Some(bytes), us).field("us").pes(n_pes),
        Line::new(name, Some(bytes), bytes as f64 / us / 1e3)
            .field("algbw_GBps")
            .pes(n_pes),
    ]
}

#[test]
fn lines_are_grouped_by_collective_form_and_pe_count() {
    let mut ours: Vec<Line> = [
        measured("fcollect_on_stream", 8, 8, 4.0),
        measured("broadcast_in_kernel", 4, 8, 2.0),
        measured("broadcast_on_stream", 8, 8, 3.0),
        measured("broadcast_on_stream", 4, 8, 3.0),
        measured("broadcast_on_stream", 4, 64, 3.0),
    ]
    .concat();
    ours.push(
        Line::new("barrier_all_in_kernel", None, 1.0)
            .field("us")
            .pes(4),
    );
    sort_for_reading(&mut ours);
    let text = lines::joined(&ours);
    assert_eq!(
        text,
        [
            "barrier_all_in_kernel pes=4 us=1.000",
            "broadcast_on_stream pes=4 bytes=8 us=3.000 algbw_GBps=0.003",
            "broadcast_on_stream pes=4 bytes=64 us=3.000 algbw_GBps=0.021",
            "broadcast_on_stream pes=8 bytes=8 us=3.000 algbw_GBps=0.003",
            "broadcast_in_kernel pes=4 bytes=8 us=2.000 algbw_GBps=0.004",
            "fcollect_on_stream pes=8 bytes=8 us=4.000 algbw_GBps=0.002",
        ]
    );
}

#[test]
fn the_tables_put_each_collective_under_its_heading_with_pes_in_each_row() {
    let ours: Vec<Line> = [
        measured("broadcast_on_stream", 4, 4096, 10.0),
        measured("alltoall_in_kernel", 8, 4096, 20.0),
    ]
    .concat();
    let theirs = lines::parse(
        "# NVSHMEM\nbroadcast_on_stream pes=4 bytes=4096 us=12.500 algbw_GBps=0.328\n\
         broadcast_on_stream pes=8 bytes=4096 us=15.0 algbw_GBps=0.273\n",
    )
    .unwrap();
    let shown = tables(&ours, Some(&theirs), false);
    let broadcast = shown.find("### broadcast").expect(&shown);
    let alltoall = shown.find("### alltoall").expect(&shown);
    assert!(broadcast < alltoall, "{shown}");
    assert!(!shown.contains("### fcollect"), "{shown}");
    assert!(
        shown.contains("| broadcast_on_stream 4 PEs 4 KiB us | 10.000 | 12.500 | 1.25x |"),
        "{shown}"
    );
    assert!(
        shown.contains("| broadcast_on_stream 8 PEs 4 KiB us | not measured | 15.000 |"),
        "{shown}"
    );
    assert!(
        shown.contains("| alltoall_in_kernel 8 PEs 4 KiB us | 20.000 | - | - |"),
        "{shown}"
    );
}

#[test]
fn lines_read_back_without_collectives_are_refused() {
    let path = std::env::temp_dir().join(format!("rshmem-coll-from-{}.txt", std::process::id()));
    std::fs::write(&path, "put_bw bytes=4096 GBps=12.3\n").unwrap();
    let e = main(&[], false, None, None, Some(&path))
        .unwrap_err()
        .to_string();
    std::fs::remove_file(&path).unwrap();
    assert!(e.contains("holds no collective result"), "{e}");
    assert!(e.contains("--raw FILE"), "{e}");
}
