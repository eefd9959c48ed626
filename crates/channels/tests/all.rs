//! The channels against real receivers: a loopback HTTP receiver that
//! checks the webhook signature, and a real ngircd for the IRC channel.
#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    reason = "test helpers panic on setup failures"
)]
mod suite;
