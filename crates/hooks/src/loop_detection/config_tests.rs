use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;

fn parse(value: serde_json::Value) -> LoopDetectionConfig {
    serde_json::from_value(value).unwrap()
}

#[test]
fn empty_config_resolves_to_disabled_openclaw_defaults() {
    let resolved = LoopDetectionConfig::default().resolve();
    assert_eq!(resolved, ResolvedLoopDetection::default());
    assert_eq!(
        resolved,
        ResolvedLoopDetection {
            enabled: false,
            history_size: 30,
            warning_threshold: 10,
            critical_threshold: 20,
            global_circuit_breaker_threshold: 30,
            unknown_tool_threshold: 10,
            detectors: ResolvedLoopDetectors {
                generic_repeat: true,
                known_poll_no_progress: true,
                ping_pong: true,
            },
        }
    );
}

#[test]
fn parses_camel_case_fields_and_rejects_unknown_ones() {
    let config = parse(json!({
        "enabled": true,
        "historySize": 12,
        "warningThreshold": 3,
        "criticalThreshold": 6,
        "globalCircuitBreakerThreshold": 9,
        "unknownToolThreshold": 4,
        "detectors": { "genericRepeat": false, "knownPollNoProgress": true, "pingPong": false },
        "postCompactionGuard": { "windowSize": 3 },
    }));
    let resolved = config.resolve();
    assert_eq!(
        resolved,
        ResolvedLoopDetection {
            enabled: true,
            history_size: 12,
            warning_threshold: 3,
            critical_threshold: 6,
            global_circuit_breaker_threshold: 9,
            unknown_tool_threshold: 4,
            detectors: ResolvedLoopDetectors {
                generic_repeat: false,
                known_poll_no_progress: true,
                ping_pong: false,
            },
        }
    );
    assert_eq!(
        config.post_compaction_guard,
        Some(json!({ "windowSize": 3 }))
    );

    let unknown: Result<LoopDetectionConfig, _> =
        serde_json::from_value(json!({ "enabled": true, "maxRepeats": 3 }));
    assert!(unknown.is_err());
    let unknown_detector: Result<LoopDetectionConfig, _> =
        serde_json::from_value(json!({ "detectors": { "unknownToolRepeat": false } }));
    assert!(unknown_detector.is_err());
}

#[test]
fn non_positive_and_non_integer_numbers_fall_back_to_defaults() {
    let config = parse(json!({
        "historySize": 0,
        "warningThreshold": -5,
        "criticalThreshold": 12.5,
        "globalCircuitBreakerThreshold": 0.0,
        "unknownToolThreshold": -1.5,
    }));
    let resolved = config.resolve();
    assert_eq!(resolved.history_size, 30);
    assert_eq!(resolved.warning_threshold, 10);
    assert_eq!(resolved.critical_threshold, 20);
    assert_eq!(resolved.global_circuit_breaker_threshold, 30);
    assert_eq!(resolved.unknown_tool_threshold, 10);

    // An integral float is an integer, as in JavaScript.
    let resolved = parse(json!({ "historySize": 7.0 })).resolve();
    assert_eq!(resolved.history_size, 7);
}

#[test]
fn critical_is_raised_above_warning_and_breaker_above_critical() {
    let resolved = parse(json!({ "warningThreshold": 25 })).resolve();
    assert_eq!(resolved.warning_threshold, 25);
    assert_eq!(resolved.critical_threshold, 26);
    assert_eq!(resolved.global_circuit_breaker_threshold, 30);

    let resolved = parse(json!({ "warningThreshold": 40 })).resolve();
    assert_eq!(resolved.critical_threshold, 41);
    assert_eq!(resolved.global_circuit_breaker_threshold, 42);

    let resolved = parse(json!({
        "warningThreshold": 5,
        "criticalThreshold": 5,
        "globalCircuitBreakerThreshold": 3,
    }))
    .resolve();
    assert_eq!(resolved.critical_threshold, 6);
    assert_eq!(resolved.global_circuit_breaker_threshold, 7);
}

#[test]
fn overlay_lets_agent_values_win_and_merges_detectors_field_by_field() {
    let global = parse(json!({
        "enabled": true,
        "historySize": 50,
        "warningThreshold": 8,
        "detectors": { "genericRepeat": false, "pingPong": false },
        "postCompactionGuard": { "windowSize": 3, "other": 1 },
    }));
    let agent = parse(json!({
        "warningThreshold": 4,
        "criticalThreshold": 9,
        "detectors": { "pingPong": true, "knownPollNoProgress": false },
        "postCompactionGuard": { "windowSize": 5 },
    }));
    let merged = global.overlay(&agent);
    assert_eq!(
        merged,
        parse(json!({
            "enabled": true,
            "historySize": 50,
            "warningThreshold": 4,
            "criticalThreshold": 9,
            "detectors": { "genericRepeat": false, "pingPong": true, "knownPollNoProgress": false },
            "postCompactionGuard": { "windowSize": 5, "other": 1 },
        }))
    );

    let off = global.overlay(&parse(json!({ "enabled": false })));
    assert!(!off.resolve().enabled);
    assert_eq!(off.history_size, Some(50.0));

    // An empty overlay changes nothing, and neither does an empty base.
    assert_eq!(global.overlay(&LoopDetectionConfig::default()), global);
    assert_eq!(LoopDetectionConfig::default().overlay(&agent), agent);
}

#[test]
fn serialises_back_to_camel_case_without_unset_fields() {
    let config = parse(json!({ "enabled": true, "globalCircuitBreakerThreshold": 40 }));
    assert_eq!(
        serde_json::to_value(&config).unwrap(),
        json!({ "enabled": true, "globalCircuitBreakerThreshold": 40.0 })
    );
}

#[test]
fn history_size_is_clamped() {
    let cfg = LoopDetectionConfig {
        history_size: Some(1e12),
        ..LoopDetectionConfig::default()
    };
    assert_eq!(cfg.resolve().history_size, MAX_HISTORY_SIZE);
}
