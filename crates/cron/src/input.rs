//! Building jobs from untrusted input (the model's `job` / `patch`
//! objects, the CLI), with errors that name the field, and the creator cap.

use serde_json::{Map, Value};
use talon_tool_policy::cap_cron_job_tools;

use crate::error::{CronError, Result};
use crate::job::{CronJob, Delivery, DeliveryMode, JobState, Payload, WakeMode};
use crate::schedule::Schedule;

const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;
/// Longest job name.
pub const MAX_NAME_CHARS: usize = 200;
/// Longest prompt / event text.
pub const MAX_TEXT_CHARS: usize = 20_000;

/// Who creates or changes a job.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Creator {
    /// The agent (the job's owner unless the spec names one).
    pub agent_id: String,
    /// The creating session.
    pub session_key: Option<String>,
    /// The creating run's effective tools: the cap. `None` means an
    /// operator (CLI, config) with no cap.
    pub tools: Option<Vec<String>>,
}

/// A new job as requested.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JobSpec {
    /// Name (required).
    pub name: String,
    /// Description.
    pub description: Option<String>,
    /// Schedule (required).
    pub schedule: Option<Schedule>,
    /// Payload (required).
    pub payload: Option<Payload>,
    /// Delivery; inferred from the creator's session key for agent turns.
    pub delivery: Option<Delivery>,
    /// Wake mode.
    pub wake_mode: Option<WakeMode>,
    /// Enabled (default true).
    pub enabled: Option<bool>,
    /// Delete after a good run (default: true for `at`, else false).
    pub delete_after_run: Option<bool>,
    /// Re-run a one-shot run interrupted by a crash (default false).
    pub idempotent: Option<bool>,
    /// Owner agent; the creator's when `None`.
    pub agent_id: Option<String>,
    /// Requested tool allowlist (capped by the creator's tools).
    pub tools_allow: Option<Vec<String>>,
}

/// A change to a job; `None` fields stay unchanged.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JobPatch {
    /// New name.
    pub name: Option<String>,
    /// New description.
    pub description: Option<String>,
    /// New schedule.
    pub schedule: Option<Schedule>,
    /// New payload.
    pub payload: Option<Payload>,
    /// New delivery.
    pub delivery: Option<Delivery>,
    /// New wake mode.
    pub wake_mode: Option<WakeMode>,
    /// Enable / disable.
    pub enabled: Option<bool>,
    /// New delete-after-run.
    pub delete_after_run: Option<bool>,
    /// New idempotent flag.
    pub idempotent: Option<bool>,
    /// New requested allowlist (capped again).
    pub tools_allow: Option<Vec<String>>,
}

fn get<'a>(obj: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    obj.get(key)
        .or_else(|| obj.get(&to_snake(key)))
        .filter(|v| !v.is_null())
}

fn to_snake(key: &str) -> String {
    let mut out = String::with_capacity(key.len() + 4);
    for c in key.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

fn path(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_owned()
    } else {
        format!("{prefix}.{key}")
    }
}

fn string(obj: &Map<String, Value>, key: &str, prefix: &str, max: usize) -> Result<Option<String>> {
    match get(obj, key) {
        None => Ok(None),
        Some(Value::String(s)) => {
            let t = s.trim();
            if t.is_empty() {
                return Ok(None);
            }
            if t.chars().count() > max {
                return Err(CronError::invalid(
                    path(prefix, key),
                    format!("is longer than {max} characters; shorten it"),
                ));
            }
            Ok(Some(t.to_owned()))
        }
        Some(other) => Err(CronError::invalid(
            path(prefix, key),
            format!("must be a string, got {}", json_type(other)),
        )),
    }
}

fn required_string(
    obj: &Map<String, Value>,
    key: &str,
    prefix: &str,
    max: usize,
) -> Result<String> {
    string(obj, key, prefix, max)?
        .ok_or_else(|| CronError::invalid(path(prefix, key), "is required (a non-empty string)"))
}

fn integer(obj: &Map<String, Value>, key: &str, prefix: &str) -> Result<Option<i64>> {
    let bad = |v: &Value| {
        CronError::invalid(
            path(prefix, key),
            format!("must be an integer number of milliseconds, got {v}"),
        )
    };
    match get(obj, key) {
        None => Ok(None),
        Some(v @ Value::Number(n)) => {
            let f = n.as_f64().ok_or_else(|| bad(v))?;
            if f.fract() != 0.0 || f.abs() > MAX_SAFE_INTEGER {
                return Err(bad(v));
            }
            #[allow(clippy::cast_possible_truncation)]
            Ok(Some(f as i64))
        }
        Some(v @ Value::String(s)) => {
            let t = s.trim();
            if t.is_empty() {
                return Ok(None);
            }
            t.parse::<i64>()
                .ok()
                .filter(|n| (*n as f64).abs() <= MAX_SAFE_INTEGER)
                .map(Some)
                .ok_or_else(|| bad(v))
        }
        Some(v) => Err(bad(v)),
    }
}

fn boolean(obj: &Map<String, Value>, key: &str, prefix: &str) -> Result<Option<bool>> {
    match get(obj, key) {
        None => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(other) => Err(CronError::invalid(
            path(prefix, key),
            format!("must be true or false, got {}", json_type(other)),
        )),
    }
}

fn string_list(obj: &Map<String, Value>, key: &str, prefix: &str) -> Result<Option<Vec<String>>> {
    match get(obj, key) {
        None => Ok(None),
        Some(Value::Array(items)) => {
            let mut out = Vec::new();
            for (i, item) in items.iter().enumerate() {
                match item {
                    Value::String(s) if !s.trim().is_empty() => out.push(s.trim().to_owned()),
                    Value::String(_) => {}
                    other => {
                        return Err(CronError::invalid(
                            format!("{}[{i}]", path(prefix, key)),
                            format!("must be a tool name string, got {}", json_type(other)),
                        ));
                    }
                }
            }
            Ok(Some(out))
        }
        Some(other) => Err(CronError::invalid(
            path(prefix, key),
            format!("must be an array of tool names, got {}", json_type(other)),
        )),
    }
}

fn object<'a>(
    obj: &'a Map<String, Value>,
    key: &str,
    prefix: &str,
) -> Result<Option<&'a Map<String, Value>>> {
    match get(obj, key) {
        None => Ok(None),
        Some(Value::Object(m)) => Ok(Some(m)),
        Some(other) => Err(CronError::invalid(
            path(prefix, key),
            format!("must be an object, got {}", json_type(other)),
        )),
    }
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Parse a schedule object (`{kind, at | everyMs, anchorMs | expr, tz, staggerMs}`).
pub fn parse_schedule(obj: &Map<String, Value>, prefix: &str) -> Result<Schedule> {
    let kind = required_string(obj, "kind", prefix, 16)?;
    match kind.as_str() {
        "at" => Ok(Schedule::At {
            at: match get(obj, "at") {
                Some(Value::Number(n)) => n.to_string(),
                _ => required_string(obj, "at", prefix, 64)?,
            },
        }),
        "every" => Ok(Schedule::Every {
            every_ms: integer(obj, "everyMs", prefix)?.ok_or_else(|| {
                CronError::invalid(
                    path(prefix, "everyMs"),
                    "is required for kind every (milliseconds, ≥ 1)",
                )
            })?,
            anchor_ms: integer(obj, "anchorMs", prefix)?,
        }),
        "cron" => Ok(Schedule::Cron {
            expr: required_string(obj, "expr", prefix, 200)?,
            tz: string(obj, "tz", prefix, 64)?,
            stagger_ms: integer(obj, "staggerMs", prefix)?,
        }),
        other => Err(CronError::invalid(
            path(prefix, "kind"),
            format!("`{other}` is not a schedule kind; use at, every or cron"),
        )),
    }
}

/// Parse a payload object; also returns `toolsAllow` if the payload has it.
pub fn parse_payload(
    obj: &Map<String, Value>,
    prefix: &str,
) -> Result<(Payload, Option<Vec<String>>)> {
    let kind = required_string(obj, "kind", prefix, 32)?;
    let tools = string_list(obj, "toolsAllow", prefix)?;
    let payload = match kind.as_str() {
        "systemEvent" => Payload::SystemEvent {
            text: required_string(obj, "text", prefix, MAX_TEXT_CHARS)?,
        },
        "agentTurn" => {
            let timeout_seconds = match get(obj, "timeoutSeconds") {
                None => None,
                Some(Value::Number(n)) => match n.as_f64() {
                    Some(f) if f.is_finite() && f >= 0.0 => Some(f),
                    _ => {
                        return Err(CronError::invalid(
                            path(prefix, "timeoutSeconds"),
                            "must be a non-negative number of seconds",
                        ));
                    }
                },
                Some(other) => {
                    return Err(CronError::invalid(
                        path(prefix, "timeoutSeconds"),
                        format!("must be a number of seconds, got {}", json_type(other)),
                    ));
                }
            };
            Payload::AgentTurn {
                message: required_string(obj, "message", prefix, MAX_TEXT_CHARS)?,
                model: string(obj, "model", prefix, 200)?,
                thinking: string(obj, "thinking", prefix, 32)?,
                timeout_seconds,
            }
        }
        other => Err(CronError::invalid(
            path(prefix, "kind"),
            format!("`{other}` is not a payload kind; use systemEvent or agentTurn"),
        ))?,
    };
    Ok((payload, tools))
}

/// Parse a delivery object.
pub fn parse_delivery(obj: &Map<String, Value>, prefix: &str) -> Result<Delivery> {
    let mode = match string(obj, "mode", prefix, 16)?.as_deref() {
        None | Some("none") => DeliveryMode::None,
        Some("announce") => DeliveryMode::Announce,
        Some("webhook") => DeliveryMode::Webhook,
        Some(other) => {
            return Err(CronError::invalid(
                path(prefix, "mode"),
                format!("`{other}` is not a delivery mode; use none, announce or webhook"),
            ));
        }
    };
    let d = Delivery {
        mode,
        channel: string(obj, "channel", prefix, 64)?,
        to: string(obj, "to", prefix, 2048)?,
        thread_id: string(obj, "threadId", prefix, 256)?,
        account_id: string(obj, "accountId", prefix, 256)?,
        best_effort: boolean(obj, "bestEffort", prefix)?.unwrap_or(false),
    };
    if d.mode == DeliveryMode::Webhook {
        let to = d.to.as_deref().unwrap_or("");
        if !(to.starts_with("https://") || to.starts_with("http://")) {
            return Err(CronError::invalid(
                path(prefix, "to"),
                "webhook delivery needs an http(s) URL in `to`",
            ));
        }
    }
    Ok(d)
}

fn parse_wake(obj: &Map<String, Value>, prefix: &str) -> Result<Option<WakeMode>> {
    match string(obj, "wakeMode", prefix, 32)?.as_deref() {
        None => Ok(None),
        Some("now") => Ok(Some(WakeMode::Now)),
        Some("next-heartbeat") => Ok(Some(WakeMode::NextHeartbeat)),
        Some(other) => Err(CronError::invalid(
            path(prefix, "wakeMode"),
            format!("`{other}` is not a wake mode; use now or next-heartbeat"),
        )),
    }
}

impl JobSpec {
    /// Parse the model's `job` object (errors name `<prefix>.<field>`).
    pub fn from_json(obj: &Map<String, Value>, prefix: &str) -> Result<Self> {
        let schedule = object(obj, "schedule", prefix)?.ok_or_else(|| {
            CronError::invalid(
                path(prefix, "schedule"),
                "is required: {kind: at|every|cron, …}",
            )
        })?;
        let payload = object(obj, "payload", prefix)?.ok_or_else(|| {
            CronError::invalid(
                path(prefix, "payload"),
                "is required: {kind: systemEvent|agentTurn, …}",
            )
        })?;
        let (payload, payload_tools) = parse_payload(payload, &path(prefix, "payload"))?;
        let tools_allow = match string_list(obj, "toolsAllow", prefix)? {
            Some(t) => Some(t),
            None => payload_tools,
        };
        Ok(JobSpec {
            name: required_string(obj, "name", prefix, MAX_NAME_CHARS)?,
            description: string(obj, "description", prefix, 2000)?,
            schedule: Some(parse_schedule(schedule, &path(prefix, "schedule"))?),
            payload: Some(payload),
            delivery: object(obj, "delivery", prefix)?
                .map(|d| parse_delivery(d, &path(prefix, "delivery")))
                .transpose()?,
            wake_mode: parse_wake(obj, prefix)?,
            enabled: boolean(obj, "enabled", prefix)?,
            delete_after_run: boolean(obj, "deleteAfterRun", prefix)?,
            idempotent: boolean(obj, "idempotent", prefix)?,
            agent_id: string(obj, "agentId", prefix, 128)?,
            tools_allow,
        })
    }
}

impl JobPatch {
    /// Parse the model's `patch` object.
    pub fn from_json(obj: &Map<String, Value>, prefix: &str) -> Result<Self> {
        let mut tools_allow = string_list(obj, "toolsAllow", prefix)?;
        let payload = match object(obj, "payload", prefix)? {
            Some(p) => {
                let (payload, t) = parse_payload(p, &path(prefix, "payload"))?;
                if tools_allow.is_none() {
                    tools_allow = t;
                }
                Some(payload)
            }
            None => None,
        };
        if obj.contains_key("agentId") || obj.contains_key("agent_id") {
            return Err(CronError::invalid(
                path(prefix, "agentId"),
                "a job's agent cannot be changed; remove the job and add a new one",
            ));
        }
        Ok(JobPatch {
            name: string(obj, "name", prefix, MAX_NAME_CHARS)?,
            description: string(obj, "description", prefix, 2000)?,
            schedule: object(obj, "schedule", prefix)?
                .map(|s| parse_schedule(s, &path(prefix, "schedule")))
                .transpose()?,
            payload,
            delivery: object(obj, "delivery", prefix)?
                .map(|d| parse_delivery(d, &path(prefix, "delivery")))
                .transpose()?,
            wake_mode: parse_wake(obj, prefix)?,
            enabled: boolean(obj, "enabled", prefix)?,
            delete_after_run: boolean(obj, "deleteAfterRun", prefix)?,
            idempotent: boolean(obj, "idempotent", prefix)?,
            tools_allow,
        })
    }
}

/// `agent:<id>:<channel>:<direct|dm|channel|group|thread>:<target>` →
/// announce on that channel to that target; anything else (`agent:main:main`)
/// → `None`.
pub fn infer_delivery_from_session_key(session_key: &str) -> Option<Delivery> {
    let parts: Vec<&str> = session_key.split(':').collect();
    if parts.len() < 5 || parts[0] != "agent" {
        return None;
    }
    let channel = parts[2];
    let kind = parts[3];
    if channel.is_empty() || !["direct", "dm", "channel", "group", "thread"].contains(&kind) {
        return None;
    }
    let to = parts[4..].join(":");
    if to.is_empty() {
        return None;
    }
    Some(Delivery {
        mode: DeliveryMode::Announce,
        channel: Some(channel.to_owned()),
        to: Some(to),
        ..Delivery::default()
    })
}

/// The tools a job gets, capped by `creator`: returns `(tools_allow,
/// is_default, dropped)`. No request or `*` → the creator's tools (default);
/// `[]` → none; else the creator's tools the request matches.
pub fn cap_tools(
    creator: Option<&[String]>,
    requested: Option<&[String]>,
) -> (Option<Vec<String>>, bool, Vec<String>) {
    let Some(creator) = creator else {
        return (
            requested.map(<[String]>::to_vec),
            requested.is_none(),
            Vec::new(),
        );
    };
    match requested {
        None => (Some(creator.to_vec()), true, Vec::new()),
        Some(r) if r.iter().any(|t| t.trim() == "*") => (Some(creator.to_vec()), true, Vec::new()),
        Some(r) => {
            let capped = cap_cron_job_tools(creator, Some(r));
            (Some(capped.tools), false, capped.dropped)
        }
    }
}

/// Build a new job from `spec`, validated at `now_ms` and capped by
/// `creator`. Returns the job and the requested tools the cap dropped.
pub fn build_job(
    id: String,
    spec: JobSpec,
    creator: &Creator,
    now_ms: i64,
) -> Result<(CronJob, Vec<String>)> {
    let schedule = spec
        .schedule
        .ok_or_else(|| CronError::invalid("job.schedule", "is required"))?;
    schedule.validate(now_ms, "job.schedule")?;
    let payload = spec
        .payload
        .ok_or_else(|| CronError::invalid("job.payload", "is required"))?;
    if spec.name.trim().is_empty() {
        return Err(CronError::invalid(
            "job.name",
            "is required (a non-empty string)",
        ));
    }
    let agent_id = spec
        .agent_id
        .unwrap_or_else(|| creator.agent_id.clone())
        .trim()
        .to_lowercase();
    if agent_id.is_empty() {
        return Err(CronError::invalid(
            "job.agentId",
            "is required (no creating agent known)",
        ));
    }
    let delivery = match (&spec.delivery, &payload) {
        (Some(d), _) => Some(d.clone()),
        (None, Payload::AgentTurn { .. }) => creator
            .session_key
            .as_deref()
            .and_then(infer_delivery_from_session_key),
        (None, Payload::SystemEvent { .. }) => None,
    };
    let (tools_allow, tools_allow_is_default, dropped) =
        cap_tools(creator.tools.as_deref(), spec.tools_allow.as_deref());
    let mut job = CronJob {
        delete_after_run: spec.delete_after_run.unwrap_or(schedule.is_one_shot()),
        idempotent: spec.idempotent.unwrap_or(false),
        id,
        agent_id,
        name: spec.name,
        description: spec.description,
        schedule,
        payload,
        delivery,
        wake_mode: spec.wake_mode.unwrap_or_default(),
        enabled: spec.enabled.unwrap_or(true),
        creator_session_key: creator.session_key.clone(),
        creator_tools: creator.tools.clone(),
        tools_allow,
        tools_allow_is_default,
        created_at_ms: now_ms,
        updated_at_ms: now_ms,
        state: JobState::default(),
    };
    // An `every` without anchor is anchored at creation, so restarts keep
    // the grid.
    if let Schedule::Every { anchor_ms, .. } = &mut job.schedule
        && anchor_ms.is_none()
    {
        *anchor_ms = Some(now_ms);
    }
    job.state.next_run_at_ms = if job.enabled {
        job.schedule.next_after(now_ms, &job.id)?
    } else {
        None
    };
    Ok((job, dropped))
}

/// Apply `patch` to `job` at `now_ms`, re-capping its tools by the job's
/// stored creator cap *and* the patching `creator` (never wider than
/// either). Returns the requested tools the cap dropped.
pub fn apply_patch(
    job: &mut CronJob,
    patch: JobPatch,
    creator: &Creator,
    now_ms: i64,
) -> Result<Vec<String>> {
    if let Some(s) = &patch.schedule {
        s.validate(now_ms, "patch.schedule")?;
    }
    if let Some(n) = patch.name {
        job.name = n;
    }
    if patch.description.is_some() {
        job.description = patch.description;
    }
    let schedule_changed = patch.schedule.is_some();
    if let Some(mut s) = patch.schedule {
        if let Schedule::Every { anchor_ms, .. } = &mut s
            && anchor_ms.is_none()
        {
            *anchor_ms = Some(now_ms);
        }
        job.schedule = s;
    }
    if let Some(p) = patch.payload {
        job.payload = p;
    }
    if patch.delivery.is_some() {
        job.delivery = patch.delivery;
    }
    if let Some(w) = patch.wake_mode {
        job.wake_mode = w;
    }
    if let Some(d) = patch.delete_after_run {
        job.delete_after_run = d;
    }
    if let Some(i) = patch.idempotent {
        job.idempotent = i;
    }
    // The cap: the narrower of the stored creator's tools and the patcher's.
    let cap: Option<Vec<String>> = match (&job.creator_tools, &creator.tools) {
        (Some(a), Some(b)) => Some(a.iter().filter(|t| b.contains(t)).cloned().collect()),
        (Some(a), None) => Some(a.clone()),
        (None, Some(b)) => Some(b.clone()),
        (None, None) => None,
    };
    let requested = match (&patch.tools_allow, job.tools_allow_is_default) {
        (Some(r), _) => Some(r.clone()),
        // A derived list is re-derived from the (possibly narrower) cap.
        (None, true) => None,
        (None, false) => job.tools_allow.clone(),
    };
    let (tools, is_default, dropped) = cap_tools(cap.as_deref(), requested.as_deref());
    job.tools_allow = tools;
    job.tools_allow_is_default = is_default;
    job.creator_tools = cap;
    let was_enabled = job.enabled;
    if let Some(e) = patch.enabled {
        job.enabled = e;
    }
    if job.enabled && (schedule_changed || !was_enabled || job.state.next_run_at_ms.is_none()) {
        job.state.next_run_at_ms = job.schedule.next_after(now_ms, &job.id)?;
        job.state.schedule_errors = 0;
        if !was_enabled {
            job.state.consecutive_errors = 0;
        }
    } else if !job.enabled {
        job.state.next_run_at_ms = None;
    }
    job.updated_at_ms = now_ms;
    Ok(dropped)
}
