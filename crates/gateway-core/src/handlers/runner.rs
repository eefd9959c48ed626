//! `runner.*`: the connection a request came on subscribes to, or
//! completes, cron's agent runs.

use talon_gateway_protocol::{
    RunnerCompleteParams, RunnerCompleteResponse, RunnerStatus, RunnerSubscribeResponse,
};

use crate::dispatch::Caller;
use crate::rpc::{FORBIDDEN, NOT_FOUND, RpcError};
use crate::runner::{RunnerError, RunnerHub};

/// `runner.subscribe`.
pub(crate) fn subscribe(
    hub: &RunnerHub,
    caller: &Caller,
) -> Result<RunnerSubscribeResponse, RpcError> {
    let out = caller
        .out
        .clone()
        .ok_or_else(|| RpcError::params("runner.subscribe needs a WebSocket connection"))?;
    hub.subscribe(out);
    Ok(RunnerSubscribeResponse {
        subscribed: true,
        runners: hub.count(),
    })
}

/// `runner.complete`: only the connection a run was handed to may finish
/// it, and only while it is in flight. A refusal carries
/// `data.errorCode` (`runner.run_timed_out`, `runner.run_cancelled`,
/// `runner.run_already_completed`, `runner.run_unknown`,
/// `runner.run_not_yours`) and `data.runId`.
pub(crate) fn complete(
    hub: &RunnerHub,
    caller: &Caller,
    p: RunnerCompleteParams,
) -> Result<RunnerCompleteResponse, RpcError> {
    let conn = caller.out.as_ref().map_or(0, |o| o.id);
    let result = match p.status {
        RunnerStatus::Ok => Ok(talon_cron::RunReport {
            status: talon_cron::RunReportStatus::Ok,
            summary: p.summary,
        }),
        RunnerStatus::Skipped => Ok(talon_cron::RunReport {
            status: talon_cron::RunReportStatus::Skipped,
            summary: p.summary,
        }),
        RunnerStatus::Error => Err(talon_cron::RunFailure::new(
            p.error
                .unwrap_or_else(|| "the runner reported an error".into()),
        )),
    };
    hub.complete(conn, &p.run_id, result)
        .map_err(|e| runner_error(&e))?;
    Ok(RunnerCompleteResponse { accepted: true })
}

/// The wire error of a refused `runner.complete`.
fn runner_error(e: &RunnerError) -> RpcError {
    let code = match e {
        RunnerError::NotYours { .. } => FORBIDDEN,
        RunnerError::TimedOut { .. }
        | RunnerError::Cancelled { .. }
        | RunnerError::AlreadyCompleted { .. }
        | RunnerError::Unknown { .. } => NOT_FOUND,
    };
    RpcError::new(code, e.to_string()).with_data(
        serde_json::json!({"errorCode": e.code(), "runId": e.run_id(), "param": "runId"}),
    )
}
