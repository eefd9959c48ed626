//! What a server sends, decoded the way a live session decodes it, as
//! plain functions over bytes: the stdio frame guard ([`bound_stdout`])
//! and the conversion of a `tools/call` result ([`convert_call_result`]).
//! The fuzz targets and the tests hold these to their promises (every
//! valid JSON line stays valid JSON, nothing past the hard budget passes,
//! results are capped); the manager uses the same code through its
//! transports.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use serde_json::Value;
use talon_tool_catalog::{ToolError, ToolErrorCode, ToolResult};
use tokio::io::{AsyncRead, ReadBuf};

use crate::convert::convert_result;
use crate::frame::{FrameGuard, FrameLimits};

/// A server's stdout after the frame guard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoundedStdout {
    /// What reached the MCP client.
    pub bytes: Vec<u8>,
    /// Whether the guard closed the session (a line whose structure alone
    /// passed the hard budget); `bytes` is what passed before.
    pub closed: bool,
    /// The hard budget of one line for this cap.
    pub hard_line: usize,
}

/// Run `stdout` (everything a stdio server wrote) through the frame guard
/// of a server whose results are capped at `cap` bytes.
pub fn bound_stdout(stdout: &[u8], cap: usize) -> BoundedStdout {
    let limits = FrameLimits::for_output_cap(cap);
    let mut guard = FrameGuard::new(stdout, limits, Arc::new(Mutex::new(None)));
    let mut cx = Context::from_waker(Waker::noop());
    let mut bytes = Vec::new();
    let mut buf = vec![0u8; 8 * 1024];
    let closed = loop {
        let mut read = ReadBuf::new(&mut buf);
        // A byte slice is always ready, so the guard never pends.
        match Pin::new(&mut guard).poll_read(&mut cx, &mut read) {
            Poll::Ready(Ok(())) if read.filled().is_empty() => break false,
            Poll::Ready(Ok(())) => bytes.extend_from_slice(read.filled()),
            Poll::Ready(Err(_)) | Poll::Pending => break true,
        }
    };
    BoundedStdout {
        bytes,
        closed,
        hard_line: limits.hard_line,
    }
}

/// Convert the `result` of a `tools/call` response (the JSON a server
/// sent) into a Talon result, capped at `cap` bytes. A result that is not
/// an MCP `CallToolResult` is `mcp.call_failed`; a tool-level error is
/// `mcp.tool_error`.
pub fn convert_call_result(
    result: Value,
    server: &str,
    tool: &str,
    cap: usize,
) -> Result<ToolResult, ToolError> {
    let parsed = serde_json::from_value(result).map_err(|e| {
        ToolError::new(
            ToolErrorCode::McpCallFailed,
            format!(
                "mcp server `{server}` sent a `{tool}` result that is not a CallToolResult: {e}"
            ),
        )
    })?;
    convert_result(parsed, server, tool, cap)
}

#[cfg(test)]
#[path = "wire_tests.rs"]
mod tests;
