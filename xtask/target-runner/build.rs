// SPDX-License-Identifier: GPL-2.0-only
//! Picks the memory map of the QEMU machine the target runs on.
use std::{env, fs, path::PathBuf};

fn main() {
    let target = env::var("TARGET").unwrap_or_default();
    // lm3s6965evb (Cortex-M3): 256 KiB flash, 64 KiB SRAM.
    // mps2-an386 (Cortex-M4F): 4 MiB SSRAM1 as code, 4 MiB SSRAM2/3 as data.
    let memory = if target.starts_with("thumbv7em") {
        "MEMORY {\n  FLASH : ORIGIN = 0x00000000, LENGTH = 4M\n  RAM : ORIGIN = 0x20000000, LENGTH = 4M\n}\n"
    } else {
        "MEMORY {\n  FLASH : ORIGIN = 0x00000000, LENGTH = 256K\n  RAM : ORIGIN = 0x20000000, LENGTH = 64K\n}\n"
    };
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    fs::write(out.join("memory.x"), memory).unwrap();
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rerun-if-changed=build.rs");
}
