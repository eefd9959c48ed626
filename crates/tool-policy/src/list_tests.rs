use super::*;

#[test]
fn groups_expand_and_remember_the_entry() {
    let list = CompiledList::compile(&["group:fs", "BASH"]);
    assert_eq!(
        list.matching_entry(&ToolEntry::core("edit")),
        Some("group:fs")
    );
    assert_eq!(list.matching_entry(&ToolEntry::core("exec")), Some("exec"));
    assert_eq!(list.matching_entry(&ToolEntry::core("process")), None);
    assert_eq!(list.entries(), ["group:fs", "exec"]);
}

#[test]
fn plugin_entries_match_by_plugin_id() {
    let list = CompiledList::compile(&["bundle-mcp", "honcho"]);
    assert!(
        list.matching_entry(&ToolEntry::mcp("fs__read", "fs"))
            .is_some()
    );
    assert!(
        list.matching_entry(&ToolEntry::plugin("honcho_recall", "honcho"))
            .is_some()
    );
    assert!(
        list.matching_entry(&ToolEntry::plugin("other", "x"))
            .is_none()
    );
    let list = CompiledList::compile(&["group:plugins"]);
    assert!(
        list.matching_entry(&ToolEntry::plugin("other", "x"))
            .is_some()
    );
    assert!(list.matching_entry(&ToolEntry::core("read")).is_none());
}

#[test]
fn blanks_are_dropped() {
    let list = CompiledList::compile(&["  ", ""]);
    assert!(list.is_empty());
}
