//! Splits one line of a litmus file into tokens with their columns.
//!
//! The format is line-oriented, so the lexer never sees more than one line: every token
//! carries its 1-based column and the parser reports errors as `file:line:column`.

use super::error::ParseErrorKind;

/// What a token is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum TokKind {
    /// A run of letters, digits, `_` and `-` (`put`, `x`, `r3`, `12`, `nv-nvl`, `P1`).
    Word,
    /// One of the operators and separators of the format.
    Punct,
    /// A double-quoted string; `text` excludes the quotes.
    Str,
}

/// One token of a line.
#[derive(Clone, Copy, Debug)]
pub(super) struct Tok<'a> {
    pub kind: TokKind,
    pub text: &'a str,
    /// 1-based, counted in characters.
    pub column: u32,
}

/// Punctuation, longest first so that `==` is not read as `=` `=`.
const PUNCTS: [&str; 22] = [
    "/\\", "\\/", "==", "!=", ">=", "<=", ">", "<", "=", "@", ",", ":", "(", ")", "~", "|", ";",
    "[", "]", "{", "}", "+",
];

/// Removes a `#` comment, leaving `#` inside a string alone (a `source` text may cite an
/// issue as `#84`).
pub(super) fn strip_comment(line: &str) -> &str {
    let mut in_string = false;
    for (i, c) in line.char_indices() {
        match c {
            '"' => in_string = !in_string,
            '#' if !in_string => return &line[..i],
            _ => {}
        }
    }
    line
}

/// Tokenises a line whose comment is already stripped. The error carries a column.
pub(super) fn lex(line: &str) -> Result<Vec<Tok<'_>>, (u32, ParseErrorKind)> {
    let mut toks = Vec::new();
    let mut rest = line;
    let mut column: u32 = 1;
    while let Some(c) = rest.chars().next() {
        if c.is_whitespace() {
            rest = &rest[c.len_utf8()..];
            column += 1;
            continue;
        }
        // A negative literal (`-1`) is one word; `-` starts nothing else.
        let negative = c == '-' && rest[1..].starts_with(|d: char| d.is_ascii_digit());
        let (kind, len) = if c.is_ascii_alphanumeric() || c == '_' || negative {
            let len = rest[1..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
                .map_or(rest.len(), |i| i + 1);
            (TokKind::Word, len)
        } else if c == '"' {
            match rest[1..].find('"') {
                Some(end) => (TokKind::Str, end + 2),
                None => return Err((column, ParseErrorKind::UnterminatedString)),
            }
        } else if let Some(p) = PUNCTS.iter().find(|p| rest.starts_with(**p)) {
            (TokKind::Punct, p.len())
        } else {
            return Err((column, ParseErrorKind::UnexpectedChar(c)));
        };
        let text = &rest[..len];
        toks.push(Tok {
            kind,
            text: if kind == TokKind::Str {
                &text[1..len - 1]
            } else {
                text
            },
            column,
        });
        column += text.chars().count() as u32;
        rest = &rest[len..];
    }
    Ok(toks)
}
