//! What the device pass adds to a module: a trampoline per kernel and the module's
//! registration with the emulator (`struct rsim_module` of rshmem/cuda_sim_abi.h), called from
//! a constructor.
//!
//! A trampoline is `void (i8** args)`: args[i] points at kernel argument i, as
//! `cudaLaunchKernel` passes them. Scalars and pointers are loaded from there; an aggregate,
//! which the NVPTX kernel takes `byval`, is passed as the pointer itself (the callee copies it).
//! The call is `noinline` so that the kernel keeps its own frame and debug locations.
//!
//! The module's `__shared__` bytes: a linked program has one `rsim_smem` section for all its
//! objects, so the registration says which bytes are this module's in two ways: the bounds
//! (`smem_start`, `smem_end`: two empty markers, the first and last globals of the module in
//! the section, which the assembler keeps in module order) and a table of every `__shared__`
//! variable with its name, address and size (`smem_vars`), by which the emulator names a
//! variable in its reports. Sizes are `sizeof` as a constant expression
//! (`ptrtoint (T* getelementptr (T, T* null, i32 1) to i64)`), so the rewrite computes no
//! layout itself.

use anyhow::bail;

use super::ir_syntax::{
    c_string, declare_if_missing, group_at, split_top_level, split_type, symbol_name,
};

/// The marker before the module's first `__shared__` variable.
pub(crate) const SMEM_BEGIN: &str = "@__rsim_smem_begin = internal addrspace(3) global [0 x i8] zeroinitializer, section \"rsim_smem\", align 1";
/// The marker after its last.
const SMEM_END: &str = "@__rsim_smem_end = internal addrspace(3) global [0 x i8] zeroinitializer, section \"rsim_smem\", align 1\n";

/// A registered global: a `__device__` or `__constant__` variable (address spaces 1 and 4) or
/// a `__shared__` one (3).
#[derive(Clone, Debug)]
pub(crate) struct Global {
    /// `@name` as the IR spells it.
    pub(crate) name: String,
    /// Its value type.
    pub(crate) ty: String,
    pub(crate) addrspace: u32,
}

/// What a `__device__` or `__constant__` variable of external linkage is named in device
/// objects built with `-rdc=true`, as the file that defines it and the files that declare it
/// `extern` name it: the host pass's shadow of the variable keeps its own name in the same
/// program, so the device copy takes a suffix.
const LINKED_SUFFIX: &str = ".rsim_device";

/// The device objects' name for the variable `@name` (sigil included).
pub(crate) fn linked_device_variable(name: &str) -> String {
    format!("{name}{LINKED_SUFFIX}")
}

/// Whether `@name` is a device variable that [`linked_device_variable`] named.
pub(crate) fn is_linked_device_variable(name: &str) -> bool {
    name.ends_with(LINKED_SUFFIX)
}

/// The host shadow's symbol of the device object's symbol `symbol`, if it is a device variable
/// of external linkage ([`linked_device_variable`]).
pub(crate) fn host_shadow_of(symbol: &str) -> Option<&str> {
    symbol.strip_suffix(LINKED_SUFFIX)
}

/// `{ i8* name, i8* addr, i64 size }` for `g`; `n` numbers its name string.
fn var_entry(g: &Global, n: usize, strings: &mut String) -> String {
    let symbol = symbol_name(&g.name);
    // The device name the host pass registers its shadow under.
    let name = host_shadow_of(symbol).unwrap_or(symbol);
    strings.push_str(&format!(
        "@__rsim_var_name.{n} = private unnamed_addr constant [{} x i8] c\"{}\"\n",
        name.len() + 1,
        c_string(name)
    ));
    let space = if g.addrspace == 0 {
        String::new()
    } else {
        format!(" addrspace({})", g.addrspace)
    };
    let ty = &g.ty;
    let addr = format!(
        "addrspacecast (i8{space}* bitcast ({ty}{space}* {} to i8{space}*) to i8*)",
        g.name
    );
    format!(
        "{{ i8*, i8*, i64 }} {{ i8* getelementptr inbounds ([{len} x i8], [{len} x i8]* @__rsim_var_name.{n}, i64 0, i64 0), i8* {addr}, i64 ptrtoint ({ty}* getelementptr ({ty}, {ty}* null, i32 1) to i64) }}",
        len = name.len() + 1,
    )
}

/// The trampoline of the kernel `@name` (number `n`), from the kernel's `define` line.
fn trampoline(name: &str, define: &str, n: usize) -> anyhow::Result<String> {
    let Some(open) = define.find(&format!("{name}(")).map(|at| at + name.len()) else {
        bail!("the kernel {name} has no definition in the device IR");
    };
    let mut body = String::new();
    let mut args = Vec::new();
    for (i, param) in split_top_level(group_at(define, open))
        .into_iter()
        .enumerate()
    {
        let (ty, rest) = split_type(param);
        let attrs = rest
            .trim()
            .rsplit_once(' ')
            .map_or("", |(attrs, _name)| attrs);
        body.push_str(&format!(
            "  %slot.{i} = getelementptr i8*, i8** %args, i64 {i}\n  %arg.{i} = load i8*, i8** %slot.{i}\n"
        ));
        if attrs.contains("byval(") {
            body.push_str(&format!("  %value.{i} = bitcast i8* %arg.{i} to {ty}\n"));
        } else {
            body.push_str(&format!(
                "  %typed.{i} = bitcast i8* %arg.{i} to {ty}*\n  %value.{i} = load {ty}, {ty}* %typed.{i}\n"
            ));
        }
        args.push(format!("{ty} {attrs} %value.{i}"));
    }
    Ok(format!(
        "define internal void @__rsim_trampoline.{n}(i8** %args) {{\n{body}  call void {name}({}) #{NOINLINE_GROUP}\n  ret void\n}}\n",
        args.join(", ")
    ))
}

/// The attribute group of the trampolines' calls.
const NOINLINE_GROUP: u32 = 9_999_999;

/// The trampolines, the tables, the module and its constructor, for a module whose text (so
/// far) is `ir`, with `kernels` and the registered `globals`; `has_globals` says whether the
/// shared-memory begin marker was placed.
///
/// # Errors
/// A kernel without a definition, or a module that already has global constructors (device
/// code cannot have them: clang refuses dynamic initialization of device variables).
pub(crate) fn registration(
    ir: &str,
    kernels: &[String],
    globals: &[Global],
    has_globals: bool,
) -> anyhow::Result<String> {
    if ir.contains("@llvm.global_ctors") {
        bail!("the device IR has global constructors, which CUDA device code cannot have");
    }
    let mut out = String::new();
    let mut strings = String::new();
    let mut kernel_entries = Vec::new();
    for (n, name) in kernels.iter().enumerate() {
        let Some(define) = ir
            .lines()
            .find(|l| l.starts_with("define ") && l.contains(&format!("{name}(")))
        else {
            bail!("the kernel {name} has no definition in the device IR");
        };
        out.push_str(&trampoline(name, define, n)?);
        let symbol = symbol_name(name);
        let len = symbol.len() + 1;
        strings.push_str(&format!(
            "@__rsim_kernel_name.{n} = private unnamed_addr constant [{len} x i8] c\"{}\"\n",
            c_string(symbol)
        ));
        kernel_entries.push(format!(
            "{{ i8*, void (i8**)* }} {{ i8* getelementptr inbounds ([{len} x i8], [{len} x i8]* @__rsim_kernel_name.{n}, i64 0, i64 0), void (i8**)* @__rsim_trampoline.{n} }}"
        ));
    }
    let (shared, device): (Vec<&Global>, Vec<&Global>) =
        globals.iter().partition(|g| g.addrspace == 3);
    let mut n_string = 0;
    let mut table = |vars: &[&Global], table_name: &str| -> (String, usize) {
        if vars.is_empty() {
            return ("{ i8*, i8*, i64 }* null".into(), 0);
        }
        let entries: Vec<String> = vars
            .iter()
            .map(|g| {
                n_string += 1;
                var_entry(g, n_string, &mut strings)
            })
            .collect();
        out.push_str(&format!(
            "@{table_name} = internal constant [{} x {{ i8*, i8*, i64 }}] [{}]\n",
            vars.len(),
            entries.join(", ")
        ));
        (
            format!(
                "{{ i8*, i8*, i64 }}* getelementptr inbounds ([{n} x {{ i8*, i8*, i64 }}], [{n} x {{ i8*, i8*, i64 }}]* @{table_name}, i64 0, i64 0)",
                n = vars.len()
            ),
            vars.len(),
        )
    };
    let (vars, n_vars) = table(&device, "__rsim_vars");
    let (smem_vars, n_smem_vars) = table(&shared, "__rsim_smem_vars");
    let kernels_ref = if kernel_entries.is_empty() {
        "{ i8*, void (i8**)* }* null".to_string()
    } else {
        out.push_str(&format!(
            "@__rsim_kernels = internal constant [{n} x {{ i8*, void (i8**)* }}] [{}]\n",
            kernel_entries.join(", "),
            n = kernel_entries.len()
        ));
        format!(
            "{{ i8*, void (i8**)* }}* getelementptr inbounds ([{n} x {{ i8*, void (i8**)* }}], [{n} x {{ i8*, void (i8**)* }}]* @__rsim_kernels, i64 0, i64 0)",
            n = kernel_entries.len()
        )
    };
    let (smem_start, smem_end) = if has_globals {
        out.push_str(SMEM_END);
        (
            "i8* getelementptr inbounds ([0 x i8], [0 x i8]* addrspacecast ([0 x i8] addrspace(3)* @__rsim_smem_begin to [0 x i8]*), i64 0, i64 0)",
            "i8* getelementptr inbounds ([0 x i8], [0 x i8]* addrspacecast ([0 x i8] addrspace(3)* @__rsim_smem_end to [0 x i8]*), i64 0, i64 0)",
        )
    } else {
        ("i8* null", "i8* null")
    };
    out.push_str(&strings);
    out.push_str(&format!(
        "@__rsim_module = internal constant {MODULE_TYPE} {{ i32 {ABI_VERSION}, {kernels_ref}, i64 {}, {vars}, i64 {n_vars}, {smem_start}, {smem_end}, {smem_vars}, i64 {n_smem_vars} }}\n",
        kernel_entries.len()
    ));
    out.push_str(&format!(
        "define internal void @__rsim_module_ctor() {{\n  call void @__rsim_register_module({MODULE_TYPE}* @__rsim_module)\n  ret void\n}}\n\
         @llvm.global_ctors = appending global [1 x {{ i32, void ()*, i8* }}] [{{ i32, void ()*, i8* }} {{ i32 65535, void ()* @__rsim_module_ctor, i8* null }}]\n\
         attributes #{NOINLINE_GROUP} = {{ noinline }}\n"
    ));
    out.push_str(&declare_if_missing(
        ir,
        "__rsim_register_module",
        &format!("void @__rsim_register_module({MODULE_TYPE}*)"),
    ));
    Ok(out)
}

/// `struct rsim_module`, field by field.
const MODULE_TYPE: &str = "{ i32, { i8*, void (i8**)* }*, i64, { i8*, i8*, i64 }*, i64, i8*, i8*, { i8*, i8*, i64 }*, i64 }";
/// RSIM_ABI_VERSION.
const ABI_VERSION: u32 = 1;
