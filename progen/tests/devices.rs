//! `devices(…)` clauses in generated programs, and `emulated@N` devices.

use acc_progen::gen::{generate, Config};
use acc_progen::run::DeviceSpec;

const CLAUSES: [&str; 3] = ["devices(all)", "devices(0, 1)", "devices(1, 0)"];

/// The program without its `devices(…)` clauses, spaces squashed on every line.
fn without_devices(src: &str) -> String {
    src.lines()
        .map(|l| {
            let mut l = l.to_string();
            for c in CLAUSES {
                l = l.replace(c, "");
            }
            let indent = l.len() - l.trim_start().len();
            let words: Vec<&str> = l.split_whitespace().collect();
            format!("{}{}\n", &l[..indent], words.join(" "))
        })
        .collect()
}

#[test]
fn devices_clauses_are_generated_where_the_grammar_allows_them() {
    let cfg = Config::default();
    let mut with = 0;
    let mut on_data = 0;
    for seed in 0..300 {
        let src = generate(seed, &cfg).source();
        if CLAUSES.iter().any(|c| src.contains(c)) {
            with += 1;
        }
        for line in src.lines().map(str::trim) {
            let n = CLAUSES
                .iter()
                .map(|c| line.matches(c).count())
                .sum::<usize>();
            assert!(n <= 1, "seed {seed}: more than one devices clause: {line}");
            if n == 1 {
                assert!(line.starts_with("acc "), "seed {seed}: {line}");
                assert!(!line.contains("serial"), "seed {seed}: {line}");
                assert!(!line.contains("device_type"), "seed {seed}: {line}");
                on_data += usize::from(line.starts_with("acc data "));
            }
        }
    }
    assert!(
        with > 60,
        "only {with} of 300 programs have a devices clause"
    );
    assert!(
        on_data > 5,
        "only {on_data} data regions with a devices clause"
    );
}

#[test]
fn devices_clauses_change_nothing_else() {
    let on = Config::default();
    let off = Config {
        devices: false,
        ..Config::default()
    };
    for seed in 0..300 {
        let (a, b) = (generate(seed, &on).source(), generate(seed, &off).source());
        assert!(!CLAUSES.iter().any(|c| b.contains(c)), "seed {seed}");
        assert_eq!(without_devices(&a), without_devices(&b), "seed {seed}");
    }
}

#[test]
fn device_specs() {
    let p = |s: &str| DeviceSpec::parse(s);
    assert_eq!(
        p("emulated@3").unwrap(),
        DeviceSpec {
            device: "emulated".into(),
            emulated_devices: Some(3)
        }
    );
    assert_eq!(p("emulated:1@2").unwrap().device, "emulated:1");
    assert_eq!(p("host").unwrap().emulated_devices, None);
    assert_eq!(p("emulated:1").unwrap().device, "emulated:1");
    for bad in [
        "host@2",
        "emulated@0",
        "emulated@",
        "emulated@x",
        "nvidia@2",
        "",
    ] {
        assert!(p(bad).is_err(), "{bad}");
    }
}
