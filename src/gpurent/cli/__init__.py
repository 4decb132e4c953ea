"""The command line: a Typer app, one module per verb group. Thin: parse, call, render."""
