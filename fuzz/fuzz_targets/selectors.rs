//! Label selectors and node selector terms (JSON: `selector`, `terms`, `labels`, `name`), converted and matched.
#![no_main]

use libfuzzer_sys::fuzz_target;
use predicate_extender_testing::fuzz::values;

fuzz_target!(|input: &[u8]| {
    if let Err(violation) = values::selectors(input) {
        panic!("{violation}");
    }
});
