//! Policy files in YAML, loaded as at startup and on reload, then put to work on the demo cluster.
#![no_main]

use libfuzzer_sys::fuzz_target;
use predicate_extender_testing::fuzz::files;

fuzz_target!(|input: &[u8]| {
    if let Err(violation) = files::policy("policy.yaml", input) {
        panic!("{violation}");
    }
});
