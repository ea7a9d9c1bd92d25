//! See `benches/embed.rs` and the README's embedding section.
