//! acc runtime: array objects, the execution context compiled code runs in, and (issue 4)
//! devices, presence tables and queues.
//!
//! The ABI between compiled code and the runtime is `abi`: the layouts of `ArrayHeader` and
//! `Ctx` (compiled code reads fields at fixed offsets) and the `extern "C"` entry points.

pub mod abi;
