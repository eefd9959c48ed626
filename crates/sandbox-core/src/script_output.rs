//! Running a backend script to completion: the argv every backend uses, and
//! collecting a launched script's output with a cap and a deadline.

use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWriteExt as _};

use crate::backend::ScriptOutput;
use crate::error::SandboxError;
use crate::process::LaunchedProcess;

/// The most output a backend script may produce on one stream (a script
/// that goes over is killed and its run fails).
pub const SCRIPT_MAX_OUTPUT_BYTES: usize = 100 * 1024 * 1024;

/// `sh -c SCRIPT talon-sandbox ARGS...`: the script sees `ARGS` as `$1…`,
/// never spliced into its text.
pub fn script_argv(script: &str, args: &[String]) -> Vec<String> {
    let mut argv = vec![
        "/bin/sh".to_owned(),
        "-c".to_owned(),
        script.to_owned(),
        "talon-sandbox".to_owned(),
    ];
    argv.extend(args.iter().cloned());
    argv
}

/// Feed `stdin` to a launched script, read its stdout and stderr (each
/// capped at [`SCRIPT_MAX_OUTPUT_BYTES`]) and wait for its exit, all within
/// `timeout`. Past the deadline, or over the cap, the script is killed
/// (its whole process group, as its launcher kills) and the run fails.
/// `place` names where it ran in errors (`in container X`, `on the remote
/// host`).
pub async fn collect_script(
    process: LaunchedProcess,
    stdin: Option<Vec<u8>>,
    timeout: Duration,
    place: &str,
) -> Result<ScriptOutput, SandboxError> {
    let LaunchedProcess {
        stdin: input,
        stdout,
        stderr,
        control,
    } = process;
    let work = async {
        let feed = async {
            if let Some(mut input) = input {
                if let Some(data) = stdin {
                    // A script that exits without reading its stdin closes
                    // the pipe; that is not an error.
                    let _ = input.write_all(&data).await;
                }
                let _ = input.shutdown().await;
            }
        };
        let (_, out, err) = tokio::join!(feed, read_capped(stdout, place), async {
            match stderr {
                Some(stderr) => read_capped(stderr, place).await,
                None => Ok(Vec::new()),
            }
        });
        let (stdout, stderr) = (out?, err?);
        let status = control.wait().await?;
        Ok::<_, SandboxError>(ScriptOutput {
            stdout,
            stderr,
            status,
        })
    };
    match tokio::time::timeout(timeout, work).await {
        Ok(Ok(out)) => Ok(out),
        Ok(Err(e)) => {
            control.kill().await?;
            Err(e)
        }
        Err(_) => {
            control.kill().await?;
            Err(SandboxError::timeout(format!(
                "script {place} ran past {:.1} s and was killed (its whole process group)",
                timeout.as_secs_f64()
            )))
        }
    }
}

async fn read_capped(
    mut reader: impl AsyncRead + Unpin,
    place: &str,
) -> Result<Vec<u8>, SandboxError> {
    let mut buf = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let n = reader.read(&mut chunk).await.map_err(|e| {
            SandboxError::io(format!("reading the output of a script {place}: {e}")).with_source(e)
        })?;
        if n == 0 {
            return Ok(buf);
        }
        if buf.len() + n > SCRIPT_MAX_OUTPUT_BYTES {
            return Err(SandboxError::exec(format!(
                "the output of a script {place} exceeded {} MiB; the script was killed",
                SCRIPT_MAX_OUTPUT_BYTES / (1024 * 1024)
            )));
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}
