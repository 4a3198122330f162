//! Parquet rows as JSON values, read straight from the Arrow arrays for the types chat datasets use
//! (strings, integers, booleans, lists, structs). The result is what `arrow_json` writes with explicit
//! nulls, parsed back; for other types (floats, binary, dictionaries, maps, ...) there is no direct
//! conversion and the caller goes through `arrow_json`.

use arrow_array::cast::AsArray;
use arrow_array::types::{Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type, UInt32Type, UInt64Type, UInt8Type};
use arrow_array::{Array, GenericListArray, OffsetSizeTrait, RecordBatch};
use arrow_schema::DataType;
use serde_json::{Map, Value as Json};

/// Row `i` of `batch` as an object of its columns, or `None` when a value has a type without a
/// direct conversion.
pub(crate) fn row(batch: &RecordBatch, i: usize) -> Option<Json> {
    let schema = batch.schema_ref();
    let mut obj = Map::with_capacity(batch.num_columns());
    for (field, column) in schema.fields().iter().zip(batch.columns()) {
        obj.insert(field.name().clone(), value(column.as_ref(), i)?);
    }
    Some(Json::Object(obj))
}

fn value(a: &dyn Array, i: usize) -> Option<Json> {
    if a.is_null(i) {
        return Some(Json::Null);
    }
    Some(match a.data_type() {
        DataType::Null => Json::Null,
        DataType::Boolean => Json::Bool(a.as_boolean().value(i)),
        DataType::Int8 => Json::from(a.as_primitive::<Int8Type>().value(i)),
        DataType::Int16 => Json::from(a.as_primitive::<Int16Type>().value(i)),
        DataType::Int32 => Json::from(a.as_primitive::<Int32Type>().value(i)),
        DataType::Int64 => Json::from(a.as_primitive::<Int64Type>().value(i)),
        DataType::UInt8 => Json::from(a.as_primitive::<UInt8Type>().value(i)),
        DataType::UInt16 => Json::from(a.as_primitive::<UInt16Type>().value(i)),
        DataType::UInt32 => Json::from(a.as_primitive::<UInt32Type>().value(i)),
        DataType::UInt64 => Json::from(a.as_primitive::<UInt64Type>().value(i)),
        DataType::Utf8 => Json::String(a.as_string::<i32>().value(i).to_owned()),
        DataType::LargeUtf8 => Json::String(a.as_string::<i64>().value(i).to_owned()),
        DataType::Utf8View => Json::String(a.as_string_view().value(i).to_owned()),
        DataType::List(_) => list(a.as_list::<i32>(), i)?,
        DataType::LargeList(_) => list(a.as_list::<i64>(), i)?,
        DataType::Struct(fields) => {
            let s = a.as_struct();
            let mut obj = Map::with_capacity(fields.len());
            for (field, child) in fields.iter().zip(s.columns()) {
                obj.insert(field.name().clone(), value(child.as_ref(), i)?);
            }
            Json::Object(obj)
        }
        _ => return None,
    })
}

fn list<O: OffsetSizeTrait>(a: &GenericListArray<O>, i: usize) -> Option<Json> {
    let offsets = a.value_offsets();
    let (start, end) = (offsets[i].as_usize(), offsets[i + 1].as_usize());
    let values = a.values().as_ref();
    (start..end)
        .map(|j| value(values, j))
        .collect::<Option<Vec<_>>>()
        .map(Json::Array)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{ArrayRef, Float64Array, RecordBatch};
    use std::sync::Arc;

    /// Every row converted directly equals what arrow_json writes for it.
    fn same_as_arrow_json(batch: &RecordBatch) {
        for i in 0..batch.num_rows() {
            let direct = row(batch, i).expect("direct conversion");
            let via_json = crate::input::batch_to_json(&batch.slice(i, 1))
                .expect("arrow_json")
                .pop();
            assert_eq!(Some(direct), via_json, "row {i}");
        }
    }

    #[test]
    fn nested_rows_match_arrow_json() {
        let rows = [
            r#"{"messages": [{"role": "user", "content": "héllo", "n": 3, "ok": true}], "tools": null}"#,
            r#"{"messages": [{"role": "assistant", "content": null, "n": -7, "ok": false}, null], "tools": "[]"}"#,
            r#"{"messages": null, "tools": "x"}"#,
            r#"{"messages": [], "tools": null}"#,
        ];
        let schema = Arc::new(arrow_schema::Schema::new(vec![
            arrow_schema::Field::new(
                "messages",
                DataType::List(Arc::new(arrow_schema::Field::new(
                    "item",
                    DataType::Struct(
                        vec![
                            arrow_schema::Field::new("role", DataType::Utf8, true),
                            arrow_schema::Field::new("content", DataType::LargeUtf8, true),
                            arrow_schema::Field::new("n", DataType::Int64, true),
                            arrow_schema::Field::new("ok", DataType::Boolean, true),
                        ]
                        .into(),
                    ),
                    true,
                ))),
                true,
            ),
            arrow_schema::Field::new("tools", DataType::Utf8View, true),
        ]));
        let mut decoder = arrow_json::ReaderBuilder::new(schema).build_decoder().expect("decoder");
        decoder.decode(rows.join("\n").as_bytes()).expect("decode");
        let batch = decoder.flush().expect("flush").expect("rows");
        same_as_arrow_json(&batch);
        same_as_arrow_json(&batch.slice(1, 3));
    }

    #[test]
    fn floats_have_no_direct_conversion() {
        let column: ArrayRef = Arc::new(Float64Array::from(vec![0.1]));
        let batch = RecordBatch::try_from_iter([("x", column)]).expect("batch");
        assert_eq!(row(&batch, 0), None);
    }
}
