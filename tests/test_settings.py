"""Settings: YAML file, CSTP_* environment winning, bad values named."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from a2a.errors import SettingsError
from a2a.settings import load_settings


def test_environment_beats_the_config_file(
    use_config: Callable[[str], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    use_config("agent_id: from-file\nport: 9001\ncollection: file_collection\n")
    monkeypatch.setenv("CSTP_AGENT_ID", "from-env")
    settings = load_settings()
    assert (settings.agent_id, settings.port, settings.collection) == (
        "from-env",
        9001,
        "file_collection",
    )


def test_shipped_config_file_is_valid_and_uses_the_offline_model() -> None:
    settings = load_settings()
    assert settings.embedding_model == "all-minilm-l6-v2-int8"
    assert settings.chroma_url is None


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("CSTP_PORT", "eighty"),
        ("CSTP_PORT", "70000"),
        ("CSTP_CHROMA_URL", "not a url"),
        ("CSTP_EMBEDDING_MODEL", "bert-huge"),
        ("CSTP_CHROMA_TIMEOUT_SECONDS", "0"),
        ("CSTP_LOG_LEVEL", "loud"),
    ],
    ids=["port-word", "port-range", "url", "model", "timeout", "log-level"],
)
def test_bad_setting_stops_start_up_naming_it(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError) as caught:
        load_settings()
    assert name in str(caught.value)


def test_unknown_key_in_config_file_is_refused(use_config: Callable[[str], None]) -> None:
    use_config("prot: 9000\n")
    with pytest.raises(SettingsError, match="CSTP_PROT"):
        load_settings()


def test_missing_named_config_file_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CSTP_CONFIG", "/nonexistent/cstp.yaml")
    with pytest.raises(SettingsError, match="CSTP_CONFIG"):
        load_settings()


def test_empty_chroma_url_means_embedded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CSTP_CHROMA_URL", "")
    assert load_settings().chroma_url is None


def test_list_setting_that_is_not_json_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CSTP_INDEX_ON_START", "examples/decisions")
    with pytest.raises(SettingsError, match="CSTP_INDEX_ON_START"):
        load_settings()


@pytest.mark.parametrize("blank", ["", "   "], ids=["empty", "spaces"])
def test_a_blank_cursor_secret_is_unset_never_an_empty_key(
    monkeypatch: pytest.MonkeyPatch, blank: str
) -> None:
    monkeypatch.setenv("CSTP_CURSOR_SECRET", blank)
    assert load_settings().cursor_secret is None
