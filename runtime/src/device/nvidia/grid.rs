//! The grid of a launch: how many blocks when `num_gangs` is not given, how a split kernel
//! shares a gang among blocks, and where private arrays' copies go (and how many blocks they
//! leave room for).

use acc_abi::kernel::private_copy_stride;
use cudarc::driver::sys;

use crate::abi::{ArrayHeader, MAX_RANK};
use crate::array;
use crate::error::RunErrorKind;
use crate::kernels::GpuKernel;

/// Iterations of a long gang loop each thread takes: enough to amortize its start, few
/// enough that the blocks keep the memory system busy (measured on saxpy, H100).
const ITERATIONS_PER_THREAD: u64 = 16;

/// The grid when `num_gangs` is not given: one full `wave` of resident blocks without a
/// known gang loop; with one of `trip` iterations, each block taking `per_gang` at a time,
/// no more blocks than there are iterations, a full wave while every block gets some, and
/// more (up to one per `ITERATIONS_PER_THREAD` each) for long loops.
pub(super) fn default_gangs(wave: u32, trip: Option<u64>, per_gang: u32) -> u32 {
    let Some(trip) = trip else {
        return wave;
    };
    let per_gang = u64::from(per_gang.max(1));
    let busy = trip.div_ceil(per_gang);
    let long = trip.div_ceil(per_gang * ITERATIONS_PER_THREAD);
    long.max(busy.min(u64::from(wave)))
        .clamp(1, i32::MAX as u64) as u32
}

/// Vector-loop iterations each thread of a split kernel takes. Jacobi's copy on an H100 (as
/// CUDA C after acc's stencil, 1000 iterations): 4 each 220.4 ms, 2 each 222.2, 1 each 228.1,
/// a block per row (32 each) 239.
const SPLIT_ITERATIONS_PER_THREAD: u64 = 4;

/// The most blocks a grid may have (`gridDim.x`).
pub(super) const MAX_GRID: u64 = i32::MAX as u64;

/// A split kernel's grid for a gang loop of `trip` iterations around a vector loop of `inner`
/// (blocks of `threads`): a gang per gang-loop iteration, and enough blocks per gang that each
/// thread takes about `SPLIT_ITERATIONS_PER_THREAD` vector iterations. `(gangs, blocks per
/// gang)`, or `None` when a block per gang is enough.
pub(super) fn split_grid(trip: u64, inner: u64, threads: u32) -> Option<(u32, u32)> {
    let split = inner.div_ceil(u64::from(threads.max(1)) * SPLIT_ITERATIONS_PER_THREAD);
    if split < 2 || trip == 0 {
        return None;
    }
    let split = split.min(MAX_GRID);
    let gangs = trip.min(MAX_GRID / split);
    Some((gangs as u32, split as u32))
}

/// Most device memory a launch's private arrays may take when the grid is the runtime's
/// choice (it launches fewer blocks rather than more memory).
const PRIVATE_DEFAULT_LIMIT: u64 = 1 << 30;

/// Where a launch's private arrays' copies go (jit-ptx's kernel ABI): array `j` of
/// `kernel.launch.private_arrays` has `per_block[j]` bytes per block (its copies per block times
/// its copy stride), the arrays one after another in one allocation of `per_block * grid`.
pub(super) struct PrivateLayout {
    /// Bytes per block of all the arrays.
    pub(super) per_block: u64,
    /// Per array: bytes per block and the original's extents.
    arrays: Vec<(u64, Vec<u64>)>,
}

impl PrivateLayout {
    /// The kernel's values for the arrays, after the globals: each one's copies' base and
    /// its extents.
    pub(super) fn values(&self, base: sys::CUdeviceptr, grid: u32, values: &mut Vec<u64>) {
        let mut at = base;
        for (bytes, dims) in &self.arrays {
            values.push(at);
            values.extend(dims);
            at += bytes * u64::from(grid);
        }
    }
}

/// # Safety
/// The private arrays' slots of `args` hold live headers.
pub(super) unsafe fn private_layout(
    kernel: &GpuKernel,
    args: &[u64],
    block: (u32, u32, u32),
) -> PrivateLayout {
    let mut layout = PrivateLayout {
        per_block: 0,
        arrays: Vec::with_capacity(kernel.launch.private_arrays.len()),
    };
    for p in &kernel.launch.private_arrays {
        let host = args[p.param] as usize as *const ArrayHeader;
        let size = array::elem_size((*host).elem).unwrap_or(1) as u64;
        let stride = private_copy_stride((*host).len.max(0) as u64, size);
        let bytes = stride.saturating_mul(p.level.per_block(block.0, block.1));
        let all = (*host).dims;
        let dims = all[..(p.rank as usize).min(MAX_RANK)]
            .iter()
            .map(|&d| d as u64)
            .collect();
        layout.per_block = layout.per_block.saturating_add(bytes);
        layout.arrays.push((bytes, dims));
    }
    layout
}

/// The grid for private arrays of `per_block` bytes per block, with `free` bytes of device
/// memory: the given `num_gangs` (`explicit`) when its copies fit in half the free memory,
/// else an error; the runtime's grid, fewer blocks where the copies would take more than
/// half the free memory or `PRIVATE_DEFAULT_LIMIT` (any grid is correct); an error when even
/// one block's copies do not fit.
pub(super) fn fit_grid(
    per_block: u64,
    grid: u32,
    explicit: bool,
    free: u64,
) -> Result<u32, RunErrorKind> {
    let half = free / 2;
    let fail =
        |blocks: u64| {
            let message =
                format!(
            "the private arrays of {blocks} gang(s) need {} bytes of GPU memory, more than \
             half of the {free} bytes free{}",
            per_block.saturating_mul(blocks),
            if blocks > 1 { "; try fewer gangs (`num_gangs`)" } else { "" }
        );
            RunErrorKind::Device { message }
        };
    if per_block > half {
        return Err(fail(1));
    }
    if explicit {
        return match per_block.checked_mul(u64::from(grid)) {
            Some(total) if total <= half => Ok(grid),
            _ => Err(fail(u64::from(grid))),
        };
    }
    let limit = half.min(PRIVATE_DEFAULT_LIMIT);
    let fits = (limit / per_block.max(1)).clamp(1, u64::from(u32::MAX)) as u32;
    Ok(grid.min(fits))
}

#[cfg(test)]
mod grid_tests {
    use super::{default_gangs, fit_grid, split_grid, MAX_GRID};

    #[test]
    fn private_arrays_shrink_the_default_grid_and_refuse_what_cannot_fit() {
        let gib = 1u64 << 30;
        // Copies of 1 KiB per block, 8 GiB free: the runtime's 1000 blocks fit.
        assert_eq!(fit_grid(1024, 1000, false, 8 * gib).unwrap(), 1000);
        // 1 MiB per block: at most 1 GiB of copies, so 1024 blocks of 5000.
        assert_eq!(fit_grid(1 << 20, 5000, false, 8 * gib).unwrap(), 1024);
        // With 1 GiB free, half of it.
        assert_eq!(fit_grid(1 << 20, 5000, false, gib).unwrap(), 512);
        // An explicit `num_gangs` is kept when it fits, refused when it does not.
        assert_eq!(fit_grid(1 << 20, 5000, true, 16 * gib).unwrap(), 5000);
        assert!(fit_grid(1 << 20, 5000, true, gib).is_err());
        // One block's copies larger than half the free memory: an error.
        assert!(fit_grid(gib, 1, false, gib).is_err());
        assert!(fit_grid(gib, 1, false, 3 * gib).is_ok());
    }

    #[test]
    fn the_default_grid_fits_the_gang_loop() {
        // No known loop: one wave.
        assert_eq!(default_gangs(1584, None, 128), 1584);
        // A one-iteration loop: one block; an empty one: still one.
        assert_eq!(default_gangs(1584, Some(1), 128), 1);
        assert_eq!(default_gangs(1584, Some(0), 128), 1);
        // A thousand rows of a gang-only loop: a block each.
        assert_eq!(default_gangs(1584, Some(1000), 1), 1000);
        // A million iterations over 128-thread blocks: a full wave.
        assert_eq!(default_gangs(1584, Some(1 << 20), 128), 1584);
        // 2^28 iterations: 16 per thread.
        assert_eq!(default_gangs(1584, Some(1 << 28), 128), 131072);
    }

    #[test]
    fn a_split_grid_gives_each_thread_a_few_vector_iterations() {
        // Jacobi's copy: 4094 rows of 4094, 128 threads: 8 blocks a row, 4 iterations each.
        assert_eq!(split_grid(4094, 4094, 128), Some((4094, 8)));
        // Two long rows: many blocks each.
        assert_eq!(split_grid(2, 1 << 20, 128), Some((2, 2048)));
        // Rows a block covers in a few turns, or no rows: a block per gang.
        assert_eq!(split_grid(4094, 512, 128), None);
        assert_eq!(split_grid(0, 4094, 128), None);
        // Never past the grid's limit.
        let (gangs, split) = split_grid(u64::MAX, 1 << 40, 32).unwrap();
        assert!(u64::from(gangs) * u64::from(split) <= MAX_GRID && gangs >= 1);
    }
}
