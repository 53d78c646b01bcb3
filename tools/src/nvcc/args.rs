//! `rshmem nvcc`'s command line: nvcc's common options, parsed by hand (nvcc spells options
//! `-rdc=true`, `-Xcompiler A,B`, `-gencode arch=..,code=..`, which clang-style parsers do not
//! take), into [`Options`].
//!
//! Options that matter on a GPU only (architectures, ptxas, register limits) are accepted and
//! ignored; libraries that libshmem stands in for (`-lnvshmem`, `-lcudart`, ...) are dropped;
//! an option that is not known is an error naming it, never passed on or dropped silently.

use std::path::PathBuf;

use anyhow::bail;

/// What a source or object is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum InputKind {
    /// A `.cu` file (or any file after `-x cu`): both passes.
    Cuda,
    /// A C file: the host's C compiler.
    C,
    /// A C++ file: the host's C++ compiler.
    Cxx,
    /// An object, archive or shared library: passed to the linker.
    Link,
}

/// One input file.
#[derive(Clone, Debug)]
pub(crate) struct Input {
    pub(crate) path: PathBuf,
    pub(crate) kind: InputKind,
}

/// A parsed command line.
#[derive(Clone, Debug, Default)]
pub(crate) struct Options {
    pub(crate) inputs: Vec<Input>,
    pub(crate) output: Option<PathBuf>,
    /// `-c` or `-dc`: objects, no link.
    pub(crate) compile_only: bool,
    /// `-rdc=true` or `-dc`.
    pub(crate) rdc: bool,
    /// `-I`, `-D`, `-U`, `-isystem`, `-include` for both passes.
    pub(crate) preprocessor: Vec<String>,
    /// `-O*`, `-g`, `-std=`, `-w`: for both passes and the host compiler.
    pub(crate) codegen: Vec<String>,
    /// `-Xcompiler` flags: for the host pass and host compilations.
    pub(crate) host_flags: Vec<String>,
    /// `-l`, `-L`, `-Xlinker`: for the link.
    pub(crate) link_flags: Vec<String>,
    /// `-rshmem-check`: build for the race detector.
    pub(crate) check: bool,
    /// `-v`: print each command before running it.
    pub(crate) verbose: bool,
    /// `--version` or `--help`.
    pub(crate) info: Option<Info>,
}

/// An option that prints and exits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Info {
    Version,
    Help,
}

/// Libraries libshmem stands in for. Not `-lmpi`: the simulator serves the MPI calls of a
/// program linked with Open MPI (docs/c-api.md, "MPI programs on the simulator").
const DROPPED_LIBRARIES: [&str; 8] = [
    "nvshmem",
    "nvshmem_host",
    "nvshmem_device",
    "cuda",
    "cudart",
    "cudart_static",
    "cudadevrt",
    "nvidia-ml",
];

/// Flags of no value that only matter on a GPU or to nvcc's diagnostics, or that let nvcc
/// accept what rshmem-nvcc always accepts (`__device__` lambdas, constexpr host functions in
/// device code): accepted, ignored.
const IGNORED_FLAGS: [&str; 18] = [
    "--extended-lambda",
    "-extended-lambda",
    "--expt-extended-lambda",
    "-expt-extended-lambda",
    "--expt-relaxed-constexpr",
    "-expt-relaxed-constexpr",
    "-lineinfo",
    "--generate-line-info",
    "-use_fast_math",
    "--use_fast_math",
    "-m64",
    "--resource-usage",
    "-Wno-deprecated-gpu-targets",
    "-Wno-deprecated-declarations",
    "--keep",
    "-src-in-ptx",
    "--extensible-whole-program",
    "-ewp",
];

/// Options of one value that only matter on a GPU: accepted with their value, ignored.
const IGNORED_WITH_VALUE: [&str; 14] = [
    "-arch",
    "--gpu-architecture",
    "-code",
    "--gpu-code",
    "-gencode",
    "--generate-code",
    "-ccbin",
    "--compiler-bindir",
    "-Xptxas",
    "--ptxas-options",
    "-maxrregcount",
    "--maxrregcount",
    "-Xnvlink",
    "--diag-suppress",
];

/// The kind of `path` by its extension; `None` when nvcc would not know it either.
fn kind_of(path: &str) -> Option<InputKind> {
    let ext = path.rsplit_once('.').map(|(_, e)| e)?;
    match ext {
        "cu" => Some(InputKind::Cuda),
        "c" => Some(InputKind::C),
        "cpp" | "cc" | "cxx" | "C" | "c++" => Some(InputKind::Cxx),
        "o" | "a" | "so" => Some(InputKind::Link),
        _ if path.contains(".so.") => Some(InputKind::Link),
        _ => None,
    }
}

/// Splits `-opt=value`, `-opt value` and (for one-letter options) `-Ovalue` forms: the value
/// of `name` if `arg` is that option, taking the next argument when it is separate.
fn value_of(
    name: &str,
    arg: &str,
    rest: &mut impl Iterator<Item = String>,
) -> anyhow::Result<Option<String>> {
    if arg == name {
        return match rest.next() {
            Some(v) => Ok(Some(v)),
            None => bail!("{name} needs a value: {name} VALUE (or {name}=VALUE)"),
        };
    }
    if let Some(v) = arg.strip_prefix(name).and_then(|r| r.strip_prefix('=')) {
        return Ok(Some(v.to_string()));
    }
    Ok(None)
}

/// Parses nvcc's arguments.
///
/// # Errors
/// An unknown option (naming it and what to do), a missing value, `-x` of a language other
/// than `cu`, an input whose kind is unknown, or no input.
pub(crate) fn parse(args: Vec<String>) -> anyhow::Result<Options> {
    let mut o = Options::default();
    let mut force_cuda = false;
    let mut it = args.into_iter();
    while let Some(arg) = it.next() {
        let a = arg.as_str();
        if let Some(v) = value_of("-o", a, &mut it)?.or(value_of("--output-file", a, &mut it)?) {
            o.output = Some(v.into());
        } else if let Some(v) = value_of("-x", a, &mut it)?.or(value_of("--x", a, &mut it)?) {
            match v.as_str() {
                "cu" => force_cuda = true,
                "none" => force_cuda = false,
                other => bail!(
                    "-x {other}: rshmem-nvcc compiles `-x cu` only; name C and C++ files .c and .cpp"
                ),
            }
        } else if let Some(v) =
            value_of("-rdc", a, &mut it)?.or(value_of("--relocatable-device-code", a, &mut it)?)
        {
            o.rdc = match v.as_str() {
                "true" => true,
                "false" => false,
                other => bail!("-rdc={other}: the value is true or false"),
            };
        } else if let Some(v) =
            value_of("-Xcompiler", a, &mut it)?.or(value_of("--compiler-options", a, &mut it)?)
        {
            o.host_flags
                .extend(v.split(',').filter(|f| !f.is_empty()).map(str::to_string));
        } else if let Some(v) =
            value_of("-Xlinker", a, &mut it)?.or(value_of("--linker-options", a, &mut it)?)
        {
            o.link_flags
                .extend(v.split(',').map(|f| format!("-Wl,{f}")));
        } else if let Some(v) = value_of("-std", a, &mut it)?.or(value_of("--std", a, &mut it)?) {
            o.codegen.push(format!("-std={v}"));
        } else if IGNORED_WITH_VALUE
            .iter()
            .any(|name| value_of(name, a, &mut it).is_ok_and(|v| v.is_some()))
        {
            // Consumed by value_of; nothing to keep.
        } else if a == "-c" || a == "--compile" {
            o.compile_only = true;
        } else if a == "-dc" || a == "--device-c" {
            o.compile_only = true;
            o.rdc = true;
        } else if a == "-g" || a == "-G" || a == "--debug" || a == "--device-debug" {
            o.codegen.push("-g".into());
        } else if a == "-w" || a == "--disable-warnings" {
            o.codegen.push("-w".into());
        } else if a == "-v" || a == "--verbose" {
            o.verbose = true;
        } else if a == "-rshmem-check" {
            o.check = true;
        } else if a == "--version" || a == "-V" {
            o.info = Some(Info::Version);
        } else if a == "--help" || a == "-h" {
            o.info = Some(Info::Help);
        } else if a.starts_with("--expt-") || IGNORED_FLAGS.contains(&a) {
        } else if let Some(level) = a.strip_prefix("-O") {
            o.codegen.push(format!("-O{level}"));
        } else if let Some(dir) = one_letter("-I", a, &mut it)? {
            o.preprocessor.push(format!("-I{dir}"));
        } else if let Some(def) = one_letter("-D", a, &mut it)? {
            o.preprocessor.push(format!("-D{def}"));
        } else if let Some(def) = one_letter("-U", a, &mut it)? {
            o.preprocessor.push(format!("-U{def}"));
        } else if let Some(dir) = value_of("-isystem", a, &mut it)? {
            o.preprocessor.extend(["-isystem".to_string(), dir]);
        } else if let Some(file) = value_of("-include", a, &mut it)? {
            o.preprocessor.extend(["-include".to_string(), file]);
        } else if let Some(dir) = one_letter("-L", a, &mut it)? {
            o.link_flags.push(format!("-L{dir}"));
        } else if let Some(lib) = one_letter("-l", a, &mut it)? {
            if !DROPPED_LIBRARIES.contains(&lib.as_str()) {
                o.link_flags.push(format!("-l{lib}"));
            }
        } else if a.starts_with('-') {
            bail!(
                "unknown option {a}: rshmem-nvcc takes nvcc's common options (rshmem nvcc --help \
                 lists them); pass host compiler options with -Xcompiler {a}, linker options \
                 with -Xlinker"
            );
        } else {
            let kind = if force_cuda {
                Some(InputKind::Cuda)
            } else {
                kind_of(a)
            };
            let Some(kind) = kind else {
                bail!(
                    "{a}: unknown kind of input; rshmem-nvcc takes .cu, .c, .cpp/.cc/.cxx, .o, .a and .so files (or -x cu FILE)"
                );
            };
            o.inputs.push(Input {
                path: arg.into(),
                kind,
            });
        }
    }
    if o.info.is_none() && o.inputs.is_empty() {
        bail!("no input files: rshmem-nvcc [OPTIONS] FILE.cu ... (rshmem nvcc --help)");
    }
    if o.compile_only && o.output.is_some() && o.inputs.len() > 1 {
        bail!(
            "-o with -c names one object, but there are {} inputs: compile them one by one",
            o.inputs.len()
        );
    }
    Ok(o)
}

/// A one-letter option's value, joined (`-Ifoo`) or separate (`-I foo`).
fn one_letter(
    name: &str,
    arg: &str,
    rest: &mut impl Iterator<Item = String>,
) -> anyhow::Result<Option<String>> {
    if arg == name {
        return match rest.next() {
            Some(v) => Ok(Some(v)),
            None => bail!("{name} needs a value"),
        };
    }
    Ok(arg
        .strip_prefix(name)
        .filter(|v| !v.is_empty())
        .map(str::to_string))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_words(words: &str) -> anyhow::Result<Options> {
        parse(words.split(' ').map(str::to_string).collect())
    }

    #[test]
    fn the_guides_command_line_parses() {
        let o = parse_words(
            "-rdc=true -arch=sm_90 -ccbin g++ -I /opt/nvshmem/include -DN=4 -O3 -std=c++17 \
             -Xcompiler -fopenmp,-Wall --expt-relaxed-constexpr ring.cu util.cpp -o ring \
             -L/opt/nvshmem/lib -lnvshmem -lcuda -lm",
        )
        .unwrap();
        assert!(o.rdc && !o.compile_only);
        assert_eq!(o.output, Some(PathBuf::from("ring")));
        assert_eq!(o.preprocessor, ["-I/opt/nvshmem/include", "-DN=4"]);
        assert_eq!(o.codegen, ["-O3", "-std=c++17"]);
        assert_eq!(o.host_flags, ["-fopenmp", "-Wall"]);
        assert_eq!(o.link_flags, ["-L/opt/nvshmem/lib", "-lm"]);
        let kinds: Vec<InputKind> = o.inputs.iter().map(|i| i.kind).collect();
        assert_eq!(kinds, [InputKind::Cuda, InputKind::Cxx]);
    }

    #[test]
    fn unknown_options_are_errors_that_say_what_to_do() {
        let err = parse_words("--frobnicate k.cu").unwrap_err().to_string();
        assert!(
            err.contains("unknown option --frobnicate") && err.contains("-Xcompiler"),
            "{err}"
        );
        let err = parse_words("-x c k.c").unwrap_err().to_string();
        assert!(err.contains("-x c"), "{err}");
        assert!(parse_words("-o").is_err());
    }

    #[test]
    fn dc_is_compile_with_relocatable_device_code() {
        let o = parse_words("-dc -gencode arch=compute_80,code=sm_80 -x cu k.cpp").unwrap();
        assert!(o.compile_only && o.rdc);
        assert_eq!(o.inputs[0].kind, InputKind::Cuda);
    }
}
