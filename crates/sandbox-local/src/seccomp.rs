//! The seccomp filters every local sandbox runs under, compiled with
//! [`seccompiler`] and serialised to the raw `struct sock_filter` array
//! bubblewrap reads from a file descriptor (`--add-seccomp-fd`).
//!
//! Two filters, because one filter has one "match" action:
//!
//! - [`DENIED_SYSCALLS`] fail with `EPERM`: debugging other processes
//!   (`ptrace`, `process_vm_*`), mounting and namespace games (`mount`, the
//!   new mount API, `pivot_root`, `setns`, `unshare` / `clone` with
//!   `CLONE_NEWUSER`), kernel attack surface (`bpf`, `io_uring_*`,
//!   `userfaultfd`, `perf_event_open`, the key ring), and host-wide
//!   operations (`kexec_*`, modules, `reboot`, swap, `quotactl`,
//!   `open_by_handle_at`). On x86_64 every x32-ABI syscall number
//!   (`nr >= 0x4000_0000`) is refused too, so the same calls cannot be
//!   reached by their x32 numbers; any other architecture than the host's
//!   kills the process.
//! - `clone3` fails with `ENOSYS`: its flags sit in a struct a filter cannot
//!   read, and `ENOSYS` makes the C library fall back to `clone`, whose
//!   flags the first filter checks.

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};
use talon_sandbox_core::SandboxError;

/// Syscalls refused with `EPERM` inside a local sandbox (`unshare` and
/// `clone` only when their flags ask for a new user namespace).
pub const DENIED_SYSCALLS: &[&str] = &[
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "mount",
    "umount2",
    "pivot_root",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "setns",
    "unshare(CLONE_NEWUSER)",
    "clone(CLONE_NEWUSER)",
    "bpf",
    "keyctl",
    "add_key",
    "request_key",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "userfaultfd",
    "perf_event_open",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "reboot",
    "swapon",
    "swapoff",
    "quotactl",
    "open_by_handle_at",
    "acct",
];

/// The x32 ABI marks its syscall numbers with this bit.
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

fn syscall_number(name: &str) -> Option<i64> {
    let nr = match name {
        "ptrace" => libc::SYS_ptrace,
        "process_vm_readv" => libc::SYS_process_vm_readv,
        "process_vm_writev" => libc::SYS_process_vm_writev,
        "mount" => libc::SYS_mount,
        "umount2" => libc::SYS_umount2,
        "pivot_root" => libc::SYS_pivot_root,
        "move_mount" => libc::SYS_move_mount,
        "open_tree" => libc::SYS_open_tree,
        "fsopen" => libc::SYS_fsopen,
        "fsconfig" => libc::SYS_fsconfig,
        "fsmount" => libc::SYS_fsmount,
        "fspick" => libc::SYS_fspick,
        "mount_setattr" => libc::SYS_mount_setattr,
        "setns" => libc::SYS_setns,
        "unshare(CLONE_NEWUSER)" => libc::SYS_unshare,
        "clone(CLONE_NEWUSER)" => libc::SYS_clone,
        "bpf" => libc::SYS_bpf,
        "keyctl" => libc::SYS_keyctl,
        "add_key" => libc::SYS_add_key,
        "request_key" => libc::SYS_request_key,
        "io_uring_setup" => libc::SYS_io_uring_setup,
        "io_uring_enter" => libc::SYS_io_uring_enter,
        "io_uring_register" => libc::SYS_io_uring_register,
        "userfaultfd" => libc::SYS_userfaultfd,
        "perf_event_open" => libc::SYS_perf_event_open,
        "kexec_load" => libc::SYS_kexec_load,
        "kexec_file_load" => libc::SYS_kexec_file_load,
        "init_module" => libc::SYS_init_module,
        "finit_module" => libc::SYS_finit_module,
        "delete_module" => libc::SYS_delete_module,
        "reboot" => libc::SYS_reboot,
        "swapon" => libc::SYS_swapon,
        "swapoff" => libc::SYS_swapoff,
        "quotactl" => libc::SYS_quotactl,
        "open_by_handle_at" => libc::SYS_open_by_handle_at,
        "acct" => libc::SYS_acct,
        _ => return None,
    };
    Some(nr)
}

/// The compiled filters, as the bytes bubblewrap reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SeccompPrograms {
    /// [`DENIED_SYSCALLS`] → `EPERM`.
    pub(crate) deny: Vec<u8>,
    /// `clone3` → `ENOSYS`.
    pub(crate) clone3: Vec<u8>,
}

fn filter_error(e: impl std::fmt::Display) -> SandboxError {
    SandboxError::config(format!(
        "cannot compile the local sandbox's seccomp filter: {e}"
    ))
}

fn target_arch() -> Result<TargetArch, SandboxError> {
    TargetArch::try_from(std::env::consts::ARCH).map_err(|_| {
        SandboxError::config(format!(
            "the local sandbox backend has no seccomp filter for the {} architecture \
             (x86_64, aarch64 and riscv64 are supported); use backend \"docker\"",
            std::env::consts::ARCH
        ))
    })
}

/// The new-user-namespace bit of `unshare` / `clone` flags (argument 0 on
/// every supported architecture).
fn newuser_rule() -> Result<Vec<SeccompRule>, SandboxError> {
    let flag = libc::CLONE_NEWUSER as u64;
    let cond = SeccompCondition::new(
        0,
        SeccompCmpArgLen::Qword,
        SeccompCmpOp::MaskedEq(flag),
        flag,
    )
    .map_err(filter_error)?;
    Ok(vec![SeccompRule::new(vec![cond]).map_err(filter_error)?])
}

fn serialise(program: &BpfProgram) -> Vec<u8> {
    let mut out = Vec::with_capacity(program.len() * 8);
    for ins in program {
        out.extend_from_slice(&ins.code.to_ne_bytes());
        out.push(ins.jt);
        out.push(ins.jf);
        out.extend_from_slice(&ins.k.to_ne_bytes());
    }
    out
}

/// One raw BPF instruction, as `struct sock_filter` lays it out.
fn instruction(code: u16, jt: u8, jf: u8, k: u32) -> [u8; 8] {
    let mut out = [0u8; 8];
    out[..2].copy_from_slice(&code.to_ne_bytes());
    out[2] = jt;
    out[3] = jf;
    out[4..].copy_from_slice(&k.to_ne_bytes());
    out
}

/// Refuse every x32 syscall number before seccompiler's program runs (BPF
/// jumps are relative and forward only, so prepending keeps it intact).
fn x32_prefix() -> Vec<u8> {
    // BPF_LD | BPF_W | BPF_ABS.
    const LD_W_ABS: u16 = 0x20;
    // BPF_JMP | BPF_JGE | BPF_K.
    const JMP_JGE_K: u16 = 0x35;
    const RET_K: u16 = 0x06;
    const SECCOMP_RET_ERRNO: u32 = 0x0005_0000;
    let mut out = Vec::with_capacity(24);
    // Load the syscall number (offset 0 of struct seccomp_data).
    out.extend_from_slice(&instruction(LD_W_ABS, 0, 0, 0));
    // nr >= X32 bit: fall through to the refusal; else skip it.
    out.extend_from_slice(&instruction(JMP_JGE_K, 0, 1, X32_SYSCALL_BIT));
    out.extend_from_slice(&instruction(
        RET_K,
        0,
        0,
        SECCOMP_RET_ERRNO | libc::EPERM as u32,
    ));
    out
}

/// Compile both filters for the host architecture.
pub(crate) fn compile() -> Result<SeccompPrograms, SandboxError> {
    let arch = target_arch()?;
    let mut rules = std::collections::BTreeMap::new();
    for name in DENIED_SYSCALLS {
        let nr = syscall_number(name).ok_or_else(|| filter_error(format!("unknown {name}")))?;
        let chain = if name.contains("CLONE_NEWUSER") {
            newuser_rule()?
        } else {
            Vec::new()
        };
        rules.insert(nr, chain);
    }
    let deny = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(filter_error)?;
    let deny: BpfProgram = deny.try_into().map_err(filter_error)?;
    let clone3 = SeccompFilter::new(
        [(libc::SYS_clone3, Vec::new())].into_iter().collect(),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        arch,
    )
    .map_err(filter_error)?;
    let clone3: BpfProgram = clone3.try_into().map_err(filter_error)?;
    let mut deny_bytes = Vec::new();
    if cfg!(target_arch = "x86_64") {
        deny_bytes.extend(x32_prefix());
    }
    deny_bytes.extend(serialise(&deny));
    Ok(SeccompPrograms {
        deny: deny_bytes,
        clone3: serialise(&clone3),
    })
}

#[cfg(test)]
#[path = "seccomp_tests.rs"]
mod tests;
