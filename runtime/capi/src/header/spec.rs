//! The specification's list of C functions (`spec/openshmem-1.6.txt`) read and expanded over
//! the type table of `types.rs`.
//!
//! The list holds templates, one per `\FuncDecl` of the specification, each tagged with the
//! table its `TYPENAME`/`TYPE` or `SIZE` come from; the rows of the tables are read through the
//! same macros the exports use ([`crate::rma_types`] and its siblings), so the header, the
//! symbol test and the library cannot disagree on a type.

/// The committed list of templates.
const SPEC: &str = include_str!("../../spec/openshmem-1.6.txt");
/// rshmem's extensions, in the same form (`shmemx.h`).
const EXTENSIONS: &str = include_str!("../../spec/shmemx.txt");

/// One row of a type table.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Row {
    /// The `TYPENAME` part of a function's name (`long`).
    pub(crate) name: &'static str,
    /// The C type (`long`, `unsigned long long`, `int64_t`).
    pub(crate) c_type: &'static str,
    /// The reductions a `teamreducetypes` row has (`bit`, `minmax`, `arith`); empty elsewhere.
    pub(crate) ops: &'static [&'static str],
}

impl Row {
    /// The type as it is spelled in `shmem.h`: the complex types through typedefs that C++
    /// can parse too.
    pub(crate) fn header_type(&self) -> &'static str {
        match self.c_type {
            "double _Complex" => "shmem_complexd_t",
            "float _Complex" => "shmem_complexf_t",
            other => other,
        }
    }

    /// The standard C type this row's type is on LP64 Linux, where `shmem.h` is used: a
    /// typedef'd row (`int64_t`) is the type glibc's `<stdint.h>` and `<stddef.h>` define it
    /// as (`long`), any other row is its own type. A `_Generic` list or a C++ overload set
    /// names each such type once (naming two spellings of one type is an error), and
    /// `shmem.h` asserts each of these equalities at compile time.
    pub(crate) fn lp64_type(&self) -> &'static str {
        match self.c_type {
            "int8_t" => "signed char",
            "int16_t" => "short",
            "int32_t" => "int",
            "int64_t" | "ptrdiff_t" => "long",
            "uint8_t" => "unsigned char",
            "uint16_t" => "unsigned short",
            "uint32_t" => "unsigned int",
            "uint64_t" | "size_t" => "unsigned long",
            _ => self.header_type(),
        }
    }

    /// Whether the C type is a typedef of a standard type (`int64_t` is `long`).
    pub(crate) fn is_alias(&self) -> bool {
        self.lp64_type() != self.header_type()
    }
}

/// Turns the rows a table macro hands over into [`Row`]s.
macro_rules! rows {
    ($(($name:ident, $rust:ty, $c:literal $(, [$($op:ident),*])?)),* $(,)?) => {
        &[$(Row { name: stringify!($name), c_type: $c, ops: &[$($(stringify!($op)),*)?] }),*]
    };
}

/// The rows of the table a spec line names, before any narrowing.
fn table(name: &str) -> Option<&'static [Row]> {
    Some(match name {
        "rma" => crate::rma_types!(rows),
        "amo_std" => crate::std_amo_types!(rows),
        "amo_ext" => crate::ext_amo_types!(rows),
        "amo_bit" => crate::bit_amo_types!(rows),
        "p2p" => crate::p2p_types!(rows),
        "reduce" => crate::reduce_types!(rows),
        _ => return None,
    })
}

/// The `SIZE`s of the sized families, in bits.
pub(crate) const SIZES: [u32; 5] = [8, 16, 32, 64, 128];

/// Whether a function is current or deprecated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Status {
    /// In OpenSHMEM 1.5 (or earlier) and not deprecated.
    Current15,
    /// New in OpenSHMEM 1.6.
    New16,
    /// Deprecated, still to be provided.
    Deprecated,
    /// An extension of rshmem's (`shmemx.h`).
    Extension,
}

/// What a template's placeholders are filled from.
#[derive(Clone, Debug)]
pub(crate) enum Fill {
    /// Nothing: the template is one function.
    None,
    /// `TYPENAME` and `TYPE` from these rows.
    Typed(Vec<Row>),
    /// `SIZE` from [`SIZES`].
    Sized,
}

/// One line of the list.
#[derive(Clone, Debug)]
pub(crate) struct Template {
    /// What the placeholders are filled from.
    pub(crate) fill: Fill,
    /// Current or deprecated.
    pub(crate) status: Status,
    /// The prototype with its placeholders, `;` included.
    pub(crate) prototype: &'static str,
    /// The heading of the list's section it is in (`Remote memory access`).
    pub(crate) section: &'static str,
}

/// One C function of the specification.
#[derive(Clone, Debug)]
pub(crate) struct Function {
    /// Its name (`shmem_ctx_long_put`).
    pub(crate) name: String,
    /// Its prototype as `shmem.h` declares it, `;` included.
    pub(crate) prototype: String,
    /// Current or deprecated.
    pub(crate) status: Status,
}

/// The templates of the list, in its order.
///
/// # Panics
/// On a line that is not of the list's form (the list is committed data, checked by tests).
pub(crate) fn templates() -> Vec<Template> {
    parse(SPEC)
}

/// The templates of the extensions' list (`spec/shmemx.txt`), in its order.
///
/// # Panics
/// As [`templates`].
pub(crate) fn extension_templates() -> Vec<Template> {
    parse(EXTENSIONS)
}

/// The templates of a list of the form of `spec/openshmem-1.6.txt`.
fn parse(list: &'static str) -> Vec<Template> {
    let mut section = "";
    let mut out = Vec::new();
    for line in list.lines().map(str::trim).filter(|line| !line.is_empty()) {
        if let Some(comment) = line.strip_prefix('#') {
            section = comment.trim();
            continue;
        }
        let mut template = parse_line(line).unwrap_or_else(|why| panic!("{why}: {line}"));
        template.section = section;
        out.push(template);
    }
    out
}

/// Reads one line: `TABLE STATUS PROTOTYPE`.
fn parse_line(line: &'static str) -> Result<Template, String> {
    let (table_tag, rest) = line.split_once(' ').ok_or("no table")?;
    let (status, prototype) = rest.split_once(' ').ok_or("no status")?;
    let status = match status {
        "1.5" => Status::Current15,
        "1.6" => Status::New16,
        "deprecated" => Status::Deprecated,
        "x" => Status::Extension,
        other => return Err(format!("unknown status {other}")),
    };
    let fill = match table_tag {
        "-" => Fill::None,
        "size" => Fill::Sized,
        tag => Fill::Typed(rows_of(tag)?),
    };
    Ok(Template {
        fill,
        status,
        prototype,
        section: "",
    })
}

/// The rows a table tag selects: `rma`, `reduce.arith`, `p2p[short,ushort]`,
/// `p2p[-short,-ushort]`.
fn rows_of(tag: &str) -> Result<Vec<Row>, String> {
    let (base, filter) = match tag.split_once('[') {
        Some((base, list)) => (base, Some(list.strip_suffix(']').ok_or("no closing ]")?)),
        None => (tag, None),
    };
    let (name, op) = match base.split_once('.') {
        Some((name, op)) => (name, Some(op)),
        None => (base, None),
    };
    let all = table(name).ok_or_else(|| format!("unknown table {name}"))?;
    let mut rows: Vec<Row> = all
        .iter()
        .filter(|row| op.is_none_or(|op| row.ops.contains(&op)))
        .copied()
        .collect();
    if let Some(list) = filter {
        let names: Vec<&str> = list.split(',').collect();
        let before = rows.len();
        let found = if names.iter().all(|name| name.starts_with('-')) {
            rows.retain(|row| !names.contains(&format!("-{}", row.name).as_str()));
            before - rows.len()
        } else {
            rows.retain(|row| names.contains(&row.name));
            rows.len()
        };
        if found != names.len() {
            return Err(format!("{tag} names a row that {name} does not have"));
        }
    }
    Ok(rows)
}

impl Template {
    /// The functions this template stands for.
    pub(crate) fn expand(&self) -> Vec<Function> {
        let made = |prototype: String| Function {
            name: name_of(&prototype).to_owned(),
            prototype,
            status: self.status,
        };
        match &self.fill {
            Fill::None => vec![made(self.prototype.to_owned())],
            Fill::Sized => SIZES
                .iter()
                .map(|size| made(self.prototype.replace("SIZE", &size.to_string())))
                .collect(),
            Fill::Typed(rows) => rows.iter().map(|row| made(self.fill_row(row))).collect(),
        }
    }

    /// The prototype with `TYPENAME` and `TYPE` of `row` filled in.
    pub(crate) fn fill_row(&self, row: &Row) -> String {
        self.prototype
            .replace("TYPENAME", row.name)
            .replace("TYPE", row.header_type())
    }

    /// The function's name with its placeholders (`shmem_ctx_TYPENAME_put`).
    pub(crate) fn name(&self) -> &'static str {
        name_of(self.prototype)
    }
}

/// The name a prototype declares: the identifier before its `(`.
pub(crate) fn name_of(prototype: &str) -> &str {
    let head = &prototype[..prototype.find('(').unwrap_or(prototype.len())];
    head.rsplit([' ', '*']).next().unwrap_or(head)
}

/// Every C function of the specification, in the list's order.
pub(crate) fn functions() -> Vec<Function> {
    templates().iter().flat_map(Template::expand).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(status: Status) -> usize {
        functions().iter().filter(|f| f.status == status).count()
    }

    #[test]
    fn the_list_expands_to_the_specifications_count() {
        // OpenSHMEM 1.5 has 1,507 current C functions, 1.6 adds 178.
        assert_eq!(count(Status::Current15), 1507);
        assert_eq!(count(Status::New16), 178);
        assert_eq!(count(Status::Deprecated), 133);
    }

    #[test]
    fn the_extensions_are_extensions() {
        let extensions: Vec<Function> = extension_templates()
            .iter()
            .flat_map(Template::expand)
            .collect();
        assert!(extensions.iter().all(|f| f.status == Status::Extension));
        assert!(extensions.iter().all(|f| f.name.starts_with("shmemx_")));
        // 8 untyped calls and a sum reduction per row of teamreducetypes.
        assert_eq!(extensions.len(), 8 + 26);
    }

    #[test]
    fn names_are_unique_and_filled() {
        let functions = functions();
        let mut names: Vec<&str> = functions.iter().map(|f| f.name.as_str()).collect();
        names.sort_unstable();
        let before = names.len();
        names.dedup();
        assert_eq!(names.len(), before, "a function is listed twice");
        for function in &functions {
            assert!(
                !function.prototype.contains("TYPE"),
                "{}",
                function.prototype
            );
            assert!(
                !function.prototype.contains("SIZE"),
                "{}",
                function.prototype
            );
        }
    }

    #[test]
    fn filters_narrow_and_leave_out() {
        let short: Vec<_> = rows_of("p2p[short,ushort]").unwrap();
        assert_eq!(short.len(), 2);
        assert_eq!(rows_of("p2p[-short,-ushort]").unwrap().len(), 12);
        assert_eq!(rows_of("reduce.bit").unwrap().len(), 14);
        assert_eq!(rows_of("reduce.minmax").unwrap().len(), 24);
        assert!(rows_of("p2p[float]").is_err());
        assert_eq!(
            name_of("void *shmem_ptr(const void *dest, int pe);"),
            "shmem_ptr"
        );
    }
}
