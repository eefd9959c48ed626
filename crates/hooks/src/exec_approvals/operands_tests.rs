use pretty_assertions::assert_eq;

use super::*;

/// The operand paths of `command`, asserting nothing was unpinnable.
fn paths(command: &str) -> Vec<String> {
    let found = file_operands(command);
    assert!(
        found.unpinnable.is_empty(),
        "{command}: {:?}",
        found.unpinnable
    );
    found.operands.into_iter().map(|o| o.path).collect()
}

fn unpinnable(command: &str) -> Vec<String> {
    file_operands(command).unpinnable
}

#[test]
fn interpreters_give_their_script() {
    assert_eq!(paths("python run.py"), ["run.py"]);
    assert_eq!(paths("python3 -u -W ignore run.py --flag x"), ["run.py"]);
    assert_eq!(paths("python3.12 -X dev tool"), ["tool"]);
    assert_eq!(paths("node x.js arg"), ["x.js"]);
    assert_eq!(
        paths("node --inspect -r ./hook.js app"),
        ["./hook.js", "app"]
    );
    assert_eq!(paths("bash s.sh"), ["s.sh"]);
    assert_eq!(paths("sh -e -o pipefail build"), ["build"]);
    assert_eq!(paths("perl -w x.pl"), ["x.pl"]);
    assert_eq!(paths("ruby -I lib main"), ["main"]);
    assert_eq!(paths("php -f index"), ["index"]);
    assert_eq!(paths("awk -f prog data"), ["prog"]);
    assert_eq!(paths("deno run --allow-read main"), ["main"]);
    // A program named by a path is pinned too, interpreter or not.
    assert_eq!(
        paths("/usr/bin/python3 /opt/job"),
        ["/usr/bin/python3", "/opt/job"]
    );
}

#[test]
fn inline_code_is_not_a_file() {
    assert_eq!(paths("python -c 'print(1)'"), Vec::<String>::new());
    assert_eq!(paths("python -m http.server"), Vec::<String>::new());
    assert_eq!(paths("python3 -uc 'import os'"), Vec::<String>::new());
    assert_eq!(paths("node -e 'x()'"), Vec::<String>::new());
    assert_eq!(paths("perl -e 'print 1' file"), Vec::<String>::new());
    assert_eq!(paths("echo hi"), Vec::<String>::new());
    assert_eq!(paths("ls -la /tmp"), Vec::<String>::new());
}

#[test]
fn a_shell_c_string_is_read_as_a_command() {
    assert_eq!(paths("sh -c 'echo hi'"), Vec::<String>::new());
    assert_eq!(paths("bash -c 'python3 run.py'"), ["run.py"]);
    assert_eq!(paths("sh -c \"cd sub && ./go\""), ["./go", "sub/./go"]);
}

#[test]
fn programs_by_path_and_sourced_files() {
    assert_eq!(paths("./x"), ["./x"]);
    assert_eq!(paths("bin/tool --help"), ["bin/tool"]);
    assert_eq!(paths("source env.sh"), ["env.sh"]);
    assert_eq!(paths(". ./profile"), ["./profile"]);
}

#[test]
fn hostile_spellings_are_read_like_sh() {
    assert_eq!(paths("FOO=1 python x.py"), ["x.py"]);
    assert_eq!(paths("A=1 B='2 3' exec python x.py"), ["x.py"]);
    assert_eq!(paths("env python x"), ["x"]);
    assert_eq!(paths("env -i -u HOME PATH=/bin python3 x"), ["x"]);
    assert_eq!(paths("exec -a name bash s"), ["s"]);
    assert_eq!(
        paths("nice -n 5 nohup timeout -s KILL 10 python3 job"),
        ["job"]
    );
    assert_eq!(paths("sudo -u root bash s"), ["s"]);
    assert_eq!(paths("command python x"), ["x"]);
    assert_eq!(paths("py'thon' \"r\"un.py"), ["run.py"]);
    assert_eq!(paths("p\\ython ru\\n.py"), ["run.py"]);
    assert_eq!(paths("env -S 'python3 -u' job"), ["job"]);
    assert_eq!(
        paths("echo ok; python a.py && node b.js | bash c.sh"),
        ["a.py", "b.js", "c.sh"]
    );
    assert_eq!(paths("echo $(python3 inner.py)"), ["inner.py"]);
    assert_eq!(paths("echo `bash inner.sh`"), ["inner.sh"]);
    assert_eq!(paths("python x.py > out.log 2>&1"), ["x.py"]);
    assert_eq!(paths("(cd sub; python x)"), ["x", "sub/x"]);
}

#[test]
fn script_like_words_are_pinned_wherever_they_appear() {
    assert_eq!(paths("cat helper.sh"), ["helper.sh"]);
    assert_eq!(paths("xargs -n1 ./each"), ["./each"]);
    assert_eq!(paths("curl https://x.example/a.sh"), Vec::<String>::new());
}

#[test]
fn unknown_interpreter_options_pin_every_later_argument() {
    assert_eq!(paths("python3 --weird-flag a b"), ["a", "b"]);
    assert_eq!(paths("lua -l mod script data"), ["mod", "script", "data"]);
}

#[test]
fn what_is_expanded_at_run_time_is_unpinnable() {
    assert!(!unpinnable("python \"$F\"").is_empty());
    assert!(!unpinnable("./$x").is_empty());
    assert!(!unpinnable("bash ~/s.sh").is_empty());
    assert!(!unpinnable("source $HOME/.env").is_empty());
    assert!(!unpinnable("cd \"$D\" && python x.py").is_empty());
    assert!(!unpinnable("python $'run.py'").is_empty());
    assert!(!unpinnable("sh -c \"$CMD\"").is_empty());
    // Not an operand position: an expanded argument is fine.
    assert!(unpinnable("echo $HOME").is_empty());
    assert!(unpinnable("python run.py --out=$HOME/x").is_empty());
}

#[test]
fn nesting_and_count_are_bounded() {
    let mut deep = "python x.py".to_owned();
    for _ in 0..=MAX_DEPTH + 1 {
        deep = format!("sh -c '{}'", deep.replace('\'', "'\\''"));
    }
    assert!(!unpinnable(&deep).is_empty(), "{deep}");
    let many: Vec<String> = (0..=MAX_OPERANDS).map(|i| format!("./s{i}")).collect();
    assert!(!unpinnable(&format!("echo {}", many.join(" "))).is_empty());
}

#[test]
fn hostile_input_never_panics() {
    for s in [
        "",
        "'",
        "\"",
        "\\",
        "$(",
        "`",
        "$'",
        "${",
        "(((",
        ")))",
        "python",
        "python -W",
        "env -S",
        "sh -c",
        "cd",
        ". ",
        "a\u{202e}b.py",
        "ü=1 python ü.py",
        "x 2>",
        "$((1+(2)))",
    ] {
        let _ = file_operands(s);
    }
}
