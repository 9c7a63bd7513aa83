// SPDX-License-Identifier: GPL-2.0-only
//! The binary case stream the Cortex-M runner reads (no JSON on the target).
//!
//! A stream is a run of frames `[len: u32 little-endian][postcard(Record)]`. Case inputs
//! and expected outputs are themselves postcard bytes of the typed structs, so the target
//! decodes only the case it is about to run. `cargo xtask verify --target` writes it from
//! the JSON suites with [`crate::registry`]'s encoders.

use serde::{Deserialize, Serialize};

/// One frame of the stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Record<'a> {
    /// A suite file starts (header `suite` and `variant`).
    Suite {
        /// Header `suite`.
        suite: &'a str,
        /// Header `variant`.
        variant: &'a str,
    },
    /// A stateless case: kind id, case id, postcard input and expected output.
    Case {
        /// Registry kind id.
        kind: u16,
        /// Case id.
        id: &'a str,
        /// postcard of the typed input.
        input: &'a [u8],
        /// postcard of the typed expected output.
        expected: &'a [u8],
    },
    /// A sequence case starts: kind id, case id, postcard of its init.
    SeqStart {
        /// Registry kind id.
        kind: u16,
        /// Case id.
        id: &'a str,
        /// postcard of the typed init.
        init: &'a [u8],
    },
    /// One op of the current sequence and the state expected after it.
    SeqOp {
        /// postcard of the typed op.
        op: &'a [u8],
        /// postcard of the typed expected state.
        expected: &'a [u8],
    },
    /// The current sequence ends.
    SeqEnd,
    /// A case line the host could not read (counts as failed, as on the host).
    Broken {
        /// 1-based line in the suite file.
        line: u32,
    },
    /// The suite file ends.
    SuiteEnd,
    /// The stream ends.
    End,
}

/// Largest frame the target accepts (bytes of one postcard `Record`).
pub const MAX_FRAME: usize = 8192;
