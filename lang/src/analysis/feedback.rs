//! `--info`: the compiler's decisions for every compute construct and loop, as NVHPC's
//! `-Minfo=accel` gives them (LANGUAGE.md 8): how each loop is scheduled and what that means on a
//! GPU, why a loop the compiler chose for was not parallelized, the reductions it generates,
//! and each variable's data clause, implicit ones marked so. One line per fact, each headed by
//! `file:line:col` of the construct or loop it is about.

use std::fmt::Write;

use super::{Analysis, DataAttr, Implicit, LoopInfo, RegionInfo, Schedule};
use crate::hir::{Construct, Program, VarId};
use crate::span::{SourceFile, Span};

/// The feedback for every compute construct of a compile, in source order.
pub fn feedback(source: &SourceFile, program: &Program, analysis: &Analysis) -> String {
    let mut out = String::new();
    for r in &analysis.regions {
        region(&mut out, source, program, r);
    }
    out
}

fn region(out: &mut String, source: &SourceFile, program: &Program, r: &RegionInfo) {
    let at = |s: Span| {
        let (line, col) = source.line_col(s.start);
        format!("{}:{line}:{col}", source.name)
    };
    let nests = r.loops.iter().filter(|l| l.parent.is_none()).count();
    let _ = writeln!(
        out,
        "{}: {}: {nests} loop nest{}",
        at(r.span),
        r.construct.name(),
        if nests == 1 { "" } else { "s" }
    );
    if !r.parts.is_empty() {
        let _ = writeln!(
            out,
            "{}:   runs as {} kernels in order: each gang loop nest alone, the statements between \
             them in a single thread",
            at(r.span),
            r.parts.len()
        );
    } else if r.construct == Construct::Kernels && nests > 1 {
        let _ = writeln!(
            out,
            "{}:   runs as one kernel of a single gang: `async`, a construct-level `private`, \
             `firstprivate` or `reduction`, or a `let` in the block keeps its nests together",
            at(r.span)
        );
    }
    let data: Vec<String> = r
        .vars
        .iter()
        .map(|u| data_clause(&u.name, &u.attr))
        .collect();
    if !data.is_empty() {
        let _ = writeln!(out, "{}:   data: {}", at(r.span), data.join(", "));
    }
    let vector = r
        .launch
        .nvidia
        .vector_length
        .as_ref()
        .and_then(|s| s.as_const())
        .unwrap_or(128);
    for l in &r.loops {
        let depth = depth(&r.loops, l);
        let pad = "  ".repeat(depth + 1);
        let vars: Vec<String> = l.vars.iter().map(|v| name(program, *v)).collect();
        let _ = writeln!(
            out,
            "{}: {pad}loop `{}`: {} ({})",
            at(l.span),
            vars.join("`, `"),
            schedule(
                l.schedule,
                l.vector_size
                    .as_ref()
                    .and_then(|s| s.as_const())
                    .unwrap_or(vector)
            ),
            l.reason
        );
        for v in &l.privatized {
            let _ = writeln!(
                out,
                "{}: {pad}  private({}) (assigned before it is read in every iteration)",
                at(l.span),
                name(program, *v)
            );
        }
        for red in &l.reductions {
            let _ = writeln!(
                out,
                "{}: {pad}  reduction({}: {})",
                at(l.span),
                red.op.as_str(),
                name(program, red.var)
            );
        }
    }
}

/// How deep a loop sits among the region's loops.
fn depth(loops: &[LoopInfo], l: &LoopInfo) -> usize {
    let mut d = 0;
    let mut p = l.parent;
    while let Some(i) = p {
        d += 1;
        p = loops.get(i).and_then(|x| x.parent);
    }
    d
}

/// A schedule and what it means on an NVIDIA GPU.
fn schedule(s: Schedule, vector: i64) -> String {
    match s {
        Schedule::Seq => "sequential".into(),
        Schedule::Parallel(l) => {
            let mut parts = Vec::new();
            let mut gpu = Vec::new();
            if l.gang {
                parts.push("gang".to_string());
                gpu.push("thread blocks");
            }
            if l.worker {
                parts.push("worker".to_string());
                gpu.push("rows of a block (%tid.y)");
            }
            if l.vector {
                parts.push(format!("vector({vector})"));
                gpu.push("threads of a block");
            }
            format!("{} [GPU: {}]", parts.join(", "), gpu.join(" × "))
        }
    }
}

fn data_clause(name: &str, attr: &DataAttr) -> String {
    match attr {
        DataAttr::Clause { clause, .. } => format!("{}({name})", clause.name()),
        DataAttr::Private { .. } => format!("private({name})"),
        DataAttr::FirstPrivate { .. } => format!("firstprivate({name})"),
        DataAttr::Reduction { op, .. } => format!("reduction({}: {name})", op.as_str()),
        DataAttr::Implicit(Implicit::Copy) => format!("implicit copy({name})"),
        DataAttr::Implicit(Implicit::Present) => format!("implicit present({name})"),
        DataAttr::Implicit(Implicit::FirstPrivate) => format!("implicit firstprivate({name})"),
    }
}

fn name(program: &Program, v: VarId) -> String {
    program
        .vars
        .get(v.index())
        .map_or_else(|| format!("#{}", v.0), |i| i.name.clone())
}
