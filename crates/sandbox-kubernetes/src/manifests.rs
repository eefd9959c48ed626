//! The objects the backend would create, as JSON built from the resolved
//! sandbox config: [`sandbox_template`], [`sandbox_claim`] and
//! [`network_policy`], after [`check_settings`] refused what the design
//! refuses. Field names follow agent-sandbox's `v1beta1` API as the design
//! describes it; they have not been checked against a live API server.

use serde_json::{Map, Value, json};
use talon_sandbox_core::{DockerSettings, SandboxRequest, SizeValue};

use crate::error::KubernetesError;
use crate::names::{ClaimIdentity, LABEL_CONFIG_HASH, LABEL_SANDBOX, template_name};
use crate::settings::KubernetesSettings;

/// The API version of `SandboxTemplate`, `SandboxClaim`, `SandboxWarmPool`.
pub const EXTENSIONS_API_VERSION: &str = "extensions.agents.x-k8s.io/v1beta1";
/// The name of the sandbox container in every pod.
pub const CONTAINER_NAME: &str = "sandbox";
/// The name of the workspace volume (claim template).
pub const WORKSPACE_VOLUME: &str = "workspace";

/// Refuse what the design refuses, before anything is built: no
/// `RuntimeClass` without the break-glass switch, host network,
/// privileged, added capabilities, `capDrop` without `ALL`, unconfined
/// profiles, host binds, and every setting a pod cannot carry.
pub fn check_settings(
    docker: &DockerSettings,
    settings: &KubernetesSettings,
) -> Result<(), KubernetesError> {
    match settings.runtime_class.as_deref().map(str::trim) {
        Some("") | None if !settings.dangerously_allow_runc_runtime => {
            return Err(KubernetesError::RuntimeClassRequired);
        }
        _ => {}
    }
    match docker.network.trim() {
        "none" => {}
        "bridge" if settings.egress_proxy.is_some() => {}
        "bridge" => return Err(KubernetesError::EgressProxyMissing),
        "host" => return Err(KubernetesError::HostNetworkRefused),
        other => return Err(KubernetesError::NetworkUnsupported(other.to_owned())),
    }
    if docker.privileged {
        return Err(KubernetesError::PrivilegedRefused);
    }
    if !docker.cap_add.is_empty() {
        return Err(KubernetesError::CapAddRefused(docker.cap_add.join(", ")));
    }
    if !docker
        .cap_drop
        .iter()
        .any(|c| c.trim().eq_ignore_ascii_case("ALL"))
    {
        return Err(KubernetesError::CapDropWithoutAll);
    }
    for (key, value) in [
        ("seccompProfile", &docker.seccomp_profile),
        ("apparmorProfile", &docker.apparmor_profile),
    ] {
        if value
            .as_deref()
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("unconfined"))
        {
            return Err(KubernetesError::UnconfinedProfile(key));
        }
    }
    if let Some(bind) = docker.binds.first() {
        return Err(KubernetesError::BindRefused(bind.clone()));
    }
    let unsupported = |key, why| Err(KubernetesError::UnsupportedSetting { key, why });
    if docker.pids_limit.is_some() {
        return unsupported(
            "pidsLimit",
            "a pod has no pids limit; set podPidsLimit on the kubelet",
        );
    }
    if !docker.ulimits.is_empty() {
        return unsupported("ulimits", "a pod has no ulimits");
    }
    if docker.memory_swap.is_some() {
        return unsupported("memorySwap", "swap is the node's setting");
    }
    if docker.gpus.is_some() {
        return unsupported("gpus", "GPU resources are not mapped yet");
    }
    if docker.dns.is_some() || docker.extra_hosts.is_some() {
        return unsupported("dns", "dns and extraHosts are not mapped yet");
    }
    if docker.setup_command.is_some() {
        return unsupported("setupCommand", "the skeleton runs no setup command");
    }
    Ok(())
}

/// Bytes of a Docker size (`512m`, `2g`, a number of bytes).
fn size_bytes(key: &'static str, value: &SizeValue) -> Result<i64, KubernetesError> {
    let invalid = || KubernetesError::InvalidQuantity {
        key,
        value: value.to_string(),
    };
    match value {
        SizeValue::Bytes(n) if *n > 0 => Ok(*n),
        SizeValue::Bytes(_) => Err(invalid()),
        SizeValue::Text(text) => {
            let t = text.trim().to_ascii_lowercase();
            let (digits, unit) = match t.find(|c: char| !c.is_ascii_digit()) {
                Some(at) => t.split_at(at),
                None => (t.as_str(), ""),
            };
            let n: i64 = digits.parse().map_err(|_| invalid())?;
            let mult: i64 = match unit {
                "" | "b" => 1,
                "k" | "kb" => 1 << 10,
                "m" | "mb" => 1 << 20,
                "g" | "gb" => 1 << 30,
                _ => return Err(invalid()),
            };
            n.checked_mul(mult).filter(|b| *b > 0).ok_or_else(invalid)
        }
    }
}

/// `runAsUser` / `runAsGroup` from `user` (`uid` or `uid:gid`).
fn run_as(user: &str) -> Result<(u32, Option<u32>), KubernetesError> {
    let bad = || KubernetesError::UserNotNumeric(user.to_owned());
    let (uid, gid) = match user.trim().split_once(':') {
        Some((u, g)) => (u, Some(g)),
        None => (user.trim(), None),
    };
    let uid = uid.parse().map_err(|_| bad())?;
    let gid = gid.map(|g| g.parse().map_err(|_| bad())).transpose()?;
    Ok((uid, gid))
}

fn labels_value(identity: &ClaimIdentity, keys: &[&str]) -> Value {
    let mut map = Map::new();
    for key in keys {
        if let Some(v) = identity.labels.get(*key) {
            map.insert((*key).to_owned(), Value::String(v.clone()));
        }
    }
    Value::Object(map)
}

/// The ingress and egress rules of `network`: none at all for `none`
/// (deny everything, DNS included), the egress proxy only for `bridge`.
fn policy_rules(docker: &DockerSettings, settings: &KubernetesSettings) -> (Value, Value) {
    let egress = match (docker.network.trim(), &settings.egress_proxy) {
        ("bridge", Some(proxy)) => json!([{
            "to": [{
                "namespaceSelector": {
                    "matchLabels": { "kubernetes.io/metadata.name": proxy.namespace }
                },
                "podSelector": { "matchLabels": proxy.pod_labels },
            }],
            "ports": [{ "protocol": "TCP", "port": proxy.port }],
        }]),
        _ => json!([]),
    };
    (json!([]), egress)
}

/// The `SandboxTemplate` of a configuration: the hardened pod, its
/// workspace volume and its network rules.
pub fn sandbox_template(
    request: &SandboxRequest,
    settings: &KubernetesSettings,
    identity: &ClaimIdentity,
) -> Result<Value, KubernetesError> {
    let docker = &request.config.docker;
    check_settings(docker, settings)?;
    let template_labels = labels_value(identity, &[LABEL_SANDBOX, LABEL_CONFIG_HASH]);

    let mut pod_security = Map::new();
    let seccomp = match docker.seccomp_profile.as_deref().map(str::trim) {
        None | Some("") | Some("default") => json!({ "type": "RuntimeDefault" }),
        Some(profile) => json!({ "type": "Localhost", "localhostProfile": profile }),
    };
    pod_security.insert("seccompProfile".into(), seccomp);
    match docker.user.as_deref() {
        Some(user) => {
            let (uid, gid) = run_as(user)?;
            pod_security.insert("runAsUser".into(), json!(uid));
            if let Some(gid) = gid {
                pod_security.insert("runAsGroup".into(), json!(gid));
                pod_security.insert("fsGroup".into(), json!(gid));
            }
            pod_security.insert("runAsNonRoot".into(), json!(uid != 0));
        }
        None => {
            pod_security.insert("runAsNonRoot".into(), json!(true));
        }
    }

    let mut container_security = json!({
        "privileged": false,
        "allowPrivilegeEscalation": false,
        "readOnlyRootFilesystem": docker.read_only_root,
        "capabilities": { "drop": ["ALL"] },
    });
    if let Some(profile) = docker.apparmor_profile.as_deref().map(str::trim) {
        container_security["appArmorProfile"] = match profile {
            "" | "default" | "docker-default" => json!({ "type": "RuntimeDefault" }),
            p => json!({ "type": "Localhost", "localhostProfile": p }),
        };
    }

    let mut limits = Map::new();
    if let Some(memory) = &docker.memory {
        limits.insert(
            "memory".into(),
            json!(size_bytes("memory", memory)?.to_string()),
        );
    }
    if let Some(cpus) = &docker.cpus {
        limits.insert("cpu".into(), json!(cpus.to_string()));
    }

    let env: Vec<Value> = docker
        .env
        .iter()
        .map(|(k, v)| json!({ "name": k, "value": v }))
        .collect();
    let mut mounts = vec![json!({ "name": WORKSPACE_VOLUME, "mountPath": docker.workdir })];
    let mut volumes = Vec::new();
    for (i, entry) in docker.tmpfs.iter().enumerate() {
        let path = entry.split(':').next().unwrap_or(entry.as_str()).trim();
        let name = format!("tmpfs-{i}");
        mounts.push(json!({ "name": name, "mountPath": path }));
        volumes.push(json!({ "name": name, "emptyDir": { "medium": "Memory" } }));
    }

    let mut pod_spec = json!({
        "automountServiceAccountToken": false,
        "enableServiceLinks": false,
        "hostNetwork": false,
        "hostPID": false,
        "hostIPC": false,
        "securityContext": pod_security,
        "containers": [{
            "name": CONTAINER_NAME,
            "image": docker.image,
            "command": ["sleep", "infinity"],
            "workingDir": docker.workdir,
            "env": env,
            "resources": { "limits": limits.clone(), "requests": limits },
            "securityContext": container_security,
            "volumeMounts": mounts,
        }],
        "volumes": volumes,
    });
    if let Some(class) = settings
        .runtime_class
        .as_deref()
        .map(str::trim)
        .filter(|c| !c.is_empty())
    {
        pod_spec["runtimeClassName"] = json!(class);
    }
    let mut volume_spec = json!({
        "accessModes": ["ReadWriteOnce"],
        "resources": { "requests": { "storage": settings.workspace_size } },
    });
    if let Some(class) = &settings.storage_class {
        volume_spec["storageClassName"] = json!(class);
    }
    let (ingress, egress) = policy_rules(docker, settings);
    Ok(json!({
        "apiVersion": EXTENSIONS_API_VERSION,
        "kind": "SandboxTemplate",
        "metadata": {
            "name": template_name(&identity.config_hash),
            "namespace": settings.namespace,
            "labels": template_labels,
        },
        "spec": {
            "podTemplate": {
                "metadata": { "labels": template_labels },
                "spec": pod_spec,
            },
            "volumeClaimTemplates": [{
                "metadata": { "name": WORKSPACE_VOLUME },
                "spec": volume_spec,
            }],
            "networkPolicy": { "ingress": ingress, "egress": egress },
        },
    }))
}

/// The NetworkPolicy of a configuration, on its own (the same rules as
/// the template's `networkPolicy`, for a controller that does not apply
/// those): it selects the configuration's pods by their config-hash label.
pub fn network_policy(
    request: &SandboxRequest,
    settings: &KubernetesSettings,
    identity: &ClaimIdentity,
) -> Result<Value, KubernetesError> {
    check_settings(&request.config.docker, settings)?;
    let (ingress, egress) = policy_rules(&request.config.docker, settings);
    Ok(json!({
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {
            "name": template_name(&identity.config_hash),
            "namespace": settings.namespace,
            "labels": labels_value(identity, &[LABEL_SANDBOX, LABEL_CONFIG_HASH]),
        },
        "spec": {
            "podSelector": {
                "matchLabels": labels_value(identity, &[LABEL_SANDBOX, LABEL_CONFIG_HASH]),
            },
            "policyTypes": ["Ingress", "Egress"],
            "ingress": ingress,
            "egress": egress,
        },
    }))
}

/// The `SandboxClaim` of one scope: its template, its labels, and a
/// shutdown time `settings.max_age` after `now_ms` (deleted by the
/// controller if no gateway renews it).
pub fn sandbox_claim(
    settings: &KubernetesSettings,
    identity: &ClaimIdentity,
    now_ms: u64,
) -> Value {
    let max_age_ms = u64::try_from(settings.max_age.as_millis()).unwrap_or(u64::MAX);
    json!({
        "apiVersion": EXTENSIONS_API_VERSION,
        "kind": "SandboxClaim",
        "metadata": {
            "name": identity.name,
            "namespace": settings.namespace,
            "labels": identity.labels,
            "annotations": identity.annotations,
        },
        "spec": {
            "sandboxTemplateRef": { "name": template_name(&identity.config_hash) },
            "lifecycle": {
                "shutdownTime": rfc3339_utc(now_ms.saturating_add(max_age_ms)),
                "shutdownPolicy": "Delete",
            },
            "warmpool": "none",
            "additionalPodMetadata": { "labels": identity.labels },
        },
    })
}

/// `ms` since the epoch as `YYYY-MM-DDTHH:MM:SSZ` (whole seconds).
pub fn rfc3339_utc(ms: u64) -> String {
    let secs = ms / 1000;
    let days = i64::try_from(secs / 86_400).unwrap_or(i64::MAX / 2);
    let rem = secs % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
#[path = "manifests_tests.rs"]
mod tests;
