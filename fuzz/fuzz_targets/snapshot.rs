//! Cluster snapshot files (JSON or YAML), loaded as `--cluster-snapshot` loads them, then the verbs answered on them.
#![no_main]

use libfuzzer_sys::fuzz_target;
use predicate_extender_testing::fuzz::files;

fuzz_target!(|input: &[u8]| {
    if let Err(violation) = files::snapshot(input) {
        panic!("{violation}");
    }
});
