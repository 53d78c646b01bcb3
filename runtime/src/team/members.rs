//! Which PEs of the run a team holds, in team order.

use std::rc::Rc;

/// A team's members as world PE numbers, in the order of their team indices.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Members {
    /// `start, start + stride, ..., start + (size - 1) * stride`: the world, and every team
    /// split from a strided team.
    Strided { start: u32, stride: u32, size: u32 },
    /// Any increasing list: a node's PEs when they are not evenly spaced.
    List(Rc<[u32]>),
}

impl Members {
    /// Members from an increasing list, strided when it is evenly spaced.
    pub(crate) fn from_list(pes: Vec<u32>) -> Members {
        let stride = match pes.as_slice() {
            [a, b, ..] => b - a,
            _ => 1,
        };
        let strided = pes.windows(2).all(|w| w[1] - w[0] == stride);
        match pes.first() {
            Some(&start) if strided => Members::Strided {
                start,
                stride,
                size: pes.len() as u32,
            },
            _ => Members::List(pes.into()),
        }
    }

    /// The number of members.
    pub(crate) fn len(&self) -> u32 {
        match self {
            Members::Strided { size, .. } => *size,
            Members::List(pes) => pes.len() as u32,
        }
    }

    /// The world PE of team index `index`, which must be below [`Members::len`].
    pub(crate) fn world_pe(&self, index: u32) -> u32 {
        debug_assert!(index < self.len());
        match self {
            Members::Strided { start, stride, .. } => start + index * stride,
            Members::List(pes) => pes[index as usize],
        }
    }

    /// The team index of world PE `pe`, if it is a member.
    pub(crate) fn index_of(&self, pe: u32) -> Option<u32> {
        match self {
            Members::Strided {
                start,
                stride,
                size,
            } => {
                let offset = pe.checked_sub(*start)?;
                let index = offset / (*stride).max(1);
                (offset % (*stride).max(1) == 0 && index < *size).then_some(index)
            }
            Members::List(pes) => pes.binary_search(&pe).ok().map(|i| i as u32),
        }
    }

    /// The members at team indices `start, start + stride, ...` (`size` of them), which the
    /// caller has checked lie inside this team.
    pub(crate) fn pick(&self, start: u32, stride: u32, size: u32) -> Members {
        match self {
            Members::Strided {
                start: s0,
                stride: d0,
                ..
            } => Members::Strided {
                start: s0 + start * d0,
                stride: d0 * stride,
                size,
            },
            Members::List(_) => Members::from_list(
                (0..size)
                    .map(|i| self.world_pe(start + i * stride))
                    .collect(),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strided_members_translate_both_ways() {
        let m = Members::Strided {
            start: 2,
            stride: 3,
            size: 4,
        };
        assert_eq!(
            (0..4).map(|i| m.world_pe(i)).collect::<Vec<_>>(),
            [2, 5, 8, 11]
        );
        assert_eq!(m.index_of(8), Some(2));
        assert_eq!(m.index_of(9), None);
        assert_eq!(m.index_of(14), None);
        assert_eq!(m.index_of(1), None);
    }

    #[test]
    fn an_evenly_spaced_list_becomes_strided_and_an_uneven_one_stays_a_list() {
        assert_eq!(
            Members::from_list(vec![4, 6, 8]),
            Members::Strided {
                start: 4,
                stride: 2,
                size: 3
            }
        );
        let list = Members::from_list(vec![0, 1, 5]);
        assert!(matches!(list, Members::List(_)));
        assert_eq!(list.index_of(5), Some(2));
        assert_eq!(list.pick(1, 1, 2), Members::from_list(vec![1, 5]));
    }

    #[test]
    fn picking_from_a_strided_team_composes_strides() {
        let m = Members::Strided {
            start: 1,
            stride: 2,
            size: 8,
        };
        assert_eq!(
            m.pick(1, 3, 2),
            Members::Strided {
                start: 3,
                stride: 6,
                size: 2
            }
        );
    }
}
