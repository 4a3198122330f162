"""``BatchEncoding``: what ``apply_chat_template(return_dict=True)`` and ``tokenizer(text)`` return."""

from typing import Any, Optional

TENSOR_TYPES = ("pt", "np")


def _flatten(value: Any) -> list:
    """transformers' ``flatten``: the leaves of nested lists (an empty list has none)."""
    out: list = []
    if len(value) > 0:
        for item in value:
            if isinstance(value[0], (list, tuple)):
                out.extend(_flatten(item))
            else:
                out.append(item)
    return out


def to_tensor(key: str, value: Any, return_tensors: str) -> Any:
    """A list (of lists) of ints as a NumPy array or a torch tensor, as transformers converts it:
    a ragged batch is a NumPy array of objects, and an error for torch."""
    if return_tensors not in TENSOR_TYPES:
        raise ValueError(
            f"{return_tensors} is not a valid TensorType, please select one of {list(TENSOR_TYPES)}"
        )
    import numpy as np

    if return_tensors == "np":

        def make(value: Any, dtype: Any = None) -> Any:
            if isinstance(value, (list, tuple)) and value and isinstance(value[0], (list, tuple, np.ndarray)):
                if len({len(v) for v in value}) > 1 and dtype is None:
                    value = make([np.asarray(v) for v in value], dtype=object)
            if len(_flatten(value)) == 0 and dtype is None:
                dtype = np.int64
            return np.asarray(value, dtype=dtype)

    else:
        try:
            import torch
        except ImportError:
            raise ImportError("Unable to convert output to PyTorch tensors format, PyTorch is not installed.") from None

        def make(value: Any, dtype: Any = None) -> Any:
            if isinstance(value, list) and value and isinstance(value[0], np.ndarray):
                return torch.from_numpy(np.array(value))
            if len(_flatten(value)) == 0 and dtype is None:
                dtype = torch.int64
            return torch.tensor(value, dtype=dtype)

    try:
        return make(value)
    except Exception as e:  # transformers turns any conversion failure into this one error
        raise ValueError(
            "Unable to create tensor, you should probably activate truncation and/or padding with "
            "'padding=True' 'truncation=True' to have batched tensors with the same length. Perhaps your "
            f"features (`{key}` in this case) have excessive nesting (inputs type `list` where type `int` is "
            "expected)."
        ) from e


class BatchEncoding(dict):
    """A dict of model inputs (``input_ids``, ``attention_mask``, ``assistant_masks``) whose keys are
    also attributes, like transformers' ``BatchEncoding``."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __getstate__(self) -> dict:
        return dict(self)

    def __setstate__(self, state: dict) -> None:
        self.update(state)

    def convert_to_tensors(self, tensor_type: Optional[str] = None) -> "BatchEncoding":
        """Every value as a NumPy array (``"np"``) or torch tensor (``"pt"``)."""
        if tensor_type is None:
            return self
        for key, value in list(self.items()):
            self[key] = to_tensor(key, value, str(getattr(tensor_type, "value", tensor_type)))
        return self

    def to(self, device: Any) -> "BatchEncoding":
        """Moves torch tensors to ``device``."""
        for key, value in list(self.items()):
            if hasattr(value, "to"):
                self[key] = value.to(device)
        return self
