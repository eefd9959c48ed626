//! The model-provider pre-filter: a tool whose name the provider's API
//! would reject is removed before it can fail the whole request.
//!
//! OpenClaw's `applyModelProviderToolPolicy` table is not part of the facts
//! Talon builds on; Talon's rule is the one every provider documents for
//! function names. OpenAI, Anthropic and xAI accept `[A-Za-z0-9_-]{1,64}`;
//! Gemini also accepts `.` and `:` but wants a letter or `_` first.
//! Unknown providers get no check.

/// A provider's name rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NameRule {
    Strict { provider: &'static str },
    Gemini,
}

pub(crate) fn provider_name_rule(provider: &str) -> Option<NameRule> {
    let p = provider.trim().to_lowercase();
    if p.contains("anthropic") {
        Some(NameRule::Strict {
            provider: "anthropic",
        })
    } else if p.contains("google") || p.contains("gemini") {
        Some(NameRule::Gemini)
    } else if p.contains("openai") {
        Some(NameRule::Strict { provider: "openai" })
    } else if p == "xai" || p == "x-ai" || p.contains("grok") {
        Some(NameRule::Strict { provider: "xai" })
    } else {
        None
    }
}

impl NameRule {
    /// `None` when accepted; otherwise why not.
    pub(crate) fn reject(self, name: &str) -> Option<String> {
        let len = name.chars().count();
        if len == 0 || len > 64 {
            return Some(format!(
                "name is {len} characters; providers accept 1 to 64"
            ));
        }
        match self {
            NameRule::Strict { provider } => name
                .chars()
                .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
                .map(|c| {
                    format!("{provider} rejects `{c}` in tool names (allowed: A-Z a-z 0-9 _ -)")
                }),
            NameRule::Gemini => {
                let first_ok = name
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
                if !first_ok {
                    return Some("gemini tool names must start with a letter or `_`".to_owned());
                }
                name.chars()
                    .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':')))
                    .map(|c| {
                        format!("gemini rejects `{c}` in tool names (allowed: A-Z a-z 0-9 _ - . :)")
                    })
            }
        }
    }
}
