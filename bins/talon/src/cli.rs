//! Command-line shape.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Inspect Talon's tool policy, tool schemas and configuration.
#[derive(Debug, Parser)]
#[command(name = "talon", version, about)]
pub(crate) struct Cli {
    /// State directory (default: $TALON_STATE_DIR, else ~/.talon): the
    /// gateway token, the stores, and the config file `talon.json` unless
    /// --config or $TALON_CONFIG names another.
    #[arg(long, global = true, value_name = "DIR")]
    pub(crate) state_dir: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) ctx: ContextArgs,
    #[command(subcommand)]
    pub(crate) command: Command,
}

impl Cli {
    /// Whether the command was given `--json` (every subcommand spells it
    /// that way): its errors are then reported as JSON on stdout too.
    pub(crate) fn wants_json(&self) -> bool {
        std::env::args_os().any(|a| a == "--json")
    }
}

/// The run context every inspection command evaluates in.
#[derive(Debug, Args, Clone, Default)]
pub(crate) struct ContextArgs {
    /// Config file (default: $TALON_CONFIG, else talon.json in the state
    /// directory).
    #[arg(long, global = true, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// Agent id (default: the config's default agent).
    #[arg(long, global = true, value_name = "ID")]
    pub(crate) agent: Option<String>,
    /// Session key (default: the agent's main session).
    #[arg(long, global = true, value_name = "KEY")]
    pub(crate) session: Option<String>,
    /// Model provider, e.g. openai, anthropic, google.
    #[arg(long, global = true, value_name = "P")]
    pub(crate) provider: Option<String>,
    /// Model id.
    #[arg(long, global = true, value_name = "M")]
    pub(crate) model: Option<String>,
    /// Sender id.
    #[arg(long, global = true, value_name = "ID")]
    pub(crate) sender: Option<String>,
    /// The sender is known not to be the owner (removes owner-only tools).
    #[arg(long, global = true)]
    pub(crate) non_owner: bool,
    /// Group chat / channel id.
    #[arg(long, global = true, value_name = "ID")]
    pub(crate) group: Option<String>,
    /// The message channel (e.g. telegram, node, voice): picks the
    /// `channels.<C>` policies.
    #[arg(long, global = true, value_name = "C")]
    pub(crate) channel: Option<String>,
    /// The channel account (bot) that received the message: picks
    /// `channels.<C>.accounts.<ID>.groups`.
    #[arg(long, global = true, value_name = "ID")]
    pub(crate) account: Option<String>,
    /// The sender's display name (matches `toolsBySender` `name:` keys).
    #[arg(long, global = true, value_name = "NAME")]
    pub(crate) sender_name: Option<String>,
    /// The sender's handle (matches `toolsBySender` `username:` keys).
    #[arg(long, global = true, value_name = "HANDLE")]
    pub(crate) sender_username: Option<String>,
    /// The sender's E.164 phone number (matches `toolsBySender` `e164:`
    /// keys).
    #[arg(long, global = true, value_name = "PHONE")]
    pub(crate) sender_e164: Option<String>,
    /// Evaluate as a sub-agent.
    #[arg(long, global = true)]
    pub(crate) subagent: bool,
    /// With --subagent: a leaf sub-agent (may not spawn further).
    #[arg(long, global = true, requires = "subagent")]
    pub(crate) leaf: bool,
    /// With --subagent: the parent's effective tools (comma-separated).
    #[arg(
        long,
        global = true,
        value_delimiter = ',',
        value_name = "a,b,...",
        requires = "subagent"
    )]
    pub(crate) parent_tools: Option<Vec<String>>,
    /// Force the run into its sandbox whatever the sandbox mode says (it
    /// can only add a sandbox; without it the configuration decides).
    #[arg(long, global = true)]
    pub(crate) sandboxed: bool,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// The tool catalog and schemas.
    #[command(subcommand)]
    Tools(ToolsCommand),
    /// Which tools a run gets, and why not the others.
    #[command(subcommand)]
    Policy(PolicyCommand),
    /// Validate the configuration or print its JSON Schema.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Skills: what a run would load, the prompt index, the security scan.
    #[command(subcommand)]
    Skills(SkillsCommand),
    /// Sandboxes: whether a session is sandboxed and why, whether the
    /// sandbox settings are safe, where a container path lands on the host.
    #[command(subcommand)]
    Sandbox(SandboxCommand),
    /// Cron: preview expressions; list, add, remove jobs and their runs in
    /// the local store (`<state dir>/talon.db`), or on a running gateway
    /// with --gateway.
    Cron(CronArgs),
    /// The detached-task ledger in the local store, or on a running
    /// gateway with --gateway.
    Tasks(TasksArgs),
    /// Sessions the gateway kept (`<state dir>/talon.db`): list them, show
    /// one, read its history (messages and tool calls).
    #[command(subcommand)]
    Sessions(SessionsCommand),
    /// Memory search: index the agent's MEMORY.md and memory/**/*.md,
    /// search them, show the index.
    #[command(subcommand)]
    Memory(MemoryCommand),
    /// The gateway daemon: run it, check it, call its API.
    #[command(subcommand)]
    Gateway(GatewayCommand),
    /// Approvals waiting on a running gateway: list, approve, deny.
    Approvals(ApprovalsArgs),
    /// MCP servers: the agent's materialised tools, one call through the
    /// gate.
    #[command(subcommand)]
    Mcp(McpCommand),
    /// Security: audit what the configuration and state dir expose.
    #[command(subcommand)]
    Security(SecurityCommand),
}

/// `talon security ...`.
#[derive(Debug, Subcommand)]
pub(crate) enum SecurityCommand {
    /// Audit the configuration and state dir: findings `{checkId,
    /// severity, title, detail, remediation}` and a summary. Exit 0 when
    /// nothing is above info, 1 when a finding is warn or critical or the
    /// config is invalid (only the config error is shown then), 2 when
    /// the config file cannot be read or on a usage error.
    Audit {
        /// Also scan every skill the agents would load for dangerous code.
        #[arg(long)]
        deep: bool,
        /// JSON output (the gateway's `security.audit` report, plus
        /// `fixed` with --fix).
        #[arg(long)]
        json: bool,
        /// Tighten file modes first (config file to at most 0600, state
        /// dir to at most 0700, gateway token file to at most 0600), say
        /// what changed, then audit. Never widens anything; a second run
        /// changes nothing.
        #[arg(long)]
        fix: bool,
        /// With --deep, the gateway to probe live (--gateway, --token;
        /// default: where the config has it listen, reached through
        /// loopback, with the state dir's token file).
        #[command(flatten)]
        target: GatewayTarget,
    },
}

/// `talon mcp ...`.
#[derive(Debug, Subcommand)]
pub(crate) enum McpCommand {
    /// Start the agent's MCP servers and list their tools as a run sees
    /// them: safe name, original name, server, execution mode, and whether
    /// the run's policy keeps it. Exit 1 when a server failed to start.
    Tools {
        /// JSON output: an array of `{name, server, originalName,
        /// executionMode, allowed}`.
        #[arg(long)]
        json: bool,
    },
    /// Call one MCP tool (`SERVER__TOOL`, as `talon mcp tools` lists it)
    /// through the full gate: policy, loop detection, trusted policies,
    /// hooks, approval. Exit 0 on a result, 1 when blocked, 2 on an error.
    Call {
        /// The materialised tool name, e.g. `time__get_current_time`.
        name: String,
        /// The call's arguments as a JSON object.
        #[arg(long, value_name = "JSON", default_value = "{}")]
        params: String,
        /// Answer any approval request with this decision (allow-once,
        /// allow-always, deny).
        #[arg(long, value_name = "DECISION")]
        approve: Option<String>,
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
}

/// `talon sandbox ...`.
#[derive(Debug, Subcommand)]
pub(crate) enum SandboxCommand {
    /// Whether the session (`--session`, default: the agent's main session)
    /// runs sandboxed and why; its backend, mounts (with read-only flags),
    /// sandbox tool policy and config hash.
    Explain {
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// Check the sandbox settings of the defaults and every agent for
    /// blocked binds, networks, profiles and capabilities; exit 1 with every
    /// finding listed.
    Validate {
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// The host path a container path maps to in the session's sandbox
    /// (symlinks resolved beneath the mount root), or why it is refused;
    /// exit 0 when it resolves, 1 when refused.
    Resolve {
        /// A container path (`/workspace/src/main.rs`) or one relative to
        /// the workdir.
        path: String,
        /// Resolve for writing (a read-only mount is refused).
        #[arg(long)]
        write: bool,
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// The Docker sandbox containers Talon owns (found by label only).
    #[command(alias = "list")]
    Ls {
        /// JSON output (an array of objects).
        #[arg(long)]
        json: bool,
    },
    /// Remove owned sandbox containers by name (exit 1 when a name is not
    /// Talon's), or all of them.
    Rm {
        /// Container names (see `talon sandbox ls`).
        names: Vec<String>,
        /// Remove every container Talon owns.
        #[arg(long, conflicts_with = "names")]
        all: bool,
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// Remove the sandboxes past their prune limits (`prune.idleHours`,
    /// `prune.maxAgeDays`) on every backend; `--agent` limits it to one
    /// agent's sandboxes. A sandbox with a call running is kept.
    Prune {
        /// Report what would be removed; remove nothing.
        #[arg(long)]
        dry_run: bool,
        /// Every owned sandbox (the default without `--agent`).
        #[arg(long)]
        all: bool,
        /// JSON output: a list of {backend, name, scopeKey, reason,
        /// idleHours, ageDays, removed}.
        #[arg(long)]
        json: bool,
    },
    /// Remove the container of the session's scope (`--session`,
    /// `--agent`) so the next sandboxed call recreates it with the current
    /// configuration; `--all` for every owned container.
    Recreate {
        /// Every container Talon owns.
        #[arg(long)]
        all: bool,
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum CronCommand {
    /// The next fire times of a cron expression, strictly after --from.
    Next {
        /// A 5-field (minute) or 6-field (second) expression, quoted.
        expr: String,
        /// IANA time zone of the expression (default: the host's).
        #[arg(long, value_name = "ZONE")]
        tz: Option<String>,
        /// Start instant, ISO-8601 or epoch ms (default: now).
        #[arg(long, value_name = "INSTANT")]
        from: Option<String>,
        /// How many fire times (1-1000).
        #[arg(long, default_value_t = 5)]
        count: usize,
        /// JSON output: an array of RFC 3339 UTC instants.
        #[arg(long)]
        json: bool,
    },
    /// Jobs, ordered by next run.
    List {
        /// Include disabled jobs.
        #[arg(long)]
        all: bool,
        /// JSON output (an array of jobs).
        #[arg(long)]
        json: bool,
    },
    /// Add a job (an operator job: no creator tool cap unless --tools).
    Add {
        /// Job name.
        #[arg(long)]
        name: String,
        /// Run once at this instant (ISO-8601).
        #[arg(long, value_name = "INSTANT", group = "when")]
        at: Option<String>,
        /// Run every N milliseconds.
        #[arg(long, value_name = "MS", group = "when")]
        every: Option<i64>,
        /// Run on this cron expression.
        #[arg(long, value_name = "EXPR", group = "when")]
        cron: Option<String>,
        /// Time zone of --cron.
        #[arg(long, value_name = "ZONE", requires = "cron")]
        tz: Option<String>,
        /// Agent-turn prompt (an isolated run).
        #[arg(long, group = "what")]
        message: Option<String>,
        /// System-event text (for the agent's main session).
        #[arg(long, value_name = "TEXT", group = "what")]
        system_event: Option<String>,
        /// Tools the job's runs may use (comma-separated).
        #[arg(long, value_delimiter = ',', value_name = "a,b,...")]
        tools: Option<Vec<String>>,
        /// Add it disabled.
        #[arg(long)]
        disabled: bool,
        /// Keep a one-shot job (disabled) after it ran instead of deleting it.
        #[arg(long)]
        keep_after_run: bool,
        /// Running it twice is harmless: a one-shot run interrupted by a
        /// crash is re-run automatically (otherwise it waits for `cron run`).
        #[arg(long)]
        idempotent: bool,
        /// JSON output (the job).
        #[arg(long)]
        json: bool,
    },
    /// Remove a job (exit 1 when there is none).
    Remove {
        /// Job id.
        id: String,
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// A job's run history, newest first.
    Runs {
        /// Job id.
        id: String,
        /// At most this many.
        #[arg(long, default_value_t = 20)]
        limit: usize,
        /// JSON output (an array of runs).
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum SessionsCommand {
    /// Sessions, most recently updated first.
    List {
        /// Only this agent's sessions.
        #[arg(long)]
        agent: Option<String>,
        /// Closed sessions too.
        #[arg(long)]
        all: bool,
        /// At most this many.
        #[arg(long, default_value_t = 50)]
        limit: usize,
        /// JSON output (an array of sessions).
        #[arg(long)]
        json: bool,
    },
    /// One session (exit 1 when there is none).
    Show {
        /// Session key.
        key: String,
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// A session's messages and tool calls (tool calls from the gateway's
    /// call journal, newest first).
    History {
        /// Session key.
        key: String,
        /// At most this many messages and this many calls.
        #[arg(long, default_value_t = 50)]
        limit: usize,
        /// JSON output (`{session, messages, calls}`).
        #[arg(long)]
        json: bool,
    },
}

/// `talon tasks ...`.
#[derive(Debug, Subcommand)]
pub(crate) enum TasksCommand {
    /// Tasks, newest first.
    List {
        /// Only this status (queued, running, succeeded, failed, timed_out,
        /// cancelled, lost).
        #[arg(long)]
        status: Option<String>,
        /// Only this runtime (subagent, acp, cli, cron).
        #[arg(long)]
        runtime: Option<String>,
        /// At most this many.
        #[arg(long, default_value_t = 50)]
        limit: usize,
        /// JSON output (an array of tasks).
        #[arg(long)]
        json: bool,
    },
    /// One task (exit 1 when there is none).
    Show {
        /// Task id.
        id: String,
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// Cancel a task (exit 1 when it is unknown or already finished). The
    /// process running it stops the work at its next maintenance sweep.
    Cancel {
        /// Task id.
        id: String,
        /// Why.
        #[arg(long)]
        reason: Option<String>,
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
}

/// `talon memory ...` (the host workspace's index, as host runs use it).
#[derive(Debug, Subcommand)]
pub(crate) enum MemoryCommand {
    /// Bring the index in step with the memory files (or rebuild it from
    /// scratch); exit 1 when a file was skipped.
    Index {
        /// Drop the index and build it again from the files.
        #[arg(long)]
        rebuild: bool,
        /// The agent workspace (default: the agent's configured workspace).
        #[arg(long, value_name = "DIR")]
        workspace: Option<PathBuf>,
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// Search the memory files as memory_search does (syncing first);
    /// exit 1 when nothing matches.
    Search {
        /// The query (words; no search syntax).
        query: String,
        /// At most this many results (default: memorySearch.query.maxResults, else 6).
        #[arg(long, value_name = "N")]
        max_results: Option<usize>,
        /// Only results scoring at least this (0 to 1).
        #[arg(long, value_name = "SCORE")]
        min_score: Option<f64>,
        /// The agent workspace (default: the agent's configured workspace).
        #[arg(long, value_name = "DIR")]
        workspace: Option<PathBuf>,
        /// JSON output (the memory_search result).
        #[arg(long)]
        json: bool,
    },
    /// What the index holds (no sync): files, chunks, skipped files.
    Status {
        /// The agent workspace (default: the agent's configured workspace).
        #[arg(long, value_name = "DIR")]
        workspace: Option<PathBuf>,
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum SkillsCommand {
    /// Every skill of the six sources with source, location, eligibility
    /// and why, invocation policy and what it shadows; then the
    /// directories that are not skills, with why.
    List {
        /// The agent workspace (default: the agent's configured workspace).
        #[arg(long, value_name = "DIR")]
        workspace: Option<PathBuf>,
        /// JSON output (an array of objects).
        #[arg(long)]
        json: bool,
    },
    /// The exact skills index a run would get, with its size and budget.
    Prompt {
        /// The agent workspace (default: the agent's configured workspace).
        #[arg(long, value_name = "DIR")]
        workspace: Option<PathBuf>,
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// Scan a skill directory; exit 1 when any finding is critical.
    Scan {
        /// The skill directory.
        path: PathBuf,
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum ToolsCommand {
    /// List the core catalog.
    List {
        /// Only the tools of this profile (minimal, coding, messaging, full).
        #[arg(long)]
        profile: Option<String>,
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// A tool's parameter schema, normalised for a provider.
    Schema {
        /// Tool name (aliases accepted, e.g. bash).
        name: String,
        /// JSON output (the schema object only is printed otherwise).
        #[arg(long)]
        json: bool,
        /// OpenAI strict-mode schema.
        #[arg(long)]
        strict: bool,
    },
    /// Run one tool call through the full gate on the host: policy, loop
    /// detection, trusted policies, hooks (`tools.hooks`), approval.
    /// Exit 0 on a result, 1 when blocked, 2 on an error.
    Call {
        /// Tool name (aliases accepted, e.g. bash).
        name: String,
        /// The call's arguments as a JSON object.
        #[arg(long, value_name = "JSON", default_value = "{}")]
        params: String,
        /// Answer any approval request with this decision instead of asking
        /// on the terminal (allow-once, allow-always, deny).
        #[arg(long, value_name = "DECISION")]
        approve: Option<String>,
        /// The agent workspace the file and shell tools work in (default:
        /// `agents.list[].workspace`, else `agents.defaults.workspace`,
        /// else `<state dir>/workspace`).
        #[arg(long, value_name = "DIR")]
        workspace: Option<PathBuf>,
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum PolicyCommand {
    /// Every layer in order with what it removed and why, then the tools.
    Explain {
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// Whether one tool survives (exit 0) or not (exit 1).
    Check {
        /// Any tool name; normalised first.
        tool: String,
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum ConfigCommand {
    /// Check the config file; exit 0 when valid, 1 with every error listed.
    Validate {
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// Print the JSON Schema of the whole config file.
    Schema,
}

/// How to reach a running gateway.
#[derive(Debug, Args, Clone, Default)]
pub(crate) struct GatewayTarget {
    /// The gateway: ws://HOST:PORT[/ws], http://HOST:PORT or HOST:PORT
    /// (default: $TALON_GATEWAY_URL, else the address the config's
    /// gateway.bind/gateway.port give the daemon, 127.0.0.1:18789 when
    /// unset).
    #[arg(long, global = true, value_name = "URL", env = "TALON_GATEWAY_URL")]
    pub(crate) gateway: Option<String>,
    /// Bearer token (default: $TALON_GATEWAY_TOKEN, else the token file
    /// in the state dir).
    #[arg(
        long,
        global = true,
        value_name = "TOKEN",
        env = "TALON_GATEWAY_TOKEN",
        hide_env_values = true
    )]
    pub(crate) token: Option<String>,
    /// The config file the address is read from when no URL is given
    /// (the global --config, filled in by [`GatewayTarget::with_config`]).
    #[arg(skip)]
    pub(crate) config: Option<PathBuf>,
}

impl GatewayTarget {
    /// This target, reading the gateway's address from `ctx`'s config.
    pub(crate) fn with_config(&self, ctx: &ContextArgs) -> GatewayTarget {
        GatewayTarget {
            config: ctx.config.clone(),
            ..self.clone()
        }
    }
}

#[derive(Debug, Args)]
pub(crate) struct CronArgs {
    #[command(flatten)]
    pub(crate) target: GatewayTarget,
    #[command(subcommand)]
    pub(crate) command: CronCommand,
}

#[derive(Debug, Args)]
pub(crate) struct TasksArgs {
    #[command(flatten)]
    pub(crate) target: GatewayTarget,
    #[command(subcommand)]
    pub(crate) command: TasksCommand,
}

#[derive(Debug, Subcommand)]
pub(crate) enum GatewayCommand {
    /// Run the gateway daemon in the foreground (the `talon-gateway`
    /// program beside this one, with these arguments).
    Run {
        /// Listen address, HOST:PORT.
        #[arg(long, value_name = "ADDR")]
        bind: Option<String>,
    },
    /// Whether a gateway answers, and its health (exit 1 when it does not).
    Status {
        #[command(flatten)]
        target: GatewayTarget,
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// Call one API method and print its result as JSON (exit 1 on an
    /// error answer).
    Call {
        /// The method, e.g. health, tools.list, tools.invoke.
        method: String,
        /// The params, a JSON object.
        #[arg(long, default_value = "{}", value_name = "JSON")]
        params: String,
        /// Seconds to wait for the answer.
        #[arg(long, default_value_t = 60)]
        timeout: u64,
        #[command(flatten)]
        target: GatewayTarget,
    },
    /// Gateway tokens.
    Token {
        #[command(subcommand)]
        command: TokenCommand,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum TokenCommand {
    /// Make a fresh token (32 random bytes, hex): print it once, with the
    /// `gateway.auth.tokens[]` entry that holds only its SHA-256. Nothing
    /// is written anywhere.
    New {
        /// Its scope: runner (default), owner, operator or read-only.
        #[arg(long, default_value = "runner", value_name = "SCOPE")]
        scope: String,
        /// Its identity (default: `token-` and 8 hex digits of its hash).
        #[arg(long, value_name = "NAME")]
        id: Option<String>,
        /// JSON output: `{token, entry}`.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Args)]
pub(crate) struct ApprovalsArgs {
    #[command(flatten)]
    pub(crate) target: GatewayTarget,
    #[command(subcommand)]
    pub(crate) command: ApprovalsCommand,
}

#[derive(Debug, Subcommand)]
pub(crate) enum ApprovalsCommand {
    /// Pending approvals, oldest first.
    List {
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// One pending approval, whole: the exact command (control, ANSI,
    /// bidi and zero-width characters written out), environment and
    /// parameters.
    Show {
        /// Approval id.
        id: String,
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// Allow a pending call (once, or --always to remember the grant).
    Approve {
        /// Approval id.
        id: String,
        /// allow-always instead of allow-once.
        #[arg(long)]
        always: bool,
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// Deny a pending call.
    Deny {
        /// Approval id.
        id: String,
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// The exec allowlists in `<state dir>/exec-approvals.json` (edited
    /// locally; a running gateway reads the file on every exec call).
    Allowlist {
        #[command(subcommand)]
        command: AllowlistCommand,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum AllowlistCommand {
    /// The entries that apply to an agent (`*` entries first).
    List {
        /// The agent id.
        #[arg(long, default_value = talon_config::DEFAULT_AGENT_ID)]
        agent: String,
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// Add a pattern: a bare command name glob (`rg`, `git*`) or an
    /// absolute path glob (`/usr/bin/*`); `*` stays within a path
    /// component, `**` crosses them.
    Add {
        /// The pattern.
        pattern: String,
        /// The agent id (`*` for every agent).
        #[arg(long, default_value = talon_config::DEFAULT_AGENT_ID)]
        agent: String,
        /// Only when the arguments, joined by spaces, match this regex.
        #[arg(long)]
        arg_pattern: Option<String>,
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// Remove every entry of the agent with this pattern (or id).
    Remove {
        /// The pattern or entry id.
        pattern: String,
        /// The agent id (`*` for the entries of every agent).
        #[arg(long, default_value = talon_config::DEFAULT_AGENT_ID)]
        agent: String,
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
}
