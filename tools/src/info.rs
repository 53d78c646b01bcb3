//! `rshmem info`: the runtime's configuration table (every environment variable with its type,
//! default, value in this environment and meaning), from `rshmem::config::table`, so the
//! listing cannot drift from what the runtime reads.

use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use rshmem::Config;
use serde::Serialize;

pub(crate) const AFTER_HELP: &str = "Examples:
  rshmem info
  SHMEM_SYMMETRIC_SIZE=512m SHMEM_SYMMETRIC_HEAP_DEFAULT=host rshmem info --json

Sizes take a k, m, g or t suffix (powers of 1024, any case). A malformed value is an error
that names the variable, with exit status 2. `rshmem run` prints the same table to stderr
before the run when SHMEM_INFO is set. The last line says which bootstrap a program started
here would take (RSHMEM_BOOTSTRAP, docs/launching.md) and why; the lines after it, what
libfabric offers for reaching other nodes (FI_PROVIDER narrows it, docs/multi-node.md).
Started by a launcher (`srun -N 2 -n 4 rshmem info`), each rank joins the job's bootstrap and
adds how PEs as processes would reach every rank: shared memory on its node, libfabric to
the others (RSHMEM_TRANSPORT changes it).";

#[derive(Args, Debug)]
pub(crate) struct InfoArgs {
    /// Print one JSON array instead of a table.
    #[arg(long)]
    json: bool,
}

/// One variable as `--json` prints it.
#[derive(Serialize, Debug)]
struct Row {
    name: &'static str,
    #[serde(rename = "type")]
    kind: &'static str,
    default: &'static str,
    /// The value the runtime would use in this environment.
    value: String,
    /// Whether the environment sets it.
    set: bool,
    meaning: &'static str,
}

pub(crate) fn main(args: InfoArgs) -> anyhow::Result<ExitCode> {
    let config = Config::from_env().context("reading the SHMEM_*/RSHMEM_* environment")?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&rows(&config))?);
    } else {
        print!("{}", table_text(&config));
        println!("{}", bootstrap_line());
        print!("{}", network_text());
        if let Some(line) = paths_line() {
            println!("{line}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Which bootstrap a program started in this environment would take, and why
/// (`hw::bootstrap::choose`, what the process and CUDA backends call at init).
fn bootstrap_line() -> String {
    match hw::bootstrap::choose(|name| std::env::var_os(name)) {
        Ok(Some(choice)) => format!("bootstrap: {} ({})", choice.kind.name(), choice.why),
        Ok(None) => {
            "bootstrap: none, a single PE (no launcher's variables: RSHMEM_BOOTSTRAP_SOCKET, \
                     PMIX_NAMESPACE, PMI_FD, PMI_PORT)"
                .to_string()
        }
        Err(e) => format!("bootstrap: refused at init: {e}"),
    }
}

/// Under a launcher, how this rank would reach every rank of the job
/// (`hw::process::peer_paths`); `None` without one. A collective where the job spans nodes:
/// every rank of the job runs `rshmem info`.
fn paths_line() -> Option<String> {
    hw::bootstrap::choose(|name| std::env::var_os(name))
        .ok()
        .flatten()?;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let joined = hw::bootstrap::from_env(deadline)
        .map_err(|e| e.to_string())
        .and_then(|bootstrap| {
            let mut bootstrap = bootstrap.ok_or("no launcher after all")?;
            let rank = bootstrap.rank();
            let nodes =
                hw::process::nodes_of(bootstrap.as_mut(), deadline).map_err(|e| e.to_string())?;
            let paths = hw::process::peer_paths(&nodes, hw::Pe(rank))?;
            Ok((rank, nodes, paths))
        });
    Some(match joined {
        Err(e) => format!("paths: {e}"),
        Ok((rank, nodes, paths)) => {
            let ranks_by = |wanted| {
                let ranks: Vec<u32> = (0..)
                    .zip(&paths)
                    .filter(|&(_, &path)| path == wanted)
                    .map(|(rank, _)| rank)
                    .collect();
                spans(&ranks)
            };
            let mut line = format!("paths: rank {rank} on node {}:", nodes[rank as usize]);
            let libfabric = match hw::ofi::probe().map(|offer| offer.providers) {
                Ok(providers) if !providers.is_empty() => {
                    format!(
                        "libfabric ({} on {})",
                        providers[0].name, providers[0].domain
                    )
                }
                _ => "libfabric (none usable: see above)".to_string(),
            };
            for (path, word) in [
                (hw::process::PeerPath::SharedMemory, "shared memory"),
                (hw::process::PeerPath::Network, libfabric.as_str()),
            ] {
                let ranks = ranks_by(path);
                if !ranks.is_empty() {
                    line.push_str(&format!(" {word} to ranks {ranks};"));
                }
            }
            line.pop();
            line
        }
    })
}

/// "0-3, 6, 8-9" for the sorted `ranks`.
fn spans(ranks: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ranks.len() {
        let mut j = i;
        while j + 1 < ranks.len() && ranks[j + 1] == ranks[j] + 1 {
            j += 1;
        }
        parts.push(match i == j {
            true => ranks[i].to_string(),
            false => format!("{}-{}", ranks[i], ranks[j]),
        });
        i = j + 1;
    }
    parts.join(", ")
}

/// What libfabric offers here for reaching PEs on other nodes (`hw::ofi::probe`), honouring
/// `FI_PROVIDER`: one line, then one per provider.
fn network_text() -> String {
    // Why said on the first line: which provider the PEs take, and when.
    const USED: &str = "PEs as processes reach PEs on other nodes through the first \
                        (RSHMEM_TRANSPORT=ofi: every PE)";
    match hw::ofi::probe() {
        Ok(offer) if offer.providers.is_empty() => {
            let narrowed = std::env::var("FI_PROVIDER")
                .map(|p| format!(" among FI_PROVIDER={p}"))
                .unwrap_or_default();
            format!(
                "network: libfabric {} offers no provider of RDM endpoints with RMA and \
                 atomics{narrowed} (`fi_info -l` lists its providers); {USED}\n",
                offer.version
            )
        }
        Ok(offer) => {
            let mut text = format!(
                "network: libfabric {}, providers of RDM endpoints with RMA and atomics \
                 (FI_PROVIDER narrows them); {USED}\n",
                offer.version
            );
            for provider in &offer.providers {
                text.push_str(&format!("  {provider}\n"));
            }
            text
        }
        Err(e) => format!("network: {e}; {USED}\n"),
    }
}

/// Every variable of the table with its value in `config`.
fn rows(config: &Config) -> Vec<Row> {
    config
        .resolved()
        .into_iter()
        .map(|(var, value)| Row {
            name: var.name,
            kind: var.kind().name(),
            default: var.default,
            value,
            set: std::env::var_os(var.name).is_some(),
            meaning: var.doc,
        })
        .collect()
}

/// The table as aligned text, one variable a line under a header; a variable the environment
/// sets has its value marked with `*`.
pub(crate) fn table_text(config: &Config) -> String {
    let header = ["NAME", "TYPE", "DEFAULT", "VALUE", "MEANING"].map(String::from);
    let lines: Vec<[String; 5]> = std::iter::once(header)
        .chain(rows(config).into_iter().map(|row| {
            let mark = if row.set { "*" } else { "" };
            [
                row.name.to_owned(),
                row.kind.to_owned(),
                row.default.to_owned(),
                format!("{}{mark}", row.value),
                row.meaning.to_owned(),
            ]
        }))
        .collect();
    let widths: Vec<usize> = (0..4)
        .map(|column| lines.iter().map(|l| l[column].len()).max().unwrap_or(0))
        .collect();
    let mut text = String::new();
    for line in &lines {
        for (cell, width) in line.iter().zip(&widths) {
            text.push_str(&format!("{cell:<width$}  "));
        }
        text.push_str(&line[4]);
        text.push('\n');
    }
    text
}
