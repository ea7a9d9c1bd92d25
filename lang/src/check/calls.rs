//! Calls: user functions (arguments converted to the parameter types) and the built-in
//! functions of `builtins` (LANGUAGE.md sections 6 and 7.10), `printf` formats included.

use crate::ast::{self, ExprKind as A, ScalarType};
use crate::builtins::{parse_format, Builtin, FormatArg, FormatPiece, Shape};
use crate::diag::{self, Diagnostic};
use crate::hir::{Const, Expr, ExprKind, FnId, Type};
use crate::span::Span;

use super::exprs::Target;
use super::literals::{convert, poison, Checked, FlexKind};
use super::Cx;

/// The help for an unknown function that other languages have under that name (`length`,
/// `println`, `range`, `float(n)`); near misses of acc's names are found by edit distance.
fn known_elsewhere(name: &str, args: &[ast::Expr]) -> Option<String> {
    let builtin = |b: &str| Some(format!("did you mean `{b}`?"));
    let arg = args
        .first()
        .filter(|_| args.len() == 1)
        .and_then(super::source_text);
    let convert = |t: &str| match &arg {
        Some(a) => Some(format!("convert with `as`: `{a} as {t}`")),
        None => Some(format!("convert with `as {t}`")),
    };
    match name {
        "length" | "lenght" | "lengh" | "lentgh" | "numel" => builtin("len"),
        "println" | "print_ln" | "puts" | "echo" | "write" | "writeln" | "disp" | "display" => {
            builtin("print")
        }
        "print_f" | "sprintf" | "fprintf" | "printfn" => builtin("printf"),
        "array" | "empty" | "alloc" | "zeroes" | "new_array" => builtin("zeros"),
        "range" | "arange" | "xrange" | "seq" => Some(format!(
            "acc has no `{name}`: count with a `for i in 0..n` loop, or make the array \
             0, 1, …, n-1 with `iota(n)`"
        )),
        "mean" | "avg" | "average" => {
            let a = arg.as_deref().unwrap_or("a");
            Some(format!("the mean of an array is `sum({a}) / len({a})`"))
        }
        "maxval" | "amax" | "max_element" => builtin("maximum"),
        "minval" | "amin" | "min_element" => builtin("minimum"),
        "rand" | "rng" => builtin("random"),
        "srand" => builtin("seed"),
        "time" | "now" => builtin("clock"),
        "ln" => builtin("log"),
        "power" => builtin("pow"),
        "abort" | "quit" => builtin("exit"),
        "int" | "long" => convert("i64"),
        "float" | "double" => convert("f64"),
        _ => {
            // A type name called like a function: `f32(n)`.
            ScalarType::from_name(name).and_then(|t| convert(t.name()))
        }
    }
}

/// The source span of bytes `start..end` of a decoded string literal written at `lit` (quotes
/// included). An escape (`\n`, `\t`, `\"`, `\\`) is two source bytes for one decoded byte. A
/// raw tab decodes like `\t`: when the lengths do not add up (raw tabs, or a span that is not
/// just the literal), offsets are unknown and the whole literal is returned.
fn literal_span(lit: Span, decoded: &str, start: usize, end: usize) -> Span {
    let source_len = |s: &str| -> usize {
        s.chars()
            .map(|c| match c {
                '\n' | '\t' | '"' | '\\' => 2,
                c => c.len_utf8(),
            })
            .sum()
    };
    let (Some(before), Some(inside)) = (decoded.get(..start), decoded.get(start..end)) else {
        return lit;
    };
    if source_len(decoded) + 2 != lit.len() {
        return lit;
    }
    let from = lit.start as usize + 1 + source_len(before);
    let to = (from + source_len(inside)).min(lit.end as usize);
    Span::new(from.min(to), to)
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// "`f` takes 2 arguments but 3 were given", at the call.
fn wrong_arg_count(name: &str, params: usize, args: usize, span: Span) -> Diagnostic {
    let given = if args == 1 {
        "1 was".to_string()
    } else {
        format!("{args} were")
    };
    Diagnostic::error(
        format!(
            "`{name}` takes {} but {given} given",
            plural(params, "argument")
        ),
        span,
        format!("expected {}", plural(params, "argument")),
    )
}

impl Cx<'_> {
    pub(super) fn call(
        &mut self,
        span: Span,
        name: &ast::Ident,
        args: &[ast::Expr],
        hint: Option<Type>,
    ) -> Expr {
        // User definitions shadow built-in functions.
        if let Some(&id) = self.ck.fn_names.get(&name.name) {
            return self.user_call(span, id, args);
        }
        if let Some(&id) = self.ck.host_names.get(&name.name) {
            return self.host_call(span, id, args);
        }
        if let Some(b) = Builtin::from_name(&name.name) {
            if b.is_mpi() && !crate::builtins::mpi_enabled() {
                self.check_args_only(args);
                self.error(
                    Diagnostic::error(
                        format!(
                            "`{}` needs MPI, and this acc was built without it",
                            b.name()
                        ),
                        name.span,
                        "an MPI built-in",
                    )
                    .with_help(
                        "build acc with the `mpi` feature (`cargo build --release -p acc-repl \
                         --features mpi`, with an MPI library such as Debian's libopenmpi-dev \
                         installed) and run the script with `mpirun -np N acc FILE.acc`",
                    ),
                );
                return poison(span);
            }
            return self.builtin_call(span, b, args, hint);
        }
        self.check_args_only(args);
        let is_var = self.lookup_var(&name.name).is_some();
        let mut d = if is_var {
            Diagnostic::error(
                format!("`{}` is a variable, not a function", name.name),
                name.span,
                "called here",
            )
        } else {
            Diagnostic::error(
                format!("unknown function `{}`", name.name),
                name.span,
                "not found",
            )
        };
        // Within the hint budget (`Cx::hint_budget`), as for variables.
        let close = (self.hint_budget > 0)
            .then(|| {
                let candidates = self
                    .ck
                    .fn_names
                    .keys()
                    .map(String::as_str)
                    .chain(Builtin::ALL.iter().map(|b| b.name()));
                diag::closest(&name.name, candidates).map(str::to_string)
            })
            .flatten();
        let examined = self.ck.fn_names.len() + Builtin::ALL.len();
        self.hint_budget = self.hint_budget.saturating_sub(examined);
        let help = close
            .map(|close| format!("did you mean `{close}`?"))
            .or_else(|| {
                (!is_var)
                    .then(|| known_elsewhere(&name.name, args))
                    .flatten()
            });
        if let Some(help) = help {
            d = d.with_help(help);
        }
        self.error(d);
        poison(span)
    }

    /// Check arguments of a call that failed, for their own errors.
    fn check_args_only(&mut self, args: &[ast::Expr]) {
        for a in args {
            if let A::Index(base, _) = &a.kind {
                // May be a section; only the array is checked.
                let _ = self.expr_any(base, None);
            } else {
                let _ = self.expr_any(a, None);
            }
        }
    }

    fn user_call(&mut self, span: Span, id: FnId, args: &[ast::Expr]) -> Expr {
        let sig = self.sig(id).clone();
        if args.len() != sig.params.len() {
            let mut d = wrong_arg_count(&sig.name, sig.params.len(), args.len(), span)
                .with_help(format!("the signature is `{}`", sig.text()));
            if self.is_new_fn(id) {
                d = d.with_label(sig.sig_span, "defined here");
            }
            self.error(d);
            self.check_args_only(args);
            return poison(span);
        }
        self.note_call(id, span);
        let new = self.is_new_fn(id);
        let args = args
            .iter()
            .zip(&sig.params)
            .map(|(a, p)| {
                self.coerce(
                    a,
                    p.ty,
                    Target::Arg {
                        func: &sig.name,
                        param: &p.name,
                        decl: new.then_some(p.span),
                    },
                )
            })
            .collect();
        if sig.returns_undeclared {
            // Its `return value` is reported in the function; no "has no value" here.
            return poison(span);
        }
        Expr {
            kind: ExprKind::Call(id, args),
            ty: sig.ret,
            span,
        }
    }

    /// A call of a function of the embedding program: `Builtin::HostCall` with its number
    /// first, then the arguments converted to its parameter types.
    fn host_call(&mut self, span: Span, id: u32, args: &[ast::Expr]) -> Expr {
        let f = self.ck.host_fns[id as usize].clone();
        if args.len() != f.params.len() {
            let params: Vec<String> = f.params.iter().map(Type::to_string).collect();
            let ret = match f.ret {
                Type::Void => String::new(),
                t => format!(" -> {t}"),
            };
            self.error(
                wrong_arg_count(&f.name, f.params.len(), args.len(), span).with_help(format!(
                    "`{}` is a function of the program that embeds acc: `{}({}){ret}`",
                    f.name,
                    f.name,
                    params.join(", ")
                )),
            );
            self.check_args_only(args);
            return poison(span);
        }
        let mut values = vec![Expr {
            kind: ExprKind::Const(Const::I64(i64::from(id))),
            ty: Type::I64,
            span,
        }];
        for (i, (a, &p)) in args.iter().zip(&f.params).enumerate() {
            let param = format!("#{}", i + 1);
            values.push(self.coerce(
                a,
                p,
                Target::Arg {
                    func: &f.name,
                    param: &param,
                    decl: None,
                },
            ));
        }
        Expr {
            kind: ExprKind::Builtin(Builtin::HostCall, values),
            ty: f.ret,
            span,
        }
    }

    /// Report a wrong argument count; true when the count is right.
    pub(super) fn arity(
        &mut self,
        b: Builtin,
        args: &[ast::Expr],
        span: Span,
        min: usize,
        max: usize,
    ) -> bool {
        if (min..=max).contains(&args.len()) {
            return true;
        }
        let expected = if min == max {
            plural(min, "argument")
        } else if max == usize::MAX {
            format!("at least {}", plural(min, "argument"))
        } else {
            format!("{min} to {max} arguments")
        };
        let given = if args.len() == 1 {
            "1 was".to_string()
        } else {
            format!("{} were", args.len())
        };
        self.error(
            Diagnostic::error(
                format!("`{}` takes {expected} but {given} given", b.name()),
                span,
                format!("expected {expected}"),
            )
            .with_help(format!("the signature is `{}`", b.signature())),
        );
        self.check_args_only(args);
        false
    }

    fn builtin_call(
        &mut self,
        span: Span,
        b: Builtin,
        args: &[ast::Expr],
        hint: Option<Type>,
    ) -> Expr {
        let out = match b.shape() {
            Shape::ArrayOfType => self.array_of_type(b, args, span),
            Shape::Fill => self.fill(b, args, span, hint),
            Shape::Fixed(params, ret) => {
                if !self.arity(b, args, span, params.len(), params.len()) {
                    return poison(span);
                }
                let xs = args
                    .iter()
                    .zip(params.iter())
                    .map(|(a, &p)| {
                        self.integer(a, &format!("an argument of `{}`", b.name()), Some(p))
                    })
                    .collect();
                Some((xs, ret.map_or(Type::Void, Type::Scalar)))
            }
            Shape::ArrayQuery => self.array_query(b, args, span),
            Shape::FloatMath(n) => self.math(b, args, span, usize::from(n), true),
            Shape::NumMath(n) => self.math(b, args, span, usize::from(n), false),
            Shape::FloatTest => self
                .math(b, args, span, 1, true)
                .map(|(xs, _)| (xs, Type::BOOL)),
            Shape::DataRoutine(ret) => {
                if !self.arity(b, args, span, 1, 1) {
                    return poison(span);
                }
                let x = self.data_arg(b, &args[0]);
                (!x.ty.is_error()).then(|| (vec![x], ret.map_or(Type::Void, Type::Scalar)))
            }
            Shape::Special => self.special(b, args, span, hint),
        };
        match out {
            Some((args, ty)) if !args.iter().any(|a| a.ty.is_error()) => Expr {
                kind: ExprKind::Builtin(b, args),
                ty,
                span,
            },
            _ => poison(span),
        }
    }

    /// Array dimensions: 1 to 6 integers, as `i64`.
    fn dims(&mut self, b: Builtin, dims: &[ast::Expr], span: Span) -> Option<Vec<Expr>> {
        if dims.is_empty() || dims.len() > 6 {
            self.error(
                Diagnostic::error(
                    format!(
                        "`{}` needs 1 to 6 dimensions, found {}",
                        b.name(),
                        dims.len()
                    ),
                    span,
                    "wrong number of dimensions",
                )
                .with_help(format!("the signature is `{}`", b.signature())),
            );
            self.check_args_only(dims);
            return None;
        }
        Some(
            dims.iter()
                .map(|d| self.integer(d, "an array dimension", Some(ScalarType::I64)))
                .collect(),
        )
    }

    /// `zeros ones random`: `[T,] d0, …`.
    fn array_of_type(
        &mut self,
        b: Builtin,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<(Vec<Expr>, Type)> {
        let (elem, dims) = match args.first().map(|a| &a.kind) {
            Some(A::Name(id)) if ast::ScalarType::from_name(&id.name).is_some() => {
                (ast::ScalarType::from_name(&id.name), &args[1..])
            }
            _ => (None, args),
        };
        let elem = elem.unwrap_or(ScalarType::F64);
        if b == Builtin::Random && !elem.is_float() {
            let at = args.first().map_or(span, |a| a.span);
            self.error(
                Diagnostic::error(
                    format!("`random` makes f32 or f64 arrays, not {}", elem.name()),
                    at,
                    "not a float type",
                )
                .with_help("uniform floats in [0, 1): `random(f32, n)` or `random(n)` (f64)"),
            );
            return None;
        }
        let dims = self.dims(b, dims, span)?;
        let rank = dims.len() as u8;
        Some((dims, Type::Array { elem, rank }))
    }

    /// `fill(v, d0, …)`.
    fn fill(
        &mut self,
        b: Builtin,
        args: &[ast::Expr],
        span: Span,
        hint: Option<Type>,
    ) -> Option<(Vec<Expr>, Type)> {
        if !self.arity(b, args, span, 2, 7) {
            return None;
        }
        let hint = hint.and_then(Type::elem).map(Type::Scalar);
        let v = self.value(&args[0], hint);
        let elem = match v.ty {
            Type::Scalar(s) => s,
            Type::Error => return None,
            t => {
                self.error(
                    Diagnostic::error(
                        format!("the value of `fill` must be a scalar, found {t}"),
                        v.span,
                        format!("this is {t}"),
                    )
                    .with_help("`copy(a)` copies an array"),
                );
                return None;
            }
        };
        let mut xs = vec![v];
        xs.extend(self.dims(b, &args[1..], span)?);
        let rank = (xs.len() - 1) as u8;
        Some((xs, Type::Array { elem, rank }))
    }

    /// An argument that must be an array.
    pub(super) fn array_arg(
        &mut self,
        b: Builtin,
        a: &ast::Expr,
    ) -> Option<(Expr, ScalarType, u8)> {
        let x = self.value(a, None);
        match x.ty {
            Type::Array { elem, rank } => Some((x, elem, rank)),
            Type::Error => None,
            t => {
                self.error(Diagnostic::error(
                    format!("`{}` takes an array, found {t}", b.name()),
                    x.span,
                    format!("this is {t}"),
                ));
                None
            }
        }
    }

    /// `len rank copy sum product maximum minimum`.
    fn array_query(
        &mut self,
        b: Builtin,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<(Vec<Expr>, Type)> {
        if !self.arity(b, args, span, 1, 1) {
            return None;
        }
        let (x, elem, _) = self.array_arg(b, &args[0])?;
        let ty = x.ty;
        let result = match b {
            Builtin::Copy => ty,
            Builtin::Len | Builtin::Rank => Type::I64,
            _ if elem == ScalarType::Bool => {
                self.error(Diagnostic::error(
                    format!("`{}` needs a numeric array, found {ty}", b.name()),
                    x.span,
                    format!("this is {ty}"),
                ));
                return None;
            }
            Builtin::Sum | Builtin::Product if elem.is_int() => Type::I64,
            _ => Type::Scalar(elem),
        };
        Some((vec![x], result))
    }

    /// Generic math: the arguments' common type (`float_only`: integers become `f64`, as C).
    fn math(
        &mut self,
        b: Builtin,
        args: &[ast::Expr],
        span: Span,
        n: usize,
        float_only: bool,
    ) -> Option<(Vec<Expr>, Type)> {
        if !self.arity(b, args, span, n, n) {
            return None;
        }
        let mut checked = Vec::with_capacity(n);
        let mut ok = true;
        for a in args {
            let c = self.expr(a, None);
            if let Checked::Done(x) = &c {
                if !x.ty.is_numeric() {
                    ok = false;
                    if !x.ty.is_error() {
                        let mut d = Diagnostic::error(
                            format!("`{}` needs a number, found {}", b.name(), x.ty),
                            x.span,
                            format!("this is {}", x.ty),
                        );
                        if x.ty.is_array() {
                            d = d.with_help("apply it to each element in a loop");
                        }
                        self.error(d);
                    }
                }
            }
            checked.push(c);
        }
        if !ok {
            return None;
        }
        let (xs, t) = self.unify(checked, float_only.then_some(ScalarType::F64));
        let mut t = t?;
        if float_only && t.is_int() {
            t = ScalarType::F64;
        }
        let xs = xs.into_iter().map(|x| convert(x, t, false)).collect();
        Some((xs, Type::Scalar(t)))
    }

    /// Settle operands to one scalar type, C's usual arithmetic conversions: untyped literals
    /// follow the typed operands (or `hint` when all are untyped). `None` for the type when
    /// they do not share one (bool with numbers, non-scalars); the exprs are then unconverted.
    pub(super) fn unify(
        &mut self,
        checked: Vec<Checked<'_>>,
        hint: Option<ScalarType>,
    ) -> (Vec<Expr>, Option<ScalarType>) {
        let mut peer: Option<ScalarType> = None;
        let mut flex: Option<FlexKind> = None;
        for c in &checked {
            match c {
                Checked::Done(x) => {
                    if let Some(s) = x.ty.scalar() {
                        peer = Some(peer.map_or(s, |p| p.max(s)));
                    }
                }
                Checked::Flex(_, k) => flex = Some(flex.map_or(*k, |f| f.join(*k))),
            }
        }
        let peer = match (peer, flex, hint) {
            (Some(p), _, _) => p,
            (None, Some(k), Some(h)) if h.is_numeric() && (k == FlexKind::Int || h.is_float()) => h,
            (None, Some(k), _) => k.default_type(),
            (None, None, _) => ScalarType::F64,
        };
        let xs: Vec<Expr> = checked
            .into_iter()
            .map(|c| self.settle_with_peer(c, Type::Scalar(peer)))
            .collect();
        let mut common: Option<ScalarType> = None;
        let mut mixed = false;
        for x in &xs {
            match x.ty.scalar() {
                Some(s) => {
                    common = match common {
                        None => Some(s),
                        Some(c) if c == s => Some(c),
                        Some(c) if c.is_numeric() && s.is_numeric() => Some(c.max(s)),
                        Some(c) => {
                            mixed = true;
                            Some(c)
                        }
                    }
                }
                None => mixed |= !x.ty.is_error(),
            }
        }
        if mixed {
            return (xs, None);
        }
        match common {
            Some(t) => (
                xs.into_iter().map(|x| convert(x, t, false)).collect(),
                Some(t),
            ),
            None => (xs, None),
        }
    }

    /// The argument of a data routine: an array, or a section `a[start:count, …]`.
    /// An MPI buffer: an array, or a section of one in which a single index `i` stands for
    /// the range `i:1` (`a[1, 0:m]`, a row).
    fn mpi_buffer(&mut self, b: Builtin, a: &ast::Expr) -> Expr {
        if let A::Index(base, idx) = &a.kind {
            if idx.iter().any(|i| matches!(i.kind, A::Section(..))) {
                let one = |span: Span| ast::Expr {
                    kind: A::Int(1, None),
                    span,
                };
                let idx = idx
                    .iter()
                    .map(|i| match &i.kind {
                        A::Section(..) => i.clone(),
                        _ => ast::Expr {
                            kind: A::Section(
                                Some(Box::new(i.clone())),
                                Some(Box::new(one(i.span))),
                            ),
                            span: i.span,
                        },
                    })
                    .collect();
                let section = ast::Expr {
                    kind: A::Index(base.clone(), idx),
                    span: a.span,
                };
                return self.data_arg(b, &section);
            }
        }
        self.data_arg(b, a)
    }

    /// `mpi_allreduce(x, "op")` and `mpi_bcast(x, root)`: a scalar (the call's value is the
    /// result) or an array or section (reduced or broadcast in place).
    fn mpi_collective(
        &mut self,
        b: Builtin,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<(Vec<Expr>, Type)> {
        if !self.arity(b, args, span, 2, 2) {
            return None;
        }
        let is_section = matches!(&args[0].kind, A::Index(_, idx)
            if idx.iter().any(|i| matches!(i.kind, A::Section(..))));
        let x = if is_section {
            self.mpi_buffer(b, &args[0])
        } else {
            let c = self.expr_any(&args[0], None);
            self.settle(c, None)
        };
        let ty = match x.ty {
            Type::Error => return None,
            Type::Scalar(_) => x.ty,
            Type::Array { .. } => Type::Void,
            t => {
                self.error(Diagnostic::error(
                    format!(
                        "`{}` takes a number, a bool or an array, found {t}",
                        b.name()
                    ),
                    x.span,
                    format!("this is {t}"),
                ));
                return None;
            }
        };
        let second = if b == Builtin::MpiBcast {
            self.integer(&args[1], "the root rank", Some(ScalarType::I32))
        } else {
            let elem = x.ty.elem().or(x.ty.scalar())?;
            let op = self.mpi_op(&args[1], elem)?;
            Expr {
                kind: ExprKind::Const(Const::I32(op)),
                ty: Type::Scalar(ScalarType::I32),
                span: args[1].span,
            }
        };
        Some((vec![x, second], ty))
    }

    /// The reduction operator of `mpi_allreduce`, a string literal naming one of the
    /// language's reduction operators that applies to `elem`: its code (`MPI_OPS`).
    fn mpi_op(&mut self, a: &ast::Expr, elem: ScalarType) -> Option<i32> {
        use crate::builtins::MPI_OPS;
        let s = self.string_literal(a, "the operator of `mpi_allreduce`")?;
        let ExprKind::Str(op) = &s.kind else {
            return None;
        };
        let list = MPI_OPS.map(|o| format!("\"{o}\"")).join(", ");
        let Some(code) = MPI_OPS.iter().position(|o| o == op) else {
            self.error(
                Diagnostic::error(
                    format!("`mpi_allreduce` has no operator \"{op}\""),
                    a.span,
                    "not a reduction operator",
                )
                .with_help(format!("the operators are {list}")),
            );
            return None;
        };
        let fits = match code {
            0..=3 => elem.is_numeric(),
            4..=6 => elem.is_int(),
            _ => elem == ScalarType::Bool,
        };
        if !fits {
            let help = match code {
                0..=3 => "`bool` values reduce with \"&&\" or \"||\"",
                4..=6 => "bitwise operators reduce integers",
                _ => "logical operators reduce `bool` values",
            };
            self.error(
                Diagnostic::error(
                    format!(
                        "`mpi_allreduce` operator \"{op}\" does not apply to {}",
                        elem.name()
                    ),
                    a.span,
                    format!("not an operator for {}", elem.name()),
                )
                .with_help(help),
            );
            return None;
        }
        Some(code as i32)
    }

    fn data_arg(&mut self, b: Builtin, a: &ast::Expr) -> Expr {
        if let A::Index(base, idx) = &a.kind {
            if idx.iter().any(|i| matches!(i.kind, A::Section(..))) {
                let bx = self.value(base, None);
                let mut ranges = Vec::with_capacity(idx.len());
                for i in idx {
                    match &i.kind {
                        A::Section(start, count) => ranges.push(ast::SectionRange {
                            start: start.as_deref().cloned(),
                            count: count.as_deref().cloned(),
                            span: i.span,
                        }),
                        _ => {
                            self.error(
                                Diagnostic::error(
                                    "a section cannot mix indices and ranges",
                                    i.span,
                                    "an index",
                                )
                                .with_help("write a single index `i` as the range `i:1`"),
                            );
                            return poison(a.span);
                        }
                    }
                }
                if bx.ty.is_error() {
                    return poison(a.span);
                }
                let name = match &base.kind {
                    A::Name(id) => id.name.clone(),
                    _ => "array".to_string(),
                };
                let Some(ranges) = self.section_ranges(&name, bx.ty, &ranges, a.span) else {
                    return poison(a.span);
                };
                let ty = bx.ty;
                return Expr {
                    kind: ExprKind::Section {
                        base: Box::new(bx),
                        ranges,
                    },
                    ty,
                    span: a.span,
                };
            }
        }
        let x = self.value(a, None);
        if x.ty.is_array() || x.ty.is_error() {
            return x;
        }
        let help = if b.is_mpi() {
            "send a scalar as an array of one element: `let buf = fill(x, 1)`"
        } else {
            "for a scalar, use a data directive: `acc enter data copyin(x)`"
        };
        self.error(
            Diagnostic::error(
                format!(
                    "`{}` takes an array or an array section, found {}",
                    b.name(),
                    x.ty
                ),
                x.span,
                format!("this is {}", x.ty),
            )
            .with_help(help),
        );
        poison(x.span)
    }

    /// The built-ins checked by hand.
    fn special(
        &mut self,
        b: Builtin,
        args: &[ast::Expr],
        span: Span,
        hint: Option<Type>,
    ) -> Option<(Vec<Expr>, Type)> {
        match b {
            Builtin::Iota => {
                if !self.arity(b, args, span, 1, 1) {
                    return None;
                }
                let n = self.integer(&args[0], "the length of `iota`", Some(ScalarType::I64));
                Some((
                    vec![n],
                    Type::Array {
                        elem: ScalarType::I64,
                        rank: 1,
                    },
                ))
            }
            Builtin::MpiAllreduce | Builtin::MpiBcast => self.mpi_collective(b, args, span),
            Builtin::MpiSend | Builtin::MpiRecv => {
                if !self.arity(b, args, span, 2, 2) {
                    return None;
                }
                let x = self.mpi_buffer(b, &args[0]);
                let what = if b == Builtin::MpiSend {
                    "the destination rank"
                } else {
                    "the source rank"
                };
                let r = self.integer(&args[1], what, Some(ScalarType::I32));
                Some((vec![x, r], Type::Void))
            }
            Builtin::MpiSendrecv => {
                if !self.arity(b, args, span, 4, 4) {
                    return None;
                }
                let s = self.mpi_buffer(b, &args[0]);
                let dest = self.integer(&args[1], "the destination rank", Some(ScalarType::I32));
                let r = self.mpi_buffer(b, &args[2]);
                let src = self.integer(&args[3], "the source rank", Some(ScalarType::I32));
                if let (Some(se), Some(re)) = (s.ty.elem(), r.ty.elem()) {
                    if se != re {
                        self.error(
                            Diagnostic::error(
                                format!(
                                    "`mpi_sendrecv` sends and receives one element type, \
                                     found {} and {}",
                                    s.ty, r.ty
                                ),
                                r.span,
                                format!("this is {}", r.ty),
                            )
                            .with_label(s.span, format!("the sent data is {}", s.ty)),
                        );
                        return None;
                    }
                }
                Some((vec![s, dest, r, src], Type::Void))
            }
            Builtin::Linspace => {
                if !self.arity(b, args, span, 3, 3) {
                    return None;
                }
                let mut xs = Vec::with_capacity(3);
                for (a, what) in args[..2].iter().zip(["start", "end"]) {
                    let x = self.value(a, Some(Type::F64));
                    let x = self.convert_to(x, Type::F64, Target::Other(what));
                    xs.push(x);
                }
                xs.push(self.integer(&args[2], "the count of `linspace`", Some(ScalarType::I64)));
                Some((
                    xs,
                    Type::Array {
                        elem: ScalarType::F64,
                        rank: 1,
                    },
                ))
            }
            Builtin::Size => {
                if !self.arity(b, args, span, 2, 2) {
                    return None;
                }
                let a = self.array_arg(b, &args[0]);
                let d = self.integer(&args[1], "the dimension of `size`", Some(ScalarType::I64));
                Some((vec![a?.0, d], Type::I64))
            }
            Builtin::AccMemcpyD2d => {
                if !self.arity(b, args, span, 4, 4) {
                    return None;
                }
                let dst = self.array_arg(b, &args[0]);
                let src = self.array_arg(b, &args[1]);
                let nums = [
                    (&args[2], "the destination device"),
                    (&args[3], "the source device"),
                ]
                .map(|(a, what)| self.integer(a, what, Some(ScalarType::I32)));
                let ((dst, de, _), (src, se, _)) = (dst?, src?);
                if de != se {
                    self.error(
                        Diagnostic::error(
                            format!(
                                "`acc_memcpy_d2d` copies between arrays of one element type, \
                                 found {} and {}",
                                dst.ty, src.ty
                            ),
                            src.span,
                            format!("this is {}", src.ty),
                        )
                        .with_label(dst.span, format!("the destination is {}", dst.ty)),
                    );
                    return None;
                }
                let [dn, sn] = nums;
                Some((vec![dst, src, dn, sn], Type::Void))
            }
            Builtin::Reshape => {
                if !self.arity(b, args, span, 2, 7) {
                    return None;
                }
                let a = self.array_arg(b, &args[0]);
                let dims = self.dims(b, &args[1..], span)?;
                let (a, elem, _) = a?;
                let rank = dims.len() as u8;
                let mut xs = vec![a];
                xs.extend(dims);
                Some((xs, Type::Array { elem, rank }))
            }
            Builtin::Print => {
                let mut xs = Vec::with_capacity(args.len());
                for a in args {
                    let c = self.expr_any(a, None);
                    let x = self.settle(c, None);
                    if x.ty == Type::Void {
                        self.error(Diagnostic::error(
                            "this call has no value to print",
                            x.span,
                            "returns nothing",
                        ));
                        xs.push(poison(x.span));
                    } else {
                        xs.push(x);
                    }
                }
                Some((xs, Type::Void))
            }
            Builtin::Printf => self.printf(args, span),
            Builtin::Imshow => self.imshow(args, span),
            Builtin::Plot => self.plot(args, span),
            Builtin::Assert => {
                if !self.arity(b, args, span, 1, 2) {
                    return None;
                }
                let mut xs = vec![self.condition(&args[0], "the condition of `assert`")];
                if let Some(m) = args.get(1) {
                    xs.push(self.string_literal(m, "the message of `assert`")?);
                }
                Some((xs, Type::Void))
            }
            Builtin::Param => {
                if !self.arity(b, args, span, 2, 2) {
                    return None;
                }
                let name = self.string_literal(&args[0], "the name of `param`");
                let default = self.value(&args[1], hint.filter(|t| t.is_scalar()));
                if !default.ty.is_scalar() {
                    if !default.ty.is_error() {
                        self.error(
                            Diagnostic::error(
                                format!(
                                    "the default of `param` must be a scalar, found {}",
                                    default.ty
                                ),
                                default.span,
                                format!("this is {}", default.ty),
                            )
                            .with_help("a parameter is a number or a bool: `param(\"n\", 1000)`"),
                        );
                    }
                    return None;
                }
                let ty = default.ty;
                Some((vec![name?, default], ty))
            }
            _ => {
                // Every other built-in has a regular shape.
                self.check_args_only(args);
                None
            }
        }
    }

    pub(super) fn string_literal(&mut self, a: &ast::Expr, what: &str) -> Option<Expr> {
        match &a.kind {
            A::Str(s) => Some(Expr {
                kind: ExprKind::Str(s.clone()),
                ty: Type::Str,
                span: a.span,
            }),
            _ => {
                let _ = self.expr_any(a, None);
                self.error(Diagnostic::error(
                    format!("{what} must be a string literal"),
                    a.span,
                    "not a string literal",
                ));
                None
            }
        }
    }

    /// `printf("format", values…)`: the format is parsed now and every value checked against
    /// its conversion.
    fn printf(&mut self, args: &[ast::Expr], span: Span) -> Option<(Vec<Expr>, Type)> {
        if !self.arity(Builtin::Printf, args, span, 1, usize::MAX) {
            return None;
        }
        let (fmt_expr, values) = (&args[0], &args[1..]);
        let A::Str(fmt) = &fmt_expr.kind else {
            self.check_args_only(args);
            self.error(
                Diagnostic::error(
                    "the format of `printf` must be a string literal",
                    fmt_expr.span,
                    "not a string literal",
                )
                .with_help("write the format in place: `printf(\"%d\\n\", x)`"),
            );
            return None;
        };
        let pieces = match parse_format(fmt) {
            Ok(p) => p,
            Err(e) => {
                self.check_args_only(values);
                self.error(
                    Diagnostic::error(
                        e.message,
                        literal_span(fmt_expr.span, fmt, e.start, e.end),
                        "not a valid conversion",
                    )
                    .with_help("conversions: %d %i %u %x %f %e %g %s %c, and %% for `%`"),
                );
                return None;
            }
        };
        let specs: Vec<_> = pieces
            .iter()
            .filter_map(|p| match p {
                FormatPiece::Spec(s) => Some(s),
                FormatPiece::Text(_) => None,
            })
            .collect();
        let mut xs = vec![Expr {
            kind: ExprKind::Str(fmt.clone()),
            ty: Type::Str,
            span: fmt_expr.span,
        }];
        let mut ok = true;
        for (i, v) in values.iter().enumerate() {
            let Some(spec) = specs.get(i) else {
                self.check_args_only(&values[i..]);
                let extra = values[i].span.to(values[values.len() - 1].span);
                self.error(
                    Diagnostic::error(
                        format!(
                            "`printf` has {} but the format has {}",
                            plural(values.len(), "value"),
                            plural(specs.len(), "conversion")
                        ),
                        extra,
                        "no conversion for this",
                    )
                    .with_label(fmt_expr.span, "the format"),
                );
                return None;
            };
            let conv = fmt.get(spec.start..spec.end).unwrap_or("%");
            let conv_span = literal_span(fmt_expr.span, fmt, spec.start, spec.end);
            let x = match spec.arg() {
                FormatArg::Str => match &v.kind {
                    A::Str(s) => Expr {
                        kind: ExprKind::Str(s.clone()),
                        ty: Type::Str,
                        span: v.span,
                    },
                    _ => {
                        let x = self.value(v, None);
                        if !x.ty.is_error() {
                            self.printf_mismatch(conv, "a string", &x, conv_span, None);
                        }
                        ok = false;
                        continue;
                    }
                },
                FormatArg::Int | FormatArg::Char => {
                    let c = self.expr_any(v, None);
                    if let Checked::Flex(_, FlexKind::Float) = c {
                        let x = self.settle(c, None);
                        let help = "use `%f`, `%e` or `%g` for floats".to_string();
                        self.printf_mismatch(conv, "an integer", &x, conv_span, Some(help));
                        ok = false;
                        continue;
                    }
                    let x = self.settle(c, None);
                    if !x.ty.is_int() {
                        if !x.ty.is_error() {
                            let help = if x.ty.is_float() {
                                Some(self.convert_help(
                                    "use `%f`, `%e` or `%g` for floats, or convert",
                                    &x,
                                    "i64",
                                ))
                            } else if x.ty == Type::BOOL {
                                Some(self.convert_help(
                                    "print a bool with `print`, or convert",
                                    &x,
                                    "i32",
                                ))
                            } else {
                                None
                            };
                            self.printf_mismatch(conv, "an integer", &x, conv_span, help);
                        }
                        ok = false;
                    }
                    x
                }
                FormatArg::Float => {
                    let c = self.expr_any(v, None);
                    let x = self.settle(c, Some(ScalarType::F64));
                    if !x.ty.is_float() {
                        if !x.ty.is_error() {
                            let help = x.ty.is_int().then(|| {
                                self.convert_help("use `%d` for integers, or convert", &x, "f64")
                            });
                            self.printf_mismatch(conv, "a float", &x, conv_span, help);
                        }
                        ok = false;
                    }
                    x
                }
            };
            xs.push(x);
        }
        if let Some(missing) = specs.get(values.len()) {
            let conv = fmt.get(missing.start..missing.end).unwrap_or("%");
            let mut d = Diagnostic::error(
                format!(
                    "the format has {} but `printf` has {}",
                    plural(specs.len(), "conversion"),
                    plural(values.len(), "value")
                ),
                literal_span(fmt_expr.span, fmt, missing.start, missing.end),
                format!("`{conv}` has no value"),
            )
            .with_help("give one value per conversion, or remove the conversions that have none");
            if let (Some(first), Some(last)) = (values.first(), values.last()) {
                d = d.with_label(
                    first.span.to(last.span),
                    format!("{} given", plural(values.len(), "value")),
                );
            }
            self.error(d);
            return None;
        }
        ok.then_some((xs, Type::Void))
    }

    /// "{lead}: `n as i64`", or "{lead} with `as i64`" when `x` is not simple.
    fn convert_help(&self, lead: &str, x: &Expr, to: &str) -> String {
        match self.text_of(x) {
            Some(t) => format!("{lead}: `{t} as {to}`"),
            None => format!("{lead} with `as {to}`"),
        }
    }

    /// `conv_span` is the conversion inside the format string.
    fn printf_mismatch(
        &mut self,
        conv: &str,
        needs: &str,
        x: &Expr,
        conv_span: Span,
        help: Option<String>,
    ) {
        let found = match x.ty {
            Type::Str => "a string".to_string(),
            t => t.to_string(),
        };
        let mut d = Diagnostic::error(
            format!("`{conv}` expects {needs}, found {found}"),
            x.span,
            format!("this is {found}"),
        )
        .with_label(conv_span, format!("`{conv}` in this format"));
        if let Some(h) = help {
            d = d.with_help(h);
        }
        self.error(d);
    }
}
