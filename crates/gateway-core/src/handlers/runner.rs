//! `runner.*`: the connection a request came on subscribes to, or
//! completes, cron's agent runs.

use talon_gateway_protocol::{
    RunnerCompleteParams, RunnerCompleteResponse, RunnerStatus, RunnerSubscribeResponse,
};

use crate::dispatch::Caller;
use crate::rpc::RpcError;
use crate::runner::RunnerHub;

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
/// it.
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
        .map_err(RpcError::not_found)?;
    Ok(RunnerCompleteResponse { accepted: true })
}
