//! The devices through the engine: what the profile counts, the trace, and results that agree
//! across host, multicore and emulated.

use acc::{DeviceKind, DeviceOptions, Engine};
use acc_runtime::host::SharedBuffer;
use acc_runtime::profile::ProfileOptions;

fn engine_on(kind: DeviceKind, profile: ProfileOptions) -> (Engine, SharedBuffer) {
    let out = SharedBuffer::new();
    let mut e = Engine::with_output(Box::new(out.clone())).expect("engine");
    let mut opts = DeviceOptions::new().device(kind, 0);
    opts.profile = profile;
    e.set_devices(opts);
    (e, out)
}

fn example(name: &str) -> String {
    let path = format!("{}/examples/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).expect("example")
}

#[test]
fn jacobi_with_a_data_region_moves_each_array_in_and_out_once() {
    let profile = ProfileOptions {
        profile: true,
        ..ProfileOptions::default()
    };
    let (mut e, out) = engine_on(DeviceKind::Emulated, profile);
    e.set_param("n", "64");
    e.set_param("iter_max", "120");
    e.run("jacobi.acc", &example("jacobi.acc")).expect("runs");
    let t = e.profile_totals();
    let grid = 64 * 64 * 8;
    // `copy(A)`: in once at the region's entry and out once at its exit; `create(Anew)`:
    // never moved. 2 x 120 kernels ran in between.
    assert_eq!(t.uploads.count(), 1, "{t:?}");
    assert_eq!(t.uploads.bytes, grid);
    assert_eq!(t.downloads.count(), 1, "{t:?}");
    assert_eq!(t.downloads.bytes, grid);
    assert_eq!(t.launches.count, 240);
    assert_eq!(e.present_arrays(), 0);
    let report = e.profile_report();
    assert!(report.contains("parallel loop"), "{report}");

    // The same lines as on the host device.
    let (mut h, host_out) = engine_on(DeviceKind::Host, ProfileOptions::default());
    h.set_param("n", "64");
    h.set_param("iter_max", "120");
    h.run("jacobi.acc", &example("jacobi.acc")).expect("runs");
    assert_eq!(out.contents(), host_out.contents());
}

#[test]
fn without_a_data_region_every_construct_moves_its_arrays() {
    let profile = ProfileOptions {
        profile: true,
        ..ProfileOptions::default()
    };
    let (mut e, _) = engine_on(DeviceKind::Emulated, profile);
    let script = "let a = zeros(100)\nfor k in 0..3 {\n acc parallel loop\n for i in 0..100 { a[i] += 1.0 }\n}\nassert(a[7] == 3.0)\n";
    e.run("t.acc", script).expect("runs");
    let t = e.profile_totals();
    // The implicit `copy(a)` of each of the 3 constructs.
    assert_eq!(t.uploads.count(), 3);
    assert_eq!(t.downloads.count(), 3);
    assert_eq!(t.uploads.bytes, 3 * 800);
}

#[test]
fn the_trace_of_the_async_mandelbrot_is_chrome_trace_json() {
    let profile = ProfileOptions {
        trace: true,
        ..ProfileOptions::default()
    };
    let (mut e, out) = engine_on(DeviceKind::Emulated, profile);
    e.set_param("width", "64");
    e.set_param("height", "64");
    e.set_param("blocks", "4");
    e.run("mandelbrot.acc", &example("mandelbrot.acc"))
        .expect("runs");
    let trace: serde_json::Value = serde_json::from_str(&e.chrome_trace()).expect("valid JSON");
    let events = trace["traceEvents"].as_array().expect("traceEvents");
    let named = |ph: &str, cat: &str| {
        events
            .iter()
            .filter(|ev| ev["ph"] == ph && (cat.is_empty() || ev["cat"] == cat))
            .count()
    };
    // One kernel and one download per block, on the queues the example names.
    assert_eq!(named("X", "launch"), 4, "{trace:#}");
    let downloads = events
        .iter()
        .filter(|ev| ev["ph"] == "X" && ev["name"].as_str().unwrap_or("").starts_with("download"))
        .count();
    assert_eq!(downloads, 4);
    for ev in events.iter().filter(|ev| ev["ph"] == "X") {
        assert!(ev["ts"].as_f64().unwrap() >= 0.0 && ev["dur"].as_f64().unwrap() >= 0.0);
    }
    // A process for the device, a thread per queue.
    let meta: Vec<String> = events
        .iter()
        .filter(|ev| ev["ph"] == "M")
        .map(|ev| ev["args"]["name"].as_str().unwrap_or("").to_string())
        .collect();
    assert!(meta.iter().any(|m| m == "emulated:0"), "{meta:?}");
    assert!(
        meta.iter().filter(|m| m.starts_with("queue")).count() >= 2,
        "{meta:?}"
    );
    assert!(out.contents().contains("checksum") || !out.contents().is_empty());
}

#[test]
fn a_reduction_gives_the_same_bits_on_every_run() {
    let script = "let x = linspace(0.0, 1.0, 100001)\nlet s = 0.0\nacc parallel loop reduction(+: s)\nfor i in 0..len(x) { s += x[i] * x[i] / 3.0 }\nprintf(\"%.17g\\n\", s)\n";
    for kind in [DeviceKind::Multicore, DeviceKind::Emulated] {
        let mut seen = Vec::new();
        for _ in 0..5 {
            let (mut e, out) = engine_on(kind, ProfileOptions::default());
            e.run("t.acc", script).expect("runs");
            seen.push(out.contents());
        }
        assert!(seen.windows(2).all(|w| w[0] == w[1]), "{kind:?}: {seen:?}");
    }
}

#[test]
fn errors_in_device_code_name_their_site_and_the_runtime_stays_usable() {
    let (mut e, out) = engine_on(DeviceKind::Emulated, ProfileOptions::default());
    let bad = "let a = zeros(10)\nacc parallel loop async(1)\nfor i in 0..11 { a[i] = 1.0 }\nacc wait(1)\n";
    let err = e.run("bad.acc", bad).unwrap_err();
    let text = err.render(false);
    assert!(
        text.contains("index out of bounds: index 10 for `a` of length 10"),
        "{text}"
    );
    assert!(text.contains("bad.acc:3"), "{text}");
    e.run(
        "ok.acc",
        "let b = ones(4)\nacc parallel loop\nfor i in 0..4 { b[i] += 1.0 }\nprint(b)\n",
    )
    .expect("runs after the error");
    assert_eq!(out.contents(), "[2.0, 2.0, 2.0, 2.0]\n");
}

/// On two GPUs or more (run on the device: `cargo test --test engine_devices -- --ignored`):
/// with edges first forced on (`ACC_EDGES_FIRST=on`; under `auto` these small arrays never
/// take that path), GPUs that send halo rows run the iterations writing them first and send
/// the rows while the rest of their blocks runs, and the results are the sequential ones
/// (the expected output is Python's, `tests/conformance/directive_devices_edges.out`).
#[test]
#[ignore = "needs two NVIDIA GPUs"]
fn split_loops_that_send_their_edges_first_give_the_sequential_results_on_gpus() {
    assert!(acc::gpu_count() >= 2, "fewer than two GPUs");
    let dir = format!("{}/tests/conformance", env!("CARGO_MANIFEST_DIR"));
    let src = std::fs::read_to_string(format!("{dir}/directive_devices_edges.acc")).unwrap();
    let want = std::fs::read_to_string(format!("{dir}/directive_devices_edges.out")).unwrap();
    let out = SharedBuffer::new();
    let mut e = Engine::with_output(Box::new(out.clone())).expect("engine");
    e.set_devices(
        DeviceOptions::new()
            .device(DeviceKind::Nvidia, 0)
            .edges_first(acc::EdgesFirst::On),
    );
    e.run("directive_devices_edges.acc", &src).expect("runs");
    assert_eq!(String::from_utf8(out.take()).unwrap(), want);
}

/// Emulated devices run a part's edge iterations first as GPUs do (`ACC_EDGES_FIRST=on`): the
/// same output (Python's), and more launches, one per edge of each part that sends rows.
#[test]
fn emulated_devices_run_the_edges_first_as_launches_of_their_own() {
    let dir = format!("{}/tests/conformance", env!("CARGO_MANIFEST_DIR"));
    let src = std::fs::read_to_string(format!("{dir}/directive_devices_edges.acc")).unwrap();
    let want = std::fs::read_to_string(format!("{dir}/directive_devices_edges.out")).unwrap();
    let launches = |mode: acc::EdgesFirst| {
        let out = SharedBuffer::new();
        let mut e = Engine::with_output(Box::new(out.clone())).expect("engine");
        let mut opts = DeviceOptions::new()
            .device(DeviceKind::Emulated, 0)
            .emulated_devices(3)
            .edges_first(mode);
        opts.profile.profile = true;
        e.set_devices(opts);
        e.run("directive_devices_edges.acc", &src).expect("runs");
        assert_eq!(String::from_utf8(out.take()).unwrap(), want, "{mode:?}");
        e.profile_totals().launches.count
    };
    let (off, on) = (
        launches(acc::EdgesFirst::Off),
        launches(acc::EdgesFirst::On),
    );
    assert!(on > off, "{on} launches with edges first, {off} without");
}
