//! The JSON contract (`schema/*.json`) checked against the report types it
//! describes. The files are written by hand for the scripts that read the
//! reports (descriptions, units, consts, `additionalProperties: false`);
//! the types are what dbload writes. Each field is so typed twice, and a
//! drift would show only in an integration test that happens to produce
//! the field. Here `schemars` derives each document's schema from the
//! types (as serialised: `Option` is nullable and still written), and the
//! file must agree with it on the shape: the same property names at every
//! level (`$ref`s resolved), the same JSON types, the same nullability and
//! the same `required` lists. Descriptions, consts, enums' values, formats,
//! bounds and ordering stay free: the files stay the contract.
//!
//! Lives in `report/` because the report types are the documents' types
//! and `report/` owns their JSON form; test-only, so the derives it needs
//! cost the built program nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;

use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde_json::Value as Json;

use super::http::HttpReport;
use super::ingest::IngestReport;
use super::k6::K6Report;
use super::meta::Stamped;
use super::query::QueryReport;
use super::repeat::RepeatReport;
use super::sweep::SweepReport;
use super::transfer::TransferReport;
use crate::compare::CompareReport;

/// A measuring command's document as `command::output::emit` writes it:
/// the report, its `run` object ([`Stamped`]), and with `--runs` the
/// `repeat` object beside them.
#[derive(JsonSchema)]
#[allow(dead_code)] // only its schema is used
struct Document<R: 'static> {
    #[serde(flatten)]
    stamped: Stamped<'static, R>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "RepeatReport")] // absent or an object, never null
    repeat: Option<RepeatReport>,
}

/// Top-level properties a file describes that no type writes, each with
/// why (the integration tests that produce them validate them); a listed
/// property the file no longer has fails the check, so the list stays true.
const NOT_TYPED: [(&str, &str, &str); 3] = [
    ("report.schema.json", "merged", "results::merge builds it as JSON (dbload report --run-id)"),
    ("query-report.schema.json", "merged", "results::merge builds it as JSON (dbload report --run-id)"),
    ("http-report.schema.json", "merged", "results::merge builds it as JSON (dbload report --run-id)"),
];

/// What the check compares of a schema: the rest is free.
#[derive(Debug, Clone, Default, PartialEq)]
struct Shape {
    /// JSON types (`null` for nullable); empty: any value.
    types: BTreeSet<String>,
    properties: BTreeMap<String, Shape>,
    required: BTreeSet<String>,
    /// An array's items (a tuple's, together).
    items: Option<Box<Shape>>,
    /// A map's values (`additionalProperties` as a schema).
    values: Option<Box<Shape>>,
}

impl Shape {
    /// The shape of `schema`, its `$ref`s resolved in `root`'s `$defs`.
    fn of(schema: &Json, root: &Json) -> Shape {
        let Some(obj) = schema.as_object() else {
            // `true` or `false`: any value (or none, which no report writes).
            return Shape::default();
        };
        let mut own = Shape::default();
        match obj.get("type") {
            Some(Json::String(t)) => {
                own.types.insert(t.clone());
            }
            Some(Json::Array(ts)) => own.types.extend(ts.iter().filter_map(Json::as_str).map(String::from)),
            _ => {
                let values = obj
                    .get("const")
                    .map(std::slice::from_ref)
                    .or(obj.get("enum").and_then(|e| e.as_array()).map(Vec::as_slice));
                own.types.extend(values.into_iter().flatten().map(json_type));
            }
        }
        if let Some(props) = obj.get("properties").and_then(Json::as_object) {
            own.properties = props.iter().map(|(k, v)| (k.clone(), Shape::of(v, root))).collect();
        }
        if let Some(req) = obj.get("required").and_then(Json::as_array) {
            own.required = req.iter().filter_map(Json::as_str).map(String::from).collect();
        }
        if let Some(items) = obj.get("items").filter(|i| i.is_object()) {
            own.items = Some(Box::new(Shape::of(items, root)));
        }
        if let Some(tuple) = obj.get("prefixItems").and_then(Json::as_array) {
            own.items = Some(Box::new(Shape::any_of(tuple.iter().map(|s| Shape::of(s, root)))));
        }
        if let Some(values) = obj.get("additionalProperties").filter(|v| v.is_object()) {
            own.values = Some(Box::new(Shape::of(values, root)));
        }
        if let Some(target) = obj.get("$ref").and_then(Json::as_str) {
            let pointer = target.strip_prefix('#').expect("a $ref within the document");
            let def = root.pointer(pointer).unwrap_or_else(|| panic!("`{target}` names no definition"));
            own = own.all_of(Shape::of(def, root));
        }
        for s in obj.get("allOf").and_then(Json::as_array).into_iter().flatten() {
            own = own.all_of(Shape::of(s, root));
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(branches) = obj.get(key).and_then(Json::as_array) {
                own = own.all_of(Shape::any_of(branches.iter().map(|s| Shape::of(s, root))));
            }
        }
        own
    }

    /// A value that satisfies both: the types both allow, every property.
    fn all_of(self, other: Shape) -> Shape {
        let types = match (self.types.is_empty(), other.types.is_empty()) {
            (true, _) => other.types,
            (_, true) => self.types,
            _ => self.types.intersection(&other.types).cloned().collect(),
        };
        let mut properties = self.properties;
        for (k, v) in other.properties {
            let merged = match properties.remove(&k) {
                Some(mine) => mine.all_of(v),
                None => v,
            };
            properties.insert(k, merged);
        }
        Shape {
            types,
            properties,
            required: self.required.union(&other.required).cloned().collect(),
            items: merge(self.items, other.items, Shape::all_of),
            values: merge(self.values, other.values, Shape::all_of),
        }
    }

    /// A value that satisfies one of `branches`: any of their types; a
    /// property required only if every object among them requires it.
    fn any_of(branches: impl Iterator<Item = Shape>) -> Shape {
        let branches: Vec<Shape> = branches.collect();
        let mut union = Shape::default();
        if branches.iter().all(|b| !b.types.is_empty()) {
            union.types = branches.iter().flat_map(|b| b.types.iter().cloned()).collect();
        }
        let objects: Vec<&Shape> = branches.iter().filter(|b| b.types.contains("object")).collect();
        union.required = objects
            .first()
            .map(|first| {
                first.required.iter().filter(|r| objects.iter().all(|o| o.required.contains(*r))).cloned().collect()
            })
            .unwrap_or_default();
        for b in branches {
            for (k, v) in b.properties {
                let merged = match union.properties.remove(&k) {
                    Some(mine) => Shape::any_of([mine, v].into_iter()),
                    None => v,
                };
                union.properties.insert(k, merged);
            }
            union.items = merge(union.items, b.items, |a, b| Shape::any_of([a, b].into_iter()));
            union.values = merge(union.values, b.values, |a, b| Shape::any_of([a, b].into_iter()));
        }
        union
    }
}

fn merge(a: Option<Box<Shape>>, b: Option<Box<Shape>>, f: fn(Shape, Shape) -> Shape) -> Option<Box<Shape>> {
    match (a, b) {
        (Some(a), Some(b)) => Some(Box::new(f(*a, *b))),
        (a, b) => a.or(b),
    }
}

/// The JSON type of a `const` or `enum` value.
fn json_type(v: &Json) -> String {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "boolean",
        Json::Number(n) if n.is_f64() => "number",
        Json::Number(_) => "integer",
        Json::String(_) => "string",
        Json::Array(_) => "array",
        Json::Object(_) => "object",
    }
    .to_string()
}

/// A JSON type set as the messages show it.
struct Types<'a>(&'a BTreeSet<String>);

impl fmt::Display for Types<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("any");
        }
        f.write_str(&self.0.iter().cloned().collect::<Vec<_>>().join(" | "))
    }
}

/// Where `file` and `types` disagree, below `path` (`$.setup.warmup`,
/// `[]` an array's items, `{}` a map's values), one line each.
fn differences(file: &Shape, types: &Shape, path: &str, skipped: &[&str], out: &mut Vec<String>) {
    if file.types != types.types {
        out.push(format!("{path}: the file says {}, the types write {}", Types(&file.types), Types(&types.types)));
    }
    for name in file.properties.keys().filter(|k| !types.properties.contains_key(*k)) {
        if !skipped.contains(&format!("{path}.{name}").as_str()) {
            out.push(format!("{path}.{name}: in the file, but no type writes it (remove it, or add the field)"));
        }
    }
    for name in types.properties.keys().filter(|k| !file.properties.contains_key(*k)) {
        out.push(format!("{path}.{name}: written by the types, but not in the file (describe it there)"));
    }
    for (name, f) in &file.properties {
        if let Some(t) = types.properties.get(name) {
            differences(f, t, &format!("{path}.{name}"), skipped, out);
        }
    }
    let required = |set: &BTreeSet<String>| set.iter().cloned().collect::<Vec<_>>().join(", ");
    if file.required != types.required {
        let missing: BTreeSet<String> = types.required.difference(&file.required).cloned().collect();
        let extra: BTreeSet<String> = file.required.difference(&types.required).cloned().collect();
        out.push(format!(
            "{path}: `required` differs: always written but not required in the file: [{}]; required in the \
             file but not always written: [{}]",
            required(&missing),
            required(&extra)
        ));
    }
    for (what, f, t) in [("[]", &file.items, &types.items), ("{}", &file.values, &types.values)] {
        match (f, t) {
            (Some(f), Some(t)) => differences(f, t, &format!("{path}{what}"), skipped, out),
            (None, None) => {}
            (f, _) => out.push(format!(
                "{path}{what}: {}",
                if f.is_some() {
                    "the file describes it, the types do not"
                } else {
                    "the types describe it, the file does not"
                }
            )),
        }
    }
}

/// The schema `schemars` derives for `T`, as written (serialisation).
fn derived<T: JsonSchema>() -> Json {
    let schema = SchemaSettings::draft2020_12().for_serialize().into_generator().into_root_schema_for::<T>();
    schema.to_value()
}

/// Where the schema `written` in a file and the one `derived` from the
/// types disagree, one line each; `skipped`: paths the types do not write.
fn disagreements(written: &Json, derived: &Json, skipped: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    differences(&Shape::of(written, written), &Shape::of(derived, derived), "$", skipped, &mut out);
    out
}

/// Checks `schema/<file>` against the schema derived for `T`; panics with
/// every difference, each naming the JSON path.
fn check<T: JsonSchema>(file: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("schema").join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let written: Json = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let not_typed: Vec<(String, &str)> =
        NOT_TYPED.iter().filter(|(f, ..)| *f == file).map(|(_, name, why)| (format!("$.{name}"), *why)).collect();
    for (path, why) in &not_typed {
        let name = &path[2..];
        assert!(
            written["properties"].get(name).is_some(),
            "schema/{file}: {path} is listed as written by no type ({why}), but the file has no such property: \
             drop it from NOT_TYPED"
        );
    }
    let skipped: Vec<&str> = not_typed.iter().map(|(path, _)| path.as_str()).collect();
    let out = disagreements(&written, &derived::<T>(), &skipped);
    assert!(
        out.is_empty(),
        "schema/{file} disagrees with the report types ({} difference(s)):\n  {}",
        out.len(),
        out.join("\n  ")
    );
}

/// The check itself, on a small document: a property only one side has,
/// a nullability and a `required` list that differ, each with its path.
#[test]
fn each_disagreement_is_named_with_its_path() {
    #[derive(JsonSchema)]
    #[allow(dead_code)] // only its schema is used
    struct Part {
        seen: Option<u64>,
        kept: Vec<String>,
    }
    #[derive(JsonSchema)]
    #[allow(dead_code)] // only its schema is used
    struct Doc {
        part: Part,
        added: bool,
    }
    let written = serde_json::json!({
        "type": "object",
        "required": ["part"],
        "properties": {"part": {"$ref": "#/$defs/part"}, "dropped": {"type": "string"}},
        "$defs": {"part": {
            "type": "object",
            "required": ["kept"],
            "properties": {"seen": {"type": "integer"}, "kept": {"type": "array", "items": {"const": "a"}}}
        }}
    });
    assert_eq!(
        disagreements(&written, &derived::<Doc>(), &[]),
        [
            "$.dropped: in the file, but no type writes it (remove it, or add the field)",
            "$.added: written by the types, but not in the file (describe it there)",
            "$.part.seen: the file says integer, the types write integer | null",
            "$.part: `required` differs: always written but not required in the file: [seen]; required in the file \
             but not always written: []",
            "$: `required` differs: always written but not required in the file: [added]; required in the file but \
             not always written: []",
        ]
    );
    assert_eq!(disagreements(&derived::<Doc>(), &derived::<Doc>(), &[]), Vec::<String>::new());
}

#[test]
fn report_schema_matches_the_ingest_report() {
    check::<Document<IngestReport>>("report.schema.json");
}

#[test]
fn query_report_schema_matches_the_query_report() {
    check::<Document<QueryReport>>("query-report.schema.json");
}

#[test]
fn http_report_schema_matches_the_http_report() {
    check::<Document<HttpReport>>("http-report.schema.json");
}

#[test]
fn k6_report_schema_matches_the_k6_report() {
    if std::env::var_os("DBLOAD_PRINT_K6_SCHEMA").is_some() {
        println!("{}", serde_json::to_string_pretty(&derived::<Document<K6Report>>()).unwrap());
    }
    check::<Document<K6Report>>("k6-report.schema.json");
}

#[test]
fn transfer_report_schema_matches_the_transfer_report() {
    check::<Document<TransferReport>>("transfer-report.schema.json");
}

#[test]
fn sweep_schema_matches_the_sweep_report() {
    check::<Stamped<'static, SweepReport>>("sweep.schema.json");
}

#[test]
fn compare_schema_matches_the_comparison() {
    check::<CompareReport<'static>>("compare.schema.json");
}
