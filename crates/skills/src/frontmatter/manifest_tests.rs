use pretty_assertions::assert_eq;

use super::manifest::{check_brew, check_go, check_npm, check_url, check_uv};
use super::*;
use crate::types::{InstallKind, InstallSpec, SkillManifest, SkillRequires};

fn with_metadata(metadata: &str) -> ParsedSkillFile {
    parse_skill_md(&format!(
        "---\nname: demo\ndescription: d\nmetadata: {metadata}\n---\nbody"
    ))
}

fn manifest(metadata: &str) -> SkillManifest {
    let parsed = with_metadata(metadata);
    assert_eq!(parsed.warnings, Vec::<String>::new());
    parsed.frontmatter.manifest.expect("a manifest")
}

/// Parse one install entry (JSON5 object text); returns the spec or the
/// warnings.
fn install(entry: &str) -> Result<InstallSpec, Vec<String>> {
    let parsed = with_metadata(&format!("'{{openclaw: {{install: [{entry}]}}}}'"));
    let manifest = parsed.frontmatter.manifest.unwrap_or_default();
    match manifest.install.as_slice() {
        [spec] => {
            assert_eq!(parsed.warnings, Vec::<String>::new());
            Ok(spec.clone())
        }
        [] => Err(parsed.warnings),
        more => panic!("expected at most one spec, got {more:?}"),
    }
}

#[test]
fn json5_string_form() {
    let m = manifest(
        r#"'{openclaw: {emoji: "🦞", always: true, homepage: "https://example.com", skillKey: "demo-key", primaryEnv: "DEMO_TOKEN", os: ["darwin", "linux"], requires: {bins: ["gh"], anyBins: ["rg", "grep"], env: ["DEMO_TOKEN"], config: ["channels.slack"],},},}'"#,
    );
    assert_eq!(
        m,
        SkillManifest {
            always: true,
            emoji: Some("🦞".to_owned()),
            homepage: Some("https://example.com".to_owned()),
            skill_key: Some("demo-key".to_owned()),
            primary_env: Some("DEMO_TOKEN".to_owned()),
            os: vec!["darwin".to_owned(), "linux".to_owned()],
            requires: SkillRequires {
                bins: vec!["gh".to_owned()],
                any_bins: vec!["rg".to_owned(), "grep".to_owned()],
                env: vec!["DEMO_TOKEN".to_owned()],
                config: vec!["channels.slack".to_owned()],
            },
            install: Vec::new(),
        }
    );
}

#[test]
fn yaml_map_form() {
    let parsed = parse_skill_md(
        "---\nname: demo\ndescription: d\nmetadata:\n  openclaw:\n    emoji: \"🐙\"\n    requires:\n      bins:\n        - gh\n      env: GH_TOKEN, OTHER\n    install:\n      - kind: brew\n        formula: gh\n        bins: [gh]\n---\n",
    );
    assert_eq!(parsed.warnings, Vec::<String>::new());
    let m = parsed.frontmatter.manifest.expect("manifest");
    assert_eq!(m.emoji.as_deref(), Some("🐙"));
    assert_eq!(m.requires.bins, vec!["gh"]);
    assert_eq!(m.requires.env, vec!["GH_TOKEN", "OTHER"]);
    assert_eq!(
        m.install,
        vec![InstallSpec {
            kind: InstallKind::Brew,
            target: "gh".to_owned(),
            id: None,
            label: None,
            bins: vec!["gh".to_owned()],
            os: Vec::new(),
        }]
    );
}

#[test]
fn single_line_json_form_uses_the_raw_line() {
    let m = manifest(r#"{"openclaw": {"emoji": "x", "requires": {"bins": ["jq"]}}}"#);
    assert_eq!(m.emoji.as_deref(), Some("x"));
    assert_eq!(m.requires.bins, vec!["jq"]);
}

#[test]
fn structured_value_is_used_when_the_raw_line_is_not_json5() {
    // The raw line (`{ "openclaw":`) is cut; the YAML value is complete.
    let parsed = parse_skill_md(
        "---\nname: demo\nmetadata: { \"openclaw\":\n    { \"emoji\": \"x\" } }\n---\n",
    );
    assert_eq!(parsed.warnings, Vec::<String>::new());
    assert_eq!(
        parsed.frontmatter.manifest.and_then(|m| m.emoji),
        Some("x".to_owned())
    );
}

#[test]
fn legacy_clawdbot_block() {
    let m = manifest(r#"'{clawdbot: {emoji: "c", requires: {bins: "a, b"}}}'"#);
    assert_eq!(m.emoji.as_deref(), Some("c"));
    assert_eq!(m.requires.bins, vec!["a", "b"]);
    // `openclaw` wins over the legacy name.
    let m = manifest(r#"'{clawdbot: {emoji: "old"}, openclaw: {emoji: "new"}}'"#);
    assert_eq!(m.emoji.as_deref(), Some("new"));
}

#[test]
fn no_block_no_manifest() {
    assert_eq!(
        with_metadata(r#"'{other: {emoji: "x"}}'"#)
            .frontmatter
            .manifest,
        None
    );
    assert_eq!(with_metadata("'[1, 2]'").frontmatter.manifest, None);
    assert_eq!(
        with_metadata(r#"'{openclaw: "not an object"}'"#)
            .frontmatter
            .manifest,
        None
    );
    // A top-level `openclaw:` key is not a manifest (OpenClaw reads only
    // `metadata`).
    let parsed = parse_skill_md("---\nname: demo\nopenclaw:\n  emoji: x\n---\n");
    assert_eq!(parsed.frontmatter.manifest, None);
}

#[test]
fn invalid_json5_metadata_warns() {
    let parsed = with_metadata("'{openclaw: '");
    assert_eq!(parsed.frontmatter.manifest, None);
    assert_eq!(parsed.warnings.len(), 1);
    assert!(parsed.warnings[0].starts_with("metadata is not valid JSON5"));
}

#[test]
fn always_accepts_booleans_and_truthy_strings() {
    assert!(manifest("'{openclaw: {always: true}}'").always);
    assert!(manifest("'{openclaw: {always: \"yes\"}}'").always);
    assert!(manifest("'{openclaw: {always: \"ON\"}}'").always);
    assert!(!manifest("'{openclaw: {always: \"off\"}}'").always);
    assert!(!manifest("'{openclaw: {}}'").always);
    let parsed = with_metadata("'{openclaw: {always: \"sometimes\"}}'");
    assert!(!parsed.frontmatter.manifest.expect("manifest").always);
    assert_eq!(parsed.warnings.len(), 1);
    assert!(parsed.warnings[0].contains("\"sometimes\""));
}

#[test]
fn requires_in_array_and_comma_forms() {
    let m = manifest(
        r#"'{openclaw: {os: "darwin, linux", requires: {bins: ["a", " b ", "", 3], anyBins: "x,,y", env: "TOKEN", config: "a.b, c.d"}}}'"#,
    );
    assert_eq!(m.os, vec!["darwin", "linux"]);
    assert_eq!(m.requires.bins, vec!["a", "b", "3"]);
    assert_eq!(m.requires.any_bins, vec!["x", "y"]);
    assert_eq!(m.requires.env, vec!["TOKEN"]);
    assert_eq!(m.requires.config, vec!["a.b", "c.d"]);
}

#[test]
fn requires_config_object_entries_are_skipped_with_a_warning() {
    let parsed = with_metadata(
        r#"'{openclaw: {requires: {config: ["a.b", {path: "x", access: "read"}]}}}'"#,
    );
    assert_eq!(
        parsed
            .frontmatter
            .manifest
            .expect("manifest")
            .requires
            .config,
        vec!["a.b"]
    );
    assert_eq!(parsed.warnings.len(), 1);
    assert!(parsed.warnings[0].contains("requires.config"));
}

#[test]
fn every_install_kind_valid() {
    let cases: &[(&str, InstallKind, &str)] = &[
        (r#"{kind: "brew", formula: "gh"}"#, InstallKind::Brew, "gh"),
        (
            r#"{kind: "brew", formula: "steipete/tap/gogcli"}"#,
            InstallKind::Brew,
            "steipete/tap/gogcli",
        ),
        (
            r#"{kind: "brew", formula: "python@3.12"}"#,
            InstallKind::Brew,
            "python@3.12",
        ),
        (
            r#"{kind: "brew", cask: "visual-studio-code"}"#,
            InstallKind::Brew,
            "visual-studio-code",
        ),
        (
            r#"{kind: "node", package: "clawhub"}"#,
            InstallKind::Node,
            "clawhub",
        ),
        (
            r#"{kind: "node", package: "@openai/codex"}"#,
            InstallKind::Node,
            "@openai/codex",
        ),
        (
            r#"{kind: "node", package: "typescript@5.4.2"}"#,
            InstallKind::Node,
            "typescript@5.4.2",
        ),
        (
            r#"{kind: "node", package: "@scope/pkg@latest"}"#,
            InstallKind::Node,
            "@scope/pkg@latest",
        ),
        (
            r#"{kind: "node", package: "pkg@1.0.0-beta.1+build.5"}"#,
            InstallKind::Node,
            "pkg@1.0.0-beta.1+build.5",
        ),
        (
            r#"{kind: "go", module: "github.com/x/y/cmd/z@latest"}"#,
            InstallKind::Go,
            "github.com/x/y/cmd/z@latest",
        ),
        (
            r#"{kind: "go", module: "golang.org/x/tools/gopls@v0.16.1"}"#,
            InstallKind::Go,
            "golang.org/x/tools/gopls@v0.16.1",
        ),
        (r#"{kind: "uv", package: "ruff"}"#, InstallKind::Uv, "ruff"),
        (
            r#"{kind: "uv", package: "black[jupyter]>=24.1,<25"}"#,
            InstallKind::Uv,
            "black[jupyter]>=24.1,<25",
        ),
        (
            r#"{kind: "download", url: "https://example.com/tool.tar.gz"}"#,
            InstallKind::Download,
            "https://example.com/tool.tar.gz",
        ),
        (
            r#"{kind: "download", url: "HTTP://example.com:8080/a?b=c#d"}"#,
            InstallKind::Download,
            "HTTP://example.com:8080/a?b=c#d",
        ),
        (
            r#"{kind: "download", url: "https://[::1]:443/x", sha256: "ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef0123456789"}"#,
            InstallKind::Download,
            "https://[::1]:443/x",
        ),
        // `type` is accepted for `kind`, and case does not matter.
        (r#"{type: "Brew", formula: "jq"}"#, InstallKind::Brew, "jq"),
        (
            r#"{kind: " NODE ", package: " trimmed "}"#,
            InstallKind::Node,
            "trimmed",
        ),
    ];
    for (entry, kind, target) in cases {
        let spec = install(entry).unwrap_or_else(|w| panic!("{entry}: {w:?}"));
        assert_eq!(
            (spec.kind, spec.target.as_str()),
            (*kind, *target),
            "{entry}"
        );
    }
}

#[test]
fn install_common_fields() {
    let spec = install(
        r#"{id: "brew-gh", label: "Install GitHub CLI (brew)", kind: "brew", formula: "gh", bins: ["gh"], os: "darwin, linux"}"#,
    )
    .expect("valid");
    assert_eq!(
        spec,
        InstallSpec {
            kind: InstallKind::Brew,
            target: "gh".to_owned(),
            id: Some("brew-gh".to_owned()),
            label: Some("Install GitHub CLI (brew)".to_owned()),
            bins: vec!["gh".to_owned()],
            os: vec!["darwin".to_owned(), "linux".to_owned()],
        }
    );
}

#[test]
fn invalid_install_entries_are_dropped_with_a_warning() {
    let cases: &[(&str, &str)] = &[
        // brew
        (
            r#"{kind: "brew", formula: "-evil"}"#,
            "brew: formula \"-evil\" rejected (starts with '-')",
        ),
        (r#"{kind: "brew", formula: "--cask=x"}"#, "brew"),
        (
            r#"{kind: "brew", formula: "gh; rm -rf ~"}"#,
            "\"gh; rm -rf ~\"",
        ),
        (r#"{kind: "brew", formula: "../../etc/passwd"}"#, "brew"),
        (r#"{kind: "brew", formula: "tap/..//x"}"#, "contains '..'"),
        (r#"{kind: "brew", cask: "a\\b"}"#, "cask \"a\\\\b\""),
        (r#"{kind: "brew", formula: "$(id)"}"#, "brew"),
        // node
        (
            r#"{kind: "node", package: "-g"}"#,
            "node: package \"-g\" rejected (starts with '-')",
        ),
        (
            r#"{kind: "node", package: "git+https://github.com/evil/pkg.git"}"#,
            "node: package \"git+https://github.com/evil/pkg.git\"",
        ),
        (
            r#"{kind: "node", package: "github:evil/pkg"}"#,
            "protocol specs",
        ),
        (
            r#"{kind: "node", package: "file:../pkg"}"#,
            "protocol specs",
        ),
        (r#"{kind: "node", package: "./local"}"#, "node"),
        (r#"{kind: "node", package: "/abs/path"}"#, "node"),
        (r#"{kind: "node", package: "evil/pkg#main"}"#, "git refs"),
        (r#"{kind: "node", package: "two words"}"#, "whitespace"),
        (
            r#"{kind: "node", package: "pkg@^1.2.0"}"#,
            "ranges are not allowed",
        ),
        (
            r#"{kind: "node", package: "pkg@>=1"}"#,
            "ranges are not allowed",
        ),
        (r#"{kind: "node", package: "pkg@"}"#, "missing version"),
        (r#"{kind: "node", package: "UpperCase"}"#, "node"),
        (r#"{kind: "node", package: "@scope"}"#, "node"),
        (r#"{kind: "node", package: "a..b"}"#, "contains '..'"),
        (
            r#"{kind: "node", package: "alias@npm:evil"}"#,
            "protocol specs",
        ),
        // go
        (
            r#"{kind: "go", module: "-modfile=x"}"#,
            "go: module \"-modfile=x\" rejected (starts with '-')",
        ),
        (r#"{kind: "go", module: "https://evil.com/x"}"#, "go"),
        (r#"{kind: "go", module: "a\\b"}"#, "go"),
        (
            r#"{kind: "go", module: "example.com/x@"}"#,
            "not a Go module version",
        ),
        (r#"{kind: "go", module: "example.com/x@v1@v2"}"#, "go"),
        (
            r#"{kind: "go", module: "example.com/../x"}"#,
            "contains '..'",
        ),
        // uv
        (
            r#"{kind: "uv", package: "-r requirements.txt"}"#,
            "uv: package \"-r requirements.txt\" rejected (starts with '-')",
        ),
        (r#"{kind: "uv", package: "x; y"}"#, "uv"),
        (r#"{kind: "uv", package: "git+https://x/y"}"#, "uv"),
        (r#"{kind: "uv", package: "./local"}"#, "uv"),
        // download
        (
            r#"{kind: "download", url: "ftp://example.com/x"}"#,
            "only http and https",
        ),
        (
            r#"{kind: "download", url: "file:///etc/passwd"}"#,
            "only http and https",
        ),
        (
            r#"{kind: "download", url: "javascript:alert(1)"}"#,
            "download",
        ),
        (
            r#"{kind: "download", url: "https://exa mple.com/"}"#,
            "whitespace",
        ),
        (
            r#"{kind: "download", url: "https://example.com/\nx"}"#,
            "whitespace",
        ),
        (
            r#"{kind: "download", url: "https://user:pw@example.com/"}"#,
            "credentials",
        ),
        (r#"{kind: "download", url: "https:///nohost"}"#, "host"),
        (
            r#"{kind: "download", url: "https://exa_$mple.com/"}"#,
            "bad host",
        ),
        (
            r#"{kind: "download", url: "https://example.com:99999/"}"#,
            "bad port",
        ),
        (
            r#"{kind: "download", url: "https://example.com\\@evil.com/"}"#,
            "backslash",
        ),
        (
            r#"{kind: "download", url: "-https://x"}"#,
            "starts with '-'",
        ),
        (
            r#"{kind: "download", url: "https://example.com/x", sha256: "abc"}"#,
            "sha256",
        ),
        // structure
        (r#"{kind: "apt", package: "x"}"#, "unknown kind \"apt\""),
        (r#"{formula: "gh"}"#, "unknown kind"),
        (r#"{kind: "brew"}"#, "brew: no cask"),
        (r#"{kind: "node", package: 42}"#, "package is not a string"),
        (r#""brew gh""#, "not an object"),
    ];
    for (entry, expected) in cases {
        let warnings = match install(entry) {
            Ok(spec) => panic!("{entry} was accepted: {spec:?}"),
            Err(warnings) => warnings,
        };
        assert_eq!(warnings.len(), 1, "{entry}: {warnings:?}");
        assert!(
            warnings[0].starts_with("install[0] dropped: "),
            "{}",
            warnings[0]
        );
        assert!(
            warnings[0].contains(expected),
            "{entry}: {} lacks {expected}",
            warnings[0]
        );
    }
}

#[test]
fn one_bad_entry_does_not_drop_the_others() {
    let parsed = with_metadata(
        r#"'{openclaw: {install: [{kind: "node", package: "git+https://x/y"}, {kind: "node", package: "ok-pkg"}]}}'"#,
    );
    let m = parsed.frontmatter.manifest.expect("manifest");
    assert_eq!(m.install.len(), 1);
    assert_eq!(m.install[0].target, "ok-pkg");
    assert_eq!(parsed.warnings.len(), 1);
    assert!(parsed.warnings[0].starts_with("install[0] dropped"));
}

#[test]
fn hostile_install_values_are_escaped_in_warnings() {
    let warnings = install(r#"{kind: "brew", formula: "x\u001b]0;pwned\u0007"}"#).unwrap_err();
    assert!(!warnings[0].contains('\u{1b}'));
    assert!(!warnings[0].contains('\u{7}'));
    assert!(warnings[0].contains("\\u{1b}"));
}

#[test]
fn validators_directly() {
    assert_eq!(check_brew("gh"), Ok(()));
    assert!(check_brew("").is_err());
    assert!(check_brew("a b").is_err());
    assert_eq!(check_npm("@a/b@next"), Ok(()));
    assert_eq!(check_npm("v-pkg@v1.2.3"), Ok(()));
    assert!(check_npm("@a/b/c").is_err());
    assert!(check_npm(&"a".repeat(215)).is_err());
    assert_eq!(check_go("example.com/m"), Ok(()));
    assert!(check_go("/abs").is_err());
    assert_eq!(check_uv("httpie==3.2.2"), Ok(()));
    assert!(check_uv("pkg @ https://x").is_err());
    assert_eq!(check_url("https://example.com"), Ok(()));
    assert_eq!(check_url("https://example.com./x"), Ok(()));
    assert_eq!(check_url("https://bücher.example/x"), Ok(()));
    assert!(check_url("https://[not-ip]/").is_err());
    assert!(check_url("https://a..b/").is_err());
    assert!(check_url("https:example.com").is_err());
}
