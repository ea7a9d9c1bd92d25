//! The embedding API (issue 15): scripts compiled once, script functions called from Rust,
//! typed globals, and arrays shared with scripts without a copy, on every host device.
//! Expected values are computed by hand or in Rust beside the script.

use acc::{Array, DeviceKind, Engine, Error, Limits};
use std::time::{Duration, Instant};

#[path = "support/engine.rs"]
mod support;
use support::engine_on;

const HOST_DEVICES: [DeviceKind; 3] = [
    DeviceKind::Host,
    DeviceKind::Multicore,
    DeviceKind::Emulated,
];

#[test]
fn an_array_from_a_vec_is_the_vecs_storage_and_scripts_write_into_it() {
    for kind in HOST_DEVICES {
        let (mut e, _) = engine_on(kind);
        let v: Vec<f64> = (0..12).map(f64::from).collect();
        let at = v.as_ptr();
        let grid = Array::from_vec(v, &[3, 4]).unwrap();
        assert_eq!(grid.read(|s| s.as_ptr()), at, "no copy");
        e.run("decl.acc", "let grid = zeros(1, 1)").unwrap();
        e.set_global("grid", grid.clone()).unwrap();
        // A compute region on the device (copy in and out of the host's storage).
        let step = e
            .compile(
                "step.acc",
                "acc parallel loop collapse(2) copy(grid)
                 for i in 0..3 { for j in 0..4 { grid[i, j] = grid[i, j] * 2.0 + i } }",
            )
            .unwrap();
        e.run_script(&step).unwrap();
        e.run_script(&step).unwrap();
        let want: Vec<f64> = (0..12)
            .map(|k| {
                let i = f64::from(k / 4);
                (f64::from(k) * 2.0 + i) * 2.0 + i
            })
            .collect();
        assert_eq!(grid.to_vec(), want, "{kind:?}");
        assert_eq!(grid.read(|s| s.as_ptr()), at, "still the Vec's storage");
        // The host's writes are what the next run sees.
        grid.write(|s| s.fill(1.0));
        e.run("sum.acc", "fn sum_of(a: f64[,]) -> f64 { return sum(a) }")
            .unwrap();
        let total: f64 = e.call("sum_of", (grid.clone(),)).unwrap();
        assert_eq!(total, 12.0);
    }
}

#[test]
fn globals_are_read_and_written_with_their_declared_types() {
    let (mut e, out) = engine_on(DeviceKind::Host);
    e.run(
        "g.acc",
        "let flag = false\nlet n32: i32 = 0\nlet n: i64 = 0\nlet x32: f32 = 0.0\nlet x = 0.0",
    )
    .unwrap();
    e.set_global("flag", true).unwrap();
    e.set_global("n32", -7_i32).unwrap();
    e.set_global("n", 1_i64 << 40).unwrap();
    e.set_global("x32", 0.25_f32).unwrap();
    e.set_global("x", -2.5_f64).unwrap();
    e.run("p.acc", "print(flag, n32, n, x32, x)").unwrap();
    assert_eq!(out.take(), b"true -7 1099511627776 0.25 -2.5\n");
    e.run(
        "q.acc",
        "flag = !flag\nn32 -= 1\nn += 1\nx32 *= 2.0\nx = x * x",
    )
    .unwrap();
    assert!(!e.global::<bool>("flag").unwrap());
    assert_eq!(e.global::<i32>("n32").unwrap(), -8);
    assert_eq!(e.global::<i64>("n").unwrap(), (1_i64 << 40) + 1);
    assert_eq!(e.global::<f32>("x32").unwrap(), 0.5);
    assert_eq!(e.global::<f64>("x").unwrap(), 6.25);

    // Wrong types and unknown names are errors that say what is declared.
    let err = e.set_global("n", 1.5).unwrap_err();
    assert!(matches!(err, Error::WrongType { .. }), "{err}");
    assert_eq!(
        err.to_string(),
        "error: global `n` is `i64` in the script, but `f64` was given"
    );
    assert!(e.global::<f64>("n32").is_err());
    let err = e.global::<bool>("flga").unwrap_err();
    assert_eq!(
        err.to_string(),
        "error: no global `flga` is declared (did you mean `flag`?)"
    );
    let a = Array::<f64>::zeros(&[2]).unwrap();
    assert!(matches!(
        e.set_global("x", a).unwrap_err(),
        Error::WrongType { .. }
    ));
}

#[test]
fn array_globals_check_element_type_and_rank_and_are_shared() {
    let (mut e, _) = engine_on(DeviceKind::Host);
    e.run("a.acc", "let m = zeros(i32, 2, 2)").unwrap();
    let flat = Array::<i32>::zeros(&[4]).unwrap();
    let err = e.set_global("m", flat).unwrap_err();
    assert!(err.to_string().contains("`i32[,]`"), "{err}");
    assert!(err.to_string().contains("`i32[]`"), "{err}");
    assert!(e
        .set_global("m", Array::<i64>::zeros(&[2, 2]).unwrap())
        .is_err());
    // The script's own array, read by the host without a copy.
    let m: Array<i32> = e.global("m").unwrap();
    assert_eq!(m.shape(), [2, 2]);
    e.run("b.acc", "m[1, 0] = 5").unwrap();
    assert_eq!(m.to_vec(), [0, 0, 5, 0]);
    m.write(|s| s[3] = 9);
    e.run("c.acc", "m[0, 0] = m[1, 1] + 1").unwrap();
    assert_eq!(m.to_vec(), [10, 0, 5, 9]);
    // Bool arrays are bytes of 0 and 1 on both sides.
    e.run("d.acc", "let bits = fill(false, 3)\nbits[1] = true")
        .unwrap();
    let bits: Array<bool> = e.global("bits").unwrap();
    assert_eq!(bits.to_vec(), [false, true, false]);
}

#[test]
fn functions_are_called_with_typed_arguments_and_results() {
    for kind in HOST_DEVICES {
        let (mut e, _) = engine_on(kind);
        e.run(
            "lib.acc",
            "fn sq(x: f64) -> f64 { return x * x }
             fn mix(a: bool, b: i32, c: i64, d: f32, f: f64) -> f64 {
                 if a { return b + c + d + f } else { return 0.0 }
             }
             fn nothing() { }
             fn ramp(n: i64) -> f64[] {
                 let r = zeros(n)
                 acc parallel loop copyout(r)
                 for i in 0..n { r[i] = i * 0.5 }
                 return r
             }
             fn dot(a: f64[], b: f64[]) -> f64 {
                 let s = 0.0
                 acc parallel loop copyin(a, b) reduction(+: s)
                 for i in 0..len(a) { s += a[i] * b[i] }
                 return s
             }",
        )
        .unwrap();
        let sq = e.function::<(f64,), f64>("sq").unwrap();
        for k in 0..100 {
            let x = f64::from(k) * 0.5;
            assert_eq!(sq.call(&mut e, (x,)).unwrap(), x * x);
        }
        let m: f64 = e
            .call("mix", (true, 2_i32, 3_i64, 0.5_f32, 0.25_f64))
            .unwrap();
        assert_eq!(m, 5.75);
        let () = e.call("nothing", ()).unwrap();
        let r: Array<f64> = e.call("ramp", (5_i64,)).unwrap();
        assert_eq!(r.to_vec(), [0.0, 0.5, 1.0, 1.5, 2.0], "{kind:?}");
        let x = Array::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0], &[5]).unwrap();
        let d: f64 = e.call("dot", (x.clone(), r)).unwrap();
        assert_eq!(
            d,
            1.0 * 0.0 + 2.0 * 0.5 + 3.0 * 1.0 + 4.0 * 1.5 + 5.0 * 2.0,
            "{kind:?}"
        );
    }
}

#[test]
fn a_func_is_checked_once_and_keeps_calling_its_code() {
    let (mut e, _) = engine_on(DeviceKind::Host);
    e.run("a.acc", "fn f(x: i64) -> i64 { return x + 1 }")
        .unwrap();
    assert!(matches!(
        e.function::<(f64,), i64>("f").unwrap_err(),
        Error::WrongType { .. }
    ));
    assert!(matches!(
        e.function::<(i64,), ()>("f").unwrap_err(),
        Error::WrongType { .. }
    ));
    let err = e.function::<(i64,), i64>("g").unwrap_err();
    assert_eq!(err.to_string(), "error: no function `g` is declared");
    let f = e.function::<(i64,), i64>("f").unwrap();
    // Redefined: the name calls the new code, the `Func` the code it was made with.
    e.run("b.acc", "fn f(x: i64) -> i64 { return x * 100 }")
        .unwrap();
    for _ in 0..3 {
        e.run("c.acc", "let unrelated = 1").unwrap();
    }
    assert_eq!(f.call(&mut e, (4,)).unwrap(), 5);
    assert_eq!(e.call::<(i64,), i64>("f", (4,)).unwrap(), 400);
    // A rank that does not fit is an error at the call.
    e.run("d.acc", "fn first(a: f64[]) -> f64 { return a[0] }")
        .unwrap();
    let first = e.function::<(Array<f64>,), f64>("first").unwrap();
    let square = Array::<f64>::zeros(&[2, 2]).unwrap();
    let err = first.call(&mut e, (square,)).unwrap_err();
    assert!(err.to_string().contains("argument 1 of `first`"), "{err}");
    // Another engine's `Func` and `Script` are refused.
    let (mut other, _) = engine_on(DeviceKind::Host);
    assert!(matches!(
        f.call(&mut other, (1,)).unwrap_err(),
        Error::Usage(_)
    ));
    let s = e.compile("s.acc", "let z = 1").unwrap();
    assert!(matches!(other.run_script(&s).unwrap_err(), Error::Usage(_)));
}

#[test]
fn run_time_errors_in_calls_are_located_and_the_engine_goes_on() {
    let (mut e, _) = engine_on(DeviceKind::Host);
    e.run(
        "lib.acc",
        "fn at(a: f64[], i: i64) -> f64 {\n  return a[i]\n}\nfn make(n: i64) -> f64[] { return zeros(n) }",
    )
    .unwrap();
    let a = Array::from_vec(vec![1.0, 2.0], &[2]).unwrap();
    let err = e.call::<_, f64>("at", (a.clone(), 2_i64)).unwrap_err();
    assert!(matches!(err, Error::Runtime { .. }));
    assert!(err.to_string().contains("lib.acc:2:"), "{err}");
    // An array result of a failed call is not leaked, nor handed out.
    let err = e.call::<_, Array<f64>>("make", (-1_i64,)).unwrap_err();
    assert!(err.to_string().contains("negative"), "{err}");
    assert_eq!(e.call::<_, f64>("at", (a, 1_i64)).unwrap(), 2.0);
}

#[test]
fn scripts_run_again_without_compiling_and_dropped_ones_free_their_code() {
    let (mut e, out) = engine_on(DeviceKind::Host);
    e.run("decl.acc", "let count: i64 = 0").unwrap();
    let base = e.code_units();
    let step = e.compile("step.acc", "count += 1\nprint(count)").unwrap();
    for _ in 0..5 {
        e.run_script(&step).unwrap();
    }
    assert_eq!(out.take(), b"1\n2\n3\n4\n5\n");
    // A script's top-level `let` declares its global anew each run.
    let fresh = e
        .compile("fresh.acc", "let xs = zeros(3)\nxs[0] += 1.0")
        .unwrap();
    for _ in 0..3 {
        e.run_script(&fresh).unwrap();
    }
    assert_eq!(
        e.global::<Array<f64>>("xs").unwrap().to_vec(),
        [1.0, 0.0, 0.0]
    );
    // 200 compiled and dropped scripts leave no code behind.
    drop((step, fresh));
    for k in 0..200 {
        let s = e.compile("tmp.acc", &format!("count += {k}")).unwrap();
        e.run_script(&s).unwrap();
    }
    e.run("end.acc", "count += 0").unwrap();
    assert!(e.code_units() <= base + 1, "{} units", e.code_units());
    assert_eq!(e.global::<i64>("count").unwrap(), 5 + (0..200).sum::<i64>());
}

#[test]
fn a_run_never_races_the_hosts_access() {
    let (mut e, _) = engine_on(DeviceKind::Host);
    e.run("a.acc", "let g = zeros(4)").unwrap();
    let g: Array<f64> = e.global("g").unwrap();
    // Inside `write`, a run that reaches the array is refused, not raced.
    let refused = g.write(|s| {
        s[0] = 1.0;
        e.run("b.acc", "g[1] = 2.0")
    });
    assert!(matches!(refused, Err(Error::Usage(_))));
    e.run("b.acc", "g[1] = 2.0").unwrap();
    assert_eq!(g.to_vec(), [1.0, 2.0, 0.0, 0.0]);
    // A reader on another thread waits for the run's lock; the values it sees are whole.
    let reader = {
        let g = g.clone();
        std::thread::spawn(move || {
            (0..2000)
                .map(|_| g.read(|s| s.iter().sum::<f64>()))
                .collect::<Vec<_>>()
        })
    };
    let bump = e
        .compile(
            "bump.acc",
            "for i in 0..4 { g[i] += 1.0 }\nfor i in 0..4 { g[i] -= 1.0 }",
        )
        .unwrap();
    for _ in 0..200 {
        // The reader may hold the lock for a moment: retry until the run gets it.
        while let Err(Error::Usage(_)) = e.run_script(&bump) {}
    }
    for total in reader.join().unwrap() {
        assert_eq!(total, 3.0, "a read saw a run half done");
    }
}

#[test]
fn engines_run_on_other_threads() {
    let handles: Vec<_> = (0..3_i64)
        .map(|k| {
            std::thread::spawn(move || {
                let mut e = Engine::with_output(Box::new(std::io::sink())).unwrap();
                e.run(
                    "t.acc",
                    "fn tri(n: i64) -> i64 { let s = 0\nfor i in 0..=n { s += i }\nreturn s }",
                )
                .unwrap();
                e.call::<(i64,), i64>("tri", (100 * k,)).unwrap()
            })
        })
        .collect();
    let got: Vec<i64> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert_eq!(got, [0, 5050, 20100]);
}

#[test]
fn array_shapes_are_checked() {
    assert!(Array::from_vec(vec![1.0; 5], &[2, 3]).is_err());
    assert!(Array::from_vec(vec![1.0; 5], &[]).is_err());
    assert!(Array::from_vec(vec![1_i64; 1], &[1, 1, 1, 1, 1, 1, 1]).is_err());
    let empty = Array::<f32>::from_vec(Vec::new(), &[0, 3]).unwrap();
    assert_eq!((empty.len(), empty.shape()), (0, vec![0, 3]));
    assert_eq!(format!("{empty:?}"), "Array<f32>[0, 3]");
}

#[test]
fn an_interrupt_stops_host_code_and_compute_regions_where_they_are() {
    use std::time::Duration;
    let cases = [
        (DeviceKind::Host, "let n = 0\nwhile n >= 0 {\n  n += 1\n}\n", "w.acc:2:1"),
        // A recursion without loops stops at a call (fib(60) takes hours).
        (
            DeviceKind::Host,
            "fn fib(k: i64) -> i64 {\n  if k < 2 { return k }\n  return fib(k - 1) + fib(k - 2)\n}\nprint(fib(60))\n",
            "w.acc:1:4",
        ),
        (
            DeviceKind::Multicore,
            "let hits = zeros(i64, 8)\nacc parallel loop copy(hits)\nfor g in 0..8 {\n  let k = 0\n  while k >= 0 { k += 1 }\n  hits[g] = k\n}\n",
            "w.acc:5:3",
        ),
        (
            DeviceKind::Emulated,
            "let hits = zeros(i64, 8)\nacc parallel loop copy(hits) async(1)\nfor g in 0..8 {\n  for k in 0..1 << 62 { hits[g] = k }\n}\nacc wait\n",
            "w.acc:4:3",
        ),
    ];
    for (kind, script, at) in cases {
        let (mut e, out) = engine_on(kind);
        let stop = e.interrupt_handle();
        let watchdog = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            stop.interrupt();
        });
        let err = e.run("w.acc", script).unwrap_err();
        watchdog.join().unwrap();
        assert!(matches!(err, Error::Interrupted { .. }), "{kind:?}: {err}");
        assert!(err.to_string().contains(at), "{kind:?}: {err}");
        assert!(err.to_string().contains("the run was interrupted"), "{err}");
        // The engine goes on, and the interrupt was for that run only.
        e.run("after.acc", "print(1 + 1)").unwrap();
        assert_eq!(out.take(), b"2\n", "{kind:?}");
    }
}

#[test]
fn limits_bound_time_and_call_depth_and_the_engine_goes_on() {
    let (mut e, out) = engine_on(DeviceKind::Multicore);
    e.run(
        "lib.acc",
        "fn depth(n: i64) -> i64 {\n  if n == 0 { return 0 }\n  return 1 + depth(n - 1)\n}\nfn spin() { while true { } }",
    )
    .unwrap();
    e.set_limits(Limits {
        max_call_depth: Some(50),
        max_run_time: Some(Duration::from_millis(200)),
    });
    // Depth 50 is allowed (depth(49) calls itself down to depth(0): 50 calls); past it a
    // call stops the run, at the latest 3 calls further (inlined calls are not checked).
    assert_eq!(e.call::<(i64,), i64>("depth", (49,)).unwrap(), 49);
    let err = e.call::<(i64,), i64>("depth", (53,)).unwrap_err();
    assert!(matches!(err, Error::Limit { .. }), "{err}");
    assert!(
        err.to_string().contains("deeper than the limit of 50"),
        "{err}"
    );
    // Time: a call and a run, on the host and in a compute region's gangs.
    let t = Instant::now();
    let err = e.call::<(), ()>("spin", ()).unwrap_err();
    assert!(matches!(err, Error::Limit { .. }), "{err}");
    assert!(err.to_string().contains("time limit"), "{err}");
    let err = e
        .run(
            "r.acc",
            "let s = zeros(4)\nacc parallel loop copy(s)\nfor i in 0..4 {\n  while s[i] >= 0.0 { s[i] += 1.0 }\n}\n",
        )
        .unwrap_err();
    assert!(err.to_string().contains("r.acc:4:3"), "{err}");
    assert!(t.elapsed() < Duration::from_secs(20));
    // Within the limits everything runs as before.
    e.run("ok.acc", "print(depth(10))").unwrap();
    assert_eq!(out.take(), b"10\n");
    e.set_limits(Limits::default());
    assert_eq!(e.call::<(i64,), i64>("depth", (5000,)).unwrap(), 5000);
}

/// On a GPU (run on the device: `cargo test --test embed -- --ignored`): an array from a
/// `Vec` goes to the GPU and back through data clauses, presence follows its storage across
/// calls, and an interrupt stops host code between kernels.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn shared_arrays_and_interrupts_on_a_gpu() {
    assert!(acc::gpu_count() > 0, "no GPU");
    shared_arrays_and_interrupts_on(DeviceKind::Nvidia);
}

/// The same on the emulated device, whose memory is separate as a GPU's.
#[test]
fn shared_arrays_and_interrupts_on_an_emulated_device() {
    shared_arrays_and_interrupts_on(DeviceKind::Emulated);
}

fn shared_arrays_and_interrupts_on(kind: DeviceKind) {
    let (mut e, out) = engine_on(kind);
    e.run(
        "gpu.acc",
        "let grid = zeros(4, 8)
         fn scale(a: f64[,], k: f64) {
             acc parallel loop collapse(2) present(a)
             for i in 0..4 { for j in 0..8 { a[i, j] = a[i, j] * k + 1.0 } }
         }
         fn enter(a: f64[,]) { acc_copyin(a) }
         fn leave(a: f64[,]) { acc_copyout(a) }",
    )
    .unwrap();
    let v: Vec<f64> = (0..32).map(f64::from).collect();
    let at = v.as_ptr();
    let a = Array::from_vec(v, &[4, 8]).unwrap();
    e.call::<_, ()>("enter", (a.clone(),)).unwrap();
    for _ in 0..3 {
        e.call::<_, ()>("scale", (a.clone(), 2.0)).unwrap();
    }
    // Present on the GPU: the host copy is as it was until the copy out.
    assert_eq!(a.to_vec()[1], 1.0);
    e.call::<_, ()>("leave", (a.clone(),)).unwrap();
    let want: Vec<f64> = (0..32)
        .map(|x| ((f64::from(x) * 2.0 + 1.0) * 2.0 + 1.0) * 2.0 + 1.0)
        .collect();
    assert_eq!(a.to_vec(), want);
    assert_eq!(a.read(|s| s.as_ptr()), at, "the Vec's own storage");
    // An interrupt stops a host loop that launches kernels; the GPU stays usable.
    let stop = e.interrupt_handle();
    let t = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(300));
        stop.interrupt();
    });
    let err = e
        .run(
            "loop.acc",
            "acc_copyin(grid)\nwhile true {\n  scale(grid, 1.0)\n}\n",
        )
        .unwrap_err();
    t.join().unwrap();
    assert!(matches!(err, Error::Interrupted { .. }), "{err}");
    e.run("after.acc", "acc_copyout(grid)\nprint(grid[3, 7] > 1.0)")
        .unwrap();
    assert_eq!(out.take(), b"true\n");
}

/// On a GPU (run on the device: `cargo test --test embed -- --ignored`): a kernel whose
/// `while` loop never ends stops at the loop when the run is interrupted or out of time, a
/// long counted kernel's wait is abandoned, and the GPU goes on working after both.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn running_kernels_stop_on_a_gpu() {
    assert!(acc::gpu_count() > 0, "no GPU");
    running_kernels_stop_on(DeviceKind::Nvidia);
}

/// The same on the emulated device, whose compute regions run on host threads.
#[test]
fn running_kernels_stop_on_an_emulated_device() {
    running_kernels_stop_on(DeviceKind::Emulated);
}

fn running_kernels_stop_on(kind: DeviceKind) {
    let (mut e, out) = engine_on(kind);
    let interrupt_after = |e: &Engine, ms: u64| {
        let stop = e.interrupt_handle();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(ms));
            stop.interrupt();
        })
    };
    let endless = "let s = zeros(64)\nacc parallel loop copy(s)\nfor i in 0..64 {\n  \
                   while s[i] >= 0.0 { s[i] += 1.0 }\n}\n";
    // An interrupt: the kernel stops in its `while` loop, which the error names.
    let t = Instant::now();
    let stopper = interrupt_after(&e, 300);
    let err = e.run("w.acc", endless).unwrap_err();
    stopper.join().unwrap();
    assert!(matches!(err, Error::Interrupted { .. }), "{err}");
    assert!(err.to_string().contains("w.acc:4:3"), "{err}");
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    // The time limit, the same way.
    e.set_limits(Limits {
        max_run_time: Some(Duration::from_millis(300)),
        ..Limits::default()
    });
    let err = e.run("t.acc", endless).unwrap_err();
    assert!(matches!(err, Error::Limit { .. }), "{err}");
    assert!(err.to_string().contains("t.acc:4:3"), "{err}");
    e.set_limits(Limits::default());
    // The device works after both.
    e.run(
        "after.acc",
        "let a = zeros(1000)\nacc parallel loop copy(a)\nfor i in 0..1000 { a[i] = i * 2.0 }\nprint(sum(a))",
    )
    .unwrap();
    assert_eq!(out.take(), b"999000.0\n");
    // A counted kernel of seconds (each trip waits for the last one's store on a GPU): the
    // wait for it is given up soon after the interrupt, and nothing of it is copied back.
    e.run("x.acc", "let x = zeros(1)").unwrap();
    let trips = if kind == DeviceKind::Nvidia {
        200_000_000
    } else {
        2_000_000_000
    };
    let long =
        format!("acc serial loop copy(x)\nfor i in 0..{trips} {{ x[0] = x[0] * 0.5 + 1.0 }}\n");
    let long = long.as_str();
    let t = Instant::now();
    let stopper = interrupt_after(&e, 300);
    let err = e.run("long.acc", long).unwrap_err();
    stopper.join().unwrap();
    assert!(matches!(err, Error::Interrupted { .. }), "{err}");
    assert!(
        t.elapsed() < Duration::from_millis(2000),
        "{:?}",
        t.elapsed()
    );
    if kind == DeviceKind::Nvidia {
        assert!(err.to_string().contains("long.acc:1:1"), "{err}");
        e.run("x0.acc", "print(x[0])").unwrap();
        assert_eq!(out.take(), b"0.0\n", "no copy out of an abandoned kernel");
    }
    // Later work queues behind the abandoned kernel and is right.
    e.run(
        "again.acc",
        "let b = zeros(10)\nacc parallel loop copy(b)\nfor i in 0..10 { b[i] = i + 1.0 }\nprint(sum(b))",
    )
    .unwrap();
    assert_eq!(out.take(), b"55.0\n");
}

#[test]
fn registered_rust_functions_are_called_from_host_code_with_checked_signatures() {
    for kind in HOST_DEVICES {
        let (mut e, out) = engine_on(kind);
        let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = calls.clone();
        e.register_fn("gain", move |v: f64| {
            counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            v * 2.0
        })
        .unwrap();
        e.register_fn("mix", |a: bool, b: i32, c: i64, d: f32| -> i64 {
            if a {
                i64::from(b) + c + d as i64
            } else {
                -1
            }
        })
        .unwrap();
        e.register_fn("note", |_: i64| ()).unwrap();
        e.register_fn("checked", |v: i64| -> Result<i64, String> {
            if v < 0 {
                Err(format!("{v} is below zero"))
            } else {
                Ok(v + 1)
            }
        })
        .unwrap();
        // Host code, a function and a loop call them; integer literals take the types.
        e.run(
            "a.acc",
            "fn twice_gain(x: f64) -> f64 { return gain(gain(x)) }
             let s = 0.0
             for i in 0..10 { s += gain(i * 1.0) }
             note(3)
             print(s, twice_gain(1.5), mix(true, 2, 3, 4.5), checked(41))",
        )
        .unwrap();
        assert_eq!(out.take(), b"90.0 6.0 9 42\n", "{kind:?}");
        assert_eq!(calls.load(std::sync::atomic::Ordering::Relaxed), 12);
        // An error of the function is a run-time error at the call; the engine goes on.
        let err = e
            .run("b.acc", "let x = 1\nlet y = checked(x - 5)\n")
            .unwrap_err();
        assert!(matches!(err, Error::Runtime { .. }), "{err}");
        assert!(
            err.to_string()
                .contains("`checked` failed: -4 is below zero"),
            "{err}"
        );
        assert!(err.to_string().contains("b.acc:2:9"), "{err}");
        // Wrong arguments are compile errors that show the signature.
        let err = e.run("c.acc", "print(gain(1.0, 2.0))").unwrap_err();
        assert!(
            err.to_string()
                .contains("`gain` takes 1 argument but 2 were given"),
            "{err}"
        );
        assert!(err.to_string().contains("`gain(f64) -> f64`"), "{err}");
        let err = e.run("d.acc", "print(gain(true))").unwrap_err();
        assert!(err.to_string().contains("must be f64, found bool"), "{err}");
        // Device code cannot call them: a compile error naming the function.
        let err = e
            .run(
                "e.acc",
                "let a = zeros(4)\nacc parallel loop copy(a)\nfor i in 0..4 { a[i] = gain(1.0) }\n",
            )
            .unwrap_err();
        assert!(matches!(err, Error::Compile { .. }), "{err}");
        assert!(
            err.to_string()
                .contains("`gain` cannot be called in device code"),
            "{err}"
        );
        // Names are one namespace: no script function may take a registered name, and no
        // registered function a script's or a built-in's.
        let err = e
            .run("f.acc", "fn gain(x: f64) -> f64 { return x }")
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("function of the program that embeds acc"),
            "{err}"
        );
        e.run("g.acc", "fn mine() -> i64 { return 1 }").unwrap();
        for taken in ["mine", "gain", "sqrt", "while", "1x"] {
            assert!(
                matches!(e.register_fn(taken, || 1.0), Err(Error::Usage(_))),
                "{taken}"
            );
        }
    }
}

/// The dependence test parallelizes a `kernels` loop of one compile on the proof that two
/// global arrays are different storage (LANGUAGE.md 7.6). A later compile (`B = A`, as the
/// next REPL input would) or the embedding program (`set_global`) may make them one array;
/// the loop then has a carried dependence (`A[i] = A[i - 1] + 1`), and running it in parallel
/// gives a wrong answer. Every device stops it at launch instead, naming the loop and both
/// arrays. The sequential answer is worked out by hand: `A[i] = i`.
#[test]
fn a_loop_parallelized_on_distinct_arrays_stops_when_they_become_one() {
    const N: usize = 200_000;
    // `slow` (of no effect: `slow(x) = x`) gives the iterations enough work for the threads
    // of the threaded devices to overlap.
    let lib = "let n = 200000\nlet A = zeros(n)\nlet B = zeros(n)\nfn shift() {\n  acc kernels {\n    for i in 1..n { B[i] = slow(A[i - 1]) + 1.0 }\n  }\n}\nfn slow(x: f64) -> f64 {\n  let y = x\n  for k in 0..20 { y = sqrt(y * y) }\n  return y\n}\n";
    // The threaded devices first: there the race shows in the answer, not only in the error.
    for kind in [
        DeviceKind::Multicore,
        DeviceKind::Emulated,
        DeviceKind::Host,
    ] {
        let (mut e, _) = engine_on(kind);
        e.set_devices(acc::DeviceOptions::new().device(kind, 0).threads(8));
        e.run("lib.acc", lib).unwrap();
        // Distinct arrays: the loop runs, B[i] = A[i - 1] + 1 = 1.
        e.call::<_, ()>("shift", ()).unwrap();
        let b: Array<f64> = e.global("B").unwrap();
        assert!(b.to_vec()[1..].iter().all(|x| *x == 1.0), "{kind:?}");
        // A later compile makes them one array.
        e.run("alias.acc", "B = A").unwrap();
        let outcome = e.call::<_, ()>("shift", ());
        let a: Array<f64> = e.global("A").unwrap();
        let got = a.to_vec();
        let wrong = (0..N).filter(|&i| got[i] != i as f64).count();
        let err = match outcome {
            Ok(()) => panic!(
                "{kind:?}: the parallel loop ran on one array: {wrong} of {N} elements differ \
                 from the sequential answer A[i] = i (A[{N} - 1] = {})",
                got[N - 1]
            ),
            Err(err) => err.to_string(),
        };
        assert!(
            err.contains("`B` and `A` are the same array, but this loop was parallelized"),
            "{kind:?}: {err}"
        );
        assert!(
            err.contains("lib.acc:6:5"),
            "{kind:?}: the loop's place: {err}"
        );
        assert!(
            err.contains("give `B` its own storage with `B = copy(A)`"),
            "{kind:?}: {err}"
        );
        // Nothing ran: A is as it was.
        assert!(got.iter().all(|x| *x == 0.0), "{kind:?}");
        // Own storage again: the loop runs.
        e.run("fix.acc", "B = copy(A)").unwrap();
        e.call::<_, ()>("shift", ()).unwrap();
        // The embedding program can bind them too.
        let shared = Array::from_vec(vec![0.0; N], &[N]).unwrap();
        e.set_global("A", shared.clone()).unwrap();
        e.set_global("B", shared.clone()).unwrap();
        let err = e.call::<_, ()>("shift", ()).unwrap_err().to_string();
        assert!(err.contains("are the same array"), "{kind:?}: {err}");
    }
}
