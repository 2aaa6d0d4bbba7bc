"""QueryFilters: the structured filters every read method takes, validated strictly
(CONTRACT.md, filters), and the strict base of the params models."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictStr,
    ValidationInfo,
    field_validator,
)
from pydantic.alias_generators import to_camel

from a2a.records import Stakes, Status
from a2a.records.dates import parse_bound


def _one_or_many(value: Any) -> Any:
    """A bare string is a one-item list (CONTRACT.md: filters.stakes, filters.status)."""
    return [value] if isinstance(value, str) else value


# Strict float refuses bools and strings but still accepts JSON integers such as 1.
Confidence = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
DateBound = StrictStr
# At most 16 items: the vocabularies are tiny, and a 1 MiB list must not produce an error
# entry per item.
StakesList = Annotated[
    list[Stakes], BeforeValidator(_one_or_many), Field(min_length=1, max_length=16)
]
StatusList = Annotated[
    list[Status], BeforeValidator(_one_or_many), Field(min_length=1, max_length=16)
]


class WireModel(BaseModel):
    """camelCase on the wire, snake_case in Python, no unknown keys, no coercion.

    Only the camelCase names validate: `include_reasons` on the wire is an unknown key.
    """

    model_config = ConfigDict(
        alias_generator=to_camel,
        extra="forbid",
        strict=True,
        frozen=True,
    )


class QueryFilters(WireModel):
    """Structured filters; each applies only when given (F002 section Request Parameters)."""

    category: StrictStr | None = None
    min_confidence: Confidence | None = None
    max_confidence: Confidence | None = None
    date_after: DateBound | None = None
    date_before: DateBound | None = None
    stakes: StakesList | None = None
    status: StatusList | None = None

    @field_validator("max_confidence")
    @classmethod
    def _max_not_below_min(cls, value: float | None, info: ValidationInfo) -> float | None:
        low = info.data.get("min_confidence")
        if value is not None and low is not None and low > value:
            raise ValueError("maxConfidence is less than minConfidence")
        return value

    @field_validator("date_after")
    @classmethod
    def _after_is_a_date(cls, value: str | None) -> str | None:
        if value is not None:
            parse_bound(value, "after")
        return value

    @field_validator("date_before")
    @classmethod
    def _before_not_before_after(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return None
        before = parse_bound(value, "before")
        after = info.data.get("date_after")
        if after is not None and parse_bound(after, "after") > before:
            raise ValueError("dateBefore is earlier than dateAfter")
        return value

    @property
    def after(self) -> datetime | None:
        """dateAfter as a UTC instant (inclusive), or None."""
        return None if self.date_after is None else parse_bound(self.date_after, "after")

    @property
    def before(self) -> datetime | None:
        """dateBefore as a UTC instant (inclusive), or None."""
        return None if self.date_before is None else parse_bound(self.date_before, "before")
