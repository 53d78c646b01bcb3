//! placeholder (topology presets and files)
