//! CUDA's 16-bit floating formats, `half` (IEEE binary16) and `bfloat16` (a float's high 16
//! bits), as bit patterns converted to and from `f32` with rounding to nearest even, as
//! `__float2half_rn` and `__float2bfloat16_rn` round (the sim's cuda_fp16.h and cuda_bf16.h do
//! the same in C++).

/// A 16-bit floating format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    /// IEEE binary16 (`half`, `__half`).
    Half,
    /// `bfloat16` (`__nv_bfloat16`).
    Bfloat16,
}

impl Format {
    /// `op` of the values `a` and `b` encode, computed in `f32` and rounded back.
    pub(crate) fn apply(self, a: u16, b: u16, op: fn(f32, f32) -> f32) -> u16 {
        self.encode(op(self.decode(a), self.decode(b)))
    }

    fn decode(self, bits: u16) -> f32 {
        match self {
            Format::Half => half_to_f32(bits),
            Format::Bfloat16 => f32::from_bits(u32::from(bits) << 16),
        }
    }

    fn encode(self, value: f32) -> u16 {
        match self {
            Format::Half => f32_to_half(value),
            Format::Bfloat16 => f32_to_bfloat16(value),
        }
    }
}

fn half_to_f32(bits: u16) -> f32 {
    let sign = u32::from(bits & 0x8000) << 16;
    let exponent = u32::from((bits >> 10) & 0x1f);
    let mantissa = u32::from(bits & 0x3ff);
    match exponent {
        // Subnormal: mantissa × 2^-24, exact in f32.
        0 => f32::from_bits(sign | (mantissa as f32 * 2f32.powi(-24)).to_bits()),
        0x1f => f32::from_bits(sign | 0x7f80_0000 | (mantissa << 13)),
        _ => f32::from_bits(sign | ((exponent + 112) << 23) | (mantissa << 13)),
    }
}

/// Whether the bits below the kept ones, `rest` of a unit `2 * halfway`, round `kept` up.
fn rounds_up(kept: u32, rest: u32, halfway: u32) -> bool {
    rest > halfway || (rest == halfway && kept & 1 == 1)
}

#[allow(clippy::cast_possible_truncation)] // Every result is built to fit 16 bits.
fn f32_to_half(value: f32) -> u16 {
    let x = value.to_bits();
    let sign = (x >> 16) & 0x8000;
    let exponent = (x >> 23) & 0xff;
    let mantissa = x & 0x7f_ffff;
    if exponent == 0xff {
        let nan = if mantissa == 0 { 0 } else { 0x200 };
        return (sign | 0x7c00 | nan) as u16;
    }
    let biased = exponent as i32 - 127 + 15;
    if biased >= 0x1f {
        return (sign | 0x7c00) as u16;
    }
    if biased <= 0 {
        if biased < -10 {
            return sign as u16;
        }
        let significand = mantissa | 0x80_0000;
        let shift = (14 - biased) as u32;
        let kept = significand >> shift;
        let rest = significand & ((1 << shift) - 1);
        let kept = kept + u32::from(rounds_up(kept, rest, 1 << (shift - 1)));
        return (sign | kept) as u16;
    }
    let kept = sign | ((biased as u32) << 10) | (mantissa >> 13);
    // A carry out of the mantissa goes into the exponent, up to infinity, as it should.
    (kept + u32::from(rounds_up(kept, mantissa & 0x1fff, 0x1000))) as u16
}

#[allow(clippy::cast_possible_truncation)] // The high 16 bits of a 32-bit word.
fn f32_to_bfloat16(value: f32) -> u16 {
    let x = value.to_bits();
    if value.is_nan() {
        return ((x >> 16) | 0x40) as u16;
    }
    (x.wrapping_add(0x7fff + ((x >> 16) & 1)) >> 16) as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_rounds_to_nearest_even_and_saturates_to_infinity() {
        assert_eq!(f32_to_half(1.0), 0x3c00);
        assert_eq!(f32_to_half(-2.5), 0xc100);
        assert_eq!(f32_to_half(65504.0), 0x7bff);
        assert_eq!(f32_to_half(65520.0), 0x7c00);
        // 1 + 2^-11 is halfway between 1 and the next half: ties go to the even one, 1.
        assert_eq!(f32_to_half(1.0 + 2f32.powi(-11)), 0x3c00);
        assert_eq!(f32_to_half(1.0 + 3.0 * 2f32.powi(-11)), 0x3c02);
        // The smallest subnormal, and half of it (a tie, to even: zero).
        assert_eq!(f32_to_half(2f32.powi(-24)), 0x0001);
        assert_eq!(f32_to_half(2f32.powi(-25)), 0x0000);
        assert!(half_to_f32(f32_to_half(f32::NAN)).is_nan());
        for bits in [0x0001_u16, 0x03ff, 0x0400, 0x3c00, 0x7bff, 0xfbff, 0x8001] {
            assert_eq!(f32_to_half(half_to_f32(bits)), bits, "{bits:#06x}");
        }
    }

    #[test]
    fn bfloat16_keeps_the_high_bits_rounded() {
        assert_eq!(f32_to_bfloat16(1.0), 0x3f80);
        assert_eq!(Format::Bfloat16.apply(0x3f80, 0x3f80, |a, b| a + b), 0x4000);
        // 1 + 2^-8 is a tie between 1 and 1 + 2^-7: to even, 1.
        assert_eq!(f32_to_bfloat16(1.0 + 2f32.powi(-8)), 0x3f80);
        assert_eq!(Format::Half.apply(0x3c00, 0x4000, |a, b| a + b), 0x4200);
    }
}
