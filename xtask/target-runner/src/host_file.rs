// SPDX-License-Identifier: GPL-2.0-only
//! Reading a host file through ARM semihosting (SYS_OPEN / SYS_READ).
//!
//! The case stream is megabytes; it never fits in flash, so it is read from the host a
//! frame at a time. The semihosting calls are the only `unsafe` in the runner.

use cortex_m_semihosting::{nr, syscall};

/// An open host file.
pub struct HostFile(usize);

impl HostFile {
    /// Opens `name` (NUL-terminated, relative to QEMU's working directory) for binary read.
    pub fn open(name: &[u8]) -> Option<HostFile> {
        if name.last() != Some(&0) {
            return None;
        }
        // SAFETY: SYS_OPEN reads `name.len() - 1` bytes of a live, NUL-terminated buffer.
        let fd = unsafe { syscall!(OPEN, name.as_ptr(), nr::open::R_BINARY, name.len() - 1) };
        (fd as isize >= 0).then_some(HostFile(fd))
    }

    /// Fills `buf` completely; false at end of file or on error.
    pub fn read_exact(&self, buf: &mut [u8]) -> bool {
        let mut done = 0;
        while done < buf.len() {
            let rest = &mut buf[done..];
            // SAFETY: SYS_READ writes at most `rest.len()` bytes into the live buffer and
            // returns how many it did NOT write.
            let left = unsafe { syscall!(READ, self.0, rest.as_mut_ptr(), rest.len()) };
            let read = rest.len().saturating_sub(left);
            if read == 0 {
                return false;
            }
            done += read;
        }
        true
    }
}
