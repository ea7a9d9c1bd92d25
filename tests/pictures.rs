//! `imshow` and `plot` through the embedding API: pictures reach the display or the named
//! file, they show the array as it is laid out (row 0 on top, columns left to right), and
//! mistakes are errors at the call. Expected colours are viridis's published end points.

use std::sync::{Arc, Mutex};

use acc::{Engine, Picture};
use acc_runtime::host::SharedBuffer;

const DARKEST: [u8; 3] = [0x44, 0x01, 0x54];
const BRIGHTEST: [u8; 3] = [0xfd, 0xe7, 0x25];

fn engine() -> (Engine, SharedBuffer) {
    let out = SharedBuffer::new();
    let engine = Engine::with_output(Box::new(out.clone())).expect("engine");
    (engine, out)
}

/// An engine whose pictures are collected instead of written.
fn displaying() -> (Engine, SharedBuffer, Arc<Mutex<Vec<Picture>>>) {
    let (mut e, out) = engine();
    let shown: Arc<Mutex<Vec<Picture>>> = Arc::default();
    let sink = shown.clone();
    e.set_display(move |p| sink.lock().unwrap().push(p));
    (e, out, shown)
}

/// A decoded PNG: width, height and RGB pixels.
fn decode(png: &[u8]) -> (usize, usize, Vec<[u8; 3]>) {
    let mut reader = png::Decoder::new(std::io::Cursor::new(png))
        .read_info()
        .expect("a PNG");
    let mut bytes = vec![0; reader.output_buffer_size().expect("a size")];
    let info = reader.next_frame(&mut bytes).expect("a frame");
    assert_eq!(info.color_type, png::ColorType::Rgb);
    let pixels = bytes[..info.buffer_size()]
        .chunks(3)
        .map(|c| [c[0], c[1], c[2]])
        .collect();
    (info.width as usize, info.height as usize, pixels)
}

/// The bounding box (x0, y0, x1, y1) of the pixels of `colour` left of column `before`.
fn bbox(image: &(usize, usize, Vec<[u8; 3]>), colour: [u8; 3], before: usize) -> [usize; 4] {
    let (w, _, pixels) = image;
    let mut b = [usize::MAX, usize::MAX, 0, 0];
    for (i, &p) in pixels.iter().enumerate() {
        let (x, y) = (i % w, i / w);
        if p == colour && x < before {
            b = [b[0].min(x), b[1].min(y), b[2].max(x), b[3].max(y)];
        }
    }
    assert!(b[0] != usize::MAX, "no pixel of {colour:?}");
    b
}

#[test]
fn the_display_gets_the_picture_and_no_file_is_written() {
    let (mut e, out, shown) = displaying();
    e.run("d.acc", "imshow(zeros(3, 4))\nplot(iota(5))")
        .unwrap();
    let shown = shown.lock().unwrap();
    assert_eq!(shown.len(), 2);
    for p in shown.iter() {
        let (w, h, _) = decode(&p.png);
        assert_eq!((w, h), (p.width as usize, p.height as usize));
    }
    assert_eq!(out.contents(), "", "nothing printed: the display shows it");
    assert!(!std::path::Path::new("acc-plot-1.png").exists());
}

#[test]
fn a_heat_map_shows_row_zero_on_top() {
    // Two rows of three: the minimum in the top-left cell, the maximum in the bottom-right.
    let (mut e, _, shown) = displaying();
    e.run(
        "h.acc",
        "let a = zeros(i32, 2, 3)\na[0, 0] = -5\na[1, 2] = 9\nimshow(a)",
    )
    .unwrap();
    let picture = shown.lock().unwrap().pop().expect("a picture");
    let image = decode(&picture.png);
    // The colour bar (right of the cells) has both end colours too: look left of it, at the
    // cells, which span most of the width.
    let cells_end = image.0 * 3 / 4;
    let dark = bbox(&image, DARKEST, cells_end);
    let bright = bbox(&image, BRIGHTEST, cells_end);
    let (cell_w, cell_h) = (dark[2] - dark[0] + 1, dark[3] - dark[1] + 1);
    assert!(
        cell_w > 100 && (cell_w as i64 - cell_h as i64).abs() <= 1,
        "{dark:?}"
    );
    // The bright cell is two cells right of and one cell below the dark one (cells are whole
    // pixels, so a cell may be one narrower than another).
    let near = |a: usize, b: usize| a.abs_diff(b) <= 1;
    assert!(near(bright[0], dark[0] + 2 * cell_w), "{dark:?} {bright:?}");
    assert!(near(bright[1], dark[1] + cell_h), "{dark:?} {bright:?}");
}

#[test]
fn a_named_file_is_written_there() {
    let dir = std::env::temp_dir().join(format!("acc-pictures-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("line.png");
    let (mut e, out, shown) = displaying();
    let script = format!(
        "plot(linspace(0.0, 1.0, 50), iota(50), {:?})",
        path.display()
    );
    e.run("f.acc", &script).unwrap();
    assert!(
        shown.lock().unwrap().is_empty(),
        "a named picture is a file"
    );
    assert_eq!(out.contents(), format!("wrote {}\n", path.display()));
    let (w, h, _) = decode(&std::fs::read(&path).unwrap());
    assert_eq!((w, h), (720, 480));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The rendered error of running `script`, and checks that the engine goes on.
fn run_error(script: &str) -> String {
    let (mut e, _, _) = displaying();
    let err = e.run("bad.acc", script).unwrap_err();
    e.run("ok.acc", "plot(iota(3))").unwrap();
    err.render(false)
}

#[test]
fn lengths_and_emptiness_are_errors_at_the_call() {
    let text = run_error("let x = zeros(3)\nlet y = zeros(4)\n  plot(x, y)");
    assert!(text.contains("x has 3 elements but y has 4"), "{text}");
    assert!(text.contains("bad.acc:3:3"), "{text}");
    let text = run_error("let n = 0\nimshow(zeros(n, 5))");
    assert!(text.contains("`imshow` of an empty array"), "{text}");
    assert!(text.contains("bad.acc:2:1"), "{text}");
    assert!(text.contains("help:"), "{text}");
    let text = run_error("plot(zeros(i64, 0), \"e.png\")");
    assert!(text.contains("`plot` of an empty array"), "{text}");
    assert!(!std::path::Path::new("e.png").exists());
}

#[test]
fn unwritable_files_are_errors_at_the_call() {
    let text = run_error("let a = ones(2, 2)\nimshow(a, \"/no/such/folder/a.png\")");
    assert!(
        text.contains("cannot write the picture to `/no/such/folder/a.png`"),
        "{text}"
    );
    assert!(text.contains("bad.acc:2:1"), "{text}");
}

#[test]
fn wrong_ranks_and_types_are_compile_errors() {
    for (script, message, at) in [
        (
            "imshow(zeros(4))",
            "`imshow` draws a rank-2 array, found f64[]",
            "1:8",
        ),
        (
            "plot(zeros(2, 2))",
            "`plot` draws rank-1 arrays, found f64[,]",
            "1:6",
        ),
        ("plot(iota(3), ones(3, 1))", "found f64[,]", "1:15"),
        ("imshow(1.5)", "`imshow` takes an array, found f64", "1:8"),
        (
            "plot(iota(3), 2)",
            "`plot` takes an array, found i64",
            "1:15",
        ),
        (
            "plot(iota(3), iota(3), iota(3))",
            "must be a string literal",
            "1:24",
        ),
        (
            "imshow(ones(2, 2), \"\")",
            "the file name of `imshow` is empty",
            "1:20",
        ),
        (
            "imshow()",
            "`imshow` takes 1 to 2 arguments but 0 were given",
            "1:1",
        ),
    ] {
        let (mut e, _, _) = displaying();
        let err = e.run("bad.acc", script).unwrap_err();
        assert_eq!(err.exit_code(), acc::EXIT_COMPILE_ERROR, "{script}");
        let text = err.render(false);
        assert!(text.contains(message), "{script}: {text}");
        assert!(text.contains(&format!("bad.acc:{at}")), "{script}: {text}");
    }
}

#[test]
fn device_code_cannot_draw() {
    let (mut e, _, _) = displaying();
    let script = "let a = zeros(8, 8)\nfn show(t: f64[,]) { imshow(t) }\n\
                  acc parallel loop copy(a)\nfor i in 0..8 {\n    show(a)\n}";
    let err = e.run("dev.acc", script).unwrap_err();
    assert_eq!(err.exit_code(), acc::EXIT_COMPILE_ERROR);
    let text = err.render(false);
    assert!(
        text.contains("`imshow` cannot be called in device code"),
        "{text}"
    );
    assert!(text.contains("dev.acc:2:22"), "{text}");
}

#[test]
fn every_element_type_draws() {
    let (mut e, _, shown) = displaying();
    e.run(
        "t.acc",
        "imshow(zeros(bool, 2, 2))\nimshow(ones(f32, 2, 3))\nimshow(fill(7, 3, 3))\n\
         plot(iota(4), ones(i32, 4))\nplot(fill(true, 3))\nplot(linspace(0.0, 1.0, 3), ones(f32, 3))",
    )
    .unwrap();
    assert_eq!(shown.lock().unwrap().len(), 6);
}
