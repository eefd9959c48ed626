//! Real-kernel tests of process-tree containment: real cgroups, real
//! processes, checked by pid in `/proc`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
