//! OpenClaw's `channels` section: the tool policies Talon enforces, and
//! everything else.
//!
//! Talon runs no OpenClaw chat channel, but an imported file's channel
//! section is where per-group and per-sender tool restrictions live. The
//! loader keeps exactly the keys the policy pipeline enforces
//! (`talon_tool_policy::config::ChannelToolsConfig`):
//!
//! - `channels.<provider>.tools` / `toolsBySender`,
//! - `channels.<provider>.groups.<id>.tools` / `toolsBySender`,
//! - `channels.<provider>.accounts.<id>.groups.<id>.tools` / `toolsBySender`,
//!
//! drops every other key with a notice (bot tokens, `dmPolicy`,
//! `requireMention`, ...), and refuses a `tools` or `toolsBySender` with
//! content anywhere else (`direct.<id>.tools`, Discord's
//! `guilds.<id>.channels.<id>.tools`, ...) naming that key, because Talon
//! cannot tell which runs it would restrict; `acceptUnenforced` can drop
//! one knowingly.

use serde_json::Value;

use crate::findings::Findings;
use crate::spans::{Seg, SpanNode};

/// The keys of a provider, a group and an account Talon enforces.
pub(crate) const PROVIDER_KEPT: &[&str] = &["tools", "toolsBySender", "groups", "accounts"];
pub(crate) const GROUP_KEPT: &[&str] = &["tools", "toolsBySender"];
pub(crate) const ACCOUNT_KEPT: &[&str] = &["groups"];

/// `channels.*` entries that are not providers (OpenClaw's shared channel
/// defaults): dropped, with any tool policy in them refused.
const NOT_PROVIDERS: &[&str] = &["defaults"];

const DROPPED: &str = "OpenClaw channel settings not used by Talon (ignored)";
const REFUSED: &str = "OpenClaw channel tool policy at a key Talon does not enforce (Talon enforces `channels.<provider>.tools`/`toolsBySender`, `groups.<id>.tools`/`toolsBySender` and `accounts.<id>.groups.<id>.tools`/`toolsBySender`); refused rather than ignored, because ignoring it would widen access (move it to one of those keys, express it with `tools.deny`, or list this key in `acceptUnenforced` to drop it knowingly)";

/// Reduce `root.channels` to what Talon enforces, noting what is dropped
/// and refusing policies it cannot place.
pub(crate) fn strip(root: &mut Value, spans: &SpanNode, out: &mut Findings) {
    let Value::Object(map) = root else {
        return;
    };
    let Some(Value::Object(providers)) = map.get_mut("channels") else {
        return;
    };
    let span = spans.member("channels");
    let mut path = vec![Seg::Key("channels".to_owned())];
    let mut not_providers = Vec::new();
    for (provider, body) in providers.iter_mut() {
        path.push(Seg::Key(provider.clone()));
        let pspan = span.and_then(|s| s.member(provider));
        if NOT_PROVIDERS.contains(&provider.as_str()) || !body.is_object() {
            refuse_nested(body, pspan, &mut path, out);
            out.notice(&path, pos(pspan), DROPPED);
            not_providers.push(provider.clone());
        } else {
            keep_only(body, pspan, &mut path, PROVIDER_KEPT, out);
            each_object(body, pspan, &mut path, "groups", out, |g, s, p, out| {
                keep_only(g, s, p, GROUP_KEPT, out);
            });
            each_object(body, pspan, &mut path, "accounts", out, |a, s, p, out| {
                keep_only(a, s, p, ACCOUNT_KEPT, out);
                each_object(a, s, p, "groups", out, |g, s, p, out| {
                    keep_only(g, s, p, GROUP_KEPT, out);
                });
            });
        }
        path.pop();
    }
    for key in not_providers {
        providers.remove(&key);
    }
}

fn pos(span: Option<&SpanNode>) -> crate::spans::Pos {
    span.map(SpanNode::key_or_value).unwrap_or_default()
}

/// Run `f` on every object member of `parent.key`.
fn each_object(
    parent: &mut Value,
    span: Option<&SpanNode>,
    path: &mut Vec<Seg>,
    key: &str,
    out: &mut Findings,
    f: impl Fn(&mut Value, Option<&SpanNode>, &mut Vec<Seg>, &mut Findings),
) {
    let Some(Value::Object(map)) = parent.get_mut(key) else {
        return;
    };
    let span = span.and_then(|s| s.member(key));
    path.push(Seg::Key(key.to_owned()));
    for (k, v) in map.iter_mut() {
        if v.is_object() {
            path.push(Seg::Key(k.clone()));
            f(v, span.and_then(|s| s.member(k)), path, out);
            path.pop();
        }
    }
    path.pop();
}

/// Drop every key of `value` not in `kept` (one notice naming them),
/// refusing the tool policies inside what is dropped.
fn keep_only(
    value: &mut Value,
    span: Option<&SpanNode>,
    path: &mut Vec<Seg>,
    kept: &[&str],
    out: &mut Findings,
) {
    let Value::Object(map) = value else {
        return;
    };
    let dropped: Vec<String> = map
        .keys()
        .filter(|k| !kept.contains(&k.as_str()))
        .cloned()
        .collect();
    if dropped.is_empty() {
        return;
    }
    for key in &dropped {
        if let Some(v) = map.remove(key) {
            path.push(Seg::Key(key.clone()));
            refuse_nested(&v, span.and_then(|s| s.member(key)), path, out);
            path.pop();
        }
    }
    let names: Vec<String> = dropped.iter().map(|k| format!("`{k}`")).collect();
    out.notice(path, pos(span), format!("{DROPPED}: {}", names.join(", ")));
}

/// Refuse every `tools` / `toolsBySender` with content at or below
/// `value` (which is being dropped), each at its own key.
fn refuse_nested(value: &Value, span: Option<&SpanNode>, path: &mut Vec<Seg>, out: &mut Findings) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                path.push(Seg::Key(k.clone()));
                let s = span.and_then(|s| s.member(k));
                if (k == "tools" || k == "toolsBySender") && has_content(v) {
                    out.refuse_unless_accepted(path, pos(s), REFUSED);
                } else {
                    refuse_nested(v, s, path, out);
                }
                path.pop();
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                path.push(Seg::Index(i));
                refuse_nested(v, span.and_then(|s| s.element(i)), path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

fn has_content(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Object(m) => !m.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Bool(_) | Value::Number(_) | Value::String(_) => true,
    }
}
