//! The runtime's own entry points (docs/ABI.md, "Runtime"); the devices' are in
//! `device::entry`. Each may be called only by compiled code, with the `Ctx` of a live
//! `context::Context` and live array handles.

use std::sync::atomic::Ordering;

use crate::abi::{string_arg, ArrayHeader, Ctx, INTERRUPT_NONE, STATUS_EXIT, STATUS_OK};
use crate::array;
use crate::error::RunErrorKind;
use crate::host::{fail, guarded, stop_error};

/// A zero-filled array of `rank` extents at `dims`; null after recording an error.
///
/// # Safety
/// `ctx` is a live context; `dims` points at `rank` extents.
pub unsafe extern "C" fn acc_rt_array_new(
    ctx: *mut Ctx,
    elem: u32,
    rank: u32,
    dims: *const i64,
) -> *mut ArrayHeader {
    guarded(ctx, None, || {
        let made = array::dims_from_raw(rank, dims).and_then(|dims| array::new_array(elem, dims));
        match made {
            Ok(a) => a,
            Err(kind) => {
                fail(ctx, kind, None);
                std::ptr::null_mut()
            }
        }
    })
}

/// No context and no panic guard: nothing here can panic (an atomic add; `release` frees with
/// the layout the array was made with, and a shared header's owner is never itself shared).
///
/// # Safety
/// `a` is null or a live array.
pub unsafe extern "C" fn acc_rt_retain(a: *mut ArrayHeader) {
    array::retain(a);
}

/// # Safety
/// `a` is null or a live array whose reference the caller gives up.
pub unsafe extern "C" fn acc_rt_release(a: *mut ArrayHeader) {
    array::release(a);
}

/// # Safety
/// `ctx` is a live context, `a` a live array.
pub unsafe extern "C" fn acc_rt_bounds_error(
    ctx: *mut Ctx,
    site: u32,
    a: *mut ArrayHeader,
    dim: u32,
    index: i64,
) {
    guarded(ctx, Some(site), || {
        let shape = if a.is_null() {
            Vec::new()
        } else {
            array::shape(a).to_vec()
        };
        fail(ctx, RunErrorKind::Bounds { index, dim, shape }, Some(site));
    })
}

/// # Safety
/// `ctx` is a live context.
pub unsafe extern "C" fn acc_rt_div_zero(ctx: *mut Ctx, site: u32) {
    guarded(ctx, Some(site), || {
        fail(ctx, RunErrorKind::DivZero, Some(site));
    })
}

/// # Safety
/// `ctx` is a live context; `msg` points at `len` bytes of UTF-8 (any pointer when `len` is 0).
pub unsafe extern "C" fn acc_rt_assert_fail(ctx: *mut Ctx, site: u32, msg: *const u8, len: usize) {
    guarded(ctx, Some(site), || {
        let message = (len > 0).then(|| string_arg(msg, len).into_owned());
        fail(ctx, RunErrorKind::AssertFailed { message }, Some(site));
    })
}

/// # Safety
/// `ctx` is a live context.
pub unsafe extern "C" fn acc_rt_exit(ctx: *mut Ctx, code: i32) {
    guarded(ctx, None, || {
        if (*ctx).status == STATUS_OK {
            (*ctx).status = STATUS_EXIT;
            (*ctx).exit_code = code;
        }
    })
}

/// `size(a, d)`.
///
/// # Safety
/// `ctx` is a live context, `a` a live array.
pub unsafe extern "C" fn acc_rt_size(ctx: *mut Ctx, site: u32, a: *mut ArrayHeader, d: i64) -> i64 {
    guarded(ctx, Some(site), || {
        let rank = (*a).rank;
        match usize::try_from(d) {
            Ok(i) if i < rank as usize => (*a).dims[i],
            _ => {
                fail(ctx, RunErrorKind::BadDimension { dim: d, rank }, Some(site));
                0
            }
        }
    })
}

/// A counted loop's step, computed at run time, is 0 (`site`: the step expression).
///
/// # Safety
/// `ctx` is a live context.
pub unsafe extern "C" fn acc_rt_zero_step(ctx: *mut Ctx, site: u32) {
    guarded(ctx, Some(site), || {
        fail(ctx, RunErrorKind::ZeroStep, Some(site));
    })
}

/// A function found the stack exhausted on entry (`site`: its name).
///
/// # Safety
/// `ctx` is a live context.
pub unsafe extern "C" fn acc_rt_stack_overflow(ctx: *mut Ctx, site: u32) {
    guarded(ctx, Some(site), || {
        fail(ctx, RunErrorKind::StackOverflow, Some(site));
    })
}

/// A call deeper than `Ctx::max_depth`: records `CallDepth` at the called function's name, or
/// the stop that set the limit to 0 (`context::RunStop`: an interrupt or the time limit, which
/// reach code without loops this way).
///
/// # Safety
/// `ctx` is a live context.
pub unsafe extern "C" fn acc_rt_depth_limit(ctx: *mut Ctx, site: u32) {
    guarded(ctx, Some(site), || {
        let kind = match (*(*ctx).interrupt).load(Ordering::Relaxed) {
            INTERRUPT_NONE => RunErrorKind::CallDepth {
                limit: (*ctx).max_depth,
            },
            word => stop_error(word),
        };
        fail(ctx, kind, Some(site));
    })
}

/// Calls function `index` of the embedding program with `n` argument slots at `args`, its
/// result to `*ret` (**may fail**: its `Err` is an error without a site, which the check after
/// the call locates at the call).
///
/// # Safety
/// `ctx` is a live context; `args` points at `n` slots and `ret` at one.
pub unsafe extern "C" fn acc_rt_host_call(
    ctx: *mut Ctx,
    index: u32,
    args: *const u64,
    n: u32,
    ret: *mut u64,
) {
    guarded(ctx, None, || {
        let args = if n == 0 {
            &[][..]
        } else {
            std::slice::from_raw_parts(args, n as usize)
        };
        if let Err(kind) = crate::host::host_state(ctx).call_host_fn(index, args, &mut *ret) {
            fail(ctx, kind, None);
        }
    })
}

/// Stops the run at a loop's back edge: the interrupt word was set. Records `Interrupted` or
/// `TimeLimit` at the loop's `site`.
///
/// # Safety
/// `ctx` is a live context.
pub unsafe extern "C" fn acc_rt_interrupted(ctx: *mut Ctx, site: u32) {
    guarded(ctx, Some(site), || {
        let word = (*(*ctx).interrupt).load(Ordering::Relaxed);
        fail(ctx, stop_error(word), Some(site));
    })
}

/// Gives the error just recorded without a site (by a library function, which does not
/// know where it was called from) the site of the call that failed.
///
/// Not guarded: it only fills in a field of the recorded error, which cannot panic.
///
/// # Safety
/// `ctx` is a live context.
pub unsafe extern "C" fn acc_rt_error_site(ctx: *mut Ctx, site: u32) {
    crate::host::locate_error(ctx, site);
}

/// These entry points by name (`crate::symbols` has every one of the runtime's).
pub fn entry_points() -> Vec<(&'static str, *const u8)> {
    vec![
        ("acc_rt_array_new", acc_rt_array_new as *const u8),
        ("acc_rt_retain", acc_rt_retain as *const u8),
        ("acc_rt_release", acc_rt_release as *const u8),
        ("acc_rt_bounds_error", acc_rt_bounds_error as *const u8),
        ("acc_rt_div_zero", acc_rt_div_zero as *const u8),
        ("acc_rt_zero_step", acc_rt_zero_step as *const u8),
        ("acc_rt_assert_fail", acc_rt_assert_fail as *const u8),
        ("acc_rt_exit", acc_rt_exit as *const u8),
        ("acc_rt_size", acc_rt_size as *const u8),
        ("acc_rt_error_site", acc_rt_error_site as *const u8),
        ("acc_rt_interrupted", acc_rt_interrupted as *const u8),
        ("acc_rt_depth_limit", acc_rt_depth_limit as *const u8),
        ("acc_rt_host_call", acc_rt_host_call as *const u8),
        ("acc_rt_stack_overflow", acc_rt_stack_overflow as *const u8),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::{ELEM_F64, ELEM_I32};
    use crate::context::{Context, Outcome};
    use crate::error::RunError;
    use crate::host::HostState;

    fn context() -> Context {
        Context::new(HostState::new(Box::new(std::io::sink())))
    }

    fn error(c: &mut Context) -> RunError {
        match c.finish() {
            Outcome::Error(e) => e,
            other => panic!("expected an error, got {other:?}"),
        }
    }

    #[test]
    fn array_new_and_release() {
        let mut c = context();
        let dims = [2i64, 3];
        unsafe {
            let a = acc_rt_array_new(c.ctx_ptr(), ELEM_I32, 2, dims.as_ptr());
            assert!(!a.is_null());
            assert_eq!((*a).len, 6);
            acc_rt_retain(a);
            assert_eq!((*a).refcount, 2);
            acc_rt_release(a);
            acc_rt_release(a);
            let bad = [2i64, -1];
            let a = acc_rt_array_new(c.ctx_ptr(), ELEM_I32, 2, bad.as_ptr());
            assert!(a.is_null());
        }
        assert_eq!(
            error(&mut c).kind,
            RunErrorKind::NegativeExtent { dim: 1, extent: -1 }
        );
    }

    #[test]
    fn errors_are_recorded_with_their_site() {
        let mut c = context();
        let dims = [3i64, 4];
        unsafe {
            let a = acc_rt_array_new(c.ctx_ptr(), ELEM_F64, 2, dims.as_ptr());
            acc_rt_bounds_error(c.ctx_ptr(), 5, a, 1, 4);
            assert_eq!(
                error(&mut c),
                RunError {
                    kind: RunErrorKind::Bounds {
                        index: 4,
                        dim: 1,
                        shape: vec![3, 4]
                    },
                    site: Some(5)
                }
            );
            assert_eq!(acc_rt_size(c.ctx_ptr(), 6, a, 1), 4);
            assert_eq!(acc_rt_size(c.ctx_ptr(), 6, a, 0), 3);
            assert_eq!(c.status(), STATUS_OK);
            assert_eq!(acc_rt_size(c.ctx_ptr(), 6, a, 2), 0);
            assert_eq!(
                error(&mut c).kind,
                RunErrorKind::BadDimension { dim: 2, rank: 2 }
            );
            assert_eq!(acc_rt_size(c.ctx_ptr(), 6, a, -1), 0);
            assert_eq!(error(&mut c).site, Some(6));
            acc_rt_release(a);
        }
        unsafe { acc_rt_div_zero(c.ctx_ptr(), 9) };
        assert_eq!(
            error(&mut c),
            RunError {
                kind: RunErrorKind::DivZero,
                site: Some(9)
            }
        );
        let msg = "n must be even";
        unsafe { acc_rt_assert_fail(c.ctx_ptr(), 1, msg.as_ptr(), msg.len()) };
        assert_eq!(
            error(&mut c).kind,
            RunErrorKind::AssertFailed {
                message: Some(msg.into())
            }
        );
        unsafe { acc_rt_assert_fail(c.ctx_ptr(), 1, std::ptr::null(), 0) };
        assert_eq!(
            error(&mut c).kind,
            RunErrorKind::AssertFailed { message: None }
        );
    }

    #[test]
    fn exit_sets_the_code() {
        let mut c = context();
        unsafe { acc_rt_exit(c.ctx_ptr(), 3) };
        assert_eq!(c.status(), STATUS_EXIT);
        assert_eq!(c.finish(), Outcome::Exit(3));
    }

    #[test]
    fn symbols_are_unique_and_non_null() {
        let syms = crate::symbols();
        let mut names: Vec<_> = syms.iter().map(|s| s.0).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), syms.len());
        assert!(syms.iter().all(|s| !s.1.is_null()));
    }
}
