//! The `rshmem` command line: clap's parser as the binary runs it (`tools::cli::parse`), then
//! the checks of its arguments that need no work (`tools::cli::preflight`: every topology it
//! names loads). Nothing is run.
//!
//! Seeds: every `rshmem ...` command line of README.md and docs/*.md. The generator reads
//! the commands and their options from the parser itself, so a new option is fuzzed without a
//! change here.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::Path;
use std::sync::OnceLock;

use clap::CommandFactory;

use sim::topology::LoadError;

use super::{Refusal, Target, error_class};
use crate::fuzz::rng::Rng;

pub(crate) static TARGET: Target = Target {
    name: "cli",
    corpus,
    generate,
    dictionary: &[&[
        "run",
        "check",
        "litmus",
        "bench",
        "calibrate",
        "info",
        "topo",
        "oshrun",
        "nvcc",
        "help",
        "--help",
        "-h",
        "--version",
        "-n",
        "--np",
        "--sim",
        "--pes",
        "--topology",
        "--seed",
        "--json",
        "--",
        "-",
        "--=",
        "-n2",
        "--np=2",
        "hgx8",
        "h200x2",
        "ib-2",
        "ib-0",
        "ib-1025",
        "ring",
        "hello",
        "put-bw",
        "nvshmem",
        "openshmem-1.5",
        "=",
    ]],
    separator: b'\0',
    run,
};

/// Values that options and positionals get besides their own possible values.
fn values() -> &'static [String] {
    static VALUES: OnceLock<Vec<String>> = OnceLock::new();
    VALUES.get_or_init(|| {
        let root = crate::tidy::repository_root();
        let file = |p: &str| root.join(p).display().to_string();
        let mut values: Vec<String> = [
            "h200x2",
            "hgx8",
            "ib-1",
            "ib-3",
            "ib-0",
            "ib-1025",
            "ib-",
            "ib-+2",
            "hello",
            "ring",
            "reduce",
            "put-bw",
            "flag-fence",
            "nope",
            "0",
            "1",
            "2",
            "8",
            "-1",
            "1m",
            "18446744073709551616",
            "",
            " ",
            "no/such/topology.toml",
            "/",
            "/dev/null",
            "/dev/zero",
            "./prog",
        ]
        .map(str::to_string)
        .to_vec();
        values.push(file("sim/topologies/pcie4.toml"));
        values.push(file("sim/topologies/h200x2.toml"));
        values.push(file("tests/litmus/catalogue/a1-mp-put-put.litmus"));
        values
    })
}

/// Each command with its options (as written on a command line) and whether each takes a
/// value, and the values it accepts if clap knows them.
struct Grammar {
    commands: Vec<(String, Vec<Opt>)>,
}

struct Opt {
    spellings: Vec<String>,
    takes_value: bool,
    possible: Vec<String>,
    positional: bool,
}

fn grammar() -> &'static Grammar {
    static GRAMMAR: OnceLock<Grammar> = OnceLock::new();
    GRAMMAR.get_or_init(|| {
        let mut cli = tools::cli::Cli::command();
        cli.build();
        let commands = cli
            .get_subcommands()
            .map(|command| {
                let opts = command
                    .get_arguments()
                    .map(|arg| {
                        let mut spellings: Vec<String> = arg
                            .get_long_and_visible_aliases()
                            .unwrap_or_default()
                            .iter()
                            .map(|l| format!("--{l}"))
                            .collect();
                        spellings.extend(arg.get_short().map(|s| format!("-{s}")));
                        Opt {
                            spellings,
                            takes_value: arg.get_action().takes_values(),
                            possible: arg
                                .get_possible_values()
                                .iter()
                                .map(|v| v.get_name().to_string())
                                .collect(),
                            positional: arg.is_positional(),
                        }
                    })
                    .collect();
                (command.get_name().to_string(), opts)
            })
            .collect();
        Grammar { commands }
    })
}

fn value(rng: &mut Rng, opt: &Opt) -> String {
    if !opt.possible.is_empty() && !rng.one_in(4) {
        return rng.pick(&opt.possible).clone();
    }
    if rng.one_in(3) {
        rng.number()
    } else {
        rng.pick(values()).clone()
    }
}

/// A command and some of its options, each with a value where it takes one.
fn generate(rng: &mut Rng) -> Vec<u8> {
    let grammar = grammar();
    let (name, opts) = rng.pick(&grammar.commands);
    let mut argv = vec![name.clone()];
    for _ in 0..rng.range(0, 5) {
        if opts.is_empty() {
            break;
        }
        let opt = rng.pick(opts);
        if opt.positional || opt.spellings.is_empty() {
            argv.push(value(rng, opt));
            continue;
        }
        let flag = rng.pick(&opt.spellings).clone();
        match (opt.takes_value, rng.below(4)) {
            (true, 0) if flag.starts_with("--") => argv.push(format!("{flag}={}", value(rng, opt))),
            (true, _) => argv.extend([flag, value(rng, opt)]),
            (false, _) => argv.push(flag),
        }
    }
    argv.join("\0").into_bytes()
}

/// The `rshmem ...` lines of README.md and docs/*.md, split into words.
fn corpus(root: &Path) -> anyhow::Result<Vec<Vec<u8>>> {
    let mut paths = vec![root.join("README.md")];
    let mut docs: Vec<_> = std::fs::read_dir(root.join("docs"))?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    docs.sort();
    paths.extend(
        docs.into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "md")),
    );
    let mut out = Vec::new();
    for path in paths {
        let text = std::fs::read_to_string(&path)?;
        for line in text.lines() {
            let line = line.trim_start().trim_start_matches("$ ");
            let Some(rest) = line.strip_prefix("rshmem ") else {
                continue;
            };
            let words: Vec<&str> = rest
                .split_whitespace()
                .take_while(|w| !matches!(*w, "#" | "|" | ">" | "&&" | "2>&1" | "\\"))
                .map(|w| w.trim_matches(|c| c == '\'' || c == '"' || c == '`'))
                .collect();
            if !words.is_empty() {
                out.push(words.join("\0").into_bytes());
            }
        }
    }
    Ok(out)
}

fn run(input: &[u8]) -> Result<(), Refusal> {
    let argv: Vec<OsString> = std::iter::once(OsString::from("rshmem"))
        // Empty arguments count: `--topology ''` is a command line too.
        .chain(
            input
                .split(|&b| b == TARGET.separator)
                .filter(|_| !input.is_empty())
                .map(|a| OsString::from_vec(a.to_vec())),
        )
        .collect();
    let cli = tools::cli::parse(argv).map_err(|e| Refusal {
        class: clap_class(&e),
        message: e.render().to_string(),
    })?;
    tools::cli::preflight(&cli).map_err(|e| Refusal {
        class: preflight_class(&e),
        message: format!("{e:#}"),
    })
}

/// clap's kind of error, and the option it is about where that is one of the grammar's
/// (`InvalidValue --pes <PES>`), not the user's text (an unknown argument).
fn clap_class(error: &clap::Error) -> String {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let about_an_option = matches!(
        error.kind(),
        ErrorKind::InvalidValue
            | ErrorKind::ValueValidation
            | ErrorKind::NoEquals
            | ErrorKind::TooFewValues
            | ErrorKind::TooManyValues
            | ErrorKind::WrongNumberOfValues
            | ErrorKind::ArgumentConflict
    );
    let arg = match error.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(arg)) if about_an_option => arg.as_str(),
        _ => "",
    };
    format!("clap {:?} {arg}", error.kind())
}

/// The loader's kind of error for a topology the command line names.
fn preflight_class(error: &anyhow::Error) -> String {
    match error.downcast_ref::<LoadError>() {
        Some(LoadError::Unknown { .. }) => "topology: unknown".to_string(),
        Some(LoadError::Io { source, .. }) => format!("topology: {:?}", source.kind()),
        Some(LoadError::NotAFile { .. }) => "topology: not a file".to_string(),
        Some(LoadError::File(e)) => format!("topology file: {}", error_class(&e.message)),
        None => error_class(&format!("{error:#}")),
    }
}
