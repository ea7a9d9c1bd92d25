//! Pictures from the `acc` command: a script and a REPL session write `acc-plot-1.png`,
//! `acc-plot-2.png`, … (or the named file) in the current directory and print each name;
//! `acc test` runs scripts in scratch directories, so their pictures stay out of the tree.

use std::path::Path;

mod support;
use support::Scratch;

/// The PNG's width and height, read from its header (the signature, then the `IHDR` chunk).
fn png_size(path: &Path) -> (u32, u32) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{}", path.display());
    assert_eq!(&bytes[12..16], b"IHDR");
    let word = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
    (word(16), word(20))
}

fn acc(dir: &Path, args: &[&str], input: &str) -> (i32, String, String) {
    support::acc_piped(Some(dir), args, input)
}

#[test]
fn a_script_numbers_its_pictures_and_names_the_files() {
    let dir = Scratch::new("pictures-script");
    std::fs::write(
        dir.0.join("draw.acc"),
        "let a = zeros(4, 6)\na[2, 3] = 1.0\nimshow(a)\nplot(iota(10), \"line.png\")\n\
         print(\"between\")\nplot(linspace(0.0, 1.0, 5), iota(5))\n",
    )
    .unwrap();
    let (status, stdout, stderr) = acc(&dir.0, &["draw.acc"], "");
    assert_eq!(status, 0, "{stderr}");
    assert_eq!(
        stdout,
        "wrote acc-plot-1.png\nwrote line.png\nbetween\nwrote acc-plot-2.png\n"
    );
    let (w, h) = png_size(&dir.0.join("acc-plot-1.png"));
    assert!(w > h, "a 4 × 6 array is wider than high: {w} × {h}");
    assert_eq!(png_size(&dir.0.join("line.png")), (720, 480));
    assert_eq!(png_size(&dir.0.join("acc-plot-2.png")), (720, 480));
}

#[test]
fn a_repl_session_numbers_on_across_inputs() {
    let dir = Scratch::new("pictures-repl");
    let (status, stdout, stderr) = acc(
        &dir.0,
        &[],
        "let y = linspace(0.0, 2.0, 20)\nplot(y)\nplot(iota(20), y)\nplot(y, iota(3))\nimshow(ones(2, 2))\n",
    );
    assert_eq!(status, 0, "{stderr}");
    for n in 1..=3 {
        let line = format!("wrote acc-plot-{n}.png");
        assert!(stdout.contains(&line), "{line} in {stdout}");
        png_size(&dir.0.join(format!("acc-plot-{n}.png")));
    }
    // The failed call wrote nothing, named its place, and the session went on.
    assert!(stderr.contains("x has 20 elements but y has 3"), "{stderr}");
    assert!(!dir.0.join("acc-plot-4.png").exists());
}

#[test]
fn acc_test_keeps_pictures_out_of_the_tree() {
    let dir = Scratch::new("pictures-test");
    std::fs::write(
        dir.0.join("pic.acc"),
        "imshow(ones(3, 3))\nplot(iota(4), \"p.png\")\n",
    )
    .unwrap();
    std::fs::write(dir.0.join("pic.out"), "wrote acc-plot-1.png\nwrote p.png\n").unwrap();
    let (status, stdout, stderr) = acc(&dir.0, &["test", "pic.acc"], "");
    assert_eq!(status, 0, "{stdout}{stderr}");
    assert!(stdout.ends_with("1 passed, 0 failed\n"), "{stdout}");
    let mut left: Vec<String> = std::fs::read_dir(&dir.0)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["pic.acc", "pic.out"]);
}
