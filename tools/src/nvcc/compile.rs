//! Compiling one input to one object: a `.cu` file by clang's two CUDA passes (host pass,
//! device pass, IR rewrite, x86 compile, both objects joined by `ld -r` so that `-c` then a
//! link works as with nvcc); a `.c`/`.cpp` file by clang for the host.

use std::path::Path;

use anyhow::Context;

use super::args::{InputKind, Options};
use super::toolchain::{Scratch, Toolchain};
use super::{ir, ir_module};

/// The CUDA ABI names clang's host pass calls, which rshmem-nvcc renames to libshmem's
/// `__rsim_` names (rshmem/cuda_sim_abi.h), so that libshmem never exports a CUDA name.
const CUDA_ABI_NAMES: [&str; 8] = [
    "cudaLaunchKernel",
    "__cudaPushCallConfiguration",
    "__cudaPopCallConfiguration",
    "__cudaRegisterFatBinary",
    "__cudaRegisterFatBinaryEnd",
    "__cudaUnregisterFatBinary",
    "__cudaRegisterFunction",
    "__cudaRegisterVar",
];

/// Flags of both CUDA passes: clang's CUDA front end without CUDA's headers and libraries,
/// the new launch ABI (SDK 11.0), the sim's pre-included `cuda_runtime.h`.
fn cuda_flags(tc: &Toolchain, o: &Options) -> Vec<String> {
    let mut flags: Vec<String> = [
        "-x",
        "cuda",
        "-nocudainc",
        "-nocudalib",
        "-Xclang",
        "-fcuda-allow-variadic-functions",
        "-Xclang",
        "-target-sdk-version=11.0",
        "-Wno-unknown-cuda-version",
        "-DRSHMEM_CUDA_SIM",
    ]
    .map(String::from)
    .to_vec();
    flags.extend(tc.include_dirs.iter().map(|d| format!("-I{}", d.display())));
    flags.extend(["-include".into(), "cuda_runtime.h".into()]);
    flags.extend(o.preprocessor.iter().cloned());
    flags.extend(o.codegen.iter().cloned());
    flags
}

/// The undefined symbols of the object `path` (`nm -u`).
fn undefined_symbols(tc: &Toolchain, path: &Path) -> anyhow::Result<Vec<String>> {
    let out = tc.run("nm", &["-u".into(), path.display().to_string()])?;
    Ok(String::from_utf8_lossy(&out)
        .lines()
        .filter_map(|l| l.split_whitespace().last().map(str::to_string))
        .collect())
}

/// The global symbols that the object `path` defines (`nm -g --defined-only`).
fn defined_symbols(tc: &Toolchain, path: &Path) -> anyhow::Result<Vec<String>> {
    let out = tc.run(
        "nm",
        &[
            "-g".into(),
            "--defined-only".into(),
            path.display().to_string(),
        ],
    )?;
    Ok(String::from_utf8_lossy(&out)
        .lines()
        .filter_map(|l| l.split_whitespace().last().map(str::to_string))
        .collect())
}

/// Makes local the symbols of the device object `device` that the host object `host` defines
/// too (host-and-device functions, emitted by both passes), so that the linker never picks the
/// device copy for a host call; the device functions left global are the device code's own,
/// which other files' device code calls with `-rdc=true`.
fn localize_host_definitions(tc: &Toolchain, host: &Path, device: &Path) -> anyhow::Result<()> {
    let host_defined = defined_symbols(tc, host)?;
    let mut args: Vec<String> = defined_symbols(tc, device)?
        .into_iter()
        .filter(|s| host_defined.contains(s))
        .map(|s| format!("--localize-symbol={s}"))
        .collect();
    if !args.is_empty() {
        args.push(device.display().to_string());
        tc.run("objcopy", &args)?;
    }
    Ok(())
}

/// Makes global the host shadows (in `host`) of the device variables of external linkage that
/// the device object `device` defines for other files (`-rdc=true`): clang's host pass gives
/// every shadow internal linkage, but another file's host code names the variable too
/// (`cudaMemcpyToSymbol(counter, ...)` after `extern __device__ int counter;`), and the shadow
/// is what `cudaMemcpyToSymbol` is passed.
fn globalize_shadows(tc: &Toolchain, host: &Path, device: &Path) -> anyhow::Result<()> {
    let mut args: Vec<String> = defined_symbols(tc, device)?
        .iter()
        .filter_map(|s| ir_module::host_shadow_of(s))
        .map(|s| format!("--globalize-symbol={s}"))
        .collect();
    if !args.is_empty() {
        args.push(host.display().to_string());
        tc.run("objcopy", &args)?;
    }
    Ok(())
}

/// Renames the undefined symbols of `path` that `rename` maps, in place (`objcopy`). Only
/// undefined ones: a program that defines one of the names keeps its own.
fn rename_undefined(
    tc: &Toolchain,
    path: &Path,
    rename: impl Fn(&str) -> Option<String>,
) -> anyhow::Result<()> {
    let mut args = Vec::new();
    for symbol in undefined_symbols(tc, path)? {
        if let Some(to) = rename(&symbol) {
            args.push(format!("--redefine-sym={symbol}={to}"));
        }
    }
    if !args.is_empty() {
        args.push(path.display().to_string());
        tc.run("objcopy", &args)?;
    }
    Ok(())
}

/// Compiles `input` (of `kind`) to the object `object`.
///
/// # Errors
/// A compiler error (its text), an IR rewrite error, or a tool that fails.
pub(crate) fn compile(
    tc: &Toolchain,
    o: &Options,
    input: &Path,
    kind: InputKind,
    object: &Path,
    scratch: &Scratch,
) -> anyhow::Result<()> {
    match kind {
        InputKind::Cuda => compile_cuda(tc, o, input, object, scratch),
        InputKind::C | InputKind::Cxx => {
            let mut args: Vec<String> = tc
                .include_dirs
                .iter()
                .map(|d| format!("-I{}", d.display()))
                .collect();
            args.push("-DRSHMEM_CUDA_SIM".into());
            args.extend(o.preprocessor.iter().cloned());
            args.extend(o.codegen.iter().cloned());
            args.extend(o.host_flags.iter().cloned());
            if o.check {
                args.push("-fsanitize=thread".into());
            }
            args.extend([
                "-fPIE".into(),
                "-c".into(),
                input.display().to_string(),
                "-o".into(),
                object.display().to_string(),
            ]);
            let compiler = if kind == InputKind::C {
                &tc.clang
            } else {
                &tc.clangxx
            };
            tc.run(compiler, &args).map(drop)
        }
        InputKind::Link => Ok(()),
    }
}

/// The two passes of one `.cu` file.
fn compile_cuda(
    tc: &Toolchain,
    o: &Options,
    input: &Path,
    object: &Path,
    scratch: &Scratch,
) -> anyhow::Result<()> {
    let stem = object
        .file_stem()
        .map_or("out".into(), |s| s.to_string_lossy().into_owned());
    let (empty, host, device_ll, device_x86, device) = (
        scratch.file("empty.fatbin"),
        scratch.file(&format!("{stem}.host.o")),
        scratch.file(&format!("{stem}.nvptx.ll")),
        scratch.file(&format!("{stem}.x86.ll")),
        scratch.file(&format!("{stem}.device.o")),
    );
    std::fs::write(&empty, b"").with_context(|| format!("cannot write {}", empty.display()))?;
    let source = input.display().to_string();

    // Host pass: `<<<>>>` lowered to the launch ABI, registration of kernels and variables.
    let mut host_args = cuda_flags(tc, o);
    host_args.extend(o.host_flags.iter().cloned());
    host_args.extend(
        [
            "--cuda-host-only",
            "-Xclang",
            "-fcuda-include-gpubinary",
            "-Xclang",
        ]
        .map(String::from),
    );
    host_args.push(empty.display().to_string());
    if o.check {
        host_args.push("-fsanitize=thread".into());
    }
    host_args.extend([
        "-fPIE".into(),
        "-c".into(),
        source.clone(),
        "-o".into(),
        host.display().to_string(),
    ]);
    tc.run(&tc.clangxx, &host_args)?;
    rename_undefined(tc, &host, |s| {
        CUDA_ABI_NAMES.contains(&s).then(|| format!("__rsim_{s}"))
    })?;

    // Device pass: NVPTX IR at -O1 (the user's -O applies to the x86 compile), with line
    // tables so that refused constructs are named by file and line.
    let mut device_args = cuda_flags(tc, o);
    device_args.extend(
        [
            "--cuda-device-only",
            "--cuda-gpu-arch=sm_80",
            "-S",
            "-emit-llvm",
            "-O1",
        ]
        .map(String::from),
    );
    if !o.codegen.iter().any(|f| f == "-g") {
        device_args.push("-gline-tables-only".into());
    }
    device_args.extend([source.clone(), "-o".into(), device_ll.display().to_string()]);
    tc.run(&tc.clangxx, &device_args)?;
    let nvptx = std::fs::read_to_string(&device_ll)
        .with_context(|| format!("cannot read {}", device_ll.display()))?;
    let x86 = ir::rewrite(
        &nvptx,
        &ir::Options {
            check: o.check,
            source: source.clone(),
            rdc: o.rdc,
        },
    )?;
    std::fs::write(&device_x86, x86)
        .with_context(|| format!("cannot write {}", device_x86.display()))?;
    let mut compile_args: Vec<String> = ["-O2", "-c", "-x", "ir", "-fPIE", "-Wno-override-module"]
        .map(String::from)
        .to_vec();
    if o.check {
        compile_args.push("-fsanitize=thread".into());
    }
    compile_args.extend([
        device_x86.display().to_string(),
        "-o".into(),
        device.display().to_string(),
    ]);
    if let Err(err) = tc.run(&tc.clang, &compile_args) {
        let kept = object.with_extension("rsim.ll");
        let _ = std::fs::copy(&device_x86, &kept);
        return Err(err.context(format!(
            "{source}: the rewritten device code did not compile (kept in {}); please report it",
            kept.display()
        )));
    }
    if o.rdc {
        localize_host_definitions(tc, &host, &device)?;
        globalize_shadows(tc, &host, &device)?;
    }
    if o.check {
        // The device code's hooks are the emulator's, apart from the host program's.
        rename_undefined(tc, &device, |s| {
            s.strip_prefix("__tsan_")
                .map(|rest| format!("__rsim_tsan_{rest}"))
        })?;
    }
    tc.run(
        "ld",
        &[
            "-r".into(),
            host.display().to_string(),
            device.display().to_string(),
            "-o".into(),
            object.display().to_string(),
        ],
    )
    .map(drop)
}
