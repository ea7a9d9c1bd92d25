//! The library of the `acc` command: the interactive session (`session`), terminal-free, which
//! the terminal REPL (the binary's `terminal` module) shows and a notebook kernel can show too.

pub mod session;
