//! The interactive session without a terminal (what the REPL and a notebook kernel share):
//! each `:` command, code, values as the REPL shows them, and what survives what.

use std::io::Write;
use std::sync::{Arc, Mutex};

use acc_repl::session::{split_value, CellOutcome, Outcome, Reply, Session};

/// What the session's code printed, shared with the test.
#[derive(Clone, Default)]
struct Output(Arc<Mutex<Vec<u8>>>);

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Output {
    /// The text printed since the last call.
    fn take(&self) -> String {
        String::from_utf8(std::mem::take(&mut *self.0.lock().unwrap())).unwrap()
    }
}

/// A session on `device` printing to the returned output (`:reset` keeps both).
fn session(device: &str) -> (Session, Output) {
    let out = Output::default();
    let theirs = out.clone();
    let device = device.to_string();
    let make = move || {
        let mut engine = acc::Engine::with_output(Box::new(theirs.clone()))?;
        let mut options = acc::DeviceOptions::default();
        options.set_device(&device).map_err(acc::Error::Usage)?;
        engine.set_devices(options);
        Ok(engine)
    };
    let first = make().expect("an engine");
    (Session::new(first, Box::new(make)), out)
}

/// The text of a command's reply.
#[track_caller]
fn reply(s: &mut Session, input: &str) -> String {
    match s.eval(input) {
        Outcome::Reply(r) => r.to_text(),
        Outcome::Failed(e) => panic!("{input}: {}", e.render(false)),
        Outcome::Ran => panic!("{input}: no reply"),
        Outcome::End(n) => panic!("{input}: ended with {n}"),
    }
}

/// The rendered error of an input that fails.
#[track_caller]
fn error(s: &mut Session, input: &str) -> String {
    match s.eval(input) {
        Outcome::Failed(e) => e.render(false),
        _ => panic!("{input}: expected an error"),
    }
}

#[track_caller]
fn run(s: &mut Session, input: &str) {
    match s.eval(input) {
        Outcome::Ran => {}
        Outcome::Failed(e) => panic!("{input}: {}", e.render(false)),
        _ => panic!("{input}: expected code"),
    }
}

#[test]
fn values_show_like_numpy() {
    let (mut s, out) = session("host");
    run(&mut s, "iota(1000)");
    assert_eq!(out.take(), "i64[1000]\n[0, 1, 2, ..., 997, 998, 999]\n");
    run(&mut s, "reshape(iota(24), 2, 12)");
    assert_eq!(
        out.take(),
        "i64[2, 12]\n[[0, 1, 2, ..., 9, 10, 11],\n [12, 13, 14, ..., 21, 22, 23]]\n"
    );
    // Small arrays print whole, without a heading; so does `print` of a large one.
    run(&mut s, "fill(2.5f32, 3)\nprint(iota(20))");
    assert_eq!(out.take(), "[2.5, 2.5, 2.5]\n[0, 1, 2, ..., 17, 18, 19]\n");
    // A device type shows its name, from `acc_get_device_type()` or named on its own; the
    // number it stands for (acc_device_host is 2) shows when it is computed with.
    run(
        &mut s,
        "acc_get_device_type()\nacc_device_host\nacc_device_nvidia\nacc_device_host + 0",
    );
    assert_eq!(
        out.take(),
        "acc_device_host\nacc_device_host\nacc_device_nvidia\n2\n"
    );
    // A line ending in an operator reads on.
    assert!(Session::awaits_more("let t = 1 +\n"));
    run(&mut s, "let t = 1 +\n2\nt * 10");
    assert_eq!(out.take(), "30\n");
}

#[test]
fn help_lists_every_command() {
    let (mut s, _) = session("host");
    let help = reply(&mut s, ":help");
    for c in acc_repl::session::COMMANDS {
        assert!(
            help.contains(&format!("  {} ", c.name)),
            "{} in\n{help}",
            c.name
        );
    }
    assert_eq!(help.lines().count(), acc_repl::session::COMMANDS.len() + 1);
    let unknown = error(&mut s, ":fnucs");
    assert!(
        unknown.contains("unknown command `:fnucs` (did you mean `:funcs`?)"),
        "{unknown}"
    );
    assert!(error(&mut s, ":vars x").contains("`:vars` takes nothing after it"));
}

#[test]
fn type_of_expressions_and_shapes() {
    let (mut s, _) = session("host");
    run(&mut s, "let a = zeros(f32, 3, 4)\nlet k: i32 = 7");
    assert_eq!(reply(&mut s, ":type a"), "f32[,]  shape [3, 4]\n");
    assert_eq!(reply(&mut s, ":type a[0, 1] * 2"), "f32\n");
    assert_eq!(reply(&mut s, ":type k + 1"), "i32\n");
    assert_eq!(reply(&mut s, ":type k > 1"), "bool\n");
    let e = error(&mut s, ":type let b = 1");
    assert!(e.contains("expected an expression"), "{e}");
    let e = error(&mut s, ":type nope");
    assert!(
        e.contains("unknown variable `nope`") && e.contains("<type>:1:1"),
        "{e}"
    );
    assert!(error(&mut s, ":type").contains("`:type` needs an argument: `:type EXPR`"));
}

#[test]
fn vars_show_type_shape_and_devices() {
    let (mut s, _) = session("emulated");
    assert_eq!(reply(&mut s, ":vars"), "no globals yet\n");
    run(
        &mut s,
        "let a = zeros(4)\nlet b = ones(i32, 2, 3)\nlet n = 5\nacc enter data copyin(a)",
    );
    assert_eq!(
        reply(&mut s, ":vars"),
        "name  type    shape   present on\n\
         a     f64[]   [4]     emulated:0\n\
         b     i32[,]  [2, 3]\n\
         n     i64\n"
    );
    run(&mut s, "acc exit data delete(a)");
    assert!(reply(&mut s, ":vars").contains("a     f64[]   [4]\n"));
}

#[test]
fn funcs_show_signatures() {
    let (mut s, _) = session("host");
    assert_eq!(reply(&mut s, ":funcs"), "no functions yet\n");
    run(
        &mut s,
        "fn dot(x: f64[], y: f64[]) -> f64 { return sum(x) }\nfn hello() { print(1) }",
    );
    assert_eq!(
        reply(&mut s, ":funcs"),
        "fn dot(x: f64[], y: f64[]) -> f64\nfn hello()\n"
    );
}

#[test]
fn compiled_forms_leave_the_session_as_it_was() {
    let (mut s, out) = session("host");
    run(&mut s, "let a = zeros(4)");
    let region = ":ptx acc parallel loop copy(a)\nfor i in 0..4 { a[i] = 1.0 }";
    assert!(Session::awaits_more(":ptx acc parallel loop copy(a)\n"));
    assert!(!Session::awaits_more(region));
    let ptx = reply(&mut s, region);
    assert!(ptx.contains(".visible .entry acc_region_0("), "{ptx}");
    let ir = reply(&mut s, ":ir let m = a[0] + 1.0");
    assert!(ir.contains("global @m: f64"), "{ir}");
    let clif = reply(&mut s, ":clif fn twice(x: i64) -> i64 { return 2 * x }");
    assert!(clif.contains("function "), "{clif}");
    // Nothing ran, and nothing declared was kept.
    assert_eq!(out.take(), "");
    assert!(error(&mut s, "m").contains("unknown variable `m`"));
    assert!(error(&mut s, "twice(1)").contains("twice"));
    run(&mut s, "a[0]");
    assert_eq!(out.take(), "0.0\n");
    let e = error(&mut s, ":ir let = 1");
    assert!(e.contains("<repl:"), "{e}");
}

#[test]
fn time_reports_launches_and_bytes() {
    let (mut s, out) = session("emulated");
    run(&mut s, "let a = zeros(4)");
    let timed = reply(
        &mut s,
        ":time acc parallel loop copy(a)\nfor i in 0..4 { a[i] = 2.0 * i }\nprint(a)",
    );
    assert_eq!(out.take(), "[0.0, 2.0, 4.0, 6.0]\n");
    let lines: Vec<&str> = timed.lines().collect();
    assert_eq!(lines.len(), 2, "{timed}");
    let heads: Vec<&str> = lines[0]
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    assert_eq!(
        heads,
        ["wall", "device", "launches", "moved in", "moved out"]
    );
    let cells: Vec<&str> = lines[1]
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    // One launch; four f64 in and out: 32 bytes each way.
    assert_eq!(&cells[2..], ["1", "32 B", "32 B"], "{timed}");
    assert!(
        cells[0].ends_with('s') && cells[1].ends_with('s'),
        "{timed}"
    );
    // `:time` turned the profile on for its run only, and kept nothing of it.
    run(
        &mut s,
        "acc parallel loop copy(a)\nfor i in 0..4 { a[i] = 0.0 }",
    );
    let report = reply(&mut s, ":profile");
    assert!(report.contains("totals: reached 0, launches 0"), "{report}");
    // With the profile on, the timed run is part of it.
    reply(&mut s, ":profile on");
    reply(
        &mut s,
        ":time acc parallel loop copy(a)\nfor i in 0..4 { a[i] = 1.0 }",
    );
    let report = reply(&mut s, ":profile off");
    assert!(
        report.contains("parallel loop reached 1 time on emulated:0"),
        "{report}"
    );
}

#[test]
fn profile_on_and_off() {
    let (mut s, _) = session("emulated");
    let region = "acc parallel loop copy(a)\nfor i in 0..4 { a[i] = 1.0 }";
    run(&mut s, "let a = zeros(4)");
    assert!(reply(&mut s, ":profile on").starts_with("profiling on"));
    run(&mut s, region);
    let report = reply(&mut s, ":profile");
    assert!(
        report.contains("parallel loop reached 1 time on emulated:0"),
        "{report}"
    );
    run(&mut s, region);
    let last = reply(&mut s, ":profile off");
    assert!(last.contains("parallel loop reached 1 time"), "{last}");
    // Two inputs, each with its loop.
    assert_eq!(
        last.matches("parallel loop reached 1 time on emulated:0")
            .count(),
        2,
        "{last}"
    );
    // Off: nothing more is collected, and what was shown is gone.
    run(&mut s, region);
    let after = reply(&mut s, ":profile");
    assert!(after.contains("totals: reached 0, launches 0"), "{after}");
    assert!(error(&mut s, ":profile maybe").contains("takes `on`, `off` or nothing"));
}

#[test]
fn devices_and_switching() {
    let (mut s, out) = session("host");
    let table = reply(&mut s, ":devices");
    let rows: Vec<&str> = table.lines().collect();
    assert_eq!(
        rows[0].split_whitespace().collect::<Vec<_>>(),
        ["device", "memory"]
    );
    assert!(
        rows[1].starts_with("host:0") && rows[1].ends_with("current"),
        "{table}"
    );
    assert!(rows.iter().any(|r| r.starts_with("emulated:1")), "{table}");
    assert_eq!(
        reply(&mut s, ":device emulated:1"),
        "current device: emulated:1\n"
    );
    run(&mut s, "print(acc_get_device_num(acc_device_emulated))");
    assert_eq!(out.take(), "1\n");
    let marked: Vec<String> = reply(&mut s, ":devices")
        .lines()
        .filter(|r| r.ends_with("current"))
        .map(|r| r.split_whitespace().next().unwrap().to_string())
        .collect();
    assert_eq!(marked, ["emulated:1"]);
    assert_eq!(reply(&mut s, ":device"), "current device: emulated:1\n");
    let e = error(&mut s, ":device emulated:7");
    assert!(e.contains("there is no emulated device 7"), "{e}");
    assert!(error(&mut s, ":device tpu").contains("unknown device type `tpu`"));
}

#[test]
fn save_then_load_gives_the_same_session() {
    let dir = std::env::temp_dir().join(format!("acc-session-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("saved.acc");
    let script = script.to_str().unwrap();
    let (mut s, out) = session("host");
    run(
        &mut s,
        "let v = iota(5)\nfn total() -> i64 { return sum(v) }",
    );
    let _ = error(&mut s, "let broken = nope"); // not saved: it did not run
    run(&mut s, "v[0] = 10");
    assert_eq!(
        reply(&mut s, &format!(":save {script}")),
        format!("wrote 2 inputs to {script}\n")
    );
    let text = std::fs::read_to_string(script).unwrap();
    assert_eq!(
        text,
        "let v = iota(5)\nfn total() -> i64 { return sum(v) }\nv[0] = 10\n"
    );
    let _ = out.take();
    // A new session loads it and has what the first had: 10 + 1 + 2 + 3 + 4.
    let (mut t, out) = session("host");
    match t.eval(&format!(":load {script}")) {
        Outcome::Ran => {}
        _ => panic!("the saved script runs"),
    }
    run(&mut t, "total()");
    assert_eq!(out.take(), "20\n");
    assert!(error(&mut t, &format!(":load {}/missing.acc", dir.display())).contains("cannot read"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn reset_and_quit() {
    let (mut s, out) = session("host");
    run(&mut s, "let x = 1\nfn f() -> i64 { return x }");
    let said = reply(&mut s, ":reset");
    assert!(said.contains("starts again"), "{said}");
    assert_eq!(reply(&mut s, ":vars"), "no globals yet\n");
    assert_eq!(reply(&mut s, ":funcs"), "no functions yet\n");
    assert!(error(&mut s, "x").contains("unknown variable `x`"));
    run(&mut s, "let x = 2.5\nx");
    assert_eq!(out.take(), "2.5\n");
    assert!(matches!(s.eval(":quit"), Outcome::End(0)));
    assert!(matches!(s.eval("exit(3)"), Outcome::End(3)));
}

#[test]
fn the_profile_table_has_the_bytes_devices_copy_to_each_other() {
    let (mut s, _) = session("emulated");
    run(&mut s, "let a = zeros(64, 8)\nlet b = zeros(64, 8)");
    reply(&mut s, ":profile on");
    // Two emulated devices (the default) each run half of rows 1..=62 (31 rows). Each copy
    // sweep (line 7 of the input) writes `a` rows the other device holds a copy of (its halo,
    // which the next stencil sweep reads): row 31 goes to device 1 and row 32 to device 0,
    // 64 bytes each, after both sweeps: 256 bytes.
    run(
        &mut s,
        "acc data copy(a, b) devices(all) {
    for t in 0..2 {
        acc parallel loop devices(all)
        for j in 1..63 {
            for i in 0..8 { b[j, i] = a[j - 1, i] + a[j + 1, i] + 1.0 }
        }
        acc parallel loop devices(all)
        for j in 1..63 {
            for i in 0..8 { a[j, i] = b[j, i] }
        }
    }
}",
    );
    let Outcome::Reply(report) = s.eval(":profile") else {
        panic!("a report");
    };
    let table = report.table().expect("a table");
    let column = |name: &str| table.headings.iter().position(|h| h == name).unwrap();
    let (place, peer, mpi) = (column("where"), column("peer"), column("MPI"));
    let copy_sweep = (table.rows.iter())
        .find(|r| r[place].ends_with(":7"))
        .unwrap_or_else(|| panic!("no row for line 7: {:?}", table.rows));
    assert_eq!(copy_sweep[peer], "256 B", "{:?}", table.rows);
    // The total is the sum of the constructs' rows (all under 1 kB here); no MPI.
    let (total, constructs) = table.rows.split_last().unwrap();
    let small = |cell: &str| cell.strip_suffix(" B").unwrap().parse::<u64>().unwrap();
    let sum: u64 = constructs.iter().map(|r| small(&r[peer])).sum();
    assert_eq!(small(&total[peer]), sum);
    assert_eq!(total[mpi], "0 B");
}

#[test]
fn replies_are_text_or_tables() {
    let (mut s, _) = session("host");
    run(&mut s, "let a = zeros(2)");
    match s.eval(":vars") {
        Outcome::Reply(Reply::Table(t)) => {
            assert_eq!(t.headings, ["name", "type", "shape", "present on"]);
            assert_eq!(t.rows, [["a", "f64[]", "[2]", ""]]);
        }
        _ => panic!("a table"),
    }
    assert!(matches!(s.eval(":funcs"), Outcome::Reply(Reply::Text(_))));
}

#[test]
fn names_for_completion() {
    let (mut s, _) = session("host");
    run(&mut s, "let grid = zeros(3, 3)\nfn relax(g: f64[,]) { }");
    let names = s.names();
    let completion = acc_repl::session::complete(&names, "gr", 2);
    assert_eq!(completion.candidates[0].text, "grid");
    assert_eq!(completion.candidates[0].detail, "f64[,]  shape [3, 3]");
    let about = acc_repl::session::inspect(&names, "relax(grid)", 7);
    assert_eq!(about.as_deref(), Some("grid: f64[,]  shape [3, 3]"));
    let about = acc_repl::session::inspect(&names, "relax(", 6);
    assert_eq!(about.as_deref(), Some("fn relax(g: f64[,])"));
}

/// A notebook cell: what it printed before its last statement, the output kept back from the
/// value's statement (from `value_starts` on), and the outcome with the value's type.
fn cell(s: &mut Session, out: &Output, code: &str) -> (String, Option<String>, CellOutcome) {
    let mut kept_at = None;
    let printed = std::cell::RefCell::new(String::new());
    let outcome = s.eval_cell(code, "<cell:1>", &mut || {
        *printed.borrow_mut() = out.take();
        kept_at = Some(());
    });
    let rest = out.take();
    match kept_at {
        Some(()) => (printed.into_inner(), Some(rest), outcome),
        None => (rest, None, outcome),
    }
}

#[test]
fn cells_set_their_last_value_apart() {
    let (mut s, out) = session("host");
    let (printed, kept, c) = cell(&mut s, &out, "let x = 6\nprint(\"six\")\nx * 7");
    assert!(matches!(c.outcome, Outcome::Ran));
    assert_eq!(printed, "six\n");
    assert_eq!(
        (kept.as_deref(), c.value_type.as_deref()),
        (Some("42\n"), Some("i64"))
    );

    // What the evaluation prints comes before the value; `split_value` parts them.
    let code =
        "fn noisy() -> f64[] {\n    print(\"[working]\")\n    return fill(1.5, 2)\n}\nnoisy()";
    let (_, kept, c) = cell(&mut s, &out, code);
    let kept = kept.expect("a value");
    assert_eq!(c.value_type.as_deref(), Some("f64[]"));
    assert_eq!(split_value(&kept, "f64[]"), ("[working]\n", "[1.5, 1.5]"));

    // No value: a statement, a call without a result, a command.
    for code in ["let y = 1", "print(x)", "fn f() { }\nf()", ":vars"] {
        let (_, kept, c) = cell(&mut s, &out, code);
        assert_eq!((kept, c.value_type), (None, None), "{code}");
    }
    // `:save` keeps each cell whole.
    assert!(
        s.script().contains("let x = 6\nprint(\"six\")\nx * 7\n"),
        "{}",
        s.script()
    );
}

#[test]
fn a_cell_is_checked_whole_and_its_messages_give_its_lines() {
    let (mut s, out) = session("host");
    // A mistake in the last statement stops the cell before any of it runs.
    let (printed, kept, c) = cell(&mut s, &out, "let a = 1\nprint(\"ran\")\na + nope");
    let Outcome::Failed(e) = c.outcome else {
        panic!("expected a compile error")
    };
    assert_eq!((printed.as_str(), kept), ("", None));
    assert!(
        e.render(false).contains("<cell:1>:3:5"),
        "{}",
        e.render(false)
    );
    assert!(error(&mut s, "a").contains("unknown variable `a`"));

    // A run-time error in the last statement points into the cell.
    let (_, _, c) = cell(&mut s, &out, "let v = zeros(3)\n\n  v[7]");
    let Outcome::Failed(e) = c.outcome else {
        panic!("expected a run-time error")
    };
    let text = e.render(false);
    assert!(text.contains(":3:3"), "{text}");
    assert!(text.contains("v[7]"), "{text}");
    // What ran before it stays.
    run(&mut s, "print(v)");
    assert_eq!(out.take(), "[0.0, 0.0, 0.0]\n");
}

/// A `kernels` loop parallelized in one input because `A` and `B` were different arrays
/// (LANGUAGE.md 7.6) stops at its launch once a later input makes them one (`B = A`), on every
/// host device, with the loop's place, both names and what to do; the arrays are untouched.
#[test]
fn a_later_input_that_makes_two_arrays_one_stops_a_loop_parallelized_on_them() {
    for device in ["host", "multicore", "emulated"] {
        let (mut s, out) = session(device);
        run(
            &mut s,
            "let n = 1000\nlet A = zeros(n)\nlet B = zeros(n)\nfn shift() {\n  acc kernels {\n    for i in 1..n { B[i] = A[i - 1] + 1.0 }\n  }\n}",
        );
        run(&mut s, "B = A");
        let e = error(&mut s, "shift()");
        assert!(
            e.contains("`B` and `A` are the same array, but this loop was parallelized because they were different"),
            "{device}: {e}"
        );
        assert!(e.contains(":6:5"), "{device}: the loop's place: {e}");
        assert!(
            e.contains("for i in 1..n { B[i] = A[i - 1] + 1.0 }"),
            "{device}: {e}"
        );
        assert!(
            e.contains("add `acc loop seq` before the loop, or give `B` its own storage with `B = copy(A)`"),
            "{device}: {e}"
        );
        run(&mut s, "print(sum(A))");
        assert_eq!(out.take(), "0.0\n", "{device}: nothing ran");
        run(&mut s, "B = copy(A)\nshift()\nprint(sum(B))");
        assert_eq!(out.take(), "999.0\n", "{device}: B[1..] = 0 + 1");
    }
}
