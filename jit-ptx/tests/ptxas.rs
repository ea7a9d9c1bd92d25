//! Every region of the examples and of the conformance scripts that compile: the PTX they
//! produce must assemble with `ptxas -arch=sm_90`, and equal its snapshot
//! (`tests/snapshots/suite/NAME.snap`; after a deliberate change of the emitter, review the
//! differences with `cargo insta review` or accept them with `INSTA_UPDATE=always`). Prints
//! how many regions were emitted and why the others were not
//! (`cargo test -p acc-jit-ptx --test ptxas -- --nocapture`).

mod common;

use std::collections::BTreeMap;

use acc_jit_ptx::{emit_module, PtxOptions};

fn scripts() -> Vec<std::path::PathBuf> {
    let root = common::workspace();
    let mut files = Vec::new();
    for dir in ["examples", "tests/conformance"] {
        let mut v: Vec<_> = std::fs::read_dir(root.join(dir))
            .expect("the directory exists")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "acc"))
            .collect();
        v.sort();
        files.extend(v);
    }
    files
}

#[test]
fn every_emitted_module_assembles() {
    common::ptxas();
    let mut failures = Vec::new();
    let (mut emitted, mut unsupported) = (0, 0);
    let mut reasons: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for path in scripts() {
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        let Some(module) = common::lower(&name, &text) else {
            continue;
        };
        for unchecked in [false, true] {
            let ptx = emit_module(&module, &PtxOptions { unchecked });
            if !unchecked {
                emitted += ptx.kernels.len();
                unsupported += ptx.unsupported.len();
                for (id, why) in &ptx.unsupported {
                    reasons
                        .entry(why.clone())
                        .or_default()
                        .push(format!("{name}#{}", id.0));
                }
            }
            if !ptx.text.is_ascii() {
                failures.push(format!(
                    "{name}: the PTX is not ASCII (the driver rejects it)"
                ));
            }
            if ptx.kernels.is_empty() && !ptx.text.contains(".func") {
                continue;
            }
            let tag = if unchecked { "-unchecked" } else { "" };
            if let Err(e) = common::assemble(&format!("{name}{tag}"), &ptx.text) {
                failures.push(format!("{name}{tag}:\n{e}"));
            }
            if !unchecked {
                insta::with_settings!({
                    snapshot_path => "snapshots/suite",
                    prepend_module_to_snapshot => false,
                    omit_expression => true,
                }, {
                    insta::assert_snapshot!(name.as_str(), ptx.text);
                });
            }
        }
    }
    println!("regions emitted: {emitted}, unsupported: {unsupported}");
    for (why, regions) in &reasons {
        println!("  {:3}  {why}  ({})", regions.len(), regions.join(", "));
    }
    assert!(
        failures.is_empty(),
        "ptxas failed:\n{}",
        failures.join("\n")
    );
}

/// The GPU harness's cases (`jit-ptx/gpu/cases`): every region compiles for the device (the
/// harness runs them all) and the PTX assembles.
#[test]
fn gpu_cases_compile_and_assemble() {
    common::ptxas();
    let dir = common::workspace().join("jit-ptx/gpu/cases");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("the cases directory exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "acc"))
        .collect();
    files.sort();
    let mut failures = Vec::new();
    for path in files {
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        let module = common::lower(&name, &text).expect("the case compiles");
        let ptx = emit_module(&module, &PtxOptions::default());
        if name == "math" && !ptx.unsupported.is_empty() {
            failures.push(format!("{name}: not on the device: {:?}", ptx.unsupported));
        }
        if let Err(e) = common::assemble(&format!("case-{name}"), &ptx.text) {
            failures.push(format!("{name}:\n{e}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
