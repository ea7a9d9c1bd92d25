//! A watchdog thread stops a runaway script; the engine, its globals and functions go on:
//!
//!     cargo run --example embed_watchdog
//!
//! Also shows `Limits`: a time limit and a call-depth limit enforced by the engine itself.

use std::time::{Duration, Instant};

use acc::{Engine, Error, Limits};

fn main() -> Result<(), Error> {
    let mut engine = Engine::new()?;
    engine.run(
        "user.acc",
        "let iterations: i64 = 0
         // A user's script with a bug: the loop never ends.
         fn search(target: f64) -> f64 {
             let x = 0.0
             while x * x != target {
                 x += 0.1
                 iterations += 1
             }
             return x
         }",
    )?;

    // Whoever holds the handle can stop the engine's run, from any thread.
    let stop = engine.interrupt_handle();
    let watchdog = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        stop.interrupt();
    });
    let started = Instant::now();
    match engine.call::<(f64,), f64>("search", (2.0,)) {
        Err(e @ Error::Interrupted { .. }) => {
            println!("stopped after {:?}:\n{e}", started.elapsed())
        }
        other => println!("unexpected: {other:?}"),
    }
    watchdog.join().expect("the watchdog thread");
    // The engine is still usable, and what the script did before it stopped is kept.
    println!(
        "iterations before the interrupt: {}",
        engine.global::<i64>("iterations")?
    );

    // The same, with the engine's own limits.
    engine.set_limits(Limits {
        max_run_time: Some(Duration::from_millis(100)),
        max_call_depth: Some(1000),
    });
    let err = engine.call::<(f64,), f64>("search", (3.0,)).unwrap_err();
    println!("with a time limit:\n{err}");
    engine.run("deep.acc", "fn down(n: i64) -> i64 { return down(n + 1) }")?;
    let err = engine.call::<(i64,), i64>("down", (0,)).unwrap_err();
    println!("with a depth limit:\n{err}");
    Ok(())
}
