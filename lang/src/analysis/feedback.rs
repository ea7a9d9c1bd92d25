//! `--info`: the compiler's decisions for every compute construct and loop, as NVHPC's
//! `-Minfo=accel` gives them (LANGUAGE.md 8): how each loop is scheduled and what that means on a
//! GPU, why a loop the compiler chose for was not parallelized, the reductions it generates,
//! each variable's data clause, implicit ones marked so (and `present` where an enclosing data
//! region holds the array), and the launch sizes that do not apply as written. One line per
//! fact, each headed by `file:line:col` of the construct or loop it is about.

use std::fmt::Write;

use super::split::{rows_text, SplitInfo};
use super::{
    Adjustment, AdjustmentKind, Analysis, DataAttr, Implicit, LoopInfo, RegionInfo, Schedule, Size,
    Together,
};
use crate::hir::{Program, VarId};
use crate::span::{SourceFile, Span};
use acc_abi::split::{DeviceList, RowSpan};

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
    } else if let Some(why) = &r.together {
        let why = match why {
            Together::AsyncScalar(v) => format!(
                "`async` with `{}` passed from one nest to the next (an asynchronous kernel's \
                 scalars reach the host only at a `wait`)",
                name(program, *v)
            ),
            Together::ConstructClause(clause) => format!("the construct's `{clause}` clause"),
            Together::Let(span) => format!("the `let` at {}", at(*span)),
        };
        let _ = writeln!(
            out,
            "{}:   runs as one kernel of a single gang: {why} keeps its nests together",
            at(r.span)
        );
    }
    if r.one_gang_default {
        let _ = writeln!(
            out,
            "{}:   runs as one gang: no loop is shared over gangs (with `num_gangs(n)`, each of \
             n gangs would run all of it)",
            at(r.span)
        );
    }
    let data: Vec<String> = r
        .vars
        .iter()
        .map(|u| match u.held_by {
            // Present-or-copy finds it present: nothing moves.
            Some(data) => {
                let (line, col) = source.line_col(data.start);
                format!(
                    "present({}) (held by the data region at {line}:{col})",
                    u.name
                )
            }
            None => data_clause(&u.name, &u.attr),
        })
        .collect();
    if !data.is_empty() {
        let _ = writeln!(out, "{}:   data: {}", at(r.span), data.join(", "));
    }
    if let Some(split) = &r.split {
        for line in split_lines(split) {
            let _ = writeln!(out, "{}:   {line}", at(r.span));
        }
    }
    for a in &r.adjustments {
        let _ = writeln!(out, "{}:   launch: {}", at(r.span), adjustment(source, a));
    }
    let vector = vector_lanes(source, r);
    let workers = worker_count(source, r);
    let gangs = match &r.launch.nvidia.num_gangs {
        Some(Size::Const(v)) => v.to_string(),
        Some(Size::Expr(e)) => source.text.get(e.span.range()).unwrap_or("…").to_string(),
        None => "chosen at run time".to_string(),
    };
    for l in &r.loops {
        let depth = depth(&r.loops, l);
        let pad = "  ".repeat(depth + 1);
        let vars: Vec<String> = l.vars.iter().map(|v| name(program, *v)).collect();
        let _ = writeln!(
            out,
            "{}: {pad}loop `{}`: {} ({})",
            at(l.span),
            vars.join("`, `"),
            schedule(l.schedule, &vector),
            l.reason
        );
        // The back ends take a gang's size from the construct, never from a loop: a loop's
        // size that differs from the construct's is noted.
        for (level, size, from, applied) in [
            ("gang", &l.gang_size, "num_gangs", gangs.clone()),
            ("worker", &l.worker_size, "num_workers", workers.clone()),
            ("vector", &l.vector_size, "vector_length", vector.clone()),
        ] {
            let Some(size) = size else {
                continue;
            };
            let text = match size {
                Size::Const(v) => v.to_string(),
                Size::Expr(e) => source.text.get(e.span.range()).unwrap_or("…").to_string(),
            };
            if text != applied {
                let _ = writeln!(
                    out,
                    "{}: {pad}  `{level}({text})` not used: the size is the construct's `{from}` \
                     ({applied})",
                    at(l.span),
                );
            }
        }
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

/// `devices(…)`: how the loop and each array are split, or why the construct is not.
fn split_lines(s: &SplitInfo) -> Vec<String> {
    let devices = match &s.devices {
        DeviceList::All => "all".to_string(),
        DeviceList::Numbers(ns) => ns
            .iter()
            .map(|n| n.to_string())
            .collect::<Vec<_>>()
            .join(", "),
    };
    let l = match &s.verdict {
        Ok(l) => l,
        Err(why) => {
            return vec![format!(
                "devices({devices}): not split: {why}; runs on one device"
            )]
        }
    };
    let var = &l.var_name;
    let mut lines = vec![format!(
        "split over devices({devices}): loop `{var}` in contiguous blocks"
    )];
    for a in &l.arrays {
        let rows = |r: &RowSpan| rows_text(r, var);
        let halo = match a.reads {
            RowSpan::Rows {
                coef: 1,
                lo_offset,
                hi_offset,
            } if lo_offset < 0 || hi_offset > 0 => format!(
                " (halo {} above, {} below)",
                (-lo_offset).max(0),
                hi_offset.max(0)
            ),
            _ => String::new(),
        };
        let line = match (&a.reads, &a.writes) {
            (RowSpan::None, RowSpan::None) => continue,
            (RowSpan::Whole, _) => format!(
                "{}: read whole ({}): replicated on every device",
                a.name,
                a.whole_because.as_deref().unwrap_or("not affine")
            ),
            (RowSpan::None, w) => format!("{}: writes rows {}", a.name, rows(w)),
            (r, RowSpan::None) => format!("{}: reads rows {}{halo}", a.name, rows(r)),
            (r, w) => format!(
                "{}: reads rows {}{halo}, writes rows {}",
                a.name,
                rows(r),
                rows(w)
            ),
        };
        lines.push(format!("  {line}"));
    }
    lines
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

/// The vector lanes of a gang on an NVIDIA GPU, as `--info` shows them in `vector(…)`: the
/// runtime's block (`acc_abi::nvidia_block`) for constant sizes, the expression as written for
/// a vector length computed at run time.
fn vector_lanes(source: &SourceFile, r: &RegionInfo) -> String {
    let launch = &r.launch.nvidia;
    let given = |s: &Option<Size>| match s {
        None => Some(acc_abi::ABSENT),
        Some(s) => s.as_const(),
    };
    if let Some(Size::Expr(e)) = &launch.vector_length {
        return source.text.get(e.span.range()).unwrap_or("…").to_string();
    }
    let vector = given(&launch.vector_length).unwrap_or(acc_abi::ABSENT);
    // With a worker count computed at run time, one worker's (the launch line says more).
    let workers = given(&launch.num_workers).unwrap_or(acc_abi::ABSENT);
    acc_abi::nvidia_block(workers, vector).0.to_string()
}

/// The workers of a gang on an NVIDIA GPU (`acc_abi::nvidia_block`), or the expression as
/// written for a count computed at run time.
fn worker_count(source: &SourceFile, r: &RegionInfo) -> String {
    let launch = &r.launch.nvidia;
    match &launch.num_workers {
        Some(Size::Expr(e)) => source.text.get(e.span.range()).unwrap_or("…").to_string(),
        w => {
            let w = w
                .as_ref()
                .and_then(Size::as_const)
                .unwrap_or(acc_abi::ABSENT);
            let v = match &launch.vector_length {
                Some(Size::Const(v)) => *v,
                _ => acc_abi::ABSENT,
            };
            acc_abi::nvidia_block(w, v).1.to_string()
        }
    }
}

/// A schedule and what it means on an NVIDIA GPU.
fn schedule(s: Schedule, vector: &str) -> String {
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

/// What becomes of a launch size clause.
fn adjustment(source: &SourceFile, a: &Adjustment) -> String {
    let clause = source.text.get(a.clause.range()).unwrap_or("the clause");
    let what = match a.kind {
        AdjustmentKind::VectorRounded { to } => {
            format!("rounded up to {to} (whole warps of 32 threads)")
        }
        AdjustmentKind::WorkersClipped { to } => {
            format!("clipped to {to} (the most workers of a gang on an NVIDIA GPU)")
        }
        AdjustmentKind::VectorClipped { to } => {
            format!("clipped to {to} (a thread block holds at most 1024 threads)")
        }
        AdjustmentKind::VectorAtMost { most } => {
            format!("at most {most} at run time (a thread block holds at most 1024 threads)")
        }
        AdjustmentKind::VectorCutAbove { above } => format!(
            "cut to 1024 / num_workers at run time where num_workers is above {above} (a thread \
             block holds at most 1024 threads)"
        ),
        AdjustmentKind::DefaultVectorCutAbove { above } => format!(
            "cuts the default vector length of 128 to 1024 / num_workers at run time where \
             num_workers is above {above} (a thread block holds at most 1024 threads)"
        ),
        AdjustmentKind::GangsUnused => "not used: the region runs as one gang".to_string(),
    };
    format!("`{clause}` {what}")
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
