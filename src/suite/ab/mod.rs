//! `sledge ab`: the same cases under two settings of one host, A and B,
//! measured in interleaved rounds (or at the same time, in duet mode) and
//! stored as two runs linked as one pair. The engine's `ab_runner.rs`
//! runs the rounds; this module checks what was asked (`request.rs`),
//! turns settings into what each side's rounds run with (`setting.rs`),
//! checks the knobs that change the host (`knob.rs`) and remembers them
//! until they are back (`knob_journal.rs`), chooses the cases that can run in duet (`duet.rs`) and
//! executes the whole (`execute.rs`).

pub mod ab_request;
pub mod duet;
pub mod execute;
pub mod knob;
pub mod knob_journal;
pub mod setting;

pub use ab_request::{AbRequest, SideRequest};
pub use execute::{AbOptions, AbRuns, execute_ab};
pub use knob::{Knob, KnobSpec};
pub use setting::Setting;
