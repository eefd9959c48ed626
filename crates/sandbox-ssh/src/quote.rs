//! Quoting for the remote POSIX shell: every argument that reaches the
//! remote command line is single-quoted here, never interpolated.

use talon_sandbox_core::SandboxError;

/// `text` as one single-quoted POSIX shell word (`'` becomes `'\''`).
/// Refuses a NUL byte (it cannot travel in an argument).
pub fn shell_quote(text: &str) -> Result<String, SandboxError> {
    if text.contains('\0') {
        return Err(SandboxError::exec(
            "an argument for the remote command contains a NUL byte, which cannot be passed; \
             remove it"
                .to_owned(),
        ));
    }
    let mut out = String::with_capacity(text.len() + 2);
    out.push('\'');
    for c in text.chars() {
        if c == '\'' {
            out.push_str("'\\''");
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    Ok(out)
}

/// `program` (a fixed word of ours) followed by every argument quoted.
pub(crate) fn command_line(program: &str, args: &[String]) -> Result<String, SandboxError> {
    let mut line = program.to_owned();
    for arg in args {
        line.push(' ');
        line.push_str(&shell_quote(arg)?);
    }
    Ok(line)
}

#[cfg(test)]
#[path = "quote_tests.rs"]
mod tests;
