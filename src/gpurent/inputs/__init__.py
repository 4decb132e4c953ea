"""Safe input reading and value validation, shared by every room that takes user input.

`values` checks one value of a kind (a positive finite float, a positive integer, a fraction,
a bounded count) the same way whether it comes from a flag, a workload file or a CSV cell;
`files` reads text files safely (regular files only, size-bounded, UTF-8 with the byte offset of
a bad byte, OS errors as one-line messages) and parses CSV/JSON/TOML/YAML with bounded nesting.
Limits are listed in docs/inputs.md. Imports only `gpurent.errors` and the standard library.
"""

from gpurent.exports import lazy

_EXPORTS = {
    "blank": "gpurent.inputs.values",
    "bounded": "gpurent.inputs.values",
    "csv_records": "gpurent.inputs.files",
    "finite": "gpurent.inputs.values",
    "finite_list": "gpurent.inputs.values",
    "fraction": "gpurent.inputs.values",
    "in_data_file": "gpurent.inputs.values",
    "integer": "gpurent.inputs.values",
    "is_number": "gpurent.inputs.times",
    "non_negative": "gpurent.inputs.values",
    "non_negative_int": "gpurent.inputs.values",
    "optional_finite": "gpurent.inputs.values",
    "optional_non_negative": "gpurent.inputs.values",
    "parse_json": "gpurent.inputs.files",
    "parse_time": "gpurent.inputs.times",
    "parse_toml": "gpurent.inputs.files",
    "parse_yaml": "gpurent.inputs.files",
    "percent": "gpurent.inputs.values",
    "positive": "gpurent.inputs.values",
    "positive_int": "gpurent.inputs.values",
    "read_bytes": "gpurent.inputs.files",
    "read_text": "gpurent.inputs.files",
    "write_text": "gpurent.inputs.files",
}
__all__ = sorted(_EXPORTS)  # noqa: PLE0605 - built from _EXPORTS
__getattr__ = lazy(__name__, _EXPORTS)
