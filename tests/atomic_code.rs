//! Every atomic form compiles to the intended instruction on both back ends: one atomic
//! read-modify-write where the hardware has it, a compare-and-swap loop otherwise, an atomic
//! load for a read, an atomic store for a write, an exchange for a capture's write. Checked on
//! the code itself (`Engine::emit`), not only by results: a statement run without atomicity
//! gives the right answer most of the time.
//!
//! Each case is one region holding one atomic statement; the instruction must appear more often
//! than in the same program without the `acc atomic` line (whose plain statement needs none).

use acc::{Emit, Engine};

const TYPES: [&str; 4] = ["i32", "i64", "f32", "f64"];

/// Where the atomic location is: an element of a `copy` array, or a `copy` scalar.
const LOCATIONS: [(&str, &str); 2] = [("h[k]", "element"), ("c", "copy scalar")];

/// Where a read or capture puts the value: a local, an element, a `copy` scalar.
const TARGETS: [&str; 3] = ["v", "got[i]", "cv"];

/// What the statement does, for choosing the instruction.
#[derive(Clone, Copy, PartialEq)]
enum Op {
    /// One read-modify-write instruction on integers (`add sub and or xor min max`).
    Rmw(&'static str),
    /// `+` or `-`: one instruction on every type (PTX has float add).
    Add,
    /// Needs a compare-and-swap loop on every type.
    Cas,
    /// `min`/`max`: one instruction on integers, compare-and-swap on floats.
    MinMax(&'static str),
    Read,
    Write,
    /// A capture whose second half is a write: an exchange.
    Exchange,
}

struct Case {
    what: String,
    ty: &'static str,
    body: String,
    op: Op,
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    for ty in TYPES {
        let int = ty.starts_with('i');
        for (x, place) in LOCATIONS {
            let mut updates: Vec<(String, Op)> = vec![
                (format!("{x} += e"), Op::Add),
                (format!("{x} -= e"), Op::Add),
                (format!("{x} = {x} + e"), Op::Add),
                (format!("{x} = e + {x}"), Op::Add),
                (format!("{x} *= e"), Op::Cas),
                (format!("{x} /= e"), Op::Cas),
                (format!("{x} = e - {x}"), Op::Cas),
                (format!("{x} = max({x}, e)"), Op::MinMax("max")),
                (format!("{x} = min(e, {x})"), Op::MinMax("min")),
            ];
            if int {
                updates.push((format!("{x} &= e"), Op::Rmw("and")));
                updates.push((format!("{x} |= e"), Op::Rmw("or")));
                updates.push((format!("{x} = {x} ^ e"), Op::Rmw("xor")));
            }
            for (u, op) in &updates {
                out.push(Case {
                    what: format!("update `{u}` of a {ty} {place}"),
                    ty,
                    body: format!("acc atomic update\n{u}"),
                    op: *op,
                });
            }
            out.push(Case {
                what: format!("write of a {ty} {place}"),
                ty,
                body: format!("acc atomic write\n{x} = e"),
                op: Op::Write,
            });
            for v in TARGETS {
                out.push(Case {
                    what: format!("read of a {ty} {place} into `{v}`"),
                    ty,
                    body: format!("acc atomic read\n{v} = {x}"),
                    op: Op::Read,
                });
                let captures = [
                    (format!("{{ {v} = {x}; {x} += e }}"), Op::Add),
                    (format!("{{ {x} -= e; {v} = {x} }}"), Op::Add),
                    (format!("{{ {v} = {x}; {x} *= e }}"), Op::Cas),
                    (
                        format!("{{ {x} = max({x}, e); {v} = {x} }}"),
                        Op::MinMax("max"),
                    ),
                    (format!("{{ {v} = {x}; {x} = e }}"), Op::Exchange),
                ];
                for (c, op) in captures {
                    out.push(Case {
                        what: format!("capture `{c}` of a {ty} {place}"),
                        ty,
                        body: format!("acc atomic capture\n{c}"),
                        op,
                    });
                }
            }
        }
    }
    out
}

/// The program of a case, with or without its `acc atomic` line.
fn program(case: &Case, atomic: bool) -> String {
    let body: Vec<&str> = case
        .body
        .lines()
        .filter(|l| atomic || !l.starts_with("acc atomic"))
        .collect();
    let t = case.ty;
    format!(
        "let n = 1000\nlet h = zeros({t}, 8)\nlet got = zeros({t}, n)\nlet c = 0 as {t}\n\
         let cv = 0 as {t}\nlet src = ones({t}, n)\n\
         acc parallel loop copy(h, got, c, cv) copyin(src)\nfor i in 0..n {{\n\
         let k = i % 8\nlet e = src[i]\nlet v = 0 as {t}\n{}\ngot[i] += v\n}}\nprint(c, cv)\n",
        body.join("\n")
    )
}

/// The Cranelift instruction of a case.
fn clif_instruction(case: &Case) -> String {
    let t = case.ty;
    let int = t.starts_with('i');
    let rmw = |op: &str| format!("atomic_rmw.{t} {op}");
    match case.op {
        Op::Rmw(op) => rmw(op),
        Op::Add if int => {
            // `x -= e` is a `sub`; `x = x + e` and `e + x` are `add`s.
            if case.body.contains("-=") {
                rmw("sub")
            } else {
                rmw("add")
            }
        }
        Op::MinMax(m) if int => rmw(&format!("s{m}")),
        Op::Add | Op::Cas | Op::MinMax(_) => "atomic_cas".to_string(),
        Op::Read => "atomic_load".to_string(),
        Op::Write => "atomic_store".to_string(),
        Op::Exchange => "xchg".to_string(),
    }
}

/// The PTX instruction of a case.
fn ptx_instruction(case: &Case) -> String {
    let t = case.ty;
    let int = t.starts_with('i');
    let bits = if t.ends_with("32") { "b32" } else { "b64" };
    match case.op {
        Op::Rmw(op) => format!("atom.global.{op}.{bits}"),
        Op::Add if int => format!("atom.global.add.u{}", &t[1..]),
        Op::Add => format!("atom.global.add.{t}"),
        Op::MinMax(m) if int => format!("atom.global.{m}.s{}", &t[1..]),
        Op::Cas | Op::MinMax(_) => format!("atom.global.cas.{bits}"),
        Op::Read => "ld.relaxed.gpu.global".to_string(),
        Op::Write => "st.relaxed.gpu.global".to_string(),
        Op::Exchange => format!("atom.global.exch.{bits}"),
    }
}

/// How many instructions of `code` are `instruction` on a program location: the kernels'
/// error record is claimed with a compare-and-swap of the constants 0 and 1, which does not
/// count.
fn uses(code: &str, instruction: &str) -> usize {
    code.lines()
        .filter(|l| l.contains(instruction) && !l.trim_end().ends_with(", 0, 1;"))
        .count()
}

fn emit(text: &str, what: Emit) -> String {
    let mut engine = Engine::new().expect("engine");
    engine
        .emit("case.acc", text, what)
        .unwrap_or_else(|e| panic!("{}\n{text}", e.render(false)))
}

#[test]
fn every_atomic_form_is_an_atomic_instruction_on_both_back_ends() {
    let cases = cases();
    assert!(cases.len() > 200, "{} cases", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let (with, without) = (program(case, true), program(case, false));
        for (back_end, what, instruction) in [
            ("host", Emit::Clif, clif_instruction(case)),
            ("ptx", Emit::Ptx, ptx_instruction(case)),
        ] {
            let code = emit(&with, what);
            let plain = emit(&without, what);
            if back_end == "ptx" && code.contains("runs on the host") {
                failures.push(format!("{}: no PTX kernel: {code}", case.what));
                continue;
            }
            let (n, m) = (uses(&code, &instruction), uses(&plain, &instruction));
            if n <= m {
                failures.push(format!(
                    "{} ({back_end}): `{instruction}` {n} times, {m} without the directive",
                    case.what
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
