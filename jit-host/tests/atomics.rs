//! `acc atomic` in region code is atomic: the region function runs its gangs on several
//! threads at once (as a multicore device will) and every update is counted exactly.

mod common;

use acc_jit_host::{Jit, RegionFn};
use acc_lang::analysis::RegionId;
use acc_lang::builtins::Builtin;
use acc_lang::hir::VarId;
use acc_lang::ir::{
    Atomic, AtomicKind, BinOp::*, Construct, Expr, ForLoop, LocalId, LoopSchedule, Pass, Region,
    RegionParam, Stmt, Ty,
};
use acc_runtime::abi::{ArrayHeader, Ctx, STATUS_ERROR};
use common::*;

const N: i64 = 1_000_000;
const BINS: i64 = 16;
const THREADS: usize = 4;
const GANGS: i64 = 8;

/// The value the histogram counts for iteration `i`.
fn value(i: i64) -> i32 {
    ((i * 7919) % 1000) as i32
}

/// The factor iteration `i` multiplies the f32 product by: 2^60 * 2^-40, exact in any order.
fn factor(i: i64) -> f32 {
    match i {
        0..60 => 2.0,
        60..100 => 0.5,
        _ => 1.0,
    }
}

/// The region's parameters, in order: (name, type).
const PARAMS: [(&str, Ty); 12] = [
    ("vals", Ty::Array { elem: I32, rank: 1 }),
    ("hist", Ty::Array { elem: I32, rank: 1 }),
    ("fsum", Ty::Array { elem: F64, rank: 1 }),
    ("mx", Ty::Array { elem: I64, rank: 1 }),
    ("prod", Ty::Array { elem: F32, rank: 1 }),
    ("counter", Ty::Array { elem: I64, rank: 1 }),
    ("tickets", Ty::Array { elem: I64, rank: 1 }),
    ("factors", Ty::Array { elem: F32, rank: 1 }),
    ("iprod", Ty::Array { elem: I64, rank: 1 }),
    ("up", Ty::Array { elem: I64, rank: 1 }),
    ("seen", Ty::Array { elem: I64, rank: 1 }),
    ("n", Ty::Scalar(I64)),
];

fn a(p: u32) -> Expr {
    var(p, PARAMS[p as usize].1)
}

fn elem(p: u32, idx: Expr) -> Expr {
    load(a(p), vec![idx], Some(p))
}

/// An atomic update, or a capture of a block, in a region without `copy` scalars.
fn atomic(s: Stmt) -> Stmt {
    atomic_with_cells(&[], s)
}

/// An atomic update, or a capture of a block, in a region whose `copy` scalars are `cells`.
fn atomic_with_cells(cells: &[u32], s: Stmt) -> Stmt {
    let kind = match s {
        Stmt::Block(_) => AtomicKind::Capture,
        _ => AtomicKind::Update,
    };
    Stmt::Atomic(Atomic::new(kind, s, |l| cells.contains(&l.0)))
}

/// `acc parallel loop gang` over `i in 0..n`:
///   b = vals[i] % 16
///   atomic hist[b] += 1                       (i32 +, one atomic add)
///   atomic fsum[b] += vals[i] * 0.5           (f64 +, compare-and-swap)
///   atomic mx[0] = max(mx[0], vals[i])        (i64 max)
///   atomic prod[0] *= factors[i]              (f32 *, compare-and-swap)
///   atomic capture { mine = counter[0]; counter[0] += 1 };  tickets[mine] = i
///   atomic iprod[0] *= 1 + (i < 40)           (i64 *, compare-and-swap)
///   atomic capture { up[0] += 2; got = up[0] };  seen[got / 2 - 1] += 1
fn region() -> Region {
    const I: u32 = 12;
    const B: u32 = 13;
    const MINE: u32 = 14;
    const GOT: u32 = 15;
    let i = || var(I, s(I64));
    let b = || var(B, s(I32));
    let zero = || i64c(0);
    let body = vec![
        set(B, bin(Rem, elem(0, i()), i32c(BINS as i32))),
        atomic(store(
            a(1),
            vec![b()],
            bin(Add, elem(1, b()), i32c(1)),
            Some(1),
        )),
        atomic(store(
            a(2),
            vec![b()],
            bin(
                Add,
                elem(2, b()),
                bin(Mul, conv(elem(0, i()), F64), f64c(0.5)),
            ),
            Some(2),
        )),
        atomic(store(
            a(3),
            vec![zero()],
            builtin(
                Builtin::Max,
                vec![elem(3, zero()), conv(elem(0, i()), I64)],
                s(I64),
            ),
            Some(3),
        )),
        atomic(store(
            a(4),
            vec![zero()],
            bin(Mul, elem(4, zero()), elem(7, i())),
            Some(4),
        )),
        atomic(Stmt::Block(vec![
            set(MINE, elem(5, zero())),
            store(
                a(5),
                vec![zero()],
                bin(Add, elem(5, zero()), i64c(1)),
                Some(5),
            ),
        ])),
        store(a(6), vec![var(MINE, s(I64))], i(), Some(6)),
        atomic(store(
            a(8),
            vec![zero()],
            bin(
                Mul,
                elem(8, zero()),
                bin(Add, i64c(1), conv(bin(Lt, i(), i64c(40)), I64)),
            ),
            Some(8),
        )),
        atomic(Stmt::Block(vec![
            store(
                a(9),
                vec![zero()],
                bin(Add, elem(9, zero()), i64c(2)),
                Some(9),
            ),
            set(GOT, elem(9, zero())),
        ])),
        store(
            a(10),
            vec![bin(Sub, bin(Div, var(GOT, s(I64)), i64c(2)), i64c(1))],
            bin(
                Add,
                elem(10, bin(Sub, bin(Div, var(GOT, s(I64)), i64c(2)), i64c(1))),
                i64c(1),
            ),
            Some(10),
        ),
    ];
    let mut locals: Vec<(&str, Ty)> = PARAMS.to_vec();
    locals.extend([
        ("i", s(I64)),
        ("b", s(I32)),
        ("mine", s(I64)),
        ("got", s(I64)),
    ]);
    Region {
        id: RegionId(0),
        construct: Construct::ParallelLoop,
        span: Default::default(),
        params: PARAMS
            .iter()
            .enumerate()
            .map(|(k, &(name, ty))| RegionParam {
                var: VarId(k as u32),
                name: name.into(),
                ty,
                pass: if ty.is_array() {
                    Pass::Array
                } else {
                    Pass::Value
                },
                written: ty.is_array(),
            })
            .collect(),
        locals: common::locals(&locals),
        body: vec![Stmt::For(ForLoop {
            id: acc_lang::ir::LoopId(0),
            var: LocalId(I),
            start: i64c(0),
            end: var(11, s(I64)),
            step: i64c(1),
            step_site: None,
            inclusive: false,
            body,
            schedule: LoopSchedule {
                gang: true,
                collapse: 1,
                ..Default::default()
            },
            site: acc_lang::ir::SiteId(CALL_SITE),
        })],
        reductions: vec![],
        loops: vec![],
        distinct: vec![],
        split: None,
    }
}

fn compile(r: Region) -> (Jit, RegionFn) {
    let mut jit = Jit::new(&symbols()).unwrap();
    let mut m = module(vec![], main(&[], vec![]));
    m.regions = vec![r];
    let compiled = jit.compile(&m, &Default::default()).unwrap();
    let f = compiled.regions[0].1;
    (jit, f)
}

/// A context of this thread's own (the region reports errors in it).
fn context(globals: &mut Vec<u64>) -> Ctx {
    Ctx {
        globals: globals.as_mut_ptr(),
        status: 0,
        exit_code: 0,
        host: std::ptr::null_mut(),
        stack_limit: 0,
        interrupt: &acc_runtime::abi::NO_INTERRUPT,
        max_depth: u64::MAX,
        devices: std::ptr::null_mut(),
    }
}

/// Run `f`'s gangs `0..GANGS` on `THREADS` threads at once, each with its own context and
/// argument slots (copies of `args`).
fn run_gangs(f: RegionFn, args: &[u64]) {
    std::thread::scope(|scope| {
        for t in 0..THREADS {
            let mut slots = args.to_vec();
            scope.spawn(move || {
                let mut globals = vec![0u64; 4];
                let mut ctx = context(&mut globals);
                for gang in (t as i64..GANGS).step_by(THREADS) {
                    // SAFETY: the slots hold the region's parameters; the arrays outlive the
                    // scope.
                    unsafe { f(&mut ctx, slots.as_mut_ptr(), gang, GANGS) };
                    assert_eq!(ctx.status, 0);
                }
            });
        }
    });
}

unsafe fn slice<'a, T>(a: *mut ArrayHeader) -> &'a mut [T] {
    std::slice::from_raw_parts_mut((*a).data as *mut T, (*a).len as usize)
}

#[test]
fn concurrent_gangs_update_exactly() {
    let (_jit, f) = compile(region());
    unsafe {
        let arrays: Vec<*mut ArrayHeader> = [
            (1, N),    // vals
            (1, BINS), // hist
            (4, BINS), // fsum
            (2, 1),    // mx
            (3, 1),    // prod
            (2, 1),    // counter
            (2, N),    // tickets
            (3, N),    // factors
            (2, 1),    // iprod
            (2, 1),    // up
            (2, N),    // seen
        ]
        .iter()
        .map(|&(e, len)| new_array(e, &[len]))
        .collect();
        for i in 0..N {
            slice::<i32>(arrays[0])[i as usize] = value(i);
            slice::<f32>(arrays[7])[i as usize] = factor(i);
        }
        slice::<i64>(arrays[3])[0] = -1;
        slice::<f32>(arrays[4])[0] = 1.0;
        slice::<i64>(arrays[8])[0] = 1;
        let mut args: Vec<u64> = arrays.iter().map(|&a| a as u64).collect();
        args.push(N as u64);

        run_gangs(f, &args);

        let mut hist = vec![0i32; BINS as usize];
        let mut fsum = vec![0f64; BINS as usize];
        for i in 0..N {
            let b = (value(i) % BINS as i32) as usize;
            hist[b] += 1;
            fsum[b] += value(i) as f64 * 0.5;
        }
        assert_eq!(slice::<i32>(arrays[1]), &hist[..]);
        assert_eq!(slice::<f64>(arrays[2]), &fsum[..]);
        assert_eq!(slice::<i64>(arrays[3])[0], 999);
        assert_eq!(slice::<f32>(arrays[4])[0], 2f32.powi(20));
        // Every iteration drew a ticket of its own.
        assert_eq!(slice::<i64>(arrays[5])[0], N);
        let mut tickets = slice::<i64>(arrays[6]).to_vec();
        tickets.sort_unstable();
        assert!(tickets.iter().enumerate().all(|(k, &t)| t == k as i64));
        assert_eq!(slice::<i64>(arrays[8])[0], 1 << 40);
        // The new-value capture saw 2, 4, …, 2N, each once.
        assert_eq!(slice::<i64>(arrays[9])[0], 2 * N);
        assert!(slice::<i64>(arrays[10]).iter().all(|&c| c == 1));
    }
}

/// `acc parallel loop gang` over `i in 0..n`:
///   atomic read  r = x[0]
///   atomic write x[0] = i
///   atomic x[0] = 2 * x[0] / 2 - x[0] + (r - r) + i      (a compare-and-swap: x[0] becomes i)
///   atomic capture { old = w[0]; w[0] = i }                  (an exchange)
///   taken[old] += 1    (old is -1 only once: the initial value)
fn read_write_region() -> Region {
    let x = || var(0, Ty::Array { elem: I64, rank: 1 });
    let w = || var(1, Ty::Array { elem: I64, rank: 1 });
    let taken = || var(2, Ty::Array { elem: I64, rank: 1 });
    let i = || var(4, s(I64));
    let r = || var(5, s(I64));
    let old = || var(6, s(I64));
    let x0 = || load(x(), vec![i64c(0)], Some(1));
    let mixed = bin(
        Add,
        bin(
            Add,
            bin(Sub, bin(Div, bin(Mul, i64c(2), x0()), i64c(2)), x0()),
            bin(Sub, r(), r()),
        ),
        i(),
    );
    let arr_param = |name: &str, k: u32| RegionParam {
        var: VarId(k),
        name: name.into(),
        ty: Ty::Array { elem: I64, rank: 1 },
        pass: Pass::Array,
        written: true,
    };
    Region {
        id: RegionId(0),
        construct: Construct::ParallelLoop,
        span: Default::default(),
        params: vec![
            arr_param("x", 0),
            arr_param("w", 1),
            arr_param("taken", 2),
            RegionParam {
                var: VarId(3),
                name: "n".into(),
                ty: s(I64),
                pass: Pass::Value,
                written: false,
            },
        ],
        locals: common::locals(&[
            ("x", x().ty),
            ("w", w().ty),
            ("taken", taken().ty),
            ("n", s(I64)),
            ("i", s(I64)),
            ("r", s(I64)),
            ("old", s(I64)),
        ]),
        body: vec![Stmt::For(ForLoop {
            id: acc_lang::ir::LoopId(0),
            var: LocalId(4),
            start: i64c(0),
            end: var(3, s(I64)),
            step: i64c(1),
            step_site: None,
            inclusive: false,
            body: vec![
                atomic(set(5, x0())),
                atomic(store(x(), vec![i64c(0)], i(), Some(2))),
                atomic(store(x(), vec![i64c(0)], mixed, Some(2))),
                atomic(Stmt::Block(vec![
                    set(6, load(w(), vec![i64c(0)], Some(3))),
                    store(w(), vec![i64c(0)], i(), Some(3)),
                ])),
                store(
                    taken(),
                    vec![bin(Add, old(), i64c(1))],
                    bin(
                        Add,
                        load(taken(), vec![bin(Add, old(), i64c(1))], Some(4)),
                        i64c(1),
                    ),
                    Some(4),
                ),
            ],
            schedule: LoopSchedule {
                gang: true,
                collapse: 1,
                ..Default::default()
            },
            site: acc_lang::ir::SiteId(CALL_SITE),
        })],
        reductions: vec![],
        loops: vec![],
        distinct: vec![],
        split: None,
    }
}

#[test]
fn exchanges_hand_every_value_on_once() {
    let (_jit, f) = compile(read_write_region());
    let n = 200_000;
    unsafe {
        let x = new_array(2, &[1]);
        let w = new_array(2, &[1]);
        let taken = new_array(2, &[n + 1]);
        slice::<i64>(w)[0] = -1;
        run_gangs(f, &[x as u64, w as u64, taken as u64, n as u64]);
        // Each value the exchanges put in was taken out once, except the last one left in.
        let last = slice::<i64>(w)[0];
        let taken = slice::<i64>(taken);
        for v in -1..n {
            let expected = i64::from(v != last);
            assert_eq!(taken[(v + 1) as usize], expected, "value {v}");
        }
        let x0 = slice::<i64>(x)[0];
        assert!((0..n).contains(&x0), "{x0}");
    }
}

#[test]
fn an_atomic_element_out_of_bounds_is_an_error_at_its_site() {
    let (_jit, f) = compile(read_write_region());
    unsafe {
        let x = new_array(2, &[0]);
        let w = new_array(2, &[1]);
        let taken = new_array(2, &[4]);
        let mut args = [x as u64, w as u64, taken as u64, 3];
        let mut globals = vec![0u64; 4];
        let mut ctx = context(&mut globals);
        f(&mut ctx, args.as_mut_ptr(), 0, 1);
        assert_eq!(ctx.status, STATUS_ERROR);
        assert_eq!(last_error(), "bounds: site 1, dim 0, index 0, extent 0");
    }
}

/// `acc parallel loop copy(c)` over `i in 0..n` { `acc atomic` `c += twice(i)` }: `c` is one
/// cell all gangs share, and the call of the small function `twice`, inlined, has locals of
/// its own (its `x` has the number of the region's `c`).
#[test]
fn a_shared_scalar_sums_inlined_calls_across_threads() {
    let c = || var(0, s(I64));
    let twice = function(
        1,
        "twice",
        1,
        Some(s(I64)),
        &[("x", s(I64))],
        vec![ret(bin(Mul, var(0, s(I64)), i64c(2)))],
    );
    let body = vec![atomic_with_cells(
        &[0],
        set(0, bin(Add, c(), call(1, vec![var(2, s(I64))], s(I64)))),
    )];
    let r = Region {
        id: RegionId(0),
        construct: Construct::ParallelLoop,
        span: Default::default(),
        params: vec![
            RegionParam {
                var: VarId(0),
                name: "c".into(),
                ty: s(I64),
                pass: Pass::InOut,
                written: true,
            },
            RegionParam {
                var: VarId(1),
                name: "n".into(),
                ty: s(I64),
                pass: Pass::Value,
                written: false,
            },
        ],
        locals: common::locals(&[("c", s(I64)), ("n", s(I64)), ("i", s(I64))]),
        body: vec![Stmt::For(ForLoop {
            id: acc_lang::ir::LoopId(0),
            var: LocalId(2),
            start: i64c(0),
            end: var(1, s(I64)),
            step: i64c(1),
            step_site: None,
            inclusive: false,
            body,
            schedule: LoopSchedule {
                gang: true,
                collapse: 1,
                ..Default::default()
            },
            site: acc_lang::ir::SiteId(CALL_SITE),
        })],
        reductions: vec![],
        loops: vec![],
        distinct: vec![],
        split: None,
    };
    let mut jit = Jit::new(&symbols()).unwrap();
    let mut m = module(vec![twice], main(&[], vec![]));
    m.regions = vec![r];
    let f = jit.compile(&m, &Default::default()).unwrap().regions[0].1;
    let n = 100_000i64;
    let cell = Box::new(std::sync::atomic::AtomicI64::new(5));
    run_gangs(f, &[cell.as_ptr() as u64, n as u64]);
    assert_eq!(
        cell.load(std::sync::atomic::Ordering::SeqCst),
        5 + n * (n - 1)
    );
}
