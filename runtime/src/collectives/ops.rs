//! Reduction operators and the element types each one combines: OpenSHMEM 1.5's reduction type
//! table (§9.9.7) as traits, so that an operator a type does not support (`And` on `f64`, `Max`
//! on a complex number) is a compile error rather than a run-time one.
//!
//! | operator | C routines | element types |
//! |---|---|---|
//! | [`And`], [`Or`], [`Xor`] | `shmem_TYPE_{and,or,xor}_reduce` | integers ([`BitwiseElement`]) |
//! | [`Max`], [`Min`] | `shmem_TYPE_{max,min}_reduce` | integers and floats ([`OrderedElement`]) |
//! | [`Sum`], [`Prod`] | `shmem_TYPE_{sum,prod}_reduce` | integers, floats, [`Complex32`], [`Complex64`] ([`ArithElement`]) |
//!
//! Integer arithmetic wraps, as C's unsigned arithmetic does (C leaves signed overflow
//! undefined; wrapping is the one deterministic choice).
//!
//! A bitwise reduction of words compiles:
//!
//! ```
//! # fn and_of_words<B: hw::Backend>(shmem: &rshmem::Shmem<B>, v: rshmem::Sym<u64>) {
//! let _ = shmem.reduce(shmem.team_world(), rshmem::ops::And, v, v);
//! # }
//! ```
//!
//! and the same of floats does not, because `f64` is no [`BitwiseElement`]:
//!
//! ```compile_fail,E0277
//! # fn and_of_floats<B: hw::Backend>(shmem: &rshmem::Shmem<B>, v: rshmem::Sym<f64>) {
//! let _ = shmem.reduce(shmem.team_world(), rshmem::ops::And, v, v);
//! # }
//! ```

use std::fmt;

use crate::memory::sym::Element;

/// An element type that [`Sum`] and [`Prod`] combine (and the scans add).
pub trait ArithElement: Element {
    /// `a + b` (wrapping for integers).
    fn sum(a: Self, b: Self) -> Self;
    /// `a * b` (wrapping for integers).
    fn prod(a: Self, b: Self) -> Self;
}

/// An element type that [`Max`] and [`Min`] combine.
pub trait OrderedElement: Element {
    /// The larger of `a` and `b` (for floats, a NaN loses to a number).
    fn max(a: Self, b: Self) -> Self;
    /// The smaller of `a` and `b` (for floats, a NaN loses to a number).
    fn min(a: Self, b: Self) -> Self;
}

/// An element type that [`And`], [`Or`] and [`Xor`] combine: the integer types.
pub trait BitwiseElement: Element {
    /// `a & b`.
    fn and(a: Self, b: Self) -> Self;
    /// `a | b`.
    fn or(a: Self, b: Self) -> Self;
    /// `a ^ b`.
    fn xor(a: Self, b: Self) -> Self;
}

/// A reduction operator over elements of `T`. The collectives assume it is associative and
/// commutative, as OpenSHMEM's operators are: their algorithms combine in different orders.
pub trait ReduceOp<T>: Copy + fmt::Debug {
    /// The operator's name as C routines spell it (`sum` in `shmem_int_sum_reduce`).
    const NAME: &'static str;

    /// Combines two elements.
    fn combine(a: T, b: T) -> T;
}

/// Defines an operator type that combines with `$trait::$f`.
macro_rules! reduce_op {
    ($(#[$doc:meta])* $op:ident = $name:literal, $trait:ident::$f:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        pub struct $op;

        impl<T: $trait> ReduceOp<T> for $op {
            const NAME: &'static str = $name;

            fn combine(a: T, b: T) -> T {
                T::$f(a, b)
            }
        }
    };
}

reduce_op! {
    /// Bitwise and (`shmem_TYPE_and_reduce`, `SHMEM_AND`).
    And = "and", BitwiseElement::and
}
reduce_op! {
    /// Bitwise or (`shmem_TYPE_or_reduce`).
    Or = "or", BitwiseElement::or
}
reduce_op! {
    /// Bitwise exclusive or (`shmem_TYPE_xor_reduce`).
    Xor = "xor", BitwiseElement::xor
}
reduce_op! {
    /// Maximum (`shmem_TYPE_max_reduce`).
    Max = "max", OrderedElement::max
}
reduce_op! {
    /// Minimum (`shmem_TYPE_min_reduce`).
    Min = "min", OrderedElement::min
}
reduce_op! {
    /// Sum (`shmem_TYPE_sum_reduce`), wrapping for integers.
    Sum = "sum", ArithElement::sum
}
reduce_op! {
    /// Product (`shmem_TYPE_prod_reduce`), wrapping for integers.
    Prod = "prod", ArithElement::prod
}

/// Implements every element trait for the integer types.
macro_rules! integers {
    ($($t:ty),*) => {$(
        impl ArithElement for $t {
            fn sum(a: Self, b: Self) -> Self {
                a.wrapping_add(b)
            }
            fn prod(a: Self, b: Self) -> Self {
                a.wrapping_mul(b)
            }
        }
        impl OrderedElement for $t {
            fn max(a: Self, b: Self) -> Self {
                Ord::max(a, b)
            }
            fn min(a: Self, b: Self) -> Self {
                Ord::min(a, b)
            }
        }
        impl BitwiseElement for $t {
            fn and(a: Self, b: Self) -> Self {
                a & b
            }
            fn or(a: Self, b: Self) -> Self {
                a | b
            }
            fn xor(a: Self, b: Self) -> Self {
                a ^ b
            }
        }
    )*};
}

integers!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

/// Implements the arithmetic and ordering traits for the float types.
macro_rules! floats {
    ($($t:ty),*) => {$(
        impl ArithElement for $t {
            fn sum(a: Self, b: Self) -> Self {
                a + b
            }
            fn prod(a: Self, b: Self) -> Self {
                a * b
            }
        }
        impl OrderedElement for $t {
            fn max(a: Self, b: Self) -> Self {
                a.max(b)
            }
            fn min(a: Self, b: Self) -> Self {
                a.min(b)
            }
        }
    )*};
}

floats!(f32, f64);

/// Defines a complex number type over `$part` (C's `float complex` / `double complex`, laid
/// out as C lays them out: real part, then imaginary part).
macro_rules! complex {
    ($(#[$doc:meta])* $name:ident($part:ty)) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
        #[repr(C)]
        pub struct $name {
            /// The real part.
            pub re: $part,
            /// The imaginary part.
            pub im: $part,
        }

        impl ArithElement for $name {
            fn sum(a: Self, b: Self) -> Self {
                $name {
                    re: a.re + b.re,
                    im: a.im + b.im,
                }
            }
            fn prod(a: Self, b: Self) -> Self {
                $name {
                    re: a.re * b.re - a.im * b.im,
                    im: a.re * b.im + a.im * b.re,
                }
            }
        }
    };
}

complex! {
    /// A single-precision complex number (`complexf` of the reduction type table).
    Complex32(f32)
}
complex! {
    /// A double-precision complex number (`complexd` of the reduction type table).
    Complex64(f64)
}

/// Combines `other` into `acc` element by element: `acc[i] = op(acc[i], other[i])`.
pub(crate) fn combine_into<T: Copy, Op: ReduceOp<T>>(acc: &mut [T], other: &[T]) {
    debug_assert_eq!(acc.len(), other.len());
    for (a, &b) in acc.iter_mut().zip(other) {
        *a = Op::combine(*a, b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_arithmetic_wraps_and_bitwise_ops_are_bitwise() {
        assert_eq!(<Sum as ReduceOp<u8>>::combine(200, 100), 44);
        assert_eq!(<Prod as ReduceOp<i8>>::combine(64, 4), 0);
        assert_eq!(<And as ReduceOp<u32>>::combine(0b1100, 0b1010), 0b1000);
        assert_eq!(<Or as ReduceOp<u32>>::combine(0b1100, 0b1010), 0b1110);
        assert_eq!(<Xor as ReduceOp<u32>>::combine(0b1100, 0b1010), 0b0110);
        assert_eq!(<Max as ReduceOp<i16>>::combine(-3, 2), 2);
        assert_eq!(<Min as ReduceOp<i16>>::combine(-3, 2), -3);
    }

    #[test]
    fn complex_product_multiplies_as_complex_numbers() {
        let i = Complex64 { re: 0.0, im: 1.0 };
        assert_eq!(
            <Prod as ReduceOp<Complex64>>::combine(i, i),
            Complex64 { re: -1.0, im: 0.0 }
        );
        let sum = <Sum as ReduceOp<Complex32>>::combine(
            Complex32 { re: 1.0, im: 2.0 },
            Complex32 { re: 3.0, im: -1.0 },
        );
        assert_eq!(sum, Complex32 { re: 4.0, im: 1.0 });
    }

    #[test]
    fn combine_into_works_element_by_element() {
        let mut acc = [1.0f64, 5.0, -2.0];
        combine_into::<_, Max>(&mut acc, &[3.0, 4.0, f64::NAN]);
        assert_eq!(acc, [3.0, 5.0, -2.0]);
    }
}
