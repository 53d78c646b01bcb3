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

use crate::error::DeviceError;
use crate::types::{MemKind, Pe, SegmentKey};

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

    /// Whether `self` and `other` are one result, shared (not merely equal bytes): what a
    /// backend that checks a result once for all its PEs compares by.
    pub fn same_result(&self, other: &Exchanged) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// Calls `each` with every PE's segment key of every kind of `kinds`, PE by PE: each PE's
    /// contribution holds them from byte `offset` on, in the order of `kinds`, as
    /// [`append_segment_key`] wrote them ([`crate::Device::import_segments`]).
    ///
    /// # Errors
    /// [`DeviceError::Import`] naming the first PE whose contribution is too short to hold
    /// its key of a kind, or the first error of `each`.
    pub fn for_each_segment_key(
        &self,
        offset: usize,
        kinds: &[MemKind],
        mut each: impl FnMut(Pe, MemKind, &[u8]) -> Result<(), DeviceError>,
    ) -> Result<(), DeviceError> {
        for (peer, message) in (0..).zip(self.iter()) {
            let mut keys = message.get(offset..).unwrap_or(&[]);
            for &kind in kinds {
                let key = take_segment_key(&mut keys).ok_or_else(|| DeviceError::Import {
                    peer: Pe(peer),
                    kind,
                    reason: "the exchanged key is truncated".into(),
                })?;
                each(Pe(peer), kind, key)?;
            }
        }
        Ok(())
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

/// Appends `key` to `message`, its length (8 bytes, little-endian) first: the form
/// [`Exchanged::for_each_segment_key`] reads.
pub fn append_segment_key(message: &mut Vec<u8>, key: &SegmentKey) {
    message.extend_from_slice(&(key.0.len() as u64).to_le_bytes());
    message.extend_from_slice(&key.0);
}

/// The next key of `keys` as [`append_segment_key`] wrote it, `keys` then starting after it;
/// `None` if `keys` is too short to hold one.
fn take_segment_key<'a>(keys: &mut &'a [u8]) -> Option<&'a [u8]> {
    let (len, rest) = keys.split_first_chunk::<8>()?;
    let (key, rest) = rest.split_at_checked(usize::try_from(u64::from_le_bytes(*len)).ok()?)?;
    *keys = rest;
    Some(key)
}

#[cfg(test)]
mod tests {
    use super::{Exchanged, append_segment_key};
    use crate::{DeviceError, MemKind, Pe, SegmentKey};

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

    #[test]
    fn segment_keys_come_back_per_pe_and_kind_and_truncation_is_named() {
        let kinds = [MemKind::Device, MemKind::Host];
        let message = |pe: u8| {
            let mut m = vec![7; 3];
            append_segment_key(&mut m, &SegmentKey(vec![pe; 2]));
            append_segment_key(&mut m, &SegmentKey(vec![pe + 10]));
            m
        };
        let all = Exchanged::from(vec![message(0), message(1)]);
        let mut seen = Vec::new();
        all.for_each_segment_key(3, &kinds, |pe, kind, key| {
            seen.push((pe, kind, key.to_vec()));
            Ok(())
        })
        .unwrap();
        assert_eq!(
            seen,
            [
                (Pe(0), MemKind::Device, vec![0, 0]),
                (Pe(0), MemKind::Host, vec![10]),
                (Pe(1), MemKind::Device, vec![1, 1]),
                (Pe(1), MemKind::Host, vec![11]),
            ]
        );
        let mut short = message(1);
        short.pop();
        let all = Exchanged::from(vec![message(0), short]);
        let err = all
            .for_each_segment_key(3, &kinds, |_, _, _| Ok(()))
            .unwrap_err();
        assert!(
            matches!(
                err,
                DeviceError::Import {
                    peer: Pe(1),
                    kind: MemKind::Host,
                    ..
                }
            ),
            "{err}"
        );
        assert!(all.same_result(&all.clone()));
        assert!(!all.same_result(&Exchanged::from(vec![message(0)])));
    }
}
