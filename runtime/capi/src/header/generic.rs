//! The generic names of `shmem.h`: C11 `_Generic` macros and, for C++, overloaded inline
//! functions, both made from the typed templates of the specification's list.
//!
//! A generic family is every typed template whose name, less `TYPENAME_` and `ctx_`, is the
//! same (`shmem_TYPENAME_put` and `shmem_ctx_TYPENAME_put` make `shmem_put`). The element type
//! is picked by the first parameter whose type is built on `TYPE` (the destination of a put,
//! the source of a `g`, the `ivar` of a wait). A family with a context twin first tests its
//! first argument for `shmem_ctx_t` (a distinct pointer type in `shmem.h`) and then picks the
//! type from the next argument; the unselected branches are never called, but every branch
//! must still be a valid expression, so each ends in a `default:` that names a function
//! declared and never defined (an unsupported type then fails to compile, naming it).
//!
//! A typedef'd row (`int64_t`, `size_t`, ...) is the same C type as a standard one (`long`
//! on LP64), and a `_Generic` list or an overload set may name a type only once. So each
//! family names every distinct C type of its table once, with the routine of the row of that
//! very type where the table has one (`long *` calls `shmem_long_put`, which is what
//! `shmem_int64_put` does too), else of the first typedef'd row of that type (the bitwise AMOs
//! list `int64_t` but not `long`, so `long *` calls `shmem_int64_atomic_and`). Every type of
//! every table is then accepted, through whichever spelling the program declares it with;
//! `shmem.h` asserts the typedefs this relies on (`typedef_asserts`).

use super::spec::{Fill, Row, Status, Template};

/// The deprecated C11 generic names of the specification: the `shmem_atomic_*` names' old
/// spellings and `shmem_wait(ivar, cmp_value)`, generic since OpenSHMEM 1.3 and deprecated in
/// 1.4; the only deprecated typed templates that have one.
const DEPRECATED_GENERICS: [&str; 9] = [
    "shmem_wait",
    "shmem_fetch",
    "shmem_set",
    "shmem_cswap",
    "shmem_swap",
    "shmem_finc",
    "shmem_inc",
    "shmem_fadd",
    "shmem_add",
];

/// The function an unsupported type selects: declared in `shmem.h`, defined nowhere.
pub(crate) const NO_MATCH: &str = "rshmem_generic_type_not_supported";

/// One form of a generic name: with or without a context argument.
#[derive(Debug)]
struct Form {
    /// The template of this form.
    template: Template,
    /// The rows it has, in table order.
    rows: Vec<Row>,
    /// The index of the argument that picks the type.
    pick: usize,
    /// Whether that argument is a `const TYPE *`.
    pick_const: bool,
}

/// A generic name and its forms.
#[derive(Debug)]
pub(crate) struct Family {
    /// The generic name (`shmem_put`).
    pub(crate) name: String,
    /// The form without a context.
    plain: Form,
    /// The form whose first argument is a context, if the family has one.
    ctx: Option<Form>,
}

/// The generic name of a typed template's name.
fn generic_name(typed: &str) -> String {
    typed
        .replace("TYPENAME_", "")
        .replace("shmem_ctx_", "shmem_")
}

/// The parameters of a prototype.
pub(crate) fn params(prototype: &str) -> Vec<&str> {
    let open = prototype.find('(').unwrap_or(0);
    let close = prototype.rfind(')').unwrap_or(prototype.len());
    prototype[open + 1..close]
        .split(',')
        .map(str::trim)
        .collect()
}

/// The name of a parameter (`source` of `const TYPE *source`).
fn param_name(param: &str) -> &str {
    param.rsplit([' ', '*']).next().unwrap_or(param)
}

impl Form {
    fn new(template: &Template) -> Form {
        let Fill::Typed(rows) = &template.fill else {
            unreachable!("only typed templates make generic families")
        };
        let list = params(template.prototype);
        let pick = list
            .iter()
            .position(|param| param.contains("TYPE *"))
            .expect("a typed template has a TYPE * parameter");
        Form {
            template: template.clone(),
            rows: rows.clone(),
            pick,
            pick_const: list[pick].starts_with("const "),
        }
    }

    /// Adds the rows of another template of the same form (a family's deprecated rows).
    fn merge(&mut self, template: &Template) {
        let Fill::Typed(rows) = &template.fill else {
            return;
        };
        self.rows.extend(rows.iter().copied());
    }

    /// The row each distinct C type of the table calls, in table order: the row of that very
    /// type if the table has one, else its first typedef'd row of that type.
    fn selected_rows(&self) -> Vec<&Row> {
        let mut chosen: Vec<&Row> = Vec::new();
        for row in &self.rows {
            match chosen.iter().position(|c| c.lp64_type() == row.lp64_type()) {
                None => chosen.push(row),
                Some(at) if chosen[at].is_alias() && !row.is_alias() => chosen[at] = row,
                Some(_) => {}
            }
        }
        chosen
    }

    /// The `_Generic` selection over the argument `RSHMEM_ARG<pick>`.
    fn selection(&self) -> String {
        let mut out = format!("_Generic(RSHMEM_ARG{}(__VA_ARGS__, 0, 0), ", self.pick);
        for row in self.selected_rows() {
            let function = self.template.name().replace("TYPENAME", row.name);
            let ty = row.lp64_type();
            out.push_str(&format!("\\\n        {ty} *: {function}, "));
            if self.pick_const {
                out.push_str(&format!("\\\n        const {ty} *: {function}, "));
            }
        }
        out.push_str(&format!("\\\n        default: {NO_MATCH})"));
        out
    }

    /// The C++ overloads of this form under the generic `name`, less those whose signature a
    /// C function of that name already has (`untyped`).
    fn overloads(&self, name: &str, untyped: &[String]) -> String {
        let mut out = String::new();
        for row in self.selected_rows() {
            let function = self.template.name().replace("TYPENAME", row.name);
            let declared = self.template.fill_row(row).replace(&function, name);
            if !untyped.contains(&declared) {
                out.push_str(&forwarding_overload(&declared, &function));
            }
        }
        out
    }
}

/// A C++ inline function `declared` (a prototype, `;` included) that calls `function` with
/// its arguments.
pub(crate) fn forwarding_overload(declared: &str, function: &str) -> String {
    let args: Vec<&str> = params(declared).into_iter().map(param_name).collect();
    let head = declared.trim_end_matches(';');
    format!(
        "static inline {head} {{ return {function}({}); }}\n",
        args.join(", ")
    )
}

/// The compile-time checks of the typedefs the selections rely on (`int64_t` is `long`), one
/// per typedef'd row of `families`, as C11 (`cxx` false) or C++11 declarations: a platform
/// where one does not hold fails to compile, naming the typedef, instead of calling a
/// routine of the wrong type.
pub(crate) fn typedef_asserts(families: &[Family], cxx: bool) -> String {
    let mut seen: Vec<&str> = Vec::new();
    let mut out = String::new();
    let forms = families
        .iter()
        .flat_map(|family| std::iter::once(&family.plain).chain(&family.ctx));
    for row in forms
        .flat_map(|form| &form.rows)
        .filter(|row| row.is_alias())
    {
        if seen.contains(&row.c_type) {
            continue;
        }
        seen.push(row.c_type);
        let (alias, plain) = (row.c_type, row.lp64_type());
        let message = format!("\"shmem.h: the generic names take {alias} to be {plain} (LP64)\"");
        out.push_str(&if cxx {
            format!("static_assert(rshmem_same_type<{alias}, {plain}>::value, {message});\n")
        } else {
            format!("_Static_assert(_Generic(({alias}) 0, {plain}: 1, default: 0), {message});\n")
        });
    }
    out
}

/// The generic families of the list, in its order.
pub(crate) fn families(templates: &[Template]) -> Vec<Family> {
    let mut families: Vec<Family> = Vec::new();
    for template in templates {
        if !matches!(template.fill, Fill::Typed(_)) {
            continue;
        }
        let name = generic_name(template.name());
        let is_ctx = template.name().starts_with("shmem_ctx_");
        if let Some(family) = families.iter_mut().find(|family| family.name == name) {
            match (&mut family.ctx, is_ctx) {
                (Some(form), true) => form.merge(template),
                (None, true) => family.ctx = Some(Form::new(template)),
                (_, false) => family.plain.merge(template),
            }
            continue;
        }
        let deprecated = template.status == Status::Deprecated;
        if deprecated && !DEPRECATED_GENERICS.contains(&name.as_str()) {
            continue;
        }
        families.push(Family {
            name,
            plain: Form::new(template),
            ctx: None,
        });
    }
    families
}

impl Family {
    /// The C11 macro.
    pub(crate) fn c11_macro(&self) -> String {
        let body = match &self.ctx {
            None => self.plain.selection(),
            Some(ctx) => format!(
                "_Generic(RSHMEM_ARG0(__VA_ARGS__, 0, 0), \\\n    shmem_ctx_t: {}, \\\n    \
                 default: {})",
                ctx.selection(),
                self.plain.selection()
            ),
        };
        format!("#define {}(...) {body}(__VA_ARGS__)\n", self.name)
    }

    /// The C++ overloads; `untyped` holds the prototypes of the list's untyped functions.
    pub(crate) fn cxx_overloads(&self, untyped: &[String]) -> String {
        let mut out = self.plain.overloads(&self.name, untyped);
        if let Some(ctx) = &self.ctx {
            out.push_str(&ctx.overloads(&self.name, untyped));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::super::spec::templates;
    use super::*;

    #[test]
    fn families_have_the_specifications_generic_names() {
        let families = families(&templates());
        let names: Vec<&str> = families.iter().map(|f| f.name.as_str()).collect();
        for name in [
            "shmem_put",
            "shmem_g",
            "shmem_atomic_fetch_add",
            "shmem_wait_until",
        ] {
            assert!(names.contains(&name), "{name} missing");
        }
        assert!(
            !names.contains(&"shmem_and_to_all"),
            "to_all has no generic name"
        );
        assert!(names.contains(&"shmem_fadd"), "deprecated C11 name kept");
        // 62 current names (58 of 1.5, 4 of 1.6) and the 9 deprecated ones.
        assert_eq!(families.len(), 71);
    }

    #[test]
    fn the_ctx_twin_picks_by_its_second_argument() {
        let families = families(&templates());
        let put = families.iter().find(|f| f.name == "shmem_put").unwrap();
        let text = put.c11_macro();
        assert!(
            text.contains("shmem_ctx_t: _Generic(RSHMEM_ARG1("),
            "{text}"
        );
        assert!(text.contains("long *: shmem_ctx_long_put"), "{text}");
        assert!(
            !text.contains("int64"),
            "long is named once, as long: {text}"
        );
        let g = families.iter().find(|f| f.name == "shmem_g").unwrap();
        assert!(g.c11_macro().contains("const long *: shmem_long_g"));
    }

    #[test]
    fn a_type_only_a_typedef_row_has_calls_that_row() {
        let families = families(&templates());
        let find = |name: &str| families.iter().find(|f| f.name == name).unwrap();
        let and = find("shmem_atomic_and").c11_macro();
        for (ty, function) in [
            ("int", "shmem_int32_atomic_and"),
            ("long", "shmem_int64_atomic_and"),
            ("unsigned int", "shmem_uint_atomic_and"),
            ("unsigned long", "shmem_ulong_atomic_and"),
            ("long", "shmem_ctx_int64_atomic_and"),
        ] {
            assert!(
                and.contains(&format!("        {ty} *: {function}, ")),
                "{and}"
            );
        }
        assert_eq!(and.matches("unsigned long *:").count(), 2, "{and}");
        let reduce = find("shmem_and_reduce").c11_macro();
        assert!(
            reduce.contains("signed char *: shmem_int8_and_reduce"),
            "{reduce}"
        );
        assert!(
            reduce.contains("short *: shmem_int16_and_reduce"),
            "{reduce}"
        );
        assert!(
            !reduce.contains("_t *"),
            "typedefs are named as their types: {reduce}"
        );
        let cxx = find("shmem_atomic_and").cxx_overloads(&[]);
        assert!(
            cxx.contains("void shmem_atomic_and(int64_t *dest, int64_t value, int pe)"),
            "{cxx}"
        );
    }

    #[test]
    fn the_typedefs_relied_on_are_asserted() {
        let families = families(&templates());
        let c = typedef_asserts(&families, false);
        assert!(c.contains("_Static_assert(_Generic((int64_t) 0, long: 1, default: 0)"));
        assert_eq!(c.lines().count(), 10, "{c}");
        let cxx = typedef_asserts(&families, true);
        assert!(cxx.contains("static_assert(rshmem_same_type<size_t, unsigned long>::value"));
    }

    #[test]
    fn overloads_skip_a_c_function_of_the_same_signature() {
        let families = families(&templates());
        let wait = families
            .iter()
            .find(|f| f.name == "shmem_wait_until")
            .unwrap();
        let untyped = ["void shmem_wait_until(long *ivar, int cmp, long cmp_value);".to_owned()];
        let text = wait.cxx_overloads(&untyped);
        assert!(!text.contains("(long *ivar"), "{text}");
        assert!(
            text.contains("return shmem_int_wait_until(ivar, cmp, cmp_value);"),
            "{text}"
        );
    }
}
