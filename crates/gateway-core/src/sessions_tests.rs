#![allow(clippy::unwrap_used, clippy::expect_used)]

use talon_runtime::RuntimeBuilder;
use talon_tool_policy::PolicyConfig;

use super::*;

/// A runtime without a configuration: nothing is sandboxed unless forced.
fn off() -> Runtime {
    RuntimeBuilder::new(PolicyConfig::default())
        .build()
        .unwrap()
}

fn configured(text: &str) -> Runtime {
    let config = talon_config::load_str(text, "talon.json").unwrap().config;
    RuntimeBuilder::from_config(&config, std::path::Path::new("/"))
        .unwrap()
        .build()
        .unwrap()
}

#[test]
fn the_runtime_decides_whether_a_session_is_sandboxed() {
    let rt = configured(r#"{ agents: { defaults: { sandbox: { mode: "non-main" } } } }"#);
    let mk = |key: Option<&str>| {
        build_session(
            SessionParams {
                session_key: key.map(str::to_owned),
                ..SessionParams::default()
            },
            "main",
            &rt,
            None,
            "k1",
            None,
        )
        .unwrap()
    };
    // A gateway-made key and a group key are not the main session.
    assert!(mk(None).info.sandboxed);
    assert!(mk(Some("agent:main:telegram:group:42")).info.sandboxed);
    assert!(!mk(Some("agent:main:main")).info.sandboxed);
    assert!(!mk(Some("main")).info.sandboxed);
    // The session never forces anything itself.
    assert!(
        !mk(Some("agent:main:telegram:group:42"))
            .spec
            .context
            .sandboxed
    );
}

#[test]
fn main_session_keys() {
    let m = talon_config::MainSession::default();
    assert_eq!(
        main_session_agent("main", "ops", &m).as_deref(),
        Some("ops")
    );
    assert_eq!(
        main_session_agent(" MAIN ", "ops", &m).as_deref(),
        Some("ops")
    );
    assert_eq!(main_session_agent("", "ops", &m).as_deref(), Some("ops"));
    assert_eq!(
        main_session_agent("agent:dev:main", "ops", &m).as_deref(),
        Some("dev")
    );
    assert_eq!(main_session_agent("agent:dev:other", "ops", &m), None);
    assert_eq!(main_session_agent("agent:a:b:main", "ops", &m), None);
    assert_eq!(main_session_agent("agent::main", "ops", &m), None);
    assert_eq!(main_session_agent("s1", "ops", &m), None);
    // `session.mainKey` names the main session too; `main` stays an alias.
    let work = talon_config::MainSession::new(Some("work"), false);
    assert_eq!(
        main_session_agent("work", "ops", &work).as_deref(),
        Some("ops")
    );
    assert_eq!(
        main_session_agent("agent:dev:work", "ops", &work).as_deref(),
        Some("dev")
    );
    assert_eq!(
        main_session_agent("agent:dev:main", "ops", &work).as_deref(),
        Some("dev")
    );
    assert_eq!(main_session_agent("agent:dev:other", "ops", &work), None);
}

#[test]
fn a_session_binds_its_context_and_a_child_is_capped_by_its_parent() {
    let params = SessionParams {
        session_key: Some("s1".into()),
        agent_id: Some("Dev".into()),
        provider: Some("openai".into()),
        sender: Some("u1".into()),
        sender_is_owner: Some(false),
        group: Some("g1".into()),
        trigger: Some(SessionTrigger::Cron),
        ..SessionParams::default()
    };
    let s = build_session(params, "main", &off(), None, "abc", None).unwrap();
    assert_eq!(s.info.agent_id, "dev");
    assert_eq!(s.spec.context.session_key, "s1");
    assert_eq!(s.spec.context.model_provider.as_deref(), Some("openai"));
    assert_eq!(s.spec.context.sender_is_owner, Some(false));
    assert_eq!(s.spec.context.group_id.as_deref(), Some("g1"));
    assert_eq!(s.spec.context.trigger, Trigger::Cron);
    assert!(s.spec.context.subagent.is_none());

    let parent_tools = vec!["read".to_owned(), "session_status".to_owned()];
    let child = SessionParams {
        parent_session_key: Some("s1".into()),
        leaf: Some(true),
        ..SessionParams::default()
    };
    let c = build_session(
        child,
        "main",
        &off(),
        Some((&s, &parent_tools)),
        "def",
        None,
    )
    .unwrap();
    assert_eq!(c.info.session_key, "agent:main:gw:def");
    assert_eq!(
        c.spec.context.inherited.as_deref(),
        Some(parent_tools.as_slice())
    );
    assert_eq!(c.spec.context.subagent, Some(SubagentKind::Leaf));
}

#[test]
fn bad_keys_and_agents_are_refused() {
    for params in [
        SessionParams {
            session_key: Some("  ".into()),
            ..SessionParams::default()
        },
        SessionParams {
            session_key: Some("a\u{7}b".into()),
            ..SessionParams::default()
        },
        SessionParams {
            agent_id: Some("x".repeat(200)),
            ..SessionParams::default()
        },
    ] {
        assert!(build_session(params, "main", &off(), None, "k", None).is_err());
    }
}

#[test]
fn the_registry_is_bounded_and_idempotent() {
    let reg = SessionRegistry::default();
    let rt = off();
    let mk = |key: &str, model: Option<&str>| {
        build_session(
            SessionParams {
                session_key: Some(key.into()),
                model: model.map(str::to_owned),
                ..SessionParams::default()
            },
            "main",
            &rt,
            None,
            "k",
            None,
        )
        .unwrap()
    };
    reg.insert(mk("a", None), 2).unwrap();
    // The same parameters again: the existing session.
    reg.insert(mk("a", None), 2).unwrap();
    // Other parameters under the same key: refused.
    assert!(reg.insert(mk("a", Some("m")), 2).is_err());
    reg.insert(mk("b", None), 2).unwrap();
    let full = reg.insert(mk("c", None), 2).unwrap_err();
    assert_eq!(full.code, crate::rpc::UNAVAILABLE);
    assert_eq!(reg.len(), 2);
    assert!(reg.remove("a").is_some());
    assert!(reg.get("a").is_none());
}

#[test]
fn a_child_is_never_less_confined_than_its_sandboxed_parent() {
    let rt = configured(
        r#"{ agents: {
            defaults: { sandbox: { mode: "non-main", workspaceAccess: "none" } },
            list: [
              { id: "main" },
              { id: "open", sandbox: { mode: "off" } },
              { id: "rw", sandbox: { mode: "all", workspaceAccess: "rw" } },
            ],
        } }"#,
    );
    let parent = build_session(
        SessionParams {
            session_key: Some("agent:main:telegram:group:1".into()),
            ..SessionParams::default()
        },
        "main",
        &rt,
        None,
        "p",
        None,
    )
    .unwrap();
    assert!(parent.info.sandboxed);
    let tools = vec!["exec".to_owned(), "read".to_owned()];
    let child = |key: Option<&str>, agent: Option<&str>| {
        build_session(
            SessionParams {
                session_key: key.map(str::to_owned),
                agent_id: agent.map(str::to_owned),
                parent_session_key: Some("agent:main:telegram:group:1".into()),
                ..SessionParams::default()
            },
            "main",
            &rt,
            Some((&parent, &tools)),
            "c",
            None,
        )
    };
    // The agent's main key would run on the host: refused.
    let err = child(Some("main"), None).unwrap_err();
    assert_eq!(err.code, crate::rpc::INVALID_PARAMS);
    assert_eq!(
        err.data.as_ref().unwrap()["errorCode"],
        serde_json::json!("child_unsandboxed")
    );
    assert!(
        err.message.contains("would run unsandboxed"),
        "{}",
        err.message
    );
    // Another agent whose sandbox is off: refused.
    let err = child(None, Some("open")).unwrap_err();
    assert_eq!(
        err.data.as_ref().unwrap()["errorCode"],
        serde_json::json!("child_unsandboxed")
    );
    // Another agent with more workspace access: refused, naming it.
    let err = child(None, Some("rw")).unwrap_err();
    assert_eq!(
        err.data.as_ref().unwrap()["errorCode"],
        serde_json::json!("child_sandbox_wider")
    );
    assert!(err.message.contains("workspaceAccess"), "{}", err.message);
    // A non-main key of the same agent keeps the parent's sandbox.
    let ok = child(None, None).unwrap();
    assert!(ok.info.sandboxed);
    assert_eq!(ok.spec.parent_context.as_ref(), Some(&parent.spec.context));
}

#[test]
fn cron_run_keys_are_recognised_whatever_their_case() {
    assert!(is_cron_run_key("agent:main:cron:job-1:run:cronrun-2"));
    assert!(is_cron_run_key(" Agent:Main:CRON:j:RUN:r "));
    for key in [
        "main",
        "agent:main:main",
        "agent:main:cron:job-1",
        "cron:job:run:x",
        "agent:main:gw:abc",
    ] {
        assert!(!is_cron_run_key(key), "{key}");
    }
}

/// A cron run's session takes its agent, trigger, job and cap from the
/// binding; a parent narrows the cap further, never widens it; another
/// agent or trigger is refused.
#[test]
fn a_cron_run_session_takes_its_cap_from_the_binding() {
    let binding = CronRunBinding {
        run_id: "cronrun-1".into(),
        job_id: "job-1".into(),
        agent_id: "main".into(),
        session_key: "agent:main:cron:job-1:run:cronrun-1".into(),
        tools: Some(vec!["read".into(), "Session_Status".into()]),
    };
    let s = build_cron_run_session(
        SessionParams {
            session_key: Some(binding.session_key.to_uppercase()),
            ..SessionParams::default()
        },
        &binding,
        "main",
        &off(),
        None,
        "k",
        None,
    )
    .unwrap();
    assert_eq!(s.info.session_key, binding.session_key);
    assert_eq!(s.spec.context.trigger, Trigger::Cron);
    assert_eq!(s.spec.cron_job_id.as_deref(), Some("job-1"));
    assert_eq!(s.spec.run_id.as_deref(), Some("cronrun-1"));
    assert_eq!(
        s.spec.context.inherited,
        Some(vec!["read".to_owned(), "session_status".to_owned()])
    );
    let parent_tools = vec!["session_status".to_owned(), "exec".to_owned()];
    let child = build_cron_run_session(
        SessionParams {
            session_key: Some(binding.session_key.clone()),
            ..SessionParams::default()
        },
        &binding,
        "main",
        &off(),
        Some((&s, &parent_tools)),
        "k2",
        None,
    )
    .unwrap();
    assert_eq!(
        child.spec.context.inherited,
        Some(vec!["session_status".to_owned()])
    );
    for (params, param) in [
        (
            SessionParams {
                agent_id: Some("other".into()),
                ..SessionParams::default()
            },
            "agentId",
        ),
        (
            SessionParams {
                trigger: Some(SessionTrigger::User),
                ..SessionParams::default()
            },
            "trigger",
        ),
    ] {
        let err = build_cron_run_session(params, &binding, "main", &off(), None, "k3", None)
            .err()
            .unwrap();
        assert_eq!(err.data.as_ref().unwrap()["param"], param, "{err}");
    }
}
