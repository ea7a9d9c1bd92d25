//! The OpenACC runtime routines (LANGUAGE.md 7.10) as the host device answers them: one device
//! of type `acc_device_host`, sharing host memory, with no queues to wait for. Issue 4 moves
//! these into the runtime's device layer.

use acc_runtime::abi::{ArrayHeader, Ctx};
use acc_runtime::host::host_state;

use crate::arrays::symbol_list;

// `acc_lang::builtins::BuiltinConst` values (a test checks that they agree).
const DEVICE_DEFAULT: i32 = 1;
const DEVICE_HOST: i32 = 2;
const PROPERTY_MEMORY: i32 = 1;
const PROPERTY_FREE_MEMORY: i32 = 2;

/// Device type `t` names the host device (`acc_device_host`, or `acc_device_default`, which
/// is the host here).
fn is_host(t: i32) -> bool {
    t == DEVICE_HOST || t == DEVICE_DEFAULT
}

/// # Safety
/// Any `ctx` (so for every function of this module that takes no array and does not read the
/// host state).
pub unsafe extern "C" fn acc_get_num_devices(_ctx: *mut Ctx, t: i32) -> i32 {
    i32::from(is_host(t))
}

/// # Safety
/// As `acc_get_num_devices`.
pub unsafe extern "C" fn acc_get_device_type(_ctx: *mut Ctx) -> i32 {
    DEVICE_HOST
}

/// No other device to switch to: a no-op.
///
/// # Safety
/// As `acc_get_num_devices`.
pub unsafe extern "C" fn acc_set_device_type(_ctx: *mut Ctx, _t: i32) {}

/// # Safety
/// As `acc_get_num_devices`.
pub unsafe extern "C" fn acc_set_device_num(_ctx: *mut Ctx, _n: i32, _t: i32) {}

/// # Safety
/// As `acc_get_num_devices`.
pub unsafe extern "C" fn acc_get_device_num(_ctx: *mut Ctx, _t: i32) -> i32 {
    0
}

/// True only for `acc_device_host` (host code runs on the host device).
///
/// # Safety
/// As `acc_get_num_devices`.
pub unsafe extern "C" fn acc_on_device(_ctx: *mut Ctx, t: i32) -> u8 {
    u8::from(t == DEVICE_HOST)
}

/// Host memory is the device's memory: everything is present.
///
/// # Safety
/// As `acc_get_num_devices`; `a` is unused.
pub unsafe extern "C" fn acc_is_present(_ctx: *mut Ctx, _a: *mut ArrayHeader) -> u8 {
    1
}

macro_rules! data_routines {
    ($($name:ident)*) => {$(
        /// A data routine: nothing to move on the host device.
        ///
        /// # Safety
        /// As `acc_get_num_devices`; the array is unused.
        pub unsafe extern "C" fn $name(_ctx: *mut Ctx, _a: *mut ArrayHeader) {}
    )*};
}

data_routines!(acc_copyin acc_create acc_copyout acc_delete acc_update_device acc_update_self);

/// # Safety
/// As `acc_get_num_devices`.
pub unsafe extern "C" fn acc_wait(_ctx: *mut Ctx, _q: i32) {}

/// # Safety
/// As `acc_get_num_devices`.
pub unsafe extern "C" fn acc_wait_all(_ctx: *mut Ctx) {}

/// # Safety
/// As `acc_get_num_devices`.
pub unsafe extern "C" fn acc_wait_async(_ctx: *mut Ctx, _q: i32, _r: i32) {}

/// Every queue is always drained.
///
/// # Safety
/// As `acc_get_num_devices`.
pub unsafe extern "C" fn acc_async_test(_ctx: *mut Ctx, _q: i32) -> u8 {
    1
}

/// # Safety
/// As `acc_get_num_devices`.
pub unsafe extern "C" fn acc_async_test_all(_ctx: *mut Ctx) -> u8 {
    1
}

/// `acc_property_memory`: total RAM; `acc_property_free_memory`: available RAM (bytes, from
/// /proc/meminfo; 0 where it cannot be read). Other properties, devices or types: 0.
///
/// # Safety
/// As `acc_get_num_devices`.
pub unsafe extern "C" fn acc_get_property(_ctx: *mut Ctx, n: i32, t: i32, p: i32) -> i64 {
    if n != 0 || !is_host(t) {
        return 0;
    }
    let key = match p {
        PROPERTY_MEMORY => "MemTotal:",
        PROPERTY_FREE_MEMORY => "MemAvailable:",
        _ => return 0,
    };
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|info| meminfo_bytes(&info, key))
        .unwrap_or(0)
}

/// The value of `key` (`MemTotal:`) in /proc/meminfo's text, in bytes.
fn meminfo_bytes(info: &str, key: &str) -> Option<i64> {
    let line = info.lines().find(|l| l.starts_with(key))?;
    let mut words = line[key.len()..].split_whitespace();
    let n: i64 = words.next()?.parse().ok()?;
    let unit = match words.next() {
        Some("kB") => 1024,
        None => 1,
        Some(_) => return None,
    };
    n.checked_mul(unit)
}

/// # Safety
/// `ctx` is a live context.
pub unsafe extern "C" fn acc_set_default_async(ctx: *mut Ctx, q: i32) {
    host_state(ctx).set_default_async(q);
}

/// # Safety
/// `ctx` is a live context.
pub unsafe extern "C" fn acc_get_default_async(ctx: *mut Ctx) -> i32 {
    host_state(ctx).default_async()
}

pub fn symbols() -> Vec<(&'static str, *const u8)> {
    symbol_list![
        acc_get_num_devices acc_get_device_type acc_set_device_type acc_set_device_num
        acc_get_device_num acc_on_device acc_is_present
        acc_copyin acc_create acc_copyout acc_delete acc_update_device acc_update_self
        acc_wait acc_wait_all acc_wait_async acc_async_test acc_async_test_all
        acc_get_property acc_set_default_async acc_get_default_async
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TestCtx;
    use acc_lang::builtins::BuiltinConst;

    fn value(c: BuiltinConst) -> i32 {
        c.value()
    }

    #[test]
    fn constants_agree_with_the_language() {
        assert_eq!(value(BuiltinConst::DeviceDefault), DEVICE_DEFAULT);
        assert_eq!(value(BuiltinConst::DeviceHost), DEVICE_HOST);
        assert_eq!(value(BuiltinConst::PropertyMemory), PROPERTY_MEMORY);
        assert_eq!(
            value(BuiltinConst::PropertyFreeMemory),
            PROPERTY_FREE_MEMORY
        );
    }

    #[test]
    fn device_queries() {
        let t = TestCtx::new();
        let p = t.ptr();
        unsafe {
            assert_eq!(acc_get_num_devices(p, value(BuiltinConst::DeviceHost)), 1);
            assert_eq!(
                acc_get_num_devices(p, value(BuiltinConst::DeviceDefault)),
                1
            );
            assert_eq!(acc_get_num_devices(p, value(BuiltinConst::DeviceNvidia)), 0);
            assert_eq!(
                acc_get_num_devices(p, value(BuiltinConst::DeviceNotHost)),
                0
            );
            assert_eq!(
                acc_get_num_devices(p, value(BuiltinConst::DeviceEmulated)),
                0
            );
            assert_eq!(acc_get_device_type(p), value(BuiltinConst::DeviceHost));
            acc_set_device_type(p, value(BuiltinConst::DeviceNvidia));
            acc_set_device_num(p, 1, value(BuiltinConst::DeviceNvidia));
            assert_eq!(acc_get_device_type(p), value(BuiltinConst::DeviceHost));
            assert_eq!(acc_get_device_num(p, value(BuiltinConst::DeviceHost)), 0);
            assert_eq!(acc_on_device(p, value(BuiltinConst::DeviceHost)), 1);
            assert_eq!(acc_on_device(p, value(BuiltinConst::DeviceNotHost)), 0);
            assert_eq!(acc_on_device(p, value(BuiltinConst::DeviceNvidia)), 0);
            assert_eq!(acc_on_device(p, value(BuiltinConst::DeviceMulticore)), 0);
        }
    }

    #[test]
    fn data_and_queues_are_trivial() {
        let t = TestCtx::new();
        let p = t.ptr();
        let a = acc_runtime::array::new_array(acc_runtime::abi::ELEM_F64, &[4]).unwrap();
        unsafe {
            assert_eq!(acc_is_present(p, a), 1);
            acc_copyin(p, a);
            acc_create(p, a);
            acc_copyout(p, a);
            acc_delete(p, a);
            acc_update_device(p, a);
            acc_update_self(p, a);
            acc_wait(p, 1);
            acc_wait_all(p);
            acc_wait_async(p, 1, 2);
            assert_eq!(acc_async_test(p, 3), 1);
            assert_eq!(acc_async_test_all(p), 1);
            assert_eq!((*a).refcount, 1);
            acc_runtime::array::release(a);
            assert_eq!(acc_get_default_async(p), -1);
            acc_set_default_async(p, 5);
            assert_eq!(acc_get_default_async(p), 5);
        }
    }

    #[test]
    fn memory_properties() {
        let t = TestCtx::new();
        let host = value(BuiltinConst::DeviceHost);
        unsafe {
            let total = acc_get_property(t.ptr(), 0, host, PROPERTY_MEMORY);
            let free = acc_get_property(t.ptr(), 0, host, PROPERTY_FREE_MEMORY);
            assert!(total > 1 << 20, "{total}");
            assert!(free > 0 && free <= total, "{free} of {total}");
            assert_eq!(acc_get_property(t.ptr(), 1, host, PROPERTY_MEMORY), 0);
            assert_eq!(acc_get_property(t.ptr(), 0, 4, PROPERTY_MEMORY), 0);
            assert_eq!(acc_get_property(t.ptr(), 0, host, 99), 0);
        }
    }

    #[test]
    fn meminfo_parsing() {
        let info = "MemTotal:       16303404 kB\nMemFree:  1 kB\nMemAvailable:   12000000 kB\n";
        assert_eq!(meminfo_bytes(info, "MemTotal:"), Some(16303404 * 1024));
        assert_eq!(meminfo_bytes(info, "MemAvailable:"), Some(12000000 * 1024));
        assert_eq!(meminfo_bytes(info, "Nope:"), None);
        assert_eq!(meminfo_bytes("MemTotal: x kB", "MemTotal:"), None);
    }
}
