//! acc-fuzz: fuzzing harnesses that run on stable Rust, cheap enough for CI's smoke run.
//!
//! Two targets (docs/FUZZING.md): `frontend` feeds mutated programs to the front end (and to
//! lowering, the IR printer and the PTX emitter when they compile); `pipeline` runs generated
//! programs (`acc-progen`) and mutated ones through `acc::Engine` on the host devices and
//! compares them. A supervisor ([`supervisor`]) runs each input in a worker process
//! ([`worker`]), so that an abort, a stack overflow or a hang is seen, saved and survived.

pub mod corpus;
pub mod exec;
pub mod mutate;
pub mod supervisor;
pub mod worker;
