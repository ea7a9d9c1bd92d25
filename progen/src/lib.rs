//! acc-progen: a random program generator for differential testing of acc (in the spirit of
//! Csmith and YARPGen).
//!
//! [`gen::generate`] builds a well-typed, terminating, deterministic program from a seed;
//! [`run::Runner`] runs it with the `acc` binary on several devices and compares standard
//! output, standard error and exit status; [`shrink::shrink`] reduces a program that differs to
//! a small one that still differs the same way.

pub mod campaign;
pub mod expr;
pub mod gen;
pub mod rng;
pub mod run;
pub mod shrink;
pub mod tree;
