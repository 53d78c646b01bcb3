//! A cursor over the tokens of one line, with the small matchers the grammar needs.
//!
//! Every matcher that fails says what it expected and what it found, at the column of the
//! offending token (or just past the end of the line), so that each error of the parser
//! reads `expected WHAT, found 'TOKEN'`.

use super::error::ParseErrorKind;
use super::lex::{Tok, TokKind};
use crate::litmus::Span;

/// An error before the file name is attached.
pub(super) type Located = (Span, ParseErrorKind);

/// A result of the parser's internals.
pub(super) type PResult<T> = Result<T, Located>;

/// The tokens of one line and a position among them.
pub(super) struct Cursor<'t> {
    toks: Vec<Tok<'t>>,
    at: usize,
    line: u32,
    /// The column just past the last character, where "end of line" is reported.
    end_column: u32,
}

impl<'t> Cursor<'t> {
    pub fn new(toks: Vec<Tok<'t>>, line: u32, end_column: u32) -> Self {
        Self {
            toks,
            at: 0,
            line,
            end_column,
        }
    }

    pub fn peek(&self) -> Option<Tok<'t>> {
        self.toks.get(self.at).copied()
    }

    /// The token after the next one.
    pub fn peek2(&self) -> Option<Tok<'t>> {
        self.toks.get(self.at + 1).copied()
    }

    pub fn bump(&mut self) -> Option<Tok<'t>> {
        let tok = self.peek();
        self.at += usize::from(tok.is_some());
        tok
    }

    /// Where the next token is (or the end of the line).
    pub fn span(&self) -> Span {
        Span {
            line: self.line,
            column: self.peek().map_or(self.end_column, |t| t.column),
        }
    }

    /// The span of a token already taken.
    pub fn span_of(&self, tok: Tok<'_>) -> Span {
        Span {
            line: self.line,
            column: tok.column,
        }
    }

    /// An error at the next token.
    pub fn error<T>(&self, kind: ParseErrorKind) -> PResult<T> {
        Err((self.span(), kind))
    }

    /// `expected WHAT, found NEXT` at the next token.
    pub fn expected<T>(&self, what: &str) -> PResult<T> {
        self.error(ParseErrorKind::Expected {
            expected: what.to_string(),
            found: found(self.peek()),
        })
    }

    /// Whether the next token is the punctuation `p`.
    pub fn at_punct(&self, p: &str) -> bool {
        matches!(self.peek(), Some(t) if t.kind == TokKind::Punct && t.text == p)
    }

    /// Whether the next token is the word `w`.
    pub fn at_word(&self, w: &str) -> bool {
        matches!(self.peek(), Some(t) if t.kind == TokKind::Word && t.text == w)
    }

    /// Takes the punctuation `p` if it is next.
    pub fn eat_punct(&mut self, p: &str) -> bool {
        let yes = self.at_punct(p);
        self.at += usize::from(yes);
        yes
    }

    /// Takes the punctuation `p` or fails with `expected WHAT`.
    pub fn punct(&mut self, p: &str, what: &str) -> PResult<()> {
        if self.eat_punct(p) {
            Ok(())
        } else {
            self.expected(what)
        }
    }

    /// Takes a word or fails with `expected WHAT`.
    pub fn word(&mut self, what: &str) -> PResult<Tok<'t>> {
        match self.peek() {
            Some(t) if t.kind == TokKind::Word => {
                self.at += 1;
                Ok(t)
            }
            _ => self.expected(what),
        }
    }

    /// Takes a decimal number or fails with `expected WHAT`.
    pub fn number(&mut self, what: &str) -> PResult<u64> {
        match self.peek() {
            Some(t) if t.kind == TokKind::Word && t.text.bytes().all(|b| b.is_ascii_digit()) => {
                let n = t.text.parse::<u64>().map_err(|_| {
                    (
                        self.span(),
                        ParseErrorKind::NumberTooLarge(t.text.to_string()),
                    )
                })?;
                self.at += 1;
                Ok(n)
            }
            _ => self.expected(what),
        }
    }

    /// Takes a decimal number or a negative one (`-1`, the word 2^64 - 1), or fails with
    /// `expected WHAT`.
    pub fn signed_number(&mut self, what: &str) -> PResult<u64> {
        match self.peek() {
            Some(t) if t.kind == TokKind::Word && t.text.starts_with('-') => {
                let digits = &t.text[1..];
                if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    return self.expected(what);
                }
                let n = digits
                    .parse::<u64>()
                    .ok()
                    .filter(|&n| n <= 1 << 63)
                    .ok_or_else(|| {
                        (
                            self.span(),
                            ParseErrorKind::NumberTooLarge(t.text.to_string()),
                        )
                    })?;
                self.at += 1;
                Ok(n.wrapping_neg())
            }
            _ => self.number(what),
        }
    }

    /// Fails unless the line has no more tokens.
    pub fn end(&self) -> PResult<()> {
        match self.peek() {
            None => Ok(()),
            Some(_) => self.expected("end of line"),
        }
    }
}

/// How a token is named in "found ...".
pub(super) fn found(tok: Option<Tok<'_>>) -> String {
    match tok {
        None => "end of line".to_string(),
        Some(t) if t.kind == TokKind::Str => format!("'\"{}\"'", t.text),
        Some(t) => format!("'{}'", t.text),
    }
}
