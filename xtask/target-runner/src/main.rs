// SPDX-License-Identifier: GPL-2.0-only
//! The kernel fixture suites on a Cortex-M, under QEMU.
//!
//! Reads the case stream `cases.bin` (written by `cargo xtask verify --target`) from the
//! host through semihosting file calls, one frame at a time, runs every case on the
//! schedmath core with the same typed drivers the host uses, and reports one `row` per
//! suite plus each mismatch over defmt (semihosting stdout). The host decodes the defmt
//! frames and prints the same table as `cargo xtask verify`.
#![no_std]
#![no_main]

use cortex_m_rt::entry;
use cortex_m_semihosting::debug;
use defmt_semihosting as _;
use schedmath_conformance::record::{Record, MAX_FRAME};
use schedmath_conformance::registry::{self, SeqState};

mod host_file;
mod stack;

/// Counters of the suite being run.
#[derive(Default)]
struct Tally {
    cases: u32,
    passed: u32,
}

fn fail(msg: &str) -> ! {
    defmt::error!("fatal {=str}", msg);
    debug::exit(debug::EXIT_FAILURE);
    #[allow(clippy::empty_loop)]
    loop {}
}

#[entry]
fn main() -> ! {
    let Some(file) = host_file::HostFile::open(b"cases.bin\0") else {
        fail("cannot open cases.bin through semihosting")
    };
    let mut buf = [0u8; MAX_FRAME];
    let mut suite: (heapless::String<64>, heapless::String<64>) = Default::default();
    let mut tally = Tally::default();
    // The running sequence: its state, id, op index, and whether it still matches.
    let mut seq: Option<(SeqState, heapless::String<96>, i32, bool)> = None;
    let (mut total_passed, mut total_failed) = (0u32, 0u32);
    let mut stack_top = stack::paint();
    loop {
        let mut len = [0u8; 4];
        if !file.read_exact(&mut len) {
            fail("case stream ended without an End record");
        }
        let len = u32::from_le_bytes(len) as usize;
        let Some(frame) = buf.get_mut(..len) else {
            fail("frame longer than MAX_FRAME")
        };
        if !file.read_exact(frame) {
            fail("case stream truncated inside a frame");
        }
        let Ok(record) = postcard::from_bytes::<Record>(frame) else {
            fail("undecodable frame")
        };
        match record {
            Record::Suite { suite: s, variant } => {
                suite.0.clear();
                suite.1.clear();
                let _ = suite.0.push_str(s);
                let _ = suite.1.push_str(variant);
                tally = Tally::default();
                stack_top = stack::paint();
            }
            Record::Case {
                kind,
                id,
                input,
                expected,
            } => {
                tally.cases += 1;
                match registry::check_case(kind, input, expected, suite.1.as_str()) {
                    Ok(true) => tally.passed += 1,
                    Ok(false) => {
                        defmt::info!("mismatch {=str} {=str} {=i32}", suite.0.as_str(), id, -1)
                    }
                    Err(e) => defmt::info!("error {=str} {=str} {}", suite.0.as_str(), id, e),
                }
            }
            Record::SeqStart { kind, id, init } => {
                tally.cases += 1;
                let mut name = heapless::String::new();
                let _ = name.push_str(id);
                match registry::seq_start(kind, init, suite.1.as_str()) {
                    Ok(state) => seq = Some((state, name, 0, true)),
                    Err(e) => {
                        defmt::info!("error {=str} {=str} {}", suite.0.as_str(), id, e);
                        seq = None;
                    }
                }
            }
            Record::SeqOp { op, expected } => {
                if let Some((state, id, i, ok)) = seq.as_mut() {
                    if *ok {
                        match registry::seq_apply(state, op, expected) {
                            Ok(true) => {}
                            Ok(false) => {
                                defmt::info!(
                                    "mismatch {=str} {=str} {=i32}",
                                    suite.0.as_str(),
                                    id.as_str(),
                                    *i
                                );
                                *ok = false;
                            }
                            Err(e) => {
                                defmt::info!(
                                    "error {=str} {=str} {}",
                                    suite.0.as_str(),
                                    id.as_str(),
                                    e
                                );
                                *ok = false;
                            }
                        }
                    }
                    *i += 1;
                }
            }
            Record::SeqEnd => {
                if let Some((_, _, _, true)) = seq.take() {
                    tally.passed += 1;
                }
            }
            Record::Broken { line } => {
                tally.cases += 1;
                defmt::info!("broken {=str} {=u32}", suite.0.as_str(), line);
            }
            Record::SuiteEnd => {
                defmt::info!(
                    "row {=str} {=str} {=u32} {=u32} {=u32}",
                    suite.0.as_str(),
                    suite.1.as_str(),
                    tally.cases,
                    tally.passed,
                    stack::high_water(stack_top) as u32
                );
                total_passed += tally.passed;
                total_failed += tally.cases - tally.passed;
            }
            Record::End => {
                defmt::info!("done {=u32} {=u32}", total_passed, total_failed);
                debug::exit(debug::EXIT_SUCCESS);
            }
        }
    }
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    fail("panic")
}
