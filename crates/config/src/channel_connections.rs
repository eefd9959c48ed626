//! `channels.webhook` and `channels.irc`: how Talon's own channels
//! connect (the `message` tool's channels, `talon-channels`).
//!
//! Only the connection settings are typed here. The policy keys OpenClaw
//! keeps in the same objects (`tools`, `toolsBySender`, `groups`, …) are
//! the channel-policy side of `channels.<provider>`: the loader leaves
//! them in `channels`, where they are enforced like any provider's
//! (`crate::channels`), so a restriction written there is never dropped.
//!
//! Every field is plain data; the checks that need the network or the
//! secrets file (the URL's destination, `${secret:NAME}`) happen where the
//! channel is built.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use talon_egress::SsrfAllowlistConfig;

/// The default timeout of one webhook POST, in milliseconds.
pub const DEFAULT_WEBHOOK_TIMEOUT_MS: u64 = 10_000;
/// The default largest message a webhook carries, in bytes of text.
pub const DEFAULT_WEBHOOK_MAX_MESSAGE_BYTES: usize = 64 * 1024;
/// The default IRC port (plain text).
pub const DEFAULT_IRC_PORT: u16 = 6667;
/// The default timeout of one IRC exchange (connect, register, send), in
/// milliseconds.
pub const DEFAULT_IRC_TIMEOUT_MS: u64 = 10_000;
/// The default largest message sent to IRC, in bytes of text (a longer
/// text is refused, never cut: one PRIVMSG line holds at most 512 bytes
/// with its prefix, so a message is sent as several lines).
pub const DEFAULT_IRC_MAX_MESSAGE_BYTES: usize = 4096;
/// How many received messages per target the IRC channel keeps for
/// `read`, by default.
pub const DEFAULT_IRC_HISTORY: usize = 200;

/// The channel ids this file types under `channels`.
pub const CONNECTION_CHANNELS: &[&str] = &["webhook", "irc"];

/// The keys of `channels.webhook` / `channels.irc` that are channel
/// *policy*, not connection settings: left in `channels` for the policy
/// side (today: dropped, or refused when they restrict).
const POLICY_KEYS: &[&str] = &[
    "tools",
    "toolsBySender",
    "groups",
    "accounts",
    "dmPolicy",
    "groupPolicy",
    "allowFrom",
    "groupAllowFrom",
];

/// The typed part of `channels`: Talon's own channels.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChannelConnections {
    /// `channels.webhook`: HTTP POST of each message as JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook: Option<WebhookChannelConfig>,
    /// `channels.irc`: one IRC connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub irc: Option<IrcChannelConfig>,
}

/// `channels.webhook`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WebhookChannelConfig {
    /// Off when `false` (the `message` tool then has no `webhook` channel).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Where each message is POSTed (`http` or `https`). It goes through
    /// the same SSRF guard as `web_fetch`: a private or loopback address
    /// needs `ssrfAllowlist`.
    pub url: String,
    /// The HMAC-SHA256 key of the `X-Talon-Signature` header; write
    /// `${secret:NAME}` to keep it in `<state dir>/secrets.json`. Without
    /// it the body is sent unsigned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
    /// How long one POST may take, in milliseconds (default 10000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// The largest message text, in bytes (default 65536); a longer one
    /// is refused with `message.too_large`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_message_bytes: Option<usize>,
    /// Exceptions to the SSRF rules for this URL (`hosts`, `cidrs`), as
    /// `tools.web.fetch.ssrfAllowlist`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssrf_allowlist: Option<SsrfAllowlistConfig>,
}

/// `channels.irc` (OpenClaw's IRC channel keys where they mean the same).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct IrcChannelConfig {
    /// Off when `false`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// The server's host name or address. The connection goes through the
    /// SSRF guard: a private or loopback server needs `ssrfAllowlist`.
    pub host: String,
    /// The port (default 6667).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// TLS. Not supported by this version: `true` refuses to build the
    /// channel (never a silent plain-text connection).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<bool>,
    /// The nick Talon uses.
    pub nick: String,
    /// The user name (default: the nick).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// The real name (default: the nick).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub realname: Option<String>,
    /// The server password (`PASS`); `${secret:NAME}` is looked up in the
    /// secrets file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password: Option<String>,
    /// Channels joined on connect (`#talon`); messages can be sent to
    /// these and to nicks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channels: Option<Vec<String>>,
    /// How long connecting, registering or one send may take, in
    /// milliseconds (default 10000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// The largest message text, in bytes (default 4096).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_message_bytes: Option<usize>,
    /// Received messages kept per target for `read` (default 200).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<usize>,
    /// Exceptions to the SSRF rules for the server (`hosts`, `cidrs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssrf_allowlist: Option<SsrfAllowlistConfig>,
}

/// Take the connection settings of `channels.webhook` / `channels.irc`
/// out of the root value (before the OpenClaw-key pass drops the rest of
/// `channels`), leaving their policy keys behind; an entry left empty is
/// removed, and so is `channels` when nothing else is in it. The loader
/// checks and types what was taken as [`ConnectionsRoot`].
pub(crate) fn split_connections(root: &mut Value) -> Option<Map<String, Value>> {
    let channels = root.get_mut("channels")?.as_object_mut()?;
    let mut taken = Map::new();
    for id in CONNECTION_CHANNELS {
        let Some(found) = channels.get_mut(*id) else {
            continue;
        };
        let Value::Object(entry) = found else {
            // Not an object: taken whole, so the schema check says so at
            // its key instead of the OpenClaw pass dropping it.
            if let Some(v) = channels.remove(*id) {
                taken.insert((*id).to_owned(), v);
            }
            continue;
        };
        let policy: Map<String, Value> = entry
            .iter()
            .filter(|(k, _)| POLICY_KEYS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let connection: Map<String, Value> = entry
            .iter()
            .filter(|(k, _)| !POLICY_KEYS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if policy.is_empty() {
            channels.remove(*id);
        } else {
            *entry = policy;
        }
        taken.insert((*id).to_owned(), Value::Object(connection));
    }
    if channels.is_empty()
        && let Some(root) = root.as_object_mut()
    {
        root.remove("channels");
    }
    (!taken.is_empty()).then_some(taken)
}

/// What the loader checks and types the connection settings as: a root
/// holding only `channels.webhook` / `channels.irc`, so errors carry their
/// full key paths.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ConnectionsRoot {
    /// The connection settings.
    pub(crate) channels: ChannelConnections,
}

/// The JSON Schema of [`ConnectionsRoot`], built once.
pub(crate) fn validation_schema() -> &'static Value {
    static SCHEMA: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    SCHEMA.get_or_init(|| schemars::schema_for!(ConnectionsRoot).to_value())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn connection_keys_are_taken_and_policy_keys_stay() {
        let mut root = json!({
            "channels": {
                "irc": { "host": "irc.example", "nick": "talon", "groups": { "#x": { "tools": { "deny": ["exec"] } } } },
                "webhook": { "url": "https://hooks.example/t" },
                "telegram": { "dmPolicy": "pairing" }
            }
        });
        let taken = split_connections(&mut root);
        assert_eq!(
            root,
            json!({ "channels": {
                "irc": { "groups": { "#x": { "tools": { "deny": ["exec"] } } } },
                "telegram": { "dmPolicy": "pairing" }
            }})
        );
        assert_eq!(
            Value::Object(taken.unwrap()),
            json!({
                "irc": { "host": "irc.example", "nick": "talon" },
                "webhook": { "url": "https://hooks.example/t" }
            })
        );
    }

    #[test]
    fn nothing_to_take_leaves_the_value_alone() {
        let mut root = json!({ "channels": { "telegram": {} } });
        assert_eq!(split_connections(&mut root), None);
        assert_eq!(root, json!({ "channels": { "telegram": {} } }));
        let mut root = json!({ "channels": { "webhook": { "url": "https://h/" } } });
        assert!(split_connections(&mut root).is_some());
        assert_eq!(root, json!({}));
    }

    #[test]
    fn connections_load_typed_and_policy_keys_are_enforced() {
        let loaded = crate::load_str(
            r##"{ channels: {
                webhook: { url: "https://hooks.example/t", secret: "${secret:HOOK}", timeoutMs: 500 },
                irc: { host: "irc.example", nick: "talon", channels: ["#ops"] },
                telegram: { dmPolicy: "pairing" },
            } }"##,
            "t.json",
        )
        .unwrap();
        let channels = loaded.config.channel_connections.unwrap();
        let webhook = channels.webhook.unwrap();
        assert_eq!(webhook.timeout_ms, Some(500));
        assert_eq!(webhook.secret.as_deref(), Some("${secret:HOOK}"));
        assert_eq!(
            channels.irc.unwrap().channels,
            Some(vec!["#ops".to_owned()])
        );
        // OpenClaw's other channel settings are dropped with a notice.
        assert!(
            loaded
                .notices
                .iter()
                .any(|n| n.key_path.starts_with("channels.telegram")),
            "{:?}",
            loaded.notices
        );

        // A typo in a connection setting is an error at its key.
        let err = crate::load_str(
            r#"{ channels: { webhook: { url: "https://h/", timeoutMS: 5 } } }"#,
            "t.json",
        )
        .unwrap_err();
        assert!(
            err.issues()
                .iter()
                .any(|i| i.key_path == "channels.webhook.timeoutMS"),
            "{err}"
        );
        // A connection entry of the wrong type is an error, not dropped.
        let err = crate::load_str(r#"{ channels: { webhook: true } }"#, "t.json").unwrap_err();
        assert!(
            err.issues()
                .iter()
                .any(|i| i.key_path == "channels.webhook"),
            "{err}"
        );
        // A tool policy under channels.irc is kept beside its connection
        // settings, for the policy side to enforce.
        let loaded = crate::load_str(
            r##"{ channels: { irc: { host: "h", nick: "n", groups: { "#x": { tools: { deny: ["exec"] } } } } } }"##,
            "t.json",
        )
        .unwrap();
        let policies = loaded.config.channels.unwrap();
        assert!(
            policies["irc"]
                .groups
                .as_ref()
                .is_some_and(|g| g.contains_key("#x")),
            "{policies:?}"
        );
        assert_eq!(
            loaded.config.channel_connections.unwrap().irc.unwrap().host,
            "h"
        );
    }
}
