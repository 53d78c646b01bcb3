//! Writing SVG by hand: `put!` appends formatted text to a `String`, `xml` escapes text for
//! SVG content and attributes. Shared by `rshmem topo --svg` (and its text and DOT),
//! `rshmem calibrate --svg` and `cargo xtask sim-scaling --svg`.

/// Appends formatted text to a `String`.
macro_rules! put {
    ($out:expr, $($arg:tt)*) => {{
        use std::fmt::Write as _;
        // fmt::Write for String never fails, so there is no error to handle.
        let _ = write!($out, $($arg)*);
    }};
}

pub(crate) use put;

/// Text escaped for SVG content and attribute values.
pub fn xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}
