//! GPU kernels as the runtime sees them: what the engine made for running a region on a GPU
//! (`GpuKernel`, from jit-ptx's output), and the table a GPU launch finds it in
//! (`KernelTable`), by the region's key (`RegionKey`: its compile's unit and its number).
//!
//! The table belongs to the devices of a context (`RunDevices`, which hands it to every
//! `Devices` it makes, so it outlives a change of devices). The engine adds a compile's
//! kernels when it emits its PTX and removes them when it frees the compile's code; a region
//! with no entry (no GPU, or jit-ptx could not compile it) runs on the host in the GPU's place.
//!
//! Why a `RwLock` around one map: the table is written only between runs (a compile, freeing
//! code) and read once per GPU launch, which come from whichever thread runs the engine's code,
//! one at a time per engine; the devices share the table with the engine's side, so it needs a
//! lock, but never a contended one: a read is an uncontended lock and an `Arc` clone, nothing
//! beside a launch's microseconds, and readers on several threads would not wait for each
//! other. A lookup hands out an `Arc`, so no lock is held while a kernel launches.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use acc_abi::kernel::KernelLaunch;

use crate::launch::{RegionKey, UnitId};

/// A region's kernel for the GPU: the PTX module holding it (shared by the regions of one
/// compile), its entry's name, and how to launch it as jit-ptx describes it.
#[derive(Debug)]
pub struct GpuKernel {
    pub ptx: Arc<str>,
    pub name: String,
    /// The compile's string literals, which a failed device `assert` names by index.
    pub strings: Arc<[String]>,
    /// The globals' slots (`ctx.globals[slot]`) whose values the kernel takes after its ABI
    /// parameters (global scalars its routines read).
    pub globals: Vec<u32>,
    /// For a kernel with `print` or `printf` statements: the text of their output records
    /// (the kernel takes an output buffer). `None`: it prints nothing.
    pub prints: Option<Arc<dyn DevicePrints>>,
    /// Its shared memory, grid and the parameters after the globals (jit-ptx's kernel ABI).
    pub launch: KernelLaunch,
}

/// The text of device output records (jit-ptx's kernel ABI: a record is a print statement's
/// id and one 8-byte slot per value). The engine knows every print statement of its compiles
/// by id and formats them with the host's own `print` and `printf` code.
pub trait DevicePrints: Send + Sync + std::fmt::Debug {
    /// The output of print statement `id` with these slot values; `None` when there is no
    /// such statement or it takes another number of slots.
    fn text(&self, id: u32, slots: &[u64]) -> Option<String>;
}

/// The GPU kernels of the live compiles, by region (see the module doc).
#[derive(Debug, Default)]
pub struct KernelTable {
    kernels: RwLock<HashMap<RegionKey, Arc<GpuKernel>>>,
}

impl KernelTable {
    /// The kernel of region `key`, if the engine made one.
    pub fn get(&self, key: RegionKey) -> Option<Arc<GpuKernel>> {
        self.read().get(&key).cloned()
    }

    /// Region `key`'s kernel from now on.
    pub fn insert(&self, key: RegionKey, kernel: GpuKernel) {
        self.write().insert(key, Arc::new(kernel));
    }

    /// Removes the kernels of `units` (their code was freed) and gives their PTX texts, each
    /// once, for the GPUs to unload (`Devices::forget_kernels`).
    pub fn remove_units(&self, units: &[UnitId]) -> Vec<Arc<str>> {
        let mut texts: Vec<Arc<str>> = Vec::new();
        self.write().retain(|key, kernel| {
            let keep = !units.contains(&key.unit);
            if !keep && !texts.iter().any(|t| Arc::ptr_eq(t, &kernel.ptx)) {
                texts.push(kernel.ptx.clone());
            }
            keep
        });
        texts
    }

    /// How many kernels it holds (for leak checks).
    pub fn len(&self) -> usize {
        self.read().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    // A panic while the lock was held cannot leave the map half-changed (each change is one
    // call on it), so a poisoned lock's map is used as it is.
    fn read(&self) -> std::sync::RwLockReadGuard<'_, HashMap<RegionKey, Arc<GpuKernel>>> {
        self.kernels.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, HashMap<RegionKey, Arc<GpuKernel>>> {
        self.kernels.write().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(ptx: &Arc<str>, name: &str) -> GpuKernel {
        GpuKernel {
            ptx: ptx.clone(),
            name: name.into(),
            strings: Vec::new().into(),
            globals: Vec::new(),
            prints: None,
            launch: KernelLaunch::default(),
        }
    }

    fn key(unit: UnitId, region: u32) -> RegionKey {
        RegionKey { unit, region }
    }

    #[test]
    fn kernels_are_found_by_unit_and_region() {
        let table = KernelTable::default();
        let (one, two): (Arc<str>, Arc<str>) = ("// unit 1".into(), "// unit 2".into());
        table.insert(key(1, 0), kernel(&one, "acc_region_0"));
        table.insert(key(1, 1), kernel(&one, "acc_region_1"));
        table.insert(key(2, 0), kernel(&two, "acc_region_0"));
        let name = |k: RegionKey| table.get(k).map(|k| k.name.clone());
        assert_eq!(name(key(1, 1)).as_deref(), Some("acc_region_1"));
        assert!(Arc::ptr_eq(&table.get(key(2, 0)).unwrap().ptx, &two));
        // Region 1 of unit 2 was not compiled for the GPU; unit 3 does not exist.
        assert_eq!(name(key(2, 1)), None);
        assert_eq!(name(key(3, 0)), None);
        assert_eq!(table.len(), 3);
    }

    #[test]
    fn removing_units_gives_each_text_once_and_keeps_the_others() {
        let table = KernelTable::default();
        let (one, two, three): (Arc<str>, Arc<str>, Arc<str>) =
            ("// 1".into(), "// 2".into(), "// 3".into());
        for region in 0..3 {
            table.insert(key(1, region), kernel(&one, "k"));
        }
        table.insert(key(2, 0), kernel(&two, "k"));
        table.insert(key(3, 0), kernel(&three, "k"));
        let texts = table.remove_units(&[1, 3]);
        assert_eq!(texts.len(), 2);
        assert!(texts.iter().any(|t| Arc::ptr_eq(t, &one)));
        assert!(texts.iter().any(|t| Arc::ptr_eq(t, &three)));
        assert_eq!(table.len(), 1);
        assert!(table.get(key(2, 0)).is_some());
        assert!(table.remove_units(&[1]).is_empty());
    }
}
