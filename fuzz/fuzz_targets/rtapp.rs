// SPDX-License-Identifier: GPL-2.0-only
//! The workload readers (rt-app JSON, the periodic TOML form) on arbitrary text: an error
//! or a workload, never a panic; an accepted workload checks and renders.
#![no_main]

use libfuzzer_sys::fuzz_target;
use schedmath_host::workload::{periodic, rtapp, show};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // rt-app files start with `{`; anything else is tried as the periodic form.
    let parsed = if text.trim_start().starts_with('{') {
        rtapp::parse_str(text, "fuzz.json")
    } else {
        periodic::parse_str(text, "fuzz.toml")
    };
    if let Ok(w) = parsed {
        let _ = w.check();
        let _ = w.validate(8);
        let _ = show::render(&w, true);
    }
});
