//! Byte-, token- and line-level mutation of an input.
//!
//! Tokens are runs of letters, digits, `_`, `-` and `.` (words and numbers of every format
//! fuzzed here), and every other byte alone. Lines end at `\n` or at the target's separator
//! (`\0` between the entries of an argument vector or an environment).

use super::rng::Rng;

/// Numbers at the edges of the integer and float types, and spellings parsers disagree on.
pub(crate) const NUMBERS: &[&str] = &[
    "0",
    "-0",
    "1",
    "-1",
    "255",
    "256",
    "65535",
    "65536",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "340282366920938463463374607431768211456",
    "99999999999999999999999999999999999999999999999999",
    "1e308",
    "1e309",
    "-1e309",
    "1e-320",
    "0.0",
    "-0.0",
    "nan",
    "inf",
    "-inf",
    "0x10",
    "0o7",
    "0b1",
    "1_000",
    "1.5",
    "007",
    "+1",
    "1e3",
];

/// Text that is hard on code that counts bytes as characters or splits on white space.
const UNICODE: &[&str] = &[
    "é",
    "e\u{301}",
    "ß",
    "日本",
    "𝕏",
    "\u{10FFFF}",
    "\u{200B}",
    "\u{FEFF}",
    "\u{202E}",
    "\u{2028}",
    "\u{85}",
    "\u{A0}",
    "\u{3000}",
    "\r\n",
    "\r",
    "\t",
    "\u{0}",
    "\u{7F}",
];

/// Single bytes that end strings, lines, tables or escapes.
const BYTES: &[u8] = b"\0\n\r\t \"'\\[]{}=#,:;@()~|<>/.-_0123456789azAZ\x80\xff\xc3";

/// The most bytes an input may grow to, so that one mutation cannot stall the run.
pub(crate) const MAX_INPUT_BYTES: usize = 256 * 1024;

/// Applies one to four mutations to `input`; `other` is a second input to splice from,
/// `dictionary` the target's own words.
pub(crate) fn mutate(
    input: &mut Vec<u8>,
    rng: &mut Rng,
    dictionary: &[&[&str]],
    other: &[u8],
    separator: u8,
) {
    for _ in 0..rng.range(1, 4) {
        mutate_once(input, rng, dictionary, other, separator);
    }
    input.truncate(MAX_INPUT_BYTES);
}

fn mutate_once(input: &mut Vec<u8>, rng: &mut Rng, dictionary: &[&[&str]], other: &[u8], sep: u8) {
    let len = input.len();
    match rng.below(16) {
        0 => {
            let at = rng.range(0, len);
            let bytes: Vec<u8> = (0..rng.range(1, 8)).map(|_| random_byte(rng)).collect();
            input.splice(at..at, bytes);
        }
        1 => {
            let (start, end) = some_range(rng, len);
            input.drain(start..end);
        }
        2 => {
            let (start, end) = some_range(rng, len);
            let copy = input[start..end].to_vec();
            let at = rng.range(0, len);
            input.splice(at..at, copy);
        }
        3 => {
            // The head of this input and the tail of another.
            let cut = rng.range(0, len);
            let from = rng.range(0, other.len());
            input.truncate(cut);
            input.extend_from_slice(&other[from..]);
        }
        4 => swap_tokens(input, rng),
        5 => {
            let word = rng_word(rng, dictionary);
            replace_token(input, rng, word);
        }
        6 => {
            let at = token_boundary(input, rng);
            let word = rng_word(rng, dictionary).to_owned();
            input.splice(at..at, word.into_bytes());
        }
        7 => replace_number(input, rng),
        8 => {
            let at = token_boundary(input, rng);
            let text = rng.pick(UNICODE).as_bytes().to_vec();
            input.splice(at..at, text);
        }
        9 if rng.one_in(8) => input.clear(),
        10 => input.truncate(rng.range(0, len)),
        11 if len > 0 => {
            // Many copies of a short piece, right after it: deep nesting, long repetitions.
            let start = rng.below(len);
            let end = start + rng.range(1, (len - start).min(16));
            let piece = input[start..end].to_vec();
            let times = if rng.one_in(4) {
                rng.range(1000, 20_000)
            } else {
                rng.range(2, 64)
            };
            let repeated: Vec<u8> = piece
                .iter()
                .copied()
                .cycle()
                .take(piece.len() * times)
                .collect();
            input.splice(end..end, repeated);
        }
        12 if len > 0 => {
            let at = rng.below(len);
            input[at] = *rng.pick(BYTES);
        }
        13 => line_mutation(input, rng, sep),
        14 if len > 0 => {
            let at = rng.below(len);
            input[at] ^= 1 << rng.below(8);
        }
        _ => {
            let at = rng.range(0, len);
            let text = rng.pick(NUMBERS).as_bytes().to_vec();
            input.splice(at..at, text);
        }
    }
}

fn random_byte(rng: &mut Rng) -> u8 {
    if rng.one_in(4) {
        *rng.pick(BYTES)
    } else {
        rng.range(0x20, 0x7e) as u8
    }
}

fn rng_word<'a>(rng: &mut Rng, dictionary: &[&[&'a str]]) -> &'a str {
    let words: usize = dictionary.iter().map(|list| list.len()).sum();
    if words == 0 || rng.one_in(4) {
        return NUMBERS[rng.below(NUMBERS.len())];
    }
    // One word of all the lists, each word as likely as any other.
    let mut at = rng.below(words);
    for list in dictionary {
        if at < list.len() {
            return list[at];
        }
        at -= list.len();
    }
    unreachable!("`at` is below the number of words")
}

/// A range `start..end` within `0..len`, short more often than long.
fn some_range(rng: &mut Rng, len: usize) -> (usize, usize) {
    let start = rng.range(0, len);
    let longest = if rng.one_in(4) {
        len - start
    } else {
        (len - start).min(8)
    };
    (start, start + rng.range(0, longest))
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'+') || b >= 0x80
}

/// The tokens of `input` as byte ranges (white space is no token).
fn tokens(input: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < input.len() {
        let b = input[i];
        if b.is_ascii_whitespace() {
            i += 1;
        } else if is_word_byte(b) {
            let start = i;
            while i < input.len() && is_word_byte(input[i]) {
                i += 1;
            }
            out.push((start, i));
        } else {
            out.push((i, i + 1));
            i += 1;
        }
    }
    out
}

fn token_boundary(input: &[u8], rng: &mut Rng) -> usize {
    let toks = tokens(input);
    if toks.is_empty() {
        return input.len();
    }
    let (start, end) = *rng.pick(&toks);
    if rng.one_in(2) { start } else { end }
}

fn swap_tokens(input: &mut Vec<u8>, rng: &mut Rng) {
    let toks = tokens(input);
    if toks.len() < 2 {
        return;
    }
    let (mut a, mut b) = (*rng.pick(&toks), *rng.pick(&toks));
    if a.0 > b.0 {
        std::mem::swap(&mut a, &mut b);
    }
    if a == b {
        return;
    }
    let mut out = input[..a.0].to_vec();
    out.extend_from_slice(&input[b.0..b.1]);
    out.extend_from_slice(&input[a.1..b.0]);
    out.extend_from_slice(&input[a.0..a.1]);
    out.extend_from_slice(&input[b.1..]);
    *input = out;
}

fn replace_token(input: &mut Vec<u8>, rng: &mut Rng, word: &str) {
    let toks = tokens(input);
    if toks.is_empty() {
        input.extend_from_slice(word.as_bytes());
        return;
    }
    let (start, end) = *rng.pick(&toks);
    input.splice(start..end, word.bytes());
}

/// Replaces a run of digits with an extreme number.
fn replace_number(input: &mut Vec<u8>, rng: &mut Rng) {
    let digits: Vec<(usize, usize)> = tokens(input)
        .into_iter()
        .filter(|&(s, _)| input[s].is_ascii_digit())
        .collect();
    if digits.is_empty() {
        return;
    }
    let (start, end) = *rng.pick(&digits);
    input.splice(start..end, rng.pick(NUMBERS).bytes());
}

/// Deletes, duplicates or swaps whole lines (or `sep`-separated entries).
fn line_mutation(input: &mut Vec<u8>, rng: &mut Rng, sep: u8) {
    let mut lines: Vec<Vec<u8>> = input
        .split(|&b| b == b'\n' || b == sep)
        .map(<[u8]>::to_vec)
        .collect();
    let n = lines.len();
    let (a, b) = (rng.below(n), rng.below(n));
    match rng.below(3) {
        0 => {
            lines.remove(a);
        }
        1 => {
            let line = lines[a].clone();
            lines.insert(b, line);
        }
        _ => lines.swap(a, b),
    }
    // Rejoined with the target's own separator where the input uses it, else with newlines.
    let joiner = if input.contains(&sep) { sep } else { b'\n' };
    *input = lines.join(&joiner);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutation_is_deterministic_and_changes_inputs() {
        let run = || {
            let mut rng = Rng::new(3, "t");
            let mut changed = 0;
            let mut out = Vec::new();
            for _ in 0..200 {
                let mut input = b"pes 2\nP0:\n  put x@1 = 1\nexists x@1 == 1\n".to_vec();
                let before = input.clone();
                mutate(&mut input, &mut rng, &[&["fence"]], b"other input", 0);
                changed += usize::from(input != before);
                out.push(input);
            }
            (changed, out)
        };
        let (changed, first) = run();
        assert!(changed > 150, "only {changed} of 200 inputs changed");
        assert_eq!(first, run().1);
    }

    #[test]
    fn tokens_split_words_and_punctuation() {
        let toks = tokens(b"x@1 == r2;");
        let words: Vec<&[u8]> = toks.iter().map(|&(s, e)| &b"x@1 == r2;"[s..e]).collect();
        assert_eq!(words, [&b"x"[..], b"@", b"1", b"=", b"=", b"r2", b";"]);
    }
}
