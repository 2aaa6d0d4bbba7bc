"""The base of every result model: snake_case in Python, camelCase on the wire."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class WireModel(BaseModel):
    """A result as sent: fields by their camelCase alias (CONTRACT.md), built by field name."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    def to_wire(self) -> dict[str, Any]:
        """JSON-ready dict in the wire's camelCase."""
        return self.model_dump(by_alias=True, mode="json")
