//! [`Array`]: storage that an embedding program and its scripts share, never copied.

use std::any::Any;
use std::fmt;
use std::marker::PhantomData;
use std::ptr::NonNull;

use acc_lang::ast::ScalarType;
use acc_runtime::abi::{ArrayHeader, ELEM_BOOL, ELEM_F32, ELEM_F64, ELEM_I32, ELEM_I64, MAX_RANK};
use acc_runtime::array as rt;

use crate::Error;

pub(crate) mod sealed {
    /// The element types, closed: each is the in-memory form of an acc element type.
    pub trait Elem {
        const CODE: u32;
        const SCALAR: acc_lang::ast::ScalarType;
    }
}

/// An element type of acc arrays: `bool`, `i32`, `i64`, `f32` or `f64`.
pub trait Elem: sealed::Elem + Copy + Send + Sync + 'static {}

macro_rules! elem {
    ($($t:ty => $code:expr, $scalar:expr;)*) => {$(
        impl sealed::Elem for $t {
            const CODE: u32 = $code;
            const SCALAR: ScalarType = $scalar;
        }
        impl Elem for $t {}
    )*};
}

// `bool` is a byte holding 0 or 1, as acc stores it.
elem! {
    bool => ELEM_BOOL, ScalarType::Bool;
    i32 => ELEM_I32, ScalarType::I32;
    i64 => ELEM_I64, ScalarType::I64;
    f32 => ELEM_F32, ScalarType::F32;
    f64 => ELEM_F64, ScalarType::F64;
}

/// An acc array of `T`, shared between the host program and scripts.
///
/// An `Array` is a handle: cloning it, passing it to a script (as a global or an argument) or
/// getting it back costs the same for 10 elements as for a billion, and both sides see the
/// same elements. What a script writes is there for the host after the call, and what the
/// host writes is there for the next run. With `--device nvidia` the array's device copy
/// follows the same storage (data regions and `update` move it as for any array).
///
/// The host reads and writes the elements through [`read`](Array::read) and
/// [`write`](Array::write), which take a lock that every run using the array takes too: safe
/// code cannot observe a data race. A run that needs an array the host holds in `read` or
/// `write` (on another thread, or around the call) fails with [`Error::Usage`] instead of
/// waiting.
///
/// ```
/// use acc::{Array, Engine};
/// let mut engine = Engine::new()?;
/// engine.run("decl.acc", "let grid = zeros(2, 3)")?;
/// let grid = Array::<f64>::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
/// engine.set_global("grid", grid.clone())?;
/// engine.run("scale.acc", "for i in 0..2 { for j in 0..3 { grid[i, j] *= 10.0 } }")?;
/// assert_eq!(grid.to_vec(), [10.0, 20.0, 30.0, 40.0, 50.0, 60.0]);
/// assert_eq!(grid.shape(), [2, 3]);
/// # Ok::<(), acc::Error>(())
/// ```
pub struct Array<T: Elem> {
    /// One reference on a live array of element type `T`, whose data owner has a host share.
    header: NonNull<ArrayHeader>,
    elem: PhantomData<T>,
}

// SAFETY: the header's reference count is atomic, and its elements are only reached through
// the share's lock (`read`, `write`, and runs, which lock it: `Engine::lock_arrays`).
unsafe impl<T: Elem> Send for Array<T> {}
// SAFETY: as above; `&Array` gives no unlocked access to the elements.
unsafe impl<T: Elem> Sync for Array<T> {}

impl<T: Elem> Array<T> {
    /// An array of shape `shape` (rank 1 to 6, row-major) whose elements are `values`' own
    /// storage: no copy is made, and the `Vec` is freed with the array.
    pub fn from_vec(values: Vec<T>, shape: &[usize]) -> Result<Array<T>, Error> {
        let dims = dims(shape)?;
        let mut values = values;
        let data = values.as_mut_ptr().cast::<u8>();
        let len = values.len();
        let storage: Box<dyn Any + Send + Sync> = Box::new(values);
        let header = rt::from_host_storage(T::CODE, &dims, data, len, storage).map_err(|_| {
            Error::Usage(format!(
                "{len} values do not make an array of shape {shape:?} ({} elements)",
                dims.iter().product::<i64>()
            ))
        })?;
        // SAFETY: a new array of element type `T` with a host share, whose reference we own.
        Ok(unsafe { Array::adopt(header) })
    }

    /// An array of shape `shape` filled with zeros (`false`).
    pub fn zeros(shape: &[usize]) -> Result<Array<T>, Error> {
        let dims = dims(shape)?;
        let header = rt::new_array(T::CODE, &dims)
            .map_err(|e| Error::Usage(format!("cannot make an array of shape {shape:?}: {e}")))?;
        // SAFETY: as in `from_vec`; `adopt` makes the share.
        Ok(unsafe { Array::adopt(header) })
    }

    /// Takes over one reference on `header`, a live array of element type `T`, making its
    /// host share if it has none.
    ///
    /// # Safety
    /// The caller owns that reference; the element type is `T`.
    pub(crate) unsafe fn adopt(header: *mut ArrayHeader) -> Array<T> {
        debug_assert_eq!((*header).elem, T::CODE);
        rt::host_share(header);
        Array {
            header: NonNull::new_unchecked(header),
            elem: PhantomData,
        }
    }

    /// The handle compiled code takes (borrowed: valid while `self` lives).
    pub(crate) fn as_ptr(&self) -> *mut ArrayHeader {
        self.header.as_ptr()
    }

    /// The extents, outermost first.
    pub fn shape(&self) -> Vec<usize> {
        // SAFETY: a live array; its shape never changes.
        unsafe { rt::shape(self.as_ptr()) }
            .iter()
            .map(|&d| d as usize)
            .collect()
    }

    /// The number of dimensions (1 to 6).
    pub fn rank(&self) -> usize {
        // SAFETY: a live array.
        unsafe { (*self.as_ptr()).rank as usize }
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        // SAFETY: a live array.
        unsafe { (*self.as_ptr()).len as usize }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn share(&self) -> &rt::HostShare {
        // SAFETY: a live array with a share (`adopt`), alive while `self` holds its reference.
        unsafe { rt::host_share(self.as_ptr()) }
    }

    /// Calls `f` with the elements in row-major order. Waits while a run uses the array.
    pub fn read<R>(&self, f: impl FnOnce(&[T]) -> R) -> R {
        let share = self.share();
        share.lock.lock_shared();
        let _unlock = Unlock(|| share.lock.unlock_shared());
        // SAFETY: a live array of `T` (whose bytes are valid `T`s: acc stores only 0/1 in a
        // bool array), and the shared lock keeps writers out.
        let elements = unsafe {
            let h = &*self.as_ptr();
            std::slice::from_raw_parts(h.data.cast::<T>(), h.len as usize)
        };
        f(elements)
    }

    /// Calls `f` with the elements, mutably. Waits while a run or a reader uses the array.
    pub fn write<R>(&self, f: impl FnOnce(&mut [T]) -> R) -> R {
        let share = self.share();
        share.lock.lock_exclusive();
        let _unlock = Unlock(|| share.lock.unlock_exclusive());
        // SAFETY: as `read`, and the exclusive lock keeps everyone else out.
        let elements = unsafe {
            let h = &*self.as_ptr();
            std::slice::from_raw_parts_mut(h.data.cast::<T>(), h.len as usize)
        };
        f(elements)
    }

    /// A copy of the elements in row-major order.
    pub fn to_vec(&self) -> Vec<T> {
        self.read(<[T]>::to_vec)
    }
}

/// Runs its closure when dropped: the lock is given back even if the caller's closure panics.
struct Unlock<F: FnMut()>(F);

impl<F: FnMut()> Drop for Unlock<F> {
    fn drop(&mut self) {
        (self.0)()
    }
}

fn dims(shape: &[usize]) -> Result<Vec<i64>, Error> {
    if shape.is_empty() || shape.len() > MAX_RANK {
        return Err(Error::Usage(format!(
            "an array has 1 to {MAX_RANK} dimensions, not {} ({shape:?})",
            shape.len()
        )));
    }
    shape
        .iter()
        .map(|&d| i64::try_from(d))
        .collect::<Result<Vec<i64>, _>>()
        .map_err(|_| Error::Usage(format!("array shape {shape:?} is too large")))
}

impl<T: Elem> Clone for Array<T> {
    fn clone(&self) -> Array<T> {
        // SAFETY: a live array; the new handle owns the reference taken.
        unsafe { rt::retain(self.as_ptr()) };
        Array {
            header: self.header,
            elem: PhantomData,
        }
    }
}

impl<T: Elem> Drop for Array<T> {
    fn drop(&mut self) {
        // SAFETY: the reference this handle owns.
        unsafe { rt::release(self.as_ptr()) };
    }
}

impl<T: Elem> fmt::Debug for Array<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Array<{}>{:?}", T::SCALAR.name(), self.shape())
    }
}
