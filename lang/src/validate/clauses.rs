//! Which clauses each construct takes (OpenACC 3.3, LANGUAGE.md 7.1-7.10), which may follow a
//! `device_type`, which may not repeat or combine, and which constructs need a clause at all.

use crate::ast::{ClauseKind, Construct, DataClause, Directive, Expr, ExprKind, UnOp};
use crate::diag::Diagnostic;
use crate::span::Span;

use crate::clause::{clause_names, ClauseKey as Key};
use DataClause::Delete;

/// The clauses `construct` takes, for help lines.
fn allowed_list(construct: Construct) -> String {
    let names = clause_names(construct);
    if names.is_empty() {
        "no clauses".to_string()
    } else {
        names.join(", ")
    }
}

/// A specific hint for a clause in the wrong place, where a generic list would not say what the
/// user most likely meant.
fn misplaced_hint(construct: Construct, key: Key) -> Option<String> {
    let cname = construct.name();
    Some(match (construct, key) {
        (Construct::Loop, Key::NumGangs | Key::NumWorkers | Key::VectorLength) => format!(
            "`{}` belongs on the enclosing compute construct (`acc parallel {}(…)`)",
            key.name(),
            key.name()
        ),
        (Construct::Serial | Construct::SerialLoop, Key::NumGangs | Key::NumWorkers | Key::VectorLength) => {
            "a serial region always runs one gang of one worker of one vector lane".to_string()
        }
        (Construct::Kernels, Key::Reduction) => {
            "the compiler detects reductions in `kernels` regions; or use `acc parallel` with `reduction`, or put it on an `acc loop`".to_string()
        }
        (Construct::Parallel | Construct::Kernels | Construct::Serial, Key::Collapse | Key::Tile) => {
            format!("`{}` applies to loops: use `acc {cname} loop {}(…)`", key.name(), key.name())
        }
        (Construct::Parallel | Construct::Kernels | Construct::Serial, k) if k.is_level() || k == Key::Independent => {
            format!(
                "`{}` applies to loops: use `acc {cname} loop {}`, or `acc loop {}` inside the region",
                k.name(),
                k.name(),
                k.name()
            )
        }
        (_, k) if k.is_level() || k == Key::Independent => format!(
            "`{}` is allowed only on loop constructs and `acc routine`",
            k.name()
        ),
        (_, Key::Finalize) => "`finalize` is allowed only on `acc exit data`".to_string(),
        (_, Key::Data(Delete)) => {
            "`delete` is allowed only on `acc exit data`".to_string()
        }
        (_, Key::IfPresent) => "`if_present` is allowed only on `acc update`".to_string(),
        (_, Key::Update) => {
            "`host(…)`, `self(…)` and `device(…)` are the clauses of `acc update`".to_string()
        }
        (Construct::EnterData, Key::Data(_)) => {
            "`acc enter data` takes `copyin` and `create`; copy data back with `copyout` on `acc exit data`".to_string()
        }
        (Construct::ExitData, Key::Data(_)) => {
            "`acc exit data` takes `copyout` and `delete`; copy data in with `copyin` on `acc enter data`".to_string()
        }
        (Construct::Declare, Key::Data(_)) => {
            "`acc declare` takes `create` and `copyin`".to_string()
        }
        (Construct::Loop, Key::Data(_) | Key::FirstPrivate | Key::Default | Key::If | Key::SelfCond | Key::Async | Key::Wait) => format!(
            "`{}` belongs on the enclosing compute construct, or use a combined construct (`acc parallel loop {}(…)`)",
            key.name(),
            key.name()
        ),
        _ => return None,
    })
}

/// Clause placement: clauses the construct does not take, clauses that may not follow
/// `device_type`, repeated clauses, mutually exclusive ones, malformed literal arguments, and
/// constructs missing a required clause.
pub(super) fn check(d: &Directive, diags: &mut Vec<Diagnostic>) {
    let cname = d.construct.name();
    let mut device_type_seen: Option<Span> = None;
    // Clauses seen in the current `device_type` segment, for duplicates.
    let mut segment: Vec<(Key, Span)> = Vec::new();
    for clause in &d.clauses {
        let key = clause.kind.key();
        if !key.allowed_on(d.construct) {
            let name = clause.kind.name();
            let help = misplaced_hint(d.construct, key)
                .unwrap_or_else(|| format!("`acc {cname}` takes: {}", allowed_list(d.construct)));
            diags.push(
                Diagnostic::error(
                    format!("`{name}` is not allowed on `acc {cname}`"),
                    clause.name_span,
                    "not allowed here",
                )
                .with_help(help),
            );
            continue;
        }
        // `device_type(t)` on `set` selects a device type rather than opening a scope.
        if key == Key::DeviceType && d.construct != Construct::Set {
            device_type_seen = Some(clause.span);
            segment.clear();
            continue;
        }
        if let Some(dt) = device_type_seen {
            if !key.allowed_after_device_type(d.construct) {
                diags.push(
                    Diagnostic::error(
                        format!(
                            "`{}` may not follow `device_type` on `acc {cname}`",
                            clause.kind.name()
                        ),
                        clause.name_span,
                        "device-specific clause not allowed here",
                    )
                    .with_label(dt, "device-specific clauses start here")
                    .with_help(format!(
                        "move `{}` before the first `device_type` clause",
                        clause.kind.name()
                    )),
                );
                continue;
            }
        }
        check_repeat_and_conflict(d, key, clause.name_span, &segment, diags);
        segment.push((key, clause.name_span));
        check_literal_args(d.construct, &clause.kind, clause.span, diags);
    }
    check_required(d, diags);
    check_variable_lists(d, diags);
}

/// How a variable list clause treats its variables, for the "named twice" rule.
#[derive(Clone, Copy, PartialEq)]
enum ListRole {
    Data,
    Private,
    FirstPrivate,
    Reduction,
}

impl ListRole {
    fn describe(self) -> &'static str {
        match self {
            ListRole::Data => "a data clause",
            ListRole::Private => "`private`",
            ListRole::FirstPrivate => "`firstprivate`",
            ListRole::Reduction => "`reduction`",
        }
    }
}

/// A variable may be named once among the data, `private` and `firstprivate` clauses of one
/// directive, and once among its `reduction`s; a reduction variable may also be in a data clause
/// (`copy(s) reduction(+: s)`), but not be private. `update` may name sections of one array in
/// several clauses.
fn check_variable_lists(d: &Directive, diags: &mut Vec<Diagnostic>) {
    let mut seen: Vec<(&str, ListRole, Span)> = Vec::new();
    for clause in &d.clauses {
        let (role, list) = match &clause.kind {
            ClauseKind::Data(_, list) => (ListRole::Data, list),
            ClauseKind::Private(list) => (ListRole::Private, list),
            ClauseKind::FirstPrivate(list) => (ListRole::FirstPrivate, list),
            ClauseKind::Reduction(_, list) => (ListRole::Reduction, list),
            _ => continue,
        };
        for r in list {
            let clash = seen.iter().find(|&&(name, prev, _)| {
                name == r.name.name
                    && !matches!(
                        (prev, role),
                        (ListRole::Reduction, ListRole::Data)
                            | (ListRole::Data, ListRole::Reduction)
                    )
            });
            if let Some(&(_, prev, prev_span)) = clash {
                let message = if prev == ListRole::Data && role == ListRole::Data {
                    format!("`{}` appears in more than one data clause", r.name.name)
                } else if prev == role {
                    format!("`{}` appears twice in {}", r.name.name, role.describe())
                } else {
                    format!(
                        "`{}` appears in both {} and {}",
                        r.name.name,
                        prev.describe(),
                        role.describe()
                    )
                };
                diags.push(
                    Diagnostic::error(message, r.span, "named again here")
                        .with_label(prev_span, "first named here")
                        .with_help(format!(
                            "name `{}` in one clause of `acc {}`",
                            r.name.name,
                            d.construct.name()
                        )),
                );
            } else {
                seen.push((&r.name.name, role, r.span));
            }
        }
    }
}

/// Clauses that may appear once per device_type segment, and exclusive combinations.
fn check_repeat_and_conflict(
    d: &Directive,
    key: Key,
    span: Span,
    segment: &[(Key, Span)],
    diags: &mut Vec<Diagnostic>,
) {
    let cname = d.construct.name();
    if !key.spec().repeats {
        if let Some(&(_, first)) = segment.iter().find(|(k, _)| *k == key) {
            diags.push(
                Diagnostic::error(
                    format!(
                        "`{}` appears more than once on `acc {cname}`",
                        key_text(d, key)
                    ),
                    span,
                    "repeated here",
                )
                .with_label(first, "first given here")
                .with_help(format!("keep one `{}` clause", key_text(d, key))),
            );
            return;
        }
    }
    // OpenACC 3.3 2.9: only one of seq, independent, auto; no gang/worker/vector with seq.
    let exclusive = |k: Key| -> &'static [Key] {
        match k {
            Key::Seq => &[
                Key::Independent,
                Key::Auto,
                Key::Gang,
                Key::Worker,
                Key::Vector,
            ],
            Key::Independent | Key::Auto => &[Key::Seq, Key::Independent, Key::Auto],
            Key::Gang | Key::Worker | Key::Vector => &[Key::Seq],
            Key::Collapse => &[Key::Tile],
            Key::Tile => &[Key::Collapse],
            _ => &[],
        }
    };
    // On a routine every level excludes the others (a routine has exactly one level).
    let conflicts: &[Key] = if d.construct == Construct::Routine && key.is_level() {
        &[Key::Gang, Key::Worker, Key::Vector, Key::Seq]
    } else {
        exclusive(key)
    };
    if let Some(&(other, other_span)) = segment
        .iter()
        .find(|(k, _)| conflicts.contains(k) && *k != key)
    {
        let help = match (other, key) {
            (Key::Collapse, Key::Tile) | (Key::Tile, Key::Collapse) => {
                "`tile` already covers the nested loops it names; remove `collapse`".to_string()
            }
            _ if d.construct == Construct::Routine => {
                "a routine has one level of parallelism: keep one of gang, worker, vector, seq"
                    .to_string()
            }
            (Key::Seq, _) | (_, Key::Seq) => format!(
                "`seq` runs the loop sequentially; remove `seq` or `{}`",
                if other == Key::Seq {
                    key.name()
                } else {
                    other.name()
                }
            ),
            _ => "keep one of `seq`, `independent` and `auto`".to_string(),
        };
        diags.push(
            Diagnostic::error(
                format!(
                    "`{}` and `{}` cannot both appear on `acc {cname}`",
                    other.name(),
                    key.name()
                ),
                span,
                format!("conflicts with `{}`", other.name()),
            )
            .with_label(other_span, format!("`{}` given here", other.name()))
            .with_help(help),
        );
    }
}

/// The clause name for messages: on the `wait` directive a `Wait` clause is its argument list.
fn key_text(d: &Directive, key: Key) -> &'static str {
    match (d.construct, key) {
        (Construct::Wait, Key::Wait) => "wait(…)",
        _ => key.name(),
    }
}

/// A positive integer literal's value.
pub(super) fn positive_literal(e: &Expr) -> Option<u64> {
    match e.kind {
        ExprKind::Int(v, _) if v > 0 => Some(v),
        _ => None,
    }
}

/// An integer literal that is zero or negative (`0`, `-4`), which can never be a valid count.
fn non_positive_literal(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Int(0, _) => true,
        ExprKind::Unary(UnOp::Neg, inner) => matches!(inner.kind, ExprKind::Int(..)),
        _ => false,
    }
}

fn check_literal_args(
    construct: Construct,
    kind: &ClauseKind,
    span: Span,
    diags: &mut Vec<Diagnostic>,
) {
    match kind {
        ClauseKind::Collapse(n) if positive_literal(n).is_none() => {
            diags.push(
                Diagnostic::error(
                    "`collapse` needs a positive integer literal",
                    n.span,
                    "not a positive integer literal",
                )
                .with_help("write the number of loops to collapse, e.g. `collapse(2)`"),
            );
        }
        ClauseKind::Tile(sizes) => {
            if sizes.is_empty() {
                diags.push(
                    Diagnostic::error("`tile` needs at least one size", span, "no tile sizes")
                        .with_help("give one size per loop, e.g. `tile(32, 32)` or `tile(*)`"),
                );
            }
            for size in sizes.iter().flatten() {
                if positive_literal(size).is_none() {
                    diags.push(
                        Diagnostic::error(
                            "a tile size must be a positive integer literal or `*`",
                            size.span,
                            "not a positive integer literal",
                        )
                        .with_help(
                            "write a constant such as `32`, or `*` to let the compiler choose",
                        ),
                    );
                }
            }
        }
        ClauseKind::NumGangs(e) | ClauseKind::NumWorkers(e) | ClauseKind::VectorLength(e)
            if non_positive_literal(e) =>
        {
            diags.push(
                Diagnostic::error(
                    format!("`{}` must be at least 1", kind.name()),
                    e.span,
                    "not a positive count",
                )
                .with_help(format!(
                    "give a positive count, or remove `{}`",
                    kind.name()
                )),
            );
        }
        ClauseKind::Gang(Some(e)) | ClauseKind::Worker(Some(e)) | ClauseKind::Vector(Some(e)) => {
            if construct == Construct::Routine {
                diags.push(
                    Diagnostic::error(
                        format!("`{}` on `acc routine` takes no argument", kind.name()),
                        e.span,
                        "unexpected argument",
                    )
                    .with_help(format!(
                        "write `acc routine {}`; the caller's construct sets the size",
                        kind.name()
                    )),
                );
            } else if non_positive_literal(e) {
                diags.push(
                    Diagnostic::error(
                        format!("`{}` must be at least 1", kind.name()),
                        e.span,
                        "not a positive count",
                    )
                    .with_help(format!(
                        "give a positive count, or write `{}` alone",
                        kind.name()
                    )),
                );
            }
        }
        // This first version cuts the work by constant device lists (LANGUAGE.md 7.11).
        ClauseKind::Devices(Some(numbers)) => {
            for e in numbers {
                if let ExprKind::Int(v, _) = e.kind {
                    if v > acc_abi::DataModifiers::MAX_LISTED_DEVICE as u64 {
                        diags.push(
                            Diagnostic::error(
                                format!(
                                    "device numbers in `devices(…)` are 0 to {}",
                                    acc_abi::DataModifiers::MAX_LISTED_DEVICE
                                ),
                                e.span,
                                "too large",
                            )
                            .with_help("write `devices(all)` for every device of the node"),
                        );
                    }
                } else {
                    diags.push(
                        Diagnostic::error(
                            "device numbers in `devices(…)` must be integer literals",
                            e.span,
                            "not an integer literal ≥ 0",
                        )
                        .with_help(
                            "write the numbers, such as `devices(0, 1)`, or `devices(all)` for every device",
                        ),
                    );
                }
            }
        }
        ClauseKind::Async(Some(e)) => {
            if matches!(&e.kind, ExprKind::Unary(UnOp::Neg, inner) if matches!(inner.kind, ExprKind::Int(..)))
            {
                diags.push(
                    Diagnostic::error(
                        "an async queue must be an integer ≥ 0",
                        e.span,
                        "negative queue",
                    )
                    .with_help("use a queue number ≥ 0, or `async` alone for the default queue"),
                );
            }
        }
        _ => {}
    }
}

fn has(d: &Directive, f: impl Fn(Key) -> bool) -> bool {
    d.clauses.iter().any(|c| f(c.kind.key()))
}

/// Constructs that do nothing without some clause.
fn check_required(d: &Directive, diags: &mut Vec<Diagnostic>) {
    let (needed, example) = match d.construct {
        Construct::Update if !has(d, |k| k == Key::Update) => (
            "`acc update` needs a `host(…)`, `self(…)` or `device(…)` clause",
            "e.g. `acc update host(a)` to copy `a` back to the host",
        ),
        Construct::EnterData if !has(d, |k| matches!(k, Key::Data(_))) => (
            "`acc enter data` needs a `copyin` or `create` clause",
            "e.g. `acc enter data copyin(a)`",
        ),
        Construct::ExitData if !has(d, |k| matches!(k, Key::Data(_))) => (
            "`acc exit data` needs a `copyout` or `delete` clause",
            "e.g. `acc exit data copyout(a)`",
        ),
        Construct::Data if !has(d, |k| matches!(k, Key::Data(_) | Key::Default)) => (
            "`acc data` needs a data clause",
            "e.g. `acc data copy(a) { … }`",
        ),
        Construct::Declare if !has(d, |k| matches!(k, Key::Data(_))) => (
            "`acc declare` needs a `create` or `copyin` clause",
            "e.g. `acc declare create(a)` after `let a = …`",
        ),
        Construct::Set
            if !has(d, |k| {
                matches!(k, Key::DeviceNum | Key::DeviceType | Key::DefaultAsync)
            }) =>
        {
            (
                "`acc set` needs a `device_num`, `device_type` or `default_async` clause",
                "e.g. `acc set device_num(1)`",
            )
        }
        _ => return,
    };
    diags.push(Diagnostic::error(needed, d.span, "nothing to do").with_help(example));
}
