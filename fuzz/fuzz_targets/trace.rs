// SPDX-License-Identifier: GPL-2.0-only
//! The `trace-cmd report` reader and the replay built on it, on arbitrary bytes: every
//! line is read, skipped with a reason or refused with an error (never a panic or a hang),
//! the reader's invariants hold (line numbers increase, timestamps never go backwards, a
//! record borrows a line of at most `MAX_LINE` bytes) and the replay of the same bytes
//! either reports or errs.
#![no_main]

use libfuzzer_sys::fuzz_target;
use schedmath_host::trace::report::MAX_LINE;
use schedmath_host::trace::ReportReader;

fuzz_target!(|data: &[u8]| {
    let mut reader = ReportReader::new(data, "fuzz.txt");
    let mut last: Option<(u64, u64)> = None;
    while let Ok(Some(r)) = reader.next_record() {
        assert!(r.body.len() <= MAX_LINE);
        if let Some((line, ts)) = last {
            assert!(r.line > line, "line numbers go back");
            assert!(r.ts_ns >= ts, "timestamps go back");
        }
        last = Some((r.line, r.ts_ns));
        let _ = r.fields().count();
    }
    for (_, s) in reader.skipped() {
        assert!(s.examples.len() <= s.count as usize);
    }
    let _ = schedmath_host::replay::replay(
        data,
        "fuzz.txt",
        None,
        schedmath::Profile::MAINLINE,
        false,
        data.first().is_some_and(|b| b & 1 == 1),
    );
});
