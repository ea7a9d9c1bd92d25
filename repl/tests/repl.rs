//! The REPL with its input piped in: it reads on until a construct is whole, runs each input
//! in one session, survives errors, and ends with `exit`'s status or 0.

mod support;

/// Feed `input` to `acc ARGS` with no script; (exit status, stdout, stderr).
fn session(args: &[&str], input: &str) -> (i32, String, String) {
    support::acc_piped(None, args, input)
}

#[test]
fn a_directive_line_waits_for_its_loop_and_the_region_runs_on_the_device() {
    let input = "let a = zeros(4)
acc parallel loop copy(a)
for i in 0..4 {
    a[i] = 2.0 * i
}
print(a)
print(b)
a[1]
";
    let (status, stdout, stderr) = session(&["--device", "emulated", "--profile"], input);
    assert_eq!(status, 0, "{stderr}");
    // The error of the fourth input is shown and the session goes on.
    assert_eq!(stdout, "[0.0, 2.0, 4.0, 6.0]\n2.0\n", "{stderr}");
    assert!(stderr.contains("unknown variable `b`"), "{stderr}");
    assert!(!stderr.contains("must be followed"), "{stderr}");
    // `--profile` reports at the end of the session: the loop ran as a compute region.
    assert!(
        stderr.contains("parallel loop reached 1 time on emulated:0"),
        "{stderr}"
    );
}

#[test]
fn unfinished_input_at_the_end_shows_its_error() {
    let (status, stdout, stderr) = session(&["--device", "emulated"], "acc parallel loop\n");
    assert_eq!((status, stdout.as_str()), (0, ""), "{stderr}");
    assert!(
        stderr.contains("`acc parallel loop` must be followed by a `for` loop"),
        "{stderr}"
    );
}

#[test]
fn exit_ends_the_session_with_its_status() {
    let (status, stdout, stderr) = session(&[], "print(1)\nexit(3)\nprint(2)\n");
    assert_eq!((status, stdout.as_str()), (3, "1\n"), "{stderr}");
}

#[test]
fn emit_needs_a_script() {
    let (status, _, stderr) = session(&["--emit", "ptx"], "print(1)\n");
    assert_eq!(status, 2, "{stderr}");
    assert!(stderr.contains("name the script"), "{stderr}");
}
