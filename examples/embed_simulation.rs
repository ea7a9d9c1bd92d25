//! A Rust program that owns a simulation's data and scripts its kernel in acc:
//!
//!     cargo run --release --example embed_simulation [-- ROWS COLS]
//!
//! It loads `examples/embed_heat.acc`, hands it two grids made from `Vec<f64>`s (shared, not
//! copied), calls `advance` until the grid settles, and reads the result back. `ACC_DEVICE_TYPE`
//! chooses the device as for the `acc` command (host, multicore, emulated, nvidia).

use acc::{Array, Engine, Error};

fn main() -> Result<(), Error> {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<usize>());
    let rows = args.next().and_then(Result::ok).unwrap_or(200);
    let cols = args.next().and_then(Result::ok).unwrap_or(200);

    let mut engine = Engine::new()?;
    // Next to this file in the source tree (or under the current directory, for a copy of the
    // binary run elsewhere).
    let in_tree = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/embed_heat.acc");
    let path = [in_tree, "examples/embed_heat.acc"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
        .unwrap_or(in_tree);
    let source = std::fs::read_to_string(path).map_err(|e| Error::Io {
        path: path.into(),
        message: e.to_string(),
    })?;
    engine.run("embed_heat.acc", &source)?;
    let advance = engine.function::<(Array<f64>, Array<f64>, f64), f64>("advance")?;
    let mean = engine.function::<(Array<f64>,), f64>("mean")?;

    // The top edge is hot, the others cold; the interior starts cold.
    let mut grid = vec![0.0; rows * cols];
    grid[..cols].fill(100.0);
    let a = Array::from_vec(grid.clone(), &[rows, cols])?;
    let b = Array::from_vec(grid, &[rows, cols])?;

    let start = std::time::Instant::now();
    let (mut from, mut to) = (a, b);
    let mut steps = 0;
    loop {
        let change = advance.call(&mut engine, (from.clone(), to.clone(), 0.2))?;
        std::mem::swap(&mut from, &mut to);
        steps += 1;
        if change < 1e-3 || steps == 100_000 {
            println!("settled after {steps} steps (last change {change:.2e})");
            break;
        }
    }
    let elapsed = start.elapsed();
    println!(
        "mean interior temperature {:.4}, centre {:.4}",
        mean.call(&mut engine, (from.clone(),))?,
        from.read(|t| t[(rows / 2) * cols + cols / 2])
    );
    println!(
        "{rows}x{cols}: {:.1} us per step",
        elapsed.as_secs_f64() * 1e6 / f64::from(steps)
    );
    Ok(())
}
