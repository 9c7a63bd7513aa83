// SPDX-License-Identifier: GPL-2.0-only
//! Every kernel fixture suite in fixtures/kernel/ passes, case for case.
use std::path::Path;

#[test]
fn every_kernel_fixture_case_passes() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/kernel");
    let mut out = Vec::new();
    let ok = schedmath_host::verify::run(&Default::default(), &dir, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(ok, "{text}");
    assert!(text.contains(" 0 failed"), "{text}");
}
