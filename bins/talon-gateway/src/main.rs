//! `talon-gateway`: the daemon (placeholder until its own issue).

fn main() -> std::process::ExitCode {
    use std::io::Write;
    let msg = "talon-gateway: not implemented yet (see issue 10)\n";
    let _ = std::io::stderr().write_all(msg.as_bytes());
    std::process::ExitCode::from(2)
}
