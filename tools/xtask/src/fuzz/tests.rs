//! The fuzzer on each real target for a few thousand inputs (what CI's `cargo test -p xtask`
//! runs), and on planted targets, to show that a panic or a hang is found, saved and replayed.

use std::path::PathBuf;
use std::time::Duration;

use super::rng::Rng;
use super::runner::{self, Report, Settings};
use super::targets::{self, Target};

fn settings(name: &str, inputs: u64, time_limit: Duration) -> Settings {
    let findings_dir: PathBuf =
        std::env::temp_dir().join(format!("xtask-fuzz-{}-{name}", std::process::id()));
    Settings {
        inputs,
        seed: 1,
        time_limit,
        findings_dir,
        progress: false,
    }
}

fn fuzz(target: &'static Target, inputs: u64, time_limit: Duration) -> Report {
    let root = crate::tidy::repository_root();
    let corpus = (target.corpus)(&root).expect("the seed corpus reads");
    runner::fuzz(target, corpus, &settings(target.name, inputs, time_limit))
}

#[test]
fn every_target_takes_a_few_thousand_inputs_without_a_panic_or_a_hang() {
    for target in targets::TARGETS {
        // A generous limit: CI's machine is small and shared.
        let report = fuzz(target, 3000, Duration::from_secs(10));
        let findings: Vec<&str> = report.findings.iter().map(|f| f.message.as_str()).collect();
        assert_eq!((report.panics, report.hangs), (0, 0), "{findings:?}");
        assert_eq!(report.inputs, 3000);
        // Neither accepting nor refusing everything: the inputs reach past the first check.
        assert!(report.accepted > 0, "{}: nothing accepted", target.name);
        assert!(
            report.errors.len() >= 5,
            "{}: {:?}",
            target.name,
            report.errors
        );
    }
}

#[test]
fn a_seed_gives_the_same_run() {
    let target = targets::by_name("litmus").expect("a target");
    let (a, b) = (
        fuzz(target, 500, Duration::from_secs(10)),
        fuzz(target, 500, Duration::from_secs(10)),
    );
    assert_eq!((a.accepted, &a.errors), (b.accepted, &b.errors));
}

/// Panics on any input holding `~~`, which mutation makes from the seed within a few inputs.
static PLANTED_PANIC: Target = Target {
    name: "planted-panic",
    corpus: |_| Ok(vec![b"exists ~x".to_vec()]),
    generate: |rng: &mut Rng| vec![b'~'; rng.range(0, 3)],
    dictionary: &[&["~"]],
    separator: b'\0',
    run: |input| {
        if input.windows(2).any(|w| w == b"~~") {
            panic!("planted: two tildes");
        }
        Err(targets::Refusal::from_message(format!(
            "refused {} bytes",
            input.len()
        )))
    },
};

#[test]
fn a_planted_panic_is_found_saved_and_replayed() {
    let settings = settings("planted-panic", 2000, Duration::from_secs(10));
    let report = runner::fuzz(&PLANTED_PANIC, vec![b"exists ~x".to_vec()], &settings);
    assert!(report.panics > 0, "the planted panic was not found");
    assert_eq!(report.inputs, 2000, "a panic does not stop the run");
    // One finding per panic location, however often it panicked.
    let [finding] = &report.findings[..] else {
        panic!("{:?}", report.findings)
    };
    assert_eq!(finding.kind, "panic");
    assert!(
        finding.message.contains("planted: two tildes"),
        "{}",
        finding.message
    );
    assert!(
        finding.message.contains("tests.rs"),
        "names where: {}",
        finding.message
    );
    let path = finding.path.as_ref().expect("the input is saved");
    let saved = std::fs::read(path).expect("the saved input reads");
    assert_eq!(saved, finding.input);
    let replayed = runner::replay(&PLANTED_PANIC, saved, &settings);
    assert_eq!((replayed.inputs, replayed.panics), (1, 1));
    std::fs::remove_dir_all(&settings.findings_dir).ok();
}

/// Sleeps far past the time limit on an input holding `z`.
static PLANTED_HANG: Target = Target {
    name: "planted-hang",
    corpus: |_| Ok(vec![b"abc".to_vec()]),
    generate: |_| b"xyz".to_vec(),
    dictionary: &[],
    separator: b'\0',
    run: |input| {
        if input.contains(&b'z') {
            std::thread::sleep(Duration::from_millis(1500));
        }
        Ok(())
    },
};

#[test]
fn a_slow_input_is_reported_as_a_hang() {
    let settings = settings("planted-hang", 1000, Duration::from_millis(100));
    let report = runner::fuzz(&PLANTED_HANG, vec![b"abc".to_vec()], &settings);
    assert_eq!(report.hangs, 1);
    assert!(report.inputs < 1000, "the run stops at the hang");
    let [finding] = &report.findings[..] else {
        panic!("{:?}", report.findings)
    };
    assert_eq!(finding.kind, "hang");
    assert!(finding.input.contains(&b'z'), "{:?}", finding.input);
    std::fs::remove_dir_all(&settings.findings_dir).ok();
}

#[test]
fn the_input_being_run_is_kept_for_a_crash() {
    let settings = settings("kept", 1, Duration::from_secs(10));
    let report = runner::replay(&PLANTED_HANG, b"kept input".to_vec(), &settings);
    assert_eq!(report.inputs, 1);
    let kept = runner::read_kept(&runner::current_path(
        &settings.findings_dir,
        "planted-hang",
    ))
    .expect("the kept input reads");
    assert_eq!(kept, b"kept input");
    std::fs::remove_dir_all(&settings.findings_dir).ok();
}

#[test]
fn error_classes_blank_numbers_and_quotes() {
    assert_eq!(
        targets::error_class("t.litmus:12:3: unknown instruction 'frob'"),
        "t.litmus:#:#: unknown instruction ''"
    );
    assert_eq!(
        targets::error_class("t:1:1: expected end of line, found '\"it's\"'"),
        "t:#:#: expected end of line, found ''"
    );
    // Paths are blanked too: they are the input, not the mistake.
    assert_eq!(
        targets::error_class("cannot read topology file a/b日本: No such file or directory"),
        "cannot read topology file / No such file or directory"
    );
    // The first line only: clap follows its error with the command's usage.
    assert_eq!(
        targets::error_class("error: unexpected argument '-x' found\n\nUsage: rshmem topo"),
        "error: unexpected argument '' found"
    );
}
