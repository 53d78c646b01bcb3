//! A small Rust lexer over source text: code with comments and literals blanked out, bracket
//! matching, and the byte ranges of items under an attribute (`#[cfg(test)]`, an `#[allow]`).
//!
//! Why text and not a parser: both users ask questions a parse tree would not make easier
//! (which `Ordering::X` sits in a fence call, which lines name `std::sync`), and the answers
//! must point at the source's own bytes and lines. Blanking keeps every offset and newline of
//! the original, so a position in the code text is the same position in the file.

/// Whether `b` can be part of an identifier.
pub(crate) fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// `text` with comments and the insides of string and character literals replaced by spaces
/// (newlines kept), so that byte offsets and line numbers stay those of `text`.
pub(crate) fn code_only(text: &str) -> String {
    let s = text.as_bytes();
    let mut out = s.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for b in &mut out[from..to] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
    };
    let mut i = 0;
    while i < s.len() {
        let rest = &s[i..];
        if rest.starts_with(b"//") {
            let end = rest
                .iter()
                .position(|&b| b == b'\n')
                .map_or(s.len(), |p| i + p);
            blank(&mut out, i, end);
            i = end;
        } else if rest.starts_with(b"/*") {
            let (mut depth, mut j) = (1, i + 2);
            while j < s.len() && depth > 0 {
                if s[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if s[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                } else {
                    j += 1;
                }
            }
            blank(&mut out, i, j);
            i = j;
        } else if (rest.starts_with(b"r\"") || rest.starts_with(b"r#"))
            && (i == 0 || !is_ident(s[i - 1]))
        {
            // A raw string: r"..." or r#"..."#, no escapes.
            let hashes = rest[1..].iter().take_while(|&&b| b == b'#').count();
            if rest.get(1 + hashes) != Some(&b'"') {
                i += 1;
                continue;
            }
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            let body = i + 2 + hashes;
            let end = s[body..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
                .map_or(s.len(), |p| body + p);
            blank(&mut out, body, end);
            i = (end + close.len()).min(s.len());
        } else if rest[0] == b'"' {
            let mut j = i + 1;
            while j < s.len() && s[j] != b'"' {
                j += if s[j] == b'\\' { 2 } else { 1 };
            }
            let end = j.min(s.len());
            blank(&mut out, i + 1, end);
            i = end + 1;
        } else if rest[0] == b'\'' {
            // A character literal ('x', '\n', '\u{..}') or a lifetime ('a).
            let literal_end = if rest.get(1) == Some(&b'\\') {
                rest[2..]
                    .iter()
                    .position(|&b| b == b'\'')
                    .map(|p| i + 2 + p)
            } else {
                let ch = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                (rest.get(1 + ch) == Some(&b'\'')).then_some(i + 1 + ch)
            };
            match literal_end {
                Some(end) => {
                    blank(&mut out, i + 1, end);
                    i = end + 1;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    String::from_utf8(out).expect("only whole characters were blanked")
}

/// The index of the bracket that closes the one at `open` (`(`, `[` or `{`), in code text.
pub(crate) fn matching_close(code: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (j, &b) in code.iter().enumerate().skip(open) {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(j);
                }
            }
            _ => {}
        }
    }
    None
}

/// The index of the innermost bracket opened before `at` and still open there.
pub(crate) fn enclosing_open(code: &[u8], at: usize) -> Option<usize> {
    let mut depth = 0usize;
    for j in (0..at).rev() {
        match code[j] {
            b')' | b']' | b'}' => depth += 1,
            b'(' | b'[' | b'{' => {
                if depth == 0 {
                    return Some(j);
                }
                depth -= 1;
            }
            _ => {}
        }
    }
    None
}

/// The identifier that ends right before `at` (after optional whitespace), and where it starts.
pub(crate) fn ident_before(code: &[u8], at: usize) -> (&str, usize) {
    let mut end = at;
    while end > 0 && code[end - 1].is_ascii_whitespace() {
        end -= 1;
    }
    let mut start = end;
    while start > 0 && is_ident(code[start - 1]) {
        start -= 1;
    }
    (std::str::from_utf8(&code[start..end]).unwrap_or(""), start)
}

/// The 1-based line of byte `at` in `text`.
pub(crate) fn line_of(text: &str, at: usize) -> usize {
    text[..at].bytes().filter(|&b| b == b'\n').count() + 1
}

/// What a `cfg` predicate is when some names are known and the others could be either.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Truth {
    False,
    True,
    Unknown,
}

/// Evaluates the `cfg` predicate `pred` (`test`, `all(..)`, `any(..)`, `not(..)`, `feature =
/// ".."`) with three-valued logic: `known` gives the value of the names it knows.
pub(crate) fn eval_cfg(pred: &str, known: &dyn Fn(&str) -> Option<bool>) -> Truth {
    let pred = pred.trim();
    let Some((name, args)) = pred
        .find('(')
        .filter(|_| pred.ends_with(')'))
        .map(|open| (pred[..open].trim(), &pred[open + 1..pred.len() - 1]))
    else {
        return match known(pred) {
            Some(true) => Truth::True,
            Some(false) => Truth::False,
            None => Truth::Unknown,
        };
    };
    let mut parts = Vec::new();
    let (mut depth, mut from) = (0usize, 0);
    for (j, c) in args.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&args[from..j]);
                from = j + 1;
            }
            _ => {}
        }
    }
    parts.push(&args[from..]);
    let values = parts
        .into_iter()
        .filter(|p| !p.trim().is_empty())
        .map(|p| eval_cfg(p, known));
    let (absorbing, neutral) = match name {
        "all" => (Truth::False, Truth::True),
        "any" => (Truth::True, Truth::False),
        "not" => {
            return match values.last().unwrap_or(Truth::Unknown) {
                Truth::False => Truth::True,
                Truth::True => Truth::False,
                Truth::Unknown => Truth::Unknown,
            };
        }
        _ => return Truth::Unknown,
    };
    values.fold(neutral, |acc, v| {
        if acc == absorbing || v == absorbing {
            absorbing
        } else if acc == Truth::Unknown || v == Truth::Unknown {
            Truth::Unknown
        } else {
            neutral
        }
    })
}

/// Whether a `cfg` predicate can hold only when `test` is set.
pub(crate) fn requires_test(pred: &str) -> bool {
    eval_cfg(pred, &|name| (name == "test").then_some(false)) == Truth::False
}

/// The predicate of a `cfg(..)` attribute body, if `attr` is one.
pub(crate) fn cfg_predicate(attr: &str) -> Option<&str> {
    attr.strip_prefix("cfg")
        .map(str::trim_start)
        .and_then(|p| p.strip_prefix('('))
        .and_then(|p| p.strip_suffix(')'))
}

/// Byte ranges of the items whose attribute (the text inside `#[..]`) `picks` selects, from
/// the `#` to the end of the item; an inner attribute (`#![..]`) it selects covers the file.
pub(crate) fn attributed_items(code: &str, picks: &dyn Fn(&str) -> bool) -> Vec<(usize, usize)> {
    let c = code.as_bytes();
    let mut ranges = Vec::new();
    let mut from = 0;
    while let Some(at) = code[from..].find('#').map(|p| from + p) {
        from = at + 1;
        let inner = c.get(at + 1) == Some(&b'!');
        let bracket = at + 1 + usize::from(inner);
        if c.get(bracket) != Some(&b'[') {
            continue;
        }
        let Some(close) = matching_close(c, bracket) else {
            continue;
        };
        if !picks(code[bracket + 1..close].trim()) {
            continue;
        }
        if inner {
            ranges.push((0, c.len()));
            break;
        }
        // The item: up to its first `;` or its braced body, outside parentheses.
        let mut j = close + 1;
        let mut depth = 0usize;
        let end = loop {
            match c.get(j) {
                None => break c.len(),
                Some(b'(' | b'[') => depth += 1,
                Some(b')' | b']') => depth = depth.saturating_sub(1),
                Some(b';') if depth == 0 => break j + 1,
                Some(b'{') if depth == 0 => break matching_close(c, j).map_or(c.len(), |e| e + 1),
                _ => {}
            }
            j += 1;
        };
        ranges.push((at, end));
        from = end;
    }
    ranges
}

/// Byte ranges of items (and whole files, for `#![cfg(..)]`) compiled only for tests.
pub(crate) fn test_only_ranges(code: &str) -> Vec<(usize, usize)> {
    attributed_items(code, &|attr| cfg_predicate(attr).is_some_and(requires_test))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cfg_predicates_are_false_only_when_a_known_name_makes_them_so() {
        let under_loom = |name: &str| (name == "rshmem_loom").then_some(true);
        assert_eq!(
            eval_cfg("not(any(rshmem_loom, rshmem_shuttle))", &under_loom),
            Truth::False
        );
        assert_eq!(
            eval_cfg("all(rshmem_shuttle, not(rshmem_loom))", &under_loom),
            Truth::False
        );
        assert_eq!(
            eval_cfg("any(rshmem_shuttle, feature = \"cuda\")", &under_loom),
            Truth::Unknown
        );
        assert_eq!(eval_cfg("rshmem_loom", &under_loom), Truth::True);
    }

    #[test]
    fn attributed_items_end_at_their_semicolon_or_body() {
        let code = "#[allow(x)]\nuse a::B;\nfn f() {}\n#[allow(x)]\nstruct S { b: B }\nfn g() {}\n";
        let ranges = attributed_items(code, &|attr| attr == "allow(x)");
        let texts: Vec<&str> = ranges.iter().map(|&(s, e)| &code[s..e]).collect();
        assert_eq!(
            texts,
            ["#[allow(x)]\nuse a::B;", "#[allow(x)]\nstruct S { b: B }"]
        );
    }
}
