//! Without a GPU, a script still runs (on multicore), and `--info` says why in one line.
//! Where a GPU is present (the GPU machine) the default device is it and there is no notice.
//! A device variable whose value does not parse is an error that names it.

use std::process::Command;

fn run(args: &[&str]) -> (bool, String, String) {
    let dir = std::env::temp_dir().join(format!("acc-notice-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("s.acc");
    std::fs::write(
        &script,
        "let a = zeros(4)\nacc parallel loop\nfor i in 0..4 {\n  a[i] = 1.0\n}\nprint(sum(a))\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_acc"))
        .args(args)
        .arg(&script)
        .env_remove("ACC_DEVICE_TYPE")
        .output()
        .expect("acc runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn no_driver_means_multicore_with_a_notice_under_info() {
    let gpu = acc::gpu_count() > 0;
    let notice = "info: no NVIDIA GPU or CUDA driver found: running on multicore";
    for args in [&["--info"][..], &["--info", "--device", "nvidia"][..]] {
        let (ok, stdout, stderr) = run(args);
        assert!(ok, "{stderr}");
        assert_eq!(stdout, "4.0\n");
        assert_eq!(stderr.contains(notice), !gpu, "{args:?}: {stderr}");
    }
    // Without --info, no notice.
    let (ok, stdout, stderr) = run(&[]);
    assert!(ok && stdout == "4.0\n", "{stderr}");
    assert!(!stderr.contains("running on multicore"), "{stderr}");
}

#[test]
fn acc_edges_first_takes_auto_on_or_off_and_names_itself_otherwise() {
    let script = format!(
        "{}/../tests/conformance/directive_devices_edges.acc",
        env!("CARGO_MANIFEST_DIR")
    );
    let want = std::fs::read_to_string(script.replace(".acc", ".out")).unwrap();
    let run = |value: &str| {
        Command::new(env!("CARGO_BIN_EXE_acc"))
            .args(["--device", "emulated", &script])
            .env("ACC_EDGES_FIRST", value)
            .env("ACC_EMULATED_DEVICES", "3")
            .output()
            .expect("acc runs")
    };
    for value in ["auto", "on", "off", "1", "0"] {
        let out = run(value);
        assert!(out.status.success(), "{value}: {out:?}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), want, "{value}");
    }
    let out = run("sometimes");
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("ACC_EDGES_FIRST=`sometimes`: expected auto, on or off"),
        "{out:?}"
    );
}
