//! Lowering: the checked `hir` and its `analysis` to the `ir` both back ends consume.
//!
//! One walk per function body (this compile's functions, the top-level code as `main`, and each
//! compute region, outlined while its host code is lowered). What the walk decides:
//! - Storage: each body numbers its own locals (parameters first); globals stay `Global` reads
//!   and `SetGlobal` writes, except inside a compute region, where every outside variable is a
//!   region parameter.
//! - Flattening: `if` expressions, value blocks and `&&`/`||` whose right side needs statements
//!   become temporaries and `Stmt::If`; an operand evaluated before one that needs statements is
//!   spilled to a temporary first, so evaluation stays left to right (`expr`).
//! - Ownership: an array value is borrowed (a variable read) or owned (a call, a built-in that
//!   makes an array, a literal, a flattened temporary). Stores move owned values in and retain
//!   borrowed ones; owned operands live in temporaries released after their statement; array
//!   locals are released when their scope ends, and before every `break`, `continue` and
//!   `return` that leaves it (`body`). A borrowed global array that a call could rebind (and
//!   free) while it is in use is pinned: retained in a temporary for the statement (`scan`
//!   finds which globals some function rebinds).
//! - Checks: every element access, integer `/` and `%`, `assert`, and built-in that can fail
//!   names a `Site`.
//! - Directives: compute constructs become `Region`s and `Launch`es (`region`), data directives
//!   `Data`/`DataRegion`, atomics `Atomic` (`directive`).
//!
//! Tests (`tests`): IR snapshots of small programs; a well-formedness checker of what `ir`
//! promises; and a reference interpreter of the IR that runs the examples, the conformance
//! suite and mutations of both, checking every reference count as it goes.
//!
//! `lower` never fails and never panics on a program that checked without errors; on anything
//! else (a missing analysis entry) it does the plain thing (lowers a construct's body inline).

mod body;
mod directive;
mod expr;
mod region;
mod scan;
mod show;
mod split;
mod stmt;

#[cfg(test)]
mod tests;

use crate::analysis::Analysis;
use crate::builtins::FormatPiece;
use crate::hir::{self, VarKind};
use crate::ir::{self, FormatId, SiteId, StringId};
use crate::span::Span;

use body::{Body, Context};

/// How to lower.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// The REPL: a top-level expression statement prints its value (hir's `StmtKind::Expr`).
    pub print_values: bool,
    /// The id of this compile's first check site (`ir::Module::first_site`).
    pub first_site: u32,
}

/// Lower a program that checked without errors.
pub fn lower(program: &hir::Program, analysis: &Analysis) -> ir::Module {
    lower_with(program, analysis, Options::default())
}

/// `lower`, with options.
pub fn lower_with(program: &hir::Program, analysis: &Analysis, options: Options) -> ir::Module {
    let mut cx = Cx {
        program,
        analysis,
        options,
        strings: Vec::new(),
        formats: Vec::new(),
        sites: Vec::new(),
        regions: vec![None; analysis.regions.len()],
        rebound: scan::rebound_globals(program),
    };
    let mut functions: Vec<ir::Function> = program
        .new_functions()
        .map(|f| lower_function(&mut cx, f))
        .collect();
    let main = lower_main(&mut cx);
    // The functions' entry sites come after every other site, so that adding them left the
    // numbering of the checks' sites as it was.
    for (f, h) in functions.iter_mut().zip(program.new_functions()) {
        f.entry_site = Some(cx.site(h.name_span, h.name.clone()));
    }
    let globals = program
        .new_globals()
        .map(|(id, v)| ir::Global {
            id,
            name: v.name.clone(),
            ty: ty(v.ty),
        })
        .collect();
    let regions = cx
        .regions
        .into_iter()
        .enumerate()
        .map(|(i, r)| r.unwrap_or_else(|| empty_region(analysis, i)))
        .collect();
    let mut module = ir::Module {
        functions,
        main,
        regions,
        globals,
        sites: cx.sites,
        first_site: cx.options.first_site,
        strings: cx.strings,
        formats: cx.formats,
    };
    ir::late::mark(&mut module);
    // A broken rule is a bug of lowering's; debug builds (and so the conformance suite in CI)
    // stop at it.
    if cfg!(debug_assertions) {
        ir::verify::assert_valid(&module);
    }
    module
}

/// What every body of one compile shares: the inputs and the module's tables.
pub(crate) struct Cx<'a> {
    program: &'a hir::Program,
    analysis: &'a Analysis,
    options: Options,
    strings: Vec<String>,
    formats: Vec<Vec<FormatPiece>>,
    sites: Vec<ir::Site>,
    /// Filled as compute constructs are reached, indexed by `RegionId`.
    regions: Vec<Option<ir::Region>>,
    /// The global arrays some function rebinds.
    rebound: std::collections::HashSet<hir::VarId>,
}

impl Cx<'_> {
    fn string(&mut self, s: &str) -> StringId {
        let i = match self.strings.iter().position(|x| x == s) {
            Some(i) => i,
            None => {
                self.strings.push(s.to_string());
                self.strings.len() - 1
            }
        };
        StringId(i as u32)
    }

    fn format(&mut self, pieces: Vec<FormatPiece>) -> FormatId {
        let i = match self.formats.iter().position(|x| *x == pieces) {
            Some(i) => i,
            None => {
                self.formats.push(pieces);
                self.formats.len() - 1
            }
        };
        FormatId(i as u32)
    }

    fn site(&mut self, span: Span, what: impl Into<String>) -> SiteId {
        self.sites.push(ir::Site {
            span,
            what: what.into(),
        });
        SiteId(self.options.first_site + self.sites.len() as u32 - 1)
    }

    fn var(&self, v: hir::VarId) -> Option<&'_ hir::VarInfo> {
        self.program.vars.get(v.index())
    }

    fn is_global(&self, v: hir::VarId) -> bool {
        self.var(v).is_some_and(|i| i.kind == VarKind::Global)
    }

    fn var_name(&self, v: hir::VarId) -> String {
        self.var(v)
            .map_or_else(|| format!("v{}", v.0), |i| i.name.clone())
    }

    fn var_ty(&self, v: hir::VarId) -> ir::Ty {
        self.var(v)
            .map_or(ir::Ty::Scalar(hir::ScalarType::I64), |i| ty(i.ty))
    }
}

/// The IR type of a checked type. (`Void`, `Str` and `Error` have no values in a checked
/// program; they map to `bool` so that nothing here has to fail.)
fn ty(t: hir::Type) -> ir::Ty {
    match t {
        hir::Type::Scalar(s) => ir::Ty::Scalar(s),
        hir::Type::Array { elem, rank } => ir::Ty::Array { elem, rank },
        hir::Type::Void | hir::Type::Str | hir::Type::Error => {
            ir::Ty::Scalar(hir::ScalarType::Bool)
        }
    }
}

fn lower_function(cx: &mut Cx, f: &hir::Function) -> ir::Function {
    let analysis = cx.analysis;
    let routine = analysis.routine(f.id);
    let loops = routine.map_or(&[][..], |r| &r.loops[..]);
    // A parameter is borrowed from the caller; one the body rebinds (`a = b`, which releases
    // what `a` held) is retained on entry and owned like a local.
    let rebound = scan::rebound(&f.body.stmts);
    let owns: Vec<bool> = f
        .params
        .iter()
        .map(|p| cx.var_ty(*p).is_array() && rebound.contains(p))
        .collect();
    let mut b = Body::new(cx, Context::Function, loops);
    let params: Vec<_> = f.params.iter().map(|&p| b.declare(p)).collect();
    let owned: Vec<_> = params
        .iter()
        .zip(&owns)
        .filter_map(|(&l, &own)| own.then_some(l))
        .collect();
    b.function_body_owning(&f.body.stmts, &owned);
    let (locals, body) = b.finish();
    ir::Function {
        entry_site: None,
        id: Some(f.id),
        name: f.name.clone(),
        params,
        ret: (f.ret != hir::Type::Void).then(|| ty(f.ret)),
        locals,
        body,
        device: routine.map(|r| r.level),
        span: f.span,
    }
}

fn lower_main(cx: &mut Cx) -> ir::Function {
    let program = cx.program;
    let span = match (program.top.first(), program.top.last()) {
        (Some(a), Some(b)) => a.span.to(b.span),
        _ => Span::default(),
    };
    let mut b = Body::new(cx, Context::Main, &[]);
    b.function_body(&program.top);
    let (locals, body) = b.finish();
    ir::Function {
        id: None,
        name: "main".into(),
        params: Vec::new(),
        ret: None,
        locals,
        body,
        device: None,
        span,
        entry_site: None,
    }
}

/// A region the walk never reached (only possible if the analysis and the program disagree).
fn empty_region(analysis: &Analysis, i: usize) -> ir::Region {
    let info = analysis.regions.get(i);
    ir::Region {
        id: crate::analysis::RegionId(i as u32),
        construct: info.map_or(hir::Construct::Parallel, |r| r.construct),
        span: info.map_or(Span::default(), |r| r.span),
        params: Vec::new(),
        locals: Vec::new(),
        body: Vec::new(),
        reductions: Vec::new(),
        loops: Vec::new(),
        distinct: Vec::new(),
        split: None,
    }
}
