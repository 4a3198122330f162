//! Record batches from pyarrow, checked in proportion to the rows they hold.
//!
//! A batch that datasets or pyarrow hand over is often a slice of a larger table: a list column's
//! child arrays then still span every row of the table. Arrow's full validation walks those child
//! arrays whole, so checking a 1,000-row slice of a million-row dataset would read the whole
//! dataset's strings on every call. Here only the columns the kernel reads are checked, and each list
//! column is first narrowed to the child values its own rows point at; the checks are Arrow's own
//! (offsets in bounds and increasing, UTF-8 of every string read).

use arrow_array::cast::AsArray;
use arrow_array::{make_array, Array, ArrayRef, OffsetSizeTrait, RecordBatch, StructArray};
use arrow_array::{GenericListArray, GenericStringArray, RecordBatchOptions};
use arrow_buffer::{OffsetBuffer, ScalarBuffer};
use arrow_pyarrow::FromPyArrowUnchecked;
use arrow_schema::{ArrowError, DataType, Schema};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::sync::Arc;

/// The columns `indices` of the pyarrow record batch `value`, each checked as described above.
pub fn batch(value: &Bound<'_, PyAny>, indices: impl Fn(&Schema) -> PyResult<Vec<usize>>) -> PyResult<RecordBatch> {
    // SAFETY: nothing of the imported batch is read before `checked` has validated it, and the
    // columns that are not read are dropped unread.
    let whole = unsafe { RecordBatch::from_pyarrow_bound_unchecked(value)? };
    let projected = whole
        .project(&indices(whole.schema_ref())?)
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let columns = projected
        .columns()
        .iter()
        .map(|c| checked(c.clone()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| PyValueError::new_err(format!("the batch is not valid Arrow data: {e}")))?;
    let options = RecordBatchOptions::default().with_row_count(Some(projected.num_rows()));
    RecordBatch::try_new_with_options(projected.schema(), columns, &options)
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// `array`, validated; lists and structs are rebuilt around child arrays narrowed to the values
/// their rows use, so the check costs what those rows hold.
fn checked(array: ArrayRef) -> Result<ArrayRef, ArrowError> {
    // The structure of this level (buffer sizes, first and last offsets) before anything is read.
    array.to_data().validate()?;
    match array.data_type() {
        DataType::List(_) => list(array.as_list::<i32>()),
        DataType::LargeList(_) => list(array.as_list::<i64>()),
        DataType::Utf8 => strings(array.as_string::<i32>()).map(|()| array),
        DataType::LargeUtf8 => strings(array.as_string::<i64>()).map(|()| array),
        DataType::Struct(fields) => {
            let s = array.as_struct();
            let columns = s
                .columns()
                .iter()
                .map(|c| checked(c.clone()))
                .collect::<Result<_, _>>()?;
            Ok(Arc::new(StructArray::try_new(
                fields.clone(),
                columns,
                s.nulls().cloned(),
            )?))
        }
        _ => {
            let data = array.to_data();
            data.validate_full()?;
            Ok(make_array(data))
        }
    }
}

/// The offsets of `offsets` (of an array's own rows) rise and stay within `limit` values; the
/// first and last.
fn bounds<O: OffsetSizeTrait>(offsets: &[O], limit: usize) -> Result<(usize, usize), ArrowError> {
    let invalid = || ArrowError::InvalidArgumentError("offsets out of order or out of bounds".to_string());
    let first = offsets.first().copied().unwrap_or(O::usize_as(0));
    let last = offsets.last().copied().unwrap_or(first);
    if first < O::usize_as(0) || last.as_usize() > limit || offsets.windows(2).any(|w| w[0] > w[1]) {
        return Err(invalid());
    }
    Ok((first.as_usize(), last.as_usize()))
}

/// Arrow's checks of a string array (offsets in order and in bounds, the bytes its rows span valid
/// UTF-8, every offset on a character boundary), with the SIMD UTF-8 check.
fn strings<O: OffsetSizeTrait>(array: &GenericStringArray<O>) -> Result<(), ArrowError> {
    let offsets = array.value_offsets();
    let (first, last) = bounds(offsets, array.values().len())?;
    let span = simdutf8::basic::from_utf8(&array.values()[first..last])
        .map_err(|_| ArrowError::InvalidArgumentError("invalid UTF-8 in a string column".to_string()))?;
    if offsets.iter().any(|&o| !span.is_char_boundary(o.as_usize() - first)) {
        return Err(ArrowError::InvalidArgumentError(
            "a string of a string column is not whole UTF-8".to_string(),
        ));
    }
    Ok(())
}

/// A list array whose child holds only the values of its rows, offsets rebased to start at zero.
fn list<O: OffsetSizeTrait>(list: &GenericListArray<O>) -> Result<ArrayRef, ArrowError> {
    let offsets = list.value_offsets();
    let (start, end) = bounds(offsets, list.values().len())?;
    let values = checked(list.values().slice(start, end - start))?;
    let first = O::usize_as(start);
    let rebased = OffsetBuffer::new(ScalarBuffer::from_iter(offsets.iter().map(|&o| o - first)));
    let field = match list.data_type() {
        DataType::List(f) | DataType::LargeList(f) => f.clone(),
        other => {
            return Err(ArrowError::InvalidArgumentError(format!("{other} is not a list type")));
        }
    };
    Ok(Arc::new(GenericListArray::<O>::try_new(
        field,
        rebased,
        values,
        list.nulls().cloned(),
    )?))
}
