//! /preempt bodies (`ExtenderPreemptionArgs`), answered on the demo cluster.
#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use predicate_extender_testing::fuzz::{verbs, Harness};

static DEMO: LazyLock<Harness> = LazyLock::new(|| Harness::demo().unwrap_or_else(|e| panic!("{e}")));

fuzz_target!(|body: &[u8]| {
    if let Err(violation) = verbs::preempt(&DEMO, body) {
        panic!("{violation}");
    }
});
