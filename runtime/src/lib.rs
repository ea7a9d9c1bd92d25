//! acc runtime: array objects, the execution context compiled code runs in, and (issue 4)
//! devices, presence tables and queues.
//!
//! The ABI between compiled code and the runtime is `abi`: the layouts of `ArrayHeader` and
//! `Ctx` (compiled code reads fields at fixed offsets) and the `extern "C"` entry points.
//! The engine's side is safe Rust: a `Context` owns a `Ctx` with its `HostState` (output,
//! recorded error, parameters, random state) and globals, and `Context::finish` says how a run
//! ended.

pub mod abi;
pub mod array;
pub mod context;
pub mod device;
pub mod entry;
pub mod error;
pub mod gang_loop;
pub mod host;
pub mod launch;
pub mod picture;
pub mod presence;
pub mod profile;
pub mod queue;
pub mod rng;

pub use array::{live_arrays, live_buffers};
pub use context::{Context, Outcome};
pub use error::{RunError, RunErrorKind};
pub use host::{HostState, SharedBuffer};
pub use picture::Picture;

/// The runtime's entry points by name, for jit-host's symbol table: its own (`entry`) and the
/// devices' (`device::entry`).
pub fn symbols() -> Vec<(&'static str, *const u8)> {
    let mut all = entry::entry_points();
    all.extend(device::entry::symbols());
    all
}
