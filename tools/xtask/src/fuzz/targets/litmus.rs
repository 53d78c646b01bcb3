//! The litmus parser (`model::litmus::parse`, docs/litmus-format.md).
//!
//! Seeds: every file of the catalogue (`tests/litmus/catalogue/*.litmus`).

use std::path::Path;

use anyhow::Context;

use model::litmus::ParseErrorKind;

use super::{Refusal, Target, error_class};
use crate::fuzz::rng::Rng;

pub(crate) static TARGET: Target = Target {
    name: "litmus",
    corpus,
    generate,
    // The parser's own keywords, then the rest of the format: names, configurations, operators.
    dictionary: &[
        model::litmus::KEYWORDS,
        &[
            "~exists",
            "SET",
            "ADD",
            "P0:",
            "P1:",
            "P7:",
            "P8:",
            "r0",
            "r15",
            "r16",
            "x@0",
            "y@1",
            "x@9",
            "nv-nvl",
            "nv-ib",
            "nv-mix(0|1)",
            "nv-mix(",
            "os",
            "always",
            "sometimes",
            "never",
            "(model)",
            "/\\",
            "\\/",
            "==",
            "!=",
            ">=",
            "<=",
            "~",
            "(",
            ")",
            "|",
            ";",
            "\"",
            "#",
            "@",
            ":",
            ",",
            "CTX",
            "\n",
        ],
    ],
    separator: b'\0',
    run,
};

fn corpus(root: &Path) -> anyhow::Result<Vec<Vec<u8>>> {
    let dir = root.join("tests/litmus/catalogue");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    // Sorted, so that the corpus (and every input after it) does not depend on the file system.
    paths.sort();
    paths
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "litmus"))
        .map(|p| std::fs::read(p).with_context(|| format!("reading {}", p.display())))
        .collect()
}

fn run(input: &[u8]) -> Result<(), Refusal> {
    let text = super::text(input)?;
    let test = model::litmus::parse("fuzz.litmus", text).map_err(|e| Refusal {
        class: litmus_class(&e.kind),
        message: e.to_string(),
    })?;
    // What every consumer of a parsed test asks first.
    test.observables();
    Ok(())
}

/// The error's variant, and for `Expected` what was expected (the grammar's words).
fn litmus_class(kind: &ParseErrorKind) -> String {
    match kind {
        ParseErrorKind::Expected { expected, .. } => format!("expected {}", error_class(expected)),
        other => {
            let debug = format!("{other:?}");
            debug
                .split(|c: char| !c.is_alphanumeric())
                .next()
                .unwrap_or_default()
                .to_string()
        }
    }
}

const VARS: &[&str] = &["x", "y", "f", "s", "data_1"];

/// A test of one to three PEs, a few instructions each, a condition and expectations.
fn generate(rng: &mut Rng) -> Vec<u8> {
    let n_pes = if rng.one_in(10) {
        rng.range(0, 10)
    } else {
        rng.range(1, 3)
    };
    let mut out = format!(
        "litmus T{}\nsource \"generated\"\npes {n_pes}\n",
        rng.below(100)
    );
    let pe = |rng: &mut Rng| {
        let beyond = usize::from(rng.one_in(10));
        rng.below(n_pes + beyond)
    };
    let loc = |rng: &mut Rng| format!("{}@{}", rng.pick(VARS), pe(rng));
    let reg = |rng: &mut Rng| format!("r{}", if rng.one_in(10) { 16 } else { rng.below(4) });
    let value = |rng: &mut Rng| {
        if rng.one_in(4) {
            reg(rng)
        } else {
            rng.number()
        }
    };
    if rng.one_in(2) {
        out += &format!(
            "init {} = {}; {} = {}\n",
            loc(rng),
            rng.number(),
            loc(rng),
            rng.number()
        );
    }
    for p in 0..n_pes {
        out += &format!("P{p}:\n");
        for _ in 0..rng.range(0, 5) {
            let ctx = if rng.one_in(5) { " ctx C" } else { "" };
            let line = match rng.below(12) {
                0 => format!("put {} = {}{ctx}", loc(rng), value(rng)),
                1 => format!("{} = get {}{ctx}", reg(rng), loc(rng)),
                2 => format!("{} = ld {}", reg(rng), rng.pick(VARS)),
                3 => format!("st {} = {}", rng.pick(VARS), value(rng)),
                4 => format!("add {} {}{ctx}", loc(rng), value(rng)),
                5 => format!(
                    "{} = fetch_add_nbi {} {}{ctx}",
                    reg(rng),
                    loc(rng),
                    value(rng)
                ),
                6 => format!(
                    "{} = compare_swap {} {} {}",
                    reg(rng),
                    loc(rng),
                    value(rng),
                    value(rng)
                ),
                7 => format!(
                    "put_signal {} = {}, s {} {}",
                    loc(rng),
                    value(rng),
                    rng.pick(&["SET", "ADD"]),
                    rng.number()
                ),
                8 => format!(
                    "wait {} {} {}",
                    rng.pick(VARS),
                    rng.pick(&["==", "!=", ">", ">=", "<", "<="]),
                    rng.number()
                ),
                9 => format!("{}{ctx}", rng.pick(&["fence", "quiet"])),
                10 => (*rng.pick(&["barrier_all", "sync_all"])).to_string(),
                _ => format!("{} = fetch_inc {}", reg(rng), loc(rng)),
            };
            out += &format!("  {line}\n");
        }
    }
    let quantifier = rng.pick(&["exists", "forall", "~exists"]);
    out += &format!("{quantifier} {}\n", prop(rng, n_pes, 3));
    for _ in 0..rng.range(0, 3) {
        let config = match rng.below(4) {
            0 => "nv-nvl".to_string(),
            1 => "nv-ib".to_string(),
            2 => "os".to_string(),
            _ => {
                let pes: Vec<String> = (0..n_pes).map(|p| p.to_string()).collect();
                format!(
                    "nv-mix({})",
                    pes.join(if rng.one_in(2) { "|" } else { " " })
                )
            }
        };
        let model = if rng.one_in(4) { " (model)" } else { "" };
        out += &format!(
            "expect {config} {}{model}\n",
            rng.pick(&["always", "sometimes", "never"])
        );
    }
    out.into_bytes()
}

/// A condition of at most `depth` levels of `/\`, `\/`, `~` and parentheses.
fn prop(rng: &mut Rng, n_pes: usize, depth: u32) -> String {
    if depth == 0 || rng.one_in(3) {
        let lhs = if rng.one_in(2) {
            format!("P{}:r{}", rng.below(n_pes.max(1)), rng.below(4))
        } else {
            format!("{}@{}", rng.pick(VARS), rng.below(n_pes.max(1)))
        };
        return format!(
            "{lhs} {} {}",
            rng.pick(&["==", "!=", ">", "<="]),
            rng.number()
        );
    }
    match rng.below(4) {
        0 => format!(
            "{} /\\ {}",
            prop(rng, n_pes, depth - 1),
            prop(rng, n_pes, depth - 1)
        ),
        1 => format!(
            "{} \\/ {}",
            prop(rng, n_pes, depth - 1),
            prop(rng, n_pes, depth - 1)
        ),
        2 => format!("~{}", prop(rng, n_pes, depth - 1)),
        _ => format!("({})", prop(rng, n_pes, depth - 1)),
    }
}
