//! Stress of the emulated device: 10,000 data regions and 10,000 async operations over 4
//! queues. A file of its own: the live-array counter is global to the process.

use acc::{DeviceKind, DeviceOptions, Engine};
use acc_runtime::host::SharedBuffer;

#[path = "support/memory.rs"]
mod memory;
use memory::rss;

const SCRIPT: &str = r#"
let n = 64
let a = zeros(i64, n)
for k in 0..10000 {
    acc data copy(a) {
        acc parallel loop present(a)
        for i in 0..n {
            a[i] += 1
        }
    }
}
let b = zeros(i64, 4, n)
acc enter data copyin(b)
for k in 0..10000 {
    let q = k % 4
    acc parallel loop present(b) async(q)
    for i in 0..n {
        b[q, i] += i
    }
    if k % 1000 == 999 {
        acc wait(q) async((q + 1) % 4)
    }
}
acc wait
acc exit data copyout(b)
print(a[0], a[n - 1], b[0, 1], b[3, n - 1], sum(b))
"#;

#[test]
fn ten_thousand_data_regions_and_async_launches() {
    let out = SharedBuffer::new();
    let mut e = Engine::with_output(Box::new(out.clone())).expect("engine");
    e.set_devices(DeviceOptions::new().device(DeviceKind::Emulated, 0));
    e.run("stress.acc", SCRIPT).expect("runs");
    // Each row q of b got 2500 launches adding i; sum = 4 * 2500 * (0 + … + 63).
    let expected = format!(
        "10000 10000 2500 {} {}\n",
        2500 * 63,
        4 * 2500 * (63 * 64 / 2)
    );
    assert_eq!(out.take(), expected.as_bytes());
    assert_eq!(e.present_arrays(), 0, "something left in a presence table");

    let arrays = acc_runtime::array::live_arrays();
    let before = rss();
    e.run("stress.acc", SCRIPT).expect("runs again");
    assert_eq!(out.take(), expected.as_bytes());
    assert_eq!(e.present_arrays(), 0);
    assert_eq!(acc_runtime::array::live_arrays(), arrays, "arrays leaked");
    let grown = rss().saturating_sub(before);
    assert!(grown < 8 << 20, "resident memory grew by {grown} bytes");
}
