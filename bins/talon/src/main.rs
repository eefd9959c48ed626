//! `talon`: the policy and sandbox inspection CLI (work in progress: the
//! subcommands land with the config crate).

fn main() -> std::process::ExitCode {
    let catalog = talon_tool_catalog::core_tool_specs();
    let mut out = String::new();
    for spec in &catalog {
        out.push_str(&spec.name);
        out.push('\n');
    }
    use std::io::Write;
    if std::io::stdout().write_all(out.as_bytes()).is_err() {
        return std::process::ExitCode::from(2);
    }
    std::process::ExitCode::SUCCESS
}
