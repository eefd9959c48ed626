//! Reading a backend script's output with a cap, shared by the backends'
//! `run_script`.

use tokio::io::{AsyncRead, AsyncReadExt as _};

use crate::error::SandboxError;

/// The most output a backend script may produce on one stream (a script
/// that goes over is killed and its run fails).
pub const SCRIPT_MAX_OUTPUT_BYTES: usize = 100 * 1024 * 1024;

/// Read `reader` to its end, failing once more than
/// [`SCRIPT_MAX_OUTPUT_BYTES`] arrived; `what` names the stream's origin in
/// errors (`script`, `remote script`).
pub async fn read_script_output(
    mut reader: impl AsyncRead + Unpin,
    what: &str,
) -> Result<Vec<u8>, SandboxError> {
    let mut buf = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let n = reader
            .read(&mut chunk)
            .await
            .map_err(|e| SandboxError::Io(format!("reading {what} output: {e}")))?;
        if n == 0 {
            return Ok(buf);
        }
        if buf.len() + n > SCRIPT_MAX_OUTPUT_BYTES {
            return Err(SandboxError::Exec(format!(
                "{what} output exceeded {} MiB; the script was killed",
                SCRIPT_MAX_OUTPUT_BYTES / (1024 * 1024)
            )));
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}
