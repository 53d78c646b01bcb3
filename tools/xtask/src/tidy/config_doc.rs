//! The configuration table against its documentation: every variable of
//! `rshmem::config::table` has a row in docs/config.md with the same type and default, and
//! the page documents no variable the runtime does not read.
//!
//! The table is read through the runtime's public API, as `rshmem info` reads it, so this
//! check sees exactly what users see.

use super::Violation;

/// Where the documentation lives, relative to the repository root.
pub(crate) const DOC_PATH: &str = "docs/config.md";
/// Where the table lives, for the fixes.
const TABLE_PATH: &str = "runtime/src/config.rs";
const RULE: &str = "config-doc";

/// One variable as the table has it: name, type, default.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Var {
    pub(crate) name: String,
    pub(crate) kind: String,
    pub(crate) default: String,
}

/// The runtime's table.
pub(crate) fn runtime_table() -> Vec<Var> {
    rshmem::config::table()
        .iter()
        .map(|var| Var {
            name: var.name.to_owned(),
            kind: var.kind().name().to_owned(),
            default: var.default.to_owned(),
        })
        .collect()
}

/// A documented row: its line, its cells without backticks.
struct Row {
    line: usize,
    cells: Vec<String>,
}

/// The rows of the first Markdown table of `doc` whose header starts with `| variable |`.
fn doc_rows(doc: &str) -> (usize, Vec<Row>) {
    let mut rows = Vec::new();
    let mut header_line = 0;
    for (n, line) in doc.lines().enumerate() {
        let line = line.trim();
        if header_line == 0 {
            if line.starts_with("| variable |") {
                header_line = n + 1;
            }
            continue;
        }
        if !line.starts_with('|') {
            break;
        }
        let cells: Vec<String> = line
            .trim_matches('|')
            .split('|')
            .map(|cell| cell.trim().trim_matches('`').to_owned())
            .collect();
        if cells
            .iter()
            .all(|c| c.chars().all(|ch| ch == '-' || ch == ' '))
        {
            continue;
        }
        rows.push(Row { line: n + 1, cells });
    }
    (header_line, rows)
}

/// The disagreements between `table` and the documentation `doc`.
pub(crate) fn check(table: &[Var], doc: &str) -> Vec<Violation> {
    let violation = |line: usize, message: String, fix: String| Violation {
        path: DOC_PATH.to_owned(),
        line,
        rule: RULE,
        message,
        fix,
    };
    let (header_line, rows) = doc_rows(doc);
    if header_line == 0 {
        return vec![violation(
            1,
            "no table of variables".into(),
            "add a table whose header is `| variable | type | default | accepted values | \
             meaning |`, one row per variable of rshmem::config::table"
                .into(),
        )];
    }
    let mut violations = Vec::new();
    for var in table {
        match rows.iter().find(|row| row.cells[0] == var.name) {
            None => violations.push(violation(
                header_line,
                format!(
                    "`{}` is in the runtime's table but not documented",
                    var.name
                ),
                format!(
                    "add the row `| `{}` | {} | `{}` | ACCEPTED VALUES | MEANING |`",
                    var.name, var.kind, var.default
                ),
            )),
            Some(row) => {
                let cell = |n: usize| row.cells.get(n).map_or("", String::as_str);
                for (column, documented, actual) in [
                    ("type", cell(1), var.kind.as_str()),
                    ("default", cell(2), var.default.as_str()),
                ] {
                    if documented != actual {
                        violations.push(violation(
                            row.line,
                            format!(
                                "`{}` has {column} `{documented}` here and `{actual}` in \
                                 {TABLE_PATH}",
                                var.name
                            ),
                            format!("write `{actual}`, or change the table if it is wrong"),
                        ));
                    }
                }
                for (n, column) in [(3, "accepted values"), (4, "meaning")] {
                    if cell(n).is_empty() {
                        violations.push(violation(
                            row.line,
                            format!("`{}` has no {column}", var.name),
                            format!("fill in its {column}"),
                        ));
                    }
                }
            }
        }
    }
    for row in &rows {
        if !table.iter().any(|var| var.name == row.cells[0]) {
            violations.push(violation(
                row.line,
                format!(
                    "`{}` is documented but the runtime does not read it",
                    row.cells[0]
                ),
                format!("delete the row, or add the variable to the table in {TABLE_PATH}"),
            ));
        }
    }
    violations
}

#[cfg(test)]
mod tests {
    use super::*;

    fn var(name: &str, kind: &str, default: &str) -> Var {
        Var {
            name: name.into(),
            kind: kind.into(),
            default: default.into(),
        }
    }

    #[test]
    fn a_missing_stale_or_wrong_row_is_reported_at_its_line() {
        let table = [var("A_SIZE", "size", "1g"), var("B_FLAG", "bool", "0")];
        let doc = "# Configuration\n\n\
                   | variable | type | default | accepted values | meaning |\n\
                   | --- | --- | --- | --- | --- |\n\
                   | `A_SIZE` | size | `2g` | a size | the size |\n\
                   | `C_GONE` | u64 | `1` | a number | gone |\n";
        let found: Vec<(usize, String)> = check(&table, doc)
            .into_iter()
            .map(|v| (v.line, v.message))
            .collect();
        assert_eq!(
            found,
            [
                (
                    5,
                    "`A_SIZE` has default `2g` here and `1g` in runtime/src/config.rs".into()
                ),
                (
                    3,
                    "`B_FLAG` is in the runtime's table but not documented".into()
                ),
                (
                    6,
                    "`C_GONE` is documented but the runtime does not read it".into()
                ),
            ]
        );
    }
}
