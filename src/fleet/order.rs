//! Whether the fleet's hosts run at once or one after another.

/// Whether hosts run at once or one after another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    Parallel,
    Serial,
}
