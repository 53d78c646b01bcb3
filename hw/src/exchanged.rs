//! [`Exchanged`]: the result of one bootstrap exchange ([`crate::Device::exchange`]), shared
//! by the PEs that one rendezvous serves instead of copied to each.
//!
//! Why shared: a run of `n` PEs that copied the result to every PE would hold and copy `n²`
//! contributions per exchange; on the simulator, with thousands of PEs in one process, that
//! was most of the start-up. Why the comparison is kept with it: every PE checks that the
//! others passed what it passed (collective arguments, heap settings), which is `n`
//! comparisons per PE; done once for the result, every PE holding it gets the answer.

use std::ops::Deref;
// std's, not `crate::sync`'s: the contributions never change once gathered, so there is no
// ordering here for loom or shuttle to explore.
use std::sync::{Arc, OnceLock};

/// Every PE's bytes of one exchange, in PE order; it dereferences to the contributions.
/// Cloning shares them.
#[derive(Clone, Debug)]
pub struct Exchanged(Arc<Contributions>);

#[derive(Debug)]
struct Contributions {
    each: Vec<Vec<u8>>,
    /// The longest prefix every contribution starts with, and whether every contribution is
    /// exactly that long: worked out by the first PE that asks.
    common: OnceLock<(usize, bool)>,
}

impl Exchanged {
    /// How many bytes at the start every contribution holds alike (their longest common
    /// prefix). Worked out once for all PEs that hold this result.
    pub fn common_prefix_bytes(&self) -> usize {
        self.common().0
    }

    /// Whether every PE contributed the same bytes. Worked out once for all PEs that hold
    /// this result.
    pub fn all_equal(&self) -> bool {
        self.common().1
    }

    fn common(&self) -> (usize, bool) {
        *self.0.common.get_or_init(|| {
            let each = &self.0.each;
            let Some(first) = each.first() else {
                return (0, true);
            };
            let prefix = each.iter().fold(first.len(), |prefix, theirs| {
                first[..prefix]
                    .iter()
                    .zip(theirs)
                    .take_while(|(a, b)| a == b)
                    .count()
            });
            (prefix, each.iter().all(|theirs| theirs.len() == prefix))
        })
    }
}

impl Deref for Exchanged {
    type Target = [Vec<u8>];

    fn deref(&self) -> &[Vec<u8>] {
        &self.0.each
    }
}

impl From<Vec<Vec<u8>>> for Exchanged {
    fn from(each: Vec<Vec<u8>>) -> Exchanged {
        Exchanged(Arc::new(Contributions {
            each,
            common: OnceLock::new(),
        }))
    }
}

impl FromIterator<Vec<u8>> for Exchanged {
    fn from_iter<I: IntoIterator<Item = Vec<u8>>>(contributions: I) -> Exchanged {
        Exchanged::from(contributions.into_iter().collect::<Vec<_>>())
    }
}

#[cfg(test)]
mod tests {
    use super::Exchanged;

    #[test]
    fn equal_contributions_share_their_whole_length() {
        let all = Exchanged::from(vec![b"abc".to_vec(); 3]);
        assert_eq!((all.common_prefix_bytes(), all.all_equal()), (3, true));
    }

    #[test]
    fn one_differing_byte_ends_the_common_prefix() {
        let all = Exchanged::from(vec![b"abcd".to_vec(), b"abXd".to_vec(), b"abcd".to_vec()]);
        assert_eq!((all.common_prefix_bytes(), all.all_equal()), (2, false));
    }

    #[test]
    fn a_shorter_contribution_is_not_equal() {
        let all = Exchanged::from(vec![b"ab".to_vec(), b"abc".to_vec()]);
        assert_eq!((all.common_prefix_bytes(), all.all_equal()), (2, false));
        let none = Exchanged::from(Vec::new());
        assert!(none.all_equal());
    }
}
