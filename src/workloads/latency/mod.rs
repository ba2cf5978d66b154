//! Latency workloads: how late a thread gets the CPU after it asked for
//! it. `latency.wakeup` is cyclictest's timer wake-up latency;
//! `latency.interactive` is Interbench's simulated interactive tasks.
//! Both can run with a background load (see [`loads`]).

pub mod interactive;
pub mod interactive_tasks;
pub mod loads;
pub mod realtime;
pub mod sleep_clock;
pub mod wakeup;
