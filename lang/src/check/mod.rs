//! Names and types (LANGUAGE.md sections 2 to 6, and the runtime routines of 7.10): turns the
//! AST into the typed, resolved `hir`.
//!
//! The `Checker` persists across compiles (REPL lines, `Engine::run` calls): globals and
//! functions of earlier committed compiles stay visible, with the same ids. A compile runs in
//! two passes over the top-level statements:
//! 1. `hoist`: every function's signature (so functions may be called before their definition,
//!    and recursively), and the position of every top-level `let` (for the "declared after this
//!    function" error).
//! 2. the statements in order: a `let` declares a global, a function body is checked at the
//!    position of its definition (so it sees exactly the globals declared above it), other
//!    statements become `hir::Program::top`.
//!
//! Submodules: `exprs` (expressions, operators, conversions), `literals` (untyped literals taking
//! their context's type), `stmts` (statements and function bodies), `calls` (user and built-in
//! calls, `printf` formats), `directives` (clauses), `text` (code shown in help lines).

mod calls;
mod directives;
mod exprs;
mod literals;
mod pictures;
mod stmts;
#[cfg(test)]
mod tests;
mod text;

use rustc_hash::FxHashMap;
use std::sync::Arc;

use crate::ast;
use crate::diag::{self, Diagnostic};
use crate::hir::{self, FnId, Type, VarId, VarInfo, VarKind};
use crate::span::Span;
use text::{mentions_float, source_text};

/// Name resolution and type checking, remembering what earlier compiles declared.
#[derive(Default)]
pub struct Checker {
    vars: hir::Vars,
    fns: Vec<FnEntry>,
    /// The global each name refers to now (the latest `let` of that name at the top level).
    globals: FxHashMap<String, VarId>,
    /// The function each name refers to now.
    fn_names: FxHashMap<String, FnId>,
    /// The state before the last `check`, while it is neither committed nor rolled back.
    saved: Option<Saved>,
    /// Free nothing a failed `check` built (`never_free`).
    never_free: bool,
    /// The embedding program's functions (`Builtin::HostCall`), by number, and their numbers
    /// by name.
    host_fns: Vec<HostFn>,
    host_names: FxHashMap<String, u32>,
}

/// A function the embedding program registered: called from host code like a user function.
#[derive(Clone, Debug)]
pub(crate) struct HostFn {
    pub name: String,
    pub params: Vec<Type>,
    /// `Type::Void` when it returns nothing.
    pub ret: Type,
}

struct Saved {
    fns: usize,
    globals: FxHashMap<String, VarId>,
    fn_names: FxHashMap<String, FnId>,
}

/// A function: its signature from the hoisting pass, its checked body once checked.
struct FnEntry {
    sig: Sig,
    def: Option<Arc<hir::Function>>,
}

#[derive(Clone)]
struct Sig {
    name: String,
    name_span: Span,
    params: Vec<ParamSig>,
    ret: Type,
    sig_span: Span,
    span: Span,
    routine: Option<hir::Routine>,
    /// Declared without `-> T` but its body has `return value`: that is reported once, at the
    /// `return`; its calls are poison rather than "has no value" errors (`-> T` fixes both).
    returns_undeclared: bool,
}

#[derive(Clone)]
struct ParamSig {
    name: String,
    ty: Type,
    span: Span,
}

impl Sig {
    /// `fn dot(x: f64[], y: f64[]) -> f64`, for messages.
    fn text(&self) -> String {
        let params: Vec<String> = self
            .params
            .iter()
            .map(|p| format!("{}: {}", p.name, p.ty))
            .collect();
        let mut s = format!("fn {}({})", self.name, params.join(", "));
        if self.ret != Type::Void {
            s += &format!(" -> {}", self.ret);
        }
        s
    }
}

impl Checker {
    pub fn new() -> Checker {
        Checker::default()
    }

    /// A checker for a process that exits after one compile and its diagnostics (`acc check`):
    /// a failed `check` frees nothing it built and rolls nothing back. Freeing a large program's
    /// partial typed tree cost time of its own, and left the heap in pieces that made rendering
    /// the diagnostics afterwards twice as slow (100,000 diagnostics: 1.8 s -> 1.1 s).
    pub fn never_free() -> Checker {
        Checker {
            never_free: true,
            ..Checker::default()
        }
    }

    /// Check one compile's program. On success its declarations are kept provisionally: call
    /// `commit` to keep them or `rollback` to forget them (a new `check` before either rolls
    /// back). On error nothing of it is kept.
    pub fn check(
        &mut self,
        program: &ast::Program,
    ) -> Result<(hir::Program, Vec<Diagnostic>), Vec<Diagnostic>> {
        if self.saved.is_some() {
            self.rollback();
        }
        // The last compile's variables were committed: they become earlier ones now (not at
        // `commit`, when its `Program` still shares the table).
        self.vars.settle();
        self.saved = Some(Saved {
            fns: self.fns.len(),
            globals: self.globals.clone(),
            fn_names: self.fn_names.clone(),
        });
        let first_new_var = self.vars.len() as u32;
        let first_new_fn = self.fns.len() as u32;
        let mut cx = Cx::new(self, first_new_var, first_new_fn);
        let fn_at = cx.hoist(&program.stmts);
        let top = cx.top_level(&program.stmts, &fn_at);
        cx.check_init_order();
        let diags = std::mem::take(&mut cx.diags);
        let device_type_names = std::mem::take(&mut cx.device_type_names);
        if diags.iter().any(Diagnostic::is_error) {
            if cx.ck.never_free {
                std::mem::forget((cx, top));
                return Err(diags);
            }
            self.rollback();
            return Err(diags);
        }
        let functions = self
            .fns
            .iter()
            .map(|f| {
                f.def
                    .clone()
                    .unwrap_or_else(|| Arc::new(placeholder(&f.sig)))
            })
            .collect();
        let program = hir::Program {
            vars: self.vars.clone(),
            functions,
            first_new_var,
            first_new_fn,
            top,
            host_functions: self.host_fns.iter().map(|f| f.name.clone()).collect(),
            device_type_names,
        };
        Ok((program, diags))
    }

    /// The global each name refers to now.
    pub fn current_globals(&self) -> impl Iterator<Item = VarId> + '_ {
        self.globals.values().copied()
    }

    /// The function each name refers to now.
    pub fn current_functions(&self) -> impl Iterator<Item = FnId> + '_ {
        self.fn_names.values().copied()
    }

    /// Declares a function of the embedding program, callable from host code from now on;
    /// gives its number (`Builtin::HostCall`'s first argument). The name must be free: no
    /// function, built-in or other registered function has it.
    pub fn register_host_fn(
        &mut self,
        name: &str,
        params: Vec<Type>,
        ret: Type,
    ) -> Result<u32, String> {
        let valid = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && crate::token::Keyword::from_word(name).is_none();
        if !valid {
            return Err(format!("`{name}` is not a name a script can call"));
        }
        if self.host_names.contains_key(name) {
            return Err(format!("a function `{name}` is registered already"));
        }
        if self.fn_names.contains_key(name) {
            return Err(format!("a script defines a function `{name}` already"));
        }
        if crate::builtins::Builtin::from_name(name).is_some() {
            return Err(format!("`{name}` is a built-in function"));
        }
        let id = self.host_fns.len() as u32;
        self.host_fns.push(HostFn {
            name: name.to_string(),
            params,
            ret,
        });
        self.host_names.insert(name.to_string(), id);
        Ok(id)
    }

    /// The global `name` refers to now, with its type.
    pub fn global(&self, name: &str) -> Option<(VarId, Type)> {
        let id = *self.globals.get(name)?;
        Some((id, self.vars.get(id.index())?.ty))
    }

    /// The names of the globals, for "did you mean" hints.
    pub fn global_names(&self) -> impl Iterator<Item = &str> + '_ {
        self.globals.keys().map(String::as_str)
    }

    /// The signature of the function `name` refers to now.
    pub fn function(&self, name: &str) -> Option<FnSignature> {
        let id = *self.fn_names.get(name)?;
        let sig = &self.fns.get(id.index())?.sig;
        Some(FnSignature {
            id,
            params: sig.params.iter().map(|p| p.ty).collect(),
            ret: sig.ret,
            gang_routine: sig
                .routine
                .as_ref()
                .is_some_and(|r| r.level == hir::RoutineLevel::Gang),
        })
    }

    /// The names of the functions, for "did you mean" hints.
    pub fn function_names(&self) -> impl Iterator<Item = &str> + '_ {
        self.fn_names.keys().map(String::as_str)
    }

    /// Every function a name refers to now, user-defined and registered, with its signature
    /// as messages write it (`fn dot(x: f64[], y: f64[]) -> f64`), sorted by name.
    pub fn signatures(&self) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = self
            .fn_names
            .iter()
            .filter_map(|(name, id)| Some((name.clone(), self.fns.get(id.index())?.sig.text())))
            .collect();
        out.extend(self.host_fns.iter().map(|f| {
            let params: Vec<String> = f.params.iter().map(Type::to_string).collect();
            let mut text = format!("fn {}({})", f.name, params.join(", "));
            if f.ret != Type::Void {
                text += &format!(" -> {}", f.ret);
            }
            (f.name.clone(), text)
        }));
        out.sort();
        out
    }

    /// Every global a name refers to now, with its type, sorted by name.
    pub fn globals(&self) -> Vec<(String, VarId, Type)> {
        let mut out: Vec<(String, VarId, Type)> = self
            .globals
            .iter()
            .filter_map(|(name, &id)| Some((name.clone(), id, self.vars.get(id.index())?.ty)))
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    /// Keep what the last `check` declared.
    pub fn commit(&mut self) {
        self.saved = None;
    }

    /// Forget what the last `check` declared.
    pub fn rollback(&mut self) {
        if let Some(saved) = self.saved.take() {
            self.vars.forget_new();
            self.fns.truncate(saved.fns);
            self.globals = saved.globals;
            self.fn_names = saved.fn_names;
        }
    }
}

/// A function's signature, as an embedder calling it sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct FnSignature {
    pub id: FnId,
    pub params: Vec<Type>,
    /// `Type::Void` when it returns nothing.
    pub ret: Type,
    /// An `acc routine gang` function (it takes the calling gang besides its parameters).
    pub gang_routine: bool,
}

/// A function whose body was never checked (cannot happen in a program without errors; kept so
/// that `Program::functions` is total).
fn placeholder(sig: &Sig) -> hir::Function {
    hir::Function {
        id: FnId(0),
        name: sig.name.clone(),
        name_span: sig.name_span,
        params: Vec::new(),
        ret: sig.ret,
        body: hir::Block {
            stmts: Vec::new(),
            span: sig.span,
        },
        sig_span: sig.sig_span,
        span: sig.span,
        routine: None,
    }
}

/// Whether the statement has a `return value` (outside nested functions).
fn returns_value(s: &ast::Stmt) -> bool {
    let block = |b: &ast::Block| b.stmts.iter().any(returns_value);
    match &s.kind {
        ast::StmtKind::Return(v) => v.is_some(),
        ast::StmtKind::If { then, els, .. } => {
            block(then) || els.as_deref().is_some_and(returns_value)
        }
        ast::StmtKind::While { body, .. } => block(body),
        ast::StmtKind::For(f) => block(&f.body),
        ast::StmtKind::Block(b) => block(b),
        ast::StmtKind::Directive(d) => d.body.as_deref().is_some_and(returns_value),
        _ => false,
    }
}

/// The function whose body is being checked.
struct FnCx {
    id: FnId,
    name: String,
    ret: Type,
    sig_span: Span,
}

/// The state of one `check` call.
struct Cx<'c> {
    ck: &'c mut Checker,
    diags: Vec<Diagnostic>,
    first_new_var: u32,
    first_new_fn: u32,
    /// Block scopes, innermost last. Empty at the top level of the script, where a `let`
    /// declares a global.
    scopes: Vec<FxHashMap<String, VarId>>,
    func: Option<FnCx>,
    loop_depth: u32,
    /// Index of the top-level statement being checked.
    top_pos: usize,
    /// Every top-level `let` of this compile: name -> (statement index, name span).
    top_lets: FxHashMap<String, Vec<(usize, Span)>>,
    /// What each function of this compile touches, and the calls made by top-level code: a
    /// call must not run a function that uses a global whose `let` has not run yet.
    uses: FxHashMap<FnId, Uses>,
    top_calls: Vec<TopCall>,
    /// Names a "did you mean" hint for an unknown name may still compare (each hint compares
    /// every name in scope): a program with a mistake on every line of a million keeps its
    /// hints for the first mistakes and stays linear in its length.
    hint_budget: usize,
    /// Where this compile names a device type (`acc_device_host`, …): `hir::Program`'s.
    device_type_names: Vec<Span>,
}

/// `Cx::hint_budget` at the start of a compile: thousands of hints in a program of a thousand
/// names, a few where there are a hundred thousand.
const HINT_BUDGET: usize = 2_000_000;

/// The globals of this compile a function uses, and the functions it calls, directly.
#[derive(Default)]
struct Uses {
    globals: Vec<VarId>,
    calls: Vec<FnId>,
}

/// A call made by top-level code; `declared` counts the variables declared before it.
struct TopCall {
    callee: FnId,
    span: Span,
    declared: u32,
}

impl<'c> Cx<'c> {
    fn new(ck: &'c mut Checker, first_new_var: u32, first_new_fn: u32) -> Cx<'c> {
        Cx {
            ck,
            diags: Vec::new(),
            first_new_var,
            first_new_fn,
            scopes: Vec::new(),
            func: None,
            loop_depth: 0,
            top_pos: 0,
            top_lets: FxHashMap::default(),
            uses: FxHashMap::default(),
            top_calls: Vec::new(),
            hint_budget: HINT_BUDGET,
            device_type_names: Vec::new(),
        }
    }

    fn error(&mut self, d: Diagnostic) {
        self.diags.push(d);
    }

    // -----------------------------------------------------------------------------------------
    // Pass 1: hoisting
    // -----------------------------------------------------------------------------------------

    /// Declare every function of this compile (signature only) and note the top-level `let`s.
    /// Returns, per top-level statement, the id of the function it defines.
    fn hoist(&mut self, stmts: &[ast::Stmt]) -> Vec<Option<FnId>> {
        let mut fn_at = Vec::with_capacity(stmts.len());
        let mut defined_here: FxHashMap<String, Span> = FxHashMap::default();
        for (pos, stmt) in stmts.iter().enumerate() {
            let (def, routine) = match &stmt.kind {
                ast::StmtKind::Fn(def) => (Some(def), None),
                ast::StmtKind::Directive(d) if d.construct == ast::Construct::Routine => {
                    match d.body.as_deref().map(|b| &b.kind) {
                        Some(ast::StmtKind::Fn(def)) => (Some(def), Some(d)),
                        _ => (None, None),
                    }
                }
                ast::StmtKind::Let { name, .. } => {
                    self.top_lets
                        .entry(name.name.clone())
                        .or_default()
                        .push((pos, name.span));
                    (None, None)
                }
                _ => (None, None),
            };
            let Some(def) = def else {
                fn_at.push(None);
                continue;
            };
            let routine = routine.map(|d| self.routine(d));
            let sig = self.signature(def, stmt.span, routine);
            let id = FnId(self.ck.fns.len() as u32);
            if self.ck.host_names.contains_key(&def.name.name) {
                self.error(
                    Diagnostic::error(
                        format!(
                            "`{}` is a function of the program that embeds acc",
                            def.name.name
                        ),
                        def.name.span,
                        "defined again here",
                    )
                    .with_help("the embedding program registered it by this name: choose another"),
                );
            } else if let Some(&first) = defined_here.get(&def.name.name) {
                self.error(
                    Diagnostic::error(
                        format!("function `{}` is defined twice", def.name.name),
                        def.name.span,
                        "defined again here",
                    )
                    .with_label(first, "first defined here")
                    .with_help("rename one of them"),
                );
            } else {
                defined_here.insert(def.name.name.clone(), def.name.span);
                self.ck.fn_names.insert(def.name.name.clone(), id);
            }
            self.ck.fns.push(FnEntry { sig, def: None });
            fn_at.push(Some(id));
        }
        fn_at
    }

    fn signature(&mut self, def: &ast::FnDef, span: Span, routine: Option<hir::Routine>) -> Sig {
        let mut params: Vec<ParamSig> = Vec::new();
        for p in &def.params {
            if let Some(prev) = params.iter().find(|q| q.name == p.name.name) {
                let prev_span = prev.span;
                self.error(
                    Diagnostic::error(
                        format!("parameter `{}` is declared twice", p.name.name),
                        p.name.span,
                        "declared again here",
                    )
                    .with_label(prev_span, "first declared here"),
                );
            }
            let ty = self.type_expr(&p.ty);
            params.push(ParamSig {
                name: p.name.name.clone(),
                ty,
                span: p.name.span,
            });
        }
        let ret = def.ret.as_ref().map_or(Type::Void, |t| self.type_expr(t));
        let returns_undeclared = def.ret.is_none() && def.body.stmts.iter().any(returns_value);
        Sig {
            name: def.name.name.clone(),
            name_span: def.name.span,
            params,
            ret,
            sig_span: def.sig_span,
            span,
            routine,
            returns_undeclared,
        }
    }

    /// A written type; ranks above 6 are errors.
    fn type_expr(&mut self, t: &ast::TypeExpr) -> Type {
        if t.rank > 6 {
            self.error(
                Diagnostic::error(
                    format!("arrays have at most 6 dimensions, this type has {}", t.rank),
                    t.span,
                    "too many dimensions",
                )
                .with_help("use a rank between 1 (`f64[]`) and 6 (`f64[,,,,,]`)"),
            );
            return Type::Error;
        }
        Type::from_parts(t.elem, t.rank)
    }

    // -----------------------------------------------------------------------------------------
    // Pass 2: the statements in order
    // -----------------------------------------------------------------------------------------

    fn top_level(&mut self, stmts: &[ast::Stmt], fn_at: &[Option<FnId>]) -> Vec<hir::Stmt> {
        let mut top = Vec::with_capacity(stmts.len());
        for (pos, stmt) in stmts.iter().enumerate() {
            self.top_pos = pos;
            if let Some(Some(id)) = fn_at.get(pos) {
                let def = match &stmt.kind {
                    ast::StmtKind::Fn(def) => Some(def),
                    ast::StmtKind::Directive(d) => match d.body.as_deref().map(|b| &b.kind) {
                        Some(ast::StmtKind::Fn(def)) => Some(def),
                        _ => None,
                    },
                    _ => None,
                };
                if let Some(def) = def {
                    self.function(def, *id);
                }
                continue;
            }
            if let Some(s) = self.stmt(stmt) {
                top.push(s);
            }
        }
        top
    }

    // -----------------------------------------------------------------------------------------
    // Variables and scopes
    // -----------------------------------------------------------------------------------------

    /// At the top level of the script (not in a block, not in a function): `let` makes globals.
    fn at_top_level(&self) -> bool {
        self.func.is_none() && self.scopes.is_empty()
    }

    fn declare(&mut self, name: &ast::Ident, ty: Type, kind: VarKind) -> VarId {
        let id = self.ck.vars.push(VarInfo {
            name: name.name.clone(),
            ty,
            kind,
            span: name.span,
            owner: self.func.as_ref().map(|f| f.id),
        });
        match self.scopes.last_mut() {
            Some(scope) => {
                scope.insert(name.name.clone(), id);
            }
            None => {
                self.ck.globals.insert(name.name.clone(), id);
            }
        }
        id
    }

    /// Resolve a variable name in code, noting a function's use of a global of this compile.
    fn resolve_var(&mut self, name: &str) -> Option<VarId> {
        let v = self.lookup_var(name)?;
        if let Some(f) = &self.func {
            if self.var(v).kind == VarKind::Global && self.is_new_var(v) {
                self.uses.entry(f.id).or_default().globals.push(v);
            }
        }
        Some(v)
    }

    /// Note a call of a user function, for the initialization-order check.
    fn note_call(&mut self, callee: FnId, span: Span) {
        if !self.is_new_fn(callee) {
            return;
        }
        match &self.func {
            Some(f) => self.uses.entry(f.id).or_default().calls.push(callee),
            None => self.top_calls.push(TopCall {
                callee,
                span,
                declared: self.ck.vars.len() as u32,
            }),
        }
    }

    /// A top-level call must not run (directly or through other calls) a function that uses a
    /// global declared below the call: that global's `let` has not run yet.
    fn check_init_order(&mut self) {
        let mut reported = rustc_hash::FxHashSet::default();
        for call in std::mem::take(&mut self.top_calls) {
            let mut seen = rustc_hash::FxHashSet::default();
            let mut stack = vec![(call.callee, call.callee)];
            while let Some((f, via)) = stack.pop() {
                if !seen.insert(f) {
                    continue;
                }
                let Some(uses) = self.uses.get(&f) else {
                    continue;
                };
                let late = uses.globals.iter().find(|g| g.0 >= call.declared).copied();
                stack.extend(uses.calls.iter().map(|&c| (c, via)));
                let Some(g) = late else { continue };
                if !reported.insert((call.span.start, g)) {
                    continue;
                }
                let (fname, gname, decl) = {
                    let info = self.var(g);
                    (
                        self.sig(call.callee).name.clone(),
                        info.name.clone(),
                        info.span,
                    )
                };
                let through = if f == call.callee {
                    String::new()
                } else {
                    format!(" (through `{}`)", self.sig(f).name)
                };
                self.error(
                    Diagnostic::error(
                        format!("`{fname}` uses `{gname}`{through} before `{gname}` is declared"),
                        call.span,
                        format!("`{gname}` is not declared yet when this runs"),
                    )
                    .with_label(decl, "declared here")
                    .with_help(format!(
                        "move this call below `let {gname}`, or pass the value as an argument"
                    )),
                );
            }
        }
    }

    fn lookup_var(&self, name: &str) -> Option<VarId> {
        self.scopes
            .iter()
            .rev()
            .find_map(|s| s.get(name).copied())
            .or_else(|| self.ck.globals.get(name).copied())
    }

    fn var(&self, id: VarId) -> &VarInfo {
        &self.ck.vars[id.index()]
    }

    /// Declared by this compile (its spans point into this source).
    fn is_new_var(&self, id: VarId) -> bool {
        id.0 >= self.first_new_var
    }

    fn is_new_fn(&self, id: FnId) -> bool {
        id.0 >= self.first_new_fn
    }

    fn sig(&self, id: FnId) -> &Sig {
        &self.ck.fns[id.index()].sig
    }

    /// Names a variable reference could have meant: variables in scope and built-in constants.
    /// The variable in scope closest to `name`, within the hint budget.
    fn closest_var(&mut self, name: &str) -> Option<String> {
        if self.hint_budget == 0 {
            return None;
        }
        let candidates = self.var_candidates();
        let n = candidates.len();
        let close = diag::closest(name, candidates).map(str::to_string);
        self.hint_budget = self.hint_budget.saturating_sub(n);
        close
    }

    fn var_candidates(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self
            .scopes
            .iter()
            .flat_map(|s| s.keys())
            .chain(self.ck.globals.keys())
            .map(String::as_str)
            .collect();
        names.extend(crate::builtins::BuiltinConst::ALL.iter().map(|c| c.name()));
        names
    }

    /// The error for a variable name that resolves to nothing. `declare` is the help when
    /// nothing better is known (for an assignment: how to declare the variable).
    fn unknown_var(&mut self, name: &ast::Ident, declare: Option<String>) {
        // A top-level `let` of this compile further down?
        let later = self
            .top_lets
            .get(&name.name)
            .and_then(|lets| lets.iter().find(|(pos, _)| *pos > self.top_pos))
            .map(|&(_, span)| span);
        if let Some(decl) = later {
            let d = match &self.func {
                Some(f) => Diagnostic::error(
                    format!("`{}` is declared after this function", name.name),
                    name.span,
                    "used here",
                )
                .with_label(decl, "declared here, below the function")
                .with_label(f.sig_span, "in this function")
                .with_help(format!(
                    "a function sees the globals declared above it: move `let {}` above `fn {}`",
                    name.name, f.name
                )),
                None => Diagnostic::error(
                    format!("`{}` is used before its declaration", name.name),
                    name.span,
                    "used here",
                )
                .with_label(decl, "declared here")
                .with_help(format!("move `let {}` above this statement", name.name)),
            };
            self.error(d);
            return;
        }
        if self.ck.fn_names.contains_key(&name.name)
            || crate::builtins::Builtin::from_name(&name.name).is_some()
        {
            self.error(
                Diagnostic::error(
                    format!("`{}` is a function, not a value", name.name),
                    name.span,
                    "function used as a value",
                )
                .with_help(format!("call it: `{}(…)`", name.name)),
            );
            return;
        }
        let mut d = Diagnostic::error(
            format!("unknown variable `{}`", name.name),
            name.span,
            "not found in this scope",
        );
        if ast::ScalarType::from_name(&name.name).is_some() {
            d = d.with_help(format!(
                "`{}` is a type; a type name is only allowed as the first argument of `zeros`, \
                 `ones` and `random`, or after `as`",
                name.name
            ));
        } else if let Some(close) = self.closest_var(&name.name) {
            d = d.with_help(format!("did you mean `{close}`?"));
        } else if let Some(help) = declare {
            d = d.with_help(help);
        }
        self.error(d);
    }
}
