//! The generator and the shrinker, without the acc binary.

use acc_progen::gen::{generate, Config};
use acc_progen::shrink::shrink;

#[test]
fn the_same_seed_gives_the_same_program() {
    let cfg = Config::default();
    for seed in 0..50 {
        assert_eq!(generate(seed, &cfg).source(), generate(seed, &cfg).source());
    }
    assert_ne!(generate(1, &cfg).source(), generate(2, &cfg).source());
}

#[test]
fn shrinking_keeps_the_property_and_removes_the_rest() {
    let cfg = Config::default();
    // A program with one capture (where there are several, each stays).
    let seed = (0..500)
        .find(|s| {
            generate(*s, &cfg)
                .source()
                .matches("acc atomic capture")
                .count()
                == 1
        })
        .expect("some program has one atomic capture");
    let program = generate(seed, &cfg);
    let small = shrink(&program, 5000, |p| {
        p.source().contains("acc atomic capture")
    });
    assert!(small.source().contains("acc atomic capture"));
    assert!(small.source().len() < program.source().len());
    // Only what cannot be removed on its own stays: the capture, its loop and region.
    assert!(small.source().lines().count() <= 20, "{}", small.source());
}
