#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;

struct Owned {
    docker: DockerSettings,
    access: WorkspaceAccess,
    ws: PathBuf,
    agent_ws: PathBuf,
    skills: Vec<String>,
}

fn base() -> Owned {
    Owned {
        docker: DockerSettings::default(),
        access: WorkspaceAccess::Rw,
        ws: PathBuf::from("/w"),
        agent_ws: PathBuf::from("/a"),
        skills: vec!["/a/skills:/workspace/skills:ro".to_owned()],
    }
}

fn hash(o: &Owned) -> String {
    config_hash(&ConfigHashInputs {
        docker: &o.docker,
        workspace_access: o.access,
        workspace_dir: &o.ws,
        agent_workspace_dir: &o.agent_ws,
        read_only_skill_mounts: &o.skills,
    })
}

#[test]
fn stable_hex_sha256() {
    let h = hash(&base());
    assert_eq!(h.len(), 64);
    assert!(
        h.chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
    );
    assert_eq!(h, hash(&base()));
    let doc = config_hash_document(&ConfigHashInputs {
        docker: &base().docker,
        workspace_access: WorkspaceAccess::Rw,
        workspace_dir: Path::new("/w"),
        agent_workspace_dir: Path::new("/a"),
        read_only_skill_mounts: &[],
    });
    assert_eq!(doc["mountFormatVersion"], json!(4));
    assert_eq!(doc["createArgsEpoch"], json!(SANDBOX_CREATE_ARGS_EPOCH));
    // Keys are sorted; absent optional docker values are not there.
    let keys: Vec<&String> = doc.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        vec![
            "agentWorkspaceDir",
            "createArgsEpoch",
            "docker",
            "mountFormatVersion",
            "readOnlyWorkspaceSkillMounts",
            "workspaceAccess",
            "workspaceDir"
        ]
    );
    assert!(doc["docker"].get("user").is_none());
    assert!(doc["docker"].get("seccompProfile").is_none());
}

#[test]
fn each_input_changes_the_hash() {
    let h0 = hash(&base());
    let mut variants: Vec<Owned> = Vec::new();
    let mut o = base();
    o.docker.image = "other:1".to_owned();
    variants.push(o);
    let mut o = base();
    o.docker.env.insert("X".to_owned(), "1".to_owned());
    variants.push(o);
    let mut o = base();
    o.docker.binds.push("/x:/x".to_owned());
    variants.push(o);
    let mut o = base();
    o.docker.read_only_root = false;
    variants.push(o);
    let mut o = base();
    o.docker.user = Some("1000:1000".to_owned());
    variants.push(o);
    let mut o = base();
    o.access = WorkspaceAccess::Ro;
    variants.push(o);
    let mut o = base();
    o.ws = PathBuf::from("/w2");
    variants.push(o);
    let mut o = base();
    o.agent_ws = PathBuf::from("/a2");
    variants.push(o);
    let mut o = base();
    o.skills.clear();
    variants.push(o);
    let mut seen = vec![h0];
    for v in &variants {
        let h = hash(v);
        assert!(!seen.contains(&h), "a change did not change the hash");
        seen.push(h);
    }
}

#[test]
fn key_order_and_absent_values_do_not_matter() {
    let a = json!({ "b": 1, "a": { "y": [1, null, 2], "x": null, "z": "s" } });
    let b = json!({ "a": { "z": "s", "y": [1, 2] }, "b": 1 });
    assert_eq!(hash_value(&a), hash_value(&b));
    assert_ne!(
        hash_value(&a),
        hash_value(&json!({ "b": 2, "a": { "z": "s", "y": [1, 2] } }))
    );
    // Array order does matter.
    assert_ne!(hash_value(&json!([1, 2])), hash_value(&json!([2, 1])));
    // Env insertion order cannot matter (a map), nor can ulimit order.
    let mut d1 = DockerSettings::default();
    d1.env.insert("B".to_owned(), "2".to_owned());
    d1.env.insert("A".to_owned(), "1".to_owned());
    let mut d2 = DockerSettings::default();
    d2.env.insert("A".to_owned(), "1".to_owned());
    d2.env.insert("B".to_owned(), "2".to_owned());
    let mut o1 = base();
    o1.docker = d1;
    let mut o2 = base();
    o2.docker = d2;
    assert_eq!(hash(&o1), hash(&o2));
}

#[test]
fn locale_order_not_byte_order() {
    let mut keys = vec!["b", "B", "a", "A", "_x", "1", "ab", "Aa"];
    keys.sort_by(|a, b| locale_compare(a, b));
    assert_eq!(keys, vec!["_x", "1", "a", "A", "Aa", "ab", "b", "B"]);
    // Byte order would put every uppercase key first.
    let doc = normalize(&json!({ "Zed": 1, "alpha": 2 }));
    let keys: Vec<&String> = doc.as_object().unwrap().keys().collect();
    assert_eq!(keys, vec!["alpha", "Zed"]);
}
