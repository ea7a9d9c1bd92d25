//! Rust functions called by a script:
//!
//!     cargo run --example embed_register
//!
//! The program registers a sensor reading and a validated conversion; the script calls them
//! like its own functions, with their signatures checked when it compiles.

use acc::{Engine, Error};

fn main() -> Result<(), Error> {
    let mut engine = Engine::new()?;
    // A reading from the host program's world (here: a fixed table).
    let readings = [12.5, 13.0, 12.75, 14.25];
    engine.register_fn("reading", move |i: i64| {
        readings[i as usize % readings.len()]
    })?;
    // A conversion that refuses bad input: its `Err` is a run-time error at the call.
    engine.register_fn("kelvin", |celsius: f64| -> Result<f64, String> {
        if celsius < -273.15 {
            Err(format!("{celsius} °C is below absolute zero"))
        } else {
            Ok(celsius + 273.15)
        }
    })?;
    engine.run(
        "average.acc",
        "let total = 0.0
         for i in 0..8 { total += kelvin(reading(i)) }
         printf(\"mean %.3f K\\n\", total / 8.0)",
    )?;
    // A script that calls one with a bad value stops there, with the function's message.
    if let Err(e) = engine.run("bad.acc", "print(kelvin(-300.0))") {
        println!("{e}");
    }
    // A call in device code is refused when the script compiles.
    if let Err(e) = engine.run(
        "device.acc",
        "let t = zeros(8)\nacc parallel loop copy(t)\nfor i in 0..8 { t[i] = reading(i) }",
    ) {
        println!("{e}");
    }
    Ok(())
}
