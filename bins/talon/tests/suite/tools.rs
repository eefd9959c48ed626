use pretty_assertions::assert_eq;

use super::util::talon;

#[test]
fn list_json_and_profiles() {
    let r = talon(&["tools", "list", "--json"]);
    assert_eq!(r.code, 0);
    assert_eq!(r.json()["tools"].as_array().unwrap().len(), 42);
    let r = talon(&["tools", "list", "--profile", "minimal", "--json"]);
    let v = r.json();
    assert_eq!(v["tools"].as_array().unwrap().len(), 1);
    assert_eq!(v["tools"][0]["name"], "session_status");
    assert_eq!(talon(&["tools", "list", "--profile", "nope"]).code, 2);
    let human = talon(&["tools", "list"]);
    assert!(human.stdout.starts_with("TOOL"), "{}", human.stdout);
}

#[test]
fn catalog_tools_this_build_lacks_are_marked() {
    let v = talon(&["tools", "list", "--json"]).json();
    let tools = v["tools"].as_array().unwrap();
    let provided = |name: &str| {
        tools
            .iter()
            .find(|t| t["name"] == name)
            .map(|t| t["provided"].clone())
    };
    assert_eq!(provided("exec"), Some(serde_json::json!(true)));
    assert_eq!(provided("canvas"), Some(serde_json::json!(false)));
    let missing = tools.iter().filter(|t| t["provided"] == false).count();
    let gateway = talon_runtime::GATEWAY_CORE_TOOLS.len();
    assert_eq!(missing, talon_runtime::missing_core_tools().len() - gateway);
    // The gateway's own tools are in the build, provided by the gateway.
    for name in talon_runtime::GATEWAY_CORE_TOOLS {
        let t = tools.iter().find(|t| t["name"] == *name).unwrap();
        assert_eq!(t["provided"], true, "{t}");
        assert_eq!(t["providedBy"], "gateway", "{t}");
    }
    let exec = tools.iter().find(|t| t["name"] == "exec").unwrap();
    assert_eq!(exec["providedBy"], "runtime", "{exec}");
    let canvas = tools.iter().find(|t| t["name"] == "canvas").unwrap();
    assert_eq!(canvas["providedBy"], serde_json::Value::Null, "{canvas}");

    let human = talon(&["tools", "list"]).stdout;
    let row = human.lines().find(|l| l.starts_with("canvas ")).unwrap();
    assert!(row.contains(" no "), "{row}");
    let row = human
        .lines()
        .find(|l| l.starts_with("sessions_spawn "))
        .unwrap();
    assert!(row.contains(" gateway only "), "{row}");
    assert!(
        human.contains(&format!(
            "{gateway} of these 42 catalog tools are provided by the gateway only"
        )),
        "{human}"
    );
    assert!(
        human.contains(&format!(
            "{missing} of these 42 catalog tools are not in this build"
        )),
        "{human}"
    );

    // explain lists allowed tools no family provides; check says so too.
    let explain = talon(&["policy", "explain", "--json"]).json();
    let absent = explain["notInBuild"].as_array().unwrap();
    assert!(absent.iter().any(|t| t == "canvas"), "{explain}");
    assert!(!absent.iter().any(|t| t == "read"), "{explain}");
    let human = talon(&["policy", "explain"]).stdout;
    assert!(human.contains("not in this build ("), "{human}");
    let check = talon(&["policy", "check", "canvas"]);
    assert_eq!(check.code, 0);
    assert!(
        check.stdout.contains("not in this build"),
        "{}",
        check.stdout
    );
    let check = talon(&["policy", "check", "canvas", "--json"]).json();
    assert_eq!(check["provided"], false);
    let check = talon(&["policy", "check", "read", "--json"]).json();
    assert_eq!(check["provided"], true);
    assert!(!absent.iter().any(|t| t == "sessions_spawn"), "{explain}");
    let check = talon(&["policy", "check", "sessions_spawn", "--json"]).json();
    assert_eq!(check["provided"], true);
    assert_eq!(check["providedBy"], "gateway");
    let check = talon(&["policy", "check", "sessions_spawn"]);
    assert!(
        check.stdout.contains("provided by the gateway only"),
        "{}",
        check.stdout
    );
}

#[test]
fn schema_for_gemini_strips_keywords() {
    let r = talon(&[
        "tools",
        "schema",
        "web_fetch",
        "--provider",
        "google",
        "--json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    assert_eq!(v["dialect"], "gemini");
    assert_eq!(v["parameters"]["type"], "object");
    assert!(!v["parameters"].to_string().contains("minimum"));
    assert_eq!(
        talon(&["tools", "schema", "nope", "--provider", "openai"]).code,
        1
    );
    assert_eq!(talon(&["tools", "schema", "read"]).code, 2);
}
