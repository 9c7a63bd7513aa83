// SPDX-License-Identifier: GPL-2.0-only
//! The kernel fixture reader and every typed driver on arbitrary suite text: each case is
//! read (C integer conversions, named list limits), run on the core and compared, and any
//! problem is an error naming its line, never a panic.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use schedmath_host::fixtures::{first_divergence, runners, SuiteFile};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(suite) = SuiteFile::parse(Path::new("fuzz.jsonl"), text) else {
        return;
    };
    for case in &suite.cases {
        let Some(runner) = runners::lookup(suite.header.module(), &case.fn_name) else {
            continue;
        };
        if let Ok(got) = runner.run(&suite.header, &case.input) {
            let _ = first_divergence(&case.out, &got);
        }
    }
});
