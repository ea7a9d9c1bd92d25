//! The signatures of the runtime and standard-library functions compiled code calls
//! (docs/ABI.md), by name.

/// An argument or result type at the C ABI.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum A {
    /// Any pointer (`*mut Ctx`, `*mut ArrayHeader`, string and buffer pointers).
    Ptr,
    /// `bool` as `u8` (0/1), zero-extended at the ABI.
    Bool,
    I32,
    /// `u32`: sites, element codes, ranks, dimension numbers, argument counts.
    U32,
    /// `i64`, and `usize` lengths.
    I64,
    F32,
    F64,
}

/// One function's signature.
#[derive(Clone, Debug)]
pub(crate) struct Extern {
    pub params: Vec<A>,
    pub ret: Option<A>,
    /// Compiled code checks `ctx.status` after the call: every function that takes a context,
    /// since each records an internal error if its body panics (`acc_runtime::host::guarded`),
    /// besides docs/ABI.md's **may fail**. Not `acc_rt_retain`/`acc_rt_release`, the math
    /// functions (no context, and nothing in them can panic) and `acc_rt_error_site`.
    pub may_fail: bool,
}

fn ext(params: &[A], ret: Option<A>, may_fail: bool) -> Option<Extern> {
    Some(Extern {
        params: params.to_vec(),
        ret,
        may_fail,
    })
}

/// The suffix `_bool`, `_i32`, … of a typed family member.
fn typed(name: &str, prefix: &str) -> Option<A> {
    Some(match name.strip_prefix(prefix)? {
        "bool" => A::Bool,
        "i32" => A::I32,
        "i64" => A::I64,
        "f32" => A::F32,
        "f64" => A::F64,
        _ => return None,
    })
}

/// The number of arguments of `acc_math_<name>_<T>`.
fn math_arity(name: &str) -> Option<usize> {
    Some(match name {
        "pow" | "atan2" | "hypot" | "fmod" => 2,
        "fma" => 3,
        "cbrt" | "exp" | "exp2" | "expm1" | "log" | "log2" | "log10" | "log1p" | "sin" | "cos"
        | "tan" | "asin" | "acos" | "atan" | "sinh" | "cosh" | "tanh" | "round" => 1,
        // Emitted inline, but the stdlib has them too.
        "copysign" | "min" | "max" | "fmin" | "fmax" => 2,
        "sqrt" | "fabs" | "abs" | "floor" | "ceil" | "trunc" => 1,
        _ => return None,
    })
}

pub(crate) fn lookup(name: &str) -> Option<Extern> {
    use A::*;
    match name {
        "acc_rt_array_new" | "acc_ones" | "acc_random" => {
            ext(&[Ptr, U32, U32, Ptr], Some(Ptr), true)
        }
        "acc_rt_retain" | "acc_rt_release" => ext(&[Ptr], None, false),
        "acc_rt_bounds_error" => ext(&[Ptr, U32, Ptr, U32, I64], None, true),
        "acc_rt_div_zero" | "acc_rt_zero_step" => ext(&[Ptr, U32], None, true),
        "acc_rt_error_site" => ext(&[Ptr, U32], None, false),
        "acc_rt_interrupted" | "acc_rt_depth_limit" => ext(&[Ptr, U32], None, true),
        "acc_rt_host_call" => ext(&[Ptr, U32, Ptr, U32, Ptr], None, true),
        "acc_rt_stack_overflow" => ext(&[Ptr, U32], None, true),
        "acc_rt_assert_fail" => ext(&[Ptr, U32, Ptr, I64], None, true),
        "acc_rt_exit" => ext(&[Ptr, I32], None, true),
        "acc_rt_size" => ext(&[Ptr, U32, Ptr, I64], Some(I64), true),
        "acc_print_str" => ext(&[Ptr, Ptr, I64], None, true),
        "acc_print_array" => ext(&[Ptr, Ptr], None, true),
        "acc_print_space" | "acc_print_newline" => ext(&[Ptr], None, true),
        "acc_printf" => ext(&[Ptr, Ptr, I64, Ptr, U32], None, true),
        "acc_iota" => ext(&[Ptr, I64], Some(Ptr), true),
        "acc_linspace" => ext(&[Ptr, F64, F64, I64], Some(Ptr), true),
        "acc_seed" => ext(&[Ptr, I64], None, true),
        "acc_copy" => ext(&[Ptr, Ptr], Some(Ptr), true),
        "acc_reshape" => ext(&[Ptr, U32, Ptr, U32, Ptr], Some(Ptr), true),
        "acc_clock" => ext(&[Ptr], Some(F64), true),
        "acc_imshow" => ext(&[Ptr, Ptr, Ptr, I64], None, true),
        "acc_plot" => ext(&[Ptr, Ptr, Ptr, Ptr, I64], None, true),
        // OpenACC runtime routines (7.10).
        "acc_get_num_devices" | "acc_get_device_num" => ext(&[Ptr, I32], Some(I32), true),
        "acc_get_device_type" | "acc_get_default_async" => ext(&[Ptr], Some(I32), true),
        "acc_set_device_type" | "acc_wait" | "acc_set_default_async" => {
            ext(&[Ptr, I32], None, true)
        }
        "acc_set_device_num" | "acc_wait_async" => ext(&[Ptr, I32, I32], None, true),
        "acc_on_device" | "acc_async_test" => ext(&[Ptr, I32], Some(Bool), true),
        "acc_async_test_all" => ext(&[Ptr], Some(Bool), true),
        "acc_wait_all" => ext(&[Ptr], None, true),
        "acc_is_present" => ext(&[Ptr, Ptr], Some(Bool), true),
        "acc_copyin" | "acc_create" | "acc_copyout" | "acc_delete" | "acc_update_device"
        | "acc_update_self" => ext(&[Ptr, Ptr], None, true),
        "acc_get_property" => ext(&[Ptr, I32, I32, I32], Some(I64), true),
        "acc_memcpy_d2d" => ext(&[Ptr, Ptr, Ptr, I32, I32], None, true),
        // MPI (stdlib/src/mpi.rs); an array or section is a data-op record.
        "acc_mpi_rank" | "acc_mpi_size" => ext(&[Ptr], Some(I32), true),
        "acc_mpi_wtime" => ext(&[Ptr], Some(F64), true),
        "acc_mpi_barrier" => ext(&[Ptr, U32], None, true),
        "acc_mpi_allreduce_array" | "acc_mpi_bcast_array" | "acc_mpi_send" | "acc_mpi_recv" => {
            ext(&[Ptr, Ptr, I32], None, true)
        }
        "acc_mpi_sendrecv" => ext(&[Ptr, Ptr, I32, Ptr, I32], None, true),
        // Directives (runtime/src/device/entry.rs).
        "acc_rt_launch" => ext(
            &[Ptr, Ptr, Ptr, Ptr, U32, Ptr, Bool, I64, Ptr, I32, U32],
            None,
            true,
        ),
        "acc_rt_launch_results" => ext(&[Ptr, Ptr, Ptr], None, true),
        "acc_rt_data" => ext(
            &[Ptr, U32, Ptr, U32, U32, Bool, I64, Ptr, I32, U32],
            None,
            true,
        ),
        "acc_rt_wait" => ext(&[Ptr, Ptr, U32, Bool, I64, U32], None, true),
        _ => typed_family(name),
    }
}

fn typed_family(name: &str) -> Option<Extern> {
    use A::*;
    if let Some(t) = typed(name, "acc_print_") {
        return ext(&[Ptr, t], None, true);
    }
    if let Some(t) = typed(name, "acc_fill_") {
        return ext(&[Ptr, t, U32, Ptr], Some(Ptr), true);
    }
    if let Some(t) = typed(name, "acc_array_lit_") {
        let _ = t;
        return ext(&[Ptr, Ptr, I64], Some(Ptr), true);
    }
    for prefix in ["acc_sum_", "acc_product_"] {
        if let Some(t) = typed(name, prefix) {
            let ret = if matches!(t, F32 | F64) { t } else { I64 };
            return ext(&[Ptr, Ptr], Some(ret), true);
        }
    }
    for prefix in ["acc_maximum_", "acc_minimum_"] {
        if let Some(t) = typed(name, prefix) {
            return ext(&[Ptr, U32, Ptr], Some(t), true);
        }
    }
    for prefix in ["acc_mpi_allreduce_", "acc_mpi_bcast_"] {
        if let Some(t) = typed(name, prefix) {
            return ext(&[Ptr, U32, t, I32], Some(t), true);
        }
    }
    if let Some(t) = typed(name, "acc_param_") {
        return ext(&[Ptr, Ptr, I64, t], Some(t), true);
    }
    let rest = name.strip_prefix("acc_math_")?;
    let (func, ty) = rest.rsplit_once('_')?;
    let t = match ty {
        "f32" => F32,
        "f64" => F64,
        _ => return None,
    };
    let n = math_arity(func)?;
    ext(&vec![t; n], Some(t), false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families() {
        let e = lookup("acc_math_atan2_f32").unwrap();
        assert_eq!(e.params, vec![A::F32, A::F32]);
        assert_eq!(lookup("acc_sum_i32").unwrap().ret, Some(A::I64));
        assert_eq!(lookup("acc_sum_f32").unwrap().ret, Some(A::F32));
        assert_eq!(
            lookup("acc_print_bool").unwrap().params,
            vec![A::Ptr, A::Bool]
        );
        assert!(lookup("acc_math_sqrt_i64").is_none());
        assert!(lookup("acc_nope").is_none());
    }
}
