//! The protobuf form of `/openapi/v2` (`application/com.github.proto-openapi.spec.v2@v1.0+protobuf`):
//! the subset of gnostic's `openapi.v2.Document` (`openapiv2/OpenAPIv2.proto`, proto3) that the
//! JSON document uses (`messages.rs`, declared by hand with the field numbers of that file), and
//! the conversion from the JSON document (here). client-go's `OpenAPISchema()` (kubectl's client-side validation, its
//! `fieldValidation` support check before 1.29, `kubectl explain` before 1.27) decodes it.
//!
//! Vendor extensions, defaults, enums and examples are gnostic `Any`s carrying their value as
//! YAML text; JSON text is valid YAML, so the value is written as JSON.

use prost::Message;
use serde_json::{Map, Value};

mod messages;
pub use messages::*;

fn s(v: &Value, key: &str) -> String {
    v.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn strings(v: &Value, key: &str) -> Vec<String> {
    v.get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn any(v: &Value) -> Any {
    Any {
        yaml: v.to_string(),
    }
}

/// The `x-…` keys of an object, in the JSON document's (sorted) order.
fn extensions(v: &Value) -> Vec<NamedAny> {
    v.as_object()
        .map(|m| {
            m.iter()
                .filter(|(k, _)| k.starts_with("x-"))
                .map(|(k, x)| NamedAny {
                    name: k.clone(),
                    value: Some(any(x)),
                })
                .collect()
        })
        .unwrap_or_default()
}

fn f64_at(v: &Value, key: &str) -> f64 {
    v.get(key).and_then(Value::as_f64).unwrap_or_default()
}

fn i64_at(v: &Value, key: &str) -> i64 {
    v.get(key).and_then(Value::as_i64).unwrap_or_default()
}

fn bool_at(v: &Value, key: &str) -> bool {
    v.get(key).and_then(Value::as_bool).unwrap_or_default()
}

fn named_schemas(m: Option<&Map<String, Value>>) -> Vec<NamedSchema> {
    m.map(|m| {
        m.iter()
            .map(|(k, x)| NamedSchema {
                name: k.clone(),
                value: Some(schema(x)),
            })
            .collect()
    })
    .unwrap_or_default()
}

/// A JSON schema (OpenAPI v2 dialect) as gnostic's `Schema`.
pub fn schema(v: &Value) -> Schema {
    let types = match v.get("type") {
        Some(Value::String(t)) => vec![t.clone()],
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|x| x.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    };
    let items = match v.get("items") {
        Some(Value::Array(a)) => Some(ItemsItem {
            schema: a.iter().map(schema).collect(),
        }),
        Some(x @ Value::Object(_)) => Some(ItemsItem {
            schema: vec![schema(x)],
        }),
        _ => None,
    };
    let additional_properties = match v.get("additionalProperties") {
        Some(Value::Bool(b)) => Some(Box::new(AdditionalPropertiesItem {
            oneof: Some(additional_properties_item::Oneof::Boolean(*b)),
        })),
        Some(x @ Value::Object(_)) => Some(Box::new(AdditionalPropertiesItem {
            oneof: Some(additional_properties_item::Oneof::Schema(schema(x))),
        })),
        _ => None,
    };
    Schema {
        r#ref: s(v, "$ref"),
        format: s(v, "format"),
        title: s(v, "title"),
        description: s(v, "description"),
        default: v.get("default").map(any),
        multiple_of: f64_at(v, "multipleOf"),
        maximum: f64_at(v, "maximum"),
        exclusive_maximum: bool_at(v, "exclusiveMaximum"),
        minimum: f64_at(v, "minimum"),
        exclusive_minimum: bool_at(v, "exclusiveMinimum"),
        max_length: i64_at(v, "maxLength"),
        min_length: i64_at(v, "minLength"),
        pattern: s(v, "pattern"),
        max_items: i64_at(v, "maxItems"),
        min_items: i64_at(v, "minItems"),
        unique_items: bool_at(v, "uniqueItems"),
        max_properties: i64_at(v, "maxProperties"),
        min_properties: i64_at(v, "minProperties"),
        required: strings(v, "required"),
        r#enum: v
            .get("enum")
            .and_then(Value::as_array)
            .map(|a| a.iter().map(any).collect())
            .unwrap_or_default(),
        additional_properties,
        r#type: (!types.is_empty()).then_some(TypeItem { value: types }),
        items,
        all_of: v
            .get("allOf")
            .and_then(Value::as_array)
            .map(|a| a.iter().map(schema).collect())
            .unwrap_or_default(),
        properties: v
            .get("properties")
            .and_then(Value::as_object)
            .map(|m| Properties {
                additional_properties: named_schemas(Some(m)),
            }),
        discriminator: s(v, "discriminator"),
        read_only: bool_at(v, "readOnly"),
        example: v.get("example").map(any),
        vendor_extension: extensions(v),
    }
}

fn parameter(v: &Value) -> ParametersItem {
    let oneof = if let Some(r) = v.get("$ref").and_then(Value::as_str) {
        parameters_item::Oneof::JsonReference(JsonReference {
            r#ref: r.to_string(),
            description: s(v, "description"),
        })
    } else if v.get("in").and_then(Value::as_str) == Some("body") {
        parameters_item::Oneof::Parameter(Parameter {
            oneof: Some(parameter::Oneof::BodyParameter(BodyParameter {
                description: s(v, "description"),
                name: s(v, "name"),
                r#in: "body".into(),
                required: bool_at(v, "required"),
                schema: v.get("schema").map(schema),
                vendor_extension: extensions(v),
            })),
        })
    } else {
        let sub = if v.get("in").and_then(Value::as_str) == Some("path") {
            non_body_parameter::Oneof::PathParameterSubSchema(PathParameterSubSchema {
                required: bool_at(v, "required"),
                r#in: "path".into(),
                description: s(v, "description"),
                name: s(v, "name"),
                r#type: s(v, "type"),
                unique_items: bool_at(v, "uniqueItems"),
            })
        } else {
            non_body_parameter::Oneof::QueryParameterSubSchema(QueryParameterSubSchema {
                required: bool_at(v, "required"),
                r#in: s(v, "in"),
                description: s(v, "description"),
                name: s(v, "name"),
                r#type: s(v, "type"),
                unique_items: bool_at(v, "uniqueItems"),
            })
        };
        parameters_item::Oneof::Parameter(Parameter {
            oneof: Some(parameter::Oneof::NonBodyParameter(NonBodyParameter {
                oneof: Some(sub),
            })),
        })
    };
    ParametersItem { oneof: Some(oneof) }
}

fn parameters(v: &Value) -> Vec<ParametersItem> {
    v.get("parameters")
        .and_then(Value::as_array)
        .map(|a| a.iter().map(parameter).collect())
        .unwrap_or_default()
}

fn operation(v: &Value) -> Operation {
    let responses = v
        .get("responses")
        .and_then(Value::as_object)
        .map(|m| Responses {
            response_code: m
                .iter()
                .map(|(code, r)| NamedResponseValue {
                    name: code.clone(),
                    value: Some(ResponseValue {
                        oneof: Some(response_value::Oneof::Response(Response {
                            description: s(r, "description"),
                            schema: r.get("schema").map(|x| SchemaItem {
                                oneof: Some(schema_item::Oneof::Schema(schema(x))),
                            }),
                        })),
                    }),
                })
                .collect(),
            vendor_extension: Vec::new(),
        });
    Operation {
        tags: strings(v, "tags"),
        summary: s(v, "summary"),
        description: s(v, "description"),
        operation_id: s(v, "operationId"),
        produces: strings(v, "produces"),
        consumes: strings(v, "consumes"),
        parameters: parameters(v),
        responses,
        schemes: strings(v, "schemes"),
        deprecated: bool_at(v, "deprecated"),
        vendor_extension: extensions(v),
    }
}

fn path_item(v: &Value) -> PathItem {
    let op = |k: &str| v.get(k).map(operation);
    PathItem {
        r#ref: s(v, "$ref"),
        get: op("get"),
        put: op("put"),
        post: op("post"),
        delete: op("delete"),
        options: op("options"),
        head: op("head"),
        patch: op("patch"),
        parameters: parameters(v),
        vendor_extension: extensions(v),
    }
}

/// The JSON `/openapi/v2` document as gnostic's `Document`.
pub fn document(v: &Value) -> Document {
    let info = v.get("info").map(|i| Info {
        title: s(i, "title"),
        version: s(i, "version"),
        description: s(i, "description"),
        vendor_extension: extensions(i),
    });
    let paths = v.get("paths").and_then(Value::as_object).map(|m| Paths {
        vendor_extension: Vec::new(),
        path: m
            .iter()
            .map(|(k, p)| NamedPathItem {
                name: k.clone(),
                value: Some(path_item(p)),
            })
            .collect(),
    });
    let definitions = v
        .get("definitions")
        .and_then(Value::as_object)
        .map(|m| Definitions {
            additional_properties: named_schemas(Some(m)),
        });
    let security = v
        .get("security")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|r| SecurityRequirement {
                    additional_properties: r
                        .as_object()
                        .map(|m| {
                            m.iter()
                                .map(|(k, x)| NamedStringArray {
                                    name: k.clone(),
                                    value: Some(StringArray {
                                        value: x
                                            .as_array()
                                            .map(|a| {
                                                a.iter()
                                                    .filter_map(|s| s.as_str().map(str::to_string))
                                                    .collect()
                                            })
                                            .unwrap_or_default(),
                                    }),
                                })
                                .collect()
                        })
                        .unwrap_or_default(),
                })
                .collect()
        })
        .unwrap_or_default();
    let security_definitions = v
        .get("securityDefinitions")
        .and_then(Value::as_object)
        .map(|m| SecurityDefinitions {
            additional_properties: m
                .iter()
                .filter(|(_, d)| d.get("type").and_then(Value::as_str) == Some("apiKey"))
                .map(|(k, d)| NamedSecurityDefinitionsItem {
                    name: k.clone(),
                    value: Some(SecurityDefinitionsItem {
                        oneof: Some(security_definitions_item::Oneof::ApiKeySecurity(
                            ApiKeySecurity {
                                r#type: "apiKey".into(),
                                name: s(d, "name"),
                                r#in: s(d, "in"),
                                description: s(d, "description"),
                            },
                        )),
                    }),
                })
                .collect(),
        });
    Document {
        swagger: s(v, "swagger"),
        info,
        host: String::new(),
        base_path: String::new(),
        schemes: Vec::new(),
        consumes: Vec::new(),
        produces: Vec::new(),
        paths,
        definitions,
        security,
        security_definitions,
        vendor_extension: extensions(v),
    }
}

/// The protobuf bytes of the JSON `/openapi/v2` document.
pub fn encode(v: &Value) -> Vec<u8> {
    document(v).encode_to_vec()
}
