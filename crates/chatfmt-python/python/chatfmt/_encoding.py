"""``BatchEncoding``: what ``apply_chat_template(return_dict=True)`` and ``tokenizer(text)`` return."""

from typing import Any, Optional

TENSOR_TYPES = ("pt", "np")


def to_tensor(key: str, value: Any, return_tensors: str) -> Any:
    """A list (of lists) of ints as a NumPy array or a torch tensor, as transformers converts it."""
    if return_tensors == "np":
        import numpy as np

        make = np.asarray
    elif return_tensors == "pt":
        import torch

        make = torch.tensor
    else:
        raise ValueError(
            f"{return_tensors!r} is not a valid TensorType, please select one of {list(TENSOR_TYPES)}"
        )
    if isinstance(value, list) and value and isinstance(value[0], list):
        if len({len(v) for v in value}) > 1:
            raise ValueError(
                "Unable to create tensor, you should probably activate truncation and/or padding with "
                "'padding=True' 'truncation=True' to have batched tensors with the same length. Perhaps your "
                f"features (`{key}` in this case) have excessive nesting (inputs type `list` where type `int` is "
                "expected)."
            )
    return make(value)


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
