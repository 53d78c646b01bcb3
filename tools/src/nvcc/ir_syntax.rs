//! The small pieces of LLVM's textual IR (clang 14, typed pointers) that the rewrite needs to
//! read: a type at the start of a string, a parameter list, a global's name, its uses.
//!
//! Not a parser of the language: the rewrite reads the lines clang's NVPTX device pass writes,
//! whose shapes are few and fixed for one pinned clang, and copies everything else through.

/// Whether `c` can be part of an unquoted LLVM name (`@_Z4kernPi`, `%struct.P`).
fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$' | '-')
}

/// The length of a name (unquoted or `"quoted"`) at the start of `s`, sigil excluded.
fn name_len(s: &str) -> usize {
    if let Some(rest) = s.strip_prefix('"') {
        rest.find('"').map_or(s.len(), |end| end + 2)
    } else {
        s.find(|c| !is_name_char(c)).unwrap_or(s.len())
    }
}

/// The length of the bracketed group at the start of `s` (`{..}`, `[..]`, `<..>`, `(..)`),
/// counting nested brackets of every kind.
fn group_len(s: &str) -> usize {
    let mut depth = 0usize;
    for (i, c) in s.char_indices() {
        match c {
            '{' | '[' | '<' | '(' => depth += 1,
            '}' | ']' | '>' | ')' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
    }
    s.len()
}

/// Splits `s` (leading spaces allowed) into the type it starts with and the rest:
/// `"%struct.P* byval(%struct.P) %4"` gives `("%struct.P*", " byval(%struct.P) %4")`.
pub(crate) fn split_type(s: &str) -> (&str, &str) {
    let s = s.trim_start();
    let mut end = match s.chars().next() {
        Some('{' | '[' | '<') => group_len(s),
        Some('%') => 1 + name_len(&s[1..]),
        _ => name_len(s),
    };
    loop {
        let rest = &s[end..];
        let trimmed = rest.trim_start();
        let skipped = rest.len() - trimmed.len();
        if trimmed.starts_with('*') {
            end += skipped + 1;
        } else if trimmed.starts_with("addrspace(") {
            end += skipped + "addrspace".len() + group_len(&trimmed["addrspace".len()..]);
        } else if trimmed.starts_with('(') {
            // A function type: `void (i32)*`.
            end += skipped + group_len(trimmed);
        } else {
            break;
        }
    }
    (&s[..end], &s[end..])
}

/// Splits a comma-separated list at its top level (commas inside brackets stay).
pub(crate) fn split_top_level(s: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start, mut quoted) = (0usize, 0usize, false);
    for (i, c) in s.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '{' | '[' | '<' | '(' if !quoted => depth += 1,
            '}' | ']' | '>' | ')' if !quoted => depth = depth.saturating_sub(1),
            ',' if depth == 0 && !quoted => {
                parts.push(s[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    if !s[start..].trim().is_empty() {
        parts.push(s[start..].trim());
    }
    parts
}

/// The contents of the bracketed group that starts at byte `open` of `s` (without brackets).
pub(crate) fn group_at(s: &str, open: usize) -> &str {
    let len = group_len(&s[open..]);
    &s[open + 1..open + len.max(2) - 1]
}

/// The global name (`@name` or `@"quoted"`, sigil included) that starts at `s`, if any.
pub(crate) fn global_at(s: &str) -> Option<&str> {
    let rest = s.strip_prefix('@')?;
    let len = name_len(rest);
    (len > 0).then(|| &s[..=len])
}

/// A global's symbol name from its IR spelling: `@"a b"` is `a b`, `@k` is `k`.
pub(crate) fn symbol_name(global: &str) -> &str {
    let bare = global.trim_start_matches('@');
    bare.strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or(bare)
}

/// Replaces every use of the global `name` (`@x`, sigil included) in `line` by `by`, leaving
/// longer names that start the same (`@x2`) alone.
pub(crate) fn replace_global(line: &str, name: &str, by: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find(name) {
        let after = &rest[at + name.len()..];
        let whole = name.ends_with('"') || !after.starts_with(is_name_char);
        out.push_str(&rest[..at]);
        out.push_str(if whole { by } else { name });
        rest = after;
    }
    out.push_str(rest);
    out
}

/// `s` as the body of an LLVM string constant `c"..."` (with the terminating NUL).
pub(crate) fn c_string(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes().chain(std::iter::once(0)) {
        if b.is_ascii_graphic() && b != b'"' && b != b'\\' || b == b' ' {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("\\{b:02X}"));
        }
    }
    out
}

/// A `declare` of the function `name` (`signature` is `RET @name(ARGS)`) when `ir` neither
/// declares nor defines it, else nothing: a second declaration is an error.
pub(crate) fn declare_if_missing(ir: &str, name: &str, signature: &str) -> String {
    let called = format!("@{name}(");
    let present = ir
        .lines()
        .any(|l| (l.starts_with("declare ") || l.starts_with("define ")) && l.contains(&called));
    if present {
        String::new()
    } else {
        format!("declare {signature}\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_are_split_from_what_follows() {
        assert_eq!(
            split_type("%struct.P* nocapture byval(%struct.P) align 4 %4"),
            ("%struct.P*", " nocapture byval(%struct.P) align 4 %4")
        );
        assert_eq!(
            split_type("i32 addrspace(1)* %x"),
            ("i32 addrspace(1)*", " %x")
        );
        assert_eq!(
            split_type("void (i32, i8*)** %f"),
            ("void (i32, i8*)**", " %f")
        );
        assert_eq!(
            split_type("[4 x { i32, float }] zeroinitializer"),
            ("[4 x { i32, float }]", " zeroinitializer")
        );
        assert_eq!(split_type("<2 x float> %v"), ("<2 x float>", " %v"));
        assert_eq!(
            split_type("%\"class.a::b\"* %p"),
            ("%\"class.a::b\"*", " %p")
        );
    }

    #[test]
    fn lists_split_at_the_top_level_only() {
        assert_eq!(
            split_top_level("i32 %0, { i32, i32 }* byval({ i32, i32 }) %1"),
            ["i32 %0", "{ i32, i32 }* byval({ i32, i32 }) %1"]
        );
    }

    #[test]
    fn globals_are_replaced_as_whole_names() {
        assert_eq!(
            replace_global("@x @x2 @x, @x.y", "@x", "@y"),
            "@y @x2 @y, @x.y"
        );
        assert_eq!(symbol_name("@\"a b\""), "a b");
        assert_eq!(global_at("@_Z1kv, !\"kernel\""), Some("@_Z1kv"));
    }
}
