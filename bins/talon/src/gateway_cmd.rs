//! The CLI as a gateway client: `talon gateway run|status|call`,
//! `talon approvals list|approve|deny`, and `--gateway URL` on `cron` and
//! `tasks`.

use std::fmt::Write as _;
use std::time::Duration;

use anyhow::{Context as _, Result, anyhow, bail};
use futures::{SinkExt as _, StreamExt as _};
use serde_json::{Map, Value, json};
use talon_gateway_protocol::{
    ApprovalsResolveParams, CronAddParams, CronJobRef, CronListParams, CronRunsParams, Method,
    NoParams, Request, ResponseFrame, TaskRef, TasksListParams, methods as m,
};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;

use crate::Status;
use crate::cli::{
    ApprovalsCommand, ContextArgs, CronCommand, GatewayCommand, GatewayTarget, TasksCommand,
    TokenCommand,
};

/// The gateway's URL: `--gateway` / `$TALON_GATEWAY_URL`, else where the
/// config the daemon reads (`--config`, `$TALON_CONFIG`, else `talon.json`
/// in the state directory) has it listen (`gateway.bind`, `gateway.port`;
/// 127.0.0.1:18789 without a config file). Never a guess: a config that
/// does not load is an error naming it.
pub(crate) fn gateway_url(target: &GatewayTarget) -> Result<String> {
    if let Some(raw) = target
        .gateway
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        return ws_url(raw);
    }
    let location = talon_config::resolve_config_path(target.config.as_deref());
    let loaded = location.load().map_err(|e| {
        anyhow!("cannot tell where the gateway listens: {e}; fix the config or pass --gateway URL")
    })?;
    Ok(loaded.config.gateway_config().client_url())
}

/// `ws://host:port/ws` from what the user typed.
pub(crate) fn ws_url(raw: &str) -> Result<String> {
    let raw = raw.trim();
    let (scheme, rest) = match raw.split_once("://") {
        Some(("ws" | "http", rest)) => ("ws", rest),
        Some(("wss" | "https", rest)) => ("wss", rest),
        Some((other, _)) => bail!(
            "--gateway `{raw}`: unsupported scheme `{other}` (use ws://, wss://, http:// or https://)"
        ),
        None => ("ws", raw),
    };
    let rest = rest.trim_end_matches('/');
    if rest.is_empty() {
        bail!("--gateway `{raw}`: no host");
    }
    let path = if rest.contains('/') { "" } else { "/ws" };
    Ok(format!("{scheme}://{rest}{path}"))
}

/// The token: --token / $TALON_GATEWAY_TOKEN, else the state dir's file.
fn token(target: &GatewayTarget) -> Result<String> {
    if let Some(t) = target
        .token
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty())
    {
        return Ok(t.to_owned());
    }
    let path = talon_config::state_dir().join("gateway.token");
    let text = std::fs::read_to_string(&path).with_context(|| {
        format!(
            "no token: pass --token or set TALON_GATEWAY_TOKEN, or run on the gateway's host (token file {} not readable)",
            path.display()
        )
    })?;
    Ok(text.trim().to_owned())
}

/// One JSON-RPC call over a fresh WebSocket connection. `Ok(Err(error))`
/// for an error answer.
pub(crate) fn call(
    target: &GatewayTarget,
    method: &str,
    params: Value,
    timeout: Duration,
) -> Result<std::result::Result<Value, Value>> {
    let url = gateway_url(target)?;
    let token = token(target)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    rt.block_on(async move {
        let mut req = url
            .as_str()
            .into_client_request()
            .with_context(|| format!("bad gateway URL {url}"))?;
        req.headers_mut().insert(
            "authorization",
            talon_gateway_protocol::authorization_header(&token)
                .parse()
                .map_err(|_| anyhow!("the token holds characters not allowed in a header"))?,
        );
        let (mut ws, _) = tokio::time::timeout(
            Duration::from_secs(10),
            tokio_tungstenite::connect_async(req),
        )
        .await
        .map_err(|_| anyhow!("cannot reach the gateway at {url}: timed out"))?
        .map_err(|e| anyhow!("cannot reach the gateway at {url}: {e}"))?;
        let frame = talon_gateway_protocol::frame::request(json!(1), method, params);
        ws.send(Message::Text(frame.to_string().into()))
            .await
            .map_err(|e| anyhow!("sending to the gateway: {e}"))?;
        let answer = tokio::time::timeout(timeout, async {
            while let Some(msg) = ws.next().await {
                let msg = msg.map_err(|e| anyhow!("reading from the gateway: {e}"))?;
                if let Message::Text(t) = msg {
                    let v: Value = serde_json::from_str(t.as_str())
                        .map_err(|e| anyhow!("the gateway sent invalid JSON: {e}"))?;
                    if v.get("id") == Some(&json!(1)) {
                        return Ok(v);
                    }
                }
            }
            Err(anyhow!(
                "the gateway closed the connection before answering"
            ))
        })
        .await
        .map_err(|_| anyhow!("no answer from the gateway within {} s", timeout.as_secs()))??;
        let _ = ws.close(None).await;
        let frame: ResponseFrame = serde_json::from_value(answer)
            .map_err(|e| anyhow!("the gateway sent a frame that is not a response: {e}"))?;
        Ok(frame.into_result().map_err(|e| e.to_value()))
    })
}

/// One call of method `M` with its typed params; the answer is decoded as
/// `M`'s response type (an error answer is returned as its JSON).
pub(crate) fn call_method<M: Method>(
    target: &GatewayTarget,
    params: &M::Params,
    timeout: Duration,
) -> Result<std::result::Result<M::Response, Value>> {
    let params = serde_json::to_value(params)
        .with_context(|| format!("cannot encode the params of {}", M::NAME))?;
    match call(target, M::NAME, params, timeout)? {
        Ok(v) => Ok(Ok(serde_json::from_value(v).with_context(|| {
            format!(
                "the gateway's answer to {} does not match the protocol (is it another version?)",
                M::NAME
            )
        })?)),
        Err(e) => Ok(Err(e)),
    }
}

/// Print a typed result (JSON) or an error answer (JSON with `error`,
/// exit 1).
fn finish_typed<T: serde::Serialize>(
    answer: std::result::Result<T, Value>,
    out: &mut String,
) -> Result<Status> {
    finish(
        answer.map(|v| serde_json::to_value(v).unwrap_or(Value::Null)),
        out,
    )
}

fn print(v: &Value, out: &mut String) -> Result<()> {
    out.push_str(&serde_json::to_string_pretty(v)?);
    out.push('\n');
    Ok(())
}

/// Print a result (JSON) or an error answer (JSON with `error`, exit 1).
fn finish(answer: std::result::Result<Value, Value>, out: &mut String) -> Result<Status> {
    match answer {
        Ok(v) => {
            print(&v, out)?;
            Ok(Status::Ok)
        }
        Err(e) => {
            print(&json!({"error": e}), out)?;
            Ok(Status::No)
        }
    }
}

const TIMEOUT: Duration = Duration::from_secs(60);

/// The state lines of `talon gateway status`: the backend and, on a
/// shared database, the fleet's members and leases.
fn write_state(state: &talon_gateway_protocol::StateStatus, out: &mut String) -> Result<()> {
    match &state.target {
        None => writeln!(out, "  state: {}", state.backend)?,
        Some(target) => writeln!(
            out,
            "  state: {} {target} (this gateway is member {})",
            state.backend,
            state.member_id.as_deref().unwrap_or("?")
        )?,
    }
    if let Some(e) = &state.error {
        writeln!(out, "  fleet unreadable: {e}")?;
    }
    for m in &state.members {
        writeln!(
            out,
            "  member {} {} pid {} on {} ({}, v{})",
            m.id,
            m.host,
            m.pid,
            m.listen,
            if m.live { "live" } else { "silent" },
            m.version
        )?;
    }
    for l in &state.leases {
        writeln!(
            out,
            "  lease {} held by {} (token {})",
            l.name, l.holder, l.token
        )?;
    }
    Ok(())
}

pub(crate) fn run(ctx: &ContextArgs, cmd: &GatewayCommand, out: &mut String) -> Result<Status> {
    match cmd {
        // The global --state-dir reached this process as TALON_STATE_DIR,
        // which the daemon inherits.
        GatewayCommand::Run { bind } => run_daemon(ctx, bind.as_deref()),
        GatewayCommand::Token {
            command: TokenCommand::New { scope, id, json },
        } => new_token(scope, id.as_deref(), *json, out),
        GatewayCommand::Status { target, json } => {
            let target = &target.with_config(ctx);
            match call_method::<m::Health>(target, &NoParams, Duration::from_secs(10)) {
                Ok(Ok(h)) => {
                    if *json {
                        print(&serde_json::to_value(&h)?, out)?;
                    } else {
                        writeln!(
                            out,
                            "gateway {}: {} (generation {}, {} sessions, {} in flight, {} approvals pending, up {} ms)",
                            gateway_url(target)?,
                            h.status,
                            h.generation,
                            h.sessions,
                            h.in_flight,
                            h.approvals_pending,
                            h.uptime_ms
                        )?;
                        for p in &h.hook_problems {
                            writeln!(
                                out,
                                "  hook `{}` ({}) cannot run [{}] at {}: {}",
                                p.hook_id, p.event, p.code, p.key_path, p.message
                            )?;
                        }
                        if let Some(state) = &h.state {
                            write_state(state, out)?;
                        }
                    }
                    Ok(Status::Ok)
                }
                Ok(Err(e)) => finish(Err(e), out),
                Err(e) => {
                    if *json {
                        print(&json!({"ok": false, "error": format!("{e:#}")}), out)?;
                    } else {
                        writeln!(out, "gateway not reachable: {e:#}")?;
                    }
                    Ok(Status::No)
                }
            }
        }
        GatewayCommand::Call {
            method,
            params,
            timeout,
            target,
        } => {
            let target = &target.with_config(ctx);
            let params: Value =
                serde_json::from_str(params).context("--params is not valid JSON")?;
            if !params.is_object() && !params.is_array() {
                bail!("--params must be a JSON object, e.g. '{{\"sessionKey\": \"main\"}}'");
            }
            // Checked against the protocol first: an unknown method or bad
            // params gets the gateway's own error without a round trip.
            let request = match Request::parse(method, params) {
                Ok(r) => r,
                Err(e) => return finish(Err(e.to_value()), out),
            };
            let params = request.params_json().context("cannot encode the params")?;
            finish(
                call(
                    target,
                    request.method().as_str(),
                    params,
                    Duration::from_secs(*timeout),
                )?,
                out,
            )
        }
    }
}

fn run_daemon(ctx: &ContextArgs, bind: Option<&str>) -> Result<Status> {
    use talon_proc_tree::{ChildCommand, ChildEnv, ProcessGroup};
    let exe = std::env::current_exe().context("cannot find this program")?;
    let beside = exe.with_file_name("talon-gateway");
    let program = if beside.exists() {
        beside
    } else {
        std::path::PathBuf::from("talon-gateway")
    };
    // Talon's own daemon in place of this process: the same environment,
    // stdio and process group.
    let mut cmd = ChildCommand::new(&program, ChildEnv::InheritParent, ProcessGroup::Parent);
    cmd.stdin(std::process::Stdio::inherit());
    if let Some(c) = &ctx.config {
        cmd.arg("--config").arg(c);
    }
    if let Some(b) = bind {
        cmd.arg("--bind").arg(b);
    }
    let err = cmd.exec();
    bail!("{err}; build it with `cargo build -p talon-gateway`")
}

/// Approval JSON for a terminal: still JSON, with every character that
/// could move the cursor, send an escape sequence or reorder text written
/// as a `\uXXXX` escape (`talon_hooks::approval::display_json`).
fn print_visible(v: &Value, out: &mut String) -> Result<()> {
    out.push_str(&talon_hooks::approval::display_json(
        &serde_json::to_string_pretty(v)?,
    ));
    out.push('\n');
    Ok(())
}

/// One pending approval as text: the exec command and environment whole
/// and rendered visibly, then the request and its whole parameters.
fn write_approval(a: &Value, out: &mut String) -> Result<()> {
    use talon_hooks::approval::{display_command, display_text};
    let id = display_command(a["id"].as_str().unwrap_or("?"));
    let session = display_command(a["sessionKey"].as_str().unwrap_or("?"));
    // A gateway that sends `commandDisplay` rendered it with the same
    // function; an older one sends only `command`.
    let command = a["commandDisplay"]
        .as_str()
        .map(str::to_owned)
        .or_else(|| a["command"].as_str().map(display_command));
    if let Some(command) = command {
        writeln!(
            out,
            "{id}  {session}  exec command (exactly what runs, {} characters):\n    {command}",
            a["command"].as_str().map_or(0, |c| c.chars().count()),
        )?;
    }
    if let Some(env) = a["env"].as_object() {
        writeln!(out, "    environment the call sets (exactly what runs):")?;
        for (key, value) in env {
            writeln!(
                out,
                "      {}={}",
                display_command(key),
                display_command(value.as_str().unwrap_or("")),
            )?;
        }
    }
    writeln!(
        out,
        "{id}  {session}  {}  {}: {}\n    params: {}",
        display_command(a["toolName"].as_str().unwrap_or("?")),
        display_text(a["title"].as_str().unwrap_or("")),
        display_text(a["description"].as_str().unwrap_or("")),
        display_text(a["paramsPreview"].as_str().unwrap_or("")),
    )?;
    Ok(())
}

pub(crate) fn approvals(
    target: &GatewayTarget,
    cmd: &ApprovalsCommand,
    out: &mut String,
) -> Result<Status> {
    match cmd {
        ApprovalsCommand::List { json } => {
            let answer = call_method::<m::ApprovalsList>(target, &NoParams, TIMEOUT)?;
            let v = match answer {
                Ok(v) => v,
                Err(e) => return finish(Err(e), out),
            };
            if *json {
                print_visible(&json!(v.approvals), out)?;
            } else {
                if v.approvals.is_empty() {
                    writeln!(out, "no approvals pending")?;
                }
                for a in &v.approvals {
                    write_approval(a, out)?;
                }
            }
            Ok(Status::Ok)
        }
        ApprovalsCommand::Show { id, json } => {
            let answer = call_method::<m::ApprovalsList>(target, &NoParams, TIMEOUT)?;
            let v = match answer {
                Ok(v) => v,
                Err(e) => return finish(Err(e), out),
            };
            let Some(a) = v
                .approvals
                .iter()
                .find(|a| a["id"].as_str() == Some(id.as_str()))
            else {
                if *json {
                    print_visible(
                        &json!({"error": {"message": format!("no pending approval {id}")}}),
                        out,
                    )?;
                } else {
                    writeln!(
                        out,
                        "no pending approval {} (it was decided, timed out, or never existed; see `talon approvals list`)",
                        talon_hooks::approval::display_command(id)
                    )?;
                }
                return Ok(Status::No);
            };
            if *json {
                print_visible(a, out)?;
            } else {
                write_approval(a, out)?;
            }
            Ok(Status::Ok)
        }
        ApprovalsCommand::Approve { id, always, json } => {
            let decision = if *always {
                "allow-always"
            } else {
                "allow-once"
            };
            resolve(target, id, decision, *json, out)
        }
        ApprovalsCommand::Deny { id, json } => resolve(target, id, "deny", *json, out),
        ApprovalsCommand::Allowlist { command } => {
            crate::approvals_cmd::allowlist(command, &talon_config::state_dir(), out)
        }
    }
}

fn resolve(
    target: &GatewayTarget,
    id: &str,
    decision: &str,
    json: bool,
    out: &mut String,
) -> Result<Status> {
    let params = ApprovalsResolveParams {
        id: id.to_owned(),
        decision: decision.to_owned(),
        call_id: None,
        params_hash: None,
    };
    let v = match call_method::<m::ApprovalsResolve>(target, &params, TIMEOUT)? {
        Ok(v) => v,
        Err(e) => return finish(Err(e), out),
    };
    let applied = v.applied;
    if json {
        print(&serde_json::to_value(&v)?, out)?;
    } else if applied {
        writeln!(out, "{id}: {decision}")?;
    } else {
        writeln!(out, "{id}: not applied ({})", v.outcome)?;
    }
    Ok(if applied { Status::Ok } else { Status::No })
}

pub(crate) fn cron_remote(
    target: &GatewayTarget,
    cmd: &CronCommand,
    out: &mut String,
) -> Result<Status> {
    match cmd {
        CronCommand::Next { .. } => bail!("`cron next` is computed locally; drop --gateway"),
        CronCommand::List { all, .. } => {
            let params = CronListParams {
                include_disabled: Some(*all),
                agent_id: None,
            };
            finish_typed(call_method::<m::CronList>(target, &params, TIMEOUT)?, out)
        }
        CronCommand::Add {
            name,
            at,
            every,
            cron,
            tz,
            message,
            system_event,
            tools,
            disabled,
            keep_after_run,
            idempotent,
            ..
        } => {
            let schedule = match (at, every, cron) {
                (Some(at), _, _) => json!({"kind": "at", "at": at}),
                (_, Some(ms), _) => json!({"kind": "every", "everyMs": ms}),
                (_, _, Some(expr)) => json!({"kind": "cron", "expr": expr, "tz": tz}),
                _ => bail!("give one of --at, --every or --cron"),
            };
            let payload = match (message, system_event) {
                (Some(m), _) => json!({"kind": "agentTurn", "message": m}),
                (_, Some(t)) => json!({"kind": "systemEvent", "text": t}),
                _ => bail!("give --message (an agent turn) or --system-event TEXT"),
            };
            let mut job = Map::new();
            job.insert("name".into(), json!(name));
            job.insert("schedule".into(), schedule);
            job.insert("payload".into(), payload);
            job.insert("enabled".into(), json!(!disabled));
            if *keep_after_run {
                job.insert("deleteAfterRun".into(), json!(false));
            }
            if *idempotent {
                job["idempotent"] = json!(true);
            }
            if let Some(t) = tools {
                job.insert("toolsAllow".into(), json!(t));
            }
            let params = CronAddParams { job };
            finish_typed(call_method::<m::CronAdd>(target, &params, TIMEOUT)?, out)
        }
        CronCommand::Remove { id, .. } => {
            let params = CronJobRef { job_id: id.clone() };
            finish_typed(call_method::<m::CronRemove>(target, &params, TIMEOUT)?, out)
        }
        CronCommand::Runs { id, limit, .. } => {
            let params = CronRunsParams {
                job_id: id.clone(),
                limit: Some(u64::try_from(*limit).unwrap_or(u64::MAX)),
            };
            finish_typed(call_method::<m::CronRuns>(target, &params, TIMEOUT)?, out)
        }
    }
}

pub(crate) fn tasks_remote(
    target: &GatewayTarget,
    cmd: &TasksCommand,
    out: &mut String,
) -> Result<Status> {
    match cmd {
        TasksCommand::List {
            status,
            runtime,
            limit,
            ..
        } => {
            if runtime.is_some() {
                bail!("--runtime is not supported with --gateway (filter the JSON instead)");
            }
            let params = TasksListParams {
                status: status.clone(),
                owner_key: None,
                limit: Some(*limit),
            };
            finish_typed(call_method::<m::TasksList>(target, &params, TIMEOUT)?, out)
        }
        TasksCommand::Show { id, .. } => {
            let params = TaskRef {
                task_id: id.clone(),
                reason: None,
            };
            finish_typed(call_method::<m::TasksGet>(target, &params, TIMEOUT)?, out)
        }
        TasksCommand::Cancel { id, reason, .. } => {
            let params = TaskRef {
                task_id: id.clone(),
                reason: reason.clone(),
            };
            finish_typed(
                call_method::<m::TasksCancel>(target, &params, TIMEOUT)?,
                out,
            )
        }
    }
}

/// `talon gateway token new`: a fresh token, printed once, and its config
/// entry (`id`, `tokenSha256`, `scope`) — the config never needs the text.
fn new_token(scope: &str, id: Option<&str>, json: bool, out: &mut String) -> Result<Status> {
    use sha2::Digest as _;
    use std::io::Read as _;
    let scope = talon_config::GatewayTokenScope::parse(scope)
        .ok_or_else(|| anyhow!("--scope `{scope}`: use runner, owner, operator or read-only"))?;
    if let Some(id) = id
        && (!talon_config::is_valid_token_id(id)
            || id == talon_config::OPERATOR_TOKEN_ID
            || id == talon_config::STATE_TOKEN_ID)
    {
        bail!(
            "--id `{id}`: use 1–64 characters of A-Z a-z 0-9 . _ : @ - (not `operator` or `state-token`, which are reserved)"
        );
    }
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .context("cannot read /dev/urandom for a new token")?;
    let hex = |b: &[u8]| b.iter().map(|b| format!("{b:02x}")).collect::<String>();
    let token = hex(&bytes);
    let hash = sha2::Sha256::digest(token.as_bytes());
    let id = id.map_or_else(|| format!("token-{}", hex(&hash[..4])), str::to_owned);
    let entry = json!({"id": id, "tokenSha256": hex(&hash), "scope": scope.as_str()});
    if json {
        print(&json!({"token": token, "entry": entry}), out)?;
    } else {
        writeln!(
            out,
            "token (shown once; give it to the client, Talon keeps only its hash):\n  {token}\n\nadd to gateway.auth.tokens (a running gateway picks it up on reload):\n  {entry}"
        )?;
    }
    Ok(Status::Ok)
}

#[cfg(test)]
mod tests {
    use super::ws_url;

    #[test]
    fn gateway_urls() {
        assert_eq!(
            ws_url("127.0.0.1:5").unwrap_or_default(),
            "ws://127.0.0.1:5/ws"
        );
        assert_eq!(ws_url("http://h:1/").unwrap_or_default(), "ws://h:1/ws");
        assert_eq!(ws_url("wss://h:1/ws").unwrap_or_default(), "wss://h:1/ws");
        assert!(ws_url("ftp://h").is_err());
        assert!(ws_url("").is_err());
    }
}
