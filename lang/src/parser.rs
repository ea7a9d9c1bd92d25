//! Tokens to the `ast`, with chumsky.
//!
//! The grammar follows LANGUAGE.md sections 1-7. Statements are separated by newlines or `;`
//! (the lexer has already dropped the newlines that do not end a statement). A statement that
//! fails to parse becomes `StmtKind::Error` and parsing goes on with the next one, so one run
//! reports every broken statement.
//!
//! Errors that need more than "expected X, found Y" (an unknown clause, a misspelled keyword, a
//! section without a colon) are raised as custom chumsky errors whose text packs the message,
//! label and help; `errors::to_diagnostic` unpacks them.

mod clauses;
mod errors;

pub(crate) use clauses::is_missing_body;

use crate::ast::*;
use crate::diag::Diagnostic;
use crate::span::Span;
use crate::token::{Keyword, Punct, Token};
use chumsky::input::{InputRef, MappedInput};
use chumsky::prelude::*;

pub(crate) type In<'a> = MappedInput<'a, Token<'a>, Span, &'a [(Token<'a>, Span)]>;
pub(crate) type Ex<'a, E> = extra::Err<E>;
pub(crate) type P<'a, O, E> = Boxed<'a, 'a, In<'a>, O, Ex<'a, E>>;
/// A recursive parser as `recursive` makes it. Its references to itself are weak, so a parser
/// graph is freed when the parse ends (`Recursive::declare`'s strong self-references form a
/// cycle that kept every parse's parser, about 11 kB, forever).
pub(crate) type Rec<'a, O, E> = Recursive<chumsky::recursive::Direct<'a, 'a, In<'a>, O, Ex<'a, E>>>;

/// The error type a parse runs with. The grammar is generic over it so that a program is first
/// parsed with `Unexplained` errors, which cost nothing to make and merge (chumsky merges an
/// error for every alternative that fails, which was a third of the parser's time with `Rich`),
/// and parsed again with `Rich` errors, which explain themselves, only when that parse fails.
/// Which alternative succeeds never depends on the error type, so both parses build the same
/// tree and fail on the same programs.
pub(crate) trait ParseError<'a>:
    chumsky::error::Error<'a, In<'a>>
    + chumsky::label::LabelError<'a, In<'a>, &'static str>
    + chumsky::label::LabelError<'a, In<'a>, chumsky::DefaultExpected<'a, Token<'a>>>
    + 'a
{
    /// Whether the error says what went wrong (`Rich`). The fast parse has none to say.
    const EXPLAINS: bool;
    /// An error with a message, label and help of its own (see `errors::pack`).
    fn custom(span: Span, message: &str, label: &str, help: &str) -> Self;
    /// A failure that another alternative always explains better (it is never shown).
    fn unexplained(span: Span) -> Self;
}

impl<'a> ParseError<'a> for Rich<'a, Token<'a>, Span> {
    const EXPLAINS: bool = true;

    fn custom(span: Span, message: &str, label: &str, help: &str) -> Self {
        Rich::custom(span, errors::pack(message, label, help))
    }

    fn unexplained(span: Span) -> Self {
        Rich::custom(span, "")
    }
}

/// The error of the first, fast parse: only whether the parse failed.
type Unexplained = chumsky::error::EmptyErr;

impl<'a> ParseError<'a> for Unexplained {
    const EXPLAINS: bool = false;

    fn custom(_: Span, _: &str, _: &str, _: &str) -> Self {
        Unexplained::default()
    }

    fn unexplained(_: Span) -> Self {
        Unexplained::default()
    }
}

/// Parse a token stream (from `lexer::lex`, brackets balanced) into a program.
pub fn parse(tokens: &[(Token<'_>, Span)], source_len: usize) -> (Program, Vec<Diagnostic>) {
    let eoi = Span::new(source_len, source_len);
    let input = tokens.split_token_span(eoi);
    let (program, errors) = program_parser::<Unexplained>()
        .parse(input.clone())
        .into_output_errors();
    if errors.is_empty() {
        if let Some(program) = program {
            return (program, Vec::new());
        }
    }
    drop(program);
    let (program, errors) = program_parser::<Rich<'_, Token<'_>, Span>>()
        .parse(input)
        .into_output_errors();
    let mut diags: Vec<Diagnostic> = errors
        .into_iter()
        .map(|e| errors::to_diagnostic(e, tokens))
        .collect();
    diags.dedup_by(|a, b| a.span() == b.span() && a.message == b.message);
    (program.unwrap_or_default(), diags)
}

// ---- small token parsers ---------------------------------------------------------------------

pub(crate) fn punct<'a, E: ParseError<'a>>(
    p: Punct,
) -> impl Parser<'a, In<'a>, Token<'a>, Ex<'a, E>> + Clone {
    just(Token::P(p))
}

pub(crate) fn kw<'a, E: ParseError<'a>>(
    k: Keyword,
) -> impl Parser<'a, In<'a>, Token<'a>, Ex<'a, E>> + Clone {
    just(Token::Kw(k))
}

/// A directive word (`parallel`, `copyin`, …): an identifier with that exact text.
pub(crate) fn word<'a, E: ParseError<'a>>(
    w: &'static str,
) -> impl Parser<'a, In<'a>, Span, Ex<'a, E>> + Clone {
    select! { Token::Ident(s) = e if s == w => e.span() }
}

pub(crate) fn ident<'a, E: ParseError<'a>>() -> impl Parser<'a, In<'a>, Ident, Ex<'a, E>> + Clone {
    select! { Token::Ident(s) = e => Ident { name: s.to_string(), span: e.span() } }
        .labelled("a name")
}

/// Statement separators: newline or `;`.
fn sep<'a, E: ParseError<'a>>() -> impl Parser<'a, In<'a>, (), Ex<'a, E>> + Clone {
    one_of([Token::Newline, Token::P(Punct::Semi)]).ignored()
}

fn newlines<'a, E: ParseError<'a>>() -> impl Parser<'a, In<'a>, (), Ex<'a, E>> + Clone {
    just(Token::Newline).repeated()
}

/// Pack a message, label and help into a custom chumsky error (see `errors`).
pub(crate) fn custom<'a, E: ParseError<'a>>(
    span: Span,
    message: &str,
    label: &str,
    help: &str,
) -> E {
    E::custom(span, message, label, help)
}

// ---- types -----------------------------------------------------------------------------------

/// `f64`, `i32[]`, `f32[,,]`.
pub(crate) fn type_expr<'a, E: ParseError<'a>>(
) -> impl Parser<'a, In<'a>, TypeExpr, Ex<'a, E>> + Clone {
    let dims = punct(Punct::Comma)
        .repeated()
        .count()
        .delimited_by(punct(Punct::LBracket), punct(Punct::RBracket));
    ident()
        .labelled("a type")
        .then(dims.or_not())
        .try_map(|(name, dims), span: Span| {
            let Some(elem) = ScalarType::from_name(&name.name) else {
                return Err(unknown_type(&name));
            };
            let rank = dims.map_or(0, |commas| commas + 1);
            if rank > 6 {
                return Err(custom(
                    span,
                    "arrays have at most 6 dimensions",
                    "too many dimensions",
                    "acc arrays have rank 1 to 6",
                ));
            }
            Ok(TypeExpr {
                elem,
                rank: rank as u8,
                span,
            })
        })
}

fn unknown_type<'a, E: ParseError<'a>>(name: &Ident) -> E {
    let hint = match name.name.as_str() {
        "float" => "`f32`".to_string(),
        "double" | "real" | "number" => "`f64`".to_string(),
        "int" | "long" | "integer" => "`i32` or `i64`".to_string(),
        "boolean" | "Bool" => "`bool`".to_string(),
        other => match crate::diag::closest(other, ["bool", "i32", "i64", "f32", "f64"]) {
            Some(t) => format!("`{t}`"),
            None => String::new(),
        },
    };
    let help = if hint.is_empty() {
        "types are `bool`, `i32`, `i64`, `f32`, `f64`, and arrays of them like `f64[]` or `f32[,]`"
            .to_string()
    } else {
        format!("did you mean {hint}? Types are `bool`, `i32`, `i64`, `f32`, `f64` and arrays like `f64[,]`")
    };
    custom(
        name.span,
        &format!("unknown type `{}`", name.name),
        "not a type",
        &help,
    )
}

// ---- program and statements ------------------------------------------------------------------

fn program_parser<'a, E: ParseError<'a>>() -> impl Parser<'a, In<'a>, Program, Ex<'a, E>> {
    // Statements contain expressions and expressions contain statements (blocks in `if`
    // expressions): `expr` is made inside `stmt`, so each refers to the other weakly.
    let stmt: Rec<'a, Stmt, E> = recursive(|stmt: Rec<'a, Stmt, E>| {
        let expr: Rec<'a, Expr, E> = recursive(|expr| expression(stmt.clone(), expr));
        statement(stmt, expr)
    });
    stmt_list(stmt)
        .then_ignore(end())
        .map(|stmts| Program { stmts })
}

/// A list as long as its items: a vector collected item by item has room for at least four,
/// and most argument lists, indices and blocks are shorter (`a[i]` kept room for three more
/// expressions), which made a large program's tree a fifth larger. Shrinking in place is cheap,
/// and the room given back is reused by the next nodes.
fn exact<T>(mut items: Vec<T>) -> Vec<T> {
    items.shrink_to_fit();
    items
}

/// Statements separated by newlines or `;`, blank lines and stray separators allowed.
fn stmt_list<'a, E: ParseError<'a>>(
    stmt: Rec<'a, Stmt, E>,
) -> impl Parser<'a, In<'a>, Vec<Stmt>, Ex<'a, E>> + Clone {
    sep().repeated().ignore_then(
        stmt.separated_by(sep().repeated().at_least(1))
            .allow_trailing()
            .collect::<Vec<_>>()
            .map(exact),
    )
}

/// `{ stmts }`, possibly opening on the next line (Allman style).
fn block<'a, E: ParseError<'a>>(
    stmt: Rec<'a, Stmt, E>,
) -> impl Parser<'a, In<'a>, Block, Ex<'a, E>> + Clone {
    newlines().ignore_then(
        stmt_list(stmt)
            .delimited_by(punct(Punct::LBrace), punct(Punct::RBrace))
            .map_with(|stmts, e| Block {
                stmts,
                span: e.span(),
            })
            .labelled("a block `{ … }`"),
    )
}

fn statement<'a, E: ParseError<'a>>(
    stmt: Rec<'a, Stmt, E>,
    expr: Rec<'a, Expr, E>,
) -> P<'a, Stmt, E> {
    let block = block(stmt.clone());
    let let_stmt = kw(Keyword::Let)
        .ignore_then(ident())
        .then(punct(Punct::Colon).ignore_then(type_expr()).or_not())
        .then_ignore(punct(Punct::Assign).labelled("`=` and a value (`let x = 0`)"))
        .then(expr.clone())
        .map(|((name, ty), init)| StmtKind::Let { name, ty, init });

    let if_stmt = recursive(|if_stmt| {
        kw(Keyword::If)
            .ignore_then(expr.clone())
            .then(block.clone())
            .then(
                kw(Keyword::Else)
                    .ignore_then(if_stmt.or(block.clone().map(|b: Block| {
                        let span = b.span;
                        Stmt {
                            kind: StmtKind::Block(b),
                            span,
                        }
                    })))
                    .or_not(),
            )
            .map_with(|((cond, then), els), e| Stmt {
                kind: StmtKind::If {
                    cond,
                    then,
                    els: els.map(Box::new),
                },
                span: e.span(),
            })
    });

    let while_stmt = kw(Keyword::While)
        .ignore_then(expr.clone())
        .then(block.clone())
        .map(|(cond, body)| StmtKind::While { cond, body });

    let for_stmt = for_loop(expr.clone(), block.clone()).map(|f| StmtKind::For(Box::new(f)));

    let ret = kw(Keyword::Return)
        .ignore_then(expr.clone().or_not())
        .map(StmtKind::Return);

    let assign_or_expr = expr
        .clone()
        .then(assign_op().then(expr.clone()).or_not())
        .try_map(|(target, rhs), _| match rhs {
            None => Ok(StmtKind::Expr(target)),
            Some((op, value)) => match target.kind {
                ExprKind::Name(_) | ExprKind::Index(..) => {
                    Ok(StmtKind::Assign { target, op, value })
                }
                _ => Err(custom(
                    target.span,
                    "cannot assign to this expression",
                    "not a variable or array element",
                    "only a variable (`x = …`) or an array element (`a[i] = …`) can be assigned",
                )),
            },
        });

    let break_stmt = kw(Keyword::Break).to(StmtKind::Break);
    let continue_stmt = kw(Keyword::Continue).to(StmtKind::Continue);
    let fn_stmt = function(stmt.clone()).map(StmtKind::Fn);
    let directive = clauses::directive(stmt.clone(), expr.clone())
        .map(|d| d.map_or(StmtKind::Error, StmtKind::Directive));
    let block_stmt = block.clone().map(StmtKind::Block);

    // Every kind of statement but an expression starts with a token of its own, and no
    // expression starts with one of those (`if` starts both an `if` statement and an `if`
    // expression: the statement first). The fast parse goes by the first token to the only
    // statement that can start with it; the explaining parse tries each in turn, because
    // `Rich` lists what every alternative expected there (and in their order).
    let any_statement: P<'a, Stmt, E> = if E::EXPLAINS {
        if_stmt
            .or(located(choice((
                let_stmt,
                while_stmt,
                for_stmt,
                ret,
                break_stmt,
                continue_stmt,
                fn_stmt,
                directive,
                block_stmt,
                misplaced_else(),
                assign_or_expr,
            ))))
            .boxed()
    } else {
        let let_stmt = located(let_stmt);
        let while_stmt = located(while_stmt);
        let for_stmt = located(for_stmt);
        let ret = located(ret);
        let break_stmt = located(break_stmt);
        let continue_stmt = located(continue_stmt);
        let fn_stmt = located(fn_stmt);
        let directive = located(directive);
        let block_stmt = located(block_stmt);
        let else_stmt = located(misplaced_else());
        let expr_stmt = located(assign_or_expr);
        let if_stmt = if_stmt.or(expr_stmt.clone());
        chumsky::primitive::custom(move |inp: &mut InputRef<'a, '_, In<'a>, Ex<'a, E>>| {
            match inp.peek() {
                Some(Token::Kw(Keyword::Let)) => inp.parse(&let_stmt),
                Some(Token::Kw(Keyword::While)) => inp.parse(&while_stmt),
                Some(Token::Kw(Keyword::For)) => inp.parse(&for_stmt),
                Some(Token::Kw(Keyword::Return)) => inp.parse(&ret),
                Some(Token::Kw(Keyword::Break)) => inp.parse(&break_stmt),
                Some(Token::Kw(Keyword::Continue)) => inp.parse(&continue_stmt),
                Some(Token::Kw(Keyword::Fn)) => inp.parse(&fn_stmt),
                Some(Token::Kw(Keyword::Acc)) => inp.parse(&directive),
                // A block may open on the next line.
                Some(Token::P(Punct::LBrace) | Token::Newline) => inp.parse(&block_stmt),
                Some(Token::Kw(Keyword::Else)) => inp.parse(&else_stmt),
                Some(Token::Kw(Keyword::If)) => inp.parse(&if_stmt),
                _ => inp.parse(&expr_stmt),
            }
        })
        .boxed()
    };

    // A statement must end here: checking it inside the statement (rather than in the list)
    // makes `x = 1 y` fail as a statement, which recovery then skips.
    let end_of_statement = choice((sep(), punct(Punct::RBrace).ignored(), end())).rewind();
    any_statement
        .then_ignore(end_of_statement)
        .recover_with(via_parser(statement_recovery()))
        .boxed()
}

/// A statement of `kind` spanning what `kind` parsed.
fn located<'a, E: ParseError<'a>>(
    kind: impl Parser<'a, In<'a>, StmtKind, Ex<'a, E>> + Clone,
) -> impl Parser<'a, In<'a>, Stmt, Ex<'a, E>> + Clone {
    kind.map_with(|kind, e| Stmt {
        kind,
        span: e.span(),
    })
}

/// `else` at the start of a statement: its `if` ended earlier.
fn misplaced_else<'a, E: ParseError<'a>>() -> impl Parser<'a, In<'a>, StmtKind, Ex<'a, E>> + Clone {
    kw(Keyword::Else).try_map(|_, span| {
        Err(custom(
            span,
            "`else` without an `if`",
            "no `if` statement ends right before this",
            "`else` must follow the `}` that closes an `if` block",
        ))
    })
}

/// Skip a broken statement: everything up to the next separator or closing brace, treating
/// bracketed groups as units so a block inside the broken statement is skipped whole.
fn statement_recovery<'a, E: ParseError<'a>>() -> impl Parser<'a, In<'a>, Stmt, Ex<'a, E>> + Clone {
    let group = |open, close| {
        nested_delimiters(
            Token::P(open),
            Token::P(close),
            [
                (Token::P(Punct::LParen), Token::P(Punct::RParen)),
                (Token::P(Punct::LBracket), Token::P(Punct::RBracket)),
                (Token::P(Punct::LBrace), Token::P(Punct::RBrace)),
            ],
            |_| (),
        )
    };
    choice((
        group(Punct::LBrace, Punct::RBrace),
        group(Punct::LParen, Punct::RParen),
        group(Punct::LBracket, Punct::RBracket),
        none_of([
            Token::Newline,
            Token::P(Punct::Semi),
            Token::P(Punct::RBrace),
            Token::P(Punct::RParen),
            Token::P(Punct::RBracket),
        ])
        .ignored(),
    ))
    .repeated()
    .at_least(1)
    .map_with(|_, e| Stmt {
        kind: StmtKind::Error,
        span: e.span(),
    })
}

fn assign_op<'a, E: ParseError<'a>>() -> impl Parser<'a, In<'a>, Option<BinOp>, Ex<'a, E>> + Clone {
    select! {
        Token::P(Punct::Assign) => None,
        Token::P(Punct::PlusEq) => Some(BinOp::Add),
        Token::P(Punct::MinusEq) => Some(BinOp::Sub),
        Token::P(Punct::StarEq) => Some(BinOp::Mul),
        Token::P(Punct::SlashEq) => Some(BinOp::Div),
        Token::P(Punct::PercentEq) => Some(BinOp::Rem),
        Token::P(Punct::AmpEq) => Some(BinOp::BitAnd),
        Token::P(Punct::PipeEq) => Some(BinOp::BitOr),
        Token::P(Punct::CaretEq) => Some(BinOp::BitXor),
        Token::P(Punct::ShlEq) => Some(BinOp::Shl),
        Token::P(Punct::ShrEq) => Some(BinOp::Shr),
    }
}

/// `for i in lo..hi [step s] { … }` and `lo..=hi`.
fn for_loop<'a, E: ParseError<'a>>(
    expr: Rec<'a, Expr, E>,
    block: impl Parser<'a, In<'a>, Block, Ex<'a, E>> + Clone + 'a,
) -> impl Parser<'a, In<'a>, ForLoop, Ex<'a, E>> + Clone {
    let c_style = punct(Punct::LParen).try_map(|_, span| {
        Err(custom(
            span,
            "C-style `for` loops are not acc syntax",
            "expected a loop variable",
            "acc loops over a range: `for i in 0..n { … }` (and `step` for other strides)",
        ))
    });
    let range_op = select! {
        Token::P(Punct::DotDot) => false,
        Token::P(Punct::DotDotEq) => true,
    }
    .labelled("`..` or `..=` (as in `0..n`)");
    kw(Keyword::For)
        .ignore_then(c_style.or(ident()))
        .then_ignore(kw(Keyword::In).labelled("`in` (as in `for i in 0..n`)"))
        .then(expr.clone())
        .then(range_op)
        .then(expr.clone())
        .then(kw(Keyword::Step).ignore_then(expr).or_not())
        .then(block)
        .map(|(((((var, start), inclusive), end), step), body)| ForLoop {
            var,
            start,
            end,
            inclusive,
            step,
            body,
        })
}

/// `fn name(p: T, …) [-> T] { … }`
fn function<'a, E: ParseError<'a>>(
    stmt: Rec<'a, Stmt, E>,
) -> impl Parser<'a, In<'a>, FnDef, Ex<'a, E>> + Clone {
    let param = ident()
        .then(
            punct(Punct::Colon)
                .labelled("`:` and the parameter's type (`x: f64`)")
                .ignore_then(type_expr()),
        )
        .map(|(name, ty)| Param { name, ty });
    let params = param
        .separated_by(punct(Punct::Comma))
        .allow_trailing()
        .collect::<Vec<_>>()
        .delimited_by(punct(Punct::LParen), punct(Punct::RParen));
    kw(Keyword::Fn)
        .ignore_then(ident().labelled("the function's name"))
        .then(params)
        .then(punct(Punct::Arrow).ignore_then(type_expr()).or_not())
        .map_with(|((name, params), ret), e| (name, params, ret, e.span()))
        .then(block(stmt))
        .map(|((name, params, ret, sig_span), body)| FnDef {
            name,
            params,
            ret,
            body,
            sig_span,
        })
}

// ---- expressions -----------------------------------------------------------------------------

fn expression<'a, E: ParseError<'a>>(
    stmt: Rec<'a, Stmt, E>,
    expr: Rec<'a, Expr, E>,
) -> P<'a, Expr, E> {
    let literal = select! {
        Token::Int(v, s) => ExprKind::Int(v, s),
        Token::Float(t, s) => ExprKind::Float(t.replace('_', ""), s),
        Token::Kw(Keyword::True) => ExprKind::Bool(true),
        Token::Kw(Keyword::False) => ExprKind::Bool(false),
        Token::Str(s) => ExprKind::Str(unescape(s)),
    };
    let args = expr
        .clone()
        .separated_by(punct(Punct::Comma))
        .allow_trailing()
        .collect::<Vec<_>>()
        .map(exact)
        .delimited_by(punct(Punct::LParen), punct(Punct::RParen));
    // A name, called when `(` follows: one parse of the name either way.
    let name_or_call = ident().then(args.or_not()).map(|(f, args)| match args {
        Some(args) => ExprKind::Call(f, args),
        None => ExprKind::Name(f),
    });
    let array = expr
        .clone()
        .separated_by(punct(Punct::Comma))
        .allow_trailing()
        .collect::<Vec<_>>()
        .map(exact)
        .delimited_by(punct(Punct::LBracket), punct(Punct::RBracket))
        .map(ExprKind::ArrayLit);
    let paren = expr
        .clone()
        .delimited_by(punct(Punct::LParen), punct(Punct::RParen))
        .map(|e: Expr| e.kind);

    let atom = choice((
        literal,
        name_or_call,
        paren,
        array,
        if_expr(stmt, expr.clone()).map(|e: Expr| e.kind),
    ))
    .map_with(|kind, e| Expr {
        kind,
        span: e.span(),
    })
    .labelled("an expression");

    // Postfix operators bind tightest (`a[i]`, `x as f32`), then prefix ones (`-a[i]` is
    // `-(a[i])`), then the binary operators by `BinOp::precedence`.
    let index =
        index_args(expr.clone()).delimited_by(punct(Punct::LBracket), punct(Punct::RBracket));
    let postfix = choice((
        index.map_with(|args, e| (Postfix::Index(args), e.span())),
        kw(Keyword::As)
            .ignore_then(type_expr())
            .map_with(|ty, e| (Postfix::Cast(ty), e.span())),
    ));
    let operand = atom.foldl(
        postfix.repeated(),
        |base: Expr, (op, at): (Postfix, Span)| {
            let span = base.span.to(at);
            let kind = match op {
                Postfix::Index(args) => ExprKind::Index(Box::new(base), args),
                Postfix::Cast(ty) => ExprKind::Cast(Box::new(base), ty),
            };
            Expr { kind, span }
        },
    );
    let prefix = select! {
        Token::P(Punct::Minus) = e => (UnOp::Neg, e.span()),
        Token::P(Punct::Bang) = e => (UnOp::Not, e.span()),
        Token::P(Punct::Tilde) = e => (UnOp::BitNot, e.span()),
    };
    let unary = prefix
        .repeated()
        .foldr(operand, |(op, at): (UnOp, Span), x: Expr| Expr {
            span: at.to(x.span),
            kind: ExprKind::Unary(op, Box::new(x)),
        });
    // One token test for every binary operator: trying each operator's parser in turn after
    // every operand was most of the parser's time.
    let binary_op = select! {
        Token::P(Punct::Star) => BinOp::Mul,
        Token::P(Punct::Slash) => BinOp::Div,
        Token::P(Punct::Percent) => BinOp::Rem,
        Token::P(Punct::Plus) => BinOp::Add,
        Token::P(Punct::Minus) => BinOp::Sub,
        Token::P(Punct::Shl) => BinOp::Shl,
        Token::P(Punct::Shr) => BinOp::Shr,
        Token::P(Punct::Amp) => BinOp::BitAnd,
        Token::P(Punct::Caret) => BinOp::BitXor,
        Token::P(Punct::Pipe) => BinOp::BitOr,
        Token::P(Punct::EqEq) => BinOp::Eq,
        Token::P(Punct::NotEq) => BinOp::Ne,
        Token::P(Punct::Lt) => BinOp::Lt,
        Token::P(Punct::Le) => BinOp::Le,
        Token::P(Punct::Gt) => BinOp::Gt,
        Token::P(Punct::Ge) => BinOp::Ge,
        Token::P(Punct::AndAnd) => BinOp::And,
        Token::P(Punct::OrOr) => BinOp::Or,
    }
    .labelled(OPERATOR);
    unary
        .clone()
        .then(binary_op.then(unary).repeated().collect::<Vec<_>>())
        .map(|(first, rest)| climb(first, rest))
        .boxed()
}

/// The label under which a binary operator is expected (`errors` shows it as "an operator").
pub(crate) const OPERATOR: &str = "an operator";

enum Postfix {
    Index(Vec<Expr>),
    Cast(TypeExpr),
}

/// Operands and the operators between them to a tree: every operator is left-associative and
/// binds by `BinOp::precedence` (operator-precedence parsing with an explicit stack).
fn climb(first: Expr, rest: Vec<(BinOp, Expr)>) -> Expr {
    fn join(op: BinOp, l: Expr, r: Expr) -> Expr {
        Expr {
            span: l.span.to(r.span),
            kind: ExprKind::Binary(op, Box::new(l), Box::new(r)),
        }
    }
    // Most expressions have no binary operator: no stacks for them.
    if rest.is_empty() {
        return first;
    }
    let mut operands = vec![first];
    let mut pending: Vec<BinOp> = Vec::new();
    let reduce = |operands: &mut Vec<Expr>, op: BinOp| {
        let r = operands.pop().expect("an operator has a right operand");
        let l = operands.pop().expect("an operator has a left operand");
        operands.push(join(op, l, r));
    };
    for (op, operand) in rest {
        while let Some(&top) = pending.last() {
            if top.precedence() < op.precedence() {
                break;
            }
            pending.pop();
            reduce(&mut operands, top);
        }
        pending.push(op);
        operands.push(operand);
    }
    while let Some(top) = pending.pop() {
        reduce(&mut operands, top);
    }
    operands.pop().expect("one expression is left")
}

/// Index arguments: expressions, or sections `start:count` with either side optional.
fn index_args<'a, E: ParseError<'a>>(
    expr: Rec<'a, Expr, E>,
) -> impl Parser<'a, In<'a>, Vec<Expr>, Ex<'a, E>> + Clone {
    let section = expr
        .clone()
        .or_not()
        .then_ignore(punct(Punct::Colon))
        .then(expr.clone().or_not())
        .map_with(|(start, count), e| Expr {
            kind: ExprKind::Section(start.map(Box::new), count.map(Box::new)),
            span: e.span(),
        });
    section
        .or(expr)
        .separated_by(punct(Punct::Comma))
        .at_least(1)
        .collect::<Vec<_>>()
        .map(exact)
}

/// `if c { … } else { … }` as an expression: both branches required, each ending in a value.
fn if_expr<'a, E: ParseError<'a>>(
    stmt: Rec<'a, Stmt, E>,
    expr: Rec<'a, Expr, E>,
) -> impl Parser<'a, In<'a>, Expr, Ex<'a, E>> + Clone {
    let value_block = block(stmt).try_map(|b: Block, span| {
        value_of_block(b).ok_or_else(|| {
            custom(
                span,
                "this block must end with a value",
                "no value at the end of this block",
                "an `if` used as a value ends each branch with an expression: `if c { 1.0 } else { 2.0 }`",
            )
        })
    });
    recursive(|if_expr| {
        kw(Keyword::If)
            .ignore_then(expr)
            .then(value_block.clone())
            .then_ignore(
                kw(Keyword::Else).labelled("`else` (an `if` used as a value needs both branches)"),
            )
            .then(value_block.or(if_expr))
            .map_with(|((c, t), f), e| Expr {
                kind: ExprKind::If(Box::new(c), Box::new(t), Box::new(f)),
                span: e.span(),
            })
    })
}

/// A block used as a value: its statements and final expression. A final `if … else …` or
/// block, which the statement parser read as statements, is the value when its branches end in
/// values (`{ if c { 1 } else { 0 } }`).
fn value_of_block(b: Block) -> Option<Expr> {
    let span = b.span;
    let mut stmts = b.stmts;
    let last = stmts.pop()?;
    let value = stmt_as_value(last)?;
    Some(Expr {
        kind: ExprKind::Block(stmts, Box::new(value)),
        span,
    })
}

fn stmt_as_value(s: Stmt) -> Option<Expr> {
    match s.kind {
        StmtKind::Expr(value) => Some(value),
        StmtKind::Block(b) => value_of_block(b),
        StmtKind::If {
            cond,
            then,
            els: Some(els),
        } => Some(Expr {
            kind: ExprKind::If(
                Box::new(cond),
                Box::new(value_of_block(then)?),
                Box::new(stmt_as_value(*els)?),
            ),
            span: s.span,
        }),
        _ => None,
    }
}

/// Decode the escapes the lexer has already validated.
fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

#[cfg(test)]
mod tests;
