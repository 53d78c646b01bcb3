//! `rshmem nvcc ARGS` (and `tools/osh/bin/rshmem-nvcc`, which execs it): nvcc's command line
//! for the simulator. A `.cu` program is compiled by clang 14's CUDA front end in two passes
//! and linked with libshmem, which emulates CUDA on the CPU (each GPU thread a coroutine of its
//! simulated PE); `rshmem run -n N ./prog` or `oshrun -np N --sim hgx8 ./prog` runs it.
//!
//! The pieces: [`args`] parses nvcc's options, [`compile`] turns each input into an object,
//! [`ir`] (with [`ir_module`], [`ir_builtins`], [`ir_syntax`]) rewrites the device IR, and
//! [`link`] links the program. docs/cuda-sim.md describes the design.

mod args;
mod compile;
mod ir;
mod ir_builtins;
mod ir_module;
mod ir_syntax;
mod link;
mod toolchain;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;

use self::args::{Info, InputKind};
use self::toolchain::{Scratch, Toolchain};

/// `rshmem nvcc`'s arguments: everything, parsed by [`args::parse`].
#[derive(Args, Debug)]
#[command(disable_help_flag = true, disable_version_flag = true)]
pub(crate) struct NvccArgs {
    /// nvcc's options and input files (`rshmem nvcc --help`).
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "ARGS"
    )]
    args: Vec<String>,
}

/// `rshmem nvcc --help`.
const HELP: &str = "\
rshmem-nvcc: build a CUDA program for rshmem's simulator (nvcc's command line).

Usage: rshmem-nvcc [OPTIONS] FILE.cu [FILE.cpp FILE.o ...] [-o PROG]

Each .cu file is compiled by clang 14's CUDA front end twice: a host pass (`k<<<g, b>>>(...)`
becomes a launch by libshmem's CUDA emulation) and a device pass for sm_80 whose IR is rewritten
for x86-64, each GPU thread a coroutine of its simulated PE. .c/.cpp/.cc files are compiled for
the host; .o/.a/.so files are linked. The program links with libshmem; run it with
`rshmem run -n N ./prog` or `oshrun -np N --sim hgx8 ./prog`.

  -o FILE             the program (default a.out) or, with -c, the object
  -c, -dc             compile to objects, do not link (-dc: with -rdc=true)
  -I DIR, -D M[=V], -U M, -isystem DIR, -include FILE
  -O0..-O3, -g, -G, -std=c++NN, -w
  -Xcompiler A,B      host compiler options;  -Xlinker A,B  linker options
  -l LIB, -L DIR      libraries (-lnvshmem, -lcuda, -lcudart: libshmem has them, dropped)
  -x cu               treat the following inputs as CUDA
  -rdc=true|false     relocatable device code: kernels and host code use `extern __device__`
                      functions and variables of other .cu files
  -rshmem-check       build for the race detector (`rshmem check`): host and device accesses
  -v                  print each command
  --version, --help

Accepted and ignored (they matter on a GPU only): -arch/--gpu-architecture, -code, -gencode,
-ccbin, -Xptxas, -maxrregcount, --expt-*, -lineinfo, -use_fast_math, -m64.
Needs clang-14 and llvm-14 (apt-get install clang-14 llvm-14). See docs/cuda-sim.md.
";

/// Runs `rshmem nvcc`.
///
/// # Errors
/// Bad options, a compile or link error, or a missing tool; each names the problem.
pub(crate) fn main(args: NvccArgs) -> anyhow::Result<ExitCode> {
    let o = args::parse(args.args)?;
    match o.info {
        Some(Info::Help) => {
            print!("{HELP}");
            return Ok(ExitCode::SUCCESS);
        }
        Some(Info::Version) => {
            println!(
                "rshmem-nvcc {} (CUDA 11.0 language, sm_80, for rshmem's simulator; clang 14)",
                env!("CARGO_PKG_VERSION")
            );
            return Ok(ExitCode::SUCCESS);
        }
        None => {}
    }
    let tc = Toolchain::find(o.verbose)?;
    let scratch = Scratch::new()?;
    let mut objects: Vec<PathBuf> = Vec::new();
    for (n, input) in o.inputs.iter().enumerate() {
        if input.kind == InputKind::Link {
            objects.push(input.path.clone());
            continue;
        }
        let object = match (&o.output, o.compile_only) {
            (Some(out), true) => out.clone(),
            (None, true) => object_name(&input.path),
            (_, false) => scratch.file(&format!("{n}.o")),
        };
        compile::compile(&tc, &o, &input.path, input.kind, &object, &scratch)?;
        objects.push(object);
    }
    if !o.compile_only {
        let output = o.output.clone().unwrap_or_else(|| PathBuf::from("a.out"));
        link::link(&tc, &o, &objects, &output)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `dir/k.cu` compiled with `-c` and no `-o` is `k.o` in the current directory, as with nvcc.
fn object_name(input: &Path) -> PathBuf {
    let stem = input
        .file_stem()
        .map_or("out".into(), |s| s.to_string_lossy().into_owned());
    PathBuf::from(format!("{stem}.o"))
}
