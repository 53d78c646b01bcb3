//! Inline PTX and NVVM intrinsics in device IR: the ordering, clock and id operations that
//! CUDA and NVSHMEM programs write become calls of the emulator's ABI or plain IR; anything
//! else is refused with its source line, never dropped (left in, it would reach the x86
//! assembler as an unknown mnemonic).
//!
//! The sim's headers write every built-in over the ABI, so clang's IR holds intrinsics only
//! when a program calls clang's `__nvvm_*` built-ins itself. Each mapped intrinsic
//! `@llvm.nvvm.X` becomes a call of an internal helper `@__rsim_nvvm.X` of the same type,
//! defined here; mapped PTX becomes instructions in place. Loads that may spin (acquire,
//! relaxed and volatile ones) are followed by a block-scope fence: a call into the emulator,
//! at which the other threads run.

use std::collections::{BTreeSet, HashMap};

use anyhow::bail;

use super::ir_syntax::{declare_if_missing, group_at, split_top_level, split_type};

/// The fields of `struct rsim_ids` as `[12 x i32]`: thread_idx, block_idx, block_dim, grid_dim.
const SREG_FIELDS: [(&str, usize); 4] = [("tid", 0), ("ctaid", 3), ("ntid", 6), ("nctaid", 9)];

/// The mapping state of one module.
pub(crate) struct Builtins<'a> {
    /// Metadata nodes by id (`!13`), for source locations.
    metadata: HashMap<&'a str, &'a str>,
    source: &'a str,
    /// The helpers (`@__rsim_nvvm.X`, by X) the module calls.
    helpers: BTreeSet<String>,
    /// A counter for the names of values the rewrite adds.
    next_value: usize,
}

/// The helper body of the intrinsic `llvm.nvvm.X`, if it is emulated: its return type and
/// instructions (`%ids` is the running thread's ids, `[12 x i32]*`).
fn helper_body(intrinsic: &str) -> Option<(&'static str, String)> {
    let fence = |scope: u32| {
        (
            "void",
            format!("  call void @__rsim_threadfence(i32 {scope})\n  ret void\n"),
        )
    };
    let field = |index: usize| {
        format!(
            "  %p{index} = getelementptr [12 x i32], [12 x i32]* %ids, i64 0, i64 {index}\n  %f{index} = load i32, i32* %p{index}\n"
        )
    };
    match intrinsic {
        "barrier0" => Some((
            "void",
            "  call void @__rsim_syncthreads()\n  ret void\n".into(),
        )),
        "membar.cta" => Some(fence(0)),
        "membar.gl" => Some(fence(1)),
        "membar.sys" => Some(fence(2)),
        "read.ptx.sreg.warpsize" => Some(("i32", "  ret i32 32\n".into())),
        "read.ptx.sreg.globaltimer" => Some((
            "i64",
            "  %t = call i64 @__rsim_globaltimer()\n  ret i64 %t\n".into(),
        )),
        "read.ptx.sreg.clock64" => Some((
            "i64",
            "  %t = call i64 @__rsim_clock64()\n  ret i64 %t\n".into(),
        )),
        "read.ptx.sreg.laneid" | "read.ptx.sreg.warpid" => {
            // The linear thread index in the block, x fastest, then its lane or warp.
            let mut body: String = [0, 1, 2, 6, 7].into_iter().map(field).collect();
            body.push_str(
                "  %yx = mul i32 %f1, %f6\n  %xy = mul i32 %f6, %f7\n  %zxy = mul i32 %f2, %xy\n  %l0 = add i32 %f0, %yx\n  %linear = add i32 %l0, %zxy\n",
            );
            body.push_str(if intrinsic.ends_with("laneid") {
                "  %r = and i32 %linear, 31\n  ret i32 %r\n"
            } else {
                "  %r = lshr i32 %linear, 5\n  ret i32 %r\n"
            });
            Some(("i32", body))
        }
        _ => {
            let rest = intrinsic.strip_prefix("read.ptx.sreg.")?;
            let (name, dim) = rest.rsplit_once('.')?;
            let base = SREG_FIELDS.iter().find(|(n, _)| *n == name)?.1;
            let index = base + ["x", "y", "z"].iter().position(|d| *d == dim)?;
            Some(("i32", format!("{}  ret i32 %f{index}\n", field(index))))
        }
    }
}

/// The scope of a PTX qualifier list: `.cta` 0, `.gpu`/`.gl` 1 (the default), `.sys` 2.
fn ptx_scope(template: &str) -> u32 {
    if template.contains(".cta") {
        0
    } else if template.contains(".sys") {
        2
    } else {
        1
    }
}

/// A PTX operand number: `$1` is 1.
fn operand(s: &str) -> Option<usize> {
    s.trim()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .strip_prefix('$')?
        .parse()
        .ok()
}

impl<'a> Builtins<'a> {
    /// The mapping state for the module `ir`, from the file `source`.
    pub(crate) fn new(ir: &'a str, source: &'a str) -> Builtins<'a> {
        let metadata = ir
            .lines()
            .filter(|l| l.starts_with('!'))
            .filter_map(|l| l.split_once(" = "))
            .collect();
        Builtins {
            metadata,
            source,
            helpers: BTreeSet::new(),
            next_value: 0,
        }
    }

    /// Where the instruction `line` comes from: `file:line` from its `!dbg`, else the source.
    fn location(&self, line: &str) -> String {
        let field = |node: &str, key: &str| -> Option<String> {
            let at = node.find(key)? + key.len();
            Some(node[at..].split([',', ')']).next()?.trim().to_string())
        };
        let found = (|| {
            let id = line.split("!dbg ").nth(1)?.split([',', ' ']).next()?;
            let loc = self.metadata.get(id)?;
            let number = field(loc, "line: ")?;
            let mut scope = field(loc, "scope: ")?;
            for _ in 0..16 {
                let node = self.metadata.get(scope.as_str())?;
                if node.contains("!DIFile(") {
                    let file = field(node, "filename: ")?;
                    return Some(format!("{}:{number}", file.trim_matches('"')));
                }
                scope = field(node, "file: ").or_else(|| field(node, "scope: "))?;
            }
            None
        })();
        found.unwrap_or_else(|| self.source.to_string())
    }

    /// Whether `line`, a `declare`, declares an intrinsic that helpers replace.
    pub(crate) fn drops_declaration(&self, line: &str) -> bool {
        line.contains("@llvm.nvvm.")
    }

    fn fresh(&mut self) -> usize {
        self.next_value += 1;
        self.next_value
    }

    /// Maps the intrinsic calls and inline PTX of `line` in place; returns a line to add after
    /// it (the fence after a volatile load).
    ///
    /// # Errors
    /// An intrinsic or PTX that is not emulated, naming it and its `file:line`.
    pub(crate) fn rewrite_line(&mut self, line: &mut String) -> anyhow::Result<Option<String>> {
        if line.starts_with("declare ") || line.starts_with('!') {
            return Ok(None);
        }
        while let Some(at) = line.find("@llvm.nvvm.") {
            let rest = &line[at + "@llvm.nvvm.".len()..];
            let intrinsic = &rest[..rest.find('(').unwrap_or(rest.len())];
            if helper_body(intrinsic).is_none() {
                bail!(
                    "{}: the NVVM intrinsic llvm.nvvm.{intrinsic} is not emulated by rshmem's \
                     simulator; write the operation with CUDA's functions (rshmem/cuda_sim_lang.h \
                     lists them)",
                    self.location(line)
                );
            }
            self.helpers.insert(intrinsic.to_string());
            line.replace_range(at..at + "@llvm.nvvm.".len(), "@__rsim_nvvm.");
        }
        if line.contains(" asm ") && line.contains("call ") {
            self.rewrite_asm(line)?;
            return Ok(None);
        }
        if line.contains(" load volatile ") {
            return Ok(Some("  call void @__rsim_threadfence(i32 0)".into()));
        }
        Ok(None)
    }

    /// Replaces the inline-asm call `line` by what it means.
    fn rewrite_asm(&mut self, line: &mut String) -> anyhow::Result<()> {
        let refuse = |this: &Self, template: &str| {
            anyhow::anyhow!(
                "{}: inline PTX `{template}` is not emulated by rshmem's simulator (it maps \
                 fences, membar, ld.acquire/relaxed/volatile, st.release/relaxed/volatile, \
                 nanosleep, %globaltimer, %clock64, %laneid and %warpid); write it with CUDA's \
                 functions or guard it with #ifndef RSHMEM_CUDA_SIM",
                this.location(line)
            )
        };
        let indent = &line[..line.len() - line.trim_start().len()];
        let (result, call) = match line.trim_start().split_once(" = ") {
            Some((r, c)) if r.starts_with('%') => (Some(r.to_string()), c.to_string()),
            _ => (None, line.trim_start().to_string()),
        };
        let after_call = &call[call.find("call ").map_or(0, |i| i + "call ".len())..];
        let (ret_ty, _) = split_type(after_call);
        let quoted: Vec<&str> = call.split('"').collect();
        let (Some(raw_template), Some(constraints_end)) = (quoted.get(1), call.find("\"(")) else {
            return Err(refuse(self, &call));
        };
        let template = raw_template.replace("\\09", " ").replace("\\0A", " ");
        let template = template.split_whitespace().collect::<Vec<_>>().join(" ");
        let template = template.trim_end_matches(';').trim().to_string();
        let args: Vec<(String, String)> = split_top_level(group_at(&call, constraints_end + 1))
            .into_iter()
            .map(|a| {
                let (ty, rest) = split_type(a);
                (
                    ty.to_string(),
                    rest.trim()
                        .rsplit(' ')
                        .next()
                        .unwrap_or_default()
                        .to_string(),
                )
            })
            .collect();
        let outputs = usize::from(ret_ty != "void");
        let arg = |n: Option<usize>| {
            n.and_then(|n| n.checked_sub(outputs))
                .and_then(|i| args.get(i))
        };
        let (opcode, operands) = template.split_once(' ').unwrap_or((&template, ""));
        let operands: Vec<&str> = operands.split(',').map(str::trim).collect();
        let assign = result.map(|r| format!("{r} = ")).unwrap_or_default();
        let fence = |scope: u32| format!("{indent}call void @__rsim_threadfence(i32 {scope})");
        let mapped: String = if opcode.starts_with("fence.") || opcode.starts_with("membar.") {
            fence(ptx_scope(opcode))
        } else if opcode == "nanosleep.u32"
            && let Some((ty, v)) = arg(operand(operands[0]))
        {
            format!("{indent}call void @__rsim_nanosleep({ty} {v})")
        } else if opcode.starts_with("mov.") && operands.len() == 2 && outputs == 1 {
            let source = match operands[1] {
                "%globaltimer" => "@__rsim_globaltimer()",
                "%clock64" => "@__rsim_clock64()",
                "%laneid" | "%warpid" => {
                    let helper = format!("read.ptx.sreg.{}", &operands[1][1..]);
                    self.helpers.insert(helper);
                    if operands[1] == "%laneid" {
                        "@__rsim_nvvm.read.ptx.sreg.laneid()"
                    } else {
                        "@__rsim_nvvm.read.ptx.sreg.warpid()"
                    }
                }
                _ => return Err(refuse(self, &template)),
            };
            format!("{indent}{assign}call {ret_ty} {source}")
        } else if let Some(kind) = ["ld.acquire.", "ld.relaxed.", "ld.volatile."]
            .iter()
            .find(|k| opcode.starts_with(**k))
            && outputs == 1
            && operands.len() == 2
            && !opcode.contains(".v2")
            && !opcode.contains(".v4")
            && let Some((pty, pv)) = arg(operand(operands[1]))
        {
            let n = self.fresh();
            let volatile = if kind.contains("volatile") {
                "volatile "
            } else {
                ""
            };
            let scope = if kind.contains("acquire") {
                ptx_scope(opcode)
            } else {
                0
            };
            format!(
                "{}\n{indent}{assign}load {volatile}{ret_ty}, {ret_ty}* %rsim.ptr.{n}\n{}",
                self.address(indent, n, pty, pv, ret_ty),
                fence(scope)
            )
        } else if let Some(kind) = ["st.release.", "st.relaxed.", "st.volatile."]
            .iter()
            .find(|k| opcode.starts_with(**k))
            && outputs == 0
            && operands.len() == 2
            && let (Some((pty, pv)), Some((vty, vv))) =
                (arg(operand(operands[0])), arg(operand(operands[1])))
        {
            let n = self.fresh();
            let before = if kind.contains("release") {
                format!("{}\n", fence(ptx_scope(opcode)))
            } else {
                String::new()
            };
            let volatile = if kind.contains("volatile") {
                "volatile "
            } else {
                ""
            };
            format!(
                "{before}{}\n{indent}store {volatile}{vty} {vv}, {vty}* %rsim.ptr.{n}",
                self.address(indent, n, pty, pv, vty)
            )
        } else {
            return Err(refuse(self, &template));
        };
        *line = mapped;
        Ok(())
    }

    /// `%rsim.ptr.N`, the address operand `pty pv` (a pointer or an integer) as `ty*`.
    fn address(&self, indent: &str, n: usize, pty: &str, pv: &str, ty: &str) -> String {
        let int = if pty.ends_with('*') {
            format!("{indent}%rsim.int.{n} = ptrtoint {pty} {pv} to i64\n")
        } else {
            format!("{indent}%rsim.int.{n} = zext {pty} {pv} to i64\n")
        };
        // `zext i64 to i64` is not valid IR: an i64 address is used as it is.
        let int = if pty == "i64" {
            format!("{indent}%rsim.int.{n} = add i64 {pv}, 0\n")
        } else {
            int
        };
        format!("{int}{indent}%rsim.ptr.{n} = inttoptr i64 %rsim.int.{n} to {ty}*")
    }

    /// The helpers the module now calls and the declarations of the ABI functions the mapped
    /// code calls, for the module `ir` (the rewritten text so far).
    ///
    /// # Errors
    /// None today; kept fallible for helpers that read the module.
    pub(crate) fn definitions(&self, ir: &str) -> anyhow::Result<String> {
        let mut out = String::new();
        let needs_ids = self.helpers.iter().any(|h| {
            h.starts_with("read.ptx.sreg.")
                && !h.ends_with("warpsize")
                && !h.ends_with("timer")
                && !h.ends_with("clock64")
        });
        let ids = if !needs_ids {
            String::new()
        } else if let Some(decl) = ir.lines().find(|l| l.starts_with("@__rsim_cur = ")) {
            let (ty, _) = split_type(
                &decl[decl
                    .find(" global ")
                    .map_or(decl.len(), |i| i + " global ".len())..],
            );
            format!(
                "addrspacecast ([12 x i32]* addrspace(1)* bitcast ({ty} addrspace(1)* @__rsim_cur to [12 x i32]* addrspace(1)*) to [12 x i32]**)"
            )
        } else {
            out.push_str("@__rsim_cur = external addrspace(1) global [12 x i32]*, align 8\n");
            "addrspacecast ([12 x i32]* addrspace(1)* @__rsim_cur to [12 x i32]**)".to_string()
        };
        for helper in &self.helpers {
            let Some((ret, body)) = helper_body(helper) else {
                continue;
            };
            let load = if body.contains("%ids") {
                format!("  %ids = load [12 x i32]*, [12 x i32]** {ids}\n")
            } else {
                String::new()
            };
            out.push_str(&format!(
                "define internal {ret} @__rsim_nvvm.{helper}() {{\n{load}{body}}}\n"
            ));
        }
        let all = format!("{ir}{out}");
        for (name, signature) in [
            ("__rsim_threadfence", "void @__rsim_threadfence(i32)"),
            ("__rsim_syncthreads", "void @__rsim_syncthreads()"),
            ("__rsim_nanosleep", "void @__rsim_nanosleep(i32)"),
            ("__rsim_globaltimer", "i64 @__rsim_globaltimer()"),
            ("__rsim_clock64", "i64 @__rsim_clock64()"),
        ] {
            if all.contains(&format!("@{name}(")) {
                out.push_str(&declare_if_missing(&all, name, signature));
            }
        }
        Ok(out)
    }
}
