//! One PTX function being generated (`Fx`): a builder that holds the function's text and the
//! state its passes keep while they write it, private behind methods, and what every part of
//! the emitter shares: values, labels, barriers, run-time failures.
//!
//! The passes depend on this module, never the other way round: what to do with each loop is
//! decided beforehand (`plan`); statements are in `stmt`, loops and their schedules in
//! `schedule`, expressions in `expr`, reductions in `reduce`, atomics in `atomic`, output in
//! `print`, routine calls and function bodies in `call`, kernels in `kernel`; the module-wide
//! state is `cx`'s.

use std::collections::HashMap;
use std::rc::Rc;

use acc_lang::hir::VarId;
use acc_lang::ir::{LocalId, ScalarType, SiteId, Ty};

use crate::cx::{Cx, FuncSig};
use crate::plan::{Mode, Plan, VersionId};
use crate::ptx::{class_of, Class, Reg, Regs};
use crate::{unsupported, Result};

/// An array as device code holds it: its device header's address, and the data pointer and
/// extents loaded from the header once.
#[derive(Clone, Debug)]
pub(crate) struct ArrayVal {
    pub hdr: Reg,
    pub data: Reg,
    pub dims: Vec<Reg>,
    pub elem: ScalarType,
}

/// A value in registers.
#[derive(Clone, Debug)]
pub(crate) enum Val {
    Scalar(Reg, ScalarType),
    Array(ArrayVal),
}

/// The special registers a function reads once at its top.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Special {
    /// `%tid.x`, `%tid.y`, `%ntid.x`, `%ntid.y` (u32).
    pub tx: Reg,
    pub ty: Reg,
    pub ntx: Reg,
    pub nty: Reg,
    /// The block's thread number `ty * ntx + tx` and the block's thread count (u32).
    pub tid: Reg,
    pub nthreads: Reg,
    /// The gang number and count that gang loops share iterations by (u32): `%ctaid.x` and
    /// `%nctaid.x`, or 0 and 1 in a kernel that runs one gang.
    pub gang: Reg,
    pub ngangs: Reg,
    /// `tx == 0 && ty == 0`, `tx == 0`.
    pub lead: Reg,
    pub lead_x: Reg,
    /// The error record's address.
    pub err: Reg,
}

/// Where a function's gang number and count come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Gangs {
    /// `%ctaid.x` and `%nctaid.x`.
    Hardware,
    /// A kernel that runs as one gang: 0 of 1.
    One,
    /// A gang, worker or vector routine: its `gang` and `ngangs` parameters (the caller's).
    Params,
    /// A split kernel (`plan::splits`): its `split` parameter's count of consecutive blocks
    /// share each gang, `%ctaid.x / split` of `%nctaid.x / split` (see `Fx::split`).
    Split,
}

/// Where `break` and `continue` of a loop go.
#[derive(Clone, Debug)]
pub(crate) struct LoopTargets {
    pub brk: Option<String>,
    pub cont: String,
}

/// What kind of function is being generated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FnKind {
    Kernel,
    Routine,
}

pub(crate) use acc_abi::{KernelFailure as FailKind, STOP_WORD_OFFSET};

/// How many trips of a `while` loop run between two reads of the stop word.
pub(crate) const STOP_POLL_EVERY: u32 = 1024;

/// The site number recorded for a check whose IR carries none.
pub(crate) const NO_SITE: u32 = u32::MAX;

/// What a failed check records (`Fx::fail_if`): its kind and site, a dimension (u32) and an
/// index (b64) as given (0 without), the array's extents (`shape`; the rest of the six
/// entries are -1), and instructions that run first on the failure path to work them out
/// (`prelude`).
pub(crate) struct Failure {
    pub kind: FailKind,
    pub site: u32,
    pub dim: Option<Reg>,
    pub index: Option<Reg>,
    pub shape: Vec<Reg>,
    pub prelude: Vec<String>,
}

impl Failure {
    /// A failure of `kind` at `site` that records nothing else.
    pub(crate) fn at(kind: FailKind, site: u32) -> Failure {
        Failure {
            kind,
            site,
            dim: None,
            index: None,
            shape: Vec::new(),
            prelude: Vec::new(),
        }
    }
}

/// The stores of a thread loop's unrolled copy (`unroll`), held back until every copy has
/// loaded, and the values it stored, by element.
#[derive(Default)]
pub(crate) struct HeldStores {
    pub stores: Vec<String>,
    pub stored: HashMap<String, Reg>,
}

/// One PTX function being generated: its text so far and the state the passes that write it
/// keep while they do (read and changed through methods, each pass its own).
pub(crate) struct Fx<'c, 'm> {
    cx: &'c mut Cx<'m>,
    kind: FnKind,
    regs: Regs,
    /// The body's instructions.
    code: String,
    /// Failure paths, placed after the body so that the hot path stays straight.
    cold: String,
    labels: u32,
    locals: Vec<Val>,
    local_tys: Vec<Ty>,
    loops: Vec<LoopTargets>,
    mode: Mode,
    sp: Special,
    /// What to do with each loop of the body (`plan`).
    plan: Rc<Plan<'m>>,
    /// The version of the code being generated (`plan::versions`), which says what its
    /// bounds checks may count as proven.
    version: VersionId,
    /// Where `return` goes.
    end_label: String,
    /// A routine's return type.
    ret: Option<Ty>,
    /// Whether the code uses row barriers (whose words the kernel must zero first).
    row_barriers_used: bool,
    /// It (or a routine it calls) uses the shared scratch slots.
    scratch_used: bool,
    /// The code (or a routine it calls) prints: it reads the `out` parameter.
    prints: bool,
    /// A kernel's `copy` scalars (`InOut` parameters that are not reductions): the address
    /// of the memory cell each lives in, shared by every thread of the launch.
    cells: Vec<(LocalId, Reg)>,
    /// The globals the code reads: a scalar's 8-byte slot value at the launch, an array's
    /// device header.
    globals: Vec<(VarId, Reg)>,
    /// The global arrays it reads: their device copies (the header in `globals` too).
    global_arrays: Vec<(VarId, ArrayVal)>,
    /// Inside an unrolled trip: the failed-check branches held back to its end (`unroll`).
    later: Option<Vec<(Reg, Failure)>>,
    /// While an unrolled copy of a thread loop's body is generated: its held-back stores.
    held_stores: Option<HeldStores>,
    /// Row starts of accesses, worked out before the loops that enclose them (`address`), by
    /// key.
    row_starts: Vec<Vec<(String, Reg)>>,
    /// In a split kernel: the block's share of its gang, `%ctaid.x % split`, and `split`
    /// (u32). The gang loop's vector loop shares its iterations among the gang's blocks.
    split: Option<(Reg, Reg)>,
}

impl<'c, 'm> Fx<'c, 'm> {
    /// A function of `kind` whose loops are generated as `plan` says.
    pub(crate) fn new(cx: &'c mut Cx<'m>, kind: FnKind, plan: Plan<'m>) -> Self {
        let mode = plan.entry_mode();
        let mut regs = Regs::default();
        let mut b32 = || regs.fresh(Class::B32);
        let (tx, ty, ntx, nty, tid, nthreads, gang, ngangs) =
            (b32(), b32(), b32(), b32(), b32(), b32(), b32(), b32());
        let lead = regs.fresh(Class::Pred);
        let lead_x = regs.fresh(Class::Pred);
        let err = regs.fresh(Class::B64);
        Fx {
            cx,
            kind,
            regs,
            code: String::new(),
            cold: String::new(),
            labels: 0,
            locals: Vec::new(),
            local_tys: Vec::new(),
            loops: Vec::new(),
            mode,
            sp: Special {
                tx,
                ty,
                ntx,
                nty,
                tid,
                nthreads,
                gang,
                ngangs,
                lead,
                lead_x,
                err,
            },
            plan: Rc::new(plan),
            version: VersionId::ROOT,
            end_label: "$Lend".into(),
            ret: None,
            row_barriers_used: false,
            scratch_used: false,
            prints: false,
            cells: Vec::new(),
            globals: Vec::new(),
            global_arrays: Vec::new(),
            later: None,
            held_stores: None,
            row_starts: Vec::new(),
            split: None,
        }
    }

    // ---- the function's state, as the passes see it ------------------------------------------

    /// The module's generation state.
    pub(crate) fn cx(&mut self) -> &mut Cx<'m> {
        self.cx
    }

    /// Bounds checks are left out (`PtxOptions::unchecked`).
    pub(crate) fn unchecked(&self) -> bool {
        self.cx.options.unchecked
    }

    pub(crate) fn kind(&self) -> FnKind {
        self.kind
    }

    /// The instructions generated since the last call (the function's text is assembled
    /// from such pieces).
    pub(crate) fn take_code(&mut self) -> String {
        std::mem::take(&mut self.code)
    }

    /// The failure paths, placed after the body.
    pub(crate) fn cold(&self) -> &str {
        &self.cold
    }

    /// Registers for the function's locals, of these types.
    pub(crate) fn add_locals(&mut self, tys: impl IntoIterator<Item = Ty>) {
        for ty in tys {
            let v = self.fresh_local(ty);
            self.locals.push(v);
            self.local_tys.push(ty);
        }
    }

    /// A local's type.
    pub(crate) fn local_ty(&self, l: LocalId) -> Option<Ty> {
        self.local_tys.get(l.0 as usize).copied()
    }

    /// The code being generated is a loop's body (`leave_loop` ends it).
    pub(crate) fn enter_loop(&mut self, targets: LoopTargets) {
        self.loops.push(targets);
    }

    pub(crate) fn leave_loop(&mut self) {
        self.loops.pop();
    }

    /// Where `break` and `continue` of the innermost loop go.
    pub(crate) fn loop_targets(&self) -> Option<&LoopTargets> {
        self.loops.last()
    }

    /// How the threads share the code being generated.
    pub(crate) fn mode(&self) -> Mode {
        self.mode
    }

    /// From now on the threads share the code in `mode`; the mode before.
    pub(crate) fn set_mode(&mut self, mode: Mode) -> Mode {
        std::mem::replace(&mut self.mode, mode)
    }

    /// The mode the function starts in.
    pub(crate) fn entry_mode(&self) -> Mode {
        self.plan.entry_mode()
    }

    /// The special registers read at the top.
    pub(crate) fn sp(&self) -> Special {
        self.sp
    }

    /// What to do with each loop (shared, so that the passes can read it while they write).
    pub(crate) fn plan(&self) -> Rc<Plan<'m>> {
        Rc::clone(&self.plan)
    }

    /// The version of the code being generated.
    pub(crate) fn version(&self) -> VersionId {
        self.version
    }

    /// From now on the code generated is version `v`; the version before.
    pub(crate) fn set_version(&mut self, v: VersionId) -> VersionId {
        std::mem::replace(&mut self.version, v)
    }

    /// Where `return` goes.
    pub(crate) fn end_label(&self) -> String {
        self.end_label.clone()
    }

    /// A routine's return type.
    pub(crate) fn ret(&self) -> Option<Ty> {
        self.ret
    }

    pub(crate) fn set_ret(&mut self, ret: Option<Ty>) {
        self.ret = ret;
    }

    /// The code (or a routine it calls) uses row barriers.
    pub(crate) fn uses_row_barriers(&self) -> bool {
        self.row_barriers_used
    }

    /// The code (or a routine it calls) uses the shared scratch slots.
    pub(crate) fn uses_scratch(&self) -> bool {
        self.scratch_used
    }

    /// The code (or a routine it calls) prints.
    pub(crate) fn prints(&self) -> bool {
        self.prints
    }

    pub(crate) fn mark_prints(&mut self) {
        self.prints = true;
    }

    /// What a call of routine `sig` makes the code use.
    pub(crate) fn note_call(&mut self, sig: &FuncSig) {
        self.row_barriers_used |= sig.row_barriers;
        self.scratch_used |= sig.scratch;
        self.prints |= sig.prints;
    }

    /// `copy` scalar `l` lives in the memory cell at `addr`.
    pub(crate) fn add_cell(&mut self, l: LocalId, addr: Reg) {
        self.cells.push((l, addr));
    }

    /// Global `g` is read through `r`: a scalar's slot value, an array's device header.
    pub(crate) fn add_global(&mut self, g: VarId, r: Reg) {
        self.globals.push((g, r));
    }

    pub(crate) fn global(&self, g: VarId) -> Option<Reg> {
        self.globals.iter().find(|x| x.0 == g).map(|x| x.1)
    }

    /// Global array `g`'s device copy (its header is `add_global`'s too).
    pub(crate) fn add_global_array(&mut self, g: VarId, a: ArrayVal) {
        self.global_arrays.push((g, a));
    }

    pub(crate) fn global_array(&self, g: VarId) -> Option<&ArrayVal> {
        self.global_arrays.iter().find(|x| x.0 == g).map(|x| &x.1)
    }

    /// Whether the version of the code being generated counts the access with key `key`
    /// as proven in bounds (an enclosing loop's pre-check proved it).
    pub(crate) fn is_proven(&self, key: usize) -> bool {
        self.plan.is_proven(self.version, key)
    }

    /// From now on `fail_if` holds its branches back (an unrolled trip's checks), until
    /// `take_held_checks`.
    pub(crate) fn hold_checks(&mut self) {
        self.later = Some(Vec::new());
    }

    pub(crate) fn holding_checks(&self) -> bool {
        self.later.is_some()
    }

    pub(crate) fn take_held_checks(&mut self) -> Vec<(Reg, Failure)> {
        self.later.take().unwrap_or_default()
    }

    /// From now on stores are held back (an unrolled copy of a thread loop's body), until
    /// `take_held_stores`.
    pub(crate) fn hold_stores(&mut self) {
        self.held_stores = Some(HeldStores::default());
    }

    pub(crate) fn held_stores(&self) -> Option<&HeldStores> {
        self.held_stores.as_ref()
    }

    pub(crate) fn held_stores_mut(&mut self) -> Option<&mut HeldStores> {
        self.held_stores.as_mut()
    }

    pub(crate) fn take_held_stores(&mut self) -> HeldStores {
        self.held_stores.take().unwrap_or_default()
    }

    /// Row starts (by key) in effect for the loop being generated, until `leave_row_starts`.
    pub(crate) fn enter_row_starts(&mut self, starts: Vec<(String, Reg)>) {
        self.row_starts.push(starts);
    }

    pub(crate) fn leave_row_starts(&mut self) {
        self.row_starts.pop();
    }

    /// The row start with key `key`, if an enclosing loop worked it out.
    pub(crate) fn row_start_of(&self, key: &str) -> Option<Reg> {
        self.row_starts
            .iter()
            .rev()
            .flatten()
            .find(|(k, _)| k == key)
            .map(|&(_, r)| r)
    }

    /// In a split kernel: the block's share of its gang and the number of shares (u32).
    pub(crate) fn split(&self) -> Option<(Reg, Reg)> {
        self.split
    }

    /// `{`: a scope of its own for the declarations that follow (a call's parameters).
    pub(crate) fn open_scope(&mut self) {
        self.code.push_str("\t{\n");
    }

    pub(crate) fn close_scope(&mut self) {
        self.code.push_str("\t}\n");
    }

    // ---- text ------------------------------------------------------------------------------

    /// The function's declarations: its registers.
    pub(crate) fn declarations(&self) -> String {
        self.regs.declarations()
    }

    /// One instruction (without its `;`).
    pub(crate) fn ins(&mut self, s: impl AsRef<str>) {
        self.code.push('\t');
        self.code.push_str(s.as_ref());
        self.code.push_str(";\n");
    }

    /// A comment line, for readers of `--emit ptx`.
    pub(crate) fn comment(&mut self, s: impl AsRef<str>) {
        self.code.push_str("\t// ");
        self.code.push_str(s.as_ref());
        self.code.push('\n');
    }

    pub(crate) fn label(&mut self, what: &str) -> String {
        self.labels += 1;
        format!("$L{}_{what}", self.labels)
    }

    pub(crate) fn place(&mut self, label: &str) {
        self.code.push_str(label);
        self.code.push_str(":\n");
    }

    pub(crate) fn fresh(&mut self, class: Class) -> Reg {
        self.regs.fresh(class)
    }

    pub(crate) fn fresh_of(&mut self, s: ScalarType) -> Reg {
        self.regs.fresh(class_of(s))
    }

    /// Registers for a local of type `ty`.
    pub(crate) fn fresh_local(&mut self, ty: Ty) -> Val {
        match ty {
            Ty::Scalar(s) => Val::Scalar(self.fresh_of(s), s),
            Ty::Array { elem, rank } => Val::Array(ArrayVal {
                hdr: self.fresh(Class::B64),
                data: self.fresh(Class::B64),
                dims: (0..rank).map(|_| self.fresh(Class::B64)).collect(),
                elem,
            }),
        }
    }

    /// Read the special registers (the function's first instructions).
    pub(crate) fn read_special(&mut self, gangs: Gangs) {
        let sp = self.sp;
        self.ins(format!("mov.u32 {}, %tid.x", sp.tx));
        self.ins(format!("mov.u32 {}, %tid.y", sp.ty));
        self.ins(format!("mov.u32 {}, %ntid.x", sp.ntx));
        self.ins(format!("mov.u32 {}, %ntid.y", sp.nty));
        self.ins(format!(
            "mad.lo.u32 {}, {}, {}, {}",
            sp.tid, sp.ty, sp.ntx, sp.tx
        ));
        self.ins(format!(
            "mul.lo.u32 {}, {}, {}",
            sp.nthreads, sp.ntx, sp.nty
        ));
        match gangs {
            Gangs::One => {
                self.ins(format!("mov.u32 {}, 0", sp.gang));
                self.ins(format!("mov.u32 {}, 1", sp.ngangs));
            }
            Gangs::Hardware => {
                self.ins(format!("mov.u32 {}, %ctaid.x", sp.gang));
                self.ins(format!("mov.u32 {}, %nctaid.x", sp.ngangs));
            }
            Gangs::Params => {
                self.ins(format!("ld.param.u32 {}, [gang]", sp.gang));
                self.ins(format!("ld.param.u32 {}, [ngangs]", sp.ngangs));
            }
            Gangs::Split => {
                let (wide, parts, part, block) = (
                    self.fresh(Class::B64),
                    self.fresh(Class::B32),
                    self.fresh(Class::B32),
                    self.fresh(Class::B32),
                );
                self.ins(format!("ld.param.u64 {wide}, [split]"));
                self.ins(format!("cvt.u32.u64 {parts}, {wide}"));
                self.ins(format!("mov.u32 {block}, %ctaid.x"));
                self.ins(format!("div.u32 {}, {block}, {parts}", sp.gang));
                self.ins(format!("rem.u32 {part}, {block}, {parts}"));
                self.ins(format!("mov.u32 {}, %nctaid.x", sp.ngangs));
                self.ins(format!("div.u32 {}, {}, {parts}", sp.ngangs, sp.ngangs));
                self.split = Some((part, parts));
            }
        }
        self.ins(format!("setp.eq.u32 {}, {}, 0", sp.lead_x, sp.tx));
        self.ins(format!("setp.eq.u32 {}, {}, 0", sp.lead, sp.tid));
    }

    // ---- values ----------------------------------------------------------------------------

    /// The memory cell of a `copy` scalar.
    pub(crate) fn cell(&self, l: LocalId) -> Option<Reg> {
        self.cells.iter().find(|c| c.0 == l).map(|c| c.1)
    }

    /// A local's registers (not for a `copy` scalar, whose value is in memory).
    pub(crate) fn local(&self, l: LocalId) -> Result<Val> {
        if self.cell(l).is_some() {
            return unsupported(
                "a `copy` scalar used as a loop variable or a loop's reduction variable",
            );
        }
        match self.locals.get(l.0 as usize) {
            Some(v) => Ok(v.clone()),
            None => unsupported(format!("local {} out of range", l.0)),
        }
    }

    /// A local's value: its registers, or what its cell holds.
    pub(crate) fn read_local(&mut self, l: LocalId) -> Result<Val> {
        let Some(addr) = self.cell(l) else {
            return self.local(l);
        };
        let s = match self.local_tys.get(l.0 as usize) {
            Some(Ty::Scalar(s)) => *s,
            _ => return unsupported("a `copy` variable that is not a scalar"),
        };
        Ok(Val::Scalar(self.load_element(addr, s), s))
    }

    /// `local = v`: into its registers, or (by the leader, then synchronized) into its cell.
    pub(crate) fn write_local(&mut self, l: LocalId, v: &Val) -> Result<()> {
        let Some(addr) = self.cell(l) else {
            let to = self.local(l)?;
            return self.assign(&to, v);
        };
        let Val::Scalar(r, s) = *v else {
            return unsupported("an array assigned to a `copy` scalar");
        };
        let r = self.storable(r, s);
        // Every thread of the block (or row) may have read the cell since the last barrier
        // (`s += x` reads it in all of them); the leader stores only once they all have.
        // Without this barrier another warp's load can still be in flight when the leader
        // stores: a data race in PTX's memory model, and on the GPU (the cell is page-locked
        // host memory, a PCIe round trip away) that late load refilled L1 with the old value,
        // which the leader read back in the next iteration, losing an update.
        self.sync();
        let g = self.guard();
        self.ins(format!("{g}st.global.{} [{addr}], {r}", crate::ptx::mem(s)));
        self.sync();
        Ok(())
    }

    /// A scalar constant in a fresh register.
    pub(crate) fn constant(&mut self, s: ScalarType, literal: &str) -> Reg {
        let r = self.fresh_of(s);
        let ty = match s {
            ScalarType::Bool => "pred",
            ScalarType::I32 => "b32",
            ScalarType::I64 => "b64",
            ScalarType::F32 => "f32",
            ScalarType::F64 => "f64",
        };
        self.ins(format!("mov.{ty} {r}, {literal}"));
        r
    }

    pub(crate) fn const_bool(&mut self, v: bool) -> Reg {
        self.constant(ScalarType::Bool, if v { "1" } else { "0" })
    }

    pub(crate) fn const_i64(&mut self, v: i64) -> Reg {
        self.constant(
            ScalarType::I64,
            &crate::ptx::int_literal(v, ScalarType::I64),
        )
    }

    pub(crate) fn const_i32(&mut self, v: i32) -> Reg {
        self.constant(
            ScalarType::I32,
            &crate::ptx::int_literal(v as i64, ScalarType::I32),
        )
    }

    /// Copy a value into a local's registers.
    pub(crate) fn assign(&mut self, to: &Val, from: &Val) -> Result<()> {
        match (to, from) {
            (Val::Scalar(d, s), Val::Scalar(v, t)) if s == t => {
                if d != v {
                    self.ins(format!("mov.{} {d}, {v}", crate::ptx::bits(*s)));
                }
                Ok(())
            }
            (Val::Array(d), Val::Array(v)) if d.dims.len() == v.dims.len() => {
                self.ins(format!("mov.b64 {}, {}", d.hdr, v.hdr));
                self.ins(format!("mov.b64 {}, {}", d.data, v.data));
                for (a, b) in d.dims.iter().zip(&v.dims) {
                    self.ins(format!("mov.b64 {a}, {b}"));
                }
                Ok(())
            }
            _ => unsupported("an assignment between different types"),
        }
    }

    /// Load an array header's data pointer and extents into `a` (from `a.hdr`).
    pub(crate) fn load_header(&mut self, a: &ArrayVal) {
        self.ins(format!("ld.global.nc.u64 {}, [{}]", a.data, a.hdr));
        for (k, d) in a.dims.iter().enumerate() {
            self.ins(format!("ld.global.nc.u64 {d}, [{}+{}]", a.hdr, 16 + 8 * k));
        }
    }

    /// The zero of a scalar type, into `r`.
    pub(crate) fn set_zero(&mut self, r: Reg, s: ScalarType) {
        let zero = match s {
            ScalarType::Bool | ScalarType::I32 | ScalarType::I64 => "0".to_string(),
            ScalarType::F32 => crate::ptx::f32_literal(0.0),
            ScalarType::F64 => crate::ptx::f64_literal(0.0),
        };
        let ty = match s {
            ScalarType::Bool => "pred",
            _ => crate::ptx::bits(s),
        };
        self.ins(format!("mov.{ty} {r}, {zero}"));
    }

    /// A scalar as the 64 bits of a slot: integers sign-extended, `bool` 0 or 1, floats as
    /// their bits in the low bytes (the host's slot layout).
    pub(crate) fn slot_bits(&mut self, r: Reg, s: ScalarType) -> Reg {
        let d = self.fresh(Class::B64);
        match s {
            ScalarType::Bool => self.ins(format!("selp.b64 {d}, 1, 0, {r}")),
            ScalarType::I32 => self.ins(format!("cvt.s64.s32 {d}, {r}")),
            ScalarType::I64 | ScalarType::F64 => self.ins(format!("mov.b64 {d}, {r}")),
            ScalarType::F32 => {
                let b = self.fresh(Class::B32);
                self.ins(format!("mov.b32 {b}, {r}"));
                self.ins(format!("cvt.u64.u32 {d}, {b}"));
            }
        }
        d
    }

    /// The scalar in the low bytes of a 64-bit slot value, into `d`.
    pub(crate) fn unslot_bits(&mut self, d: Reg, bits: Reg, s: ScalarType) {
        match s {
            ScalarType::Bool => {
                let low = self.fresh(Class::B64);
                self.ins(format!("and.b64 {low}, {bits}, 255"));
                self.ins(format!("setp.ne.u64 {d}, {low}, 0"));
            }
            ScalarType::I32 => self.ins(format!("cvt.u32.u64 {d}, {bits}")),
            ScalarType::I64 | ScalarType::F64 => self.ins(format!("mov.b64 {d}, {bits}")),
            ScalarType::F32 => {
                let b = self.fresh(Class::B32);
                self.ins(format!("cvt.u32.u64 {b}, {bits}"));
                self.ins(format!("mov.b32 {d}, {b}"));
            }
        }
    }

    // ---- threads ---------------------------------------------------------------------------

    /// The predicate of the threads that perform effects in the current mode (`None`: all).
    pub(crate) fn leader(&self) -> Option<Reg> {
        match self.mode {
            Mode::Block => Some(self.sp.lead),
            Mode::Row => Some(self.sp.lead_x),
            Mode::Thread => None,
        }
    }

    /// `@lead ` before an instruction that only the leader performs.
    pub(crate) fn guard(&self) -> String {
        match self.leader() {
            Some(p) => format!("@{p} "),
            None => String::new(),
        }
    }

    /// Make the leader's effects visible to the threads that share its work: a block
    /// barrier in `Block` mode, a row barrier in `Row` mode, nothing in `Thread` mode.
    pub(crate) fn sync(&mut self) {
        match self.mode {
            Mode::Block => self.ins("bar.sync 0"),
            Mode::Row => self.row_barrier(),
            Mode::Thread => {}
        }
    }

    /// Synchronize the threads of this row (`%tid.y`): `acc_row_barrier`, a barrier in shared
    /// memory that also leaves when another thread has failed.
    pub(crate) fn row_barrier(&mut self) {
        self.cx.uses_row_barrier = true;
        self.row_barriers_used = true;
        let err = self.sp.err;
        // A row of one whole warp, the common case, without the call.
        let one_warp = self.fresh(Class::Pred);
        let (soft, done) = (self.label("rowbar"), self.label("rowbardone"));
        self.ins(format!("setp.ne.u32 {one_warp}, {}, 32", self.sp.ntx));
        self.ins(format!("@{one_warp} bra {soft}"));
        self.ins("bar.warp.sync -1");
        self.ins(format!("bra {done}"));
        self.place(&soft);
        self.open_scope();
        self.ins(".param .b64 rb_err");
        self.ins(format!("st.param.b64 [rb_err], {err}"));
        self.ins("call acc_row_barrier, (rb_err)");
        self.close_scope();
        self.place(&done);
    }

    /// The address of slot `index` (a u32 register) of the shared scratch buffer.
    pub(crate) fn scratch_slot(&mut self, index: Reg) -> Reg {
        self.cx.uses_scratch = true;
        self.scratch_used = true;
        let base = self.fresh(Class::B64);
        let wide = self.fresh(Class::B64);
        let addr = self.fresh(Class::B64);
        self.ins(format!("mov.u64 {base}, acc_shared"));
        self.ins(format!("mul.wide.u32 {wide}, {index}, 8"));
        self.ins(format!("add.u64 {addr}, {base}, {wide}"));
        addr
    }

    /// Share a scalar that only the leader computed (a routine's result, a captured value)
    /// with the other threads of its block or row, through the scratch buffer.
    pub(crate) fn broadcast(&mut self, v: Reg, s: ScalarType) -> Reg {
        if self.mode == Mode::Thread {
            return v;
        }
        let slot = match self.mode {
            Mode::Row => {
                let i = self.fresh(Class::B32);
                self.ins(format!("mul.lo.u32 {i}, {}, {}", self.sp.ty, self.sp.ntx));
                i
            }
            _ => {
                let i = self.fresh(Class::B32);
                self.ins(format!("mov.u32 {i}, 0"));
                i
            }
        };
        let addr = self.scratch_slot(slot);
        let bits = self.slot_bits(v, s);
        let g = self.guard();
        self.ins(format!("{g}st.shared.b64 [{addr}], {bits}"));
        self.sync();
        let back = self.fresh(Class::B64);
        self.ins(format!("ld.shared.b64 {back}, [{addr}]"));
        // The slot is reused: nobody may write it before everyone has read it.
        self.sync();
        let d = self.fresh_of(s);
        self.unslot_bits(d, back, s);
        d
    }

    // ---- failures --------------------------------------------------------------------------

    /// The site number a check records.
    pub(crate) fn site(&self, site: Option<SiteId>) -> u32 {
        site.map_or(NO_SITE, |s| s.0)
    }

    /// Fail when `cond` holds: the first failing thread of the launch records `failure` in
    /// the error record, and every failing thread leaves the kernel.
    pub(crate) fn fail_if(&mut self, cond: Reg, failure: Failure) {
        if let Some(later) = self.later.as_mut() {
            later.push((cond, failure));
            return;
        }
        let l = self.label("fail");
        self.ins(format!("@{cond} bra {l}"));
        let record = self.failure(failure);
        self.cold.push_str(&l);
        self.cold.push_str(":\n");
        self.cold.push_str(&record);
    }

    /// The cold code of a failure: its prelude, then the first failing thread of the launch
    /// fills the error record, and the thread leaves the kernel.
    fn failure(&mut self, failure: Failure) -> String {
        let Failure {
            kind,
            site,
            dim,
            index,
            shape,
            prelude,
        } = failure;
        let err = self.sp.err;
        let old = self.fresh(Class::B32);
        let lost = self.fresh(Class::Pred);
        let mut c = String::new();
        let mut ins = |s: String| {
            c.push('\t');
            c.push_str(&s);
            c.push_str(";\n");
        };
        for p in prelude {
            ins(p);
        }
        use acc_abi::KernelErrorRecord as R;
        use std::mem::offset_of;
        let (at_site, at_kind, at_dim) =
            (offset_of!(R, site), offset_of!(R, kind), offset_of!(R, dim));
        let (at_index, at_shape) = (offset_of!(R, index), offset_of!(R, shape));
        ins(format!("atom.global.cas.b32 {old}, [{err}], 0, 1"));
        ins(format!("setp.ne.u32 {lost}, {old}, 0"));
        ins(format!("@{lost} exit"));
        ins(format!("st.global.u32 [{err}+{at_site}], {site}"));
        ins(format!("st.global.u32 [{err}+{at_kind}], {}", kind as u32));
        match dim {
            Some(d) => ins(format!("st.global.u32 [{err}+{at_dim}], {d}")),
            None => ins(format!("st.global.u32 [{err}+{at_dim}], 0")),
        }
        match index {
            Some(i) => ins(format!("st.global.u64 [{err}+{at_index}], {i}")),
            None => ins(format!("st.global.u64 [{err}+{at_index}], 0")),
        }
        for k in 0..6 {
            let at = at_shape + 8 * k;
            match shape.get(k) {
                Some(d) => ins(format!("st.global.u64 [{err}+{at}], {d}")),
                None => ins(format!("st.global.u64 [{err}+{at}], -1")),
            }
        }
        ins("exit".into());
        c
    }

    /// Starts reading into `word` the stop word that the host sets when the run is
    /// interrupted or out of time (page-locked host memory beside the error record,
    /// `STOP_WORD_OFFSET`), for `check_stop`. A `while` loop reads it after a round of
    /// `STOP_POLL_EVERY` trips and checks it after the next round, so that the read's latency
    /// (a round trip to host memory) hides behind the trips, and a loop that ends within a
    /// round reads nothing; a stop is seen within two rounds.
    pub(crate) fn read_stop(&mut self, word: Reg) {
        let err = self.sp.err;
        // (`volatile`: a relaxed load at system scope, which sees the host's store.)
        self.ins(format!(
            "ld.volatile.global.u32 {word}, [{err}+{STOP_WORD_OFFSET}]"
        ));
    }

    /// Checks the stop word `read_stop` read: a set word ends the thread with a `Stopped`
    /// failure at `site`. (Between two rounds of a `while` loop's trips: a loop with no other
    /// exit and no path back into it from cold code keeps the trips as fast as before.)
    pub(crate) fn check_stop(&mut self, word: Reg, site: u32) {
        let stop = self.fresh(Class::Pred);
        self.ins(format!("setp.ne.u32 {stop}, {word}, 0"));
        let l = self.label("stop");
        self.ins(format!("@{stop} bra {l}"));
        let stopped = self.failure(Failure::at(FailKind::Stopped, site));
        self.cold.push_str(&format!("{l}:\n{stopped}"));
    }
}
