"""Typed errors. Each carries where the problem is, so the CLI can print one clear line."""
from __future__ import annotations


class PipelineError(Exception):
    """A problem with the input or the run that the user can fix."""

    def __init__(self, message: str, *, path: object = None, line: int | None = None):
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line

    def __str__(self) -> str:
        where = ""
        if self.path is not None:
            where = f"{self.path}:{self.line}: " if self.line else f"{self.path}: "
        return where + self.message


class ManifestError(PipelineError):
    """The source manifest is malformed or names something that is not there."""


class SourceError(PipelineError):
    """A source file cannot be read as what it claims to be (empty, binary, undecodable)."""


class NotRulesError(SourceError):
    """A file offered as an official rules edition is not one."""
