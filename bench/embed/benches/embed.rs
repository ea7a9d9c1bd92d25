//! The embedding API beside Rhai and mlua, in one process (issue 15):
//!
//!     cargo bench -p acc-bench-embed
//!
//! - `call`: a scalar function `sq(x) = x * x` called from Rust: through an `acc::Func`
//!   (looked up once), through `Engine::call` (by name), Rhai's `call_fn` and mlua's
//!   `Function::call`.
//! - `run`: a compiled script `total += 1` run again: `Engine::run_script`, Rhai's
//!   `run_ast_with_scope` and an mlua chunk.
//! - `pass`: an `f64` array of 1 KiB, 1 MiB and 1 GiB handed to a script function that reads
//!   its first element: an `acc::Array` (shared, made from the `Vec` once), Rhai's `Array`
//!   and an mlua table (each made from the `Vec` per call, which is how a Rust `Vec` reaches
//!   those engines). Rhai and mlua are not run at 1 GiB (2 GiB and more of boxed values).

use std::time::Duration;

use acc::{Array, DeviceKind, DeviceOptions, Engine};
use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

fn engine() -> Engine {
    let mut e = Engine::with_output(Box::new(std::io::sink())).expect("engine");
    // One host thread, like the other two engines.
    e.set_devices(DeviceOptions::new().device(DeviceKind::Host, 0));
    e
}

fn call(c: &mut Criterion) {
    let mut g = c.benchmark_group("call");
    let mut e = engine();
    e.run("sq.acc", "fn sq(x: f64) -> f64 { return x * x }")
        .expect("compiles");
    let sq = e.function::<(f64,), f64>("sq").expect("sq");
    let mut x = 0.0;
    g.bench_function("acc Func::call", |b| {
        b.iter(|| {
            x += 1.0;
            sq.call(&mut e, (black_box(x),)).expect("runs")
        })
    });
    g.bench_function("acc Engine::call", |b| {
        b.iter(|| {
            x += 1.0;
            e.call::<(f64,), f64>("sq", (black_box(x),)).expect("runs")
        })
    });

    let rhai = rhai::Engine::new();
    let ast = rhai.compile("fn sq(x) { x * x }").expect("compiles");
    let mut scope = rhai::Scope::new();
    g.bench_function("rhai call_fn", |b| {
        b.iter(|| {
            x += 1.0;
            rhai.call_fn::<f64>(&mut scope, &ast, "sq", (black_box(x),))
                .expect("runs")
        })
    });

    let lua = mlua::Lua::new();
    lua.load("function sq(x) return x * x end")
        .exec()
        .expect("compiles");
    let f: mlua::Function = lua.globals().get("sq").expect("sq");
    g.bench_function("mlua Function::call", |b| {
        b.iter(|| {
            x += 1.0;
            f.call::<f64>(black_box(x)).expect("runs")
        })
    });
    g.finish();
}

fn run(c: &mut Criterion) {
    let mut g = c.benchmark_group("run");
    let mut e = engine();
    e.run("decl.acc", "let total: i64 = 0").expect("compiles");
    let script = e.compile("step.acc", "total += 1").expect("compiles");
    g.bench_function("acc run_script", |b| {
        b.iter(|| e.run_script(&script).expect("runs"))
    });

    let rhai = rhai::Engine::new();
    let ast = rhai.compile("total += 1;").expect("compiles");
    let mut scope = rhai::Scope::new();
    scope.push("total", 0_i64);
    g.bench_function("rhai run_ast_with_scope", |b| {
        b.iter(|| rhai.run_ast_with_scope(&mut scope, &ast).expect("runs"))
    });

    let lua = mlua::Lua::new();
    lua.globals().set("total", 0).expect("global");
    let chunk = lua
        .load("total = total + 1")
        .into_function()
        .expect("compiles");
    g.bench_function("mlua chunk call", |b| {
        b.iter(|| chunk.call::<()>(()).expect("runs"))
    });
    g.finish();
}

fn pass(c: &mut Criterion) {
    let mut g = c.benchmark_group("pass");
    let mut e = engine();
    e.run("first.acc", "fn first(a: f64[]) -> f64 { return a[0] }")
        .expect("compiles");
    let first = e.function::<(Array<f64>,), f64>("first").expect("first");

    let rhai = rhai::Engine::new();
    let ast = rhai.compile("fn first(a) { a[0] }").expect("compiles");
    let mut scope = rhai::Scope::new();

    let lua = mlua::Lua::new();
    lua.load("function first(a) return a[1] end")
        .exec()
        .expect("compiles");
    let lua_first: mlua::Function = lua.globals().get("first").expect("first");

    for (label, bytes) in [
        ("1 KiB", 1usize << 10),
        ("1 MiB", 1 << 20),
        ("1 GiB", 1 << 30),
    ] {
        let n = bytes / 8;
        let values: Vec<f64> = (0..n).map(|i| i as f64).collect();
        g.throughput(Throughput::Bytes(bytes as u64));
        let a = Array::from_vec(values.clone(), &[n]).expect("array");
        g.bench_with_input(BenchmarkId::new("acc Array", label), &a, |b, a| {
            b.iter(|| first.call(&mut e, (a.clone(),)).expect("runs"))
        });
        if bytes > 1 << 20 {
            continue;
        }
        g.bench_with_input(BenchmarkId::new("rhai Array", label), &values, |b, v| {
            b.iter(|| {
                let arr: rhai::Array = v.iter().map(|&x| rhai::Dynamic::from_float(x)).collect();
                rhai.call_fn::<f64>(&mut scope, &ast, "first", (arr,))
                    .expect("runs")
            })
        });
        g.bench_with_input(BenchmarkId::new("mlua table", label), &values, |b, v| {
            b.iter(|| {
                let t = lua.create_sequence_from(v.iter().copied()).expect("table");
                lua_first.call::<f64>(t).expect("runs")
            })
        });
    }
    g.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20)
}

criterion_group! {
    name = benches;
    config = config();
    targets = call, run, pass
}
criterion_main!(benches);
