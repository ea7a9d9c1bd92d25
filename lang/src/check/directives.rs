//! Directive clauses (LANGUAGE.md section 7): every name resolved, every argument typed.
//! Structural rules (which clause goes where, loop levels, `collapse` depth) are `validate`'s;
//! the rules that need data attributes are `analysis`'s.

use crate::ast::{self, ScalarType};
use crate::clause::MapClauseArgs;
use crate::diag::Diagnostic;
use crate::hir::{self, ClauseKind, DataRef, RoutineLevel, SectionRange, Type};

use super::Cx;

impl Cx<'_> {
    /// A directive statement (not `acc routine`, which is recorded on its function).
    pub(super) fn directive(&mut self, d: &ast::Directive) -> Option<hir::Directive> {
        if d.construct == ast::Construct::Routine {
            self.error(
                Diagnostic::error(
                    "`acc routine` must be followed by a function definition at the top level",
                    d.span,
                    "no function follows",
                )
                .with_help("write `acc routine seq` on the line before `fn name(…)`"),
            );
            return None;
        }
        let clauses = d.clauses.iter().map(|c| self.clause(c)).collect();
        let body = d.body.as_deref().and_then(|b| self.stmt(b)).map(Box::new);
        if let (ast::Construct::Atomic(_), Some(body)) = (d.construct, &body) {
            self.atomic_types(body);
        }
        Some(hir::Directive {
            construct: d.construct,
            construct_span: d.construct_span,
            clauses,
            body,
            span: d.span,
        })
    }

    /// The locations an `acc atomic` reads and writes hold `i32`, `i64`, `f32` or `f64`
    /// (LANGUAGE.md 7.8): every place the statement assigns has the type of the location (an
    /// update or write) or of a value read from it (a read or capture, without conversion from
    /// `bool`).
    fn atomic_types(&mut self, body: &hir::Stmt) {
        let assignments: Vec<&hir::Place> = match &body.kind {
            hir::StmtKind::Assign { place, .. } => vec![place],
            hir::StmtKind::Block(b) => b
                .stmts
                .iter()
                .filter_map(|s| match &s.kind {
                    hir::StmtKind::Assign { place, .. } => Some(place),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        };
        for place in assignments {
            if place.ty == Type::Scalar(ScalarType::Bool) {
                self.error(
                    Diagnostic::error(
                        "`acc atomic` does not operate on `bool` values",
                        place.span,
                        "this location is a `bool`",
                    )
                    .with_help("atomics operate on `i32`, `i64`, `f32` and `f64`: keep the flag in an `i32` (0 or 1) and update it with `max` or `|`"),
                );
                return;
            }
        }
    }

    /// The `acc routine` directive before a function.
    pub(super) fn routine(&mut self, d: &ast::Directive) -> hir::Routine {
        let clauses: Vec<hir::Clause> = d.clauses.iter().map(|c| self.clause(c)).collect();
        let level = clauses
            .iter()
            .find_map(|c| match c.kind {
                ClauseKind::Gang(_) => Some(RoutineLevel::Gang),
                ClauseKind::Worker(_) => Some(RoutineLevel::Worker),
                ClauseKind::Vector(_) => Some(RoutineLevel::Vector),
                ClauseKind::Seq => Some(RoutineLevel::Seq),
                _ => None,
            })
            .unwrap_or(RoutineLevel::Seq);
        hir::Routine {
            level,
            clauses,
            span: d.span,
        }
    }

    fn clause(&mut self, c: &ast::Clause) -> hir::Clause {
        hir::Clause {
            kind: c.kind.map(self),
            name_span: c.name_span,
            span: c.span,
        }
    }

    /// The variables of a clause list; unknown names are reported and left out.
    fn data_refs(&mut self, refs: &[ast::DataRef]) -> Vec<DataRef> {
        refs.iter().filter_map(|r| self.data_ref(r)).collect()
    }

    fn data_ref(&mut self, r: &ast::DataRef) -> Option<DataRef> {
        let Some(var) = self.resolve_var(&r.name.name) else {
            if crate::builtins::BuiltinConst::from_name(&r.name.name).is_some() {
                self.error(Diagnostic::error(
                    format!("`{}` is a built-in constant, not a variable", r.name.name),
                    r.name.span,
                    "not a variable",
                ));
            } else {
                self.unknown_var(&r.name, None);
            }
            return None;
        };
        let ty = self.var(var).ty;
        let sections = match &r.sections {
            None => None,
            Some(ranges) => Some(self.section_ranges(&r.name.name, ty, ranges, r.span)?),
        };
        Some(DataRef {
            var,
            sections,
            span: r.span,
        })
    }

    /// The ranges of a section of an array of type `ty`: one per dimension, `i64` bounds.
    pub(super) fn section_ranges(
        &mut self,
        name: &str,
        ty: Type,
        ranges: &[ast::SectionRange],
        span: crate::span::Span,
    ) -> Option<Vec<SectionRange>> {
        let out: Vec<SectionRange> = ranges
            .iter()
            .map(|s| SectionRange {
                start: s
                    .start
                    .as_ref()
                    .map(|e| self.integer(e, "a section start", Some(ScalarType::I64))),
                count: s
                    .count
                    .as_ref()
                    .map(|e| self.integer(e, "a section length", Some(ScalarType::I64))),
                span: s.span,
            })
            .collect();
        match ty {
            Type::Array { rank, .. } if usize::from(rank) == ranges.len() => Some(out),
            Type::Array { rank, .. } => {
                let example: Vec<&str> = ["0:n", "0:m", "0:k", "0:l", "0:p", "0:q"]
                    .into_iter()
                    .take(usize::from(rank))
                    .collect();
                self.error(
                    Diagnostic::error(
                        format!(
                            "`{name}` has rank {rank} but the section gives {} {}",
                            ranges.len(),
                            if ranges.len() == 1 { "range" } else { "ranges" }
                        ),
                        span,
                        format!("expected {rank} `start:count` ranges"),
                    )
                    .with_help(format!(
                        "give one range per dimension: `{name}[{}]`",
                        example.join(", ")
                    )),
                );
                None
            }
            Type::Error => None,
            t => {
                self.error(
                    Diagnostic::error(
                        format!("`{name}` is not an array; it has type {t}"),
                        span,
                        "section of a scalar",
                    )
                    .with_help(format!("name the scalar without a section: `{name}`")),
                );
                None
            }
        }
    }
}

/// Clause arguments typed: conditions are `bool`, the other values `i64`.
impl MapClauseArgs<ast::Expr, ast::DataRef, hir::Expr, DataRef> for Cx<'_> {
    fn condition(&mut self, clause: &'static str, e: &ast::Expr) -> hir::Expr {
        self.condition(e, &format!("the condition of `{clause}`"))
    }

    fn integer(&mut self, clause: &'static str, e: &ast::Expr) -> hir::Expr {
        self.integer(
            e,
            &format!("the argument of `{clause}`"),
            Some(ScalarType::I64),
        )
    }

    fn vars(&mut self, refs: &[ast::DataRef]) -> Vec<DataRef> {
        self.data_refs(refs)
    }
}
