"""The one error type for bad user input: it always names the file and the record."""

from __future__ import annotations


class InputError(ValueError):
    """Bad input data, reported as a single line `file: record: problem`."""

    def __init__(self, file: object, record: object | None, problem: str):
        self.file = str(file)
        self.record = None if record is None else str(record)
        self.problem = problem
        where = self.file if self.record is None else f"{self.file}: {self.record}"
        super().__init__(f"{where}: {problem}")


def empty_file(file: object) -> InputError:
    """The error for an input file that holds no record at all (no bytes, blank lines, a header alone)."""
    return InputError(file, None, "the file is empty: it holds no record")
