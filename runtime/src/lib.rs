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
pub mod gang_pool;
pub mod host;
pub mod kernels;
pub mod launch;
pub mod picture;
pub mod presence;
pub mod profile;
pub mod queue;
pub mod rng;
pub mod rows;
pub mod transport;

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

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    /// The entry points named in the first column of docs/ABI.md's tables.
    fn documented() -> BTreeSet<String> {
        let doc = include_str!("../../docs/ABI.md");
        let rows = doc.lines().filter(|l| l.starts_with("| `"));
        let first_cells = rows.filter_map(|l| l.split(" | ").next());
        first_cells
            .flat_map(|cell| cell.split('`').skip(1).step_by(2))
            .filter_map(|code| {
                let name = code.split('(').next()?;
                name.starts_with("acc_rt_").then(|| name.to_string())
            })
            .collect()
    }

    #[test]
    fn abi_md_lists_every_entry_point() {
        let symbols: BTreeSet<String> = crate::symbols()
            .into_iter()
            .map(|(name, _)| name.to_string())
            .collect();
        assert_eq!(documented(), symbols);
    }
}
