mod after_and_persist;
mod approvals;
mod command_hooks;
mod gate_merge;
mod gate_order;
mod support;
