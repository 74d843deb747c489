//! Integration tests of `yaraus index` against a real redis-server, with
//! real children (a perl probe that logs its life, see `fleet.rs`) and real
//! faults: a SIGKILLed or SIGSTOPped replica, a SIGSTOPped server, clocks
//! offset with libfaketime.
//!
//! Every test awaits observable events (children started with the expected
//! pairs, a process gone) and ends with the transition checker over the
//! whole log of the children's lives. Intervals are 1 s.

use crate::common;

mod faults;
mod fleet;
mod input;
mod metrics;
mod scaling;
