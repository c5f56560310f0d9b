//! JSON Schema as MCP servers write it → the OpenAPI 3.0 subset Gemini's function
//! declarations accept, keeping the meaning: `$ref`s are inlined (recursion cut at a depth,
//! the whole rewrite at [`MAX_NODES`]),
//! `["string", "null"]` becomes `nullable`, `oneOf` becomes `anyOf`, `allOf` is merged,
//! `const` becomes a one-value `enum`, and keywords Gemini refuses (`$schema`,
//! `additionalProperties`, `exclusiveMinimum`, …) are dropped. What cannot be expressed is
//! said in the description, so the model still learns it.

use serde_json::{json, Map, Value};

/// The keywords Gemini's `Schema` object knows; the rewrite keeps only these.
pub const GEMINI_KEYWORDS: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "default",
    "items",
    "minimum",
    "maximum",
];

/// Deeper than this, a (recursive) `$ref` becomes a plain object.
const MAX_DEPTH: usize = 16;

/// The most schema nodes one rewrite makes. Inlining `$ref`s can multiply a small schema
/// without end (a 2 KB schema whose definition refers to itself three times in an `anyOf`
/// would make 3^16 nodes); past this, what is left becomes a plain object "too large to
/// describe", so the rewrite's time and the declaration's size stay bounded.
pub const MAX_NODES: usize = 5_000;

pub fn for_gemini(schema: &Value) -> Value {
    let mut defs = Map::new();
    for key in ["$defs", "definitions"] {
        if let Some(Value::Object(d)) = schema.get(key) {
            defs.extend(d.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
    }
    let mut budget = MAX_NODES;
    let mut out = convert(schema, &defs, 0, &mut budget);
    if let Value::Object(map) = &mut out {
        if !map.contains_key("type") && map.contains_key("properties") {
            map.insert("type".into(), json!("object"));
        }
    }
    out
}

/// True for an object schema with no properties: Gemini refuses those, so such a tool is
/// declared without `parameters` at all.
pub fn is_empty_object(schema: &Value) -> bool {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .is_none_or(Map::is_empty)
        && schema.get("type").is_none_or(|t| t == "object")
        && schema.get("anyOf").is_none()
}

fn convert(node: &Value, defs: &Map<String, Value>, depth: usize, budget: &mut usize) -> Value {
    let Value::Object(map) = node else {
        return json!({});
    };
    if *budget == 0 {
        return json!({"type": "object", "description": "(too large to describe)"});
    }
    *budget -= 1;
    if depth > MAX_DEPTH {
        return json!({"type": "object", "description": "(nested too deeply to describe)"});
    }
    if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
        let name = reference
            .strip_prefix("#/$defs/")
            .or_else(|| reference.strip_prefix("#/definitions/"));
        let mut resolved = match name.and_then(|n| defs.get(n)) {
            Some(target) => convert(target, defs, depth + 1, budget),
            None => json!({"type": "object"}),
        };
        // A description beside the $ref describes this use of it.
        if let (Some(desc), Value::Object(r)) = (map.get("description"), &mut resolved) {
            r.insert("description".into(), desc.clone());
        }
        return resolved;
    }

    let mut out = Map::new();
    let mut notes: Vec<String> = Vec::new();

    // allOf: merge the parts (properties, required, the rest first-wins).
    let mut merged = map.clone();
    if let Some(Value::Array(parts)) = map.get("allOf") {
        for part in parts {
            if let Value::Object(p) = convert(part, defs, depth + 1, budget) {
                merge_into(&mut merged, &p);
            }
        }
    }

    for (key, value) in &merged {
        match key.as_str() {
            "type" => match value {
                Value::Array(types) => {
                    let non_null: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
                    if non_null.len() < types.len() {
                        out.insert("nullable".into(), json!(true));
                    }
                    match non_null.as_slice() {
                        [one] => {
                            out.insert("type".into(), (*one).clone());
                        }
                        [] => {}
                        many => {
                            let any: Vec<Value> = many.iter().map(|t| json!({"type": t})).collect();
                            out.insert("anyOf".into(), Value::Array(any));
                        }
                    }
                }
                Value::String(t) if t == "null" => {
                    out.insert("nullable".into(), json!(true));
                }
                other => {
                    out.insert("type".into(), other.clone());
                }
            },
            "anyOf" | "oneOf" => {
                if let Value::Array(options) = value {
                    let mut kept = Vec::new();
                    for option in options {
                        if option.get("type").is_some_and(|t| t == "null") {
                            out.insert("nullable".into(), json!(true));
                        } else {
                            kept.push(convert(option, defs, depth + 1, budget));
                        }
                    }
                    if kept.len() == 1 {
                        if let Value::Object(only) = kept.remove(0) {
                            for (k, v) in only {
                                out.entry(k).or_insert(v);
                            }
                        }
                    } else if !kept.is_empty() {
                        out.insert("anyOf".into(), Value::Array(kept));
                    }
                }
            }
            "const" => {
                out.insert("enum".into(), json!([value_text(value)]));
                if !value.is_string() {
                    notes.push(format!("must be {value}"));
                }
            }
            "enum" => {
                if let Value::Array(values) = value {
                    if values.iter().all(Value::is_string) {
                        out.insert("enum".into(), value.clone());
                    } else {
                        let listed: Vec<String> = values.iter().map(ToString::to_string).collect();
                        notes.push(format!("one of {}", listed.join(", ")));
                    }
                }
            }
            "properties" => {
                if let Value::Object(props) = value {
                    let converted: Map<String, Value> = props
                        .iter()
                        .map(|(k, v)| (k.clone(), convert(v, defs, depth + 1, budget)))
                        .collect();
                    out.insert("properties".into(), Value::Object(converted));
                }
            }
            "items" => {
                let item = match value {
                    Value::Array(tuple) => tuple.first().cloned().unwrap_or(json!({})),
                    other => other.clone(),
                };
                out.insert("items".into(), convert(&item, defs, depth + 1, budget));
            }
            "format" => {
                // Gemini takes only these string formats.
                if matches!(value.as_str(), Some("enum" | "date-time")) {
                    out.insert("format".into(), value.clone());
                } else if let Some(f) = value.as_str() {
                    notes.push(format!("format: {f}"));
                }
            }
            "exclusiveMinimum" => notes.push(format!("greater than {value}")),
            "exclusiveMaximum" => notes.push(format!("less than {value}")),
            k if GEMINI_KEYWORDS.contains(&k) => {
                out.insert(key.clone(), value.clone());
            }
            _ => {}
        }
    }

    // `required` may only name properties that exist.
    if let Some(Value::Array(required)) = out.get("required").cloned() {
        let props = out.get("properties").and_then(Value::as_object);
        let kept: Vec<Value> = required
            .into_iter()
            .filter(|r| {
                r.as_str()
                    .is_some_and(|r| props.is_some_and(|p| p.contains_key(r)))
            })
            .collect();
        if kept.is_empty() {
            out.remove("required");
        } else {
            out.insert("required".into(), Value::Array(kept));
        }
    }
    if !notes.is_empty() {
        let base = out
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let extra = format!("({})", notes.join("; "));
        let text = if base.is_empty() {
            extra
        } else {
            format!("{base} {extra}")
        };
        out.insert("description".into(), json!(text));
    }
    Value::Object(out)
}

fn value_text(value: &Value) -> String {
    value
        .as_str()
        .map_or_else(|| value.to_string(), str::to_owned)
}

fn merge_into(target: &mut Map<String, Value>, part: &Map<String, Value>) {
    for (key, value) in part {
        match (key.as_str(), target.get_mut(key), value) {
            ("properties", Some(Value::Object(existing)), Value::Object(more)) => {
                for (k, v) in more {
                    existing.entry(k.clone()).or_insert(v.clone());
                }
            }
            ("required", Some(Value::Array(existing)), Value::Array(more)) => {
                for r in more {
                    if !existing.contains(r) {
                        existing.push(r.clone());
                    }
                }
            }
            (_, None, _) => {
                target.insert(key.clone(), value.clone());
            }
            _ => {}
        }
    }
}
