"""``cachedex demo DIR`` over an earlier demo: what it removes, and what it refuses to."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from cachedex.cli import main
from cachedex.demo import run_demo
from cachedex.errors import OutputError


@pytest.mark.parametrize("name", ["site", "jekyll", "mirrors"])
def test_crash15_demo_does_not_follow_a_symlinked_output_folder(tmp_path: Path, name: str) -> None:
    folder = tmp_path / "demo"
    folder.mkdir()
    (folder / ".cachedex-demo").write_text("made by cachedex demo; safe to delete\n")
    (folder / "cachedex.sqlite").write_text("an earlier catalog")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("keep me")
    (folder / name).symlink_to(elsewhere, target_is_directory=True)

    result = CliRunner().invoke(main, ["demo", str(folder)])
    assert result.exit_code == 1, result.output
    assert f"error: {folder / name} is a symlink; cachedex demo does not follow it" in result.output
    assert "Traceback" not in result.output
    with pytest.raises(OutputError):
        run_demo(folder, echo=lambda _: None, print_outcomes=lambda _: None)
    # Nothing outside was touched, and nothing inside was removed before the refusal.
    assert [p.name for p in elsewhere.iterdir()] == ["keep.txt"] and (elsewhere / "keep.txt").read_text() == "keep me"
    assert (folder / name).is_symlink() and (folder / "cachedex.sqlite").read_text() == "an earlier catalog"


def test_the_commands_the_demo_prints_read_a_folder_starting_with_a_dash_as_a_path() -> None:
    """Pasted as printed, "python3 -m http.server -d -dash/site" read -dash as options."""
    from cachedex.demo import _shell_word

    assert _shell_word(Path("-dash/site")) == "./-dash/site"
    assert _shell_word(Path("a b/c")) == "'a b/c'" and _shell_word(Path("/x/-y")) == "/x/-y"
