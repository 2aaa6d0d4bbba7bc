"""Parse YAML or JSON files holding one decision record or a list of them."""

from __future__ import annotations

import json
import re
from typing import Any, Final

import yaml
from pydantic import ValidationError

from a2a.errors import FileParseError
from a2a.ingest.dates import parse_record_date
from a2a.ingest.status import map_status
from a2a.records import STATUSES, DecisionRecord, derive_id

#: Reason type given to a plain-string reason without a "type: " prefix.
DEFAULT_REASON_TYPE: Final = "other"

_FIELDS: Final = frozenset(DecisionRecord.model_fields)
_TYPED_REASON: Final = re.compile(r"^\s*([A-Za-z][A-Za-z_-]{0,39})\s*:\s+(\S.*)$", re.S)


class _ItemError(ValueError):
    """One record in a file is invalid; the message names the field."""


def _load_json(text: str, source: str) -> object:
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise FileParseError(
            source, f"invalid JSON at line {error.lineno}, column {error.colno}: {error.msg}"
        ) from None


def _load_yaml(text: str, source: str) -> object:
    try:
        return yaml.safe_load(text)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise FileParseError(source, f"invalid YAML{where}: {error.problem or error}") from None
    except yaml.YAMLError as error:
        raise FileParseError(source, f"invalid YAML: {error}") from None


def load_document(text: str, source: str, *, is_json: bool) -> object:
    """The parsed JSON or YAML value of `text`. Raises FileParseError naming line and column."""
    return _load_json(text, source) if is_json else _load_yaml(text, source)


def reason_from_string(text: str) -> dict[str, str]:
    """A reason mapping from a string: "pattern: seen twice" -> {type: pattern, text: seen twice};
    a string without such a prefix gets type `DEFAULT_REASON_TYPE`."""
    match = _TYPED_REASON.match(text)
    if match:
        return {"type": match.group(1).lower(), "text": match.group(2).strip()}
    return {"type": DEFAULT_REASON_TYPE, "text": text.strip()}


def _normalise_reasons(value: object) -> object:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return value
    return [reason_from_string(item) if isinstance(item, str) else item for item in value]


def _normalise_tags(value: object) -> object:
    if isinstance(value, str):
        return [tag.strip() for tag in value.split(",") if tag.strip()]
    return value


def _normalise_status(value: object, warnings: list[str]) -> object:
    if not isinstance(value, str) or value in STATUSES:
        return value
    if value.strip().lower() in STATUSES:
        return value.strip().lower()
    mapped = map_status(value)
    if mapped is None:
        warnings.append(f"status {value!r} not in vocabulary; stored as null")
    else:
        warnings.append(f"status {value!r} read as {mapped!r}")
    return mapped


def _normalise_date(value: object, warnings: list[str]) -> object:
    try:
        parsed, warning = parse_record_date(value)
    except ValueError as error:
        raise _ItemError(f"date: {error}") from None
    if warning:
        warnings.append(warning)
    return parsed


def _describe_validation(error: ValidationError) -> str:
    parts = []
    for detail in error.errors(include_url=False):
        field = ".".join(str(part) for part in detail["loc"]) or "record"
        parts.append(f"{field}: {detail['msg']}")
    return "; ".join(parts)


def _prepare(
    item: dict[str, Any], source: str, index: int | None
) -> tuple[dict[str, Any], list[str]]:
    warnings: list[str] = []
    data: dict[str, Any] = {}
    for key, value in item.items():
        name = str(key)
        if name in _FIELDS:
            data[name] = value
        else:
            warnings.append(f"unknown field {name!r} ignored")
    if data.get("source") not in (None, source):
        warnings.append(f"source {data['source']!r} replaced by the file path")
    data["source"] = source
    if data.get("id") in (None, ""):
        data["id"] = derive_id(source, index)
    elif isinstance(data["id"], int) and not isinstance(data["id"], bool):
        data["id"] = str(data["id"])
    data["date"] = _normalise_date(data.get("date"), warnings)
    data["status"] = _normalise_status(data.get("status"), warnings)
    for name, normalise in (("reasons", _normalise_reasons), ("tags", _normalise_tags)):
        if name in data:
            data[name] = normalise(data[name])
    return data, warnings


def parse_record(item: object, source: str, index: int | None) -> tuple[DecisionRecord, list[str]]:
    """One record mapping as a DecisionRecord plus warnings.

    `index` is the item's position in a list (None for a single-record file); it feeds
    `derive_id` when the item has no id. Raises ValueError whose message names the field.
    """
    if not isinstance(item, dict):
        raise _ItemError(f"expected a mapping of record fields, got {type(item).__name__}")
    data, warnings = _prepare(item, source, index)
    try:
        return DecisionRecord.model_validate(data), warnings
    except ValidationError as error:
        raise _ItemError(_describe_validation(error)) from None


def _parse_list(items: list[object], source: str) -> tuple[list[DecisionRecord], list[str]]:
    records: list[DecisionRecord] = []
    warnings: list[str] = []
    for index, item in enumerate(items):
        try:
            record, item_warnings = parse_record(item, source, index)
        except ValueError as error:
            warnings.append(f"item {index}: {error}; skipped")
            continue
        records.append(record)
        warnings.extend(f"item {index}: {warning}" for warning in item_warnings)
    if not records:
        detail = "; ".join(warnings) if warnings else "the list is empty"
        raise FileParseError(source, f"no valid records: {detail}")
    return records, warnings


def parse_structured(
    text: str, source: str, *, is_json: bool
) -> tuple[list[DecisionRecord], list[str]]:
    """Records and warnings from a YAML (or, with `is_json`, JSON) file's text.

    The document is one record mapping or a list of them. `source` (the relative path) is set
    on every record and seeds ids that are missing. A bad item in a list is skipped with a
    warning "item N: field: problem; skipped". Raises FileParseError when the text does not parse,
    when a single record is invalid, or when no item of a list is valid.
    """
    document = load_document(text, source, is_json=is_json)
    if isinstance(document, list):
        return _parse_list(document, source)
    if isinstance(document, dict):
        try:
            record, warnings = parse_record(document, source, None)
        except ValueError as error:
            raise FileParseError(source, str(error)) from None
        return [record], warnings
    kind = "empty document" if document is None else f"a {type(document).__name__}"
    raise FileParseError(source, f"expected a record mapping or a list of them, got {kind}")
