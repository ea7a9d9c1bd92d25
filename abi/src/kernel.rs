//! What launching a GPU kernel takes beyond the region's arguments, as the PTX back end
//! describes it and the runtime reads it (jit-ptx's kernel ABI, in its crate doc, says where
//! each value goes): one description, handed from the one to the other as it is.

use crate::gang_loop::GangLoop;
use crate::CopyLevel;

/// How to launch one kernel: the parameters it takes after the region's own (private arrays'
/// copies, shared arrays' pointers and extents, the split), its dynamic shared memory, and
/// what its grid should fit.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelLaunch {
    /// Dynamic shared memory the launch passes per thread and per row of the block: a block
    /// of `t` threads in `r` rows gets `shared_per_thread * (t + r)` bytes.
    pub shared_per_thread: u32,
    /// The kernel works in block 0 only (`serial`, most `kernels` regions): launch one block.
    pub one_gang: bool,
    /// Its private arrays (`Pass::PrivateArray`, `FirstPrivateArray`), in parameter order:
    /// the launch allocates their copies and passes each one's base and extents after the
    /// globals.
    pub private_arrays: Vec<PrivateArray>,
    /// Its shared arrays (`Pass::Array`) that take parameters of their own, in parameter
    /// order: after the private arrays' values, the launch passes each one's device data
    /// pointer and extents.
    pub arrays: Vec<ArrayParam>,
    /// A split kernel (its body a gang loop around a vector loop, nothing else): its last
    /// parameter says how many consecutive blocks share each gang, the gang loop dealt out by
    /// `%ctaid.x / split` and each gang's vector-loop iterations in turns of `split *
    /// threads`. `split` 1 is a gang per block.
    pub split: bool,
    /// The region's outermost gang loop, where its trip count is a formula of the arguments:
    /// the runtime sizes the grid by it.
    pub gang_loop: Option<GangLoop>,
}

impl KernelLaunch {
    /// The dynamic shared memory of a block of `workers` rows of `vector` threads.
    pub fn shared_bytes(&self, workers: u32, vector: u32) -> u32 {
        self.shared_per_thread
            .saturating_mul(workers.saturating_mul(vector).saturating_add(workers))
    }
}

/// An array parameter whose device header's data pointer and extents the kernel also takes
/// as parameters of their own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArrayParam {
    /// The region parameter (`Region::params[param]`).
    pub param: usize,
    /// The array's rank: the kernel takes that many extents `p{i}_d{k}`.
    pub rank: u32,
}

/// A private array parameter of a kernel: the copies the launch must provide.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrivateArray {
    /// The region parameter (`Region::params[param]`).
    pub param: usize,
    /// The array's rank: the kernel takes that many extents `s{i}_d{k}`.
    pub rank: u32,
    /// Bytes of one element.
    pub elem_bytes: u32,
    /// Who gets a copy of its own.
    pub level: CopyLevel,
    /// `firstprivate`: each copy starts as the original (whose device header is `p{i}`).
    pub first: bool,
}

/// The bytes between consecutive copies of a private array of `len` elements of
/// `elem_bytes` each: its size rounded up to a multiple of 16.
pub fn private_copy_stride(len: u64, elem_bytes: u64) -> u64 {
    len.saturating_mul(elem_bytes).saturating_add(15) & !15
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_memory_per_thread_and_per_row() {
        let k = KernelLaunch {
            shared_per_thread: 8,
            ..KernelLaunch::default()
        };
        assert_eq!(k.shared_bytes(4, 32), 8 * (128 + 4));
        assert_eq!(KernelLaunch::default().shared_bytes(4, 32), 0);
    }

    #[test]
    fn copies_are_16_byte_aligned() {
        assert_eq!(private_copy_stride(3, 4), 16);
        assert_eq!(private_copy_stride(4, 4), 16);
        assert_eq!(private_copy_stride(5, 8), 48);
        assert_eq!(private_copy_stride(3, 8), 32);
        assert_eq!(private_copy_stride(5, 1), 16);
        assert_eq!(private_copy_stride(0, 8), 0);
    }
}
