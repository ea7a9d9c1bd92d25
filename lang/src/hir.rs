//! The typed, resolved program. (stub: being written)

#[derive(Debug, Default)]
pub struct Program {}
