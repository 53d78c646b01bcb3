//! The shape of a mixture-of-experts layer for the `deepep-*` workloads: tokens per PE, bytes
//! per token, experts per token and experts in all (`rshmem run deepep-ll --moe
//! tokens=128,hidden=7168,topk=8,experts=256`), and the routing every PE agrees on.

use std::str::FromStr;

/// Tokens, their size and their routing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoeShape {
    /// Tokens each PE dispatches.
    pub tokens: u32,
    /// Bytes of one token (a multiple of 8: the workloads move 64-bit words).
    pub hidden_bytes: u32,
    /// Experts each token goes to (distinct ones); `None`: 8, or every expert where there are
    /// fewer.
    pub top_k: Option<u32>,
    /// Experts in all, spread evenly over the PEs; `None`: two per PE.
    pub experts: Option<u32>,
}

impl Default for MoeShape {
    /// Small enough for 4096 PEs on a laptop: 16 tokens of 64 bytes, top-8 of two experts a PE.
    fn default() -> Self {
        MoeShape {
            tokens: 16,
            hidden_bytes: 64,
            top_k: None,
            experts: None,
        }
    }
}

/// Experts a token goes to unless `topk` says otherwise (DeepEP's benchmarks' top-8).
const DEFAULT_TOP_K: u32 = 8;

/// The largest token: its words are numbered in 16 bits.
const MAX_HIDDEN_BYTES: u32 = 8 * ((1 << 16) - 1);

/// What `--moe` accepts, for its errors.
const SYNTAX: &str = "tokens=N,hidden=BYTES,topk=K,experts=E (each optional; the default is \
                      tokens=16,hidden=64,topk=8 and two experts per PE)";

impl FromStr for MoeShape {
    type Err = String;

    fn from_str(text: &str) -> Result<MoeShape, String> {
        let mut shape = MoeShape::default();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (key, value) = part
                .split_once('=')
                .ok_or_else(|| format!("--moe {text}: `{part}` is not KEY=VALUE; {SYNTAX}"))?;
            let number: u32 = value.trim().parse().map_err(|_| {
                format!("--moe {text}: {key}={value} is not a whole number; {SYNTAX}")
            })?;
            match key.trim() {
                "tokens" => shape.tokens = number,
                "hidden" => shape.hidden_bytes = number,
                "topk" => shape.top_k = Some(number),
                "experts" => shape.experts = Some(number),
                other => return Err(format!("--moe {text}: no key `{other}`; {SYNTAX}")),
            }
        }
        Ok(shape)
    }
}

impl MoeShape {
    /// The experts in all for `n_pes` PEs.
    pub fn experts(&self, n_pes: u32) -> u32 {
        self.experts.unwrap_or(2 * n_pes)
    }

    /// Experts each token goes to, for `n_pes` PEs.
    pub fn top_k(&self, n_pes: u32) -> u32 {
        self.top_k
            .unwrap_or_else(|| DEFAULT_TOP_K.min(self.experts(n_pes)))
    }

    /// Experts on each of `n_pes` PEs.
    pub fn experts_per_pe(&self, n_pes: u32) -> u32 {
        self.experts(n_pes) / n_pes
    }

    /// 64-bit words of one token.
    pub fn words(&self) -> usize {
        self.hidden_bytes as usize / 8
    }

    /// Whether the shape fits `n_pes` PEs.
    ///
    /// # Errors
    /// What does not fit, and how to make it fit.
    pub fn check(&self, n_pes: u32) -> Result<(), String> {
        let (experts, top_k) = (self.experts(n_pes), self.top_k(n_pes));
        if self.tokens == 0 || top_k == 0 {
            return Err("--moe: tokens and topk must be at least 1".into());
        }
        // Why these bounds: each word names its token and its index (`moe_token.rs`).
        if self.tokens >= 1 << 24 || self.hidden_bytes > MAX_HIDDEN_BYTES {
            return Err(format!(
                "--moe: at most {} tokens of at most {MAX_HIDDEN_BYTES} bytes",
                (1 << 24) - 1
            ));
        }
        if self.hidden_bytes == 0 || !self.hidden_bytes.is_multiple_of(8) {
            return Err(format!(
                "--moe: hidden={} must be a positive multiple of 8 bytes (the workloads move \
                 64-bit words); try hidden={}",
                self.hidden_bytes,
                self.hidden_bytes.div_ceil(8).max(1) * 8
            ));
        }
        if experts == 0 || !experts.is_multiple_of(n_pes) {
            return Err(format!(
                "--moe: experts={experts} must be a positive multiple of the {n_pes} PEs (each \
                 PE holds as many); try experts={}",
                experts.div_ceil(n_pes).max(1) * n_pes
            ));
        }
        if top_k > experts {
            return Err(format!(
                "--moe: topk={top_k} is more than the {experts} experts; a token goes to \
                 distinct experts"
            ));
        }
        Ok(())
    }

    /// The experts token `token` of PE `pe` goes to among `n_pes` PEs, in its top-k order:
    /// distinct ones, the same on every PE (a hash, as a gate's choice would be).
    pub fn route(&self, pe: u32, token: u32, n_pes: u32) -> Vec<u32> {
        let (experts, top_k) = (self.experts(n_pes), self.top_k(n_pes) as usize);
        let mut state = u64::from(pe) << 32 | u64::from(token);
        let mut chosen = Vec::with_capacity(top_k);
        while chosen.len() < top_k {
            let expert = (splitmix(&mut state) % u64::from(experts)) as u32;
            if !chosen.contains(&expert) {
                chosen.push(expert);
            }
        }
        chosen
    }
}

/// splitmix64: the next value of `state`, well spread over 64 bits.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut h = *state;
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

#[cfg(test)]
mod tests {
    use super::MoeShape;

    #[test]
    fn a_shape_is_read_key_by_key_and_wrong_ones_say_how_to_fix_them() {
        let shape: MoeShape = "tokens=128, hidden=7168,topk=8,experts=256"
            .parse()
            .unwrap();
        assert_eq!(
            shape,
            MoeShape {
                tokens: 128,
                hidden_bytes: 7168,
                top_k: Some(8),
                experts: Some(256)
            }
        );
        assert_eq!("".parse::<MoeShape>(), Ok(MoeShape::default()));
        let err = "tokens=12x".parse::<MoeShape>().unwrap_err();
        assert!(err.contains("not a whole number"), "{err}");
        let err = "layers=2".parse::<MoeShape>().unwrap_err();
        assert!(err.contains("no key `layers`"), "{err}");
        let err = MoeShape {
            experts: Some(12),
            ..MoeShape::default()
        }
        .check(8)
        .unwrap_err();
        assert!(err.contains("try experts=16"), "{err}");
        let err = MoeShape {
            hidden_bytes: 7,
            ..MoeShape::default()
        }
        .check(8)
        .unwrap_err();
        assert!(err.contains("try hidden=8"), "{err}");
        let err = MoeShape {
            top_k: Some(9),
            experts: Some(8),
            ..MoeShape::default()
        }
        .check(8)
        .unwrap_err();
        assert!(err.contains("more than the 8 experts"), "{err}");
        MoeShape::default()
            .check(4096)
            .expect("the default fits any PE count");
        MoeShape::default()
            .check(1)
            .expect("top-2 of the two experts of one PE");
        assert_eq!(MoeShape::default().top_k(1), 2);
    }

    #[test]
    fn routes_are_distinct_experts_and_the_same_everywhere() {
        // Eight PEs, two experts each.
        let shape = MoeShape::default();
        for token in 0..64 {
            let route = shape.route(3, token, 8);
            assert_eq!(route.len(), 8);
            let mut sorted = route.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), 8, "distinct: {route:?}");
            assert!(route.iter().all(|&e| e < 16));
            assert_eq!(route, shape.route(3, token, 8));
        }
        // Spread: over 64 tokens every one of 16 experts is chosen.
        let mut seen = [false; 16];
        (0..64)
            .flat_map(|t| shape.route(0, t, 8))
            .for_each(|e| seen[e as usize] = true);
        assert!(seen.iter().all(|&s| s));
    }
}
