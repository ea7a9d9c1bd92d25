//! A launch's results and reduction partials, which kernels write into page-locked host
//! memory (`Pinned`) and the host reads after the kernel.

use cudarc::driver::sys;

use super::Pinned;
use crate::error::RunErrorKind;
use crate::launch::{self, ParamPass, RegionDesc};

/// Where a launch's results go in the scratch buffer: `args.len()` result slots (starting as
/// the arguments), then `reductions * grid` partial results.
pub(super) struct Scratch {
    pub(super) results: sys::CUdeviceptr,
    pub(super) partials: sys::CUdeviceptr,
}

impl Scratch {
    /// Lays out a launch's results in `pinned` (grown when too small).
    pub(super) fn new(
        desc: &RegionDesc,
        args: &[u64],
        grid: u32,
        pinned: &mut Pinned,
    ) -> Result<Scratch, RunErrorKind> {
        let partials = desc.reductions.len() * grid as usize;
        let slots = args.len() + partials;
        if slots * 8 > pinned.bytes {
            *pinned = Pinned::new((slots * 8).next_power_of_two())?;
        }
        let mut s = Scratch {
            results: 0,
            partials: 0,
        };
        if desc.has_results() {
            pinned.set_slots(0, args);
            s.results = pinned.dev;
        }
        if partials > 0 {
            s.partials = pinned.dev + args.len() as u64 * 8;
        }
        Ok(s)
    }

    /// Copies the results back into `args` (after the stream is synchronized): `copy` scalars
    /// from their slots, reductions combined in block order with the value before.
    pub(super) fn results(&self, desc: &RegionDesc, args: &mut [u64], grid: u32, pinned: &Pinned) {
        if self.results != 0 {
            let after = pinned.slots(0, args.len());
            for (i, p) in desc.params.iter().enumerate() {
                if p.pass == ParamPass::Shared {
                    args[i] = after[i];
                }
            }
        }
        if self.partials != 0 {
            let grid = grid as usize;
            let partials = pinned.written(args.len(), desc.reductions.len() * grid);
            for (red, blocks) in desc.reductions.iter().zip(partials.chunks(grid.max(1))) {
                let v = &mut args[red.param];
                *v = launch::combine_all(red.op, red.elem, *v, blocks);
            }
        }
    }
}
