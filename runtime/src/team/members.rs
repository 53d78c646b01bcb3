//! Which PEs of the run a team holds, in team order.

use std::rc::Rc;

/// A team's members as world PE numbers, in the order of their team indices.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Members {
    /// `start, start + stride, ..., start + (size - 1) * stride`: the world, and every team
    /// split from a strided team. A negative stride lists the PEs in decreasing order
    /// (OpenSHMEM 1.5 section 9.4.6 allows it for `shmem_team_split_strided`).
    Strided { start: u32, stride: i64, size: u32 },
    /// Any list of distinct PEs: a node's PEs when they are not evenly spaced, and splits of
    /// such a team.
    List(Rc<[u32]>),
}

impl Members {
    /// Members from a list of distinct PEs, strided when it is evenly spaced.
    pub(crate) fn from_list(pes: Vec<u32>) -> Members {
        let gap = |w: &[u32]| i64::from(w[1]) - i64::from(w[0]);
        let stride = match pes.as_slice() {
            [a, b, ..] => i64::from(*b) - i64::from(*a),
            _ => 1,
        };
        let strided = pes.windows(2).all(|w| gap(w) == stride);
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
            Members::Strided { start, stride, .. } => {
                // Why no overflow check: a valid team's members are world PEs (u32).
                (i64::from(*start) + i64::from(index) * stride) as u32
            }
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
                let offset = i64::from(pe) - i64::from(*start);
                if *stride == 0 {
                    return (offset == 0 && *size > 0).then_some(0);
                }
                let index = offset / stride;
                (offset % stride == 0 && (0..i64::from(*size)).contains(&index))
                    .then_some(index as u32)
            }
            // Why a scan: a list is short (a node's PEs) and need not be sorted.
            Members::List(pes) => pes.iter().position(|&p| p == pe).map(|i| i as u32),
        }
    }

    /// The members at team indices `start, start + stride, ...` (`size` of them), which the
    /// caller has checked lie inside this team.
    pub(crate) fn pick(&self, start: u32, stride: i64, size: u32) -> Members {
        match self {
            Members::Strided { stride: d0, .. } => Members::Strided {
                start: self.world_pe(start),
                stride: d0 * stride,
                size,
            },
            Members::List(_) => Members::from_list(
                (0..size)
                    .map(|i| self.world_pe((i64::from(start) + i64::from(i) * stride) as u32))
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
    fn a_negative_stride_lists_the_pes_downwards() {
        let m = Members::Strided {
            start: 1,
            stride: 2,
            size: 4,
        };
        let down = m.pick(3, -1, 3);
        assert_eq!(
            (0..3).map(|i| down.world_pe(i)).collect::<Vec<_>>(),
            [7, 5, 3]
        );
        assert_eq!(down.index_of(3), Some(2));
        assert_eq!(down.index_of(1), None);
        assert_eq!(down.index_of(9), None);
        assert_eq!(Members::from_list(vec![5, 1, 0]).index_of(0), Some(2));
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
