//! CLI tests: run the built `talon` binary on fixture configs and check exit
//! codes and JSON shapes.

mod suite;
