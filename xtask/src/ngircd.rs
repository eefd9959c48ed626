//! The IRC server of `talon-channels`' IRC tests: Debian's `ngircd`. The
//! tests start their own instance (generated config, loopback, a free
//! port, under `target/`); the system service the package enables is
//! not used.
//!
//! `cargo xtask test` and `cargo xtask ngircd-install` install `ngircd`
//! with apt-get when missing.

use std::path::Path;

const NGIRCD: &str = "/usr/sbin/ngircd";

/// Install `ngircd` when missing.
pub(crate) fn install() -> Result<(), String> {
    if Path::new(NGIRCD).exists() {
        return Ok(());
    }
    println!("xtask: installing ngircd for the IRC channel tests");
    crate::sshd::apt_install(&["ngircd"])?;
    if Path::new(NGIRCD).exists() {
        Ok(())
    } else {
        Err(format!("{NGIRCD} is still missing after installing ngircd"))
    }
}
