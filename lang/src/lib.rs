//! The acc front end: source text to a checked, typed program and the analyses both back ends
//! need. Everything the language means is decided here (LANGUAGE.md is the contract); the back
//! ends consume `hir` and `analysis` and never re-read the source.
//!
//! Passes, in order:
//! 1. `lexer`: text to tokens; folds continuation newlines, checks brackets balance.
//! 2. `parser`: tokens to the `ast` (chumsky), recovering at statement boundaries.
//! 3. `validate`: structural directive rules that need no types (clause placement, loop levels,
//!    `collapse` depth, directives that may not appear in device code).
//! 4. `check`: name resolution and types (LANGUAGE.md section 2) producing the typed `hir`.
//! 5. `analysis`: per compute construct, data attributes, privates, reductions, loop schedule
//!    levels, device routines; and the rules that need types (reductions on arrays, `default(none)`,
//!    recursion or allocation in device code).

pub mod analysis;
pub mod ast;
pub mod builtins;
pub mod check;
pub mod clause;
pub mod diag;
pub mod hir;
pub mod ir;
pub mod lexer;
pub mod lower;
pub mod parser;
pub mod span;
pub mod token;
pub mod validate;
#[doc(hidden)]
pub mod vocabulary;

#[cfg(test)]
mod test_util;

pub use diag::{Diagnostic, Severity};
pub use span::{SourceFile, Span};

/// The result of compiling one source text.
#[derive(Debug)]
pub struct Compiled {
    pub hir: hir::Program,
    pub analysis: analysis::Analysis,
    /// Warnings and notes (the program is valid).
    pub warnings: Vec<Diagnostic>,
}

/// A front end that remembers what earlier sources defined (globals, functions), so that a REPL
/// line or a later `Engine::run` sees and may call what an earlier one declared.
#[derive(Default)]
pub struct Frontend {
    checker: check::Checker,
    /// Free nothing a compile builds (`check_before_exit`).
    never_free: bool,
}

impl Frontend {
    pub fn new() -> Frontend {
        Frontend::default()
    }

    /// Parse, check and analyze `source`. On error nothing of it is kept: the environment stays
    /// as it was before the call.
    pub fn compile(&mut self, source: &SourceFile) -> Result<Compiled, Vec<Diagnostic>> {
        with_deep_stack(|| self.compile_here(source, true))
    }

    /// Compile `source` as `compile` does, give what `inspect` makes of the result, and keep
    /// nothing: the environment is as it was before the call, whatever `source` declared
    /// (the REPL's `:type` and `:ir`, which show a compile without changing the session).
    pub fn compile_trial<T>(
        &mut self,
        source: &SourceFile,
        inspect: impl FnOnce(&Compiled) -> T,
    ) -> Result<T, Vec<Diagnostic>> {
        let result = match with_deep_stack(|| self.compile_here(source, false)) {
            Ok(compiled) => {
                let seen = inspect(&compiled);
                // The typed program shares the checker's tables: it goes before the rollback.
                drop(compiled);
                Ok(seen)
            }
            Err(diags) => Err(diags),
        };
        self.checker.rollback();
        result
    }

    /// The type of the expression `source` holds (its last statement must be an expression),
    /// checked against what earlier compiles declared; nothing of it is kept.
    pub fn expression_type(&mut self, source: &SourceFile) -> Result<hir::Type, Vec<Diagnostic>> {
        let ty = self.compile_trial(source, |compiled| match compiled.hir.top.last() {
            Some(hir::Stmt {
                kind: hir::StmtKind::Expr(e),
                ..
            }) => Some(e.ty),
            _ => None,
        })?;
        ty.ok_or_else(|| {
            let end = source.text.trim_end().len();
            vec![Diagnostic::error(
                "expected an expression",
                Span::new(0, end),
                "this is a statement, which has no type",
            )
            .with_help("give an expression, such as a variable's name or a call")]
        })
    }

    /// Every function later code can call, with its signature as messages write it, sorted
    /// by name.
    pub fn function_signatures(&self) -> Vec<(String, String)> {
        self.checker.signatures()
    }

    /// Every global later code can name, with its variable and type, sorted by name.
    pub fn globals(&self) -> Vec<(String, hir::VarId, hir::Type)> {
        self.checker.globals()
    }

    /// The functions later code can call: those a name refers to now.
    pub fn live_functions(&self) -> impl Iterator<Item = hir::FnId> + '_ {
        self.checker.current_functions()
    }

    /// The globals later code can name: those a name refers to now.
    pub fn live_globals(&self) -> impl Iterator<Item = hir::VarId> + '_ {
        self.checker.current_globals()
    }

    /// Declares a function of the embedding program (`check::Checker::register_host_fn`).
    pub fn register_host_fn(
        &mut self,
        name: &str,
        params: Vec<hir::Type>,
        ret: hir::Type,
    ) -> Result<u32, String> {
        self.checker.register_host_fn(name, params, ret)
    }

    /// The global `name` refers to now, with its type.
    pub fn global(&self, name: &str) -> Option<(hir::VarId, hir::Type)> {
        self.checker.global(name)
    }

    /// The signature of the function `name` refers to now.
    pub fn function(&self, name: &str) -> Option<check::FnSignature> {
        self.checker.function(name)
    }

    /// The global closest to `name`, for a "did you mean" hint.
    pub fn closest_global(&self, name: &str) -> Option<String> {
        diag::closest(name, self.checker.global_names()).map(str::to_string)
    }

    /// The function closest to `name`, for a "did you mean" hint.
    pub fn closest_function(&self, name: &str) -> Option<String> {
        diag::closest(name, self.checker.function_names()).map(str::to_string)
    }

    /// `keep`: commit what the compile declares (otherwise the caller rolls it back).
    fn compile_here(
        &mut self,
        source: &SourceFile,
        keep: bool,
    ) -> Result<Compiled, Vec<Diagnostic>> {
        let (program, diags) = parse_all(source);
        let compiled = if diags.iter().any(Diagnostic::is_error) {
            Err(diags)
        } else {
            self.compile_program(&program, keep)
        };
        if self.never_free {
            std::mem::forget(program);
        }
        compiled
    }

    fn compile_program(
        &mut self,
        program: &ast::Program,
        keep: bool,
    ) -> Result<Compiled, Vec<Diagnostic>> {
        let mut diags = validate::validate(program);
        if diags.iter().any(Diagnostic::is_error) {
            return Err(diags);
        }
        let hir = match self.checker.check(program) {
            Ok((hir, warnings)) => {
                diags.extend(warnings);
                hir
            }
            Err(errors) => {
                diags.extend(errors);
                return Err(diags);
            }
        };
        let (analysis, more) = analysis::analyze(&hir);
        diags.extend(more);
        if diags.iter().any(Diagnostic::is_error) {
            if self.never_free {
                std::mem::forget((hir, analysis));
            } else {
                self.checker.rollback();
            }
            return Err(diags);
        }
        if keep {
            self.checker.commit();
        }
        Ok(Compiled {
            hir,
            analysis,
            warnings: diags,
        })
    }
}

/// Stack for the compiler's recursive passes: reserved, not committed, so only what a deeply
/// nested program touches costs memory.
const DEEP_STACK: usize = 256 << 20;

/// Run `f` on a thread with a large stack. The passes recurse over the tree, and the lexer's
/// limits (`MAX_NESTING`, `MAX_OPERATORS`) allow trees deeper than a small thread stack holds
/// (an embedder's 2 MiB thread, say).
pub fn with_deep_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|scope| {
        let worker = std::thread::Builder::new()
            .name("acc-compile".into())
            .stack_size(DEEP_STACK)
            .spawn_scoped(scope, f);
        match worker {
            Ok(handle) => handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            Err(e) => panic!("cannot start a compiler thread: {e}"),
        }
    })
}

/// Lex and parse `source`, reporting every syntax error found (recovering at statement ends).
pub fn parse(source: &SourceFile) -> Result<ast::Program, Vec<Diagnostic>> {
    let (program, diags) = parse_all(source);
    if diags.iter().any(Diagnostic::is_error) {
        Err(diags)
    } else {
        Ok(program)
    }
}

/// `parse`'s diagnostics and its tree, which is partial when there are errors.
fn parse_all(source: &SourceFile) -> (ast::Program, Vec<Diagnostic>) {
    let lexed = lexer::lex(&source.text);
    let mut diags = lexed.diags;
    if !lexed.parseable {
        // Bracket errors make every later parse error a repeat of the same mistake.
        return (ast::Program::default(), diags);
    }
    let (program, parse_diags) = parser::parse(&lexed.tokens, source.text.len());
    // A bad character or literal is dropped or replaced by the lexer; parse errors after it on
    // its line are echoes of it.
    // Per line, where its first bad character or literal starts.
    let mut bad: std::collections::HashMap<usize, u32> = std::collections::HashMap::new();
    for d in &diags {
        let start = d.span().start;
        let first = bad.entry(source.line_col(start).0).or_insert(start);
        *first = (*first).min(start);
    }
    let echoes = |d: &Diagnostic| {
        let at = d.span().start;
        bad.get(&source.line_col(at).0)
            .is_some_and(|&start| at >= start)
    };
    diags.extend(parse_diags.into_iter().filter(|d| !echoes(d)));
    diags.sort_by_key(|d| d.span().start);
    (program, diags)
}

/// Whether `text` stops short of a program that more lines could complete, as a REPL asks
/// before it runs what was typed: a bracket left open, a line continuation (`\` at the end),
/// a line that ends in a binary operator or a comma (the lexer's rule for newlines that do not
/// end a statement), or a directive whose construct has not come yet (`acc parallel loop`
/// before its `for`).
pub fn awaits_more(text: &str) -> bool {
    text.trim_end().ends_with('\\')
        || ends_in_operator(text)
        || with_deep_stack(|| match parse(&SourceFile::new("<input>", text)) {
            Ok(_) => false,
            Err(diags) => diags
                .iter()
                .any(|d| lexer::is_unclosed(d) || parser::is_missing_body(d)),
        })
}

/// The last token of `text` is an operator or comma that continues its line.
fn ends_in_operator(text: &str) -> bool {
    let lexed = lexer::lex(text);
    matches!(lexed.tokens.last(), Some((token::Token::P(p), _)) if p.continues_line())
}

/// Compile one source text in a fresh environment (what `acc check` does, freeing it after).
pub fn check_source(source: &SourceFile) -> Result<Compiled, Vec<Diagnostic>> {
    Frontend::new().compile(source)
}

/// `check_source` for a process that exits right after (`acc check`): returns the warnings
/// (`Ok`) or the diagnostics (`Err`), and frees none of what the compile built (syntax tree,
/// typed program, analysis, symbol tables), which the process's exit returns at once. Freeing
/// a program of a million lines, millions of small allocations, took a second (clang's
/// `-disable-free` does the same for the same reason).
pub fn check_before_exit(source: &SourceFile) -> Result<Vec<Diagnostic>, Vec<Diagnostic>> {
    let mut frontend = Frontend {
        checker: check::Checker::never_free(),
        never_free: true,
    };
    let result = frontend.compile(source);
    std::mem::forget(frontend);
    result.map(|mut compiled| {
        let warnings = std::mem::take(&mut compiled.warnings);
        std::mem::forget(compiled);
        warnings
    })
}

/// Compile and lower one source text in a fresh environment (on a deep stack, like the
/// engine): the IR of a script, for the back ends' tests and tools.
pub fn lower_source(source: &SourceFile) -> Result<ir::Module, Vec<Diagnostic>> {
    let compiled = check_source(source)?;
    Ok(with_deep_stack(|| {
        lower::lower(&compiled.hir, &compiled.analysis)
    }))
}
