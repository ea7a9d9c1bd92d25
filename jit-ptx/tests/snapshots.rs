//! The PTX of a few small regions, as snapshots (`cargo insta review` after a deliberate
//! change). Each also assembles.

mod common;

fn snapshot_of(name: &str, source: &str) -> String {
    let ptx = common::ptx_of(source);
    assert!(ptx.unsupported.is_empty(), "{:?}", ptx.unsupported);
    common::assemble(name, &ptx.text).unwrap_or_else(|e| panic!("{e}"));
    ptx.text
}

#[test]
fn saxpy() {
    let text = snapshot_of(
        "snap_saxpy",
        "let n = 1000
let x = fill(1.0f32, n)
let y = fill(2.0f32, n)
let a = 2.0f32
acc parallel loop copyin(x) copy(y)
for i in 0..n {
    y[i] = a * x[i] + y[i]
}
",
    );
    insta::assert_snapshot!(text);
}

#[test]
fn dot_product_reduction() {
    let text = snapshot_of(
        "snap_dot",
        "let x = ones(100)
let y = ones(100)
let s = 0.0
acc parallel loop reduction(+: s) copyin(x, y)
for i in 0..len(x) {
    s += x[i] * y[i]
}
",
    );
    insta::assert_snapshot!(text);
}

#[test]
fn collapse_2d() {
    let text = snapshot_of(
        "snap_collapse",
        "let a = zeros(i32, 30, 40)
acc parallel loop collapse(2) copy(a)
for i in 0..30 {
    for j in 0..40 {
        a[i, j] = i * 40 + j
    }
}
",
    );
    insta::assert_snapshot!(text);
}

#[test]
fn atomic_histogram() {
    let text = snapshot_of(
        "snap_histogram",
        "let a = zeros(i32, 1000)
let h = zeros(i64, 16)
acc parallel loop copyin(a) copy(h)
for i in 0..len(a) {
    acc atomic update
    h[a[i]] += 1
}
",
    );
    insta::assert_snapshot!(text);
}

#[test]
fn device_print_records() {
    let text = snapshot_of(
        "snap_print",
        "let x = 0.1f32
acc parallel num_gangs(2) copyin(x) {
    print(\"x\", x, -0.0, true)
    printf(\"%5.2f|%x\\n\", x, 255)
}
",
    );
    insta::assert_snapshot!(text);
}
