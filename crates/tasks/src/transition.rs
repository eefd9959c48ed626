//! Which state changes are allowed (facts §13, `task-registry.ts`).

use crate::record::TaskStatus;

/// Whether `from → to` is allowed; `Err` names the rule that refuses it.
///
/// - The same status always applies (an idempotent update).
/// - An active status (`queued`, `running`) may go anywhere.
/// - A terminal status never goes back to an active one.
/// - Terminal → terminal: only `succeeded` → anything but `lost`, and
///   `cancelled` → `succeeded` / `failed` / `timed_out` when the real
///   outcome happened before the cancellation (`outcome_predates_cancel`):
///   a cancellation tombstone is provisional.
pub fn check_transition(
    from: TaskStatus,
    to: TaskStatus,
    outcome_predates_cancel: bool,
) -> Result<(), &'static str> {
    use TaskStatus::*;
    if from == to || !from.is_terminal() {
        return Ok(());
    }
    if !to.is_terminal() {
        return Err("a finished task never becomes active again");
    }
    match (from, to) {
        (Succeeded, Lost) => Err("a succeeded task cannot be marked lost"),
        (Succeeded, _) => Ok(()),
        (Cancelled, Succeeded | Failed | TimedOut) if outcome_predates_cancel => Ok(()),
        (Cancelled, _) => {
            Err("a cancelled task only takes a real outcome that ended before the cancellation")
        }
        (Failed | TimedOut | Lost, _) => Err("this terminal status is final"),
        (Queued | Running, _) => Ok(()),
    }
}
