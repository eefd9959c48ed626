use pretty_assertions::assert_eq;

use super::*;

#[test]
fn blank_files_are_empty_configs() {
    for text in ["", "   \n", "// nothing yet\n", "\u{FEFF}/* */"] {
        let loaded = load_str(text, "t.json").unwrap();
        assert_eq!(loaded.config, TalonConfig::default());
        assert_eq!(loaded.notices, vec![]);
    }
}

#[test]
fn the_root_must_be_an_object() {
    let err = load_str("\n [1]", "t.json").unwrap_err();
    assert_eq!(
        err.to_string(),
        "t.json:2:2: the configuration must be an object (`{ … }`), found an array"
    );
}

#[test]
fn accepted_sections_get_notices() {
    let loaded = load_str(
        "{ skills: {}, mcp: { servers: {} }, gateway: null, tools: { exec: {} },\n agents: { entries: { a: { sandbox: { docker: {}, browser: {}, prune: {} } } } } }",
        "t.json",
    )
    .unwrap();
    // `sandbox.browser` is validated now: an empty one loads quietly.
    assert!(loaded.notices.is_empty(), "{:?}", loaded.notices);
}

#[test]
fn sandbox_browser_keys_talon_cannot_honour_are_refused_at_their_key() {
    // The honoured keys load (the local backend runs the browser).
    let ok = load_str(
        "{ agents: { defaults: { sandbox: { mode: 'all', backend: 'local', browser: { enabled: true, headless: true, autoStart: false, autoStartTimeoutMs: 15000, allowHostControl: false, enableNoVnc: false, binds: [] } } } } }",
        "t.json",
    )
    .unwrap();
    assert!(ok.notices.is_empty(), "{:?}", ok.notices);
    // The container's keys, a host-browser escape and bad values are
    // refused by name, never dropped.
    for (text, key) in [
        (
            "{ agents: { defaults: { sandbox: { browser: { enabled: true, image: 'x' } } } } }",
            "agents.defaults.sandbox.browser.image",
        ),
        (
            "{ agents: { list: [ { id: 'a', sandbox: { browser: { allowHostControl: true } } } ] } }",
            "agents.list[0].sandbox.browser.allowHostControl",
        ),
        (
            "{ agents: { entries: { a: { sandbox: { browser: { headless: false } } } } } }",
            "agents.entries.a.sandbox.browser.headless",
        ),
        (
            "{ agents: { defaults: { sandbox: { browser: { cdpPort: 9222 } } } } }",
            "agents.defaults.sandbox.browser.cdpPort",
        ),
        (
            "{ agents: { defaults: { sandbox: { browser: { autoStartTimeoutMs: 0 } } } } }",
            "agents.defaults.sandbox.browser.autoStartTimeoutMs",
        ),
        (
            "{ agents: { defaults: { sandbox: { browser: { enabeld: true } } } } }",
            "agents.defaults.sandbox.browser.enabeld",
        ),
        (
            "{ agents: { defaults: { sandbox: { browser: true } } } }",
            "agents.defaults.sandbox.browser",
        ),
    ] {
        let err = load_str(text, "t.json").unwrap_err();
        assert!(
            err.issues().iter().any(|i| i.key_path == key),
            "no issue at {key}: {err}"
        );
    }
}

#[test]
fn openclaw_browser_switches_are_refused_not_dropped() {
    // Talon has a browser tool now: OpenClaw's switch that turns it off
    // (or evaluate, or narrows its hosts) must not vanish silently.
    for text in [
        "{ browser: { enabled: false } }",
        "{ browser: { evaluateEnabled: false } }",
        "{ browser: { ssrfPolicy: { hostnameAllowlist: ['example.com'] } } }",
    ] {
        let err = load_str(text, "t.json").unwrap_err();
        assert!(
            err.issues().iter().any(|i| i.key_path == "browser"),
            "{text}: {err}"
        );
    }
    let inert = load_str("{ browser: { headless: true, color: '#fff' } }", "t.json").unwrap();
    assert!(inert.notices.iter().any(|n| n.key_path == "browser"));
}

#[test]
fn browser_max_download_bytes_is_talon_s_own_key_with_a_range() {
    let ok = load_str("{ browser: { maxDownloadBytes: 1048576 } }", "t.json").unwrap();
    assert!(ok.notices.is_empty(), "{:?}", ok.notices);
    let browser = ok.config.browser.clone().expect("browser section");
    assert_eq!(browser.max_download_bytes(), 1_048_576);
    assert_eq!(
        crate::sections::browser::BrowserConfig::default().max_download_bytes(),
        100 * 1024 * 1024
    );
    // Beside OpenClaw's keys: those are dropped with a notice (or refused
    // when they restrict), Talon's stays.
    let mixed = load_str(
        "{ browser: { headless: true, maxDownloadBytes: 2048 } }",
        "t.json",
    )
    .unwrap();
    assert_eq!(
        mixed
            .config
            .browser
            .as_ref()
            .and_then(|b| b.max_download_bytes),
        Some(2048)
    );
    assert!(mixed.notices.iter().any(|n| n.key_path == "browser"));
    let err = load_str(
        "{ browser: { enabled: false, maxDownloadBytes: 2048 } }",
        "t.json",
    )
    .unwrap_err();
    assert!(
        err.issues().iter().any(|i| i.key_path == "browser"),
        "{err}"
    );
    // Out of range, or not a number: refused at the key.
    for bad in ["0", "4294967297", "-1", "'big'", "1.5"] {
        let err = load_str(
            &format!("{{ browser: {{ maxDownloadBytes: {bad} }} }}"),
            "t.json",
        )
        .unwrap_err();
        assert!(
            err.issues()
                .iter()
                .any(|i| i.key_path == "browser.maxDownloadBytes"),
            "{bad}: {err}"
        );
    }
}

#[test]
fn tools_exec_and_web_are_typed_with_their_ranges() {
    let err = load_str(
        "{ tools: { exec: { timeoutSec: 0 }, web: { fetch: { maxChars: 'x' }, serch: {} } } }",
        "t.json",
    )
    .unwrap_err();
    let paths: Vec<&str> = err.issues().iter().map(|i| i.key_path.as_str()).collect();
    assert!(paths.contains(&"tools.exec.timeoutSec"), "{paths:?}");
    assert!(
        paths.iter().any(|p| p.starts_with("tools.web")),
        "{paths:?}"
    );
    let ok = load_str(
        "{ tools: { exec: { timeoutSec: 60, backgroundMs: 2000 }, web: { fetch: { maxChars: 5000 } } } }",
        "t.json",
    )
    .unwrap();
    assert!(ok.notices.is_empty(), "{:?}", ok.notices);
}

#[test]
fn mcp_sections_are_typed_globally_and_per_agent() {
    let err = load_str(
        "{ mcp: { servers: { gh: { command: 'x', timeoutMs: 0 } } },\n agents: { list: [{ id: 'a', mcp: { servers: { t: { url: 'http://h', comand: 'y' } } } }],\n entries: { b: { mcp: { servers: { u: {} } } } } } }",
        "t.json",
    )
    .unwrap_err();
    let paths: Vec<&str> = err.issues().iter().map(|i| i.key_path.as_str()).collect();
    assert!(paths.contains(&"mcp.servers.gh.timeoutMs"), "{paths:?}");
    assert!(
        paths.contains(&"agents.list[0].mcp.servers.t.comand"),
        "{paths:?}"
    );
    assert!(
        paths.contains(&"agents.entries.b.mcp.servers.u"),
        "{paths:?}"
    );
    let ok = load_str(
        "{ mcp: { servers: { gh: { command: 'x', args: ['-v'], timeoutMs: 100 } } },\n agents: { list: [{ id: 'a', mcp: { servers: { t: { url: 'http://h/mcp', headers: { A: '${TOKEN}' } } } } }] } }",
        "t.json",
    )
    .unwrap();
    assert!(ok.notices.is_empty(), "{:?}", ok.notices);
    let sections = ok.config.agent_mcp_sections();
    assert_eq!(sections.len(), 1);
    assert_eq!(sections[0].0, "a");
    let (name, server) = &sections[0].1.servers.0[0];
    assert_eq!(name, "t");
    assert_eq!(server.url.as_deref(), Some("http://h/mcp"));
    let global = ok.config.mcp.as_ref().unwrap();
    assert_eq!(global.servers.0[0].1.args, vec!["-v".to_owned()]);
}

#[test]
fn several_default_agents_get_a_notice() {
    let loaded = load_str(
        "{ agents: { list: [{ id: 'a', default: true }, { id: 'b', default: true }] } }",
        "t",
    )
    .unwrap();
    assert_eq!(loaded.config.default_agent_id(), "a");
    assert_eq!(loaded.notices.len(), 1);
    assert_eq!(loaded.notices[0].key_path, "agents.list[1].default");
    assert!(
        loaded.notices[0]
            .message
            .contains("`agents.list[0]` is used")
    );
}

#[test]
fn too_large_text() {
    let text = " ".repeat(usize::try_from(MAX_CONFIG_BYTES).unwrap() + 1);
    assert!(
        matches!(load_str(&text, "t"), Err(ConfigError::TooLarge { size, .. }) if size == MAX_CONFIG_BYTES + 1)
    );
}

#[test]
fn served_schema_lists_ignored_openclaw_keys() {
    let schema = config_schema();
    assert_eq!(
        schema["properties"]["bindings"]["description"],
        "OpenClaw section not used by Talon (ignored)"
    );
    assert!(schema["$defs"]["WebhookChannelConfig"]["properties"]["url"].is_object());
    assert!(
        schema["properties"]["channels"]["properties"]["irc"]["description"]
            .as_str()
            .unwrap()
            .contains("message")
    );
    assert!(
        schema["$defs"]["ChannelToolsConfig"]["additionalProperties"]["description"]
            .as_str()
            .unwrap()
            .contains("ignored")
    );
    assert_eq!(schema["additionalProperties"], false);
    assert!(schema["$defs"]["AgentEntry"]["properties"]["identity"].is_object());
    assert_eq!(
        validation_schema()["$defs"]["ChannelToolsConfig"]["additionalProperties"],
        false
    );
}

#[test]
fn the_skills_section_is_validated_with_key_paths() {
    let loaded = load_str(
        "{ skills: { load: { extraDirs: [\"./more\"], watchDebounceMs: 100 }, allowBundled: [\"gog\"], limits: { maxSkillsInPrompt: 10 } } }",
        "t.json",
    )
    .unwrap();
    assert_eq!(
        loaded
            .config
            .skills_config()
            .limits
            .and_then(|l| l.max_skills_in_prompt),
        Some(10)
    );
    let err = load_str("{ skills: { load: { extraDir: [] } } }", "t.json").unwrap_err();
    assert!(err.to_string().contains("skills.load"), "{err}");
    let err = load_str("{ skills: { limits: { maxSkillsInPrompt: 0 } } }", "t.json").unwrap_err();
    assert_eq!(
        err.to_string(),
        "t.json:1:42: skills.limits.maxSkillsInPrompt: must be at least 1"
    );
}

#[test]
fn cron_is_typed() {
    let err = load_str(
        "{ cron: { enabled: 'yes', retry: { maxAttempts: 2, bogus: 1 } } }",
        "t.json",
    )
    .unwrap_err();
    let paths: Vec<&str> = err.issues().iter().map(|i| i.key_path.as_str()).collect();
    assert!(paths.iter().all(|p| p.starts_with("cron")), "{paths:?}");
    assert!(!paths.is_empty());
    let ok = load_str(
        "{ cron: { enabled: true, maxConcurrentRuns: 2, retry: { maxAttempts: 5 } } }",
        "t.json",
    )
    .unwrap();
    assert!(ok.notices.is_empty(), "{:?}", ok.notices);
}

#[test]
fn exec_security_and_ask_are_typed_globally_and_per_agent() {
    use talon_hooks::exec_approvals::{ExecAsk, ExecPolicy, ExecSecurity};
    let loaded = load_str(
        "{ tools: { exec: { security: 'allowlist', ask: 'on-miss' } },\n agents: { list: [ { id: 'a', tools: { exec: { security: 'deny' } } }, { id: 'b' } ] } }",
        "t.json",
    )
    .unwrap();
    assert_eq!(
        loaded.config.exec_policy("a"),
        ExecPolicy::new(ExecSecurity::Deny, ExecAsk::OnMiss)
    );
    assert_eq!(
        loaded.config.exec_policy("b"),
        ExecPolicy::new(ExecSecurity::Allowlist, ExecAsk::OnMiss)
    );
    let err = load_str(
        "{ tools: { exec: { security: 'sometimes', ask: 'never' } },\n agents: { list: [ { id: 'a', tools: { exec: { ask: 'maybe', timeoutSec: 5 } } } ] } }",
        "t.json",
    )
    .unwrap_err();
    let text = err.to_string();
    for key in ["tools.exec.security", "agents.list[0].tools.exec"] {
        assert!(text.contains(key), "{key} missing from: {text}");
    }
}

#[test]
fn exec_env_is_typed_globally_and_per_agent() {
    use talon_exec_env::{InheritMode, Withheld};
    let loaded = load_str(
        "{ tools: { exec: { env: { inherit: 'all', exclude: ['MY_*'], set: { A: '1' } } } },\n agents: { list: [ { id: 'a', tools: { exec: { env: { inherit: 'none', set: { B: '2' } } } } }, { id: 'b' } ] } }",
        "t.json",
    )
    .unwrap();
    let b = loaded.config.exec_env_policy("b").unwrap();
    assert_eq!(b.inherit(), InheritMode::All);
    assert_eq!(b.withheld("my_var"), Some(Withheld::Exclude));
    assert_eq!(b.set_vars().keys().collect::<Vec<_>>(), ["A"]);
    let a = loaded.config.exec_env_policy("a").unwrap();
    assert_eq!(a.inherit(), InheritMode::None);
    assert_eq!(a.set_vars().keys().collect::<Vec<_>>(), ["A", "B"]);
    // The defaults are safe: core plus the built-in excludes.
    let empty = load_str("{}", "t.json").unwrap();
    let default = empty.config.exec_env_policy("main").unwrap();
    assert_eq!(default.inherit(), InheritMode::Core);
    assert_eq!(
        default.withheld("OPENAI_API_KEY"),
        Some(Withheld::NotInherited)
    );
}

#[test]
fn exec_env_errors_name_their_key() {
    let err = load_str(
        "{\n tools: { exec: { env: { exclude: ['OK_*', 'BAD?'], set: { LD_PRELOAD: '/x.so', TALON_X: '1' } } } },\n agents: { list: [ { id: 'a', tools: { exec: { env: { includeOnly: ['[x]'], inherit: 'some' } } } } ] } }",
        "t.json",
    )
    .unwrap_err();
    let text = err.to_string();
    for key in [
        "tools.exec.env.exclude[1]",
        "tools.exec.env.set.LD_PRELOAD",
        "tools.exec.env.set.TALON_X",
        "agents.list[0].tools.exec.env.inherit",
    ] {
        assert!(text.contains(key), "{key} missing from: {text}");
    }
    assert!(!text.contains("exclude[0]"), "{text}");
    let err = load_str(
        "{ agents: { list: [ { id: 'a', tools: { exec: { env: { includeOnly: ['[x]'] } } } } ] } }",
        "t.json",
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("agents.list[0].tools.exec.env.includeOnly[0]"),
        "{err}"
    );
}

#[test]
fn sandbox_prune_values_are_typed_and_errors_name_the_key() {
    let err = load_str(
        "{ agents: { defaults: { sandbox: { prune: { idleHours: -1 } } },\n list: [ { id: 'a', sandbox: { prune: { maxAgeDays: 'week' } } },\n { id: 'b', sandbox: { prune: { idleHours: 1.5, maxAge: 3 } } } ] } }",
        "t.json",
    )
    .unwrap_err();
    assert_eq!(
        err.to_string().lines().collect::<Vec<_>>(),
        vec![
            "t.json:1:56: agents.defaults.sandbox.prune.idleHours: must be at least 0, found -1",
            "t.json:2:53: agents.list[0].sandbox.prune.maxAgeDays: expected an integer, found a string (\"week\")",
            "t.json:3:44: agents.list[1].sandbox.prune.idleHours: expected an integer, found a number (`1.5`)",
            "t.json:3:49: agents.list[1].sandbox.prune.maxAge: unknown key `maxAge`; expected one of `idleHours`, `maxAgeDays`",
        ]
    );
    let ok = load_str(
        "{ agents: { defaults: { sandbox: { prune: { idleHours: 0, maxAgeDays: 30 } } } } }",
        "t.json",
    )
    .unwrap();
    assert!(ok.notices.is_empty(), "{:?}", ok.notices);
    let resolved = ok
        .config
        .resolved_sandbox_config("main", std::path::Path::new("/state"), None);
    assert_eq!(resolved.prune.idle_hours, 0);
    assert_eq!(resolved.prune.max_age_days, 30);
}

#[test]
fn the_session_section_decides_the_main_session() {
    let loaded = load_str(
        "{ session: { mainKey: \" Work \", scope: \"per-sender\", dmScope: \"per-peer\", store: \"x\" } }",
        "t.json",
    )
    .unwrap();
    let got: Vec<String> = loaded.notices.iter().map(ToString::to_string).collect();
    assert_eq!(
        got,
        vec![
            "line 1: session.dmScope: OpenClaw setting not used by Talon (ignored)",
            "line 1: session.store: OpenClaw setting not used by Talon (ignored)",
        ]
    );
    let main = loaded.config.main_session();
    assert_eq!(main.main_session_key("ops"), "agent:ops:work");
    let resolved = loaded
        .config
        .resolved_sandbox_config("ops", std::path::Path::new("/s"), None);
    assert_eq!(resolved.main_session, main);

    let global = load_str("{ session: { scope: \"global\" } }", "t.json").unwrap();
    assert_eq!(
        global.config.main_session().main_session_key("main"),
        "global"
    );
    assert_eq!(
        TalonConfig::default().main_session(),
        talon_sandbox_core::MainSession::default()
    );
}

#[test]
fn bad_session_values_are_load_errors_naming_the_key() {
    let err = load_str("{ session: {\n scope: \"everyone\" } }", "t.json").unwrap_err();
    assert!(
        err.to_string().starts_with("t.json:2:9: session.scope: "),
        "{err}"
    );
    for bad in ["\"\"", "\"a:b\"", "\"two words\"", "\"-x\""] {
        let err = load_str(&format!("{{ session: {{ mainKey: {bad} }} }}"), "t.json").unwrap_err();
        let text = err.to_string();
        assert!(text.contains("session.mainKey: "), "{bad}: {text}");
        assert!(text.contains("session.mainKey"), "{bad}: {text}");
    }
    let err = load_str("{ session: { mainkey: \"x\" } }", "t.json").unwrap_err();
    assert!(err.to_string().contains("did you mean `mainKey`?"), "{err}");
}

/// One wrong value in each section a consumer reads: every one is a load
/// error whose line starts with `origin:line:column: key.path:`.
#[test]
fn a_wrong_value_in_any_section_is_a_load_error_at_its_key() {
    let cases: &[(&str, &str)] = &[
        (
            "{\n tools: { fs: { workspaceOnly: 'yes' } } }",
            "t.json:2:32: tools.fs.workspaceOnly:",
        ),
        (
            "{\n tools: { exec: { security: 'sometimes' } } }",
            "t.json:2:29: tools.exec.security:",
        ),
        (
            "{\n tools: { exec: { ask: 'never' } } }",
            "t.json:2:24: tools.exec.ask:",
        ),
        (
            "{\n tools: { web: { fetch: { enabled: 1 } } } }",
            "t.json:2:36: tools.web.fetch.enabled:",
        ),
        (
            "{\n tools: { loopDetection: { enabled: 'on' } } }",
            "t.json:2:37: tools.loopDetection.enabled:",
        ),
        (
            "{\n tools: { hooks: { beforeToolCall: [{ id: 'g', command: '/bin/guard' }] } } }",
            "t.json:2:57: tools.hooks.beforeToolCall[0].command:",
        ),
        (
            "{\n skills: { limits: { maxSkillsInPrompt: 'ten' } } }",
            "t.json:2:41: skills.limits.maxSkillsInPrompt:",
        ),
        (
            "{\n mcp: { servers: { gh: { command: 5 } } } }",
            "t.json:2:35: mcp.servers.gh.command:",
        ),
        (
            "{\n mcp: { servers: { gh: { transport: 'sse' } } } }",
            "t.json:2:26: mcp.servers.gh.transport:",
        ),
        (
            "{\n cron: { maxConcurrentRuns: 'two' } }",
            "t.json:2:29: cron.maxConcurrentRuns:",
        ),
        ("{\n gateway: { port: 'x' } }", "t.json:2:19: gateway.port:"),
        (
            "{\n gateway: { bind: 'moon' } }",
            "t.json:2:19: gateway.bind:",
        ),
        (
            "{\n gateway: { journal: { durability: 'maybe' } } }",
            "t.json:2:36: gateway.journal.durability:",
        ),
        (
            "{\n gateway: { auth: { tokens: [{ token: '0123456789abcdef0', scope: 'root' }] } } }",
            "t.json:2:67: gateway.auth.tokens[0].scope:",
        ),
        (
            "{\n gateway: { auth: { token: 'short' } } }",
            "t.json:2:28: gateway.auth.token:",
        ),
        (
            "{\n gateway: { limits: { outboundFrames: 0 } } }",
            "t.json:2:39: gateway.limits.outboundFrames:",
        ),
        (
            "{\n session: { scope: 'per-planet' } }",
            "t.json:2:20: session.scope:",
        ),
        (
            "{\n agents: { list: [{ id: 'a', tools: { exec: { ask: 'maybe' } } }] } }",
            "t.json:2:52: agents.list[0].tools.exec.ask:",
        ),
        (
            "{\n agents: { list: [{ id: 'a', tools: { fs: { workspaceOnly: 1 } } }] } }",
            "t.json:2:60: agents.list[0].tools.fs.workspaceOnly:",
        ),
        (
            "{\n agents: { list: [{ id: 'a', mcp: { servers: { x: { command: [] } } } }] } }",
            "t.json:2:62: agents.list[0].mcp.servers.x.command:",
        ),
        (
            "{\n agents: { defaults: { sandbox: { mode: 'sometimes' } } } }",
            "t.json:2:41: agents.defaults.sandbox.mode:",
        ),
    ];
    let mut wrong = Vec::new();
    for (text, want) in cases {
        let err = match load_str(text, "t.json") {
            Ok(loaded) => format!("loaded: {:?}", loaded.config),
            Err(err) => err.to_string(),
        };
        if !err.lines().any(|l| l.starts_with(want)) {
            wrong.push(format!("{text}\n  wanted `{want}`, got: {err}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The regression this crate's typing exists for: a consumer used to parse
/// its section itself and fall back to the defaults when that failed, so a
/// typo turned MCP servers, skills limits or the cron policy off without a
/// word. Now the load fails, and a loaded config hands out the typed value.
#[test]
fn no_section_falls_back_to_defaults_silently() {
    let err = load_str(
        "{ mcp: { servers: { gh: { command: ['gh-mcp'] } } } }",
        "t.json",
    )
    .unwrap_err();
    assert_eq!(err.issues().len(), 1, "{err}");
    assert_eq!(err.issues()[0].key_path, "mcp.servers.gh.command");
    for text in [
        "{ skills: { limits: { maxSkillsInPrompt: -1 } } }",
        "{ cron: { retry: { backoffMs: 'fast' } } }",
        "{ tools: { exec: { security: 'ful' } } }",
        "{ gateway: { tools: { deny: [''] } } }",
    ] {
        assert!(load_str(text, "t.json").is_err(), "{text} loaded");
    }
    let loaded = load_str(
        "{ mcp: { servers: { gh: { command: 'gh-mcp', timeoutMs: 5000 } } },\n cron: { maxConcurrentRuns: 3 },\n gateway: { port: 19001, bind: 'lan', journal: { durability: 'process-crash' } },\n tools: { loopDetection: { enabled: true }, fs: { workspaceOnly: false } } }",
        "t.json",
    )
    .unwrap();
    let config = &loaded.config;
    let servers = &config.mcp.as_ref().unwrap().servers.0;
    assert_eq!(servers[0].0, "gh");
    assert_eq!(servers[0].1.command.as_deref(), Some("gh-mcp"));
    assert_eq!(config.cron_config().max_concurrent_runs, Some(3));
    let gateway = config.gateway_config();
    assert_eq!(gateway.port, Some(19001));
    assert_eq!(gateway.bind, Some(crate::GatewayBind::Lan));
    assert_eq!(
        gateway.journal.and_then(|j| j.durability),
        Some(crate::JournalDurability::ProcessCrash)
    );
    let tools = config.tools.as_ref().unwrap();
    assert_eq!(
        tools.loop_detection.as_ref().and_then(|l| l.enabled),
        Some(true)
    );
    assert!(!config.fs_workspace_only("main"));
}

/// A typo under `gateway` or `gateway.auth` is an error at its line and
/// column with the likely key, never silently ignored; OpenClaw's own
/// gateway keys load with a notice.
#[test]
fn unknown_gateway_keys_are_errors_with_a_suggestion() {
    let err = load_str("{ gateway: {\n  prot: 18790 } }", "t.json").unwrap_err();
    let text = err.to_string();
    assert!(text.starts_with("t.json:2:3: gateway.prot: "), "{text}");
    assert!(text.contains("did you mean `port`?"), "{text}");

    let err = load_str(
        "{ gateway: { auth: {\n  tokne: \"abcdefghijklmnopqrstuvwxyz\" } } }",
        "t.json",
    )
    .unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with("t.json:2:3: gateway.auth.tokne: "),
        "{text}"
    );
    assert!(text.contains("did you mean `token`?"), "{text}");

    let loaded = load_str(
        "{ gateway: { mode: \"local\", bind: \"loopback\", remote: { url: \"ws://x\" } } }",
        "t.json",
    )
    .unwrap();
    assert_eq!(loaded.notices.len(), 2, "{:?}", loaded.notices);
}

/// A restriction in an OpenClaw section Talon does not enforce is a load
/// error naming the key, unless `acceptUnenforced` drops it knowingly; an
/// acknowledgement that matches nothing is an error too.
#[test]
fn unenforceable_restrictions_are_refused_unless_acknowledged() {
    let text = r#"{
  channels: { telegram: { direct: { "42": { tools: { deny: ["exec"] } } }, dmPolicy: "pairing" } },
  plugins: { slots: { memory: "none" }, entries: { crm: { enabled: false } } },
}"#;
    let err = load_str(text, "t.json").unwrap_err().to_string();
    for key in [
        "t.json:2:45: channels.telegram.direct.42.tools:",
        "t.json:3:14: plugins.slots:",
    ] {
        assert!(err.contains(key), "{key} missing in {err}");
    }
    assert!(err.contains("acceptUnenforced"), "{err}");

    let accepted = format!(
        "{{ acceptUnenforced: [\"channels.telegram.direct.42.tools\", \"plugins.slots\"], {} }}",
        &text[1..text.len() - 1]
    );
    let loaded = load_str(&accepted, "t.json").unwrap();
    assert_eq!(
        loaded.config.dropped_restrictions,
        vec!["channels.telegram.direct.42.tools", "plugins.slots"]
    );
    // The enforced part of `plugins` stays: crm's switch is kept.
    let crm = loaded
        .config
        .plugins
        .as_ref()
        .and_then(|p| p.entries.as_ref())
        .and_then(|e| e.get("crm"))
        .and_then(|e| e.enabled);
    assert_eq!(crm, Some(false));
    assert!(
        loaded
            .notices
            .iter()
            .any(|n| n.key_path == "channels.telegram.direct.42.tools"
                && n.message.contains("dropped knowingly")),
        "{:?}",
        loaded.notices
    );

    // Inert content loads with a notice, no acknowledgement needed.
    let inert = load_str(
        r#"{ channels: { telegram: { dmPolicy: "pairing" } }, plugins: { enabled: true, slots: { memory: "memory-core" }, entries: {} } }"#,
        "t.json",
    )
    .unwrap();
    assert!(inert.config.dropped_restrictions.is_empty());

    // An acknowledgement must match something.
    let err = load_str(r#"{ acceptUnenforced: ["channels"] }"#, "t.json")
        .unwrap_err()
        .to_string();
    assert!(err.contains("acceptUnenforced[0]"), "{err}");
    assert!(err.contains("names no restriction"), "{err}");
}

/// `commands.ownerAllowFrom` is enforced (the gateway's owner list, with
/// `gateway.auth.ownerAllowFrom`), so it loads without an acknowledgement;
/// the other `commands.*` keys are inert and dropped with a notice; a
/// wildcard stays visible.
#[test]
fn commands_owner_allow_from_is_kept_and_merged() {
    let loaded = load_str(
        r#"{ commands: { ownerAllowFrom: ["telegram:42", "*"], native: "auto" },
  gateway: { auth: { ownerAllowFrom: [" Alice "] } } }"#,
        "t.json",
    )
    .unwrap();
    assert!(loaded.config.dropped_restrictions.is_empty());
    assert_eq!(
        loaded.config.owner_allow_from(),
        vec!["Alice", "telegram:42", "*"]
    );
    assert_eq!(
        loaded.config.owner_wildcards(),
        vec!["commands.ownerAllowFrom[1]"]
    );
    assert!(
        loaded
            .notices
            .iter()
            .any(|n| n.key_path == "commands.native"),
        "{:?}",
        loaded.notices
    );
    let err = load_str("{ commands: {\n  ownerAllowFrom: [' '] } }", "t.json")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("commands.ownerAllowFrom[0]: an owner sender id cannot be empty"),
        "{err}"
    );
}

/// Token entries: an identity, a scope (`agent` still loads, as
/// `runner`), `token` or `tokenSha256` (never both, never neither), and
/// every mistake is an error at its key path saying what to do.
#[test]
fn gateway_token_entries_are_checked_at_their_keys() {
    let hash = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
    let loaded = load_str(
        &format!(
            r#"{{ gateway: {{ auth: {{ tokens: [
  {{ id: "ci", tokenSha256: "{hash}", scope: "owner" }},
  {{ token: "runner-token-0123456789", scope: "agent" }},
] }} }} }}"#
        ),
        "t.json",
    )
    .unwrap();
    let tokens = loaded.config.gateway_config().auth.unwrap().tokens;
    assert_eq!(tokens[0].id.as_deref(), Some("ci"));
    assert_eq!(tokens[0].scope, crate::GatewayTokenScope::Owner);
    assert_eq!(tokens[0].sha256().map(|h| h[0]), Some(0x9f));
    assert_eq!(tokens[1].scope, crate::GatewayTokenScope::Runner);
    assert_eq!(tokens[1].scope.as_str(), "runner");

    let cases: [(String, &str, &str); 7] = [
        (
            format!(
                r#"{{ token: "abcdefghijklmnopqrstu", tokenSha256: "{hash}", scope: "runner" }}"#
            ),
            "gateway.auth.tokens[0]:",
            "not both",
        ),
        (
            r#"{ id: "x", scope: "runner" }"#.to_owned(),
            "gateway.auth.tokens[0]:",
            "needs `token` or `tokenSha256`",
        ),
        (
            r#"{ tokenSha256: "abc", scope: "runner" }"#.to_owned(),
            "gateway.auth.tokens[0].tokenSha256:",
            "64 hex digits",
        ),
        (
            format!(r#"{{ id: "has space", tokenSha256: "{hash}", scope: "runner" }}"#),
            "gateway.auth.tokens[0].id:",
            "is not a token id",
        ),
        (
            format!(r#"{{ id: "operator", tokenSha256: "{hash}", scope: "runner" }}"#),
            "gateway.auth.tokens[0].id:",
            "is reserved",
        ),
        (
            format!(r#"{{ tokenSha256: "{hash}", scope: "root" }}"#),
            "gateway.auth.tokens[0].scope:",
            "is not operator, owner, runner (formerly agent) or read-only",
        ),
        (
            r#"{ token: "short", scope: "runner" }"#.to_owned(),
            "gateway.auth.tokens[0].token:",
            "at least 16 characters",
        ),
    ];
    for (entry, key, message) in cases {
        let text = format!("{{ gateway: {{ auth: {{ tokens: [{entry}] }} }} }}");
        let err = load_str(&text, "t.json").unwrap_err().to_string();
        assert!(err.contains(key), "{key} not in {err}");
        assert!(err.contains(message), "{message} not in {err}");
    }
    let dup = format!(
        r#"{{ gateway: {{ auth: {{ tokens: [
  {{ id: "ci", tokenSha256: "{hash}", scope: "runner" }},
  {{ id: "ci", token: "another-token-0123456789", scope: "runner" }},
] }} }} }}"#
    );
    let err = load_str(&dup, "t.json").unwrap_err().to_string();
    assert!(
        err.contains("gateway.auth.tokens[1].id: `ci` is already the id of auth.tokens[0]"),
        "{err}"
    );
    let err = load_str("{ gateway: { auth: { ownerAllowFrom: [''] } } }", "t.json")
        .unwrap_err()
        .to_string();
    assert!(err.contains("gateway.auth.ownerAllowFrom[0]"), "{err}");
}

/// `plugins` is typed: its enforced keys load into the policy config, an
/// unknown key (or a bad entry in a plugin's tool policy) is an error with
/// its line and column, OpenClaw's inert keys are notices.
#[test]
fn the_plugins_section_is_typed_and_reaches_the_policy() {
    let loaded = load_str(
        r#"{
  plugins: {
    deny: ["crm"],
    load: { paths: ["x"] },
    entries: { honcho: { config: { a: 1 }, tools: { deny: ["honcho_write"] } } },
  },
}"#,
        "t.json",
    )
    .unwrap();
    let policy = loaded.config.policy_config();
    let plugins = policy.plugins.unwrap();
    assert_eq!(plugins.deny, Some(vec!["crm".to_owned()]));
    let honcho = plugins.entries.unwrap().remove("honcho").unwrap();
    assert_eq!(
        honcho.tools.unwrap().deny,
        Some(vec!["honcho_write".to_owned()])
    );
    let keys: Vec<&str> = loaded.notices.iter().map(|n| n.key_path.as_str()).collect();
    assert_eq!(keys, vec!["plugins.load", "plugins.entries.honcho.config"]);

    let err = load_str("{\n  plugins: {\n    denny: [\"crm\"] } }", "t.json")
        .unwrap_err()
        .to_string();
    assert!(err.contains("t.json:3:5: plugins.denny"), "{err}");
    let err = load_str(
        "{ plugins: { entries: { crm: { tools: { allow: [] } } } } }",
        "t.json",
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("plugins.entries.crm.tools.allow"), "{err}");
}

/// An imported `channels` section's tool policies are kept, typed and
/// compiled into the group layer; its other settings are notices.
#[test]
fn channel_group_policies_load_and_deny_for_that_group() {
    let loaded = load_str(
        r#"{
  channels: {
    telegram: {
      botToken: "123:abc",
      dmPolicy: "pairing",
      groups: {
        "-100": { requireMention: true, tools: { deny: ["exec"] }, toolsBySender: { "id:owner": {} } },
      },
    },
  },
  agents: { list: [{ id: "main", tools: { toolsBySender: { "username:@Mallory": { deny: ["read"] } } } }] },
}"#,
        "t.json",
    )
    .unwrap();
    let keys: Vec<&str> = loaded.notices.iter().map(|n| n.key_path.as_str()).collect();
    assert_eq!(keys, ["channels.telegram", "channels.telegram.groups.-100"]);
    let engine = talon_tool_policy::PolicyEngine::new(&loaded.config.policy_config()).unwrap();
    let universe = talon_tool_policy::ToolUniverse::core();
    let mut ctx = talon_tool_policy::RunContext::new("main");
    ctx.message_provider = Some("telegram".into());
    ctx.group_id = Some("-100".into());
    let why = engine.check(&ctx, &universe, "exec");
    assert!(!why.allowed);
    let by = why.removed_by.unwrap();
    assert_eq!(
        (by.layer.as_str(), by.config_key.as_str()),
        ("group", "channels.telegram.groups.-100.tools.deny")
    );
    ctx.sender_id = Some("owner".into());
    assert!(engine.check(&ctx, &universe, "exec").allowed);
    ctx.group_id = Some("-200".into());
    ctx.sender_id = None;
    assert!(engine.check(&ctx, &universe, "exec").allowed);
    ctx.sender_username = Some("mallory".into());
    let by = engine.check(&ctx, &universe, "read").removed_by.unwrap();
    assert_eq!(
        (by.layer.as_str(), by.config_key.as_str()),
        (
            "sender",
            "agents.list[0].tools.toolsBySender.username:@Mallory.deny"
        )
    );
}

/// A bad channel policy is a load error at its key: a sender key that
/// names nobody or the same sender twice, an empty allow, an unknown key
/// inside a policy.
#[test]
fn bad_channel_policies_are_errors_at_their_keys() {
    let err = load_str(
        r#"{
  channels: { telegram: {
    toolsBySender: { "id:": { deny: ["exec"] }, "Bob": {}, "id:bob": { deny: ["read"] } },
    groups: { g: { tools: { allow: [] } }, h: { tools: { dney: ["exec"] } } },
  } },
}"#,
        "t.json",
    )
    .unwrap_err()
    .to_string();
    for want in [
        "t.json:3:22: channels.telegram.toolsBySender[\"id:\"]: `id:` needs a value after it",
        "channels.telegram.toolsBySender[\"id:bob\"]: names the same sender as `Bob`",
        "channels.telegram.groups.g.tools.allow: an empty allow list is refused",
        "channels.telegram.groups.h.tools.dney: unknown key `dney` (did you mean `deny`?)",
    ] {
        assert!(err.contains(want), "{want}\nnot in\n{err}");
    }
}
