// SPDX-License-Identifier: GPL-2.0-only
//! The platform reader on arbitrary TOML: an error naming the field, or a platform that
//! renders, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use schedmath_host::platform::{show, Platform};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(p) = Platform::from_toml_str(text, "fuzz.toml") {
        let _ = show::render(&p);
        for cpu in 0..p.nr_cpus() {
            let _ = p.capacity_orig(cpu);
            let _ = p.idle_states_of(cpu);
        }
    }
});
