"""Safe input reading and value validation, shared by every room that takes user input.

`values` checks one value of a kind (a positive finite float, a positive integer, a fraction,
a bounded count) the same way whether it comes from a flag, a workload file or a CSV cell;
`files` reads text files safely (regular files only, size-bounded, UTF-8 with the byte offset of
a bad byte, OS errors as one-line messages) and parses CSV/JSON/TOML/YAML with bounded nesting.
Limits are listed in docs/inputs.md. Imports only `gpurent.errors` and the standard library.
"""

from __future__ import annotations
