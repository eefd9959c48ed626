//! `--fix`: tighten file modes, never widen them.

use std::path::{Path, PathBuf};

use rustix::fs::{Mode, OFlags};
use serde::Serialize;

use crate::error::{AuditError, Result};
use crate::fs_perms::GATEWAY_TOKEN_FILE;

/// One mode change `--fix` made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FixChange {
    /// The file or directory.
    pub path: PathBuf,
    /// Its mode before (permission bits, e.g. `0o644`).
    pub from_mode: u32,
    /// Its mode now.
    pub to_mode: u32,
}

impl std::fmt::Display for FixChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: mode {:04o} -> {:04o}",
            self.path.display(),
            self.from_mode,
            self.to_mode
        )
    }
}

/// Tighten the config file to at most `0600`, the state directory to at
/// most `0700` and the gateway token file to at most `0600`: group and
/// other bits (and the file's owner execute bit) are cleared, nothing is
/// ever added, so a `0400` file stays `0400`. A path that does not exist
/// or is a symlink is left alone (a symlink is reported by the audit;
/// changing its target's mode would change a file the config does not
/// name). Returns what changed; a second run returns nothing.
pub fn fix_permissions(config_file: Option<&Path>, state_dir: &Path) -> Result<Vec<FixChange>> {
    let mut changes = Vec::new();
    if let Some(file) = config_file {
        changes.extend(tighten(file, 0o600)?);
    }
    changes.extend(tighten(state_dir, 0o700)?);
    changes.extend(tighten(&state_dir.join(GATEWAY_TOKEN_FILE), 0o600)?);
    Ok(changes)
}

/// Clear every mode bit outside `keep` on `path`, through a descriptor
/// opened without following a symlink (so the mode checked is the mode
/// changed).
fn tighten(path: &Path, keep: u32) -> Result<Option<FixChange>> {
    let err = |action: &'static str| {
        move |e: rustix::io::Errno| AuditError::Fix {
            action,
            path: path.to_path_buf(),
            source: e.into(),
        }
    };
    let fd = match rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        // Absent, or a symlink (`ELOOP` under `O_NOFOLLOW`): nothing to do.
        Err(rustix::io::Errno::NOENT | rustix::io::Errno::LOOP) => return Ok(None),
        Err(e) => return Err(err("open")(e)),
    };
    let stat = rustix::fs::fstat(&fd).map_err(err("stat"))?;
    let from_mode = stat.st_mode & 0o7777;
    let to_mode = from_mode & keep;
    if to_mode == from_mode {
        return Ok(None);
    }
    rustix::fs::fchmod(&fd, Mode::from_raw_mode(to_mode)).map_err(err("change the mode of"))?;
    Ok(Some(FixChange {
        path: path.to_path_buf(),
        from_mode,
        to_mode,
    }))
}

/// One plain-text secret `--fix` moved into the secrets file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SecretMove {
    /// The config key that held it (now `${secret:<secret>}`).
    pub key: String,
    /// The name in `<state dir>/secrets.json`.
    pub secret: String,
}

/// What [`fix_secrets`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SecretsFix {
    /// Secrets moved out of the config.
    pub moved: Vec<SecretMove>,
    /// Gateway token entries whose plain-text `token` was replaced by its
    /// `tokenSha256` (the key that held it).
    pub hashed: Vec<String>,
    /// Secrets left in place, each with why (never the value).
    pub left: Vec<String>,
}

impl SecretsFix {
    /// Whether the config file was rewritten.
    pub fn changed(&self) -> bool {
        !self.moved.is_empty() || !self.hashed.is_empty()
    }
}

/// Move each plain-text secret the audit reports in MCP servers' `env` and
/// `headers` (`talon.mcp.literal_secret`) and in `tools.exec.env.set`
/// (`talon.exec.env.literal_secret`) into `<state dir>/secrets.json`
/// (mode 0600) and write `${secret:NAME}` in its place, and replace each
/// plain-text `gateway.auth.tokens[].token` by its `tokenSha256` (the same
/// token keeps working and keeps its default id; a running gateway picks
/// the change up on reload). Only those literals of `config_file` are
/// edited (comments and layout stay). A value that cannot be located
/// exactly as read is left, with the reason; so is `gateway.auth.token`,
/// which has no hashed form. The secrets file is written before the
/// config, so the config never names a secret that is not there. A second
/// run finds no literal and changes nothing.
pub fn fix_secrets(
    config_file: &Path,
    config: &talon_config::TalonConfig,
    state_dir: &Path,
) -> Result<SecretsFix> {
    use talon_config::secrets::{SECRETS_FILE, SecretStore};

    let mut fix = SecretsFix::default();
    let io = |action: &'static str, path: &Path| {
        let path = path.to_path_buf();
        move |source: std::io::Error| AuditError::Fix {
            action,
            path,
            source,
        }
    };
    let mut text = std::fs::read_to_string(config_file).map_err(io("read", config_file))?;
    if let Some(auth) = config.gateway.as_ref().and_then(|g| g.auth.as_ref()) {
        if auth.token.as_deref().is_some_and(|t| !t.trim().is_empty()) {
            fix.left.push(
                "gateway.auth.token: not hashed (it has no hashed form); replace it with a gateway.auth.tokens entry from `talon gateway token new --scope operator`".to_owned(),
            );
        }
        for (i, entry) in auth.tokens.iter().enumerate() {
            if entry.token.trim().is_empty() {
                continue;
            }
            let key = format!("gateway.auth.tokens[{i}].token");
            let index = i.to_string();
            let path = ["gateway", "auth", "tokens", index.as_str(), "token"];
            let hash = talon_canonical_json::sha256_hex(entry.token.as_bytes());
            match talon_config::edit::replace_string_member(
                &text,
                &path,
                &entry.token,
                "tokenSha256",
                &hash,
            ) {
                Ok(new_text) => {
                    text = new_text;
                    fix.hashed.push(key);
                }
                Err(e) => fix.left.push(format!("{key}: {e}")),
            }
        }
    }
    let secrets_path = state_dir.join(SECRETS_FILE);
    let store = SecretStore::load(state_dir).map_err(|e| AuditError::Fix {
        action: "read",
        path: secrets_path.clone(),
        source: std::io::Error::other(e.to_string()),
    })?;
    let mut secrets: std::collections::BTreeMap<String, String> = store
        .names()
        .filter_map(|n| store.get(n).map(|v| (n.to_owned(), v.to_owned())))
        .collect();
    for (section, mcp) in crate::secrets::mcp_sections(config) {
        let section_path = key_path(&section);
        for (server, cfg) in &mcp.servers.0 {
            let values = cfg
                .env
                .iter()
                .map(|(k, v)| ("env", k, v))
                .chain(cfg.headers.iter().map(|(k, v)| ("headers", k, v)));
            for (list, k, v) in values {
                if !(crate::secrets::secret_name(k) && crate::secrets::literal_value(v)) {
                    continue;
                }
                let key = format!("{section}.servers.{server}.{list}.{k}");
                let name = secret_name_for(&secrets, server, k, v);
                let mut path: Vec<&str> = section_path.iter().map(String::as_str).collect();
                path.extend(["servers", server.as_str(), list, k.as_str()]);
                let reference = format!("${{secret:{name}}}");
                match talon_config::edit::replace_string_value(&text, &path, v, &reference) {
                    Ok(new_text) => {
                        text = new_text;
                        secrets.insert(name.clone(), v.clone());
                        fix.moved.push(SecretMove { key, secret: name });
                    }
                    Err(e) => fix.left.push(format!("{key}: {e}")),
                }
            }
        }
    }
    // `tools.exec.env.set` (global and each agent's): the same move, the
    // secret named after the layer (`exec_GH_TOKEN`, `exec-ops_GH_TOKEN`).
    for found in crate::exec_env::literal_set_secrets(config) {
        let crate::exec_env::LiteralSet {
            layer,
            owner,
            name,
            value,
        } = found;
        let key = format!("{layer}.set.{name}");
        let secret = secret_name_for(&secrets, &owner, &name, &value);
        let mut path = key_path(&layer);
        path.extend(["set".to_owned(), name.clone()]);
        let path: Vec<&str> = path.iter().map(String::as_str).collect();
        let reference = format!("${{secret:{secret}}}");
        match talon_config::edit::replace_string_value(&text, &path, &value, &reference) {
            Ok(new_text) => {
                text = new_text;
                secrets.insert(secret.clone(), value);
                fix.moved.push(SecretMove { key, secret });
            }
            Err(e) => fix.left.push(format!("{key}: {e}")),
        }
    }
    if !fix.changed() {
        return Ok(fix);
    }
    if !fix.moved.is_empty() {
        let json = serde_json::to_string_pretty(&secrets).map_err(|e| AuditError::Fix {
            action: "write",
            path: secrets_path.clone(),
            source: std::io::Error::other(e),
        })?;
        replace_file(&secrets_path, &json, 0o600)?;
    }
    let mode = std::fs::metadata(config_file)
        .map(|m| {
            use std::os::unix::fs::PermissionsExt;
            m.permissions().mode() & 0o600
        })
        .map_err(io("stat", config_file))?;
    replace_file(config_file, &text, mode)?;
    Ok(fix)
}

/// A free secret name for `server`'s `key` (`<server>_<key>`, sanitised),
/// or the name already holding this very value.
/// A config key (`agents.list[1].tools.exec.env`) as the path of members
/// and indexes the editor walks (`agents`, `list`, `1`, `tools`, …).
fn key_path(key: &str) -> Vec<String> {
    key.split('.')
        .flat_map(|part| match part.split_once('[') {
            Some((k, i)) => vec![k.to_owned(), i.trim_end_matches(']').to_owned()],
            None => vec![part.to_owned()],
        })
        .collect()
}

fn secret_name_for(
    secrets: &std::collections::BTreeMap<String, String>,
    server: &str,
    key: &str,
    value: &str,
) -> String {
    let base: String = format!("{server}_{key}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut name = base.clone();
    let mut n = 2;
    while let Some(existing) = secrets.get(&name) {
        if existing == value {
            break;
        }
        name = format!("{base}_{n}");
        n += 1;
    }
    name
}

/// Write `text` to a new file next to `path` with `mode`, then rename it
/// over `path` (a reader sees the old file or the new one).
fn replace_file(path: &Path, text: &str, mode: u32) -> Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let err = |action: &'static str| {
        move |source: std::io::Error| AuditError::Fix {
            action,
            path: path.to_path_buf(),
            source,
        }
    };
    let mut tmp_name = path.as_os_str().to_owned();
    tmp_name.push(".talon-fix.tmp");
    let tmp = PathBuf::from(tmp_name);
    let _ = std::fs::remove_file(&tmp);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(&tmp)
        .map_err(err("create"))?;
    f.write_all(text.as_bytes()).map_err(err("write"))?;
    f.sync_all().map_err(err("write"))?;
    std::fs::rename(&tmp, path).map_err(err("replace"))
}
