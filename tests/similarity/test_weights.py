"""Similarity weights: in [0, 1], summing to 1, from the config file or CSTP_SIMILARITY_WEIGHTS."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pydantic import ValidationError

from a2a.errors import SettingsError
from a2a.settings import DEFAULT_WEIGHTS, SimilarityWeights, load_settings


def test_default_weights_are_the_spikes() -> None:
    weights = load_settings().similarity_weights
    assert (weights.tags, weights.category, weights.stakes) == (0.60, 0.25, 0.15)
    assert weights == DEFAULT_WEIGHTS


@pytest.mark.parametrize(
    "value",
    [
        {"tags": 0.6, "category": 0.25, "stakes": 0.15},
        {"tags": 1, "category": 0, "stakes": 0},
        {"tags": 0.1, "category": 0.2, "stakes": 0.7},
        {"tags": 1 / 3, "category": 1 / 3, "stakes": 1 / 3},
        {"tags": 0.5, "category": 0.5, "stakes": 1e-10},
    ],
    ids=["spike", "tags-only", "tenths", "thirds", "within-tolerance"],
)
def test_weights_summing_to_one_are_accepted(value: dict[str, Any]) -> None:
    assert SimilarityWeights.model_validate(value).tags == value["tags"]


@pytest.mark.parametrize(
    "value",
    [
        {"tags": 0.6, "category": 0.25, "stakes": 0.2},
        {"tags": 0.5, "category": 0.25, "stakes": 0.15},
        {"tags": 0.5, "category": 0.5, "stakes": 1e-8},
        {"tags": 1.2, "category": -0.1, "stakes": -0.1},
        {"tags": 1.0},
        {"tags": 0.6, "category": 0.25, "stakes": 0.15, "text": 0.0},
        {"tags": "0.6", "category": 0.25, "stakes": 0.15},
        {"tags": True, "category": 0, "stakes": 0},
        {"tags": float("nan"), "category": 0.25, "stakes": 0.15},
    ],
    ids=[
        "sum-above",
        "sum-below",
        "outside-tolerance",
        "negative",
        "missing-keys",
        "unknown-key",
        "string",
        "bool",
        "nan",
    ],
)
def test_bad_weights_are_refused(value: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        SimilarityWeights.model_validate(value)


def test_weights_from_the_environment_as_json(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CSTP_SIMILARITY_WEIGHTS", '{"tags": 0.5, "category": 0.3, "stakes": 0.2}')
    assert load_settings().similarity_weights == SimilarityWeights(
        tags=0.5, category=0.3, stakes=0.2
    )


@pytest.mark.parametrize(
    "value",
    [
        '{"tags": 0.6, "category": 0.3, "stakes": 0.15}',
        '{"tags": 1.0, "category": 0.0}',
        '{"tags": 0.6, "category": 0.25, "stake": 0.15}',
        "tags=0.6",
    ],
    ids=["sum", "missing", "typo", "not-json"],
)
def test_bad_weights_stop_start_up_naming_the_setting(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("CSTP_SIMILARITY_WEIGHTS", value)
    with pytest.raises(SettingsError) as caught:
        load_settings()
    assert "CSTP_SIMILARITY_WEIGHTS" in str(caught.value)


def test_weights_from_the_config_file(use_config: Callable[[str], None]) -> None:
    use_config("similarity_weights:\n  tags: 0.7\n  category: 0.2\n  stakes: 0.1\n")
    assert load_settings().similarity_weights.tags == 0.7


def test_weights_in_the_config_file_that_do_not_sum_to_one_stop_start_up(
    use_config: Callable[[str], None],
) -> None:
    use_config("similarity_weights: {tags: 0.7, category: 0.2, stakes: 0.2}\n")
    with pytest.raises(SettingsError, match="CSTP_SIMILARITY_WEIGHTS"):
        load_settings()
