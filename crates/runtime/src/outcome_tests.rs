use pretty_assertions::assert_eq;
use talon_hooks::{BlockedCall, DeniedReason};
use talon_tool_catalog::{ResultStatus, ToolError, ToolErrorCode, ToolErrorKind, text_result};

use super::*;

fn completed(status: ResultStatus) -> InvokeOutcome {
    InvokeOutcome::Completed {
        result: text_result("out").with_status(status),
        params_rewritten: false,
        approval: None,
    }
}

fn row(
    o: &InvokeOutcome,
) -> (
    CallStatus,
    u16,
    Option<&'static str>,
    bool,
    Option<&'static str>,
) {
    let w = o.wire();
    (
        w.status,
        w.http_status,
        w.http_error_type,
        w.mcp_is_error,
        w.error_class,
    )
}

#[test]
fn every_error_kind_maps_to_one_row() {
    for kind in ToolErrorKind::ALL {
        let e = ToolError::new(ToolErrorCode::default_for(kind), "m");
        let expected = match kind {
            ToolErrorKind::Input => (CallStatus::Error, 400, "tool_error", "input"),
            ToolErrorKind::Unauthorized => (CallStatus::Error, 403, "unauthorized", "unauthorized"),
            ToolErrorKind::Aborted => (CallStatus::Cancelled, 503, "cancelled", "aborted"),
            ToolErrorKind::TimedOut => (CallStatus::Timeout, 504, "timeout", "timed_out"),
            ToolErrorKind::Unavailable => (CallStatus::Error, 503, "unavailable", "unavailable"),
            ToolErrorKind::Execution => (CallStatus::Error, 500, "tool_error", "execution"),
            _ => panic!("unmapped kind {kind:?}: add it to this table"),
        };
        let (status, http, ty, class) = expected;
        assert_eq!(
            row(&InvokeOutcome::Failed(e)),
            (status, http, Some(ty), true, Some(class)),
            "{kind:?}"
        );
    }
}

#[test]
fn every_code_follows_its_kind() {
    for &code in ToolErrorCode::ALL {
        let by_code = InvokeOutcome::Failed(ToolError::new(code, "m")).wire();
        let by_kind =
            InvokeOutcome::Failed(ToolError::new(ToolErrorCode::default_for(code.kind()), "m"))
                .wire();
        assert_eq!(by_code, by_kind, "{code}");
    }
}

#[test]
fn a_timeout_is_known_by_kind_not_by_text() {
    // The message says "timed out" but the kind is execution: an error.
    let e = ToolError::execution("the upstream said: timed out");
    assert_eq!(InvokeOutcome::Failed(e).status(), CallStatus::Error);
    // No such words, but the kind is timed out: a timeout.
    let e = ToolError::new(ToolErrorCode::McpTimeout, "no answer");
    assert_eq!(InvokeOutcome::Failed(e).status(), CallStatus::Timeout);
}

#[test]
fn completed_calls_take_the_result_status() {
    assert_eq!(
        row(&completed(ResultStatus::Ok)),
        (CallStatus::Ok, 200, None, false, None)
    );
    assert_eq!(
        row(&completed(ResultStatus::Failed)),
        (CallStatus::Error, 200, None, false, None)
    );
    assert_eq!(
        row(&completed(ResultStatus::TimedOut)),
        (CallStatus::Timeout, 200, None, false, None)
    );
}

#[test]
fn blocks_are_not_found_for_policy_and_forbidden_otherwise() {
    let policy = InvokeOutcome::Blocked(BlockedCall::new(DeniedReason::ToolPolicy, "removed"));
    assert_eq!(
        row(&policy),
        (CallStatus::Blocked, 404, Some("not_found"), true, None)
    );
    let hook = InvokeOutcome::Blocked(BlockedCall::new(DeniedReason::PluginBeforeToolCall, "no"));
    assert_eq!(
        row(&hook),
        (CallStatus::Blocked, 403, Some("blocked"), true, None)
    );
}

#[test]
fn status_strings_are_stable() {
    let s: Vec<&str> = CallStatus::ALL.iter().map(|s| s.as_str()).collect();
    assert_eq!(s, ["ok", "error", "blocked", "timeout", "cancelled"]);
}
