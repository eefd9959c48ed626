//! The parts of the runtime a build can leave out (its cargo features), and
//! what a caller is told when the configuration asks for one of them.

/// The cargo feature of `talon-runtime` that brings the built-in tool
/// `name`, when this build was made without it.
pub(crate) fn missing_tool_feature(name: &str) -> Option<&'static str> {
    match name {
        "web_fetch" | "web_search" if !cfg!(feature = "web") => Some("web"),
        "cron" | "memory_search" | "memory_get" if !cfg!(feature = "sqlite-state") => {
            Some("sqlite-state")
        }
        "pdf" | "tts" | "image" | "image_generate" | "music_generate" | "video_generate"
            if !cfg!(feature = "media") =>
        {
            Some("media")
        }
        "message" if !cfg!(feature = "channels") => Some("channels"),
        "browser" if !cfg!(feature = "browser") => Some("browser"),
        _ => None,
    }
}

/// The cargo feature of `talon-runtime` that brings the sandbox backend
/// `backend` (lower case), when this build was made without it.
pub(crate) fn missing_backend_feature(backend: &str) -> Option<&'static str> {
    match backend {
        "docker" if !cfg!(feature = "docker") => Some("docker"),
        "ssh" if !cfg!(feature = "ssh") => Some("ssh"),
        _ => None,
    }
}

/// How to turn `feature` on, for an error message.
pub(crate) fn enable_hint(feature: &str) -> String {
    format!(
        "build talon-runtime with its `{feature}` cargo feature (`features = [\"{feature}\"]` on the dependency; this build left it out)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_part_is_missing_exactly_when_its_feature_is_off() {
        assert_eq!(
            missing_tool_feature("web_fetch").is_some(),
            !cfg!(feature = "web")
        );
        assert_eq!(
            missing_tool_feature("cron").is_some(),
            !cfg!(feature = "sqlite-state")
        );
        assert_eq!(
            missing_tool_feature("memory_search").is_some(),
            !cfg!(feature = "sqlite-state")
        );
        assert_eq!(
            missing_tool_feature("tts").is_some(),
            !cfg!(feature = "media")
        );
        assert_eq!(
            missing_backend_feature("docker").is_some(),
            !cfg!(feature = "docker")
        );
        assert_eq!(
            missing_backend_feature("ssh").is_some(),
            !cfg!(feature = "ssh")
        );
        // Core parts and unknown names are never blamed on a feature.
        assert_eq!(missing_tool_feature("exec"), None);
        assert_eq!(missing_backend_feature("local"), None);
        assert_eq!(missing_backend_feature("plugin-vm"), None);
        assert!(enable_hint("web").contains("`web` cargo feature"));
        assert!(enable_hint("web").contains(r#"features = ["web"]"#));
    }
}
