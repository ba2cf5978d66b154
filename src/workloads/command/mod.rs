//! The user's own software as a workload: any command, timed as hyperfine
//! times it, with figures read from what it prints, by a regular
//! expression, a JSON pointer or a parser of the classic tool it is
//! (`parsers/`).

pub mod parsers;
