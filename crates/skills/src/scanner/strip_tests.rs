use pretty_assertions::assert_eq;

use super::*;

fn lines(s: &str) -> usize {
    s.matches('\n').count()
}

#[test]
fn js_comments_removed_newlines_kept() {
    let src = "a(); // x\n/* one\ntwo */ b();\nconst s = '// kept';\nconst r = /\\/\\//g;\n";
    let out = strip_comments(Lang::Js, src);
    assert_eq!(
        out,
        "a(); \n\n b();\nconst s = '// kept';\nconst r = /\\/\\//g;\n"
    );
    assert_eq!(lines(&out), lines(src));
}

#[test]
fn js_template_and_division() {
    let src = "const t = `a ${b /* c */} // d`; x = a / b; // e\n";
    let out = strip_comments(Lang::Js, src);
    assert_eq!(out, "const t = `a ${b } // d`; x = a / b; \n");
}

#[test]
fn python_comments_and_strings() {
    let src = "x = '#no'  # yes\ns = \"\"\"\n# doc\n\"\"\"\nf\"{a['#']}\" # c\n";
    let out = strip_comments(Lang::Python, src);
    assert_eq!(
        out,
        "x = '#no'  \ns = \"\"\"\n# doc\n\"\"\"\nf\"{a['#']}\" \n"
    );
}

#[test]
fn shell_comments_quotes_and_heredocs() {
    let src = "echo a#b '#x' \"#y\" ${#z} # c\ncat <<EOF\n# data\nEOF\n# gone\n";
    let out = strip_comments(Lang::Shell, src);
    assert_eq!(
        out,
        "echo a#b '#x' \"#y\" ${#z} \ncat <<EOF\n# data\nEOF\n\n"
    );
    assert_eq!(lines(&out), lines(src));
}

#[test]
fn continued_lines_join_and_keep_the_line_count() {
    let src = "a \\\nb \\\r\nc\nd\\\\\ne\n";
    let out = join_continued_lines(src);
    assert_eq!(out, "a  b  c\n\n\nd\\\\\ne\n");
    assert_eq!(lines(&out), lines(src));
    assert_eq!(join_continued_lines("x \\"), "x \\");
}

#[test]
fn an_open_pipeline_or_list_continues_on_the_next_line() {
    assert_eq!(
        join_continued_lines("curl -s https://x |\n  sh\nnext"),
        "curl -s https://x |   sh\n\nnext"
    );
    assert_eq!(
        join_continued_lines("make &&\n./run\n"),
        "make && ./run\n\n"
    );
    // Markdown table rows end in `|` and stay apart.
    assert_eq!(
        join_continued_lines("| a | curl |\n| b | sh |\n"),
        "| a | curl |\n| b | sh |\n"
    );
}
