//! Bad input gets a clear error and the right exit status.
