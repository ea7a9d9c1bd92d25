//! The OpenACC runtime routines (LANGUAGE.md 7.10): thin entry points over the runtime's
//! `Devices` (the current device, presence, queues). A data routine's argument is a data-op
//! record that compiled code fills for the array or section (`acc_runtime::device::ops`).

use acc_runtime::abi::{ArrayHeader, Ctx};
use acc_runtime::device::ops::DataOpArg;
use acc_runtime::device::{
    devices, DeviceKind, ASYNC_SYNC, DEVICE_DEFAULT, DEVICE_HOST, DEVICE_MULTICORE, DEVICE_NOT_HOST,
};
use acc_runtime::error::RunErrorKind;
use acc_runtime::host::{fail, guarded, host_state};

use crate::arrays::symbol_list;
use acc_abi::DeviceProperty;

/// # Safety
/// `ctx` is a live context (for every function of this module; arrays as each says).
pub unsafe extern "C" fn acc_get_num_devices(ctx: *mut Ctx, t: i32) -> i32 {
    guarded(ctx, None, || devices(ctx).count(t) as i32)
}

/// # Safety
/// As `acc_get_num_devices`.
pub unsafe extern "C" fn acc_get_device_type(ctx: *mut Ctx) -> i32 {
    guarded(ctx, None, || devices(ctx).current().0.code())
}

/// Makes device `n` of type `t` current; a type or number with no device is an error.
unsafe fn set_device(ctx: *mut Ctx, n: i32, t: i32) {
    let devices = devices(ctx);
    let Some(kind) = devices.resolve(t) else {
        let message = format!("`{t}` is not a device type");
        return fail(ctx, RunErrorKind::NoSuchDevice { message }, None);
    };
    let num = usize::try_from(n).unwrap_or(usize::MAX);
    if let Err(e) = devices.select(kind, num) {
        fail(ctx, e, None);
    }
}

/// # Safety
/// As `acc_get_num_devices`.
pub unsafe extern "C" fn acc_set_device_type(ctx: *mut Ctx, t: i32) {
    guarded(ctx, None, || {
        set_device(ctx, 0, t);
    })
}

/// # Safety
/// As `acc_get_num_devices`.
pub unsafe extern "C" fn acc_set_device_num(ctx: *mut Ctx, n: i32, t: i32) {
    guarded(ctx, None, || {
        set_device(ctx, n, t);
    })
}

/// The current device's number when `t` is its type, else 0.
///
/// # Safety
/// As `acc_get_num_devices`.
pub unsafe extern "C" fn acc_get_device_num(ctx: *mut Ctx, t: i32) -> i32 {
    guarded(ctx, None, || {
        let devices = devices(ctx);
        let (kind, num) = devices.current();
        match devices.resolve(t) {
            Some(k) if k == kind => num as i32,
            _ => 0,
        }
    })
}

/// Where the calling code runs: host code on the host; a gang of a region on the device that
/// runs it (`multicore` counts as the host too: it is host threads).
///
/// # Safety
/// As `acc_get_num_devices`.
pub unsafe extern "C" fn acc_on_device(ctx: *mut Ctx, t: i32) -> u8 {
    guarded(ctx, None, || {
        let on = host_state(ctx).on_device();
        let yes = match t {
            DEVICE_HOST => on == DEVICE_HOST || on == DEVICE_MULTICORE,
            DEVICE_NOT_HOST => on != DEVICE_HOST && on != DEVICE_MULTICORE,
            DEVICE_DEFAULT => false,
            t => t == on,
        };
        u8::from(yes)
    })
}

/// # Safety
/// As `acc_get_num_devices`; `op` is a record of a live array.
pub unsafe extern "C" fn acc_is_present(ctx: *mut Ctx, op: *const DataOpArg) -> u8 {
    guarded(ctx, None, || u8::from(devices(ctx).is_present(ctx, &*op)))
}

macro_rules! data_routines {
    ($($name:ident => $phase:ident $action:ident;)*) => {$(
        /// A data routine: the dynamic data op it names, on the current device.
        ///
        /// # Safety
        /// As `acc_is_present`.
        pub unsafe extern "C" fn $name(ctx: *mut Ctx, op: *const DataOpArg) {
            guarded(ctx, None, || {
                use acc_runtime::device::ops::*;
                let op = DataOpArg { action: $action, ..*op };
                devices(ctx).routine(ctx, DataPhase::$phase, &op);

            })
        }
    )*};
}

data_routines! {
    acc_copyin => Enter ACTION_COPYIN;
    acc_create => Enter ACTION_CREATE;
    acc_copyout => Exit ACTION_COPYOUT;
    acc_delete => Exit ACTION_DELETE;
    acc_update_device => Update ACTION_UPDATE_DEVICE;
    acc_update_self => Update ACTION_UPDATE_HOST;
}

/// # Safety
/// As `acc_get_num_devices`.
pub unsafe extern "C" fn acc_wait(ctx: *mut Ctx, q: i32) {
    guarded(ctx, None, || {
        devices(ctx).wait(ctx, &[i64::from(q)], false, ASYNC_SYNC, NO_SITE);
    })
}

/// # Safety
/// As `acc_get_num_devices`.
pub unsafe extern "C" fn acc_wait_all(ctx: *mut Ctx) {
    guarded(ctx, None, || {
        devices(ctx).wait(ctx, &[], true, ASYNC_SYNC, NO_SITE);
    })
}

/// Queue `r` waits for queue `q`.
///
/// # Safety
/// As `acc_get_num_devices`.
pub unsafe extern "C" fn acc_wait_async(ctx: *mut Ctx, q: i32, r: i32) {
    guarded(ctx, None, || {
        devices(ctx).wait(ctx, &[i64::from(q)], false, i64::from(r), NO_SITE);
    })
}

/// The site of routines that take none (their errors point at the statement).
const NO_SITE: u32 = u32::MAX;

/// # Safety
/// As `acc_get_num_devices`.
pub unsafe extern "C" fn acc_async_test(ctx: *mut Ctx, q: i32) -> u8 {
    guarded(ctx, None, || {
        let da = host_state(ctx).default_async();
        let id = match acc_runtime::device::QueueArg::decode(i64::from(q), da) {
            Ok(acc_runtime::device::QueueArg::Async(id)) => id,
            Ok(_) => return 1,
            Err(e) => {
                fail(ctx, e, None);
                return 0;
            }
        };
        u8::from(devices(ctx).async_test(Some(id)))
    })
}

/// # Safety
/// As `acc_get_num_devices`.
pub unsafe extern "C" fn acc_async_test_all(ctx: *mut Ctx) -> u8 {
    guarded(ctx, None, || u8::from(devices(ctx).async_test(None)))
}

/// `acc_property_memory`: total memory; `acc_property_free_memory`: available memory (bytes):
/// a GPU's from its driver; /proc/meminfo's RAM for every device made of host memory (the
/// emulated devices allocate from it too; 0 where it cannot be read). Devices that do not
/// exist, other properties: 0.
///
/// # Safety
/// As `acc_get_num_devices`.
pub unsafe extern "C" fn acc_get_property(ctx: *mut Ctx, n: i32, t: i32, p: i32) -> i64 {
    guarded(ctx, None, || {
        let devices = devices(ctx);
        let (Ok(num), Some(property)) = (usize::try_from(n), DeviceProperty::from_code(p)) else {
            return 0;
        };
        match devices.resolve(t) {
            Some(DeviceKind::Nvidia) => {
                let Some((total, free)) = devices.gpu_memory(num) else {
                    return 0;
                };
                return match property {
                    DeviceProperty::Memory => total as i64,
                    DeviceProperty::FreeMemory => free as i64,
                };
            }
            Some(k) if num < devices.count(k.code()) => {}
            _ => return 0,
        }
        let key = match property {
            DeviceProperty::Memory => "MemTotal:",
            DeviceProperty::FreeMemory => "MemAvailable:",
        };
        std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|info| meminfo_bytes(&info, key))
            .unwrap_or(0)
    })
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
    guarded(ctx, None, || {
        host_state(ctx).set_default_async(q);
    })
}

/// # Safety
/// `ctx` is a live context.
pub unsafe extern "C" fn acc_get_default_async(ctx: *mut Ctx) -> i32 {
    guarded(ctx, None, || host_state(ctx).default_async())
}

/// `acc_memcpy_d2d(dst, src, dst_num, src_num)`: `src`'s copy on device `src_num` into
/// `dst`'s copy on device `dst_num`, both of the current type.
///
/// # Safety
/// `ctx` is a live context; `dst` and `src` are live arrays.
pub unsafe extern "C" fn acc_memcpy_d2d(
    ctx: *mut Ctx,
    dst: *mut ArrayHeader,
    src: *mut ArrayHeader,
    dst_num: i32,
    src_num: i32,
) {
    guarded(ctx, None, || {
        if let Err(e) = devices(ctx).memcpy_d2d(dst, src, dst_num, src_num) {
            fail(ctx, e, None);
        }
    })
}

pub fn symbols() -> Vec<(&'static str, *const u8)> {
    symbol_list![
        acc_get_num_devices acc_get_device_type acc_set_device_type acc_set_device_num
        acc_get_device_num acc_on_device acc_is_present
        acc_copyin acc_create acc_copyout acc_delete acc_update_device acc_update_self
        acc_wait acc_wait_all acc_wait_async acc_async_test acc_async_test_all
        acc_get_property acc_set_default_async acc_get_default_async acc_memcpy_d2d
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TestCtx;
    use acc_lang::builtins::BuiltinConst;

    const PROPERTY_MEMORY: i32 = DeviceProperty::Memory.code();
    const PROPERTY_FREE_MEMORY: i32 = DeviceProperty::FreeMemory.code();

    fn value(c: BuiltinConst) -> i32 {
        c.value()
    }

    #[test]
    fn constants_agree_with_the_language() {
        use acc_runtime::device::{DEVICE_EMULATED, DEVICE_NONE, DEVICE_NVIDIA};
        assert_eq!(value(BuiltinConst::DeviceNone), DEVICE_NONE);
        assert_eq!(value(BuiltinConst::DeviceDefault), DEVICE_DEFAULT);
        assert_eq!(value(BuiltinConst::DeviceHost), DEVICE_HOST);
        assert_eq!(value(BuiltinConst::DeviceNotHost), DEVICE_NOT_HOST);
        assert_eq!(value(BuiltinConst::DeviceNvidia), DEVICE_NVIDIA);
        assert_eq!(value(BuiltinConst::DeviceMulticore), DEVICE_MULTICORE);
        assert_eq!(value(BuiltinConst::DeviceEmulated), DEVICE_EMULATED);
        assert_eq!(value(BuiltinConst::PropertyMemory), PROPERTY_MEMORY);
        assert_eq!(
            value(BuiltinConst::PropertyFreeMemory),
            PROPERTY_FREE_MEMORY
        );
    }

    /// A context whose devices start as `kind`.
    fn on(kind: DeviceKind) -> TestCtx {
        let mut t = TestCtx::new();
        let opts = acc_runtime::device::DeviceOptions::new().device(kind, 0);
        t.context.configure_devices(opts);
        t
    }

    fn whole(a: *mut acc_runtime::abi::ArrayHeader) -> DataOpArg {
        DataOpArg::whole(a, 0, 7)
    }

    #[test]
    fn device_queries_and_selection() {
        let mut t = on(DeviceKind::Host);
        let p = t.ptr();
        let c = value;
        unsafe {
            assert_eq!(acc_get_num_devices(p, c(BuiltinConst::DeviceHost)), 1);
            assert_eq!(acc_get_num_devices(p, c(BuiltinConst::DeviceDefault)), 1);
            assert_eq!(acc_get_num_devices(p, c(BuiltinConst::DeviceNvidia)), 0);
            assert_eq!(acc_get_num_devices(p, c(BuiltinConst::DeviceEmulated)), 2);
            assert_eq!(acc_get_device_type(p), c(BuiltinConst::DeviceHost));
            acc_set_device_num(p, 1, c(BuiltinConst::DeviceEmulated));
            assert_eq!(acc_get_device_type(p), c(BuiltinConst::DeviceEmulated));
            assert_eq!(acc_get_device_num(p, c(BuiltinConst::DeviceEmulated)), 1);
            assert_eq!(acc_get_device_num(p, c(BuiltinConst::DeviceHost)), 0);
            acc_set_device_type(p, c(BuiltinConst::DeviceMulticore));
            assert_eq!(acc_get_device_type(p), c(BuiltinConst::DeviceMulticore));
            // Host code runs on the host, whatever the current device.
            assert_eq!(acc_on_device(p, c(BuiltinConst::DeviceHost)), 1);
            assert_eq!(acc_on_device(p, c(BuiltinConst::DeviceNotHost)), 0);
            assert_eq!(acc_on_device(p, c(BuiltinConst::DeviceEmulated)), 0);
        }
        // A device that does not exist is an error, and the selection stays.
        unsafe { acc_set_device_num(p, 2, c(BuiltinConst::DeviceEmulated)) };
        let (kind, _) = t.error();
        assert!(
            matches!(kind, RunErrorKind::NoSuchDevice { .. }),
            "{kind:?}"
        );
        unsafe { assert_eq!(acc_get_device_type(p), c(BuiltinConst::DeviceMulticore)) };
    }

    #[test]
    fn shared_memory_devices_have_everything_present() {
        let t = on(DeviceKind::Multicore);
        let p = t.ptr();
        let a = acc_runtime::array::new_array(acc_runtime::abi::ELEM_F64, &[4]).unwrap();
        let op = whole(a);
        unsafe {
            assert_eq!(acc_is_present(p, &op), 1);
            acc_copyin(p, &op);
            acc_delete(p, &op);
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
    fn data_routines_on_an_emulated_device() {
        use acc_runtime::array::{elements, elements_mut};
        let t = on(DeviceKind::Emulated);
        let p = t.ptr();
        let a = acc_runtime::array::new_array(acc_runtime::abi::ELEM_I64, &[4]).unwrap();
        let op = whole(a);
        unsafe {
            assert_eq!(acc_is_present(p, &op), 0);
            elements_mut::<i64>(a).copy_from_slice(&[1, 2, 3, 4]);
            acc_copyin(p, &op);
            assert_eq!(acc_is_present(p, &op), 1);
            // The host copy changes; the device keeps what was copied in.
            elements_mut::<i64>(a).copy_from_slice(&[0, 0, 0, 0]);
            acc_update_self(p, &op);
            assert_eq!(elements::<i64>(a), &[1, 2, 3, 4]);
            elements_mut::<i64>(a)[0] = 9;
            acc_update_device(p, &op);
            elements_mut::<i64>(a)[0] = 0;
            acc_copyout(p, &op);
            assert_eq!(elements::<i64>(a), &[9, 2, 3, 4]);
            assert_eq!(acc_is_present(p, &op), 0);
            // The table held a reference while the data was present.
            assert_eq!((*a).refcount, 1);
            acc_runtime::array::release(a);
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
            let emulated = value(BuiltinConst::DeviceEmulated);
            assert_eq!(
                acc_get_property(t.ptr(), 1, emulated, PROPERTY_MEMORY),
                total
            );
            assert_eq!(acc_get_property(t.ptr(), 2, emulated, PROPERTY_MEMORY), 0);
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
