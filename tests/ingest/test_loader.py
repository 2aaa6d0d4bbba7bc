"""Tests for discovering decision files and loading them with their relative source."""

from __future__ import annotations

from pathlib import Path

import pytest

from a2a.errors import FileParseError
from a2a.ingest import LoadedFile, discover, load_file
from a2a.records import derive_id

ADR = "# 1. Use Go\n\nDate: 2020-01-02\n\n## Status\n\nAccepted\n\n## Decision\n\nGo.\n"


def _write(path: Path, text: str = ADR) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_discover_walks_folders_sorted_and_skips_hidden_and_unsupported(tmp_path: Path) -> None:
    root = tmp_path / "decisions"
    for name in (
        "b/0002.md",
        "a.yaml",
        "c.JSON",
        "d.yml",
        "e.markdown",
        "notes.txt",
        ".hidden.md",
        ".git/x.md",
        "b/.draft/y.md",
    ):
        _write(root / name)
    found = discover([root])
    assert [(f.relative_to(root).as_posix(), r) for f, r in found] == [
        ("a.yaml", root),
        ("b/0002.md", root),
        ("c.JSON", root),
        ("d.yml", root),
        ("e.markdown", root),
    ]


def test_discover_takes_a_single_file_with_its_parent_as_root(tmp_path: Path) -> None:
    adr = _write(tmp_path / "team" / "0001.md")
    assert discover([adr]) == [(adr, adr.parent)]


def test_discover_merges_several_paths_without_duplicates(tmp_path: Path) -> None:
    one = _write(tmp_path / "x" / "1.md")
    two = _write(tmp_path / "y" / "2.md")
    assert discover([tmp_path / "y", tmp_path / "x", tmp_path / "y"]) == [
        (one, tmp_path / "x"),
        (two, tmp_path / "y"),
    ]


def test_discover_reports_a_missing_path(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(FileParseError) as caught:
        discover([missing])
    assert (caught.value.path, caught.value.reason) == (str(missing), "no such file or directory")


def test_discover_rejects_an_unsupported_file_named_directly(tmp_path: Path) -> None:
    notes = _write(tmp_path / "notes.txt")
    with pytest.raises(FileParseError, match="unsupported file type"):
        discover([notes])


def test_load_file_gives_records_with_a_posix_relative_source(tmp_path: Path) -> None:
    adr = _write(tmp_path / "repo" / "sub" / "0001-use-go.md")
    loaded = load_file(adr, tmp_path)
    assert isinstance(loaded, LoadedFile)
    assert (loaded.path, loaded.source) == (adr, "repo/sub/0001-use-go.md")
    (record,) = loaded.records
    assert (record.title, record.status, record.source) == ("Use Go", "decided", loaded.source)
    assert record.id == derive_id("repo/sub/0001-use-go.md")
    assert loaded.warnings == []


def test_load_file_reads_yaml_and_json(tmp_path: Path) -> None:
    yaml_file = _write(tmp_path / "d.yml", "- title: A\n- title: B\n")
    json_file = _write(tmp_path / "d.json", '{"title": "C", "status": "Draft"}')
    assert [r.title for r in load_file(yaml_file, tmp_path).records] == ["A", "B"]
    loaded = load_file(json_file, tmp_path)
    assert [(r.title, r.status) for r in loaded.records] == [("C", "proposed")]
    assert loaded.warnings == ["status 'Draft' read as 'proposed'"]


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("README.md", id="readme"),
        pytest.param("readme.markdown", id="readme-lowercase"),
        pytest.param("index.md", id="index"),
        pytest.param("0000-TEMPLATE.md", id="template-upper"),
        pytest.param("adr-template.md", id="template-suffix"),
        pytest.param("Template.markdown", id="template-markdown"),
        pytest.param("ADRXXX-architecture-decision-record-template.md", id="template-last-word"),
        pytest.param("template_v2.md", id="template-first-word"),
    ],
)
def test_readme_index_and_template_markdown_are_skipped(tmp_path: Path, name: str) -> None:
    loaded = load_file(_write(tmp_path / name), tmp_path)
    assert loaded.records == []
    assert len(loaded.warnings) == 1
    assert loaded.warnings[0].startswith("skipped: ")


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("0010-django-templates.md", id="plural-templates"),
        pytest.param("adr-014-project-templates.md", id="project-templates"),
        pytest.param("0012-use-template-engine.md", id="template-in-the-middle"),
        pytest.param("readme-style.md", id="readme-as-a-prefix"),
    ],
)
def test_decisions_about_templates_are_not_skipped(tmp_path: Path, name: str) -> None:
    loaded = load_file(_write(tmp_path / name), tmp_path)
    assert [r.title for r in loaded.records] == ["Use Go"]


def test_a_yaml_file_named_index_is_still_read(tmp_path: Path) -> None:
    loaded = load_file(_write(tmp_path / "index.yaml", "title: A\n"), tmp_path)
    assert [r.title for r in loaded.records] == ["A"]


def test_bad_yaml_raises_parse_error_with_the_relative_source(tmp_path: Path) -> None:
    bad = _write(tmp_path / "team" / "bad.yaml", "title: [oops\n")
    with pytest.raises(FileParseError) as caught:
        load_file(bad, tmp_path)
    assert caught.value.path == "team/bad.yaml"
    assert caught.value.reason.startswith("invalid YAML at line")


def test_a_file_that_is_not_utf8_raises_parse_error(tmp_path: Path) -> None:
    binary = tmp_path / "x.md"
    binary.write_bytes(b"# T\n\xff\xfe\x00")
    with pytest.raises(FileParseError, match=r"^x\.md: not UTF-8 text"):
        load_file(binary, tmp_path)


def test_a_utf8_byte_order_mark_is_ignored(tmp_path: Path) -> None:
    adr = tmp_path / "bom.md"
    adr.write_bytes("\ufeff---\nstatus: rejected\n---\n# Title\n".encode())
    record = load_file(adr, tmp_path).records[0]
    assert (record.title, record.status) == ("Title", "rejected")


@pytest.mark.parametrize(
    ("name", "content"),
    [
        pytest.param("impossible.yaml", "title: t\ndate: 2026-02-30\n", id="yaml-impossible-date"),
        pytest.param("front.md", "---\ndate: 2026-02-30\n---\n# T\n", id="front-matter-bad-date"),
        pytest.param(
            "huge.json",
            '{"title": "big", "confidence": ' + "9" * 5000 + "}",
            id="json-5000-digit-number",
        ),
        pytest.param("deep.json", "[" * 100_000 + "]" * 100_000, id="json-too-deep"),
        pytest.param("deep.yaml", "[" * 100_000 + "]" * 100_000, id="yaml-too-deep"),
        pytest.param("empty.md", "  \n", id="empty-markdown"),
    ],
)
def test_unrepresentable_input_is_a_parse_error_naming_the_file(
    tmp_path: Path, name: str, content: str
) -> None:
    (tmp_path / name).write_text(content)
    with pytest.raises(FileParseError) as caught:
        load_file(tmp_path / name, tmp_path)
    assert caught.value.path == name


def test_date_outside_utc_range_fails_only_that_record(tmp_path: Path) -> None:
    (tmp_path / "two.yaml").write_text(
        "- {id: a, title: ok}\n- {id: b, title: bad, date: '0001-01-01T00:00:00+01:00'}\n"
    )
    loaded = load_file(tmp_path / "two.yaml", tmp_path)
    assert [r.id for r in loaded.records] == ["a"]
    assert any("1-9999" in w for w in loaded.warnings)


def test_many_unclosed_html_comments_parse_in_linear_time(tmp_path: Path) -> None:
    # 400 KB of "<!--" took minutes with a lazy regex; the scan reads it once.
    (tmp_path / "hostile.md").write_text("# Title\n" + "<!--" * 100_000)
    assert load_file(tmp_path / "hostile.md", tmp_path).records[0].title == "Title"
