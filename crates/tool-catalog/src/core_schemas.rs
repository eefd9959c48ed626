//! Parameter JSON Schemas of the core tools, with their labels and
//! model-facing descriptions.
//!
//! Every schema is a flat object schema: actions are a string `enum` plus
//! optional fields that the tool validates per action at run time. There is
//! no `anyOf`, `oneOf` or `allOf` anywhere, because several providers reject
//! unions in tool schemas; OpenClaw made the same choice and says so in its
//! sources ("Flattened schema: runtime validates per-action requirements").
//! `required` is always present, and may be empty (`session_status`,
//! `agents_list`, `get_goal`, ...).
//!
//! # Provenance
//!
//! The parameter names, types, enums and bounds follow OpenClaw's TypeBox
//! schemas as far as they could be found. The descriptions are written for
//! Talon and paraphrase OpenClaw's. The sources were:
//!
//! - **v7.2 tree** (`lihaoalbert/luckynemo`, a pristine v2026.7.2 import):
//!   `web_fetch`, `cron`, `gateway`, `computer`, `sessions`, `sessions_list`,
//!   `sessions_history`, `sessions_send`, `session_status`,
//!   `heartbeat_respond`, `image_generate`, `music_generate`, and `edit` (its
//!   `edits` array; the top-level `oldText`/`newText` are the legacy shape
//!   that OpenClaw folds into `edits`).
//! - **Later upstream trees** (`zhihh/openclaw` and other `openclaw/openclaw`
//!   snapshots): `exec`, `process`, `nodes`, `sessions_spawn`,
//!   `sessions_search`, `sessions_yield`, `subagents`, `agents_list`, `tts`,
//!   `video_generate`, `image`, `skill_workshop`, `message`, `browser`,
//!   `canvas`, `update_plan`, the goal tools, `spawn_task`/`dismiss_task` and
//!   `memory_search`/`memory_get`.
//! - **Talon's reference facts** (`openclaw-facts.md` and the brief): `read`,
//!   `write`, `apply_patch`, and the field lists of `exec` and `process`.
//!
//! # Decisions taken here
//!
//! - `exec` keeps the v7.2 field names: `timeout` in seconds (later trees
//!   renamed it `timeoutSeconds`) and `security` (later removed). `host`,
//!   `security` and `ask` are enums. The post-7.2 `title` field is left out.
//! - `edit` requires only `path`: a call carries either `edits` or the legacy
//!   `oldText`/`newText` pair.
//! - Post-7.2 additions were trimmed: `sessions_spawn` has no swarm or
//!   visible-session fields, `skill_workshop` has no collection or review
//!   actions, `video_generate` has no audio references, `browser` has no
//!   `atlas` action.
//! - `message`: OpenClaw builds this schema from the loaded channel plugins
//!   (about sixty actions and many per-channel fields). Talon lists the
//!   channel-neutral actions and fields. The poll-creation field names
//!   (`pollQuestion`, `pollOption`, `pollMulti`, `pollDurationHours`) are
//!   inferred, not sourced.
//! - `web_search`: OpenClaw lets the provider define this schema. The one here
//!   holds the shared filters that its common helpers read (`count` 1..=10,
//!   `country`, `language`, `freshness`, `date_after`, `date_before`).
//! - **Guessed** (no OpenClaw source found): `x_search` (modelled on xAI's
//!   X search options) and `code_execution` (a single `task`).
//! - Tools that call the gateway (`cron`, `gateway`, `nodes`, `computer`,
//!   `canvas`, `message`) expose OpenClaw's `gatewayUrl`, `gatewayToken` and
//!   `timeoutMs` call options.
//! - `additionalProperties` appears only where OpenClaw sets it. It is `false`
//!   on `edit` entries, `sessions`, `heartbeat_respond`, `spawn_task`,
//!   `dismiss_task`, `skill_workshop` and `update_plan` steps. It is `true` on
//!   the `cron` objects and on `browser` fill fields. `exec.env` maps to
//!   strings.
//! - Labels follow OpenClaw, except where OpenClaw reuses "Sessions" for
//!   several tools. Talon gives each tool its own label.

use serde_json::{Map, Value, json};

/// The JSON Schema of a core tool's parameters, or `None` for an id that is not a core tool.
pub(crate) fn core_tool_parameters(id: &str) -> Option<Value> {
    let schema = match id {
        "read" => read(),
        "write" => write(),
        "edit" => edit(),
        "apply_patch" => apply_patch(),
        "exec" => exec(),
        "process" => process(),
        "code_execution" => code_execution(),
        "web_search" => web_search(),
        "web_fetch" => web_fetch(),
        "x_search" => x_search(),
        "memory_search" => memory_search(),
        "memory_get" => memory_get(),
        "sessions" => sessions(),
        "sessions_list" => sessions_list(),
        "sessions_history" => sessions_history(),
        "sessions_search" => sessions_search(),
        "sessions_send" => sessions_send(),
        "sessions_spawn" => sessions_spawn(),
        "sessions_yield" => sessions_yield(),
        "subagents" => subagents(),
        "session_status" => session_status(),
        "spawn_task" => spawn_task(),
        "dismiss_task" => dismiss_task(),
        "browser" => browser(),
        "canvas" => canvas(),
        "message" => message(),
        "heartbeat_respond" => heartbeat_respond(),
        "cron" => cron(),
        "gateway" => gateway(),
        "nodes" => nodes(),
        "computer" => computer(),
        "agents_list" => object([], &[]),
        "get_goal" => object([], &[]),
        "create_goal" => create_goal(),
        "update_goal" => update_goal(),
        "update_plan" => update_plan(),
        "skill_workshop" => skill_workshop(),
        "image" => image(),
        "image_generate" => image_generate(),
        "music_generate" => music_generate(),
        "video_generate" => video_generate(),
        "tts" => tts(),
        _ => return None,
    };
    Some(schema)
}

/// One-line model-facing description of each core tool (what it does, when to use it), `None` for unknown ids.
pub(crate) fn core_tool_description(id: &str) -> Option<&'static str> {
    let description = match id {
        "read" => "Read a file's contents; use offset and limit to page through large files.",
        "write" => {
            "Create or overwrite a file with the given content, creating parent directories."
        }
        "edit" => {
            "Make exact text replacements in one file; each oldText must match once and not overlap."
        }
        "apply_patch" => {
            "Apply a multi-file patch written between *** Begin Patch and *** End Patch markers."
        }
        "exec" => {
            "Run a shell command; long runs move to the background and continue via the process tool."
        }
        "process" => {
            "Manage background exec sessions: list, poll, read logs, send input or keys, kill, clear."
        }
        "code_execution" => {
            "Run a computation in a remote sandboxed Python environment and return its result."
        }
        "web_search" => "Search the web and return titles, URLs and snippets for a query.",
        "web_fetch" => {
            "Fetch an HTTP(S) URL and return its readable content as markdown or plain text."
        }
        "x_search" => "Search posts on X (Twitter) and return a cited summary of what was found.",
        "memory_search" => {
            "Search the agent's memory files semantically; call before answering about past work."
        }
        "memory_get" => {
            "Read lines from a memory file by path, usually one found with memory_search."
        }
        "sessions" => {
            "Change session settings (label, pin, archive, model) or manage session groups."
        }
        "sessions_list" => {
            "List sessions visible to this agent, with optional filters and last messages."
        }
        "sessions_history" => "Read the message history of one visible session.",
        "sessions_search" => "Full-text search across the transcripts of visible sessions.",
        "sessions_send" => "Send a message to another session and optionally wait for its reply.",
        "sessions_spawn" => {
            "Start a sub-agent session on a self-contained task; its result is announced back."
        }
        "sessions_yield" => {
            "End this turn so that completion events from spawned children can resume it later."
        }
        "subagents" => "List or cancel background work started from this session tree.",
        "session_status" => {
            "Show the status of this or another session (model, usage, tasks) or set its model."
        }
        "spawn_task" => {
            "Suggest a valuable out-of-scope follow-up task to the operator; it does not start work."
        }
        "dismiss_task" => "Withdraw a pending spawn_task suggestion that is stale or superseded.",
        "browser" => {
            "Control a browser: open tabs, navigate, take snapshots or screenshots, and act on pages."
        }
        "canvas" => {
            "Control a node's canvas: present, hide, navigate, evaluate JavaScript, snapshot, A2UI."
        }
        "message" => {
            "Send, reply to, react to, edit or delete messages on the configured chat channels."
        }
        "heartbeat_respond" => {
            "Record the outcome of a heartbeat turn and whether the user should be notified."
        }
        "cron" => {
            "Manage scheduled jobs and reminders: status, list, get, add, update, remove, run, wake."
        }
        "gateway" => {
            "Read the gateway configuration or look up its schema; this tool never writes."
        }
        "nodes" => {
            "Work with paired nodes: status, pairing, notifications, camera, screen, location, invoke."
        }
        "computer" => {
            "Drive a paired desktop: take screenshots, then click, type, scroll and press keys."
        }
        "agents_list" => "List the agent ids that sessions_spawn may target, with their models.",
        "get_goal" => "Get this thread's current goal, including its status and token usage.",
        "create_goal" => {
            "Create a thread goal, only when the user or system explicitly asks for one."
        }
        "update_goal" => {
            "Mark the current goal complete once achieved, or blocked after a blocker keeps recurring."
        }
        "update_plan" => {
            "Replace the task plan shown to the user; at most one step is in_progress."
        }
        "skill_workshop" => {
            "Propose, review and apply reusable skills: create, patch, update, inspect, apply."
        }
        "image" => "Analyse one or more images with the configured vision model.",
        "image_generate" => {
            "Generate or edit images with the configured image generation provider."
        }
        "music_generate" => {
            "Generate music or songs with the configured music generation provider."
        }
        "video_generate" => {
            "Generate a video from a prompt and optional reference images or videos."
        }
        "tts" => "Convert text to speech audio, only when voice output is explicitly wanted.",
        _ => return None,
    };
    Some(description)
}

/// Human label, e.g. "Read", "Exec", "Web Fetch".
pub(crate) fn core_tool_label(id: &str) -> Option<&'static str> {
    let label = match id {
        "read" => "Read",
        "write" => "Write",
        "edit" => "Edit",
        "apply_patch" => "Apply Patch",
        "exec" => "Exec",
        "process" => "Process",
        "code_execution" => "Code Execution",
        "web_search" => "Web Search",
        "web_fetch" => "Web Fetch",
        "x_search" => "X Search",
        "memory_search" => "Memory Search",
        "memory_get" => "Memory Get",
        "sessions" => "Sessions",
        "sessions_list" => "Sessions List",
        "sessions_history" => "Session History",
        "sessions_search" => "Sessions Search",
        "sessions_send" => "Session Send",
        "sessions_spawn" => "Session Spawn",
        "sessions_yield" => "Yield",
        "subagents" => "Subagents",
        "session_status" => "Session Status",
        "spawn_task" => "Suggest Task",
        "dismiss_task" => "Dismiss Task",
        "browser" => "Browser",
        "canvas" => "Canvas",
        "message" => "Message",
        "heartbeat_respond" => "Heartbeat",
        "cron" => "Cron",
        "gateway" => "Gateway",
        "nodes" => "Nodes",
        "computer" => "Computer",
        "agents_list" => "Agents",
        "get_goal" => "Get Goal",
        "create_goal" => "Create Goal",
        "update_goal" => "Update Goal",
        "update_plan" => "Update Plan",
        "skill_workshop" => "Skill Workshop",
        "image" => "Image",
        "image_generate" => "Image Generation",
        "music_generate" => "Music Generation",
        "video_generate" => "Video Generation",
        "tts" => "TTS",
        _ => return None,
    };
    Some(label)
}

// ---------------------------------------------------------------------------
// Building blocks
// ---------------------------------------------------------------------------

/// An object schema whose `properties` are the union of `groups` (each a JSON
/// object of property schemas, later keys win) and whose `required` is
/// `required`.
///
/// Large schemas are written as several groups so that no single `json!`
/// invocation nears the macro recursion limit.
fn object<const N: usize>(groups: [Value; N], required: &[&str]) -> Value {
    let mut properties = Map::new();
    for group in groups {
        if let Value::Object(entries) = group {
            properties.extend(entries);
        }
    }
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
    })
}

/// `schema` with `additionalProperties` set to `allowed`.
fn additional(mut schema: Value, allowed: bool) -> Value {
    if let Value::Object(map) = &mut schema {
        map.insert("additionalProperties".to_owned(), Value::Bool(allowed));
    }
    schema
}

/// `schema` with its `description` set to `text`.
fn described(mut schema: Value, text: &str) -> Value {
    if let Value::Object(map) = &mut schema {
        map.insert("description".to_owned(), Value::String(text.to_owned()));
    }
    schema
}

/// The gateway call options that OpenClaw exposes on gateway-backed tools.
fn gateway_call_options() -> Value {
    json!({
        "gatewayUrl": {
            "type": "string",
            "description": "Gateway WebSocket URL; omit to use the configured gateway."
        },
        "gatewayToken": {
            "type": "string",
            "description": "Gateway auth token; omit to use the configured credentials."
        },
        "timeoutMs": {
            "type": "integer",
            "minimum": 1,
            "description": "Gateway call timeout in milliseconds."
        }
    })
}

// ---------------------------------------------------------------------------
// Files
// ---------------------------------------------------------------------------

fn read() -> Value {
    object(
        [json!({
            "path": {
                "type": "string",
                "description": "Path of the file to read, relative to the workspace or absolute."
            },
            "offset": {
                "type": "integer",
                "minimum": 1,
                "description": "Line number to start reading from (1-based)."
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "description": "Maximum number of lines to read."
            }
        })],
        &["path"],
    )
}

fn write() -> Value {
    object(
        [json!({
            "path": {
                "type": "string",
                "description": "Path of the file to write, relative to the workspace or absolute."
            },
            "content": {
                "type": "string",
                "description": "Complete new content of the file (with append: text added to its end)."
            },
            "append": {
                "type": "boolean",
                "description": "Add content to the end of the file (created when missing) instead of replacing it."
            }
        })],
        &["path", "content"],
    )
}

fn edit() -> Value {
    let replacement = additional(
        object(
            [json!({
                "oldText": {
                    "type": "string",
                    "description": "Exact original text; unique in the file and not overlapping other edits."
                },
                "newText": {
                    "type": "string",
                    "description": "Replacement text."
                }
            })],
            &["oldText", "newText"],
        ),
        false,
    );
    object(
        [json!({
            "path": {
                "type": "string",
                "description": "Path of the file to edit, relative to the workspace or absolute."
            },
            "edits": {
                "type": "array",
                "items": replacement,
                "description": "Replacements matched against the original file; merge nearby changes into one."
            },
            "oldText": {
                "type": "string",
                "description": "Single-replacement form: exact text to replace (prefer edits)."
            },
            "newText": {
                "type": "string",
                "description": "Single-replacement form: replacement for oldText."
            }
        })],
        &["path"],
    )
}

fn apply_patch() -> Value {
    object(
        [json!({
            "input": {
                "type": "string",
                "description": "Patch text between *** Begin Patch and *** End Patch, with Add/Update/Delete File sections."
            }
        })],
        &["input"],
    )
}

// ---------------------------------------------------------------------------
// Runtime
// ---------------------------------------------------------------------------

fn exec() -> Value {
    object(
        [json!({
            "command": {
                "type": "string",
                "description": "Shell command to run."
            },
            "workdir": {
                "type": "string",
                "description": "Working directory; omit for the default."
            },
            "env": {
                "type": "object",
                "additionalProperties": { "type": "string" },
                "description": "Environment overrides, used literally without expansion."
            },
            "yieldMs": {
                "type": "number",
                "description": "Milliseconds to wait before moving the command to the background (default 10000)."
            },
            "background": {
                "type": "boolean",
                "description": "Start in the background immediately and return a session id."
            },
            "timeout": {
                "type": "number",
                "description": "Kill the process after this many seconds."
            },
            "pty": {
                "type": "boolean",
                "description": "Run in a pseudo-terminal, for CLIs that need a TTY."
            },
            "elevated": {
                "type": "boolean",
                "description": "Run on the host with elevated permissions, if policy allows."
            },
            "host": {
                "type": "string",
                "enum": ["auto", "sandbox", "gateway", "node"],
                "description": "Where to run; omit or auto to use the configured host."
            },
            "security": {
                "type": "string",
                "enum": ["deny", "allowlist", "full"],
                "description": "Enforcement mode for gateway and node hosts."
            },
            "ask": {
                "type": "string",
                "enum": ["off", "on-miss", "always"],
                "description": "When to ask for approval on gateway and node hosts."
            },
            "node": {
                "type": "string",
                "description": "Node id or name when host is node."
            }
        })],
        &["command"],
    )
}

fn process() -> Value {
    object(
        [json!({
            "action": {
                "type": "string",
                "enum": [
                    "list", "poll", "log", "write", "send-keys",
                    "submit", "paste", "kill", "clear", "remove"
                ],
                "description": "Process action to perform."
            },
            "sessionId": {
                "type": "string",
                "description": "Background session id; required for every action except list."
            },
            "data": {
                "type": "string",
                "description": "Data to write to stdin (write)."
            },
            "keys": {
                "type": "array",
                "items": { "type": "string" },
                "description": "Key tokens to send, such as Enter or C-c (send-keys)."
            },
            "hex": {
                "type": "array",
                "items": { "type": "string" },
                "description": "Raw bytes to send, as hex strings (send-keys)."
            },
            "literal": {
                "type": "string",
                "description": "Literal string to send (send-keys)."
            },
            "text": {
                "type": "string",
                "description": "Text to paste (paste)."
            },
            "bracketed": {
                "type": "boolean",
                "description": "Wrap the paste in bracketed-paste mode (paste)."
            },
            "eof": {
                "type": "boolean",
                "description": "Close stdin after writing (write)."
            },
            "offset": {
                "type": "number",
                "description": "Log start offset (log)."
            },
            "limit": {
                "type": "number",
                "description": "Log length to return (log)."
            },
            "timeout": {
                "type": "number",
                "minimum": 0,
                "description": "Milliseconds to wait for new output before returning (poll); at most 30000."
            }
        })],
        &["action"],
    )
}

fn code_execution() -> Value {
    object(
        [json!({
            "task": {
                "type": "string",
                "description": "What to compute or analyse, including any data the code needs."
            }
        })],
        &["task"],
    )
}

// ---------------------------------------------------------------------------
// Web
// ---------------------------------------------------------------------------

fn web_search() -> Value {
    object(
        [json!({
            "query": {
                "type": "string",
                "description": "Search query."
            },
            "count": {
                "type": "integer",
                "minimum": 1,
                "maximum": 10,
                "description": "Number of results to return (default 5)."
            },
            "country": {
                "type": "string",
                "description": "Two-letter country code to bias results, where the provider supports it."
            },
            "language": {
                "type": "string",
                "description": "Language code for results, where the provider supports it."
            },
            "freshness": {
                "type": "string",
                "description": "Recency filter: day, week, month or year; not combined with date_after/date_before."
            },
            "date_after": {
                "type": "string",
                "description": "Only results published after this date (YYYY-MM-DD)."
            },
            "date_before": {
                "type": "string",
                "description": "Only results published before this date (YYYY-MM-DD)."
            }
        })],
        &["query"],
    )
}

fn web_fetch() -> Value {
    object(
        [json!({
            "url": {
                "type": "string",
                "description": "HTTP or HTTPS URL to fetch."
            },
            "extractMode": {
                "type": "string",
                "enum": ["markdown", "text"],
                "default": "markdown",
                "description": "Return the content as markdown or as plain text."
            },
            "maxChars": {
                "type": "integer",
                "minimum": 100,
                "description": "Maximum characters to return; longer content is truncated."
            }
        })],
        &["url"],
    )
}

fn x_search() -> Value {
    object(
        [json!({
            "query": {
                "type": "string",
                "description": "What to search for on X."
            },
            "allowed_x_handles": {
                "type": "array",
                "items": { "type": "string" },
                "maxItems": 10,
                "description": "Only search posts from these handles; not combined with excluded_x_handles."
            },
            "excluded_x_handles": {
                "type": "array",
                "items": { "type": "string" },
                "maxItems": 10,
                "description": "Leave out posts from these handles."
            },
            "from_date": {
                "type": "string",
                "description": "Earliest post date to include (YYYY-MM-DD)."
            },
            "to_date": {
                "type": "string",
                "description": "Latest post date to include (YYYY-MM-DD)."
            },
            "enable_image_understanding": {
                "type": "boolean",
                "description": "Let the search read images attached to posts."
            },
            "enable_video_understanding": {
                "type": "boolean",
                "description": "Let the search read videos attached to posts."
            }
        })],
        &["query"],
    )
}

// ---------------------------------------------------------------------------
// Memory
// ---------------------------------------------------------------------------

fn memory_search() -> Value {
    object(
        [json!({
            "query": {
                "type": "string",
                "description": "Natural-language search query."
            },
            "maxResults": {
                "type": "number",
                "description": "Maximum number of results to return."
            },
            "minScore": {
                "type": "number",
                "description": "Minimum relevance score a result must reach."
            }
        })],
        &["query"],
    )
}

fn memory_get() -> Value {
    object(
        [json!({
            "path": {
                "type": "string",
                "description": "Memory file path, as returned by memory_search."
            },
            "from": {
                "type": "number",
                "description": "First line to return (1-based)."
            },
            "lines": {
                "type": "number",
                "description": "Number of lines to return."
            }
        })],
        &["path"],
    )
}

// ---------------------------------------------------------------------------
// Sessions
// ---------------------------------------------------------------------------

fn sessions() -> Value {
    additional(
        object(
            [json!({
                "action": {
                    "type": "string",
                    "enum": ["patch", "group_list", "group_set", "group_rename", "group_delete"],
                    "description": "patch changes a session's settings; group_* manage session groups."
                },
                "sessionKey": {
                    "type": "string",
                    "description": "Session to patch; defaults to the current session."
                },
                "label": {
                    "type": "string",
                    "description": "New session label (patch)."
                },
                "pinned": {
                    "type": "boolean",
                    "description": "Pin or unpin the session (patch)."
                },
                "archived": {
                    "type": "boolean",
                    "description": "Archive or unarchive the session (patch)."
                },
                "model": {
                    "type": "string",
                    "description": "Model override for the session (patch)."
                },
                "thinkingLevel": {
                    "type": "string",
                    "description": "Thinking level override for the session (patch)."
                },
                "names": {
                    "type": "array",
                    "items": { "type": "string" },
                    "description": "Complete ordered list of group names (group_set)."
                },
                "name": {
                    "type": "string",
                    "description": "Group name (group_rename, group_delete)."
                },
                "to": {
                    "type": "string",
                    "description": "New group name (group_rename)."
                }
            })],
            &["action"],
        ),
        false,
    )
}

fn sessions_list() -> Value {
    object(
        [json!({
            "kinds": {
                "type": "array",
                "items": { "type": "string" },
                "description": "Session kinds to include: main, group, cron, hook, node, other."
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "description": "Maximum number of sessions to return."
            },
            "activeMinutes": {
                "type": "integer",
                "minimum": 1,
                "description": "Only sessions active within this many minutes."
            },
            "messageLimit": {
                "type": "integer",
                "minimum": 0,
                "description": "Recent messages to include per session (at most 20)."
            },
            "label": {
                "type": "string",
                "minLength": 1,
                "description": "Only sessions with this label."
            },
            "agentId": {
                "type": "string",
                "minLength": 1,
                "maxLength": 64,
                "description": "Only sessions of this agent."
            },
            "search": {
                "type": "string",
                "minLength": 1,
                "description": "Filter sessions by text in their key, label or title."
            },
            "archived": {
                "type": "boolean",
                "description": "List archived sessions instead of active ones."
            },
            "includeDerivedTitles": {
                "type": "boolean",
                "description": "Include titles derived from the transcripts."
            },
            "includeLastMessage": {
                "type": "boolean",
                "description": "Include a preview of each session's last message."
            }
        })],
        &[],
    )
}

fn sessions_history() -> Value {
    object(
        [json!({
            "sessionKey": {
                "type": "string",
                "description": "Session key or id to read."
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "description": "Maximum number of messages to return."
            },
            "offset": {
                "type": "integer",
                "minimum": 0,
                "description": "Number of newest messages to skip, for paging backwards."
            },
            "messageId": {
                "type": "string",
                "minLength": 1,
                "description": "Return the messages around this message id; not combined with offset."
            },
            "sessionId": {
                "type": "string",
                "minLength": 1,
                "description": "Transcript id that messageId belongs to; needs messageId."
            },
            "includeTools": {
                "type": "boolean",
                "description": "Include tool calls and tool results."
            }
        })],
        &["sessionKey"],
    )
}

fn sessions_search() -> Value {
    object(
        [json!({
            "query": {
                "type": "string",
                "maxLength": 4096,
                "description": "Full-text query."
            },
            "sessionKey": {
                "type": "string",
                "description": "Search only this session."
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": 25,
                "description": "Maximum number of hits to return (default 10)."
            }
        })],
        &["query"],
    )
}

fn sessions_send() -> Value {
    object(
        [json!({
            "sessionKey": {
                "type": "string",
                "description": "Target session key; alternatively give label or agentId."
            },
            "label": {
                "type": "string",
                "minLength": 1,
                "description": "Find the target session by its label."
            },
            "agentId": {
                "type": "string",
                "minLength": 1,
                "maxLength": 64,
                "description": "Agent whose session to target; alone, it means that agent's main session."
            },
            "message": {
                "type": "string",
                "description": "Message to deliver to the target session."
            },
            "timeoutSeconds": {
                "type": "integer",
                "minimum": 0,
                "description": "Seconds to wait for a reply (default 30); 0 sends without waiting."
            },
            "watch": {
                "type": "boolean",
                "description": "Keep watching the target session and report its later replies."
            }
        })],
        &["message"],
    )
}

fn sessions_spawn() -> Value {
    let attachment = object(
        [json!({
            "name": {
                "type": "string",
                "description": "File name of the attachment."
            },
            "content": {
                "type": "string",
                "description": "Attachment content."
            },
            "encoding": {
                "type": "string",
                "enum": ["utf8", "base64"],
                "description": "Encoding of content (default utf8)."
            },
            "mimeType": {
                "type": "string",
                "description": "MIME type of the attachment."
            }
        })],
        &["name", "content"],
    );
    object(
        [
            json!({
                "task": {
                    "type": "string",
                    "description": "Self-contained task for the child session."
                },
                "taskName": {
                    "type": "string",
                    "description": "Stable alias for later targeting: a lowercase letter, then lowercase letters, digits, _ or -."
                },
                "label": {
                    "type": "string",
                    "description": "Short title of the work, shown in UI lists."
                },
                "runtime": {
                    "type": "string",
                    "enum": ["subagent", "acp"],
                    "description": "Run as a native sub-agent or through an ACP backend."
                },
                "agentId": {
                    "type": "string",
                    "description": "Agent to run the task; see agents_list."
                },
                "model": {
                    "type": "string",
                    "description": "Model override for the child."
                },
                "thinking": {
                    "type": "string",
                    "description": "Thinking level override for the child."
                },
                "runTimeoutSeconds": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "Per-run timeout in seconds; 0 disables it."
                },
                "cwd": {
                    "type": "string",
                    "description": "Working directory of the child; defaults to the target agent's workspace."
                }
            }),
            json!({
                "thread": {
                    "type": "boolean",
                    "description": "Bind the child to a new chat thread where the channel supports it."
                },
                "mode": {
                    "type": "string",
                    "enum": ["run", "session"],
                    "description": "run is one-shot; session stays alive for follow-ups."
                },
                "cleanup": {
                    "type": "string",
                    "enum": ["delete", "keep"],
                    "description": "Delete or keep the child session after it finishes."
                },
                "sandbox": {
                    "type": "string",
                    "enum": ["inherit", "require"],
                    "description": "inherit the parent's sandbox policy, or require a sandboxed child."
                },
                "context": {
                    "type": "string",
                    "enum": ["isolated", "fork"],
                    "description": "Start the child with a fresh context or a fork of this conversation."
                },
                "lightContext": {
                    "type": "boolean",
                    "description": "Give the child a light bootstrap context (subagent only)."
                },
                "attachments": {
                    "type": "array",
                    "items": attachment,
                    "maxItems": 50,
                    "description": "Files to copy into the child's workspace."
                },
                "attachAs": {
                    "type": "object",
                    "properties": {
                        "mountPath": {
                            "type": "string",
                            "description": "Where in the child workspace to place the attachments."
                        }
                    },
                    "required": [],
                    "description": "Placement hint for the attachments."
                },
                "resumeSessionId": {
                    "type": "string",
                    "description": "ACP session id to resume (acp only)."
                },
                "streamTo": {
                    "type": "string",
                    "enum": ["parent"],
                    "description": "Stream the child's turn to this session (acp only)."
                }
            }),
        ],
        &["task"],
    )
}

fn sessions_yield() -> Value {
    object(
        [json!({
            "message": {
                "type": "string",
                "description": "Private note for the resumed turn; not shown to the user."
            },
            "acknowledgment": {
                "type": "string",
                "description": "Short waiting reply for the user when this turn would otherwise be silent."
            }
        })],
        &[],
    )
}

fn subagents() -> Value {
    object(
        [json!({
            "action": {
                "type": "string",
                "enum": ["list", "cancel"],
                "description": "list recent and active work (default), or cancel one task."
            },
            "recentMinutes": {
                "type": "integer",
                "minimum": 1,
                "description": "How far back list looks for finished work, in minutes."
            },
            "taskId": {
                "type": "string",
                "description": "Task to cancel (cancel)."
            }
        })],
        &[],
    )
}

fn session_status() -> Value {
    object(
        [json!({
            "sessionKey": {
                "type": "string",
                "description": "Session to report on; defaults to the current session."
            },
            "model": {
                "type": "string",
                "description": "Set the session's model override; default resets it."
            },
            "changesSince": {
                "type": "integer",
                "minimum": 0,
                "description": "Also list session state changes after this state version."
            }
        })],
        &[],
    )
}

fn spawn_task() -> Value {
    additional(
        object(
            [json!({
                "title": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 60,
                    "description": "Imperative task title, under 60 characters."
                },
                "prompt": {
                    "type": "string",
                    "minLength": 1,
                    "description": "Self-contained prompt for the task, with relevant file paths and context."
                },
                "tldr": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 1024,
                    "description": "One or two plain sentences on why the task is worth doing; no code."
                },
                "cwd": {
                    "type": "string",
                    "minLength": 1,
                    "description": "Absolute project directory; defaults to the current project."
                }
            })],
            &["title", "prompt", "tldr"],
        ),
        false,
    )
}

fn dismiss_task() -> Value {
    additional(
        object(
            [json!({
                "task_id": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 128,
                    "description": "Id returned by spawn_task."
                },
                "reason": {
                    "type": "string",
                    "maxLength": 1024,
                    "description": "Short reason the suggestion no longer applies."
                }
            })],
            &["task_id"],
        ),
        false,
    )
}

// ---------------------------------------------------------------------------
// UI
// ---------------------------------------------------------------------------

fn browser_act_request() -> Value {
    let fill_field = additional(object([], &[]), true);
    object(
        [
            json!({
                "kind": {
                    "type": "string",
                    "enum": [
                        "click", "type", "press", "hover", "drag", "select",
                        "fill", "resize", "wait", "evaluate", "close"
                    ],
                    "description": "Interaction to perform."
                },
                "targetId": {
                    "type": "string",
                    "description": "Tab to act in; defaults to the current tab."
                },
                "ref": {
                    "type": "string",
                    "description": "Element reference from the latest snapshot."
                },
                "doubleClick": {
                    "type": "boolean",
                    "description": "Double-click instead of a single click (click)."
                },
                "button": {
                    "type": "string",
                    "description": "Mouse button: left, right or middle (click)."
                },
                "modifiers": {
                    "type": "array",
                    "items": { "type": "string" },
                    "description": "Modifier keys held during the click (click)."
                },
                "text": {
                    "type": "string",
                    "description": "Text to type (type)."
                },
                "submit": {
                    "type": "boolean",
                    "description": "Press Enter after typing (type)."
                },
                "slowly": {
                    "type": "boolean",
                    "description": "Type one character at a time (type)."
                }
            }),
            json!({
                "key": {
                    "type": "string",
                    "description": "Key to press, such as Enter or ArrowDown (press)."
                },
                "startRef": {
                    "type": "string",
                    "description": "Element to drag from (drag)."
                },
                "endRef": {
                    "type": "string",
                    "description": "Element to drop on (drag)."
                },
                "values": {
                    "type": "array",
                    "items": { "type": "string" },
                    "description": "Option values to select (select)."
                },
                "fields": {
                    "type": "array",
                    "items": fill_field,
                    "description": "Form fields to fill, each with a ref and a value (fill)."
                },
                "width": {
                    "type": "number",
                    "description": "Viewport width in pixels (resize)."
                },
                "height": {
                    "type": "number",
                    "description": "Viewport height in pixels (resize)."
                },
                "timeMs": {
                    "type": "number",
                    "description": "Milliseconds to wait (wait)."
                },
                "textGone": {
                    "type": "string",
                    "description": "Wait until this text disappears (wait)."
                },
                "fn": {
                    "type": "string",
                    "description": "JavaScript function source to evaluate in the page (evaluate)."
                }
            }),
        ],
        &["kind"],
    )
}

fn browser() -> Value {
    let request = described(
        browser_act_request(),
        "The interaction to perform when action is act.",
    );
    object(
        [
            json!({
                "action": {
                    "type": "string",
                    "enum": [
                        "status", "start", "stop", "profiles", "tabs", "open", "focus",
                        "close", "snapshot", "screenshot", "navigate", "console", "pdf",
                        "upload", "dialog", "act"
                    ],
                    "description": "Browser action; act performs the interaction given in request."
                },
                "target": {
                    "type": "string",
                    "enum": ["sandbox", "host", "node"],
                    "description": "Which browser to control."
                },
                "node": {
                    "type": "string",
                    "description": "Node id or name when target is node."
                },
                "profile": {
                    "type": "string",
                    "description": "Browser profile to use."
                },
                "targetUrl": {
                    "type": "string",
                    "description": "URL to open or navigate to (open, navigate)."
                },
                "targetId": {
                    "type": "string",
                    "description": "Tab id to focus, close or inspect."
                },
                "limit": {
                    "type": "number",
                    "description": "Maximum entries to return (console, tabs)."
                },
                "maxChars": {
                    "type": "number",
                    "description": "Maximum characters of snapshot text."
                },
                "mode": {
                    "type": "string",
                    "enum": ["efficient"],
                    "description": "Snapshot preset that keeps the output compact."
                },
                "snapshotFormat": {
                    "type": "string",
                    "enum": ["aria", "ai"],
                    "description": "Snapshot format."
                },
                "refs": {
                    "type": "string",
                    "enum": ["role", "aria"],
                    "description": "How snapshot element references are built."
                }
            }),
            json!({
                "interactive": {
                    "type": "boolean",
                    "description": "Only include interactive elements in the snapshot."
                },
                "compact": {
                    "type": "boolean",
                    "description": "Drop structural noise from the snapshot."
                },
                "depth": {
                    "type": "number",
                    "description": "Maximum tree depth of the snapshot."
                },
                "selector": {
                    "type": "string",
                    "description": "CSS selector to scope the snapshot or screenshot."
                },
                "frame": {
                    "type": "string",
                    "description": "Frame to scope the snapshot to."
                },
                "labels": {
                    "type": "boolean",
                    "description": "Overlay element labels on the screenshot."
                },
                "fullPage": {
                    "type": "boolean",
                    "description": "Capture the whole page, not just the viewport (screenshot)."
                },
                "ref": {
                    "type": "string",
                    "description": "Element reference to screenshot."
                },
                "element": {
                    "type": "string",
                    "description": "Human description of the element, for logs and approvals."
                },
                "type": {
                    "type": "string",
                    "enum": ["png", "jpeg"],
                    "description": "Screenshot image type."
                },
                "level": {
                    "type": "string",
                    "description": "Minimum console level to return (console)."
                },
                "paths": {
                    "type": "array",
                    "items": { "type": "string" },
                    "description": "Files to upload (upload)."
                },
                "inputRef": {
                    "type": "string",
                    "description": "File input element that receives the upload (upload)."
                },
                "timeoutMs": {
                    "type": "number",
                    "description": "Timeout for the action in milliseconds."
                },
                "accept": {
                    "type": "boolean",
                    "description": "Accept or dismiss the pending dialog (dialog)."
                },
                "promptText": {
                    "type": "string",
                    "description": "Text to enter into a prompt dialog (dialog)."
                },
                "request": request
            }),
        ],
        &["action"],
    )
}

fn canvas() -> Value {
    object(
        [
            json!({
                "action": {
                    "type": "string",
                    "enum": [
                        "present", "hide", "navigate", "eval", "snapshot",
                        "a2ui_push", "a2ui_reset"
                    ],
                    "description": "Canvas action to perform."
                },
                "node": {
                    "type": "string",
                    "description": "Node whose canvas to control; defaults to the only canvas node."
                },
                "target": {
                    "type": "string",
                    "description": "URL or path to show when presenting (present)."
                },
                "x": {
                    "type": "number",
                    "description": "Window x position (present)."
                },
                "y": {
                    "type": "number",
                    "description": "Window y position (present)."
                },
                "width": {
                    "type": "number",
                    "description": "Window width (present)."
                },
                "height": {
                    "type": "number",
                    "description": "Window height (present)."
                },
                "url": {
                    "type": "string",
                    "description": "URL to navigate to (navigate)."
                },
                "javaScript": {
                    "type": "string",
                    "description": "JavaScript to evaluate in the canvas (eval)."
                },
                "outputFormat": {
                    "type": "string",
                    "enum": ["png", "jpg", "jpeg"],
                    "description": "Snapshot image format (snapshot)."
                },
                "maxWidth": {
                    "type": "number",
                    "description": "Maximum snapshot width in pixels (snapshot)."
                },
                "quality": {
                    "type": "number",
                    "description": "JPEG quality between 0 and 1 (snapshot)."
                },
                "delayMs": {
                    "type": "number",
                    "description": "Delay before taking the snapshot, in milliseconds (snapshot)."
                },
                "jsonl": {
                    "type": "string",
                    "description": "A2UI messages as JSON Lines (a2ui_push)."
                },
                "jsonlPath": {
                    "type": "string",
                    "description": "File holding the A2UI JSON Lines (a2ui_push)."
                }
            }),
            gateway_call_options(),
        ],
        &["action"],
    )
}

// ---------------------------------------------------------------------------
// Messaging
// ---------------------------------------------------------------------------

fn message() -> Value {
    object(
        [
            json!({
                "action": {
                    "type": "string",
                    "enum": [
                        "send", "broadcast", "reply", "sendAttachment", "poll", "poll-vote",
                        "react", "reactions", "read", "edit", "unsend", "delete",
                        "pin", "unpin", "list-pins", "search",
                        "thread-create", "thread-list", "thread-reply"
                    ],
                    "description": "Message action; channels support different subsets."
                },
                "channel": {
                    "type": "string",
                    "description": "Channel to use, such as telegram or slack; defaults to the current one."
                },
                "target": {
                    "type": "string",
                    "description": "Recipient or conversation id; defaults to the current conversation."
                },
                "targets": {
                    "type": "array",
                    "items": { "type": "string" },
                    "description": "Recipients for broadcast."
                },
                "accountId": {
                    "type": "string",
                    "description": "Channel account to send from."
                },
                "dryRun": {
                    "type": "boolean",
                    "description": "Validate and resolve the action without sending anything."
                },
                "message": {
                    "type": "string",
                    "description": "Text to send (send, reply, edit, thread-reply)."
                },
                "media": {
                    "type": "string",
                    "description": "Media file path or URL to attach."
                },
                "filename": {
                    "type": "string",
                    "description": "File name for the attachment."
                },
                "buffer": {
                    "type": "string",
                    "description": "Attachment content as base64 or a data URL."
                },
                "contentType": {
                    "type": "string",
                    "description": "MIME type of the attachment."
                },
                "caption": {
                    "type": "string",
                    "description": "Caption for the attachment."
                }
            }),
            json!({
                "replyTo": {
                    "type": "string",
                    "description": "Message id to reply to."
                },
                "threadId": {
                    "type": "string",
                    "description": "Thread or topic to post in."
                },
                "silent": {
                    "type": "boolean",
                    "description": "Send without a notification, where supported."
                },
                "messageId": {
                    "type": "string",
                    "description": "Message to read, react to, edit, delete, pin or unpin."
                },
                "emoji": {
                    "type": "string",
                    "description": "Reaction emoji (react)."
                },
                "remove": {
                    "type": "boolean",
                    "description": "Remove the reaction instead of adding it (react)."
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "Maximum number of results to return."
                },
                "before": {
                    "type": "string",
                    "description": "Only results before this message id or time."
                },
                "after": {
                    "type": "string",
                    "description": "Only results after this message id or time."
                },
                "query": {
                    "type": "string",
                    "description": "Search text (search)."
                },
                "pollQuestion": {
                    "type": "string",
                    "description": "Poll question (poll)."
                },
                "pollOption": {
                    "type": "array",
                    "items": { "type": "string" },
                    "description": "Poll answer options (poll)."
                },
                "pollMulti": {
                    "type": "boolean",
                    "description": "Allow several answers (poll)."
                },
                "pollDurationHours": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "How long the poll stays open, in hours (poll)."
                },
                "pollId": {
                    "type": "string",
                    "description": "Poll to vote in (poll-vote)."
                },
                "pollOptionIndex": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "1-based option number to vote for (poll-vote)."
                },
                "threadName": {
                    "type": "string",
                    "description": "Name of the new thread (thread-create)."
                }
            }),
            gateway_call_options(),
        ],
        &["action"],
    )
}

// ---------------------------------------------------------------------------
// Automation
// ---------------------------------------------------------------------------

fn heartbeat_respond() -> Value {
    additional(
        object(
            [json!({
                "outcome": {
                    "type": "string",
                    "enum": ["no_change", "progress", "done", "blocked", "needs_attention"],
                    "description": "What this heartbeat found."
                },
                "notify": {
                    "type": "boolean",
                    "description": "true sends notificationText to the user; false stays silent."
                },
                "summary": {
                    "type": "string",
                    "description": "Short internal summary of the heartbeat result."
                },
                "notificationText": {
                    "type": "string",
                    "description": "Concise message for the user; needed when notify is true."
                },
                "reason": {
                    "type": "string",
                    "description": "Why the user is or is not notified."
                },
                "priority": {
                    "type": "string",
                    "enum": ["low", "normal", "high"],
                    "description": "Notification priority."
                },
                "nextCheck": {
                    "type": "string",
                    "description": "When or what to check next."
                }
            })],
            &["outcome", "notify", "summary"],
        ),
        false,
    )
}

fn cron_schedule() -> Value {
    additional(
        object(
            [json!({
                "kind": {
                    "type": "string",
                    "enum": ["at", "every", "cron"],
                    "description": "One-shot time, fixed interval, or cron expression."
                },
                "at": {
                    "type": "string",
                    "description": "ISO-8601 time to run once (kind at)."
                },
                "everyMs": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "Interval in milliseconds (kind every)."
                },
                "anchorMs": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "Epoch milliseconds the interval is anchored to (kind every)."
                },
                "expr": {
                    "type": "string",
                    "description": "Cron expression in wall-clock time of tz, e.g. \"0 18 * * *\"; never convert to UTC."
                },
                "tz": {
                    "type": "string",
                    "description": "IANA time zone of expr; defaults to the gateway host's zone."
                },
                "staggerMs": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "Jitter window in milliseconds; 0 runs exactly on time (kind cron)."
                }
            })],
            &[],
        ),
        true,
    )
}

fn cron_payload() -> Value {
    additional(
        object(
            [json!({
                "kind": {
                    "type": "string",
                    "enum": ["systemEvent", "agentTurn"],
                    "description": "Inject a system event into a session, or run an agent turn."
                },
                "text": {
                    "type": "string",
                    "description": "System event text (systemEvent)."
                },
                "message": {
                    "type": "string",
                    "description": "Prompt for the agent turn (agentTurn)."
                },
                "model": {
                    "type": "string",
                    "description": "Model override for the agent turn."
                },
                "thinking": {
                    "type": "string",
                    "description": "Thinking level override for the agent turn."
                },
                "timeoutSeconds": {
                    "type": "number",
                    "minimum": 0,
                    "description": "Timeout of the agent turn in seconds."
                },
                "lightContext": {
                    "type": "boolean",
                    "description": "Run the agent turn with a light bootstrap context."
                },
                "fallbacks": {
                    "type": "array",
                    "items": { "type": "string" },
                    "description": "Fallback models for the agent turn."
                },
                "toolsAllow": {
                    "type": "array",
                    "items": { "type": "string" },
                    "description": "Tools the agent turn may use; capped by the creator's own tools."
                }
            })],
            &[],
        ),
        true,
    )
}

fn cron_delivery() -> Value {
    additional(
        object(
            [json!({
                "mode": {
                    "type": "string",
                    "enum": ["none", "announce", "webhook"],
                    "description": "How the run's result is delivered."
                },
                "channel": {
                    "type": "string",
                    "description": "Channel to announce on."
                },
                "to": {
                    "type": "string",
                    "description": "Announce target, or the webhook URL for webhook mode."
                },
                "threadId": {
                    "type": "string",
                    "description": "Thread or topic to announce in."
                },
                "accountId": {
                    "type": "string",
                    "description": "Channel account to announce from."
                },
                "bestEffort": {
                    "type": "boolean",
                    "description": "Do not fail the run when delivery fails."
                }
            })],
            &[],
        ),
        true,
    )
}

fn cron_failure_alert() -> Value {
    additional(
        object(
            [json!({
                "after": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "Consecutive failures before alerting."
                },
                "channel": {
                    "type": "string",
                    "description": "Channel to alert on."
                },
                "to": {
                    "type": "string",
                    "description": "Alert target."
                },
                "cooldownMs": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "Minimum milliseconds between alerts."
                },
                "includeSkipped": {
                    "type": "boolean",
                    "description": "Count skipped runs as failures."
                },
                "mode": {
                    "type": "string",
                    "enum": ["announce", "webhook"],
                    "description": "How the alert is delivered."
                },
                "accountId": {
                    "type": "string",
                    "description": "Channel account to alert from."
                }
            })],
            &[],
        ),
        true,
    )
}

/// Fields shared by a new cron job (`job`) and a change to one (`patch`).
fn cron_job_fields() -> Value {
    let schedule = described(cron_schedule(), "When the job runs.");
    let payload = described(cron_payload(), "What the job does when it runs.");
    let delivery = described(cron_delivery(), "Where the result of a run goes.");
    let failure_alert = described(
        cron_failure_alert(),
        "Alert after repeated failures; false disables alerts.",
    );
    json!({
        "name": {
            "type": "string",
            "description": "Job name."
        },
        "description": {
            "type": "string",
            "description": "What the job is for."
        },
        "schedule": schedule,
        "sessionTarget": {
            "type": "string",
            "description": "Session to run in: main, isolated, current, or session:<key>."
        },
        "wakeMode": {
            "type": "string",
            "enum": ["now", "next-heartbeat"],
            "description": "Wake the session now or at its next heartbeat."
        },
        "payload": payload,
        "delivery": delivery,
        "agentId": {
            "type": "string",
            "description": "Agent that owns the job."
        },
        "sessionKey": {
            "type": "string",
            "description": "Explicit session key for the job."
        },
        "enabled": {
            "type": "boolean",
            "description": "Whether the job is scheduled."
        },
        "deleteAfterRun": {
            "type": "boolean",
            "description": "Delete the job after its first successful run."
        },
        "idempotent": {
            "type": "boolean",
            "description": "Running the job twice is harmless. Only then is a one-shot run interrupted by a crash re-run automatically."
        },
        "failureAlert": failure_alert
    })
}

fn cron() -> Value {
    let fields = additional(object([cron_job_fields()], &[]), true);
    let job = described(fields.clone(), "The job to create (add).");
    let patch = described(
        fields,
        "Fields to change (update); omitted fields stay unchanged.",
    );
    additional(
        object(
            [
                json!({
                    "action": {
                        "type": "string",
                        "enum": [
                            "status", "list", "get", "add", "update",
                            "remove", "run", "runs", "wake"
                        ],
                        "description": "Cron action to perform."
                    },
                    "includeDisabled": {
                        "type": "boolean",
                        "description": "Also list disabled jobs (list)."
                    },
                    "job": job,
                    "jobId": {
                        "type": "string",
                        "description": "Job id (get, update, remove, run, runs)."
                    },
                    "id": {
                        "type": "string",
                        "description": "Alias of jobId."
                    },
                    "patch": patch,
                    "text": {
                        "type": "string",
                        "description": "System event text to inject (wake)."
                    },
                    "mode": {
                        "type": "string",
                        "enum": ["now", "next-heartbeat"],
                        "description": "When the woken session handles the event (wake)."
                    },
                    "runMode": {
                        "type": "string",
                        "enum": ["due", "force"],
                        "description": "due runs only if the job is due (default); force runs it now (run)."
                    },
                    "contextMessages": {
                        "type": "integer",
                        "minimum": 0,
                        "maximum": 10,
                        "description": "Recent messages to append to a reminder as context (add)."
                    },
                    "agentId": {
                        "type": "string",
                        "description": "Filter jobs by agent (list), or the agent to wake (wake)."
                    },
                    "sessionKey": {
                        "type": "string",
                        "description": "Session of the calling agent to wake instead of the current one (wake)."
                    }
                }),
                gateway_call_options(),
            ],
            &["action"],
        ),
        true,
    )
}

fn gateway() -> Value {
    object(
        [
            json!({
                "action": {
                    "type": "string",
                    "enum": ["config.get", "config.schema.lookup"],
                    "description": "Read the config, or look up the schema of one config path."
                },
                "path": {
                    "type": "string",
                    "description": "Dotted config path, e.g. agents.defaults; required for config.schema.lookup."
                }
            }),
            gateway_call_options(),
        ],
        &["action"],
    )
}

// ---------------------------------------------------------------------------
// Nodes
// ---------------------------------------------------------------------------

fn nodes() -> Value {
    object(
        [
            json!({
                "action": {
                    "type": "string",
                    "enum": [
                        "status", "describe", "pending", "approve", "reject", "notify",
                        "camera_snap", "camera_list", "camera_clip", "camera_ptz",
                        "photos_latest", "screen_record", "screen_snapshot", "location_get",
                        "notifications_list", "notifications_action", "device_status",
                        "device_info", "device_permissions", "device_health", "which", "invoke"
                    ],
                    "description": "Node action; status lists the paired nodes."
                },
                "node": {
                    "type": "string",
                    "description": "Node id, name or IP; required for node-targeted actions."
                },
                "requestId": {
                    "type": "string",
                    "description": "Pairing request id (approve, reject)."
                },
                "title": {
                    "type": "string",
                    "description": "Notification title (notify)."
                },
                "body": {
                    "type": "string",
                    "description": "Notification body (notify)."
                },
                "sound": {
                    "type": "string",
                    "description": "Notification sound (notify)."
                },
                "priority": {
                    "type": "string",
                    "enum": ["passive", "active", "timeSensitive"],
                    "description": "Notification interruption level (notify)."
                },
                "delivery": {
                    "type": "string",
                    "enum": ["system", "overlay", "auto"],
                    "description": "How the notification is shown (notify)."
                },
                "facing": {
                    "type": "string",
                    "enum": ["front", "back", "both"],
                    "description": "Camera to use; camera_clip takes front or back only."
                },
                "maxWidth": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "Maximum image width in pixels."
                },
                "quality": {
                    "type": "number",
                    "minimum": 0,
                    "maximum": 1,
                    "description": "Image quality between 0 and 1."
                },
                "delayMs": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "Delay before capturing, in milliseconds."
                }
            }),
            json!({
                "deviceId": {
                    "type": "string",
                    "description": "Camera id from camera_list; required for camera_ptz, never guessed."
                },
                "ptzOperation": {
                    "type": "string",
                    "enum": ["status", "set", "move", "home"],
                    "description": "camera_ptz operation; call status before controlling the camera."
                },
                "panDegrees": {
                    "type": "number",
                    "description": "Pan: absolute degrees for set, a delta for move (camera_ptz)."
                },
                "tiltDegrees": {
                    "type": "number",
                    "description": "Tilt: absolute degrees for set, a delta for move (camera_ptz)."
                },
                "zoomPercent": {
                    "type": "number",
                    "description": "Zoom: absolute percent for set, a delta for move (camera_ptz)."
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 20,
                    "description": "Maximum items to return (photos_latest, notifications_list)."
                },
                "duration": {
                    "type": "string",
                    "description": "Recording length such as 10s (camera_clip, screen_record)."
                },
                "durationMs": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 300000,
                    "description": "Recording length in milliseconds (camera_clip, screen_record)."
                },
                "includeAudio": {
                    "type": "boolean",
                    "description": "Record audio too (camera_clip, screen_record)."
                },
                "fps": {
                    "type": "number",
                    "exclusiveMinimum": 0,
                    "description": "Frames per second (screen_record)."
                },
                "screenIndex": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "Display to capture (screen_record, screen_snapshot)."
                },
                "outPath": {
                    "type": "string",
                    "description": "Where to save the recording (screen_record)."
                }
            }),
            json!({
                "maxAgeMs": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "Accept a cached location up to this old (location_get)."
                },
                "locationTimeoutMs": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "How long to wait for a location fix (location_get)."
                },
                "desiredAccuracy": {
                    "type": "string",
                    "enum": ["coarse", "balanced", "precise"],
                    "description": "Location accuracy (location_get)."
                },
                "notificationAction": {
                    "type": "string",
                    "enum": ["open", "dismiss", "reply"],
                    "description": "What to do with the notification (notifications_action)."
                },
                "notificationKey": {
                    "type": "string",
                    "description": "Notification key from notifications_list (notifications_action)."
                },
                "notificationReplyText": {
                    "type": "string",
                    "description": "Reply text (notifications_action reply)."
                },
                "bins": {
                    "type": "array",
                    "items": { "type": "string", "minLength": 1 },
                    "minItems": 1,
                    "maxItems": 64,
                    "description": "Executable names to resolve on the node (which)."
                },
                "invokeCommand": {
                    "type": "string",
                    "description": "Node command to invoke, such as system.run (invoke)."
                },
                "invokeParamsJson": {
                    "type": "string",
                    "description": "Command parameters as a JSON string (invoke)."
                },
                "invokeTimeoutMs": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "Command timeout in milliseconds (invoke)."
                }
            }),
            gateway_call_options(),
        ],
        &["action"],
    )
}

fn computer() -> Value {
    object(
        [
            json!({
                "action": {
                    "type": "string",
                    "enum": [
                        "screenshot", "left_click", "right_click", "middle_click",
                        "double_click", "triple_click", "mouse_move", "left_click_drag",
                        "left_mouse_down", "left_mouse_up", "scroll", "type", "key",
                        "hold_key", "wait"
                    ],
                    "description": "Computer action; take a screenshot before using coordinates."
                },
                "node": {
                    "type": "string",
                    "description": "Paired node id or name; omit when exactly one computer node is connected."
                },
                "coordinate": {
                    "type": "array",
                    "items": { "type": "integer", "minimum": 0 },
                    "minItems": 2,
                    "maxItems": 2,
                    "description": "[x, y] in pixels of the most recent screenshot."
                },
                "startCoordinate": {
                    "type": "array",
                    "items": { "type": "integer", "minimum": 0 },
                    "minItems": 2,
                    "maxItems": 2,
                    "description": "[x, y] where the drag starts (left_click_drag)."
                },
                "text": {
                    "type": "string",
                    "description": "Text to type, key combo such as cmd+shift+t, or modifiers held during a click."
                },
                "scrollDirection": {
                    "type": "string",
                    "enum": ["up", "down", "left", "right"],
                    "description": "Scroll direction (scroll)."
                },
                "scrollAmount": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 100,
                    "description": "Number of wheel ticks (scroll)."
                },
                "duration": {
                    "type": "number",
                    "minimum": 0,
                    "maximum": 100,
                    "description": "Seconds: up to 10 for hold_key, up to 100 for wait."
                },
                "screenIndex": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "Display to use."
                },
                "frameId": {
                    "type": "string",
                    "description": "Frame id of the screenshot the coordinates refer to."
                }
            }),
            gateway_call_options(),
        ],
        &["action"],
    )
}

// ---------------------------------------------------------------------------
// Agents
// ---------------------------------------------------------------------------

fn create_goal() -> Value {
    object(
        [json!({
            "objective": {
                "type": "string",
                "description": "Concrete, checkable objective to pursue."
            },
            "token_budget": {
                "type": "number",
                "description": "Optional positive token budget for the goal."
            }
        })],
        &["objective"],
    )
}

fn update_goal() -> Value {
    object(
        [json!({
            "status": {
                "type": "string",
                "enum": ["complete", "blocked"],
                "description": "complete when achieved; blocked only after the same blocker recurs for three goal turns."
            },
            "note": {
                "type": "string",
                "description": "Short status note."
            }
        })],
        &["status"],
    )
}

fn update_plan() -> Value {
    let step = additional(
        object(
            [json!({
                "step": {
                    "type": "string",
                    "description": "Short plan step."
                },
                "status": {
                    "type": "string",
                    "enum": ["pending", "in_progress", "completed"],
                    "description": "Status of the step."
                }
            })],
            &["step", "status"],
        ),
        false,
    );
    object(
        [json!({
            "explanation": {
                "type": "string",
                "description": "Optional short note on what changed in the plan."
            },
            "plan": {
                "type": "array",
                "items": step,
                "minItems": 1,
                "description": "Ordered plan steps; at most one step may be in_progress."
            }
        })],
        &["plan"],
    )
}

fn skill_workshop() -> Value {
    let support_file = additional(
        object(
            [json!({
                "path": {
                    "type": "string",
                    "description": "Relative path under assets/, examples/, references/, scripts/ or templates/."
                },
                "content": {
                    "type": "string",
                    "description": "Text content of the file."
                }
            })],
            &["path", "content"],
        ),
        false,
    );
    additional(
        object(
            [
                json!({
                    "action": {
                        "type": "string",
                        "enum": [
                            "create", "prepare_patch", "patch", "update", "read", "revise",
                            "list", "inspect", "evaluate", "apply", "reject", "quarantine"
                        ],
                        "description": "create/patch/update/revise draft proposals; list/inspect find them; apply/reject/quarantine decide."
                    },
                    "proposal_id": {
                        "type": "string",
                        "description": "Existing proposal id (inspect, revise, evaluate, apply, reject, quarantine)."
                    },
                    "artifact_path": {
                        "type": "string",
                        "description": "Proposal file to inspect; defaults to PROPOSAL.md (inspect)."
                    },
                    "name": {
                        "type": "string",
                        "description": "Skill or proposal name; required for create."
                    },
                    "query": {
                        "type": "string",
                        "description": "Filter text (list)."
                    },
                    "status": {
                        "type": "string",
                        "enum": ["pending", "applied", "rejected", "quarantined", "stale"],
                        "description": "Proposal status filter (list)."
                    },
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": 50,
                        "description": "Maximum proposals to return (list, default 20)."
                    },
                    "description": {
                        "type": "string",
                        "description": "Skill description, at most 160 bytes (create, update, revise)."
                    },
                    "skill_name": {
                        "type": "string",
                        "description": "Existing skill name or key (read, prepare_patch, patch, update)."
                    }
                }),
                json!({
                    "old_string": {
                        "type": "string",
                        "description": "Exact current skill text to replace; must match once (prepare_patch, patch)."
                    },
                    "new_string": {
                        "type": "string",
                        "description": "Replacement text (patch)."
                    },
                    "proposal_content": {
                        "type": "string",
                        "description": "Complete final skill body, not a plan or diff (create, update, revise)."
                    },
                    "support_files": {
                        "type": "array",
                        "items": support_file,
                        "description": "Support files stored with the proposal."
                    },
                    "goal": {
                        "type": "string",
                        "description": "Goal of the proposal or improvement."
                    },
                    "evidence": {
                        "type": "string",
                        "description": "Short evidence or notes behind the proposal."
                    },
                    "reason": {
                        "type": "string",
                        "description": "Reason for the decision (apply, reject, quarantine)."
                    },
                    "expected_revision_hash": {
                        "type": "string",
                        "description": "Fail unless the stored proposal still has this revision hash."
                    },
                    "correlation_id": {
                        "type": "string",
                        "maxLength": 256,
                        "description": "Correlation id carried into lifecycle events."
                    }
                }),
            ],
            &["action"],
        ),
        false,
    )
}

// ---------------------------------------------------------------------------
// Media
// ---------------------------------------------------------------------------

/// The `action` field shared by the media generation tools.
fn generate_action() -> Value {
    json!({
        "type": "string",
        "enum": ["generate", "status", "list"],
        "description": "generate (default), status of the active task, or list providers and models."
    })
}

fn image() -> Value {
    object(
        [json!({
            "prompt": {
                "type": "string",
                "description": "What to look for or describe (default: describe the image)."
            },
            "image": {
                "type": "string",
                "description": "Single image path or URL."
            },
            "images": {
                "type": "array",
                "items": { "type": "string" },
                "description": "Several image paths or URLs (up to maxImages, default 20)."
            },
            "model": {
                "type": "string",
                "description": "Vision model override, as provider/model."
            },
            "maxBytesMb": {
                "type": "number",
                "description": "Maximum size of each image in megabytes."
            },
            "maxImages": {
                "type": "number",
                "description": "Maximum number of images to analyse."
            }
        })],
        &[],
    )
}

fn image_generate() -> Value {
    object(
        [
            json!({
                "action": generate_action(),
                "prompt": {
                    "type": "string",
                    "description": "Image prompt."
                },
                "image": {
                    "type": "string",
                    "description": "Reference image path or URL to edit."
                },
                "images": {
                    "type": "array",
                    "items": { "type": "string" },
                    "maxItems": 14,
                    "description": "Reference images for editing or style."
                },
                "model": {
                    "type": "string",
                    "description": "Provider/model override, e.g. openai/gpt-image-2."
                },
                "filename": {
                    "type": "string",
                    "description": "Output file name hint."
                },
                "size": {
                    "type": "string",
                    "description": "Size hint such as 1024x1024 or 1536x1024."
                },
                "aspectRatio": {
                    "type": "string",
                    "description": "Aspect ratio such as 1:1, 3:2, 16:9 or 9:16."
                },
                "resolution": {
                    "type": "string",
                    "description": "Resolution: 1K, 2K or 4K."
                }
            }),
            json!({
                "quality": {
                    "type": "string",
                    "enum": ["low", "medium", "high", "auto"],
                    "description": "Rendering quality."
                },
                "outputFormat": {
                    "type": "string",
                    "enum": ["png", "jpeg", "webp"],
                    "description": "Output image format."
                },
                "background": {
                    "type": "string",
                    "enum": ["transparent", "opaque", "auto"],
                    "description": "Background; transparent needs png or webp output."
                },
                "openai": {
                    "type": "object",
                    "properties": {
                        "moderation": {
                            "type": "string",
                            "enum": ["low", "auto"],
                            "description": "OpenAI moderation level."
                        },
                        "outputCompression": {
                            "type": "integer",
                            "minimum": 0,
                            "maximum": 100,
                            "description": "OpenAI jpeg/webp compression, 0 to 100."
                        },
                        "user": {
                            "type": "string",
                            "description": "Stable end-user id for OpenAI."
                        }
                    },
                    "required": [],
                    "description": "OpenAI-specific options."
                },
                "count": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 4,
                    "description": "Number of images to generate."
                },
                "timeoutMs": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "Provider timeout in milliseconds."
                }
            }),
        ],
        &[],
    )
}

fn music_generate() -> Value {
    object(
        [json!({
            "action": generate_action(),
            "prompt": {
                "type": "string",
                "description": "Music prompt: style, genre, mood and purpose."
            },
            "lyrics": {
                "type": "string",
                "description": "Exact lyrics to sing, only when the user supplies or asks for them."
            },
            "instrumental": {
                "type": "boolean",
                "description": "Generate without vocals."
            },
            "image": {
                "type": "string",
                "description": "Reference image path or URL."
            },
            "images": {
                "type": "array",
                "items": { "type": "string" },
                "maxItems": 10,
                "description": "Reference images."
            },
            "model": {
                "type": "string",
                "description": "Provider/model override, e.g. google/lyria-3-pro-preview."
            },
            "durationSeconds": {
                "type": "integer",
                "minimum": 1,
                "description": "Target length in seconds; the provider may clamp it."
            },
            "format": {
                "type": "string",
                "enum": ["mp3", "wav"],
                "description": "Output audio format."
            },
            "filename": {
                "type": "string",
                "description": "Output file name hint."
            }
        })],
        &[],
    )
}

fn video_generate() -> Value {
    object(
        [
            json!({
                "action": generate_action(),
                "prompt": {
                    "type": "string",
                    "description": "Video prompt."
                },
                "image": {
                    "type": "string",
                    "description": "One reference image path or URL."
                },
                "images": {
                    "type": "array",
                    "items": { "type": "string" },
                    "maxItems": 9,
                    "description": "Reference images."
                },
                "imageRoles": {
                    "type": "array",
                    "items": { "type": "string" },
                    "description": "Role of each reference image by index: first_frame, last_frame or reference_image."
                },
                "video": {
                    "type": "string",
                    "description": "One reference video path or URL."
                },
                "videos": {
                    "type": "array",
                    "items": { "type": "string" },
                    "maxItems": 4,
                    "description": "Reference videos."
                },
                "model": {
                    "type": "string",
                    "description": "Provider/model override, e.g. qwen/wan2.6-t2v."
                },
                "filename": {
                    "type": "string",
                    "description": "Output file name hint."
                }
            }),
            json!({
                "size": {
                    "type": "string",
                    "description": "Size hint such as 1280x720 or 1920x1080."
                },
                "aspectRatio": {
                    "type": "string",
                    "description": "Aspect ratio such as 16:9, 9:16, 1:1 or adaptive."
                },
                "resolution": {
                    "type": "string",
                    "description": "Resolution such as 480P, 720P, 1080P or 4K."
                },
                "durationSeconds": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "Target length in seconds; may round to a supported duration."
                },
                "audio": {
                    "type": "boolean",
                    "description": "Generate an audio track."
                },
                "watermark": {
                    "type": "boolean",
                    "description": "Add the provider's watermark."
                },
                "providerOptions": {
                    "type": "object",
                    "additionalProperties": true,
                    "description": "Provider-specific options such as {\"seed\": 42}; see action list."
                },
                "timeoutMs": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "Provider timeout in milliseconds."
                }
            }),
        ],
        &[],
    )
}

fn tts() -> Value {
    object(
        [json!({
            "text": {
                "type": "string",
                "description": "Text to speak."
            },
            "channel": {
                "type": "string",
                "description": "Channel id, used as a hint for the audio format."
            },
            "timeoutMs": {
                "type": "integer",
                "minimum": 1,
                "description": "Provider timeout in milliseconds."
            }
        })],
        &["text"],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 42 core tool ids of the OpenClaw v2026.7.2 catalog, in catalog order.
    const CORE_IDS: [&str; 42] = [
        "read",
        "write",
        "edit",
        "apply_patch",
        "exec",
        "process",
        "code_execution",
        "web_search",
        "web_fetch",
        "x_search",
        "memory_search",
        "memory_get",
        "sessions",
        "sessions_list",
        "sessions_history",
        "sessions_search",
        "sessions_send",
        "sessions_spawn",
        "sessions_yield",
        "subagents",
        "session_status",
        "spawn_task",
        "dismiss_task",
        "browser",
        "canvas",
        "message",
        "heartbeat_respond",
        "cron",
        "gateway",
        "nodes",
        "computer",
        "agents_list",
        "get_goal",
        "create_goal",
        "update_goal",
        "update_plan",
        "skill_workshop",
        "image",
        "image_generate",
        "music_generate",
        "video_generate",
        "tts",
    ];

    fn schema(id: &str) -> Value {
        core_tool_parameters(id).unwrap_or_else(|| panic!("{id}: no schema"))
    }

    /// Checks one object schema: `type` is `object`, `properties` is an
    /// object, `required` lists only declared properties (each once), every
    /// property has a description, and nested objects obey the same rules.
    fn check_object(path: &str, schema: &Value) {
        assert_eq!(schema["type"], "object", "{path}: type must be object");
        let properties = schema["properties"]
            .as_object()
            .unwrap_or_else(|| panic!("{path}: properties must be an object"));
        let required = schema["required"]
            .as_array()
            .unwrap_or_else(|| panic!("{path}: required must be an array"));
        let mut seen = Vec::new();
        for name in required {
            let name = name
                .as_str()
                .unwrap_or_else(|| panic!("{path}: required entry not a string"));
            assert!(
                properties.contains_key(name),
                "{path}: required {name} is not a property"
            );
            assert!(
                !seen.contains(&name),
                "{path}: required {name} listed twice"
            );
            seen.push(name);
        }
        for (name, property) in properties {
            let where_ = format!("{path}.{name}");
            let description = property["description"].as_str().unwrap_or_default();
            assert!(
                !description.trim().is_empty(),
                "{where_}: missing description"
            );
            check_property(&where_, property);
        }
    }

    fn check_property(path: &str, property: &Value) {
        for keyword in ["anyOf", "oneOf", "allOf", "$ref"] {
            assert!(
                property.get(keyword).is_none(),
                "{path}: {keyword} is not allowed"
            );
        }
        let kind = property["type"]
            .as_str()
            .unwrap_or_else(|| panic!("{path}: type must be a single string"));
        assert!(
            ["string", "number", "integer", "boolean", "array", "object"].contains(&kind),
            "{path}: unexpected type {kind}"
        );
        if let Some(values) = property.get("enum") {
            let values = values
                .as_array()
                .unwrap_or_else(|| panic!("{path}: enum not an array"));
            assert_eq!(kind, "string", "{path}: enums are string enums");
            assert!(!values.is_empty(), "{path}: empty enum");
            for (i, value) in values.iter().enumerate() {
                assert!(
                    value.is_string(),
                    "{path}: enum value {value} is not a string"
                );
                assert!(
                    !values[..i].contains(value),
                    "{path}: enum value {value} repeated"
                );
            }
        }
        match kind {
            "array" => {
                let items = &property["items"];
                assert!(items.is_object(), "{path}: array without items");
                if items["type"] == "object" {
                    check_object(&format!("{path}[]"), items);
                } else {
                    let item_kind = items["type"].as_str().unwrap_or_default();
                    assert!(!item_kind.is_empty(), "{path}[]: items need a type");
                }
            }
            "object" if property.get("properties").is_some() => check_object(path, property),
            "object" => assert!(
                property.get("additionalProperties").is_some(),
                "{path}: a free-form object must say what its values are"
            ),
            _ => {}
        }
    }

    #[test]
    fn every_core_id_has_schema_description_and_label() {
        for id in CORE_IDS {
            check_object(id, &schema(id));
            let description = core_tool_description(id).unwrap_or_default();
            assert!(!description.is_empty(), "{id}: missing description");
            assert!(
                !description.contains('\n'),
                "{id}: description must be one line"
            );
            assert!(description.len() <= 120, "{id}: description too long");
            let label = core_tool_label(id).unwrap_or_default();
            assert!(!label.is_empty(), "{id}: missing label");
        }
    }

    #[test]
    fn unknown_ids_are_none() {
        for id in ["nope", "", "READ", "bash", "group:fs", "bundle-mcp"] {
            assert!(
                core_tool_parameters(id).is_none(),
                "{id}: unexpected schema"
            );
            assert!(
                core_tool_description(id).is_none(),
                "{id}: unexpected description"
            );
            assert!(core_tool_label(id).is_none(), "{id}: unexpected label");
        }
    }

    #[test]
    fn labels_are_distinct() {
        let mut labels: Vec<&str> = CORE_IDS
            .iter()
            .filter_map(|id| core_tool_label(id))
            .collect();
        labels.sort_unstable();
        let before = labels.len();
        labels.dedup();
        assert_eq!(labels.len(), before, "two tools share a label");
    }

    #[test]
    fn labels_follow_examples() {
        assert_eq!(core_tool_label("read"), Some("Read"));
        assert_eq!(core_tool_label("exec"), Some("Exec"));
        assert_eq!(core_tool_label("web_fetch"), Some("Web Fetch"));
    }

    fn enum_of(schema: &Value, field: &str) -> Vec<String> {
        schema["properties"][field]["enum"]
            .as_array()
            .unwrap_or_else(|| panic!("{field}: no enum"))
            .iter()
            .filter_map(|value| value.as_str().map(str::to_owned))
            .collect()
    }

    fn required_of(schema: &Value) -> Vec<&str> {
        schema["required"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect()
    }

    #[test]
    fn cron_actions_are_exactly_openclaws() {
        assert_eq!(
            enum_of(&schema("cron"), "action"),
            [
                "status", "list", "get", "add", "update", "remove", "run", "runs", "wake"
            ]
        );
    }

    #[test]
    fn subagents_and_gateway_actions() {
        assert_eq!(enum_of(&schema("subagents"), "action"), ["list", "cancel"]);
        assert_eq!(
            enum_of(&schema("gateway"), "action"),
            ["config.get", "config.schema.lookup"]
        );
    }

    #[test]
    fn web_fetch_matches_openclaw() {
        let web_fetch = schema("web_fetch");
        assert_eq!(enum_of(&web_fetch, "extractMode"), ["markdown", "text"]);
        assert_eq!(web_fetch["properties"]["maxChars"]["minimum"], 100);
        assert_eq!(required_of(&web_fetch), ["url"]);
    }

    #[test]
    fn file_tools_have_their_fields() {
        let read = schema("read");
        for field in ["path", "offset", "limit"] {
            assert!(read["properties"].get(field).is_some(), "read.{field}");
        }
        assert_eq!(required_of(&schema("write")), ["path", "content"]);
        let edit = schema("edit");
        for field in ["path", "oldText", "newText", "edits"] {
            assert!(edit["properties"].get(field).is_some(), "edit.{field}");
        }
        assert_eq!(required_of(&schema("apply_patch")), ["input"]);
    }

    #[test]
    fn exec_and_process_fields() {
        let exec = schema("exec");
        for field in [
            "command",
            "workdir",
            "env",
            "yieldMs",
            "background",
            "timeout",
            "pty",
            "elevated",
            "host",
            "security",
            "ask",
            "node",
        ] {
            assert!(exec["properties"].get(field).is_some(), "exec.{field}");
        }
        assert_eq!(
            exec["properties"]["env"]["additionalProperties"]["type"],
            "string"
        );
        assert_eq!(required_of(&exec), ["command"]);

        let process = schema("process");
        assert_eq!(
            enum_of(&process, "action"),
            [
                "list",
                "poll",
                "log",
                "write",
                "send-keys",
                "submit",
                "paste",
                "kill",
                "clear",
                "remove"
            ]
        );
        for field in ["sessionId", "data", "keys", "offset", "limit", "timeout"] {
            assert!(
                process["properties"].get(field).is_some(),
                "process.{field}"
            );
        }
    }

    #[test]
    fn parameterless_tools_have_empty_required() {
        for id in [
            "session_status",
            "agents_list",
            "get_goal",
            "sessions_list",
            "image",
        ] {
            assert_eq!(required_of(&schema(id)), Vec::<&str>::new(), "{id}");
        }
        assert_eq!(schema("agents_list")["properties"], json!({}));
    }

    #[test]
    fn schemas_are_fresh_values() {
        let mut first = schema("read");
        first["properties"] = json!({});
        assert_ne!(first, schema("read"));
    }
}
