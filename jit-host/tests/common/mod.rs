//! Test support: stub runtime functions that record into thread-locals, a tiny array
//! allocator with the real `ArrayHeader` layout, and helpers to build IR by hand.
#![allow(dead_code)]

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::cell::{Cell, RefCell};

use acc_abi::{LaunchSizes, ABSENT};
use acc_jit_host::{GlobalSlots, Jit};
use acc_lang::builtins::Builtin;
use acc_lang::hir::{Const, FnId};
use acc_lang::ir::*;
use acc_runtime::abi::{ArrayHeader, Ctx, MAX_RANK, STATUS_ERROR, STATUS_EXIT};
use acc_runtime::launch::{run_gangs_inline, ComputeKind, RegionDesc};

thread_local! {
    static OUT: RefCell<String> = const { RefCell::new(String::new()) };
    static ERR: RefCell<String> = const { RefCell::new(String::new()) };
    static LIVE: Cell<i64> = const { Cell::new(0) };
}

/// The error message this thread's stub runtime recorded last.
pub fn last_error() -> String {
    ERR.with(|e| e.borrow().clone())
}

fn out(s: &str) {
    OUT.with(|o| o.borrow_mut().push_str(s));
}

unsafe fn fail(ctx: *mut Ctx, msg: String) {
    ERR.with(|e| *e.borrow_mut() = msg);
    (*ctx).status = STATUS_ERROR;
}

// ---- output ------------------------------------------------------------------------------------

extern "C" fn print_bool(_: *mut Ctx, v: u8) {
    out(if v != 0 { "true" } else { "false" });
}
extern "C" fn print_i32(_: *mut Ctx, v: i32) {
    out(&v.to_string());
}
extern "C" fn print_i64(_: *mut Ctx, v: i64) {
    out(&v.to_string());
}
extern "C" fn print_f32(_: *mut Ctx, v: f32) {
    out(&format!("{v:?}"));
}
extern "C" fn print_f64(_: *mut Ctx, v: f64) {
    out(&format!("{v:?}"));
}
unsafe extern "C" fn print_str(_: *mut Ctx, p: *const u8, n: usize) {
    out(std::str::from_utf8(std::slice::from_raw_parts(p, n)).unwrap());
}
extern "C" fn print_space(_: *mut Ctx) {
    out(" ");
}
extern "C" fn print_newline(_: *mut Ctx) {
    out("\n");
}
unsafe extern "C" fn print_array(_: *mut Ctx, a: *mut ArrayHeader) {
    let a = &*a;
    let items: Vec<String> = (0..a.len as usize)
        .map(|i| match a.elem {
            0 => (*a.data.add(i) != 0).to_string(),
            1 => (*(a.data as *const i32).add(i)).to_string(),
            2 => (*(a.data as *const i64).add(i)).to_string(),
            3 => format!("{:?}", *(a.data as *const f32).add(i)),
            _ => format!("{:?}", *(a.data as *const f64).add(i)),
        })
        .collect();
    out(&format!("[{}]", items.join(", ")));
}
/// Records the format and the raw slots: `printf("x=%d %5.2f\n"; 3, 0x…)`.
unsafe extern "C" fn printf(_: *mut Ctx, f: *const u8, n: usize, args: *const u64, nargs: u32) {
    let fmt = std::str::from_utf8(std::slice::from_raw_parts(f, n)).unwrap();
    let args: Vec<String> = (0..nargs as usize)
        .map(|i| format!("{:#x}", *args.add(i)))
        .collect();
    out(&format!("printf({fmt:?}; {})", args.join(", ")));
}

// ---- errors and control -----------------------------------------------------------------------

unsafe extern "C" fn bounds_error(ctx: *mut Ctx, site: u32, a: *mut ArrayHeader, dim: u32, i: i64) {
    let extent = (*a).dims[dim as usize];
    fail(
        ctx,
        format!("bounds: site {site}, dim {dim}, index {i}, extent {extent}"),
    );
}
unsafe extern "C" fn div_zero(ctx: *mut Ctx, site: u32) {
    fail(ctx, format!("division by zero at site {site}"));
}
unsafe extern "C" fn zero_step(ctx: *mut Ctx, site: u32) {
    fail(ctx, format!("zero step at site {site}"));
}
unsafe extern "C" fn interrupted(ctx: *mut Ctx, site: u32) {
    fail(ctx, format!("interrupted at site {site}"));
}
unsafe extern "C" fn depth_limit(ctx: *mut Ctx, site: u32) {
    fail(ctx, format!("call depth limit at site {site}"));
}
unsafe extern "C" fn assert_fail(ctx: *mut Ctx, site: u32, p: *const u8, n: usize) {
    let msg = if n == 0 {
        String::new()
    } else {
        std::str::from_utf8(std::slice::from_raw_parts(p, n))
            .unwrap()
            .to_string()
    };
    fail(ctx, format!("assert at site {site}: {msg:?}"));
}
unsafe extern "C" fn exit(ctx: *mut Ctx, code: i32) {
    (*ctx).status = STATUS_EXIT;
    (*ctx).exit_code = code;
}
unsafe extern "C" fn size(ctx: *mut Ctx, site: u32, a: *mut ArrayHeader, d: i64) -> i64 {
    if d < 0 || d >= (*a).rank as i64 {
        fail(ctx, format!("size: site {site}, dim {d}"));
        return 0;
    }
    (*a).dims[d as usize]
}

// ---- arrays -----------------------------------------------------------------------------------

fn elem_bytes(elem: u32) -> usize {
    [1, 4, 8, 4, 8][elem as usize]
}

fn data_layout(len: i64, elem: u32) -> Layout {
    Layout::from_size_align((len as usize * elem_bytes(elem)).max(1), 64).unwrap()
}

/// A zero-filled array with the real header layout; `LIVE` counts arrays not yet freed.
pub unsafe fn new_array(elem: u32, dims: &[i64]) -> *mut ArrayHeader {
    let len = dims.iter().product::<i64>();
    let mut d = [1i64; MAX_RANK];
    d[..dims.len()].copy_from_slice(dims);
    let data = alloc_zeroed(data_layout(len, elem));
    LIVE.with(|l| l.set(l.get() + 1));
    let header: ArrayHeader = std::mem::zeroed();
    let h = Box::into_raw(Box::new(header));
    (*h).data = data;
    (*h).len = len;
    (*h).dims = d;
    (*h).rank = dims.len() as u32;
    (*h).elem = elem;
    (*h).refcount = 1;
    h
}

unsafe extern "C" fn array_new(
    ctx: *mut Ctx,
    elem: u32,
    rank: u32,
    dims: *const i64,
) -> *mut ArrayHeader {
    let dims = std::slice::from_raw_parts(dims, rank as usize);
    if dims.iter().any(|&d| d < 0) {
        fail(ctx, "negative extent".into());
        return std::ptr::null_mut();
    }
    new_array(elem, dims)
}
unsafe extern "C" fn retain(a: *mut ArrayHeader) {
    if !a.is_null() {
        (*a).refcount += 1;
    }
}
unsafe extern "C" fn release(a: *mut ArrayHeader) {
    if a.is_null() {
        return;
    }
    (*a).refcount -= 1;
    if (*a).refcount == 0 {
        dealloc((*a).data, data_layout((*a).len, (*a).elem));
        drop(Box::from_raw(a));
        LIVE.with(|l| l.set(l.get() - 1));
    }
}
unsafe extern "C" fn copy(_: *mut Ctx, a: *mut ArrayHeader) -> *mut ArrayHeader {
    let a = &*a;
    let c = new_array(a.elem, &a.dims[..a.rank as usize]);
    std::ptr::copy_nonoverlapping(a.data, (*c).data, a.len as usize * elem_bytes(a.elem));
    c
}
unsafe extern "C" fn array_lit_i64(_: *mut Ctx, v: *const i64, n: i64) -> *mut ArrayHeader {
    let a = new_array(2, &[n]);
    std::ptr::copy_nonoverlapping(v, (*a).data as *mut i64, n as usize);
    a
}
unsafe extern "C" fn array_lit_f32(_: *mut Ctx, v: *const f32, n: i64) -> *mut ArrayHeader {
    let a = new_array(3, &[n]);
    std::ptr::copy_nonoverlapping(v, (*a).data as *mut f32, n as usize);
    a
}
unsafe extern "C" fn sum_i64(_: *mut Ctx, a: *mut ArrayHeader) -> i64 {
    let a = &*a;
    (0..a.len as usize)
        .map(|i| *(a.data as *const i64).add(i))
        .sum()
}

// ---- math and misc ----------------------------------------------------------------------------

extern "C" fn fmod_f64(x: f64, y: f64) -> f64 {
    x % y
}
extern "C" fn fmod_f32(x: f32, y: f32) -> f32 {
    x % y
}
extern "C" fn round_f64(x: f64) -> f64 {
    x.round()
}
extern "C" fn pow_f64(x: f64, y: f64) -> f64 {
    x.powf(y)
}
extern "C" fn on_device(_: *mut Ctx, t: i32) -> u8 {
    (t == 2) as u8
}
unsafe extern "C" fn param_i64(_: *mut Ctx, p: *const u8, n: usize, default: i64) -> i64 {
    let name = std::str::from_utf8(std::slice::from_raw_parts(p, n)).unwrap();
    if name == "answer" {
        42
    } else {
        default
    }
}

// ---- directives: the host device's behaviour ---------------------------------------------------

/// `acc_rt_launch` as the host device runs it: gangs one after another on the caller's
/// context (`num_gangs` for `host` on `parallel`), no data movement.
#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn launch(
    ctx: *mut Ctx,
    desc: *const RegionDesc,
    args: *mut u64,
    _ops: *const u8,
    _nops: u32,
    sizes: *const LaunchSizes,
    _cond: u8,
    _queue: i64,
    _waits: *const i64,
    _nwaits: i32,
    _site: u32,
) {
    let desc = &*desc;
    let args = std::slice::from_raw_parts_mut(args, desc.params.len());
    let given = (*sizes).host.num_gangs;
    let gangs = match desc.kind {
        ComputeKind::Parallel if given != ABSENT => given.max(1),
        _ => 1,
    };
    let out = run_gangs_inline(ctx, desc, desc.func().unwrap(), args, gangs);
    args.copy_from_slice(&out);
}
extern "C" fn data_directive() {}
/// `acc_rt_launch_results`: `launch` above wrote the results already.
extern "C" fn launch_results() {}

pub fn symbols() -> Vec<(&'static str, *const u8)> {
    vec![
        ("acc_rt_launch", launch as *const u8),
        ("acc_rt_launch_results", launch_results as *const u8),
        ("acc_rt_data", data_directive as *const u8),
        ("acc_rt_wait", data_directive as *const u8),
        ("acc_print_bool", print_bool as *const u8),
        ("acc_print_i32", print_i32 as *const u8),
        ("acc_print_i64", print_i64 as *const u8),
        ("acc_print_f32", print_f32 as *const u8),
        ("acc_print_f64", print_f64 as *const u8),
        ("acc_print_str", print_str as *const u8),
        ("acc_print_space", print_space as *const u8),
        ("acc_print_newline", print_newline as *const u8),
        ("acc_print_array", print_array as *const u8),
        ("acc_printf", printf as *const u8),
        ("acc_rt_bounds_error", bounds_error as *const u8),
        ("acc_rt_div_zero", div_zero as *const u8),
        ("acc_rt_zero_step", zero_step as *const u8),
        ("acc_rt_interrupted", interrupted as *const u8),
        ("acc_rt_depth_limit", depth_limit as *const u8),
        ("acc_rt_assert_fail", assert_fail as *const u8),
        ("acc_rt_exit", exit as *const u8),
        ("acc_rt_size", size as *const u8),
        ("acc_rt_array_new", array_new as *const u8),
        ("acc_rt_retain", retain as *const u8),
        ("acc_rt_release", release as *const u8),
        ("acc_copy", copy as *const u8),
        ("acc_array_lit_i64", array_lit_i64 as *const u8),
        ("acc_array_lit_f32", array_lit_f32 as *const u8),
        ("acc_sum_i64", sum_i64 as *const u8),
        ("acc_math_fmod_f64", fmod_f64 as *const u8),
        ("acc_math_fmod_f32", fmod_f32 as *const u8),
        ("acc_math_round_f64", round_f64 as *const u8),
        ("acc_math_pow_f64", pow_f64 as *const u8),
        ("acc_on_device", on_device as *const u8),
        ("acc_param_i64", param_i64 as *const u8),
    ]
}

// ---- running ----------------------------------------------------------------------------------

/// The outcome of running a module's `main`.
#[derive(Debug)]
pub struct Run {
    pub out: String,
    pub status: u32,
    pub exit_code: i32,
    pub error: String,
    /// Arrays allocated and not freed.
    pub live: i64,
}

/// Globals storage and a context for several compiles in a row.
pub struct Session {
    pub jit: Jit,
    pub slots: GlobalSlots,
    pub globals: Vec<u64>,
}

impl Session {
    /// A session whose first compile defines the identity functions of `opaque`: calls of a
    /// function of an earlier compile are never inlined, so their results stay opaque to
    /// Cranelift. `run` leaves them out of the modules it compiles.
    pub fn new() -> Session {
        let mut s = Session {
            jit: Jit::new(&symbols()).unwrap(),
            slots: GlobalSlots::new(),
            globals: vec![0; 64],
        };
        let ids = module(identities(), main(&[], vec![]));
        s.jit.compile(&ids, &s.slots).unwrap();
        s
    }

    pub fn run(&mut self, m: &Module) -> Run {
        let mut m = m.clone();
        m.functions.retain(|f| !is_identity(f));
        let m = &m;
        for g in &m.globals {
            let n = self.slots.len() as u32;
            self.slots.entry(g.id).or_insert(n);
        }
        let compiled = self.jit.compile(m, &self.slots).unwrap();
        OUT.with(|o| o.borrow_mut().clear());
        ERR.with(|e| e.borrow_mut().clear());
        LIVE.with(|l| l.set(0));
        let mut ctx = Ctx {
            globals: self.globals.as_mut_ptr(),
            status: 0,
            exit_code: 0,
            host: std::ptr::null_mut(),
            stack_limit: 0,
            interrupt: &acc_runtime::abi::NO_INTERRUPT,
            max_depth: u64::MAX,
            devices: std::ptr::null_mut(),
        };
        unsafe { (compiled.main)(&mut ctx) };
        Run {
            out: OUT.with(|o| o.borrow().clone()),
            status: ctx.status,
            exit_code: ctx.exit_code,
            error: ERR.with(|e| e.borrow().clone()),
            live: LIVE.with(|l| l.get()),
        }
    }
}

/// Compile and run one module in a fresh JIT.
pub fn run(m: &Module) -> Run {
    Session::new().run(m)
}

/// Run a `main` made of `body` with these locals.
pub fn run_main(locals: &[(&str, Ty)], body: Block) -> Run {
    run(&module(vec![], main(locals, body)))
}

// ---- building IR ------------------------------------------------------------------------------

pub use ScalarType::{Bool as B, F32, F64, I32, I64};

pub fn s(t: ScalarType) -> Ty {
    Ty::Scalar(t)
}

pub fn arr(elem: ScalarType, rank: u8) -> Ty {
    Ty::Array { elem, rank }
}

pub fn module(functions: Vec<Function>, main: Function) -> Module {
    let sites = (0..8)
        .map(|i| Site {
            span: Default::default(),
            what: format!("site{i}"),
        })
        .collect();
    Module {
        functions,
        main,
        sites,
        ..Default::default()
    }
}

pub fn locals(ls: &[(&str, Ty)]) -> Vec<Local> {
    ls.iter()
        .map(|&(name, ty)| Local {
            name: name.to_string(),
            ty,
        })
        .collect()
}

pub fn main(ls: &[(&str, Ty)], body: Block) -> Function {
    Function {
        id: None,
        name: "main".into(),
        locals: locals(ls),
        body,
        ..Default::default()
    }
}

/// A function whose first `nparams` locals are its parameters.
pub fn function(
    id: u32,
    name: &str,
    nparams: u32,
    ret: Option<Ty>,
    ls: &[(&str, Ty)],
    body: Block,
) -> Function {
    Function {
        id: Some(FnId(id)),
        name: name.into(),
        params: (0..nparams).map(LocalId).collect(),
        ret,
        locals: locals(ls),
        body,
        ..Default::default()
    }
}

pub fn k(c: Const) -> Expr {
    Expr {
        ty: Ty::Scalar(c.ty()),
        kind: ExprKind::Const(c),
    }
}
pub fn i32c(v: i32) -> Expr {
    k(Const::I32(v))
}
pub fn i64c(v: i64) -> Expr {
    k(Const::I64(v))
}
pub fn f32c(v: f32) -> Expr {
    k(Const::F32(v))
}
pub fn f64c(v: f64) -> Expr {
    k(Const::F64(v))
}
pub fn boolc(v: bool) -> Expr {
    k(Const::Bool(v))
}

pub fn var(id: u32, ty: Ty) -> Expr {
    Expr {
        kind: ExprKind::Local(LocalId(id)),
        ty,
    }
}
pub fn global(id: u32, ty: Ty) -> Expr {
    Expr {
        kind: ExprKind::Global(acc_lang::hir::VarId(id)),
        ty,
    }
}

fn is_comparison(op: BinOp) -> bool {
    matches!(
        op,
        BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
    )
}

pub fn bin(op: BinOp, l: Expr, r: Expr) -> Expr {
    bin_at(op, l, r, Some(SiteId(1)))
}
pub fn bin_at(op: BinOp, l: Expr, r: Expr, site: Option<SiteId>) -> Expr {
    let ty = if is_comparison(op) { s(B) } else { l.ty };
    let site = matches!(op, BinOp::Div | BinOp::Rem)
        .then_some(site)
        .flatten();
    Expr {
        kind: ExprKind::Binary(op, Box::new(l), Box::new(r), site),
        ty,
    }
}
pub fn un(op: UnOp, e: Expr) -> Expr {
    Expr {
        ty: e.ty,
        kind: ExprKind::Unary(op, Box::new(e)),
    }
}
pub fn conv(e: Expr, to: ScalarType) -> Expr {
    Expr {
        kind: ExprKind::Convert(Box::new(e)),
        ty: s(to),
    }
}
pub fn call(id: u32, args: Vec<Expr>, ty: Ty) -> Expr {
    Expr {
        kind: ExprKind::Call(FnId(id), args),
        ty,
    }
}
pub fn builtin(b: Builtin, args: Vec<Expr>, ty: Ty) -> Expr {
    Expr {
        kind: ExprKind::Builtin(b, args),
        ty,
    }
}
pub fn load(a: Expr, idx: Vec<Expr>, site: Option<u32>) -> Expr {
    let Ty::Array { elem, .. } = a.ty else {
        panic!()
    };
    Expr {
        kind: ExprKind::Load {
            array: Box::new(a),
            indices: idx,
            site: site.map(SiteId),
        },
        ty: s(elem),
    }
}

pub fn set(l: u32, e: Expr) -> Stmt {
    Stmt::Set(LocalId(l), e)
}
pub fn store(a: Expr, idx: Vec<Expr>, v: Expr, site: Option<u32>) -> Stmt {
    Stmt::Store {
        array: a,
        indices: idx,
        value: v,
        site: site.map(SiteId),
    }
}
/// The site every hand-built `print` and array literal names (within `module`'s eight).
pub const CALL_SITE: u32 = 7;

pub fn print(vals: Vec<Expr>) -> Stmt {
    Stmt::Print(
        vals.into_iter().map(PrintArg::Value).collect(),
        SiteId(CALL_SITE),
    )
}
pub fn ret(e: Expr) -> Stmt {
    Stmt::Return(Some(e))
}
pub fn if_(cond: Expr, then: Block, els: Block) -> Stmt {
    Stmt::If { cond, then, els }
}
/// The site a step that may be 0 reports (lowering gives such a step one, `ir::ForLoop`).
pub const STEP_SITE: u32 = 77;

pub fn for_(v: u32, start: Expr, end: Expr, step: Expr, inclusive: bool, body: Block) -> Stmt {
    let nonzero = matches!(
        step.kind,
        ExprKind::Const(Const::I32(1..) | Const::I32(..=-1))
            | ExprKind::Const(Const::I64(1..) | Const::I64(..=-1))
    );
    Stmt::For(ForLoop {
        id: acc_lang::ir::LoopId(v),
        var: LocalId(v),
        start,
        end,
        step_site: (!nonzero).then_some(SiteId(STEP_SITE)),
        step,
        inclusive,
        body,
        schedule: LoopSchedule::default(),
        site: SiteId(CALL_SITE),
    })
}

/// The identity functions `opaque` calls (FnIds 100..105), to add to a module's functions.
pub fn identities() -> Vec<Function> {
    [B, I32, I64, F32, F64]
        .iter()
        .enumerate()
        .map(|(i, &t)| {
            function(
                100 + i as u32,
                "id",
                1,
                Some(s(t)),
                &[("x", s(t))],
                vec![ret(var(0, s(t)))],
            )
        })
        .collect()
}

/// Whether `f` is one of the identity functions (FnIds 100..105).
pub fn is_identity(f: &Function) -> bool {
    f.id.is_some_and(|id| (100..105).contains(&id.0)) && f.name == "id"
}

/// `e` passed through an identity function: a value Cranelift cannot fold.
pub fn opaque(e: Expr) -> Expr {
    let t = e.ty.scalar().unwrap();
    let i = [B, I32, I64, F32, F64]
        .iter()
        .position(|&x| x == t)
        .unwrap() as u32;
    call(100 + i, vec![e], s(t))
}

/// Run a `main` of no locals, with the identity functions defined.
pub fn run_opaque(body: Block) -> Run {
    run(&module(identities(), main(&[], body)))
}
