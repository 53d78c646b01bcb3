//! Where the world's nondeterministic choices come from: a seeded generator, or a script.
//!
//! Every choice the simulator makes that a real machine would make by chance goes through the
//! one `Chooser` the world owns, as `below(n)`: a value in `0..n`. In a normal run it is the
//! seeded [`Entropy`], draw for draw as before explorations existed, so seeds and trace hashes
//! are unchanged. In an exploration (see [`crate::explore`]) it reads the values from a
//! [`Choices`] prefix instead, takes 0 for every choice past the prefix, and records each
//! choice it made as `(value, arity)`, the value being in `0..arity`. The record names the execution: replaying its values as a
//! prefix gives the same execution, and a depth-first search over records visits every
//! execution the simulator can produce.
//!
//! A choice of arity 1 is no choice: it returns 0 in both modes without drawing or recording.

use std::fmt;
use std::str::FromStr;

use crate::entropy::Entropy;

/// A choice string: the values of an exploration's choices in the order they were made,
/// written `2.0.1.0` (the empty string for none). As a prefix it replays an execution.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Choices(pub Vec<u32>);

impl Choices {
    /// The values of a recorded choice trace of `(value, arity)` pairs
    /// ([`SimReport::choice_trace`](crate::SimReport::choice_trace)).
    pub fn from_trace(trace: &[(u32, u32)]) -> Choices {
        Choices(trace.iter().map(|&(value, _)| value).collect())
    }
}

impl fmt::Display for Choices {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, v) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            write!(f, "{v}")?;
        }
        Ok(())
    }
}

/// A choice string that does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a choice string: write the values separated by dots, like 2.0.1.0")]
pub struct ParseChoicesError(String);

impl FromStr for Choices {
    type Err = ParseChoicesError;

    fn from_str(s: &str) -> Result<Choices, ParseChoicesError> {
        let s = s.trim();
        if s.is_empty() {
            return Ok(Choices::default());
        }
        s.split('.')
            .map(|v| v.parse::<u32>())
            .collect::<Result<Vec<u32>, _>>()
            .map(Choices)
            .map_err(|_| ParseChoicesError(s.to_string()))
    }
}

/// The world's one source of choices.
#[derive(Clone, Debug)]
pub(crate) enum Chooser {
    /// A normal run: draws from the seeded generator.
    Seeded(Entropy),
    /// An exploration: values from a prefix, then zeros, each recorded.
    Scripted(Script),
}

/// The state of a scripted chooser.
#[derive(Clone, Debug)]
pub(crate) struct Script {
    prefix: Vec<u32>,
    /// (value, arity) of each choice made.
    made: Vec<(u32, u32)>,
}

impl Chooser {
    pub(crate) fn seeded(seed: u64) -> Chooser {
        Chooser::Seeded(Entropy::from_seed(seed))
    }

    pub(crate) fn scripted(prefix: &Choices) -> Chooser {
        Chooser::Scripted(Script {
            prefix: prefix.0.clone(),
            made: Vec::new(),
        })
    }

    /// A choice in `0..n` (0 when `n` is 0 or 1, which is no choice).
    ///
    /// A scripted value out of range (a prefix written for another program) is clamped to
    /// `n - 1`, and the record says what was taken, so the record always replays.
    #[inline]
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        match self {
            Chooser::Seeded(entropy) => entropy.below(n),
            Chooser::Scripted(script) => script.choose(n),
        }
    }

    /// How many choices were made so far.
    pub(crate) fn choices(&self) -> u64 {
        match self {
            Chooser::Seeded(entropy) => entropy.choices(),
            Chooser::Scripted(script) => script.made.len() as u64,
        }
    }

    /// The choices made so far, in an exploration.
    pub(crate) fn trace(&self) -> Option<Vec<(u32, u32)>> {
        match self {
            Chooser::Seeded(_) => None,
            Chooser::Scripted(script) => Some(script.made.clone()),
        }
    }
}

impl Script {
    fn choose(&mut self, n: u64) -> u64 {
        if n <= 1 {
            return 0;
        }
        let arity = u32::try_from(n).expect("an explored choice has fewer than 2^32 values");
        let wanted = self.prefix.get(self.made.len()).copied().unwrap_or(0);
        let value = wanted.min(arity - 1);
        self.made.push((value, arity));
        u64::from(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choice_strings_print_and_parse() {
        let c = Choices(vec![2, 0, 1, 0]);
        assert_eq!(c.to_string(), "2.0.1.0");
        assert_eq!("2.0.1.0".parse::<Choices>(), Ok(c));
        assert_eq!("".parse::<Choices>(), Ok(Choices::default()));
        assert_eq!(Choices::default().to_string(), "");
        assert!("1..2".parse::<Choices>().is_err());
        assert!("x".parse::<Choices>().is_err());
    }

    #[test]
    fn a_script_follows_its_prefix_then_takes_zeros_and_records_every_choice() {
        let mut c = Chooser::scripted(&Choices(vec![2, 1, 5]));
        assert_eq!(c.below(3), 2);
        assert_eq!(c.below(1), 0, "arity 1 is no choice");
        assert_eq!(c.below(2), 1);
        assert_eq!(c.below(3), 2, "out of range values are clamped");
        assert_eq!(c.below(3), 0);
        assert_eq!(c.trace().unwrap(), [(2, 3), (1, 2), (2, 3), (0, 3)]);
        assert_eq!(c.choices(), 4);
    }

    #[test]
    fn seeded_choices_are_the_entropy_draws() {
        let mut c = Chooser::seeded(5);
        let mut e = Entropy::from_seed(5);
        for n in [2, 3, 1000, 1] {
            assert_eq!(c.below(n), e.below(n));
        }
        assert_eq!(c.choices(), 3);
        assert!(c.trace().is_none());
    }
}
