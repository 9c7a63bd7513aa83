// SPDX-License-Identifier: GPL-2.0-only
//! Measured stack high-water mark: paint the free stack, run, see how deep it was written.
//!
//! Static worst-case analysis needs a nightly compiler (`-Z emit-stack-sizes`); this works
//! on stable and measures what the fixture cases really used below the runner's loop.

const PAINT: u32 = 0xA5A5_A5A5;

extern "C" {
    // End of .bss/.uninit (cortex-m-rt's link.x): the stack may grow down to here.
    static __sheap: u32;
}

fn bottom() -> usize {
    // Only the address of the linker symbol is taken, never its value (safe since Rust 1.82).
    core::ptr::addr_of!(__sheap) as usize
}

/// Paints the free stack below the caller; returns the stack pointer it measured from.
#[inline(never)]
pub fn paint() -> usize {
    let sp = cortex_m::register::msp::read() as usize;
    // Leave this function's own frame alone (a generous margin below its SP).
    let top = sp.saturating_sub(64) & !3;
    let mut p = bottom();
    while p < top {
        // SAFETY: [__sheap, sp - 64) is free stack below every live frame; aligned words.
        unsafe { core::ptr::write_volatile(p as *mut u32, PAINT) };
        p += 4;
    }
    sp
}

/// Bytes of stack used below `sp` since the last [`paint`].
pub fn high_water(sp: usize) -> usize {
    let mut p = bottom();
    // SAFETY: reads aligned words of the painted region.
    while p < sp && unsafe { core::ptr::read_volatile(p as *const u32) } == PAINT {
        p += 4;
    }
    sp.saturating_sub(p)
}
