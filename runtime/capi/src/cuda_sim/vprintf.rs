//! Device `printf`: clang lowers it to `vprintf(format, packed arguments)`, and the device pass
//! renames that call to [`__rsim_vprintf`].
//!
//! The buffer is packed as NVPTX packs variadic arguments: each one aligned to its size, ints
//! and smaller as 4 bytes, `long`, `long long`, pointers and strings as 8, and floats promoted
//! to doubles. Each conversion is formatted by the C library's `snprintf` with its own
//! argument, and the line goes to the C library's `stdout`, where the program's host `printf`
//! writes too, so the two keep their order.

use std::ffi::{CStr, c_char, c_int, c_void};

use crate::cuda_sim::guard;

unsafe extern "C" {
    /// The C library's standard output stream.
    static stdout: *mut libc::FILE;
}

/// What one conversion takes from the buffer.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Arg {
    Int4,
    Int8,
    Double,
    Pointer,
    String,
}

/// The argument the conversion spec `spec` (from `%` to its letter) takes, or `None` for `%%`.
fn arg_of(spec: &[u8]) -> Option<Arg> {
    let letter = *spec.last()?;
    let long = spec
        .windows(1)
        .any(|w| matches!(w[0], b'l' | b'j' | b'z' | b't' | b'L'));
    match letter {
        b'd' | b'i' | b'u' | b'x' | b'X' | b'o' | b'c' => {
            Some(if long { Arg::Int8 } else { Arg::Int4 })
        }
        b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A' => Some(Arg::Double),
        b'p' => Some(Arg::Pointer),
        b's' => Some(Arg::String),
        _ => None,
    }
}

/// Reads the next argument of `size` bytes at `*at` (aligned up to its size) from `args`.
///
/// # Safety
/// `args` holds the packed arguments of the format being walked.
unsafe fn take(args: *const u8, at: &mut usize, size: usize) -> u64 {
    *at = at.next_multiple_of(size);
    // SAFETY: the caller's contract: the buffer holds this argument at this offset.
    let value = unsafe {
        match size {
            4 => u64::from(args.add(*at).cast::<u32>().read_unaligned()),
            _ => args.add(*at).cast::<u64>().read_unaligned(),
        }
    };
    *at += size;
    value
}

/// Formats `format` with the packed `args` as the C library's printf would.
///
/// # Safety
/// `format` is NUL-terminated and `args` holds its packed arguments.
pub(crate) unsafe fn format(format: &CStr, args: *const u8) -> Vec<u8> {
    let bytes = format.to_bytes();
    let mut out = Vec::with_capacity(bytes.len() + 32);
    let mut at = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'%' {
            out.push(bytes[i]);
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        while i < bytes.len() && !bytes[i].is_ascii_alphabetic() && bytes[i] != b'%' {
            i += 1;
        }
        while i < bytes.len() && matches!(bytes[i], b'h' | b'l' | b'j' | b'z' | b't' | b'L') {
            i += 1;
        }
        let end = (i + 1).min(bytes.len());
        let spec = &bytes[start..end];
        i = end;
        // `*` widths and precisions are ints before the value.
        let stars: Vec<c_int> = spec
            .iter()
            .filter(|&&b| b == b'*')
            // SAFETY: the caller's contract.
            .map(|_| unsafe { take(args, &mut at, 4) } as u32 as c_int)
            .collect();
        let Some(arg) = arg_of(spec) else {
            out.extend_from_slice(if spec == b"%%" { b"%" } else { spec });
            continue;
        };
        let Ok(spec) = std::ffi::CString::new(spec) else {
            continue;
        };
        let size = if arg == Arg::Int4 { 4 } else { 8 };
        // SAFETY: the caller's contract.
        let value = unsafe { take(args, &mut at, size) };
        let mut buffer = vec![0u8; 512];
        let written = print_one(&mut buffer, &spec, &stars, arg, value);
        out.extend_from_slice(&buffer[..written.min(buffer.len() - 1)]);
    }
    out
}

/// snprintf of one conversion with its argument; the bytes written.
fn print_one(buffer: &mut [u8], spec: &CStr, stars: &[c_int], arg: Arg, value: u64) -> usize {
    let (b, n, f) = (
        buffer.as_mut_ptr().cast::<c_char>(),
        buffer.len(),
        spec.as_ptr(),
    );
    let null_string = c"(null)".as_ptr();
    // SAFETY: snprintf writes at most `n` bytes into `b`; each call passes the argument types
    // the conversion reads (ints for `*`, then the value as the conversion's type; a string is
    // a pointer into the device program's memory, which the GPU would read too).
    let written = unsafe {
        macro_rules! call {
            ($v:expr) => {
                match stars {
                    [] => libc::snprintf(b, n, f, $v),
                    [w] => libc::snprintf(b, n, f, *w, $v),
                    [w, p, ..] => libc::snprintf(b, n, f, *w, *p, $v),
                }
            };
        }
        match arg {
            Arg::Int4 => call!(value as u32 as c_int),
            Arg::Int8 => call!(value as i64),
            Arg::Double => call!(f64::from_bits(value)),
            Arg::Pointer => call!(value as usize as *const c_void),
            Arg::String if value == 0 => call!(null_string),
            Arg::String => call!(value as usize as *const c_char),
        }
    };
    usize::try_from(written).unwrap_or(0)
}

/// `vprintf(format, args)` of device code: prints to the C library's `stdout` and returns the
/// number of bytes printed.
///
/// # Safety
/// `format` is NUL-terminated and `packed_args` holds its packed arguments.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __rsim_vprintf(
    format: *const c_char,
    packed_args: *const c_void,
) -> c_int {
    guard("printf", || {
        if format.is_null() {
            return -1;
        }
        // SAFETY: the caller's contract.
        let line = unsafe { self::format(CStr::from_ptr(format), packed_args.cast()) };
        // SAFETY: fwrite of `line.len()` bytes from a live buffer to the C library's stdout.
        unsafe { libc::fwrite(line.as_ptr().cast(), 1, line.len(), stdout) };
        c_int::try_from(line.len()).unwrap_or(c_int::MAX)
    })
}

#[cfg(test)]
mod tests {
    use super::format;

    #[test]
    fn arguments_are_read_aligned_to_their_size_with_floats_as_doubles() {
        // printf("%d %s %.2f %ld %c|%5u|%%\n", 7, "ab", 1.5f, 1L << 40, 'x', 42u) as NVPTX packs it.
        let text = c"ab";
        let mut packed = Vec::new();
        packed.extend_from_slice(&7i32.to_ne_bytes());
        packed.extend_from_slice(&[0; 4]);
        packed.extend_from_slice(&(text.as_ptr() as u64).to_ne_bytes());
        packed.extend_from_slice(&1.5f64.to_ne_bytes());
        packed.extend_from_slice(&(1i64 << 40).to_ne_bytes());
        packed.extend_from_slice(&u32::from(b'x').to_ne_bytes());
        packed.extend_from_slice(&42u32.to_ne_bytes());
        // SAFETY: the buffer holds the format's arguments, packed.
        let out = unsafe { format(c"%d %s %.2f %ld %c|%5u|%%\n", packed.as_ptr()) };
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "7 ab 1.50 1099511627776 x|   42|%\n"
        );
    }
}
