//! The mutant finder: every weakening of a memory ordering or a fence in a source file's
//! code, with where it is and what replaces it (the rules are in the `mutate` module's doc).

use std::path::{Path, PathBuf};

use crate::lex::{
    code_only, enclosing_open, ident_before, is_ident, line_of, matching_close, test_only_ranges,
};

/// One weakening at one place.
#[derive(Debug, Clone)]
pub(crate) struct Mutant {
    pub(crate) file: PathBuf,
    pub(crate) line: usize,
    /// Byte range in the file's text that is replaced.
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) replacement: String,
    pub(crate) describe: String,
}

impl Mutant {
    pub(crate) fn site(&self) -> String {
        format!("{}:{}", self.file.display(), self.line)
    }
}

const STRONG: [&str; 4] = ["SeqCst", "AcqRel", "Release", "Acquire"];

/// Whether the `Ordering::X` ending at `end` (and starting at `start`) is a pattern: an
/// alternative of a match arm (`A | B =>`) or of `matches!(value, A | B)`.
fn is_pattern(code: &[u8], start: usize, end: usize) -> bool {
    let mut j = end;
    loop {
        while j < code.len() && code[j].is_ascii_whitespace() {
            j += 1;
        }
        if code[j..].starts_with(b"=>") {
            return true;
        }
        if code.get(j) == Some(&b'|') && code.get(j + 1) != Some(&b'|') {
            j += 1;
            while j < code.len() && code[j].is_ascii_whitespace() {
                j += 1;
            }
            while j < code.len() && (is_ident(code[j]) || code[j] == b':') {
                j += 1;
            }
            continue;
        }
        break;
    }
    // matches!(value, PATTERN): the site follows the first top-level comma.
    if let Some(open) = enclosing_open(code, start)
        && code[open] == b'('
        && code[..open].ends_with(b"matches!")
    {
        let first_comma =
            (open + 1..start).find(|&k| code[k] == b',' && enclosing_open(code, k) == Some(open));
        return first_comma.is_some();
    }
    false
}

/// Every mutant of `file` (whose text is `text`), in file order.
pub(crate) fn find_mutants(file: &Path, text: &str, split_acqrel: bool) -> Vec<Mutant> {
    let code_text = code_only(text);
    let code = code_text.as_bytes();
    let skipped = test_only_ranges(&code_text);
    let in_skipped = |at: usize| skipped.iter().any(|&(s, e)| s <= at && at < e);
    let mut mutants = Vec::new();
    let mut push = |start: usize, end: usize, replacement: String, describe: String| {
        mutants.push(Mutant {
            file: file.to_path_buf(),
            line: line_of(text, start),
            start,
            end,
            replacement,
            describe,
        });
    };

    for strong in STRONG {
        let needle = format!("Ordering::{strong}");
        let mut from = 0;
        while let Some(at) = code_text[from..].find(&needle).map(|p| from + p) {
            from = at + needle.len();
            let start = at + "Ordering::".len();
            let end = from;
            if (at > 0 && is_ident(code[at - 1]))
                || code.get(end).is_some_and(|&b| is_ident(b))
                || in_skipped(at)
                || is_pattern(code, at, end)
            {
                continue;
            }
            // An argument of a fence call?
            let fence_name = enclosing_open(code, at)
                .filter(|&open| code[open] == b'(')
                .map(|open| ident_before(code, open))
                .filter(|(name, name_at)| {
                    name.ends_with("fence") && {
                        let before = &code[..*name_at];
                        !before.ends_with(b".") && !ident_before(code, *name_at).0.eq("fn")
                    }
                })
                .map(|(name, _)| name.to_string());
            let weaker: &[&str] = match (&fence_name, strong) {
                (Some(_), "SeqCst") => &["AcqRel"],
                (Some(_), "AcqRel") => &["Acquire", "Release"],
                (Some(_), _) => &[],
                (None, "AcqRel") if split_acqrel => &["Relaxed", "Acquire", "Release"],
                (None, _) => &["Relaxed"],
            };
            for w in weaker {
                let describe = match &fence_name {
                    Some(name) => format!("{name}({strong}) -> {name}({w})"),
                    None => format!("{strong} -> {w}"),
                };
                push(start, end, (*w).to_string(), describe);
            }
        }
    }

    // Fence calls: `fence(` whose name is exactly `fence` (so not `compiler_fence` nor a
    // method `.fence()`, nor `fn fence(`), up to the matching parenthesis.
    let mut from = 0;
    while let Some(at) = code_text[from..].find("fence(").map(|p| from + p) {
        from = at + "fence(".len();
        let prev = code[..at].iter().rev().find(|b| !b.is_ascii_whitespace());
        let is_call = !(at > 0 && is_ident(code[at - 1]))
            && prev != Some(&b'.')
            && ident_before(code, at).0 != "fn";
        if !is_call || in_skipped(at) {
            continue;
        }
        let open = at + "fence".len();
        let Some(close) = matching_close(code, open) else {
            continue;
        };
        let call = text[at..=close]
            .split_whitespace()
            .collect::<String>()
            .replace(",)", ")");
        push(at, close + 1, "()".into(), format!("{call} removed"));
    }
    mutants.sort_by_key(|m| m.start);
    mutants
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lex::requires_test;

    fn described(text: &str) -> Vec<(usize, String)> {
        find_mutants(&PathBuf::from("x.rs"), text, false)
            .into_iter()
            .map(|m| (m.line, m.describe))
            .collect()
    }

    fn owned(v: &[(usize, &str)]) -> Vec<(usize, String)> {
        v.iter().map(|&(l, d)| (l, d.to_string())).collect()
    }

    #[test]
    fn finds_orderings_and_fence_calls_but_not_comments_or_methods() {
        let text = "a.store(1, Ordering::Release);\n\
                    // Ordering::SeqCst in a comment\n\
                    fence(Ordering::SeqCst);\n\
                    q.fence()?; compiler_fence(Ordering::Acquire);\n";
        let ms = find_mutants(&PathBuf::from("x.rs"), text, false);
        assert_eq!(
            described(text),
            owned(&[
                (1, "Release -> Relaxed"),
                (3, "fence(Ordering::SeqCst) removed"),
                (3, "fence(SeqCst) -> fence(AcqRel)"),
            ])
        );
        let mut mutated = text.to_string();
        mutated.replace_range(ms[1].start..ms[1].end, &ms[1].replacement);
        assert!(mutated.contains("\n();\n"));
        let mut mutated = text.to_string();
        mutated.replace_range(ms[2].start..ms[2].end, &ms[2].replacement);
        assert!(mutated.contains("\nfence(Ordering::AcqRel);\n"));
    }

    #[test]
    fn skips_code_compiled_only_for_tests() {
        let text = "x.load(Ordering::Acquire);\n\
                    #[cfg(test)]\n\
                    mod tests {\n\
                        fn f() { x.load(Ordering::Acquire); fence(Ordering::SeqCst); }\n\
                    }\n\
                    #[cfg(all(test, not(rshmem_loom)))]\n\
                    mod more { fn g() { x.swap(1, Ordering::AcqRel); } }\n\
                    #[cfg(not(test))]\n\
                    fn h() { x.swap(1, Ordering::AcqRel); }\n\
                    #[cfg(any(test, rshmem_loom))]\n\
                    fn k() { x.swap(1, Ordering::SeqCst); }\n";
        assert_eq!(
            described(text),
            owned(&[
                (1, "Acquire -> Relaxed"),
                (9, "AcqRel -> Relaxed"),
                (11, "SeqCst -> Relaxed"),
            ])
        );
        assert!(requires_test("all(test, not(loom))"));
        assert!(requires_test("any(test, all(test, x))"));
        assert!(!requires_test("not(test)"));
        assert!(!requires_test("any(test, loom)"));
    }

    #[test]
    fn skips_match_patterns_but_not_the_values_they_map_to() {
        let text = "match order {\n\
                        Ordering::AcqRel | Ordering::Acquire => Ordering::Acquire,\n\
                        Ordering::SeqCst => Ordering::SeqCst,\n\
                        _ => Ordering::Relaxed,\n\
                    }\n\
                    let b = matches!(o, Ordering::Release | Ordering::AcqRel);\n\
                    let c = matches!(f(Ordering::Release), Ordering::SeqCst);\n";
        assert_eq!(
            described(text),
            owned(&[
                (2, "Acquire -> Relaxed"),
                (3, "SeqCst -> Relaxed"),
                (7, "Release -> Relaxed"),
            ])
        );
    }

    #[test]
    fn skips_fence_definitions_and_takes_orderings_passed_as_arguments() {
        let text = "fn fence(&self) -> Result<(), E> {\n\
                        fence(Ordering::Release);\n\
                        Ok(())\n\
                    }\n\
                    segment.read(off, buf, Ordering::Acquire);\n\
                    s.amo(\n    off,\n    op,\n    Ordering::AcqRel,\n);\n\
                    std::sync::atomic::fence(\n    Ordering::AcqRel,\n);\n";
        assert_eq!(
            described(text),
            owned(&[
                (2, "fence(Ordering::Release) removed"),
                (5, "Acquire -> Relaxed"),
                (9, "AcqRel -> Relaxed"),
                (11, "fence(Ordering::AcqRel) removed"),
                (12, "fence(AcqRel) -> fence(Acquire)"),
                (12, "fence(AcqRel) -> fence(Release)"),
            ])
        );
    }

    #[test]
    fn splits_acqrel_on_request() {
        let ms = find_mutants(
            &PathBuf::from("x.rs"),
            "x.swap(1, Ordering::AcqRel);\n",
            true,
        );
        let d: Vec<&str> = ms.iter().map(|m| m.describe.as_str()).collect();
        assert_eq!(
            d,
            [
                "AcqRel -> Relaxed",
                "AcqRel -> Acquire",
                "AcqRel -> Release"
            ]
        );
    }

    #[test]
    fn strings_and_block_comments_are_not_code() {
        let text = "let s = \"Ordering::SeqCst fence(x)\"; /* fence(Ordering::SeqCst)\n\
                    Ordering::Acquire */ let r = r#\"Ordering::Release\"#; let c = '\"';\n\
                    x.load(Ordering::Acquire); // the only one\n";
        assert_eq!(described(text), owned(&[(3, "Acquire -> Relaxed")]));
        assert_eq!(code_only(text).len(), text.len());
    }
}
