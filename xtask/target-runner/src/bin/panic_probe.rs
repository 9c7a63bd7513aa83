// SPDX-License-Identifier: GPL-2.0-only
//! Link-time proof that the schedmath core has no panic path.
//!
//! A firmware-like binary that calls every public entry point of the core with inputs the
//! optimizer cannot see (`black_box`), built in release for thumbv7m. Its panic handler
//! calls a symbol that exists nowhere, so the link fails if any call can reach a panic
//! (an index out of bounds, a division by zero, an `unwrap`, ...).
//! `cargo xtask panic-check` builds it; `cargo xtask panic-check --inject` builds it with
//! a deliberate panic path to show that the check catches one.
#![no_std]
#![no_main]

use core::hint::black_box as bb;

use cortex_m_rt::entry;
use schedmath::{capacity, math, profile::Profile, schedutil, uclamp};

/// Calls every public core entry point once with opaque inputs.
fn exercise() {
    let (a, b, c) = (bb(1u64), bb(2u64), bb(3u64));
    bb(math::mul_u64_u32_shr(a, bb(7), bb(32)));
    bb(math::div_u64(a, bb(0)));
    bb(math::cap_scale(a, b));
    bb(math::scale_load(a));
    bb(math::scale_load_down(a));

    bb(capacity::scale_irq_capacity(a, b, c));
    bb(capacity::effective_cpu_util(&bb(
        capacity::EffectiveUtilInput {
            capacity: a,
            util_cfs: b,
            util_rt: c,
            util_dl: a,
            util_irq: b,
            bw_dl: c,
            rt_runnable: bb(true),
            uclamp_used: bb(false),
            uclamp_min: a,
            uclamp_max: b,
        },
    )));
    bb(uclamp::uclamp_rq_is_capped(bb(true), a, b, c));
    bb(schedutil::map_util_perf(a));
    bb(schedutil::sugov_effective_cpu_perf(a, b, c));
    bb(Profile::from_name(bb("ou-lone-task+pelt-hl8")).is_ok());
}

#[cfg(feature = "inject-panic")]
fn injected() {
    // An index the compiler cannot prove in bounds: a panic path on purpose.
    let table = [1u8, 2, 3];
    bb(table[bb(5usize)]);
}

#[cfg(not(feature = "inject-panic"))]
fn injected() {}

#[entry]
fn main() -> ! {
    exercise();
    injected();
    #[allow(clippy::empty_loop)]
    loop {}
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    extern "Rust" {
        // Deliberately defined nowhere: referencing it makes a reachable panic a link error.
        fn schedmath_core_has_a_panic_path() -> !;
    }
    // SAFETY: never runs; the program does not link if this call is reachable.
    unsafe { schedmath_core_has_a_panic_path() }
}
