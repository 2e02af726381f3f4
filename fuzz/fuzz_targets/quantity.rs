//! Resource quantities, as text and as JSON values.
#![no_main]

use libfuzzer_sys::fuzz_target;
use predicate_extender_testing::fuzz::values;

fuzz_target!(|input: &[u8]| {
    if let Err(violation) = values::quantity(input) {
        panic!("{violation}");
    }
});
