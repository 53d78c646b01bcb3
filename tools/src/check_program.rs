//! `rshmem check -n N PROGRAM`: the race detector over an OpenSHMEM program, run on the
//! simulator under many seeds, one process per run (docs/check.md, "C programs").
//!
//! Each run is `rshmem run -n N --sim` with the detector on; the program's host reports the
//! races it found, their addresses named by the program's symbols. Races are printed once
//! each, with the first seed that showed it and the command that replays that run.

use std::collections::BTreeMap;
use std::process::ExitCode;

use anyhow::bail;
use serde_json::Value;

use crate::check::{CheckArgs, DELAY_ROUNDS};
use crate::launch;
use crate::sim_program::{self, ExploreRequest, SimRequest};

/// A race seen in some runs: the first report of it, its first seed, how many runs had it,
/// and how many accesses of the second PE it covered in that first run.
///
/// Why group by the second access's PE and kind rather than its bytes: a C loop reads an
/// array a word at a time, and each word would otherwise be a race of its own.
struct Found {
    race: Value,
    seed: u64,
    runs: u64,
    accesses: u64,
}

/// Checks `args.workload`, a program, on `n_pes` PEs.
///
/// # Errors
/// If the program cannot be found or started, or a run ends without a report.
pub(crate) fn main(args: &CheckArgs, n_pes: u32) -> anyhow::Result<ExitCode> {
    let path = launch::resolve(&args.workload)?;
    let topology = &args.machine.topology;
    let request = |seed| {
        let mut request = SimRequest::new(n_pes, topology, seed, args.machine.semantics);
        request.check = true;
        request
    };
    let run = |request: SimRequest| -> anyhow::Result<Value> {
        let ran = sim_program::run_once(&path, &args.args, request, &[], 0)?;
        match ran.report {
            Some(report) => Ok(report),
            None => bail!("{}", sim_program::missing_report(&path, ran.status)),
        }
    };
    let n_choices = if args.schedule == "delays" {
        let mut on_time = request(0);
        on_time.explore = Some(ExploreRequest {
            depth: 0,
            n_choices: 0,
            rounds: DELAY_ROUNDS,
        });
        run(on_time)?["choices"].as_u64().unwrap_or(0)
    } else {
        0
    };
    let mut found: BTreeMap<String, Found> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut instrumented = true;
    for seed in args.seed..args.seed.saturating_add(args.runs) {
        let mut this = request(seed);
        if args.schedule == "delays" {
            this.explore = Some(ExploreRequest {
                depth: args.depth,
                n_choices,
                rounds: DELAY_ROUNDS,
            });
        }
        let report = run(this)?;
        // A run that failed early has no word on it; the runs that have one say.
        if let Some(seen) = report["instrumented"].as_bool() {
            instrumented &= seen;
        }
        let mut this_run = std::collections::BTreeSet::new();
        for race in report["races"].as_array().into_iter().flatten() {
            let second = &race["second"];
            let site = format!(
                "{} {} {} {}",
                race["first"], second["pe"], second["kind"], second["target"]
            );
            let first_of_run = this_run.insert(site.clone());
            let entry = found.entry(site).or_insert(Found {
                race: race.clone(),
                seed,
                runs: 0,
                accesses: 0,
            });
            entry.runs += u64::from(first_of_run);
            entry.accesses += u64::from(entry.seed == seed);
        }
        for failure in report["failures"].as_array().into_iter().flatten() {
            failures.push((seed, failure.as_str().unwrap_or("?").to_owned()));
        }
    }
    let mut found: Vec<Found> = found.into_values().collect();
    found.sort_by_key(|f| f.seed);
    let replay = |seed: u64| {
        let delays = if args.schedule == "delays" {
            format!(" --schedule delays --depth {}", args.depth)
        } else {
            String::new()
        };
        format!(
            "rshmem check -n {n_pes} --runs 1 --seed {seed} --topology {topology} --semantics {}{delays} {}",
            args.machine.semantics.name(),
            args.workload
        )
    };
    let ok = found.is_empty() && failures.is_empty();
    if args.json {
        let races: Vec<Value> = found
            .iter()
            .map(|f| {
                let mut race = f.race.clone();
                race["seed"] = f.seed.into();
                race["runs_with_race"] = f.runs.into();
                race["accesses"] = f.accesses.into();
                race["replay"] = replay(f.seed).into();
                race
            })
            .collect();
        let failures: Vec<Value> = failures
            .iter()
            .map(|(seed, message)| serde_json::json!({ "seed": seed, "message": message }))
            .collect();
        let summary = serde_json::json!({
            "program": args.workload, "pes": n_pes, "topology": topology,
            "semantics": args.machine.semantics.name(), "first_seed": args.seed,
            "runs": args.runs, "ok": ok, "instrumented": instrumented,
            "races": races, "failures": failures,
        });
        println!("{summary}");
    } else {
        let last = args.seed.saturating_add(args.runs - 1);
        let count = match found.len() {
            0 => "no races".to_owned(),
            1 => "1 race".to_owned(),
            n => format!("{n} races"),
        };
        println!(
            "{}: {} runs (seeds {} to {last}) on {n_pes} PEs of {topology} ({}): {count}",
            args.workload,
            args.runs,
            args.seed,
            args.machine.semantics.name()
        );
        if !instrumented {
            println!(
                "note: {} was not built with `oshcc -rshmem-check`, so its own loads and stores \
                 are not seen (a put racing with a plain load is missed); rebuild it with that flag",
                args.workload
            );
        }
        for (i, f) in found.iter().enumerate() {
            let r = &f.race;
            println!(
                "race {} at {} of PE {}, in {} of {} runs, first with seed {}:",
                i + 1,
                r["conflict"].as_str().unwrap_or("?"),
                r["first"]["target"],
                f.runs,
                args.runs,
                f.seed
            );
            println!(
                "  first:  {}",
                describe(&r["first"], r["first_epoch"].as_u64())
            );
            println!(
                "  second: {}",
                describe(&r["second"], r["second_epoch"].as_u64())
            );
            if f.accesses > 1 {
                println!(
                    "          and {} more such accesses after it in that run",
                    f.accesses - 1
                );
            }
            println!(
                "  {}",
                r["why"]
                    .as_str()
                    .unwrap_or("no ordering rule puts the first before the second")
            );
            println!("  replay: {}", replay(f.seed));
        }
        for (seed, message) in &failures {
            println!("failure with seed {seed}: {message}");
        }
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// One access of a race, as a line.
fn describe(a: &Value, epoch: Option<u64>) -> String {
    let (pe, target) = (a["pe"].as_u64(), a["target"].as_u64());
    let whose = if pe == target {
        "its own memory".to_owned()
    } else {
        format!("PE {}", a["target"])
    };
    let by = a["thread"]
        .as_str()
        .map_or_else(String::new, |thread| format!(" by {thread}"));
    format!(
        "PE {} {} of {} B at {} on {whose}{by} (epoch {})",
        a["pe"],
        a["kind"].as_str().unwrap_or("?"),
        a["bytes"],
        a["where"].as_str().unwrap_or("?"),
        epoch.unwrap_or(0)
    )
}
