//! The device pass's IR rewrite: clang's NVPTX IR of one `.cu` file (or of several, linked)
//! becomes x86-64 IR that runs each GPU thread as a coroutine of the simulator's kernel model.
//!
//! What changes, line by line (the reasons are in docs/cuda-sim.md):
//! - the target triple and data layout become x86-64's, and the `sm_80` target attributes go;
//! - every definition becomes `internal` and comdats go: host-and-device functions are emitted
//!   by both passes, and the linker must never pick one pass's copy for the other (with
//!   `-rdc=true` device functions of external linkage stay external for other files' calls,
//!   and the compile localizes those that the host pass defines too; device variables of
//!   external linkage stay external too, renamed apart from their host shadows);
//! - `dso_local` goes from declarations, so that the runtime's data (`__rsim_cur`) is reached
//!   through the GOT, never by a copy relocation, which a `dlopen`ed image cannot have;
//! - `__shared__` variables (`addrspace(3)`) go to the section `rsim_smem`, which the emulator
//!   swaps per block; `extern __shared__` arrays become the runtime's `__rsim_dynsmem`;
//! - device `printf` (clang's `vprintf`) and `assert` failures go to the emulator;
//! - inline PTX and NVVM intrinsics are mapped or refused ([`super::ir_builtins`]);
//! - every volatile load is followed by a block-scope fence, a call into the emulator at
//!   which a thread spinning on a flag lets the others run;
//! - per kernel a trampoline and, for the module, a registration ([`super::ir_module`]).
//!
//! Checked builds (`-rshmem-check`) add `sanitize_thread` to every defined function and move
//! every pointer to the generic address space, which the sanitizer instruments.

use std::collections::BTreeSet;

use anyhow::bail;

use super::ir_builtins::Builtins;
use super::ir_module::{self, Global};
use super::ir_syntax::{declare_if_missing, global_at, replace_global, split_type, symbol_name};

/// x86-64 Linux, as clang 14 writes it.
const X86_DATALAYOUT: &str =
    "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-f80:128-n8:16:32:64-S128";
const X86_TRIPLE: &str = "x86_64-pc-linux-gnu";

/// Linkage, visibility and preemption words that internalizing replaces.
const LINKAGE_WORDS: [&str; 15] = [
    "private",
    "internal",
    "available_externally",
    "linkonce",
    "weak",
    "common",
    "appending",
    "extern_weak",
    "linkonce_odr",
    "weak_odr",
    "external",
    "default",
    "hidden",
    "protected",
    "dso_local",
];

/// How to rewrite.
#[derive(Clone, Debug, Default)]
pub(crate) struct Options {
    /// Instrument device code for the race detector.
    pub(crate) check: bool,
    /// Where the IR came from, for messages.
    pub(crate) source: String,
    /// Relocatable device code (`-rdc=true`): device functions and variables of external
    /// linkage stay external, so that another file's `extern __device__` declaration reaches
    /// them.
    pub(crate) rdc: bool,
}

/// A global variable's line, read.
struct GlobalLine<'a> {
    name: &'a str,
    /// The words between `=` and `global`/`constant`.
    words: Vec<&'a str>,
    /// `global` or `constant`.
    keyword: &'a str,
    ty: &'a str,
    /// The initializer and what follows; empty for a declaration.
    rest: &'a str,
}

impl GlobalLine<'_> {
    fn is_declaration(&self) -> bool {
        self.words
            .iter()
            .any(|w| matches!(*w, "external" | "extern_weak"))
    }

    /// Whether the definition has plain external linkage (a `__device__` variable another
    /// file may declare `extern`), not internal, private, inline or a template's.
    fn is_external_definition(&self) -> bool {
        !self.is_declaration()
            && self
                .words
                .iter()
                .filter(|w| LINKAGE_WORDS.contains(*w))
                .all(|w| matches!(*w, "dso_local" | "default" | "external"))
    }

    fn addrspace(&self) -> u32 {
        self.words
            .iter()
            .find_map(|w| {
                w.strip_prefix("addrspace(")?
                    .strip_suffix(')')?
                    .parse()
                    .ok()
            })
            .unwrap_or(0)
    }
}

/// Reads `@name = words global TYPE rest`; `None` for other lines (aliases, comdats, ...).
fn read_global(line: &str) -> Option<GlobalLine<'_>> {
    let name = global_at(line)?;
    let after = line[name.len()..].strip_prefix(" = ")?;
    let mut words = Vec::new();
    let mut rest = after;
    loop {
        let (word, tail) = rest.split_once(' ').unwrap_or((rest, ""));
        if word == "global" || word == "constant" {
            let (ty, init) = split_type(tail);
            return Some(GlobalLine {
                name,
                words,
                keyword: word,
                ty,
                rest: init,
            });
        }
        if word.is_empty() || word == "alias" || word == "ifunc" || word == "comdat" {
            return None;
        }
        words.push(word);
        rest = tail;
    }
}

/// Removes ` comdat` and ` comdat($name)` from a definition line.
fn drop_comdat(line: &str) -> String {
    let Some(at) = line.find(" comdat") else {
        return line.to_string();
    };
    let after = &line[at + " comdat".len()..];
    let after = if after.starts_with('(') {
        &after[after.find(')').map_or(after.len(), |i| i + 1)..]
    } else {
        after
    };
    let line = format!("{}{}", &line[..at], after);
    // `..., comdat, align 4` leaves `,, align 4`.
    line.replace(",,", ",")
}

/// Whether the `define` line defines a function of plain external linkage (no linkage word:
/// not inline, not a template instance, not static).
fn is_external_define(line: &str) -> bool {
    line["define ".len()..]
        .split(' ')
        .take_while(|w| LINKAGE_WORDS.contains(w))
        .all(|w| matches!(w, "dso_local" | "default" | "external"))
}

/// The rewritten `define` line: internal, no comdat.
fn internalize_define(line: &str) -> String {
    let mut rest = &line["define ".len()..];
    let mut private = false;
    while let Some((word, tail)) = rest.split_once(' ') {
        if !LINKAGE_WORDS.contains(&word) {
            break;
        }
        private |= word == "private";
        rest = tail;
    }
    let linkage = if private { "private" } else { "internal" };
    drop_comdat(&format!("define {linkage} {rest}"))
}

/// The rewritten definition of a global variable, and the variable if it is registered.
fn internalize_global(g: &GlobalLine<'_>) -> (String, Option<Global>) {
    let private = g.words.contains(&"private");
    let mut words: Vec<&str> = g
        .words
        .iter()
        .copied()
        .filter(|w| !LINKAGE_WORDS.contains(w))
        .collect();
    words.insert(0, if private { "private" } else { "internal" });
    let addrspace = g.addrspace();
    let mut rest = drop_comdat(g.rest);
    if addrspace == 3 {
        let at = rest.find(", align").unwrap_or(rest.len());
        rest.insert_str(at, ", section \"rsim_smem\"");
    }
    let line = format!(
        "{} = {} {} {}{}",
        g.name,
        words.join(" "),
        g.keyword,
        g.ty,
        rest
    );
    let registered = !private && matches!(addrspace, 1 | 3 | 4);
    let global = registered.then(|| Global {
        name: g.name.to_string(),
        ty: g.ty.to_string(),
        addrspace,
    });
    (line, global)
}

/// The kernels named by `!nvvm.annotations` (`!{... @k, !"kernel", i32 1}`).
fn kernels(ir: &str) -> Vec<String> {
    ir.lines()
        .filter(|l| l.starts_with('!') && l.contains("!\"kernel\", i32 1"))
        .filter_map(|l| {
            let at = l.find('@')?;
            Some(global_at(&l[at..])?.to_string())
        })
        .collect()
}

/// The attribute groups (`#0`) of defined functions.
fn defined_function_groups(ir: &str) -> BTreeSet<String> {
    ir.lines()
        .filter(|l| l.starts_with("define "))
        .flat_map(|l| l.split(' ').filter(|w| w.len() > 1 && w.starts_with('#')))
        .map(str::to_string)
        .collect()
}

/// The declaration of the emulator's variable that `line` defines, if it is one: without
/// relocatable device code clang defines every `extern __device__` variable in each file
/// (`@__rsim_mapped = dso_local addrspace(1) externally_initialized global T null`), and the
/// emulator's (`__rsim_cur`, `__rsim_mapped`, named `__rsim_`) must be libshmem's own.
fn runtime_variable_declaration(line: &str) -> Option<String> {
    let name = line.strip_prefix("@__rsim_")?.split(' ').next()?;
    let (_, rest) = line.split_once("externally_initialized global ")?;
    let ty = rest
        .rsplit_once(" null")
        .or_else(|| rest.rsplit_once(" zeroinitializer"))?
        .0;
    let align = rest.rsplit_once(", align ").map_or("8", |(_, a)| a);
    let space = line
        .split_once("addrspace(")
        .and_then(|(_, r)| r.split_once(')'))?
        .0;
    Some(format!(
        "@__rsim_{name} = external addrspace({space}) global {ty}, align {align}"
    ))
}

/// Rewrites clang's NVPTX IR `ir` for x86-64 and the emulator.
///
/// # Errors
/// Inline PTX or an NVVM intrinsic that is not emulated (naming it and the source line), an
/// `extern __device__` variable without `-rdc=true`, or IR of a shape clang 14 does not
/// write.
pub(crate) fn rewrite(ir: &str, options: &Options) -> anyhow::Result<String> {
    if !ir.contains("target triple = \"nvptx64") {
        bail!(
            "{}: the device pass did not produce NVPTX IR; is clang-14 the compiler in use?",
            options.source
        );
    }
    let kernels = kernels(ir);
    let check_groups = if options.check {
        defined_function_groups(ir)
    } else {
        BTreeSet::new()
    };
    let mut builtins = Builtins::new(ir, &options.source);
    // `extern __shared__` arrays, as the uses that replace them.
    let mut renames: Vec<(String, String)> = vec![
        ("@vprintf".into(), "@__rsim_vprintf".into()),
        ("@__assert_fail".into(), "@__rsim_assert_fail".into()),
    ];
    let mut dynamic_shared = false;
    let mut globals = Vec::new();
    let mut out = Vec::new();
    for line in ir.lines() {
        let runtime_variable = runtime_variable_declaration(line);
        let line = runtime_variable.as_deref().unwrap_or(line);
        if let Some(g) = read_global(line) {
            let device_variable = matches!(g.addrspace(), 1 | 4) && !g.name.starts_with("@__rsim_");
            if g.addrspace() == 3 && g.is_declaration() {
                dynamic_shared = true;
                renames.push((
                    g.name.to_string(),
                    format!(
                        "bitcast ([0 x i8] addrspace(3)* @__rsim_dynsmem to {} addrspace(3)*)",
                        g.ty
                    ),
                ));
                continue;
            }
            if device_variable && g.is_declaration() && !options.rdc {
                bail!(
                    "{}: the `extern __device__` variable `{}` is defined in another file, \
                     which needs relocatable device code: build with -rdc=true, as nvcc does",
                    options.source,
                    symbol_name(g.name)
                );
            }
            if device_variable && options.rdc && (g.is_declaration() || g.is_external_definition())
            {
                renames.push((
                    g.name.to_string(),
                    ir_module::linked_device_variable(g.name),
                ));
            }
        }
        out.push(line.to_string());
    }
    let mut lines = Vec::with_capacity(out.len());
    let mut first_global = None;
    for line in out {
        let mut line = if line.starts_with('!') {
            line
        } else {
            renames
                .iter()
                .fold(line, |l, (from, to)| replace_global(&l, from, to))
        };
        if line.starts_with("target datalayout") {
            line = format!("target datalayout = \"{X86_DATALAYOUT}\"");
        } else if line.starts_with("target triple") {
            line = format!("target triple = \"{X86_TRIPLE}\"");
        } else if line.starts_with('$') && line.ends_with("= comdat any") {
            continue;
        } else if line.starts_with("define ") {
            // With -rdc=true, the compile localizes afterwards those the host pass also defines.
            line = if options.rdc && is_external_define(&line) {
                drop_comdat(&line)
            } else {
                internalize_define(&line)
            };
        } else if line.starts_with("declare ") {
            line = line.replace(" dso_local ", " ");
            if builtins.drops_declaration(&line) || line.contains("@__rsim_assert_fail(") {
                continue;
            }
        } else if line.starts_with("attributes #") {
            line = strip_target_attributes(&line);
            let group = line["attributes ".len()..]
                .split(' ')
                .next()
                .unwrap_or_default();
            if check_groups.contains(group) {
                line = line.replacen("{ ", "{ sanitize_thread ", 1);
            }
        } else if let Some(g) = read_global(&line)
            && !g.name.starts_with("@llvm.")
        {
            if g.is_declaration() {
                line = line.replace(" dso_local ", " ");
            } else if ir_module::is_linked_device_variable(g.name) {
                // Defined for other files' `extern __device__` declarations (-rdc=true).
                first_global.get_or_insert(lines.len());
                globals.push(Global {
                    name: g.name.to_string(),
                    ty: g.ty.to_string(),
                    addrspace: g.addrspace(),
                });
                line = drop_comdat(&line);
            } else {
                first_global.get_or_insert(lines.len());
                let (rewritten, global) = internalize_global(&g);
                globals.extend(global);
                line = rewritten;
            }
        }
        let extra = builtins.rewrite_line(&mut line)?;
        lines.push(line);
        if let Some(extra) = extra {
            lines.push(extra);
        }
    }
    if let Some(at) = first_global {
        lines.insert(at, ir_module::SMEM_BEGIN.to_string());
    }
    let mut text = lines.join("\n");
    text.push('\n');
    if dynamic_shared {
        text.push_str("@__rsim_dynsmem = external addrspace(3) global [0 x i8], align 16\n");
    }
    text.push_str(&builtins.definitions(&text)?);
    if text.contains("@__rsim_assert_fail(") {
        text.push_str(ASSERT_FAIL);
        text.push_str(&declare_if_missing(
            &text,
            "__rsim_trap",
            "void @__rsim_trap(i8*, i8*, i32)",
        ));
    }
    text.push_str(&ir_module::registration(
        &text,
        &kernels,
        &globals,
        first_global.is_some(),
    )?);
    if options.check {
        text = generic_address_space(&text);
    }
    Ok(text)
}

/// The module with every pointer in the generic address space: the thread sanitizer leaves
/// accesses to other address spaces alone (they are a GPU's), and on the CPU `__shared__`,
/// `__device__` and `__constant__` variables are ordinary memory whose accesses the race
/// detector must see. Casts between spaces become no-op bitcasts.
fn generic_address_space(ir: &str) -> String {
    let mut out = String::with_capacity(ir.len());
    for line in ir.lines() {
        if line.starts_with('!') {
            out.push_str(line);
        } else {
            let mut line = line.replace("addrspacecast", "bitcast");
            for space in [1, 3, 4] {
                line = line.replace(&format!(" addrspace({space})"), "");
            }
            out.push_str(&line);
        }
        out.push('\n');
    }
    out
}

/// Device `assert` failures (glibc's `__assert_fail`) end the run through the emulator.
const ASSERT_FAIL: &str = "
define internal void @__rsim_assert_fail(i8* %expr, i8* %file, i32 %line, i8* %function) noreturn {
  call void @__rsim_trap(i8* %expr, i8* %file, i32 %line)
  unreachable
}
";

/// Removes `"target-cpu"="sm_80"` and `"target-features"="..."` from an attribute group.
fn strip_target_attributes(line: &str) -> String {
    let mut out = line.to_string();
    for key in ["\"target-cpu\"=\"", "\"target-features\"=\""] {
        if let Some(at) = out.find(key) {
            let value_end = out[at + key.len()..]
                .find('"')
                .map_or(out.len(), |i| at + key.len() + i + 1);
            let end = if out[value_end..].starts_with(' ') {
                value_end + 1
            } else {
                value_end
            };
            out.replace_range(at..end, "");
        }
    }
    out
}
