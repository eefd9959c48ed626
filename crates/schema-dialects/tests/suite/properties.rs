use proptest::prelude::*;
use serde_json::Map;
use serde_json::Value;
use serde_json::json;
use talon_schema_dialects::Dialect;
use talon_schema_dialects::NormalizeOptions;
use talon_schema_dialects::normalize_schema;

use super::util::schema_keywords;

const NAMES: &[&str] = &["a", "b", "format", "type", "pattern", "items", "$ref"];

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (-3i64..4).prop_map(Value::from),
        Just(json!(1.5)),
        "[a-c]{0,2}".prop_map(Value::from),
        Just(json!({"x": 1})),
        Just(json!([1])),
    ]
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!({})),
        Just(json!(true)),
        Just(json!({"type": "string", "minLength": 1, "format": "uri", "pattern": "^a"})),
        Just(json!({"type": "integer", "minimum": 0, "maximum": 9, "multipleOf": 3})),
        Just(json!({"type": "null"})),
        Just(json!({"type": "array"})),
        Just(json!({"type": "array", "items": {}, "minContains": 1, "maxContains": 2})),
        Just(json!({"type": ["string", "null"]})),
        Just(json!({"type": "string", "nullable": true, "example": "x"})),
        Just(json!({"properties": null})),
        prop::collection::vec(scalar(), 0..5).prop_map(|values| json!({"enum": values})),
        scalar().prop_map(|value| json!({"const": value})),
        prop::sample::select(vec!["A", "B", "C", "Missing"])
            .prop_map(|name| json!({"$ref": format!("#/$defs/{name}"), "description": "via ref"})),
        Just(json!({"$ref": "https://example.com/x.json"})),
        Just(json!({"$ref": "#/definitions/D", "nullable": true})),
    ]
}

fn schema() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(5, 48, 4, |inner| {
        prop_oneof![
            (
                prop::collection::vec((prop::sample::select(NAMES), inner.clone()), 0..4),
                prop::collection::vec(prop::sample::select(NAMES), 0..3),
                prop::option::of(prop_oneof![any::<bool>().prop_map(Value::from), inner.clone()]),
                any::<bool>(),
            )
                .prop_map(|(props, required, additional, typed)| {
                    let mut map = Map::new();
                    if typed {
                        map.insert("type".to_owned(), json!("object"));
                    }
                    let props: Map<String, Value> =
                        props.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
                    map.insert("properties".to_owned(), Value::Object(props));
                    if !required.is_empty() {
                        map.insert("required".to_owned(), json!(required));
                    }
                    if let Some(additional) = additional {
                        map.insert("additionalProperties".to_owned(), additional);
                    }
                    Value::Object(map)
                }),
            inner.clone().prop_map(|items| json!({"type": "array", "items": items, "minItems": 1})),
            (prop::sample::select(vec!["anyOf", "oneOf", "allOf"]), prop::collection::vec(inner.clone(), 0..4), any::<bool>())
                .prop_map(|(key, variants, nullable)| {
                    let mut map = Map::new();
                    map.insert(key.to_owned(), Value::Array(variants));
                    map.insert("description".to_owned(), json!("union"));
                    if nullable {
                        map.insert("nullable".to_owned(), json!(true));
                    }
                    Value::Object(map)
                }),
            inner.clone().prop_map(|not| json!({"type": "string", "not": not})),
            (inner.clone(), inner).prop_map(|(a, b)| json!({"type": "object", "properties": {"a": a}, "patternProperties": {"^x": b}})),
        ]
    })
}

/// A root schema, sometimes with definitions the references can hit.
fn root() -> impl Strategy<Value = Value> {
    (
        schema(),
        prop::option::of((schema(), schema(), schema(), schema())),
    )
        .prop_map(|(root, defs)| {
            let Some((a, b, c, d)) = defs else {
                return root;
            };
            let mut map = match root {
                Value::Object(map) => map,
                other => {
                    let mut map = Map::new();
                    map.insert("properties".to_owned(), json!({"wrapped": other}));
                    map
                }
            };
            map.insert("$defs".to_owned(), json!({"A": a, "B": b, "C": c}));
            map.insert("definitions".to_owned(), json!({"D": d}));
            Value::Object(map)
        })
}

fn options() -> impl Strategy<Value = NormalizeOptions> {
    (
        any::<bool>(),
        prop::collection::vec(
            prop::sample::select(vec![
                "description",
                "title",
                "minContains",
                "items",
                "enum",
                "default",
            ]),
            0..3,
        ),
    )
        .prop_map(|(omit, keywords)| NormalizeOptions {
            unsupported_keywords: keywords.into_iter().map(str::to_owned).collect(),
            omit_empty_array_items: omit,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn normalisation_is_total_idempotent_and_object_rooted(schema in root(), opts in options()) {
        for dialect in Dialect::ALL {
            let once = normalize_schema(&schema, dialect, &opts);
            prop_assert_eq!(once.schema.get("type"), Some(&json!("object")), "{}", dialect);
            prop_assert!(once.schema.get("properties").is_some_and(Value::is_object), "{}", dialect);
            let twice = normalize_schema(&once.schema, dialect, &opts);
            prop_assert_eq!(&twice, &once, "{} not idempotent", dialect);
            let required_empty = once.schema.get("required").and_then(Value::as_array).is_none_or(Vec::is_empty);
            prop_assert_eq!(once.empty_object_args, required_empty);
        }
    }

    #[test]
    fn gemini_output_never_has_stripped_keywords(schema in root(), opts in options()) {
        let out = normalize_schema(&schema, Dialect::Gemini, &opts).schema;
        let keywords = schema_keywords(&out);
        for banned in Dialect::Gemini.stripped_keywords().iter().chain(&["anyOf", "oneOf", "const", "nullable"]) {
            prop_assert!(!keywords.iter().any(|k| k == banned), "{} in {}", banned, out);
        }
        for keyword in &opts.unsupported_keywords {
            prop_assert!(!keywords.iter().any(|k| k == keyword), "{} in {}", keyword, out);
        }
    }

    #[test]
    fn xai_output_never_has_contains_bounds(schema in root()) {
        let out = normalize_schema(&schema, Dialect::Xai, &NormalizeOptions::default()).schema;
        let keywords = schema_keywords(&out);
        prop_assert!(!keywords.iter().any(|k| k == "minContains" || k == "maxContains"), "{}", out);
    }

    #[test]
    fn strict_root_is_closed_unless_the_input_said_otherwise(schema in root()) {
        let out = normalize_schema(&schema, Dialect::OpenAiStrict, &NormalizeOptions::default()).schema;
        prop_assert!(out.get("additionalProperties").is_some(), "{}", out);
    }
}
