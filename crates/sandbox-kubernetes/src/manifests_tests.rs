#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;

use pretty_assertions::assert_eq;
use talon_sandbox_core::DockerConfig;

use super::*;
use crate::settings::EgressProxy;
use crate::test_support::request;

fn gvisor() -> KubernetesSettings {
    KubernetesSettings {
        runtime_class: Some("gvisor".into()),
        ..Default::default()
    }
}

fn built(docker: DockerConfig, settings: &KubernetesSettings) -> Result<Value, KubernetesError> {
    let req = request("agent:main:test:1", docker);
    let id = ClaimIdentity::of(&req, settings)?;
    sandbox_template(&req, settings, &id)
}

#[test]
fn the_template_is_the_hardened_pod_with_its_runtime_class_and_workspace_volume() {
    let docker = DockerConfig {
        user: Some("1000:1000".into()),
        memory: Some(SizeValue::Text("512m".into())),
        ..Default::default()
    };
    let t = built(docker, &gvisor()).unwrap();
    assert_eq!(t["apiVersion"], EXTENSIONS_API_VERSION);
    assert_eq!(t["kind"], "SandboxTemplate");
    let pod = &t["spec"]["podTemplate"]["spec"];
    assert_eq!(pod["runtimeClassName"], "gvisor");
    assert_eq!(pod["automountServiceAccountToken"], false);
    assert_eq!(pod["hostNetwork"], false);
    assert_eq!(pod["securityContext"]["runAsUser"], 1000);
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    assert_eq!(
        pod["securityContext"]["seccompProfile"]["type"],
        "RuntimeDefault"
    );
    let c = &pod["containers"][0];
    assert_eq!(c["workingDir"], "/workspace");
    assert_eq!(c["securityContext"]["allowPrivilegeEscalation"], false);
    assert_eq!(c["securityContext"]["capabilities"]["drop"], json!(["ALL"]));
    assert_eq!(
        c["resources"]["limits"]["memory"],
        (512 * 1024 * 1024).to_string()
    );
    assert_eq!(c["volumeMounts"][0]["mountPath"], "/workspace");
    assert_eq!(
        t["spec"]["volumeClaimTemplates"][0]["metadata"]["name"],
        WORKSPACE_VOLUME
    );
    // network: none (the default) denies everything, DNS included.
    assert_eq!(
        t["spec"]["networkPolicy"],
        json!({ "ingress": [], "egress": [] })
    );
}

#[test]
fn no_runtime_class_is_refused_unless_runc_is_allowed_by_name() {
    let err = built(DockerConfig::default(), &KubernetesSettings::default()).unwrap_err();
    assert_eq!(err, KubernetesError::RuntimeClassRequired);
    assert!(
        err.to_string().contains("dangerouslyAllowRuncRuntime"),
        "{err}"
    );
    let runc = KubernetesSettings {
        dangerously_allow_runc_runtime: true,
        ..Default::default()
    };
    let t = built(DockerConfig::default(), &runc).unwrap();
    assert!(
        t["spec"]["podTemplate"]["spec"]
            .get("runtimeClassName")
            .is_none()
    );
}

#[test]
fn what_the_design_refuses_is_refused_with_its_code() {
    let cases: Vec<(DockerConfig, &str)> = vec![
        (
            DockerConfig {
                network: Some("host".into()),
                ..Default::default()
            },
            "sandbox.kubernetes.host_network_refused",
        ),
        (
            DockerConfig {
                network: Some("bridge".into()),
                ..Default::default()
            },
            "sandbox.kubernetes.egress_proxy_missing",
        ),
        (
            DockerConfig {
                network: Some("my-net".into()),
                ..Default::default()
            },
            "sandbox.kubernetes.network_unsupported",
        ),
        (
            DockerConfig {
                cap_drop: Some(vec!["NET_RAW".into()]),
                ..Default::default()
            },
            "sandbox.kubernetes.cap_drop_without_all",
        ),
        (
            DockerConfig {
                seccomp_profile: Some("unconfined".into()),
                ..Default::default()
            },
            "sandbox.kubernetes.unconfined_profile",
        ),
        (
            DockerConfig {
                binds: Some(vec!["/srv/data:/data:ro".into()]),
                ..Default::default()
            },
            "sandbox.kubernetes.bind_refused",
        ),
        (
            DockerConfig {
                pids_limit: Some(256),
                ..Default::default()
            },
            "sandbox.kubernetes.unsupported_setting",
        ),
        (
            DockerConfig {
                user: Some("sandbox".into()),
                ..Default::default()
            },
            "sandbox.kubernetes.user_not_numeric",
        ),
        (
            DockerConfig {
                memory: Some(SizeValue::Text("lots".into())),
                ..Default::default()
            },
            "sandbox.kubernetes.invalid_quantity",
        ),
    ];
    for (docker, code) in cases {
        let shown = format!("{docker:?}");
        let err = built(docker, &gvisor()).unwrap_err();
        assert_eq!(err.code(), code, "{shown}: {err}");
    }
}

#[test]
fn bridge_reaches_only_the_egress_proxy() {
    let settings = KubernetesSettings {
        egress_proxy: Some(EgressProxy {
            namespace: "talon".into(),
            pod_labels: BTreeMap::from([("app".into(), "talon-egress".into())]),
            port: 3128,
        }),
        ..gvisor()
    };
    let req = request(
        "agent:main:test:1",
        DockerConfig {
            network: Some("bridge".into()),
            ..Default::default()
        },
    );
    let id = ClaimIdentity::of(&req, &settings).unwrap();
    let np = network_policy(&req, &settings, &id).unwrap();
    assert_eq!(np["kind"], "NetworkPolicy");
    assert_eq!(np["spec"]["policyTypes"], json!(["Ingress", "Egress"]));
    assert_eq!(np["spec"]["ingress"], json!([]));
    let egress = np["spec"]["egress"].as_array().unwrap();
    assert_eq!(egress.len(), 1);
    assert_eq!(
        egress[0]["ports"],
        json!([{ "protocol": "TCP", "port": 3128 }])
    );
    assert_eq!(
        egress[0]["to"][0]["podSelector"]["matchLabels"]["app"],
        "talon-egress"
    );
    assert_eq!(
        np["spec"]["podSelector"]["matchLabels"][LABEL_CONFIG_HASH],
        id.labels[LABEL_CONFIG_HASH]
    );
}

#[test]
fn the_claim_names_its_template_and_shuts_down_after_max_age() {
    let settings = gvisor();
    let req = request("agent:main:test:1", DockerConfig::default());
    let id = ClaimIdentity::of(&req, &settings).unwrap();
    // 2025-12-05T00:00:00Z plus the default seven days.
    let claim = sandbox_claim(&settings, &id, 1_764_892_800_000);
    assert_eq!(claim["kind"], "SandboxClaim");
    assert_eq!(claim["metadata"]["name"], id.name);
    assert_eq!(claim["metadata"]["labels"][LABEL_SANDBOX], "1");
    assert_eq!(
        claim["spec"]["sandboxTemplateRef"]["name"],
        crate::names::template_name(&id.config_hash)
    );
    assert_eq!(
        claim["spec"]["lifecycle"]["shutdownTime"],
        "2025-12-12T00:00:00Z"
    );
    assert_eq!(claim["spec"]["lifecycle"]["shutdownPolicy"], "Delete");
}

#[test]
fn rfc3339_of_known_instants() {
    assert_eq!(rfc3339_utc(0), "1970-01-01T00:00:00Z");
    assert_eq!(rfc3339_utc(951_782_400_000), "2000-02-29T00:00:00Z");
    assert_eq!(rfc3339_utc(4_102_444_799_999), "2099-12-31T23:59:59Z");
}
