use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use talon_audit::{AuditInput, AuditOptions, AuditReport, AuditSeverity, audit};

/// A config file (mode `mode`), a state dir (mode 0700) and a home, in
/// one temp dir.
pub(crate) struct Setup {
    pub(crate) dir: tempfile::TempDir,
    pub(crate) config: PathBuf,
    pub(crate) state: PathBuf,
    pub(crate) home: PathBuf,
}

pub(crate) fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

pub(crate) fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

pub(crate) fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

impl Setup {
    pub(crate) fn new(text: &str, config_mode: u32) -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("talon.json");
        std::fs::write(&config, text).unwrap();
        chmod(&config, config_mode);
        let state = dir.path().join("state");
        std::fs::create_dir(&state).unwrap();
        chmod(&state, 0o700);
        let home = dir.path().join("home");
        std::fs::create_dir(&home).unwrap();
        Setup {
            dir,
            config,
            state,
            home,
        }
    }

    pub(crate) fn from_fixture(name: &str, config_mode: u32) -> Setup {
        Setup::new(
            &std::fs::read_to_string(fixture(name)).unwrap(),
            config_mode,
        )
    }

    pub(crate) fn audit(&self, deep: bool) -> AuditReport {
        let loaded = talon_config::load(&self.config).unwrap();
        let mut input = AuditInput::new(&loaded.config, &loaded.origin, &self.state);
        input.config_file = Some(&self.config);
        input.home = Some(&self.home);
        input.home_dirs = vec![self.home.clone()];
        input.options = AuditOptions { deep };
        audit(&input).unwrap()
    }
}

/// The check ids of the findings above info, sorted and deduplicated.
pub(crate) fn ids_above_info(report: &AuditReport) -> Vec<String> {
    let mut ids: Vec<String> = report
        .findings
        .iter()
        .filter(|f| f.severity > AuditSeverity::Info)
        .map(|f| f.check_id.clone())
        .collect();
    ids.sort();
    ids.dedup();
    ids
}

pub(crate) fn severity_of(report: &AuditReport, id: &str) -> Vec<AuditSeverity> {
    report
        .findings
        .iter()
        .filter(|f| f.check_id == id)
        .map(|f| f.severity)
        .collect()
}
