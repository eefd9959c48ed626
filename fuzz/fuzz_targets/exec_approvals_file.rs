//! `<state>/exec-approvals.json`: parsed and checked (every pattern
//! compiled) or refused with its path and position.
#![no_main]

use libfuzzer_sys::fuzz_target;
use talon_hooks::exec_approvals::ExecApprovalsStore;

fuzz_target!(|text: &str| {
    let store = ExecApprovalsStore::new("/nonexistent/exec-approvals.json");
    if let Err(e) = store.parse(text) {
        let _ = e.to_string();
    }
});
