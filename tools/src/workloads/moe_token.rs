//! What the `deepep-*` workloads move and compute, so that every check can tell a right token
//! from a wrong one: each word of a token names its PE, its token and its index, an expert's
//! answer depends on the expert, and the gate weighs a token's experts by their top-k position.

/// Word `i` of token `token` of PE `pe` (it names its token, so an expert knows which it got).
pub(super) fn word(pe: u32, token: u32, i: usize) -> u64 {
    (u64::from(pe) << 40) | (u64::from(token) << 16) | (i as u64 + 1)
}

/// The token a word of [`word`] belongs to.
pub(super) fn token_of(word: u64) -> u32 {
    ((word >> 16) & 0xff_ffff) as u32
}

/// What expert `expert` answers for a word it received (its "output").
pub(super) fn answer(word: u64, expert: u32) -> u64 {
    word.wrapping_add(u64::from(expert) + 1)
}

/// The gate's weight of a token's `k`-th expert.
pub(super) fn weight(k: usize) -> u64 {
    k as u64 + 1
}

/// What word `i` of token `token` of PE `pe` combines to: its experts' answers (`route`, in
/// top-k order), each times its weight, summed.
pub(super) fn combined(pe: u32, token: u32, i: usize, route: &[u32]) -> u64 {
    route.iter().enumerate().fold(0u64, |sum, (k, &expert)| {
        sum.wrapping_add(weight(k).wrapping_mul(answer(word(pe, token, i), expert)))
    })
}

#[cfg(test)]
mod tests {
    use super::{combined, token_of, word};

    #[test]
    fn a_word_names_its_token_and_a_combination_depends_on_every_expert() {
        assert_eq!(token_of(word(63, 4095, 895)), 4095);
        assert_eq!(token_of(word(7, (1 << 24) - 1, 0)), (1 << 24) - 1);
        let route = [3, 9, 1];
        let sum = combined(2, 5, 0, &route);
        assert_ne!(sum, combined(2, 5, 0, &[3, 9, 2]), "another expert");
        assert_ne!(sum, combined(2, 5, 0, &[9, 3, 1]), "other weights");
        assert_ne!(sum, combined(2, 5, 0, &route[..2]), "an answer missing");
    }
}
