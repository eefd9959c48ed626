use super::*;

#[test]
fn every_denied_name_has_a_number_and_both_filters_compile() {
    for name in DENIED_SYSCALLS {
        assert!(syscall_number(name).is_some(), "{name}");
    }
    let programs = compile().unwrap();
    // Whole `struct sock_filter`s (8 bytes each), ending in a return.
    for program in [&programs.deny, &programs.clone3] {
        assert!(!program.is_empty());
        assert_eq!(program.len() % 8, 0);
        let last = &program[program.len() - 8..];
        assert_eq!(u16::from_ne_bytes([last[0], last[1]]) & 0x07, 0x06);
    }
}

#[cfg(target_arch = "x86_64")]
#[test]
fn the_deny_filter_starts_by_refusing_x32_numbers() {
    let programs = compile().unwrap();
    assert_eq!(&programs.deny[..24], x32_prefix().as_slice());
    let jge = &programs.deny[8..16];
    assert_eq!(
        u32::from_ne_bytes([jge[4], jge[5], jge[6], jge[7]]),
        X32_SYSCALL_BIT
    );
}
