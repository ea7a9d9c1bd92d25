//! The engine's GPU kernel table, on any machine: the engine makes kernels without a GPU when
//! a test asks (`kernels_without_gpu`), so their coming and going with the code can be checked
//! where no GPU runs them (the regions run on the host device here).

use super::Engine;
use acc_runtime::device::{DeviceKind, DeviceOptions};
use acc_runtime::host::SharedBuffer;

/// An engine that makes GPU kernels and runs on the host, as the REPL runs lines.
fn engine(out: &SharedBuffer) -> Engine {
    let mut e = Engine::with_output(Box::new(out.clone())).expect("engine");
    e.kernels_without_gpu = true;
    e.set_devices(DeviceOptions::new().device(DeviceKind::Host, 0));
    e.set_print_values(true);
    e
}

fn kernels(e: &mut Engine) -> usize {
    e.context.gpu_kernels().len()
}

const SETUP: &str = "let a = zeros(4)\n\
                     fn bump(v: f64[]) {\n\
                     acc parallel loop copy(v)\n\
                     for i in 0..len(v) { v[i] += 1.0 }\n\
                     }\n";

/// Two compute constructs at the top level: two kernels, whose code goes after the next line.
const TWO_REGIONS: &str = "bump(a)\n\
                           acc parallel loop copy(a)\n\
                           for i in 0..len(a) { a[i] *= 10.0 }\n\
                           acc serial copy(a) {\n a[0] = -1.0\n}\n";

#[test]
fn a_lines_kernels_go_with_its_code_and_a_functions_stay_with_the_function() {
    let out = SharedBuffer::new();
    let mut e = engine(&out);
    e.run("<repl:1>", SETUP).unwrap();
    // `bump`'s region.
    assert_eq!(kernels(&mut e), 1);
    e.run("<repl:2>", TWO_REGIONS).unwrap();
    // The line is the last script, kept to run again until another line runs.
    assert_eq!(kernels(&mut e), 3);
    e.run("<repl:3>", "a").unwrap();
    // (0 + 1) * 10 each, then the first set to -1.
    assert_eq!(out.take(), b"[-1.0, 10.0, 10.0, 10.0]\n");
    assert_eq!((kernels(&mut e), e.code_units()), (1, 2));
    // `bump` defined again: the first line's unit goes, and its kernel with it.
    e.run("<repl:4>", &SETUP.replace("+= 1.0", "+= 2.0"))
        .unwrap();
    e.run("<repl:5>", "bump(a)\na").unwrap();
    assert_eq!(out.take(), b"[2.0, 2.0, 2.0, 2.0]\n");
    e.run("<repl:6>", "a").unwrap();
    assert_eq!(out.take(), b"[2.0, 2.0, 2.0, 2.0]\n");
    assert_eq!((kernels(&mut e), e.code_units()), (1, 2));
}

#[test]
fn the_same_text_run_again_keeps_its_kernels_and_distinct_texts_leave_the_table_flat() {
    let out = SharedBuffer::new();
    let mut e = engine(&out);
    e.run("<repl:1>", SETUP).unwrap();
    let before = kernels(&mut e);
    for _ in 0..3 {
        e.run("again.acc", TWO_REGIONS).unwrap();
        assert_eq!(kernels(&mut e), before + 2);
    }
    for i in 0..20 {
        let text = format!("acc parallel loop copy(a)\nfor j in 0..len(a) {{ a[j] = {i}.0 }}\n");
        e.run(&format!("<repl:{}>", i + 2), &text).unwrap();
        assert_eq!(kernels(&mut e), before + 1);
    }
    e.run("last.acc", "a").unwrap();
    assert_eq!(out.take(), b"[19.0, 19.0, 19.0, 19.0]\n");
    assert_eq!(kernels(&mut e), before);
}

/// Setting the devices up anew keeps the kernels: the code that launches them stays.
#[test]
fn kernels_outlive_a_change_of_devices() {
    let out = SharedBuffer::new();
    let mut e = engine(&out);
    e.run("<repl:1>", SETUP).unwrap();
    e.set_devices(DeviceOptions::new().device(DeviceKind::Emulated, 0));
    assert_eq!(kernels(&mut e), 1);
    e.run("<repl:2>", "bump(a)\na").unwrap();
    assert_eq!(out.take(), b"[1.0, 1.0, 1.0, 1.0]\n");
}
