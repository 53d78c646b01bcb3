//! Writes a machine in the TOML file format that [`super::file::parse`] reads
//! (`docs/topology-format.md`), so that a machine built or changed in code, such as one
//! `rshmem calibrate` fitted, can be kept as a file.

use std::fmt::{self, Write};

use hw::topology::{LinkId, NodeKind};

use super::Machine;

/// The file text of `machine`: its name, every timing key, its nodes in graph order (so PEs
/// keep their numbers) and its links. Parsing the text gives the same machine back, except
/// that bandwidths go through decimal GB/s and come back to the nearest byte per second.
pub fn to_toml(machine: &Machine) -> String {
    let mut out = String::new();
    write_toml(&mut out, machine).expect("writing to a String cannot fail");
    out
}

fn write_toml(out: &mut String, machine: &Machine) -> fmt::Result {
    let Machine { topology, timing } = machine;
    writeln!(out, "name = {}", string(topology.name()))?;
    writeln!(out, "\n[timing]")?;
    writeln!(out, "issue_ns = {}", timing.issue_ns)?;
    writeln!(out, "nic_ns = {}", timing.nic_ns)?;
    writeln!(out, "poll_ns = {}", timing.poll_ns)?;
    writeln!(out, "local_gbps = {}", gbps(topology.local_bytes_per_s()))?;
    writeln!(out, "fence_ns = {}", timing.fence_ns)?;
    writeln!(out, "release_ns = {}", timing.release_ns)?;
    writeln!(out, "transfer_ns = {}", timing.transfer_ns)?;
    writeln!(out, "launch_ns = {}", timing.launch_ns)?;
    writeln!(out, "local_access_ns = {}", timing.local_access_ns)?;
    writeln!(out, "startup_ns = {}", timing.startup_ns)?;
    if timing.map_bytes_per_s > 0 {
        writeln!(out, "map_gbps = {}", gbps(timing.map_bytes_per_s))?;
    }
    let movers = timing.copy.named();
    if movers.iter().any(|(_, curve)| !curve.is_free()) {
        writeln!(out, "\n[timing.copy]")?;
        writeln!(out, "# Each mover's time per put: [bytes, ns] points.")?;
        for (key, curve) in movers.iter().filter(|(_, curve)| !curve.is_free()) {
            let points: Vec<String> = curve
                .points()
                .iter()
                .map(|(bytes, ns)| format!("[{bytes}, {ns}]"))
                .collect();
            writeln!(out, "{key} = [{}]", points.join(", "))?;
        }
    }
    for node in topology.graph().node_weights() {
        writeln!(out, "\n[[node]]")?;
        writeln!(out, "name = {}", string(&node.name))?;
        writeln!(out, "kind = {}", string(node.kind.word()))?;
        match node.kind {
            NodeKind::Gpu { host }
            | NodeKind::NvSwitch { host }
            | NodeKind::PcieSwitch { host }
            | NodeKind::Nic { host } => writeln!(out, "host = {host}")?,
            NodeKind::IbSwitch { tier } => writeln!(out, "tier = {tier}")?,
        }
    }
    for id in (0..topology.n_links()).map(LinkId) {
        let (a, b) = topology.link_ends(id);
        let link = topology.link(id);
        writeln!(out, "\n[[link]]")?;
        writeln!(out, "a = {}", string(a))?;
        writeln!(out, "b = {}", string(b))?;
        writeln!(out, "kind = {}", string(link.kind.word()))?;
        writeln!(out, "latency_ns = {}", link.latency_ns)?;
        writeln!(out, "gbps = {}", gbps(link.bandwidth_bytes_per_s))?;
    }
    Ok(())
}

/// A TOML string, quoted and escaped.
fn string(text: &str) -> String {
    toml::Value::String(text.to_string()).to_string()
}

/// Bytes per second as a TOML float of GB/s: the shortest decimal that reads back as the
/// same `f64`, so the parser's rounding returns the same whole bytes per second.
fn gbps(bytes_per_s: u64) -> String {
    toml::Value::Float(bytes_per_s as f64 / 1e9).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::{file, presets, shape};

    #[test]
    fn presets_and_shipped_files_round_trip() {
        let shipped = concat!(env!("CARGO_MANIFEST_DIR"), "/topologies/pcie4.toml");
        let mut machines: Vec<Machine> = ["h200x2", "hgx8", "ib-2"]
            .iter()
            .map(|name| presets::preset(name).unwrap())
            .collect();
        machines.push(crate::topology::load(shipped).unwrap());
        for original in machines {
            let text = to_toml(&original);
            let back = file::parse(&text, "written.toml").unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(back.topology.name(), original.topology.name());
            assert_eq!(back.timing, original.timing);
            assert_eq!(
                back.topology.local_bytes_per_s(),
                original.topology.local_bytes_per_s()
            );
            assert_eq!(shape(&back.topology), shape(&original.topology), "{text}");
        }
    }

    #[test]
    fn odd_names_are_quoted() {
        let mut b = hw::topology::TopologyBuilder::new("a \"box\"");
        b.node("gpu \\ 0", NodeKind::Gpu { host: 3 });
        let t = Machine::from(b.build().unwrap());
        let back = file::parse(&to_toml(&t), "odd.toml").unwrap();
        assert_eq!(back.topology.name(), "a \"box\"");
        assert_eq!(shape(&back.topology), shape(&t.topology));
    }
}
