use pretty_assertions::assert_eq;

use super::*;

fn argvs(command: &str) -> Vec<Vec<String>> {
    let analysis = analyze(command);
    assert!(analysis.is_complete(), "{command:?} → {analysis:?}");
    analysis
        .segments
        .iter()
        .map(|s| match s {
            Segment::Command { argv } => argv.iter().map(|w| w.text.clone()).collect(),
            Segment::Opaque { .. } => unreachable!(),
        })
        .collect()
}

fn opaque(command: &str) -> OpaqueReason {
    let analysis = analyze(command);
    analysis
        .opaque_reason()
        .unwrap_or_else(|| panic!("{command:?} should be opaque, got {analysis:?}"))
}

#[test]
fn splits_lists_and_pipelines() {
    assert_eq!(argvs("ls -la"), vec![vec!["ls", "-la"]]);
    assert_eq!(
        argvs("ls; rm -rf ~/x && echo ok || true | wc -l & sleep 1"),
        vec![
            vec!["ls"],
            vec!["rm", "-rf", "~/x"],
            vec!["echo", "ok"],
            vec!["true"],
            vec!["wc", "-l"],
            vec!["sleep", "1"],
        ]
    );
    assert_eq!(argvs("a\nb\n\nc"), vec![vec!["a"], vec!["b"], vec!["c"]]);
    assert_eq!(argvs("a |& b"), vec![vec!["a"], vec!["b"]]);
    assert_eq!(
        argvs("(a; (b)) && c"),
        vec![vec!["a"], vec!["b"], vec!["c"]]
    );
    assert_eq!(argvs("a &&\n b"), vec![vec!["a"], vec!["b"]]);
    assert_eq!(argvs("a;"), vec![vec!["a"]]);
    assert_eq!(argvs("a &"), vec![vec!["a"]]);
}

#[test]
fn removes_quotes_and_escapes() {
    assert_eq!(
        argvs(r#"echo 'a b' "c d" e\ f "g\"h" 'i\j' "k\l" \$x"#),
        vec![vec![
            "echo", "a b", "c d", "e f", "g\"h", "i\\j", "k\\l", "$x"
        ]]
    );
    assert_eq!(
        argvs("echo 'a;b' \"c&&d\" e\\;f"),
        vec![vec!["echo", "a;b", "c&&d", "e;f"]]
    );
    assert_eq!(argvs("ec\\\nho hi"), vec![vec!["echo", "hi"]]);
    assert_eq!(argvs("echo '' x"), vec![vec!["echo", "", "x"]]);
    assert_eq!(argvs("echo a#b # comment; rm"), vec![vec!["echo", "a#b"]]);
    assert_eq!(argvs("echo $ 'x'"), vec![vec!["echo", "$", "x"]]);
}

#[test]
fn marks_expanded_arguments_inexact() {
    let analysis = analyze("ls *.txt ~ $HOME \"$1\" plain");
    let Segment::Command { argv } = &analysis.segments[0] else {
        panic!("{analysis:?}");
    };
    let exact: Vec<bool> = argv.iter().map(|w| w.exact).collect();
    assert_eq!(exact, vec![true, false, false, false, false, true]);
    assert!(analysis.is_complete());
}

#[test]
fn opaque_constructs() {
    for (command, reason) in [
        ("echo $(rm -rf ~)", OpaqueReason::CommandSubstitution),
        ("echo \"$(rm -rf ~)\"", OpaqueReason::CommandSubstitution),
        ("echo `rm -rf ~`", OpaqueReason::CommandSubstitution),
        ("echo \"`rm`\"", OpaqueReason::CommandSubstitution),
        ("echo $((1+2))", OpaqueReason::CommandSubstitution),
        ("echo ${HOME}", OpaqueReason::Expansion),
        ("echo $'\\x41'", OpaqueReason::Expansion),
        ("echo hi > /etc/passwd", OpaqueReason::Redirection),
        ("echo hi 2>&1", OpaqueReason::Redirection),
        ("cat <<EOF\nrm -rf ~\nEOF", OpaqueReason::Redirection),
        ("cat < x", OpaqueReason::Redirection),
        ("ls &> x", OpaqueReason::Redirection),
        ("diff <(ls) x", OpaqueReason::Redirection),
        ("PATH=/tmp ls", OpaqueReason::Assignment),
        ("LD_PRELOAD=x.so ls", OpaqueReason::Assignment),
        ("X=1", OpaqueReason::Assignment),
        ("if true; then rm; fi", OpaqueReason::Compound),
        ("{ ls; }", OpaqueReason::Compound),
        ("! ls", OpaqueReason::Compound),
        ("((x=1))", OpaqueReason::Compound),
        ("case x in x) ;; esac", OpaqueReason::Compound),
        ("eval 'rm -rf ~'", OpaqueReason::Evaluates),
        (". ./script", OpaqueReason::Evaluates),
        ("source x", OpaqueReason::Evaluates),
        ("exec rm", OpaqueReason::Evaluates),
        ("command rm", OpaqueReason::Evaluates),
        ("$CMD x", OpaqueReason::DynamicCommand),
        ("r* -rf", OpaqueReason::DynamicCommand),
        ("~/bin/x", OpaqueReason::DynamicCommand),
        ("echo 'unterminated", OpaqueReason::Syntax),
        ("echo \"unterminated", OpaqueReason::Syntax),
        ("echo x\\", OpaqueReason::Syntax),
        ("; ls", OpaqueReason::Syntax),
        ("ls ;; rm", OpaqueReason::Compound),
        ("ls && && rm", OpaqueReason::Syntax),
        ("ls &&", OpaqueReason::Syntax),
        ("| ls", OpaqueReason::Syntax),
        ("(ls", OpaqueReason::Syntax),
        ("ls)", OpaqueReason::Syntax),
        ("()", OpaqueReason::Syntax),
        ("(ls) rm", OpaqueReason::Syntax),
        ("ls (rm)", OpaqueReason::Syntax),
        ("f() { rm; }", OpaqueReason::Syntax),
    ] {
        assert_eq!(opaque(command), reason, "{command:?}");
    }
}

#[test]
fn empty_and_blank_commands_are_not_complete() {
    for command in ["", "   ", "\n\n", "# only a comment"] {
        assert!(!analyze(command).is_complete(), "{command:?}");
    }
}

#[test]
fn segments_before_an_opaque_part_are_kept() {
    let analysis = analyze("ls; echo $(id)");
    assert_eq!(analysis.segments.len(), 2);
    assert!(matches!(analysis.segments[0], Segment::Command { .. }));
    assert_eq!(
        analysis.segments[1],
        Segment::Opaque {
            reason: OpaqueReason::CommandSubstitution
        }
    );
}
