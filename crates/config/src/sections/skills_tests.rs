#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use super::{SkillsConfig, SkillsLoadConfig};

#[test]
fn extra_dirs_read_home_absolute_and_relative_paths_one_way() {
    let config = SkillsConfig {
        load: Some(SkillsLoadConfig {
            extra_dirs: Some(vec![
                "~/team-skills".into(),
                " /opt/skills ".into(),
                "vendor/skills".into(),
            ]),
            ..SkillsLoadConfig::default()
        }),
        ..SkillsConfig::default()
    };
    let base = Path::new("/etc/talon");
    assert_eq!(
        config.extra_dirs(base, Some(Path::new("/home/u"))),
        vec![
            PathBuf::from("/home/u/team-skills"),
            PathBuf::from("/opt/skills"),
            PathBuf::from("/etc/talon/vendor/skills"),
        ]
    );
    // Without a home, `~/x` is not expanded into somewhere else.
    assert_eq!(
        config.extra_dirs(base, None)[0],
        PathBuf::from("/etc/talon/~/team-skills")
    );
    assert!(SkillsConfig::default().extra_dirs(base, None).is_empty());
}
