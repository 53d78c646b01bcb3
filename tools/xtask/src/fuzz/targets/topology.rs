//! The TOML topology reader (`sim::topology::file::parse`, docs/topology-format.md).
//!
//! Seeds: the shipped files (`sim/topologies/*.toml`) and every preset as the writer writes it.
//! Oracle beyond "no panic, no hang": a machine the reader accepts, written back by the
//! writer, is read again to the same machine.

use std::path::Path;

use anyhow::Context;
use sim::topology::{file, presets, write};

use super::{Refusal, Target};
use crate::fuzz::rng::Rng;

pub(crate) static TARGET: Target = Target {
    name: "topology",
    corpus,
    generate,
    dictionary: &[&[
        "name",
        "[timing]",
        "[timing.copy]",
        "[[node]]",
        "[[link]]",
        "kind",
        "host",
        "tier",
        "a",
        "b",
        "latency_ns",
        "gbps",
        "gpu",
        "nvswitch",
        "pcie-switch",
        "nic",
        "ib-switch",
        "nvlink",
        "pcie",
        "ib",
        "issue_ns",
        "nic_ns",
        "poll_ns",
        "local_gbps",
        "fence_ns",
        "release_ns",
        "transfer_ns",
        "launch_ns",
        "local_access_ns",
        "startup_ns",
        "map_gbps",
        "device",
        "block",
        "warp",
        "thread",
        "engine",
        "=",
        "\"",
        "[",
        "]",
        "{",
        "}",
        "'''",
        "\"\"\"",
        "\\u0000",
        "true",
        "1979-05-27T07:32:00Z",
        "[[",
        "]]",
        ".",
    ]],
    separator: b'\0',
    run,
};

fn corpus(root: &Path) -> anyhow::Result<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    let dir = root.join("sim/topologies");
    for entry in std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "toml") {
            out.push(std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?);
        }
    }
    for name in ["h200x2", "hgx8", "ib-1", "ib-2"] {
        let machine = presets::preset(name).context("a preset the corpus names")?;
        out.push(write::to_toml(&machine).into_bytes());
    }
    Ok(out)
}

fn run(input: &[u8]) -> Result<(), Refusal> {
    let text = super::text(input)?;
    let machine =
        file::parse(text, "fuzz.toml").map_err(|e| Refusal::from_message(e.to_string()))?;
    let written = write::to_toml(&machine);
    let back = file::parse(&written, "written.toml")
        .unwrap_or_else(|e| panic!("the writer's text does not read back: {e}\n{written}"));
    assert_eq!(
        back.topology.name(),
        machine.topology.name(),
        "name lost: {written}"
    );
    assert_eq!(back.timing, machine.timing, "timing lost: {written}");
    assert_eq!(
        back.topology.n_gpus(),
        machine.topology.n_gpus(),
        "GPUs lost: {written}"
    );
    assert_eq!(
        back.topology.n_links(),
        machine.topology.n_links(),
        "links lost: {written}"
    );
    Ok(())
}

const NODE_KINDS: &[&str] = &[
    "gpu",
    "nvswitch",
    "pcie-switch",
    "nic",
    "ib-switch",
    "cpu",
    "",
];
const LINK_KINDS: &[&str] = &["nvlink", "pcie", "ib", "ethernet"];
const TIMING_KEYS: &[&str] = &[
    "issue_ns",
    "nic_ns",
    "poll_ns",
    "local_gbps",
    "fence_ns",
    "release_ns",
    "transfer_ns",
    "launch_ns",
    "local_access_ns",
    "startup_ns",
    "map_gbps",
];
const MOVERS: &[&str] = &["device", "block", "warp", "thread", "engine"];

/// A machine of a few nodes and links, with costs, mostly well formed.
fn generate(rng: &mut Rng) -> Vec<u8> {
    let mut out = String::new();
    if !rng.one_in(4) {
        out += &format!("name = \"m{}\"\n", rng.number());
    }
    if rng.one_in(2) {
        out += "[timing]\n";
        for _ in 0..rng.range(0, 5) {
            let key = rng.pick(TIMING_KEYS);
            let value = if key.ends_with("gbps") {
                float(rng)
            } else {
                rng.number()
            };
            out += &format!("{key} = {value}\n");
        }
        if rng.one_in(2) {
            out += "[timing.copy]\n";
            for _ in 0..rng.range(0, 3) {
                let points: Vec<String> = (0..rng.range(0, 4))
                    .map(|_| format!("[{}, {}]", rng.number(), rng.number()))
                    .collect();
                out += &format!("{} = [{}]\n", rng.pick(MOVERS), points.join(", "));
            }
        }
    }
    // Half the machines are a star, GPUs around one switch, which routes; the others are
    // random nodes and links, which mostly do not.
    let star = rng.one_in(2);
    let n_nodes = rng.range(0, 10);
    let name = |i: usize| format!("n{i}");
    for i in 0..n_nodes {
        let kind = match (star, i) {
            (true, 0) => "nvswitch",
            (true, _) => "gpu",
            (false, _) if rng.one_in(3) => "gpu",
            (false, _) => rng.pick(NODE_KINDS),
        };
        out += &format!("\n[[node]]\nname = \"{}\"\nkind = \"{kind}\"\n", name(i));
        if rng.one_in(if star { 4 } else { 2 }) {
            out += &format!("host = {}\n", rng.number());
        }
        if rng.one_in(if star { 16 } else { 4 }) {
            out += &format!("tier = {}\n", rng.number());
        }
    }
    let mut links: Vec<(usize, usize)> = Vec::new();
    if star {
        links.extend((1..n_nodes).map(|i| (0, i)));
    }
    let extra = if star {
        rng.range(0, 1)
    } else {
        rng.range(0, 2 * n_nodes + 1)
    };
    links.extend((0..extra).map(|_| (rng.below(n_nodes + 1), rng.below(n_nodes + 1))));
    for (a, b) in links {
        let (kind, latency_ns, gbps) = if star && !rng.one_in(8) {
            let gbps = format!("{}.5", rng.below(500));
            ("nvlink", rng.below(1000).to_string(), gbps)
        } else {
            (*rng.pick(LINK_KINDS), rng.number(), float(rng))
        };
        out += &format!(
            "\n[[link]]\na = \"{}\"\nb = \"{}\"\nkind = \"{kind}\"\nlatency_ns = {latency_ns}\ngbps = {gbps}\n",
            name(a),
            name(b),
        );
    }
    out.into_bytes()
}

/// A TOML float for a bandwidth: plain, with a fraction, or extreme.
fn float(rng: &mut Rng) -> String {
    match rng.below(4) {
        0 => rng.number(),
        1 => format!("{}.{}", rng.below(1000), rng.below(1000)),
        2 => (*rng.pick(&["nan", "inf", "-inf", "1e300", "1e-300", "-1.0", "0.0"])).to_string(),
        _ => format!("{}.5", rng.below(500)),
    }
}
