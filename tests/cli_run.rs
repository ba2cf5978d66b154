//! `sledge run`, `list`, `show` and `compare` end to end.
