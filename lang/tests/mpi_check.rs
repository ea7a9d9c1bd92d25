//! The checker on the `mpi_*` built-ins with MPI enabled (as the `acc` command built with the
//! `mpi` feature enables it): the operator strings of `mpi_allreduce`, the types of the
//! buffers, sections with single indices. (Without MPI each call is an error that says how to
//! build acc with it: `repl/tests/mpi_disabled.rs`.) This test binary enables MPI for its
//! whole process, so it has one test.

use acc_lang::builtins::enable_mpi;
use acc_lang::{check_source, SourceFile};

/// The first error's message and help, or `None` when the script checks.
fn error(text: &str) -> Option<(String, String)> {
    let source = SourceFile::new("t.acc", text);
    match check_source(&source) {
        Ok(_) => None,
        Err(diags) => {
            let d = diags.into_iter().find(|d| d.is_error())?;
            Some((d.message.clone(), d.help.clone().unwrap_or_default()))
        }
    }
}

#[test]
fn mpi_calls_check() {
    enable_mpi(true);
    let ok = [
        "let r: i32 = mpi_rank() + mpi_size()\nmpi_barrier()\nlet t: f64 = mpi_wtime()",
        "let x: f64 = mpi_allreduce(1.5, \"+\")",
        "let k: i64 = mpi_allreduce(3, \"^\")",
        "let b: bool = mpi_allreduce(true, \"&&\")",
        "let a = zeros(4, 5)\nmpi_allreduce(a, \"max\")\nmpi_allreduce(a[1, 0:5], \"min\")",
        "let a = zeros(4, 5)\nmpi_bcast(a, 0)\nlet y: f32 = mpi_bcast(1.0f32, 0)",
        "let a = zeros(4, 5)\nlet b = zeros(5)\nmpi_sendrecv(a[1, 0:5], 1, b, 0)",
        "let a = zeros(i32, 4)\nmpi_send(a[0:2], 1)\nmpi_recv(a[2:2], 1)",
    ];
    for text in ok {
        assert_eq!(error(text), None, "{text}");
    }
    let bad = [
        (
            "mpi_allreduce(1.0, \"sum\")",
            "has no operator \"sum\"",
            "\"+\", \"*\"",
        ),
        (
            "mpi_allreduce(1.0, \"&\")",
            "\"&\" does not apply to f64",
            "integers",
        ),
        (
            "mpi_allreduce(true, \"+\")",
            "does not apply to bool",
            "\"&&\"",
        ),
        ("let op = \"+\"\nmpi_allreduce(1, op)", "string", ""),
        (
            "let a = zeros(3)\nlet b = zeros(i32, 3)\nmpi_sendrecv(a, 0, b, 0)",
            "one element type",
            "",
        ),
        (
            "mpi_send(1.0, 0)",
            "takes an array or an array section",
            "fill(x, 1)",
        ),
        (
            "let a = zeros(3)\nmpi_recv(a, 1.5)",
            "must be an integer",
            "",
        ),
        ("mpi_barrier(1)", "takes 0 arguments", ""),
    ];
    for (text, message, help) in bad {
        let Some((m, h)) = error(text) else {
            panic!("{text}: checked")
        };
        assert!(m.contains(message), "{text}: {m}");
        assert!(h.contains(help), "{text}: {h}");
    }
    // Device code cannot call MPI.
    let (m, h) = error(
        "let a = zeros(4)\nacc parallel loop copy(a)\nfor i in 0..4 { a[i] = mpi_rank() as f64 }",
    )
    .expect("an error");
    assert!(
        m.contains("`mpi_rank` cannot be called in device code"),
        "{m}"
    );
    assert!(h.contains("host code"), "{h}");
}
