//! An engine on one device writing to a buffer the test reads, shared by the engine tests
//! (each includes this file with `#[path]`).

use acc::{DeviceKind, DeviceOptions, Engine};
use acc_runtime::host::SharedBuffer;

pub fn engine_on(kind: DeviceKind) -> (Engine, SharedBuffer) {
    let out = SharedBuffer::new();
    let mut e = Engine::with_output(Box::new(out.clone())).expect("engine");
    e.set_devices(DeviceOptions::new().device(kind, 0));
    (e, out)
}
