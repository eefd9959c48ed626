#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;

use super::*;

// Hash suffixes computed independently (`printf %s KEY | sha256sum`).
#[test]
fn slug_vectors() {
    assert_eq!(slugify_scope_key("agent:main"), "agent-main-f331f052");
    assert_eq!(
        slugify_scope_key("  Agent:Ops/Team  "),
        "agent-ops-team-7a7fa7a5"
    );
    assert_eq!(slugify_scope_key("   "), "session-3f3af1ec");
    assert_eq!(slugify_scope_key(""), "session-3f3af1ec");
    assert_eq!(slugify_scope_key("!!!"), "session-e84c538e");
    assert_eq!(
        slugify_scope_key("agent:main:telegram:group:-100123"),
        "agent-main-telegram-group--10012-ae91b72a"
    );
    // The base keeps 32 characters.
    assert_eq!(
        slugify_scope_key("aaaaaaaaaabbbbbbbbbbccccccccccdddddddddd"),
        "aaaaaaaaaabbbbbbbbbbccccccccccdd-28b211ed"
    );
}

#[test]
fn slug_keeps_dots_underscores_dashes_and_collapses_runs() {
    let slug = slugify_scope_key("a.b_c-d  //e");
    assert!(slug.starts_with("a.b_c-d-e-"), "{slug}");
    let slug = slugify_scope_key("--x--");
    assert!(slug.starts_with("x-"), "{slug}");
    // Non-ASCII letters are not kept.
    let slug = slugify_scope_key("ünïcode");
    assert!(slug.starts_with("n-code-"), "{slug}");
}

#[test]
fn different_keys_same_base_get_different_slugs() {
    assert_ne!(slugify_scope_key("a/b"), slugify_scope_key("a:b"));
}

#[test]
fn scope_keys() {
    assert_eq!(scope_key(SandboxScope::Session, "main", "  s1 "), "s1");
    assert_eq!(scope_key(SandboxScope::Session, "main", "  "), "main");
    assert_eq!(scope_key(SandboxScope::Agent, "ops", "s1"), "agent:ops");
    assert_eq!(scope_key(SandboxScope::Shared, "ops", "s1"), "shared");
}

#[test]
fn container_names() {
    assert_eq!(
        container_name("talon-sbx-", SandboxScope::Agent, "agent:main"),
        "talon-sbx-agent-main-f331f052"
    );
    assert_eq!(
        container_name("talon-sbx-", SandboxScope::Shared, "shared"),
        "talon-sbx-shared"
    );
    let long_prefix = "p".repeat(40);
    let name = container_name(
        &long_prefix,
        SandboxScope::Session,
        "aaaaaaaaaabbbbbbbbbbccccccccccdddddddddd",
    );
    assert_eq!(name.chars().count(), MAX_CONTAINER_NAME_LEN);
    assert!(name.starts_with(&long_prefix));
}

#[test]
fn workspace_dirs() {
    let root = Path::new("/state/sandboxes");
    assert_eq!(
        scope_workspace_dir(root, SandboxScope::Agent, "agent:main"),
        PathBuf::from("/state/sandboxes/agent-main-f331f052")
    );
    assert_eq!(
        scope_workspace_dir(root, SandboxScope::Shared, "shared"),
        PathBuf::from("/state/sandboxes")
    );
    assert_eq!(scope_slug(SandboxScope::Shared, "anything"), "shared");
}
