//! Reads of `__shared__` bytes that no thread of the block wrote (placeholder, filled below).
