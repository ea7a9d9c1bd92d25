//! Array objects: allocation, shared data (`reshape`), reference counting and typed access.
//!
//! A header (`ArrayHeader`) is a `Box`; its data is a separate zero-filled allocation aligned to
//! `DATA_ALIGN`, owned by the header whose `owner` field is null. A header made by `new_view`
//! shares its owner's data and holds a reference on the owner, so the data lives until the last
//! header using it is released. Reference counts are updated atomically so that host threads
//! (multicore regions, issue 4) may retain and release concurrently.
//!
//! An array the embedding host holds (`acc::Array`) gets a `HostShare` on its owner header: a
//! lock that the host's element access and every run using the array take, so that no data race
//! on the elements can be observed from safe Rust, and, for an array made from the host's own
//! `Vec` (no copy), that storage, freed with the array.

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::any::Any;
use std::sync::atomic::{AtomicI64, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

use crate::abi::{
    ArrayHeader, ElemType, ELEM_BOOL, ELEM_F32, ELEM_F64, ELEM_I32, ELEM_I64, MAX_RANK,
};
use crate::error::RunErrorKind;

/// Alignment of every array's data.
pub const DATA_ALIGN: usize = 64;

/// Array identities; 0 is never handed out.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);
static LIVE_ARRAYS: AtomicUsize = AtomicUsize::new(0);
static LIVE_BUFFERS: AtomicUsize = AtomicUsize::new(0);

/// Headers currently alive (owners and views) in this process.
pub fn live_arrays() -> usize {
    LIVE_ARRAYS.load(Ordering::Relaxed)
}

/// Data allocations currently alive in this process.
pub fn live_buffers() -> usize {
    LIVE_BUFFERS.load(Ordering::Relaxed)
}

/// Bytes per element of an `ELEM_*` code (bool is one byte, 0 or 1).
pub fn elem_size(elem: u32) -> Option<usize> {
    ElemType::from_code(elem).map(ElemType::size)
}

/// A Rust type that is the in-memory representation of an element type.
pub trait Element: Copy + 'static {
    const ELEM: u32;
}

/// `bool` elements are bytes holding 0 or 1.
impl Element for u8 {
    const ELEM: u32 = ELEM_BOOL;
}
impl Element for i32 {
    const ELEM: u32 = ELEM_I32;
}
impl Element for i64 {
    const ELEM: u32 = ELEM_I64;
}
impl Element for f32 {
    const ELEM: u32 = ELEM_F32;
}
impl Element for f64 {
    const ELEM: u32 = ELEM_F64;
}

/// The element count of `dims`, checking rank and extents.
pub fn element_count(dims: &[i64]) -> Result<i64, RunErrorKind> {
    if dims.is_empty() || dims.len() > MAX_RANK {
        return Err(RunErrorKind::Internal {
            message: format!("array rank {} outside 1..={MAX_RANK}", dims.len()),
        });
    }
    let mut len: i64 = 1;
    let mut overflow = false;
    for (dim, &extent) in dims.iter().enumerate() {
        if extent < 0 {
            return Err(RunErrorKind::NegativeExtent { dim, extent });
        }
        match len.checked_mul(extent) {
            Some(l) => len = l,
            None => overflow = true,
        }
    }
    // A zero extent after an overflowing prefix still makes an empty array.
    if dims.contains(&0) {
        return Ok(0);
    }
    if overflow {
        return Err(RunErrorKind::TooLarge {
            shape: dims.to_vec(),
        });
    }
    Ok(len)
}

/// The data allocation's layout for `len` elements of `size` bytes (never zero-sized, so that
/// `data` is always a real, aligned pointer).
fn data_layout(len: i64, size: usize) -> Option<Layout> {
    let bytes = usize::try_from(len).ok()?.checked_mul(size)?;
    Layout::from_size_align(bytes.max(DATA_ALIGN), DATA_ALIGN).ok()
}

/// A new zero-filled array with reference count 1.
pub fn new_array(elem: u32, dims: &[i64]) -> Result<*mut ArrayHeader, RunErrorKind> {
    let size = elem_size(elem).ok_or_else(|| RunErrorKind::Internal {
        message: format!("unknown element code {elem}"),
    })?;
    let len = element_count(dims)?;
    let layout = data_layout(len, size).ok_or_else(|| RunErrorKind::TooLarge {
        shape: dims.to_vec(),
    })?;
    // SAFETY: the layout has a non-zero size.
    let data = unsafe { alloc_zeroed(layout) };
    if data.is_null() {
        return Err(RunErrorKind::OutOfMemory {
            bytes: layout.size(),
        });
    }
    LIVE_BUFFERS.fetch_add(1, Ordering::Relaxed);
    Ok(new_header(data, len, elem, dims, std::ptr::null_mut()))
}

fn new_header(
    data: *mut u8,
    len: i64,
    elem: u32,
    dims: &[i64],
    owner: *mut ArrayHeader,
) -> *mut ArrayHeader {
    let mut all_dims = [1i64; MAX_RANK];
    all_dims[..dims.len()].copy_from_slice(dims);
    LIVE_ARRAYS.fetch_add(1, Ordering::Relaxed);
    Box::into_raw(Box::new(ArrayHeader {
        data,
        len,
        dims: all_dims,
        // `element_count` checked the rank.
        rank: dims.len() as u32,
        elem,
        refcount: 1,
        id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
        owner,
        host: std::ptr::null_mut(),
    }))
}

/// A new header (reference count 1) of shape `dims` sharing `a`'s data.
///
/// # Safety
/// `a` is a live array.
pub unsafe fn new_view(
    a: *mut ArrayHeader,
    dims: &[i64],
) -> Result<*mut ArrayHeader, RunErrorKind> {
    let len = element_count(dims)?;
    if len != (*a).len {
        return Err(RunErrorKind::ReshapeMismatch {
            from: shape(a).to_vec(),
            to: dims.to_vec(),
        });
    }
    let owner = if (*a).owner.is_null() { a } else { (*a).owner };
    retain(owner);
    Ok(new_header((*a).data, len, (*a).elem, dims, owner))
}

/// The reference count, accessed atomically.
///
/// # Safety
/// `a` is a live array (the field is 8-byte aligned and only ever accessed atomically while
/// other threads may hold the array).
unsafe fn refcount<'a>(a: *mut ArrayHeader) -> &'a AtomicI64 {
    AtomicI64::from_ptr(&raw mut (*a).refcount)
}

/// Reference count +1; null is ignored.
///
/// # Safety
/// `a` is null or a live array.
pub unsafe fn retain(a: *mut ArrayHeader) {
    if !a.is_null() {
        refcount(a).fetch_add(1, Ordering::Relaxed);
    }
}

/// Reference count -1, freeing the array at zero (and its data, or its reference on the
/// owner of shared data); null is ignored.
///
/// # Safety
/// `a` is null or a live array on which the caller holds a reference.
pub unsafe fn release(a: *mut ArrayHeader) {
    if a.is_null() || refcount(a).fetch_sub(1, Ordering::AcqRel) != 1 {
        return;
    }
    let header = Box::from_raw(a);
    LIVE_ARRAYS.fetch_sub(1, Ordering::Relaxed);
    if !header.owner.is_null() {
        release(header.owner);
        return;
    }
    let share = (!header.host.is_null()).then(|| Box::from_raw(header.host));
    match share.and_then(|s| s.storage) {
        // The host's `Vec`: dropping it frees the data.
        Some(storage) => drop(storage),
        None => {
            let size = elem_size(header.elem).unwrap_or(1);
            if let Some(layout) = data_layout(header.len, size) {
                dealloc(header.data, layout);
            }
        }
    }
    LIVE_BUFFERS.fetch_sub(1, Ordering::Relaxed);
}

// ---- arrays the embedding host holds -----------------------------------------------------------

/// What the owner of an array's data carries once the embedding host holds the array.
pub struct HostShare {
    /// Taken shared by the host to read the elements, exclusively to write them, and
    /// exclusively by every run (or call) whose code can reach the array.
    pub lock: ShareLock,
    /// The host's storage the data lives in (a `Vec<T>` made into an array without a copy).
    storage: Option<Box<dyn Any + Send + Sync>>,
}

/// A readers-writer lock whose holds are not tied to a scope: a run takes the locks of every
/// array it can reach when it starts and gives them back when it ends.
#[derive(Default)]
pub struct ShareLock {
    /// Readers holding it, or -1 while a writer does.
    state: Mutex<i64>,
    freed: Condvar,
}

impl ShareLock {
    /// Waits until no writer holds it, then holds it shared.
    pub fn lock_shared(&self) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        while *s < 0 {
            s = self.freed.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        *s += 1;
    }

    pub fn unlock_shared(&self) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        *s -= 1;
        if *s == 0 {
            self.freed.notify_all();
        }
    }

    /// Waits until nobody holds it, then holds it exclusively.
    pub fn lock_exclusive(&self) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        while *s != 0 {
            s = self.freed.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        *s = -1;
    }

    /// Holds it exclusively if nobody holds it now.
    pub fn try_lock_exclusive(&self) -> bool {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if *s != 0 {
            return false;
        }
        *s = -1;
        true
    }

    pub fn unlock_exclusive(&self) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        *s = 0;
        self.freed.notify_all();
    }
}

/// The header that owns `a`'s data (`a` itself unless it is a view).
///
/// # Safety
/// `a` is a live array.
pub unsafe fn data_owner(a: *mut ArrayHeader) -> *mut ArrayHeader {
    if (*a).owner.is_null() {
        a
    } else {
        (*a).owner
    }
}

/// The host share of `a`'s data, made on first use.
///
/// # Safety
/// `a` is a live array, and the share lives as long as a reference on it is held.
pub unsafe fn host_share<'a>(a: *mut ArrayHeader) -> &'a HostShare {
    let owner = data_owner(a);
    let slot = AtomicPtr::from_ptr(&raw mut (*owner).host);
    let current = slot.load(Ordering::Acquire);
    if !current.is_null() {
        return &*current;
    }
    let made = Box::into_raw(Box::new(HostShare {
        lock: ShareLock::default(),
        storage: None,
    }));
    match slot.compare_exchange(
        std::ptr::null_mut(),
        made,
        Ordering::AcqRel,
        Ordering::Acquire,
    ) {
        Ok(_) => &*made,
        Err(other) => {
            // Another thread made it first.
            drop(Box::from_raw(made));
            &*other
        }
    }
}

/// The host share of `a`'s data if the host holds it, without making one.
///
/// # Safety
/// `a` is a live array.
pub unsafe fn host_share_if_any<'a>(a: *mut ArrayHeader) -> Option<&'a HostShare> {
    let owner = data_owner(a);
    let p = AtomicPtr::from_ptr(&raw mut (*owner).host).load(Ordering::Acquire);
    (!p.is_null()).then(|| &*p)
}

/// An array of shape `dims` whose data is the host's `storage` (reference count 1, no copy):
/// `data` points at its `len` elements of code `elem`, and stays valid, at the same address,
/// for as long as `storage` lives (a `Vec`'s buffer does when the `Vec` moves). Freed with it.
pub fn from_host_storage(
    elem: u32,
    dims: &[i64],
    data: *mut u8,
    len: usize,
    storage: Box<dyn Any + Send + Sync>,
) -> Result<*mut ArrayHeader, RunErrorKind> {
    let count = element_count(dims)?;
    if usize::try_from(count).ok() != Some(len) {
        return Err(RunErrorKind::ReshapeMismatch {
            from: vec![len as i64],
            to: dims.to_vec(),
        });
    }
    if elem_size(elem).is_none() || data.is_null() {
        return Err(RunErrorKind::Internal {
            message: format!("host storage of element code {elem} at {data:p}"),
        });
    }
    LIVE_BUFFERS.fetch_add(1, Ordering::Relaxed);
    let a = new_header(data, count, elem, dims, std::ptr::null_mut());
    let share = Box::new(HostShare {
        lock: ShareLock::default(),
        storage: Some(storage),
    });
    // SAFETY: `a` is new and not shared yet.
    unsafe { (*a).host = Box::into_raw(share) };
    Ok(a)
}

/// The extents `dims[..rank]`.
///
/// # Safety
/// `a` is a live array that outlives the slice.
pub unsafe fn shape<'a>(a: *const ArrayHeader) -> &'a [i64] {
    let h = &*a;
    &h.dims[..(h.rank as usize).min(MAX_RANK)]
}

/// The elements, in row-major order.
///
/// # Safety
/// `a` is a live array of element type `T` that outlives the slice, and nothing writes its
/// elements while the slice is used.
pub unsafe fn elements<'a, T: Element>(a: *const ArrayHeader) -> &'a [T] {
    let h = &*a;
    debug_assert_eq!(h.elem, T::ELEM);
    std::slice::from_raw_parts(h.data as *const T, h.len as usize)
}

/// The elements, mutably.
///
/// # Safety
/// As `elements`, and nothing else reads or writes them while the slice is used.
pub unsafe fn elements_mut<'a, T: Element>(a: *mut ArrayHeader) -> &'a mut [T] {
    let h = &*a;
    debug_assert_eq!(h.elem, T::ELEM);
    std::slice::from_raw_parts_mut(h.data as *mut T, h.len as usize)
}

/// A new array of shape `dims` holding `values` (`values.len()` must be the element count).
pub fn from_elements<T: Element>(
    dims: &[i64],
    values: &[T],
) -> Result<*mut ArrayHeader, RunErrorKind> {
    let a = new_array(T::ELEM, dims)?;
    // SAFETY: `a` is new, of element type T.
    let data = unsafe { elements_mut::<T>(a) };
    if data.len() != values.len() {
        // SAFETY: we own the only reference.
        unsafe { release(a) };
        return Err(RunErrorKind::Internal {
            message: format!("{} values for {} elements", values.len(), data.len()),
        });
    }
    data.copy_from_slice(values);
    Ok(a)
}

/// `rank` extents at `dims`, checking the rank.
///
/// # Safety
/// `dims` points at `rank` readable `i64`s when `rank` is in `1..=MAX_RANK`.
pub unsafe fn dims_from_raw<'a>(rank: u32, dims: *const i64) -> Result<&'a [i64], RunErrorKind> {
    if rank == 0 || rank as usize > MAX_RANK || dims.is_null() {
        return Err(RunErrorKind::Internal {
            message: format!("array rank {rank} outside 1..={MAX_RANK}"),
        });
    }
    Ok(std::slice::from_raw_parts(dims, rank as usize))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_arrays_are_zeroed_aligned_and_counted() {
        let a = new_array(ELEM_F64, &[3, 4]).unwrap();
        unsafe {
            let h = &*a;
            assert_eq!(h.len, 12);
            assert_eq!(h.dims, [3, 4, 1, 1, 1, 1]);
            assert_eq!(h.rank, 2);
            assert_eq!(h.refcount, 1);
            assert!(h.owner.is_null());
            assert_eq!(h.data as usize % DATA_ALIGN, 0);
            assert!(elements::<f64>(a).iter().all(|&x| x == 0.0));
            assert_eq!(shape(a), &[3, 4]);
            release(a);
        }
    }

    #[test]
    fn ids_are_unique() {
        let a = new_array(ELEM_I32, &[1]).unwrap();
        let b = new_array(ELEM_I32, &[1]).unwrap();
        unsafe {
            assert_ne!((*a).id, (*b).id);
            assert_ne!((*a).id, 0);
            release(a);
            release(b);
        }
    }

    #[test]
    fn empty_arrays_have_real_data() {
        let a = new_array(ELEM_BOOL, &[0, 5]).unwrap();
        unsafe {
            assert_eq!((*a).len, 0);
            assert!(!(*a).data.is_null());
            assert!(elements::<u8>(a).is_empty());
            release(a);
        }
    }

    #[test]
    fn bad_shapes() {
        assert_eq!(
            new_array(ELEM_F32, &[2, -3]).unwrap_err(),
            RunErrorKind::NegativeExtent { dim: 1, extent: -3 }
        );
        assert!(matches!(
            new_array(ELEM_F64, &[1 << 40, 1 << 40]),
            Err(RunErrorKind::TooLarge { .. })
        ));
        assert!(matches!(
            new_array(ELEM_F64, &[1 << 61]),
            Err(RunErrorKind::TooLarge { .. })
        ));
        assert!(matches!(
            new_array(ELEM_F64, &[1 << 62, 0, 1 << 62]),
            Ok(a) if { unsafe { release(a) }; true }
        ));
        assert!(matches!(
            new_array(9, &[1]),
            Err(RunErrorKind::Internal { .. })
        ));
        assert!(matches!(
            new_array(ELEM_F64, &[1; 7]),
            Err(RunErrorKind::Internal { .. })
        ));
        assert!(matches!(
            new_array(ELEM_F64, &[]),
            Err(RunErrorKind::Internal { .. })
        ));
    }

    #[test]
    fn huge_allocation_fails_cleanly() {
        // 2^56 bytes: a valid layout that no allocator grants.
        assert!(matches!(
            new_array(ELEM_F64, &[1 << 53]),
            Err(RunErrorKind::OutOfMemory { .. })
        ));
    }

    #[test]
    fn views_share_data_and_keep_it_alive() {
        let a = from_elements::<i64>(&[6], &[0, 1, 2, 3, 4, 5]).unwrap();
        unsafe {
            let v = new_view(a, &[2, 3]).unwrap();
            assert_eq!((*v).data, (*a).data);
            assert_eq!((*v).owner, a);
            assert_eq!((*a).refcount, 2);
            assert_ne!((*v).id, (*a).id);
            // A view of a view shares the original owner.
            let w = new_view(v, &[3, 2]).unwrap();
            assert_eq!((*w).owner, a);
            assert_eq!((*a).refcount, 3);
            release(a);
            release(v);
            elements_mut::<i64>(w)[5] = 50;
            assert_eq!(elements::<i64>(w), &[0, 1, 2, 3, 4, 50]);
            assert_eq!(
                new_view(w, &[4]).unwrap_err(),
                RunErrorKind::ReshapeMismatch {
                    from: vec![3, 2],
                    to: vec![4]
                }
            );
            release(w);
        }
    }

    #[test]
    fn retain_release_null_is_ignored() {
        unsafe {
            retain(std::ptr::null_mut());
            release(std::ptr::null_mut());
        }
    }

    #[test]
    fn from_elements_checks_count() {
        assert!(from_elements::<f32>(&[3], &[1.0, 2.0]).is_err());
        let a = from_elements::<f32>(&[2], &[1.0, 2.0]).unwrap();
        unsafe {
            assert_eq!(elements::<f32>(a), &[1.0, 2.0]);
            release(a);
        }
    }
}
