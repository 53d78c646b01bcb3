//! Tests of the topology file reader: a good file, the shipped files, and an error at the
//! right line and column for each kind of mistake.

use hw::Pe;
use hw::topology::PathClass;

use crate::costs::{CopyTimes, Timing};

use super::*;
use crate::topology::{presets, shape};

const GOOD: &str = r#"
name = "pair"
[timing]
issue_ns = 25
local_gbps = 4300
transfer_ns = 40

[[node]]
name = "gpu0"
kind = "gpu"

[[node]]
name = "gpu1"
kind = "gpu"
host = 0

[[link]]
a = "gpu0"
b = "gpu1"
kind = "nvlink"
latency_ns = 450
gbps = 394.8
"#;

/// Parses `text` and returns the error, failing the test if it parses.
fn parse_err(text: &str) -> FileError {
    match parse(text, "topo.toml") {
        Ok(m) => panic!("expected an error, got topology {:?}", m.topology.name()),
        Err(e) => e,
    }
}

/// `GOOD` with `from` replaced by `to`, to make one mistake at a known place.
fn good_with(from: &str, to: &str) -> String {
    assert!(GOOD.contains(from), "{from:?} is not in GOOD");
    GOOD.replacen(from, to, 1)
}

/// The 1-based line of GOOD on which `needle` first appears.
fn line_of(text: &str, needle: &str) -> usize {
    let offset = text.find(needle).expect("needle present");
    text[..offset].matches('\n').count() + 1
}

#[test]
fn good_file_round_trips() {
    let Machine {
        topology: t,
        timing,
    } = parse(GOOD, "dir/pair-file.toml").unwrap();
    assert_eq!(t.name(), "pair");
    assert_eq!(t.n_gpus(), 2);
    assert_eq!(timing.issue_ns, 25);
    assert_eq!(timing.nic_ns, Timing::default().nic_ns);
    assert_eq!((timing.fence_ns, timing.transfer_ns), (0, 40));
    assert_eq!(t.local_bytes_per_s(), 4_300_000_000_000);
    let path = t.routes_from(Pe(0)).path_to(&t, Pe(1));
    assert_eq!(path.class, PathClass::LoadStore);
    assert_eq!(path.latency_ns, 450);
    assert_eq!(path.bandwidth_bytes_per_s, 394_800_000_000);
}

#[test]
fn calibrated_costs_and_copy_curves_are_read() {
    let text = good_with(
        "transfer_ns = 40\n",
        "transfer_ns = 40\nlaunch_ns = 2800\nlocal_access_ns = 400\nstartup_ns = 9\n\
         map_gbps = 50\n[timing.copy]\nwarp = [[1024, 190], [65536, 1640]]\n",
    );
    let timing = parse(&text, "t.toml").unwrap().timing;
    assert_eq!(
        (timing.launch_ns, timing.local_access_ns, timing.startup_ns),
        (2800, 400, 9)
    );
    assert_eq!(timing.map_bytes_per_s, 50_000_000_000);
    assert_eq!(timing.copy.warp.points(), &[(1024, 190), (65536, 1640)]);
    assert!(timing.copy.block.is_free() && timing.copy.engine.is_free());
    let defaults = parse(GOOD, "t.toml").unwrap().timing;
    assert_eq!(defaults.copy, CopyTimes::FREE);
    assert_eq!(defaults.map_bytes_per_s, 0);
    // A put-with-signal's release costs what a fence does unless the file says otherwise.
    let fenced = good_with("transfer_ns = 40\n", "transfer_ns = 40\nfence_ns = 900\n");
    let timing = parse(&fenced, "t.toml").unwrap().timing;
    assert_eq!((timing.fence_ns, timing.release_ns), (900, 900));
    let released = fenced.replacen("fence_ns = 900\n", "fence_ns = 900\nrelease_ns = 1100\n", 1);
    let timing = parse(&released, "t.toml").unwrap().timing;
    assert_eq!((timing.fence_ns, timing.release_ns), (900, 1100));
}

#[test]
fn malformed_copy_curves_are_rejected_naming_the_mover_and_the_point() {
    for (curve, says) in [
        (
            "warp = [[1024, 190], [512, 200]]",
            "point 1 (512 bytes, 200 ns)",
        ),
        (
            "warp = [[1024, 190], [2048, 100]]",
            "point 1 (2048 bytes, 100 ns)",
        ),
        ("warp = [[0, 1]]", "point 0 is of 0 bytes"),
        (
            "warp = [[1, 1], [2, 2], [3, 3], [4, 4], [5, 5], [6, 6], [7, 7], [8, 8], [9, 9]]",
            "at most 8 points",
        ),
    ] {
        let text = good_with(
            "transfer_ns = 40\n",
            &format!("transfer_ns = 40\n[timing.copy]\n{curve}\n"),
        );
        let err = parse_err(&text);
        assert_eq!(err.line, line_of(&text, "warp ="), "{curve}: {err}");
        assert!(err.message.starts_with("timing.copy.warp: "), "{err}");
        assert!(err.message.contains(says), "{curve}: {err}");
    }
    let text = good_with(
        "transfer_ns = 40\n",
        "transfer_ns = 40\n[timing.copy]\nwarps = [[1, 1]]\n",
    );
    assert!(parse_err(&text).message.contains("unknown field"), "warps");
    let text = good_with("transfer_ns = 40\n", "transfer_ns = 40\nmap_gbps = 0\n");
    assert!(parse_err(&text).message.contains("map_gbps"));
}

#[test]
fn name_defaults_to_the_file_stem() {
    let text = GOOD.replacen("name = \"pair\"\n", "", 1);
    assert_eq!(
        parse(&text, "dir/my-box.toml").unwrap().topology.name(),
        "my-box"
    );
}

#[test]
fn shipped_h200x2_file_equals_the_preset() {
    let text = include_str!("../../../topologies/h200x2.toml");
    let file = parse(text, "h200x2.toml").unwrap();
    let preset = presets::preset("h200x2").unwrap();
    assert_eq!(file.timing, preset.timing);
    let (file, preset) = (file.topology, preset.topology);
    assert_eq!(file.name(), preset.name());
    assert_eq!(shape(&file), shape(&preset));
    let (link, preset_link) = (
        file.link(hw::topology::LinkId(0)),
        preset.link(hw::topology::LinkId(0)),
    );
    assert_eq!(
        link.bandwidth_bytes_per_s,
        preset_link.bandwidth_bytes_per_s
    );
    assert_eq!(link.latency_ns, preset_link.latency_ns);
}

#[test]
fn shipped_pcie_box_routes_over_pcie() {
    let text = include_str!("../../../topologies/pcie4.toml");
    let t = parse(text, "pcie4.toml").unwrap().topology;
    assert_eq!(t.n_gpus(), 4);
    let routes = t.routes_from(Pe(0));
    for pe in 1..4 {
        let path = routes.path_to(&t, Pe(pe));
        assert_eq!(path.class, PathClass::LoadStore);
        assert!(
            path.hops
                .iter()
                .all(|h| t.link(h.link).kind == LinkKind::Pcie)
        );
    }
}

#[test]
fn documented_example_parses_and_routes_as_the_doc_says() {
    let doc = include_str!("../../../../docs/topology-format.md");
    let example = doc
        .find("## Complete example")
        .expect("the doc has a complete example");
    let start = example
        + doc[example..]
            .find("```toml\n")
            .expect("the example is toml")
        + 8;
    let len = doc[start..].find("```").expect("the example is closed");
    let t = parse(&doc[start..start + len], "topology-format.md")
        .unwrap()
        .topology;
    assert_eq!(t.name(), "two-by-two");
    let routes = t.routes_from(Pe(0));
    let nvlink = routes.path_to(&t, Pe(1));
    assert_eq!(
        (
            nvlink.class,
            nvlink.latency_ns,
            nvlink.bandwidth_bytes_per_s
        ),
        (PathClass::LoadStore, 450, 394_800_000_000)
    );
    let rdma = routes.path_to(&t, Pe(2));
    assert_eq!(
        (rdma.class, rdma.latency_ns, rdma.bandwidth_bytes_per_s),
        (PathClass::Rdma, 1500, 48_500_000_000)
    );
}

#[test]
fn syntax_error_names_its_line() {
    let text = good_with("kind = \"nvlink\"", "kind = nvlink");
    let err = parse_err(&text);
    assert_eq!(err.line, line_of(&text, "kind = nvlink"), "{err}");
    assert!(err.to_string().starts_with("topo.toml:"), "{err}");
}

#[test]
fn unknown_node_in_link_names_its_line_and_column() {
    let text = good_with("b = \"gpu1\"", "b = \"gpu9\"");
    let err = parse_err(&text);
    assert_eq!(err.line, line_of(&text, "b = \"gpu9\""));
    assert_eq!(err.column, 5);
    assert_eq!(
        err.to_string(),
        format!(
            "topo.toml:{}:5: unknown node \"gpu9\" in link; nodes are named in [[node]] tables",
            err.line
        )
    );
}

#[test]
fn unknown_kinds_are_rejected_where_they_are() {
    let text = good_with("kind = \"gpu\"\n\n[[node]]", "kind = \"gpux\"\n\n[[node]]");
    let err = parse_err(&text);
    assert_eq!(err.line, line_of(&text, "\"gpux\""));
    assert!(err.message.contains("unknown node kind \"gpux\""), "{err}");
    assert!(err.message.contains("pcie-switch"), "{err}");

    let text = good_with("\"nvlink\"", "\"nvlnk\"");
    let err = parse_err(&text);
    assert_eq!(err.line, line_of(&text, "\"nvlnk\""));
    assert!(err.message.contains("unknown link kind"), "{err}");
}

#[test]
fn zero_and_negative_bandwidths_are_rejected() {
    for bad in ["gbps = 0", "gbps = -3.5", "gbps = 0.0", "gbps = nan"] {
        let text = good_with("gbps = 394.8", bad);
        let err = parse_err(&text);
        assert_eq!(err.line, line_of(&text, bad), "{bad}: {err}");
        assert!(err.message.contains("positive"), "{err}");
    }
    let text = good_with("local_gbps = 4300", "local_gbps = 0");
    assert!(parse_err(&text).message.contains("local_gbps"));
}

#[test]
fn unreachable_gpus_are_reported_at_a_node() {
    let text = format!("{GOOD}\n[[node]]\nname = \"gpu2\"\nkind = \"gpu\"\n");
    let err = parse_err(&text);
    assert!(err.message.contains("no route"), "{err}");
    assert!(err.message.contains("gpu2"), "{err}");
    assert_eq!(err.line, line_of(&text, "\"gpu2\""));
}

#[test]
fn unknown_keys_are_rejected_where_they_are() {
    let text = good_with("latency_ns = 450", "latency_ns = 450\nlatency_us = 1");
    let err = parse_err(&text);
    assert!(err.message.contains("latency_us"), "{err}");
    assert_eq!(err.line, line_of(&text, "latency_us"), "{err}");

    let text = good_with("issue_ns = 25", "issue_ns = 25\npoll = 3");
    let err = parse_err(&text);
    assert_eq!(err.line, line_of(&text, "poll = 3"), "{err}");
}

#[test]
fn duplicates_and_self_links_are_rejected() {
    let text = good_with("name = \"gpu1\"", "name = \"gpu0\"");
    let err = parse_err(&text);
    assert!(
        err.message.contains("two nodes are named \"gpu0\""),
        "{err}"
    );
    assert_eq!(
        err.line,
        line_of(&text, "name = \"gpu0\"\nkind = \"gpu\"\nhost")
    );

    let text = format!(
        "{GOOD}\n[[link]]\na = \"gpu1\"\nb = \"gpu0\"\nkind = \"nvlink\"\n\
         latency_ns = 1\ngbps = 1\n"
    );
    let err = parse_err(&text);
    assert!(err.message.contains("already linked"), "{err}");

    let text = good_with("b = \"gpu1\"", "b = \"gpu0\"");
    assert!(parse_err(&text).message.contains("itself"));
}

#[test]
fn host_and_tier_only_where_they_apply() {
    let text = good_with("host = 0", "tier = 1");
    let err = parse_err(&text);
    assert!(err.message.contains("tier"), "{err}");
    assert_eq!(err.line, line_of(&text, "tier = 1"));
}

#[test]
fn no_gpu_is_an_error_at_line_one() {
    let err = parse_err("[[node]]\nname = \"s\"\nkind = \"nvswitch\"\n");
    assert_eq!((err.line, err.column), (1, 1));
    assert!(err.message.contains("no GPU"), "{err}");
}

#[test]
fn columns_count_characters() {
    assert_eq!(line_column("ab\ncé d", 7), (2, 4));
    assert_eq!(line_column("x", 99), (1, 2));
}
