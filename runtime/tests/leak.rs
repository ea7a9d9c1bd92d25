//! Reference counting frees everything: the process-wide live counters return to zero. This
//! is its own test binary so that no other test allocates arrays concurrently.

use acc_runtime::abi::{ELEM_F32, ELEM_I64};
use acc_runtime::array::new_view;
use acc_runtime::entry::{acc_rt_array_new, acc_rt_release, acc_rt_retain};
use acc_runtime::{live_arrays, live_buffers, Context, HostState};

#[test]
fn hundred_thousand_arrays_leave_nothing_behind() {
    let c = Context::new(HostState::new(Box::new(std::io::sink())));
    assert_eq!((live_arrays(), live_buffers()), (0, 0));
    for i in 0..100_000i64 {
        let dims = [i % 7, 3];
        unsafe {
            let a = acc_rt_array_new(c.ctx_ptr(), ELEM_F32, 2, dims.as_ptr());
            assert!(!a.is_null());
            acc_rt_retain(a);
            let n = [(i % 7) * 3];
            let v = new_view(a, &n).unwrap();
            let w = new_view(v, &dims).unwrap();
            acc_rt_release(a);
            acc_rt_release(v);
            acc_rt_release(a);
            // `w` and its owner `a` (kept alive by `w`), sharing one buffer.
            assert_eq!((live_arrays(), live_buffers()), (2, 1));
            acc_rt_release(w);
        }
    }
    let mut held = Vec::new();
    for _ in 0..1000 {
        let dims = [10i64];
        held.push(unsafe { acc_rt_array_new(c.ctx_ptr(), ELEM_I64, 1, dims.as_ptr()) });
    }
    assert_eq!((live_arrays(), live_buffers()), (1000, 1000));
    for a in held {
        unsafe { acc_rt_release(a) };
    }
    assert_eq!((live_arrays(), live_buffers()), (0, 0));
}
