//! Directive lines: `acc <construct> <clauses>` and the statement a construct applies to.
//!
//! Directive words are ordinary identifiers to the lexer; here they are matched by text, so a
//! variable may be called `host` or `copy` and still be used inside a clause's parentheses.

use super::{custom, ident, kw, newlines, punct, word, Ex, In, ParseError, Rec};
use crate::ast::*;
use crate::clause::{self, Args, ClauseKey};
use crate::diag::{closest, Diagnostic};
use crate::span::Span;
use crate::token::{Keyword, Punct, Token};
use chumsky::prelude::*;

const CONSTRUCTS: [&str; 13] = [
    "parallel", "kernels", "serial", "loop", "data", "enter", "exit", "update", "wait", "atomic",
    "routine", "declare", "set",
];

/// `acc …` and its body, if the construct takes one.
/// `None` when the directive's name was unknown (already reported).
pub(super) fn directive<'a, E: ParseError<'a>>(
    stmt: Rec<'a, Stmt, E>,
    expr: Rec<'a, Expr, E>,
) -> impl Parser<'a, In<'a>, Option<Directive>, Ex<'a, E>> + Clone {
    let head = kw(Keyword::Acc)
        .ignore_then(construct(expr.clone()).map_with(|c, e| (c, e.span())))
        .then(
            clause(expr)
                .then_ignore(punct(Punct::Comma).or_not())
                .repeated()
                .collect::<Vec<_>>(),
        )
        .map_with(|(((construct, leading), construct_span), clauses), e| {
            let mut all: Vec<Clause> = leading.into_iter().collect();
            all.extend(clauses.into_iter().flatten());
            (construct, construct_span, all, e.span())
        });
    // A missing body (end of file) is reported at the directive, naming what should follow.
    let body = newlines()
        .ignore_then(stmt.map(Some).or(end().to(None)))
        .labelled("the statement this directive applies to");
    let with_body = head
        .clone()
        .try_map(|h, span| match h.0 {
            Some(c) if takes_body(c) => Ok((c, h.1, h.2, h.3)),
            _ => Err(E::unexplained(span)),
        })
        .then(body)
        .validate(
            |((construct, construct_span, clauses, span), body), _, emitter| {
                if body.is_none() {
                    emitter.emit(missing_body(construct, span));
                }
                Some(Directive {
                    construct,
                    construct_span,
                    clauses,
                    body: body.map(Box::new),
                    span,
                })
            },
        );
    // Standalone directives end at their line.
    let standalone = head
        .try_map(|h, span| match h.0 {
            Some(c) if takes_body(c) => Err(E::unexplained(span)),
            c => Ok((c, h.1, h.2, h.3)),
        })
        .map(|(construct, construct_span, clauses, span)| {
            construct.map(|construct| Directive {
                construct,
                construct_span,
                clauses: if construct == Construct::Update {
                    clauses.into_iter().map(self_as_update).collect()
                } else {
                    clauses
                },
                body: None,
                span,
            })
        });
    with_body.or(standalone)
}

/// On `update`, `self(a)` is the data clause `self(list)`, not a condition. (Anything else in
/// it stays a condition, which validation then rejects on `update`.)
fn self_as_update(c: Clause) -> Clause {
    match c.kind {
        ClauseKind::SelfCond(Some(Expr {
            kind: ExprKind::Name(name),
            span,
        })) => Clause {
            kind: ClauseKind::Update(
                UpdateDir::Self_,
                vec![DataRef {
                    name,
                    sections: None,
                    span,
                }],
            ),
            ..c
        },
        kind => Clause { kind, ..c },
    }
}

/// The label of a directive at the end of the input whose construct has not come yet.
const NOTHING_FOLLOWS: &str = "nothing follows this directive";

/// The error is a directive at the end of the input, waiting for its construct.
pub(crate) fn is_missing_body(d: &Diagnostic) -> bool {
    d.labels.iter().any(|l| l.message == NOTHING_FOLLOWS)
}

fn missing_body<'a, E: ParseError<'a>>(construct: Construct, span: Span) -> E {
    let what = match construct {
        c if c.is_loop() => "a `for` loop",
        Construct::Routine => "a function (`fn …`)",
        Construct::Atomic(_) => "the statement it makes atomic",
        _ => "a block `{ … }`",
    };
    custom(
        span,
        &format!("`acc {}` must be followed by {what}", construct.name()),
        NOTHING_FOLLOWS,
        &format!("write {what} after the directive line"),
    )
}

fn takes_body(c: Construct) -> bool {
    !matches!(
        c,
        Construct::EnterData
            | Construct::ExitData
            | Construct::Update
            | Construct::Wait
            | Construct::Declare
            | Construct::Set
    )
}

/// The construct's words. `wait(q, …)` carries its queue list, returned as a leading clause.
fn construct<'a, E: ParseError<'a>>(
    expr: Rec<'a, Expr, E>,
) -> impl Parser<'a, In<'a>, (Option<Construct>, Option<Clause>), Ex<'a, E>> + Clone {
    let with_loop = |w: &'static str, plain: Construct, combined: Construct| {
        word(w)
            .ignore_then(word("loop").or_not())
            .map(move |l| (if l.is_some() { combined } else { plain }, None))
    };
    let atomic = word("atomic")
        .ignore_then(
            select! {
                Token::Ident("update") => AtomicKind::Update,
                Token::Ident("read") => AtomicKind::Read,
                Token::Ident("write") => AtomicKind::Write,
                Token::Ident("capture") => AtomicKind::Capture,
            }
            .or_not(),
        )
        .map(|k| (Construct::Atomic(k.unwrap_or(AtomicKind::Update)), None));
    let wait_args = expr
        .separated_by(punct(Punct::Comma))
        .collect::<Vec<_>>()
        .delimited_by(punct(Punct::LParen), punct(Punct::RParen))
        .map_with(|args, e| Clause {
            kind: ClauseKind::Wait(args),
            name_span: e.span(),
            span: e.span(),
        });
    let simple = |w: &'static str, c: Construct| word(w).to((c, None));
    choice((
        with_loop("parallel", Construct::Parallel, Construct::ParallelLoop),
        with_loop("kernels", Construct::Kernels, Construct::KernelsLoop),
        with_loop("serial", Construct::Serial, Construct::SerialLoop),
        simple("loop", Construct::Loop),
        simple("data", Construct::Data),
        word("enter")
            .ignore_then(word("data").labelled("`data` (`acc enter data …`)"))
            .to((Construct::EnterData, None)),
        word("exit")
            .ignore_then(word("data").labelled("`data` (`acc exit data …`)"))
            .to((Construct::ExitData, None)),
        simple("update", Construct::Update),
        word("wait")
            .ignore_then(wait_args.or_not())
            .map(|c| (Construct::Wait, c)),
        atomic,
        simple("routine", Construct::Routine),
        simple("declare", Construct::Declare),
        simple("set", Construct::Set),
    ))
    .map(|(c, leading)| (Some(c), leading))
    .or(unknown_construct())
    .labelled("a directive name (`parallel`, `loop`, `data`, …)")
}

/// An unknown directive name: reported, and the directive line is then skipped.
fn unknown_construct<'a, E: ParseError<'a>>(
) -> impl Parser<'a, In<'a>, (Option<Construct>, Option<Clause>), Ex<'a, E>> + Clone {
    // The rest of the line is skipped: its words would only raise confusing follow-up errors.
    let rest_of_line = none_of([
        Token::Newline,
        Token::P(Punct::Semi),
        Token::P(Punct::LBrace),
    ])
    .repeated();
    ident().then_ignore(rest_of_line).validate(|name, _, emitter| {
        let known_elsewhere = matches!(name.name.as_str(), "host_data" | "cache" | "init" | "shutdown" | "enter_data" | "exit_data");
        let help = if known_elsewhere {
            format!("`{}` is an OpenACC directive acc does not support; see LANGUAGE.md section 7 for the ones it has", name.name)
        } else if let Some(s) = closest(&name.name, CONSTRUCTS) {
            format!("did you mean `acc {s}`?")
        } else {
            "directives are `parallel`, `kernels`, `serial` (each with optional `loop`), `loop`, `data`, `enter data`, `exit data`, `update`, `wait`, `atomic`, `routine`, `declare`, `set`".to_string()
        };
        emitter.emit(custom(name.span, &format!("unknown directive `acc {}`", name.name), "not a directive", &help));
        (None, None)
    })
}

/// One clause. Yields `None` (after reporting) for an unknown clause, so the rest still parses.
fn clause<'a, E: ParseError<'a>>(
    expr: Rec<'a, Expr, E>,
) -> impl Parser<'a, In<'a>, Option<Clause>, Ex<'a, E>> + Clone {
    let name = select! {
        Token::Ident(s) = e => (s, e.span()),
        Token::Kw(Keyword::If) = e => ("if", e.span()),
    };
    let args = clause_args(expr);
    // A `(` left unread after the name: arguments that did not parse, whose own error says why.
    let unread_args = punct(Punct::LParen).rewind().or_not();
    name.then(args.or_not()).then(unread_args).validate(
        |(((name, name_span), args), unread), e, emitter| {
            if args.is_none() && unread.is_some() {
                return None;
            }
            let span: Span = e.span();
            match build_clause(name, name_span, args) {
                Ok(kind) => Some(Clause {
                    kind,
                    name_span,
                    span,
                }),
                Err(err) => {
                    emitter.emit(err);
                    None
                }
            }
        },
    )
}

/// A clause's parenthesized argument list, parsed generally: an optional leading word and colon
/// (`reduction(+: s)`, `gang(num: 4)`) and expressions or `*`. `build_clause` gives it meaning.
#[derive(Clone, Debug)]
struct ClauseArgs {
    prefix: Option<(ReductionOpTok, Span)>,
    items: Vec<ArgItem>,
    span: Span,
}

#[derive(Clone, Debug)]
enum ArgItem {
    Expr(Expr),
    Star(Span),
}

/// What may stand before a `:` in a clause (reduction operators).
#[derive(Clone, Debug)]
enum ReductionOpTok {
    Op(ReductionOp),
    Word(String),
}

fn clause_args<'a, E: ParseError<'a>>(
    expr: Rec<'a, Expr, E>,
) -> impl Parser<'a, In<'a>, ClauseArgs, Ex<'a, E>> + Clone {
    let op = select! {
        Token::P(Punct::Plus) => ReductionOpTok::Op(ReductionOp::Add),
        Token::P(Punct::Star) => ReductionOpTok::Op(ReductionOp::Mul),
        Token::P(Punct::Amp) => ReductionOpTok::Op(ReductionOp::BitAnd),
        Token::P(Punct::Pipe) => ReductionOpTok::Op(ReductionOp::BitOr),
        Token::P(Punct::Caret) => ReductionOpTok::Op(ReductionOp::BitXor),
        Token::P(Punct::AndAnd) => ReductionOpTok::Op(ReductionOp::And),
        Token::P(Punct::OrOr) => ReductionOpTok::Op(ReductionOp::Or),
        Token::P(Punct::Minus) => ReductionOpTok::Word("-".into()),
        Token::P(Punct::Slash) => ReductionOpTok::Word("/".into()),
        Token::Ident(w) => ReductionOpTok::Word(w.to_string()),
    }
    .map_with(|op, e| (op, e.span()));
    // `reduction(+ s)`: an operator that cannot start a value, then a name, but no colon.
    let op_missing_colon = select! {
        Token::P(Punct::Plus) => ReductionOpTok::Op(ReductionOp::Add),
        Token::P(Punct::Star) => ReductionOpTok::Op(ReductionOp::Mul),
        Token::P(Punct::Amp) => ReductionOpTok::Op(ReductionOp::BitAnd),
        Token::P(Punct::Pipe) => ReductionOpTok::Op(ReductionOp::BitOr),
        Token::P(Punct::Caret) => ReductionOpTok::Op(ReductionOp::BitXor),
        Token::P(Punct::AndAnd) => ReductionOpTok::Op(ReductionOp::And),
        Token::P(Punct::OrOr) => ReductionOpTok::Op(ReductionOp::Or),
    }
    .map_with(|op, e| (op, e.span()))
    .then_ignore(ident().rewind())
    .validate(|(op, span): (ReductionOpTok, Span), _, emitter| {
        emitter.emit(custom(
            span.after(),
            "missing `:` after the reduction operator",
            "expected `:` here",
            "write `reduction(op: vars)`, e.g. `reduction(+: sum)`",
        ));
        (op, span)
    });
    let op = op.then_ignore(punct(Punct::Colon)).or(op_missing_colon);
    let item = punct(Punct::Star)
        .map_with(|_, e| ArgItem::Star(e.span()))
        .or(expr.map(ArgItem::Expr));
    op.or_not()
        .then(
            item.separated_by(punct(Punct::Comma))
                .allow_trailing()
                .collect::<Vec<_>>(),
        )
        .delimited_by(punct(Punct::LParen), punct(Punct::RParen))
        .map_with(|(prefix, items), e| ClauseArgs {
            prefix,
            items,
            span: e.span(),
        })
}

type ClauseResult<'a, E> = Result<ClauseKind, E>;

/// The clause `name` with its arguments, read as its row of the clause table says.
fn build_clause<'a, E: ParseError<'a>>(
    name: &str,
    name_span: Span,
    args: Option<ClauseArgs>,
) -> ClauseResult<'a, E> {
    let Some(spec) = clause::by_spelling(name) else {
        return Err(unknown_clause(name, name_span));
    };
    match spec.args {
        Args::Flag(make) => no_args(name, &args).map(|()| make()),
        Args::One(make, example) => one_expr(name, name_span, args, example).map(make),
        Args::Optional(make) => optional_expr(name, args).map(make),
        Args::Level(make, words) => level_arg(name, args, words).map(make),
        Args::List(make) => Ok(make(
            args.map(|a| exprs(name, a))
                .transpose()?
                .unwrap_or_default(),
        )),
        Args::Vars(make) => data_list(name, name_span, args).map(make),
        Args::Special => match spec.key {
            // `self(list)` on update is a data list; `self(cond)` elsewhere. Decided later by
            // the construct (`self(x)` with one plain name is ambiguous and kept as a condition
            // here).
            ClauseKey::SelfCond => self_clause(name, name_span, args),
            ClauseKey::Tile => tile(name_span, args),
            ClauseKey::Reduction => reduction(name_span, args),
            ClauseKey::Default => default_clause(name_span, args),
            ClauseKey::DeviceType => device_type(name_span, args),
            ClauseKey::Devices => devices(name_span, args),
            key => unreachable!("`{}` has no grammar of its own", key.name()),
        },
    }
}

/// Clause names of OpenACC that acc does not have.
const UNSUPPORTED: [&str; 8] = [
    "deviceptr",
    "use_device",
    "attach",
    "detach",
    "bind",
    "nohost",
    "link",
    "device_resident",
];

fn unknown_clause<'a, E: ParseError<'a>>(name: &str, span: Span) -> E {
    let help = match name {
        _ if UNSUPPORTED.contains(&name) => {
            format!("`{name}` is an OpenACC clause acc does not support (acc arrays are managed by the runtime)")
        }
        "shared" => "acc has no `shared` clause: arrays are shared by default; use `private` or `firstprivate` for per-thread copies".to_string(),
        _ => match closest(name, clause::spellings().chain(UNSUPPORTED)) {
            Some(s) => format!("did you mean `{s}`?"),
            None => "see LANGUAGE.md section 7 for the clauses each directive takes".to_string(),
        },
    };
    custom(
        span,
        &format!("unknown clause `{name}`"),
        "not a clause",
        &help,
    )
}

fn no_args<'a, E: ParseError<'a>>(name: &str, args: &Option<ClauseArgs>) -> Result<(), E> {
    match args {
        None => Ok(()),
        Some(a) => Err(custom(
            a.span,
            &format!("`{name}` takes no arguments"),
            "unexpected arguments",
            &format!("write just `{name}`"),
        )),
    }
}

fn one_expr<'a, E: ParseError<'a>>(
    name: &str,
    name_span: Span,
    args: Option<ClauseArgs>,
    example: &str,
) -> Result<Expr, E> {
    let help = if example.is_empty() {
        format!("write `{name}(value)`")
    } else {
        format!("for example `{example}`")
    };
    let Some(args) = args else {
        return Err(custom(
            name_span,
            &format!("`{name}` needs a value in parentheses"),
            "missing `( … )`",
            &help,
        ));
    };
    let mut items = exprs(name, args.clone())?;
    if items.len() != 1 || args.prefix.is_some() {
        return Err(custom(
            args.span,
            &format!("`{name}` takes exactly one value"),
            &format!("{} values given", items.len()),
            &help,
        ));
    }
    Ok(items.remove(0))
}

fn optional_expr<'a, E: ParseError<'a>>(
    name: &str,
    args: Option<ClauseArgs>,
) -> Result<Option<Expr>, E> {
    let Some(args) = args else { return Ok(None) };
    let span = args.span;
    let mut items = exprs(name, args)?;
    match items.len() {
        1 => Ok(Some(items.remove(0))),
        n => Err(custom(
            span,
            &format!("`{name}` takes at most one value"),
            &format!("{n} values given"),
            &format!("write `{name}` or `{name}(q)`"),
        )),
    }
}

/// `gang`, `gang(n)`, `gang(num: n)`; `vector(length: n)`; `worker(num: n)`.
fn level_arg<'a, E: ParseError<'a>>(
    name: &str,
    args: Option<ClauseArgs>,
    words: &[&str],
) -> Result<Option<Expr>, E> {
    if let Some(ClauseArgs {
        prefix: Some((ReductionOpTok::Word(w), span)),
        ..
    }) = &args
    {
        if !words.contains(&w.as_str()) {
            return Err(custom(
                *span,
                &format!("unknown argument `{w}:` for `{name}`"),
                "not understood",
                &format!("write `{name}(n)`"),
            ));
        }
        if w == "static" {
            return Err(custom(
                *span,
                "`gang(static: …)` is not supported by acc",
                "not supported",
                "write `gang` or `gang(n)`",
            ));
        }
    }
    let args = args.map(|a| ClauseArgs { prefix: None, ..a });
    optional_expr(name, args)
}

fn self_clause<'a, E: ParseError<'a>>(
    name: &str,
    name_span: Span,
    args: Option<ClauseArgs>,
) -> ClauseResult<'a, E> {
    match args {
        None => Ok(ClauseKind::SelfCond(None)),
        Some(a) if a.items.len() == 1 && a.prefix.is_none() && !is_section(&a.items[0]) => {
            Ok(ClauseKind::SelfCond(optional_expr(name, Some(a))?))
        }
        Some(a) => {
            data_list(name, name_span, Some(a)).map(|l| ClauseKind::Update(UpdateDir::Self_, l))
        }
    }
}

fn is_section(item: &ArgItem) -> bool {
    matches!(
        item,
        ArgItem::Expr(Expr {
            kind: ExprKind::Index(..),
            ..
        })
    )
}

fn exprs<'a, E: ParseError<'a>>(name: &str, args: ClauseArgs) -> Result<Vec<Expr>, E> {
    if let Some((_, span)) = args.prefix {
        return Err(custom(
            span,
            &format!("unexpected `:` in `{name}( … )`"),
            "not expected here",
            &format!("`{name}` takes plain values"),
        ));
    }
    args.items
        .into_iter()
        .map(|item| match item {
            ArgItem::Expr(e) => Ok(e),
            ArgItem::Star(span) => Err(custom(
                span,
                &format!("`*` is not a value for `{name}`"),
                "not allowed here",
                "only `tile` and `device_type` take `*`",
            )),
        })
        .collect()
}

fn data_list<'a, E: ParseError<'a>>(
    name: &str,
    name_span: Span,
    args: Option<ClauseArgs>,
) -> Result<Vec<DataRef>, E> {
    let Some(args) = args else {
        return Err(custom(
            name_span,
            &format!("`{name}` needs a list of variables"),
            "missing `( … )`",
            &format!("for example `{name}(a, b[0:n])`"),
        ));
    };
    if args.items.is_empty() {
        return Err(custom(
            args.span,
            &format!("`{name}( )` names no variables"),
            "empty list",
            &format!("for example `{name}(a, b[0:n])`"),
        ));
    }
    exprs(name, args)?.into_iter().map(data_ref).collect()
}

/// `a`, `a[start:count]`, `a[:count, 1:m-2]`.
fn data_ref<'a, E: ParseError<'a>>(e: Expr) -> Result<DataRef, E> {
    let span = e.span;
    match e.kind {
        ExprKind::Name(name) => Ok(DataRef {
            name,
            sections: None,
            span,
        }),
        ExprKind::Index(base, args) => {
            let ExprKind::Name(name) = base.kind else {
                return Err(not_a_data_ref(span));
            };
            let sections = args
                .into_iter()
                .map(|a| section(&name, a))
                .collect::<Result<_, _>>()?;
            Ok(DataRef {
                name,
                sections: Some(sections),
                span,
            })
        }
        _ => Err(not_a_data_ref(span)),
    }
}

fn section<'a, E: ParseError<'a>>(array: &Ident, arg: Expr) -> Result<SectionRange, E> {
    match arg.kind {
        ExprKind::Section(start, count) => Ok(SectionRange {
            start: start.map(|b| *b),
            count: count.map(|b| *b),
            span: arg.span,
        }),
        _ => {
            let name = &array.name;
            Err(custom(
                arg.span,
                "a section in a data clause needs a colon",
                "an index, not a section",
                &format!("`{name}[n]` would mean the single element n (as in C); for the first n elements write `{name}[:n]`, for element i write `{name}[i:1]`"),
            ))
        }
    }
}

fn not_a_data_ref<'a, E: ParseError<'a>>(span: Span) -> E {
    custom(
        span,
        "expected a variable or an array section",
        "not a variable",
        "data clauses take names (`a`) or sections (`a[0:n]`)",
    )
}

fn tile<'a, E: ParseError<'a>>(name_span: Span, args: Option<ClauseArgs>) -> ClauseResult<'a, E> {
    let Some(args) = args.filter(|a| !a.items.is_empty()) else {
        return Err(custom(
            name_span,
            "`tile` needs tile sizes",
            "missing sizes",
            "for example `tile(32, 4)` or `tile(*, *)`",
        ));
    };
    Ok(ClauseKind::Tile(
        args.items
            .into_iter()
            .map(|i| match i {
                ArgItem::Expr(e) => Some(e),
                ArgItem::Star(_) => None,
            })
            .collect(),
    ))
}

fn reduction<'a, E: ParseError<'a>>(
    name_span: Span,
    args: Option<ClauseArgs>,
) -> ClauseResult<'a, E> {
    const HELP: &str = "write `reduction(op: vars)` with op one of `+ * max min & | ^ && ||`, e.g. `reduction(+: sum)`";
    let Some(args) = args else {
        return Err(custom(
            name_span,
            "`reduction` needs an operator and variables",
            "missing `(op: vars)`",
            HELP,
        ));
    };
    let Some((op, op_span)) = args.prefix.clone() else {
        return Err(custom(
            args.span,
            "`reduction` needs an operator before its variables",
            "expected `op:` here",
            HELP,
        ));
    };
    let op = match op {
        ReductionOpTok::Op(op) => op,
        ReductionOpTok::Word(w) if w == "max" => ReductionOp::Max,
        ReductionOpTok::Word(w) if w == "min" => ReductionOp::Min,
        ReductionOpTok::Word(w) => {
            return Err(custom(
                op_span,
                &format!("`{w}` is not a reduction operator"),
                "unknown operator",
                HELP,
            ));
        }
    };
    let list = data_list(
        "reduction",
        name_span,
        Some(ClauseArgs {
            prefix: None,
            ..args
        }),
    )?;
    Ok(ClauseKind::Reduction(op, list))
}

fn default_clause<'a, E: ParseError<'a>>(
    name_span: Span,
    args: Option<ClauseArgs>,
) -> ClauseResult<'a, E> {
    const HELP: &str = "write `default(none)` or `default(present)`";
    let items = args
        .as_ref()
        .map(|a| a.items.as_slice())
        .unwrap_or_default();
    match items {
        [ArgItem::Expr(Expr {
            kind: ExprKind::Name(n),
            ..
        })] if n.name == "none" => Ok(ClauseKind::Default(DefaultKind::None)),
        [ArgItem::Expr(Expr {
            kind: ExprKind::Name(n),
            ..
        })] if n.name == "present" => Ok(ClauseKind::Default(DefaultKind::Present)),
        _ => {
            let span = args.map_or(name_span, |a| a.span);
            Err(custom(
                span,
                "`default` takes `none` or `present`",
                "not a default",
                HELP,
            ))
        }
    }
}

fn device_type<'a, E: ParseError<'a>>(
    name_span: Span,
    args: Option<ClauseArgs>,
) -> ClauseResult<'a, E> {
    const HELP: &str = "device types are `nvidia`, `host`, `multicore` and `*`";
    let Some(args) = args.filter(|a| !a.items.is_empty()) else {
        return Err(custom(
            name_span,
            "`device_type` needs a list of device types",
            "missing `( … )`",
            HELP,
        ));
    };
    let names = args
        .items
        .into_iter()
        .map(|i| match i {
            ArgItem::Star(_) => Ok(DeviceTypeName::Any),
            ArgItem::Expr(Expr {
                kind: ExprKind::Name(n),
                span,
            }) => match n.name.as_str() {
                "nvidia" | "acc_device_nvidia" => Ok(DeviceTypeName::Nvidia),
                "host" | "acc_device_host" => Ok(DeviceTypeName::Host),
                "multicore" | "acc_device_multicore" => Ok(DeviceTypeName::Multicore),
                other => Err(custom(
                    span,
                    &format!("unknown device type `{other}`"),
                    "not a device type",
                    HELP,
                )),
            },
            ArgItem::Expr(e) => Err(custom(
                e.span,
                "expected a device type",
                "not a device type",
                HELP,
            )),
        })
        .collect::<Result<_, _>>()?;
    Ok(ClauseKind::DeviceType(names))
}

/// `devices(all)` or `devices(e1, e2, …)`: acc's extension (LANGUAGE.md 7.11).
fn devices<'a, E: ParseError<'a>>(
    name_span: Span,
    args: Option<ClauseArgs>,
) -> ClauseResult<'a, E> {
    const HELP: &str = "write `devices(all)` for every device of the current type, or device numbers such as `devices(0, 1)`";
    let Some(args) = args.filter(|a| !a.items.is_empty() && a.prefix.is_none()) else {
        return Err(custom(
            name_span,
            "`devices` needs `all` or a list of device numbers",
            "missing devices",
            HELP,
        ));
    };
    if let [ArgItem::Expr(Expr {
        kind: ExprKind::Name(n),
        ..
    })] = args.items.as_slice()
    {
        if n.name == "all" {
            return Ok(ClauseKind::Devices(None));
        }
    }
    let numbers = args
        .items
        .into_iter()
        .map(|i| match i {
            ArgItem::Expr(Expr {
                kind: ExprKind::Name(n),
                span,
            }) if n.name == "all" => Err(custom(
                span,
                "`all` cannot be mixed with device numbers",
                "`all` here",
                HELP,
            )),
            ArgItem::Expr(e) => Ok(e),
            ArgItem::Star(span) => Err(custom(
                span,
                "expected a device number",
                "not a device number",
                HELP,
            )),
        })
        .collect::<Result<_, _>>()?;
    Ok(ClauseKind::Devices(Some(numbers)))
}
