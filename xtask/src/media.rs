//! The media engines of `talon-media`: its tests and bench run Debian's
//! poppler tools (`pdftotext`, `pdftoppm`, `pdfinfo`) and `espeak-ng`;
//! `talon-browser`'s run Debian's `chromium`.
//!
//! `cargo xtask test`, `cargo xtask bench` and `cargo xtask media-install`
//! install `poppler-utils`, `espeak-ng` and `chromium` with apt-get when
//! missing.

use std::path::Path;

/// The binaries checked, with the Debian package that brings each.
const ENGINES: &[(&str, &str)] = &[
    ("/usr/bin/pdftotext", "poppler-utils"),
    ("/usr/bin/pdftoppm", "poppler-utils"),
    ("/usr/bin/pdfinfo", "poppler-utils"),
    ("/usr/bin/espeak-ng", "espeak-ng"),
    // The browser tool's tests and bench drive the real Chromium.
    ("/usr/bin/chromium", "chromium"),
];

/// Install `poppler-utils`, `espeak-ng` and `chromium` when missing.
pub(crate) fn install() -> Result<(), String> {
    let mut packages: Vec<&str> = Vec::new();
    for (binary, package) in ENGINES {
        if !Path::new(binary).exists() && !packages.contains(package) {
            packages.push(package);
        }
    }
    if packages.is_empty() {
        return Ok(());
    }
    println!(
        "xtask: installing {} for the media and browser tool tests",
        packages.join(" ")
    );
    crate::sshd::apt_install(&packages)?;
    match ENGINES
        .iter()
        .find(|(binary, _)| !Path::new(binary).exists())
    {
        None => Ok(()),
        Some((binary, package)) => Err(format!(
            "{binary} is still missing after installing {package}"
        )),
    }
}
