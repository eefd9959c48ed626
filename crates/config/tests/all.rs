//! Integration tests of `talon-config`, one harness with a module per area.

mod suite;
