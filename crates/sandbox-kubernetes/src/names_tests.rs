#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;
use talon_sandbox_core::DockerConfig;

use super::*;
use crate::test_support::request;

#[test]
fn a_scope_maps_to_a_dns_label_claim_with_hashed_labels_and_whole_annotations() {
    let req = request("agent:main:telegram:group:42", DockerConfig::default());
    let settings = KubernetesSettings::default();
    let id = ClaimIdentity::of(&req, &settings).unwrap();
    assert_eq!(id.name, req.sandbox_name.replace(['_', '.'], "-"));
    assert!(id.name.starts_with("talon-sbx-"), "{}", id.name);
    assert_eq!(id.labels[LABEL_SANDBOX], "1");
    for value in id.labels.values() {
        assert!(value.len() <= 63, "{value}");
    }
    assert_eq!(id.labels[LABEL_SCOPE_KEY], scope_key_label(&req.scope_key));
    assert_eq!(id.annotations[ANNOTATION_SCOPE_KEY], req.scope_key);
    assert_eq!(id.annotations[ANNOTATION_CONFIG_HASH], id.config_hash);
    assert!(id.config_hash.starts_with(&id.labels[LABEL_CONFIG_HASH]));
    assert_eq!(owned_selector(), "talon.sandbox=1");
}

#[test]
fn a_kubernetes_setting_changes_the_hash_and_so_the_template() {
    let req = request("agent:main:test:1", DockerConfig::default());
    let a = KubernetesSettings::default();
    let b = KubernetesSettings {
        runtime_class: Some("gvisor".into()),
        ..Default::default()
    };
    let c = KubernetesSettings {
        ready_timeout: std::time::Duration::from_secs(1),
        ..Default::default()
    };
    let (ha, hb, hc) = (
        kubernetes_config_hash(&req, &a),
        kubernetes_config_hash(&req, &b),
        kubernetes_config_hash(&req, &c),
    );
    assert_ne!(ha, hb);
    assert_eq!(ha, hc, "a timeout does not shape the template");
    assert_ne!(template_name(&ha), template_name(&hb));
    assert_eq!(template_name(&ha).len(), "talon-".len() + TEMPLATE_HASH_LEN);
}

#[test]
fn names_a_pod_cannot_carry_are_refused_or_mapped() {
    assert_eq!(claim_name("Talon_sbx.A-1").unwrap(), "talon-sbx-a-1");
    for bad in ["", "--", "sbx/1", "sbx ü"] {
        let err = claim_name(bad).unwrap_err();
        assert_eq!(err.code(), "sandbox.kubernetes.invalid_name", "{bad:?}");
    }
    assert!(claim_name(&"a".repeat(64)).is_err());
    assert_eq!(claim_name(&"a".repeat(63)).unwrap().len(), 63);
}
